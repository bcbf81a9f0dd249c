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

/* ---- the lazy update (kbd_softmax_update_lazy) and the warp vote (kbd_softmax_warp_rescales) ------------------- */

typedef struct {
  const float *s; /* [NB][R][SC] */
  float *o;       /* [NB][R][OC]: o after block j's rescale (j >= 1), [0] replaced by the finished o */
  float *p;       /* [NB][R][SC]: every block's p */
  float *lse;     /* [R] */
  int *votes;     /* [NB][warps]: kbd_softmax_warp_rescales after block j's update */
  float scale;
} lz_params;

#define LZ_KERNEL(name, L, R, S)                                                                                       \
  KBD_KERNEL(name, S, lz_params) {                                                                                     \
    KBD_TILE_L(f32, R, SC, S, L) s, pr;                                                                                \
    KBD_TILE_L(f32, R, OC, S, L) o;                                                                                    \
    KBD_SOFTMAX_STATE(s) st;                                                                                           \
    kbd_softmax_init(st);                                                                                              \
    kbd_fill(o, 1.0f);                                                                                                 \
    for (int j = 0; j < NB; ++j) {                                                                                     \
      kbd_load2d(s, p.s + (long long)j * (R) * SC, R, SC, SC, 0, 0);                                                   \
      kbd_softmax_update_lazy(pr, st, s, p.scale, KBD_SOFTMAX_SLACK);                                                  \
      const int v = kbd_softmax_warp_rescales(st);                                                                     \
      KBD_FOR_LANES(lane) {                                                                                            \
        if (lane == 0) kbd_st_global(&p.votes[j * ((S) / 32) + kbd_warp_id()], v);                                    \
      }                                                                                                                \
      kbd_store2d(p.p + (long long)j * (R) * SC, pr, R, SC, SC, 0, 0);                                                 \
      if (j > 0) {                                                                                                     \
        kbd_softmax_rescale(o, st);                                                                                    \
        kbd_store2d(p.o + (long long)j * (R) * OC, o, R, OC, OC, 0, 0);                                                \
      }                                                                                                                \
    }                                                                                                                  \
    KBD_ROWVEC(f32, s) lse;                                                                                            \
    kbd_softmax_finish(o, lse, st, p.scale);                                                                           \
    kbd_store2d(p.o, o, R, OC, OC, 0, 0);                                                                              \
    kbd_vec_store(p.lse, lse);                                                                                         \
  }

LZ_KERNEL(lz_wgmma64, KBD_LAYOUT_WGMMA_ACC, 64, KBD_WARPGROUP)
LZ_KERNEL(lz_tmem128, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP)
LZ_KERNEL(lz_mmac32, KBD_LAYOUT_MMA_C, 32, KBD_WARP)
typedef kbd_status (*lz_kernel)(kbd_launch_cfg, lz_params);

/* Scores in units of the exponent (scale log2 e (s - m), "log2 units") around a climb per row class, with noise of
 * +-0.25 log2 units: class (r / 16) % 4 = 0 climbs 12 per block (past the slack of 8: its max moves every block),
 * 1 climbs 3 per block (its max moves every third block, when the climb since the kept max reaches 9), 2 and 3 stay
 * (noise only: the max keeps still after block 0). Row 3 is fully masked, row 5 masked in blocks 0-1 (its first
 * finite max comes at block 2). No block max lies within 0.5 of the threshold, so float and double agree on every
 * move. */
static float lz_score(int j, int r, int c, float sl2) {
  if (r == 3 || (r == 5 && j < 2)) return -INFINITY;
  const unsigned h = (unsigned)(j * 7919 + r * 131 + c * 17) * 2654435761u;
  const float noise = ((float)(h >> 8) / 16777216.0f - 0.5f) * 0.5f;
  const int cls = (r / 16) % 4;
  const float climb = cls == 0 ? 12.0f * (float)j : cls == 1 ? 3.0f * (float)j : 0.0f;
  return (climb + noise - 2.0f * (float)(c % 3)) / sl2;
}

