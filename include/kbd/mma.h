/* kbd/mma.h - warpgroup MMA: one call for wgmma (sm_90a) and tcgen05.mma with Tensor Memory (sm_100a).
 *
 *   KBD_ACC(f32, M, N) acc;                   accumulator of one warpgroup: M x N f32 (or f16, with f16 or
 *                                             8-bit operands); M = 64*m (sm_100a: 64 or 128*m). sm_90a:
 *                                             registers; sm_100a: N (M > 128: N*M/128) columns of Tensor Memory
 *   kbd_tmem alloc slot (shared):             KBD_SHARED(kbd_tmem, tm, 1) or a planner field
 *   kbd_tmem_alloc(&tm, ncols)                one whole warp, once per CTA: ncols (a constant power of two in
 *                                             32..512) columns; a no-op on sm_90a
 *   kbd_tmem_free(&tm, ncols)                 the same warp, after every reader: a no-op on sm_90a
 *   kbd_acc_bind(acc, &tm, col, &bar)         the warpgroup: acc uses columns col.. of the allocation and the
 *                                             mbarrier bar (count 1) for its completion; nothing on sm_90a
 *   kbd_mma(acc, a, b, accumulate)            the warpgroup: acc (+)= a * b^T over the whole K of the shared
 *                                             tiles a (M x K) and b (N x K); accumulate 0 overwrites
 *   kbd_mma_release(acc, &empty)              the warpgroup: `empty` gets ONE arrive once the MMAs issued so far
 *                                             have read their operands (the producer may refill the stage)
 *   kbd_mma_wait(acc)                         the warpgroup: every MMA of acc is complete, its value readable
 *   KBD_ACC_TILE(f32, M, C) r;                a register tile for C columns of an M-row accumulator
 *   kbd_acc_load(r, acc, col0)                r = columns col0..col0+C-1 of acc (sm_90a: register copies;
 *                                             sm_100a: tcgen05.ld + tcgen05.wait::ld)
 *   kbd_acc_store(acc, r, col0)               the reverse (sm_100a: tcgen05.st + wait::st, then a warpgroup
 *                                             barrier: the warpgroup's own MMA may accumulate onto it)
 *   kbd_acc_store_async(acc, r, col0)         sm_100a: tcgen05.st only, no wait and no barrier; the warp's next
 *                                             kbd_acc_release (or kbd_tmem_a_ready) completes it and hands it on
 *   kbd_acc_discard(acc)                      acc's values are dead: the next MMA into it overwrites it
 *                                             (accumulate 0). sm_90a: its registers are free for other values
 *                                             until then (no instruction); sm_100a: nothing; CPU: acc becomes NaN
 *   kbd_mma_issue(acc, a, b, accumulate)      sm_100a, ONE warp (the MMA warp): its elected thread issues the
 *                                             MMAs; no warpgroup barrier (docs/design/mma-warp.md)
 *   kbd_mma_commit(acc, &bar)                 the same warp: one arrive on bar when its MMAs so far complete
 *   kbd_mma_commit_mc(acc, &bar, mask)        the same, on bar's offset in every cluster CTA of mask
 *   kbd_mma_issue_elected(acc, a, b, accumulate), kbd_mma_commit_elected(acc, &bar)   the same by the calling
 *                                             thread: inside the MMA warp's own KBD_ELECT_ONE around a loop of
 *                                             issues, commits and waits (docs/attention.md, "One elected section
 *                                             around the sm_100a key loop")
 *   kbd_mma_issue_commit_at(acc, a, b, accumulate, addr, mask)   the same warp: kbd_mma_issue, then one commit
 *                                             to the barrier at shared address addr (kbd_mbarrier_addr; mask 0:
 *                                             this CTA, else every CTA of mask) from the same elected section
 *   kbd_mma_release_mc(acc, &empty, mask)     kbd_mma_release with the arrive in every cluster CTA of mask
 *   kbd_mma_ring(acc, TA, TB, a0, astride, b0, bstride, s, accumulate)   sm_90a, the warpgroup: kbd_mma on stage s
 *                                             of two rings of tiles of types TA, TB whose stage 0 descriptors are
 *                                             a0, b0 (kbd_mma_desc_of) and strides astride, bstride bytes
 *   kbd_mma_issue_commit_by_desc(acc, TA, TB, adesc, bdesc, accumulate, addr, mask)   sm_100a, the MMA warp:
 *                                             kbd_mma_issue_commit_at of the tiles the descriptors name
 *   kbd_mma_issue_commit_by_desc_elected(acc, TA, TB, adesc, bdesc, accumulate, addr, mask)   the same by the
 *                                             calling thread: inside the MMA warp's own KBD_ELECT_ONE around its
 *                                             whole k-loop (docs/mma.md, "One elected section ...")
 *   kbd_mma_desc_of(t), kbd_mma_desc_advance(d, bytes)   a tile's descriptor; moved by whole tiles (low word)
 *   kbd_mma_release_lanes(acc, addr, lanes)   sm_90a, the warpgroup: kbd_mma_release_at's wait, then lane r arrives
 *                                             at cluster rank r for each lane of lanes = kbd_mma_lanes(mask), made
 *                                             once outside the loop (one CTA: rank 0)
 *   kbd_mma_release_at(acc, addr, mask)       sm_90a, the warpgroup: wait until only the newest MMA group is
 *                                             pending, then ONE arrive on the mbarrier at shared address addr
 *                                             (kbd_mbarrier_addr) - the stage the older groups read, named by the
 *                                             caller - in this CTA (mask 0) or at its offset in every cluster CTA
 *                                             of mask; acc keeps no pending barrier
 *   kbd_mma_wait_at(acc, addr, mask)          the same after every group (kbd_mma_wait): the last stage's release
 *   kbd_acc_wait(acc, &bar, parity)           each reading warp: the phase, then fence::after_thread_sync
 *   kbd_acc_release(acc, &bar)                each reading warp: wait::st, fence::before_thread_sync + one arrive
 *                                             (init bar with KBD_ACC_RELEASES(reading threads))
 *   KBD_ACC_UNROLL for (c = 0; c < N; c += C)  a loop over column chunks: unrolled on sm_90a (registers take
 *                                             constant indices), rolled on sm_100a (Tensor Memory addresses
 *                                             are run-time values), so each arch compiles the least code
 *
 * a and b are shared tiles (KBD_STILE / KBD_STILE_MN) with a swizzle (NONE is refused: docs/design/
 * mma-descriptors.md): a is M x K, b is N x K ("b transposed": row n of b is column n of B), each K-major (K
 * contiguous) or MN-major. Types: f16 x f16, bf16 x bf16, f32 x f32 (tf32: the low 13 mantissa bits are
 * ignored), e4m3/e5m2 in any mix, accumulating in f32 (f16 and fp8 also in f16); s8/u8 in any mix, accumulating in
 * i32 (KBD_ACC(i32, M, N): the s32 D, wrapping). The shapes, types and operand rules
 * are static assertions with the rule as the message; the shared addresses are checked at run time in CPU mode.
 *
 * Why these calls (docs/design/mma.md): wgmma is issued by all 128 threads and accumulates in their
 * registers; tcgen05.mma is issued by one thread and accumulates in Tensor Memory, which only tcgen05.ld
 * reads, each warp w reaching lanes 32(w%4)..+31. The register view therefore follows the hardware:
 * KBD_ACC_TILE is the WGMMA_ACC fragment on sm_90a (and for M = 64 on sm_100a), and KBD_LAYOUT_TMEM_ACC
 * (thread t holds row t) for M = 128*m on sm_100a. Code that only uses kbd operations on it is one source.
 * Completion: sm_90a wgmma.commit_group / wait_group in the issuing threads; sm_100a tcgen05.commit arrives
 * on an mbarrier. kbd_mma_release hides that: on sm_90a it waits for all but the newest group and arrives
 * for the previous stage, so one stage's MMAs stay in flight while the next is issued.
 *
 * Cost: kbd_mma is K/kstep x M/64 wgmma (sm_90a) or K/kstep x M/128 tcgen05.mma (sm_100a) with constant
 * descriptors plus one add per K-step; kbd_mma_release is one wait_group + one arrive, or one tcgen05.commit.
 * The CPU machine emulates the arch KBD_CPU_ARCH names (100 by default, 90), decoding the descriptors'
 * bits exactly as the hardware does; its checks and numeric contract are in docs/mma.md.
 */
#ifndef KBD_MMA_H
#define KBD_MMA_H

#include "config.h"
#include "layout.h"
#include "mbarrier.h"
#include "mma_desc.h"
#include "stile.h"
#include "tile_core.h"
#include "types.h"

/* The MMA the code being compiled targets: 90 (wgmma), 100 (tcgen05), or 0 where no kernel code is generated
 * (nvcc's host pass parses kernel bodies with the sm_100a types and no arch checks). A device pass for any
 * other target has no warpgroup MMA: a build error at the first call. */
#if KBD_MODE_CPU
#define KBD_MMA_ARCH KBD_CPU_ARCH
#elif KBD_SM100A
#define KBD_MMA_ARCH 100
#elif KBD_SM90A
#define KBD_MMA_ARCH 90
#else
#define KBD_MMA_ARCH 0
#endif
#define KBD__MMA_TARGET_OK (KBD_MMA_ARCH != 0 || !KBD_DEVICE_PASS)
#define KBD__MMA_RULE_TARGET                                                                                           \
  "kbd: warpgroup MMA needs sm_90a or sm_100a: build with -gencode arch=compute_90a,code=sm_90a and/or "               \
  "-gencode arch=compute_100a,code=sm_100a (the plain sm_90/sm_100 targets have no wgmma/tcgen05)"
#if KBD_MODE_CPU && KBD_CPU_ARCH != 90 && KBD_CPU_ARCH != 100
#error "kbd: KBD_CPU_ARCH must be 90 (emulate sm_90a wgmma) or 100 (emulate sm_100a tcgen05)"
#endif

