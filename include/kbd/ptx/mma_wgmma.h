/* kbd/ptx/mma_wgmma.h - sm_90a wgmma: fences, commit, wait and the instruction itself (GPU twin of cpu/mma_wgmma.h; the
 * family: ptx/mma.h). */
#ifndef KBD_PTX_MMA_WGMMA_H
#define KBD_PTX_MMA_WGMMA_H

#include "mma_operand.h"
#include "mma_regs.h"

#if KBD_MODE_CUDA

/* The CPU machine checks here that no pending wgmma still writes these accumulator elements. On the GPU it is
 * a register fence and emits no instruction: an empty asm that "reads and writes" each of the thread's n
 * 32-bit accumulator cells d[0..n-1] (ld: the CPU twin's lane stride). The compiler cannot move the accumulator's
 * ordinary reads and writes (zeroing, copies, an epilogue) across it, so a call before wgmma.fence keeps them
 * out of the wgmma region and one after wgmma.wait_group keeps reads after the wait; otherwise ptxas finds
 * them inside and serializes the MMAs (C7517/C7519/C7520, ptx-reference §4.2). n is a constant: the loop
 * unrolls and the cells stay in registers. */
KBD_DEV void kbd_hw_wgmma_acc_touch(const void *d, int ld, int n, KBD_SITE_PARAMS) {
  (void)ld;
  KBD_SITE_UNUSED;
#if KBD_DEVICE_PASS
  /* the cells are the caller's (non-const) accumulator; viewed as f32, the type of kbd's accumulators, so
   * that no bit-cast move lands between this fence and the wgmma (s32 / f16x2 cells get one, harmless) */
  float *const c = (float *)(uintptr_t)d;
  _Pragma("unroll") for (int i = 0; i < n; ++i) asm volatile("" : "+f"(c[i])::"memory");
#else
  (void)d, (void)n;
#endif
}

/* kbd_acc_discard's: the n cells' values are dead (ld: the CPU twin's lane stride). An empty asm that only WRITES
 * each cell, no instruction: the values before it have no use after it, so the read-modify-write operands of the
 * next wgmma (accumulate 0) do not keep them alive and the compiler copies nothing around that wgmma. Call it
 * before wgmma.fence (kbd_mma issues the fence): it is a register write as far as ptxas knows. */
KBD_DEV void kbd_hw_wgmma_acc_discard(void *d, int ld, int n, KBD_SITE_PARAMS) {
  (void)ld;
  KBD_SITE_UNUSED;
#if KBD_DEVICE_PASS
  float *const c = (float *)d;
  _Pragma("unroll") for (int i = 0; i < n; ++i) asm volatile("" : "=f"(c[i])::"memory");
#else
  (void)d, (void)n;
#endif
}

/* ==== sm_90a: wgmma (ptx-reference §4) ===================================================================== */

/* wgmma.fence.sync.aligned;     PTX ISA 8.0, sm_90a. Orders the warpgroup's earlier register accesses to
 * accumulators before the wgmma that follow (§4.2). */
KBD_DEV void kbd_hw_wgmma_fence(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
  KBD__PTX_NO_WGMMA();
#endif
}

/* wgmma.commit_group.sync.aligned;     PTX ISA 8.0, sm_90a */
KBD_DEV void kbd_hw_wgmma_commit(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
  KBD__PTX_NO_WGMMA();
#endif
}

/* wgmma.wait_group.sync.aligned n;     PTX ISA 8.0, sm_90a. n is an immediate of the instruction: a constant
 * 0..7 at every kbd call site, so the switch folds to one statement. */
