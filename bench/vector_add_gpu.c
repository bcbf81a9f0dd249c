/* vector_add_gpu.c - GPU bandwidth of examples/vector_add, against the device's theoretical peak and
 * against cudaMemcpy device-to-device (a practical ceiling for a streaming kernel).
 *
 * Built by kbd_add_program(vector_add_bench ...) in bench/CMakeLists.txt as vector_add_gpu_sm90a and
 * vector_add_gpu_sm100a (host C compiled by the host compiler, kernel by nvcc for one arch; the cubin is
 * for that arch only, so run the one matching the device). In the -DKBD_CPU program this file is empty.
 *
 *   vector_add_gpu_sm<arch> [--n LIST] [--reps R] [--iters I] [--peak-gbs G] [--smoke]
 *
 *   --n         sizes (default 2^20,2^21,...,2^28)
 *   --reps      timed samples per size (default 7); each sample is --iters back-to-back launches
 *               (default: chosen so a sample lasts ~20 ms, at least 5) between two cudaEvents
 *   --peak-gbs  theoretical DRAM bandwidth in GB/s, overriding the value computed from
 *               cudaDevAttrMemoryClockRate (kHz) and cudaDevAttrGlobalMemoryBusWidth (bits):
 *               peak = 2 * clock_kHz * 1e3 * bus_bits / 8. CUDA 13 removed cudaDeviceProp::memoryClockRate
 *               but keeps the attribute; if the driver reports 0 for it the peak column is omitted
 *               unless --peak-gbs is given.
 *   --smoke     n = 2^20, one sample, correctness only (the CTest entry)
 *
 * Traffic: vector_add counts 12 bytes/element (2 reads + 1 write), the D2D copy 8 bytes/element (1 read
 * + 1 write of n floats). Sizes up to 2^20 floats (12 MiB) fit in the L2 of H100 (50 MiB) and B200, so
 * the small sizes measure L2, not DRAM. Exit 77 when no device (or none this binary's arch can run on).
 */
#ifndef KBD_CPU

#define _DEFAULT_SOURCE 1
#include "vector_add.h" /* examples/vector_add; in a host C file kbd includes <cuda_runtime_api.h> */

#include "bench_util.h"

#ifndef BENCH_GPU_ARCH
#error "BENCH_GPU_ARCH (90 or 100) is set per target by bench/CMakeLists.txt"
#endif

#define SKIP 77
#define MAX_SIZES 32

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "vector_add_gpu: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_),       \
              cudaGetErrorName(e_));                                                                                   \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

typedef struct gctx {
  float *a, *b, *c;
  long long n;
  int what; /* 0 = kbd vector_add, 1 = cudaMemcpy D2D (c <- a) */
} gctx;

static void launch(const gctx *x) {
  if (x->what == 1) {
    CK(cudaMemcpyAsync(x->c, x->a, (size_t)x->n * sizeof(float), cudaMemcpyDeviceToDevice, 0));
    return;
  }
  vector_add_params p = {x->a, x->b, x->c, x->n};
  kbd_status s = vector_add(kbd_cfg_1d(kbd_blocks_for((size_t)x->n, VECTOR_ADD_TILE)), p);
  if (!kbd_ok(s)) {
    fprintf(stderr, "vector_add_gpu: launch failed: %s\n", s.msg);
    exit(1);
  }
}

/* Seconds per call: best and median of `reps` samples of `iters` back-to-back calls timed by events. */
static void time_calls(const gctx *x, int reps, int iters_arg, double *best, double *median, int *iters_out) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    launch(x); /* warm-up: module load, first touch, clocks */
  CK(cudaDeviceSynchronize());
  int iters = iters_arg;
  if (iters <= 0) {
    float ms = 0.0f;
    CK(cudaEventRecord(e0, 0));
    launch(x);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    iters = ms > 0.0f ? (int)(20.0f / ms) : 1000;
    if (iters < 5) iters = 5;
    if (iters > 10000) iters = 10000;
  }
  double s[64];
  if (reps > 64) reps = 64;
  for (int r = 0; r < reps; ++r) {
    float ms = 0.0f;
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < iters; ++i)
      launch(x);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    s[r] = 1e-3 * (double)ms / iters;
  }
  CK(cudaGetLastError());
  *best = bench_min(s, reps);
  *median = bench_median(s, reps);
  *iters_out = iters;
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

static void usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--n LIST] [--reps R] [--iters I] [--peak-gbs G] [--smoke]\n", argv0);
}

