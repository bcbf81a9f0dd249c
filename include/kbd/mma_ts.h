/* kbd/mma_ts.h - tcgen05.mma with A from Tensor Memory (sm_100a; docs/mma.md, docs/design/mma-ts.md).
 *
 *   KBD_TMEM_A(bf16 or f16, M, K) a;          an A operand (M x K, M = 128 or 64) in Tensor Memory: K/2 columns,
 *                                             two 16-bit elements per 32-bit cell (kbd/mma_ts_layout.h)
 *   kbd_tmem_a_bind(a, &tm, col)              a uses columns col.. of the allocation: they may be an
 *                                             accumulator's (FA4 writes P over the columns of S)
 *   kbd_tmem_a_store(a, r, k0)                the warpgroup: columns k0..k0+C-1 of A = r, a KBD_ACC_TILE(dt or f32,
 *                                             M, C) (the register view of an M-row accumulator; f32 is rounded to
 *                                             dt): tcgen05.st, not waited for. M = 128 only (below)
 *   kbd_tmem_a_ready(a, &bar)                 each storing warp, after its stores: tcgen05.wait::st,
 *                                             fence::before_thread_sync, one arrive on bar (init it with
 *                                             KBD_ACC_RELEASES(storing threads)): the MMA warp may read A
 *   kbd_mma_ts_issue(acc, a, b, accumulate)   the MMA warp (one warp; its elected thread issues), after waiting
 *                                             for bar (kbd_acc_wait): acc (+)= a * b^T, b an N x K shared tile of
 *                                             a's type, K-major or MN-major; K/16 tcgen05.mma [d], [a], bdesc.
 *                                             Commit with kbd_mma_commit as for kbd_mma_issue
 *   kbd_mma_ts_issue_elected(acc, a, b, accumulate)   the same by the calling thread: inside the MMA warp's own
 *                                             KBD_ELECT_ONE around its loop (kbd_mma_issue_elected, kbd/mma.h)
 *
 * Why: FlashAttention-4's O += P V. P = softmax(S) is computed in registers from S, which the MMA wrote to Tensor
 * Memory; tcgen05.mma takes A from shared memory or Tensor Memory, never registers. Through shared memory P costs
 * a generic store, fence.proxy.async and a barrier, and 16 KB of shared memory per 64 x 128 tile; in Tensor Memory
 * it is a tcgen05.st back into columns the softmax has just read (S's own: S is f32, one element per cell, so P
 * needs half of them) and an mbarrier arrive.
 *
 * Rules (the CPU machine checks them at the MMA and at the store):
 *   - the MMA reads A cells only after their tcgen05.st completed (tcgen05.wait::st in the storing warp) and was
 *     ordered before the issue (fence::before_thread_sync + arrive there, wait + fence::after_thread_sync in the
 *     MMA warp): kbd_tmem_a_ready and kbd_acc_wait do exactly that;
 *   - A cells must not be stored to while an MMA that reads them may still run: wait for the commit that
 *     covers it (kbd_acc_wait on the barrier of the kbd_mma_commit after the issue) before the next store.
 *
 * M = 64: kbd_mma_ts_issue takes it (Layout F: A and D need the same lane alignment, 0 or 16); kbd_tmem_a_store
 * does not yet: the register view of a 64-row accumulator is the WGMMA_ACC fragment, whose packed pairs need the
 * tcgen05.st.16x128b shape, which kbd's twins do not offer yet. sm_90a has no A in Tensor Memory: every call here
 * is a compile-time error naming it (use kbd_mma_rs, A from registers).
 */
#ifndef KBD_MMA_TS_H
#define KBD_MMA_TS_H

#include "mma.h"
#include "mma_ts_layout.h"

/* A storage kind of its own: an accumulator (KBD_KIND_TMEM) is not an A operand and the reverse. */
#define KBD_KIND_TMEM_A 4

#define KBD__TMEM_A_RULE_DT                                                                                            \
  "kbd: KBD_TMEM_A: the type must be bf16 or f16 (tcgen05.mma kind::f16 with A in Tensor Memory)"
