#include "scale.h"

KBD_KERNEL(scale, 128, scale_params) {
  KBD_TILE(f32, 1, 512, KBD_CTA) x;
  const long long start = (long long)kbd_block_x() * 512;
  kbd_load(x, p.x, p.n, start);
  kbd_mul_s(x, x, p.s);
  kbd_store(p.y, x, p.n, start);
}
