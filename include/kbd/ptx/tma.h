/* kbd/ptx/tma.h - asynchronous bulk copies (GPU twin of cpu/tma.h).
 *
 * cp.async.bulk runs on the TMA unit: the issuing thread hands over a descriptor and goes on; the data
 * lands in shared memory through the async proxy, and the copy's completion performs complete-tx of its
 * size on the mbarrier (.release at cluster scope), which is how consumers learn it has landed.
 */
#ifndef KBD_PTX_TMA_H
#define KBD_PTX_TMA_H

#include "../config.h"
#include "mbar.h"

#if KBD_MODE_CUDA

/* cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar];
 *     PTX ISA 8.6, sm_90 (the .shared::cta destination; .shared::cluster since ISA 8.0). size, dst and src
 *     multiples of 16. */
KBD_DEV void kbd_hw_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   kbd_ptx_smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(kbd_ptx_smem_u32(bar))
               : "memory");
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_TMA_H */
