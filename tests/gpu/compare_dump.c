/* compare_dump.c - compare two raw dumps (an example's --dump output): the CPU emulation's (reference) and
 * the GPU's (test).
 *
 *   kbd_compare_dump [--type f32|bytes] [--atol A] [--rtol R] <reference> <test>
 *   kbd_compare_dump --self-test
 *
 * f32 with atol = rtol = 0 (the default) is exact: the bit patterns must be equal (so -0 != +0 and a NaN
 * must be the same NaN) - right for correctly rounded ops such as vector_add. With a tolerance, element i
 * passes when |test - ref| <= atol + rtol * |ref|; NaN must meet NaN and an infinity the same infinity.
 * bytes: the files must be byte-identical. Exit 0 match, 1 mismatch, 2 usage or I/O error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int bytes; /* 1: compare raw bytes, 0: f32 */
  double atol, rtol;
} cmp_opts;

/* Number of mismatching elements; prints the first few and the largest error. */
static long long compare(const unsigned char *ref, const unsigned char *tst, size_t size, cmp_opts o, int quiet) {
  long long bad = 0;
  if (o.bytes) {
    for (size_t i = 0; i < size; ++i)
      if (ref[i] != tst[i] && bad++ < 10 && !quiet)
        printf("  byte %zu: reference 0x%02x, test 0x%02x\n", i, ref[i], tst[i]);
    return bad;
  }
  const int exact = o.atol == 0 && o.rtol == 0;
  double worst = 0;
  size_t worst_i = 0;
  for (size_t i = 0; i < size / 4; ++i) {
    float r, t;
    memcpy(&r, ref + 4 * i, 4);
    memcpy(&t, tst + 4 * i, 4);
    int ok;
    if (exact)
      ok = memcmp(ref + 4 * i, tst + 4 * i, 4) == 0;
    else if (isnan(r) || isnan(t))
      ok = isnan(r) && isnan(t);
    else if (isinf(r) || isinf(t))
      ok = r == t;
    else
      ok = fabs((double)t - (double)r) <= o.atol + o.rtol * fabs((double)r);
    if (!ok) {
      const double err = fabs((double)t - (double)r);
      if (!(err <= worst) && !isnan(worst)) { /* the first NaN error counts as the largest */
        worst = err;
        worst_i = i;
      }
      if (bad++ < 10 && !quiet) printf("  element %zu: reference %.9g, test %.9g\n", i, (double)r, (double)t);
    }
  }
  if (bad && !quiet) printf("  largest error %.9g at element %zu\n", worst, worst_i);
  return bad;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = (unsigned char *)malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  *size = (size_t)len;
  return buf;
}

/* The comparator's own verdicts on small arrays: each case must come out as stated. */
static int self_test(void) {
  const float base[4] = {1.0f, -2.5f, 0.0f, 1e30f};
  float v[4];
  const float nan = nanf(""), inf = INFINITY;
  const cmp_opts exact = {0, 0, 0}, tol = {0, 1e-6, 1e-5}, raw = {1, 0, 0};
  struct {
    const char *what;
    int idx;
    float value;
    cmp_opts o;
    long long want;
  } cases[] = {
      {"identical, exact", -1, 0, exact, 0},
      {"one ulp off, exact", 0, nextafterf(1.0f, 2.0f), exact, 1},
      {"-0 vs +0, exact", 2, -0.0f, exact, 1},
      {"one ulp off, within tolerance", 0, nextafterf(1.0f, 2.0f), tol, 0},
      {"1e-3 relative off, beyond tolerance", 1, -2.5f * 1.001f, tol, 1},
      {"NaN vs number, tolerance", 3, nan, tol, 1},
      {"inf vs 1e30, tolerance", 3, inf, tol, 1},
      {"one ulp off = one byte off, bytes", 1, nextafterf(-2.5f, -3.0f), raw, 1},
  };
  int failed = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    memcpy(v, base, sizeof v);
    if (cases[c].idx >= 0) v[cases[c].idx] = cases[c].value;
    const long long got = compare((const unsigned char *)base, (const unsigned char *)v, sizeof v, cases[c].o, 1);
    const int ok = got == cases[c].want;
    printf("%s: %s (%lld mismatches)\n", ok ? "ok  " : "FAIL", cases[c].what, got);
    failed += !ok;
  }
  /* NaN against the same NaN passes with a tolerance, and bitwise. */
  float n1[1] = {nan}, n2[1] = {nan};
  const int nan_ok = compare((const unsigned char *)n1, (const unsigned char *)n2, 4, tol, 1) == 0 &&
                     compare((const unsigned char *)n1, (const unsigned char *)n2, 4, exact, 1) == 0;
  printf("%s: NaN vs the same NaN\n", nan_ok ? "ok  " : "FAIL");
  failed += !nan_ok;
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  cmp_opts o = {0, 0, 0};
  const char *path[2] = {NULL, NULL};
  int npath = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--self-test") == 0) return self_test();
    if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
      ++i;
      if (strcmp(argv[i], "f32") != 0 && strcmp(argv[i], "bytes") != 0) break;
      o.bytes = strcmp(argv[i], "bytes") == 0;
    } else if (strcmp(argv[i], "--atol") == 0 && i + 1 < argc) {
      o.atol = atof(argv[++i]);
    } else if (strcmp(argv[i], "--rtol") == 0 && i + 1 < argc) {
      o.rtol = atof(argv[++i]);
    } else if (argv[i][0] != '-' && npath < 2) {
      path[npath++] = argv[i];
    } else {
      npath = -1;
      break;
    }
  }
  if (npath != 2 || o.atol < 0 || o.rtol < 0) {
    fprintf(stderr, "usage: %s [--type f32|bytes] [--atol A] [--rtol R] <reference> <test> | --self-test\n", argv[0]);
    return 2;
  }
  size_t size[2];
  unsigned char *data[2];
  for (int k = 0; k < 2; ++k)
    if (!(data[k] = read_file(path[k], &size[k]))) {
      fprintf(stderr, "compare_dump: cannot read %s\n", path[k]);
      return 2;
    }
  const char *what = o.bytes ? "bytes" : (o.atol == 0 && o.rtol == 0 ? "f32, bitwise exact" : "f32");
  if (size[0] != size[1] || (!o.bytes && size[0] % 4)) {
    printf("compare_dump: FAIL: sizes differ or are not whole f32 elements: %s %zu bytes, %s %zu bytes\n", path[0],
           size[0], path[1], size[1]);
    return 1;
  }
  if (size[0] == 0) {
    printf("compare_dump: FAIL: empty dumps prove nothing (%s)\n", path[0]);
    return 1;
  }
  const long long bad = compare(data[0], data[1], size[0], o, 0);
  const size_t count = o.bytes ? size[0] : size[0] / 4;
  printf("compare_dump: %s vs %s: %zu elements (%s, atol %g, rtol %g), %lld mismatches -> %s\n", path[0], path[1],
         count, what, o.atol, o.rtol, bad, bad ? "FAIL" : "OK");
  free(data[0]);
  free(data[1]);
  return bad ? 1 : 0;
}
