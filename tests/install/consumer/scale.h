#ifndef SCALE_H
#define SCALE_H
#include <kbd/tile.h>
typedef struct scale_params {
  const float *x;
  float *y;
  float s;
  long long n;
} scale_params;
KBD_KERNEL_DECL(scale, scale_params);
#ifdef KBD_CPU
/* Defined by scale.cu's CPU build: the arch its translation unit emulates (KBD_CPU_ARCH) and whether it was
 * compiled with optimisation (__OPTIMIZE__). */
int scale_cpu_arch(void);
int scale_cpu_optimized(void);
#endif
#endif
