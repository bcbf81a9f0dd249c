/* kbd/mma_rs.h - warpgroup MMA with A from registers (sm_90a; included by kbd/mma.h).
 *
 *   kbd_mma_rs(acc, a, b, accumulate)   the warpgroup: acc (+)= a * b^T over the whole K, a a register tile
 *                                       KBD_ACC_TILE(bf16 or f16, M, K) (M = the accumulator's rows, K a
 *                                       multiple of 16) and b an N x K shared tile of the same type (K-major or
 *                                       MN-major); accumulate 0 overwrites. sm_90a only.
 *   kbd_mma_rs_ring(acc, a, TB, b0, bstride, s, accumulate)   kbd_mma_rs on stage s of a ring of shared tiles of
 *                                       type TB whose stage 0 descriptor is b0 (kbd_mma_desc_of) and stride bstride
 *                                       bytes (kbd_mma_ring's B side, for a main loop: the descriptor is not rebuilt
 *                                       from the tile's address per call). sm_90a only
 *   kbd_mma_rs_pin(a)                   a's values are final for a later kbd_mma_rs: sm_90a pins them in registers
 *                                       here, so the code that computed them stays before this point; CPU: the
 *                                       check kbd_mma_rs makes on a (unchanged under a pending wgmma); sm_100a:
 *                                       nothing
 *
 * Why: wgmma can read its A operand from the registers of the warpgroup instead of shared memory, and the
 * 16-bit A fragment (ptx-reference 4.4) is exactly the WGMMA_ACC fragment of a 64 x 16 block - the layout of
 * an sm_90a accumulator's register view. So an accumulator converted to bf16 (attention's P = softmax(S))
 * is the A of the next MMA (O += P V) as it stands: no shared-memory round trip, no fence.proxy.async, no
 * barrier. tcgen05.mma (sm_100a) has no such form: A comes from shared memory or Tensor Memory, so there
 * kbd_mma_rs is a compile-time error naming that; a kernel built for both archs writes
 *   #if KBD_MMA_ARCH == 90  kbd_mma_rs(o, p, v, 1);  #else  (P to a shared tile) kbd_mma(o, p_tile, v, 1);  #endif
 *
 * Why a second name rather than kbd_mma dispatching on the kind of a: the two forms need members that only
 * one kind of tile has (a register tile's v, a shared tile's p and swizzle), and C11 cannot select code by
 * type inside a macro (every branch of an `if`, _Generic or __builtin_choose_expr must compile for every
 * argument). The name also marks what the caller takes on: the tile must keep its values until a wait
 * covers the MMA (below).
 *
 * Rule (PTX ISA): the registers of A must not be touched between the issue and the wgmma.wait_group that
 * covers it - kbd_mma_wait, or the kbd_mma_release after the NEXT kbd_mma of the accumulator. Writing the tile
 * in that window (the next iteration's conversion into the same tile, say) is a report on the CPU machine
 * when the tile is next given to kbd_mma_rs (cpu/mma_rs.h; limits in docs/design/mma.md).
 *
 * Cost: K/16 x M/64 wgmma (register A, descriptor B), one wgmma.fence, one commit; the packing of the bf16
 * pairs into the A registers is register renaming (the 16-bit elements are halves of the registers already).
 */
#ifndef KBD_MMA_RS_H
#define KBD_MMA_RS_H

#include "mma.h"

#define KBD__MMA_RS_RULE_ARCH                                                                                          \
  "kbd_mma_rs: sm_100a has no MMA with A in registers: tcgen05.mma reads A from shared memory or Tensor Memory, "      \
  "not registers (ptx-reference 5.4). Store A to a shared tile (kbd_stile_store, kbd_fence_proxy_async, a barrier) "   \
  "and call kbd_mma"
#define KBD__MMA_RS_RULE_KINDS                                                                                         \
  "kbd_mma_rs: acc must be a KBD_ACC, a a register tile (KBD_ACC_TILE(bf16 or f16, M, K)) and b a shared tile "        \
  "(KBD_STILE / KBD_STILE_MN); an A in shared memory goes to kbd_mma"
#define KBD__MMA_RS_RULE_TYPES                                                                                         \
  "kbd_mma_rs: a register A must be bf16 or f16 and b the same type; tf32 and 8-bit (e4m3/e5m2) A fragments are "      \
  "other register layouts (ptx-reference 4.4) that kbd does not offer: give such an A to kbd_mma in a shared tile"
