/* kbd/mma_pair.h - CTA-pair MMAs on sm_100a (tcgen05 .cta_group::2; docs/mma.md "CTA pairs",
 * docs/design/cta-pair.md).
 *
 * Two CTAs of a cluster whose ranks differ only in bit 0 (2k and 2k + 1) execute one MMA together: each holds
 * M/2 rows of A and N/2 rows of B (the N x K `b` tile) in its own shared memory at the SAME offsets, and each
 * receives its M/2 rows of D (all N columns) in its own Tensor Memory. One thread of the even CTA issues the MMAs
 * and their commit; an M x N output then costs each SM the B bytes of an N/2 x K tile. Two shapes:
 *   M = 256  a = this CTA's 128 x K rows of A, acc = KBD_ACC(dt, 128, N): its 128 rows at lanes 0..127 (Layout A)
 *   M = 128  a = this CTA's 64 x K rows of A, acc = KBD_ACC(dt, 128, N/2): Tensor Memory folds the CTA's 64 x N
 *            half into 128 lanes x N/2 columns (Layout B): lane l, column j holds D row l % 64, column
 *            (l / 64) * N/2 + j. A view read from it (KBD_ACC_TILE(dt, 128, C), row l = lane l) goes out with
 *            kbd_store2d_folded, which puts each row where the fold says.
 * kbd_mma_pair_issue tells the two apart by a's rows (128 or 64); b has N/2 rows in both.
 *
 *   kbd_tmem_alloc_pair(tm, ncols)       one warp in EACH CTA (collective): the same columns in both
 *   kbd_tma_load_pair2d(tile, map, bar, row, col)   (1d..5d, coordinates as kbd_tma_load2d) a load into this
 *                                        CTA's tile that completes on the EVEN CTA's `bar`
 *   kbd_mma_pair_issue(acc, a, b, acc?)  the even CTA's MMA warp: acc this CTA's half of D, a its M/2 x K rows of
 *                                        A, b its N/2 x K rows of B (the shapes above)
 *   kbd_mma_pair_commit(acc, bar)        the same warp: one arrive on `bar` in BOTH CTAs when the MMAs complete
 *   kbd_mma_pair_issue_commit_by_desc(acc, TA, TB, adesc, bdesc, acc?, addr)   the same warp, a ring's k-block:
 *                                        kbd_mma_pair_issue of tiles of types TA, TB named by descriptors
 *                                        (kbd_mma_desc_of, kbd_mma_desc_advance), then kbd_mma_pair_commit to the
 *                                        barrier at 32-bit shared address addr, from one elected section
 *   kbd_mma_pair_issue_commit_by_desc_elected(...)   the same by the calling thread, inside the warp's own
 *                                        KBD_ELECT_ONE around its whole k-loop
 *   kbd_acc_wait / kbd_acc_load          each CTA reads its own half, as for a single-CTA accumulator
 *   kbd_acc_release_pair(acc, bar)       the reading warp releases the half to the issuer: an arrive on the EVEN
 *                                        CTA's `bar`
 *   kbd_tmem_free_pair(tm, ncols)        one warp in each CTA, after a cluster barrier
 *   kbd_store2d_folded(p, t, half, nrows, ncols, ld, r0, c0)
 *                                        store a view t of an M = 128 accumulator (columns c..c+C-1 of its N/2):
 *                                        row l of t to row r0 + l % 64, columns c0 + (l / 64) * half + j, with
 *                                        half = N/2 (kbd_store2d's clipping to nrows x ncols)
 *
 * ptxas rejects a kernel that mixes .cta_group::1 and ::2 tcgen05 instructions, so a pair kernel allocates with
 * kbd_tmem_alloc_pair and issues with kbd_mma_pair_issue only (kbd_mma_issue / kbd_mma / kbd_tmem_alloc are the
 * ::1 forms); the CPU machine reports a mix at run time with both sites. sm_100a only: a compile-time error
 * elsewhere (sm_90a has no Tensor Memory; its clusters share operands by multicast instead).
 */
#ifndef KBD_MMA_PAIR_H
#define KBD_MMA_PAIR_H

