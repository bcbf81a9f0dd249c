/* reduce_cpu.c - CPU-machine throughput of examples/sum_reduce (1024-element tiles -> one f32 per
 * block) versus a plain C loop that sums the same array into the same per-block partials.
 *
 *   reduce_cpu [n] [--smoke]      default n = 2^24; KBD_CPU_THREADS picks kbd's host threads (the plain
 *                                 loop is single-threaded, so compare with KBD_CPU_THREADS=1)
 * Prints BENCH lines (GB/s, 4 bytes per element) and RATIO = kbd time / plain time; the target
 * is <= 3. Exit 0 when the kbd partials match the plain ones within the documented bound, else 1.
 */
#define _DEFAULT_SOURCE 1 /* clock_gettime under -std=c11 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sum_reduce.h"
#include "bench_host.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* noinline: compiled once with the same flags as the kernel; partial per 1024 elements. */
__attribute__((noinline)) static void plain_sum(const float *x, float *out, long long n) {
  for (long long b = 0; b * SUM_REDUCE_TILE < n; ++b) {
    float s = 0.0f;
    const long long e = (b + 1) * SUM_REDUCE_TILE < n ? (b + 1) * SUM_REDUCE_TILE : n;
    for (long long i = b * SUM_REDUCE_TILE; i < e; ++i)
      s += x[i];
    out[b] = s;
  }
}

int main(int argc, char **argv) {
  int smoke = 0;
  long long n = 1ll << 24;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--smoke"))
      smoke = 1, n = 3001;
    else
      n = atoll(argv[i]);
  }
  const unsigned blocks = kbd_blocks_for((size_t)n, SUM_REDUCE_TILE);
  float *x, *pk, *pp = (float *)malloc(sizeof(float) * blocks);
  x = bench_host_alloc(sizeof(float) * (size_t)n);
  pk = bench_host_alloc(sizeof(float) * blocks);
  for (long long i = 0; i < n; ++i)
    x[i] = (float)(i % 1000) * 0.001f;
  sum_reduce_params p = {x, pk, n};
  const int reps = smoke ? 1 : 5;
  double tk = 1e30, tp = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    KBD_CHECK(sum_reduce(kbd_cfg_1d(blocks), p));
    double t1 = now_s();
    plain_sum(x, pp, n);
    double t2 = now_s();
    tk = t1 - t0 < tk ? t1 - t0 : tk;
    tp = t2 - t1 < tp ? t2 - t1 : tp;
  }
  long long bad = 0;
  for (unsigned b = 0; b < blocks; ++b) /* both within 2*gamma_1023 * sum|x| of each other */
    if (fabsf(pk[b] - pp[b]) > 1024 * 0x1p-23f * 1024.0f) ++bad;
  const char *thr = getenv("KBD_CPU_THREADS");
  printf("BENCH reduce_cpu impl=kbd   n=%lld threads=%s time=%.3f ms  %.2f GB/s\n", n, thr ? thr : "all", tk * 1e3,
         4e-9 * (double)n / tk);
  printf("BENCH reduce_cpu impl=plain n=%lld threads=1 time=%.3f ms  %.2f GB/s\n", n, tp * 1e3, 4e-9 * (double)n / tp);
  printf("RATIO reduce_cpu n=%lld kbd/plain = %.2f (target <= 3)%s\n", n, tk / tp, bad ? "  WRONG RESULTS" : "");
  bench_host_free(x);
  bench_host_free(pk);
  free(pp);
  return bad ? 1 : 0;
}
