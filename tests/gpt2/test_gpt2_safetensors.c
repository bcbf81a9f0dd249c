/* test_gpt2_safetensors.c - examples/gpt2's checkpoint loader: safetensors files written by gpt2_st_write read back
 * exactly (F32, F16, BF16: every 16-bit pattern), each malformed file of issue 28 an error naming the file and the
 * problem, thousands of header mutations without a crash; config.json loading and its errors. */
#define _DEFAULT_SOURCE 1
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gpt2_config.h"
#include "gpt2_json.h"
#include "gpt2_safetensors.h"
#include "loader_util.h"

static char *g_dir;

static int setup(void **state) {
  (void)state;
  g_dir = lu_mkdtemp("st");
  return 0;
}
static int teardown(void **state) {
  (void)state;
  lu_rmdir(g_dir);
  return 0;
}

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* IEEE half, decoded from its definition (not from the loader's bit manipulation). */
static double half_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0)
    v = ldexp(m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp(1024 + m, e - 25);
  return s ? -v : v;
}
static double bf16_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
  double v;
  if (e == 0)
    v = ldexp(m, -133);
  else if (e == 255)
    v = m ? NAN : INFINITY;
  else
    v = ldexp(128 + m, e - 134);
  return s ? -v : v;
}

/* Writes F32, F16 and BF16 tensors (all 65536 patterns of each 16-bit type, a scalar, an empty tensor, 8 dims) and
 * reads them back as f32, value for value. */
