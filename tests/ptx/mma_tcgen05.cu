/* PTX probe for the tcgen05 twins of kbd/ptx/mma.h on sm_100a (tests/ptx/mma_tcgen05.check). The kernels call
 * the twins directly, with descriptors built by kbd_umma_smem_desc from KBD_STILE tiles and idescs from
 * kbd_umma_instr_desc; one thread issues the MMAs and commits them to an mbarrier, one warp allocates:
 *   ptx_tc_f16    alloc 512 columns + relinquish; kind::f16 bf16 M=128 N=256 (2 K-steps, 64B swizzle) with
 *                 enable-input-d from a run-time flag, and f16 M=64 N=64; commit; after the wait each warp
 *                 reads its lanes with 32x32b.x32 (32 registers) and the M=64 block with 16x256b.x8, writes
 *                 them back with tcgen05.st, wait::ld / wait::st, the fences around the CTA barrier, dealloc
 *   ptx_tc_tf32   kind::tf32 M=128 N=64 (128B swizzle)
 *   ptx_tc_fp8    kind::f8f6f4 e4m3 x e5m2 M=128 N=128
 *   ptx_tc_i8     kind::i8 s8 x s8 -> s32 M=128 N=64 (a 1-byte tile type stands in for s8 storage)
 * No wgmma anywhere, no trap left by the twins' switches, no local memory, no spills. */
#include <kbd/mbarrier.h>
#include <kbd/mma_desc.h>
#include <kbd/tile.h>

typedef struct {
  uint32_t *out;
  int acc;
} ptx_tc_params;

#define TID ((int)threadIdx.x)
#define WARP (TID / 32)
#define LANE_BASE ((uint32_t)(32 * (WARP % 4)) << 16) /* a warp reaches TMEM lanes 32(w%4)..+31 */

/* one thread: every K-step of the tiles, accumulating after the first (or from the flag) */
#define TC_KLOOP(taddr, kind, idesc, ta, tb, accflag)                                                                  \
  do {                                                                                                                 \
    const kbd_smem_shape as_ = KBD_STILE_SHAPE(ta), bs_ = KBD_STILE_SHAPE(tb);                                         \
    const uint32_t aa_ = kbd_hw_smem_addr((ta).p, KBD_SITE), ba_ = kbd_hw_smem_addr((tb).p, KBD_SITE);                 \
    _Pragma("unroll") for (int k_ = 0; k_ < kbd_mma_ksteps(&as_); ++k_)                                               \
        kbd_hw_umma((taddr), (kind), (idesc), kbd_umma_smem_desc(&as_, aa_, 0, k_), kbd_umma_smem_desc(&bs_, ba_, 0, k_), \
                    (accflag) || k_ > 0, KBD_SITE);                                                                    \
  } while (0)

/* allocation by warp 0, barrier init by thread 0, then everyone reads the TMEM address */
#define TC_SETUP(ncols)                                                                                                \
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);                                                                         \
  KBD_SHARED_ALIGNED(uint32_t, slot, 1, 4);                                                                            \
  if (WARP == 0) {                                                                                                     \
    kbd_hw_tmem_alloc(slot, (ncols), KBD_SITE);                                                                        \
    kbd_hw_tmem_relinquish(KBD_SITE);                                                                                  \
  }                                                                                                                    \
  if (TID == 0) {                                                                                                      \
    kbd_mbarrier_init(&bar[0], 1);                                                                                     \
    kbd_fence_mbarrier_init();                                                                                         \
  }                                                                                                                    \
  kbd_hw_tcgen05_fence_before(KBD_SITE);                                                                               \
  kbd_sync();                                                                                                          \
  kbd_hw_tcgen05_fence_after(KBD_SITE);                                                                                \
  const uint32_t tm = slot[0]

/* the MMAs' completion, then each warp reads its 32 lanes x 32 columns and the CTA frees the columns */
#define TC_FINISH(ncols)                                                                                               \
  kbd_mbarrier_wait(&bar[0], 0);                                                                                       \
  kbd_hw_tcgen05_fence_after(KBD_SITE);                                                                                \
  {                                                                                                                    \
    uint32_t r_[32];                                                                                                   \
    kbd_hw_tmem_ld(r_, 32, tm + LANE_BASE, KBD_TMEM_32X32B, 32, KBD_SITE);                                             \
    kbd_hw_tmem_wait_ld(KBD_SITE);                                                                                     \
    for (int i = 0; i < 32; ++i) p.out[TID * 32 + i] = r_[i];                                                          \
  }                                                                                                                    \
  kbd_hw_tcgen05_fence_before(KBD_SITE);                                                                               \
  kbd_sync();                                                                                                          \
  if (WARP == 0) {                                                                                                     \
    kbd_hw_tcgen05_fence_after(KBD_SITE);                                                                              \
    kbd_hw_tmem_dealloc(tm, (ncols), KBD_SITE);                                                                        \
  }

