/* FA4's exponential on the CPU machine (kbd/exp2_poly.h, kbd/f32x2.h, kbd_softmax_update_lazy_poly):
 *  - kbd_exp2_poly_ftz against exp2 in double: every float of [-1, -2^-6] and [2^-6, 1] (every polynomial argument
 *    f there), every float of [-127.5, -125] (the flush boundary), a sweep of every 61st float of [-127, 16], and the
 *    special values (0, -0, -inf, NaN, tiny negatives, -126 and its neighbours, huge negatives): max relative error
 *    <= KBD_EXP2_POLY_REL_ERR where 2^x >= 2^-126, exactly +0 below it, NaN for NaN, exactly 1 at 0;
 *  - kbd_exp2_poly_ftz_x2 equals the scalar function bit for bit; the f32x2 twins equal two fmaf / products / sums
 *    bit for bit on random bit patterns (NaN for NaN);
 *  - kbd_softmax_update_lazy_poly against kbd_softmax_update_lazy on the same blocks (TMEM_ACC 128 rows, WGMMA_ACC 64,
 *    MMA_C 32; moving and kept maxima, masked positions, the exact form for huge scores): the statistics and the
 *    MUFU elements bit for bit, each polynomial element == kbd_exp2_poly_ftz(its exponent) bit for bit (TMEM_ACC:
 *    exactly the last `share` columns of each 8), share 0 == kbd_softmax_update_lazy; kbd_softmax_rescale_packed ==
 *    kbd_softmax_rescale bit for bit. */
#include <kbd/tile.h> /* first: the CPU machine's feature macros (setenv) */

#include <kbd/exp2_poly.h>
#include <kbd/f32x2.h>

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kt_host.h"
#define malloc(n) kt_host_alloc(n)
#define free(p) kt_host_free(p)

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

typedef struct {
  double max_rel;
  float worst;
  long n;
} err_acc;

/* one argument: the bound, the flush, NaN; records the largest relative error */
static void check_one(float x, err_acc *acc) {
  const float y = kbd_exp2_poly_ftz(x);
  ++acc->n;
  if (isnan(x)) {
    if (!isnan(y)) fail_msg("exp2_poly(NaN) = %a, want NaN", y);
    return;
  }
  const double want = exp2((double)x);
  if (want < 0x1p-126) {
    if (bits_of(y) != 0u) fail_msg("exp2_poly(%a) = %a, want +0 (2^x below 2^-126 flushes)", x, y);
    return;
  }
  const double rel = fabs((double)y - want) / want;
  if (!(rel <= KBD_EXP2_POLY_REL_ERR))
    fail_msg("exp2_poly(%a) = %a, exp2 = %a: relative error %.3g = 2^%.2f above the bound 2^-22", x, y, want, rel,
             log2(rel));
  if (rel > acc->max_rel) acc->max_rel = rel, acc->worst = x;
}

static void sweep(uint32_t from, uint32_t to, uint32_t step, err_acc *acc) {
  for (uint64_t u = from; u <= to; u += step)
    check_one(float_of((uint32_t)u), acc);
}

static void test_exp2_poly_accuracy(void **state) {
  (void)state;
  err_acc acc = {0.0, 0.0f, 0};
  /* every float of [2^-6, 1] and of [-1, -2^-6]: j = 0 or +-1 there, so f runs through every float of those binades */
  sweep(bits_of(0x1p-6f), bits_of(1.0f), 1, &acc);
  sweep(bits_of(-0x1p-6f), bits_of(-1.0f), 1, &acc);
  /* the flush boundary: every float of [-127.5, -125] */
  sweep(bits_of(-125.0f), bits_of(-127.5f), 1, &acc);
  /* the whole range the softmax feeds (x <= slack <= 15) and a margin: every 61st float of [-127, 16] */
  sweep(0x80000000u, bits_of(-127.0f), 61, &acc);
  sweep(0u, bits_of(16.0f), 61, &acc);
  /* the top of the domain */
  sweep(bits_of(120.0f), bits_of(127.0f), 997, &acc);
  const float specials[] = {0.0f,       -0.0f,     -INFINITY, NAN,      -NAN,           -FLT_MIN,
                            -0x1p-149f, 0x1p-149f, -1e-30f,   -126.0f,  -0x1.f7fffep6f, -0x1.f80002p6f,
                            -126.5f,    -127.0f,   -128.0f,   -1000.0f, -1e30f,         -FLT_MAX,
                            -0.5f,      0.5f,      -1.5f,     8.0f,     15.0f,          127.0f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; ++i)
    check_one(specials[i], &acc);
  /* exact values the softmax relies on: the row's max element gives 1, a kept slack's 2^8 is exact */
  assert_true(kbd_exp2_poly_ftz(0.0f) == 1.0f && kbd_exp2_poly_ftz(-0.0f) == 1.0f);
  assert_true(kbd_exp2_poly_ftz(8.0f) == 256.0f && kbd_exp2_poly_ftz(-3.0f) == 0.125f);
  assert_true(kbd_exp2_poly_ftz(-126.0f) == 0x1p-126f);
  assert_true(bits_of(kbd_exp2_poly_ftz(-INFINITY)) == 0u);
  print_message("exp2_poly: %ld arguments, max relative error %.4g = 2^%.3f at %a (bound 2^-22)\n", acc.n, acc.max_rel,
                log2(acc.max_rel), acc.worst);
  /* the sweep reached the polynomial's error, not only rounding: well above 2^-24 */
  assert_true(acc.max_rel > 0x1p-24);
}

