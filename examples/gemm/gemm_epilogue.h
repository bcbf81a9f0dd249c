/* gemm_epilogue.h - the epilogue of every kernel text (gemm_kernel.h for sm_90a, gemm_kernel_sm100.h and
 * gemm_kernel_pair.h for sm_100a), one chunk of GEMM_EPI_COLS columns of a warpgroup's 128 accumulator rows at a
 * time. The kernels call gemm_chunk_math (the epilogue hook below) and then gemm_chunk_store (the TMA store through
 * one of the warpgroup's two staging buffers, clipped at D's edges). On sm_100a the chunks come from registers filled
 * by one 64-column Tensor Memory load (gemm_wide, gemm_chunk_of_wide). docs/gemm.md, "Changing the epilogue" and
 * "The epilogue's stores". */
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

/* The chunk's store, by the warpgroup `me`, through staging buffer *buf of the warpgroup's GEMM_EPI_BUFS (`stage`:
 * buffer 0; *buf advances for the next chunk): into it (as gemm_out_f32, or as gemm_out_bf16 over its first half for
 * a bf16 D), then out with one TMA store from the leader warp's elected thread.
 * The buffer's previous store (GEMM_EPI_BUFS chunks ago) must be done reading it before anyone overwrites it: the
 * storing thread's bulk groups complete in order, so waiting until at most GEMM_EPI_BUFS - 1 groups (the newer
 * chunks' stores) still read covers exactly that one, and the store of the previous chunk keeps reading its own
 * buffer while this chunk is written (with one buffer, wait 0, that store's whole read was exposed every chunk). The
 * warpgroup barrier after the wait makes it every writer's; the generic stores are fenced for the TMA's async-proxy
 * reads. The buffer index runs on across tiles: a tile with an odd number of chunks (D's last columns) must not
 * restart at buffer 0, whose store may be the newest group. */
