/* gemm.cu - the GEMM kernels of examples/gemm: one text (gemm_kernel.h), compiled per operand layout. */
#include "gemm.h"

#define GEMM_FP8 0
#define GEMM_KERNEL gemm_bf16_rr /* A row-major (K-major tile), B row-major (N contiguous: MN-major) */
#define GEMM_A_TILE gemm_a_k
#define GEMM_B_TILE gemm_b_mn
#include "gemm_kernel.h"
#undef GEMM_KERNEL
#undef GEMM_A_TILE
#undef GEMM_B_TILE

#define GEMM_KERNEL gemm_bf16_rc /* A row-major, B column-major (K contiguous: K-major) */
#define GEMM_A_TILE gemm_a_k
#define GEMM_B_TILE gemm_b_k
#include "gemm_kernel.h"
#undef GEMM_KERNEL
#undef GEMM_A_TILE
#undef GEMM_B_TILE

#define GEMM_KERNEL gemm_bf16_cr /* A column-major (M contiguous: MN-major), B row-major */
#define GEMM_A_TILE gemm_a_mn
#define GEMM_B_TILE gemm_b_mn
#include "gemm_kernel.h"
#undef GEMM_KERNEL
#undef GEMM_A_TILE
#undef GEMM_B_TILE

#define GEMM_KERNEL gemm_bf16_cc
#define GEMM_A_TILE gemm_a_mn
#define GEMM_B_TILE gemm_b_k
#include "gemm_kernel.h"
#undef GEMM_KERNEL
#undef GEMM_A_TILE
#undef GEMM_B_TILE
#undef GEMM_FP8

/* fp8: both operands K-major (wgmma transposes only 16-bit operands) */
#define GEMM_FP8 1
#define GEMM_KERNEL gemm_e4m3_rc
#define GEMM_A_TILE gemm_a8
#define GEMM_B_TILE gemm_b8
#include "gemm_kernel.h"
