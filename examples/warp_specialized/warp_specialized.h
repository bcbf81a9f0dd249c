/* warp_specialized.h - shared by host and kernel: y = A x (a matrix-vector product, f32) by a
 * warp-specialized block: one producer warp stages rows of A into shared memory, two consumer warpgroups
 * multiply them by x, through a two-stage ring paced by named barriers (warp ranges, kbd/scope.h).
 *
 * A: rows x cols, row-major; x: cols; y: rows. Any rows >= 1, cols >= 1. Each block takes row pairs
 * (one row per consumer warpgroup) in a grid-stride loop, and each row in chunks of WS_CHUNK columns.
 */
#ifndef WARP_SPECIALIZED_H
#define WARP_SPECIALIZED_H

#include <kbd/tile.h>

#define WS_CHUNK 1024       /* columns per stage and row */
#define WS_STAGES 2         /* ring depth: the producer fills one stage while the consumers read the other */
#define WS_THREADS (9 * 32) /* warps 0-3: consumer warpgroup 0, 4-7: consumer warpgroup 1, 8: producer */
/* The ring: WS_STAGES stages of two rows (one per consumer warpgroup), unswizzled - each row is read and written
 * as whole 16-byte vectors by consecutive threads, which is conflict-free without a swizzle. */
typedef KBD_STILE(f32, WS_STAGES * 2, WS_CHUNK, KBD_SWIZZLE_NONE) ws_ring;

typedef struct ws_params {
  const float *a; /* rows x cols */
  const float *x; /* cols */
  float *y;       /* rows */
  long long rows, cols;
} ws_params;

/* Launch with kbd_cfg_1d(blocks), any blocks >= 1 (ws_blocks: one per row pair, at most 1024). */
KBD_KERNEL_DECL(ws_gemv, ws_params);

static inline unsigned ws_blocks(long long rows) {
  const long long pairs = (rows + 1) / 2;
  return (unsigned)(pairs < 1 ? 1 : pairs > 1024 ? 1024 : pairs);
}

#endif