/* An accumulator is its own storage kind: register tile operations refuse it (read it with kbd_acc_load). */
#define KBD_KIND_ACC KBD_KIND_TMEM
#define KBD__ACC_RULE "kbd: this operation needs an accumulator (KBD_ACC)"

/* The MMA's D type of an accumulator (the instruction descriptor's dtype field). */
#define KBD__ACC_DTYPE(acc)                                                                                            \
  (KBD_DTYPE(acc) == KBD_DT_f16 ? (int)KBD_MMA_F16 : KBD_DTYPE(acc) == KBD_DT_i32 ? (int)KBD_MMA_S32 : (int)KBD_MMA_F32)

/* The register layout of an M-row accumulator's view. */
#define KBD_ACC_LAYOUT(M) (KBD_MMA_ARCH == 90 || (M) == 64 ? KBD_LAYOUT_WGMMA_ACC : KBD_LAYOUT_TMEM_ACC)
#define KBD_ACC_TILE(dt, M, C) KBD_TILE_L(dt, M, C, KBD_WARPGROUP, KBD_ACC_LAYOUT(M))

/* Tensor Memory columns an M x N accumulator takes: M = 64 and 128 use lanes 0..127 (M = 64: half of them,
 * MMA Layout F) of N columns; taller accumulators are several M = 128 MMAs side by side. */
#define KBD_ACC_TMEM_COLS(M, N) ((M) <= 128 ? (N) : (N) * ((M) / 128))

#define KBD__ACC_RULE_DT                                                                                               \
  "kbd: KBD_ACC: the accumulator type must be f32, f16 or i32 (the s32 D of 8-bit integer operands)"
#define KBD__MMA_RULE_F16ACC                                                                                           \
  "kbd_mma: an f16 accumulator takes f16 x f16 or 8-bit (e4m3/e5m2) operands only; bf16 and tf32 accumulate in f32 "   \
  "(ptx-reference 4.1, 5.4)"
#define KBD__MMA_RULE_I32ACC                                                                                           \
  "kbd_mma: s8/u8 operands accumulate in an i32 accumulator (the MMA's s32 D), and only they do (ptx-reference "       \
  "4.1, 5.4)"
/* The tcgen05 kind::i8 list is PTX ISA 9.2 Table 39's (cta_group::1: "N = {8, 16, 24, 32, 48, ... 256} steps of 16
 * after N > 32"), which keeps N = 24 where CuTe's SM100_MMA_S8 asserts 8 or a multiple of 16 (ptx-reference 9,
 * item 13); the wgmma s8 list (ptx-reference 4.1) is the same. ptxas cannot check it: N is in the instruction
 * descriptor, a register. */
#define KBD__MMA_RULE_I8N                                                                                              \
  "kbd_mma: with s8/u8 operands N must be 8, 16, 24 or 32..256 in steps of 16 (wgmma and tcgen05 kind::i8 have no "    \
  "n40, n56, ...: PTX ISA 9.2 Table 39, tcgen05.mma kind::i8 cta_group::1; ptx-reference 4.1, 5.4, 9 item 13)"
#define KBD__ACC_RULE_M90 "kbd: KBD_ACC on sm_90a: M must be a multiple of 64 (one wgmma m64 block per 64 rows)"
#define KBD__ACC_RULE_M100                                                                                             \
  "kbd: KBD_ACC on sm_100a: M must be 64 or a multiple of 128 (tcgen05.mma M = 64 or 128; Tensor Memory has 128 "      \
  "lanes, so taller accumulators are M = 128 blocks side by side in columns)"
#define KBD__ACC_RULE_COLS "kbd: KBD_ACC: the accumulator needs more than the 512 Tensor Memory columns a CTA has"
#define KBD__ACC_CHECKS(dt, M, N)                                                                                      \
  KBD_STATIC_ASSERT(KBD_DT_##dt == KBD_DT_f32 || KBD_DT_##dt == KBD_DT_f16 || KBD_DT_##dt == KBD_DT_i32,               \
                    KBD__ACC_RULE_DT);                                                                                 \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90 || ((M) > 0 && (M) % 64 == 0), KBD__ACC_RULE_M90);                              \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100 || (M) == 64 || ((M) > 0 && (M) % 128 == 0), KBD__ACC_RULE_M100);              \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100 || KBD_ACC_TMEM_COLS(M, N) <= KBD_TMEM_COLS, KBD__ACC_RULE_COLS);              \
  KBD_STATIC_ASSERT((N) >= 8 && (N) <= 256 && (N) % 8 == 0, KBD_MMA_RULE_N)

#if KBD_MMA_ARCH == 90
/* sm_90a: the WGMMA_ACC registers, and the `empty` barrier of the newest committed group (kbd_mma_release). */
#define KBD_ACC(dt, M, N)                                                                                              \
  struct {                                                                                                             \
    KBD__ACC_CHECKS(dt, M, N);                                                                                         \
    KBD_TILE_L(dt, M, N, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) reg;                                                     \
    uint64_t *pend;                                                                                                    \
    uint32_t pmask; /* the cluster CTAs whose `pend` barrier gets the arrive (0: this CTA's own) */                    \
    char (*kbd_meta_)[M][N][KBD_WARPGROUP][KBD_LAYOUT_WGMMA_ACC][KBD_DT_##dt];                                         \
    char (*kbd_kind_)[KBD_KIND_ACC];                                                                                   \
  }
#else
/* sm_100a: lane 0 / first column of its Tensor Memory, its completion barrier and the parity of that barrier's
 * next phase (the old `.phase` spelling fails as kbd_pipe's does, kbd/mbarrier.h). */
#define KBD_ACC(dt, M, N)                                                                                              \
  struct {                                                                                                             \
    KBD__ACC_CHECKS(dt, M, N);                                                                                         \
    uint32_t taddr;                                                                                                    \
    union {                                                                                                            \
      uint32_t parity;                                                                                                 \
      struct kbd_phase_is_now_parity phase;                                                                            \
    };                                                                                                                 \
    uint64_t *bar;                                                                                                     \
    char (*kbd_meta_)[M][N][KBD_WARPGROUP][KBD_ACC_LAYOUT(M)][KBD_DT_##dt];                                            \
    char (*kbd_kind_)[KBD_KIND_ACC];                                                                                   \
  }
#endif

/* The Tensor Memory allocation of a CTA: tcgen05.alloc writes its address here (shared memory). */
typedef struct kbd_tmem {
  uint32_t addr;
} kbd_tmem;

#define KBD_TMEM_NCOLS_OK(n) ((n) >= KBD_TMEM_MIN_COLS && (n) <= KBD_TMEM_COLS && ((n) & ((n)-1)) == 0)
#define KBD__TMEM_RULE_NCOLS                                                                                           \
  "kbd: kbd_tmem_alloc: the column count must be a constant power of two in 32..512 (tcgen05.alloc, "                  \
  "ptx-reference 5.1-5.2)"

/* ---- operand types ------------------------------------------------------------------------------------- */
#define KBD__MMA_TYPE(dtc)                                                                                             \
  ((dtc) == KBD_DT_f16    ? (int)KBD_MMA_F16                                                                           \
   : (dtc) == KBD_DT_bf16 ? (int)KBD_MMA_BF16                                                                          \
   : (dtc) == KBD_DT_f32  ? (int)KBD_MMA_TF32                                                                          \
   : (dtc) == KBD_DT_e4m3 ? (int)KBD_MMA_E4M3                                                                          \
   : (dtc) == KBD_DT_e5m2 ? (int)KBD_MMA_E5M2                                                                          \
   : (dtc) == KBD_DT_s8   ? (int)KBD_MMA_S8                                                                            \
   : (dtc) == KBD_DT_u8   ? (int)KBD_MMA_U8                                                                            \
                          : -1)
#define KBD__MMA_KIND(a, b) kbd_mma_kind_of(KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)))
#define KBD__MMA_KIND_CE(a, b)                                                                                         \
  (KBD__MMA_TYPE(KBD_DTYPE(a)) < 0 || KBD__MMA_TYPE(KBD_DTYPE(b)) < 0 ? -1                                             \
   : KBD_DTYPE(a) == KBD_DTYPE(b) || (KBD_DT_IS_FP8(KBD_DTYPE(a)) && KBD_DT_IS_FP8(KBD_DTYPE(b))) ||                   \
           (KBD_DT_IS_INT8(KBD_DTYPE(a)) && KBD_DT_IS_INT8(KBD_DTYPE(b)))                                              \
       ? 0                                                                                                             \
       : -1)

#define KBD__MMA_RULE_KINDS                                                                                            \
  "kbd_mma: acc must be a KBD_ACC, and a and b shared tiles (KBD_STILE / KBD_STILE_MN); an A in registers "            \
  "(KBD_ACC_TILE(bf16 or f16, M, K), sm_90a) goes to kbd_mma_rs"
#define KBD__MMA_RULE_SHAPES                                                                                           \
  "kbd_mma: shapes: a is M x K and b is N x K for an M x N accumulator (rows of a = acc rows, rows of b = acc "        \
  "columns, the same K)"
#define KBD__MMA_RULE_TYPES                                                                                            \
  "kbd_mma: a and b must be f16 x f16, bf16 x bf16, f32 x f32 (tf32), e4m3/e5m2 in any mix or s8/u8 in any mix "       \
  "(ptx-reference 4.1, 5.4)"
#define KBD__MMA_RULE_ACC_KIND "kbd_mma_release / kbd_mma_wait / kbd_acc_*: the first argument must be a KBD_ACC"
#define KBD__MMA_RULE_VIEW                                                                                             \
  "kbd_acc_load / kbd_acc_store: the register tile must be KBD_ACC_TILE(dt, M, C) of the accumulator's M rows "        \
  "and type dt (f32, f16 or i32), with C <= N columns (a multiple of 8)"

/* Compile-time checks of one kbd_mma call (declarations: used inside the call's block). */
#define KBD__MMA_STATIC_CHECKS(acc, a, b)                                                                              \
  KBD_STATIC_ASSERT(KBD__MMA_TARGET_OK, KBD__MMA_RULE_TARGET);                                                         \
  KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC && KBD_KIND(a) == KBD_KIND_SMEM && KBD_KIND(b) == KBD_KIND_SMEM,     \
                    KBD__MMA_RULE_KINDS);                                                                              \
  KBD_STATIC_ASSERT(KBD_ROWS(a) == KBD_ROWS(acc) && KBD_ROWS(b) == KBD_COLS(acc) && KBD_COLS(a) == KBD_COLS(b),        \
                    KBD__MMA_RULE_SHAPES);                                                                             \
  KBD_STATIC_ASSERT(KBD__MMA_KIND_CE(a, b) == 0, KBD__MMA_RULE_TYPES);                                                 \
  KBD_STATIC_ASSERT(KBD_DTYPE(acc) != KBD_DT_f16 || KBD_DTYPE(a) == KBD_DT_f16 || KBD_DT_IS_FP8(KBD_DTYPE(a)),         \
                    KBD__MMA_RULE_F16ACC);                                                                             \
  KBD_STATIC_ASSERT((KBD_DTYPE(acc) == KBD_DT_i32) == KBD_DT_IS_INT8(KBD_DTYPE(a)), KBD__MMA_RULE_I32ACC);             \
  KBD_STATIC_ASSERT(!KBD_DT_IS_INT8(KBD_DTYPE(a)) || KBD_COLS(acc) <= 24 || KBD_COLS(acc) % 16 == 0,                   \
                    KBD__MMA_RULE_I8N);                                                                                \
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_ARCH == 0 ? KBD_MMA_SM100 : KBD_MMA_ARCH, a);                                     \
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_ARCH == 0 ? KBD_MMA_SM100 : KBD_MMA_ARCH, b)

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#include "launch.h"
#include "reduce.h" /* KBD_REDUCE_WG_BARRIER: the warpgroup's own named barrier */

