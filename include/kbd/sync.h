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

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#define kbd_sync() kbd_hw_bar_sync(0, 0, KBD_SITE)
#define kbd_bar_sync(id, nthreads) kbd_hw_bar_sync((id), (nthreads), KBD_SITE)
#define kbd_bar_arrive(id, nthreads) kbd_hw_bar_arrive((id), (nthreads), KBD_SITE)
#define kbd_syncwarp() kbd_hw_syncwarp(KBD_SITE)
/* fence.proxy.async: this thread's generic shared-memory writes become visible to the async proxy (TMA,
 * wgmma/tcgen05 operand reads). Needed between st.shared and an async-proxy read of the same bytes. */
#define kbd_fence_proxy_async() kbd_hw_fence_proxy_async(KBD_SITE)
#endif

#endif /* KBD_SYNC_H */
