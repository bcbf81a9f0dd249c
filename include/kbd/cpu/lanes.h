/* kbd/cpu/lanes.h - per-lane and elected-lane code on the CPU machine (twin of ptx/lanes.h).
 *
 * A warp's fiber runs warp-uniform code once for its 32 lanes. KBD_HW_FOR_LANES loops over the 32 lanes;
 * KBD_HW_ELECT_ONE runs its body once (lane 0's, as elect.sync's choice is deterministic but
 * unspecified). Both mark the warp as inside a region until the region's scope ends - a cleanup
 * attribute, so `break`, `continue` and `return` out of the body end it too - and the machine uses the
 * mark to keep issue counts equal to the GPU's: a warp collective (barrier, shuffle, vote, elect) inside
 * either region is a KBD_ERR_ISSUE fault, and so is a per-thread atomic outside both.
 */
#ifndef KBD_CPU_LANES_H
#define KBD_CPU_LANES_H

#include "machine.h"

#if KBD_MODE_CPU

static inline int kbd_cpu_lanes_enter(const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  if (!w->lanes_depth++ && !w->elect_depth) {
    w->region_file = file;
    w->region_line = line;
  }
  return 0;
}
static inline void kbd_cpu_lanes_cleanup(int *unused) {
  (void)unused;
  kbd_cpu_cur->lanes_depth--;
}
static inline int kbd_cpu_elect_enter(const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_check_collective(w, "elect.sync (KBD_ELECT_ONE)", file, line);
  w->elect_depth++;
  w->region_file = file;
  w->region_line = line;
  return 1;
}
static inline void kbd_cpu_elect_leave(void) { kbd_cpu_cur->elect_depth--; }
static inline void kbd_cpu_elect_cleanup(int *unused) {
  (void)unused;
  kbd_cpu_elect_leave();
}

#define KBD_HW_FOR_LANES(lane)                                                                                         \
  for (int lane = 0,                                                                                                   \
           kbd_lanes_mark_ __attribute__((cleanup(kbd_cpu_lanes_cleanup))) = kbd_cpu_lanes_enter(__FILE__, __LINE__);  \
       lane < KBD_WARP_SIZE; ++lane, (void)kbd_lanes_mark_)

#define KBD_HW_ELECT_ONE                                                                                               \
  for (int kbd_elect_once_ __attribute__((cleanup(kbd_cpu_elect_cleanup))) = kbd_cpu_elect_enter(__FILE__, __LINE__);  \
       kbd_elect_once_; kbd_elect_once_ = 0)

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_LANES_H */