/* ---- Tensor Memory allocation ---------------------------------------------------------------------------- */
KBD_DEV void kbd_tmem_alloc_(kbd_tmem *tm, uint32_t ncols, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_tmem_alloc(&tm->addr, ncols, KBD_SITE_ARGS);
  /* kbd allocates once per CTA: giving the permit back lets a CTA that waits in its own tcgen05.alloc on
   * this SM (another kernel's, or the next CTA of a persistent grid) get columns as soon as these are freed. */
  kbd_hw_tmem_relinquish(KBD_SITE_ARGS);
#else
  (void)tm, (void)ncols;
  KBD_SITE_UNUSED;
#endif
}
KBD_DEV void kbd_tmem_free_(kbd_tmem *tm, uint32_t ncols, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd_hw_dsmem_read(&tm->addr, 4, 4, "kbd_tmem_free", KBD_SITE_ARGS);
  /* the readers' tcgen05.ld were ordered before the barrier that precedes this call (ptx-reference 5.8) */
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  kbd_hw_tmem_dealloc(tm->addr, ncols, KBD_SITE_ARGS);
#else
  (void)tm, (void)ncols;
  KBD_SITE_UNUSED;
#endif
}
#define kbd_tmem_alloc(tm, ncols)                                                                                      \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_TMEM_NCOLS_OK(ncols), KBD__TMEM_RULE_NCOLS);                                                 \
    kbd_tmem_alloc_((tm), (uint32_t)(ncols), KBD_SITE);                                                                \
  } while (0)
#define kbd_tmem_free(tm, ncols)                                                                                       \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_TMEM_NCOLS_OK(ncols), KBD__TMEM_RULE_NCOLS);                                                 \
    kbd_tmem_free_((tm), (uint32_t)(ncols), KBD_SITE);                                                                 \
  } while (0)

/* ---- the accumulator ------------------------------------------------------------------------------------- */
#if KBD_MMA_ARCH == 90
#define kbd_acc_bind(acc, tm, col, done)                                                                               \
  ((void)(tm), (void)(col), (void)(done), (acc).pend = (uint64_t *)0, (acc).pmask = 0u)
#else
KBD_DEV uint32_t kbd__tmem_base(const kbd_tmem *tm, uint32_t col, KBD_SITE_PARAMS) {
  kbd_hw_dsmem_read(&tm->addr, 4, 4, "kbd_acc_bind (the address tcgen05.alloc wrote)", KBD_SITE_ARGS);
  return tm->addr + col;
}
#define kbd_acc_bind(acc, tm, col, done)                                                                               \
  ((acc).taddr = kbd__tmem_base((tm), (uint32_t)(col), KBD_SITE), (acc).bar = (done), (acc).parity = 0u)
#endif

/* The warpgroup's elected thread: lane (elect.sync) of its first warp. tcgen05.commit tracks the MMAs of the
 * executing thread, so the MMAs and their commits must come from the same one; elect.sync is deterministic. */
#define KBD__WG_LEADER_WARP() ((kbd_warp_id() & 3) == 0)

/* kbd_mma_lanes(mask): the lanes of the calling warp in mask (bit r: lane r, r < 16: a cluster rank), in the form a
 * loop tests cheapest: on the GPU each thread keeps its own lane's bit, so kbd_mma_release_lanes tests one bit per
 * k-block where the mask and the lane index were a shift and two tests (3 instructions per k-block in the sm_90a
 * GEMM); the CPU machine runs a warp's lanes in one fiber and keeps the mask. Opaque: pass it to
 * kbd_mma_release_lanes only; 0 is the empty set in both. Make it outside the loop. */
#if KBD_MODE_CPU
#define kbd__mma_lanes_(mask) ((mask)&0xFFFFu)
#define KBD__MMA_LANE_IN(lanes, r) ((lanes) >> (r)&1u)
#else
#define kbd__mma_lanes_(mask) (((mask)&0xFFFFu) >> (threadIdx.x & 31u) & 1u)
#define KBD__MMA_LANE_IN(lanes, r) ((void)(r), (lanes)&1u)
#endif
#define kbd_mma_lanes(mask) kbd__mma_lanes_((uint32_t)(mask))

/* ---- operands named by descriptors (kbd_mma_desc_of, kbd_mma_ring, kbd_mma_issue_commit_by_desc) -------------
 * A main loop over a ring of stages keeps each operand's descriptor of stage 0 and moves it by the stage's bytes
 * (kbd_mma_desc_advance: one multiply-add of the stage index) instead of rebuilding it from the tile's address
 * every k-block (the shared window's base, the stage's address, then the encoder's mask, shift and or). The
 * descriptor math is mma_desc.h's, the same functions the CPU machine decodes with. */
#define KBD_MMA_RULE_DESC_TILE                                                                                         \
  "kbd_mma_ring / kbd_mma_issue_commit_by_desc: the descriptor is not the one of a tile of the operand's type at "     \
  "its start address (LBO, SBO, layout or a carry out of the start field differ): build it with kbd_mma_desc_of on a " \
  "tile of that type and move it by kbd_mma_desc_advance of whole tiles"
/* NULL if d is the descriptor of a tile of shape s at its start address (rows 0, K-step 0) that can be an operand of
 * arch's MMA, else the first broken rule. */
KBD_HD const char *kbd_mma_desc_tile_check(int arch, const kbd_smem_shape *s, uint64_t d) {
  const uint32_t start = kbd_mma_desc_start(d);
  const uint64_t want = arch == KBD_MMA_SM90 ? kbd_wgmma_smem_desc(s, start, 0, 0) : kbd_umma_smem_desc(s, start, 0, 0);
  if (d != want) return KBD_MMA_RULE_DESC_TILE;
  return kbd_mma_operand_check(arch, s, start);
}
KBD_DEV uint64_t kbd__mma_desc_of(kbd_smem_shape s, uint32_t addr) {
#if KBD_MMA_ARCH == 90
  /* wgmma takes warp-uniform descriptors: built from lane 0's address, the descriptor is one ptxas knows uniform, so
   * what a loop computes from it and a broadcast stage index stays in uniform registers (kbd_mma_ring) */
  return kbd_wgmma_smem_desc(&s, kbd_hw_warp_uniform_u32(addr), 0, 0);
#else
  return kbd_umma_smem_desc(&s, addr, 0, 0);
#endif
}
/* d with its start address moved by `bytes` (a multiple of 16): kbd_mma_desc_add_bytes on the low word only. The
 * start field (bits 0-13) never carries into the high word for an operand that stays below 256 KiB, so both are the
 * same descriptor; but here the high word (SBO and layout) stays the constant it was, which ptxas keeps in an
 * immediate, where the 64-bit add's carry made it a run-time value in every K-step's descriptor. */
KBD_HD uint64_t kbd_mma_desc_advance(uint64_t d, int32_t bytes) {
  return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (uint32_t)(bytes / 16));
}
#define kbd_mma_desc_of(t) (KBD__IS_STILE_E(t), kbd__mma_desc_of(KBD_STILE_SHAPE(t), kbd_hw_smem_addr((t).p, KBD_SITE)))
/* The CPU machine checks a caller's descriptor against the operand's tile type; the GPU checks nothing (the
 * check is a re-encode and a compare per operand and k-block). */
KBD_DEV void kbd__mma_desc_tile(int arch, kbd_smem_shape s, uint64_t d, const char *which, KBD_SITE_PARAMS) {
#if KBD_MODE_CPU
  const char *why = kbd_mma_desc_tile_check(arch, &s, d);
  if (why) kbd_hw_mma_desc_fault(which, d, why, KBD_SITE_ARGS);
#else
  (void)arch, (void)s, (void)d, (void)which;
  KBD_SITE_UNUSED;
#endif
}

#if KBD_MMA_ARCH == 90
/* ---- sm_90a: wgmma -------------------------------------------------------------------------------------- */
/* The wgmma function of kbd_mma's operands (f32 or s32 D): kbd_hw_wgmma_fn picks it from the tile types and majors,
 * constants at the call site, so cicc inlines only that family's and variant's asm at each K-step (ptx/mma.h). */
