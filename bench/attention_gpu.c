/* attention_gpu.c - GPU throughput of examples/attention (attn_run): the forward pass in TFLOP/s beside the
 * published FlashAttention-3 / FlashAttention-4 numbers, and flash-decoding in GB/s of K and V read.
 *
 * Built by kbd_add_program(attention_bench ...) in bench/CMakeLists.txt as attention_gpu_sm90a and
 * attention_gpu_sm100a (host C by the host compiler, kernels by nvcc for one arch; run the one matching the
 * device). In the -DKBD_CPU programs this file is empty and attention_cpu.c provides main().
 *
 *   attention_gpu_sm<arch> [--only fwd|decode] [--seqs LIST] [--hdims LIST] [--tokens T] [--no-f16]
 *                          [--dec-seqq LIST] [--dec-seqk LIST] [--dec-batch LIST] [--reps R] [--peak-gbs G] [--smoke]
 *
 * Forward (splits 1): seq_q = seq_k in --seqs (default 512,1k,2k,4k,8k,16k) x head_dim in --hdims (64,128,256)
 *   x causal/non-causal, bf16, and f16 at head_dim 128 (--no-f16 drops it). FlashAttention-3's setting: batch =
 *   T / seq with T = --tokens (default 16k) total tokens, heads = 2048 / head_dim (hidden size 2048: 32, 16 or 8
 *   heads), heads_kv = heads. FLOPs = 4 * batch * heads * seq_q * seq_k * head_dim, halved when causal - the
 *   convention of the FlashAttention-2/3 papers and of flops() in Dao-AILab/flash-attention
 *   benchmarks/benchmark_flash_attention.py (docs/benchmarks.md "Attention" has the citations).
 * Decode (flash-decoding): head_dim 128, bf16, heads_q 32 / heads_kv 4 (GQA 8:1), seq_q in --dec-seqq (1,16),
 *   seq_k in --dec-seqk (4k..128k), batch in --dec-batch (1,4,16,64), splits = attn_pick_splits(args, SM count).
 *   Decode is bandwidth-bound: GB/s = (K + V bytes) / time, against the DRAM peak from the device attributes
 *   (or --peak-gbs). Rows marked L2 have K + V smaller than the L2: back-to-back calls may be served from it.
 * Timing: 3 warm-up calls, then --reps (default 7) samples of back-to-back attn_run calls (about 20 ms each)
 *   between two cudaEvents; the median time per call is reported (best in the BENCH lines). attn_run encodes four
 *   tensor maps (three with splits > 1) and launches one kernel (two with splits > 1) per call; rows marked H were
 *   host-bound (the host took >= 90% of the GPU time per call to enqueue), so they measure the launch path, not the
 *   kernel.
 * Every row is checked: three output rows (first, middle, last) against a double-precision reference on the host
 *   (tolerance as examples/attention/main.c). Inputs repeat a 2^22-element pseudo-random block so that the 16 GiB
 *   of K/V of the largest decode shape are filled by device-to-device copies.
 * --smoke: head_dim 64/128/256 at batch 1, heads 2, seq 256 and two decode shapes, one call each, checked (the
 *   CTest entry). Exit 77 without a device of this binary's arch, 1 on a mismatch (never on timings), 2 on bad
 *   arguments.
 *
 * cuDNN (built with KBD_BENCH_HAVE_CUDNN: bench/CMakeLists.txt, when cuDNN and the cudnn_frontend headers are
 *   present): every forward row also runs cuDNN's fused attention (attention_cudnn.cpp, the frontend's SDPA graph)
 *   on the same inputs into a second output, timed the same way and checked against the same reference rows; the
 *   table shows its TFLOP/s and kbd / cuDNN. A shape cuDNN has no engine for prints its message and n/a. A cuDNN
 *   mismatch is marked (cudnn_correct=0) but does not fail the run: it is the baseline's problem, not kbd's.
 */
#ifndef KBD_CPU

