/* kbd/softmax.h - online softmax over the rows of register tiles: the running max and sum of flash attention.
 *
 *   KBD_SOFTMAX_STATE(s) st;              per row of tiles shaped like s: running max, running sum, last rescale
 *   kbd_softmax_init(st)                  max = -inf, sum = 0, rescale = 1
 *   kbd_softmax_update(p, st, s, scale)   one more block of scores s (f32): with m = the new running max,
 *                                         p = exp(scale * (s - m)) (f32, may be s itself), the sum rescaled and
 *                                         p's row sums added; st's rescale = exp(scale * (m_old - m))
 *   kbd_softmax_update_lazy(p, st, s, scale, slack)
 *                                         the same, but a row's running max moves only when the block's max exceeds it
 *                                         by more than 2^slack in p (scale log2e (b - m) > slack; slack: an integer
 *                                         constant 0..15, KBD_SOFTMAX_SLACK = 8 as FlashAttention-4): otherwise the
 *                                         row keeps its max, p <= 2^slack, and its rescale is exactly 1
 *   kbd_softmax_update_lazy_part(p, st, s, scale, slack)
 *                                         kbd_softmax_update_lazy with each thread's own part of the row sums: the
 *                                         sum of the row's elements it holds (rescaled as the full sum is), no
 *                                         shuffle for the sums (the max still takes its own). Rows within one warp
 *                                         (WGMMA_ACC, MMA_C, TMEM_ACC; ROW with a row in at most 32 lanes)
 *   kbd_softmax_sum_rows(st)              after the last _part update (every thread of the tile): the parts of
 *                                         each row added across its lanes, once; st is then what the full-sum
 *                                         updates leave (up to the order of the additions), for kbd_softmax_finish
 *   kbd_softmax_warp_rescales(st)         1 if any row this warp holds has a rescale other than 1 (a warp vote:
 *                                         every lane of the warp calls it; the same value in all 32)
 *   kbd_softmax_rescale(o, st)            o[r][c] *= rescale[r]: bring an accumulator of earlier blocks to m
 *   kbd_softmax_finish(o, lse, st, scale) o[r][c] /= sum[r]; lse[r] = scale * max[r] + ln(sum[r]) (a KBD_ROWVEC of s)
 *   kbd_softmax_apply(p, st, s, scale)    after the last update: p = exp(scale * (s - max)) / sum, the softmax of a
 *                                         block read again (two-pass softmax: statistics online, then the output)
 *   KBD_SOFTMAX_LOG2E                     log2(e): exp(x) = exp2(x * log2(e))
 *
 * The algebra (docs/attention.md): after blocks 1..j, max = m_j and sum = sum_k exp(scale (s_k - m_j)); a new
 * block with a larger max multiplies everything so far by exp(scale (m_{j-1} - m_j)) - the sum here, the
 * output accumulator with kbd_softmax_rescale - and the final division by the sum gives the softmax of all
 * blocks, read once. Each element costs one FFMA and one EX2: p = exp2(s * c - m * c), c = scale log2 e, as fast
 * attention kernels compute it, while every row of the warp has |m * c| < 256 (the error bound is at
 * KBD_SOFTMAX_FMA_MAX below); a warp with a larger shift takes the exact (s - m) * c (an FADD more), so huge scores
 * never overflow. The rescale is always exact: an unchanged max rescales by exactly 1.
 *
 * Tiles: s and p are f32 tiles of one shape in any layout a row reduction takes (ROW, WGMMA_ACC, MMA_C,
 * TMEM_ACC: kbd/reduce_tile.h); the row max and sum are kbd_reduce_rows, so their cost and barriers are its
 * (an accumulator layout: 2 shuffles per row slot, or none for TMEM_ACC; a CTA-wide ROW tile: a CTA
 * reduction). o may have other columns than s when its layout places rows independently of the columns
 * (WGMMA_ACC, MMA_C, TMEM_ACC: the scores block and the output accumulator of attention); a ROW o must have
 * s's shape. Everything else is a compile-time error naming the rule.
 *
 * Lazy rescaling (FlashAttention-4): o's rescale is a read-modify-write of the whole accumulator per block, and
 * after the first few blocks a row's max rarely grows by much. With kbd_softmax_update_lazy the sum and o are kept
 * at a stale max as long as every p stays <= 2^slack: the algebra is the same (the final o / sum and lse use the max
 * the sums were taken at), p is exact to its rounding, and a warp whose rows all kept their max can skip the
 * rescale (kbd_softmax_warp_rescales). p up to 2^15 still fits f16 (< 65504), hence the bound on slack.
 *
 * Masking and special values: a score of -inf (a masked position) gets p = 0. A row whose scores so far are
 * all -inf has max -inf and sum 0 and is computed as if its max were 0, so nothing becomes NaN; at the end
 * such a row (fully masked) has o = 0 and lse = -inf. A NaN score makes its row NaN, and so does +inf (inf -
 * inf). Large finite scores are safe: every exponent is <= 0, the max's exactly 0.
 */
