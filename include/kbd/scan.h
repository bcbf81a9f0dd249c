/* kbd/scan.h - prefix scans (sum, max, min) over a warp, a warpgroup, the CTA and 1 x C tiles.
 *
 *   kbd_warp_scan(dst, x, op, excl)              dst, x: kbd_lanes_f32 / kbd_lanes_i32, lane order
 *   kbd_warpgroup_scan(dst, total, x, op, excl)  over the warpgroup's 128 threads, thread order
 *   kbd_cta_scan(dst, total, x, op, excl)        over the block's threads, thread order
 *   kbd_scan(d, total, t, op, excl)              1 x C ROW tile t (any scope), element order; d: same
 *                                                shape, any dtype; total = op over all of t (scalar)
 * op: KBD_RED_SUM, KBD_RED_MAX, KBD_RED_MIN (kbd/reduce.h). excl = 0: inclusive (element i gets
 * x0 op ... op xi); excl = 1: exclusive (x0 op ... op x(i-1); element 0 gets op's empty result: 0,
 * -inf, +inf, or INT32_MIN / INT32_MAX). Float inputs are scanned in f32; i32 wraps. max/min follow
 * PTX max.f32/min.f32 (NaN ignored, +0 > -0), like the reductions.
 *
 * Algorithm (identical on CPU and GPU, so f32 sums are bit-identical): Hillis-Steele inside the warp,
 * out = prev op out for deltas 1,2,4,8,16 (5 shfl.sync.up + 5 ops; lanes below the delta keep their
 * value); exclusive = inclusive shifted up one lane (1 more shfl.sync.up). Above warp scope: lane 0
 * stores the warp total (a shfl.sync.idx from lane 31) to shared memory, barrier, every warp loads
 * all the warp totals and scans them itself (5 more shfl.up), takes its prefix with shfl.sync.idx,
 * then a trailing barrier protects the slots (WAR). CTA/warpgroup cost: ~13 SHFL, 1 STS, 1 LDS,
 * 2 barriers, 128 B of shared memory (the slots of kbd/reduce.h's scheme, separate storage).
 * kbd_scan over a tile costs one scope scan per stripe of scope*vec elements (npt/vec of them).
 * f32 sum error: each output is a sum in a fixed tree of depth <= vec + 10 (+5 per extra stripe).
 */
#ifndef KBD_SCAN_H
#define KBD_SCAN_H

#include "reduce.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA

/* x <- shfl.sync.<mode>.b32 of x, whole warp (c chosen per mode as in CUDA's __shfl_*_sync). */
KBD_TILE_FN kbd_lanes_b32 kbd_lanes_shfl_b32_(int mode, kbd_lanes_b32 x, uint32_t b, const char *file, int line) {
  kbd_hw_shfl_b32(mode, x.v, x.v, b, mode == KBD_SHFL_UP ? KBD_SHFL_C_UP : KBD_SHFL_C, file, line);
  return x;
}

/* Inclusive Hillis-Steele scan over the warp's 32 lanes. */
KBD_TILE_FN kbd_lanes_b32 kbd_warp_scan_incl_b32_(kbd_lanes_b32 x, int op, int fl, const char *file, int line) {
  KBD_UNROLL for (uint32_t d = 1; d < 32; d <<= 1) {
#if KBD_MODE_CPU
    /* The same shfl.sync.up into a separate array (no struct copies), and the lanes below d, which keep
     * their value, skipped by the loop bound instead of a per-lane branch (so the loop vectorises). */
    uint32_t y[32];
    kbd_hw_shfl_b32(KBD_SHFL_UP, y, x.v, d, KBD_SHFL_C_UP, file, line);
    for (uint32_t lane = d; lane < 32; ++lane)
      x.v[lane] = kbd_red_op_raw_b32(op, fl, y[lane], x.v[lane]);
#else
    const kbd_lanes_b32 y = kbd_lanes_shfl_b32_(KBD_SHFL_UP, x, d, file, line);
    KBD_FOR_LANES(lane) {
      if ((uint32_t)lane >= d) KBD_LANE(x, lane) = kbd_red_op_raw_b32(op, fl, KBD_LANE(y, lane), KBD_LANE(x, lane));
    }
#endif
  }
  /* The GPU's NaN bits once per lane instead of once per step (kbd_red_chain_end_b32; nothing in the nvcc
   * device pass). Lane 0 went through no op: its value is only moved, as on the GPU. */
#if KBD_MODE_CPU
  for (int lane = 1; lane < 32; ++lane)
    x.v[lane] = kbd_red_chain_end_b32(fl, x.v[lane]);
#endif
  return x;
}