#define _DEFAULT_SOURCE 1
#include <math.h>
#include <stdint.h>

#include "attention.h" /* examples/attention; in a host C file kbd includes <cuda_runtime_api.h> */

#include "bench_util.h"
#ifdef KBD_BENCH_HAVE_CUDNN
#include "attention_cudnn.h"
#endif

#ifndef BENCH_GPU_ARCH
#error "BENCH_GPU_ARCH (90 or 100) is set per target by bench/CMakeLists.txt"
#endif

#define SKIP 77
#define MAX_LIST 16
#define CHUNK (1u << 22) /* elements of the repeated input block */

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "attention_gpu: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_),        \
              cudaGetErrorName(e_));                                                                                   \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* ---- published reference numbers ------------------------------------------------------------------------------
 * FlashAttention-3 on H100 80GB SXM5, FP16 forward, TFLOP/s, from the bar labels of Figure 5 of Shah et al.,
 * "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision", arXiv:2407.08608v2
 * (docs/benchmarks.md "Attention" gives the sources and how causal / non-causal were told apart). Same setting as
 * the forward rows here: 16k tokens, hidden size 2048. [head_dim 64, 128, 256][non-causal, causal][seq 512..16k].
 * FlashAttention-4 (Zadouri et al., arXiv:2603.05451) reports up to 1613 TFLOP/s BF16 forward on B200; its
 * per-shape numbers are not transcribed here, so the FA4 column prints n/a. */
static const long long ref_seqs[6] = {512, 1024, 2048, 4096, 8192, 16384};
static const int fa3_h100_fp16[3][2][6] = {
    {{333, 392, 460, 476, 496, 497}, {197, 265, 371, 420, 460, 473}},
    {{467, 565, 625, 638, 646, 648}, {292, 423, 521, 579, 602, 616}},
    {{482, 639, 707, 736, 746, 756}, {286, 427, 537, 612, 628, 642}},
};
#define FA4_B200_PEAK_TFLOPS 1613

/* The FA3 figure's number for this shape, or 0 when the shape is not one of the figure's. */
static int fa3_ref(int d, int causal, long long seq, long long batch, int heads) {
  const int di = d == 64 ? 0 : d == 128 ? 1 : d == 256 ? 2 : -1;
  if (di < 0 || batch * seq != 16384 || (long long)heads * d != 2048) return 0;
  for (int i = 0; i < 6; ++i)
    if (ref_seqs[i] == seq) return fa3_h100_fp16[di][causal != 0][i];
  return 0;
}

/* ---- inputs ---------------------------------------------------------------------------------------------------- */

static float input_value(unsigned long long i, unsigned t) { /* uniform in [-1, 1) */
  unsigned long long h = (i + 0x632BE59BD9B4E019ull * (t + 1)) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (float)(h >> 40) / 8388608.0f - 1.0f;
}

/* The repeated blocks of q, k, v: element i of tensor t is blk[t][i % CHUNK] (bits) or val[t][i % CHUNK]. */
typedef struct inputs {
  int f16;
  uint16_t *blk[3];
  float *val[3];
} inputs;

static void inputs_make(inputs *in, int f16) {
  in->f16 = f16;
  for (int t = 0; t < 3; ++t) {
    if (!in->blk[t]) in->blk[t] = (uint16_t *)malloc(sizeof(uint16_t) * CHUNK);
    if (!in->val[t]) in->val[t] = (float *)malloc(sizeof(float) * CHUNK);
    if (!in->blk[t] || !in->val[t]) abort();
    for (unsigned i = 0; i < CHUNK; ++i) {
      const float x = input_value(i, (unsigned)t);
      if (f16) {
        const kbd_f16 h = kbd_f32_to_f16(x);
        in->blk[t][i] = h.bits, in->val[t][i] = kbd_f16_to_f32(h);
      } else {
        const kbd_bf16 h = kbd_f32_to_bf16(x);
        in->blk[t][i] = h.bits, in->val[t][i] = kbd_bf16_to_f32(h);
      }
    }
  }
}