#ifndef KBD_SOFTMAX_H
#define KBD_SOFTMAX_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA

#include <math.h>

#include "hw.h"
#include "reduce_tile.h"

#define KBD_SOFTMAX_LOG2E 1.4426950408889634f
#define KBD_SOFTMAX_SLACK 8 /* log2 of the growth of p a lazy update allows before it moves the max (FA4's 8) */

#define KBD_SOFTMAX_STATE(s)                                                                                           \
  struct {                                                                                                             \
    KBD_ROWVEC(f32, s) row_max;                                                                                        \
    KBD_ROWVEC(f32, s) row_sum;                                                                                        \
    KBD_ROWVEC(f32, s) row_scale;                                                                                      \
  }

#define KBD__SM_F32(t, name)                                                                                           \
  KBD_STATIC_ASSERT(KBD_DTYPE(t) == KBD_DT_f32, "kbd: " name ": the tile must be f32 (convert to bf16/f16 after)")
/* o's rows sit where s's rows sit: same rows, scope and layout, and for ROW tiles the same shape. */
#define KBD__SM_ROWS_MATCH(o, m, name)                                                                                 \
  KBD_STATIC_ASSERT(                                                                                                   \
      KBD__V_R(m) == KBD_ROWS(o) && KBD__V_S(m) == KBD_SCOPE(o) && KBD__V_L(m) == KBD_LAYOUT(o) &&                     \
          (KBD_LAYOUT(o) != KBD_LAYOUT_ROW || (KBD__V_C(m) == KBD_COLS(o) && KBD__V_VEC(m) == KBD__RT_TVEC(o))),       \
      "kbd: " name ": the tile's rows must be held like the scores' (same rows, scope and layout; "                    \
      "WGMMA_ACC, MMA_C and TMEM_ACC tiles may have other columns, ROW tiles must match in shape)")

/* Per-slot math, shared by the GPU and the CPU path (KBD_HD: one definition). A row with no finite max yet
 * is scaled as if its max were 0, so -inf - (-inf) never appears. */
KBD_HD float kbd_softmax_shift_(float m) { return m == -INFINITY ? 0.0f : m; }
/* The exponent of an element: (s - m) * c with c = scale log2e is exact for the row's max (0, however large the
 * scores), but costs an FADD and an FMUL per element; FlashAttention's s * c - m * c is one FFMA, whose error is
 * d = m * c - rn(m * c), the same for every element of the row, so every p of the row is scaled by 2^d: a factor
 * the final o / sum cancels, except that blocks computed at different maxima mix 2^d_old and 2^d_new. kbd takes the
 * FFMA only while every row of the warp has |m * c| < KBD_SOFTMAX_FMA_MAX = 2^8: then |d| <= 2^-16 and the mixing
 * error is below 2^-16 relative per change of the max, far under P's 16-bit rounding (2^-9). A warp with a larger
 * shift (scores past ~256 / (scale log2e), or +-inf) takes the exact form, so huge scores stay exact and never
 * overflow. The rescale of o and the sum keeps the exact form always: an unchanged max rescales by exactly 1. */
#define KBD_SOFTMAX_FMA_MAX 256.0f
/* 2^x is ex2.approx.ftz (kbd_hw_ex2_ftz_f32): exp2f's subnormal fix-up cost more instructions per element than the
 * exponential; a probability below 2^-126 becomes 0 (next to the row's max term, 1, it is far below f32's epsilon,
 * and P is rounded to 16 bits anyway). */
KBD_HD float kbd_softmax_exp_(float s, float shift, float sl2) { return kbd_hw_ex2_ftz_f32((s - shift) * sl2); }
/* the fast form: msl2 = shift * sl2 of the row, |msl2| < KBD_SOFTMAX_FMA_MAX */
KBD_HD float kbd_softmax_exp_fma_(float s, float sl2, float msl2) { return kbd_hw_ex2_ftz_f32(fmaf(s, sl2, -msl2)); }
KBD_HD float kbd_softmax_rescale_of_(float m_old, float m_new, float sl2) {
  return m_new == -INFINITY ? 1.0f : kbd_hw_ex2_ftz_f32((m_old - m_new) * sl2);
}
/* The lazy running max: the block's max b only when p would exceed 2^slack at the old one. -inf (no finite max
 * yet) always moves to a finite b (the difference is +inf); a NaN difference (both -inf, or an all-NaN block)
 * keeps the old max. */
KBD_HD float kbd_softmax_lazy_max_(float m_old, float b, float sl2, float slack) {
  return (b - m_old) * sl2 > slack ? b : m_old;
}
KBD_HD float kbd_softmax_lse_(float m, float sum, float scale) {
  return sum == 0.0f ? -INFINITY : (m == -INFINITY ? 0.0f : m * scale) + logf(sum);
}

