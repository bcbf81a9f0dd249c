/* kbd/cpu/regs.h - setmaxnreg on the CPU machine (twin of ptx/regs.h): no register file to resize; the
 * call is a warpgroup collective, so from per-lane or elected-lane code it is a KBD_ERR_ISSUE fault. */
#ifndef KBD_CPU_REGS_H
#define KBD_CPU_REGS_H

#include "machine.h"

#if KBD_MODE_CPU
static inline void kbd_hw_setmaxnreg(int n, int inc, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  (void)n, (void)inc;
  kbd_cpu_check_collective(w, inc ? "setmaxnreg.inc" : "setmaxnreg.dec", KBD_SITE_ARGS);
}
#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_REGS_H */
