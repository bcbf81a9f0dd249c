/* kbd/cpu/ex2.h - 2^x with subnormals flushed, in C (twin of ptx/ex2.h).
 *
 * libm's exp2f (<= 1 ulp) where the GPU's ex2.approx has <= 2 ulp, so the two agree to a few ulp, not bit for bit
 * (docs/softmax.md, "Numerics"); the flush is the GPU's exactly: a subnormal argument counts as 0 and a result below
 * 2^-126 (FLT_MIN) is +0, so no value a kernel stores differs between the CPU and the GPU by being subnormal on one
 * side only. Pure and KBD_HD: this twin serves every host compilation (-DKBD_CPU, nvcc's host pass, a plain C host
 * file); the nvcc device pass takes ptx/ex2.h.
 */
#ifndef KBD_CPU_EX2_H
#define KBD_CPU_EX2_H

#include <float.h>
#include <math.h>

#include "../config.h"

#if !KBD_DEVICE_PASS

KBD_HD float kbd_hw_ex2_ftz_f32(float a) {
  if (fabsf(a) < FLT_MIN) a = 0.0f;
  const float r = exp2f(a);
  return r < FLT_MIN ? 0.0f : r; /* r >= 0; a NaN compares false and passes */
}

#endif /* !KBD_DEVICE_PASS */
#endif /* KBD_CPU_EX2_H */