#define kbd_softmax_init(st)                                                                                           \
  do {                                                                                                                 \
    for (int kbd_sil_ = 0; kbd_sil_ < KBD_LANES_HELD; ++kbd_sil_) {                                                    \
      KBD_UNROLL for (int kbd_sik_ = 0; kbd_sik_ < KBD_VEC_SLOTS((st).row_max); ++kbd_sik_) {                          \
        (st).row_max.v[kbd_sil_][kbd_sik_] = -INFINITY;                                                                \
        (st).row_sum.v[kbd_sil_][kbd_sik_] = 0.0f;                                                                     \
        (st).row_scale.v[kbd_sil_][kbd_sik_] = 1.0f;                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* lazy: a literal 0 or 1 (0 compiles to the eager update exactly); slack: the lazy update's integer constant */
/* The part of an update both forms share: the checks, c = scale log2 e (kbd_sl2_), the block's row max (kbd_sbm_),
 * each row's new max, rescale, shift (kbd_sms_) and FFMA term (kbd_smc_), whether every row of the lane allows the
 * FFMA form (kbd_sfa_) and the row plan (kbd_sup_): declarations in the caller's block. */
#define KBD__SM_STATS(p, st, s, scale, lazy, slack, name)                                                              \
  KBD__SM_F32(s, name);                                                                                                \
  KBD__SM_F32(p, name);                                                                                                \
  KBD__SAME_SHAPE(p, s);                                                                                               \
  KBD__RT_MATCH((st).row_max, s, KBD__RT_ROWS);                                                                        \
  const float kbd_sl2_ = (float)(scale)*KBD_SOFTMAX_LOG2E;                                                             \
  KBD_ROWVEC(f32, s) kbd_sbm_; /* this block's row max */                                                              \
  kbd_reduce_rows(kbd_sbm_, s, KBD_RED_MAX);                                                                           \
  float kbd_sms_[KBD_LANES_HELD][KBD_VEC_SLOTS(kbd_sbm_)];                                                             \
  float kbd_smc_[KBD_LANES_HELD][KBD_VEC_SLOTS(kbd_sbm_)]; /* shift * sl2: the FFMA form's row term */                 \
  int kbd_sfa_[KBD_LANES_HELD];                            /* every row of the lane allows the FFMA form */            \
  for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                      \
    kbd_sfa_[kbd_sul_] = 1;                                                                                            \
    KBD_UNROLL for (int kbd_suk_ = 0; kbd_suk_ < KBD_VEC_SLOTS(kbd_sbm_); ++kbd_suk_) {                                \
      const float kbd_so_ = (st).row_max.v[kbd_sul_][kbd_suk_];                                                        \
      const float kbd_sn_ =                                                                                            \
          (lazy) ? kbd_softmax_lazy_max_(kbd_so_, kbd_sbm_.v[kbd_sul_][kbd_suk_], kbd_sl2_, (float)(slack))            \
                 : kbd_fmax_ptx(kbd_so_, kbd_sbm_.v[kbd_sul_][kbd_suk_]);                                              \
      (st).row_scale.v[kbd_sul_][kbd_suk_] = kbd_softmax_rescale_of_(kbd_so_, kbd_sn_, kbd_sl2_);                      \
      (st).row_max.v[kbd_sul_][kbd_suk_] = kbd_sn_;                                                                    \
      kbd_sms_[kbd_sul_][kbd_suk_] = kbd_softmax_shift_(kbd_sn_);                                                      \
      kbd_smc_[kbd_sul_][kbd_suk_] = kbd_sms_[kbd_sul_][kbd_suk_] * kbd_sl2_;                                          \
      if (!(fabsf(kbd_smc_[kbd_sul_][kbd_suk_]) < KBD_SOFTMAX_FMA_MAX)) kbd_sfa_[kbd_sul_] = 0;                        \
    }                                                                                                                  \
  }                                                                                                                    \
  const kbd_rt_plan kbd_sup_ = KBD__T_PLAN(s, KBD__RT_ROWS);
/* sum = sum * rescale + this block's row sums (kbd_sbs_) */
#define KBD__SM_SUM_UPDATE(st)                                                                                         \
  for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                      \
    KBD_UNROLL for (int kbd_suk_ = 0; kbd_suk_ < KBD_VEC_SLOTS(kbd_sbm_); ++kbd_suk_)(st)                              \
        .row_sum.v[kbd_sul_][kbd_suk_] = fmaf((st).row_sum.v[kbd_sul_][kbd_suk_],                                      \
                                              (st).row_scale.v[kbd_sul_][kbd_suk_], kbd_sbs_.v[kbd_sul_][kbd_suk_]);   \
  }

/* Each thread's row sums of p: step (1) of kbd_reduce_rows (its pairwise tree over a slot's elements, in element
 * order) without the butterfly over the lanes of a row, which kbd_softmax_sum_rows runs once at the end. */
#define KBD__SM_ROWSUM_OWN(sum, p)                                                                                     \
  do {                                                                                                                 \
    kbd_rt_plan kbd_sop_ = KBD__T_PLAN(p, KBD__RT_ROWS);                                                               \
    kbd_sop_.hi = kbd_sop_.lo; /* no lanes to combine: the thread's own elements */                                    \
    uint32_t kbd_soa_[KBD_VEC_SLOTS(sum)][KBD_LANES_HELD];                                                             \
    uint32_t kbd_sot_[KBD__POS(KBD_NPT(p) / KBD_VEC_SLOTS(sum))][KBD_LANES_HELD];                                      \
    kbd_rt_reduce_(kbd_sop_, (p).v, KBD_DTYPE(p), KBD_RED_SUM, &kbd_soa_[0][0], &kbd_sot_[0][0],                       \
                   (int)(sizeof kbd_sot_ / sizeof kbd_sot_[0]), (uint32_t *)0, KBD_BLOCK_THREADS, __FILE__, __LINE__); \
    KBD__RT_OUT(sum, kbd_soa_);                                                                                        \
  } while (0)
/* part: 1 keeps the per-thread sums (kbd_softmax_update_lazy_part), 0 reduces each row whole */
#define KBD__SM_UPDATE_P(p, st, s, scale, lazy, slack, part, name)                                                     \
  do {                                                                                                                 \
    KBD__SM_STATS(p, st, s, scale, lazy, slack, name);                                                                 \
    if (kbd_hw_vote_all(kbd_sfa_, KBD_SITE)) { /* the warp's choice: one branch, the same for all its lanes */         \
      for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                  \
        KBD_UNROLL for (int kbd_sui_ = 0; kbd_sui_ < KBD_NPT(s); ++kbd_sui_)(p).v[kbd_sul_][kbd_sui_] =                \
            kbd_softmax_exp_fma_((s).v[kbd_sul_][kbd_sui_], kbd_sl2_,                                                  \
                                 kbd_smc_[kbd_sul_][kbd_rt_slot(kbd_sup_, kbd_sui_)]);                                 \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                  \
        KBD_UNROLL for (int kbd_sui_ = 0; kbd_sui_ < KBD_NPT(s); ++kbd_sui_)(p).v[kbd_sul_][kbd_sui_] =                \
            kbd_softmax_exp_((s).v[kbd_sul_][kbd_sui_], kbd_sms_[kbd_sul_][kbd_rt_slot(kbd_sup_, kbd_sui_)],           \
                             kbd_sl2_);                                                                                \
      }                                                                                                                \
    }                                                                                                                  \
    KBD_ROWVEC(f32, s) kbd_sbs_; /* this block's row sums */                                                           \
    if (part)                                                                                                          \
      KBD__SM_ROWSUM_OWN(kbd_sbs_, p);                                                                                 \
    else                                                                                                               \
      kbd_reduce_rows(kbd_sbs_, p, KBD_RED_SUM);                                                                       \
    KBD__SM_SUM_UPDATE(st);                                                                                            \
  } while (0)
