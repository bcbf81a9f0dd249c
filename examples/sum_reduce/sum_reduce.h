/* sum_reduce.h - shared by host and kernel: each block sums one 1 x 1024 f32 tile into out[block]. */
#ifndef SUM_REDUCE_H
#define SUM_REDUCE_H

#include <kbd/reduce.h>
#include <kbd/tile.h>

#define SUM_REDUCE_TILE 1024
#define SUM_REDUCE_THREADS 256

typedef struct sum_reduce_params {
  const float *x;
  float *out; /* one partial per block */
  long long n;
} sum_reduce_params;

/* Launch with kbd_blocks_for(n, SUM_REDUCE_TILE) blocks. */
KBD_KERNEL_DECL(sum_reduce, sum_reduce_params);

#endif
