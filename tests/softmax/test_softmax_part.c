/* kbd_softmax_update_lazy_part and kbd_softmax_sum_rows (kbd/softmax.h) on the CPU machine: the row sums kept per
 * lane and added across the lanes of a row once, at the end (FlashAttention-3's order).
 *
 * Each kernel runs NB blocks of the same scores through two states, one with kbd_softmax_update_lazy (the whole
 * row sum each block) and one with kbd_softmax_update_lazy_part, rescaling an output tile by each state's factors,
 * then finishes both (the part state after kbd_softmax_sum_rows). Layouts: WGMMA_ACC 64 rows (a row in 4 lanes),
 * MMA_C 32 rows (4 lanes), ROW 32 x 32 per warp (8 lanes), TMEM_ACC 128 rows (a row in one lane: the parts are
 * the sums). Checked, under the default schedule and a seed:
 *  - p, the running max and the rescale of o are the same bits in both states (only the sums differ);
 *  - before kbd_softmax_sum_rows, each lane's part of a row is its own share: the parts of a row add up to the
 *    full state's sum (4e-6 relative), and where a row spans lanes no part is the whole sum;
 *  - after it, the finished o and lse equal the full state's within 2^-20 relative, and a double reference of
 *    lse within 4e-6 and of o / sum within 1e-5 (o carries up to 5 rescales of ex2.approx, ~2^-22 each, across
 *    factors down to e^-42; the full state's o is off the reference by the same);
 *  - the mistake the call is for: the same kernel without kbd_softmax_sum_rows gives a finished o that the checks
 *    above reject (o off by the number of lanes of a row), for every layout whose rows span lanes.
 * Scores: the rows climb by 12, 3 or 0 log2 units per block (the lazy max moves every block, every third block,
 * never), row 3 fully masked, row 5 masked in blocks 0-1, every 7th position masked. */
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
#define OC 32 /* output columns (a ROW o must have the scores' shape) */
#define NB 6  /* blocks */
#define MAXR 128
#define MAXT 128 /* threads of the largest scope */
#define MAXS 8   /* row slots per thread, at most */

typedef struct {
  const float *s;  /* [NB][R][SC] */
  float *o;        /* [2][R][OC]: finished o of the full state, then of the part state */
  float *lse;      /* [2][R] */
  float *p;        /* [2][R][SC]: the last block's p of each state */
  float *parts;    /* [MAXT][MAXS]: each lane's part sums before kbd_softmax_sum_rows, by (thread, slot) */
  int *part_row;   /* [MAXT][MAXS]: the row of that slot */
  float *full_sum; /* [MAXT][MAXS]: the full state's sum of that slot */
  int *same_scale; /* [1]: 0 once a rescale factor or max differed between the states */
  int skip_sum;    /* 1: leave out kbd_softmax_sum_rows (the mistake) */
  float scale;
} pt_params;

#define PT_KERNEL(name, L, R, S)                                                                                       \
  KBD_KERNEL(name, S, pt_params) {                                                                                     \
    KBD_TILE_L(f32, R, SC, S, L) s, pf, pp;                                                                            \
    KBD_TILE_L(f32, R, OC, S, L) of, op;                                                                               \
    KBD_SOFTMAX_STATE(s) stf;                                                                                          \
    KBD_SOFTMAX_STATE(s) stp;                                                                                          \
    kbd_softmax_init(stf);                                                                                             \
    kbd_softmax_init(stp);                                                                                             \
    kbd_fill(of, 1.0f);                                                                                                \
    kbd_fill(op, 1.0f);                                                                                                \
    for (int j = 0; j < NB; ++j) {                                                                                     \
      kbd_load2d(s, p.s + (long long)j * (R)*SC, R, SC, SC, 0, 0);                                                     \
      kbd_softmax_update_lazy(pf, stf, s, p.scale, KBD_SOFTMAX_SLACK);                                                 \
      kbd_softmax_update_lazy_part(pp, stp, s, p.scale, KBD_SOFTMAX_SLACK);                                            \
      KBD_FOR_LANES(lane) {                                                                                            \
        for (int k = 0; k < KBD_VEC_SLOTS(stf.row_sum); ++k)                                                           \
          if (KBD_VEC_AT(stf.row_scale, lane, k) != KBD_VEC_AT(stp.row_scale, lane, k) ||                              \
              KBD_VEC_AT(stf.row_max, lane, k) != KBD_VEC_AT(stp.row_max, lane, k))                                    \
            kbd_st_global(&p.same_scale[0], 0);                                                                        \
      }                                                                                                                \
      if (j > 0) {                                                                                                     \
        kbd_softmax_rescale(of, stf);                                                                                  \
        kbd_softmax_rescale(op, stp);                                                                                  \
      }                                                                                                                \
    }                                                                                                                  \
    KBD_FOR_LANES(lane) {                                                                                              \
      const int t = kbd_warp_id() * 32 + lane;                                                                         \
      for (int k = 0; k < KBD_VEC_SLOTS(stp.row_sum); ++k) {                                                           \
        kbd_st_global(&p.parts[t * MAXS + k], KBD_VEC_AT(stp.row_sum, lane, k));                                       \
        kbd_st_global(&p.full_sum[t * MAXS + k], KBD_VEC_AT(stf.row_sum, lane, k));                                    \
        kbd_st_global(&p.part_row[t * MAXS + k], KBD_VEC_INDEX(stp.row_sum, lane, k));                                 \
      }                                                                                                                \
    }                                                                                                                  \
    if (!p.skip_sum) kbd_softmax_sum_rows(stp);                                                                        \
    kbd_store2d(p.p, pf, R, SC, SC, 0, 0);                                                                             \
    kbd_store2d(p.p + (R)*SC, pp, R, SC, SC, 0, 0);                                                                    \
    KBD_ROWVEC(f32, s) lf;                                                                                             \
    KBD_ROWVEC(f32, s) lp;                                                                                             \
    kbd_softmax_finish(of, lf, stf, p.scale);                                                                          \
    kbd_softmax_finish(op, lp, stp, p.scale);                                                                          \
    kbd_store2d(p.o, of, R, OC, OC, 0, 0);                                                                             \
    kbd_store2d(p.o + (R)*OC, op, R, OC, OC, 0, 0);                                                                    \
    kbd_vec_store(p.lse, lf);                                                                                          \
    kbd_vec_store(p.lse + (R), lp);                                                                                    \
  }

