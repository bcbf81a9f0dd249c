/* PTX probe for the wgmma twins of kbd/ptx/mma.h on sm_90a (tests/ptx/mma.check). Each kernel calls the twins
 * directly, with descriptors built by kbd_wgmma_smem_desc from KBD_STILE tiles and an idesc from
 * kbd_umma_instr_desc, so every type, N, negate and transpose choice is a constant that must fold to ONE
 * wgmma.mma_async per call (no trap, no branch over the instruction variants):
 *   ptx_wg_bf16_n256   bf16 m64n256k16 (128 f32 accumulator registers), 4 K-steps, scale-d from a run-time
 *                      flag; two commit groups, wait_group 1 then 0
 *   ptx_wg_f16_n8      f16 m64n8k16 (32B-swizzled operands); f16 m64n16k16 into an f16 accumulator
 *   ptx_wg_tf32        tf32 m64n64k8
 *   ptx_wg_fp8         e4m3 x e5m2 m64n64k32
 *   ptx_wg_s8          s8 x s8 m64n64k32 into s32 (a 1-byte tile type stands in for s8 storage)
 *   ptx_wg_mn          bf16 m64n64k16 with both operands MN-major (imm-trans 1, 1)
 *   ptx_wg_neg         bf16 m64n64k16 with A negated (imm-scale-a -1)
 * kbd_hw_wgmma_acc_touch (a register fence on the GPU) before wgmma.fence and after wait_group keeps the
 * accumulators' zeroing and reads out of the wgmma region. ptxas must not serialize the wgmma pipeline (no
 * C75xx advisory); no spills, no local memory. */
#include <kbd/mma_desc.h>
#include <kbd/tile.h>

typedef struct {
  float *out;
  int32_t *iout;
  kbd_f16 *hout;
  int acc;
} ptx_mma_params;

#define TID ((int)threadIdx.x)

/* every K-step of a (A tile, B tile) pair: one wgmma each, accumulating after the first (or from the flag) */
#define WG_KLOOP(d, kind, idesc, ta, tb, accflag)                                                                      \
  do {                                                                                                                 \
    const kbd_smem_shape as_ = KBD_STILE_SHAPE(ta), bs_ = KBD_STILE_SHAPE(tb);                                         \
    const uint32_t aa_ = kbd_hw_smem_addr((ta).p, KBD_SITE), ba_ = kbd_hw_smem_addr((tb).p, KBD_SITE);                 \
    _Pragma("unroll") for (int k_ = 0; k_ < kbd_mma_ksteps(&as_); ++k_)                                               \
        kbd_hw_wgmma((d), 0, (kind), (idesc), kbd_wgmma_smem_desc(&as_, aa_, 0, k_), kbd_wgmma_smem_desc(&bs_, ba_, 0, k_), \
                     (accflag) || k_ > 0, KBD_SITE);                                                                   \
  } while (0)

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) a_bf16;
typedef KBD_STILE(bf16, 256, 64, KBD_SWIZZLE_128B) b_bf16_256;

KBD_KERNEL(ptx_wg_bf16_n256, 128, ptx_mma_params) {
  KBD_SHARED_STILE(a_bf16, sa);
  KBD_SHARED_STILE(b_bf16_256, sb);
  float d[128]; /* the old accumulator comes from memory, so scale-d (p.acc) decides whether it is added */
  for (int i = 0; i < 128; ++i) d[i] = p.out[TID * 128 + i];
  const uint32_t idesc =
      kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 64, 256, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u);
  kbd_hw_wgmma_acc_touch(d, 128, 128, KBD_SITE); /* keeps the loads out of the wgmma region */
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F16, idesc, sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F16, idesc, sa, sb, 1);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(1, KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 128, 128, KBD_SITE);
  for (int i = 0; i < 128; ++i) p.out[TID * 128 + i] = d[i];
}

typedef KBD_STILE(f16, 64, 16, KBD_SWIZZLE_32B) a_f16;
typedef KBD_STILE(f16, 8, 16, KBD_SWIZZLE_32B) b_f16_8;
typedef KBD_STILE(f16, 16, 16, KBD_SWIZZLE_32B) b_f16_16;