#define KBD__PTX_WGWAIT(n)                                                                                             \
  case n: asm volatile("wgmma.wait_group.sync.aligned " #n ";" ::: "memory"); break;
KBD_DEV void kbd_hw_wgmma_wait(int n, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM90A
  switch (n) {
    KBD__PTX_WGWAIT(0)
    KBD__PTX_WGWAIT(1)
    KBD__PTX_WGWAIT(2)
    KBD__PTX_WGWAIT(3)
    KBD__PTX_WGWAIT(4)
    KBD__PTX_WGWAIT(5)
    KBD__PTX_WGWAIT(6)
    KBD__PTX_WGWAIT(7)
  default: __trap();
  }
#else
  (void)n;
  KBD__PTX_NO_WGMMA();
#endif
}

#if KBD_SM90A
/* One asm statement per (family, N) binds the R accumulator registers dv[0..R-1] (constraint c: "+f" f32,
 * "+r" s32 or packed f16x2) and a-desc, b-desc, scale-d and a variant selector `sel`. Its text holds every
 * variant of the family - negation (imm-scale-a/b), transposition (imm-trans-a/b) and, for fp8 and 8-bit
 * integers, the A/B type pair - each guarded by a predicate `sel == v`. sel is a constant at every kbd call
 * site: ptxas folds the predicates and keeps one unpredicated HGMMA (tests/ptx/mma.check). Switching over
 * the variants in C instead makes cicc inline every variant (~170000 asm operands) into each call site
 * before deleting them: measured 18 s per call (nvcc 13.0) against 0.15 s now. scale-d is a predicate from
 * the run-time flag: false gives D = A*B. */
#define KBD__WG_ONE(v, pre, a, b, imm, R)                                                                              \
  "setp.eq.b32 q, " KBD__PTX_ARG_##R##_3 ", " #v ";\n\t@q " pre "." a "." b " " KBD__PTX_LIST_##R                      \
      ", " KBD__PTX_ARG_##R##_0 ", " KBD__PTX_ARG_##R##_1 ", p" imm ";\n\t"
#define KBD__WGMMA_ASM(R, c, dv, VARIANTS, pre)                                                                        \
  asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.b32 p, " KBD__PTX_ARG_##R##_2                                         \
               ", 0;\n\t" VARIANTS(KBD__WG_ONE, pre, R) "}"                                                            \
               : KBD__PTX_OPS_##R(c, dv)                                                                               \
               : "l"(adesc), "l"(bdesc), "r"(scd), "r"(sel)                                                            \
               : "memory")
/* The same statement with exactly one variant, unguarded (no selector): what a kbd_mma call site issues, since its
 * variant is a constant there (kbd_hw_wgmma_fn). ptxas's time grows with every wgmma in the text, folded or not:
 * the GEMM kernel with five 16-variant call sites took three times longer in ptxas (docs/design/mma.md). */
#define KBD__WG_FIXED(v, pre, a, b, imm, R)                                                                            \
  pre "." a "." b " " KBD__PTX_LIST_##R ", " KBD__PTX_ARG_##R##_0 ", " KBD__PTX_ARG_##R##_1 ", p" imm ";\n\t"
#define KBD__WGMMA_ASM1(R, c, dv, VARIANT, pre)                                                                        \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " KBD__PTX_ARG_##R##_2                                            \
               ", 0;\n\t" VARIANT(KBD__WG_FIXED, pre, R) "}"                                                           \
               : KBD__PTX_OPS_##R(c, dv)                                                                               \
               : "l"(adesc), "l"(bdesc), "r"(scd)                                                                      \
               : "memory")
/* Variant lists X(sel, prefix, A type, B type, immediates, R) (ptx-reference §4.1). sel bits: 0 negate A,
 * 1 negate B (imm-scale -1); 16-bit types: 2 A MN-major, 3 B MN-major (imm-trans 1); fp8 and integers:
 * 2 A is the second type (e5m2 / u8), 3 B is. */
/* clang-format off */
#define KBD__WGV_16_T(X, pre, R, T)                                                                                    \
  X(0, pre, T, T, ", 1, 1, 0, 0", R)                                                                                   \
  X(1, pre, T, T, ", -1, 1, 0, 0", R)                                                                                  \
  X(2, pre, T, T, ", 1, -1, 0, 0", R)                                                                                  \
  X(3, pre, T, T, ", -1, -1, 0, 0", R)                                                                                 \
  X(4, pre, T, T, ", 1, 1, 1, 0", R)                                                                                   \
  X(5, pre, T, T, ", -1, 1, 1, 0", R)                                                                                  \
  X(6, pre, T, T, ", 1, -1, 1, 0", R)                                                                                  \
  X(7, pre, T, T, ", -1, -1, 1, 0", R)                                                                                 \
  X(8, pre, T, T, ", 1, 1, 0, 1", R)                                                                                   \
  X(9, pre, T, T, ", -1, 1, 0, 1", R)                                                                                  \
  X(10, pre, T, T, ", 1, -1, 0, 1", R)                                                                                 \
  X(11, pre, T, T, ", -1, -1, 0, 1", R)                                                                                \
  X(12, pre, T, T, ", 1, 1, 1, 1", R)                                                                                  \
  X(13, pre, T, T, ", -1, 1, 1, 1", R)                                                                                 \
  X(14, pre, T, T, ", 1, -1, 1, 1", R)                                                                                 \
  X(15, pre, T, T, ", -1, -1, 1, 1", R)
