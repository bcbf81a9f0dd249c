/* stream_order.cu - the kernels of tests/gpu/stream_order_main.c: kbd's device reduce/scan and an input
 * fill that runs on the caller's stream. */
#define KBD_DEVICE_IMPLEMENTATION
#include "stream_order.h"

KBD_KERNEL(so_fill, 256, so_fill_params) {
  KBD_FOR_LANES(l) {
    const long long i = (long long)kbd_block_x() * 256 + kbd_thread_idx(l);
    if (i < p.n) kbd_st_global(&p.x[i], so_value(i, p.round));
  }
}