PT_KERNEL(pt_wgmma64, KBD_LAYOUT_WGMMA_ACC, 64, KBD_WARPGROUP)
PT_KERNEL(pt_mmac32, KBD_LAYOUT_MMA_C, 32, KBD_WARP)
PT_KERNEL(pt_row32, KBD_LAYOUT_ROW, 32, KBD_WARP)
PT_KERNEL(pt_tmem128, KBD_LAYOUT_TMEM_ACC, 128, KBD_WARPGROUP)
typedef kbd_status (*pt_kernel)(kbd_launch_cfg, pt_params);

static float pt_score(int j, int r, int c, float sl2) {
  if (r == 3 || (r == 5 && j < 2) || (c + 3 * j + r) % 7 == 0) return -INFINITY;
  const unsigned h = (unsigned)(j * 7919 + r * 131 + c * 17) * 2654435761u;
  const float noise = ((float)(h >> 8) / 16777216.0f - 0.5f) * 0.5f;
  const int cls = r % 3;
  const float climb = cls == 0 ? 12.0f * (float)j : cls == 1 ? 3.0f * (float)j : 0.0f;
  return (climb + noise - 2.0f * (float)(c % 5)) / sl2;
}

static int pt_close(double got, double want, double tol) {
  if (isinf(want) || want == 0.0) return got == want;
  return fabs(got - want) <= tol * fabs(want);
}

/* Runs kernel k; returns the number of finished o / lse values of the part state that fail their checks (the
 * caller expects 0, or more than 0 for the mistake). Every other check fails the test at once. */