static uint32_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 32);
}

static int same_bits(float a, float b) { return (isnan(a) && isnan(b)) || bits_of(a) == bits_of(b); }

static void test_f32x2_twins_and_pair(void **state) {
  (void)state;
  uint64_t seed = 42;
  for (int i = 0; i < 2000000; ++i) {
    const float a[2] = {float_of(rng_next(&seed)), float_of(rng_next(&seed))};
    const float b[2] = {float_of(rng_next(&seed)), float_of(rng_next(&seed))};
    const float c[2] = {float_of(rng_next(&seed)), float_of(rng_next(&seed))};
    float d[2];
    kbd_f32x2_fma(d, a, b, c);
    for (int k = 0; k < 2; ++k)
      if (!same_bits(d[k], fmaf(a[k], b[k], c[k])))
        fail_msg("kbd_f32x2_fma lane %d: fma(%a, %a, %a) = %a, fmaf %a", k, a[k], b[k], c[k], d[k],
                 fmaf(a[k], b[k], c[k]));
    kbd_f32x2_mul(d, a, b);
    for (int k = 0; k < 2; ++k)
      if (!same_bits(d[k], a[k] * b[k])) fail_msg("kbd_f32x2_mul lane %d: %a * %a = %a", k, a[k], b[k], d[k]);
    kbd_f32x2_add(d, a, b);
    for (int k = 0; k < 2; ++k)
      if (!same_bits(d[k], a[k] + b[k])) fail_msg("kbd_f32x2_add lane %d: %a + %a = %a", k, a[k], b[k], d[k]);
    /* d aliasing an operand */
    float e[2] = {a[0], a[1]};
    kbd_f32x2_fma(e, e, b, c);
    assert_true(same_bits(e[0], fmaf(a[0], b[0], c[0])) && same_bits(e[1], fmaf(a[1], b[1], c[1])));
    /* the pair exponential: softmax-like arguments (-140 .. 16) and raw bit patterns */
    const float x[2] = {(float)(rng_next(&seed) >> 8) * -0x1p-24f * 156.0f + 16.0f,
                        (i & 1) ? float_of(rng_next(&seed)) : -(float)(rng_next(&seed) >> 8) * 0x1p-17f};
    float y[2];
    kbd_exp2_poly_ftz_x2(y, x);
    for (int k = 0; k < 2; ++k)
      if (!(x[k] > 127.0f) && !same_bits(y[k], kbd_exp2_poly_ftz(x[k])))
        fail_msg("kbd_exp2_poly_ftz_x2 lane %d: x = %a: %a, scalar %a", k, x[k], y[k], kbd_exp2_poly_ftz(x[k]));
  }
}

/* ---- the softmax variant against kbd_softmax_update_lazy ---- */

#define SC 32 /* score columns per block */
#define OC 16
#define NB 5

typedef struct {
  const float *s;     /* [NB][R][SC] */
  float *p0;          /* [NB][R][SC]: kbd_softmax_update_lazy's p */
  float *p1;          /* [NB][R][SC]: kbd_softmax_update_lazy_poly's p */
  float *o0, *o1;     /* [NB][R][OC]: o after block j, rescaled by kbd_softmax_rescale / _packed */
  float *m1;          /* [NB][R]: the poly update's row max after block j */
  float *sum0, *sum1; /* [R]: the row sums at the end */
} pz_params;

