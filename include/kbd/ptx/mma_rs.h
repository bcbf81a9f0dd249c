/* kbd/ptx/mma_rs.h - wgmma with A from registers on sm_90a (GPU twin of cpu/mma_rs.h; docs/design/mma.md
 * "A from registers").
 *
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} {d}, {a0, a1, a2, a3}, b-desc, scale-d,
 *       imm-scale-a, imm-scale-b, imm-trans-b;     PTX ISA 8.0, sm_90a (ptx-reference 4.1, 4.4)
 *
 * The register form has no imm-trans-a: A is the 16-bit A fragment of the warpgroup (thread t holds rows
 * 16(t/32) + (t%32)/4 + {0, 8} of the m64 block, k = 2(t%4) + {0, 1} + {0, 8}), 8 elements in 4 .b32 registers,
 * element 2r in the low half of register r. It is the WGMMA_ACC fragment of a 64 x 16 tile, so K-step j of
 * m64 block m of a KBD_ACC_TILE(bf16, M, K) is its thread's elements m*K/2 + 8j .. + 7.
 *
 * Compile time as in ptx/mma.h: one asm statement per N (its operand list fixes the accumulator's register
 * count), holding the negate-A / negate-B / B-transpose variants under predicates on a selector that is a
 * constant at every kbd call site, so ptxas folds them to one HGMMA; one function per A type, chosen by
 * kbd_mma_rs from the tile type, so each inlined K-step carries one type's 32 statements.
 */
#ifndef KBD_PTX_MMA_RS_H
#define KBD_PTX_MMA_RS_H

#include "../config.h"
#include "../mma_desc.h"
#include "mma.h"
#include "mma_regs.h"

#if KBD_MODE_CUDA

/* The A tile's registers: a is the thread's 2n 16-bit elements, packed pairwise into n .b32 registers (element
 * 2c low). An empty asm that "reads and writes" each packed register pins the packing (and the code that
 * computed the elements: a conversion of a softmax, say) before the wgmma.fence that kbd_mma_rs runs next.
 * Otherwise the compiler may sink the packing moves between wgmma.fence and the wgmma that reads them, which
 * is a register write to an A fragment after its fence (ptx-reference 4.2) that ptxas answers by serializing
 * the kernel's wgmmas (C7514 and friends, tests/ptx/mma_rs.check). The halves are written back, so the
 * wgmma's own packing of them folds to the pinned register. lda: the CPU twin's lane stride. */
KBD_DEV void kbd_hw_wgmma_a_touch(void *a, int lda, int n, KBD_SITE_PARAMS) {
  (void)lda;
  KBD_SITE_UNUSED;
#if KBD_DEVICE_PASS
  uint16_t *const h = (uint16_t *)a; /* kbd_bf16 / kbd_f16: one uint16_t member */
  _Pragma("unroll") for (int c = 0; c < n; ++c) {
    uint32_t u = (uint32_t)h[2 * c] | (uint32_t)h[2 * c + 1] << 16;
    asm volatile("" : "+r"(u)::"memory");
    h[2 * c] = (uint16_t)u;
    h[2 * c + 1] = (uint16_t)(u >> 16);
  }
#else
  (void)a, (void)n;
#endif
}

#if KBD_SM90A
/* One variant: the operands after the R accumulator registers are a0..a3 (%R..%R+3), b-desc (%R+4), scale-d
 * (%R+5) and the selector (%R+6). */
#define KBD__WGRS_ONE(v, pre, t, imm, R)                                                                               \
  "setp.eq.b32 q, " KBD__PTX_ARG_##R##_6 ", " #v ";\n\t@q " pre "." t "." t " " KBD__PTX_LIST_##R                      \
      ", {" KBD__PTX_ARG_##R##_0 ", " KBD__PTX_ARG_##R##_1 ", " KBD__PTX_ARG_##R##_2 ", " KBD__PTX_ARG_##R##_3         \
      "}, " KBD__PTX_ARG_##R##_4 ", p" imm ";\n\t"
