/* kbd/cpu/regs.h - setmaxnreg on the CPU machine (twin of ptx/regs.h).
 *
 * There is no register file to resize, but there is a budget to keep: a CTA owns KBD_REGS_PER_THREAD(threads)
 * registers per thread from its launch, .dec gives a warp's surplus back to the CTA's pool and .inc takes
 * from it, blocking while the pool is short (ptx-reference 6.6). The machine keeps that account per warp,
 * so counts that sum past the launch budget (a producer that gives back 56 - 168 while two consumers ask
 * for 232 - 168 each) leave a warp blocked in .inc, which the deadlock report names with the numbers - on
 * the GPU that kernel hangs. The call is a warp collective: from per-lane or elected-lane code it is a
 * KBD_ERR_ISSUE fault. */
#ifndef KBD_CPU_REGS_H
#define KBD_CPU_REGS_H

#include "machine.h"

#if KBD_MODE_CPU
static inline void kbd_cpu_regs_describe(const kbd_cpu_warp *w, kbd_text *out) {
  const kbd_cpu_cta *c = w->cta;
  kbd_text_append(out,
                  "setmaxnreg.inc: %u more registers for this warp (%d -> %d per thread), the CTA's pool holds %d. "
                  "The CTA was launched with %d registers per thread x %d threads = %d; the warpgroups' setmaxnreg "
                  "counts (x 128 threads each) must sum to no more",
                  (unsigned)w->wait_arg, w->nreg, w->nreg + (int)w->wait_arg / KBD_WARP_SIZE, c->reg_pool, c->reg_base,
                  c->nwarps * KBD_WARP_SIZE, c->reg_base * c->nwarps * KBD_WARP_SIZE);
}

static inline void kbd_hw_setmaxnreg(int n, int inc, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *c = w->cta;
  kbd_cpu_check_collective(w, inc ? "setmaxnreg.inc" : "setmaxnreg.dec", KBD_SITE_ARGS);
  if (inc ? n < w->nreg : n > w->nreg)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "setmaxnreg.%s %d in warp %d, which has %d registers per thread: .inc needs a count >= the current "
                  "one, .dec <= (undefined behaviour otherwise, ptx-reference 6.6)",
                  inc ? "inc" : "dec", n, w->id, w->nreg);
  if (!inc) {
    c->reg_pool += (w->nreg - n) * KBD_WARP_SIZE;
    w->nreg = n;
    kbd_cpu_wake_waiters(c, &c->reg_pool);
    return;
  }
  const int need = (n - w->nreg) * KBD_WARP_SIZE;
  while (c->reg_pool < need)
    kbd_cpu_block(&c->reg_pool, (uint32_t)need, kbd_cpu_regs_describe, KBD_SITE_ARGS);
  c->reg_pool -= need;
  w->nreg = n;
}
#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_REGS_H */
