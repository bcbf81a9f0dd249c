/* kbd/ptx/mbar.h - mbarriers (GPU twin of cpu/mbar.h): one wrapper per PTX instruction.
 *
 * The object is a .b64 in shared memory, 8-byte aligned; every operand below is its 32-bit shared-window
 * address (cvta.to.shared). Arrivals are .release.cta and waits .acquire.cta (the PTX defaults, written
 * out): a thread that sees a phase complete sees everything the arriving threads did before arriving, and
 * every asynchronous copy that signalled the barrier. The tx forms need sm_90 (PTX ISA 8.0); kbd builds
 * only sm_90a and sm_100a.
 */
#ifndef KBD_PTX_MBAR_H
#define KBD_PTX_MBAR_H

#include "../config.h"

#if KBD_MODE_CUDA

KBD_DEV uint32_t kbd_ptx_smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* mbarrier.init.shared::cta.b64 [a], count;     PTX ISA 7.0, sm_80 */
KBD_DEV void kbd_hw_mbar_init(uint64_t *bar, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(kbd_ptx_smem_u32(bar)), "r"(count) : "memory");
}

/* mbarrier.inval.shared::cta.b64 [a];     PTX ISA 7.0, sm_80 */
KBD_DEV void kbd_hw_mbar_inval(uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(kbd_ptx_smem_u32(bar)) : "memory");
}

/* mbarrier.arrive.release.cta.shared::cta.b64 _, [a], count;     PTX ISA 8.0, sm_90 (count without
 * .noComplete) */
KBD_DEV void kbd_hw_mbar_arrive(uint64_t *bar, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(kbd_ptx_smem_u32(bar)), "r"(count)
               : "memory");
}

/* mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [a], tx;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(kbd_ptx_smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

/* mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [a], tx;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_mbar_expect_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(kbd_ptx_smem_u32(bar)), "r"(bytes)
               : "memory");
}

/* mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [a], tx;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_mbar_complete_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(kbd_ptx_smem_u32(bar)), "r"(bytes)
               : "memory");
}

/* mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [a], parity;     PTX ISA 8.0, sm_90. May return
 * false before the time limit even if the phase has not completed: always used in a loop. */
KBD_DEV int kbd_hw_mbar_try_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t ok;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok)
               : "r"(kbd_ptx_smem_u32(bar)), "r"(parity)
               : "memory");
  return (int)ok;
}

/* mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [a], parity;     PTX ISA 8.0, sm_90. Like
 * try_wait but never suspends the thread: a pure poll. */
KBD_DEV int kbd_hw_mbar_test_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t ok;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok)
               : "r"(kbd_ptx_smem_u32(bar)), "r"(parity)
               : "memory");
  return (int)ok;
}

/* The wait loop: try_wait suspends the thread in hardware up to a system time limit, so the loop spins
 * only when that limit passes. */
KBD_DEV void kbd_hw_mbar_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  while (!kbd_hw_mbar_try_wait(bar, parity, KBD_SITE_ARGS)) {
  }
}

/* The barrier named by its 32-bit shared::cta address (kbd_mbarrier_addr). A loop over a ring keeps one base in a
 * register and adds 8 x the stage: the pointer forms above hand ptxas a 64-bit generic address, which it rebuilds
 * from the shared window's base (S2R SR_SWINHI, 64-bit adds) every k-block before the cvta drops the high half. */
KBD_DEV uint32_t kbd_hw_mbar_addr(uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_ptx_smem_u32(bar);
}

/* cvta.to.shared, then shfl.sync.idx.b32 of lane 0 (kbd_mbarrier_addr_uniform). ptxas rebuilds a plain shared address
 * from the window's base in every iteration of a loop that is short of registers (S2UR SR_CgaCtaId, a move, ULEA and
 * a move back: 4 instructions per k-block in the sm_90a GEMM); from the shuffle's result it keeps the value in a
 * register there (measured, nvcc 13.0), and it knows it warp-uniform. Where ptxas proves the address uniform itself
 * it may drop the shuffle. The warp must be converged (shfl.sync with the full mask). */
KBD_DEV uint32_t kbd_hw_mbar_addr_uniform(uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t d;
  asm volatile("shfl.sync.idx.b32 %0, %1, 0, 31, -1;" : "=r"(d) : "r"(kbd_ptx_smem_u32(bar)));
  return d;
}

/* mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [addr], parity, in a loop (kbd_hw_mbar_wait) */
KBD_DEV void kbd_hw_mbar_wait_at(uint32_t addr, uint32_t parity, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t ok;
  do {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok)
                 : "r"(addr), "r"(parity)
                 : "memory");
  } while (!ok);
}

/* mbarrier.arrive.release.cta.shared::cta.b64 _, [addr], count (kbd_hw_mbar_arrive) */
KBD_DEV void kbd_hw_mbar_arrive_at(uint32_t addr, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(addr), "r"(count) : "memory");
}

/* mapa.shared::cluster.u32 + mbarrier.arrive.shared::cluster.b64 _, [remote], count: kbd_hw_mbar_arrive_cluster_reads
 * (ptx/cluster.h, docs/design/read-release.md) of the barrier at addr's offset in CTA `rank` */
KBD_DEV void kbd_hw_mbar_arrive_cluster_reads_at(uint32_t addr, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0], %1;" ::"r"(remote), "r"(count) : "memory");
}

/* fence.mbarrier_init.release.cluster;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_fence_mbar_init(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MBAR_H */
