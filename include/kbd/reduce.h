/* kbd/reduce.h - reductions over a warp, a warpgroup, the CTA, and over register tiles.
 *
 *   kbd_reduce(dst, t, op)                 dst = op over every element of tile t (its whole scope)
 *   kbd_thread_reduce(lanes, t, op)        per-thread partial of t: fold of the thread's fragment
 *   kbd_warp_reduce(dst, x, op)            dst = op over the 32 lanes of x (kbd_lanes_f32 / _i32)
 *   kbd_warpgroup_reduce(dst, x, op)       ... over the 128 threads of the warpgroup
 *   kbd_cta_reduce(dst, x, op)             ... over every thread of the block
 *   kbd_pad_1d(t, n, start, op)            1 x C tile: elements outside [0, n) := op's empty result
 *   kbd_fmax_ptx(a, b) / kbd_fmin_ptx(a, b)    PTX max.f32 / min.f32 on both paths
 *
 * op: KBD_RED_SUM, KBD_RED_MAX, KBD_RED_MIN (any dtype), KBD_RED_AND, KBD_RED_OR, KBD_RED_XOR (i32
 * only: a compile-time error naming the dtype otherwise). Float tiles (f32, f16, bf16, fp8) are widened
 * exactly to f32 and reduced in f32; i32 reduces in 32-bit two's complement (sum wraps), s8 and u8 are
 * widened exactly to i32 and reduced the same way (into kbd_lanes_i32 / an int32_t). The result is
 * the same in every thread of the scope and is written to the scalar lvalue dst (float or int32_t).
 *
 * Semantics (docs/reduce.md): max/min are PTX max.f32/min.f32 - NaN inputs are ignored, all-NaN gives
 * NaN, +0.0 > -0.0. Empty results (what kbd_pad_1d writes): sum +0, max -inf, min +inf; i32 max
 * INT32_MIN, min INT32_MAX, and ~0, or/xor 0; s8 / u8 max and min: the type's limits (-128 / 0, 127 / 255). Sum order
 * (fixed, identical on CPU and GPU): sequential over a thread's fragment, then xor butterfly over the warp (lane masks
 * 1,2,4,8,16), then, above warp scope, the same butterfly over the warp totals. |error| <= gamma_k * sum|x|, k = npt-1
 * + 5 (+5).
 *
 * Cost per call (GPU): warp: f32 sum 5 SHFL + 5 FADD; f32 max/min 1 REDUX on sm_100a, 5 SHFL + 5 FMNMX
 * on sm_90a; i32 1 REDUX. warpgroup/CTA: the warp cost twice, 1 STS, 1 LDS, 2 barriers (the second
 * keeps the next reduction from overwriting a slot another warp still reads). Shared memory: 128 B.
 * Barriers: CTA scope uses barrier 0 (bar.sync 0, all threads); warpgroup scope named barrier
 * KBD_REDUCE_WG_BARRIER + warpgroup index with 128 threads (default 8..15, override before including).
 * Every thread of the scope must reach the call: CPU mode reports a missing warp as a deadlock naming
 * the call site.
 */
#ifndef KBD_REDUCE_H
#define KBD_REDUCE_H

#include "config.h" /* first: it sets the feature macros system headers read */
#include "ops.h"    /* KBD_RED_SUM ... KBD_RED_XOR (host code of a GPU program sees these too) */

/* Kernel-side API: CPU emulation or nvcc only. */
#if KBD_MODE_CPU || KBD_MODE_CUDA

#include <math.h>

#include "fminmax.h"
#include "hw.h"
#include "numerics.h"
#include "smem.h"
#include "sync.h"
#include "tile_core.h"

#ifndef KBD_REDUCE_WG_BARRIER
#define KBD_REDUCE_WG_BARRIER 8
#endif

/* One 32-bit value per lane of the running warp: v[32] on the CPU (the fiber holds all lanes), v[1] on
 * the GPU (the thread's own). kbd_meta_ marks the element kind (float 2, int 1) for compile-time checks. */
typedef struct kbd_lanes_f32 {
  float v[KBD_LANES_HELD];
  char (*kbd_meta_)[2];
} kbd_lanes_f32;
typedef struct kbd_lanes_i32 {
  int32_t v[KBD_LANES_HELD];
  char (*kbd_meta_)[1];
} kbd_lanes_i32;
/* Internal: the algorithms run on bit patterns, one code path for f32 and i32. */
typedef struct kbd_lanes_b32 {
  uint32_t v[KBD_LANES_HELD];
} kbd_lanes_b32;

