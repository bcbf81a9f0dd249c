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
#endif
