/* layernorm.h - shared by host and kernel: LayerNorm forward, one block per row, any hidden size.
 *   y = (x - mean) * rsqrt(var + eps) * gamma + beta,  mean and (biased) var over the row, in f32.
 * x and y are f32 or bf16 (p.dtype, one for the whole launch); gamma, beta are f32 of length cols.
 * A NaN or inf in a row makes that row NaN (its mean/variance are undefined). */
#ifndef LAYERNORM_H
#define LAYERNORM_H

#include <kbd/reduce.h>
#include <kbd/tile.h>

#define LAYERNORM_TILE 1024   /* elements per tile: 4 per thread, one 16-byte f32 (8-byte bf16) access */
#define LAYERNORM_THREADS 256 /* one block per row */

typedef struct layernorm_params {
  const void *x; /* rows x cols, row-major, of dtype */
  void *y;       /* same shape and dtype */
  const float *gamma, *beta;
  long long rows, cols;
  float eps;
  int dtype; /* KBD_DT_f32 or KBD_DT_bf16 */
} layernorm_params;

/* Launch with kbd_cfg_1d(rows) blocks. */
KBD_KERNEL_DECL(layernorm, layernorm_params);

#endif
