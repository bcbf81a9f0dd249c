/* kbd/sync.h - CTA barriers and named barriers (PTX bar / barrier).
 *
 * kbd_sync()               all threads of the block        bar.sync 0;  (== __syncthreads)
 * kbd_bar_sync(id, n)      wait until n threads arrived    barrier.sync.aligned id, n;
 * kbd_bar_arrive(id, n)    count this warp, do not wait    barrier.arrive.aligned id, n;
 * kbd_syncwarp()           the 32 lanes of this warp       bar.warp.sync 0xffffffff;
 *
 * 16 barriers per block (ids 0..15; 0 is the one kbd_sync uses). n counts threads, must be a multiple of
 * 32 and is the same for every warp that uses the barrier instance. n == 0 means the whole block.
 * Cost on the GPU: ~20-30 cycles when no warp is late. In CPU mode each barrier is a scheduling point,
 * and misuse (bad id or count, mismatched counts, a warp that never arrives) fails the launch with the
 * file:line of every waiting warp.
 */
#ifndef KBD_SYNC_H
#define KBD_SYNC_H

#include "config.h"

#if KBD_MODE_CPU
#include "cpu/machine.h"
#define kbd_sync() kbd_cpu_bar(0, 0, 0, __FILE__, __LINE__)
#define kbd_bar_sync(id, nthreads) kbd_cpu_bar((id), (nthreads), 0, __FILE__, __LINE__)
#define kbd_bar_arrive(id, nthreads) kbd_cpu_bar((id), (nthreads), 1, __FILE__, __LINE__)
/* A warp's fiber runs its 32 lanes as a unit: nothing to wait for. */
#define kbd_syncwarp() ((void)0)

#elif KBD_MODE_CUDA
/* bar.sync 0; - the "memory" clobber keeps the compiler from moving shared-memory accesses across. */
KBD_DEV void kbd_sync_(void) { asm volatile("bar.sync 0;" ::: "memory"); }
/* barrier.sync.aligned a{, b}; */
KBD_DEV void kbd_bar_sync_(int id, int nthreads) {
  if (nthreads == 0)
    asm volatile("barrier.sync.aligned %0;" ::"r"(id) : "memory");
  else
    asm volatile("barrier.sync.aligned %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}
/* barrier.arrive.aligned a, b; */
KBD_DEV void kbd_bar_arrive_(int id, int nthreads) {
  asm volatile("barrier.arrive.aligned %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}
#define kbd_sync() kbd_sync_()
#define kbd_bar_sync(id, nthreads) kbd_bar_sync_((id), (nthreads))
#define kbd_bar_arrive(id, nthreads) kbd_bar_arrive_((id), (nthreads))
#define kbd_syncwarp() __syncwarp()
#endif

#endif /* KBD_SYNC_H */