typedef void (*kbd__wgmma_fn)(void *d, int ld, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc, int accumulate,
                              KBD_SITE_PARAMS);
/* The K-steps and 64-row blocks of one kbd_mma from the operands' descriptors a0 and b0 (rows 0, K-step 0). */
KBD_DEV void kbd__wgmma_issue_k(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc,
                                kbd_smem_shape as, uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate,
                                kbd__wgmma_fn wgmma, KBD_SITE_PARAMS) {
  const int ksteps = kbd_mma_ksteps(&as);
  KBD_UNROLL
  for (int j = 0; j < ksteps; ++j) {
    const uint64_t bdesc = kbd_mma_desc_add_bytes(b0, (int32_t)kbd_mma_operand_offset(&bs, 0, j));
    KBD_UNROLL
    for (int m = 0; m < mblocks; ++m)
      wgmma((char *)d + (size_t)m * (size_t)block_bytes, ld, kind, idesc,
            kbd_mma_desc_add_bytes(a0, (int32_t)kbd_mma_operand_offset(&as, 64 * m, j)), bdesc, accumulate || j > 0,
            KBD_SITE_ARGS);
  }
  kbd_hw_wgmma_commit(KBD_SITE_ARGS);
}
KBD_DEV void kbd__wgmma_issue(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc,
                              kbd_smem_shape as, uint32_t aaddr, kbd_smem_shape bs, uint32_t baddr, int accumulate,
                              kbd__wgmma_fn wgmma, KBD_SITE_PARAMS) {
  /* Each operand's descriptor is built once, from an address every lane holds but ptxas could not prove
   * warp-uniform (it comes from the shared window and a stage index); after the broadcast it lives in uniform
   * registers and each K-step / 64-row block is a constant added to it (kbd_mma_desc_add_bytes: the start
   * field does not carry, shared addresses stay below 256 KiB). Built per step from the vector address, the
   * descriptors cost 4 R2UR and 5 integer instructions per wgmma (issue 27). wgmma is .sync.aligned: the warp is
   * converged here, as the broadcast needs. wgmma.fence orders the warpgroup's earlier register accesses to the
   * accumulator (a kbd_acc_load, an epilogue) before the MMAs that overwrite it (ptx-reference 4.2); the shuffles
   * come after it, where ptxas knows the warp converged (before it, each was a divergence test and branch). */
  kbd_hw_wgmma_fence(KBD_SITE_ARGS);
  const uint64_t a0 = kbd_wgmma_smem_desc(&as, kbd_hw_warp_uniform_u32(aaddr), 0, 0);
  const uint64_t b0 = kbd_wgmma_smem_desc(&bs, kbd_hw_warp_uniform_u32(baddr), 0, 0);
  kbd__wgmma_issue_k(d, ld, mblocks, block_bytes, kind, idesc, as, a0, bs, b0, accumulate, wgmma, KBD_SITE_ARGS);
}
/* kbd_mma_ring: stage s of two rings of operand tiles, A at a0 + s x astride bytes and B at b0 + s x bstride (a0, b0:
 * stage 0's descriptors). The stage index is broadcast from lane 0 after the fence, where the warpgroup is converged
 * (no divergence test for the shuffle): ptxas then knows both descriptors are warp-uniform, so each is one
 * multiply-add and one R2UR, and the K-steps' adds are uniform. Rebuilt from the tile addresses they were the shared
 * window's base, the tile address, a broadcast, a mask, a shift and an or per operand and k-block (issue 27). */
KBD_DEV void kbd__wgmma_issue_ring(void *d, int ld, int mblocks, int block_bytes, int kind, uint32_t idesc,
                                   kbd_smem_shape as, uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate,
                                   kbd__wgmma_fn wgmma, int32_t astride, int32_t bstride, int s, KBD_SITE_PARAMS) {
  kbd_hw_wgmma_fence(KBD_SITE_ARGS);
  const int32_t su = (int32_t)kbd_hw_warp_uniform_u32((uint32_t)s);
  const uint64_t adesc = kbd_mma_desc_advance(a0, su * astride), bdesc = kbd_mma_desc_advance(b0, su * bstride);
  kbd__mma_desc_tile(KBD_MMA_SM90, as, adesc, "A", KBD_SITE_ARGS);
  kbd__mma_desc_tile(KBD_MMA_SM90, bs, bdesc, "B", KBD_SITE_ARGS);
  kbd__wgmma_issue_k(d, ld, mblocks, block_bytes, kind, idesc, as, adesc, bs, bdesc, accumulate, wgmma, KBD_SITE_ARGS);
}
#define KBD__ACC_NPT(acc) ((int)(sizeof((acc).reg.v[0]) / sizeof((acc).reg.v[0][0])))
/* a lane's accumulator cells in 32-bit units (an f16 accumulator packs two elements per register) */
#define KBD__ACC_CELLS(acc) ((int)(sizeof((acc).reg.v[0]) / 4))
/* A statement (inside kbd_mma's block): the enum names the constants kbd_hw_wgmma_fn repeats in each of its
 * leaves, so its expansion stays short. issue is kbd__wgmma_issue (aop, bop: the tiles' shared addresses) or
 * kbd__wgmma_issue_ring (stage 0's descriptors; the strides and the stage follow, each with its comma). */
#define kbd__wgmma_call_(acc, a, b, accumulate, ta, tb, issue, aop, bop, ...)                                          \
  {                                                                                                                    \
    enum {                                                                                                             \
      kbd__wta = ta,                                                                                                   \
      kbd__wtb = tb,                                                                                                   \
      kbd__wam = KBD_STILE_MAJOR(a),                                                                                   \
      kbd__wbm = KBD_STILE_MAJOR(b),                                                                                   \
      kbd__wn = KBD_COLS(acc)                                                                                          \
    };                                                                                                                 \
    issue((void *)&(acc).reg.v[0][0], KBD__ACC_CELLS(acc), KBD_ROWS(acc) / 64,                                         \
          (int)(KBD_COLS(acc) / 2 * sizeof((acc).reg.v[0][0])), kbd_mma_kind_of(ta, tb),                               \
          kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), 64, kbd__wn, kbd__wam, kbd__wbm, 0u), KBD_STILE_SHAPE(a),   \
          (aop), KBD_STILE_SHAPE(b), (bop), (accumulate),                                                              \
          KBD_DTYPE(acc) == KBD_DT_f16 ? kbd_hw_wgmma                                                                  \
                                       : kbd_hw_wgmma_fn(kbd__wta, kbd__wtb, kbd__wam, kbd__wbm, kbd__wn),             \
          __VA_ARGS__ KBD_SITE);                                                                                       \
  }
#define kbd__mma_(acc, a, b, accumulate, ta, tb)                                                                       \
  kbd__wgmma_call_(acc, a, b, accumulate, ta, tb, kbd__wgmma_issue, kbd_hw_smem_addr((a).p, KBD_SITE),                 \
                   kbd_hw_smem_addr((b).p, KBD_SITE), )
#define kbd__mma_ring_(acc, a, b, a0, astride, b0, bstride, s, accumulate, ta, tb)                                     \
  kbd__wgmma_call_(acc, a, b, accumulate, ta, tb, kbd__wgmma_issue_ring, (uint64_t)(a0), (uint64_t)(b0),               \
                   (int32_t)(astride), (int32_t)(bstride), (int)(s), )

/* wait for all but the newest group; the group before it read the stage `pend` names: one arrive on it, in this
 * CTA (pmask 0) or in every cluster CTA of pmask (the stage was multicast into all of them). The remote arrives
 * release nothing: the consumer only READ the stage, and wait_group has completed those reads before the arrive
 * issues, so the peer's producer may refill it once it sees the phase - no release.cluster, whose MEMBAR.ALL.GPU
 * per peer was half of the k-block's non-MMA instructions (docs/design/read-release.md) */
KBD_DEV uint64_t *kbd__wgmma_release(uint64_t *pend, uint32_t pmask, uint64_t *next, int keep, KBD_SITE_PARAMS) {
  if (keep)
    kbd_hw_wgmma_wait(1, KBD_SITE_ARGS);
  else
    kbd_hw_wgmma_wait(0, KBD_SITE_ARGS);
  if (pend && KBD__WG_LEADER_WARP()) {
    if (pmask == 0u) {
      KBD_ELECT_ONE { kbd_hw_mbar_arrive(pend, 1u, KBD_SITE_ARGS); }
    } else {
      /* lane r arrives at rank r (a cluster has at most 16 CTAs): one predicated arrive for the warp, where one
       * thread's loop over the ranks was 16 predicated address computations and arrives every k-block */
      KBD_FOR_LANES(r) {
        if (r < 16 && (pmask >> r & 1u)) kbd_hw_mbar_arrive_cluster_reads(pend, (unsigned)r, 1u, KBD_SITE_ARGS);
      }
    }
  }
  return next;
}
/* kbd_mma_release_at / kbd_mma_wait_at: the same wait and arrive with the barrier the caller names by its 32-bit
 * shared address. A main loop keeps one base address and adds 8 x the previous stage; kbd_mma_release's pending
 * pointer is a 64-bit generic address that ptxas rebuilds each k-block (S2R SR_SWINHI, 64-bit adds) and null-tests
 * (the sm_90a GEMM's consumer loop: 70 -> 63 non-MMA instructions per k-block, issue 27). */
