/* stream_order.h - shared by tests/gpu/stream_order_main.c and stream_order.cu. */
#ifndef STREAM_ORDER_H
#define STREAM_ORDER_H

#include <kbd/device.h>
#include <kbd/tile.h>

typedef struct so_fill_params {
  int32_t *x;
  long long n;
  int32_t round;
} so_fill_params;

/* x[i] = so_value(i, round), 256 threads per block, one element per thread. */
KBD_KERNEL_DECL(so_fill, so_fill_params);

KBD_HD int32_t so_value(long long i, int32_t round) {
  return (int32_t)((i * 7919 + (long long)round * 104729) % 2001) - 1000;
}

#endif
