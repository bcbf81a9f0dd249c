/* tests/tile/gelu_tanh.cu - the GPU code of kbd_gelu_tanh (tile_ops.h) for the PTX/SASS check gelu_tanh.check:
 * an f32 CTA tile of 1 x 1024 over 128 threads (8 elements a thread), y = gelu_tanh(x). */
#include <kbd/tile.h>

typedef struct gelu_tanh_params {
  const float *x;
  float *y;
  long long n;
} gelu_tanh_params;

KBD_KERNEL(gelu_tanh_f32, 128, gelu_tanh_params) {
  KBD_TILE(f32, 1, 1024, KBD_CTA) a, d;
  const long long start = (long long)kbd_block_x() * 1024;
  kbd_load(a, p.x, p.n, start);
  kbd_gelu_tanh(d, a);
  kbd_store(p.y, d, p.n, start);
}
