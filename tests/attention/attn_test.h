/* attn_test.h - what the attention tests (tests/attention/test_*.c) share: a problem's host inputs (values
 * exactly representable in the element type) and device copies, output buffers filled with a sentinel, the
 * conversions, a double reference of one output row, and the tensor maps of a kernel launched directly.
 *
 * Include after <kbd/tile.h>, cmocka.h and "attention.h". Everything is static: each test is one translation
 * unit (examples/attention/attention.cu, attention_f16.cu and attention_run.c are compiled beside it, in CPU mode).
 */
#ifndef ATTN_TEST_H
#define ATTN_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine_test.h" /* mt_env, MT_ASSERT_OK */

#define AT_SENTINEL 0xFF /* the byte of an output nobody wrote: 0xFFFF is a NaN in bf16 and f16, so is 0xFFFFFFFF in f32 */

typedef struct at_problem {
  attn_dtype dtype;
  int batch, heads_q, heads_kv, seq_q, seq_k, d, causal;
  float scale; /* 0: 1/sqrt(d), as attn_run */
  long long nq, nk, nrows;
  float *q, *k, *v;       /* host [batch][heads][seq][d], values of the element type */
  void *dq, *dk, *dv;     /* device copies (at_upload) */
} at_problem;

static inline float at_round(float x, attn_dtype dt) {
  return dt == ATTN_F16 ? kbd_f16_to_f32(kbd_f32_to_f16(x)) : kbd_bf16_to_f32(kbd_f32_to_bf16(x));
}
static inline uint16_t at_bits(float x, attn_dtype dt) {
  return dt == ATTN_F16 ? kbd_f32_to_f16(x).bits : kbd_f32_to_bf16(x).bits;
}
static inline double at_value(uint16_t bits, attn_dtype dt) {
  kbd_f16 f;
  kbd_bf16 b;
  f.bits = bits, b.bits = bits;
  return dt == ATTN_F16 ? (double)kbd_f16_to_f32(f) : (double)kbd_bf16_to_f32(b);
}
/* Distance from x to the next representable value of the element type away from zero (its ulp). */
static inline double at_ulp(double x, attn_dtype dt) {
  const int mant = dt == ATTN_F16 ? 10 : 7, emin = dt == ATTN_F16 ? -14 : -126;
  int e;
  (void)frexp(fabs(x), &e); /* |x| = f 2^e, f in [0.5, 1) */
  --e;
  if (x == 0.0 || e < emin) e = emin;
  return ldexp(1.0, e - mant);
}

/* Deterministic pseudo-random in [-1, 1), a multiple of 2^-6 (exact in bf16 and f16). */
static inline float at_rand(unsigned long long i, unsigned salt) {
  const unsigned long long h = (i * 2654435761ull + salt * 97531ull + 12345u) * 0x9E3779B97F4A7C15ull;
  return (float)((int)((h >> 40) & 127u) - 64) / 64.0f;
}

static inline void at_init(at_problem *p, attn_dtype dt, int batch, int hq, int hkv, int sq, int sk, int d, int causal,
                    float scale) {
  memset(p, 0, sizeof *p);
  p->dtype = dt, p->batch = batch, p->heads_q = hq, p->heads_kv = hkv, p->seq_q = sq, p->seq_k = sk, p->d = d;
  p->causal = causal, p->scale = scale;
  p->nrows = (long long)batch * hq * sq;
  p->nq = p->nrows * d;
  p->nk = (long long)batch * hkv * sk * d;
  p->q = (float *)calloc((size_t)p->nq, sizeof(float));
  p->k = (float *)calloc((size_t)p->nk, sizeof(float));
  p->v = (float *)calloc((size_t)p->nk, sizeof(float));
  assert_non_null(p->q), assert_non_null(p->k), assert_non_null(p->v);
}
/* Element c of row `row` of q ([batch][heads_q][seq_q] rows) or k / v ([batch][heads_kv][seq_k] rows). */
#define AT_Q(p, row, c) (p)->q[(long long)(row) * (p)->d + (c)]
#define AT_K(p, row, c) (p)->k[(long long)(row) * (p)->d + (c)]
#define AT_V(p, row, c) (p)->v[(long long)(row) * (p)->d + (c)]

