/* cpu_overhead.c - where the CPU machine's time goes for vector_add (a profiling aid for
 * docs/benchmarks.md; CPU mode only, built with -DKBD_CPU as `cpu_overhead`).
 *
 * Decomposes one vector_add launch into:
 *   plain     the plain loop c[i] = a[i] + b[i] (the baseline)
 *   empty     an empty 256-thread KBD_KERNEL on the same grid: launch + per-block + per-warp machinery
 *   raw       a 256-thread KBD_KERNEL doing vector_add's exact work split (warp w of block k adds elements
 *             1024k + 128w + [0, 128), lane l the 4 at 4l) with KBD_FOR_LANES over raw pointers: the
 *             machine's cost with a minimal body
 *   kbd       examples/vector_add/vector_add.cu (tiles: kbd_load, kbd_add, kbd_store)
 *   tile_fast the same tiles and kbd_add, loaded/stored by one 512-byte memcpy per warp and operand: what
 *             a ROW-layout fast path in kbd_tile_move would cost (a prototype; the library is unchanged)
 * and times the machine's building blocks in isolation, with the library's own functions:
 *   stack_pool   kbd_stack_pool_init (8 x 256 KiB stacks + guard pages) + a touch of each stack's top page
 *                + kbd_stack_pool_free: what every launch worker paid before the CPU machine cached block
 *                state across launches (a65822d); now paid once per cached block
 *   fiber        kbd_fiber_init + switch into the fiber + switch back (per warp per block)
 *   sysconf      sysconf(_SC_PAGESIZE), called by kbd_stack_pool_get for every warp of every block
 *   thread       pthread_create + pthread_join of an empty thread (a multi-threaded launch creates and
 *                joins KBD_CPU_THREADS workers)
 *
 *   cpu_overhead [--n LIST] [--threads T] [--reps R] [--min-sample-ms MS] [--smoke]
 *
 * Prints `OVERHEAD ...` lines (machine-readable) and a table. Nothing here changes the library.
 */
#define _DEFAULT_SOURCE 1
#include "../examples/vector_add/vector_add.cu" /* the kernel under test, compiled as C (-DKBD_CPU) */

#include <pthread.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_host.h"

#ifndef KBD_CPU
#error "cpu_overhead is a CPU-machine tool: build it with -DKBD_CPU"
#endif

typedef struct ov_params {
  const float *a, *b;
  float *c;
  long long n;
} ov_params;

KBD_KERNEL(ov_empty, 256, ov_params) {}

KBD_KERNEL(ov_raw, 256, ov_params) {
  const long long base = (long long)kbd_block_x() * 1024 + (long long)kbd_warp_id() * 128;
  KBD_FOR_LANES(l) {
    for (int j = 0; j < 4; ++j) {
      const long long i = base + 4 * l + j;
      if (i < p.n) p.c[i] = p.a[i] + p.b[i];
    }
  }
}

/* vector_add's tiles and kbd_add, with the loads/stores done the way a ROW-layout fast path in
 * kbd_tile_move could do them on the CPU when the whole tile is in bounds and 16-byte aligned: a warp's
 * 32 x 4 fragment of a 1 x 1024 CTA tile is the 128 consecutive floats at 1024*block + 128*warp, so one
 * 512-byte memcpy per operand. A prototype for docs/benchmarks.md's suggestion, not a library change. */
KBD_KERNEL(ov_tile_fast, 256, ov_params) {
  KBD_TILE(f32, 1, 1024, KBD_CTA) ta, tb, tc;
  KBD_STATIC_ASSERT(sizeof(ta.v) == 128 * sizeof(float), "one warp's fragment: 32 lanes x 4 floats");
  const long long start = (long long)kbd_block_x() * 1024;
  const long long off = start + (long long)kbd_warp_id() * 128;
  if (start + 1024 <= p.n) {
    memcpy(ta.v, p.a + off, sizeof ta.v);
    memcpy(tb.v, p.b + off, sizeof tb.v);
    kbd_add(tc, ta, tb);
    memcpy(p.c + off, tc.v, sizeof tc.v);
  } else {
    kbd_load(ta, p.a, p.n, start);
    kbd_load(tb, p.b, p.n, start);
    kbd_add(tc, ta, tb);
    kbd_store(p.c, tc, p.n, start);
  }
}