#define KBD__MMA_RS_RULE_LAYOUT                                                                                        \
  "kbd_mma_rs: a must be KBD_ACC_TILE(dt, M, K), a warpgroup tile with KBD_LAYOUT_WGMMA_ACC: that layout is "          \
  "wgmma's A fragment (ptx-reference 4.4)"
#define KBD__MMA_RS_RULE_SHAPES                                                                                        \
  "kbd_mma_rs: shapes: a is M x K with M the accumulator's rows, b is N x K with N its columns, and K is a "           \
  "multiple of 16 (one m64nNk16 wgmma per 16 columns of a)"

/* Compile-time checks of one kbd_mma_rs call. The layout rule waits for the sm_90a pass: nvcc's host pass
 * (KBD_MMA_ARCH 0) gives KBD_ACC_TILE the sm_100a layouts. */
#define KBD__MMA_RS_STATIC_CHECKS(acc, a, b)                                                                           \
  KBD_STATIC_ASSERT(KBD__MMA_TARGET_OK, KBD__MMA_RULE_TARGET);                                                         \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100, KBD__MMA_RS_RULE_ARCH);                                                       \
  KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC && KBD_KIND(a) == KBD_KIND_REG && KBD_KIND(b) == KBD_KIND_SMEM,      \
                    KBD__MMA_RS_RULE_KINDS);                                                                           \
  KBD_STATIC_ASSERT((KBD_DTYPE(a) == KBD_DT_bf16 || KBD_DTYPE(a) == KBD_DT_f16) && KBD_DTYPE(b) == KBD_DTYPE(a),       \
                    KBD__MMA_RS_RULE_TYPES);                                                                           \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90 || (KBD_LAYOUT(a) == KBD_LAYOUT_WGMMA_ACC && KBD_SCOPE(a) == KBD_WARPGROUP),    \
                    KBD__MMA_RS_RULE_LAYOUT);                                                                          \
  KBD_STATIC_ASSERT(KBD_ROWS(a) == KBD_ROWS(acc) && KBD_ROWS(b) == KBD_COLS(acc) && KBD_COLS(a) == KBD_COLS(b) &&      \
                        KBD_COLS(a) % 16 == 0,                                                                         \
                    KBD__MMA_RS_RULE_SHAPES);                                                                          \
  KBD_STATIC_ASSERT(KBD_DTYPE(acc) == KBD_DT_f32, "kbd_mma_rs: the accumulator must be f32");                          \
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM90, b)

#if KBD_MODE_CPU || KBD_MODE_CUDA
#if KBD_MMA_ARCH == 90
typedef void (*kbd__wgmma_rs_fn)(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda, uint64_t bdesc,
                                 int accumulate, KBD_SITE_PARAMS);

/* The K-steps and 64-row blocks of one kbd_mma_rs from B's descriptor b0 (rows 0, K-step 0), then the commit.
 * d: the accumulator's registers (ld values per lane on the CPU), mblocks m64 blocks of block_bytes each;
 * a: the A tile's elements (lda 32-bit registers per lane: mblocks x ksteps fragments of 4, block-major, which
 * is the WGMMA_ACC order of an M x K tile). */
