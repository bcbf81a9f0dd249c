/* kbd/ptx/mma_ts.h - tcgen05.mma with A from Tensor Memory (GPU twin of cpu/mma_ts.h; kbd/mma_ts.h,
 * docs/design/mma-ts.md).
 *
 *   tcgen05.mma.cta_group::1.kind::f16 [d_tmem], [a_tmem], b_desc, idesc, enable-input-d;
 *       PTX ISA 8.6, sm_100a (ptx-reference 5.4: "A from TMEM"; PTX ISA 9.2 §9.7.16.10.9.1)
 *
 * One thread, like the descriptor form; A is M x 16 (one K-step) at a_tmem in the layout of
 * kbd/mma_ts_layout.h. Only kind::f16 (bf16 / f16 A): the one kbd_mma_ts_issue offers.
 */
#ifndef KBD_PTX_MMA_TS_H
#define KBD_PTX_MMA_TS_H

#include "../config.h"
#include "../mma_desc.h"
#include "mma.h"

#if KBD_MODE_CUDA

/* tcgen05.mma.cta_group::1.kind::f16 [dtmem], [atmem], bdesc, idesc, enable-input-d (one thread). accumulate 0:
 * D = A*B. The instruction descriptor is a register operand (its transpose-A bit must be 0: A in Tensor Memory is
 * K-major). */
KBD_DEV void kbd_hw_umma_ts(uint32_t dtmem, int kind, uint32_t idesc, uint32_t atmem, uint64_t bdesc, int accumulate,
                            KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  const uint32_t scd = (uint32_t)accumulate; /* the asm tests it against 0 */
  if (kind != KBD_MMA_KIND_F16) __trap();
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n\t}" ::"r"(dtmem),
               "r"(atmem), "l"(bdesc), "r"(idesc), "r"(scd)
               : "memory");
#else
  (void)dtmem, (void)kind, (void)idesc, (void)atmem, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* kbd_tmem_a_store's column range: checked on the CPU machine only (k0 is a run-time value; the GPU has no
 * cheap way to report it). */
KBD_DEV void kbd_hw_tmem_a_cols(int k0, int cols, int kcols, KBD_SITE_PARAMS) {
  (void)k0, (void)cols, (void)kcols;
  KBD_SITE_UNUSED;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_TS_H */
