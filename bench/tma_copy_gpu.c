/* tma_copy_gpu.c - GPU bandwidth of examples/tma_copy (y = x through a TMA ring) against cudaMemcpy
 * device-to-device on the same buffers. The target (issue): the kernel at >= 90% of cudaMemcpy's GB/s.
 *
 * Built by kbd_add_program(tma_copy_bench ...) and (tma_copy_f32_bench ...) in bench/CMakeLists.txt as
 * tma_copy_gpu_sm90a / _sm100a (bf16 tiles) and tma_copy_f32_gpu_sm90a / _sm100a (f32 tiles): host C by the
 * host compiler, the kernel by nvcc for one arch, so run the one matching the device. In the -DKBD_CPU
 * programs this file is empty.
 *
 *   tma_copy_gpu_sm<arch> [--bytes LIST] [--cols C] [--reps R] [--iters I] [--grid G] [--smoke]
 *
 *   --bytes  bytes per matrix (default 64m,128m,256m,512m,1g: all well past the 50 MiB L2 of an H100, so
 *            DRAM numbers); the matrix is rows x C, rows = bytes / row
 *   --cols   elements per row (default: 16 KiB rows, 8192 bf16 / 4096 f32; a multiple of 16 bytes)
 *   --reps   timed samples per size (default 7); each sample is --iters back-to-back calls (default: chosen
 *            so a sample lasts ~20 ms, at least 3) between two cudaEvents, after 3 warm-up calls
 *   --grid   blocks of the kernel (default: one per SM, the persistent grid; 128 KiB of shared memory per
 *            block lets only one block per SM run anyway)
 *   --smoke  one 8 MiB matrix, one sample of one call, correctness only (the CTest entry)
 *
 * GB/s = 2 x bytes / time for both (every byte is read once and written once). Each size's output is
 * checked bit for bit against x. Exit 77 when there is no device (or none this binary's arch can run on).
 */
#ifndef KBD_CPU

#define _DEFAULT_SOURCE 1
#include "tma_copy.h" /* examples/tma_copy; in a host C file kbd includes <cuda_runtime_api.h> */

#include "bench_util.h"

#ifndef BENCH_GPU_ARCH
#error "BENCH_GPU_ARCH (90 or 100) is set per target by bench/CMakeLists.txt"
#endif

#define SKIP 77
#define MAX_SIZES 32
#define TARGET 0.90 /* kernel GB/s over cudaMemcpy GB/s */

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "tma_copy_gpu: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_),         \
              cudaGetErrorName(e_));                                                                                   \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

typedef struct gctx {
  tc_elem *x, *y;
  size_t bytes;
  unsigned grid;
  size_t smem;
  tc_params p;
  int what; /* 0 = kbd tma_copy, 1 = cudaMemcpy D2D (y <- x) */
} gctx;

static void launch(const gctx *c) {
  if (c->what == 1) {
    CK(cudaMemcpyAsync(c->y, c->x, c->bytes, cudaMemcpyDeviceToDevice, 0));
    return;
  }
  const kbd_status s = tc_copy(kbd_cfg(kbd_dim(c->grid, 1, 1), c->smem, NULL), c->p);
  if (!kbd_ok(s)) {
    fprintf(stderr, "tma_copy_gpu: launch failed: %s\n", s.msg);
    exit(1);
  }
}

/* Seconds per call: best and median of `reps` samples of `iters` back-to-back calls timed by events. */
static void time_calls(const gctx *c, int reps, int iters_arg, double *best, double *median, int *iters_out) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    launch(c); /* warm-up: module load, first touch, clocks */
  CK(cudaDeviceSynchronize());
  int iters = iters_arg;
  if (iters <= 0) {
    float ms = 0.0f;
    CK(cudaEventRecord(e0, 0));
    launch(c);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    iters = ms > 0.0f ? (int)(20.0f / ms) : 1000;
    if (iters < 3) iters = 3;
    if (iters > 10000) iters = 10000;
  }
  double s[64];
  if (reps > 64) reps = 64;
  for (int r = 0; r < reps; ++r) {
    float ms = 0.0f;
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < iters; ++i)
      launch(c);
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
  fprintf(stderr, "usage: %s [--bytes LIST] [--cols C] [--reps R] [--iters I] [--grid G] [--smoke]\n", argv0);
}

