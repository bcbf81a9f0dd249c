/* kbd/ptx/ex2.h - the exponential of the softmax: 2^x with subnormals flushed (GPU twin of cpu/ex2.h).
 *
 * ex2.approx.ftz.f32 is one MUFU.EX2. Without .ftz (what exp2f compiles to) ptxas wraps it in a fix-up for
 * subnormal results: a compare and two predicated multiplies per element, more than the exponential itself, in the
 * loop that bounds an attention kernel's softmax. Results below 2^-126 become +0 (inputs of that size count as 0).
 * Written as asm so that the flags of the build (--use_fast_math, -ftz) cannot change which form runs. The nvcc
 * device pass only (kbd/hw.h); kbd/softmax.h's per-element math is KBD_HD, so every host compilation takes
 * cpu/ex2.h.
 */
#ifndef KBD_PTX_EX2_H
#define KBD_PTX_EX2_H

#include "../config.h"

#if KBD_DEVICE_PASS

/* ex2.approx.ftz.f32 d, a;     PTX ISA 1.0, all targets - 2^a, max error 2 ulp (PTX ISA: ex2), subnormal in/out
 * flushed to +0; ex2(-inf) = +0, ex2(+inf) = +inf, NaN gives NaN */
KBD_DEV float kbd_hw_ex2_ftz_f32(float a) {
  float d;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

#endif /* KBD_DEVICE_PASS */
#endif /* KBD_PTX_EX2_H */