typedef KBD_STILE(bf16, 128, 32, KBD_SWIZZLE_64B) a_bf16;
typedef KBD_STILE(bf16, 256, 32, KBD_SWIZZLE_64B) b_bf16;

KBD_KERNEL(ptx_tc_f16, 128, ptx_tc_params) {
  KBD_SHARED_STILE(a_bf16, sa);
  KBD_SHARED_STILE(b_bf16, sb);
  TC_SETUP(512);
  if (TID == 0) {
    TC_KLOOP(tm, KBD_MMA_KIND_F16,
             kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 128, 256, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR,
                                 0u),
             sa, sb, p.acc);
    /* M = 64: the first 64 rows of A and of B (the same bytes read as f16) into columns 256.. */
    TC_KLOOP(tm + 256, KBD_MMA_KIND_F16,
             kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32, 64, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
             sa, sb, 0);
    kbd_hw_umma_commit(&bar[0], KBD_SITE);
  }
  kbd_mbarrier_wait(&bar[0], 0);
  kbd_hw_tcgen05_fence_after(KBD_SITE);
  uint32_t r[32], q[32];
  kbd_hw_tmem_ld(r, 32, tm + LANE_BASE, KBD_TMEM_32X32B, 32, KBD_SITE);
  kbd_hw_tmem_ld(q, 32, tm + LANE_BASE + 256, KBD_TMEM_16X256B, 8, KBD_SITE); /* M = 64: Layout F, 16 lanes */
  kbd_hw_tmem_wait_ld(KBD_SITE);
  for (int i = 0; i < 32; ++i) p.out[TID * 64 + i] = r[i];
  for (int i = 0; i < 32; ++i) p.out[TID * 64 + 32 + i] = q[i];
  for (int i = 0; i < 32; ++i) r[i] += q[i];
  kbd_hw_tmem_st(tm + LANE_BASE + 32, r, 32, KBD_TMEM_32X32B, 32, KBD_SITE);
  kbd_hw_tmem_st(tm + LANE_BASE + 256 + 64, q, 32, KBD_TMEM_16X256B, 8, KBD_SITE);
  kbd_hw_tmem_wait_st(KBD_SITE);
  kbd_hw_tcgen05_fence_before(KBD_SITE);
  kbd_sync();
  if (WARP == 0) {
    kbd_hw_tcgen05_fence_after(KBD_SITE);
    kbd_hw_tmem_dealloc(tm, 512, KBD_SITE);
  }
}

typedef KBD_STILE(f32, 128, 32, KBD_SWIZZLE_128B) a_tf32;
typedef KBD_STILE(f32, 64, 32, KBD_SWIZZLE_128B) b_tf32;

KBD_KERNEL(ptx_tc_tf32, 128, ptx_tc_params) {
  KBD_SHARED_STILE(a_tf32, sa);
  KBD_SHARED_STILE(b_tf32, sb);
  TC_SETUP(64);
  if (TID == 0) {
    TC_KLOOP(tm, KBD_MMA_KIND_TF32,
             kbd_umma_instr_desc(KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F32, 128, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR,
                                 0u),
             sa, sb, p.acc);
    kbd_hw_umma_commit(&bar[0], KBD_SITE);
  }
  TC_FINISH(64);
}

typedef KBD_STILE(e4m3, 128, 64, KBD_SWIZZLE_64B) a_fp8;
typedef KBD_STILE(e5m2, 128, 64, KBD_SWIZZLE_64B) b_fp8;

KBD_KERNEL(ptx_tc_fp8, 128, ptx_tc_params) {
  KBD_SHARED_STILE(a_fp8, sa);
  KBD_SHARED_STILE(b_fp8, sb);
  TC_SETUP(128);
  if (TID == 0) {
    TC_KLOOP(tm, KBD_MMA_KIND_F8F6F4,
             kbd_umma_instr_desc(KBD_MMA_E4M3, KBD_MMA_E5M2, KBD_MMA_F32, 128, 128, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR,
                                 0u),
             sa, sb, p.acc);
    kbd_hw_umma_commit(&bar[0], KBD_SITE);
  }
  TC_FINISH(128);
}

typedef KBD_STILE(e4m3, 64, 64, KBD_SWIZZLE_64B) b_i8;

KBD_KERNEL(ptx_tc_i8, 128, ptx_tc_params) {
  KBD_SHARED_STILE(a_fp8, sa); /* 1-byte elements: the descriptor only sees the element size */
  KBD_SHARED_STILE(b_i8, sb);
  TC_SETUP(64);
  if (TID == 0) {
    TC_KLOOP(tm, KBD_MMA_KIND_I8,
             kbd_umma_instr_desc(KBD_MMA_S8, KBD_MMA_S8, KBD_MMA_S32, 128, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
             sa, sb, p.acc);
    kbd_hw_umma_commit(&bar[0], KBD_SITE);
  }
  TC_FINISH(64);
}
