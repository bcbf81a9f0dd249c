/* kbd/ptx/tmem_alloc.h - sm_100a Tensor Memory allocation and the cta_group-qualified instruction spellings (GPU twin
 * of cpu/tmem_alloc.h; the family: ptx/mma.h). */
#ifndef KBD_PTX_TMEM_ALLOC_H
#define KBD_PTX_TMEM_ALLOC_H

#include "mma_operand.h"

#if KBD_MODE_CUDA

/* ==== sm_100a: tcgen05 and Tensor Memory (ptx-reference §5) ================================================= */

/* The .cta_group-qualified instructions, spelled once for both groups: g is "1" here and "2" in ptx/mma_pair.h
 * (CTA pairs); ptxas takes one group per function, so each twin names its group as a literal. */
#define KBD__TMEM_ALLOC_ASM(g)                                                                                         \
  asm volatile("tcgen05.alloc.cta_group::" g ".sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(kbd_ptx_smem_u32(slot)),  \
               "r"(ncols)                                                                                              \
               : "memory")
#define KBD__TMEM_DEALLOC_ASM(g)                                                                                       \
  asm volatile("tcgen05.dealloc.cta_group::" g ".sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory")
#define KBD__TMEM_RELINQUISH_ASM(g)                                                                                    \
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::" g ".sync.aligned;" ::: "memory")
/* the instruction descriptor is a register operand, so only the kind is switched on; accumulate is tested != 0 */
#define KBD__UMMA_ASM(g, k)                                                                                            \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"                                                       \
               "tcgen05.mma.cta_group::" g ".kind::" k " [%0], %1, %2, %3, p;\n\t}" ::"r"(dtmem),                      \
               "l"(adesc), "l"(bdesc), "r"(idesc), "r"((uint32_t)accumulate)                                           \
               : "memory")
#define KBD__UMMA_KINDS(g)                                                                                             \
  switch (kind) {                                                                                                      \
  case KBD_MMA_KIND_F16: KBD__UMMA_ASM(g, "f16"); break;                                                               \
  case KBD_MMA_KIND_TF32: KBD__UMMA_ASM(g, "tf32"); break;                                                             \
  case KBD_MMA_KIND_F8F6F4: KBD__UMMA_ASM(g, "f8f6f4"); break;                                                         \
  case KBD_MMA_KIND_I8: KBD__UMMA_ASM(g, "i8"); break;                                                                 \
  default: __trap();                                                                                                   \
  }
#define KBD__UMMA_COMMIT_MC_ASM(g, addr)                                                                               \
  asm volatile("tcgen05.commit.cta_group::" g                                                                          \
               ".mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(addr),                  \
               "h"(mask)                                                                                               \
               : "memory")

/* tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], ncols;     PTX ISA 8.6, sm_100a.
 * One whole warp; blocks until ncols (a power of two in 32..512) columns are free, then writes the TMEM
 * address to the shared slot with a weak store: read it after a barrier (§5.2, §5.8). */
KBD_DEV void kbd_hw_tmem_alloc(uint32_t *slot, uint32_t ncols, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_ALLOC_ASM("1");
#else
  (void)slot, (void)ncols;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols;     PTX ISA 8.6, sm_100a. One whole warp. */
KBD_DEV void kbd_hw_tmem_dealloc(uint32_t taddr, uint32_t ncols, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_DEALLOC_ASM("1");
#else
  (void)taddr, (void)ncols;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;     PTX ISA 8.6, sm_100a. One whole warp; the
 * CTA allocates no more after it. */
KBD_DEV void kbd_hw_tmem_relinquish(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  KBD__TMEM_RELINQUISH_ASM("1");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_TMEM_ALLOC_H */