/* x's value in `lane` inside KBD_FOR_LANES(lane). */
#if KBD_MODE_CPU
#define KBD_LANE(x, lane) ((x).v[(lane)])
#else
#define KBD_LANE(x, lane) ((x).v[0 * (lane)])
#endif
#define KBD__LANES_FLOAT(x) (sizeof(*(x).kbd_meta_) == 2)

/* ---- scalar semantics ------------------------------------------------------------------------------ */

/* kbd_fmax_ptx / kbd_fmin_ptx: kbd/fminmax.h (also used by the elementwise kbd_max / kbd_min). */

/* a op b on 32-bit patterns (fl: as f32, else as i32), except that a NaN sum keeps the host's bits. For the
 * inside of a chain of ops whose end goes through kbd_red_op_b32 or kbd_red_chain_end_b32: NaN + x is
 * NaN, so only the bits of the chain's last result can differ from the GPU's, and fixing them once per
 * chain instead of once per add keeps the per-thread fold a plain dependent FADD chain on the CPU. */
KBD_HD uint32_t kbd_red_op_raw_b32(int op, int fl, uint32_t a, uint32_t b) {
  if (fl) {
    const float x = kbd_cvt_bits_f32(a), y = kbd_cvt_bits_f32(b);
    const float r = op == KBD_RED_SUM ? x + y : op == KBD_RED_MAX ? kbd_fmax_ptx(x, y) : kbd_fmin_ptx(x, y);
    return kbd_cvt_f32_bits(r);
  }
  switch (op) {
  case KBD_RED_SUM: return a + b; /* wraps mod 2^32 like add.s32 */
  case KBD_RED_MAX: return (int32_t)a > (int32_t)b ? a : b;
  case KBD_RED_MIN: return (int32_t)a < (int32_t)b ? a : b;
  case KBD_RED_AND: return a & b;
  case KBD_RED_OR: return a | b;
  default: return a ^ b;
  }
}

/* The result of a chain of one or more kbd_red_op_raw_b32 with the GPU's bits: a NaN is 0x7fffffff, as the
 * GPU's FADD (and max/min with two NaNs) gives it; x86 would keep an operand's payload or give 0xffc00000
 * for inf - inf (kbd/numerics.h). Nothing in the nvcc device pass. */
KBD_HD uint32_t kbd_red_chain_end_b32(int fl, uint32_t r) { return fl ? kbd_f32_arith_nan_bits(r) : r; }

/* a op b with the GPU's bits. f32 add has one rounding and is commutative, so a butterfly step gives both
 * partner lanes the same bits. */
KBD_HD uint32_t kbd_red_op_b32(int op, int fl, uint32_t a, uint32_t b) {
  return kbd_red_chain_end_b32(fl, kbd_red_op_raw_b32(op, fl, a, b));
}

/* Exact identity used for padding inside the algorithms: op(identity, x) == x bit for bit. For f32 sum
 * that is -0.0 (+0.0 would turn a -0.0 total into +0.0); for f32 max/min it is NaN (ignored). */
KBD_HD uint32_t kbd_red_pad_b32(int op, int fl) {
  if (fl) return op == KBD_RED_SUM ? 0x80000000u : 0x7fffffffu;
  switch (op) {
  case KBD_RED_MAX: return 0x80000000u;
  case KBD_RED_MIN: return 0x7fffffffu;
  case KBD_RED_AND: return 0xffffffffu;
  default: return 0u;
  }
}

/* The documented result of an empty reduction (what kbd_pad_1d fills in): sum +0, max -inf, min +inf. */
KBD_HD float kbd_red_empty_f32(int op) { return op == KBD_RED_SUM ? 0.0f : op == KBD_RED_MAX ? -INFINITY : INFINITY; }
KBD_HD int32_t kbd_red_empty_i32(int op) { return (int32_t)kbd_red_pad_b32(op, 0); }

/* ---- warp ------------------------------------------------------------------------------------------- */

