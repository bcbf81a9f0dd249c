/* kbd/ptx/minmax.h - the f32 max/min instructions the reductions combine with.
 *
 * max.f32 d, a, b;  /  min.f32 d, a, b;   (PTX ISA "Floating Point Instructions: max/min", no .NaN,
 * no .ftz): a NaN operand is ignored, two NaNs give the canonical NaN 0x7fffffff, and +0.0 > -0.0.
 * Written as asm so that --use_fast_math (which turns fmaxf into max.ftz.f32) cannot change the
 * semantics the CPU emulation promises. Cost: one FMNMX. Device pass only.
 */
#ifndef KBD_PTX_MINMAX_H
#define KBD_PTX_MINMAX_H

#include "../config.h"

#if KBD_DEVICE_PASS
/* max.f32 d, a, b; */
KBD_DEV float kbd_ptx_max_f32(float a, float b) {
  float d;
  asm("max.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
/* min.f32 d, a, b; */
KBD_DEV float kbd_ptx_min_f32(float a, float b) {
  float d;
  asm("min.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
#endif

#endif /* KBD_PTX_MINMAX_H */
