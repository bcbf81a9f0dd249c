/* kbd/ptx/mma_umma.h - sm_100a tcgen05.mma and its commit to an mbarrier (GPU twin of cpu/mma_umma.h; the family:
 * ptx/mma.h). */
#ifndef KBD_PTX_MMA_UMMA_H
#define KBD_PTX_MMA_UMMA_H

#include "tmem_alloc.h"

#if KBD_MODE_CUDA

/* tcgen05.mma.cta_group::1.kind::{f16,tf32,f8f6f4,i8} [dtmem], adesc, bdesc, idesc, enable-input-d;
 *     PTX ISA 8.6, sm_100a (kind::i8: sm_100a/sm_110a only). One thread. The instruction descriptor is a
 * register operand, so only the kind is switched on. accumulate 0: D = A*B (enable-input-d false). */
KBD_DEV void kbd_hw_umma(uint32_t dtmem, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc, int accumulate,
                         KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_KINDS("1")
#else
  (void)dtmem, (void)kind, (void)idesc, (void)adesc, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];     PTX ISA 8.6, sm_100a.
 * One thread: the mbarrier gets one arrive (cluster scope) once every earlier tcgen05.mma of this thread is
 * complete; implies fence::before_thread_sync for them (§5.8). A shared::cta address is a valid
 * shared::cluster address of the executing CTA. */
KBD_DEV void kbd_hw_umma_commit(uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(kbd_ptx_smem_u32(bar))
      : "memory");
#else
  (void)bar;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask;
 * PTX ISA 8.6, sm_100a (ptx-reference 5.5). The same completion, one arrive on the mbarrier at bar's offset in
 * every CTA of the cluster whose bit (rank) is set in the 16-bit mask: an MMA warp frees a stage that peers
 * multicast into, in all of them at once. */
KBD_DEV void kbd_hw_umma_commit_mc(uint64_t *bar, uint16_t mask, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_COMMIT_MC_ASM("1", kbd_ptx_smem_u32(bar));
#else
  (void)bar, (void)mask;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* kbd_hw_umma_commit / kbd_hw_umma_commit_mc of the barrier at 32-bit shared address addr (kbd_mbarrier_addr) */
KBD_DEV void kbd_hw_umma_commit_at(uint32_t addr, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(addr) : "memory");
#else
  (void)addr;
  KBD__PTX_NO_TCGEN05();
#endif
}
KBD_DEV void kbd_hw_umma_commit_mc_at(uint32_t addr, uint16_t mask, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_COMMIT_MC_ASM("1", addr);
#else
  (void)addr, (void)mask;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* The caller runs in elected-lane code (KBD_ELECT_ONE): no instruction (the CPU machine checks it; cpu/mma_umma.h). */
KBD_DEV void kbd_hw_umma_elected(const char *what, KBD_SITE_PARAMS) {
  (void)what;
  KBD_SITE_UNUSED;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_UMMA_H */