static void test_round_trip(void **state) {
  (void)state;
  static uint16_t h[65536];
  for (int k = 0; k < 65536; ++k)
    h[k] = (uint16_t)k;
  const float f32[6] = {1.0f, -0.0f, 1e-40f, INFINITY, -3.4028235e38f, 0.1f};
  const float scalar = 42.5f;
  float eight[2 * 1 * 3 * 1 * 1 * 2 * 1 * 2];
  for (int k = 0; k < 24; ++k)
    eight[k] = (float)k - 7.25f;
  gpt2_st_out outs[] = {
      {"wte.weight", GPT2_ST_F32, 2, {2, 3}, f32},
      {"half", GPT2_ST_F16, 2, {256, 256}, h},
      {"h.0.attn.c_attn.bias", GPT2_ST_BF16, 1, {65536}, h},
      {"scalar", GPT2_ST_F32, 0, {0}, &scalar},
      {"empty", GPT2_ST_BF16, 2, {0, 5}, NULL},
      {"eight \"dims\"", GPT2_ST_F32, 8, {2, 1, 3, 1, 1, 2, 1, 2}, eight},
  };
  const int n = (int)(sizeof outs / sizeof outs[0]);
  char *path = strdup(lu_path(g_dir, "model.safetensors"));
  LU_OK(gpt2_st_write(path, outs, n));

  gpt2_st_file f;
  LU_OK(gpt2_st_open(&f, path));
  assert_string_equal(f.path, path);
  assert_int_equal(f.n, n);
  /* the layout the format fixes: length, a JSON object header padded to 8 bytes, tensors in order */
  uint64_t hl = 0;
  for (int k = 7; k >= 0; --k)
    hl = hl << 8 | f.map[k];
  assert_int_equal((8 + hl) % 8, 0);
  assert_int_equal(f.map[8], '{');
  size_t last = 8 + hl - 1;
  while (f.map[last] == ' ')
    --last;
  assert_int_equal(f.map[last], '}'); /* padded with spaces after the object */
  assert_ptr_equal(f.data, f.map + 8 + hl);
  assert_int_equal(f.data_bytes, 24 + 2 * 65536 + 2 * 65536 + 4 + 0 + 96);
  assert_int_equal(f.size, 8 + hl + f.data_bytes);
  gpt2_json *hdr = NULL;
  LU_OK(gpt2_json_parse(&hdr, (const char *)f.map + 8, hl, "header"));
  size_t ml;
  const char *fmt = gpt2_json_str(gpt2_json_get(gpt2_json_get(hdr, "__metadata__"), "format"), &ml);
  assert_non_null(fmt);
  assert_string_equal(fmt, "pt");
  assert_string_equal(gpt2_json_str(gpt2_json_get(gpt2_json_get(hdr, "half"), "dtype"), NULL), "F16");
  gpt2_json_free(hdr);
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    const gpt2_st_tensor *t = gpt2_st_find(&f, outs[i].name);
    assert_non_null(t);
    assert_ptr_equal(t, &f.t[i]); /* header order kept */
    assert_string_equal(t->name, outs[i].name);
    assert_int_equal(t->dtype, outs[i].dtype);
    assert_int_equal(t->ndim, outs[i].ndim);
    for (int d = 0; d < t->ndim; ++d)
      assert_int_equal(t->shape[d], outs[i].shape[d]);
    assert_int_equal(t->offset, at);
    at += t->bytes;
  }
  assert_int_equal(at, f.data_bytes);
  assert_null(gpt2_st_find(&f, "wte"));
  assert_null(gpt2_st_find(&f, "__metadata__"));

  float got[6];
  LU_OK(gpt2_st_read_f32(&f, "wte.weight", 2, (const long long[]){2, 3}, got));
  for (int k = 0; k < 6; ++k)
    assert_int_equal(fbits(got[k]), fbits(f32[k]));
  float *big = (float *)malloc(65536 * sizeof *big);
  LU_OK(gpt2_st_read_f32(&f, "half", 2, (const long long[]){256, 256}, big));
  int nans = 0;
  for (int k = 0; k < 65536; ++k) {
    const double want = half_value((uint16_t)k);
    if (isnan(want)) {
      assert_true(isnan(big[k]));
      ++nans;
    } else {
      if ((double)big[k] != want || !signbit(big[k]) != !signbit(want))
        fail_msg("F16 0x%04X: read %a, expected %a", k, (double)big[k], want);
    }
  }
  assert_int_equal(nans, 2 * 1023);
  LU_OK(gpt2_st_read_f32(&f, "h.0.attn.c_attn.bias", 1, (const long long[]){65536}, big));
  for (int k = 0; k < 65536; ++k) {
    const double want = bf16_value((uint16_t)k);
    if (isnan(want))
      assert_true(isnan(big[k]));
    else if ((double)big[k] != want || !signbit(big[k]) != !signbit(want))
      fail_msg("BF16 0x%04X: read %a, expected %a", k, (double)big[k], want);
  }
  float one = 0;
  LU_OK(gpt2_st_read_f32(&f, "scalar", 0, NULL, &one));
  assert_true(one == 42.5f);
  LU_OK(gpt2_st_read_f32(&f, "empty", 2, (const long long[]){0, 5}, NULL));
  float e8[24];
  LU_OK(gpt2_st_read_f32(&f, "eight \"dims\"", 8, (const long long[]){2, 1, 3, 1, 1, 2, 1, 2}, e8));
  assert_memory_equal(e8, eight, sizeof e8);

  /* wrong shape or missing: the file and the tensor named */
  LU_FAILS_WITH(gpt2_st_read_f32(&f, "wte.weight", 2, (const long long[]){3, 2}, got), path,
                "tensor \"wte.weight\" has shape [2, 3], expected [3, 2]");
  LU_FAILS_WITH(gpt2_st_read_f32(&f, "wte.weight", 1, (const long long[]){6}, got), path,
                "tensor \"wte.weight\" has shape [2, 3], expected [6]");
  LU_FAILS_WITH(gpt2_st_read_f32(&f, "lm_head.weight", 2, (const long long[]){2, 3}, got), path,
                "tensor \"lm_head.weight\" is missing");
  free(big);
  gpt2_st_close(&f);
  assert_null(f.map);
  assert_int_equal(f.n, 0);
  gpt2_st_close(&f); /* twice is fine */
  remove(path);
  free(path);
}

