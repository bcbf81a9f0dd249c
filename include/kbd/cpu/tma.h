/* kbd/cpu/tma.h - asynchronous bulk copies into shared memory on the CPU machine (twin of ptx/tma.h).
 *
 * A copy is checked and recorded when it is issued; its destination bytes are marked pending (written by
 * the async proxy, not yet landed), so any read of them before the copy's mbarrier phase completes - by a
 * warp that did not wait, or after a phase that completed early because no expect-tx announced the bytes -
 * is reported whatever the schedule. The data lands when a warp waits on the copy's mbarrier (the GPU may
 * deliver it any time before the phase completes; a correct kernel cannot tell), with complete-tx of the
 * copy's bytes (kbd/cpu/mbar.h, kbd_cpu_copies_deliver).
 *
 * The issue is a write of the destination by the issuing warp for the race checker: a refill of a buffer
 * some warp still reads, with no barrier wait ordering the read first, is a write-after-read race.
 */
#ifndef KBD_CPU_TMA_H
#define KBD_CPU_TMA_H

#include "mbar.h"

#if KBD_MODE_CPU

/* cp.async.bulk global -> shared, completing `bytes` on bar. */
static inline void kbd_hw_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mbar_single(w, "kbd_bulk_load", KBD_SITE_ARGS);
  if (bytes == 0 || bytes % 16 || (uintptr_t)dst % 16 || (uintptr_t)src % 16)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "kbd_bulk_load: size (%u bytes), shared destination (%p) and global source (%p) must all be "
                  "multiples of 16 (cp.async.bulk), the size non-zero",
                  bytes, dst, src);
  const size_t off = kbd_cpu_check_smem(dst, bytes, KBD_SITE_ARGS, "kbd_bulk_load destination");
  kbd_cpu_global_access(src, bytes, KBD_CPU_G_READ, KBD_SITE_ARGS, "kbd_bulk_load source");
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_bulk_load", KBD_SITE_ARGS);
  if (cta->ncopies == KBD_CPU_MAX_COPIES)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "more than %d asynchronous copies in flight in one block (CPU machine limit): wait on their "
                  "mbarriers",
                  KBD_CPU_MAX_COPIES);
  const kbd_cpu_elem el = {-1, -1, 1};
  kbd_cpu_shadow_write(w, off, bytes, KBD_CPU_SH_ASYNC | KBD_CPU_SH_PENDING, "kbd_bulk_load", el, KBD_SITE_ARGS);
  kbd_cpu_copy *c = &cta->copies[cta->ncopies++];
  c->off = off;
  c->src = src;
  c->bytes = bytes;
  c->mbar = (int)(m - cta->mbars);
  c->issuer = w->id;
  c->clk = w->clk[w->id];
  c->file = kbd_file_;
  c->line = kbd_line_;
  kbd_cpu_tick(w);
  if (m->waiters) kbd_cpu_copies_deliver(cta, m); /* someone already waits for it */
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMA_H */
