/* Every wgmma spelling kbd/ptx/mma.h can emit assembles on sm_90a (tests/ptx/mma_shapes.check): one kernel per
 * legal N calls kbd_hw_wgmma once for each accumulator family - bf16, f16 and tf32 into f32, f16 into f16,
 * fp8 into f32 and into f16 (ptx_wgall_<N>) - and one per legal 8-bit integer N for s8 into s32
 * (ptx_wgall_i8_<N>). Each call's asm block holds all variants of its family (negation, transposition, type
 * pair), so ptxas accepting the file proves all of them; the SASS must keep exactly one GMMA per call (the
 * selector folded for every N). The descriptors are kernel parameters: only the spellings matter here. */
#include <kbd/mma_desc.h>
#include <kbd/tile.h>

#define TID ((int)threadIdx.x)
#define K KBD_SMEM_K_MAJOR
#define MN KBD_SMEM_MN_MAJOR

/* one wgmma group into a fresh accumulator of `cells` 32-bit cells, stored to out */
#define ONE(T, cells, kind, a, b, dt, n, am, bm, flags)                                                                \
  do {                                                                                                                 \
    T d_[cells];                                                                                                       \
    for (int i_ = 0; i_ < (cells); ++i_) d_[i_] = (T)0;                                                               \
    kbd_hw_wgmma_acc_touch(d_, cells, cells, KBD_SITE);                                                                \
    kbd_hw_wgmma_fence(KBD_SITE);                                                                                      \
    kbd_hw_wgmma(d_, cells, kind, kbd_umma_instr_desc(a, b, dt, 64, n, am, bm, flags), ad, bd, acc, KBD_SITE);         \
    kbd_hw_wgmma_commit(KBD_SITE);                                                                                     \
    kbd_hw_wgmma_wait(0, KBD_SITE);                                                                                    \
    kbd_hw_wgmma_acc_touch(d_, cells, cells, KBD_SITE);                                                                \
    for (int i_ = 0; i_ < (cells); ++i_) out[TID * 128 + i_] = (uint32_t)d_[i_];                                       \
  } while (0)

#define FLOAT_KERNEL(N, RF, RH, unused)                                                                                \
  __global__ void __launch_bounds__(128) ptx_wgall_##N(uint32_t *out, uint64_t ad, uint64_t bd, int acc) {            \
    ONE(float, RF, KBD_MMA_KIND_F16, KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, N, MN, K, KBD_UMMA_NEGATE_B);            \
    ONE(float, RF, KBD_MMA_KIND_F16, KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32, N, K, MN, 0u);                             \
    ONE(uint32_t, RH, KBD_MMA_KIND_F16, KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, N, K, K, 0u);                           \
    ONE(float, RF, KBD_MMA_KIND_TF32, KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F32, N, K, K, KBD_UMMA_NEGATE_A);            \
    ONE(float, RF, KBD_MMA_KIND_F8F6F4, KBD_MMA_E5M2, KBD_MMA_E4M3, KBD_MMA_F32, N, K, K, 0u);                         \
    ONE(uint32_t, RH, KBD_MMA_KIND_F8F6F4, KBD_MMA_E4M3, KBD_MMA_E4M3, KBD_MMA_F16, N, K, K, 0u);                      \
  }
#define INT_KERNEL(N, RF, RH, unused)                                                                                  \
  __global__ void __launch_bounds__(128) ptx_wgall_i8_##N(uint32_t *out, uint64_t ad, uint64_t bd, int acc) {         \
    ONE(int32_t, RF, KBD_MMA_KIND_I8, KBD_MMA_U8, KBD_MMA_S8, KBD_MMA_S32, N, K, K, 0u);                               \
  }

KBD__PTX_WGMMA_NS(FLOAT_KERNEL, 0)
KBD__PTX_WGMMA_NS_I8(INT_KERNEL, 0)