#include "cluster.h"
#include "mma.h"
#include "tma.h"

#define KBD__PAIR_RULE_ARCH                                                                                            \
  "kbd: CTA-pair MMAs (tcgen05 .cta_group::2: kbd_*_pair) exist on sm_100a only; on sm_90a share operands across a "   \
  "cluster with kbd_tma_load_multicast"
#define KBD__PAIR_RULE_SHAPES                                                                                          \
  "kbd_mma_pair_issue: M = 256 across the pair: acc KBD_ACC(dt, 128, N), a this CTA's 128 x K rows of A; M = 128: "    \
  "acc KBD_ACC(dt, 128, N/2) (Layout B folds the CTA's 64 x N half into 128 lanes), a its 64 x K rows; b is this "     \
  "CTA's N/2 x K rows of B in both, the same K"
#define KBD__PAIR_RULE_N                                                                                               \
  "kbd_mma_pair_issue: N must be 16..256 in steps of 16 (8-bit integers: 32..256 in steps of 32; ptx-reference 5.4, "  \
  "cta_group::2)"

/* This CTA issues its pair's MMAs (the even rank of the pair). */
#define kbd_cta_pair_leader() ((kbd_cluster_ctarank() & 1u) == 0u)

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#include "tile_io.h" /* kbd_store2d_folded: two kbd_store2d moves */

KBD_DEV void kbd_tmem_alloc_pair_(kbd_tmem *tm, uint32_t ncols, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tmem_alloc_pair(&tm->addr, ncols, KBD_SITE_ARGS);
  kbd_hw_tmem_relinquish_pair(KBD_SITE_ARGS); /* one allocation per CTA, as kbd_tmem_alloc */
#else
  (void)tm, (void)ncols;
  KBD_SITE_UNUSED;
#endif
}
KBD_DEV void kbd_tmem_free_pair_(kbd_tmem *tm, uint32_t ncols, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_dsmem_read(&tm->addr, 4, 4, "kbd_tmem_free_pair", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  kbd_hw_tmem_dealloc_pair(tm->addr, ncols, KBD_SITE_ARGS);
#else
  (void)tm, (void)ncols;
  KBD_SITE_UNUSED;
#endif
}
#define kbd_tmem_alloc_pair(tm, ncols)                                                                                 \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                        \
    KBD_STATIC_ASSERT(KBD_TMEM_NCOLS_OK(ncols), KBD__TMEM_RULE_NCOLS);                                                 \
    kbd_tmem_alloc_pair_((tm), (uint32_t)(ncols), KBD_SITE);                                                           \
  } while (0)
#define kbd_tmem_free_pair(tm, ncols)                                                                                  \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                        \
    KBD_STATIC_ASSERT(KBD_TMEM_NCOLS_OK(ncols), KBD__TMEM_RULE_NCOLS);                                                 \
    kbd_tmem_free_pair_((tm), (uint32_t)(ncols), KBD_SITE);                                                            \
  } while (0)

/* The pair's mask: the two CTAs' bits. */
KBD_DEV uint16_t kbd__pair_mask(void) { return (uint16_t)(3u << (kbd_hw_cluster_ctarank() & ~1u)); }

/* The K/kstep pair MMAs of the tiles' whole K from the operands' descriptors a0, b0 (rows 0, K-step 0), each K-step a
 * constant added to them (kbd__umma_issue_k); the calling thread issues them. */
KBD_DEV void kbd__umma_pair_issue_k(uint32_t taddr, int kind, uint32_t idesc, kbd_smem_shape as, uint64_t a0,
                                    kbd_smem_shape bs, uint64_t b0, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  const int ksteps = kbd_mma_ksteps(&as);
  KBD_UNROLL
  for (int j = 0; j < ksteps; ++j)
    kbd_hw_umma_pair(taddr, kind, idesc, kbd_mma_desc_add_bytes(a0, (int32_t)kbd_mma_operand_offset(&as, 0, j)),
                     kbd_mma_desc_add_bytes(b0, (int32_t)kbd_mma_operand_offset(&bs, 0, j)), accumulate || j > 0,
                     KBD_SITE_ARGS);
#else
  (void)taddr, (void)kind, (void)idesc, (void)as, (void)a0, (void)bs, (void)b0, (void)accumulate;
  KBD_SITE_UNUSED;
#endif
}
/* The elected thread of the calling (MMA) warp issues the K/kstep pair MMAs of the tiles' whole K. The fence
 * orders them after what the warp acquired (the stage's full barrier, the accumulator's release): 5.8. */
