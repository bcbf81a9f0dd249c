/* row_stats.h - shared by host and kernel: per-row mean and max of an f32 matrix, a template for the row
 * reductions of 2D register tiles (kbd/reduce_tile.h).
 *
 *   mean[r] = (1/cols) * sum_c x[r][c],   max[r] = max_c x[r][c]
 *
 * One 128-thread block per band of RS_TR rows; the band is walked in RS_TR x RS_TC tiles. Any rows, cols >= 1:
 * the tiles hang over the matrix edge, masked by kbd_load2d (reads 0) and, for the max, by position.
 * max is PTX max.f32 on both paths: a NaN element is ignored (the max of the others), +0 > -0; a NaN in a
 * row makes its mean NaN.
 */
#ifndef ROW_STATS_H
#define ROW_STATS_H

#include <kbd/tile.h>

#define RS_THREADS 128 /* 4 warps */
#define RS_TR 8        /* rows per block (one tile's rows) */
#define RS_TC 128      /* columns per tile: a row of the tile is one warp's 32 lanes x 4 elements */

typedef struct row_stats_params {
  const float *x; /* rows x cols, row-major */
  float *mean;    /* rows */
  float *max;     /* rows */
  long long rows, cols;
} row_stats_params;

/* Launch with kbd_cfg_1d(ceil(rows / RS_TR)) blocks. */
KBD_KERNEL_DECL(row_stats, row_stats_params);

#endif
