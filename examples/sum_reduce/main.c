/* main.c - host side of sum_reduce (plain C, CPU-emulation and GPU programs alike).
 * Usage: sum_reduce_<mode> [n]   (default 1,000,003; n = 0 is allowed: the sum of nothing is 0) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sum_reduce.h"

int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 1000003;
  if (n < 0) {
    fprintf(stderr, "usage: %s [n >= 0]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("sum_reduce: no CUDA device present; nothing to run\n");
    return 77;
  }
  const unsigned blocks = n ? kbd_blocks_for((size_t)n, SUM_REDUCE_TILE) : 1;
  float *hx = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1)), *hp = (float *)malloc(sizeof(float) * blocks);
  if (!hx || !hp) return 1;
  for (long long i = 0; i < n; ++i)
    hx[i] = (float)((i * 7919) % 2001 - 1000) / 64.0f;
  float *dx, *dp;
  KBD_CHECK(kbd_malloc((void **)&dx, sizeof(float) * (size_t)(n ? n : 1)));
  KBD_CHECK(kbd_malloc((void **)&dp, sizeof(float) * blocks));
  if (n) KBD_CHECK(kbd_copy_to_device(dx, hx, sizeof(float) * (size_t)n));
  sum_reduce_params p = {dx, dp, n};
  KBD_CHECK(sum_reduce(kbd_cfg_1d(blocks), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hp, dp, sizeof(float) * blocks));

  /* Each block's f32 sum has a tree of depth k = 3 + 5 + 5 (docs/reduce.md): |err| <= gamma_k sum|x|. */
  const double u = 0x1p-24, g = 13 * u / (1 - 13 * u);
  long long bad = 0;
  double total = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    double ref = 0, mag = 0;
    for (long long i = (long long)b * SUM_REDUCE_TILE; i < n && i < (long long)(b + 1) * SUM_REDUCE_TILE; ++i)
      ref += hx[i], mag += fabs(hx[i]);
    if (fabs((double)hp[b] - ref) > g * mag) ++bad;
    total += hp[b];
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("sum_reduce (%s): n = %lld, %u blocks, sum = %.6f, blocks outside the error bound = %lld -> %s\n", mode, n,
         blocks, total, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dp));
  free(hx);
  free(hp);
  return bad ? 1 : 0;
}