KBD_DEV void gemm_chunk_store(gemm_chunk *y, const gemm_params *p, unsigned char *stage, int *buf, kbd_scope me,
                              int leader, long long r0, long long c0) {
  unsigned char *at = stage + *buf * GEMM_OUT_BYTES;
  const gemm_out_f32 out = KBD_STILE_AT(gemm_out_f32, at);
  const gemm_out_bf16 out16 = KBD_STILE_AT(gemm_out_bf16, at); /* the same bytes, as bf16 */
  *buf = *buf + 1 == GEMM_EPI_BUFS ? 0 : *buf + 1;
  if (leader) {
    KBD_ELECT_ONE { kbd_bulk_wait_group_read(GEMM_EPI_BUFS - 1); }
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

#if KBD_MMA_ARCH == 100
/* sm_100a: GEMM_EPI_LOAD_COLS accumulator columns in registers, read from Tensor Memory by one kbd_acc_load (two
 * tcgen05.ld.32x32b.x32 and their waits) instead of one load and one wait::ld per 16-column chunk: the chunks of
 * these columns then need no Tensor Memory access, and the warp may release the buffer to the MMA warp as soon as it
 * has loaded the tile's last columns. 64 of the 168 registers an epilogue thread has (65536 / 384) stay live across
 * the hook. */
typedef KBD_ACC_TILE(f32, GEMM_WM, GEMM_EPI_LOAD_COLS) gemm_wide;
KBD_STATIC_ASSERT(GEMM_EPI_LOAD_COLS % GEMM_EPI_COLS == 0 && GEMM_BN % GEMM_EPI_LOAD_COLS == 0,
                  "gemm: the wide loads must cut the tile into whole chunks");

/* y = chunk q (columns 16q .. 16q + 15) of w. Both are TMEM_ACC tiles (kbd/layout.h): a thread holds one row, its
 * element j is column j, so the chunk is elements 16q .. 16q + 15 of each lane's row. On the GPU a register has no
 * address: a run-time q would put w in local memory, so each q is a copy with constant indices (gemm__chunk_at),
 * picked by q's two bits. ptxas turns the inner branch into 16 SEL; four ifs in a row (q == 0, q == 1, ...) instead
 * had it hoist the moves of several cases onto one path (48 moves on the longest: kbd-inspect --loops, 1313
 * instructions per chunk against 1279). The rolled chunk loop's body is still compiled once. */
KBD_DEV void gemm__chunk_at(gemm_chunk *y, const gemm_wide *w, int l, int k) {
  KBD_UNROLL
  for (int i = 0; i < GEMM_EPI_COLS; ++i)
    y->v[l][i] = w->v[l][k * GEMM_EPI_COLS + i];
}
KBD_DEV void gemm_chunk_of_wide(gemm_chunk *y, const gemm_wide *w, int q) {
  KBD_STATIC_ASSERT(KBD_LAYOUT(*y) == KBD_LAYOUT_TMEM_ACC && KBD_LAYOUT(*w) == KBD_LAYOUT_TMEM_ACC,
                    "gemm_chunk_of_wide: TMEM_ACC tiles (one row per thread)");
  KBD_STATIC_ASSERT(GEMM_EPI_LOAD_COLS == 4 * GEMM_EPI_COLS, "gemm_chunk_of_wide: four chunks per load");
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
#if KBD_MODE_CUDA
    if (q & 2) {
      if (q & 1)
        gemm__chunk_at(y, w, l, 3);
      else
        gemm__chunk_at(y, w, l, 2);
    } else {
      if (q & 1)
        gemm__chunk_at(y, w, l, 1);
      else
        gemm__chunk_at(y, w, l, 0);
    }
#else
    gemm__chunk_at(y, w, l, q);
#endif
  }
}

/* The epilogue of one tile's 128 rows x GEMM_BN columns in Tensor Memory (acc, bound to the tile's buffer `bar`
 * belongs to) by the warpgroup `me`: D's rows r0 .., columns cb ..; GEMM_EPI_LOAD_COLS columns per load, the hook and
 * the store per 16-column chunk. The warp releases the buffer (kbd_acc_release, or with `pair` kbd_acc_release_pair
 * to the even CTA's MMA warp) once per tile: after its last load, or at once when every column is past N. */
KBD_DEV void gemm_tmem_epilogue(gemm_acc *acc, kbd_mbarrier *bar, int pair, const gemm_params *p, unsigned char *stage,
                                int *buf, kbd_scope me, int leader, long long r0, long long cb) {
  const long long left = p->n - cb;
  const int loads = left <= 0         ? 0
                    : left >= GEMM_BN ? GEMM_BN / GEMM_EPI_LOAD_COLS
                                      : (int)((left + GEMM_EPI_LOAD_COLS - 1) / GEMM_EPI_LOAD_COLS);
  if (loads == 0) {
    if (pair)
      kbd_acc_release_pair(*acc, bar);
    else
      kbd_acc_release(*acc, bar);
  }
  /* rolled loops: Tensor Memory columns are run-time addresses, and the hook is compiled once */
  KBD_NO_UNROLL
  for (int h = 0; h < loads; ++h) {
    gemm_wide w;
    kbd_acc_load(w, *acc, h * GEMM_EPI_LOAD_COLS);
    if (h == loads - 1) { /* the rest of the tile is in registers: the MMA warp may refill the buffer */
      if (pair)
        kbd_acc_release_pair(*acc, bar);
      else
        kbd_acc_release(*acc, bar);
    }
    KBD_NO_UNROLL
    for (int q = 0; q < GEMM_EPI_LOAD_COLS / GEMM_EPI_COLS; ++q) {
      const long long c0 = cb + h * GEMM_EPI_LOAD_COLS + q * GEMM_EPI_COLS;
      if (c0 >= p->n) break; /* the rest of the tile is past D's last column */
      gemm_chunk y;
      gemm_chunk_of_wide(&y, &w, q);
      gemm_chunk_math(&y, p, r0, c0);
      gemm_chunk_store(&y, p, stage, buf, me, leader, r0, c0);
    }
  }
}
#endif
#endif

#endif
