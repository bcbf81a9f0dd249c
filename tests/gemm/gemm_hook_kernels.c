/* gemm_hook_kernels.c - examples/gemm's kernels (gemm.cu, every kernel text of the emulated arch) built with a user
 * epilogue hook in place of the default, the way docs/gemm.md ("Changing the epilogue") tells a user to: the hook is
 * defined first and GEMM_EPILOGUE names it before gemm.cu is included. test_gemm_hook.c checks its result.
 *
 * The hook, on an f32 D: D = gelu_tanh(alpha * A B + bias) + C, the residual added after the activation (C read
 * with a masked load; gemm_run passes C only when beta != 0, and the hook ignores beta), then every element above
 * the diagonal (column > row, from each element's coordinates) set to -1: the coordinates of every register of a
 * chunk must be the ones the store writes it to, in both accumulator layouts (WGMMA_ACC, TMEM_ACC). */
#include "gemm.h"

#if KBD_KERNEL_CODE
KBD_DEV void test_hook(gemm_chunk *y, const gemm_params *p, long long r0, long long c0) {
  kbd_mul_s(*y, *y, p->alpha);
  KBD_COLVEC(f32, *y) bias;
  kbd_vec_load(bias, p->bias, c0, p->n);
  kbd_bcast_cols(*y, *y, bias, KBD_OP_ADD);
  kbd_gelu_tanh(*y, *y);
  gemm_chunk res;
  kbd_load2d(res, (const float *)p->c, p->m, p->n, p->ldc, r0, c0);
  kbd_add(*y, *y, res);
  KBD_MAP(*y, *y, v, r, c, c0 + c > r0 + r ? -1.0f : v);
}
#endif
#define GEMM_EPILOGUE test_hook
#include "gemm.cu"
