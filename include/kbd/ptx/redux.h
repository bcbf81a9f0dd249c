/* kbd/ptx/redux.h - redux.sync (warp-wide reduction in one instruction), one wrapper per PTX form.
 *
 * redux.sync combines one 32-bit value from each lane in membermask and gives every one of them the
 * result: integer forms sm_80+, the f32 min/max forms only on the sm_100 and sm_103 arch- and
 * family-specific targets (below). Integer results are exact (add wraps mod 2^32), so the combination
 * order does not matter and the CPU emulation is a plain fold. f32 min/max without .NaN ignore NaN inputs
 * (all NaN -> canonical NaN) and order +0.0 > -0.0, i.e. PTX max.f32/min.f32.
 * Cost: one REDUX (SASS) instead of 5 SHFL + 5 ALU ops of a butterfly.
 *
 * Only the nvcc device pass sees the wrappers. The f32 forms exist only where ptxas accepts them
 * (KBD_PTX_REDUX_F32, and nvcc's host pass, which only parses device code); a device pass for any other
 * arch fails to compile with an error naming the requirement
 * (kbd_ptx_redux_sync_max_f32_requires_sm_100a_100f_103a_or_103f). The arch-neutral kbd reductions
 * (kbd/reduce.h) pick them automatically where they exist and use the butterfly elsewhere.
 */
#ifndef KBD_PTX_REDUX_H
#define KBD_PTX_REDUX_H

#include "../config.h"
#include "../hwdefs.h"
#include "../ops.h"

/* Where redux.sync.{max,min}.f32 assembles. ptxas 13.0 accepts it for sm_100a, sm_100f, sm_103a and sm_103f
 * and rejects every other target it knows ("Instruction 'redux.f32' not supported on .target"): sm_80,
 * sm_89, sm_90, sm_90a, sm_100, sm_103, sm_110/a/f, sm_120/a/f, sm_121a/f. nvcc marks exactly the accepted
 * targets with __CUDA_ARCH_FAMILY_SPECIFIC__ 1000 or 1030 (an `a` and an `f` target both define it; the
 * plain sm_100 / sm_103 do not, sm_110 and sm_12x have other values). __CUDA_ARCH_FEAT_SM100_ALL alone
 * (KBD_SM100A) would miss sm_100f and both sm_103 targets. */
#if KBD_DEVICE_PASS && defined(__CUDA_ARCH_FAMILY_SPECIFIC__) &&                                                       \
    (__CUDA_ARCH_FAMILY_SPECIFIC__ == 1000 || __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030)
#define KBD_PTX_REDUX_F32 1
#else
#define KBD_PTX_REDUX_F32 0
#endif

#if KBD_DEVICE_PASS

