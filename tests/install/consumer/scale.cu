#include "scale.h"

KBD_KERNEL(scale, 128, scale_params) {
  KBD_TILE(f32, 1, 512, KBD_CTA) x;
  const long long start = (long long)kbd_block_x() * 512;
  kbd_load(x, p.x, p.n, start);
  kbd_mul_s(x, x, p.s);
  kbd_store(p.y, x, p.n, start);
}

#ifdef KBD_CPU
int scale_cpu_arch(void) { return KBD_CPU_ARCH; }
int scale_cpu_optimized(void) {
#ifdef __OPTIMIZE__
  return 1;
#else
  return 0;
#endif
}
#endif