static inline void *at_device_copy(const float *x, long long n, attn_dtype dt) {
  uint16_t *h = (uint16_t *)malloc(2 * (size_t)n);
  assert_non_null(h);
  for (long long i = 0; i < n; ++i) {
    if (at_round(x[i], dt) != x[i]) fail_msg("input %lld = %g is not exact in the element type", i, (double)x[i]);
    h[i] = at_bits(x[i], dt);
  }
  void *dp = NULL;
  assert_int_equal(kbd_malloc(&dp, 2 * (size_t)n).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dp, h, 2 * (size_t)n).code, KBD_OK);
  free(h);
  return dp;
}
static inline void at_upload(at_problem *p) {
  p->dq = at_device_copy(p->q, p->nq, p->dtype);
  p->dk = at_device_copy(p->k, p->nk, p->dtype);
  p->dv = at_device_copy(p->v, p->nk, p->dtype);
}
static inline void at_free(at_problem *p) {
  if (p->dq) kbd_free(p->dq);
  if (p->dk) kbd_free(p->dk);
  if (p->dv) kbd_free(p->dv);
  free(p->q), free(p->k), free(p->v);
  memset(p, 0, sizeof *p);
}

/* Device output buffers, every byte AT_SENTINEL. */
typedef struct at_out {
  void *o;
  float *lse;
  uint16_t *ho; /* host copies (at_download) */
  float *hlse;
} at_out;
static inline void at_out_alloc(at_out *r, const at_problem *p) {
  assert_int_equal(kbd_malloc(&r->o, 2 * (size_t)p->nq).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&r->lse, sizeof(float) * (size_t)p->nrows).code, KBD_OK);
  assert_int_equal(kbd_memset_device(r->o, AT_SENTINEL, 2 * (size_t)p->nq).code, KBD_OK);
  assert_int_equal(kbd_memset_device(r->lse, AT_SENTINEL, sizeof(float) * (size_t)p->nrows).code, KBD_OK);
  r->ho = (uint16_t *)malloc(2 * (size_t)p->nq);
  r->hlse = (float *)malloc(sizeof(float) * (size_t)p->nrows);
  assert_non_null(r->ho), assert_non_null(r->hlse);
}
static inline void at_download(at_out *r, const at_problem *p) {
  assert_int_equal(kbd_device_sync().code, KBD_OK);
  assert_int_equal(kbd_copy_to_host(r->ho, r->o, 2 * (size_t)p->nq).code, KBD_OK);
  assert_int_equal(kbd_copy_to_host(r->hlse, r->lse, sizeof(float) * (size_t)p->nrows).code, KBD_OK);
}
static inline void at_out_free(at_out *r) {
  kbd_free(r->o), kbd_free(r->lse);
  free(r->ho), free(r->hlse);
  memset(r, 0, sizeof *r);
}

/* Reference of output row `row` ([batch][heads_q][seq_q]) in double: o[0..d), *lse; returns 0 for a row that
 * sees no key (o = 0, lse = -inf). Causal: query i sees key j <= i + seq_k - seq_q (attention.h). */