/* The rounding conversions tools use to write f16/bf16: nearest, ties to even, checked against the exact values. */
static void test_rounding(void **state) {
  (void)state;
  uint64_t seed = 9;
  for (int it = 0; it < 200000; ++it) {
    uint32_t u = (uint32_t)lu_rand(&seed);
    if (it % 4 == 0) u = (u & 0x8000FFFFu) | ((uint32_t)(96 + lu_below(&seed, 48)) << 23); /* around half's range */
    float x;
    memcpy(&x, &u, 4);
    if (isnan(x)) {
      assert_true(isnan(half_value(gpt2_st_f32_to_f16(x))));
      assert_true(isnan(bf16_value(gpt2_st_f32_to_bf16(x))));
      continue;
    }
    /* the result is a nearest representable value, and on a tie the even one */
    const uint16_t hh = gpt2_st_f32_to_f16(x), bb = gpt2_st_f32_to_bf16(x);
    /* lim: the largest finite value plus half an ulp, where rounding reaches inf */
    const struct {
      uint16_t r;
      double (*val)(uint16_t);
      double lim;
    } c[2] = {{hh, half_value, 65520.0}, {bb, bf16_value, 3.3895313892515355e38 + 0x1p119}};
    for (int k = 0; k < 2; ++k) {
      const double got = c[k].val(c[k].r), xd = (double)x;
      if (isinf(got)) {
        /* rounds to inf only past max + half an ulp (inf itself included) */
        assert_true(fabs(xd) >= c[k].lim);
        continue;
      }
      assert_true(fabs(xd) < c[k].lim);
      const double err = fabs(got - xd);
      const uint16_t up = (uint16_t)(c[k].r + 1), dn = (uint16_t)(c[k].r - 1);
      const double eu = (c[k].r & 0x7FFF) == (k ? 0x7F7F : 0x7BFF) ? INFINITY : fabs(c[k].val(up) - xd);
      const double ed = (c[k].r & 0x7FFF) == 0 ? INFINITY : fabs(c[k].val(dn) - xd);
      if (err > eu || err > ed || ((err == eu || err == ed) && (c[k].r & 1) && err != 0))
        fail_msg("%s(%a) = 0x%04X (%a): not the nearest even", k ? "bf16" : "f16", xd, c[k].r, got);
    }
  }
}

/* A safetensors file made by hand: `header` as given (its length in the 8-byte prefix unless hlen_override), then
 * `data` bytes of zeros. */
static const char *raw_file(const char *name, const char *header, size_t data, unsigned long long hlen_override) {
  const size_t hl = strlen(header);
  unsigned char *b = (unsigned char *)calloc(8 + hl + data + 1, 1);
  const unsigned long long L = hlen_override ? hlen_override : hl;
  for (int k = 0; k < 8; ++k)
    b[k] = (unsigned char)(L >> (8 * k));
  memcpy(b + 8, header, hl);
  const char *p = lu_path(g_dir, name);
  lu_write(p, b, 8 + hl + data);
  free(b);
  return p;
}

#define T1(dt, shape, off) "{\"w\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" off "}}"

typedef struct bad_hdr {
  const char *header;
  size_t data;
  const char *problem;
} bad_hdr;

