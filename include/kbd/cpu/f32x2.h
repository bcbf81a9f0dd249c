/* kbd/cpu/f32x2.h - packed f32 arithmetic in C (twin of ptx/f32x2.h; kbd/f32x2.h).
 *
 * Each lane of fma/mul/add.rn.f32x2 is the .f32 instruction with the same rounding, so the twin is two fmaf, two
 * products, two sums: bit for bit the GPU's result, subnormals kept like the GPU's non-.ftz forms. Each operation is a
 * statement of its own, so no compiler contracts a product of this file into a later sum. Pure and KBD_HD: serves every
 * host compilation (-DKBD_CPU, nvcc's host pass, a plain C host file); the nvcc device pass takes ptx/f32x2.h.
 */
#ifndef KBD_CPU_F32X2_H
#define KBD_CPU_F32X2_H

#include <math.h>

#include "../config.h"

#if !KBD_DEVICE_PASS

KBD_HD void kbd_hw_fma_rn_f32x2(float d[2], const float a[2], const float b[2], const float c[2]) {
  const float d0 = fmaf(a[0], b[0], c[0]);
  const float d1 = fmaf(a[1], b[1], c[1]);
  d[0] = d0, d[1] = d1; /* d may alias an operand */
}

KBD_HD void kbd_hw_mul_rn_f32x2(float d[2], const float a[2], const float b[2]) {
  const float d0 = a[0] * b[0];
  const float d1 = a[1] * b[1];
  d[0] = d0, d[1] = d1;
}

KBD_HD void kbd_hw_add_rn_f32x2(float d[2], const float a[2], const float b[2]) {
  const float d0 = a[0] + b[0];
  const float d1 = a[1] + b[1];
  d[0] = d0, d[1] = d1;
}

#endif /* !KBD_DEVICE_PASS */
#endif /* KBD_CPU_F32X2_H */
