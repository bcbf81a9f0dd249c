/* kbd/ptx/bar.h - CTA barriers and named barriers (GPU twin of cpu/bar.h).
 *
 * 16 barriers per CTA (ids 0..15). Counts are in threads, a multiple of 32; 0 = the whole CTA. The
 * "memory" clobber keeps the compiler from moving shared-memory accesses across a barrier: the
 * hardware orders the participants' accesses, the clobber orders the compiler's.
 */
#ifndef KBD_PTX_BAR_H
#define KBD_PTX_BAR_H

#include "../config.h"

#if KBD_MODE_CUDA

/* barrier.sync.aligned a;  /  barrier.sync.aligned a, b;     PTX ISA 6.0, sm_30 (bar.sync: ISA 2.0) */
KBD_DEV void kbd_hw_bar_sync(int id, int nthreads, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  /* The CTA barrier (kbd_sync) with an immediate id: `bar.sync 0`, what __syncthreads emits. After
   * inlining the test folds away whenever id and count are constants. */
  if (id == 0 && nthreads == 0)
    asm volatile("bar.sync 0;" ::: "memory");
  else if (nthreads == 0)
    asm volatile("barrier.sync.aligned %0;" ::"r"(id) : "memory");
  else
    asm volatile("barrier.sync.aligned %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

/* barrier.sync.aligned a, b;     the same, for a named barrier with a thread count (b > 0): one instruction
 * even when id and count are not compile-time constants (a warp range picked at run time), where
 * kbd_hw_bar_sync would keep its three forms. */
KBD_DEV void kbd_hw_bar_sync_named(int id, int nthreads, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("barrier.sync.aligned %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

/* bar.sync 0;     the CTA barrier of kbd's CTA-wide collectives (reductions, scans): the same instruction
 * as kbd_sync - the CPU twin keeps the two apart to report a collective only part of the block reaches. */
KBD_DEV void kbd_hw_bar_sync_cta(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("bar.sync 0;" ::: "memory");
}

/* barrier.arrive.aligned a, b;     PTX ISA 6.0, sm_30 - counts the warp, does not wait */
KBD_DEV void kbd_hw_bar_arrive(int id, int nthreads, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("barrier.arrive.aligned %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

/* bar.warp.sync 0xffffffff;     PTX ISA 6.0, sm_30 */
KBD_DEV void kbd_hw_syncwarp(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("bar.warp.sync -1;" ::: "memory");
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_BAR_H */