KBD_DEV void kbd__wgmma_release_at(uint32_t bar, uint32_t mask, int keep, KBD_SITE_PARAMS) {
  if (keep)
    kbd_hw_wgmma_wait(1, KBD_SITE_ARGS);
  else
    kbd_hw_wgmma_wait(0, KBD_SITE_ARGS);
  if (KBD__WG_LEADER_WARP()) {
    if (mask == 0u) {
      KBD_ELECT_ONE { kbd_hw_mbar_arrive_at(bar, 1u, KBD_SITE_ARGS); }
    } else {
      KBD_FOR_LANES(r) {
        if (r < 16 && (mask >> r & 1u)) kbd_hw_mbar_arrive_cluster_reads_at(bar, (unsigned)r, 1u, KBD_SITE_ARGS);
      }
    }
  }
}
/* kbd_mma_release_lanes: the caller decided outside its loop which lanes arrive (lane r: at cluster rank r;
 * kbd_mma_lanes), so the k-block tests one bit: kbd_mma_release_at's leader-warp test, its mask-0 test, the lane's
 * bit of the mask and the elected arrive were about 14 instructions and three branches per k-block (the sm_90a GEMM,
 * issue 27). One CTA is rank 0 of a 1-CTA cluster: the same remote arrive reaches its own barrier, as CUTLASS's
 * ClusterBarrier::arrive(cta, pred) does. */
KBD_DEV void kbd__wgmma_release_lanes(uint32_t bar, uint32_t lanes, KBD_SITE_PARAMS) {
  kbd_hw_wgmma_wait(1, KBD_SITE_ARGS);
  KBD_FOR_LANES(r) {
    if (KBD__MMA_LANE_IN(lanes, r)) kbd_hw_mbar_arrive_cluster_reads_at(bar, (unsigned)r, 1u, KBD_SITE_ARGS);
  }
}
#define kbd__mma_release_lanes_(acc, addr, lanes)                                                                      \
  kbd__wgmma_release_lanes((uint32_t)(addr), (uint32_t)(lanes), KBD_SITE)
#define kbd__mma_release_at_(acc, addr, mask) kbd__wgmma_release_at((uint32_t)(addr), (uint32_t)(mask), 1, KBD_SITE)
#define kbd__mma_wait_at_(acc, addr, mask) kbd__wgmma_release_at((uint32_t)(addr), (uint32_t)(mask), 0, KBD_SITE)
#define kbd__mma_release_(acc, empty)                                                                                  \
  ((acc).pend = kbd__wgmma_release((acc).pend, (acc).pmask, (empty), 1, KBD_SITE), (acc).pmask = 0u)
#define kbd__mma_release_mc_(acc, empty, mask)                                                                         \
  ((acc).pend = kbd__wgmma_release((acc).pend, (acc).pmask, (empty), 1, KBD_SITE), (acc).pmask = (uint32_t)(mask))
#define kbd__mma_wait_(acc)                                                                                            \
  ((acc).pend = kbd__wgmma_release((acc).pend, (acc).pmask, (uint64_t *)0, 0, KBD_SITE), (acc).pmask = 0u)
/* the MMA-warp calls do not exist on sm_90a (their static assertion names kbd_mma instead) */
#define kbd__mma_issue_(acc, a, b, accumulate, ta, tb) ((void)(accumulate))
#define kbd__mma_commit_(acc, bar) ((void)(bar))
#define kbd__mma_issue_commit_at_(acc, a, b, accumulate, ta, tb, bar, mask)                                            \
  ((void)(accumulate), (void)(bar), (void)(mask))
#define kbd__mma_issue_commit_by_desc_(acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)                         \
  ((void)(adesc), (void)(bdesc), (void)(accumulate), (void)(bar), (void)(mask))
#define kbd__mma_issue_commit_by_desc_one_(acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)                     \
  ((void)(adesc), (void)(bdesc), (void)(accumulate), (void)(bar), (void)(mask))
#define kbd__mma_commit_mc_(acc, bar, mask) ((void)(bar), (void)(mask))
#define kbd__acc_wait_(acc, bar, parity) ((void)(bar), (void)(parity))
#define kbd__acc_release_(acc, bar) ((void)(bar))

#else
/* ---- sm_100a: tcgen05.mma into Tensor Memory -------------------------------------------------------------- */
/* The calling thread issues the MMAs of the tiles' whole K: K/kstep x M/128 (M = 64: one) tcgen05.mma. */
/* One descriptor per operand (a0, b0: rows 0, K-step 0), each MMA a constant added to it (one uniform 64-bit add
 * where the encoder's shift-mask-or was four per descriptor): see kbd__wgmma_issue. */
KBD_DEV void kbd__umma_issue_k(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                               uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  const int ksteps = kbd_mma_ksteps(&as), mstep = m_total == 64 ? 64 : 128, mblocks = m_total / mstep;
  KBD_UNROLL
  for (int j = 0; j < ksteps; ++j) {
    const uint64_t bdesc = kbd_mma_desc_add_bytes(b0, (int32_t)kbd_mma_operand_offset(&bs, 0, j));
    KBD_UNROLL
    for (int m = 0; m < mblocks; ++m)
      kbd_hw_umma(taddr + (uint32_t)(m * n), kind, idesc,
                  kbd_mma_desc_add_bytes(a0, (int32_t)kbd_mma_operand_offset(&as, mstep * m, j)), bdesc,
                  accumulate || j > 0, KBD_SITE_ARGS);
  }
#else
  (void)taddr, (void)m_total, (void)n, (void)kind, (void)idesc, (void)as, (void)a0, (void)bs, (void)b0;
  (void)accumulate;
  KBD_SITE_UNUSED;
#endif
}
KBD_DEV void kbd__umma_issue_desc(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                                  uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  /* The whole warpgroup meets before the leader issues, for two reasons (fence + barrier + fence, ptx-reference
   * 5.8). accumulate 0 overwrites columns the warpgroup may have read with tcgen05.ld (the previous tile's
   * epilogue): those loads are complete (kbd_acc_load waits) and the barrier orders them before the MMA. And in
   * every case the leader's kbd_mma_release frees the operands' stage for the whole warpgroup: without the
   * barrier a warp that has not yet waited on the stage's full barrier could fall two phases behind the
   * producer and wait forever for a parity that came and went (the CPU machine reports that ordering). */
  kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
  kbd_hw_bar_sync_named(KBD_REDUCE_WG_BARRIER + kbd_warpgroup_id(), KBD_WARPGROUP_SIZE, KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  if (KBD__WG_LEADER_WARP()) {
    KBD_ELECT_ONE { kbd__umma_issue_k(taddr, m_total, n, kind, idesc, as, a0, bs, b0, accumulate, KBD_SITE_ARGS); }
  }
#else
  (void)taddr, (void)m_total, (void)n, (void)kind, (void)idesc, (void)as, (void)a0, (void)bs, (void)b0;
  (void)accumulate;
  KBD_SITE_UNUSED;
#endif
}
KBD_DEV void kbd__umma_issue(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                             uint32_t aaddr, kbd_smem_shape bs, uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
  kbd__umma_issue_desc(taddr, m_total, n, kind, idesc, as, kbd_umma_smem_desc(&as, aaddr, 0, 0), bs,
                       kbd_umma_smem_desc(&bs, baddr, 0, 0), accumulate, KBD_SITE_ARGS);
}
#define kbd__mma_(acc, a, b, accumulate, ta, tb)                                                                       \
  kbd__umma_issue((acc).taddr, KBD_ROWS(acc), KBD_COLS(acc), kbd_mma_kind_of(ta, tb),                                  \
                  kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), KBD_ROWS(acc) == 64 ? 64 : 128, KBD_COLS(acc),      \
                                      KBD_STILE_MAJOR(a), KBD_STILE_MAJOR(b), 0u),                                     \
                  KBD_STILE_SHAPE(a), kbd_hw_smem_addr((a).p, KBD_SITE), KBD_STILE_SHAPE(b),                           \
                  kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate), KBD_SITE)
#define kbd__mma_ring_(acc, a, b, a0, astride, b0, bstride, s, accumulate, ta, tb)                                     \
  ((void)(a0), (void)(astride), (void)(b0), (void)(bstride), (void)(s), (void)(accumulate))

KBD_DEV void kbd__umma_commit(uint64_t *bar, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  if (KBD__WG_LEADER_WARP()) {
    KBD_ELECT_ONE { kbd_hw_umma_commit(bar, KBD_SITE_ARGS); }
  }
#else
  (void)bar;
  KBD_SITE_UNUSED;
#endif
}
/* all of acc's MMAs complete: commit to its barrier, wait for that phase, then order the warpgroup's
 * tcgen05.ld after the wait (ptx-reference 5.8, "MMA -> epilogue") */
KBD_DEV uint32_t kbd__umma_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  kbd__umma_commit(bar, KBD_SITE_ARGS);
  kbd_hw_mbar_wait(bar, parity, KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
#else
  (void)bar;
  KBD_SITE_UNUSED;
#endif
  return parity ^ 1u;
}
#define kbd__mma_release_(acc, empty) kbd__umma_commit((empty), KBD_SITE)
KBD_DEV void kbd__umma_commit_mc(uint64_t *bar, uint32_t mask, KBD_SITE_PARAMS) {
#if KBD_MMA_ARCH == 100
  if (KBD__WG_LEADER_WARP()) {
    KBD_ELECT_ONE { kbd_hw_umma_commit_mc(bar, (uint16_t)mask, KBD_SITE_ARGS); }
  }
#else
  (void)bar, (void)mask;
  KBD_SITE_UNUSED;
#endif
}
#define kbd__mma_release_mc_(acc, empty, mask) kbd__umma_commit_mc((empty), (uint32_t)(mask), KBD_SITE)
/* sm_90a only (their static assertion names the sm_100a calls) */
#define kbd__mma_release_at_(acc, addr, mask) ((void)(addr), (void)(mask))
#define kbd__mma_release_lanes_(acc, addr, lanes) ((void)(addr), (void)(lanes))
#define kbd__mma_wait_at_(acc, addr, mask) ((void)(addr), (void)(mask))
#define kbd__mma_wait_(acc) ((acc).parity = kbd__umma_wait((acc).bar, (acc).parity, KBD_SITE))

/* ---- sm_100a: the MMA warp (docs/design/mma-warp.md) --------------------------------------------------------- */
/* One warp; its elected thread issues. The fence orders the MMAs after what the warp acquired before (the
 * stage's full barrier, the accumulator buffer's release): ptx-reference 5.8. */