int main(int argc, char **argv) {
  long long sizes[MAX_SIZES];
  int nsizes = 0;
  for (int k = 20; k <= 28; ++k)
    sizes[nsizes++] = 1ll << k;
  int reps = 7, iters = 0, smoke = 0;
  double peak_arg = 0.0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      nsizes = bench_parse_list(argv[++i], sizes, MAX_SIZES);
      if (nsizes <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--peak-gbs") && i + 1 < argc) {
      peak_arg = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (reps < 1) reps = 1;
  if (smoke) {
    sizes[0] = 1ll << 20;
    nsizes = 1;
    reps = 1;
    iters = 1;
  }

  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("vector_add_gpu: no usable CUDA device (cudaGetDeviceCount: %s); skipping - GPU bandwidth not measured\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return SKIP;
  }
  int dev = 0, major = 0, minor = 0, clk_khz = 0, bus_bits = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    /* An sm_XXa cubin runs on exactly that compute capability, and no PTX is embedded. */
    printf("vector_add_gpu: this binary holds sm_%da code only, but device 0 (%s) is sm_%d%d; run the "
           "vector_add_gpu_sm<arch>a built for it; skipping\n",
           BENCH_GPU_ARCH, prop.name, major, minor);
    return SKIP;
  }
  /* The attributes exist in CUDA 13 (the cudaDeviceProp::memoryClockRate field does not). */
  const cudaError_t ec = cudaDeviceGetAttribute(&clk_khz, cudaDevAttrMemoryClockRate, dev);
  const cudaError_t eb = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  double peak_attr = 0.0;
  if (ec == cudaSuccess && eb == cudaSuccess && clk_khz > 0 && bus_bits > 0)
    peak_attr = 2.0 * (double)clk_khz * 1e3 * (double)bus_bits / 8.0 * 1e-9;
  else
    printf("# note: memory clock %d kHz (%s), bus width %d bits (%s): no theoretical peak from the attributes%s\n",
           clk_khz, cudaGetErrorString(ec), bus_bits, cudaGetErrorString(eb),
           peak_arg > 0 ? "; using --peak-gbs" : "; pass --peak-gbs to get the %-of-peak column");
  (void)cudaGetLastError();
  const double peak = peak_arg > 0 ? peak_arg : peak_attr;
  printf("# vector_add_gpu (sm_%da build): device %s (sm_%d%d, %d SMs, L2 %d MiB); memory clock %d kHz, bus %d bits "
         "-> peak %.1f GB/s from attributes%s\n",
         BENCH_GPU_ARCH, prop.name, major, minor, prop.multiProcessorCount, prop.l2CacheSize >> 20, clk_khz, bus_bits,
         peak_attr, peak_arg > 0 ? " (overridden by --peak-gbs)" : "");
  printf("# vector_add: 12 bytes/element; memcpy D2D: 8 bytes/element; cudaEvent timing, best and median of %d\n",
         reps);

  long long nmax = 0;
  for (int i = 0; i < nsizes; ++i)
    nmax = sizes[i] > nmax ? sizes[i] : nmax;
  const size_t bytes = (size_t)nmax * sizeof(float);
  float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
  if (!ha || !hb || !hc) {
    fprintf(stderr, "vector_add_gpu: out of host memory for %lld elements\n", nmax);
    return 1;
  }
  for (long long i = 0; i < nmax; ++i) {
    ha[i] = (float)(i % 1000) * 0.5f;
    hb[i] = 1.0f / (float)(1 + i % 7);
  }
  float *da, *db, *dc;
  KBD_CHECK(kbd_malloc((void **)&da, bytes));
  KBD_CHECK(kbd_malloc((void **)&db, bytes));
  KBD_CHECK(kbd_malloc((void **)&dc, bytes));
  KBD_CHECK(kbd_copy_to_device(da, ha, bytes));
  KBD_CHECK(kbd_copy_to_device(db, hb, bytes));

  int bad_total = 0;
  printf("\n%11s | %10s %10s %8s | %10s %8s | %9s\n", "n", "kbd GB/s", "kbd best", "% peak", "D2D GB/s", "% peak",
         "kbd/D2D");
  for (int si = 0; si < nsizes; ++si) {
    const long long n = sizes[si];
    gctx k = {da, db, dc, n, 0}, m = {da, db, dc, n, 1};
    double kb, km, mb, mm;
    int ki, mi;
    KBD_CHECK(kbd_memset_device(dc, 0, (size_t)n * sizeof(float)));
    time_calls(&k, reps, iters, &kb, &km, &ki);
    KBD_CHECK(kbd_copy_to_host(hc, dc, (size_t)n * sizeof(float)));
    long long bad = 0;
    for (long long i = 0; i < n; ++i)
      if (hc[i] != ha[i] + hb[i]) ++bad;
    if (bad) {
      fprintf(stderr, "vector_add_gpu: n=%lld: %lld mismatches\n", n, bad);
      bad_total = 1;
    }
    time_calls(&m, reps, iters, &mb, &mm, &mi);
    const double nn = (double)n;
    const double kg = 12.0 * nn / km * 1e-9, kgb = 12.0 * nn / kb * 1e-9;
    const double mg = 8.0 * nn / mm * 1e-9, mgb = 8.0 * nn / mb * 1e-9;
    printf("BENCH bench=vector_add_gpu arch=sm_%da device=\"%s\" n=%lld iters=%d reps=%d kernel_best_s=%.9g "
           "kernel_median_s=%.9g kernel_best_gbs=%.2f kernel_median_gbs=%.2f memcpy_iters=%d memcpy_best_s=%.9g "
           "memcpy_median_s=%.9g memcpy_best_gbs=%.2f memcpy_median_gbs=%.2f peak_gbs=%.1f pct_peak=%.1f "
           "pct_memcpy=%.1f correct=%d\n",
           BENCH_GPU_ARCH, prop.name, n, ki, reps, kb, km, kgb, kg, mi, mb, mm, mgb, mg, peak,
           peak > 0 ? 100.0 * kg / peak : -1.0, 100.0 * kg / mg, !bad);
    printf("%11lld | %10.1f %10.1f %8.1f | %10.1f %8.1f | %9.3f\n", n, kg, kgb, peak > 0 ? 100.0 * kg / peak : -1.0, mg,
           peak > 0 ? 100.0 * mg / peak : -1.0, kg / mg);
    fflush(stdout);
  }
  printf("(GB/s: median; %% peak of %.1f GB/s; -1 = no peak known)\n", peak);
  KBD_CHECK(kbd_free(da));
  KBD_CHECK(kbd_free(db));
  KBD_CHECK(kbd_free(dc));
  free(ha);
  free(hb);
  free(hc);
  return bad_total;
}

#else  /* the -DKBD_CPU program of kbd_add_program(vector_add_bench): main() is in vector_add_cpu.c */
typedef int vector_add_gpu_bench_not_in_cpu_build;
#endif /* !KBD_CPU */
