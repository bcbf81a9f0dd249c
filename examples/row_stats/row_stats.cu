/* row_stats.cu - per-row mean and max (row_stats.h) with 2D register tiles and kbd_reduce_rows.
 *
 * The block's band of RS_TR rows is read one RS_TR x RS_TC tile at a time and folded ELEMENTWISE into two
 * accumulator tiles (a running sum and a running max: one FADD and one FMNMX per element, no communication);
 * only at the end does each accumulator become one value per row, with one kbd_reduce_rows each. A row of the
 * tile is one warp (RS_TC / 4 = 32 lanes of 16-byte vectors), so each row reduction is 5 butterfly shuffles
 * inside the warp: no shared memory and no barrier (kbd/reduce_tile.h, docs/reduce.md). Global reads are
 * 16-byte vectors, a warp reading 512 contiguous bytes of one row.
 */
#include <math.h>

#include "row_stats.h"

/* The block's tiles: RS_TR x RS_TC f32, owned by the whole block. */
typedef KBD_TILE(f32, RS_TR, RS_TC, RS_THREADS) rs_tile;

KBD_KERNEL(row_stats, RS_THREADS, row_stats_params) {
  const long long r0 = (long long)kbd_block_x() * RS_TR; /* the band's first row */
  rs_tile t, sum, mx;
  kbd_zero(sum);
  kbd_fill(mx, -INFINITY);

  for (long long c0 = 0; c0 < p.cols; c0 += RS_TC) {
    kbd_load2d(t, p.x, p.rows, p.cols, p.cols, r0, c0); /* past the edge: 0 */
    kbd_add(sum, sum, t);                               /* 0s add nothing */
    /* ... but 0 is no neutral element for max: the last tile's columns past the edge become -inf. */
    if (c0 + RS_TC > p.cols) KBD_MAP(t, t, x, r, c, c0 + c < p.cols ? x : -INFINITY);
    kbd_max(mx, mx, t);
  }

  /* sum holds RS_TC partial sums per row: scale them, then add them up (the mean, up to rounding). */
  kbd_mul_s(sum, sum, 1.0f / (float)p.cols);
  KBD_ROWVEC(f32, sum) mean_v;
  KBD_ROWVEC(f32, mx) max_v;
  kbd_reduce_rows(mean_v, sum, KBD_RED_SUM);
  kbd_reduce_rows(max_v, mx, KBD_RED_MAX);

  /* Row r of the band to mean[r0 + r], once per row; rows past the matrix are not written. */
  kbd_vec_store_n(p.mean + r0, mean_v, p.rows - r0);
  kbd_vec_store_n(p.max + r0, max_v, p.rows - r0);
}