static int pt_run(pt_kernel k, int R, int threads, int lanes_per_row, int skip_sum, long seed) {
  const float scale = 0.37f, sl2 = scale * 1.4426950408889634f;
  float *s = malloc((size_t)NB * R * SC * sizeof *s), *o = malloc((size_t)2 * R * OC * sizeof *o);
  float *lse = malloc((size_t)2 * R * sizeof *lse), *pr = malloc((size_t)2 * R * SC * sizeof *pr);
  float *parts = malloc((size_t)MAXT * MAXS * sizeof *parts), *full = malloc((size_t)MAXT * MAXS * sizeof *full);
  int *prow = malloc((size_t)MAXT * MAXS * sizeof *prow), *same = malloc(sizeof *same);
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < SC; ++c)
        s[((size_t)j * R + r) * SC + c] = pt_score(j, r, c, sl2);
  for (int i = 0; i < MAXT * MAXS; ++i)
    prow[i] = -1;
  *same = 1;
  setenv("KBD_CPU_SEED", seed ? "11" : "0", 1);
  pt_params p = {s, o, lse, pr, parts, prow, full, same, skip_sum, scale};
  const kbd_status st = k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("launch: %s", st.msg);
  if (!*same) fail_msg("the part state's max or rescale differs from the full state's");
  if (memcmp(pr, pr + (size_t)R * SC, (size_t)R * SC * sizeof *pr) != 0) fail_msg("p differs between the states");
  /* the parts: per row, their sum against the full state's sum, and each a share when a row spans lanes */
  double psum[MAXR] = {0}, pmax[MAXR] = {0}, fsum[MAXR] = {0};
  int seen[MAXR] = {0};
  const int slots = MAXS;
  for (int t = 0; t < threads; ++t)
    for (int q = 0; q < slots; ++q) {
      const int r = prow[t * slots + q];
      if (r < 0) continue;
      if (r >= R) fail_msg("thread %d slot %d names row %d", t, q, r);
      psum[r] += parts[t * slots + q];
      pmax[r] = fmax(pmax[r], parts[t * slots + q]);
      fsum[r] = full[t * slots + q];
      seen[r] += 1;
    }
  for (int r = 0; r < R; ++r) {
    if (seen[r] != lanes_per_row) fail_msg("row %d is held by %d lane slots, want %d", r, seen[r], lanes_per_row);
    if (!pt_close(psum[r], fsum[r], 4e-6))
      fail_msg("row %d: the lanes' parts add up to %.9g, the full sum is %.9g", r, psum[r], fsum[r]);
    if (lanes_per_row > 1 && fsum[r] > 0.0 && !(pmax[r] < 0.99 * fsum[r]))
      fail_msg("row %d: a lane's part (%.9g) is the whole sum (%.9g): the sums were added per block", r, pmax[r],
               fsum[r]);
  }
  /* the finished values: against the full state, and against a double reference of o / sum and lse */
  int bad = 0;
  for (int r = 0; r < R; ++r) {
    double m0 = -INFINITY, ml = -INFINITY, sum = 0.0;
    for (int c = 0; c < SC; ++c)
      m0 = fmax(m0, (double)s[(size_t)r * SC + c]);
    for (int j = 0; j < NB; ++j)
      for (int c = 0; c < SC; ++c)
        ml = fmax(ml, (double)s[((size_t)j * R + r) * SC + c]);
    const double mz = isinf(ml) ? 0.0 : ml;
    for (int j = 0; j < NB; ++j)
      for (int c = 0; c < SC; ++c)
        sum += exp(scale * ((double)s[((size_t)j * R + r) * SC + c] - mz));
    const double want_lse = sum == 0.0 ? -INFINITY : scale * mz + log(sum);
    /* o started at 1 at block 0's max m0 and was carried to the last kept max, where the sum is taken: o / sum =
     * exp(scale m0) / sum_k exp(scale s_k) whatever the kept maxima were (0 when block 0 had no finite score) */
    const double want_o = sum == 0.0 || isinf(m0) ? 0.0 : exp(scale * m0 - want_lse);
    if (!pt_close(lse[R + r], lse[r], ldexp(1.0, -20)) || !pt_close(lse[R + r], want_lse, 4e-6)) ++bad;
    for (int c = 0; c < OC; ++c) {
      const double got = o[(size_t)(R + r) * OC + c];
      if (!pt_close(got, o[(size_t)r * OC + c], ldexp(1.0, -20)) || !pt_close(got, want_o, 1e-5)) ++bad;
    }
  }
  free(s), free(o), free(lse), free(pr), free(parts), free(full), free(prow), free(same);
  return bad;
}

/* layout, rows, threads, lane slots per row (the lanes that hold part of a row) */
static void pt_case(pt_kernel k, int R, int threads, int lanes_per_row) {
  for (long seed = 0; seed < 2; ++seed) {
    const int bad = pt_run(k, R, threads, lanes_per_row, 0, seed);
    if (bad) fail_msg("%d finished values of the part state are off", bad);
  }
  /* the mistake: no kbd_softmax_sum_rows. With a row in one lane the parts are the sums, and nothing is wrong */
  const int bad = pt_run(k, R, threads, lanes_per_row, 1, 0);
  if (lanes_per_row > 1 && bad == 0) fail_msg("without kbd_softmax_sum_rows the checks found nothing wrong");
  if (lanes_per_row == 1 && bad != 0) fail_msg("a row in one lane: kbd_softmax_sum_rows changed %d values", bad);
}

static void test_wgmma_acc_64(void **state) {
  (void)state;
  pt_case(pt_wgmma64, 64, 128, 4);
}
static void test_mma_c_32(void **state) {
  (void)state;
  pt_case(pt_mmac32, 32, 32, 4);
}
static void test_row_warp_32(void **state) {
  (void)state;
  pt_case(pt_row32, 32, 32, 8);
}
static void test_tmem_acc_128(void **state) {
  (void)state;
  pt_case(pt_tmem128, 128, 128, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wgmma_acc_64),
      cmocka_unit_test(test_mma_c_32),
      cmocka_unit_test(test_row_warp_32),
      cmocka_unit_test(test_tmem_acc_128),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
