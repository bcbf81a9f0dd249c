/* kbd/f32x2.h - packed f32 arithmetic: two lanes per instruction on sm_100a (docs/attention.md, "FA4's exponential").
 *
 *   KBD_F32X2_OK                 1 where the code being compiled has packed f32x2 math: an sm_100a device pass, the
 *                                CPU machine emulating sm_100a (KBD_CPU_ARCH 100), a host pass; 0 on sm_90a
 *   kbd_f32x2_fma(d, a, b, c)    d[k] = fmaf(a[k], b[k], c[k]) for k = 0, 1 (float[2] each; d may be an operand)
 *   kbd_f32x2_mul(d, a, b)       d[k] = a[k] * b[k]
 *   kbd_f32x2_add(d, a, b)       d[k] = a[k] + b[k]
 *
 * Each is one fma/mul/add.rn.f32x2 (FFMA2 / FMUL2 / FADD2) on sm_100a, and each lane is bit for bit the scalar
 * instruction of the same rounding, so the CPU machine computes the same bits with two fmaf (kbd/cpu/f32x2.h). They
 * halve the issue slots of f32 math, not its FMA-pipe time (ptx/f32x2.h). sm_90a has no packed f32 form: a call there
 * (or with -DKBD_CPU_ARCH=90) is a compile-time error naming the rule. Code meant for both archs (kbd/softmax.h's
 * poly update, kbd/exp2_poly.h) uses the internal kbd_f32x2_*_any_, which pack where they can and compute the same
 * bits with scalar instructions where they cannot.
 */
#ifndef KBD_F32X2_H
#define KBD_F32X2_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA

#include "hw.h"

#if KBD_MODE_CPU
#define KBD_F32X2_OK (KBD_CPU_ARCH == 100)
#elif KBD_DEVICE_PASS
#define KBD_F32X2_OK KBD_SM100A
#else
#define KBD_F32X2_OK 1 /* nvcc's host pass: no target arch; the device pass decides */
#endif

#define KBD__F32X2_RULE_ARCH(call)                                                                                     \
  "kbd: " call ": packed f32x2 arithmetic (fma/mul/add.rn.f32x2, PTX ISA 8.6) is sm_100a only; sm_90a has no "         \
  "packed f32 form: compute each lane with fmaf there"

#define kbd_f32x2_fma(d, a, b, c)                                                                                      \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_F32X2_OK, KBD__F32X2_RULE_ARCH("kbd_f32x2_fma"));                                            \
    kbd_hw_fma_rn_f32x2((d), (a), (b), (c));                                                                           \
  } while (0)
#define kbd_f32x2_mul(d, a, b)                                                                                         \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_F32X2_OK, KBD__F32X2_RULE_ARCH("kbd_f32x2_mul"));                                            \
    kbd_hw_mul_rn_f32x2((d), (a), (b));                                                                                \
  } while (0)
#define kbd_f32x2_add(d, a, b)                                                                                         \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_F32X2_OK, KBD__F32X2_RULE_ARCH("kbd_f32x2_add"));                                            \
    kbd_hw_add_rn_f32x2((d), (a), (b));                                                                                \
  } while (0)

/* Packed where the target has it, else two scalar instructions of the same rounding: the same bits on every arch.
 * The scalar device forms are the _rn intrinsics, which nvcc never contracts into a neighbouring add (a plain product
 * could become an FFMA on sm_90a and differ from sm_100a's FMUL2 and from the CPU). */
#if KBD_DEVICE_PASS && !KBD_SM100A
KBD_HD void kbd_f32x2_fma_any_(float d[2], const float a[2], const float b[2], const float c[2]) {
  const float d0 = __fmaf_rn(a[0], b[0], c[0]), d1 = __fmaf_rn(a[1], b[1], c[1]);
  d[0] = d0, d[1] = d1;
}
KBD_HD void kbd_f32x2_mul_any_(float d[2], const float a[2], const float b[2]) {
  const float d0 = __fmul_rn(a[0], b[0]), d1 = __fmul_rn(a[1], b[1]);
  d[0] = d0, d[1] = d1;
}
KBD_HD void kbd_f32x2_add_any_(float d[2], const float a[2], const float b[2]) {
  const float d0 = __fadd_rn(a[0], b[0]), d1 = __fadd_rn(a[1], b[1]);
  d[0] = d0, d[1] = d1;
}
#else
KBD_HD void kbd_f32x2_fma_any_(float d[2], const float a[2], const float b[2], const float c[2]) {
  kbd_hw_fma_rn_f32x2(d, a, b, c);
}
KBD_HD void kbd_f32x2_mul_any_(float d[2], const float a[2], const float b[2]) { kbd_hw_mul_rn_f32x2(d, a, b); }
KBD_HD void kbd_f32x2_add_any_(float d[2], const float a[2], const float b[2]) { kbd_hw_add_rn_f32x2(d, a, b); }
#endif

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_F32X2_H */