__attribute__((noinline)) static void ov_plain(const float *a, const float *b, float *c, long long n) {
  for (long long i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

enum { K_PLAIN, K_EMPTY, K_RAW, K_KBD, K_FAST, K_STACKS, K_FIBER, K_SYSCONF, K_THREAD, K_COUNT };
static const char *const k_name[K_COUNT] = {"plain",      "empty", "raw",     "kbd",   "tile_fast",
                                            "stack_pool", "fiber", "sysconf", "thread"};

typedef struct ov_ctx {
  int what;
  ov_params p;
  int failed;
} ov_ctx;

static volatile long ov_sink;
static kbd_stack_pool ov_pool;
static kbd_fiber ov_main_fiber, ov_fiber;

static void ov_fiber_fn(void *arg) {
  (void)arg;
  for (;;)
    kbd_fiber_switch(&ov_fiber, &ov_main_fiber);
}

static void *ov_thread_fn(void *arg) { return arg; }

static void ov_once(ov_ctx *x) {
  const kbd_launch_cfg cfg = kbd_cfg_1d(kbd_blocks_for((size_t)x->p.n, 1024));
  kbd_status s = kbd_status_ok();
  switch (x->what) {
  case K_PLAIN: ov_plain(x->p.a, x->p.b, x->p.c, x->p.n); break;
  case K_EMPTY: s = ov_empty(cfg, x->p); break;
  case K_RAW: s = ov_raw(cfg, x->p); break;
  case K_KBD: {
    vector_add_params q = {x->p.a, x->p.b, x->p.c, x->p.n};
    s = vector_add(cfg, q);
    break;
  }
  case K_FAST: s = ov_tile_fast(cfg, x->p); break;
  case K_STACKS: {
    kbd_stack_pool sp;
    if (!kbd_stack_pool_init(&sp, 8, KBD_CPU_DEFAULT_STACK)) {
      x->failed = 1;
      break;
    }
    for (size_t i = 0; i < 8; ++i)
      ((volatile char *)kbd_stack_pool_get(&sp, i))[sp.each - 64] = 1;
    kbd_stack_pool_free(&sp);
    break;
  }
  case K_FIBER:
    kbd_fiber_init(&ov_fiber, kbd_stack_pool_get(&ov_pool, 0), ov_pool.each, ov_fiber_fn, NULL);
    kbd_fiber_switch(&ov_main_fiber, &ov_fiber);
    break;
  case K_SYSCONF: ov_sink += sysconf(_SC_PAGESIZE); break;
  case K_THREAD: {
    pthread_t t;
    if (pthread_create(&t, NULL, ov_thread_fn, NULL) != 0) {
      x->failed = 1;
      break;
    }
    pthread_join(t, NULL);
    break;
  }
  }
  if (!kbd_ok(s)) x->failed = 1;
}

static void ov_measure(ov_ctx *x, int reps, double min_s, double *best, double *median, long long *iters_out) {
  double v[64];
  if (reps > 64) reps = 64;
  ov_once(x);
  long long iters = 1;
  for (;;) {
    double t0 = bench_now_s();
    for (long long i = 0; i < iters; ++i)
      ov_once(x);
    double dt = bench_now_s() - t0;
    if (dt >= min_s || iters >= (1ll << 30)) break;
    long long want = dt > 0 ? (long long)(iters * (1.2 * min_s / dt)) + 1 : iters * 10;
    iters = want > iters * 10 ? iters * 10 : (want > iters ? want : iters + 1);
  }
  for (int r = 0; r < reps; ++r) {
    double t0 = bench_now_s();
    for (long long i = 0; i < iters; ++i)
      ov_once(x);
    v[r] = (bench_now_s() - t0) / (double)iters;
  }
  *best = bench_min(v, reps);
  *median = bench_median(v, reps);
  *iters_out = iters;
}

int main(int argc, char **argv) {
  long long sizes[16] = {1024, 1ll << 16, 1ll << 20, 1ll << 24};
  int nsizes = 4, reps = 7, threads = 1, smoke = 0;
  double min_ms = 50.0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      nsizes = bench_parse_list(argv[++i], sizes, 16);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-sample-ms") && i + 1 < argc)
      min_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--smoke"))
      smoke = 1;
    else
      nsizes = -1;
    if (nsizes <= 0) {
      fprintf(stderr, "usage: %s [--n LIST] [--threads T] [--reps R] [--min-sample-ms MS] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (threads < 1) threads = 1;
  if (smoke) sizes[0] = 3001, nsizes = 1, reps = 1, min_ms = 0.0;
  char tb[16];
  snprintf(tb, sizeof tb, "%d", threads);
  setenv("KBD_CPU_THREADS", tb, 1);

  long long nmax = 0;
  for (int i = 0; i < nsizes; ++i)
    nmax = sizes[i] > nmax ? sizes[i] : nmax;
  float *a, *b, *c;
  a = bench_host_alloc((size_t)nmax * sizeof(float));
  b = bench_host_alloc((size_t)nmax * sizeof(float));
  c = bench_host_alloc((size_t)nmax * sizeof(float));
  for (long long i = 0; i < nmax; ++i)
    a[i] = (float)(i % 1000), b[i] = 0.25f * (float)(i % 7), c[i] = 0.0f;
  if (!kbd_stack_pool_init(&ov_pool, 1, KBD_CPU_DEFAULT_STACK)) return 1;

  printf("# cpu_overhead: KBD_CPU_THREADS=%d, loadavg %.2f; per-call times, best and median of %d samples\n", threads,
         bench_loadavg(), reps);
  int bad = 0;
  /* the building blocks, size-independent */
  for (int k = K_STACKS; k <= K_THREAD; ++k) {
    ov_ctx x = {k, {a, b, c, 1}, 0};
    double best, med;
    long long it;
    ov_measure(&x, reps, 1e-3 * min_ms, &best, &med, &it);
    bad |= x.failed;
    printf("OVERHEAD what=%s iters=%lld best_ns=%.1f median_ns=%.1f\n", k_name[k], it, 1e9 * best, 1e9 * med);
  }
  double meds[16][K_FAST + 1];
  for (int si = 0; si < nsizes; ++si) {
    const long long n = sizes[si];
    double *med = meds[si], best[K_FAST + 1];
    for (int k = K_PLAIN; k <= K_FAST; ++k) {
      ov_ctx x = {k, {a, b, c, n}, 0};
      long long it;
      memset(c, 0, (size_t)n * sizeof(float));
      ov_measure(&x, reps, 1e-3 * min_ms, &best[k], &med[k], &it);
      if (k != K_EMPTY)
        for (long long i = 0; i < n; ++i)
          if (c[i] != a[i] + b[i]) {
            x.failed = 1;
            break;
          }
      if (x.failed) fprintf(stderr, "cpu_overhead: %s n=%lld failed\n", k_name[k], n);
      bad |= x.failed;
      printf("OVERHEAD what=%s threads=%d n=%lld iters=%lld best_us=%.3f median_us=%.3f median_ns_per_elem=%.4f\n",
             k_name[k], threads, n, it, 1e6 * best[k], 1e6 * med[k], 1e9 * med[k] / (double)n);
    }
    fflush(stdout);
  }
  printf("\n%10s %7s | %10s %10s %10s %10s %10s | %9s %9s %9s | %8s %8s\n", "n", "blocks", "plain us", "empty us",
         "raw us", "kbd us", "fast us", "empty/blk", "raw-empty", "kbd-raw", "kbd/pln", "fast/pln");
  for (int si = 0; si < nsizes; ++si) {
    const double *med = meds[si];
    const double blocks = (double)kbd_blocks_for((size_t)sizes[si], 1024);
    printf("%10lld %7.0f | %10.2f %10.2f %10.2f %10.2f %10.2f | %9.3f %9.2f %9.2f | %8.2f %8.2f\n", sizes[si], blocks,
           1e6 * med[K_PLAIN], 1e6 * med[K_EMPTY], 1e6 * med[K_RAW], 1e6 * med[K_KBD], 1e6 * med[K_FAST],
           1e6 * med[K_EMPTY] / blocks, 1e6 * (med[K_RAW] - med[K_EMPTY]), 1e6 * (med[K_KBD] - med[K_RAW]),
           med[K_KBD] / med[K_PLAIN], med[K_FAST] / med[K_PLAIN]);
  }
  printf("(us per launch, median; empty/blk = empty-kernel time per block; raw-empty = minimal body; kbd-raw = the "
         "tile layer's extra cost; fast = tiles with a 512-byte-memcpy load/store, the suggested fast path)\n");
  kbd_stack_pool_free(&ov_pool);
  bench_host_free(a);
  bench_host_free(b);
  bench_host_free(c);
  return bad;
}