/* op over the 32 lanes; every lane gets the result. */
KBD_TILE_FN uint32_t kbd_warp_reduce_b32_(kbd_lanes_b32 x, int op, int fl, const char *file, int line) {
  /* One REDUX for integers; for f32 max/min too where the target has the f32 form (sm_100a: same NaN/zero
   * rule as max.f32, and exact, so it equals the butterfly bit for bit). f32 sum has no redux form (its
   * rounding would depend on the order): the fixed butterfly below. */
  if (!fl) return kbd_hw_redux_b32(op, x.v, file, line);
#if KBD_HW_REDUX_F32
  if (op == KBD_RED_MAX || op == KBD_RED_MIN) return kbd_hw_redux_f32(op, x.v, file, line);
#endif
  KBD_UNROLL for (uint32_t m = 1; m < 32; m <<= 1) {
    uint32_t y[KBD_LANES_HELD];
    kbd_hw_shfl_b32(KBD_SHFL_BFLY, y, x.v, m, KBD_SHFL_C, file, line);
    for (int l = 0; l < KBD_LANES_HELD; ++l)
      x.v[l] = kbd_red_op_raw_b32(op, fl, x.v[l], y[l]);
  }
  return kbd_red_chain_end_b32(fl, x.v[0]); /* five ops deep in every lane: the GPU's NaN bits */
}

/* ---- warpgroup / CTA ---------------------------------------------------------------------------------- */

/* The threads a collective spans: warps [first, first + nw) of the block, and the barrier they meet at
 * (cta: the CTA barrier, bar.sync 0; else named barrier `bar` with the span's threads). Warp, warpgroup and CTA scopes
 * are spans; so is a warp range (kbd/scope.h), which brings its own barrier id, so that the rest of the block can do
 * something else. */
typedef struct kbd_span_ {
  int first, nw, bar, cta; /* cta: meet at the CTA barrier (bar unused) */
} kbd_span_;

/* The span of a tile scope (32, 128 or the block's thread count) containing the calling warp: warpgroup
 * scope takes named barrier KBD_REDUCE_WG_BARRIER + warpgroup index with 128 threads. */
KBD_TILE_FN kbd_span_ kbd_span_of_(int scope, int block_threads) {
  kbd_span_ s;
  const int w = kbd_warp_id();
  s.nw = scope / KBD_WARP_SIZE;
  s.first = w / s.nw * s.nw;
  s.cta = scope == block_threads;
  s.bar = s.cta ? 0 : KBD_REDUCE_WG_BARRIER + w / 4;
  return s;
}

/* The span's barrier, reported at the caller's file:line. The CTA barrier is kbd_hw_bar_sync_cta, so that
 * the CPU machine reports a kbd_sync meeting it (a collective only part of the block reaches) instead of
 * pairing the two as the GPU does. */
KBD_TILE_FN void kbd_span_barrier_(kbd_span_ s, const char *file, int line) {
  if (s.cta)
    kbd_hw_bar_sync_cta(file, line);
  else
    kbd_hw_bar_sync_named(s.bar, s.nw * KBD_WARP_SIZE, file, line);
}

/* Lane l of the warp <- warp total l of the span (slots[l]), for l < nw; the exact padding identity above.
 * CPU: one copy and one fill for the 32 lanes instead of a per-lane select (same values). */
KBD_TILE_FN void kbd_red_load_totals_(kbd_lanes_b32 *y, const uint32_t *slots, int nw, uint32_t pad) {
#if KBD_MODE_CPU
  memcpy(y->v, slots, sizeof(uint32_t) * (size_t)nw);
  for (int lane = nw; lane < KBD_WARP_SIZE; ++lane)
    y->v[lane] = pad;
#else
  KBD_FOR_LANES(lane) { KBD_LANE(*y, lane) = lane < nw ? slots[lane] : pad; }
#endif
}

/* op over the span's threads: warp butterfly, warp totals through shared memory (one slot per warp of the
 * block, so disjoint spans never share a slot), the span's barrier, a second butterfly over the totals in
 * every warp, and a trailing barrier (WAR on the slots). A one-warp span needs neither. */
KBD_TILE_FN uint32_t kbd_span_reduce_b32_(kbd_lanes_b32 x, int op, int fl, kbd_span_ s, const char *file, int line) {
  uint32_t r = kbd_warp_reduce_b32_(x, op, fl, file, line);
  if (s.nw == 1) return r;
  KBD_SHARED(uint32_t, kbd_red_slots_, KBD_MAX_BLOCK_THREADS / KBD_WARP_SIZE);
  const int w = kbd_warp_id();
  KBD_FOR_LANES(lane) {
    if (lane == 0) kbd_red_slots_[w] = r;
  }
  kbd_span_barrier_(s, file, line);
  kbd_lanes_b32 y;
  kbd_red_load_totals_(&y, kbd_red_slots_ + s.first, s.nw, kbd_red_pad_b32(op, fl));
  r = kbd_warp_reduce_b32_(y, op, fl, file, line);
  kbd_span_barrier_(s, file, line);
  return r;
}

