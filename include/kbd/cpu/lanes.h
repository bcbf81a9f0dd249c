/* kbd/cpu/lanes.h - per-lane and elected-lane code on the CPU machine (twin of ptx/lanes.h).
 *
 * A warp's fiber runs warp-uniform code once for its 32 lanes. KBD_HW_FOR_LANES loops over the 32 lanes;
 * KBD_HW_ELECT_ONE runs its body once (lane 0's, as elect.sync's choice is deterministic but
 * unspecified). Both mark the warp as inside a region until the region's scope ends - a cleanup
 * attribute, so `break`, `continue` and `return` out of the body end it too - and the machine uses the
 * mark to keep issue counts equal to the GPU's: a warp collective (barrier, shuffle, vote, elect) inside
 * either region is a KBD_ERR_ISSUE fault, and so is a per-thread atomic outside both
 * (docs/execution-model.md).
 *
 * Control flow keeps the GPU's meaning. On the GPU the per-lane body is a one-pass loop run by each thread
 * for its own lane, so `break` and `continue` end THAT lane's body and the other lanes still run theirs:
 * here the body sits in an inner one-pass loop, which `break` and `continue` leave, and the outer loop goes
 * on with the next lane. `return` (or `goto` out) cannot be given that meaning - on the GPU only the lanes
 * that take it leave - so it is accepted only in lane 0's iteration, where it is the whole warp's return
 * when its condition is warp-uniform (the only case a warp can agree on), and is a KBD_ERR_ISSUE fault from
 * a later lane: lanes 0..k-1 did not leave, so the GPU's warp would be split. Likewise `return` out of
 * KBD_ELECT_ONE leaves with the elected lane only on the GPU, and is a fault here.
 */
#ifndef KBD_CPU_LANES_H
#define KBD_CPU_LANES_H

#include "machine.h"

#if KBD_MODE_CPU

static inline int kbd_cpu_lanes_enter(const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  /* On the GPU an inner KBD_FOR_LANES is one more one-pass loop over the thread's own lane; here it would
   * run 32 lanes for each of the outer loop's 32. Inside KBD_ELECT_ONE only the elected thread runs it. */
  if (KBD_UNLIKELY(w->lanes_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, file, line,
                  "KBD_FOR_LANES inside per-lane code (KBD_FOR_LANES entered at %s:%d): on the GPU each thread runs "
                  "it once, for its own lane; here it would run 32 times for each of the outer loop's lanes. Use the "
                  "outer loop's lane",
                  w->region_file, w->region_line);
  if (KBD_UNLIKELY(w->elect_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, file, line,
                  "KBD_FOR_LANES inside elected-lane code (KBD_ELECT_ONE entered at %s:%d): on the GPU only the "
                  "elected lane runs it (once, for its own lane); here it would run for all 32 lanes",
                  w->region_file, w->region_line);
  w->lanes_depth++;
  w->region_file = file;
  w->region_line = line;
  return 0;
}
/* `at` is the lane whose iteration was running when the loop's scope ended: 32 after the last lane. */
static inline void kbd_cpu_lanes_cleanup(int *at) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  w->lanes_depth--;
  if (KBD_UNLIKELY(*at > 0 && *at < KBD_WARP_SIZE))
    kbd_cpu_fault(KBD_ERR_ISSUE, w->region_file, w->region_line,
                  "return (or goto) out of KBD_FOR_LANES in lane %d's iteration, after lanes 0..%d went on: on the "
                  "GPU only the lanes that return leave and the others run on, so the warp would be split. Decide "
                  "in warp-uniform code before the loop, or set a per-lane flag and return after the loop",
                  *at, *at - 1);
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
/* `open` is still 1 when the region's scope ended before its one pass did: a return or goto out. */
static inline void kbd_cpu_elect_cleanup(int *open) {
  kbd_cpu_elect_leave();
  if (KBD_UNLIKELY(*open)) {
    const kbd_cpu_warp *w = kbd_cpu_cur;
    kbd_cpu_fault(KBD_ERR_ISSUE, w->region_file, w->region_line,
                  "return (or goto) out of KBD_ELECT_ONE: on the GPU only the elected lane leaves and the other 31 "
                  "lanes run on after the region, so the warp would be split. Leave the region first (set a flag "
                  "inside, test it after)");
  }
}

/* The outer loop counts lanes and holds the region mark (its cleanup runs however the loop ends); the inner
 * one-pass loop is the lane's body, which `break` and `continue` leave, as they leave the GPU's. */
#define KBD_HW_FOR_LANES(lane)                                                                                         \
  for (int lane = 0,                                                                                                   \
           kbd_lanes_at_ __attribute__((cleanup(kbd_cpu_lanes_cleanup))) = kbd_cpu_lanes_enter(__FILE__, __LINE__);    \
       lane < KBD_WARP_SIZE; kbd_lanes_at_ = ++lane)                                                                   \
    for (int kbd_lane_body_ = 1; kbd_lane_body_; kbd_lane_body_ = 0)

#define KBD_HW_ELECT_ONE                                                                                               \
  for (int kbd_elect_open_ __attribute__((cleanup(kbd_cpu_elect_cleanup))) = kbd_cpu_elect_enter(__FILE__, __LINE__);  \
       kbd_elect_open_; kbd_elect_open_ = 0)                                                                           \
    for (int kbd_elect_body_ = 1; kbd_elect_body_; kbd_elect_body_ = 0)

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_LANES_H */
