/* main.c - host side of warp_specialized: y = A x against a double-precision reference.
 * Usage: warp_specialized_<mode> [rows] [cols]   (default 301 x 5000: odd rows, a ragged last chunk) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "warp_specialized.h"

int main(int argc, char **argv) {
  const long long rows = argc > 1 ? atoll(argv[1]) : 301, cols = argc > 2 ? atoll(argv[2]) : 5000;
  if (rows < 1 || cols < 1) {
    fprintf(stderr, "usage: %s [rows >= 1] [cols >= 1]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("warp_specialized: no CUDA device present; nothing to run\n");
    return 77;
  }
  float *ha = (float *)malloc(sizeof(float) * (size_t)(rows * cols)),
        *hx = (float *)malloc(sizeof(float) * (size_t)cols);
  float *hy = (float *)malloc(sizeof(float) * (size_t)rows);
  if (!ha || !hx || !hy) return 1;
  for (long long i = 0; i < rows * cols; ++i)
    ha[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
  for (long long c = 0; c < cols; ++c)
    hx[c] = (float)((c * 104729) % 201 - 100) / 100.0f;
  float *da, *dx, *dy;
  KBD_CHECK(kbd_malloc((void **)&da, sizeof(float) * (size_t)(rows * cols)));
  KBD_CHECK(kbd_malloc((void **)&dx, sizeof(float) * (size_t)cols));
  KBD_CHECK(kbd_malloc((void **)&dy, sizeof(float) * (size_t)rows));
  KBD_CHECK(kbd_copy_to_device(da, ha, sizeof(float) * (size_t)(rows * cols)));
  KBD_CHECK(kbd_copy_to_device(dx, hx, sizeof(float) * (size_t)cols));
  ws_params p = {da, dx, dy, rows, cols};
  long long bad = 0;
  double worst = 0;
  /* one block per row pair, and a small grid so that each block walks several pairs through its ring */
  const unsigned grids[2] = {ws_blocks(rows), 3};
  for (int k = 0; k < 2; ++k) {
    KBD_CHECK(kbd_memset_device(dy, 0xff, sizeof(float) * (size_t)rows)); /* NaN: an unwritten row fails */
    KBD_CHECK(ws_gemv(kbd_cfg_1d(grids[k]), p));
    KBD_CHECK(kbd_device_sync());
    KBD_CHECK(kbd_copy_to_host(hy, dy, sizeof(float) * (size_t)rows));
    for (long long r = 0; r < rows; ++r) {
      double ref = 0, mag = 0;
      for (long long c = 0; c < cols; ++c) {
        ref += (double)ha[r * cols + c] * hx[c];
        mag += fabs((double)ha[r * cols + c] * hx[c]);
      }
      /* Each sum is an fma chain of one term per chunk, a fold of the thread's 8 elements and a 128-thread
       * butterfly: depth d = chunks + 7 + 7, so |err| <= d * 2^-24 * sum|a*x| (first order); 2x margin. */
      const double depth = (double)((cols + WS_CHUNK - 1) / WS_CHUNK + 14);
      const double err = fabs(hy[r] - ref), tol = 2.0 * depth * 0x1p-24 * mag + 1e-30;
      if (!(err <= tol)) ++bad;
      worst = err / (mag > 1 ? mag : 1) > worst ? err / (mag > 1 ? mag : 1) : worst;
    }
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("warp_specialized (%s): y = A x, %lld x %lld, grids %u and %u blocks, worst error / sum|a*x| %.2e, "
         "mismatches = %lld -> %s\n",
         mode, rows, cols, grids[0], grids[1], worst, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(da));
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  free(ha), free(hx), free(hy);
  return bad ? 1 : 0;
}