KBD_DEV void kbd__umma_pair_issue(uint32_t taddr, int kind, uint32_t idesc, kbd_smem_shape as, uint32_t aaddr,
                                  kbd_smem_shape bs, uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  KBD_ELECT_ONE {
    kbd__umma_pair_issue_k(taddr, kind, idesc, as, kbd_umma_smem_desc(&as, aaddr, 0, 0), bs,
                           kbd_umma_smem_desc(&bs, baddr, 0, 0), accumulate, KBD_SITE_ARGS);
  }
#else
  (void)taddr, (void)kind, (void)idesc, (void)as, (void)aaddr, (void)bs, (void)baddr, (void)accumulate;
  KBD_SITE_UNUSED;
#endif
}
/* kbd_mma_pair_issue_commit_by_desc: the issue and the commit of the stage from one elected section (two calls were
 * two ELECT / BRA.DIV / BSSY sections per k-block), the operands named by the caller's descriptors (stage 0's moved by
 * kbd_mma_desc_advance: no re-encode from the tile addresses per k-block; checked against the tile types on the CPU
 * machine, as kbd_mma_issue_commit_by_desc), the barrier by its 32-bit shared address. */
KBD_DEV void kbd__umma_pair_issue_commit(uint32_t taddr, int kind, uint32_t idesc, kbd_smem_shape as, uint64_t a0,
                                         kbd_smem_shape bs, uint64_t b0, int accumulate, uint32_t bar,
                                         KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd__mma_desc_tile(KBD_MMA_SM100, as, a0, "A", KBD_SITE_ARGS);
  kbd__mma_desc_tile(KBD_MMA_SM100, bs, b0, "B", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  KBD_ELECT_ONE {
    kbd__umma_pair_issue_k(taddr, kind, idesc, as, a0, bs, b0, accumulate, KBD_SITE_ARGS);
    kbd_hw_umma_commit_pair_at(bar, kbd__pair_mask(), KBD_SITE_ARGS);
  }
#else
  (void)taddr, (void)kind, (void)idesc, (void)as, (void)a0, (void)bs, (void)b0, (void)accumulate, (void)bar;
  KBD_SITE_UNUSED;
#endif
}
/* kbd_mma_pair_issue_commit_by_desc_elected: the same by the calling thread, the elected lane of the MMA warp's own
 * KBD_ELECT_ONE around its whole k-loop (kbd_mma_issue_commit_by_desc_elected has the compiler reason) */
KBD_DEV void kbd__umma_pair_issue_commit_one(uint32_t taddr, int kind, uint32_t idesc, kbd_smem_shape as, uint64_t a0,
                                             kbd_smem_shape bs, uint64_t b0, int accumulate, uint32_t bar,
                                             KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_umma_elected("kbd_mma_pair_issue_commit_by_desc_elected", KBD_SITE_ARGS);
  kbd__mma_desc_tile(KBD_MMA_SM100, as, a0, "A", KBD_SITE_ARGS);
  kbd__mma_desc_tile(KBD_MMA_SM100, bs, b0, "B", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  kbd__umma_pair_issue_k(taddr, kind, idesc, as, a0, bs, b0, accumulate, KBD_SITE_ARGS);
  kbd_hw_umma_commit_pair_at(bar, kbd__pair_mask(), KBD_SITE_ARGS);
#else
  (void)taddr, (void)kind, (void)idesc, (void)as, (void)a0, (void)bs, (void)b0, (void)accumulate, (void)bar;
  KBD_SITE_UNUSED;
#endif
}
#define kbd__mma_pair_(acc, a, b, accumulate, ta, tb)                                                                  \
  kbd__umma_pair_issue((acc).taddr, kbd_mma_kind_of(ta, tb),                                                           \
                       kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), 2 * KBD_ROWS(a), 2 * KBD_ROWS(b),              \
                                           KBD_STILE_MAJOR(a), KBD_STILE_MAJOR(b), 0u),                                \
                       KBD_STILE_SHAPE(a), kbd_hw_smem_addr((a).p, KBD_SITE), KBD_STILE_SHAPE(b),                      \
                       kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate), KBD_SITE)
