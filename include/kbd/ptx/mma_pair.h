/* kbd/ptx/mma_pair.h - CTA-pair tcgen05 instructions (.cta_group::2; GPU twin of cpu/mma_pair.h;
 * docs/design/cta-pair.md).
 *
 * Two CTAs of a cluster whose ranks differ only in bit 0 form a pair. One thread of the even CTA issues an MMA
 * that reads A and B from both CTAs' shared memory (at the same offsets) and writes D into both CTAs' Tensor
 * Memory; alloc / dealloc / relinquish are issued by one warp in EACH CTA, collectively (PTX ISA 9.7.16.5,
 * Table 46). ptxas rejects a kernel that mixes .cta_group::1 and ::2 tcgen05 instructions (ptx-reference 5.2),
 * so a pair kernel uses these twins for every cta_group-qualified instruction; tcgen05.ld/st, wait and the
 * fences carry no group and are shared with ptx/mma.h. sm_100a only: on another target a surviving call makes
 * ptxas stop on the unresolved kbd_ptx_tcgen05_requires_sm_100a (kbd/mma_pair.h rejects it earlier).
 */
#ifndef KBD_PTX_MMA_PAIR_H
#define KBD_PTX_MMA_PAIR_H

#include "../config.h"
#include "../tensormap.h"
#include "cluster.h"
#include "mma.h"

#if KBD_MODE_CUDA

/* tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [slot], ncols;     PTX ISA 8.6, sm_100a.
 * One warp in each CTA of the pair; the first may block until its peer's warp issues it. The same columns are
 * allocated in both CTAs' Tensor Memory and the address is written to each CTA's slot (a weak store: read it
 * after a barrier). */
KBD_DEV void kbd_hw_tmem_alloc_pair(uint32_t *slot, uint32_t ncols, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_ALLOC_ASM("2");
#else
  (void)slot, (void)ncols;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.dealloc.cta_group::2.sync.aligned.b32 taddr, ncols;     PTX ISA 8.6, sm_100a. One warp in each CTA of
 * the pair, after the peer makes no more Tensor Memory accesses (a cluster barrier before it). */
KBD_DEV void kbd_hw_tmem_dealloc_pair(uint32_t taddr, uint32_t ncols, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_DEALLOC_ASM("2");
#else
  (void)taddr, (void)ncols;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;     PTX ISA 8.6, sm_100a. One warp in each CTA. */
KBD_DEV void kbd_hw_tmem_relinquish_pair(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_RELINQUISH_ASM("2");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.mma.cta_group::2.kind::{f16,tf32,f8f6f4,i8} [dtmem], adesc, bdesc, idesc, enable-input-d;
 *     PTX ISA 8.6, sm_100a. One thread of the pair. The descriptors name shared offsets read in both CTAs
 * (each holds M/2 rows of A and N/2 rows of B); D's M/2 rows per CTA land at dtmem in each CTA's Tensor
 * Memory (M = 256: Layout A, row r of the CTA's half at lane r). */
KBD_DEV void kbd_hw_umma_pair(uint32_t dtmem, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc, int accumulate,
                              KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_KINDS("2")
#else
  (void)dtmem, (void)kind, (void)idesc, (void)adesc, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask;
 *     PTX ISA 8.6, sm_100a. The issuing thread's pair MMAs complete (D in both CTAs, operand reads of both
 * CTAs ended), then one arrive at cluster scope on the barrier at bar's offset in every CTA of mask. */
KBD_DEV void kbd_hw_umma_commit_pair(uint64_t *bar, uint16_t mask, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_COMMIT_MC_ASM("2", kbd_ptx_smem_u32(bar));
#else
  (void)bar, (void)mask;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* kbd_hw_umma_commit_pair of the barrier at 32-bit shared address addr (kbd_mbarrier_addr): a loop over a ring adds
 * 8 x the stage to one base in a register, where the pointer form made ptxas rebuild a generic address every k-block */
KBD_DEV void kbd_hw_umma_commit_pair_at(uint32_t addr, uint16_t mask, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__UMMA_COMMIT_MC_ASM("2", addr);
#else
  (void)addr, (void)mask;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* cp.async.bulk.tensor.{1..5}d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes
 * [dst], [map, {c}], [mbar];     PTX ISA 8.6, sm_100a (ptx-reference 2.1: ptxas accepts .cta_group::2 before
 * or after the state space). The box lands in this CTA's shared memory; with ::2 the mbarrier may be the
 * pair peer's, so the complete-tx goes to the barrier at bar's offset in the even CTA of the pair, addressed
 * through mapa (a shared::cluster address). rank is a constant at every kbd call site. */
#define KBD__TMA_PAIR(dims, coords, ...)                                                                               \
  asm volatile("cp.async.bulk.tensor." dims ".cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes "  \
               "[%0], [%1, " coords "], [%2];" ::"r"(d),                                                               \
               "l"(map), "r"(b), __VA_ARGS__                                                                           \
               : "memory")
KBD_DEV void kbd_hw_tma_load_pair(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle,
                                  const kbd_tensor_map *map, uint64_t *bar, int rank, int32_t c0, int32_t c1,
                                  int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  (void)line_bytes, (void)lines, (void)swizzle, KBD_SITE_UNUSED;
#if KBD_SM100A
  uint32_t b;
  const uint32_t d = kbd_ptx_smem_u32(dst);
  asm("mapa.shared::cluster.u32 %0, %1, %2;"
      : "=r"(b)
      : "r"(kbd_ptx_smem_u32(bar)), "r"(kbd_hw_cluster_ctarank() & ~1u));
  switch (rank) {
  case 1: KBD__TMA_PAIR("1d", "{%3}", "r"(c0)); break;
  case 2: KBD__TMA_PAIR("2d", "{%3, %4}", "r"(c0), "r"(c1)); break;
  case 3: KBD__TMA_PAIR("3d", "{%3, %4, %5}", "r"(c0), "r"(c1), "r"(c2)); break;
  case 4: KBD__TMA_PAIR("4d", "{%3, %4, %5, %6}", "r"(c0), "r"(c1), "r"(c2), "r"(c3)); break;
  default: KBD__TMA_PAIR("5d", "{%3, %4, %5, %6, %7}", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)); break;
  }
#else
  (void)dst, (void)map, (void)bar, (void)rank, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
  KBD__PTX_NO_TCGEN05();
#endif
}
#undef KBD__TMA_PAIR

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_PAIR_H */
