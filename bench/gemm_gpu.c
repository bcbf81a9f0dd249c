/* gemm_gpu.c - TFLOP/s of examples/gemm (bf16 in, f32 accumulation, bf16 out) against cuBLAS's cublasGemmEx on
 * the same operands (CUBLAS_COMPUTE_32F, bf16 A/B/D). Built by bench/CMakeLists.txt as gemm_gpu_sm90a / _sm100a
 * (GPU only: the CPU machine's GEMM speed is not a target).
 *
 *   gemm_gpu_sm<arch> [--shapes MxNxK,...] [--reps R] [--smoke]
 *
 *   --shapes  default 1024^3, 2048^3, 4096^3, 8192^3, 4096x4096x16384 and the LLM-style 16x4096x4096 (decode)
 *             and 8192x4096x14336 (an MLP up-projection)
 *   --reps    timed samples per shape (default 7), each ~20 ms of back-to-back calls after 3 warm-ups
 *   --smoke   one 512^3 product, one call, checked against cuBLAS (the CTest entry)
 *
 * TFLOP/s = 2 M N K / time. A row-major (K contiguous), B column-major (K contiguous): kbd's gemm_bf16_rc and
 * cuBLAS's "TN" case. Every shape's result is compared with cuBLAS's (both round to bf16: at most a few ulps
 * apart). Exit 77 without a device of this binary's arch.
 */
#ifndef KBD_CPU

#define _DEFAULT_SOURCE 1
#include "gemm.h" /* examples/gemm */

#include <cublas_v2.h>
#include <math.h>

#include "bench_util.h"

#ifndef BENCH_GPU_ARCH
#error "BENCH_GPU_ARCH (90 or 100) is set per target by bench/CMakeLists.txt"
#endif