#define KBD__TMEM_A_RULE_M                                                                                             \
  "kbd: KBD_TMEM_A: M must be 128 or 64 (one tcgen05.mma: Layout D or F; taller A are several operands)"
#define KBD__TMEM_A_RULE_K                                                                                             \
  "kbd: KBD_TMEM_A: K must be a multiple of 16 in 16..512 (one tcgen05.mma K-step is 16 elements)"
#define KBD__TMEM_A_CHECKS(dt, M, K)                                                                                   \
  KBD_STATIC_ASSERT(KBD_DT_##dt == KBD_DT_bf16 || KBD_DT_##dt == KBD_DT_f16, KBD__TMEM_A_RULE_DT);                     \
  KBD_STATIC_ASSERT((M) == 128 || (M) == 64, KBD__TMEM_A_RULE_M);                                                      \
  KBD_STATIC_ASSERT((K) >= 16 && (K) <= 512 && (K) % 16 == 0, KBD__TMEM_A_RULE_K)

/* (through a second macro so that dt, M and K are expanded first: a kernel text passes its own macros) */
#define KBD_TMEM_A(dt, M, K) KBD__TMEM_A(dt, M, K)
#define KBD__TMEM_A(dt, M, K)                                                                                          \
  struct {                                                                                                             \
    KBD__TMEM_A_CHECKS(dt, M, K);                                                                                      \
    uint32_t taddr;                                                                                                    \
    char (*kbd_meta_)[M][K][KBD_WARPGROUP][KBD_LAYOUT_TMEM_ACC][KBD_DT_##dt];                                          \
    char (*kbd_kind_)[KBD_KIND_TMEM_A];                                                                                \
  }
/* Tensor Memory columns an M x K A of 16-bit elements takes (two per cell). */
#define KBD_TMEM_A_COLS(K) ((K) / 2)

/* One message per call, each naming it: the call is what the user wrote. */
#define KBD__MMA_TS_RULE_ARCH(call)                                                                                    \
  "kbd: " call ": sm_90a has no A operand in Tensor Memory (wgmma reads A from registers or shared memory): use "      \
  "kbd_mma_rs (A from registers) there; this call is sm_100a only"
#define KBD__MMA_TS_RULE_A(call) "kbd: " call ": the A operand must be a KBD_TMEM_A"
#define KBD__MMA_TS_RULE_KINDS                                                                                         \
  "kbd_mma_ts_issue: acc must be a KBD_ACC, a a KBD_TMEM_A and b a shared tile (KBD_STILE / KBD_STILE_MN)"
#define KBD__MMA_TS_RULE_SHAPES                                                                                        \
  "kbd_mma_ts_issue: shapes: a is M x K with M the rows of the accumulator (64 or 128), b is N x K with N its columns"
#define KBD__MMA_TS_RULE_TYPES "kbd_mma_ts_issue: b must have the type of a (bf16 x bf16 or f16 x f16)"
#define KBD__MMA_TS_RULE_F16ACC "kbd_mma_ts_issue: an f16 accumulator takes f16 operands only (bf16 accumulates in f32)"
#define KBD__TMEM_A_RULE_VIEW                                                                                          \
  "kbd_tmem_a_store: r must be KBD_ACC_TILE(dt, 128, C) with the type (or f32) and rows of a, C <= K a multiple of 8 " \
  "(a "                                                                                                                \
  "KBD_TMEM_A "                                                                                                        \
  "of 64 rows cannot be stored yet: docs/mma.md)"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#if KBD_MMA_ARCH == 90
/* the static assertions of every call have stopped the build; these keep the expansions well-formed */
#define kbd__tmem_a_bind_(a, tm, col) ((void)(tm), (void)(col))
#define kbd__tmem_a_store_(a, r, k0) ((void)(k0))
#define kbd__tmem_a_ready_(a, bar) ((void)(bar))
#define kbd__mma_ts_issue_(acc, a, b, accumulate, ta) ((void)(accumulate), (void)(ta))
#define kbd__mma_ts_issue_one_(acc, a, b, accumulate, ta) ((void)(accumulate), (void)(ta))
#else
#define kbd__tmem_a_bind_(a, tm, col) ((a).taddr = kbd__tmem_base((tm), (uint32_t)(col), KBD_SITE))

/* The warp's 32 lanes of rows 32(w%4).. of a 128-row A: register j of the thread of row m holds elements
 * k0 + 2j, k0 + 2j + 1 (one cell), stored with tcgen05.st.32x32b (thread l <-> lane 32(w%4) + l, register j <->
 * column j). An f32 view is rounded to A's type while packing (f16a: f16, else bf16): a softmax's f32 P then
 * never exists as a 16-bit register tile, and the pair's two roundings can become one cvt.rn.bf16x2.f32. Chunks
 * of at most 32 registers keep each asm statement's operand list short. */
KBD_DEV void kbd__tmem_a_store(uint32_t taddr, const void *v, int npt, int vsize, int f16a, int m_total, int kcols,
                               int cols, int k0, KBD_SITE_PARAMS) {
  kbd_hw_tmem_a_cols(k0, cols, kcols, KBD_SITE_ARGS);
#if KBD_MMA_ARCH == 100
  const uint32_t lane0 = kbd_tmem_a_pos_of(m_total, 2, 32 * (kbd_warp_id() & 3), 0).lane << 16;
  uint32_t cells[KBD_LANES_HELD * 32];
  const int per = cols / 2; /* registers per thread */
  const int chunk = (per & -per) < 32 ? (per & -per) : 32;
  KBD_UNROLL
  for (int c = 0; c < per; c += chunk) {
    for (int l = 0; l < KBD_LANES_HELD; ++l) {
      KBD_UNROLL
      for (int j = 0; j < chunk; ++j) {
        const int e = 2 * (c + j); /* the view's element of k0 + e */
        const kbd_tmem_a_pos lo = kbd_tmem_a_pos_of(m_total, 2, 0, k0 + e),
                             hi = kbd_tmem_a_pos_of(m_total, 2, 0, k0 + e + 1);
        if (vsize == 4 && lo.byte == 0 && hi.byte == 2) {
          /* the pair is one cell, low half first: one packed cvt (a constant test after inlining) */
          const float *f = (const float *)v + l * npt + e;
          cells[l * 32 + j] = f16a ? kbd_hw_cvt_rn_f16x2_f32(f[1], f[0]) : kbd_hw_cvt_rn_bf16x2_f32(f[1], f[0]);
          continue;
        }
        uint32_t x0, x1;
        if (vsize == 4) {
          const float *f = (const float *)v + l * npt + e;
          x0 = f16a ? kbd_f32_to_f16(f[0]).bits : kbd_f32_to_bf16(f[0]).bits;
          x1 = f16a ? kbd_f32_to_f16(f[1]).bits : kbd_f32_to_bf16(f[1]).bits;
        } else {
          const uint16_t *h = (const uint16_t *)v + l * npt + e; /* kbd_bf16 / kbd_f16: one uint16_t member */
          x0 = h[0];
          x1 = h[1];
        }
        cells[l * 32 + j] = x0 << (8u * lo.byte) | x1 << (8u * hi.byte);
      }
    }
    kbd_hw_tmem_st(taddr + lane0 + kbd_tmem_a_pos_of(m_total, 2, 0, k0 + 2 * c).col, cells, 32, KBD_TMEM_32X32B, chunk,
                   KBD_SITE_ARGS);
  }
#else
  (void)v, (void)npt, (void)vsize, (void)f16a, (void)taddr, (void)m_total, (void)cols, (void)k0;
#endif
}
#define kbd__tmem_a_store_(a, r, k0)                                                                                   \
  kbd__tmem_a_store((a).taddr, (const void *)&(r).v[0][0], KBD__VIEW_NPT(r), (int)sizeof((r).v[0][0]),                 \
                    KBD_DTYPE(a) == KBD_DT_f16, KBD_ROWS(a), KBD_COLS(a), KBD_COLS(r), (int)(k0), KBD_SITE)

/* The stores are complete (wait::st) and ordered before the arrive (fence::before_thread_sync): the MMA warp's
 * wait + fence::after_thread_sync then orders its MMA after them (ptx-reference 5.8). */
KBD_DEV void kbd__tmem_a_ready(uint64_t *bar, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tmem_wait_st(KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
  KBD_ELECT_ONE { kbd_hw_mbar_arrive(bar, 1u, KBD_SITE_ARGS); }
#else
  (void)bar;
  KBD_SITE_UNUSED;
#endif
}
#define kbd__tmem_a_ready_(a, bar) kbd__tmem_a_ready((bar), KBD_SITE)

/* The calling thread issues the K/16 MMAs. K-step j reads A's columns from kbd_tmem_a_pos_of (8j for 16-bit
 * elements) and B's K-step j through its descriptor: B's descriptor once, stepped by constants (kbd__umma_issue_k). */
KBD_DEV void kbd__umma_ts_issue_k(uint32_t dtaddr, uint32_t ataddr, int m_total, uint32_t idesc, kbd_smem_shape bs,
                                  uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  const int ksteps = kbd_mma_ksteps(&bs), kel = KBD_MMA_KSTEP_BYTES / bs.esize;
  const uint64_t b0 = kbd_umma_smem_desc(&bs, baddr, 0, 0);
  KBD_UNROLL
  for (int j = 0; j < ksteps; ++j)
    kbd_hw_umma_ts(dtaddr, KBD_MMA_KIND_F16, idesc, ataddr + kbd_tmem_a_pos_of(m_total, bs.esize, 0, j * kel).col,
                   kbd_mma_desc_add_bytes(b0, (int32_t)kbd_mma_operand_offset(&bs, 0, j)), accumulate || j > 0,
                   KBD_SITE_ARGS);
#else
  (void)dtaddr, (void)ataddr, (void)m_total, (void)idesc, (void)bs, (void)baddr, (void)accumulate;
  KBD_SITE_UNUSED;
#endif
}
/* One warp; its elected thread issues. The fence orders the MMAs after what the warp acquired before (the softmax's
 * arrive on P's barrier): ptx-reference 5.8. */
KBD_DEV void kbd__umma_ts_issue_warp(uint32_t dtaddr, uint32_t ataddr, int m_total, uint32_t idesc, kbd_smem_shape bs,
                                     uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  KBD_ELECT_ONE { kbd__umma_ts_issue_k(dtaddr, ataddr, m_total, idesc, bs, baddr, accumulate, KBD_SITE_ARGS); }
#else
  kbd__umma_ts_issue_k(dtaddr, ataddr, m_total, idesc, bs, baddr, accumulate, KBD_SITE_ARGS); /* no instruction */
#endif
}
/* kbd_mma_ts_issue_elected: the same by the calling thread, the elected lane of the MMA warp's own KBD_ELECT_ONE
 * around its loop (kbd_mma_issue_elected, kbd/mma.h, has the compiler reason) */
KBD_DEV void kbd__umma_ts_issue_one(uint32_t dtaddr, uint32_t ataddr, int m_total, uint32_t idesc, kbd_smem_shape bs,
                                    uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_umma_elected("kbd_mma_ts_issue_elected", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
#endif
  kbd__umma_ts_issue_k(dtaddr, ataddr, m_total, idesc, bs, baddr, accumulate, KBD_SITE_ARGS);
}
#define kbd__mma_ts_issue_(acc, a, b, accumulate, ta)                                                                  \
  kbd__mma_ts_issue_fn_(kbd__umma_ts_issue_warp, acc, a, b, accumulate, ta)
#define kbd__mma_ts_issue_one_(acc, a, b, accumulate, ta)                                                              \
  kbd__mma_ts_issue_fn_(kbd__umma_ts_issue_one, acc, a, b, accumulate, ta)
#define kbd__mma_ts_issue_fn_(fn, acc, a, b, accumulate, ta)                                                           \
  fn((acc).taddr, (a).taddr, KBD_ROWS(a),                                                                              \
     kbd_umma_instr_desc(ta, ta, KBD__ACC_DTYPE(acc), KBD_ROWS(acc), KBD_COLS(acc), KBD_SMEM_K_MAJOR,                  \
                         KBD_STILE_MAJOR(b), 0u),                                                                      \
     KBD_STILE_SHAPE(b), kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate), KBD_SITE)
#endif

#define kbd_tmem_a_bind(a, tm, col)                                                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_TS_RULE_ARCH("kbd_tmem_a_bind"));                                   \
    KBD_STATIC_ASSERT(KBD_KIND(a) == KBD_KIND_TMEM_A, KBD__MMA_TS_RULE_A("kbd_tmem_a_bind"));                          \
    kbd__tmem_a_bind_(a, tm, col);                                                                                     \
  } while (0)
#define kbd_tmem_a_store(a, r, k0)                                                                                     \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_TS_RULE_ARCH("kbd_tmem_a_store"));                                  \
    KBD_STATIC_ASSERT(KBD_KIND(a) == KBD_KIND_TMEM_A, KBD__MMA_TS_RULE_A("kbd_tmem_a_store"));                         \
    KBD__IS_REG(r);                                                                                                    \
    KBD_STATIC_ASSERT(KBD_ROWS(a) == 128 && KBD_ROWS(r) == 128 &&                                                      \
                          (KBD_DTYPE(r) == KBD_DTYPE(a) || KBD_DTYPE(r) == KBD_DT_f32) &&                              \
                          KBD_LAYOUT(r) == KBD_ACC_LAYOUT(128) && KBD_SCOPE(r) == KBD_WARPGROUP &&                     \
                          KBD_COLS(r) <= KBD_COLS(a) && KBD_COLS(r) % 8 == 0,                                          \
                      KBD__TMEM_A_RULE_VIEW);                                                                          \
    kbd__tmem_a_store_(a, r, k0);                                                                                      \
  } while (0)
#define kbd_tmem_a_ready(a, bar)                                                                                       \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_TS_RULE_ARCH("kbd_tmem_a_ready"));                                  \
    KBD_STATIC_ASSERT(KBD_KIND(a) == KBD_KIND_TMEM_A, KBD__MMA_TS_RULE_A("kbd_tmem_a_ready"));                         \
    kbd__tmem_a_ready_(a, bar);                                                                                        \
  } while (0)