/* op over `scope` threads (32, 128 or the block) */
KBD_TILE_FN uint32_t kbd_scope_reduce_b32_(kbd_lanes_b32 x, int op, int fl, int scope, int block_threads,
                                           const char *file, int line) {
  if (scope == KBD_WARP_SIZE) return kbd_warp_reduce_b32_(x, op, fl, file, line);
  return kbd_span_reduce_b32_(x, op, fl, kbd_span_of_(scope, block_threads), file, line);
}

/* The barrier of the tile scope containing the calling warp (the tile reductions' steps). */
KBD_TILE_FN void kbd_red_barrier_(int scope, int block_threads, const char *file, int line) {
  kbd_span_barrier_(kbd_span_of_(scope, block_threads), file, line);
}

/* ---- per-thread fold of a tile fragment --------------------------------------------------------------- */

KBD_TILE_FN kbd_lanes_b32 kbd_frag_fold_b32_(const void *frag, int dt, int npt, int op, int fl) {
  kbd_lanes_b32 acc;
  const int es = KBD_DT_SIZE(dt);
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    const char *f = (const char *)frag + (size_t)l * npt * es;
    uint32_t a = fl ? kbd_cvt_f32_bits(kbd_dt_load_f32(f, dt)) : (uint32_t)kbd_dt_load_i32(f, dt);
    KBD_UNROLL for (int i = 1; i < npt; ++i) {
      const char *p = f + (size_t)i * es;
      a = kbd_red_op_raw_b32(op, fl, a,
                             fl ? kbd_cvt_f32_bits(kbd_dt_load_f32(p, dt)) : (uint32_t)kbd_dt_load_i32(p, dt));
    }
    /* one element: a move, whose NaN keeps its bits on the GPU too */
    acc.v[l] = npt > 1 ? kbd_red_chain_end_b32(fl, a) : a;
  }
  return acc;
}

/* ---- compile-time checks ---------------------------------------------------------------------------------- */

/* The op is checked against the dtype here, at compile time, which needs a constant op. KBD__IF_CONST
 * (kbd/smem.h) keeps the later checks constant expressions for any op, so a variable op gets this message
 * only, not the compiler's bare "not constant" as well. */
#define KBD__RED_OP_RULE "kbd: the reduction op must be a compile-time constant KBD_RED_SUM/MAX/MIN/AND/OR/XOR"
#define KBD__RED_OPC(op) KBD__IF_CONST(op, KBD_RED_SUM)
#define KBD__RED_OP_OK(op)                                                                                             \
  KBD_STATIC_ASSERT(KBD__IS_CONST(op), KBD__RED_OP_RULE);                                                              \
  KBD_STATIC_ASSERT(KBD__RED_OPC(op) >= KBD_RED_SUM && KBD__RED_OPC(op) <= KBD_RED_XOR, KBD__RED_OP_RULE)
#define KBD__RED_BITS_DT(dt, op, DT, NAME)                                                                             \
  KBD_STATIC_ASSERT(!((dt) == KBD_DT_##DT && (op) == KBD_RED_AND),                                                     \
                    "kbd: reduction KBD_RED_AND is not defined for dtype " #DT " (bitwise ops need i32)");             \
  KBD_STATIC_ASSERT(!((dt) == KBD_DT_##DT && (op) == KBD_RED_OR),                                                      \
                    "kbd: reduction KBD_RED_OR is not defined for dtype " #DT " (bitwise ops need i32)");              \
  KBD_STATIC_ASSERT(!((dt) == KBD_DT_##DT && (op) == KBD_RED_XOR),                                                     \
                    "kbd: reduction KBD_RED_XOR is not defined for dtype " #DT " (bitwise ops need i32)")
#define KBD__RED_DT_OK(dt, op)                                                                                         \
  KBD__RED_OP_OK(op);                                                                                                  \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), f32, f32);                                                                    \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), f16, f16);                                                                    \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), bf16, bf16);                                                                  \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), e4m3, e4m3);                                                                  \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), e5m2, e5m2);                                                                  \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), s8, s8);                                                                      \
  KBD__RED_BITS_DT(dt, KBD__RED_OPC(op), u8, u8)
