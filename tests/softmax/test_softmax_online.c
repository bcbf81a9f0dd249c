/* Online softmax (kbd/softmax.h) on the CPU machine, against double-precision references written here from
 * the definitions (softmax, log-sum-exp, the running max), not from kbd's code:
 *  - accumulator layouts (WGMMA_ACC 64 and 128 rows, TMEM_ACC 128 rows, MMA_C per warp): J blocks of scores
 *    with masked (-inf) positions and fully masked rows; after each block the output-shaped tile (other
 *    columns than the scores) rescaled by kbd_softmax_rescale must equal exp(scale (M_0 - M_j)) per row; the
 *    last block's p = exp(scale (s - M_J)); kbd_softmax_finish gives o / sum and lse = ln sum_k exp(scale s_k),
 *    -inf and o = 0 for a row with no unmasked score; kbd_vec_store_n writes lse only below n;
 *  - a CTA-wide ROW row of any length in 1024-wide tiles, two passes (update, then kbd_softmax_apply): the
 *    softmax of the whole row and its lse, with the tail masked by position;
 *  - NaN and +inf scores make their row NaN and leave the other rows alone;
 * under several scheduling seeds. Tolerance: 4e-6 relative (f32 exp2/log and sums of <= 4096 terms). */
#include <kbd/tile.h>

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

#define SC 32 /* score columns per block */
#define OC 16 /* output columns */
#define NB 5  /* blocks */

typedef struct {
  const float *s; /* [NB][R][SC] */
  float *o;       /* [NB][R][OC]: o after block j's rescale (j >= 1), [NB-1] replaced by the finished o */
  float *p;       /* [R][SC]: the last block's p */
  float *lse;     /* [R], written below nlse only */
  int nlse;
  float scale;
} sm_params;

/* One instance per scope (a warp for MMA_C, a warpgroup otherwise); the test launches one instance. */
#define SM_KERNEL(name, L, R, S)                                                                                       \
  KBD_KERNEL(name, S, sm_params) {                                                                                     \
    KBD_TILE_L(f32, R, SC, S, L) s, pr;                                                                                \
    KBD_TILE_L(f32, R, OC, S, L) o;                                                                                    \
    KBD_SOFTMAX_STATE(s) st;                                                                                           \
    kbd_softmax_init(st);                                                                                              \
    for (int j = 0; j < NB; ++j) {                                                                                     \
      kbd_load2d(s, p.s + (long long)j * (R) * SC, R, SC, SC, 0, 0);                                                   \
      kbd_softmax_update(pr, st, s, p.scale);                                                                          \
      if (j == 0) {                                                                                                    \
        kbd_fill(o, 1.0f);                                                                                             \
      } else {                                                                                                         \
        kbd_softmax_rescale(o, st);                                                                                    \
        kbd_store2d(p.o + (long long)j * (R) * OC, o, R, OC, OC, 0, 0);                                                \
      }                                                                                                                \
    }                                                                                                                  \
    kbd_store2d(p.p, pr, R, SC, SC, 0, 0);                                                                             \
    KBD_ROWVEC(f32, s) lse;                                                                                            \
    kbd_softmax_finish(o, lse, st, p.scale);                                                                           \
    kbd_store2d(p.o, o, R, OC, OC, 0, 0);                                                                              \
    kbd_vec_store_n(p.lse, lse, p.nlse);                                                                               \
  }

SM_KERNEL(sm_wgmma64, KBD_LAYOUT_WGMMA_ACC, 64, KBD_WARPGROUP)
SM_KERNEL(sm_wgmma128, KBD_LAYOUT_WGMMA_ACC, 128, KBD_WARPGROUP)
SM_KERNEL(sm_tmem128, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP)
SM_KERNEL(sm_mmac32, KBD_LAYOUT_MMA_C, 32, KBD_WARP)

typedef kbd_status (*sm_kernel)(kbd_launch_cfg, sm_params);

/* Scores: mostly random in [-8, 8); row 3 fully masked; row 5 masked in blocks 0-1 only (its max appears
 * late); row 7 has growing values so its max moves every block; every 5th position of row r >= 8 masked. */