#define KBD__SM_UPDATE(p, st, s, scale, lazy, slack, name) KBD__SM_UPDATE_P(p, st, s, scale, lazy, slack, 0, name)

#define kbd_softmax_update(p, st, s, scale) KBD__SM_UPDATE(p, st, s, scale, 0, 0, "kbd_softmax_update")
#define kbd_softmax_update_lazy(p, st, s, scale, slack)                                                                \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT((slack) >= 0 && (slack) <= 15,                                                                   \
                      "kbd: kbd_softmax_update_lazy: slack is an integer constant in 0..15 (p reaches 2^slack, and "   \
                      "f16 holds less than 2^16)");                                                                    \
    KBD__SM_UPDATE(p, st, s, scale, 1, slack, "kbd_softmax_update_lazy");                                              \
  } while (0)

/* FlashAttention-3's row sums: only kbd_softmax_finish reads the sum, and the rescale factor of a row is the same in
 * every lane that holds part of it, so each lane may keep its own part and the parts be added once at the end: per
 * block that drops the sums' butterfly (at head_dim 128 on sm_90a: 4 SHFL, 4 FADD and the warp's convergence
 * test), while the max, which every element needs, keeps its shuffles. */
#define KBD__SM_PART_RULE                                                                                              \
  "kbd_softmax_update_lazy_part: the rows of s must lie within one warp (WGMMA_ACC, MMA_C, TMEM_ACC, or ROW rows "     \
  "of at most 32 lanes): the parts are added across lanes by shuffles"
#define kbd_softmax_update_lazy_part(p, st, s, scale, slack)                                                           \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT((slack) >= 0 && (slack) <= 15,                                                                   \
                      "kbd: kbd_softmax_update_lazy_part: slack is an integer constant in 0..15 (p reaches 2^slack, "  \
                      "and f16 holds less than 2^16)");                                                                \
    KBD_STATIC_ASSERT(KBD__RT_XN(KBD_LAYOUT(s), KBD_COLS(s), KBD_SCOPE(s), KBD__RT_TVEC(s), KBD__RT_ROWS) <= 1,       \
                      "kbd: " KBD__SM_PART_RULE);                                                                      \
    KBD__SM_UPDATE_P(p, st, s, scale, 1, slack, 1, "kbd_softmax_update_lazy_part");                                    \
  } while (0)
