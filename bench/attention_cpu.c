/* attention_cpu.c - the CPU machine running examples/attention (attn_run, flash attention forward) against a
 * naive C attention on the same shapes. Issue 9 asks for "CPU mode: within 3x of a naive C attention".
 *
 * Built by kbd_add_program(attention_bench ...) in bench/CMakeLists.txt as `attention_cpu` (the -DKBD_CPU
 * program, emulating sm_100a: tcgen05.mma into Tensor Memory) and `attention90_cpu` (the same with
 * KBD_CPU_ARCH=90: wgmma into register accumulators). In the GPU programs this file is empty and
 * attention_gpu.c provides main().
 *
 *   attention_cpu [--seqs LIST] [--hdims LIST] [--batch B] [--heads H] [--causal LIST] [--threads LIST]
 *                 [--reps R] [--min-sample-ms MS] [--smoke]
 *
 *   --seqs      seq_q = seq_k, e.g. 256,512,1024 (default)
 *   --hdims     head_dim, 64,128 (default; 256 works too)
 *   --batch     batch (default 1); --heads: heads_q = heads_kv (default 2)
 *   --causal    0,1 (default: both)
 *   --threads   kbd host threads: a list of counts and/or `default` (KBD_CPU_THREADS unset: one per online
 *               core); default 1,default. The naive loop always runs on the calling thread.
 *   --reps      samples per measurement (default 5), naive and kbd samples alternating so that load changes
 *               on a shared machine hit both alike; a sample repeats the call until it lasts at least
 *               --min-sample-ms (default 0: one call) and gives the mean time per call
 *   --smoke     one tiny shape (batch 1, heads 2, seq 100 x 100, head_dim 64, causal and not), one sample,
 *               correctness only: the CTest entry
 *
 * The naive attention is a plain loop nest in f32 over the same bf16-rounded inputs: per query row the scores
 * q.k_j over the visible keys, max, exp, sum, then O = sum_j p_j v_j / sum. It is what a C programmer writes
 * first (no blocking, no SIMD intrinsics) and runs single-threaded; keys a causal row cannot see are skipped,
 * as the kbd kernel skips fully masked key blocks. bench/CMakeLists.txt compiles this file with -O2.
 * "Multiply-adds" below count the two products S = Q K^T and O = P V over the visible keys,
 * 2 * head_dim per (query, visible key) pair - the same work both sides do.
 *
 * Prints one `BENCH ...` line per measurement, one `RATIO ...` line per (shape, threads) and a table. Exit 0
 * when every kbd output matched the naive one (O within the bf16 tolerance of examples/attention/main.c, lse
 * within 1e-4), 1 otherwise (never on timings).
 */
#ifdef KBD_CPU

#define _DEFAULT_SOURCE 1 /* setenv, unsetenv, sysconf under -std=c11 */
#include <math.h>
#include <unistd.h>

#include "attention.h" /* examples/attention */

#include "bench_util.h"

#define MAX_LIST 16
#define TARGET_RATIO 3.0 /* the target: kbd within 3x of the naive attention */

/* ---- the baseline ------------------------------------------------------------------------------------------- */

/* noinline: compiled once, on its own, with this file's flags (-O2). srow holds one row of scores. */
__attribute__((noinline)) static void naive_attention(const float *q, const float *k, const float *v, float *o,
                                                      float *lse, int batch, int heads_q, int heads_kv, int seq_q,
                                                      int seq_k, int d, int causal, float scale, float *srow) {
  const int group = heads_q / heads_kv;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads_q; ++h) {
      const float *kh = k + ((size_t)b * heads_kv + h / group) * seq_k * d;
      const float *vh = v + ((size_t)b * heads_kv + h / group) * seq_k * d;
      for (int i = 0; i < seq_q; ++i) {
        const size_t row = ((size_t)b * heads_q + h) * seq_q + i;
        const float *qi = q + row * d;
        float *oi = o + row * d;
        int n = causal ? i + seq_k - seq_q + 1 : seq_k; /* visible keys: j < n */
        n = n < 0 ? 0 : n > seq_k ? seq_k : n;
        float m = -INFINITY;
        for (int j = 0; j < n; ++j) {
          float s = 0.0f;
          for (int c = 0; c < d; ++c)
            s += qi[c] * kh[(size_t)j * d + c];
          srow[j] = s * scale;
          m = srow[j] > m ? srow[j] : m;
        }
        float sum = 0.0f;
        for (int j = 0; j < n; ++j) {
          srow[j] = expf(srow[j] - m);
          sum += srow[j];
        }
        for (int c = 0; c < d; ++c)
          oi[c] = 0.0f;
        for (int j = 0; j < n; ++j)
          for (int c = 0; c < d; ++c)
            oi[c] += srow[j] * vh[(size_t)j * d + c];
        const float inv = n > 0 ? 1.0f / sum : 0.0f;
        for (int c = 0; c < d; ++c)
          oi[c] *= inv;
        lse[row] = n > 0 ? m + logf(sum) : -INFINITY;
      }
    }
}