/* dst[i] = blk[i % CHUNK] for i < elems: one upload, then doubling device-to-device copies. */
static void fill(void *dst, size_t elems, const uint16_t *blk) {
  size_t done = elems < CHUNK ? elems : CHUNK;
  KBD_CHECK(kbd_copy_to_device(dst, blk, done * 2));
  while (done < elems) { /* done is a multiple of CHUNK here */
    const size_t n = done < elems - done ? done : elems - done;
    KBD_CHECK(kbd_copy_on_device((char *)dst + done * 2, dst, n * 2));
    done += n;
  }
}

/* ---- checking -------------------------------------------------------------------------------------------------- */

/* Largest |error| of output row `row` (of [batch][heads_q][seq_q]) against a double reference; NaN if unwritten. */
static double check_row(const attn_args *a, const inputs *in, long long row) {
  const int d = a->head_dim, group = a->heads_q / a->heads_kv;
  const long long i = row % a->seq_q, bh = row / a->seq_q, h = bh % a->heads_q, b = bh / a->heads_q;
  const long long kv0 = (b * a->heads_kv + h / group) * a->seq_k;
  long long n = a->causal ? i + a->seq_k - a->seq_q + 1 : a->seq_k;
  n = n < 0 ? 0 : n > a->seq_k ? a->seq_k : n;
  const double scale = a->scale > 0.0f ? a->scale : 1.0 / sqrt((double)d);
  double *s = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1)), m = -INFINITY, sum = 0.0;
  double o[256] = {0};
  uint16_t got[256];
  if (!s) abort();
  for (long long j = 0; j < n; ++j) {
    double acc = 0.0;
    for (int c = 0; c < d; ++c)
      acc += (double)in->val[0][(size_t)((row * d + c) % CHUNK)] *
             (double)in->val[1][(size_t)(((kv0 + j) * d + c) % CHUNK)];
    s[j] = scale * acc;
    m = s[j] > m ? s[j] : m;
  }
  for (long long j = 0; j < n; ++j) {
    const double p = exp(s[j] - m);
    sum += p;
    for (int c = 0; c < d; ++c)
      o[c] += p * (double)in->val[2][(size_t)(((kv0 + j) * d + c) % CHUNK)];
  }
  free(s);
  KBD_CHECK(kbd_copy_to_host(got, (const char *)a->o + (size_t)row * d * 2, (size_t)d * 2));
  double worst = 0.0;
  for (int c = 0; c < d; ++c) {
    const double want = sum > 0.0 ? o[c] / sum : 0.0;
    double g;
    if (in->f16) {
      const kbd_f16 x = {got[c]};
      g = kbd_f16_to_f32(x);
    } else {
      const kbd_bf16 x = {got[c]};
      g = kbd_bf16_to_f32(x);
    }
    const double e = fabs(g - want);
    if (!(e <= worst)) worst = e; /* NaN propagates */
  }
  return worst;
}

static int check_args(const attn_args *a, const inputs *in, double *worst_out) {
  const long long rows = (long long)a->batch * a->heads_q * a->seq_q;
  const long long pick[3] = {0, rows / 2, rows - 1};
  /* P and O rounded to the input type (u = 2^-8 bf16, 2^-11 f16), |v| <= 1: examples/attention/main.c */
  const double tol = 4.0 * (in->f16 ? 1.0 / 2048.0 : 1.0 / 256.0);
  double worst = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double e = check_row(a, in, pick[k]);
    if (!(e <= worst)) worst = e;
  }
  *worst_out = worst;
  return worst <= tol;
}

/* ---- timing ---------------------------------------------------------------------------------------------------- */

static void run(const attn_args *a) {
  const kbd_status s = attn_run(a);
  if (!kbd_ok(s)) {
    fprintf(stderr, "attention_gpu: attn_run failed: %s\n", s.msg);
    exit(1);
  }
}