static float score(int j, int r, int c, unsigned *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  const float u = (float)(*seed >> 8) / 16777216.0f * 16.0f - 8.0f;
  if (r == 3) return -INFINITY;
  if (r == 5 && j < 2) return -INFINITY;
  if (r == 7) return (float)(4 * j) + u * 0.25f;
  if (r >= 8 && (c + j) % 5 == 0) return -INFINITY;
  return u;
}

static void check_close(double got, double want, double tol, const char *what, int r, int c) {
  if (isinf(want) || want == 0.0) {
    if (got != want) fail_msg("%s[%d][%d] = %.9g, want %.9g", what, r, c, got, want);
    return;
  }
  if (!(fabs(got - want) <= tol * fabs(want)))
    fail_msg("%s[%d][%d] = %.9g, want %.9g (rel err %.3g)", what, r, c, got, want, fabs(got - want) / fabs(want));
}

static void run_layout(sm_kernel k, int R, int threads, long seed) {
  const size_t ns = (size_t)NB * R * SC;
  float *s = malloc(ns * sizeof *s), *o = malloc((size_t)NB * R * OC * sizeof *o);
  float *pr = malloc((size_t)R * SC * sizeof *pr), *lse = malloc((size_t)R * sizeof *lse);
  unsigned u = 12345u + (unsigned)R;
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < SC; ++c) s[((size_t)j * R + r) * SC + c] = score(j, r, c, &u);
  for (int i = 0; i < R; ++i) lse[i] = 1234.0f; /* sentinel: rows at or past nlse keep it */
  const float scale = 0.37f;
  const int nlse = R - 3;
  setenv("KBD_CPU_SEED", seed ? "7" : "0", 1);
  sm_params p = {s, o, pr, lse, nlse, scale};
  kbd_status st = k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("launch: %s", st.msg);
  (void)threads;
  for (int r = 0; r < R; ++r) {
    double m[NB], sum = 0.0;
    double run = -INFINITY;
    for (int j = 0; j < NB; ++j) {
      for (int c = 0; c < SC; ++c) run = fmax(run, (double)s[((size_t)j * R + r) * SC + c]);
      m[j] = run;
    }
    const double mz = isinf(m[NB - 1]) ? 0.0 : m[NB - 1];
    for (int j = 0; j < NB; ++j)
      for (int c = 0; c < SC; ++c) sum += exp(scale * ((double)s[((size_t)j * R + r) * SC + c] - mz));
    /* rescaled o after block j: prod of the per-block rescales = exp(scale (M_0 - M_j)), 1 while all -inf */
    for (int j = 1; j < NB; ++j) {
      const double want = isinf(m[j]) ? 1.0 : isinf(m[0]) ? 0.0 : exp(scale * (m[0] - m[j]));
      for (int c = 0; c < OC; ++c) check_close(o[((size_t)j * R + r) * OC + c], want, 4e-6, "rescaled o", r, c);
    }
    const double last = isinf(m[NB - 1]) ? 1.0 : isinf(m[0]) ? 0.0 : exp(scale * (m[0] - m[NB - 1]));
    for (int c = 0; c < OC; ++c)
      check_close(o[(size_t)r * OC + c], sum == 0.0 ? 0.0 : last / sum, 4e-6, "finished o", r, c);
    for (int c = 0; c < SC; ++c)
      check_close(pr[(size_t)r * SC + c], exp(scale * ((double)s[((size_t)(NB - 1) * R + r) * SC + c] - mz)), 4e-6,
                  "last p", r, c);
    const double want_lse = sum == 0.0 ? -INFINITY : scale * mz + log(sum);
    if (r < nlse)
      check_close(lse[r], want_lse, 4e-6, "lse", r, 0);
    else
      assert_true(lse[r] == 1234.0f);
  }
  free(s);
  free(o);
  free(pr);
  free(lse);
}

static void test_wgmma_acc_64(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_layout(sm_wgmma64, 64, 128, seed);
}
static void test_wgmma_acc_128(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_layout(sm_wgmma128, 128, 128, seed);
}
static void test_tmem_acc_128(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_layout(sm_tmem128, 128, 128, seed);
}
static void test_mma_c_32(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_layout(sm_mmac32, 32, 32, seed);
}

/* ---- a CTA-wide row, two passes --------------------------------------------------------------------------- */

