/* gemm_epilogue.h - the arithmetic of one epilogue chunk, shared by both kernel texts (gemm_kernel.h for sm_90a,
 * gemm_kernel_sm100.h for sm_100a): y = act(alpha * y + beta * C + bias) for the GEMM_EPI_COLS columns c0.. of
 * the 128 rows r0.. of D. C and the bias are read with masked loads, so a chunk past D's edge reads nothing. */
#ifndef GEMM_EPILOGUE_H
#define GEMM_EPILOGUE_H

#include "gemm.h"

/* One chunk of an accumulator as registers (WGMMA_ACC fragment on sm_90a, a row per thread on sm_100a). */
typedef KBD_ACC_TILE(f32, GEMM_WM, GEMM_EPI_COLS) gemm_chunk;

KBD_DEV void gemm_chunk_math(gemm_chunk *y, const gemm_params *p, long long r0, long long c0) {
  kbd_mul_s(*y, *y, p->alpha);
  if (p->beta != 0.0f) {
    gemm_chunk x;
    if (p->d_f32) {
      kbd_load2d(x, (const float *)p->c, p->m, p->n, p->ldc, r0, c0);
    } else {
      KBD_ACC_TILE(bf16, GEMM_WM, GEMM_EPI_COLS) xb;
      kbd_load2d(xb, (const kbd_bf16 *)p->c, p->m, p->n, p->ldc, r0, c0);
      kbd_convert(x, xb);
    }
    kbd_mul_s(x, x, p->beta);
    kbd_add(*y, *y, x);
  }
  if (p->bias) {
    KBD_COLVEC(f32, *y) bias; /* the bias of the columns this thread holds */
    kbd_vec_load(bias, p->bias, c0, p->n);
    kbd_bcast_cols(*y, *y, bias, KBD_OP_ADD);
  }
  if (p->act == GEMM_ACT_RELU) kbd_max_s(*y, *y, 0.0f);
  if (p->act == GEMM_ACT_GELU) kbd_gelu(*y, *y);
}

#endif
