/* kbd/ptx/minmax.h - the f32 max/min instructions the reductions combine with (GPU twin of cpu/minmax.h).
 *
 * max.f32 / min.f32 without .NaN and .ftz: a NaN operand is ignored, two NaNs give the canonical NaN
 * 0x7fffffff, and +0.0 > -0.0. Written as asm so that --use_fast_math (which turns fmaxf into
 * max.ftz.f32) cannot change the semantics the CPU twin promises. Cost: one FMNMX. The nvcc device pass
 * only (kbd/hw.h): kbd_fmax_ptx / kbd_fmin_ptx are KBD_HD, so every host compilation takes cpu/minmax.h.
 */
#ifndef KBD_PTX_MINMAX_H
#define KBD_PTX_MINMAX_H

#include "../config.h"

#if KBD_DEVICE_PASS

/* max.f32 d, a, b;     PTX ISA 1.0, all targets */
KBD_DEV float kbd_hw_max_f32(float a, float b) {
  float d;
  asm("max.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

/* min.f32 d, a, b;     PTX ISA 1.0, all targets */
KBD_DEV float kbd_hw_min_f32(float a, float b) {
  float d;
  asm("min.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

#endif /* KBD_DEVICE_PASS */
#endif /* KBD_PTX_MINMAX_H */