#define kbd__mma_pair_commit_by_desc_(acc, a, b, adesc, bdesc, accumulate, bar, ta, tb)                                \
  kbd__mma_pair_commit_by_desc_fn_(kbd__umma_pair_issue_commit, acc, a, b, adesc, bdesc, accumulate, bar, ta, tb)
#define kbd__mma_pair_commit_by_desc_one_(acc, a, b, adesc, bdesc, accumulate, bar, ta, tb)                            \
  kbd__mma_pair_commit_by_desc_fn_(kbd__umma_pair_issue_commit_one, acc, a, b, adesc, bdesc, accumulate, bar, ta, tb)
#define kbd__mma_pair_commit_by_desc_fn_(fn, acc, a, b, adesc, bdesc, accumulate, bar, ta, tb)                         \
  fn((acc).taddr, kbd_mma_kind_of(ta, tb),                                                                             \
     kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), 2 * KBD_ROWS(a), 2 * KBD_ROWS(b), KBD_STILE_MAJOR(a),            \
                         KBD_STILE_MAJOR(b), 0u),                                                                      \
     KBD_STILE_SHAPE(a), (uint64_t)(adesc), KBD_STILE_SHAPE(b), (uint64_t)(bdesc), (accumulate), (uint32_t)(bar),      \
     KBD_SITE)

KBD_DEV void kbd__umma_pair_commit(uint64_t *bar, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  KBD_ELECT_ONE { kbd_hw_umma_commit_pair(bar, kbd__pair_mask(), KBD_SITE_ARGS); }
#else
  (void)bar;
  KBD_SITE_UNUSED;
#endif
}
/* tcgen05.ld of this half is complete (kbd_acc_load waits); the fence orders it before the remote arrive. */
KBD_DEV void kbd__acc_release_pair(uint64_t *bar, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
  KBD_ELECT_ONE { kbd_hw_mbar_arrive_cluster(bar, kbd_hw_cluster_ctarank() & ~1u, 1u, KBD_SITE_ARGS); }
#else
  (void)bar;
  KBD_SITE_UNUSED;
#endif
}

/* kbd_mma_pair_issue's compile-time checks (statements) */
#define KBD__MMA_PAIR_STATIC_CHECKS(acc, a, b)                                                                         \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                          \
  KBD_STATIC_ASSERT(KBD__MMA_TARGET_OK, KBD__MMA_RULE_TARGET);                                                         \
  KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC && KBD_KIND(a) == KBD_KIND_SMEM && KBD_KIND(b) == KBD_KIND_SMEM,     \
                    KBD__MMA_RULE_KINDS);                                                                              \
  KBD_STATIC_ASSERT(KBD_ROWS(acc) == 128 && KBD_COLS(a) == KBD_COLS(b) &&                                              \
                        ((KBD_ROWS(a) == 128 && 2 * KBD_ROWS(b) == KBD_COLS(acc)) ||                                   \
                         (KBD_ROWS(a) == 64 && KBD_ROWS(b) == KBD_COLS(acc))),                                         \
                    KBD__PAIR_RULE_SHAPES);                                                                            \
  KBD_STATIC_ASSERT(KBD__MMA_KIND_CE(a, b) == 0, KBD__MMA_RULE_TYPES);                                                 \
  KBD_STATIC_ASSERT(KBD_DTYPE(acc) != KBD_DT_f16 || KBD_DTYPE(a) == KBD_DT_f16 || KBD_DT_IS_FP8(KBD_DTYPE(a)),         \
                    KBD__MMA_RULE_F16ACC);                                                                             \
  KBD_STATIC_ASSERT((KBD_DTYPE(acc) == KBD_DT_i32) == KBD_DT_IS_INT8(KBD_DTYPE(a)), KBD__MMA_RULE_I32ACC);             \
  KBD_STATIC_ASSERT(KBD_ROWS(b) <= 128 && (KBD_DT_IS_INT8(KBD_DTYPE(a)) ? KBD_ROWS(b) % 16 : KBD_ROWS(b) % 8) == 0,    \
                    KBD__PAIR_RULE_N);                                                                                 \
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM100, a);                                                                        \
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM100, b)
#define kbd_mma_pair_issue(acc, a, b, accumulate)                                                                      \
  do {                                                                                                                 \
    KBD__MMA_PAIR_STATIC_CHECKS(acc, a, b);                                                                            \
    kbd__mma_pair_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)));                   \
  } while (0)