typedef struct {
  const float *x;
  float *y, *lse;
  long long cols;
  float scale;
} row_params;

KBD_KERNEL(sm_row, 256, row_params) {
  const float *x = p.x + (long long)kbd_block_x() * p.cols;
  float *y = p.y + (long long)kbd_block_x() * p.cols;
  KBD_TILE(f32, 1, 1024, KBD_CTA) t, e;
  KBD_SOFTMAX_STATE(t) st;
  kbd_softmax_init(st);
  for (long long c0 = 0; c0 < p.cols; c0 += 1024) {
    kbd_load(t, x, p.cols, c0);
    KBD_MAP(t, t, v, row, c, c0 + c < p.cols ? v : -INFINITY);
    kbd_softmax_update(e, st, t, p.scale);
  }
  for (long long c0 = 0; c0 < p.cols; c0 += 1024) {
    kbd_load(t, x, p.cols, c0);
    KBD_MAP(t, t, v, row, c, c0 + c < p.cols ? v : -INFINITY);
    kbd_softmax_apply(e, st, t, p.scale);
    kbd_store(y, e, p.cols, c0);
  }
  KBD_ROWVEC(f32, t) lse;
  kbd_softmax_finish(e, lse, st, p.scale);
  kbd_vec_store(p.lse + kbd_block_x(), lse);
}

static void test_row_two_pass(void **state) {
  (void)state;
  const long long lens[] = {1, 7, 1000, 1024, 1025, 4096};
  for (int li = 0; li < 6; ++li) {
    const long long n = lens[li];
    const int rows = 4;
    float *x = malloc((size_t)(rows * n) * sizeof *x), *y = malloc((size_t)(rows * n) * sizeof *y);
    float *lse = malloc(rows * sizeof *lse);
    unsigned u = 99u + (unsigned)n;
    for (long long i = 0; i < rows * n; ++i) {
      u = u * 1664525u + 1013904223u;
      x[i] = (float)(u >> 8) / 16777216.0f * 40.0f - 20.0f;
    }
    x[1 * n + n - 1] = -INFINITY;                       /* row 1: one masked logit */
    for (long long i = 0; i < n; ++i) x[2 * n + i] = -INFINITY; /* row 2: all masked */
    x[3 * n + n / 2] = NAN;                             /* row 3: a NaN */
    setenv("KBD_CPU_SEED", li % 2 ? "3" : "0", 1);
    row_params p = {x, y, lse, n, 0.5f};
    kbd_status st = sm_row(kbd_cfg(kbd_dim(rows, 1, 1), 0, NULL), p);
    if (!kbd_ok(st)) fail_msg("launch: %s", st.msg);
    for (int r = 0; r < 2; ++r) {
      double m = -INFINITY, sum = 0.0;
      for (long long i = 0; i < n; ++i) m = fmax(m, x[r * n + i]);
      if (isinf(m)) { /* row 1 of length 1 is its masked logit only */
        for (long long i = 0; i < n; ++i) assert_true(y[r * n + i] == 0.0f);
        assert_true(isinf(lse[r]) && lse[r] < 0);
        continue;
      }
      for (long long i = 0; i < n; ++i) sum += exp(0.5 * (x[r * n + i] - m));
      for (long long i = 0; i < n; ++i)
        check_close(y[r * n + i], exp(0.5 * (x[r * n + i] - m)) / sum, 4e-6, "row softmax", r, (int)i);
      check_close(lse[r], 0.5 * m + log(sum), 4e-6, "row lse", r, 0);
    }
    for (long long i = 0; i < n; ++i) assert_true(y[2 * n + i] == 0.0f); /* fully masked: zeros */
    assert_true(isinf(lse[2]) && lse[2] < 0);
    for (long long i = 0; i < n; ++i) assert_true(isnan(y[3 * n + i])); /* NaN: its row only */
    assert_true(isnan(lse[3]));
    free(x);
    free(y);
    free(lse);
  }
}

int main(void) {
  setenv("KBD_CPU_QUIET", "1", 1);
  setenv("KBD_CPU_THREADS", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wgmma_acc_64), cmocka_unit_test(test_wgmma_acc_128), cmocka_unit_test(test_tmem_acc_128),
      cmocka_unit_test(test_mma_c_32),     cmocka_unit_test(test_row_two_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