#define KBD__WGV_BF16(X, pre, R) KBD__WGV_16_T(X, pre, R, "bf16")
#define KBD__WGV_F16(X, pre, R) KBD__WGV_16_T(X, pre, R, "f16")
#define KBD__WGV_TF32(X, pre, R)                                                                                       \
  X(0, pre, "tf32", "tf32", ", 1, 1", R)                                                                               \
  X(1, pre, "tf32", "tf32", ", -1, 1", R)                                                                              \
  X(2, pre, "tf32", "tf32", ", 1, -1", R)                                                                              \
  X(3, pre, "tf32", "tf32", ", -1, -1", R)
#define KBD__WGV_FP8(X, pre, R)                                                                                        \
  X(0, pre, "e4m3", "e4m3", ", 1, 1", R)                                                                               \
  X(1, pre, "e4m3", "e4m3", ", -1, 1", R)                                                                              \
  X(2, pre, "e4m3", "e4m3", ", 1, -1", R)                                                                              \
  X(3, pre, "e4m3", "e4m3", ", -1, -1", R)                                                                             \
  X(4, pre, "e5m2", "e4m3", ", 1, 1", R)                                                                               \
  X(5, pre, "e5m2", "e4m3", ", -1, 1", R)                                                                              \
  X(6, pre, "e5m2", "e4m3", ", 1, -1", R)                                                                              \
  X(7, pre, "e5m2", "e4m3", ", -1, -1", R)                                                                             \
  X(8, pre, "e4m3", "e5m2", ", 1, 1", R)                                                                               \
  X(9, pre, "e4m3", "e5m2", ", -1, 1", R)                                                                              \
  X(10, pre, "e4m3", "e5m2", ", 1, -1", R)                                                                             \
  X(11, pre, "e4m3", "e5m2", ", -1, -1", R)                                                                            \
  X(12, pre, "e5m2", "e5m2", ", 1, 1", R)                                                                              \
  X(13, pre, "e5m2", "e5m2", ", -1, 1", R)                                                                             \
  X(14, pre, "e5m2", "e5m2", ", 1, -1", R)                                                                             \
  X(15, pre, "e5m2", "e5m2", ", -1, -1", R)
#define KBD__WGV_I8(X, pre, R)                                                                                         \
  X(0, pre, "s8", "s8", "", R)                                                                                         \
  X(4, pre, "u8", "s8", "", R)                                                                                         \
  X(8, pre, "s8", "u8", "", R)                                                                                         \
  X(12, pre, "u8", "u8", "", R)
/* single variants (KBD__WGMMA_ASM1), named by sel: 0, 4, 8, 12 - the transposes (16-bit) or the type pair (8-bit) */
#define KBD__WGV1_16(X, pre, R, T, s) X(s, pre, T, T, ", 1, 1, " KBD__WGV1_TRANS_##s, R)
#define KBD__WGV1_TRANS_0 "0, 0"
#define KBD__WGV1_TRANS_4 "1, 0"
#define KBD__WGV1_TRANS_8 "0, 1"
#define KBD__WGV1_TRANS_12 "1, 1"
#define KBD__WGV1_bf16_0(X, pre, R) KBD__WGV1_16(X, pre, R, "bf16", 0)
#define KBD__WGV1_bf16_4(X, pre, R) KBD__WGV1_16(X, pre, R, "bf16", 4)
#define KBD__WGV1_bf16_8(X, pre, R) KBD__WGV1_16(X, pre, R, "bf16", 8)
#define KBD__WGV1_bf16_12(X, pre, R) KBD__WGV1_16(X, pre, R, "bf16", 12)
#define KBD__WGV1_f16_0(X, pre, R) KBD__WGV1_16(X, pre, R, "f16", 0)
#define KBD__WGV1_f16_4(X, pre, R) KBD__WGV1_16(X, pre, R, "f16", 4)
#define KBD__WGV1_f16_8(X, pre, R) KBD__WGV1_16(X, pre, R, "f16", 8)
#define KBD__WGV1_f16_12(X, pre, R) KBD__WGV1_16(X, pre, R, "f16", 12)
#define KBD__WGV1_tf32_0(X, pre, R) X(0, pre, "tf32", "tf32", ", 1, 1", R)
#define KBD__WGV1_fp8_0(X, pre, R) X(0, pre, "e4m3", "e4m3", ", 1, 1", R)
#define KBD__WGV1_fp8_4(X, pre, R) X(4, pre, "e5m2", "e4m3", ", 1, 1", R)
#define KBD__WGV1_fp8_8(X, pre, R) X(8, pre, "e4m3", "e5m2", ", 1, 1", R)
#define KBD__WGV1_fp8_12(X, pre, R) X(12, pre, "e5m2", "e5m2", ", 1, 1", R)
#define KBD__WGV1_i8_0(X, pre, R) X(0, pre, "s8", "s8", "", R)
#define KBD__WGV1_i8_4(X, pre, R) X(4, pre, "u8", "s8", "", R)
#define KBD__WGV1_i8_8(X, pre, R) X(8, pre, "s8", "u8", "", R)
#define KBD__WGV1_i8_12(X, pre, R) X(12, pre, "u8", "u8", "", R)
/* clang-format on */

