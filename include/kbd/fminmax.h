/* kbd/fminmax.h - f32 max/min with the GPU's exact semantics on both paths.
 *
 * kbd_fmax_ptx(a, b) / kbd_fmin_ptx(a, b): PTX max.f32 / min.f32 (no .NaN): a NaN operand is ignored, two
 * NaNs give the canonical NaN 0x7fffffff, and +0.0 > -0.0 (IEEE 754-2019 maximumNumber/minimumNumber).
 * C's fmaxf/fminf may return either zero on a signed-zero tie, so the CPU side spells the rule out.
 * Used by the reductions (kbd/reduce.h) and the elementwise kbd_max / kbd_min (kbd/tile_ops.h).
 */
#ifndef KBD_FMINMAX_H
#define KBD_FMINMAX_H

#include "config.h"

#include <math.h>

#include "convert.h"
#include "ptx/minmax.h"

/* PTX max.f32: NaN ignored (both NaN -> 0x7fffffff), +0.0 > -0.0. fmaxf may return either zero. */
KBD_HD float kbd_fmax_ptx(float a, float b) {
#if KBD_DEVICE_PASS
  return kbd_ptx_max_f32(a, b);
#else
  if (a != a) return b != b ? kbd_cvt_bits_f32(0x7fffffffu) : b;
  if (b != b) return a;
  if (a == b) return signbit(a) ? b : a; /* equal: only the sign of a zero can differ; +0 wins */
  return a > b ? a : b;
#endif
}
/* PTX min.f32: NaN ignored (both NaN -> 0x7fffffff), -0.0 < +0.0. */
KBD_HD float kbd_fmin_ptx(float a, float b) {
#if KBD_DEVICE_PASS
  return kbd_ptx_min_f32(a, b);
#else
  if (a != a) return b != b ? kbd_cvt_bits_f32(0x7fffffffu) : b;
  if (b != b) return a;
  if (a == b) return signbit(a) ? a : b; /* -0 wins */
  return a < b ? a : b;
#endif
}

#endif /* KBD_FMINMAX_H */