/* the operand rules kbd_mma_ts_issue and kbd_mma_ts_issue_elected share (compile time) */
#define KBD__MMA_TS_STATIC_CHECKS(acc, a, b)                                                                           \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__MMA_TARGET_OK, KBD__MMA_RULE_TARGET);                                                       \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_TS_RULE_ARCH("kbd_mma_ts_issue"));                                  \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC && KBD_KIND(a) == KBD_KIND_TMEM_A && KBD_KIND(b) == KBD_KIND_SMEM, \
                      KBD__MMA_TS_RULE_KINDS);                                                                         \
    KBD_STATIC_ASSERT(KBD_ROWS(a) == KBD_ROWS(acc) && KBD_ROWS(b) == KBD_COLS(acc) && KBD_COLS(a) == KBD_COLS(b),      \
                      KBD__MMA_TS_RULE_SHAPES);                                                                        \
    KBD_STATIC_ASSERT(KBD_DTYPE(b) == KBD_DTYPE(a), KBD__MMA_TS_RULE_TYPES);                                           \
    KBD_STATIC_ASSERT(KBD_DTYPE(acc) != KBD_DT_f16 || KBD_DTYPE(a) == KBD_DT_f16, KBD__MMA_TS_RULE_F16ACC);            \
    KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM100, b);                                                                      \
  } while (0)
#define kbd_mma_ts_issue(acc, a, b, accumulate)                                                                        \
  do {                                                                                                                 \
    KBD__MMA_TS_STATIC_CHECKS(acc, a, b);                                                                              \
    kbd__mma_ts_issue_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));                                            \
  } while (0)
/* kbd_mma_ts_issue from elected-lane code (kbd_mma_issue_elected); the CPU machine faults a call from warp-uniform or
 * per-lane code */
#define kbd_mma_ts_issue_elected(acc, a, b, accumulate)                                                                \
  do {                                                                                                                 \
    KBD__MMA_TS_STATIC_CHECKS(acc, a, b);                                                                              \
    kbd__mma_ts_issue_one_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));                                        \
  } while (0)
#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */

#endif /* KBD_MMA_TS_H */