static void run_lazy(lz_kernel k, int R, int threads, long seed) {
  const int warps = threads / 32;
  float *s = malloc((size_t)NB * R * SC * sizeof *s), *o = malloc((size_t)NB * R * OC * sizeof *o);
  float *pr = malloc((size_t)NB * R * SC * sizeof *pr), *lse = malloc((size_t)R * sizeof *lse);
  int *votes = malloc((size_t)NB * (size_t)warps * sizeof *votes);
  const float scale = 0.37f, sl2 = scale * 1.4426950408889634f;
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < SC; ++c) s[((size_t)j * R + r) * SC + c] = lz_score(j, r, c, sl2);
  setenv("KBD_CPU_SEED", seed ? "5" : "0", 1);
  lz_params p = {s, o, pr, lse, votes, scale};
  kbd_status st = k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("launch: %s", st.msg);
  int moved[NB][128];
  for (int r = 0; r < R; ++r) {
    /* the lazy running max, from its definition: move to the block's max b only when sl2 (b - m) > 8 */
    double m[NB], run = -INFINITY, eager = -INFINITY;
    for (int j = 0; j < NB; ++j) {
      double b = -INFINITY;
      for (int c = 0; c < SC; ++c) b = fmax(b, (double)s[((size_t)j * R + r) * SC + c]);
      eager = fmax(eager, b);
      moved[j][r] = !isinf(b) && (isinf(run) || (double)sl2 * (b - run) > 8.0);
      if (moved[j][r]) run = b;
      m[j] = run;
    }
    const int cls = (r / 16) % 4;
    if (r != 3 && r != 5 && (moved[1][r] != (cls == 0) || moved[3][r] != (cls <= 1)))
      fail_msg("row %d: the scores do not move the max as lz_score says (test data)", r);
    const double ml = isinf(m[NB - 1]) ? 0.0 : m[NB - 1], me = isinf(eager) ? 0.0 : eager;
    double sum = 0.0, sum_e = 0.0;
    for (int j = 0; j < NB; ++j)
      for (int c = 0; c < SC; ++c) {
        const double x = (double)s[((size_t)j * R + r) * SC + c];
        sum += exp(scale * (x - ml));
        sum_e += exp(scale * (x - me));
        /* p at the kept max: exp(scale (s - m_j)) <= 2^8 */
        const double want = isinf(m[j]) ? 0.0 : exp(scale * (x - m[j]));
        const float got = pr[((size_t)j * R + r) * SC + c];
        check_close(got, want, 4e-6, "lazy p", r, c);
        if (!(got <= 256.0f)) fail_msg("p[%d][%d] of block %d = %.9g, above 2^slack", r, c, j, got);
      }
    for (int j = 1; j < NB; ++j)
      for (int c = 0; c < OC; ++c) {
        const float got = o[((size_t)j * R + r) * OC + c];
        const double want = isinf(m[j]) ? 1.0 : isinf(m[0]) ? 0.0 : exp(scale * (m[0] - m[j]));
        check_close(got, want, 4e-6, "lazily rescaled o", r, c);
        /* a block that keeps the max rescales by exactly 1: o keeps its bits */
        const float before = j == 1 ? 1.0f : o[((size_t)(j - 1) * R + r) * OC + c];
        if (!moved[j][r] && got != before)
          fail_msg("row %d, block %d keeps its max but o changed: %.9g -> %.9g", r, j, before, got);
      }
    const double last = isinf(m[NB - 1]) ? 1.0 : isinf(m[0]) ? 0.0 : exp(scale * (m[0] - m[NB - 1]));
    for (int c = 0; c < OC; ++c)
      check_close(o[(size_t)r * OC + c], sum == 0.0 ? 0.0 : last / sum, 4e-6, "finished o", r, c);
    /* the lse does not depend on the max the sums were kept at: the eager definition's */
    check_close(lse[r], sum_e == 0.0 ? -INFINITY : scale * me + log(sum_e), 4e-6, "lse", r, 0);
  }
  /* the vote: any row of the warp whose factor is not 1 (a moved max; a first finite max from -inf) */
  const int rows_per_warp = R / warps;
  int both[2] = {0, 0};
  for (int j = 0; j < NB; ++j)
    for (int w = 0; w < warps; ++w) {
      int want = 0;
      for (int r = w * rows_per_warp; r < (w + 1) * rows_per_warp; ++r) want |= moved[j][r];
      if (votes[j * warps + w] != want)
        fail_msg("block %d, warp %d: kbd_softmax_warp_rescales = %d, want %d", j, w, votes[j * warps + w], want);
      both[want] = 1;
    }
  if (warps > 1 && !(both[0] && both[1])) fail_msg("the data gave every warp the same vote");
  free(s);
  free(o);
  free(pr);
  free(lse);
  free(votes);
}

/* TMEM_ACC (warp w: rows 32w..), WGMMA_ACC 64 (warp w: rows 16w..) and MMA_C (one warp, 32 rows): each warp's vote,
 * the lazy max, p and the exact 1 of a kept max, the finished o and lse; default schedule and a seed. */
static void test_lazy_tmem_128(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_lazy(lz_tmem128, 128, 128, seed);
}
static void test_lazy_wgmma_64(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_lazy(lz_wgmma64, 64, 128, seed);
}
static void test_lazy_mma_c_32(void **state) {
  (void)state;
  for (long seed = 0; seed < 2; ++seed) run_lazy(lz_mmac32, 32, 32, seed);
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
      cmocka_unit_test(test_mma_c_32),     cmocka_unit_test(test_row_two_pass), cmocka_unit_test(test_lazy_tmem_128),
      cmocka_unit_test(test_lazy_wgmma_64), cmocka_unit_test(test_lazy_mma_c_32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