KBD_KERNEL(ptx_wg_f16_n8, 128, ptx_mma_params) {
  KBD_SHARED_STILE(a_f16, sa);
  KBD_SHARED_STILE(b_f16_8, sb);
  KBD_SHARED_STILE(b_f16_16, sb16);
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  kbd_f16 h[8] __attribute__((aligned(4))); /* the 4 .f16x2 registers of m64n16 f16 */
  for (int i = 0; i < 8; ++i) h[i] = p.hout[i];
  kbd_hw_wgmma_acc_touch(d, 4, 4, KBD_SITE);
  kbd_hw_wgmma_acc_touch(h, 4, 4, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F16,
           kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32, 64, 8, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
           sa, sb, p.acc);
  WG_KLOOP(h, KBD_MMA_KIND_F16,
           kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 64, 16, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
           sa, sb16, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 4, 4, KBD_SITE);
  kbd_hw_wgmma_acc_touch(h, 4, 4, KBD_SITE);
  for (int i = 0; i < 4; ++i) p.out[TID * 4 + i] = d[i];
  for (int i = 0; i < 8; ++i) p.hout[TID * 8 + i] = h[i];
}

typedef KBD_STILE(f32, 64, 32, KBD_SWIZZLE_128B) t_tf32;

KBD_KERNEL(ptx_wg_tf32, 128, ptx_mma_params) {
  KBD_SHARED_STILE(t_tf32, sa);
  KBD_SHARED_STILE(t_tf32, sb);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_TF32,
           kbd_umma_instr_desc(KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F32, 64, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
           sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  for (int i = 0; i < 32; ++i) p.out[TID * 32 + i] = d[i];
}

typedef KBD_STILE(e4m3, 64, 128, KBD_SWIZZLE_128B) t_e4m3;
typedef KBD_STILE(e5m2, 64, 128, KBD_SWIZZLE_128B) t_e5m2;

KBD_KERNEL(ptx_wg_fp8, 128, ptx_mma_params) {
  KBD_SHARED_STILE(t_e4m3, sa);
  KBD_SHARED_STILE(t_e5m2, sb);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F8F6F4,
           kbd_umma_instr_desc(KBD_MMA_E4M3, KBD_MMA_E5M2, KBD_MMA_F32, 64, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
           sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  for (int i = 0; i < 32; ++i) p.out[TID * 32 + i] = d[i];
}

KBD_KERNEL(ptx_wg_s8, 128, ptx_mma_params) {
  KBD_SHARED_STILE(t_e4m3, sa); /* 1-byte elements: the descriptor only sees the element size */
  KBD_SHARED_STILE(t_e4m3, sb);
  int32_t d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0;
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_I8,
           kbd_umma_instr_desc(KBD_MMA_S8, KBD_MMA_S8, KBD_MMA_S32, 64, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u),
           sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  for (int i = 0; i < 32; ++i) p.iout[TID * 32 + i] = d[i];
}

typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) mn_bf16;

KBD_KERNEL(ptx_wg_mn, 128, ptx_mma_params) {
  KBD_SHARED_STILE(mn_bf16, sa);
  KBD_SHARED_STILE(mn_bf16, sb);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F16,
           kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 64, 64, KBD_SMEM_MN_MAJOR, KBD_SMEM_MN_MAJOR,
                               0u),
           sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  for (int i = 0; i < 32; ++i) p.out[TID * 32 + i] = d[i];
}

KBD_KERNEL(ptx_wg_neg, 128, ptx_mma_params) {
  KBD_SHARED_STILE(a_bf16, sa);
  KBD_SHARED_STILE(a_bf16, sb);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  kbd_hw_wgmma_fence(KBD_SITE);
  WG_KLOOP(d, KBD_MMA_KIND_F16,
           kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 64, 64, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR,
                               KBD_UMMA_NEGATE_A),
           sa, sb, p.acc);
  kbd_hw_wgmma_commit(KBD_SITE);
  kbd_hw_wgmma_wait(0, KBD_SITE);
  kbd_hw_wgmma_acc_touch(d, 32, 32, KBD_SITE);
  for (int i = 0; i < 32; ++i) p.out[TID * 32 + i] = d[i];
}
