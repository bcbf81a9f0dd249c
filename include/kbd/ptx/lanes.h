/* kbd/ptx/lanes.h - per-lane and elected-lane code (GPU twin of cpu/lanes.h).
 *
 * Kernel code is warp-uniform by default: every thread runs it, with the same values in all 32 lanes.
 * KBD_HW_FOR_LANES(lane) { ... } is the thread's own lane (the loop runs once; nvcc removes it).
 * KBD_HW_ELECT_ONE { ... } runs in exactly one lane of the warp: elect.sync picks it. */
#ifndef KBD_PTX_LANES_H
#define KBD_PTX_LANES_H

#include "../config.h"

#if KBD_MODE_CUDA

#define KBD_HW_FOR_LANES(lane)                                                                                         \
  for (int lane = (int)(threadIdx.x & 31u), kbd_lane_once_ = 1; kbd_lane_once_; kbd_lane_once_ = 0)

/* elect.sync _|p, 0xffffffff;     PTX ISA 8.0, sm_90 - one lane of the full warp gets p = true. */
KBD_DEV int kbd_ptx_elect_sync_full(void) {
  unsigned p;
  asm volatile("{\n\t.reg .pred P;\n\telect.sync _|P, 0xffffffff;\n\tselp.u32 %0, 1, 0, P;\n\t}" : "=r"(p));
  return (int)p;
}
#define KBD_HW_ELECT_ONE for (int kbd_elect_once_ = kbd_ptx_elect_sync_full(); kbd_elect_once_; kbd_elect_once_ = 0)

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_LANES_H */