typedef struct timing {
  double median_s, best_s, host_s; /* per call; host_s: host time to enqueue one call (median) */
  int iters;
} timing;

/* one call of what is timed: kbd's attn_run, or cuDNN's */
typedef void (*bench_call)(const void *ctx);
static void call_kbd(const void *ctx) { run((const attn_args *)ctx); }
#ifdef KBD_BENCH_HAVE_CUDNN
static void call_cudnn(const void *ctx) {
  char err[512];
  if (attn_cudnn_run((const attn_cudnn_case *)ctx, err, sizeof err) != 0) {
    fprintf(stderr, "attention_gpu: %s\n", err);
    exit(1);
  }
}
#endif

static timing time_calls(bench_call call, const void *ctx, int reps) {
  timing t;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    call(ctx); /* warm-up: module load, first touch, clocks */
  CK(cudaDeviceSynchronize());
  float ms = 0.0f;
  CK(cudaEventRecord(e0, 0));
  call(ctx);
  CK(cudaEventRecord(e1, 0));
  CK(cudaEventSynchronize(e1));
  CK(cudaEventElapsedTime(&ms, e0, e1));
  int iters = ms > 0.0f ? (int)(20.0f / ms) : 1000;
  t.iters = iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
  double s[64], h[64];
  reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0, 0));
    const double h0 = bench_now_s();
    for (int i = 0; i < iters; ++i)
      call(ctx);
    h[r] = (bench_now_s() - h0) / iters;
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    s[r] = 1e-3 * (double)ms / iters;
  }
  CK(cudaGetLastError());
  t.best_s = bench_min(s, reps);
  t.median_s = bench_median(s, reps);
  t.host_s = bench_median(h, reps);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--only fwd|decode] [--seqs LIST] [--hdims LIST] [--tokens T] [--no-f16] [--dec-seqq LIST] "
          "[--dec-seqk LIST] [--dec-batch LIST] [--reps R] [--peak-gbs G] [--smoke]\n",
          argv0);
}

static int parse_list_arg(const char *s, long long *out, int *n) {
  *n = bench_parse_list(s, out, MAX_LIST);
  return *n > 0;
}

