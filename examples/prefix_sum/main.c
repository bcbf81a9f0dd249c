/* main.c - host side of prefix_sum. Usage: prefix_sum_<mode> [n]   (default 1,000,003)
 *   1. the CTA scan: every 1024-element tile scanned by its block (prefix_sum.cu);
 *   2. the device-wide scan of all n elements in one pass (kbd_device_scan_f32, decoupled look-back).
 * Inputs are small integers whose running sums stay below 2^24 (for n up to ~16 million), so every
 * partial sum is exact in f32 and both checks are exact, whatever order the look-back combines tiles in. */
#include <stdio.h>
#include <stdlib.h>

#include <kbd/device.h>

#include "prefix_sum.h"

int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 1000003;
  if (n <= 0) {
    fprintf(stderr, "usage: %s [n > 0]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("prefix_sum: no CUDA device present; nothing to run\n");
    return 77;
  }
  const unsigned blocks = kbd_blocks_for((size_t)n, PREFIX_SUM_TILE);
  const size_t bytes = sizeof(float) * (size_t)n;
  float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes), *ht = (float *)malloc(sizeof(float) * blocks);
  if (!hx || !hy || !ht) return 1;
  for (long long i = 0; i < n; ++i)
    hx[i] = (float)((i * 40503) % 201 - 100);
  float *dx, *dy, *dt;
  KBD_CHECK(kbd_malloc((void **)&dx, bytes));
  KBD_CHECK(kbd_malloc((void **)&dy, bytes));
  KBD_CHECK(kbd_malloc((void **)&dt, sizeof(float) * blocks));
  KBD_CHECK(kbd_copy_to_device(dx, hx, bytes));
  prefix_sum_params p = {dx, dy, dt, n};
  KBD_CHECK(prefix_sum(kbd_cfg_1d(blocks), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hy, dy, bytes));
  KBD_CHECK(kbd_copy_to_host(ht, dt, sizeof(float) * blocks));
  long long bad = 0;
  double run = 0;
  for (long long i = 0; i < n; ++i) {
    if (i % PREFIX_SUM_TILE == 0) run = 0;
    run += hx[i];
    if ((double)hy[i] != run) ++bad;
    if (i % PREFIX_SUM_TILE == PREFIX_SUM_TILE - 1 || i == n - 1)
      if ((double)ht[i / PREFIX_SUM_TILE] != run) ++bad;
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("prefix_sum (%s): CTA scan: n = %lld, %u blocks, y[n-1] = %.1f, mismatches = %lld -> %s\n", mode, n, blocks,
         hy[n - 1], bad, bad ? "FAILED" : "OK");

  /* Device-wide: one call, workspace from kbd_device_scan_workspace_bytes(n). */
  void *ws;
  KBD_CHECK(kbd_malloc(&ws, kbd_device_scan_workspace_bytes(n)));
  KBD_CHECK(kbd_device_scan_f32(dx, dy, n, KBD_RED_SUM, 0, ws, NULL));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hy, dy, bytes));
  long long bad_dev = 0;
  run = 0;
  for (long long i = 0; i < n; ++i) {
    run += hx[i];
    if ((double)hy[i] != run) ++bad_dev;
  }
  printf("prefix_sum (%s): device-wide scan: n = %lld, y[n-1] = %.1f, mismatches = %lld -> %s\n", mode, n, hy[n - 1],
         bad_dev, bad_dev ? "FAILED" : "OK");
  bad += bad_dev;
  KBD_CHECK(kbd_free(ws));
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  KBD_CHECK(kbd_free(dt));
  free(hx);
  free(hy);
  free(ht);
  return bad ? 1 : 0;
}