KBD_DEV void kbd__wgmma_rs_issue_k(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc, void *a,
                                   int lda, int ksteps, kbd_smem_shape bs, uint64_t b0, int accumulate,
                                   kbd__wgmma_rs_fn wgmma, KBD_SITE_PARAMS) {
  KBD_UNROLL
  for (int j = 0; j < ksteps; ++j) {
    const uint64_t bdesc = kbd_mma_desc_add_bytes(b0, (int32_t)kbd_mma_operand_offset(&bs, 0, j));
    KBD_UNROLL
    for (int m = 0; m < mblocks; ++m)
      wgmma((char *)d + (size_t)m * (size_t)block_bytes, ld, kind, idesc,
            (const char *)a + (size_t)(m * ksteps + j) * 16u, lda, bdesc, accumulate || j > 0, KBD_SITE_ARGS);
  }
  kbd_hw_wgmma_commit(KBD_SITE_ARGS);
}
KBD_DEV void kbd__wgmma_rs_issue(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc, void *a,
                                 int lda, int ksteps, kbd_smem_shape bs, uint32_t baddr, int accumulate,
                                 kbd__wgmma_rs_fn wgmma, KBD_SITE_PARAMS) {
  /* GPU: the A registers are final before the fence (a register write to A after it serializes the wgmmas);
   * CPU: the tile still holds what every pending wgmma of this warp read from it */
  kbd_hw_wgmma_a_touch(a, lda, lda, KBD_SITE_ARGS);
  /* orders the warpgroup's register writes to A and earlier accesses to the accumulator before the MMAs
   * (ptx-reference 4.2) */
  kbd_hw_wgmma_fence(KBD_SITE_ARGS);
  /* one descriptor from a warp-uniform address, stepped by constants (see kbd__wgmma_issue) */
  const uint64_t b0 = kbd_wgmma_smem_desc(&bs, kbd_hw_warp_uniform_u32(baddr), 0, 0);
  kbd__wgmma_rs_issue_k(d, ld, mblocks, block_bytes, kind, idesc, a, lda, ksteps, bs, b0, accumulate, wgmma,
                        KBD_SITE_ARGS);
}
/* kbd_mma_rs_ring: B is stage s of a ring of tiles, at stage 0's descriptor b0 moved by s x bstride bytes
 * (kbd_mma_ring's B side). The stage index is broadcast after the fence, where the warpgroup is converged, so ptxas
 * knows the descriptor warp-uniform: one multiply-add and one R2UR per call, where kbd_mma_rs rebuilds it from the
 * tile's address (the shared window's base, the stage's address, a broadcast, a mask, a shift and an or; issue 27:
 * the P V of the sm_90a attention key loop). The CPU machine checks the moved descriptor against B's tile type as
 * kbd_mma_ring does (kbd_mma_desc_tile_check). */
KBD_DEV void kbd__wgmma_rs_issue_ring(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc, void *a,
                                      int lda, int ksteps, kbd_smem_shape bs, uint64_t b0, int32_t bstride, int s,
                                      int accumulate, kbd__wgmma_rs_fn wgmma, KBD_SITE_PARAMS) {
  kbd_hw_wgmma_a_touch(a, lda, lda, KBD_SITE_ARGS); /* as kbd__wgmma_rs_issue */
  kbd_hw_wgmma_fence(KBD_SITE_ARGS);
  const int32_t su = (int32_t)kbd_hw_warp_uniform_u32((uint32_t)s);
  const uint64_t bdesc = kbd_mma_desc_advance(b0, su * bstride);
  kbd__mma_desc_tile(KBD_MMA_SM90, bs, bdesc, "B", KBD_SITE_ARGS);
  kbd__wgmma_rs_issue_k(d, ld, mblocks, block_bytes, kind, idesc, a, lda, ksteps, bs, bdesc, accumulate, wgmma,
                        KBD_SITE_ARGS);
}
#define KBD__MMA_RS_NPT(t) ((int)(sizeof((t).v[0]) / sizeof((t).v[0][0])))
/* A statement (inside kbd_mma_rs's block): the enum names the constants kbd_hw_wgmma_rs_fn repeats in its leaves. */
#define kbd__mma_rs_(acc, a, b, accumulate, ta)                                                                        \
  {                                                                                                                    \
    enum { kbd__rta = ta, kbd__rbm = KBD_STILE_MAJOR(b), kbd__rn = KBD_COLS(acc) };                                    \
    kbd__wgmma_rs_issue((void *)&(acc).reg.v[0][0], KBD__MMA_RS_NPT((acc).reg), KBD_ROWS(acc) / 64,                    \
                        (int)(KBD_COLS(acc) / 2 * sizeof((acc).reg.v[0][0])), KBD_MMA_KIND_F16,                        \
                        kbd_umma_instr_desc(ta, ta, KBD_MMA_F32, 64, kbd__rn, KBD_SMEM_K_MAJOR, kbd__rbm, 0u),         \
                        (void *)&(a).v[0][0], KBD__MMA_RS_NPT(a) / 2, KBD_COLS(a) / 16, KBD_STILE_SHAPE(b),            \
                        kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate),                                               \
                        kbd_hw_wgmma_rs_fn(kbd__rta, kbd__rbm, kbd__rn), KBD_SITE);                                    \
  }