static inline int at_reference(const at_problem *p, long long row, double *o, double *lse) {
  const int d = p->d, i = (int)(row % p->seq_q), group = p->heads_q / p->heads_kv;
  const long long bh = row / p->seq_q, b = bh / p->heads_q, h = bh % p->heads_q;
  const long long kv0 = (b * p->heads_kv + h / group) * p->seq_k;
  const double scale = p->scale > 0.0f ? (double)p->scale : 1.0 / sqrt((double)d);
  int last = p->seq_k - 1;
  if (p->causal && i + p->seq_k - p->seq_q < last) last = i + p->seq_k - p->seq_q;
  for (int c = 0; c < d; ++c) o[c] = 0.0;
  *lse = -INFINITY;
  if (last < 0) return 0;
  double m = -INFINITY, sum = 0.0;
  double *s = (double *)malloc(sizeof(double) * (size_t)(last + 1));
  assert_non_null(s);
  for (int j = 0; j <= last; ++j) {
    double acc = 0.0;
    for (int c = 0; c < d; ++c) acc += (double)AT_Q(p, row, c) * (double)AT_K(p, kv0 + j, c);
    s[j] = scale * acc;
    if (s[j] > m) m = s[j];
  }
  for (int j = 0; j <= last; ++j) {
    const double e = exp(s[j] - m);
    sum += e;
    for (int c = 0; c < d; ++c) o[c] += e * (double)AT_V(p, kv0 + j, c);
  }
  for (int c = 0; c < d; ++c) o[c] /= sum;
  *lse = m + log(sum);
  free(s);
  return 1;
}

/* [heads][stride rows][d] bf16 as a 3D map with `extent` rows per head visible to the TMA (extent < stride: the rows
 * after them are a pad the TMA clips), boxes of 64 columns (128 bytes: the 128B swizzle span) x box_rows. */
static inline kbd_status at_map_ds(kbd_tensor_map *m, const void *ptr, long long extent, long long stride,
                                   long long heads, int d, unsigned box_rows) {
  kbd_tensor_map_desc t = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, ptr, (uint64_t)extent, (uint64_t)d, 2u * (uint64_t)d,
                                                 box_rows, 64, KBD_TMAP_SWIZZLE_128B);
  t.rank = 3;
  t.global_dims[2] = (uint64_t)heads;
  t.global_strides[1] = (uint64_t)stride * 2u * (uint64_t)d;
  t.box_dims[2] = 1;
  t.element_strides[2] = 1;
  return kbd_tensor_map_encode(m, &t);
}
/* [heads][rows][d] bf16, every row visible: the tensor maps of the tests that launch a bf16 kernel directly instead of
 * through attn_run (at_map: head_dim 64). */
static inline kbd_status at_map_d(kbd_tensor_map *m, const void *ptr, long long rows, long long heads, int d,
                                  unsigned box_rows) {
  return at_map_ds(m, ptr, rows, rows, heads, d, box_rows);
}
static inline kbd_status at_map(kbd_tensor_map *m, const void *ptr, long long rows, long long heads, unsigned box_rows) {
  return at_map_d(m, ptr, rows, heads, 64, box_rows);
}

/* Runs a kernel text directly on problem p (bf16, no split), the launch attn_run makes: tensor maps of head_dim p->d
 * with 64-row Q boxes and key-block boxes, the text's shared-memory plan and block rows, p's scale or
 * 1 / sqrt(head_dim). O goes to o ([heads][o_stride rows][d]; its map shows o_extent rows of each head), the lse to
 * lse. For the tests that compile a text again under their own names (broken variants). */
