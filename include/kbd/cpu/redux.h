/* kbd/cpu/redux.h - redux.sync on the CPU machine (twin of ptx/redux.h): a fold over the warp's 32 lanes.
 * redux.sync's result does not depend on the combination order (integers are exact; f32 max/min are
 * exact too), so a fold gives the hardware's result bit for bit. */
#ifndef KBD_CPU_REDUX_H
#define KBD_CPU_REDUX_H

#include <string.h>

#include "../hwdefs.h"
#include "../ops.h"
#include "machine.h"
#include "minmax.h"

#if KBD_MODE_CPU

static inline uint32_t kbd_hw_redux_b32(int op, const uint32_t *x, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "redux.sync", KBD_SITE_ARGS);
  uint32_t r = x[0];
  for (int l = 1; l < KBD_WARP_SIZE; ++l) {
    const uint32_t v = x[l];
    switch (op) {
    case KBD_RED_SUM: r += v; break;
    case KBD_RED_MAX: r = (int32_t)v > (int32_t)r ? v : r; break;
    case KBD_RED_MIN: r = (int32_t)v < (int32_t)r ? v : r; break;
    case KBD_RED_AND: r &= v; break;
    case KBD_RED_OR: r |= v; break;
    default: r ^= v; break;
    }
  }
  return r;
}

/* The f32 forms exist on sm_100a: the emulator has them when it mirrors Blackwell. */
#define KBD_HW_REDUX_F32 (KBD_CPU_ARCH >= 100)
static inline uint32_t kbd_hw_redux_f32(int op, const uint32_t *x, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "redux.sync", KBD_SITE_ARGS);
  float r;
  memcpy(&r, x, 4);
  for (int l = 1; l < KBD_WARP_SIZE; ++l) {
    float v;
    memcpy(&v, x + l, 4);
    r = op == KBD_RED_MAX ? kbd_hw_max_f32(r, v) : kbd_hw_min_f32(r, v);
  }
  uint32_t b;
  memcpy(&b, &r, 4);
  return b;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_REDUX_H */