KBD_DEV void kbd__umma_issue_warp(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                                  uint32_t aaddr, kbd_smem_shape bs, uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  KBD_ELECT_ONE {
    kbd__umma_issue_k(taddr, m_total, n, kind, idesc, as, kbd_umma_smem_desc(&as, aaddr, 0, 0), bs,
                      kbd_umma_smem_desc(&bs, baddr, 0, 0), accumulate, KBD_SITE_ARGS);
  }
}
#define kbd__mma_issue_(acc, a, b, accumulate, ta, tb)                                                                 \
  kbd__umma_issue_warp((acc).taddr, KBD_ROWS(acc), KBD_COLS(acc), kbd_mma_kind_of(ta, tb),                             \
                       kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), KBD_ROWS(acc) == 64 ? 64 : 128, KBD_COLS(acc), \
                                           KBD_STILE_MAJOR(a), KBD_STILE_MAJOR(b), 0u),                                \
                       KBD_STILE_SHAPE(a), kbd_hw_smem_addr((a).p, KBD_SITE), KBD_STILE_SHAPE(b),                      \
                       kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate), KBD_SITE)
/* The same elected thread as the issue: tcgen05.commit tracks the MMAs of the thread that executes it. */
KBD_DEV void kbd__umma_commit_warp(uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_ELECT_ONE { kbd_hw_umma_commit(bar, KBD_SITE_ARGS); }
}
KBD_DEV void kbd__acc_wait_warp(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  kbd_hw_mbar_wait(bar, parity, KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
}
/* tcgen05.ld is complete here (kbd_acc_load waits for it); tcgen05.st is not after kbd_acc_store_async, so the
 * release waits for the warp's stores (with none in flight wait::st returns at once); the fence orders both before
 * the arrive. */
KBD_DEV void kbd__acc_release_warp(uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_hw_tmem_wait_st(KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
  KBD_ELECT_ONE { kbd_hw_mbar_arrive(bar, 1u, KBD_SITE_ARGS); }
}
#define kbd__mma_commit_(acc, bar) kbd__umma_commit_warp((bar), KBD_SITE)
/* kbd_mma_issue_elected / kbd_mma_commit_elected: the same by the calling thread, the elected lane of the caller's
 * own KBD_ELECT_ONE around a loop of issues, commits and barrier waits (kbd__umma_issue_commit_one has the compiler
 * reason: a section per call pays a convergence test, a BSSY region and R2URs each time ptxas cannot prove the warp
 * converged). */
KBD_DEV void kbd__umma_issue_one(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                                 uint32_t aaddr, kbd_smem_shape bs, uint32_t baddr, int accumulate, KBD_SITE_PARAMS) {
  kbd_hw_umma_elected("kbd_mma_issue_elected", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  kbd__umma_issue_k(taddr, m_total, n, kind, idesc, as, kbd_umma_smem_desc(&as, aaddr, 0, 0), bs,
                    kbd_umma_smem_desc(&bs, baddr, 0, 0), accumulate, KBD_SITE_ARGS);
}
#define kbd__mma_issue_one_(acc, a, b, accumulate, ta, tb)                                                             \
  kbd__umma_issue_one((acc).taddr, KBD_ROWS(acc), KBD_COLS(acc), kbd_mma_kind_of(ta, tb),                              \
                      kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), KBD_ROWS(acc) == 64 ? 64 : 128, KBD_COLS(acc),  \
                                          KBD_STILE_MAJOR(a), KBD_STILE_MAJOR(b), 0u),                                 \
                      KBD_STILE_SHAPE(a), kbd_hw_smem_addr((a).p, KBD_SITE), KBD_STILE_SHAPE(b),                       \
                      kbd_hw_smem_addr((b).p, KBD_SITE), (accumulate), KBD_SITE)
KBD_DEV void kbd__umma_commit_one(uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_hw_umma_elected("kbd_mma_commit_elected", KBD_SITE_ARGS);
  kbd_hw_umma_commit(bar, KBD_SITE_ARGS);
}
#define kbd__mma_commit_one_(acc, bar) kbd__umma_commit_one((bar), KBD_SITE)
/* kbd_mma_issue_commit_at: the issue and the commit from one elected section. Two calls are two (ELECT, BRA.DIV,
 * BSSY/BSYNC and the commit's address moved to a uniform register: the sm_100a GEMM's MMA warp, issue 27). */
KBD_DEV void kbd__umma_issue_commit_warp(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc,
                                         kbd_smem_shape as, uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate,
                                         uint32_t bar, uint32_t mask, KBD_SITE_PARAMS) {
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  KBD_ELECT_ONE {
    kbd__umma_issue_k(taddr, m_total, n, kind, idesc, as, a0, bs, b0, accumulate, KBD_SITE_ARGS);
    if (mask == 0u)
      kbd_hw_umma_commit_at(bar, KBD_SITE_ARGS);
    else
      kbd_hw_umma_commit_mc_at(bar, (uint16_t)mask, KBD_SITE_ARGS);
  }
}
/* kbd_mma_issue_commit_by_desc_elected: the same issue and commit by the calling thread, the elected lane of the
 * caller's own KBD_ELECT_ONE section around its whole k-loop (docs/mma.md, "One elected section around the sm_100a
 * k-loop"). With a section per k-block the loop enters a divergent region (ELECT) every k-block, and a kernel whose
 * other warps run divergent code ptxas cannot see through (the GEMM epilogue's 64-bit tile divisions call a
 * subroutine under per-thread conditions) makes ptxas treat the MMA warp as possibly diverged too: each k-block then
 * tests convergence (BRA.DIV), brackets the barrier wait (BSSY/BSYNC), keeps the loop's values in vector registers
 * and moves them to uniform ones again inside the section (R2UR). One section around the loop pays that once. */
KBD_DEV void kbd__umma_issue_commit_one(uint32_t taddr, int m_total, int n, int kind, uint32_t idesc, kbd_smem_shape as,
                                        uint64_t a0, kbd_smem_shape bs, uint64_t b0, int accumulate, uint32_t bar,
                                        uint32_t mask, KBD_SITE_PARAMS) {
  kbd_hw_umma_elected("kbd_mma_issue_commit_by_desc_elected", KBD_SITE_ARGS);
  kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  kbd__umma_issue_k(taddr, m_total, n, kind, idesc, as, a0, bs, b0, accumulate, KBD_SITE_ARGS);
  if (mask == 0u)
    kbd_hw_umma_commit_at(bar, KBD_SITE_ARGS);
  else
    kbd_hw_umma_commit_mc_at(bar, (uint16_t)mask, KBD_SITE_ARGS);
}
#define kbd__umma_issue_commit_call_(acc, a, b, accumulate, ta, tb, aop, bop, bar, mask)                               \
  kbd__umma_issue_commit_fn_(kbd__umma_issue_commit_warp, acc, a, b, accumulate, ta, tb, aop, bop, bar, mask)
#define kbd__umma_issue_commit_fn_(fn, acc, a, b, accumulate, ta, tb, aop, bop, bar, mask)                             \
  fn((acc).taddr, KBD_ROWS(acc), KBD_COLS(acc), kbd_mma_kind_of(ta, tb),                                               \
     kbd_umma_instr_desc(ta, tb, KBD__ACC_DTYPE(acc), KBD_ROWS(acc) == 64 ? 64 : 128, KBD_COLS(acc),                   \
                         KBD_STILE_MAJOR(a), KBD_STILE_MAJOR(b), 0u),                                                  \
     KBD_STILE_SHAPE(a), (aop), KBD_STILE_SHAPE(b), (bop), (accumulate), (uint32_t)(bar), (uint32_t)(mask), KBD_SITE)
#define kbd__mma_issue_commit_at_(acc, a, b, accumulate, ta, tb, bar, mask)                                            \
  kbd__umma_issue_commit_call_(acc, a, b, accumulate, ta, tb,                                                          \
                               kbd__mma_desc_of(KBD_STILE_SHAPE(a), kbd_hw_smem_addr((a).p, KBD_SITE)),                \
                               kbd__mma_desc_of(KBD_STILE_SHAPE(b), kbd_hw_smem_addr((b).p, KBD_SITE)), bar, mask)
/* kbd_mma_issue_commit_by_desc: the operands named by the caller's descriptors (checked against the tile types on the
 * CPU machine). The MMA warp's elected thread moves them to uniform registers (R2UR) as the address forms do. */
KBD_DEV uint64_t kbd__umma_desc_checked(kbd_smem_shape s, uint64_t d, const char *which, KBD_SITE_PARAMS) {
  kbd__mma_desc_tile(KBD_MMA_SM100, s, d, which, KBD_SITE_ARGS);
  return d;
}
#define kbd__mma_issue_commit_by_desc_(acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)                         \
  kbd__mma_issue_commit_by_desc_fn_(kbd__umma_issue_commit_warp, acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)
#define kbd__mma_issue_commit_by_desc_one_(acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)                     \
  kbd__mma_issue_commit_by_desc_fn_(kbd__umma_issue_commit_one, acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)
#define kbd__mma_issue_commit_by_desc_fn_(fn, acc, a, b, adesc, bdesc, accumulate, ta, tb, bar, mask)                  \
  kbd__umma_issue_commit_fn_(fn, acc, a, b, accumulate, ta, tb,                                                        \
                             kbd__umma_desc_checked(KBD_STILE_SHAPE(a), (uint64_t)(adesc), "A", KBD_SITE),             \
                             kbd__umma_desc_checked(KBD_STILE_SHAPE(b), (uint64_t)(bdesc), "B", KBD_SITE), bar, mask)
KBD_DEV void kbd__umma_commit_mc_warp(uint64_t *bar, uint32_t mask, KBD_SITE_PARAMS) {
  KBD_ELECT_ONE { kbd_hw_umma_commit_mc(bar, (uint16_t)mask, KBD_SITE_ARGS); }
}
#define kbd__mma_commit_mc_(acc, bar, mask) kbd__umma_commit_mc_warp((bar), (uint32_t)(mask), KBD_SITE)
#define kbd__acc_wait_(acc, bar, parity) kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE)
#define kbd__acc_release_(acc, bar) kbd__acc_release_warp((bar), KBD_SITE)
#endif

#define kbd_mma(acc, a, b, accumulate)                                                                                 \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, a, b);                                                                                 \
    kbd__mma_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)));                        \
  } while (0)