typedef kbd_status (*at_kernel)(kbd_launch_cfg, attn_params);
static inline kbd_status at_launch_text_into(at_kernel kernel, const at_problem *p, void *o, float *lse,
                                             long long o_extent, long long o_stride, kbd_smem_plan plan,
                                             int block_rows) {
  const int group = p->heads_q / p->heads_kv;
  const long long heads = (long long)p->batch * p->heads_kv, rows = (long long)group * p->seq_q;
  attn_params a;
  memset(&a, 0, sizeof a);
  kbd_status s;
  if (!kbd_ok(s = at_map_d(&a.q, p->dq, rows, heads, p->d, ATTN_WM))) return s;
  if (!kbd_ok(s = at_map_d(&a.k, p->dk, p->seq_k, heads, p->d, ATTN_BN(p->d)))) return s;
  if (!kbd_ok(s = at_map_d(&a.v, p->dv, p->seq_k, heads, p->d, ATTN_BN(p->d)))) return s;
  if (!kbd_ok(s = at_map_ds(&a.om, o, o_extent, o_stride, heads, p->d, ATTN_WM))) return s; /* the epilogue's store */
  if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
  a.o = o, a.lse = lse;
  a.seq_q = p->seq_q, a.seq_k = p->seq_k, a.group = group, a.causal = p->causal, a.splits = 1;
  a.scale = p->scale > 0.0f ? p->scale : 1.0f / sqrtf((float)p->d);
  const unsigned qblocks = (unsigned)((rows + block_rows - 1) / block_rows);
  return kernel(kbd_cfg(kbd_dim(qblocks, (unsigned)heads, 1), plan.bytes, NULL), a);
}
/* The same into r (O's packed rows, all visible). */
static inline kbd_status at_launch_text(at_kernel kernel, const at_problem *p, const at_out *r, kbd_smem_plan plan,
                                        int block_rows) {
  const long long rows = (long long)(p->heads_q / p->heads_kv) * p->seq_q;
  return at_launch_text_into(kernel, p, r->o, r->lse, rows, rows, plan, block_rows);
}

/* The lines of the text at path holding needle (the lines a report may name); fails if there is none, or more than max
 * (a check that looked at only some of them would pass or fail by the order of the text). */
static inline int at_text_lines(const char *path, const char *needle, int *lines, int max) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  char buf[512];
  int line = 0, n = 0;
  while (fgets(buf, sizeof buf, f)) {
    ++line;
    if (strstr(buf, needle)) {
      if (n == max) fail_msg("%s: \"%s\" on more than %d lines", path, needle, max);
      lines[n++] = line;
    }
  }
  fclose(f);
  if (!n) fail_msg("%s has no line with \"%s\"", path, needle);
  return n;
}

/* Does msg name a line of the text at path holding one of the needles (a NULL-terminated list), as "<file>:<line>"
 * followed by one of the suffixes (a NULL-terminated list: ":" any site, ": " a fault's, " waits" a deadlock report's
 * waiting warp)? <file> is path's last component, the end of the __FILE__ the machine reports. */
static inline int at_names_line(const char *msg, const char *path, const char *const *needles,
                                const char *const *suffixes) {
  const char *slash = strrchr(path, '/'), *file = slash ? slash + 1 : path;
  for (; *needles; ++needles) {
    int lines[8];
    const int n = at_text_lines(path, *needles, lines, 8);
    for (int i = 0; i < n; ++i)
      for (const char *const *sf = suffixes; *sf; ++sf) {
        char at[1100];
        snprintf(at, sizeof at, "%s:%d%s", file, lines[i], *sf);
        if (strstr(msg, at)) return 1;
      }
  }
  return 0;
}

/* Tolerance of an output element against the double reference (the bound of examples/attention/main.c,
 * derived again here): S = Q K^T is exact products summed in f32; P is rounded to the element type for the
 * P V MMA (relative error <= u, u = 2^-8 bf16, 2^-11 f16) while the row sum uses unrounded P, so O is off by
 * <= u max|v|; the output rounding adds <= u |O| <= u max|v|; f32 sums are far below. 4 u max|v| leaves a
 * factor 2 of slack. */
static inline double at_tolerance(attn_dtype dt, double vmax) { return 4.0 * (dt == ATTN_F16 ? 1.0 / 2048 : 1.0 / 256) * vmax; }

/* Compares every output row with the reference: returns the number of rows with an element (or the lse) out of
 * tolerance; *worst the largest error seen. */
