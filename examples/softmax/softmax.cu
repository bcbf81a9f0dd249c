/* softmax.cu - row softmax with the online softmax of kbd/softmax.h: one 256-thread block per row.
 *
 * Pass 1 reads the row in chunks of SOFTMAX_REG_TILES tiles of 1 x 1024 (all loads of a chunk are issued
 * before its first reduction: 4 x 16 bytes in flight per thread) and folds each tile into the running max
 * and sum with kbd_softmax_update: two CTA reductions, each 5 SHFL + 2 LDS.128 + 2 barriers. Pass 2 writes
 * y = exp(x - max) / sum with kbd_softmax_apply - pass 1's exponentials were taken against the max of their
 * time, so they are recomputed: a row of at most SOFTMAX_ROW_REG elements is still in registers and is read
 * from global memory exactly once; a longer row is read a second time (from L2 while the rows of the blocks
 * in flight fit there). Per element: FADD + FMUL + MUFU.EX2 per pass, and a multiply by 1/sum in pass 2.
 */
#include <math.h>

#include "softmax.h"

/* A 1 x 1024 f32 tile of the whole block (SOFTMAX_THREADS is the block: the scope of a CTA tile). */
typedef KBD_TILE(f32, 1, SOFTMAX_TILE, SOFTMAX_THREADS) softmax_tile;

/* t = elements c0 .. c0 + 1023 of the row x as f32. Elements at or past cols become -inf by POSITION (p = 0
 * in kbd_softmax_update), so a -inf or NaN of the data is never taken for padding, nor padding for data. */
KBD_DEV void softmax_load(softmax_tile *t, const void *x, int dtype, long long cols, long long c0) {
  if (dtype == KBD_DT_bf16) {
    KBD_TILE(bf16, 1, SOFTMAX_TILE, SOFTMAX_THREADS) h;
    kbd_load(h, (const kbd_bf16 *)x, cols, c0);
    kbd_convert(*t, h); /* bf16 -> f32 is exact */
  } else {
    kbd_load(*t, (const float *)x, cols, c0);
  }
  if (c0 + SOFTMAX_TILE > cols) KBD_MAP(*t, *t, v, r, c, c0 + c < cols ? v : -INFINITY);
}

/* Elements c0 .. of the row y = e (rounded once to bf16 for a bf16 y); none at or past cols is written. */
KBD_DEV void softmax_store(void *y, int dtype, long long cols, long long c0, softmax_tile *e) {
  if (dtype == KBD_DT_bf16) {
    KBD_TILE(bf16, 1, SOFTMAX_TILE, SOFTMAX_THREADS) h;
    kbd_convert(h, *e);
    kbd_store((kbd_bf16 *)y, h, cols, c0);
  } else {
    kbd_store((float *)y, *e, cols, c0);
  }
}

/* t[k] = tile k of the chunk at c0, for the tiles that start before cols. The loop unrolls (a constant trip
 * count), so every t[k] has a constant index and stays in registers. */
KBD_DEV void softmax_load_chunk(softmax_tile t[SOFTMAX_REG_TILES], const void *x, int dtype, long long cols,
                                long long c0) {
  KBD_UNROLL for (int k = 0; k < SOFTMAX_REG_TILES; ++k) {
    if (c0 + k * SOFTMAX_TILE < cols) softmax_load(&t[k], x, dtype, cols, c0 + k * SOFTMAX_TILE);
  }
}

KBD_KERNEL(softmax, SOFTMAX_THREADS, softmax_params) {
  const long long row = kbd_block_x();
  const long long esize = p.dtype == KBD_DT_bf16 ? 2 : 4;
  const char *x = (const char *)p.x + row * p.cols * esize;
  char *y = (char *)p.y + row * p.cols * esize;
  const float scale = 1.0f; /* plain softmax (attention passes 1/sqrt(head_dim)) */

  softmax_tile t[SOFTMAX_REG_TILES], e;
  KBD_SOFTMAX_STATE(t[0]) st; /* the running max and sum of the row */
  kbd_softmax_init(st);

  /* Pass 1: the running max and sum. The tiles guarded out past cols are skipped by the whole block alike
   * (cols is the launch's), so every thread reaches the same reductions. */
  for (long long c0 = 0; c0 < p.cols; c0 += SOFTMAX_ROW_REG) {
    softmax_load_chunk(t, x, p.dtype, p.cols, c0);
    KBD_UNROLL for (int k = 0; k < SOFTMAX_REG_TILES; ++k) {
      if (c0 + k * SOFTMAX_TILE < p.cols) kbd_softmax_update(e, st, t[k], scale);
    }
  }

  /* Pass 2: y = exp(x - max) / sum. A row of one chunk still has it in t; a longer one is read again. */
  for (long long c0 = 0; c0 < p.cols; c0 += SOFTMAX_ROW_REG) {
    if (p.cols > SOFTMAX_ROW_REG) softmax_load_chunk(t, x, p.dtype, p.cols, c0);
    KBD_UNROLL for (int k = 0; k < SOFTMAX_REG_TILES; ++k) {
      if (c0 + k * SOFTMAX_TILE < p.cols) {
        kbd_softmax_apply(e, st, t[k], scale);
        softmax_store(y, p.dtype, p.cols, c0 + k * SOFTMAX_TILE, &e);
      }
    }
  }
}