/* kbd_mma on stage s of two rings of operand tiles of types TA and TB (kbd_mma's static checks, the instructions'
 * shape, majors and K-steps): A at descriptor a0 moved by s x astride bytes, B at b0 moved by s x bstride (a0, b0:
 * kbd_mma_desc_of stage 0's tiles; kbd_mma_desc_advance). sm_90a. */
#define KBD__MMA_RULE_RING                                                                                             \
  "kbd_mma_ring is the sm_90a warpgroup's call (wgmma): on sm_100a the MMA warp names its stage's operands with "      \
  "kbd_mma_issue_commit_by_desc"
#define kbd_mma_ring(acc, TA, TB, a0, astride, b0, bstride, s, accumulate)                                             \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB));                                               \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100, KBD__MMA_RULE_RING);                                                        \
    kbd__mma_ring_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), a0, astride, b0, bstride, s, accumulate,               \
                   KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))), KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))));        \
  } while (0)
#define kbd_mma_release(acc, empty)                                                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__mma_release_(acc, empty);                                                                                     \
  } while (0)
/* the same, with the arrive on `empty` in every cluster CTA of mask (bit r = rank r): a stage the CTAs of the mask
 * multicast into is free only when all of them have read it */
#define kbd_mma_release_mc(acc, empty, mask)                                                                           \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__mma_release_mc_(acc, empty, mask);                                                                            \
  } while (0)
/* sm_90a: the stage release with the barrier named by the caller (the older groups' stage) */
#define KBD__MMA_RULE_AT                                                                                               \
  "kbd_mma_release_at / kbd_mma_wait_at are sm_90a calls (wgmma groups): on sm_100a a tcgen05.commit frees a stage - " \
  "kbd_mma_release, kbd_mma_commit"
#define kbd_mma_release_at(acc, addr, mask)                                                                            \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100, KBD__MMA_RULE_AT);                                                          \
    kbd__mma_release_at_(acc, addr, mask);                                                                             \
  } while (0)
/* sm_90a: wait for all but the newest MMA group, then lane r arrives on the barrier at addr's offset in cluster CTA r
 * for each bit r of lanes (0..15; the caller's choice per warp, e.g. the stage's peers in one warp, 0 in the others) */
#define kbd_mma_release_lanes(acc, addr, lanes)                                                                        \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100, KBD__MMA_RULE_AT);                                                          \
    kbd__mma_release_lanes_(acc, addr, lanes);                                                                         \
  } while (0)
#define kbd_mma_wait_at(acc, addr, mask)                                                                               \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 100, KBD__MMA_RULE_AT);                                                          \
    kbd__mma_wait_at_(acc, addr, mask);                                                                                \
  } while (0)
#define kbd_mma_wait(acc)                                                                                              \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__mma_wait_(acc);                                                                                               \
  } while (0)

/* ---- the MMA warp (sm_100a; docs/design/mma-warp.md) ------------------------------------------------------- */
#define KBD__MMA_RULE_WARP                                                                                             \
  "kbd_mma_issue / kbd_mma_commit / kbd_acc_wait / kbd_acc_release are tcgen05's MMA-warp calls (sm_100a): on "        \
  "sm_90a wgmma is issued by the whole warpgroup into its own registers - use kbd_mma, kbd_mma_release, kbd_mma_wait"
/* Arrivals an accumulator's release barrier needs when `threads` threads (whole warps) read it: one per warp. */
#define KBD_ACC_RELEASES(threads) ((threads) / 32)
#define kbd_mma_issue(acc, a, b, accumulate)                                                                           \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, a, b);                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_issue_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)));                  \
  } while (0)
/* sm_100a, the MMA warp: kbd_mma_issue, then from the same elected thread one commit to the barrier at 32-bit shared
 * address bar (kbd_mbarrier_addr): kbd_mma_commit (mask 0) or kbd_mma_commit_mc (mask) */
#define kbd_mma_issue_commit_at(acc, a, b, accumulate, bar, mask)                                                      \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, a, b);                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_issue_commit_at_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)), bar,    \
                              mask);                                                                                   \
  } while (0)
/* kbd_mma_issue_commit_at with the operands, tiles of types TA and TB, named by descriptors (kbd_mma_desc_of, moved
 * by kbd_mma_desc_advance) */
#define kbd_mma_issue_commit_by_desc(acc, TA, TB, adesc, bdesc, accumulate, bar, mask)                                 \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB));                                               \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_issue_commit_by_desc_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate,              \
                                   KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                       \
                                   KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))), bar, mask);                           \
  } while (0)
/* kbd_mma_issue_commit_by_desc from elected-lane code: the MMA warp's own KBD_ELECT_ONE around its k-loop (the
 * barrier waits inside it too); the CPU machine faults a call from warp-uniform or per-lane code */
#define kbd_mma_issue_commit_by_desc_elected(acc, TA, TB, adesc, bdesc, accumulate, bar, mask)                         \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB));                                               \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_issue_commit_by_desc_one_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate,          \
                                       KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                   \
                                       KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))), bar, mask);                       \
  } while (0)
#define kbd_mma_commit(acc, bar)                                                                                       \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_commit_(acc, bar);                                                                                        \
  } while (0)
/* kbd_mma_issue / kbd_mma_commit from elected-lane code: the MMA warp's own KBD_ELECT_ONE around its loop (its
 * barrier waits inside it too); the CPU machine faults a call from warp-uniform or per-lane code */
#if KBD_MMA_ARCH == 90 /* the static assertions below stop the build; these keep the expansions well-formed */
#define kbd__mma_issue_one_(acc, a, b, accumulate, ta, tb) ((void)(accumulate))
#define kbd__mma_commit_one_(acc, bar) ((void)(bar))
#endif
#define kbd_mma_issue_elected(acc, a, b, accumulate)                                                                   \
  do {                                                                                                                 \
    KBD__MMA_STATIC_CHECKS(acc, a, b);                                                                                 \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_issue_one_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)));              \
  } while (0)
#define kbd_mma_commit_elected(acc, bar)                                                                               \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_commit_one_(acc, bar);                                                                                    \
  } while (0)
#define kbd_mma_commit_mc(acc, bar, mask)                                                                              \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__mma_commit_mc_(acc, bar, mask);                                                                               \
  } while (0)
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__acc_wait_(acc, bar, parity);                                                                                  \
  } while (0)
#define kbd_acc_release(acc, bar)                                                                                      \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_WARP);                                                         \
    kbd__acc_release_(acc, bar);                                                                                       \
  } while (0)

/* ---- the register view ------------------------------------------------------------------------------------ */
/* Chunk loops: an sm_90a accumulator is registers, so its chunks must be named by constants (unrolled loop);
 * on sm_100a a chunk is a Tensor Memory column address, and unrolling only multiplies the body's code. With
 * KBD_NO_UNROLL instead, kbd_acc_load also works on sm_90a: it branches to the copy of each possible offset. */
#if KBD_MMA_ARCH == 90
#define KBD_ACC_UNROLL KBD_UNROLL
#else
#define KBD_ACC_UNROLL KBD_NO_UNROLL
#endif
#define KBD__VIEW_NPT(r) ((int)(sizeof((r).v[0]) / sizeof((r).v[0][0])))
#define KBD__ACC_VIEW_CHECKS(acc, r)                                                                                   \
  KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                            \
  KBD__IS_REG(r);                                                                                                      \
  KBD_STATIC_ASSERT(KBD_ROWS(r) == KBD_ROWS(acc) && KBD_DTYPE(r) == KBD_DTYPE(acc) &&                                  \
                        KBD_LAYOUT(r) == KBD_ACC_LAYOUT(KBD_ROWS(acc)) && KBD_COLS(r) <= KBD_COLS(acc) &&              \
                        KBD_COLS(r) % 8 == 0,                                                                          \
                    KBD__MMA_RULE_VIEW)

#if KBD_MMA_ARCH == 90
/* WGMMA_ACC: element (block b, ii) of a C-column view is element (b, ii + 4*(col0/8)) of the N-column
 * accumulator (4 elements per thread per 8 columns), so the view is register renaming after unrolling. */
/* es: 4 (f32, or i32 when isint: each copied through its own type, C's aliasing rules) or 2 (f16, two per
 * register: the copy is a move of half registers) */