/* One case of the switch over N for a family: the instruction prefix up to the input types. */
#define KBD__WG_PRE(N, k, d) "wgmma.mma_async.sync.aligned.m64n" #N k "." d
#define KBD__WGN_F32(N, RF, RH, V, k)                                                                                  \
  case N:                                                                                                              \
    KBD__WGMMA_ASM(RF, "+f", df, V, KBD__WG_PRE(N, k, "f32"));                                                         \
    break;
#define KBD__WGN_F16(N, RF, RH, V, k)                                                                                  \
  case N:                                                                                                              \
    KBD__WGMMA_ASM(RH, "+r", du, V, KBD__WG_PRE(N, k, "f16"));                                                         \
    break;
#define KBD__WGN_S32(N, RF, RH, V, k)                                                                                  \
  case N:                                                                                                              \
    KBD__WGMMA_ASM(RF, "+r", du, V, KBD__WG_PRE(N, k, "s32"));                                                         \
    break;
#define KBD__WG_SWITCH(NS, CASE, V, k)                                                                                 \
  switch (n) {                                                                                                         \
    NS(CASE, V, k)                                                                                                     \
  default: __trap();                                                                                                   \
  }
#endif /* KBD_SM90A */

#if KBD_SM90A
/* The variant selector of an idesc (see the lists above). */
KBD_DEV uint32_t kbd__wg_sel(int kind, uint32_t idesc) {
  const int a = kbd_umma_idesc_type(kind, kbd_umma_idesc_a_code(idesc));
  const int b = kbd_umma_idesc_type(kind, kbd_umma_idesc_b_code(idesc));
  const uint32_t neg = kbd_umma_idesc_negate_a(idesc) | kbd_umma_idesc_negate_b(idesc) << 1;
  return kind == KBD_MMA_KIND_F16
             ? neg | (uint32_t)kbd_umma_idesc_a_major(idesc) << 2 | (uint32_t)kbd_umma_idesc_b_major(idesc) << 3
         : kind == KBD_MMA_KIND_F8F6F4 ? neg | (uint32_t)(a == KBD_MMA_E5M2) << 2 | (uint32_t)(b == KBD_MMA_E5M2) << 3
         : kind == KBD_MMA_KIND_I8     ? (uint32_t)(a == KBD_MMA_U8) << 2 | (uint32_t)(b == KBD_MMA_U8) << 3
                                       : neg;
}
#endif

/* wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype {d}, a-desc, b-desc, scale-d[, imm-scale-a,
 * imm-scale-b[, imm-trans-a, imm-trans-b]];     PTX ISA 8.0, sm_90a (s8/u8 mixed: PTX ISA 8.4).
 * Warpgroup-collective. d: the thread's N/2 f32 or s32 accumulator elements in WGMMA_ACC order (§4.3), or
 * for an f16 D (f16 and fp8 inputs) its N/2 kbd_f16, 4-byte aligned: they are the N/4 .f16x2 registers
 * themselves (element 2j in the low half of word j), so no packing code lands inside the wgmma region;
 * ld is the CPU twin's lane stride. kind / idesc
 * (kbd_umma_instr_desc with M = 64) give the types, N, the majors (imm-trans, 16-bit types only) and the
 * negate bits (imm-scale -1, not for integers). accumulate: 0 overwrites D (scale-d false). */