/* redux.sync.add.s32 d, a, membermask; */
KBD_DEV int32_t kbd_ptx_redux_sync_add_s32(int32_t a, uint32_t membermask) {
  int32_t d;
  asm volatile("redux.sync.add.s32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}
/* redux.sync.min.s32 d, a, membermask; */
KBD_DEV int32_t kbd_ptx_redux_sync_min_s32(int32_t a, uint32_t membermask) {
  int32_t d;
  asm volatile("redux.sync.min.s32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}
/* redux.sync.max.s32 d, a, membermask; */
KBD_DEV int32_t kbd_ptx_redux_sync_max_s32(int32_t a, uint32_t membermask) {
  int32_t d;
  asm volatile("redux.sync.max.s32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}
/* redux.sync.and.b32 d, a, membermask; */
KBD_DEV uint32_t kbd_ptx_redux_sync_and_b32(uint32_t a, uint32_t membermask) {
  uint32_t d;
  asm volatile("redux.sync.and.b32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}
/* redux.sync.or.b32 d, a, membermask; */
KBD_DEV uint32_t kbd_ptx_redux_sync_or_b32(uint32_t a, uint32_t membermask) {
  uint32_t d;
  asm volatile("redux.sync.or.b32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}
/* redux.sync.xor.b32 d, a, membermask; */
KBD_DEV uint32_t kbd_ptx_redux_sync_xor_b32(uint32_t a, uint32_t membermask) {
  uint32_t d;
  asm volatile("redux.sync.xor.b32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(membermask));
  return d;
}

#endif /* KBD_DEVICE_PASS */

/* The f32 forms are also declared in nvcc's host pass (which parses device code but never generates
 * it), so that a build for those targets compiles; only a device pass for another arch rejects them. */
#if KBD_PTX_REDUX_F32 || (KBD_MODE_CUDA && !KBD_DEVICE_PASS)
/* redux.sync.max.f32 d, a, membermask;   PTX ISA 8.6, sm_100a; PTX ISA 8.8 (where those targets begin),
 * sm_100f, sm_103a, sm_103f. NaN ignored, +0.0 > -0.0 */
KBD_DEV float kbd_ptx_redux_sync_max_f32(float a, uint32_t membermask) {
  float d;
  asm volatile("redux.sync.max.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "r"(membermask));
  return d;
}
/* redux.sync.min.f32 d, a, membermask;   same targets; NaN ignored, -0.0 < +0.0 */
KBD_DEV float kbd_ptx_redux_sync_min_f32(float a, uint32_t membermask) {
  float d;
  asm volatile("redux.sync.min.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "r"(membermask));
  return d;
}
#elif KBD_DEVICE_PASS
/* A target without the f32 forms: using them is a build error, never a silent fallback. The undefined
 * identifier in the expansion is the error message. */
#define kbd_ptx_redux_sync_max_f32(a, m) kbd_ptx_redux_sync_max_f32_requires_sm_100a_100f_103a_or_103f(a, m)
#define kbd_ptx_redux_sync_min_f32(a, m) kbd_ptx_redux_sync_min_f32_requires_sm_100a_100f_103a_or_103f(a, m)
#endif

#if KBD_MODE_CUDA
/* op (KBD_RED_SUM/MAX/MIN signed, AND/OR/XOR) over the warp's 32 lanes in one redux.sync; every lane gets
 * the result (twin of cpu/redux.h). x: the thread's own value. Integer results are exact, so the
 * hardware's combination order cannot matter. */
KBD_DEV uint32_t kbd_hw_redux_b32(int op, const uint32_t *x, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_DEVICE_PASS
  switch (op) {
  case KBD_RED_SUM: return (uint32_t)kbd_ptx_redux_sync_add_s32((int32_t)x[0], KBD_SHFL_FULL);
  case KBD_RED_MAX: return (uint32_t)kbd_ptx_redux_sync_max_s32((int32_t)x[0], KBD_SHFL_FULL);
  case KBD_RED_MIN: return (uint32_t)kbd_ptx_redux_sync_min_s32((int32_t)x[0], KBD_SHFL_FULL);
  case KBD_RED_AND: return kbd_ptx_redux_sync_and_b32(x[0], KBD_SHFL_FULL);
  case KBD_RED_OR: return kbd_ptx_redux_sync_or_b32(x[0], KBD_SHFL_FULL);
  default: return kbd_ptx_redux_sync_xor_b32(x[0], KBD_SHFL_FULL);
  }
#else
  (void)op; /* nvcc host pass: never executed */
  return x[0];
#endif
}

/* f32 max/min (op KBD_RED_MAX / KBD_RED_MIN, values as bits) in one redux.sync: only where the target has
 * it (KBD_HW_REDUX_F32), so that callers choose at compile time and other targets keep the butterfly. */
#if KBD_PTX_REDUX_F32
#define KBD_HW_REDUX_F32 1
KBD_DEV uint32_t kbd_hw_redux_f32(int op, const uint32_t *x, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  float v, r;
  memcpy(&v, x, 4);
  r = op == KBD_RED_MAX ? kbd_ptx_redux_sync_max_f32(v, KBD_SHFL_FULL) : kbd_ptx_redux_sync_min_f32(v, KBD_SHFL_FULL);
  uint32_t b;
  memcpy(&b, &r, 4);
  return b;
}
#else
#define KBD_HW_REDUX_F32 0
#endif
#endif /* KBD_MODE_CUDA */

#endif /* KBD_PTX_REDUX_H */
