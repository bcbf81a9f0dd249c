/* vector_add.h - what the host program and the kernel share: the parameter struct and the launcher. */
#ifndef VECTOR_ADD_H
#define VECTOR_ADD_H

#include <kbd/tile.h>

/* Elements per block: 256 threads x 4 floats, so each thread moves one 16-byte chunk per operand. */
#define VECTOR_ADD_TILE 1024
#define VECTOR_ADD_THREADS 256

typedef struct vector_add_params {
  const float *a;
  const float *b;
  float *c;
  long long n;
} vector_add_params;

/* c[i] = a[i] + b[i] for i < n. Launch with kbd_blocks_for(n, VECTOR_ADD_TILE) blocks. */
KBD_KERNEL_DECL(vector_add, vector_add_params);

#endif
