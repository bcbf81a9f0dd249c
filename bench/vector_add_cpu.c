/* vector_add_cpu.c - CPU-machine throughput of examples/vector_add versus a plain C loop.
 *
 * Built by kbd_add_program(vector_add_bench ...) in bench/CMakeLists.txt as `vector_add_cpu` (the
 * -DKBD_CPU program); in the GPU programs of the same kbd_add_program this file is empty and
 * vector_add_gpu.c provides main().
 *
 *   vector_add_cpu [--n LIST] [--threads LIST] [--reps R] [--min-sample-ms MS] [--impl I] [--mem M] [--smoke]
 *
 *   --n        sizes, e.g. 2^16,2^20,2^24 (default) or 65536,1m
 *   --threads  host threads, e.g. 1,all (default); kbd gets them through KBD_CPU_THREADS, the plain
 *              loop splits the range over that many pthreads created per call (as kbd does per launch)
 *   --reps     samples per measurement (default 7); a sample repeats the call until it lasts at least
 *              --min-sample-ms (default 50) and gives the mean time per call; plain and kbd samples
 *              alternate, so load changes on a shared machine hit both alike
 *   --impl     plain, kbd or both (default); one alone is for profiling (perf, callgrind) and prints
 *              no RATIO line
 *   --mem      host (default): the arrays are host memory registered for kernels (kbd_host_register),
 *              so the machine checks bounds only; device: kbd_malloc'ed arrays filled by kbd_copy_to_device,
 *              so every kernel access also checks (loads) or sets (stores) the per-byte written state
 *   --smoke    one tiny size (n = 3001, a masked tail), one sample, correctness only: the CTest entry
 *
 * Both paths touch the same three arrays; traffic is counted as 12 bytes per element
 * (read a, read b, write c). Prints one `BENCH ...` line per measurement, one `RATIO ...` line per
 * (n, threads) and a table. Exit 0 when every result was correct, 1 otherwise (never on timings).
 */
#ifdef KBD_CPU

#define _DEFAULT_SOURCE 1 /* setenv, clock_gettime, sysconf under -std=c11 */
#include <pthread.h>
#include <unistd.h>

#include "vector_add.h" /* examples/vector_add: KBD_KERNEL_DECL(vector_add, vector_add_params) */

#include "bench_host.h"
#include "bench_util.h"

#define MAX_SIZES 16
#define MAX_THREADS 256
#define TARGET_RATIO 3.0 /* the target: kbd within 3x of the plain loop */

/* ---- the baseline: c[i] = a[i] + b[i] ------------------------------------------------------------------ */

/* noinline so that the loop is compiled once, on its own, with the same flags as the kbd kernel. */
__attribute__((noinline)) static void plain_add(const float *a, const float *b, float *c, long long n) {
  for (long long i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

typedef struct plain_job {
  const float *a, *b;
  float *c;
  long long lo, hi;
} plain_job;

static void *plain_worker(void *arg) {
  const plain_job *j = (const plain_job *)arg;
  plain_add(j->a + j->lo, j->b + j->lo, j->c + j->lo, j->hi - j->lo);
  return NULL;
}

/* Split [0, n) into `threads` contiguous chunks; threads are created per call, like a kbd launch. */
static void plain_run(const float *a, const float *b, float *c, long long n, int threads) {
  if (threads <= 1) {
    plain_add(a, b, c, n);
    return;
  }
  pthread_t tid[MAX_THREADS];
  plain_job job[MAX_THREADS];
  int started = 0;
  for (int t = 0; t < threads; ++t) {
    job[t].a = a;
    job[t].b = b;
    job[t].c = c;
    job[t].lo = n * t / threads;
    job[t].hi = n * (t + 1) / threads;
  }
  for (int t = 1; t < threads; ++t)
    if (pthread_create(&tid[t], NULL, plain_worker, &job[t]) == 0)
      started = t;
    else
      break;
  plain_worker(&job[0]);
  for (int t = started + 1; t < threads; ++t)
    plain_worker(&job[t]); /* any that failed to start */
  for (int t = 1; t <= started; ++t)
    pthread_join(tid[t], NULL);
}

/* ---- the kbd path ---------------------------------------------------------------------------------------- */

typedef struct bench_ctx {
  float *a, *b, *c;
  long long n;
  int threads;
  int impl; /* 0 = plain, 1 = kbd */
  int failed;
} bench_ctx;

static void run_once(void *x_) {
  bench_ctx *x = (bench_ctx *)x_;
  if (x->impl == 0) {
    plain_run(x->a, x->b, x->c, x->n, x->threads);
    return;
  }
  vector_add_params p = {x->a, x->b, x->c, x->n};
  kbd_status s = vector_add(kbd_cfg_1d(kbd_blocks_for((size_t)x->n, VECTOR_ADD_TILE)), p);
  if (!kbd_ok(s)) {
    if (!x->failed) fprintf(stderr, "vector_add_cpu: launch failed: %s\n", s.msg);
    x->failed = 1;
  }
}

static long long check(const bench_ctx *x) {
  long long bad = 0;
  for (long long i = 0; i < x->n; ++i)
    if (x->c[i] != x->a[i] + x->b[i]) ++bad;
  return bad;
}

typedef bench_result result;

static void set_kbd_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("KBD_CPU_THREADS", buf, 1);
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--n LIST] [--threads LIST|all] [--reps R] [--min-sample-ms MS] [--impl plain|kbd|both] "
          "[--mem host|device] [--smoke]\n",
          argv0);
}