#define kbd__mma_rs_ring_(acc, a, b, b0, bstride, s, accumulate, ta)                                                   \
  {                                                                                                                    \
    enum { kbd__rta = ta, kbd__rbm = KBD_STILE_MAJOR(b), kbd__rn = KBD_COLS(acc) };                                    \
    kbd__wgmma_rs_issue_ring((void *)&(acc).reg.v[0][0], KBD__MMA_RS_NPT((acc).reg), KBD_ROWS(acc) / 64,               \
                             (int)(KBD_COLS(acc) / 2 * sizeof((acc).reg.v[0][0])), KBD_MMA_KIND_F16,                   \
                             kbd_umma_instr_desc(ta, ta, KBD_MMA_F32, 64, kbd__rn, KBD_SMEM_K_MAJOR, kbd__rbm, 0u),    \
                             (void *)&(a).v[0][0], KBD__MMA_RS_NPT(a) / 2, KBD_COLS(a) / 16, KBD_STILE_SHAPE(b),       \
                             (uint64_t)(b0), (int32_t)(bstride), (int)(s), (accumulate),                               \
                             kbd_hw_wgmma_rs_fn(kbd__rta, kbd__rbm, kbd__rn), KBD_SITE);                               \
  }
#else
/* sm_100a: the static assertion above has stopped the build; nvcc's host pass (no kernel code) parses this. */
#define kbd__mma_rs_(acc, a, b, accumulate, ta) ((void)(acc), (void)(a), (void)(b), (void)(accumulate), (void)(ta))
#define kbd__mma_rs_ring_(acc, a, b, b0, bstride, s, accumulate, ta)                                                   \
  ((void)(acc), (void)(a), (void)(b0), (void)(bstride), (void)(s), (void)(accumulate), (void)(ta))
#endif

/* kbd_mma_rs_pin: the packing that kbd_mma_rs runs before its wgmma.fence, run earlier. The compiler may move
 * arithmetic past an asm statement that does not read its result: a P converted before an unrelated MMA (attention
 * rounds P_{j-1} out of S's registers, then issues S_j = Q K^T into them) can sink below that MMA's issue to the
 * kbd_mma_rs that reads it, and the old values of S then live across the S wgmma (copied aside by cicc, with the
 * copies inside the wgmma region). Pinning a right after it is computed keeps the computation here. */
#if KBD_MMA_ARCH == 90
#define kbd__mma_rs_pin_(a)                                                                                            \
  kbd_hw_wgmma_a_touch((void *)&(a).v[0][0], KBD__MMA_RS_NPT(a) / 2, KBD__MMA_RS_NPT(a) / 2, KBD_SITE)
#else
#define kbd__mma_rs_pin_(a) ((void)(a))
#endif
#define kbd_mma_rs_pin(a)                                                                                              \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(a) == KBD_KIND_REG && (KBD_DTYPE(a) == KBD_DT_bf16 || KBD_DTYPE(a) == KBD_DT_f16),      \
                      "kbd_mma_rs_pin: a must be a register tile of bf16 or f16 (a kbd_mma_rs A operand)");            \
    kbd__mma_rs_pin_(a);                                                                                               \
  } while (0)

#define kbd_mma_rs(acc, a, b, accumulate)                                                                              \
  do {                                                                                                                 \
    KBD__MMA_RS_STATIC_CHECKS(acc, a, b);                                                                              \
    kbd__mma_rs_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));                                                  \
  } while (0)
/* kbd_mma_rs with B stage s of a ring of tiles of type TB: stage 0's descriptor b0 (kbd_mma_desc_of) moved by s x
 * bstride bytes (kbd_mma_desc_advance); kbd_mma_rs's static checks on a tile of type TB */
#define kbd_mma_rs_ring(acc, a, TB, b0, bstride, s, accumulate)                                                        \
  do {                                                                                                                 \
    KBD__MMA_RS_STATIC_CHECKS(acc, a, KBD__STILE_OBJ(TB));                                                             \
    kbd__mma_rs_ring_(acc, a, KBD__STILE_OBJ(TB), b0, bstride, s, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));            \
  } while (0)
#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */

#endif /* KBD_MMA_RS_H */