static inline long long at_check(const at_problem *p, const at_out *r, double tol, double *worst, int verbose) {
  double *o = (double *)malloc(sizeof(double) * (size_t)p->d);
  assert_non_null(o);
  long long bad_rows = 0;
  *worst = 0.0;
  for (long long row = 0; row < p->nrows; ++row) {
    double lse;
    at_reference(p, row, o, &lse);
    int bad = 0;
    for (int c = 0; c < p->d; ++c) {
      const double got = at_value(r->ho[row * p->d + c], p->dtype), err = fabs(got - o[c]);
      if (!(err <= tol)) {
        if (verbose && bad_rows < 3 && !bad) printf("  O[row %lld][%d] = %.6g, want %.6g\n", row, c, got, o[c]);
        bad = 1;
      }
      if (err > *worst || err != err) *worst = err;
    }
    const double gl = (double)r->hlse[row];
    const int lse_ok = lse == -INFINITY ? gl == -INFINITY : fabs(gl - lse) <= 1e-4 + 1e-5 * fabs(lse);
    if (!lse_ok) {
      if (verbose && bad_rows < 3) printf("  lse[row %lld] = %.9g, want %.9g\n", row, gl, lse);
      bad = 1;
    }
    bad_rows += bad;
  }
  free(o);
  return bad_rows;
}

/* Rows whose max moves at every key block in at_movers' inputs: the even warps' 32 rows (r / 32 even) and row 7 of
 * every odd warp (a lone mover in a warp whose other rows, lane 0's among them, keep their max). */
static inline int at_mover(long long r) { return (r / 32) % 2 == 0 || r % 32 == 7; }

/* Inputs for the lazy softmax's two outcomes (bf16, head_dim d, one kv head, 2 q heads, causal, scale 1 / sqrt(d)):
 * random values in [-1, 1), except q[c] = 1 on the movers' rows (0 elsewhere) and k[c] = 64 b on every key of key
 * block b, for the first ncl columns c. A mover's scores rise by ncl x 64 / sqrt(d) per block (8, 11.5 in log2 units,
 * with ncl = sqrt(d) / 8: d 64 -> 1, 256 -> 2), past the slack of 8, give or take the random part (its block maxima
 * differ by about one), so its max moves at every block it sees; the other rows' scores are the random part only and
 * their max keeps still after block 0. */
static inline void at_movers(at_problem *p, int d, int seq_q, int seq_k, int ncl) {
  at_init(p, ATTN_BF16, 1, 2, 1, seq_q, seq_k, d, 1, 0.0f);
  for (long long i = 0; i < p->nrows * d; ++i)
    p->q[i] = i % d >= ncl ? at_rand((unsigned long long)i, 1) : at_mover(i / d) ? 1.0f : 0.0f;
  for (long long i = 0; i < (long long)p->seq_k * d; ++i) {
    p->k[i] = i % d >= ncl ? at_rand((unsigned long long)i, 2) : 64.0f * (float)(i / d / ATTN_BN(d));
    p->v[i] = at_rand((unsigned long long)i, 3);
  }
  at_upload(p);
}

/* Launches a kernel text on p into r: the test's at_launch_text with the text's plan and block. */
typedef kbd_status (*at_launch_fn)(at_kernel kernel, const at_problem *p, const at_out *r);

/* The unbroken kernel on p under the default schedule (2 host threads) and seeds 0..seeds-1 (1 thread): every row
 * within the tolerance of the double reference. votes (or NULL): the pair a counted text bumps around its
 * correction's vote ([0] warps that skipped the rescale, [1] that made it); then every run must see both. */
static inline void at_control_runs(at_launch_fn launch, at_kernel kernel, const at_problem *p, long seeds, long *votes,
                                   const char *what) {
  for (long seed = -1; seed < seeds; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    if (votes) votes[0] = votes[1] = 0;
    at_out r;
    at_out_alloc(&r, p);
    MT_ASSERT_OK(launch(kernel, p, &r));
    at_download(&r, p);
    double worst;
    const long long bad = at_check(p, &r, at_tolerance(p->dtype, 1.0), &worst, 0);
    if (bad != 0) fail_msg("%s (seed %ld): %lld rows out of tolerance (worst %.3g)", what, seed, bad, worst);
    if (votes && (votes[0] == 0 || votes[1] == 0))
      fail_msg("%s (seed %ld): %ld warps skipped the rescale and %ld made it; the inputs should give both", what, seed,
               votes[0], votes[1]);
    at_out_free(&r);
  }
}