/* Selector bits: 0 negate A, 1 negate B (imm-scale -1), 2 B MN-major (imm-trans-b 1). */
/* clang-format off */
#define KBD__WGRS_VARIANTS(X, pre, t, R)                                                                               \
  X(0, pre, t, ", 1, 1, 0", R)                                                                                         \
  X(1, pre, t, ", -1, 1, 0", R)                                                                                        \
  X(2, pre, t, ", 1, -1, 0", R)                                                                                        \
  X(3, pre, t, ", -1, -1, 0", R)                                                                                       \
  X(4, pre, t, ", 1, 1, 1", R)                                                                                         \
  X(5, pre, t, ", -1, 1, 1", R)                                                                                        \
  X(6, pre, t, ", 1, -1, 1", R)                                                                                        \
  X(7, pre, t, ", -1, -1, 1", R)
/* clang-format on */
#define KBD__WGRS_CASE(N, RF, RH, t)                                                                                   \
  case N:                                                                                                              \
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.b32 p, " KBD__PTX_ARG_##RF##_5 ", 0;\n\t" KBD__WGRS_VARIANTS(       \
                     KBD__WGRS_ONE, "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32", t, RF) "}"                       \
                 : KBD__PTX_OPS_##RF("+f", df)                                                                         \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(bdesc), "r"(scd), "r"(sel)                                  \
                 : "memory");                                                                                          \
    break;
/* The body of one A type: the A registers from the thread's 8 elements, the selector from idesc, the switch
 * over N. */
#define KBD__WGRS_BODY(t)                                                                                              \
  float *const df = (float *)d;                                                                                        \
  const uint16_t *const h = (const uint16_t *)a;                                                                       \
  const uint32_t a0 = (uint32_t)h[0] | (uint32_t)h[1] << 16, a1 = (uint32_t)h[2] | (uint32_t)h[3] << 16;               \
  const uint32_t a2 = (uint32_t)h[4] | (uint32_t)h[5] << 16, a3 = (uint32_t)h[6] | (uint32_t)h[7] << 16;               \
  const uint32_t scd = (uint32_t)accumulate; /* the asm tests it against 0 */                                          \
  const uint32_t sel = kbd_umma_idesc_negate_a(idesc) | kbd_umma_idesc_negate_b(idesc) << 1 |                          \
                       (uint32_t)kbd_umma_idesc_b_major(idesc) << 2;                                                   \
  switch (kbd_umma_idesc_n(idesc)) {                                                                                   \
    KBD__PTX_WGMMA_NS(KBD__WGRS_CASE, t)                                                                               \
  default: __trap();                                                                                                   \
  }
#endif /* KBD_SM90A */

/* wgmma with A from registers, bf16 x bf16 -> f32. Warpgroup-collective. d: as kbd_hw_wgmma (the thread's
 * N/2 f32 of one m64 block); a: the thread's 8 bf16 A elements of this K-step (4 registers' worth); kind /
 * idesc: kbd_umma_instr_desc with M = 64, A K-major (N, the B major and the negate bits are read);
 * accumulate 0 overwrites D. ld, lda: the CPU twin's lane strides. */
KBD_DEV void kbd_hw_wgmma_rs_bf16(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda, uint64_t bdesc,
                                  int accumulate, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld, (void)lda, (void)kind;
#if KBD_SM90A
  KBD__WGRS_BODY("bf16")
#else
  (void)d, (void)idesc, (void)a, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_WGMMA();
#endif
}

/* The same for f16 x f16 -> f32. */
KBD_DEV void kbd_hw_wgmma_rs_f16(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda, uint64_t bdesc,
                                 int accumulate, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld, (void)lda, (void)kind;
#if KBD_SM90A
  KBD__WGRS_BODY("f16")
#else
  (void)d, (void)idesc, (void)a, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_WGMMA();
#endif
}

/* kbd_mma_rs's wgmma: one function per A type, B major and N, each one unguarded asm statement (kbd_mma_rs never
 * negates). kbd_hw_wgmma_rs_fn picks it from the constants at the call site, so cicc inlines one asm statement at
 * each K-step instead of copying the switch over N into it, and ptxas sees one wgmma, not 8 guarded ones (the same
 * reasons as kbd_hw_wgmma_fn, ptx/mma.h). The arguments are kbd_hw_wgmma_rs_bf16's. */
#if KBD_SM90A
/* X(N, RF, RH, t, tb): the overload for A type t (bf16, f16) with B K-major (tb 0) or MN-major (tb 1) and N, a
 * template for the reason kbd__ptx_wgmma_* are (ptx/mma.h: only the instantiated one is analysed). a0..a3: the
 * thread's A fragment as four bf16x2 / f16x2 registers. */