/* ---- inputs ------------------------------------------------------------------------------------------------- */

/* Uniform in [-1, 1) from a hash of (index, tensor). */
static float input_value(unsigned long long i, unsigned t) {
  unsigned long long h = (i + 0x632BE59BD9B4E019ull * (t + 1)) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (float)(h >> 40) / 8388608.0f - 1.0f;
}

typedef struct shape {
  int batch, heads, seq, d, causal;
} shape;

typedef struct bench_ctx {
  shape s;
  /* naive: f32 copies of the bf16-rounded inputs */
  float *fq, *fk, *fv, *fo, *flse, *srow;
  /* kbd: bf16 tensors in kbd_malloc memory */
  attn_args a;
  int impl; /* 0 = naive, 1 = kbd */
  int failed;
} bench_ctx;

static void run_once(void *c_) {
  bench_ctx *c = (bench_ctx *)c_;
  if (c->impl == 0) {
    naive_attention(c->fq, c->fk, c->fv, c->fo, c->flse, c->s.batch, c->s.heads, c->s.heads, c->s.seq, c->s.seq, c->s.d,
                    c->s.causal, 1.0f / sqrtf((float)c->s.d), c->srow);
    return;
  }
  const kbd_status st = attn_run(&c->a);
  if (!kbd_ok(st)) {
    if (!c->failed) fprintf(stderr, "attention_cpu: attn_run failed: %s\n", st.msg);
    c->failed = 1;
  }
}

typedef bench_result result;

/* t > 0: KBD_CPU_THREADS=t; t == 0: unset (kbd's default, one host thread per online core). */
static void set_kbd_threads(int t) {
  if (t <= 0) {
    unsetenv("KBD_CPU_THREADS");
    return;
  }
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("KBD_CPU_THREADS", buf, 1);
}

/* Multiply-adds of S = Q K^T and O = P V over the visible keys (see the header comment). */
static double shape_macs(const shape *s) {
  double pairs = 0.0;
  for (int i = 0; i < s->seq; ++i)
    pairs += s->causal ? (double)(i + 1) : (double)s->seq;
  return 2.0 * (double)s->d * pairs * (double)s->batch * (double)s->heads;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--seqs LIST] [--hdims LIST] [--batch B] [--heads H] [--causal LIST] [--threads LIST|default] "
          "[--reps R] [--min-sample-ms MS] [--smoke]\n",
          argv0);
}