/* One (batch, kv head), 2 q heads of seq_q rows (GQA packs them into 2 seq_q rows), seq_k keys, head_dim d (at_moving_max:
 * 64), bf16, not causal, scale 0.5. Every q row has q[0] = 1; the first key of key block b (ATTN_BN(d) keys) has
 * k[0] = 16 + 16b and nothing else, the other keys k[0] = 0 and |k[c]| <= 16/d, so with |q[c]| <= 1 their scores are
 * < 16 (d - 1) / d < 16: the row
 * max of EVERY row is the first key of the block just read, and it grows by 16 (scaled by 0.5: by 8, 11.5 in log2
 * units) from one key block to the next - more than a lazy softmax's slack (KBD_SOFTMAX_SLACK = 8), so every block
 * moves every row's max in the eager and the lazy update alike. Values in [-1, 1). */
static inline void at_moving_max_d(at_problem *p, int seq_q, int seq_k, int d) {
  at_init(p, ATTN_BF16, 1, 2, 1, seq_q, seq_k, d, 0, 0.5f);
  for (long long r = 0; r < p->nrows; ++r)
    for (int c = 0; c < d; ++c) AT_Q(p, r, c) = c == 0 ? 1.0f : at_rand((unsigned long long)(r * d + c), 1);
  for (int j = 0; j < p->seq_k; ++j)
    for (int c = 0; c < d; ++c) {
      const int first = j % ATTN_BN(d) == 0;
      AT_K(p, j, c) = first ? (c == 0 ? 16.0f + 16.0f * (float)(j / ATTN_BN(d)) : 0.0f)
                            : (c == 0 ? 0.0f : at_rand((unsigned long long)(j * d + c), 2) * 16.0f / (float)d);
      AT_V(p, j, c) = at_rand((unsigned long long)(j * d + c), 3);
    }
  at_upload(p);
}
static inline void at_moving_max(at_problem *p, int seq_q, int seq_k) { at_moving_max_d(p, seq_q, seq_k, 64); }

/* The output of a kernel that does not rescale O, on at_moving_max's inputs (at least 2 key blocks): EVERY row is
 * wrong by far more than the tolerance (the earlier blocks' first keys, values in [-1, 1), are weighted 1 instead of
 * e^-8, e^-16 ... relative to the last one), while the lse matches (the row sums are rescaled inside
 * kbd_softmax_update). */
static inline void at_assert_every_row_wrong(const at_problem *p, const at_out *r, const char *what) {
  double *o = (double *)malloc(sizeof(double) * (size_t)p->d);
  assert_non_null(o);
  const double tol = at_tolerance(p->dtype, 1.0);
  for (long long row = 0; row < p->nrows; ++row) {
    double lse, err = 0.0;
    at_reference(p, row, o, &lse);
    for (int c = 0; c < p->d; ++c) {
      const double e = fabs(at_value(r->ho[row * p->d + c], p->dtype) - o[c]);
      if (e > err) err = e;
    }
    if (!(err > 10.0 * tol))
      fail_msg("%s (sm_%d): row %lld max |O - ref| = %.3g, want > %.3g", what, KBD_CPU_ARCH, row, err, 10 * tol);
    if (!(fabs((double)r->hlse[row] - lse) <= 1e-4 + 1e-5 * fabs(lse)))
      fail_msg("%s (sm_%d): lse[%lld] = %.9g, want %.9g (the sums are rescaled by kbd_softmax_update)", what,
               KBD_CPU_ARCH, row, (double)r->hlse[row], lse);
  }
  free(o);
}

#endif /* ATTN_TEST_H */