/* Scan of x over the span's threads (kbd_span_, kbd/reduce.h) in thread order. Exclusive results of the
 * span's first thread hold the exact padding identity (fixed up by the caller). *total: op over all. */
KBD_TILE_FN kbd_lanes_b32 kbd_span_scan_b32_(kbd_lanes_b32 x, int op, int fl, int excl, kbd_span_ s, uint32_t *total,
                                             const char *file, int line) {
  const uint32_t pad = kbd_red_pad_b32(op, fl);
  kbd_lanes_b32 incl = kbd_warp_scan_incl_b32_(x, op, fl, file, line);
  const uint32_t wt = kbd_lanes_shfl_b32_(KBD_SHFL_IDX, incl, 31, file, line).v[0]; /* warp total, uniform */
  kbd_lanes_b32 r = incl;
  if (excl) {
    r = kbd_lanes_shfl_b32_(KBD_SHFL_UP, incl, 1, file, line);
    KBD_FOR_LANES(lane) {
      if (lane == 0) KBD_LANE(r, lane) = pad;
    }
  }
  if (s.nw == 1) {
    *total = wt;
    return r;
  }
  KBD_SHARED(uint32_t, kbd_scan_slots_, KBD_MAX_BLOCK_THREADS / KBD_WARP_SIZE);
  const int w = kbd_warp_id(), wi = w - s.first;
  KBD_FOR_LANES(lane) {
    if (lane == 0) kbd_scan_slots_[w] = wt;
  }
  kbd_span_barrier_(s, file, line);
  kbd_lanes_b32 y;
  kbd_red_load_totals_(&y, kbd_scan_slots_ + s.first, s.nw, pad);
  y = kbd_warp_scan_incl_b32_(y, op, fl, file, line);
  *total = kbd_lanes_shfl_b32_(KBD_SHFL_IDX, y, (uint32_t)(s.nw - 1), file, line).v[0];
  const uint32_t prefix = wi == 0 ? pad : kbd_lanes_shfl_b32_(KBD_SHFL_IDX, y, (uint32_t)(wi - 1), file, line).v[0];
  kbd_span_barrier_(s, file, line);
  KBD_FOR_LANES(lane) { KBD_LANE(r, lane) = kbd_red_op_b32(op, fl, prefix, KBD_LANE(r, lane)); }
  return r;
}

/* The same over `scope` threads (32, 128 or the block). */
KBD_TILE_FN kbd_lanes_b32 kbd_scope_scan_b32_(kbd_lanes_b32 x, int op, int fl, int excl, int scope, int block_threads,
                                              uint32_t *total, const char *file, int line) {
  return kbd_span_scan_b32_(x, op, fl, excl, kbd_span_of_(scope, block_threads), total, file, line);
}

/* The span's first thread's exclusive result -> op's documented empty value. */
KBD_TILE_FN void kbd_scan_fix_first_(kbd_lanes_b32 *r, int op, int fl, kbd_span_ s) {
  const uint32_t e = fl ? kbd_cvt_f32_bits(kbd_red_empty_f32(op)) : (uint32_t)kbd_red_empty_i32(op);
  if (kbd_warp_id() != s.first) return;
  KBD_FOR_LANES(lane) {
    if (lane == 0) KBD_LANE(*r, lane) = e;
  }
}

KBD_TILE_FN kbd_lanes_b32 kbd_scan_lanes_b32_(kbd_lanes_b32 x, int op, int fl, int excl, int scope, int block_threads,
                                              uint32_t *total, const char *file, int line) {
  const kbd_span_ sp = kbd_span_of_(scope, block_threads);
  kbd_lanes_b32 r = kbd_span_scan_b32_(x, op, fl, excl, sp, total, file, line);
  if (excl) kbd_scan_fix_first_(&r, op, fl, sp);
  return r;
}

