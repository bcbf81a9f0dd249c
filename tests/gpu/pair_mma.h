/* pair_mma.h - shared by tests/gpu/pair_mma_main.c and pair_mma.cu (a CTA-pair MMA on the device and on the CPU
 * machine; kbd/mma_pair.h). */
#ifndef PAIR_MMA_H
#define PAIR_MMA_H

#include <kbd/tile.h>

#define PM_N 128 /* the pair's N: each CTA loads PM_N / 2 rows of B */
#define PM_K 64  /* K per stage */

typedef struct pm_params {
  kbd_tensor_map a, b; /* A: M x K and B: PM_N x K, row-major bf16, boxes of 128 (or 64) x 64 and 64 x 64 */
  float *d;            /* M x PM_N, row-major */
  int kt;              /* K / PM_K */
  int raw;             /* pm128_kernel: store each CTA's Tensor Memory view as it is (128 lanes x PM_N / 2, lane l
                          at d row 128 * cta + l) instead of unfolded: the host checks Layout B itself */
  int small_alloc;     /* broken on purpose (CPU machine only): allocate 32 columns, fewer than D takes */
} pm_params;

/* Clusters of 2 CTAs (one pair), 256 threads; pair p computes D rows 256p .. 256p + 255 (pm_kernel: M = 256, A
 * boxes of 128 rows) or 128p .. 128p + 127 (pm128_kernel: M = 128, A boxes of 64 rows, the folded accumulator). */
KBD_KERNEL_DECL(pm_kernel, pm_params);
KBD_KERNEL_DECL(pm128_kernel, pm_params);

#endif
