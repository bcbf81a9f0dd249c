/* softmax.h - shared by host and kernel: numerically stable row softmax, one block per row.
 *
 * y[r][c] = exp(x[r][c] - m_r) / sum_c exp(x[r][c] - m_r), m_r = max_c x[r][c] (NaN ignored).
 * Documented edge cases (no NaN where the math has an answer):
 *   - a row of all -inf: every logit is equal, so the result is the softmax of equal values, 1/cols;
 *   - +inf logits: they share the whole mass equally (the limit), finite ones get 0;
 *   - huge finite values: exact shift by the max, never overflows;
 *   - a NaN anywhere in a row makes that whole row NaN (the sum is NaN).
 * Any cols >= 1 (the row is walked in 1024-element tiles; the masked tail does not count).
 */
#ifndef SOFTMAX_H
#define SOFTMAX_H

#include <kbd/reduce.h>
#include <kbd/tile.h>

#define SOFTMAX_TILE 1024
#define SOFTMAX_THREADS 256

typedef struct softmax_params {
  const void *x; /* rows x cols, row-major, f32 (softmax_f32) or bf16 (softmax_bf16) */
  void *y;       /* same shape and dtype */
  long long rows, cols;
} softmax_params;

/* Launch with kbd_cfg_1d(rows) blocks. */
KBD_KERNEL_DECL(softmax_f32, softmax_params);
KBD_KERNEL_DECL(softmax_bf16, softmax_params);

#endif
