/* device_bench.c - device-wide reduce and scan (kbd/device.h).
 *
 * CPU program (device_bench_cpu): kbd_device_{reduce,scan}_f32 on the CPU machine versus a plain C loop
 * over the same array (target: within 3x), 1 host thread and all cores.
 * GPU programs (device_bench_sm90a / _sm100a): GB/s of kbd versus CUB's DeviceReduce::Sum /
 * DeviceScan::InclusiveSum (target: >= 90% of CUB), timed with CUDA events; exits 77 without a device.
 * Usage: device_bench_<mode> [--smoke]
 */
#include <kbd/device.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef KBD_CPU
static double now_s(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Keeps the plain loops from being optimised away. */
static volatile float sink;

static void run_cpu(long long n, int reps) {
  float *h = (float *)malloc((size_t)n * 4), *ref = (float *)malloc((size_t)n * 4);
  for (long long i = 0; i < n; ++i)
    h[i] = (float)(i % 97) * 0.25f;
  float *in, *out;
  void *ws;
  const size_t wsb = kbd_device_scan_workspace_bytes(n) > kbd_device_reduce_workspace_bytes(n)
                         ? kbd_device_scan_workspace_bytes(n)
                         : kbd_device_reduce_workspace_bytes(n);
  KBD_CHECK(kbd_malloc((void **)&in, (size_t)n * 4));
  KBD_CHECK(kbd_malloc((void **)&out, (size_t)n * 4));
  KBD_CHECK(kbd_malloc(&ws, wsb));
  KBD_CHECK(kbd_copy_to_device(in, h, (size_t)n * 4));
  for (int scan = 0; scan < 2; ++scan) {
    double best_k = 1e30, best_p = 1e30;
    for (int r = 0; r < reps; ++r) {
      double t0 = now_s();
      if (scan)
        KBD_CHECK(kbd_device_scan_f32(in, out, n, KBD_RED_SUM, 0, ws, NULL));
      else
        KBD_CHECK(kbd_device_reduce_f32(in, n, out, KBD_RED_SUM, ws, NULL));
      double t1 = now_s();
      float acc = 0;
      if (scan)
        for (long long i = 0; i < n; ++i)
          ref[i] = acc += in[i];
      else
        for (long long i = 0; i < n; ++i)
          acc += in[i];
      sink = acc;
      double t2 = now_s();
      if (t1 - t0 < best_k) best_k = t1 - t0;
      if (t2 - t1 < best_p) best_p = t2 - t1;
    }
    const double bytes = (double)n * (scan ? 8.0 : 4.0);
    const char *thr = getenv("KBD_CPU_THREADS");
    printf("device_%s_cpu n=%lld threads=%s kbd_ms=%.3f plain_ms=%.3f kbd_GBps=%.2f plain_GBps=%.2f ratio=%.2f\n",
           scan ? "scan" : "reduce", n, thr ? thr : "all", best_k * 1e3, best_p * 1e3, bytes / best_k * 1e-9,
           bytes / best_p * 1e-9, best_k / best_p);
  }
  kbd_free(in);
  kbd_free(out);
  kbd_free(ws);
  free(h);
  free(ref);
}

int main(int argc, char **argv) {
  const int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  const long long sizes[] = {1 << 16, 1 << 20, 1 << 24};
  for (int k = 0; k < (smoke ? 1 : 3); ++k)
    run_cpu(smoke ? 10000 : sizes[k], smoke ? 1 : 5);
  return 0;
}

#else /* GPU program */
#include <cuda_runtime_api.h>

int bench_cub_f32(int scan, const float *in, float *out, long long n, int iters, float *ms_per_call);

static float time_kbd(int scan, const float *in, float *out, long long n, void *ws, int iters) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 2 + iters; ++i) {
    if (i == 2) cudaEventRecord(a, 0);
    if (scan)
      KBD_CHECK(kbd_device_scan_f32(in, out, n, KBD_RED_SUM, 0, ws, NULL));
    else
      KBD_CHECK(kbd_device_reduce_f32(in, n, out, KBD_RED_SUM, ws, NULL));
  }
  cudaEventRecord(b, 0);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / (float)iters;
}

int main(int argc, char **argv) {
  const int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  if (!kbd_device_available()) {
    printf("device_bench: no CUDA device present; nothing measured\n");
    return 77;
  }
  const long long maxn = smoke ? (1 << 20) : (1 << 28);
  float *in, *out;
  void *ws;
  KBD_CHECK(kbd_malloc((void **)&in, (size_t)maxn * 4));
  KBD_CHECK(kbd_malloc((void **)&out, (size_t)maxn * 4));
  KBD_CHECK(kbd_malloc(&ws, kbd_device_scan_workspace_bytes(maxn) + kbd_device_reduce_workspace_bytes(maxn)));
  KBD_CHECK(kbd_memset_device(in, 0, (size_t)maxn * 4));
  for (long long n = 1 << 20; n <= maxn; n <<= 2)
    for (int scan = 0; scan < 2; ++scan) {
      const int iters = 20;
      float k = time_kbd(scan, in, out, n, ws, iters), c = 0;
      if (bench_cub_f32(scan, in, out, n, iters, &c)) {
        fprintf(stderr, "CUB run failed\n");
        return 1;
      }
      const double bytes = (double)n * (scan ? 8.0 : 4.0);
      printf("device_%s_gpu n=%lld kbd_GBps=%.1f cub_GBps=%.1f kbd/cub=%.3f\n", scan ? "scan" : "reduce", n,
             bytes / (k * 1e-3) * 1e-9, bytes / (c * 1e-3) * 1e-9, c / k);
    }
  kbd_free(in);
  kbd_free(out);
  kbd_free(ws);
  return 0;
}
#endif
