/* gemm_gpu.c - TFLOP/s of examples/gemm against cuBLAS on the same operands: bf16 A/B (f32 accumulation, bf16 D)
 * against cublasGemmEx (CUBLAS_COMPUTE_32F), and e4m3 A/B (f32 accumulation, bf16 D) against cublasLtMatmul.
 * Built by bench/CMakeLists.txt as gemm_gpu_sm90a / _sm100a (bench/gemm_cpu.c is the CPU machine's benchmark).
 *
 *   gemm_gpu_sm<arch> [--shapes MxNxK,...] [--types bf16,fp8,pair,pp] [--reps R] [--smoke]
 *
 *   --shapes  default: 1024^3, 2048^3, 4096^3, 8192^3, 4096x4096x16384, the LLM-style skinny products
 *             16x4096x4096, 32x4096x4096, 64x8192x8192 and 128x16384x16384 (decoding: M = tokens in flight) and
 *             8192x4096x14336 (an MLP up-projection)
 *   --types   bf16 (every shape) and fp8 (e4m3: by default 4096^3 and 8192^3, the shapes; with --shapes,
 *             every given shape); on sm_100a also pair (bf16 on CTA pairs, gemm_pair_bf16_rc: tcgen05 .cta_group::2,
 *             256 x 256 per pair; every bf16 shape, rows "bf16p"); on sm_90a also pp (bf16 with the pingpong
 *             consumers, gemm_params.pingpong: every bf16 shape, rows "bf16pp"; the bf16 rows are the cooperative
 *             consumers), so one run compares the two schedules (docs/gemm.md, "Pingpong consumers")
 *   --reps    timed samples per shape (default 7), each ~20 ms of back-to-back calls after 3 warm-ups
 *   --smoke   one 512^3 product per type, one call, checked against cuBLAS (the CTest entry)
 *
 * TFLOP/s = 2 M N K / time. A row-major (K contiguous), B column-major (K contiguous): kbd's gemm_kernel
 * variants GEMM_BF16_RC / GEMM_E4M3_RC and cuBLAS's "TN" case (the layout cuBLASLt requires for fp8). Every result is
 * compared with cuBLAS's (both round to bf16: at most a few ulps apart). The header prints the device, its SM count and
 * peak clocks, and the datasheet dense tensor-core peak of its class (H100/H200 SXM: 989.5 bf16 and 1979 fp8 TFLOP/s;
 * B200: 2250 and 4500; the same figures as tools/kbd-roofline); each row gives kbd's share of it. Exit 77 without
 * a device of this binary's arch.
 */
#ifndef KBD_CPU

#define _DEFAULT_SOURCE 1
#include "gemm.h" /* examples/gemm */

#include <cublasLt.h>
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

/* Datasheet dense tensor-core peaks (TFLOP/s) of the device class this binary targets: NVIDIA H100 SXM datasheet
 * (bf16 1979, fp8 3958 "with sparsity": dense is half; H200 SXM the same), NVIDIA HGX B200 datasheet (36 and 72
 * PFLOPS sparse for 8 GPUs: per GPU dense /16). tools/kbd-roofline cites the same. */
#if BENCH_GPU_ARCH == 90
#define PEAK_BF16 989.5
#define PEAK_FP8 1979.0
#define PEAK_CLASS "H100/H200 SXM"
#else
#define PEAK_BF16 2250.0
#define PEAK_FP8 4500.0
#define PEAK_CLASS "B200"
#endif

typedef struct gctx {
  int what; /* 0 kbd, 1 cuBLAS */
  int fp8;
  int pair; /* kbd's CTA-pair kernel (sm_100a) */
  unsigned grid;
  size_t smem;
  gemm_params p;
  cublasHandle_t h;
  cublasLtHandle_t lt; /* fp8: cublasLtMatmul with the plan below */
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulAlgo_t algo;
  void *ws;
  size_t ws_bytes;
  const void *a, *b;
  void *d;
  long long m, n, k;
} gctx;

#define LT_WS_BYTES (32u << 20)

/* cuBLASLt's fp8 GEMM in its column-major terms, as the bf16 call below: D^T (N x M, ld N) = B_cm^T * A_cm with
 * B_cm = B (K x N column-major, ld K, transposed) and A_cm = A^T (K x M, ld K): the "TN" layout fp8 requires. */