/* sum[l][k] += the same slot of the other lanes of its row: the butterfly of kbd_reduce_rows' step (2) */
KBD_TILE_FN void kbd_softmax_sum_rows_(float *sum, int slots, kbd_rt_plan p, KBD_SITE_PARAMS) {
  KBD_UNROLL for (int b = p.lo; b < p.hi; ++b) {
    KBD_UNROLL for (int k = 0; k < slots; ++k) {
      uint32_t x[KBD_LANES_HELD], y[KBD_LANES_HELD];
      for (int l = 0; l < KBD_LANES_HELD; ++l) x[l] = kbd_cvt_f32_bits(sum[l * slots + k]);
      kbd_hw_shfl_b32(KBD_SHFL_BFLY, y, x, 1u << b, KBD_SHFL_C, KBD_SITE_ARGS);
      /* partners add a + b and b + a: the same bits, so every lane of a row ends with the same sum */
      for (int l = 0; l < KBD_LANES_HELD; ++l) sum[l * slots + k] += kbd_cvt_bits_f32(y[l]);
    }
  }
}
#define kbd_softmax_sum_rows(st)                                                                                       \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__RT_XN(KBD__V_L((st).row_sum), KBD__V_C((st).row_sum), KBD__V_S((st).row_sum),              \
                                 KBD__V_VEC((st).row_sum), KBD__RT_ROWS) <= 1,                                         \
                      "kbd: kbd_softmax_sum_rows: the rows must lie within one warp (as for "                          \
                      "kbd_softmax_update_lazy_part)");                                                                \
    kbd_softmax_sum_rows_(&(st).row_sum.v[0][0], KBD_VEC_SLOTS((st).row_sum), KBD__V_PLAN((st).row_sum), KBD_SITE);    \
  } while (0)

/* Any lane's slot with a rescale other than 1: one vote.sync.all over the warp (the lanes' own slots). */
KBD_TILE_FN int kbd_softmax_warp_any_(const float *scale, int slots, KBD_SITE_PARAMS) {
  int keep[KBD_LANES_HELD];
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    keep[l] = 1;
    for (int k = 0; k < slots; ++k)
      if (scale[l * slots + k] != 1.0f) keep[l] = 0;
  }
  return !kbd_hw_vote_all(keep, KBD_SITE_ARGS);
}
#define kbd_softmax_warp_rescales(st)                                                                                  \
  kbd_softmax_warp_any_(&(st).row_scale.v[0][0], KBD_VEC_SLOTS((st).row_scale), KBD_SITE)