int main(int argc, char **argv) {
  long long seqs[MAX_LIST] = {256, 512, 1024}, hdims[MAX_LIST] = {64, 128}, causals[2] = {0, 1};
  int nseqs = 3, nhdims = 2, ncausal = 2, batch = 1, heads = 2, reps = 5, smoke = 0;
  double min_sample_ms = 0.0;
  const char *threads_arg = "1,default";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--seqs") && i + 1 < argc) {
      nseqs = bench_parse_list(argv[++i], seqs, MAX_LIST);
      if (nseqs <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--hdims") && i + 1 < argc) {
      nhdims = bench_parse_list(argv[++i], hdims, MAX_LIST);
      if (nhdims <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--causal") && i + 1 < argc) {
      ++i;
      ncausal = 0;
      for (const char *p = argv[i]; *p; ++p) {
        if (*p == ',') continue;
        if ((*p != '0' && *p != '1') || ncausal == 2) return usage(argv[0]), 2;
        causals[ncausal++] = *p - '0';
      }
      if (ncausal == 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
      batch = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--heads") && i + 1 < argc) {
      heads = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads_arg = argv[++i];
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--min-sample-ms") && i + 1 < argc) {
      min_sample_ms = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (smoke) {
    seqs[0] = 100;
    nseqs = 1;
    hdims[0] = 64;
    nhdims = 1;
    batch = 1;
    heads = 2;
    reps = 1;
    min_sample_ms = 0.0;
    threads_arg = "default";
  }
  if (batch < 1 || heads < 1 || reps < 1) return usage(argv[0]), 2;
  for (int i = 0; i < nseqs; ++i)
    if (seqs[i] > (1 << 20)) return usage(argv[0]), 2;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long long tl[8];
  int nthreads = 0;
  {
    char *buf = bench_strdup(threads_arg);
    for (char *tok = strtok(buf, ","); tok && nthreads < 8; tok = strtok(NULL, ",")) {
      const long long v = !strcmp(tok, "default") || !strcmp(tok, "all") ? 0 : atoll(tok);
      if (v < 0 || v > 256 || (v == 0 && strcmp(tok, "default") && strcmp(tok, "all"))) return usage(argv[0]), 2;
      tl[nthreads++] = v;
    }
    if (nthreads == 0) return usage(argv[0]), 2;
  }

  printf("# attention_cpu: kbd CPU machine (emulating sm_%da) running examples/attention attn_run vs a naive C "
         "attention (f32, single-threaded, -O2); bf16 inputs; %ld cores online; loadavg %.2f\n",
         KBD_CPU_ARCH, cores, bench_loadavg());
  printf("# time per call: mean over `iters` calls, median and best of %d samples; ratio = kbd / naive (target <= "
         "%.1f)\n",
         reps, TARGET_RATIO);

  typedef struct row {
    shape s;
    int threads;
    result r[2];
  } row;
  row rows[MAX_LIST * MAX_LIST * 2 * 8];
  int nrows = 0, bad_total = 0;
  for (int hi = 0; hi < nhdims; ++hi)
    for (int si = 0; si < nseqs; ++si)
      for (int ci = 0; ci < ncausal; ++ci) {
        const shape s = {batch, heads, (int)seqs[si], (int)hdims[hi], (int)causals[ci]};
        const size_t n = (size_t)s.batch * s.heads * s.seq * s.d, nrow = (size_t)s.batch * s.heads * s.seq;
        float *fq = malloc(n * sizeof(float)), *fk = malloc(n * sizeof(float)), *fv = malloc(n * sizeof(float));
        float *fo = malloc(n * sizeof(float)), *flse = malloc(nrow * sizeof(float));
        float *srow = malloc((size_t)s.seq * sizeof(float)), *klse = malloc(nrow * sizeof(float));
        kbd_bf16 *hq = malloc(n * sizeof(kbd_bf16)), *hk = malloc(n * sizeof(kbd_bf16));
        kbd_bf16 *hv = malloc(n * sizeof(kbd_bf16)), *ho = malloc(n * sizeof(kbd_bf16));
        if (!fq || !fk || !fv || !fo || !flse || !srow || !klse || !hq || !hk || !hv || !ho) abort();
        for (size_t i = 0; i < n; ++i) {
          hq[i] = kbd_f32_to_bf16(input_value(i, 0));
          hk[i] = kbd_f32_to_bf16(input_value(i, 1));
          hv[i] = kbd_f32_to_bf16(input_value(i, 2));
          fq[i] = kbd_bf16_to_f32(hq[i]);
          fk[i] = kbd_bf16_to_f32(hk[i]);
          fv[i] = kbd_bf16_to_f32(hv[i]);
        }
        void *dq, *dk, *dv, *dout;
        float *dlse;
        KBD_CHECK(kbd_malloc(&dq, n * 2));
        KBD_CHECK(kbd_malloc(&dk, n * 2));
        KBD_CHECK(kbd_malloc(&dv, n * 2));
        KBD_CHECK(kbd_malloc(&dout, n * 2));
        KBD_CHECK(kbd_malloc((void **)&dlse, nrow * sizeof(float)));
        KBD_CHECK(kbd_copy_to_device(dq, hq, n * 2)); /* kbd_malloc memory: marks the inputs written */
        KBD_CHECK(kbd_copy_to_device(dk, hk, n * 2));
        KBD_CHECK(kbd_copy_to_device(dv, hv, n * 2));
        bench_ctx x[2];
        memset(x, 0, sizeof x);
        for (int k = 0; k < 2; ++k) {
          x[k].s = s;
          x[k].fq = fq, x[k].fk = fk, x[k].fv = fv, x[k].fo = fo, x[k].flse = flse, x[k].srow = srow;
          x[k].impl = k;
          attn_args *a = &x[k].a;
          a->dtype = ATTN_BF16;
          a->batch = s.batch, a->heads_q = a->heads_kv = s.heads, a->seq_q = a->seq_k = s.seq, a->head_dim = s.d;
          a->causal = s.causal, a->scale = 0.0f, a->splits = 1;
          a->q = dq, a->k = dk, a->v = dv, a->o = dout, a->lse = dlse;
        }
        const double macs = shape_macs(&s);
        for (int ti = 0; ti < nthreads; ++ti) {
          row *w = &rows[nrows++];
          w->s = s;
          w->threads = (int)tl[ti];
          set_kbd_threads(w->threads);
          KBD_CHECK(kbd_memset_device(dout, 0xff, n * 2)); /* NaN: an element kbd does not write fails the check */
          bench_measure(run_once, x, sizeof *x, 2, reps, 1e-3 * min_sample_ms, 1ll << 20, w->r);
          KBD_CHECK(kbd_copy_to_host(ho, dout, n * 2));
          KBD_CHECK(kbd_copy_to_host(klse, dlse, nrow * sizeof(float)));
          /* tolerance as examples/attention/main.c: P and O rounded to bf16, |v| <= 1 */
          const double tol = 4.0 / 256.0;
          long long bad = 0;
          double worst = 0.0;
          for (size_t i = 0; i < n; ++i) {
            const double e = fabs((double)kbd_bf16_to_f32(ho[i]) - (double)fo[i]);
            if (!(e <= tol)) {
              if (bad < 3) fprintf(stderr, "attention_cpu: O[%zu] = %g, naive %g\n", i, kbd_bf16_to_f32(ho[i]), fo[i]);
              ++bad;
            } else if (e > worst) {
              worst = e;
            }
          }
          for (size_t i = 0; i < nrow; ++i)
            if (!(fabs((double)klse[i] - (double)flse[i]) <= 1e-4 + 1e-5 * fabs((double)flse[i]))) {
              if (bad < 3) fprintf(stderr, "attention_cpu: lse[%zu] = %.9g, naive %.9g\n", i, klse[i], flse[i]);
              ++bad;
            }
          const int ok = !bad && !x[1].failed;
          bad_total |= !ok;
          for (int k = 0; k < 2; ++k) {
            const result *r = &w->r[k];
            printf("BENCH bench=attention_cpu impl=%s arch=sm_%da threads=%s%d batch=%d heads=%d seq=%d head_dim=%d "
                   "causal=%d iters=%lld reps=%d best_s=%.9g median_s=%.9g median_gmacs=%.4f correct=%d\n",
                   k ? "kbd" : "naive", KBD_CPU_ARCH, k && w->threads == 0 ? "default:" : "",
                   k ? (w->threads ? w->threads : (int)cores) : 1, s.batch, s.heads, s.seq, s.d, s.causal, r->iters,
                   reps, r->best_s, r->median_s, macs / r->median_s * 1e-9, ok);
          }
          const double rm = w->r[1].median_s / w->r[0].median_s, rb = w->r[1].best_s / w->r[0].best_s;
          printf("RATIO bench=attention_cpu arch=sm_%da threads=%s%d batch=%d heads=%d seq=%d head_dim=%d causal=%d "
                 "kbd_over_naive_median=%.3f kbd_over_naive_best=%.3f worst_abs_err=%.3g target=%.1f met=%s\n",
                 KBD_CPU_ARCH, w->threads ? "" : "default:", w->threads ? w->threads : (int)cores, s.batch, s.heads,
                 s.seq, s.d, s.causal, rm, rb, worst, TARGET_RATIO, rm <= TARGET_RATIO ? "yes" : "no");
          fflush(stdout);
        }
        KBD_CHECK(kbd_free(dq));
        KBD_CHECK(kbd_free(dk));
        KBD_CHECK(kbd_free(dv));
        KBD_CHECK(kbd_free(dout));
        KBD_CHECK(kbd_free(dlse));
        free(fq), free(fk), free(fv), free(fo), free(flse), free(srow), free(klse);
        free(hq), free(hk), free(hv), free(ho);
      }

  printf("\n%5s %5s %6s %5s %6s %8s | %10s %9s | %10s %9s %7s\n", "batch", "heads", "seq", "hdim", "causal", "threads",
         "naive ms", "naive GMA", "kbd ms", "kbd GMA", "ratio");
  for (int i = 0; i < nrows; ++i) {
    const row *w = &rows[i];
    const double macs = shape_macs(&w->s);
    char th[24];
    if (w->threads)
      snprintf(th, sizeof th, "%d", w->threads);
    else
      snprintf(th, sizeof th, "dflt(%ld)", cores);
    printf("%5d %5d %6d %5d %6d %8s | %10.2f %9.3f | %10.2f %9.3f %7.2f\n", w->s.batch, w->s.heads, w->s.seq, w->s.d,
           w->s.causal, th, 1e3 * w->r[0].median_s, macs / w->r[0].median_s * 1e-9, 1e3 * w->r[1].median_s,
           macs / w->r[1].median_s * 1e-9, w->r[1].median_s / w->r[0].median_s);
  }
  printf("(ms: median per call; GMA = 1e9 multiply-adds/s of the two products; ratio = kbd / naive, target <= %.1f; "
         "naive is always 1 thread)\n",
         TARGET_RATIO);
  return bad_total;
}

#else  /* a GPU program of kbd_add_program(attention_bench): main() is in attention_gpu.c */
typedef int attention_cpu_bench_not_in_gpu_build;
#endif /* KBD_CPU */