#define kbd_mma_pair_commit(acc, bar)                                                                                  \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                        \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__umma_pair_commit((bar), KBD_SITE);                                                                            \
  } while (0)
/* sm_100a, the even CTA's MMA warp: kbd_mma_pair_issue of stage operands of tile types TA and TB named by descriptors
 * (kbd_mma_desc_of, moved by kbd_mma_desc_advance), then from the same elected thread kbd_mma_pair_commit to the
 * barrier at 32-bit shared address bar (kbd_mbarrier_addr) in both CTAs */
#define kbd_mma_pair_issue_commit_by_desc(acc, TA, TB, adesc, bdesc, accumulate, bar)                                  \
  do {                                                                                                                 \
    KBD__MMA_PAIR_STATIC_CHECKS(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB));                                          \
    kbd__mma_pair_commit_by_desc_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate, bar,          \
                                  KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                        \
                                  KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))));                                       \
  } while (0)
/* the same from elected-lane code: the MMA warp's own KBD_ELECT_ONE around its k-loop (the CPU machine faults a call
 * from warp-uniform or per-lane code) */
#define kbd_mma_pair_issue_commit_by_desc_elected(acc, TA, TB, adesc, bdesc, accumulate, bar)                          \
  do {                                                                                                                 \
    KBD__MMA_PAIR_STATIC_CHECKS(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB));                                          \
    kbd__mma_pair_commit_by_desc_one_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate, bar,      \
                                      KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                    \
                                      KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))));                                   \
  } while (0)
#define kbd_acc_release_pair(acc, bar)                                                                                 \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                        \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__acc_release_pair((bar), KBD_SITE);                                                                            \
  } while (0)

/* An M = 128 pair accumulator's view goes out in two moves, one per column half of the fold: lanes 0..63 hold
 * columns 0..N/2-1 of the CTA's 64 rows, lanes 64..127 columns N/2..N-1. Each move is kbd_store2d's, over the
 * 64 rows from r0: the first puts view row l at row l (rows 64.. fall outside the 64 and are masked), the second
 * starts 64 rows above r0, so view row l lands at row l - 64 (rows ..63 fall above r0: masked). In the view's
 * TMEM_ACC layout thread t holds row t, so warps 0-1 store in the first move and warps 2-3 in the second: the
 * masks are uniform per warp. */
KBD_TILE_FN void kbd__store2d_folded(kbd_tile_shape s, void *frag, char *mem, long long half, long long nrows,
                                     long long ncols, long long ld, long long r0, long long c0, const char *file,
                                     int line) {
  const long long rows = nrows - r0 < 64 ? nrows - r0 : 64;
  char *top = mem + r0 * ld * s.esize;
  kbd_tile_move(s, frag, top, rows, ncols, ld, 0, c0, 1, 0, file, line);
  kbd_tile_move(s, frag, top, rows, ncols, ld, -64, c0 + half, 1, 0, file, line);
}
#define KBD__FOLDED_RULE                                                                                               \
  "kbd_store2d_folded: t must be a view of an M = 128 pair accumulator, KBD_ACC_TILE(dt, 128, C) (TMEM_ACC: row l "    \
  "= Tensor Memory lane l)"