int main(int argc, char **argv) {
  long long sizes[MAX_SIZES] = {1ll << 16, 1ll << 20, 1ll << 24};
  int nsizes = 3;
  int reps = 7;
  double min_sample_ms = 50.0;
  int smoke = 0;
  const char *threads_arg = "1,all";
  int impl_lo = 0, impl_hi = 1;
  int mem_device = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      nsizes = bench_parse_list(argv[++i], sizes, MAX_SIZES);
      if (nsizes <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads_arg = argv[++i];
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--min-sample-ms") && i + 1 < argc) {
      min_sample_ms = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
      ++i;
      if (!strcmp(argv[i], "plain"))
        impl_lo = impl_hi = 0;
      else if (!strcmp(argv[i], "kbd"))
        impl_lo = impl_hi = 1;
      else if (strcmp(argv[i], "both"))
        return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
      ++i;
      if (!strcmp(argv[i], "device"))
        mem_device = 1;
      else if (strcmp(argv[i], "host"))
        return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (reps < 1) reps = 1;
  const long cores_l = sysconf(_SC_NPROCESSORS_ONLN);
  const int cores = cores_l > 0 ? (cores_l > MAX_THREADS ? MAX_THREADS : (int)cores_l) : 1;
  long long tl[8];
  int nthreads = 0;
  {
    /* "all" -> the online core count, the default of KBD_CPU_THREADS */
    char *buf = bench_strdup(threads_arg);
    for (char *tok = strtok(buf, ","); tok && nthreads < 8; tok = strtok(NULL, ",")) {
      long long v = !strcmp(tok, "all") ? cores : atoll(tok);
      if (v < 1 || v > MAX_THREADS) return usage(argv[0]), 2;
      tl[nthreads++] = v;
    }
    if (nthreads == 0) return usage(argv[0]), 2;
  }
  if (smoke) {
    sizes[0] = 3001;
    nsizes = 1;
    reps = 1;
    min_sample_ms = 0.0;
  }

  long long nmax = 0;
  for (int i = 0; i < nsizes; ++i)
    nmax = sizes[i] > nmax ? sizes[i] : nmax;
  const size_t bytes = (size_t)nmax * sizeof(float);
  float *a, *b, *c;
  if (mem_device) { /* on the CPU machine kbd_malloc memory is host memory: the plain loop uses it directly */
    KBD_CHECK(kbd_malloc((void **)&a, bytes));
    KBD_CHECK(kbd_malloc((void **)&b, bytes));
    KBD_CHECK(kbd_malloc((void **)&c, bytes));
  } else {
    a = bench_host_alloc(bytes);
    b = bench_host_alloc(bytes);
    c = bench_host_alloc(bytes);
  }
  {
    float *ha = (float *)malloc(bytes ? bytes : 1), *hb = (float *)malloc(bytes ? bytes : 1);
    if (!ha || !hb) abort();
    for (long long i = 0; i < nmax; ++i) {
      ha[i] = (float)(i % 1000) * 0.5f;
      hb[i] = 1.0f / (float)(1 + i % 7);
    }
    KBD_CHECK(kbd_copy_to_device(a, ha, bytes)); /* kbd_malloc memory: marks the inputs written */
    KBD_CHECK(kbd_copy_to_device(b, hb, bytes));
    KBD_CHECK(kbd_memset_device(c, 0, bytes));
    free(ha);
    free(hb);
  }

  printf("# vector_add_cpu: kbd CPU machine (examples/vector_add/vector_add.cu, %d-thread blocks of %d floats) "
         "vs plain loop; %s memory; %d cores online; loadavg %.2f\n",
         VECTOR_ADD_THREADS, VECTOR_ADD_TILE, mem_device ? "kbd_malloc (device)" : "registered host", cores,
         bench_loadavg());
  printf("# GB/s counts 12 bytes/element; time per call = mean over `iters` calls, best and median of %d samples\n",
         reps);

  typedef struct row {
    long long n;
    int threads;
    result r[2];
  } row;
  row rows[MAX_SIZES * 8];
  int nrows = 0, bad_total = 0;
  for (int si = 0; si < nsizes; ++si) {
    for (int ti = 0; ti < nthreads; ++ti) {
      row *w = &rows[nrows++];
      w->n = sizes[si];
      w->threads = (int)tl[ti];
      memset(w->r, 0, sizeof w->r);
      bench_ctx x[2];
      result res[2];
      const int m = impl_hi - impl_lo + 1;
      for (int k = 0; k < m; ++k) {
        bench_ctx init = {a, b, c, sizes[si], (int)tl[ti], impl_lo + k, 0};
        x[k] = init;
      }
      set_kbd_threads((int)tl[ti]);
      bench_measure(run_once, x, sizeof *x, m, reps, 1e-3 * min_sample_ms, 1ll << 30, res);
      for (int k = 0; k < m; ++k) {
        /* correctness: one more call on a cleared output */
        const int impl = x[k].impl;
        KBD_CHECK(kbd_memset_device(c, 0, (size_t)x[k].n * sizeof(float)));
        run_once(&x[k]);
        const long long bad = check(&x[k]);
        if (bad || x[k].failed) {
          fprintf(stderr, "vector_add_cpu: %s n=%lld threads=%d: %lld mismatches%s\n", impl ? "kbd" : "plain", x[k].n,
                  x[k].threads, bad, x[k].failed ? " (launch failed)" : "");
          bad_total = 1;
        }
        const result r = res[k];
        w->r[impl] = r;
        const double nn = (double)x[k].n;
        printf("BENCH bench=vector_add_cpu impl=%s threads=%d n=%lld iters=%lld reps=%d best_s=%.9g median_s=%.9g "
               "best_ns_per_elem=%.4f median_ns_per_elem=%.4f best_gbs=%.3f median_gbs=%.3f correct=%d\n",
               impl ? "kbd" : "plain", x[k].threads, x[k].n, r.iters, r.reps, r.best_s, r.median_s, 1e9 * r.best_s / nn,
               1e9 * r.median_s / nn, 12.0 * nn / r.best_s * 1e-9, 12.0 * nn / r.median_s * 1e-9,
               !(bad || x[k].failed));
        fflush(stdout);
      }
      if (impl_lo != 0 || impl_hi != 1) continue;
      const double rm = w->r[1].median_s / w->r[0].median_s, rb = w->r[1].best_s / w->r[0].best_s;
      printf("RATIO bench=vector_add_cpu threads=%d n=%lld kbd_over_plain_median=%.3f kbd_over_plain_best=%.3f "
             "target=%.1f met=%s\n",
             w->threads, w->n, rm, rb, TARGET_RATIO, rm <= TARGET_RATIO ? "yes" : "no");
      fflush(stdout);
    }
  }

  const int both = impl_lo == 0 && impl_hi == 1;
  if (both)
    printf("\n%10s %7s | %12s %10s | %12s %10s | %9s %9s\n", "n", "threads", "plain ns/el", "plain GB/s", "kbd ns/el",
           "kbd GB/s", "ratio med", "ratio best");
  else
    printf("\n%10s %7s |\n", "n", "threads");
  for (int i = 0; i < nrows; ++i) {
    const row *w = &rows[i];
    const double nn = (double)w->n;
    if (!both) { /* one implementation only */
      const result *r = &w->r[impl_lo];
      printf("%10lld %7d | %s %.3f ns/el %.2f GB/s (median)\n", w->n, w->threads, impl_lo ? "kbd" : "plain",
             1e9 * r->median_s / nn, 12.0 * nn / r->median_s * 1e-9);
      continue;
    }
    printf("%10lld %7d | %12.3f %10.2f | %12.3f %10.2f | %9.2f %9.2f\n", w->n, w->threads, 1e9 * w->r[0].median_s / nn,
           12.0 * nn / w->r[0].median_s * 1e-9, 1e9 * w->r[1].median_s / nn, 12.0 * nn / w->r[1].median_s * 1e-9,
           w->r[1].median_s / w->r[0].median_s, w->r[1].best_s / w->r[0].best_s);
  }
  if (both) printf("(ns/el and GB/s: median; ratio = kbd time / plain time; target <= %.1f)\n", TARGET_RATIO);

  if (mem_device) {
    KBD_CHECK(kbd_free(a));
    KBD_CHECK(kbd_free(b));
    KBD_CHECK(kbd_free(c));
  } else {
    bench_host_free(a);
    bench_host_free(b);
    bench_host_free(c);
  }
  return bad_total;
}

#else  /* a GPU program of kbd_add_program(vector_add_bench): main() is in vector_add_gpu.c */
typedef int vector_add_cpu_bench_not_in_gpu_build;
#endif /* KBD_CPU */