#define KBD__LANES_DT(x) (KBD__LANES_FLOAT(x) ? KBD_DT_f32 : KBD_DT_i32)
#define KBD__RED_SCOPE_OK(t)                                                                                           \
  KBD_STATIC_ASSERT(KBD_SCOPE(t) == KBD_WARP || KBD_SCOPE(t) == KBD_WARPGROUP || KBD_SCOPE(t) == KBD_CTA,              \
                    "kbd: reductions are over KBD_WARP, KBD_WARPGROUP or KBD_CTA tiles")

/* Bits of a lanes struct (f32 or i32) as kbd_lanes_b32 and back. */
#define KBD__TO_B32(dst, x)                                                                                            \
  for (int kbd_tl_ = 0; kbd_tl_ < KBD_LANES_HELD; ++kbd_tl_)                                                           \
  memcpy(&(dst).v[kbd_tl_], &(x).v[kbd_tl_], 4)
#define KBD__FROM_B32(x, src)                                                                                          \
  for (int kbd_tl_ = 0; kbd_tl_ < KBD_LANES_HELD; ++kbd_tl_)                                                           \
  memcpy(&(x).v[kbd_tl_], &(src).v[kbd_tl_], 4)

/* A reduction result bits -> the caller's scalar (float for float kinds, int32_t for i32). */
#define KBD__RED_STORE(dst, bits, fl)                                                                                  \
  do {                                                                                                                 \
    const uint32_t kbd_rb_ = (bits);                                                                                   \
    if (fl)                                                                                                            \
      (dst) = kbd_cvt_bits_f32(kbd_rb_);                                                                               \
    else                                                                                                               \
      (dst) = (int32_t)kbd_rb_;                                                                                        \
  } while (0)

/* ---- public macros ------------------------------------------------------------------------------------------ */

#define KBD__LANES_REDUCE(dst, x, op, scope, name)                                                                     \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__IS_SCALAR(dst), "kbd: " name "(dst, x, op), operand dst: must be a scalar variable (float " \
                                           "for kbd_lanes_f32, int32_t for kbd_lanes_i32); a register tile reduces "   \
                                           "with kbd_reduce(dst, t, op)");                                             \
    KBD__RED_DT_OK(KBD__LANES_DT(x), op);                                                                              \
    kbd_lanes_b32 kbd_rx_;                                                                                             \
    KBD__TO_B32(kbd_rx_, x);                                                                                           \
    KBD__RED_STORE(                                                                                                    \
        KBD__OR(KBD__IS_SCALAR(dst), dst, float),                                                                      \
        kbd_scope_reduce_b32_(kbd_rx_, (op), KBD__LANES_FLOAT(x), (scope), KBD_BLOCK_THREADS, __FILE__, __LINE__),     \
        KBD__LANES_FLOAT(x));                                                                                          \
  } while (0)

#define kbd_warp_reduce(dst, x, op) KBD__LANES_REDUCE(dst, x, op, KBD_WARP, "kbd_warp_reduce")
#define kbd_warpgroup_reduce(dst, x, op)                                                                               \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_BLOCK_THREADS % KBD_WARPGROUP == 0,                                                          \
                      "kbd: kbd_warpgroup_reduce needs a block of whole warpgroups (a multiple of 128 threads)");      \
    KBD__LANES_REDUCE(dst, x, op, KBD_WARPGROUP, "kbd_warpgroup_reduce");                                              \
  } while (0)
#define kbd_cta_reduce(dst, x, op) KBD__LANES_REDUCE(dst, x, op, KBD_BLOCK_THREADS, "kbd_cta_reduce")

/* lanes = the per-thread fold of tile t (kbd_lanes_f32 for float tiles, kbd_lanes_i32 for i32). */
#define kbd_thread_reduce(lanes, t, op)                                                                                \
  do {                                                                                                                 \
    KBD__RED_DT_OK(KBD_DTYPE(t), op);                                                                                  \
    KBD_STATIC_ASSERT(KBD__LANES_FLOAT(lanes) == KBD_DT_IS_FLOAT(KBD_DTYPE(t)),                                        \
                      "kbd: kbd_thread_reduce: use kbd_lanes_f32 for float tiles, kbd_lanes_i32 for i32 tiles");       \
    const kbd_lanes_b32 kbd_rf_ =                                                                                      \
        kbd_frag_fold_b32_((t).v, KBD_DTYPE(t), KBD_NPT(t), (op), KBD_DT_IS_FLOAT(KBD_DTYPE(t)));                      \
    KBD__FROM_B32(lanes, kbd_rf_);                                                                                     \
  } while (0)