#define kbd_store2d_folded(p, t, half, nrows, ncols, ld, r0, c0)                                                       \
  do {                                                                                                                 \
    enum { kbd_msw_ = KBD__DST_SWAPPED(p, t) };                                                                        \
    KBD__DST_FIRST(kbd_msw_, "kbd_store2d_folded(p, t, half, nrows, ncols, ld, r0, c0)");                              \
    KBD__MOVE_ARGS(KBD__PICK(kbd_msw_, p, t), KBD__PICK(kbd_msw_, t, p),                                               \
                   "kbd_store2d_folded(p, t, half, nrows, ncols, ld, r0, c0)", "p");                                   \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, p)),                                           \
                     "kbd_store2d_folded(p, t, half, nrows, ncols, ld, r0, c0)");                                      \
    KBD_STATIC_ASSERT(!kbd_mok_ ||                                                                                     \
                          (KBD_LAYOUT(KBD__AT(kbd_mt_)) == KBD_LAYOUT_TMEM_ACC && KBD_ROWS(KBD__AT(kbd_mt_)) == 128),  \
                      KBD__FOLDED_RULE);                                                                               \
    kbd__store2d_folded(KBD__SHAPE(KBD__AT(kbd_mt_)), KBD__AT(kbd_mt_).v,                                              \
                        (char *)(KBD__MPTR(KBD__PICK(kbd_msw_, t, p))), (long long)(half), (long long)(nrows),         \
                        (long long)(ncols), (long long)(ld), (long long)(r0), (long long)(c0), __FILE__, __LINE__);    \
  } while (0)

/* Per block b of the tile: one box at column c0 + b * box_dims[0], as kbd_tma_load2d. */
KBD_DEV void kbd_tma_load_pair_(char *dst, uint32_t line_bytes, uint32_t lines, int swz, int boxes, uint32_t box0,
                                const kbd_tensor_map *map, uint64_t *bar, int rank, int32_t c0, int32_t c1, int32_t c2,
                                int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  for (int b = 0; b < boxes; ++b)
    kbd_hw_tma_load_pair(dst + (size_t)b * line_bytes * lines, line_bytes, lines, swz, map, bar, rank,
                         c0 + (int32_t)(b * box0), c1, c2, c3, c4, KBD_SITE_ARGS);
#else
  (void)dst, (void)line_bytes, (void)lines, (void)swz, (void)boxes, (void)box0, (void)map, (void)bar, (void)rank;
  (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
  KBD_SITE_UNUSED;
#endif
}
#define KBD__TMA_LOAD_PAIR(tile, map, bar, ...)                                                                        \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__PAIR_RULE_ARCH);                                                        \
    kbd_tma_load_pair_((char *)(tile).p, KBD__TMA_GEOM(tile), (map), (bar), __VA_ARGS__, KBD_SITE);                    \
  } while (0)
/* Coordinates outermost first, as kbd_tma_load2d (kbd/tma.h reverses them for the hardware). */
#define kbd_tma_load_pair1d(tile, map, bar, col) KBD__TMA_LOAD_PAIR(tile, map, bar, KBD__TMA_REV1(col))
#define kbd_tma_load_pair2d(tile, map, bar, row, col) KBD__TMA_LOAD_PAIR(tile, map, bar, KBD__TMA_REV2(row, col))
#define kbd_tma_load_pair3d(tile, map, bar, d2, row, col)                                                              \
  KBD__TMA_LOAD_PAIR(tile, map, bar, KBD__TMA_REV3(d2, row, col))
#define kbd_tma_load_pair4d(tile, map, bar, d3, d2, row, col)                                                          \
  KBD__TMA_LOAD_PAIR(tile, map, bar, KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_load_pair5d(tile, map, bar, d4, d3, d2, row, col)                                                      \
  KBD__TMA_LOAD_PAIR(tile, map, bar, KBD__TMA_REV5(d4, d3, d2, row, col))
#define kbd_tma_load_pair(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_load_pair", "tile, map, bar, "), __VA_ARGS__)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_MMA_PAIR_H */
