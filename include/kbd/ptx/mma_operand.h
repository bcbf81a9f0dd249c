/* kbd/ptx/mma_operand.h - the targets' guards of the MMA twins and the shared addresses their operands hold (GPU twin
 * of cpu/mma_operand.h; the family: ptx/mma.h). */
#ifndef KBD_PTX_MMA_OPERAND_H
#define KBD_PTX_MMA_OPERAND_H

#include "../config.h"
#include "../mma_desc.h"
#include "mbar.h"

#if KBD_MODE_CUDA

#if KBD_DEVICE_PASS && !KBD_SM90A
/* Never defined: a wgmma twin reached on a target without wgmma is a build error naming the requirement. */
KBD_EXTERN_C __device__ void kbd_ptx_wgmma_requires_sm_90a(void);
#define KBD__PTX_NO_WGMMA() kbd_ptx_wgmma_requires_sm_90a()
#else
#define KBD__PTX_NO_WGMMA() ((void)0)
#endif
#if KBD_DEVICE_PASS && !KBD_SM100A
KBD_EXTERN_C __device__ void kbd_ptx_tcgen05_requires_sm_100a(void);
#define KBD__PTX_NO_TCGEN05() kbd_ptx_tcgen05_requires_sm_100a()
#else
#define KBD__PTX_NO_TCGEN05() ((void)0)
#endif

/* cvta.to.shared: the 32-bit shared::cta address of a generic pointer into shared memory, what MMA operand
 * descriptors and the tcgen05 slot / mbarrier operands hold. */
KBD_DEV uint32_t kbd_hw_smem_addr(const void *p, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_ptx_smem_u32(p);
}

/* A caller's MMA descriptor that broke a rule of kbd_mma_desc_tile_check (kbd_mma_ring, kbd_mma_issue_commit_by_desc):
 * only the CPU machine checks (a re-encode and a compare per operand and k-block would cost the loop what the
 * descriptor forms save), so the GPU twin is never reached with a rule and reports nothing. */
KBD_DEV void kbd_hw_mma_desc_fault(const char *which, uint64_t d, const char *why, KBD_SITE_PARAMS) {
  (void)which, (void)d, (void)why;
  KBD_SITE_UNUSED;
}

/* The columns col0.. of a vcols-wide view of an acols-column accumulator (kbd_acc_load / kbd_acc_store): the CPU
 * machine reports a col0 outside 0..acols-vcols or not a multiple of 8; the GPU checks nothing (a run-time
 * test in every epilogue chunk would cost instructions for a rule the CPU build already enforces). */
KBD_DEV void kbd_hw_acc_cols(int col0, int vcols, int acols, KBD_SITE_PARAMS) {
  (void)col0, (void)vcols, (void)acols;
  KBD_SITE_UNUSED;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_OPERAND_H */