#define PZ_KERNEL(name, L, R, S, SHARE)                                                                                \
  KBD_KERNEL(name, S, pz_params) {                                                                                     \
    KBD_TILE_L(f32, R, SC, S, L) s, pr0, pr1;                                                                          \
    KBD_TILE_L(f32, R, OC, S, L) o0, o1;                                                                               \
    KBD_SOFTMAX_STATE(s) st0;                                                                                          \
    KBD_SOFTMAX_STATE(s) st1;                                                                                          \
    kbd_softmax_init(st0);                                                                                             \
    kbd_softmax_init(st1);                                                                                             \
    kbd_load2d(o0, p.o0, R, OC, OC, 0, 0); /* o starts as arbitrary values */                                          \
    kbd_load2d(o1, p.o0, R, OC, OC, 0, 0);                                                                             \
    for (int j = 0; j < NB; ++j) {                                                                                     \
      kbd_load2d(s, p.s + (long long)j * (R)*SC, R, SC, SC, 0, 0);                                                     \
      kbd_softmax_update_lazy(pr0, st0, s, 0.37f, KBD_SOFTMAX_SLACK);                                                  \
      kbd_softmax_update_lazy_poly(pr1, st1, s, 0.37f, KBD_SOFTMAX_SLACK, SHARE);                                      \
      kbd_store2d(p.p0 + (long long)j * (R)*SC, pr0, R, SC, SC, 0, 0);                                                 \
      kbd_store2d(p.p1 + (long long)j * (R)*SC, pr1, R, SC, SC, 0, 0);                                                 \
      kbd_vec_store(p.m1 + (long long)j * (R), st1.row_max);                                                           \
      kbd_softmax_rescale(o0, st0);                                                                                    \
      kbd_softmax_rescale_packed(o1, st1);                                                                             \
      kbd_store2d(p.o0 + (long long)j * (R)*OC, o0, R, OC, OC, 0, 0);                                                  \
      kbd_store2d(p.o1 + (long long)j * (R)*OC, o1, R, OC, OC, 0, 0);                                                  \
    }                                                                                                                  \
    kbd_vec_store(p.sum0, st0.row_sum);                                                                                \
    kbd_vec_store(p.sum1, st1.row_sum);                                                                                \
  }

PZ_KERNEL(pz_tmem128_s2, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP, 2)
PZ_KERNEL(pz_tmem128_s0, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP, 0)
PZ_KERNEL(pz_tmem128_s3, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP, 3)
PZ_KERNEL(pz_tmem128_s8, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP, 8)
PZ_KERNEL(pz_wgmma64_s2, KBD_LAYOUT_WGMMA_ACC, 64, KBD_WARPGROUP, 2)
PZ_KERNEL(pz_mmac32_s4, KBD_LAYOUT_MMA_C, 32, KBD_WARP, 4)
typedef kbd_status (*pz_kernel)(kbd_launch_cfg, pz_params);

/* scores: per row class, a max that climbs past the slack every block, one that climbs slowly, one that stays; row
 * 3 fully masked, row 5 masked in blocks 0-1, every 7th position of rows >= 8 masked; `offset` adds a huge constant
 * (every row's |m scale log2e| >= 256: the exact form) */
static float pz_score(int j, int r, int c, float offset) {
  if (r == 3 || (r == 5 && j < 2) || (r >= 8 && (c + j) % 7 == 0)) return -INFINITY;
  const unsigned h = (unsigned)(j * 7919 + r * 131 + c * 17) * 2654435761u;
  const float noise = ((float)(h >> 8) / 16777216.0f - 0.5f) * 24.0f;
  const int cls = (r / 8) % 3;
  return offset + (cls == 0 ? 40.0f * (float)j : cls == 1 ? 5.0f * (float)j : 0.0f) + noise;
}

