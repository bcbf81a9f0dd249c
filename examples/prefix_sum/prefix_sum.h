/* prefix_sum.h - shared by host and kernel: CTA-scope inclusive prefix sums of 1024-element f32 tiles.
 * Each block scans its own tile and writes its total; the device-wide scan adds block offsets on top. */
#ifndef PREFIX_SUM_H
#define PREFIX_SUM_H

#include <kbd/scan.h>
#include <kbd/tile.h>

#define PREFIX_SUM_TILE 1024
#define PREFIX_SUM_THREADS 256

typedef struct prefix_sum_params {
  const float *x;
  float *y;           /* y[i] = x[b*1024] + ... + x[i] within block b's tile */
  float *block_total; /* one per block */
  long long n;
} prefix_sum_params;

KBD_KERNEL_DECL(prefix_sum, prefix_sum_params);

#endif