/* o[i] = o[i] * f(row slot), f read from row vector m (the state's rescale, or 1/sum at the end). */
#define KBD__SM_SCALE_ROWS(o, m, expr_of_k, name)                                                                      \
  do {                                                                                                                 \
    KBD__SM_F32(o, name);                                                                                              \
    KBD__SM_ROWS_MATCH(o, m, name);                                                                                    \
    const kbd_rt_plan kbd_srp_ = KBD__T_PLAN(o, KBD__RT_ROWS);                                                         \
    for (int kbd_srl_ = 0; kbd_srl_ < KBD_LANES_HELD; ++kbd_srl_) {                                                    \
      KBD_UNROLL for (int kbd_sri_ = 0; kbd_sri_ < KBD_NPT(o); ++kbd_sri_) {                                           \
        const int kbd_k_ = kbd_rt_slot(kbd_srp_, kbd_sri_);                                                            \
        (o).v[kbd_srl_][kbd_sri_] *= (expr_of_k);                                                                      \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#define kbd_softmax_rescale(o, st)                                                                                     \
  KBD__SM_SCALE_ROWS(o, (st).row_scale, (st).row_scale.v[kbd_srl_][kbd_k_], "kbd_softmax_rescale")

#define kbd_softmax_finish(o, lse, st, scale)                                                                          \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__V_R(lse) == KBD__V_R((st).row_sum) && KBD__V_S(lse) == KBD__V_S((st).row_sum) &&            \
                          KBD__V_L(lse) == KBD__V_L((st).row_sum) && KBD__V_AX(lse) == KBD__RT_ROWS,                   \
                      "kbd: kbd_softmax_finish: lse must be a KBD_ROWVEC(f32, s) of the scores tile s");               \
    /* one reciprocal per row slot, then multiplies: a division per element is a MUFU.RCP + Newton sequence            \
     * with a slow-path call each */                                                                                   \
    float kbd_sfi_[KBD_LANES_HELD][KBD_VEC_SLOTS((st).row_sum)];                                                       \
    for (int kbd_sfl_ = 0; kbd_sfl_ < KBD_LANES_HELD; ++kbd_sfl_) {                                                    \
      KBD_UNROLL for (int kbd_sfk_ = 0; kbd_sfk_ < KBD_VEC_SLOTS((st).row_sum); ++kbd_sfk_) {                          \
        const float kbd_sfs_ = (st).row_sum.v[kbd_sfl_][kbd_sfk_];                                                     \
        kbd_sfi_[kbd_sfl_][kbd_sfk_] = kbd_sfs_ == 0.0f ? 0.0f : 1.0f / kbd_sfs_;                                      \
      }                                                                                                                \
    }                                                                                                                  \
    KBD__SM_SCALE_ROWS(o, (st).row_sum, kbd_sfi_[kbd_srl_][kbd_k_], "kbd_softmax_finish");                             \
    for (int kbd_sfl_ = 0; kbd_sfl_ < KBD_LANES_HELD; ++kbd_sfl_) {                                                    \
      KBD_UNROLL for (int kbd_sfk_ = 0; kbd_sfk_ < KBD_VEC_SLOTS(lse); ++kbd_sfk_)(lse).v[kbd_sfl_][kbd_sfk_] =        \
          kbd_softmax_lse_((st).row_max.v[kbd_sfl_][kbd_sfk_], (st).row_sum.v[kbd_sfl_][kbd_sfk_], (float)(scale));    \
    }                                                                                                                  \
  } while (0)

#define kbd_softmax_apply(p, st, s, scale)                                                                             \
  do {                                                                                                                 \
    KBD__SM_F32(s, "kbd_softmax_apply");                                                                               \
    KBD__SM_F32(p, "kbd_softmax_apply");                                                                               \
    KBD__SAME_SHAPE(p, s);                                                                                             \
    KBD__RT_MATCH((st).row_max, s, KBD__RT_ROWS);                                                                      \
    const float kbd_sal2_ = (float)(scale)*KBD_SOFTMAX_LOG2E;                                                          \
    const kbd_rt_plan kbd_sap_ = KBD__T_PLAN(s, KBD__RT_ROWS);                                                         \
    float kbd_sai_inv_[KBD_LANES_HELD][KBD_VEC_SLOTS((st).row_sum)];                                                   \
    for (int kbd_sal_ = 0; kbd_sal_ < KBD_LANES_HELD; ++kbd_sal_) {                                                    \
      KBD_UNROLL for (int kbd_sak_ = 0; kbd_sak_ < KBD_VEC_SLOTS((st).row_sum); ++kbd_sak_) {                          \
        const float kbd_sas_ = (st).row_sum.v[kbd_sal_][kbd_sak_];                                                     \
        kbd_sai_inv_[kbd_sal_][kbd_sak_] = kbd_sas_ == 0.0f ? 0.0f : 1.0f / kbd_sas_;                                  \
      }                                                                                                                \
    }                                                                                                                  \
    for (int kbd_sal_ = 0; kbd_sal_ < KBD_LANES_HELD; ++kbd_sal_) {                                                    \
      KBD_UNROLL for (int kbd_sai_ = 0; kbd_sai_ < KBD_NPT(s); ++kbd_sai_) {                                           \
        const int kbd_sak_ = kbd_rt_slot(kbd_sap_, kbd_sai_);                                                          \
        (p).v[kbd_sal_][kbd_sai_] =                                                                                    \
            kbd_softmax_exp_((s).v[kbd_sal_][kbd_sai_], kbd_softmax_shift_((st).row_max.v[kbd_sal_][kbd_sak_]),        \
                             kbd_sal2_) *                                                                              \
            kbd_sai_inv_[kbd_sal_][kbd_sak_];                                                                          \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* ---- FA4's exponential (issue 27): a share of each row's exponentials on the FMA pipe, packed f32x2 math ----
 *
 *   kbd_softmax_update_lazy_poly(p, st, s, scale, slack, share)
 *                                         kbd_softmax_update_lazy, with the last `share` of every 8 consecutive
 *                                         elements of a thread's fragment exponentiated by kbd_exp2_poly_ftz (FMA pipe)
 *                                         and the rest by ex2.approx.ftz (MUFU); share: an integer constant 0..8.
 *                                         The exponents s * c - m * c (or the exact form) are fma/add/mul.rn.f32x2 on
 *                                         sm_100a, two elements per instruction, scalar with the same bits elsewhere:
 *                                         share 0 computes kbd_softmax_update_lazy's p, bit for bit
 *   kbd_softmax_rescale_packed(o, st)     kbd_softmax_rescale in mul.rn.f32x2 (sm_100a; scalar elsewhere): the
 *                                         same bits
 *
 * Both polynomial and MUFU elements are within 2^-22 relative of 2^x (kbd/exp2_poly.h), so a row mixes them freely.
 * The split is the caller's: docs/attention.md ("FA4's exponential") has the cycle model behind the sm_100a attention's
 * 2 of 8. Elements go in pairs (i, i + 1), i even, so a share that is even keeps every pair on one unit and packs
 * both its exponent and its polynomial. */
#include "exp2_poly.h"
#include "f32x2.h"

/* fragment element i takes the polynomial: the last `share` of each 8 */
#define KBD__SM_POLY_AT(i, share) (((i)&7) >= 8 - (share))
/* y[k] = 2^e[k], by the polynomial where poly_k, else by MUFU; a pair on the polynomial is packed */
KBD_HD void kbd_softmax_exp2_pair_(float y[2], const float e[2], int poly0, int poly1) {
  if (poly0 && poly1) {
    kbd_exp2_poly_ftz_x2(y, e);
  } else {
    y[0] = poly0 ? kbd_exp2_poly_ftz(e[0]) : kbd_hw_ex2_ftz_f32(e[0]);
    y[1] = poly1 ? kbd_exp2_poly_ftz(e[1]) : kbd_hw_ex2_ftz_f32(e[1]);
  }
}

/* the exponentials of one lane's fragment, in pairs; an odd count's last element makes a pair with itself.
 * exponent2(e, x, k0, k1) sets float e[2] from float x[2] and the pair's row slots */
#define KBD__SM_POLY_EXP_LANE(p, s, l, plan, share, exponent2)                                                         \
  KBD_UNROLL for (int kbd_spi_ = 0; kbd_spi_ < KBD_NPT(s); kbd_spi_ += 2) {                                            \
    const int kbd_spj_ = kbd_spi_ + 1 < KBD_NPT(s) ? kbd_spi_ + 1 : kbd_spi_;                                          \
    const int kbd_sp0_ = kbd_rt_slot(plan, kbd_spi_), kbd_sp1_ = kbd_rt_slot(plan, kbd_spj_);                          \
    const float kbd_spx_[2] = {(s).v[l][kbd_spi_], (s).v[l][kbd_spj_]};                                                \
    float kbd_spe_[2], kbd_spy_[2];                                                                                    \
    exponent2(kbd_spe_, kbd_spx_, kbd_sp0_, kbd_sp1_);                                                                 \
    kbd_softmax_exp2_pair_(kbd_spy_, kbd_spe_, KBD__SM_POLY_AT(kbd_spi_, share), KBD__SM_POLY_AT(kbd_spj_, share));    \
    (p).v[l][kbd_spi_] = kbd_spy_[0];                                                                                  \
    (p).v[l][kbd_spj_] = kbd_spy_[1];                                                                                  \
  }
/* the FFMA form s * c - m * c (kbd_softmax_exp_fma_'s exponent) and the exact (s - m) * c (kbd_softmax_exp_'s) */
#define KBD__SM_POLY_E_FMA(e, x, k0, k1)                                                                               \
  do {                                                                                                                 \
    const float kbd_spc_[2] = {kbd_sl2_, kbd_sl2_};                                                                    \
    const float kbd_spm_[2] = {-kbd_smc_[kbd_sul_][k0], -kbd_smc_[kbd_sul_][k1]};                                      \
    kbd_f32x2_fma_any_(e, x, kbd_spc_, kbd_spm_);                                                                      \
  } while (0)
#define KBD__SM_POLY_E_EXACT(e, x, k0, k1)                                                                             \
  do {                                                                                                                 \
    const float kbd_spc_[2] = {kbd_sl2_, kbd_sl2_};                                                                    \
    const float kbd_spm_[2] = {-kbd_sms_[kbd_sul_][k0], -kbd_sms_[kbd_sul_][k1]};                                      \
    float kbd_spd_[2];                                                                                                 \
    kbd_f32x2_add_any_(kbd_spd_, x, kbd_spm_);                                                                         \
    kbd_f32x2_mul_any_(e, kbd_spd_, kbd_spc_);                                                                         \
  } while (0)

/* The row sums of a TMEM_ACC p: row slot k is the thread's elements [k C, (k + 1) C) (kbd/reduce_tile.h), so the sum
 * is the thread's own; two FADD2 chains (4 lanes) take half the issue slots of kbd_reduce_rows' scalar FADDs and a
 * quarter of the dependent chain. The index is clamped only so that the other layouts' dead branch stays in bounds. */
#define KBD__SM_POLY_ROWSUM_TMEM(sum, p)                                                                               \
  do {                                                                                                                 \
    for (int kbd_swl_ = 0; kbd_swl_ < KBD_LANES_HELD; ++kbd_swl_) {                                                    \
      KBD_UNROLL for (int kbd_swk_ = 0; kbd_swk_ < KBD_VEC_SLOTS(sum); ++kbd_swk_) {                                   \
        float kbd_swa_[2] = {0.0f, 0.0f}, kbd_swb_[2] = {0.0f, 0.0f};                                                  \
        KBD_UNROLL for (int kbd_swc_ = 0; kbd_swc_ + 3 < KBD_COLS(p); kbd_swc_ += 4) {                                 \
          const int kbd_swi_ = (kbd_swk_ * KBD_COLS(p) + kbd_swc_) % KBD_NPT(p);                                       \
          const int kbd_swj_ = (kbd_swi_ + 2) % KBD_NPT(p);                                                            \
          const float kbd_swx_[2] = {(p).v[kbd_swl_][kbd_swi_], (p).v[kbd_swl_][(kbd_swi_ + 1) % KBD_NPT(p)]};         \
          const float kbd_swy_[2] = {(p).v[kbd_swl_][kbd_swj_], (p).v[kbd_swl_][(kbd_swj_ + 1) % KBD_NPT(p)]};         \
          kbd_f32x2_add_any_(kbd_swa_, kbd_swa_, kbd_swx_);                                                            \
          kbd_f32x2_add_any_(kbd_swb_, kbd_swb_, kbd_swy_);                                                            \
        }                                                                                                              \
        kbd_f32x2_add_any_(kbd_swa_, kbd_swa_, kbd_swb_);                                                              \
        (sum).v[kbd_swl_][kbd_swk_] = kbd_swa_[0] + kbd_swa_[1];                                                       \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* KBD__SM_UPDATE's lazy path with the exponential loop above and the row sums above (the rest is the same code) */
#define KBD__SM_UPDATE_POLY(p, st, s, scale, slack, share, name)                                                       \
  do {                                                                                                                 \
    KBD__SM_STATS(p, st, s, scale, 1, slack, name);                                                                    \
    if (kbd_hw_vote_all(kbd_sfa_, KBD_SITE)) {                                                                         \
      for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                  \
        KBD__SM_POLY_EXP_LANE(p, s, kbd_sul_, kbd_sup_, share, KBD__SM_POLY_E_FMA)                                     \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int kbd_sul_ = 0; kbd_sul_ < KBD_LANES_HELD; ++kbd_sul_) {                                                  \
        KBD__SM_POLY_EXP_LANE(p, s, kbd_sul_, kbd_sup_, share, KBD__SM_POLY_E_EXACT)                                   \
      }                                                                                                                \
    }                                                                                                                  \
    KBD_ROWVEC(f32, s) kbd_sbs_;                                                                                       \
    if (KBD_LAYOUT(s) == KBD_LAYOUT_TMEM_ACC)                                                                          \
      KBD__SM_POLY_ROWSUM_TMEM(kbd_sbs_, p);                                                                           \
    else                                                                                                               \
      kbd_reduce_rows(kbd_sbs_, p, KBD_RED_SUM);                                                                       \
    KBD__SM_SUM_UPDATE(st);                                                                                            \
  } while (0)

#define kbd_softmax_update_lazy_poly(p, st, s, scale, slack, share)                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT((slack) >= 0 && (slack) <= 15,                                                                   \
                      "kbd: kbd_softmax_update_lazy_poly: slack is an integer constant in 0..15 (p reaches 2^slack, "  \
                      "and f16 holds less than 2^16)");                                                                \
    KBD_STATIC_ASSERT((share) >= 0 && (share) <= 8,                                                                    \
                      "kbd: kbd_softmax_update_lazy_poly: share is an integer constant in 0..8 (the elements of each " \
                      "8 that take the polynomial)");                                                                  \
    KBD__SM_UPDATE_POLY(p, st, s, scale, slack, share, "kbd_softmax_update_lazy_poly");                                \
  } while (0)

#define kbd_softmax_rescale_packed(o, st)                                                                              \
  do {                                                                                                                 \
    KBD__SM_F32(o, "kbd_softmax_rescale_packed");                                                                      \
    KBD__SM_ROWS_MATCH(o, (st).row_scale, "kbd_softmax_rescale_packed");                                               \
    const kbd_rt_plan kbd_srp_ = KBD__T_PLAN(o, KBD__RT_ROWS);                                                         \
    for (int kbd_srl_ = 0; kbd_srl_ < KBD_LANES_HELD; ++kbd_srl_) {                                                    \
      KBD_UNROLL for (int kbd_sri_ = 0; kbd_sri_ < KBD_NPT(o); kbd_sri_ += 2) {                                        \
        const int kbd_srj_ = kbd_sri_ + 1 < KBD_NPT(o) ? kbd_sri_ + 1 : kbd_sri_;                                      \
        const float kbd_sra_[2] = {(o).v[kbd_srl_][kbd_sri_], (o).v[kbd_srl_][kbd_srj_]};                              \
        const float kbd_srb_[2] = {(st).row_scale.v[kbd_srl_][kbd_rt_slot(kbd_srp_, kbd_sri_)],                        \
                                   (st).row_scale.v[kbd_srl_][kbd_rt_slot(kbd_srp_, kbd_srj_)]};                       \
        float kbd_srd_[2];                                                                                             \
        kbd_f32x2_mul_any_(kbd_srd_, kbd_sra_, kbd_srb_);                                                              \
        (o).v[kbd_srl_][kbd_sri_] = kbd_srd_[0];                                                                       \
        (o).v[kbd_srl_][kbd_srj_] = kbd_srd_[1];                                                                       \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_SOFTMAX_H */