/* dst = op over all R x C elements of t, available in every thread of t's scope. The operands are checked before
 * anything reads them, and a wrong one replaced by a stand-in (kbd/tile_core.h, "one message per mistake"). */
#define kbd_reduce(dst, t, op)                                                                                         \
  do {                                                                                                                 \
    enum { kbd_rk_ = KBD__KIND_OF(t) };                                                                                \
    KBD__NEED_REG_K(kbd_rk_, "kbd_reduce(dst, t, op), operand t",                                                      \
                    "not a scalar or a pointer; a kbd_lanes value reduces with kbd_warp_reduce(dst, x, op)");          \
    KBD_STATIC_ASSERT(KBD__IS_SCALAR(dst),                                                                             \
                      "kbd: kbd_reduce(dst, t, op), operand dst: must be a scalar variable (float for a float tile, "  \
                      "int32_t for i32) - the whole tile reduces to one value; per row or column: kbd_reduce_rows(m, " \
                      "t, op) / kbd_reduce_cols(m, t, op)");                                                           \
    KBD__BIND(kbd_rt_, KBD__OR(kbd_rk_ == KBD_KIND_REG, t, kbd__reg_standin));                                         \
    KBD__RED_DT_OK(KBD_DTYPE(KBD__AT(kbd_rt_)), op);                                                                   \
    KBD__RED_SCOPE_OK(KBD__AT(kbd_rt_));                                                                               \
    const int kbd_rfl_ = KBD_DT_IS_FLOAT(KBD_DTYPE(KBD__AT(kbd_rt_)));                                                 \
    KBD__RED_STORE(KBD__OR(KBD__IS_SCALAR(dst), dst, float),                                                           \
                   kbd_scope_reduce_b32_(kbd_frag_fold_b32_(KBD__AT(kbd_rt_).v, KBD_DTYPE(KBD__AT(kbd_rt_)),           \
                                                            KBD_NPT(KBD__AT(kbd_rt_)), (op), kbd_rfl_),                \
                                         (op), kbd_rfl_, KBD_SCOPE(KBD__AT(kbd_rt_)), KBD_BLOCK_THREADS, __FILE__,     \
                                         __LINE__),                                                                    \
                   kbd_rfl_);                                                                                          \
  } while (0)

/* 1 x C tile t, loaded from [start, start + C) of an n-element array: elements at positions outside
 * [0, n) become op's empty result (sum 0, max -inf, min +inf, i32 limits), so a masked tail does not
 * change the reduction. kbd_load reads those positions as 0, which is right only for sums. */
#define kbd_pad_1d(t, n, start, op)                                                                                    \
  do {                                                                                                                 \
    KBD__RED_DT_OK(KBD_DTYPE(t), op);                                                                                  \
    KBD_STATIC_ASSERT(KBD_ROWS(t) == 1, "kbd: kbd_pad_1d is for 1 x C tiles");                                         \
    const kbd_tile_shape kbd_ps_ = KBD__SHAPE(t);                                                                      \
    const long long kbd_pn_ = (long long)(n), kbd_p0_ = (long long)(start);                                            \
    for (int kbd_pl_ = 0; kbd_pl_ < KBD_LANES_HELD; ++kbd_pl_) {                                                       \
      const int kbd_pt_ = KBD__TID(t, kbd_pl_);                                                                        \
      KBD_UNROLL for (int kbd_pi_ = 0; kbd_pi_ < KBD_NPT(t); ++kbd_pi_) {                                              \
        const long long kbd_pg_ = kbd_p0_ + kbd_tile_coord(kbd_ps_, kbd_pt_, kbd_pi_).col;                             \
        if (kbd_pg_ < 0 || kbd_pg_ >= kbd_pn_) {                                                                       \
          if (KBD_DT_IS_FLOAT(KBD_DTYPE(t)))                                                                           \
            kbd_dt_store_f32(&(t).v[kbd_pl_][kbd_pi_], KBD_DTYPE(t), kbd_red_empty_f32(op));                           \
          else                                                                                                         \
            kbd_dt_store_i32(&(t).v[kbd_pl_][kbd_pi_], KBD_DTYPE(t), kbd_red_empty_i32(op));                           \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_REDUCE_H */
