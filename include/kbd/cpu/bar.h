/* kbd/cpu/bar.h - CTA barriers and named barriers on the CPU machine (twin of ptx/bar.h).
 *
 * The PTX counting rules (kbd/cpu/wait.h): per-warp arrival, instance reset, mismatched counts and
 * whole-block barriers after an exit reported; each barrier is a release by every arriving warp and an
 * acquire by every waiting warp for the race checker, and a scheduling point. kbd's CTA-wide collectives
 * take barrier 0 through kbd_hw_bar_sync_cta, which the machine keeps apart from kbd_sync's.
 */
#ifndef KBD_CPU_BAR_H
#define KBD_CPU_BAR_H

#include "machine.h"

#if KBD_MODE_CPU

static inline void kbd_hw_bar_sync(int id, int nthreads, KBD_SITE_PARAMS) {
  kbd_cpu_bar(id, nthreads, 0, 0, KBD_SITE_ARGS);
}
static inline void kbd_hw_bar_sync_named(int id, int nthreads, KBD_SITE_PARAMS) {
  kbd_cpu_bar(id, nthreads, 0, 0, KBD_SITE_ARGS);
}
static inline void kbd_hw_bar_arrive(int id, int nthreads, KBD_SITE_PARAMS) {
  kbd_cpu_bar(id, nthreads, 1, 0, KBD_SITE_ARGS);
}
/* The CTA barrier of a kbd collective: barrier 0, the whole block, and no kbd_sync may join the instance
 * (kbd/cpu/wait.h says why). */
static inline void kbd_hw_bar_sync_cta(KBD_SITE_PARAMS) { kbd_cpu_bar(0, 0, 0, 1, KBD_SITE_ARGS); }
/* A warp's fiber runs its 32 lanes as a unit: nothing to wait for, but it is a warp collective. */
static inline void kbd_hw_syncwarp(KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "kbd_syncwarp", KBD_SITE_ARGS);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_BAR_H */