KBD_DEV void kbd_hw_wgmma(void *d, int ld, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc, int accumulate,
                          KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld;
#if KBD_SM90A
  float *const df = (float *)d;
  uint32_t *const du = (uint32_t *)d;
  const uint32_t scd = (uint32_t)accumulate; /* the asm tests it against 0 */
  const int n = kbd_umma_idesc_n(idesc);
  const int a = kbd_umma_idesc_type(kind, kbd_umma_idesc_a_code(idesc));
  const int f16d = kbd_umma_idesc_dtype(idesc) == KBD_MMA_F16;
  const uint32_t sel = kbd__wg_sel(kind, idesc);
  (void)df, (void)du;
  if (kind == KBD_MMA_KIND_F16 && a == KBD_MMA_BF16) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F32, KBD__WGV_BF16, "k16")
  } else if (kind == KBD_MMA_KIND_F16 && !f16d) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F32, KBD__WGV_F16, "k16")
  } else if (kind == KBD_MMA_KIND_F16) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F16, KBD__WGV_F16, "k16")
  } else if (kind == KBD_MMA_KIND_TF32) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F32, KBD__WGV_TF32, "k8")
  } else if (kind == KBD_MMA_KIND_F8F6F4 && !f16d) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F32, KBD__WGV_FP8, "k32")
  } else if (kind == KBD_MMA_KIND_F8F6F4) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS, KBD__WGN_F16, KBD__WGV_FP8, "k32")
  } else if (kind == KBD_MMA_KIND_I8) {
    KBD__WG_SWITCH(KBD__PTX_WGMMA_NS_I8, KBD__WGN_S32, KBD__WGV_I8, "k32")
  } else {
    __trap();
  }
#else
  (void)d, (void)kind, (void)idesc, (void)adesc, (void)bdesc, (void)accumulate;
  KBD__PTX_NO_WGMMA();
#endif
}

/* kbd_mma's wgmma (f32 or s32 D): one function per type family, variant (sel: the transposes or the 8-bit type pair;
 * kbd_mma never negates) and N, each one unguarded asm statement. kbd_hw_wgmma_fn picks it from the tile types,
 * majors and N at the call site in a constant expression, so cicc inlines exactly one asm statement at each K-step.
 * A C switch over N or over the variant inside an inlined function does not fold before cicc copies the whole
 * switch into every K-step (20-30 ms of cicc per K-step and switch on the GEMM example), and a guarded 16-variant
 * statement makes ptxas parse 16 wgmma per K-step (docs/design/mma.md). The arguments are kbd_hw_wgmma's; the
 * function trusts that kind / idesc name its family, variant and N. Only the sm_90a device pass defines them. */
#if KBD_SM90A
/* Tags for overload resolution: a family and variant (kbd__wgv<16 family + sel>) and an N (kbd__wgn<N>). */
template <int kbd_v_> struct kbd__wgv {};
template <int kbd_n_> struct kbd__wgn {};
enum { KBD__WGF_bf16 = 0, KBD__WGF_f16 = 16, KBD__WGF_tf32 = 32, KBD__WGF_fp8 = 48, KBD__WGF_i8 = 64 };
/* X(N, RF, RH, fam, s, k, D, c, dv) of a family's N list: the overload for one N. Each is a template on the
 * accumulator's element type, so the front end parses its body but analyses it only where a call site
 * instantiates it: a translation unit holds about 600 of them (17 families and variants x 32 N, each an operand
 * list of up to 128 registers), and as plain functions their analysis was a third of cicc's front end on the GEMM
 * example (docs/design/mma.md). */
#define KBD__WG_FN1(N, RF, RH, fam, s, k, D, c, dv)                                                                    \
  template <typename kbd_e_>                                                                                           \
  KBD_DEV void kbd__ptx_wgmma_##fam##_##s(kbd__wgn<N>, kbd_e_ *dv, uint64_t adesc, uint64_t bdesc, uint32_t scd) {     \
    KBD__WGMMA_ASM1(RF, c, dv, KBD__WGV1_##fam##_##s, KBD__WG_PRE(N, k, D));                                           \
  }
/* one family and variant: its N overloads, a fallback for an N outside the list (kbd_mma's checks have already
 * reported it), and the dispatch from its kbd__wgv tag (E: the accumulator's element type) */