#define KBD__WGRS_FN1(N, RF, RH, t, tb)                                                                                \
  template <typename kbd_e_>                                                                                           \
  KBD_DEV void kbd__ptx_wgmma_rs_##t##_##tb(kbd__wgn<N>, kbd_e_ *df, uint32_t a0, uint32_t a1, uint32_t a2,            \
                                            uint32_t a3, uint64_t bdesc, uint32_t scd) {                               \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " KBD__PTX_ARG_##RF##_5                                         \
                 ", 0;\n\twgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #t "." #t " " KBD__PTX_LIST_##RF            \
                 ", {" KBD__PTX_ARG_##RF##_0 ", " KBD__PTX_ARG_##RF##_1 ", " KBD__PTX_ARG_##RF##_2                     \
                 ", " KBD__PTX_ARG_##RF##_3 "}, " KBD__PTX_ARG_##RF##_4 ", p, 1, 1, " #tb ";\n\t}"                     \
                 : KBD__PTX_OPS_##RF("+f", df)                                                                         \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(bdesc), "r"(scd)                                            \
                 : "memory");                                                                                          \
  }
/* one A type and B major: its N overloads, a fallback for an N outside the list (kbd_mma_rs's checks have already
 * reported it), and the dispatch from its kbd__wgv tag (2 x type + B major) */
#define KBD__WGRS_FAMILY(t, tb, code)                                                                                  \
  KBD__PTX_WGMMA_NS(KBD__WGRS_FN1, t, tb)                                                                              \
  template <int kbd_n_, typename kbd_e_>                                                                               \
  KBD_DEV void kbd__ptx_wgmma_rs_##t##_##tb(kbd__wgn<kbd_n_>, kbd_e_ *, uint32_t, uint32_t, uint32_t, uint32_t,        \
                                            uint64_t, uint32_t) {                                                      \
    __trap();                                                                                                          \
  }                                                                                                                    \
  template <int kbd_n_>                                                                                                \
  KBD_DEV void kbd__wgrs_call(kbd__wgv<code>, kbd__wgn<kbd_n_> n, float *df, uint32_t a0, uint32_t a1, uint32_t a2,    \
                              uint32_t a3, uint64_t bdesc, uint32_t scd) {                                             \
    kbd__ptx_wgmma_rs_##t##_##tb(n, df, a0, a1, a2, a3, bdesc, scd);                                                   \
  }
KBD__WGRS_FAMILY(bf16, 0, 0)
KBD__WGRS_FAMILY(bf16, 1, 1)
KBD__WGRS_FAMILY(f16, 0, 2)
KBD__WGRS_FAMILY(f16, 1, 3)
/* The kbd_hw_wgmma_rs_bf16-shaped function of code v (2 x (A is f16) + (B MN-major)) and N n. */
template <int kbd_v_, int kbd_n_>
KBD_DEV void kbd__ptx_wgmma_rs_leaf(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda, uint64_t bdesc,
                                    int accumulate, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld, (void)lda, (void)kind, (void)idesc;
  const uint16_t *const h = (const uint16_t *)a;
  const uint32_t a0 = (uint32_t)h[0] | (uint32_t)h[1] << 16, a1 = (uint32_t)h[2] | (uint32_t)h[3] << 16;
  const uint32_t a2 = (uint32_t)h[4] | (uint32_t)h[5] << 16, a3 = (uint32_t)h[6] | (uint32_t)h[7] << 16;
  kbd__wgrs_call(kbd__wgv<kbd_v_>(), kbd__wgn<kbd_n_>(), (float *)d, a0, a1, a2, a3, bdesc,
                 (uint32_t)accumulate); /* the asm tests it against 0 */
}
/* The function for A type ta (KBD_MMA_BF16 / F16), B's smem major bm and N n, all constants. */
#define kbd_hw_wgmma_rs_fn(ta, bm, n)                                                                                  \
  (&kbd__ptx_wgmma_rs_leaf<2 * ((int)(ta) != KBD_MMA_BF16) + ((int)(bm) == KBD_SMEM_MN_MAJOR), (n)>)
#else
#define kbd_hw_wgmma_rs_fn(ta, bm, n)                                                                                  \
  ((void)(bm), (void)(n), (int)(ta) == KBD_MMA_BF16 ? kbd_hw_wgmma_rs_bf16 : kbd_hw_wgmma_rs_f16)
#endif

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_RS_H */
