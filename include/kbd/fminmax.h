/* kbd/fminmax.h - f32 max/min with the GPU's exact semantics on both paths.
 *
 * kbd_fmax_ptx(a, b) / kbd_fmin_ptx(a, b): PTX max.f32 / min.f32 (no .NaN): a NaN operand is ignored, two
 * NaNs give the canonical NaN 0x7fffffff, and +0.0 > -0.0 (IEEE 754-2019 maximumNumber/minimumNumber).
 * The instruction in the nvcc device pass (kbd/ptx/minmax.h), the rule spelled out in C everywhere else
 * (kbd/cpu/minmax.h: C's fmaxf/fminf may return either zero on a signed-zero tie), through kbd/hw.h.
 * Used by the reductions (kbd/reduce.h) and the elementwise kbd_max / kbd_min (kbd/tile_ops.h).
 */
#ifndef KBD_FMINMAX_H
#define KBD_FMINMAX_H

#include "config.h"

#include <math.h>

#include "convert.h"
#include "hw.h"

/* PTX max.f32: NaN ignored (both NaN -> 0x7fffffff), +0.0 > -0.0. */
KBD_HD float kbd_fmax_ptx(float a, float b) { return kbd_hw_max_f32(a, b); }
/* PTX min.f32: NaN ignored (both NaN -> 0x7fffffff), -0.0 < +0.0. */
KBD_HD float kbd_fmin_ptx(float a, float b) { return kbd_hw_min_f32(a, b); }

#endif /* KBD_FMINMAX_H */