#define KBD__SCAN_OP_OK(op)                                                                                            \
  KBD_STATIC_ASSERT(KBD__IS_CONST(op), "kbd: the scan op must be a compile-time constant KBD_RED_SUM/MAX/MIN");        \
  KBD_STATIC_ASSERT(KBD__RED_OPC(op) == KBD_RED_SUM || KBD__RED_OPC(op) == KBD_RED_MAX ||                              \
                        KBD__RED_OPC(op) == KBD_RED_MIN,                                                               \
                    "kbd: scans support KBD_RED_SUM, KBD_RED_MAX and KBD_RED_MIN")

#define KBD__LANES_SCAN(dst, total, x, op, excl, scope)                                                                \
  do {                                                                                                                 \
    KBD__SCAN_OP_OK(op);                                                                                               \
    KBD_STATIC_ASSERT(KBD__LANES_FLOAT(dst) == KBD__LANES_FLOAT(x),                                                    \
                      "kbd: scan source and destination must both be kbd_lanes_f32 or both kbd_lanes_i32");            \
    kbd_lanes_b32 kbd_sx_;                                                                                             \
    uint32_t kbd_st_;                                                                                                  \
    KBD__TO_B32(kbd_sx_, x);                                                                                           \
    kbd_sx_ = kbd_scan_lanes_b32_(kbd_sx_, (op), KBD__LANES_FLOAT(x), (excl), (scope), KBD_BLOCK_THREADS, &kbd_st_,    \
                                  __FILE__, __LINE__);                                                                 \
    KBD__FROM_B32(dst, kbd_sx_);                                                                                       \
    KBD__RED_STORE(total, kbd_st_, KBD__LANES_FLOAT(x));                                                               \
  } while (0)

#define kbd_warp_scan(dst, x, op, excl)                                                                                \
  do {                                                                                                                 \
    KBD_UNUSED float kbd_wst_; /* nvcc warns #550 (set but never used) despite the (void) cast */                      \
    KBD__LANES_SCAN(dst, kbd_wst_, x, op, excl, KBD_WARP);                                                             \
    (void)kbd_wst_;                                                                                                    \
  } while (0)
#define kbd_warpgroup_scan(dst, total, x, op, excl)                                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_BLOCK_THREADS % KBD_WARPGROUP == 0,                                                          \
                      "kbd: kbd_warpgroup_scan needs a block of whole warpgroups (a multiple of 128 threads)");        \
    KBD__LANES_SCAN(dst, total, x, op, excl, KBD_WARPGROUP);                                                           \
  } while (0)
#define kbd_cta_scan(dst, total, x, op, excl) KBD__LANES_SCAN(dst, total, x, op, excl, KBD_BLOCK_THREADS)

/* ---- 1 x C tiles ------------------------------------------------------------------------------------------ */

/* Stripe j of a ROW tile is elements [j*S*vec, (j+1)*S*vec): thread t holds its vec-element run
 * (j*S + t)*vec... Each stripe: sequential scan of the run in registers, a scope scan of the run totals,
 * and the carry of the stripes before. Returns op over the whole tile. */
