/* layernorm.h - shared by host and kernel: LayerNorm forward, one block per row, any hidden size.
 *   y = (x - mean) * rsqrt(var + eps) * gamma + beta,  mean and (biased) var over the row, in f32.
 * x / y are f32 (layernorm_f32) or bf16 (layernorm_bf16); gamma, beta are f32 of length cols.
 * A NaN or inf in a row makes that row NaN (its mean/variance are undefined). */
#ifndef LAYERNORM_H
#define LAYERNORM_H

#include <kbd/reduce.h>
#include <kbd/tile.h>

#define LAYERNORM_TILE 1024
#define LAYERNORM_THREADS 256

typedef struct layernorm_params {
  const void *x;
  void *y;
  const float *gamma, *beta;
  long long rows, cols;
  float eps;
} layernorm_params;

/* Launch with kbd_cfg_1d(rows) blocks. */
KBD_KERNEL_DECL(layernorm_f32, layernorm_params);
KBD_KERNEL_DECL(layernorm_bf16, layernorm_params);

#endif