static void test_bad_files(void **state) {
  (void)state;
  gpt2_st_file f;
  char *p;
  /* not there, not a file, too short for the length */
  p = strdup(lu_path(g_dir, "absent.safetensors"));
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "cannot open: No such file or directory");
  free(p);
  LU_FAILS_WITH(gpt2_st_open(&f, g_dir), g_dir, "not a regular file");
  p = strdup(lu_path(g_dir, "empty.safetensors"));
  lu_write(p, "", 0);
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "0 bytes, shorter than the 8-byte header length");
  lu_write(p, "\x10\0\0", 3);
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "3 bytes, shorter than the 8-byte header length");
  free(p);
  /* header length past the end, also one that would overflow 8 + length */
  p = strdup(raw_file("len.safetensors", "{}", 0, 1000));
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "header length 1000 bytes runs past the end of the file (2 bytes follow");
  raw_file("len.safetensors", "{}", 0, 3); /* one byte past the end */
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "header length 3 bytes runs past the end of the file (2 bytes follow");
  raw_file("len.safetensors", "{}", 0, 0xFFFFFFFFFFFFFFFFull);
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "header length 18446744073709551615 bytes runs past the end");
  free(p);
  /* a real file cut short: its last tensor's data_offsets then run past the data */
  const float v[4] = {1, 2, 3, 4};
  const gpt2_st_out o[2] = {{"a", GPT2_ST_F32, 1, {4}, v}, {"b", GPT2_ST_F32, 2, {2, 2}, v}};
  p = strdup(lu_path(g_dir, "cut.safetensors"));
  LU_OK(gpt2_st_write(p, o, 2));
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(truncate(p, st.st_size - 4), 0);
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "tensor \"b\": data_offsets [16, 32] are out of range",
                "the data section has 28 bytes", "truncated");
  assert_int_equal(truncate(p, 6), 0);
  LU_FAILS_WITH(gpt2_st_open(&f, p), p, "6 bytes, shorter than the 8-byte header length");
  assert_null(f.map);
  assert_null(f.t);
  assert_null(f.path);
  gpt2_st_close(&f); /* a failed open leaves a zeroed struct */
  free(p);

  static const bad_hdr cases[] = {
      {"{not json", 0, "header: byte 1 (line 1, column 2): expected a string key in an object, found 'n'"},
      {"", 0, "header: byte 0 (line 1, column 1): empty document"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4,
       "header: byte 53 (line 1, column 54): expected ',' or '}' after an object member, found the end of the text"},
      {"[1, 2]", 0, "the header is an array, not a JSON object of tensors"},
      {"\"w\"", 0, "the header is a string, not a JSON object"},
      {T1("I64", "[2]", "[0,16]"), 16,
       "tensor \"w\": dtype \"I64\" is not supported (this loader reads F32, F16 and BF16)"},
      {T1("F64", "[2]", "[0,16]"), 16, "dtype \"F64\" is not supported"},
      {T1("Q7", "[2]", "[0,16]"), 16, "dtype \"Q7\" is not a safetensors dtype"},
      {T1("f32", "[2]", "[0,8]"), 8, "dtype \"f32\" is not a safetensors dtype"},
      {"{\"w\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "\"dtype\" is a number, expected a string"},
      {T1("F32", "[2]", "[0,12]"), 16, "data_offsets [0, 12] hold 12 bytes, but shape [2] of F32 needs 8"},
      {T1("BF16", "[3, 4]", "[0,12]"), 24, "hold 12 bytes, but shape [3, 4] of BF16 needs 24"},
      {T1("F32", "[2]", "[0,8]"), 4, "data_offsets [0, 8] are out of range: the data section has 4 bytes"},
      {T1("F32", "[2]", "[8,0]"), 8, "data_offsets [8, 0] are out of range"},
      {T1("F32", "[2]", "[0]"), 8, "\"data_offsets\" is not [begin, end]"},
      {T1("F32", "[2]", "[0,8,9]"), 8, "\"data_offsets\" is not [begin, end]"},
      {T1("F32", "[2]", "[-8,0]"), 8, "\"data_offsets\" is not [begin, end]"},
      {T1("F32", "[2]", "\"0,8\""), 8, "\"data_offsets\" is not [begin, end]"},
      {T1("F32", "[2]", "[0,8.5]"), 8, "\"data_offsets\" is not [begin, end]"},
      {T1("F32", "[-2]", "[0,8]"), 8, "shape[0] is not a size"},
      {T1("F32", "[2, 1.5]", "[0,8]"), 8, "shape[1] is not a size"},
      {T1("F32", "[2, null]", "[0,8]"), 8, "shape[1] is not a size"},
      {T1("F32", "{}", "[0,8]"), 8, "\"shape\" is an object, expected an array of sizes"},
      {T1("F32", "[1,1,1,1,1,1,1,1,2]", "[0,8]"), 8, "\"shape\" has 9 dimensions (at most 8)"},
      {T1("F32", "[4294967296, 4294967296]", "[0,8]"), 8, "shape overflows"},
      {"{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "tensor \"w\": \"dtype\" is missing"},
      {"{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, "tensor \"w\": \"shape\" is missing"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "tensor \"w\": \"data_offsets\" is missing"},
      {"{\"w\":[0,8]}", 8, "tensor \"w\": the entry is an array, expected an object"},
      {"{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
       "tensor \"a\\x00b\": the name holds a NUL byte"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
       "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
       24, "tensors \"a\" (bytes 0..16) and \"b\" (bytes 8..24) overlap in the data section"},
      {"{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[2,6]}}",
       8, "tensors \"a\" (bytes 0..8) and \"b\" (bytes 2..6) overlap"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
       "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
       8, "header: byte 54 (line 1, column 55): duplicate key \"w\""},
      {"{\"__metadata__\":[1]}", 0, "\"__metadata__\" is not an object"},
      {"{\"__metadata__\":{\"format\":1}}", 0, "\"__metadata__\" entry 0 is not a string"},
  };
  p = strdup(lu_path(g_dir, "bad.safetensors"));
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    raw_file("bad.safetensors", cases[c].header, cases[c].data, 0);
    memset(&f, 0x5A, sizeof f);
    const kbd_status s = gpt2_st_open(&f, p);
    if (kbd_ok(s)) print_error("case %zu opened: %s\n", c, cases[c].header);
    LU_FAILS_WITH(s, p, cases[c].problem);
    assert_null(f.map);
    assert_null(f.priv);
    gpt2_st_close(&f);
  }
  /* a header whose tensors are all fine after the bad ones were taken out opens: the cases fail for their reason */
  raw_file("bad.safetensors",
           "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[8,10]},\"z\":{\"dtype\":\"F32\",\"shape\":[0],"
           "\"data_offsets\":[10,10]}}",
           10, 0);
  LU_OK(gpt2_st_open(&f, p));
  assert_int_equal(f.n, 3);
  float x[4] = {1, 1, 1, 1};
  LU_OK(gpt2_st_read_f32(&f, "a", 1, (const long long[]){4}, x));
  assert_true(x[0] == 0.0f && x[3] == 0.0f);
  gpt2_st_close(&f);
  free(p);
  gpt2_st_close(NULL);
}

