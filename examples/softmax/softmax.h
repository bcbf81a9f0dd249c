/* softmax.h - shared by host and kernel: row softmax, f32 or bf16 in and out, one 256-thread block per row.
 *
 * y[r][c] = exp(x[r][c] - m_r) / sum_c exp(x[r][c] - m_r), m_r = max_c x[r][c], computed online with
 * kbd/softmax.h (docs/softmax.md): the row max and sum come from one read of the row. All math is f32; bf16
 * is widened on load (exact) and rounded once on store.
 *
 * Special values (those of kbd/softmax.h, the attention convention):
 *   - a row of all -inf (fully masked: nothing to attend to) gives zeros;
 *   - -inf elements of a row with a finite element get 0;
 *   - a NaN or a +inf in a row makes the whole row NaN (+inf - +inf has no answer);
 *   - huge finite values are exact: every element is shifted by the row max, so nothing overflows.
 * Any cols >= 1: the row is walked in SOFTMAX_TILE-element tiles, the tail of the last one masked by position.
 */
#ifndef SOFTMAX_H
#define SOFTMAX_H

#include <kbd/tile.h>

#define SOFTMAX_TILE 1024   /* elements per tile: 4 per thread, one 16-byte f32 (8-byte bf16) access */
#define SOFTMAX_THREADS 256 /* one block per row */
#define SOFTMAX_REG_TILES 4 /* tiles a thread holds in registers: rows up to SOFTMAX_ROW_REG are read once */
#define SOFTMAX_ROW_REG (SOFTMAX_REG_TILES * SOFTMAX_TILE)

typedef struct softmax_params {
  const void *x; /* rows x cols, row-major, of dtype */
  void *y;       /* same shape and dtype */
  long long rows, cols;
  int dtype; /* KBD_DT_f32 or KBD_DT_bf16 */
} softmax_params;

/* Launch with kbd_cfg_1d(rows) blocks. */
KBD_KERNEL_DECL(softmax, softmax_params);

#endif