static void run_poly(pz_kernel k, int R, int share, int tmem, float offset) {
  const size_t ns = (size_t)NB * R * SC, no = (size_t)NB * R * OC;
  float *s = malloc(ns * sizeof *s), *p0 = malloc(ns * sizeof *p0), *p1 = malloc(ns * sizeof *p1);
  float *o0 = malloc(no * sizeof *o0), *o1 = malloc(no * sizeof *o1), *m1 = malloc((size_t)NB * R * sizeof *m1);
  float *sum0 = malloc((size_t)R * sizeof *sum0), *sum1 = malloc((size_t)R * sizeof *sum1);
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < SC; ++c)
        s[((size_t)j * R + r) * SC + c] = pz_score(j, r, c, offset);
  for (size_t i = 0; i < (size_t)R * OC; ++i)
    o0[i] = 1.0f + (float)(i % 13) * 0.37f;
  pz_params p = {s, p0, p1, o0, o1, m1, sum0, sum1};
  kbd_status st = k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("launch: %s", st.msg);
  const float sl2 = 0.37f * KBD_SOFTMAX_LOG2E;
  long npoly = 0, ndiff = 0;
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r) {
      const float m = m1[(size_t)j * R + r], shift = m == -INFINITY ? 0.0f : m, mc = shift * sl2;
      /* the form is the warp's: every row with a finite max is small (offset 0) or huge (the exact form) */
      const int fma_form = offset == 0.0f;
      if (m != -INFINITY && (fabsf(mc) < KBD_SOFTMAX_FMA_MAX) != fma_form)
        fail_msg("row %d block %d: the test data did not pick the form it meant", r, j);
      for (int c = 0; c < SC; ++c) {
        const size_t i = ((size_t)j * R + r) * SC + c;
        const float e = fma_form ? fmaf(s[i], sl2, -mc) : (s[i] - shift) * sl2;
        const float viapoly = kbd_exp2_poly_ftz(e), viamufu = kbd_hw_ex2_ftz_f32(e);
        /* the lazy update computes the same exponent: its p is MUFU's of e, bit for bit */
        if (!same_bits(p0[i], viamufu)) fail_msg("test: the lazy update's p[%d][%d] (block %d) is not ex2(e)", r, c, j);
        const int want_poly = tmem ? (c % 8) >= 8 - share : -1;
        const int is_poly = same_bits(p1[i], viapoly), is_mufu = same_bits(p1[i], viamufu);
        if (!is_poly && !is_mufu)
          fail_msg("block %d p[%d][%d] = %a: neither exp2_poly(e) = %a nor ex2(e) = %a", j, r, c, p1[i], viapoly,
                   viamufu);
        if (want_poly == 1 && !is_poly)
          fail_msg("block %d p[%d][%d]: column %d should be a polynomial one", j, r, c, c);
        if (want_poly == 0 && !is_mufu) fail_msg("block %d p[%d][%d]: column %d should be a MUFU one", j, r, c, c);
        if (!same_bits(viapoly, viamufu)) {
          ++ndiff;
          npoly += is_poly;
        }
        if (!(p1[i] <= 256.0f)) fail_msg("p[%d][%d] = %a above 2^slack", r, c, p1[i]);
      }
    }
  /* share/8 of the elements (where the two units differ at all) are polynomial ones, in any layout */
  if (share == 0 && npoly != 0) fail_msg("share 0: %ld polynomial elements", npoly);
  if (share > 0 && !(fabs((double)npoly / (double)ndiff - share / 8.0) < 0.05))
    fail_msg("share %d: %ld of %ld distinguishable elements took the polynomial", share, npoly, ndiff);
  for (size_t i = 0; i < no; ++i)
    if (!same_bits(o0[i], o1[i]))
      fail_msg("o[%zu]: kbd_softmax_rescale_packed %a, kbd_softmax_rescale %a", i, o1[i], o0[i]);
  for (int r = 0; r < R; ++r) {
    /* TMEM_ACC sums in FADD2 pairs, another order than kbd_reduce_rows: equal to f32 rounding; the others the same */
    if (!tmem && share == 0 && !same_bits(sum0[r], sum1[r]))
      fail_msg("share 0: row %d sum %a, lazy %a", r, sum1[r], sum0[r]);
    if (!(fabs((double)sum1[r] - sum0[r]) <= 1e-6 * fabs((double)sum0[r])))
      fail_msg("row %d: sum %.9g, lazy %.9g", r, sum1[r], sum0[r]);
  }
  free(s), free(p0), free(p1), free(o0), free(o1), free(m1), free(sum0), free(sum1);
}

static void test_softmax_poly_tmem(void **state) {
  (void)state;
  run_poly(pz_tmem128_s2, 128, 2, 1, 0.0f);
  run_poly(pz_tmem128_s2, 128, 2, 1, 4000.0f);
  run_poly(pz_tmem128_s0, 128, 0, 1, 0.0f);
  run_poly(pz_tmem128_s3, 128, 3, 1, 0.0f);
  run_poly(pz_tmem128_s8, 128, 8, 1, 0.0f);
}
static void test_softmax_poly_other_layouts(void **state) {
  (void)state;
  run_poly(pz_wgmma64_s2, 64, 2, 0, 0.0f);
  run_poly(pz_mmac32_s4, 32, 4, 0, 4000.0f);
}

int main(void) {
  setenv("KBD_CPU_QUIET", "1", 1);
  setenv("KBD_CPU_THREADS", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp2_poly_accuracy),
      cmocka_unit_test(test_f32x2_twins_and_pair),
      cmocka_unit_test(test_softmax_poly_tmem),
      cmocka_unit_test(test_softmax_poly_other_layouts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
