#include <stdio.h>
#include <stdlib.h>

#include "scale.h"

int main(void) {
  enum { N = 1000 };
  if (!kbd_device_available()) return 77;
  float hx[N], hy[N];
  for (int i = 0; i < N; ++i) hx[i] = (float)i;
  float *x, *y;
  KBD_CHECK(kbd_malloc((void **)&x, sizeof hx));
  KBD_CHECK(kbd_malloc((void **)&y, sizeof hy));
  KBD_CHECK(kbd_copy_to_device(x, hx, sizeof hx));
  scale_params p = {x, y, 2.0f, N};
  KBD_CHECK(scale(kbd_cfg_1d(kbd_blocks_for(N, 512)), p));
  KBD_CHECK(kbd_copy_to_host(hy, y, sizeof hy));
  for (int i = 0; i < N; ++i)
    if (hy[i] != 2.0f * hx[i]) {
      printf("consumer: y[%d] = %g\n", i, (double)hy[i]);
      return 1;
    }
#ifdef KBD_CPU
  if (scale_cpu_arch() != KBD_CPU_ARCH) { /* main.c and scale.cu are built with the same definitions */
    printf("consumer: main.c emulates sm_%da, scale.cu sm_%da\n", KBD_CPU_ARCH, scale_cpu_arch());
    return 1;
  }
  printf("consumer: OK, the CPU machine emulating sm_%da, kernel %s\n", scale_cpu_arch(),
         scale_cpu_optimized() ? "optimized" : "not optimized");
#else
  printf("consumer: OK\n");
#endif
  kbd_free(x);
  kbd_free(y);
  return 0;
}
