/* gemm.cu - the GEMM kernel of examples/gemm: one text per arch, one kernel for every operand variant. The
 * variant's code (TMA loads, MMA issue: gemm_variant.h) is compiled once per variant, the rest of the kernel once.
 * sm_90a (and the CPU machine emulating it): gemm_kernel.h, consumer warpgroups issuing wgmma. sm_100a:
 * gemm_kernel_sm100.h, an MMA warp and double-buffered Tensor Memory accumulators (docs/gemm.md).
 * GEMM_KERNEL_TEXT (gemm.h) picks the text, in nvcc's host pass too. */
#include "gemm.h"
#include "gemm_epilogue.h"

#define GEMM_VARIANT gemm_bf16_rr /* A row-major (K-major tile), B row-major (N contiguous: MN-major) */
#define GEMM_A_TILE gemm_a_k
#define GEMM_A2_TILE gemm_a2_k
#define GEMM_B_TILE gemm_b_mn
#define GEMM_BH_TILE gemm_bh_mn
#include "gemm_variant.h"
#undef GEMM_VARIANT
#undef GEMM_A_TILE
#undef GEMM_A2_TILE
#undef GEMM_B_TILE
#undef GEMM_BH_TILE

#define GEMM_VARIANT gemm_bf16_rc /* A row-major, B column-major (K contiguous: K-major) */
#define GEMM_A_TILE gemm_a_k
#define GEMM_A2_TILE gemm_a2_k
#define GEMM_B_TILE gemm_b_k
#define GEMM_BH_TILE gemm_bh_k
#include "gemm_variant.h"
#undef GEMM_VARIANT
#undef GEMM_A_TILE
#undef GEMM_A2_TILE
#undef GEMM_B_TILE
#undef GEMM_BH_TILE

#define GEMM_VARIANT gemm_bf16_cr /* A column-major (M contiguous: MN-major), B row-major */
#define GEMM_A_TILE gemm_a_mn
#define GEMM_A2_TILE gemm_a2_mn
#define GEMM_B_TILE gemm_b_mn
#define GEMM_BH_TILE gemm_bh_mn
#include "gemm_variant.h"
#undef GEMM_VARIANT
#undef GEMM_A_TILE
#undef GEMM_A2_TILE
#undef GEMM_B_TILE
#undef GEMM_BH_TILE

#define GEMM_VARIANT gemm_bf16_cc
#define GEMM_A_TILE gemm_a_mn
#define GEMM_A2_TILE gemm_a2_mn
#define GEMM_B_TILE gemm_b_k
#define GEMM_BH_TILE gemm_bh_k
#include "gemm_variant.h"
#undef GEMM_VARIANT
#undef GEMM_A_TILE
#undef GEMM_A2_TILE
#undef GEMM_B_TILE
#undef GEMM_BH_TILE

/* fp8: both operands K-major (wgmma transposes only 16-bit operands) */
#define GEMM_VARIANT gemm_e4m3_rc
#define GEMM_A_TILE gemm_a8
#define GEMM_A2_TILE gemm_a28
#define GEMM_B_TILE gemm_b8
#define GEMM_BH_TILE gemm_bh8
#include "gemm_variant.h"
#undef GEMM_VARIANT
#undef GEMM_A_TILE
#undef GEMM_A2_TILE
#undef GEMM_B_TILE
#undef GEMM_BH_TILE

#include GEMM_KERNEL_TEXT

/* CTA pairs exist on sm_100a only (tcgen05 .cta_group::2): the pair kernel is compiled there and for the CPU
 * machine emulating it; gemm_run asks for it here. */
#if GEMM__TEXT_ARCH == 100
#include "gemm_kernel_pair.h"
KBD_EXTERN_C gemm_kernel_fn gemm_pair_kernel(void) { return gemm_pair_bf16_rc; }
#else
KBD_EXTERN_C gemm_kernel_fn gemm_pair_kernel(void) { return (gemm_kernel_fn)0; }
#endif
/* Pingpong consumers need accumulators in the consumers' registers (wgmma): the sm_90a text only. The sm_100a text
 * already overlaps an epilogue with the next tile's MMAs (two Tensor Memory buffers); gemm_run refuses pingpong
 * there. */
KBD_EXTERN_C int gemm_has_pingpong(void) { return GEMM__TEXT_ARCH == 90; }