#define SKIP 77
#define MAX_SHAPES 16

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "gemm_gpu: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                 \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)
#define CB(call)                                                                                                       \
  do {                                                                                                                 \
    cublasStatus_t s_ = (call);                                                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                                 \
      fprintf(stderr, "gemm_gpu: %s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);                  \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

typedef struct gctx {
  int what; /* 0 kbd, 1 cuBLAS */
  unsigned grid;
  size_t smem;
  gemm_params p;
  cublasHandle_t h;
  const void *a, *b;
  void *d;
  long long m, n, k;
} gctx;

static void launch(const gctx *c) {
  if (c->what == 1) {
    const float one = 1.0f, zero = 0.0f;
    /* cuBLAS is column-major: D^T (N x M) = B^T (N x K, B column-major = K contiguous per column) * A^T */
    CB(cublasGemmEx(c->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)c->n, (int)c->m, (int)c->k, &one, c->b, CUDA_R_16BF, (int)c->k,
                    c->a, CUDA_R_16BF, (int)c->k, &zero, c->d, CUDA_R_16BF, (int)c->n, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
    return;
  }
  const kbd_status s = gemm_bf16_rc(kbd_cfg(kbd_dim(c->grid, 1, 1), c->smem, NULL), c->p);
  if (!kbd_ok(s)) {
    fprintf(stderr, "gemm_gpu: launch failed: %s\n", s.msg);
    exit(1);
  }
}

static double time_call(const gctx *c, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    launch(c);
  CK(cudaDeviceSynchronize());
  float ms = 0.0f;
  CK(cudaEventRecord(e0, 0));
  launch(c);
  CK(cudaEventRecord(e1, 0));
  CK(cudaEventSynchronize(e1));
  CK(cudaEventElapsedTime(&ms, e0, e1));
  int iters = ms > 0.0f ? (int)(20.0f / ms) : 100;
  iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
  double s[64] = {0}, best;
  reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < iters; ++i)
      launch(c);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    s[r] = 1e-3 * (double)ms / iters;
  }
  CK(cudaGetLastError());
  best = bench_min(s, reps);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return best;
}

int main(int argc, char **argv) {
  long long shapes[MAX_SHAPES][3] = {{1024, 1024, 1024},  {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
                                     {4096, 4096, 16384}, {16, 4096, 4096},   {8192, 4096, 14336}};
  int nshapes = 7, reps = 7, smoke = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
      nshapes = 0;
      for (char *t = strtok(argv[++i], ","); t && nshapes < MAX_SHAPES; t = strtok(NULL, ","), ++nshapes)
        if (sscanf(t, "%lldx%lldx%lld", &shapes[nshapes][0], &shapes[nshapes][1], &shapes[nshapes][2]) != 3) {
          fprintf(stderr, "gemm_gpu: shape '%s' is not MxNxK\n", t);
          return 2;
        }
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      fprintf(stderr, "usage: %s [--shapes MxNxK,...] [--reps R] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  if (smoke) {
    shapes[0][0] = shapes[0][1] = shapes[0][2] = 512;
    nshapes = 1;
    reps = 1;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("gemm_gpu: no usable CUDA device; skipping - GEMM throughput not measured\n");
    return SKIP;
  }
  int major = 0, minor = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    printf("gemm_gpu: this binary holds sm_%da code only, but device 0 is sm_%d%d; skipping\n", BENCH_GPU_ARCH, major,
           minor);
    return SKIP;
  }
  gctx c;
  memset(&c, 0, sizeof c);
  CB(cublasCreate(&c.h));
  gemm_smem l;
  const kbd_smem_plan plan = gemm_layout(&l, 0);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  c.smem = plan.bytes;
  printf("# gemm_gpu (sm_%da build): %d SMs, %d x %d block tiles, %d-stage ring, %zu bytes of shared memory\n",
         BENCH_GPU_ARCH, sms, GEMM_BM, GEMM_BN, GEMM_STAGES, plan.bytes);
  printf("# %-22s %12s %12s %8s %10s\n", "M x N x K", "kbd TF/s", "cuBLAS TF/s", "ratio", "max|diff|");
  int fails = 0;
  for (int s = 0; s < nshapes; ++s) {
    const long long m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    if (m < 1 || n < 1 || k < 1 || k % 8 || n % 8) {
      fprintf(stderr, "gemm_gpu: %lldx%lldx%lld: N and K must be multiples of 8 (16-byte rows)\n", m, n, k);
      return 2;
    }
    kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * (size_t)(m * k)), *hb = malloc(sizeof(kbd_bf16) * (size_t)(n * k));
    kbd_bf16 *h1 = malloc(sizeof(kbd_bf16) * (size_t)(m * n)), *h2 = malloc(sizeof(kbd_bf16) * (size_t)(m * n));
    if (!ha || !hb || !h1 || !h2) return 1;
    for (long long i = 0; i < m * k; ++i)
      ha[i] = kbd_f32_to_bf16((float)((i * 7919) % 17 - 8) / 16.0f);
    for (long long i = 0; i < n * k; ++i)
      hb[i] = kbd_f32_to_bf16((float)((i * 104729) % 13 - 6) / 16.0f);
    void *da, *db, *d1, *d2;
    KBD_CHECK(kbd_malloc(&da, sizeof(kbd_bf16) * (size_t)(m * k)));
    KBD_CHECK(kbd_malloc(&db, sizeof(kbd_bf16) * (size_t)(n * k)));
    KBD_CHECK(kbd_malloc(&d1, sizeof(kbd_bf16) * (size_t)(m * n)));
    KBD_CHECK(kbd_malloc(&d2, sizeof(kbd_bf16) * (size_t)(m * n)));
    KBD_CHECK(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * (size_t)(m * k)));
    KBD_CHECK(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * (size_t)(n * k)));
    kbd_tensor_map_desc d =
        kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, da, (uint64_t)m, (uint64_t)k, (uint64_t)k * 2,
                               kbd_tma_box_lines_for(gemm_a_k), kbd_tma_box_inner_for(gemm_a_k), KBD_TMAP_SWIZZLE_128B);
    KBD_CHECK(kbd_tensor_map_encode(&c.p.a, &d));
    d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, db, (uint64_t)n, (uint64_t)k, (uint64_t)k * 2,
                               kbd_tma_box_lines_for(gemm_b_k), kbd_tma_box_inner_for(gemm_b_k), KBD_TMAP_SWIZZLE_128B);
    KBD_CHECK(kbd_tensor_map_encode(&c.p.b, &d));
    d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, d1, (uint64_t)m, (uint64_t)n, (uint64_t)n * 2,
                               kbd_tma_box_lines_for(gemm_out_bf16), kbd_tma_box_inner_for(gemm_out_bf16),
                               KBD_TMAP_SWIZZLE_32B);
    KBD_CHECK(kbd_tensor_map_encode(&c.p.d, &d));
    c.p.m = m, c.p.n = n, c.p.k = k, c.p.alpha = 1.0f, c.p.beta = 0.0f, c.p.act = GEMM_ACT_NONE, c.p.d_f32 = 0;
    const long long tiles = (m + GEMM_BM - 1) / GEMM_BM * ((n + GEMM_BN - 1) / GEMM_BN);
    c.grid = (unsigned)(tiles < sms ? tiles : sms);
    c.a = da, c.b = db, c.d = d2, c.m = m, c.n = n, c.k = k;
    double t[2];
    for (int w = 0; w < 2; ++w) {
      c.what = w;
      if (smoke) {
        launch(&c);
        CK(cudaDeviceSynchronize());
        t[w] = 1.0;
      } else {
        t[w] = time_call(&c, reps);
      }
    }
    KBD_CHECK(kbd_copy_to_host(h1, d1, sizeof(kbd_bf16) * (size_t)(m * n)));
    KBD_CHECK(kbd_copy_to_host(h2, d2, sizeof(kbd_bf16) * (size_t)(m * n)));
    double worst = 0;
    for (long long i = 0; i < m * n; ++i) {
      const double x = kbd_bf16_to_f32(h1[i]), y = kbd_bf16_to_f32(h2[i]);
      const double e = fabs(x - y) / (fabs(y) > 1 ? fabs(y) : 1);
      worst = e > worst || e != e ? e : worst;
    }
    const int ok = worst <= 1.0 / 64; /* a few bf16 ulps */
    fails += !ok;
    const double fl = 2.0 * (double)m * (double)n * (double)k;
    printf("  %6lld x %6lld x %6lld %12.1f %12.1f %8.2f %10.2e%s\n", m, n, k, smoke ? 0.0 : fl / t[0] * 1e-12,
           smoke ? 0.0 : fl / t[1] * 1e-12, smoke ? 0.0 : t[1] / t[0], worst, ok ? "" : "  MISMATCH");
    kbd_free(da), kbd_free(db), kbd_free(d1), kbd_free(d2);
    free(ha), free(hb), free(h1), free(h2);
  }
  CB(cublasDestroy(c.h));
  return fails ? 1 : 0;
}

#endif /* KBD_CPU */