KBD_DEV void kbd__acc_copy_at(void *view, int vnpt, void *accv, int anpt, int es, int isint, int mblocks, int vcols,
                              int acols, int off, int to_acc) {
  const int vh = vcols / 2, ah = acols / 2;
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    KBD_UNROLL
    for (int m = 0; m < mblocks; ++m) {
      KBD_UNROLL
      for (int i = 0; i < vh; ++i) {
        const int ai = l * anpt + m * ah + off + i, vi = l * vnpt + m * vh + i;
        if (es == 4 && isint) {
          int32_t *a = (int32_t *)accv + ai, *v = (int32_t *)view + vi;
          if (to_acc)
            *a = *v;
          else
            *v = *a;
        } else if (es == 4) {
          float *a = (float *)accv + ai, *v = (float *)view + vi;
          if (to_acc)
            *a = *v;
          else
            *v = *a;
        } else {
          uint16_t *a = (uint16_t *)accv + ai, *v = (uint16_t *)view + vi;
          if (to_acc)
            *a = *v;
          else
            *v = *a;
        }
      }
    }
  }
}
KBD_DEV void kbd__acc_copy(void *view, int vnpt, void *accv, int anpt, int es, int isint, int mblocks, int vcols,
                           int acols, int col0, int to_acc, KBD_SITE_PARAMS) {
  const int cells = anpt * es / 4; /* 32-bit registers per lane */
  kbd_hw_acc_cols(col0, vcols, acols, KBD_SITE_ARGS);
  kbd_hw_wgmma_acc_touch(accv, cells, cells, KBD_SITE_ARGS); /* CPU: no wgmma may still be writing acc */
#if KBD_MODE_CUDA
  /* Registers have no addresses: with a run-time col0 (a KBD_NO_UNROLL chunk loop) each possible offset gets
   * its own branch of constant-index moves, so the accumulator stays in registers instead of local memory. A
   * constant col0 (unrolled loops) folds the chain to its one copy. */
  KBD_UNROLL
  for (int c = 0; c + vcols <= acols; c += 8)
    if (col0 == c) kbd__acc_copy_at(view, vnpt, accv, anpt, es, isint, mblocks, vcols, acols, 4 * (c / 8), to_acc);
#else
  kbd__acc_copy_at(view, vnpt, accv, anpt, es, isint, mblocks, vcols, acols, 4 * (col0 / 8), to_acc);
#endif
  /* a store's register writes must stay before the next wgmma.fence: without this second fence the compiler
   * may sink the moves into the wgmma region, and ptxas then serializes every wgmma of the kernel (C7514) */
  if (to_acc) kbd_hw_wgmma_acc_touch(accv, cells, cells, KBD_SITE_ARGS);
}
#define kbd__acc_xfer(acc, view, col0, to_acc)                                                                         \
  kbd__acc_copy((void *)&(view).v[0][0], KBD__VIEW_NPT(view), (void *)&(acc).reg.v[0][0], KBD__ACC_NPT(acc),           \
                (int)sizeof((acc).reg.v[0][0]), KBD_DTYPE(acc) == KBD_DT_i32, KBD_ROWS(acc) / 64, KBD_COLS(view),      \
                KBD_COLS(acc), (int)(col0), (to_acc), KBD_SITE)
#else
KBD_HD float kbd__f32_of_bits(uint32_t u) {
  union {
    uint32_t u;
    float f;
  } x;
  x.u = u;
  return x.f;
}
KBD_HD uint32_t kbd__bits_of_f32(float f) {
  union {
    uint32_t u;
    float f;
  } x;
  x.f = f;
  return x.u;
}
/* sm_100a. M = 64 (Layout F: row 16w + r at lane 32w + r): tcgen05.ld.16x256b from lane 32w gives exactly the
 * WGMMA_ACC fragment, 8 columns per .x1, register 4k+2h+e = element 4k+2h+e of the view.
 * M = 128*m (Layout D: row at its lane): tcgen05.ld.32x32b, thread l of warp w reads row 32w+l, register j
 * = column j; block b of the view (rows 128b..) is the MMA of columns b*N... of the accumulator.
 * Chunks of at most 32 registers keep each asm statement's operand list short. */
/* es: 4 (f32, or i32 when isint) or 2 (f16: one element in the low half of each 32-bit cell, ptx-reference 5.7,
 * Table 53) */
KBD_DEV void kbd__acc_tmem(void *v, int npt, int es, int isint, uint32_t taddr, int m_total, int ncols_acc, int cols,
                           int col0, int to_acc, KBD_SITE_PARAMS) {
  kbd_hw_acc_cols(col0, cols, ncols_acc, KBD_SITE_ARGS);
#if KBD_MMA_ARCH == 100
  const uint32_t lane0 = (uint32_t)(32 * (kbd_warp_id() & 3)) << 16;
  uint32_t cells[KBD_LANES_HELD * 32];
  const int mblocks = m_total == 64 ? 1 : m_total / 128;
  const int shape = m_total == 64 ? KBD_TMEM_16X256B : KBD_TMEM_32X32B;
  const int per = m_total == 64 ? cols / 2 : cols; /* registers per block */
  /* registers per instruction: the largest power of two dividing the row's count, at most 32 (.xN takes powers
   * of two only, and a short operand list keeps each asm statement small) */
  const int chunk = (per & -per) < 32 ? (per & -per) : 32;
  const int ccols = m_total == 64 ? 2 * chunk : chunk;
  const int xn = m_total == 64 ? chunk / 4 : chunk;
  KBD_UNROLL
  for (int m = 0; m < mblocks; ++m) {
    KBD_UNROLL
    for (int c = 0; c < per; c += chunk) {
      const uint32_t t = taddr + lane0 + (uint32_t)(m * ncols_acc + col0 + (c / chunk) * ccols);
      const int base = m * per + c;
      if (!to_acc) {
        kbd_hw_tmem_ld(cells, 32, t, shape, xn, KBD_SITE_ARGS);
        kbd_hw_tmem_wait_ld(KBD_SITE_ARGS);
        for (int l = 0; l < KBD_LANES_HELD; ++l) {
          KBD_UNROLL
          for (int j = 0; j < chunk; ++j) {
            if (es == 4 && isint)
              ((int32_t *)v)[l * npt + base + j] = (int32_t)cells[l * 32 + j];
            else if (es == 4)
              ((float *)v)[l * npt + base + j] = kbd__f32_of_bits(cells[l * 32 + j]);
            else
              ((uint16_t *)v)[l * npt + base + j] = (uint16_t)cells[l * 32 + j];
          }
        }
      } else {
        for (int l = 0; l < KBD_LANES_HELD; ++l) {
          KBD_UNROLL
          for (int j = 0; j < chunk; ++j)
            cells[l * 32 + j] = es == 4 && isint ? (uint32_t)((int32_t *)v)[l * npt + base + j]
                                : es == 4 ? kbd__bits_of_f32(((float *)v)[l * npt + base + j])
                                          : ((uint16_t *)v)[l * npt + base + j];
        }
        kbd_hw_tmem_st(t, cells, 32, shape, xn, KBD_SITE_ARGS);
      }
    }
  }
  if (!to_acc) {
    /* orders these loads before the barrier that precedes the next MMA into these columns or the dealloc
     * (ptx-reference 5.8); the loads themselves are complete (wait::ld above) */
    kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
  } else if (to_acc == 1) {
    /* the stores must land before a later MMA of the leader thread accumulates onto them */
    kbd_hw_tmem_wait_st(KBD_SITE_ARGS);
    kbd_hw_tcgen05_fence_before(KBD_SITE_ARGS);
    kbd_hw_bar_sync_named(KBD_REDUCE_WG_BARRIER + kbd_warpgroup_id(), KBD_WARPGROUP_SIZE, KBD_SITE_ARGS);
    kbd_hw_tcgen05_fence_after(KBD_SITE_ARGS);
  }
#else
  (void)v, (void)npt, (void)es, (void)isint, (void)taddr, (void)m_total, (void)ncols_acc, (void)cols, (void)col0;
  (void)to_acc;
  KBD_SITE_UNUSED;
#endif
}
#define kbd__acc_xfer(acc, view, col0, to_acc)                                                                         \
  kbd__acc_tmem((void *)&(view).v[0][0], KBD__VIEW_NPT(view), (int)sizeof((view).v[0][0]),                             \
                KBD_DTYPE(acc) == KBD_DT_i32, (acc).taddr, KBD_ROWS(acc), KBD_COLS(acc), KBD_COLS(view), (int)(col0),  \
                (to_acc), KBD_SITE)
#endif

#define kbd_acc_load(r, acc, col0)                                                                                     \
  do {                                                                                                                 \
    KBD__ACC_VIEW_CHECKS(acc, r);                                                                                      \
    kbd__acc_xfer(acc, r, col0, 0);                                                                                    \
  } while (0)
#define kbd_acc_store(acc, r, col0)                                                                                    \
  do {                                                                                                                 \
    KBD__ACC_VIEW_CHECKS(acc, r);                                                                                      \
    kbd__acc_xfer(acc, r, col0, 1);                                                                                    \
  } while (0)
/* sm_90a: wgmma's accumulator is a read-modify-write operand of the instruction ("+f"), so the compiler keeps the
 * accumulator's last values alive up to the next MMA even when that MMA overwrites them (accumulate 0). Where
 * those values are still read just before it (attention converts P out of S's registers, then issues the next
 * S = Q K^T into them) cicc then copies one set aside and lands the copies between wgmma.fence and the wgmma
 * (ptxas: C7519 / C7517, the wgmmas waited for). kbd_acc_discard ends the old values' lives (an empty asm that
 * only writes the cells, ptx/mma_wgmma.h): the registers are reused in place. */
#if KBD_MMA_ARCH == 90
#define kbd__acc_discard_(acc)                                                                                         \
  kbd_hw_wgmma_acc_discard((void *)&(acc).reg.v[0][0], KBD__ACC_CELLS(acc), KBD__ACC_CELLS(acc), KBD_SITE)
#else
#define kbd__acc_discard_(acc) ((void)(acc))
#endif
#define kbd_acc_discard(acc)                                                                                           \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_KIND(acc) == KBD_KIND_ACC, KBD__MMA_RULE_ACC_KIND);                                          \
    kbd__acc_discard_(acc);                                                                                            \
  } while (0)

#define KBD__MMA_RULE_STORE_ASYNC                                                                                      \
  "kbd_acc_store_async is sm_100a's tcgen05.st left in flight for the warp's next kbd_acc_release: on sm_90a the "     \
  "accumulator is the warpgroup's registers - use kbd_acc_store"
#define kbd_acc_store_async(acc, r, col0)                                                                              \
  do {                                                                                                                 \
    KBD__ACC_VIEW_CHECKS(acc, r);                                                                                      \
    KBD_STATIC_ASSERT(KBD_MMA_ARCH != 90, KBD__MMA_RULE_STORE_ASYNC);                                                  \
    kbd__acc_xfer(acc, r, col0, 2);                                                                                    \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */

/* kbd_mma_rs: A from registers (sm_90a) */
#include "mma_rs.h"
#endif /* KBD_MMA_H */
