/* kbd/cpu/minmax.h - PTX max.f32 / min.f32 in C (twin of ptx/minmax.h).
 *
 * The PTX rule (no .NaN): a NaN operand is ignored, two NaNs give the canonical NaN 0x7fffffff, and
 * +0.0 > -0.0 (IEEE 754-2019 maximumNumber / minimumNumber). C's fmaxf / fminf may return either zero on a
 * signed-zero tie, so the rule is spelled out. Pure and KBD_HD, so this twin serves every host compilation
 * (-DKBD_CPU, nvcc's host pass, a plain C host file); the nvcc device pass takes ptx/minmax.h.
 */
#ifndef KBD_CPU_MINMAX_H
#define KBD_CPU_MINMAX_H

#include <math.h>

#include "../config.h"
#include "../convert_sw.h"

#if !KBD_DEVICE_PASS

KBD_HD float kbd_hw_max_f32(float a, float b) {
  if (a != a) return b != b ? kbd_cvt_bits_f32(0x7fffffffu) : b;
  if (b != b) return a;
  if (a == b) return signbit(a) ? b : a; /* equal: only the sign of a zero can differ; +0 wins */
  return a > b ? a : b;
}

KBD_HD float kbd_hw_min_f32(float a, float b) {
  if (a != a) return b != b ? kbd_cvt_bits_f32(0x7fffffffu) : b;
  if (b != b) return a;
  if (a == b) return signbit(a) ? a : b; /* -0 wins */
  return a < b ? a : b;
}

#endif /* !KBD_DEVICE_PASS */
#endif /* KBD_CPU_MINMAX_H */