static void test_write_errors(void **state) {
  (void)state;
  const float v[2] = {1, 2};
  char *p = strdup(lu_path(g_dir, "w.safetensors"));
  gpt2_st_out o[2] = {{"a", GPT2_ST_F32, 1, {2}, v}, {"a", GPT2_ST_F32, 1, {2}, v}};
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor \"a\" is given twice");
  o[1].name = "__metadata__";
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor 1: the name is reserved");
  o[1].name = "b";
  o[1].dtype = (gpt2_st_dtype)7;
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor \"b\": dtype 7 is not");
  o[1].dtype = GPT2_ST_F32;
  o[1].ndim = 9;
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor \"b\": ndim 9");
  o[1].ndim = 1;
  o[1].shape[0] = -1;
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor \"b\": shape[0] = -1");
  o[1].shape[0] = 2;
  o[1].data = NULL;
  LU_FAILS_WITH(gpt2_st_write(p, o, 2), p, "tensor \"b\": data is NULL");
  LU_FAILS_WITH(gpt2_st_write(lu_path(g_dir, "no/such/dir.safetensors"), o, 1), "no/such/dir.safetensors",
                "cannot create");
  free(p);
}

/* Thousands of mutated headers (and length prefixes) of a valid file: each opens or fails with a message naming the
 * file; an opened one reads every tensor it lists. No crash, no read outside the file (ASan build). */
static void test_header_fuzz(void **state) {
  (void)state;
  const float v[12] = {0};
  const gpt2_st_out o[3] = {{"wte.weight", GPT2_ST_F32, 2, {3, 2}, v},
                            {"h.0.ln_1.bias", GPT2_ST_BF16, 1, {4}, v},
                            {"h.0.attn.c_attn.weight", GPT2_ST_F16, 2, {2, 3}, v}};
  char *p = strdup(lu_path(g_dir, "fuzz.safetensors"));
  LU_OK(gpt2_st_write(p, o, 3));
  FILE *fp = fopen(p, "rb");
  unsigned char orig[4096];
  const size_t n0 = fread(orig, 1, sizeof orig, fp);
  fclose(fp);
  static const char punct[] = "{}[]\":,0123456789-.eFBI \x80";
  unsigned char buf[8192];
  uint64_t seed = 77;
  int ok = 0, bad = 0;
  float out[64];
  for (int it = 0; it < 3000; ++it) {
    size_t n = n0;
    memcpy(buf, orig, n);
    const int muts = 1 + (int)lu_below(&seed, 3);
    for (int m = 0; m < muts; ++m) {
      const size_t at = 8 + lu_below(&seed, n - 8);
      switch (lu_below(&seed, 6)) {
      case 0: buf[at] = (unsigned char)lu_rand(&seed); break;
      case 1: buf[at] = (unsigned char)punct[lu_below(&seed, sizeof punct - 1)]; break;
      case 2:
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = (unsigned char)punct[lu_below(&seed, sizeof punct - 1)];
        ++n;
        break;
      case 3:
        memmove(buf + at, buf + at + 1, n - at - 1);
        --n;
        break;
      case 4: n = at; break;                                                            /* truncate */
      default: buf[lu_below(&seed, 8)] = (unsigned char)(lu_rand(&seed) & 0x8F); break; /* length prefix */
      }
    }
    lu_write(p, buf, n);
    gpt2_st_file f;
    const kbd_status s = gpt2_st_open(&f, p);
    if (kbd_ok(s)) {
      ++ok;
      for (int i = 0; i < f.n; ++i) {
        const gpt2_st_tensor *t = &f.t[i];
        assert_ptr_equal(gpt2_st_find(&f, t->name), t);
        assert_true(t->offset + t->bytes <= f.data_bytes);
        if (t->bytes / gpt2_st_dtype_size(t->dtype) <= 64) LU_OK(gpt2_st_read_f32(&f, t->name, t->ndim, t->shape, out));
      }
    } else {
      ++bad;
      assert_int_equal(s.code, KBD_ERR_INVALID);
      assert_true(strncmp(s.msg, p, strlen(p)) == 0);
      assert_null(f.map);
    }
    gpt2_st_close(&f);
  }
  print_message("header fuzz: 3000 mutated files, %d opened, %d rejected\n", ok, bad);
  assert_true(ok > 30 && bad > 1000);
  remove(p);
  free(p);
}

