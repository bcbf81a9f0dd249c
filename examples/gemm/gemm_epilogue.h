/* gemm_epilogue.h - one epilogue chunk, shared by both kernel texts (gemm_kernel.h for sm_90a, gemm_kernel_sm100.h
 * for sm_100a): gemm_chunk_math computes y = act(alpha * y + beta * C + bias) for the GEMM_EPI_COLS columns c0.. of
 * the 128 rows r0.. of D (C and the bias are read with masked loads, so a chunk past D's edge reads nothing), and
 * gemm_chunk_store writes it with the TMA through the warpgroup's staging tile (clipped at D's edges). */
#ifndef GEMM_EPILOGUE_H
#define GEMM_EPILOGUE_H

#include "gemm.h"

/* One chunk of an accumulator as registers (WGMMA_ACC fragment on sm_90a, a row per thread on sm_100a). */
typedef KBD_ACC_TILE(f32, GEMM_WM, GEMM_EPI_COLS) gemm_chunk;

#if KBD_KERNEL_CODE /* device code: nvcc's host pass skips it (docs/kernels.md) */
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

/* The chunk's store, by the warpgroup `me`: into its staging tile (out, or out16 over the same bytes for a bf16 D)
 * and out with one TMA store from the leader warp's elected thread. The staging tile's previous store must be
 * done reading it before anyone overwrites it; the generic stores are fenced for the TMA's async-proxy reads. */
KBD_DEV void gemm_chunk_store(gemm_chunk *y, const gemm_params *p, gemm_out_f32 out, gemm_out_bf16 out16, kbd_scope me,
                              int leader, long long r0, long long c0) {
  if (leader) {
    KBD_ELECT_ONE { kbd_bulk_wait_group_read(0); }
  }
  kbd_scope_sync(me);
  if (p->d_f32) {
    kbd_stile_store(out, *y);
  } else {
    KBD_ACC_TILE(bf16, GEMM_WM, GEMM_EPI_COLS) yb;
    kbd_convert(yb, *y);
    kbd_stile_store(out16, yb);
  }
  kbd_fence_proxy_async();
  kbd_scope_sync(me);
  if (leader) {
    KBD_ELECT_ONE {
      if (p->d_f32)
        kbd_tma_store(&p->d, out, (int)c0, (int)r0);
      else
        kbd_tma_store(&p->d, out16, (int)c0, (int)r0);
      kbd_bulk_commit_group();
    }
  }
}
#endif

#endif