int main(int argc, char **argv) {
  long long seqs[MAX_LIST] = {512, 1024, 2048, 4096, 8192, 16384}, hdims[MAX_LIST] = {64, 128, 256};
  long long dseqq[MAX_LIST] = {1, 16}, dseqk[MAX_LIST] = {4096, 8192, 16384, 32768, 65536, 131072};
  long long dbatch[MAX_LIST] = {1, 4, 16, 64}, tokens = 16384;
  int nseqs = 6, nhdims = 3, ndseqq = 2, ndseqk = 6, ndbatch = 4, reps = 7, smoke = 0, do_fwd = 1, do_dec = 1;
  int with_f16 = 1, fixed_heads = 0;
  double peak_arg = 0.0;
  for (int i = 1; i < argc; ++i) {
    const int more = i + 1 < argc;
    if (!strcmp(argv[i], "--only") && more) {
      ++i;
      do_fwd = !strcmp(argv[i], "fwd");
      do_dec = !strcmp(argv[i], "decode");
      if (!do_fwd && !do_dec) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--seqs") && more) {
      if (!parse_list_arg(argv[++i], seqs, &nseqs)) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--hdims") && more) {
      if (!parse_list_arg(argv[++i], hdims, &nhdims)) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--tokens") && more) {
      tokens = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--no-f16")) {
      with_f16 = 0;
    } else if (!strcmp(argv[i], "--dec-seqq") && more) {
      if (!parse_list_arg(argv[++i], dseqq, &ndseqq)) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--dec-seqk") && more) {
      if (!parse_list_arg(argv[++i], dseqk, &ndseqk)) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--dec-batch") && more) {
      if (!parse_list_arg(argv[++i], dbatch, &ndbatch)) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--reps") && more) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--peak-gbs") && more) {
      peak_arg = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (smoke) {
    seqs[0] = 256, nseqs = 1, tokens = 256, fixed_heads = 2, reps = 1;
    dseqq[0] = 1, dseqq[1] = 16, ndseqq = 2, dseqk[0] = 4096, ndseqk = 1, dbatch[0] = 2, ndbatch = 1;
  }
  for (int i = 0; i < nhdims; ++i)
    if (hdims[i] != 64 && hdims[i] != 128 && hdims[i] != 256) return usage(argv[0]), 2;
  if (tokens < 1 || reps < 1) return usage(argv[0]), 2;

  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("attention_gpu: no usable CUDA device (cudaGetDeviceCount: %s); skipping - attention throughput not "
           "measured\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return SKIP;
  }
  int dev = 0, major = 0, minor = 0, sms = 0, clk_khz = 0, bus_bits = 0, l2 = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    /* An sm_XXa cubin runs on exactly that compute capability, and no PTX is embedded. */
    printf("attention_gpu: this binary holds sm_%da code only, but device 0 (%s) is sm_%d%d; skipping\n",
           BENCH_GPU_ARCH, prop.name, major, minor);
    return SKIP;
  }
  const cudaError_t ec = cudaDeviceGetAttribute(&clk_khz, cudaDevAttrMemoryClockRate, dev);
  const cudaError_t eb = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  (void)cudaGetLastError();
  double peak = peak_arg;
  if (peak <= 0 && ec == cudaSuccess && eb == cudaSuccess && clk_khz > 0 && bus_bits > 0)
    peak = 2.0 * (double)clk_khz * 1e3 * (double)bus_bits / 8.0 * 1e-9; /* DDR: two transfers per clock */
  printf("# attention_gpu (sm_%da build): %s, %d SMs, L2 %d MiB, DRAM peak %.0f GB/s%s; median of %d samples\n",
         BENCH_GPU_ARCH, prop.name, sms, l2 >> 20, peak, peak_arg > 0 ? " (--peak-gbs)" : " (attributes)", reps);

  inputs in;
  memset(&in, 0, sizeof in);
  int fails = 0;

  if (do_fwd) {
    /* the largest tensor: tokens x 2048 (or x heads x head_dim in the smoke run) */
    size_t maxel = 0;
    for (int i = 0; i < nhdims; ++i) {
      const size_t el = (size_t)tokens * (size_t)(fixed_heads ? fixed_heads * hdims[i] : 2048);
      maxel = el > maxel ? el : maxel;
    }
    void *dq, *dk, *dv, *dout, *dout2 = NULL; /* dout2: cuDNN's output */
    float *dlse;
    KBD_CHECK(kbd_malloc(&dq, maxel * 2));
    KBD_CHECK(kbd_malloc(&dk, maxel * 2));
    KBD_CHECK(kbd_malloc(&dv, maxel * 2));
    KBD_CHECK(kbd_malloc(&dout, maxel * 2));
#ifdef KBD_BENCH_HAVE_CUDNN
    KBD_CHECK(kbd_malloc(&dout2, maxel * 2));
    printf("\n# cuDNN %ld beside kbd: its fused attention (cudnn_frontend SDPA) on the same inputs\n",
           attn_cudnn_version());
#endif
    KBD_CHECK(kbd_malloc((void **)&dlse, sizeof(float) * (size_t)tokens * 32));
    printf("\n# forward: batch = %lld / seq, heads = %s, FLOPs = 4 b h s^2 d (/2 causal); FA3 = H100 SXM5 fp16 "
           "(arXiv:2407.08608v2 Fig. 5), FA4 = B200 (arXiv:2603.05451: up to %d TFLOP/s bf16, per-shape n/a)\n",
           tokens, fixed_heads ? "2" : "2048 / head_dim", FA4_B200_PEAK_TFLOPS);
    printf("%5s %5s %6s %6s %6s %6s | %10s %9s %9s | %8s %8s %8s | %8s %9s | %9s\n", "dtype", "hdim", "causal", "seq",
           "batch", "heads", "ms", "TFLOP/s", "best", "FA3 H100", "FA4 B200", "kbd/ref", "cuDNN", "kbd/cuDNN",
           "max|err|");
    for (int f16 = 0; f16 <= with_f16; ++f16) {
      inputs_make(&in, f16);
      fill(dq, maxel, in.blk[0]);
      fill(dk, maxel, in.blk[1]);
      fill(dv, maxel, in.blk[2]);
      for (int hi = 0; hi < nhdims; ++hi) {
        const int d = (int)hdims[hi];
        if (f16 && d != 128) continue; /* f16 at head_dim 128 only: the dtype changes no tile shape */
        for (int causal = 0; causal <= 1; ++causal)
          for (int si = 0; si < nseqs; ++si) {
            const long long seq = seqs[si], batch = tokens / seq > 0 ? tokens / seq : 1;
            const int heads = fixed_heads ? fixed_heads : 2048 / d;
            attn_args a;
            memset(&a, 0, sizeof a);
            a.dtype = f16 ? ATTN_F16 : ATTN_BF16;
            a.batch = (int)batch, a.heads_q = a.heads_kv = heads, a.seq_q = a.seq_k = (int)seq, a.head_dim = d;
            a.causal = causal, a.splits = 1;
            a.q = dq, a.k = dk, a.v = dv, a.o = dout, a.lse = dlse;
            if ((size_t)batch * heads * seq * d > maxel) {
              fprintf(stderr, "attention_gpu: seq %lld exceeds --tokens %lld\n", seq, tokens);
              return 2;
            }
            timing t = {0, 0, 0, 0};
            KBD_CHECK(kbd_memset_device(dout, 0xff, (size_t)batch * heads * seq * d * 2)); /* NaN until written */
            if (smoke) {
              run(&a);
              CK(cudaDeviceSynchronize());
            } else {
              t = time_calls(call_kbd, &a, reps);
            }
            double worst;
            const int ok = check_args(&a, &in, &worst);
            fails += !ok;
            const double fl = 4.0 * batch * heads * (double)seq * (double)seq * d / (causal ? 2.0 : 1.0);
            const double tf = smoke ? 0.0 : fl / t.median_s * 1e-12, tfb = smoke ? 0.0 : fl / t.best_s * 1e-12;
            const int ref3 = fa3_ref(d, causal, seq, batch, heads);
            const int ref = BENCH_GPU_ARCH == 90 ? ref3 : 0;
            const int hostb = !smoke && t.host_s >= 0.9 * t.median_s;
            /* cuDNN on the same inputs: TFLOP/s, and its check (-1: not built, -2: no engine for the shape) */
            double ctf = 0.0, cworst = 0.0;
            int cok = -1;
            (void)dout2;
#ifdef KBD_BENCH_HAVE_CUDNN
            {
              const attn_cudnn_case cc = {
                  (int)batch, heads, heads, (int)seq, (int)seq, d, causal, f16, 1.0f / sqrtf((float)d),
                  dq,         dk,    dv,    dout2};
              char err[512];
              KBD_CHECK(kbd_memset_device(dout2, 0xff, (size_t)batch * heads * seq * d * 2));
              if (attn_cudnn_run(&cc, err, sizeof err) == 0) {
                CK(cudaDeviceSynchronize());
                attn_args a2 = a;
                a2.o = dout2;
                cok = check_args(&a2, &in, &cworst);
                if (!smoke) ctf = fl / time_calls(call_cudnn, &cc, reps).median_s * 1e-12;
              } else {
                cok = -2;
                printf("# %s\n", err);
              }
            }
#endif
            printf("BENCH bench=attention_gpu kind=fwd arch=sm_%da dtype=%s head_dim=%d causal=%d seq=%lld batch=%lld "
                   "heads=%d iters=%d reps=%d median_s=%.9g best_s=%.9g host_s=%.9g tflops=%.2f best_tflops=%.2f "
                   "fa3_h100_fp16=%d host_bound=%d max_err=%.3g correct=%d cudnn_tflops=%.2f cudnn_max_err=%.3g "
                   "cudnn_correct=%d\n",
                   BENCH_GPU_ARCH, f16 ? "f16" : "bf16", d, causal, seq, batch, heads, t.iters, reps, t.median_s,
                   t.best_s, t.host_s, tf, tfb, ref3, hostb, worst, ok, ctf, cworst, cok);
            char r3[16] = "n/a", rr[16] = "n/a"; /* published number, kbd / the reference of this arch */
            if (ref3) snprintf(r3, sizeof r3, "%d", ref3);
            if (ref && !smoke) snprintf(rr, sizeof rr, "%.2f", tf / ref);
            char cd[16] = "n/a", cr[16] = "n/a"; /* cuDNN's TFLOP/s, kbd / cuDNN */
            if (cok >= 0 && !smoke) snprintf(cd, sizeof cd, "%.1f", ctf), snprintf(cr, sizeof cr, "%.2f", tf / ctf);
            printf("%5s %5d %6d %6lld %6lld %6d | %10.3f %9.1f %9.1f | %8s %8s %8s | %8s %9s | %9.2e%s%s%s\n",
                   f16 ? "f16" : "bf16", d, causal, seq, batch, heads, 1e3 * t.median_s, tf, tfb, r3, "n/a", rr, cd, cr,
                   worst, hostb ? "  H" : "", ok ? "" : "  MISMATCH", cok == 0 ? "  cuDNN MISMATCH" : "");
            fflush(stdout);
          }
      }
    }
    KBD_CHECK(kbd_free(dq));
    KBD_CHECK(kbd_free(dk));
    KBD_CHECK(kbd_free(dv));
    KBD_CHECK(kbd_free(dout));
    if (dout2) KBD_CHECK(kbd_free(dout2));
    KBD_CHECK(kbd_free(dlse));
#ifdef KBD_BENCH_HAVE_CUDNN
    attn_cudnn_release();
#endif
  }

  if (do_dec) {
    const int d = 128, hq = 32, hkv = 4;
    long long maxb = 0, maxk = 0, maxq = 0;
    for (int i = 0; i < ndbatch; ++i)
      maxb = dbatch[i] > maxb ? dbatch[i] : maxb;
    for (int i = 0; i < ndseqk; ++i)
      maxk = dseqk[i] > maxk ? dseqk[i] : maxk;
    for (int i = 0; i < ndseqq; ++i)
      maxq = dseqq[i] > maxq ? dseqq[i] : maxq;
    const size_t qel = (size_t)maxb * hq * maxq * d, kel = (size_t)maxb * hkv * maxk * d;
    void *dq, *dk, *dv, *dout, *work = NULL;
    float *dlse;
    size_t work_bytes = 0;
    KBD_CHECK(kbd_malloc(&dq, qel * 2));
    KBD_CHECK(kbd_malloc(&dk, kel * 2));
    KBD_CHECK(kbd_malloc(&dv, kel * 2));
    KBD_CHECK(kbd_malloc(&dout, qel * 2));
    KBD_CHECK(kbd_malloc((void **)&dlse, sizeof(float) * (size_t)maxb * hq * maxq));
    inputs_make(&in, 0);
    fill(dq, qel, in.blk[0]);
    fill(dk, kel, in.blk[1]);
    fill(dv, kel, in.blk[2]);
    printf("\n# decode: bf16, head_dim %d, heads %d/%d (GQA %d:1), splits = attn_pick_splits(args, %d SMs); GB/s = K+V "
           "bytes / time; %% of %.0f GB/s; L2 = K+V fit in the %d MiB L2; H = host-bound\n",
           d, hq, hkv, hq / hkv, sms, peak, l2 >> 20);
    printf("%6s %7s %6s %6s | %10s %9s %7s | %9s\n", "seq_q", "seq_k", "batch", "splits", "us", "GB/s", "% peak",
           "max|err|");
    for (int qi = 0; qi < ndseqq; ++qi)
      for (int ki = 0; ki < ndseqk; ++ki)
        for (int bi = 0; bi < ndbatch; ++bi) {
          attn_args a;
          memset(&a, 0, sizeof a);
          a.dtype = ATTN_BF16;
          a.batch = (int)dbatch[bi], a.heads_q = hq, a.heads_kv = hkv, a.seq_q = (int)dseqq[qi];
          a.seq_k = (int)dseqk[ki], a.head_dim = d, a.causal = 0;
          a.q = dq, a.k = dk, a.v = dv, a.o = dout, a.lse = dlse;
          a.splits = attn_pick_splits(&a, sms);
          const size_t wb = attn_workspace_bytes(&a);
          if (wb > work_bytes) {
            if (work) KBD_CHECK(kbd_free(work));
            KBD_CHECK(kbd_malloc(&work, wb));
            work_bytes = wb;
          }
          a.workspace = a.splits > 1 ? work : NULL;
          timing t = {0, 0, 0, 0};
          KBD_CHECK(kbd_memset_device(dout, 0xff, (size_t)a.batch * hq * a.seq_q * d * 2));
          if (smoke) {
            run(&a);
            CK(cudaDeviceSynchronize());
          } else {
            t = time_calls(call_kbd, &a, reps);
          }
          double worst;
          const int ok = check_args(&a, &in, &worst);
          fails += !ok;
          const double kv = 2.0 * (double)a.batch * hkv * (double)a.seq_k * d * 2.0;
          const double gbs = smoke ? 0.0 : kv / t.median_s * 1e-9, gbsb = smoke ? 0.0 : kv / t.best_s * 1e-9;
          const int inl2 = kv < (double)l2, hostb = !smoke && t.host_s >= 0.9 * t.median_s;
          printf("BENCH bench=attention_gpu kind=decode arch=sm_%da dtype=bf16 head_dim=%d heads_q=%d heads_kv=%d "
                 "seq_q=%d seq_k=%d batch=%d splits=%d iters=%d reps=%d median_s=%.9g best_s=%.9g host_s=%.9g "
                 "kv_bytes=%.0f gbs=%.1f best_gbs=%.1f peak_gbs=%.0f in_l2=%d host_bound=%d max_err=%.3g correct=%d\n",
                 BENCH_GPU_ARCH, d, hq, hkv, a.seq_q, a.seq_k, a.batch, a.splits, t.iters, reps, t.median_s, t.best_s,
                 t.host_s, kv, gbs, gbsb, peak, inl2, hostb, worst, ok);
          printf("%6d %7d %6d %6d | %10.2f %9.1f %7.1f | %9.2e%s%s%s\n", a.seq_q, a.seq_k, a.batch, a.splits,
                 1e6 * t.median_s, gbs, peak > 0 ? 100.0 * gbs / peak : 0.0, worst, inl2 ? "  L2" : "",
                 hostb ? "  H" : "", ok ? "" : "  MISMATCH");
          fflush(stdout);
        }
    KBD_CHECK(kbd_free(dq));
    KBD_CHECK(kbd_free(dk));
    KBD_CHECK(kbd_free(dv));
    KBD_CHECK(kbd_free(dout));
    KBD_CHECK(kbd_free(dlse));
    if (work) KBD_CHECK(kbd_free(work));
  }
  for (int t = 0; t < 3; ++t)
    free(in.blk[t]), free(in.val[t]);
  return fails ? 1 : 0;
}

#else  /* the -DKBD_CPU programs of kbd_add_program(attention_bench): main() is in attention_cpu.c */
typedef int attention_gpu_bench_not_in_cpu_build;
#endif /* !KBD_CPU */