int main(int argc, char **argv) {
  long long sizes[MAX_SIZES];
  int nsizes = 0;
  for (int k = 26; k <= 30; ++k)
    sizes[nsizes++] = 1ll << k;
  long long cols = 16384 / (long long)sizeof(tc_elem), grid_arg = 0;
  int reps = 7, iters = 0, smoke = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
      nsizes = bench_parse_list(argv[++i], sizes, MAX_SIZES);
      if (nsizes <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--cols") && i + 1 < argc) {
      cols = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--grid") && i + 1 < argc) {
      grid_arg = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (smoke) {
    sizes[0] = 8ll << 20;
    nsizes = 1;
    reps = 1;
    iters = 1;
  }
  const long long row_bytes = cols * (long long)sizeof(tc_elem);
  if (cols < 1 || cols > INT32_MAX || row_bytes % 16 || reps < 1 || grid_arg < 0 || grid_arg > INT32_MAX) {
    fprintf(stderr, "tma_copy_gpu: --cols must make a row a multiple of 16 bytes, --reps >= 1, --grid >= 1\n");
    return 2;
  }

  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("tma_copy_gpu: no usable CUDA device (cudaGetDeviceCount: %s); skipping - GPU bandwidth not measured\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return SKIP;
  }
  int dev = 0, major = 0, minor = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    /* An sm_XXa cubin runs on exactly that compute capability, and no PTX is embedded. */
    printf("tma_copy_gpu: this binary holds sm_%da code only, but device 0 (%s) is sm_%d%d; run the "
           "tma_copy_gpu_sm<arch>a built for it; skipping\n",
           BENCH_GPU_ARCH, prop.name, major, minor);
    return SKIP;
  }

  long long rows_max = 0;
  for (int i = 0; i < nsizes; ++i) {
    const long long r = sizes[i] / row_bytes;
    if (r < 1 || r > INT32_MAX) {
      fprintf(stderr, "tma_copy_gpu: %lld bytes is not 1 to 2^31-1 rows of %lld bytes\n", sizes[i], row_bytes);
      return 2;
    }
    rows_max = r > rows_max ? r : rows_max;
  }
  const size_t bytes_max = (size_t)(rows_max * row_bytes);
  unsigned char *hx = (unsigned char *)malloc(bytes_max), *hy = (unsigned char *)malloc(bytes_max);
  if (!hx || !hy) {
    fprintf(stderr, "tma_copy_gpu: out of host memory for 2 x %zu bytes\n", bytes_max);
    return 1;
  }
  for (size_t i = 0; i < bytes_max; ++i)
    hx[i] = (unsigned char)((i * 2654435761u) >> 13);
  tc_elem *x, *y;
  KBD_CHECK(kbd_malloc((void **)&x, bytes_max));
  KBD_CHECK(kbd_malloc((void **)&y, bytes_max));
  KBD_CHECK(kbd_copy_to_device(x, hx, bytes_max));
  tc_smem l;
  const kbd_smem_plan plan = tc_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));

  printf("# tma_copy_gpu (sm_%da build, %s): device %s (sm_%d%d, %d SMs, L2 %d MiB); %d x %d tiles, %d-stage ring "
         "(%zu bytes of shared memory per block), %d consumer warps\n",
         BENCH_GPU_ARCH, TC_NAME, prop.name, major, minor, sms, prop.l2CacheSize >> 20, TC_ROWS, TC_COLS, TC_STAGES,
         plan.bytes, TC_CONSUMERS);
  printf("# GB/s = 2 x bytes / time (read + write) for both; cudaEvent timing, 3 warm-up calls, best and median of "
         "%d samples\n",
         reps);
  printf("\n%11s %6s | %10s %10s | %10s %10s | %9s %4s\n", "bytes", "grid", "kbd GB/s", "kbd best", "D2D GB/s",
         "D2D best", "kbd/D2D", "met");
  int bad_total = 0;
  for (int si = 0; si < nsizes; ++si) {
    const long long rows = sizes[si] / row_bytes;
    const size_t bytes = (size_t)(rows * row_bytes);
    const long long tiles = tc_tiles(rows, cols);
    const unsigned grid = (unsigned)(grid_arg ? grid_arg : tiles < sms ? tiles : sms);
    gctx k, m;
    k.x = m.x = x;
    k.y = m.y = y;
    k.bytes = m.bytes = bytes;
    k.grid = m.grid = grid;
    k.smem = m.smem = plan.bytes;
    kbd_tensor_map_desc d = tc_map_desc(x, rows, cols);
    KBD_CHECK(kbd_tensor_map_encode(&k.p.x, &d));
    d = tc_map_desc(y, rows, cols);
    KBD_CHECK(kbd_tensor_map_encode(&k.p.y, &d));
    k.p.rows = rows;
    k.p.cols = cols;
    m.p = k.p;
    k.what = 0;
    m.what = 1;

    double kb, km, mb, mm;
    int ki, mi;
    KBD_CHECK(kbd_memset_device(y, 0, bytes));
    time_calls(&k, reps, iters, &kb, &km, &ki);
    KBD_CHECK(kbd_copy_to_host(hy, y, bytes));
    const int ok = !memcmp(hx, hy, bytes);
    if (!ok) {
      fprintf(stderr, "tma_copy_gpu: %lld x %lld: y differs from x\n", rows, cols);
      bad_total = 1;
    }
    time_calls(&m, reps, iters, &mb, &mm, &mi);
    const double b2 = 2.0 * (double)bytes;
    const double kg = b2 / km * 1e-9, kgb = b2 / kb * 1e-9, mg = b2 / mm * 1e-9, mgb = b2 / mb * 1e-9;
    printf("BENCH bench=tma_copy_gpu arch=sm_%da dtype=%s device=\"%s\" bytes=%zu rows=%lld cols=%lld grid=%u "
           "iters=%d reps=%d kernel_best_s=%.9g kernel_median_s=%.9g kernel_best_gbs=%.2f kernel_median_gbs=%.2f "
           "memcpy_iters=%d memcpy_best_s=%.9g memcpy_median_s=%.9g memcpy_best_gbs=%.2f memcpy_median_gbs=%.2f "
           "kernel_over_memcpy=%.3f target=%.2f met=%s correct=%d\n",
           BENCH_GPU_ARCH, TC_NAME, prop.name, bytes, rows, cols, grid, ki, reps, kb, km, kgb, kg, mi, mb, mm, mgb, mg,
           kg / mg, TARGET, kg / mg >= TARGET ? "yes" : "no", ok);
    printf("%11zu %6u | %10.1f %10.1f | %10.1f %10.1f | %9.3f %4s\n", bytes, grid, kg, kgb, mg, mgb, kg / mg,
           kg / mg >= TARGET ? "yes" : "no");
    fflush(stdout);
  }
  printf("(GB/s: median unless \"best\"; kbd/D2D: medians; target >= %.2f)\n", TARGET);
  KBD_CHECK(kbd_free(x));
  KBD_CHECK(kbd_free(y));
  free(hx);
  free(hy);
  return bad_total;
}

#else  /* the -DKBD_CPU program of kbd_add_program(tma_copy_bench): main() is in tma_copy_cpu.c */
typedef int tma_copy_gpu_bench_not_in_cpu_build;
#endif /* !KBD_CPU */