KBD_TILE_FN uint32_t kbd_tile_scan_b32_(kbd_tile_shape s, void *dfrag, int ddt, const void *tfrag, int op, int excl,
                                        int block_threads, const char *file, int line) {
  const int fl = KBD_DT_IS_FLOAT(s.dtype), es = s.esize, des = KBD_DT_SIZE(ddt);
  const uint32_t pad = kbd_red_pad_b32(op, fl);
  uint32_t carry = pad;
  /* Does the scope's first thread sit in this warp (as lane 0)? Warp-uniform: computed once, not per lane
   * and element. */
#if KBD_MODE_CPU
  const int scope_first_here = (kbd_warp_id() * KBD_WARP_SIZE) % s.scope == 0;
#else
  const int scope_first_here = (int)(threadIdx.x % (unsigned)s.scope) == 0;
#endif
  for (int j = 0; j < s.npt / s.vec; ++j) {
    uint32_t run[KBD_LANES_HELD][16];
    kbd_lanes_b32 tot;
    for (int l = 0; l < KBD_LANES_HELD; ++l) {
      uint32_t a = pad;
      KBD_UNROLL for (int k = 0; k < s.vec; ++k) {
        const char *p = (const char *)tfrag + ((size_t)l * s.npt + (size_t)j * s.vec + k) * es;
        const uint32_t x = fl ? kbd_cvt_f32_bits(kbd_dt_load_f32(p, s.dtype)) : (uint32_t)kbd_dt_load_i32(p, s.dtype);
        /* raw: every output below and the total pass through kbd_red_op_b32 or a chain end after this */
        a = k == 0 ? x : kbd_red_op_raw_b32(op, fl, a, x);
        run[l][k] = a;
      }
      tot.v[l] = a;
    }
    uint32_t st;
    const kbd_lanes_b32 pre = kbd_scope_scan_b32_(tot, op, fl, 1, s.scope, block_threads, &st, file, line);
    for (int l = 0; l < KBD_LANES_HELD; ++l) {
      const uint32_t b = kbd_red_op_raw_b32(op, fl, carry, pre.v[l]);
#if KBD_MODE_CPU
      const int first = j == 0 && l == 0 && scope_first_here;
#else
      const int first = j == 0 && scope_first_here;
#endif
      KBD_UNROLL for (int k = 0; k < s.vec; ++k) {
        uint32_t o = excl ? (k == 0 ? b : kbd_red_op_raw_b32(op, fl, b, run[l][k - 1]))
                          : kbd_red_op_raw_b32(op, fl, b, run[l][k]);
        if (excl && first && k == 0) o = fl ? kbd_cvt_f32_bits(kbd_red_empty_f32(op)) : (uint32_t)kbd_red_empty_i32(op);
        void *pd = (char *)dfrag + ((size_t)l * s.npt + (size_t)j * s.vec + k) * des;
        if (fl)
          kbd_dt_store_f32(pd, ddt, kbd_cvt_bits_f32(o));
        else
          kbd_dt_store_i32(pd, ddt, (int32_t)o);
      }
    }
    carry = kbd_red_op_b32(op, fl, carry, st);
  }
#if KBD_MODE_CPU
  /* Every output above is the result of an op (or the exclusive empty value), so a NaN among them has the
   * GPU's bits 0x7fffffff (kbd_red_chain_end_b32). One pass over the contiguous fragment here vectorises,
   * where a check per output inside the loops above would not; narrower destinations got the canonical
   * NaN of their conversion already. */
  if (fl && ddt == KBD_DT_f32)
    for (int i = 0; i < KBD_LANES_HELD * s.npt; ++i) {
      uint32_t u;
      memcpy(&u, (char *)dfrag + (size_t)i * 4, 4);
      u = kbd_red_chain_end_b32(fl, u);
      memcpy((char *)dfrag + (size_t)i * 4, &u, 4);
    }
#endif
  return carry;
}

#define kbd_scan(d, total, t, op, excl)                                                                                \
  do {                                                                                                                 \
    KBD__SCAN_OP_OK(op);                                                                                               \
    KBD__SAME_SHAPE(d, t);                                                                                             \
    KBD__RED_SCOPE_OK(t);                                                                                              \
    KBD_STATIC_ASSERT(KBD_ROWS(t) == 1 && KBD_LAYOUT(t) == KBD_LAYOUT_ROW,                                             \
                      "kbd: kbd_scan scans 1 x C tiles in the ROW layout");                                            \
    KBD__RED_STORE(total,                                                                                              \
                   kbd_tile_scan_b32_(KBD__SHAPE(t), (d).v, KBD_DTYPE(d), (t).v, (op), (excl), KBD_BLOCK_THREADS,      \
                                      __FILE__, __LINE__),                                                             \
                   KBD_DT_IS_FLOAT(KBD_DTYPE(t)));                                                                     \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_SCAN_H */