/* config.json: a written one reads back; Hugging Face's spelling (n_ctx only, no epsilon) too; each error names the
 * file and the key. */
static void test_config(void **state) {
  (void)state;
  const gpt2_config want = {12, 12, 768, 50257, 1024, 1e-5f};
  LU_OK(gpt2_config_write(&want, g_dir));
  gpt2_config c;
  memset(&c, 0, sizeof c);
  LU_OK(gpt2_config_load(&c, g_dir));
  assert_int_equal(c.n_layer, 12);
  assert_int_equal(c.n_head, 12);
  assert_int_equal(c.n_embd, 768);
  assert_int_equal(c.vocab_size, 50257);
  assert_int_equal(c.n_ctx, 1024);
  assert_true(c.ln_eps == 1e-5f);
  char *p = strdup(lu_path(g_dir, "config.json"));
  lu_write_str(p, "{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64,"
                  " \"architectures\": [\"GPT2LMHeadModel\"], \"summary_type\": \"cls_index\"}");
  LU_OK(gpt2_config_load(&c, g_dir));
  assert_int_equal(c.n_layer, 2);
  assert_int_equal(c.n_ctx, 64);
  assert_true(c.ln_eps == 1e-5f);
  lu_write_str(p,
               "{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_positions\": 128, \"n_ctx\": "
               "64, \"layer_norm_epsilon\": 1e-6}");
  LU_OK(gpt2_config_load(&c, g_dir));
  assert_int_equal(c.n_ctx, 128); /* n_positions: the size of the position table */
  assert_true(c.ln_eps == 1e-6f);

  static const struct {
    const char *text, *problem;
  } bad[] = {
      {"{\"n_layer\": 2, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64}", "key \"n_head\" is missing"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300}",
       "key \"n_positions\" (or \"n_ctx\") is missing"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": \"64\", \"vocab_size\": 300, \"n_ctx\": 64}",
       "key \"n_embd\" is a string, expected a positive integer"},
      {"{\"n_layer\": 2.5, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64}",
       "key \"n_layer\" is 2.5, expected a positive integer"},
      {"{\"n_layer\": 0, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64}", "key \"n_layer\" is 0"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": -3, \"n_ctx\": 64}",
       "key \"vocab_size\" is -3"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 3000000000, \"n_ctx\": 64}",
       "key \"vocab_size\" is 3000000000, expected a positive integer below 2^31"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": [64]}",
       "key \"n_ctx\" is an array"},
      {"{\"n_layer\": 2, \"n_head\": 5, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64}",
       "key \"n_embd\" = 64 is not a multiple of \"n_head\" = 5"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64, \"layer_norm_epsilon\": "
       "\"1e-5\"}",
       "key \"layer_norm_epsilon\" is a string, expected a number"},
      {"{\"n_layer\": 2, \"n_head\": 4, \"n_embd\": 64, \"vocab_size\": 300, \"n_ctx\": 64, \"layer_norm_epsilon\": 0}",
       "key \"layer_norm_epsilon\" is 0"},
      {"[12, 12]", "the document is an array, expected an object"},
      {"{\"n_layer\": 2,, }", "byte 14 (line 1, column 15): expected a string key"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    lu_write_str(p, bad[k].text);
    c.n_layer = -99;
    LU_FAILS_WITH(gpt2_config_load(&c, g_dir), p, bad[k].problem);
    assert_int_equal(c.n_layer, -99); /* untouched on failure */
  }
  /* written by gpt2_config_write, with a head count that does not divide the width */
  const gpt2_config odd = {2, 3, 64, 300, 64, 1e-5f};
  LU_OK(gpt2_config_write(&odd, g_dir));
  LU_FAILS_WITH(gpt2_config_load(&c, g_dir), p, "\"n_embd\" = 64 is not a multiple of \"n_head\" = 3");
  remove(p);
  LU_FAILS_WITH(gpt2_config_load(&c, g_dir), p, "cannot open");
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_rounding),    cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_write_errors), cmocka_unit_test(test_header_fuzz), cmocka_unit_test(test_config),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