#define KBD__WG_FAMILY(NS, fam, s, k, D, c, dv, E)                                                                     \
  NS(KBD__WG_FN1, fam, s, k, D, c, dv)                                                                                 \
  template <int kbd_n_, typename kbd_e_>                                                                               \
  KBD_DEV void kbd__ptx_wgmma_##fam##_##s(kbd__wgn<kbd_n_>, kbd_e_ *, uint64_t, uint64_t, uint32_t) {                  \
    __trap();                                                                                                          \
  }                                                                                                                    \
  template <int kbd_n_>                                                                                                \
  KBD_DEV void kbd__wg_call(kbd__wgv<KBD__WGF_##fam + s>, kbd__wgn<kbd_n_> n, void *d, uint64_t adesc, uint64_t bdesc, \
                            uint32_t scd) {                                                                            \
    kbd__ptx_wgmma_##fam##_##s(n, (E *)d, adesc, bdesc, scd);                                                          \
  }
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, bf16, 0, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, bf16, 4, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, bf16, 8, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, bf16, 12, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, f16, 0, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, f16, 4, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, f16, 8, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, f16, 12, "k16", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, tf32, 0, "k8", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, fp8, 0, "k32", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, fp8, 4, "k32", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, fp8, 8, "k32", "f32", "+f", df, float)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS, fp8, 12, "k32", "f32", "+f", df, float)
/* s8/u8 in any mix with an s32 D: the integer N list (no n40, n56, ...) and no negate immediates */
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS_I8, i8, 0, "k32", "s32", "+r", du, uint32_t)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS_I8, i8, 4, "k32", "s32", "+r", du, uint32_t)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS_I8, i8, 8, "k32", "s32", "+r", du, uint32_t)
KBD__WG_FAMILY(KBD__PTX_WGMMA_NS_I8, i8, 12, "k32", "s32", "+r", du, uint32_t)
/* a family and variant the lists above lack (kbd_mma's checks have already reported it) */
template <int kbd_v_, int kbd_n_>
KBD_DEV void kbd__wg_call(kbd__wgv<kbd_v_>, kbd__wgn<kbd_n_>, void *, uint64_t, uint64_t, uint32_t) {
  __trap();
}
/* The kbd_hw_wgmma-shaped function of family and variant v and N n: the one instantiation a call site makes. */
template <int kbd_v_, int kbd_n_>
KBD_DEV void kbd__ptx_wgmma_leaf(void *d, int ld, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc,
                                 int accumulate, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  (void)ld, (void)kind, (void)idesc;
  kbd__wg_call(kbd__wgv<kbd_v_>(), kbd__wgn<kbd_n_>(), d, adesc, bdesc, (uint32_t)accumulate); /* the asm tests != 0 */
}
/* The family and variant of A and B of kbd_mma types ta, tb (KBD_MMA_*) and smem majors am, bm (KBD_SMEM_*): sel
 * bit 2 (+4) is A MN-major / e5m2 / u8, bit 3 (+8) the same for B. */
#define KBD__WG_CODE(ta, tb, am, bm)                                                                                   \
  ((int)(ta) == KBD_MMA_BF16 || (int)(ta) == KBD_MMA_F16                                                               \
       ? ((int)(ta) == KBD_MMA_BF16 ? (int)KBD__WGF_bf16 : (int)KBD__WGF_f16) + 4 * ((int)(am) == KBD_SMEM_MN_MAJOR) + \
             8 * ((int)(bm) == KBD_SMEM_MN_MAJOR)                                                                      \
   : (int)(ta) == KBD_MMA_TF32 ? (int)KBD__WGF_tf32                                                                    \
   : (int)(ta) == KBD_MMA_S8 || (int)(ta) == KBD_MMA_U8                                                                \
       ? (int)KBD__WGF_i8 + 4 * ((int)(ta) == KBD_MMA_U8) + 8 * ((int)(tb) == KBD_MMA_U8)                              \
       : (int)KBD__WGF_fp8 + 4 * ((int)(ta) == KBD_MMA_E5M2) + 8 * ((int)(tb) == KBD_MMA_E5M2))
/* The function for A and B of kbd_mma types ta, tb, smem majors am, bm and N n, all constants. */
#define kbd_hw_wgmma_fn(ta, tb, am, bm, n) (&kbd__ptx_wgmma_leaf<KBD__WG_CODE(ta, tb, am, bm), (n)>)
#else
#define kbd_hw_wgmma_fn(ta, tb, am, bm, n) ((void)(ta), (void)(tb), (void)(am), (void)(bm), (void)(n), kbd_hw_wgmma)
#endif

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MMA_WGMMA_H */
