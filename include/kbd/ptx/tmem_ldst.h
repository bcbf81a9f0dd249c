/* kbd/ptx/tmem_ldst.h - sm_100a tcgen05 fences, tcgen05.ld / st between Tensor Memory and registers, their waits (GPU
 * twin of cpu/tmem_ldst.h; the family: ptx/mma.h). */
#ifndef KBD_PTX_TMEM_LDST_H
#define KBD_PTX_TMEM_LDST_H

#include "mma_operand.h"
#include "mma_regs.h"

#if KBD_MODE_CUDA

/* tcgen05.fence::before_thread_sync;     PTX ISA 8.6, sm_100a. Orders this thread's earlier async tcgen05
 * operations before a following barrier / mbarrier arrive (§5.8). */
KBD_DEV void kbd_hw_tcgen05_fence_before(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.fence::after_thread_sync;     PTX ISA 8.6, sm_100a. Orders the tcgen05 operations after a barrier /
 * mbarrier wait after it (§5.8). */
KBD_DEV void kbd_hw_tcgen05_fence_after(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

#if KBD_SM100A
/* one tcgen05.ld / st of R registers; the address follows the registers (operand %R) */
#define KBD__TMEM_LD(shape, xn, R)                                                                                     \
  asm volatile("tcgen05.ld.sync.aligned." shape ".x" #xn ".b32 " KBD__PTX_LIST_##R ", [" KBD__PTX_ARG_##R##_0 "];"     \
               : KBD__PTX_OPS_##R("=r", dd)                                                                            \
               : "r"(taddr)                                                                                            \
               : "memory")
#define KBD__TMEM_ST(shape, xn, R)                                                                                     \
  asm volatile("tcgen05.st.sync.aligned." shape ".x" #xn ".b32 [" KBD__PTX_ARG_##R##_0 "], " KBD__PTX_LIST_##R         \
               ";" ::KBD__PTX_OPS_##R("r", ss),                                                                        \
               "r"(taddr)                                                                                              \
               : "memory")
/* case lists: (xn, registers) for .32x32b (n registers) and .16x256b (4n registers), §5.3 */
#define KBD__TMEM_32X32B(X, ...)                                                                                       \
  X(1, 1, __VA_ARGS__)                                                                                                 \
  X(2, 2, __VA_ARGS__) X(4, 4, __VA_ARGS__) X(8, 8, __VA_ARGS__) X(16, 16, __VA_ARGS__) X(32, 32, __VA_ARGS__)
#define KBD__TMEM_16X256B(X, ...) X(1, 4, __VA_ARGS__) X(2, 8, __VA_ARGS__) X(4, 16, __VA_ARGS__) X(8, 32, __VA_ARGS__)
#define KBD__TMEM_CASE(xn, R, op, shape)                                                                               \
  case xn:                                                                                                             \
    op(shape, xn, R);                                                                                                  \
    break;
#endif

/* tcgen05.ld.sync.aligned.{32x32b,16x256b}.xn.b32 {r...}, [taddr];     PTX ISA 8.6, sm_100a. One warp (all
 * lanes the same taddr, lanes of the warp's own quarter: §5.1). Asynchronous: tcgen05.wait::ld before
 * anything that must follow it (kbd_hw_tmem_wait_ld). d: the thread's cells (n or 4n); shape and n are
 * constants at every kbd call site. */
KBD_DEV void kbd_hw_tmem_ld(void *d, int ld, uint32_t taddr, int shape, int n, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld;
#if KBD_SM100A
  uint32_t *const dd = (uint32_t *)d;
  if (shape == KBD_TMEM_32X32B) {
    switch (n) {
      KBD__TMEM_32X32B(KBD__TMEM_CASE, KBD__TMEM_LD, "32x32b")
    default: __trap();
    }
  } else if (shape == KBD_TMEM_16X256B) {
    switch (n) {
      KBD__TMEM_16X256B(KBD__TMEM_CASE, KBD__TMEM_LD, "16x256b")
    default: __trap();
    }
  } else {
    __trap();
  }
#else
  (void)d, (void)taddr, (void)shape, (void)n;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.st.sync.aligned.{32x32b,16x256b}.xn.b32 [taddr], {r...};     PTX ISA 8.6, sm_100a. One warp;
 * asynchronous until tcgen05.wait::st. s: the thread's cells. */
KBD_DEV void kbd_hw_tmem_st(uint32_t taddr, const void *s, int ld, int shape, int n, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld;
#if KBD_SM100A
  const uint32_t *const ss = (const uint32_t *)s;
  if (shape == KBD_TMEM_32X32B) {
    switch (n) {
      KBD__TMEM_32X32B(KBD__TMEM_CASE, KBD__TMEM_ST, "32x32b")
    default: __trap();
    }
  } else if (shape == KBD_TMEM_16X256B) {
    switch (n) {
      KBD__TMEM_16X256B(KBD__TMEM_CASE, KBD__TMEM_ST, "16x256b")
    default: __trap();
    }
  } else {
    __trap();
  }
#else
  (void)taddr, (void)s, (void)shape, (void)n;
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.wait::ld.sync.aligned;     PTX ISA 8.6, sm_100a: every earlier tcgen05.ld of the thread is done. */
KBD_DEV void kbd_hw_tmem_wait_ld(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

/* tcgen05.wait::st.sync.aligned;     PTX ISA 8.6, sm_100a: every earlier tcgen05.st of the thread is done. */
KBD_DEV void kbd_hw_tmem_wait_st(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM100A
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
#else
  KBD__PTX_NO_TCGEN05();
#endif
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_TMEM_LDST_H */
