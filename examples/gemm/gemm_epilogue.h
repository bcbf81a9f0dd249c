/* gemm_epilogue.h - the epilogue of every kernel text (gemm_kernel.h for sm_90a, gemm_kernel_sm100.h and
 * gemm_kernel_pair.h for sm_100a), one chunk of GEMM_EPI_COLS columns of a warpgroup's 128 accumulator rows at a
 * time. The kernels call gemm_chunk_math (the epilogue hook below) and then gemm_chunk_store (the TMA store through
 * the warpgroup's staging tile, clipped at D's edges). docs/gemm.md, "Changing the epilogue". */
#ifndef GEMM_EPILOGUE_H
#define GEMM_EPILOGUE_H

#include "gemm.h"

#if KBD_KERNEL_CODE /* device code: nvcc's host pass skips it (docs/kernels.md) */
/* ==== THE EPILOGUE HOOK =========================================================================================
 *   void hook(gemm_chunk *y, const gemm_params *p, long long r0, long long c0)
 * y   on entry: the f32 accumulator of D's rows r0 .. r0 + 127 and columns c0 .. c0 + 15, i.e. the sums over K of
 *     A[r][k] B[k][c] and nothing else (no alpha, C or bias yet; for fp8 the per-tensor scales are in p->alpha).
 *     On return: the values D gets. The store rounds them once to D's type (f32 when p->d_f32, else bf16).
 *     Element (r, c) of y is D[r0 + r][c0 + c]. y is a register tile spread over the warpgroup's 128 threads (gemm.h,
 *     gemm_chunk): use whole-tile calls (kbd/tile_ops.h), KBD_MAP(y, y, v, r, c, expr) for a formula of each element
 *     and its coordinates, KBD_COLVEC / KBD_ROWVEC for per-column / per-row values (kbd_vec_load), kbd_load2d for
 *     another M x N tensor (a residual: masked, so rows past M and columns past N read 0).
 *     Rows past M and columns past N are computed but never stored.
 * p   the kernel's gemm_params (gemm.h): alpha, beta, C, bias, act, m, n. A hook that needs more (a second bias, a
 *     residual of its own, a scale vector) adds fields there and sets them in gemm_run.c.
 * r0, c0  the chunk's first row and column in D.
 * It runs on every chunk of every tile, so keep it to register arithmetic and masked loads: no barrier, no shared
 * memory, and on sm_90a few live values (the 128 accumulator registers stay live beside it: 232 per thread in all).
 *
 * The default, gemm_epilogue_default: y = act(alpha y + beta C + bias), act from gemm_act. Another hook replaces it
 * without editing this file: define GEMM_EPILOGUE to the function's name before this file is included (at the top of
 * gemm.cu, or in a file that includes gemm.cu, as tests/gemm/gemm_hook_kernels.c does) and define the function in
 * the same translation unit, before or after this file (after: it may call gemm_epilogue_default first). */
KBD_DEV void gemm_epilogue_default(gemm_chunk *y, const gemm_params *p, long long r0, long long c0) {
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
  /* one activation per path: with independent ifs the epilogue loop's longest path held both GELUs (kbd-inspect
   * --loops: 1863 instructions per chunk instead of 1309 on sm_90a), and the path without one still tests act twice */
  if (p->act >= GEMM_ACT_GELU) {
    if (p->act == GEMM_ACT_GELU)
      kbd_gelu(*y, *y);
    else
      kbd_gelu_tanh(*y, *y);
  } else if (p->act == GEMM_ACT_RELU) {
    kbd_max_s(*y, *y, 0.0f);
  }
}
#ifdef GEMM_EPILOGUE
/* the user's hook, defined before this point or after it (it may then call gemm_epilogue_default) */
KBD_DEV void GEMM_EPILOGUE(gemm_chunk *y, const gemm_params *p, long long r0, long long c0);
#else
#define GEMM_EPILOGUE gemm_epilogue_default
#endif
/* ================================================================================================================ */

/* The kernels' call: the hook. */
KBD_DEV void gemm_chunk_math(gemm_chunk *y, const gemm_params *p, long long r0, long long c0) {
  GEMM_EPILOGUE(y, p, r0, c0);
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
        kbd_tma_store2d(&p->d, out, (int)r0, (int)c0);
      else
        kbd_tma_store2d(&p->d, out16, (int)r0, (int)c0);
      kbd_bulk_commit_group();
    }
  }
}
#endif

#endif