static void lt_plan(gctx *c) {
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CB(cublasLtMatmulDescCreate(&c->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CB(cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CB(cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CB(cublasLtMatrixLayoutCreate(&c->la, CUDA_R_8F_E4M3, (uint64_t)c->k, (uint64_t)c->n, (int64_t)c->k));
  CB(cublasLtMatrixLayoutCreate(&c->lb, CUDA_R_8F_E4M3, (uint64_t)c->k, (uint64_t)c->m, (int64_t)c->k));
  CB(cublasLtMatrixLayoutCreate(&c->ld, CUDA_R_16BF, (uint64_t)c->n, (uint64_t)c->m, (int64_t)c->n));
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &c->ws_bytes,
                                          sizeof c->ws_bytes));
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(c->lt, c->op, c->la, c->lb, c->ld, c->ld, pref, 1, &res, &found));
  CB(cublasLtMatmulPreferenceDestroy(pref));
  if (found < 1) {
    fprintf(stderr, "gemm_gpu: cuBLASLt has no fp8 algorithm for %lldx%lldx%lld\n", c->m, c->n, c->k);
    exit(1);
  }
  c->algo = res.algo;
}
static void lt_unplan(gctx *c) {
  CB(cublasLtMatrixLayoutDestroy(c->la));
  CB(cublasLtMatrixLayoutDestroy(c->lb));
  CB(cublasLtMatrixLayoutDestroy(c->ld));
  CB(cublasLtMatmulDescDestroy(c->op));
}

static void launch(const gctx *c) {
  if (c->what == 1 && c->fp8) {
    const float one = 1.0f, zero = 0.0f;
    CB(cublasLtMatmul(c->lt, c->op, &one, c->b, c->la, c->a, c->lb, &zero, c->d, c->ld, c->d, c->ld, &c->algo, c->ws,
                      c->ws_bytes, 0));
    return;
  }
  if (c->what == 1) {
    const float one = 1.0f, zero = 0.0f;
    /* cuBLAS is column-major: D^T (N x M) = B^T (N x K, B column-major = K contiguous per column) * A^T */
    CB(cublasGemmEx(c->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)c->n, (int)c->m, (int)c->k, &one, c->b, CUDA_R_16BF, (int)c->k,
                    c->a, CUDA_R_16BF, (int)c->k, &zero, c->d, CUDA_R_16BF, (int)c->n, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
    return;
  }
  kbd_launch_cfg cfg = kbd_cfg(kbd_dim(c->grid, 1, 1), c->smem, NULL);
  if (c->pair)
    cfg = kbd_cfg_cluster(cfg, 2, 1, 1);
  else if (c->p.cluster * c->p.cluster_n > 1)
    cfg = kbd_cfg_cluster(cfg, (unsigned)(c->p.cluster * c->p.cluster_n), 1, 1);
  const kbd_status s = c->pair ? gemm_pair_kernel()(cfg, c->p) : gemm_kernel(cfg, c->p);
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

/* Runs one (shape, type): kbd and cuBLAS, timed (or once in smoke mode), compared. Returns 1 on a mismatch. */
static int run_shape(gctx *c, long long m, long long n, long long k, int fp8, int pair, int reps, int smoke, int sms) {
  const size_t es = fp8 ? 1 : 2;
  unsigned char *ha = malloc(es * (size_t)(m * k)), *hb = malloc(es * (size_t)(n * k));
  kbd_bf16 *h1 = malloc(sizeof(kbd_bf16) * (size_t)(m * n)), *h2 = malloc(sizeof(kbd_bf16) * (size_t)(m * n));
  if (!ha || !hb || !h1 || !h2) exit(1);
  /* multiples of 1/16 in [-1/2, 1/2]: exact in bf16 and in e4m3 */
  for (long long i = 0; i < m * k; ++i) {
    const float v = (float)((i * 7919) % 17 - 8) / 16.0f;
    if (fp8)
      ((kbd_e4m3 *)ha)[i] = kbd_f32_to_e4m3(v);
    else
      ((kbd_bf16 *)ha)[i] = kbd_f32_to_bf16(v);
  }
  for (long long i = 0; i < n * k; ++i) {
    const float v = (float)((i * 104729) % 13 - 6) / 16.0f;
    if (fp8)
      ((kbd_e4m3 *)hb)[i] = kbd_f32_to_e4m3(v);
    else
      ((kbd_bf16 *)hb)[i] = kbd_f32_to_bf16(v);
  }
  void *da, *db, *d1, *d2;
  KBD_CHECK(kbd_malloc(&da, es * (size_t)(m * k)));
  KBD_CHECK(kbd_malloc(&db, es * (size_t)(n * k)));
  KBD_CHECK(kbd_malloc(&d1, sizeof(kbd_bf16) * (size_t)(m * n)));
  KBD_CHECK(kbd_malloc(&d2, sizeof(kbd_bf16) * (size_t)(m * n)));
  KBD_CHECK(kbd_copy_to_device(da, ha, es * (size_t)(m * k)));
  KBD_CHECK(kbd_copy_to_device(db, hb, es * (size_t)(n * k)));
  const int tdt = fp8 ? KBD_TMAP_DT_U8 : KBD_TMAP_DT_BF16;
  kbd_tensor_map_desc d =
      fp8 ? kbd_tensor_map_desc_2d(tdt, da, (uint64_t)m, (uint64_t)k, (uint64_t)k, kbd_tma_box_rows_for(gemm_a8),
                                   kbd_tma_box_cols_for(gemm_a8), KBD_TMAP_SWIZZLE_128B)
          : kbd_tensor_map_desc_2d(tdt, da, (uint64_t)m, (uint64_t)k, (uint64_t)k * 2, kbd_tma_box_rows_for(gemm_a_k),
                                   kbd_tma_box_cols_for(gemm_a_k), KBD_TMAP_SWIZZLE_128B);
  KBD_CHECK(kbd_tensor_map_encode(&c->p.a, &d));
  /* B's box is one 64-row half of the B tile (the kernel loads B in halves, multicast across a CTA pair) */
  d = fp8 ? kbd_tensor_map_desc_2d(tdt, db, (uint64_t)n, (uint64_t)k, (uint64_t)k, kbd_tma_box_rows_for(gemm_bh8),
                                   kbd_tma_box_cols_for(gemm_bh8), KBD_TMAP_SWIZZLE_128B)
          : kbd_tensor_map_desc_2d(tdt, db, (uint64_t)n, (uint64_t)k, (uint64_t)k * 2, kbd_tma_box_rows_for(gemm_bh_k),
                                   kbd_tma_box_cols_for(gemm_bh_k), KBD_TMAP_SWIZZLE_128B);
  KBD_CHECK(kbd_tensor_map_encode(&c->p.b, &d));
  d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, d1, (uint64_t)m, (uint64_t)n, (uint64_t)n * 2,
                             kbd_tma_box_rows_for(gemm_out_bf16), kbd_tma_box_cols_for(gemm_out_bf16),
                             KBD_TMAP_SWIZZLE_32B);
  KBD_CHECK(kbd_tensor_map_encode(&c->p.d, &d));
  c->p.m = m, c->p.n = n, c->p.k = k, c->p.alpha = 1.0f, c->p.beta = 0.0f, c->p.act = GEMM_ACT_NONE, c->p.d_f32 = 0;
  /* CTA pairs along M share B through multicast when M spans two tile rows (gemm_run's choice) */
  int cm, cn;
  const long long blocks = gemm_launch_blocks(m, n, sms, 0, 0, &cm, &cn);
  c->grid = (unsigned)blocks;
  c->p.cluster = cm, c->p.cluster_n = cn;
  c->p.variant = fp8 ? GEMM_E4M3_RC : GEMM_BF16_RC;
  c->pair = pair;
  const int pp = c->p.pingpong; /* set by main for the "pp" type */
  if (pair) {                   /* the pair is the cluster: two CTAs per 256 x 256 tile */
    c->grid = (unsigned)gemm_pair_blocks(m, n, sms);
    c->p.cluster = 1, c->p.cluster_n = 1;
  }
  c->a = da, c->b = db, c->d = d2, c->m = m, c->n = n, c->k = k, c->fp8 = fp8;
  if (fp8) lt_plan(c);
  double t[2];
  for (int w = 0; w < 2; ++w) {
    c->what = w;
    if (smoke) {
      launch(c);
      CK(cudaDeviceSynchronize());
      t[w] = 1.0;
    } else {
      t[w] = time_call(c, reps);
    }
  }
  if (fp8) lt_unplan(c);
  KBD_CHECK(kbd_copy_to_host(h1, d1, sizeof(kbd_bf16) * (size_t)(m * n)));
  KBD_CHECK(kbd_copy_to_host(h2, d2, sizeof(kbd_bf16) * (size_t)(m * n)));
  double worst = 0;
  for (long long i = 0; i < m * n; ++i) {
    const double x = kbd_bf16_to_f32(h1[i]), y = kbd_bf16_to_f32(h2[i]);
    const double e = fabs(x - y) / (fabs(y) > 1 ? fabs(y) : 1);
    worst = e > worst || e != e ? e : worst;
  }
  const int ok = worst <= 1.0 / 64; /* a few bf16 ulps */
  const double fl = 2.0 * (double)m * (double)n * (double)k, tk = smoke ? 0.0 : fl / t[0] * 1e-12;
  const double peak = fp8 ? PEAK_FP8 : PEAK_BF16;
  printf("  %-6s %6lld x %6lld x %6lld %10.1f %12.1f %8.2f %8.1f%% %10.2e%s\n",
         fp8    ? "fp8"
         : pair ? "bf16p"
         : pp   ? "bf16pp"
                : "bf16",
         m, n, k, tk, smoke ? 0.0 : fl / t[1] * 1e-12, smoke ? 0.0 : t[1] / t[0], 100.0 * tk / peak, worst,
         ok ? "" : "  MISMATCH");
  printf("BENCH gemm_gpu arch=sm_%da type=%s shape=%lldx%lldx%lld kbd_tflops=%.1f cublas_tflops=%.1f "
         "kbd_over_cublas=%.3f peak_tflops=%.1f\n",
         BENCH_GPU_ARCH,
         fp8    ? "e4m3"
         : pair ? "bf16_pair"
         : pp   ? "bf16_pingpong"
                : "bf16",
         m, n, k, tk, smoke ? 0.0 : fl / t[1] * 1e-12, smoke ? 0.0 : t[1] / t[0], peak);
  kbd_free(da), kbd_free(db), kbd_free(d1), kbd_free(d2);
  free(ha), free(hb), free(h1), free(h2);
  return !ok;
}

int main(int argc, char **argv) {
  long long shapes[MAX_SHAPES][3] = {{1024, 1024, 1024},  {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
                                     {4096, 4096, 16384}, {16, 4096, 4096},   {32, 4096, 4096},   {64, 8192, 8192},
                                     {128, 16384, 16384}, {8192, 4096, 14336}};
  long long fp8_shapes[MAX_SHAPES][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  int nshapes = 10, nfp8 = 2, reps = 7, smoke = 0, do_bf16 = 1, do_fp8 = 1, do_pair = BENCH_GPU_ARCH == 100,
      do_pp = BENCH_GPU_ARCH == 90;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
      nshapes = 0;
      for (char *t = strtok(argv[++i], ","); t && nshapes < MAX_SHAPES; t = strtok(NULL, ","), ++nshapes)
        if (sscanf(t, "%lldx%lldx%lld", &shapes[nshapes][0], &shapes[nshapes][1], &shapes[nshapes][2]) != 3) {
          fprintf(stderr, "gemm_gpu: shape '%s' is not MxNxK\n", t);
          return 2;
        }
      memcpy(fp8_shapes, shapes, sizeof shapes);
      nfp8 = nshapes;
    } else if (!strcmp(argv[i], "--types") && i + 1 < argc) {
      const char *t = argv[++i];
      do_bf16 = strstr(t, "bf16") != NULL, do_fp8 = strstr(t, "fp8") != NULL, do_pair = strstr(t, "pair") != NULL;
      do_pp = strstr(t, "pp") != NULL;
      if (!do_bf16 && !do_fp8 && !do_pair && !do_pp) {
        fprintf(stderr, "gemm_gpu: --types takes bf16, fp8, pair (sm_100a) and pp (sm_90a), comma-separated\n");
        return 2;
      }
      if (do_pp && BENCH_GPU_ARCH != 90) {
        fprintf(stderr, "gemm_gpu: --types pp: the pingpong consumers exist on sm_90a only\n");
        return 2;
      }
      if (do_pair && BENCH_GPU_ARCH != 100) {
        fprintf(stderr, "gemm_gpu: --types pair: CTA pairs exist on sm_100a only\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      fprintf(stderr, "usage: %s [--shapes MxNxK,...] [--types bf16,fp8,pair,pp] [--reps R] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  if (smoke) {
    shapes[0][0] = shapes[0][1] = shapes[0][2] = 512;
    fp8_shapes[0][0] = fp8_shapes[0][1] = fp8_shapes[0][2] = 512;
    nshapes = nfp8 = 1;
    reps = 1;
  }
  for (int s = 0; s < nshapes; ++s)
    if (shapes[s][0] < 1 || shapes[s][1] < 1 || shapes[s][2] < 1 || shapes[s][2] % 16 || shapes[s][1] % 8) {
      fprintf(stderr, "gemm_gpu: %lldx%lldx%lld: N must be a multiple of 8 and K of 16 (16-byte rows)\n", shapes[s][0],
              shapes[s][1], shapes[s][2]);
      return 2;
    }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("gemm_gpu: no usable CUDA device; skipping - GEMM throughput not measured\n");
    return SKIP;
  }
  int major = 0, minor = 0, sms = 0, clk_khz = 0, mem_khz = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
  CK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    printf("gemm_gpu: this binary holds sm_%da code only, but device 0 is sm_%d%d; skipping\n", BENCH_GPU_ARCH, major,
           minor);
    return SKIP;
  }
  char name[256] = "?";
  {
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) snprintf(name, sizeof name, "%s", prop.name);
  }
  gctx c;
  memset(&c, 0, sizeof c);
  CB(cublasCreate(&c.h));
  CB(cublasLtCreate(&c.lt));
  c.ws_bytes = LT_WS_BYTES;
  CK(cudaMalloc(&c.ws, c.ws_bytes));
  gemm_smem l;
  const kbd_smem_plan plan = gemm_layout(&l, 0);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  c.smem = plan.bytes;
  printf("# gemm_gpu (sm_%da build) on %s: %d SMs, SM clock up to %d MHz, memory clock %d MHz\n", BENCH_GPU_ARCH, name,
         sms, clk_khz / 1000, mem_khz / 1000);
  printf("# dense peak (%s datasheet): bf16 %.1f, fp8 %.1f TFLOP/s; %d x %d block tiles, %d-stage ring, %zu bytes "
         "of shared memory\n",
         PEAK_CLASS, PEAK_BF16, PEAK_FP8, GEMM_BM, GEMM_BN, GEMM_STAGES, plan.bytes);
  printf("# %-6s %-24s %10s %12s %8s %9s %10s\n", "type", "M x N x K", "kbd TF/s", "cuBLAS TF/s", "ratio", "of peak",
         "max|diff|");
  int fails = 0;
  if (do_bf16)
    for (int s = 0; s < nshapes; ++s)
      fails += run_shape(&c, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, reps, smoke, sms);
  if (do_pair) {
    const kbd_smem_plan planp = gemm_layout_pair(&l);
    KBD_CHECK(kbd_smem_plan_status(&planp));
    c.smem = planp.bytes;
    printf("# bf16p: CTA pairs (tcgen05 .cta_group::2), %d x %d per pair, %d-stage ring, %zu bytes of shared memory\n",
           GEMM_PAIR_BM, GEMM_PAIR_BN, GEMM_PAIR_STAGES, planp.bytes);
    for (int s = 0; s < nshapes; ++s)
      fails += run_shape(&c, shapes[s][0], shapes[s][1], shapes[s][2], 0, 1, reps, smoke, sms);
  }
  if (do_pp) {
    const kbd_smem_plan planq = gemm_layout_pingpong(&l, 0);
    KBD_CHECK(kbd_smem_plan_status(&planq));
    c.smem = planq.bytes;
    printf("# bf16pp: pingpong consumers, each 128 x %d of a tile in turn, %d-stage ring, %zu bytes of shared memory\n",
           GEMM_BN, GEMM_PP_STAGES, planq.bytes);
    c.p.pingpong = 1;
    for (int s = 0; s < nshapes; ++s)
      fails += run_shape(&c, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, reps, smoke, sms);
    c.p.pingpong = 0;
  }
  if (do_fp8) {
    const kbd_smem_plan plan8 = gemm_layout(&l, 1);
    KBD_CHECK(kbd_smem_plan_status(&plan8));
    c.smem = plan8.bytes;
    for (int s = 0; s < nfp8; ++s)
      fails += run_shape(&c, fp8_shapes[s][0], fp8_shapes[s][1], fp8_shapes[s][2], 1, 0, reps, smoke, sms);
  }
  CK(cudaFree(c.ws));
  CB(cublasLtDestroy(c.lt));
  CB(cublasDestroy(c.h));
  return fails ? 1 : 0;
}

#endif /* KBD_CPU */
