/* tma_copy_cpu.c - CPU-machine throughput of examples/tma_copy (y = x through a TMA ring) versus memcpy.
 *
 * Built by kbd_add_program(tma_copy_bench ...) and (tma_copy_f32_bench ...) in bench/CMakeLists.txt as
 * `tma_copy_cpu` (bf16 tiles) and `tma_copy_f32_cpu` (f32 tiles): the -DKBD_CPU programs. In their GPU
 * programs this file is empty and tma_copy_gpu.c provides main().
 *
 *   tma_copy_cpu [--bytes LIST] [--cols C] [--threads LIST] [--reps R] [--min-sample-ms MS] [--grid G]
 *                [--mem M] [--smoke]
 *
 *   --bytes    bytes per matrix, e.g. 1m,4m,16m (default); the matrix is rows x C with rows = bytes / row
 *   --cols     elements per row (default: 16 KiB rows, 8192 bf16 / 4096 f32; a multiple of 16 bytes)
 *   --threads  host threads for the kbd launches (KBD_CPU_THREADS), e.g. 1,all (default)
 *   --reps     samples per measurement (default 7); a sample repeats the call until it lasts at least
 *              --min-sample-ms (default 50) and gives the mean time per call; kbd and memcpy samples
 *              alternate, so load changes on a shared machine hit both alike
 *   --grid     blocks per launch (default: min(tiles, 132), as examples/tma_copy runs)
 *   --mem      device (default): kbd_malloc'ed matrices (every TMA access checks or sets the written
 *              state, as in the example); host: host memory registered with kbd_host_register (bounds only)
 *   --smoke    one small matrix (129 x 200 or so), one sample, correctness only: the CTest entry
 *
 * The baseline is one memcpy(y, x, bytes) on the calling thread, whatever --threads says, over the same two
 * buffers. Traffic counts 2 bytes per byte copied (read x, write y) on both sides. Prints one `BENCH ...`
 * line per measurement, one `RATIO ...` line per (size, threads) and a table. Exit 0 when every copy was
 * bit-exact, 1 otherwise (never on timings).
 */
#ifdef KBD_CPU

#define _DEFAULT_SOURCE 1 /* setenv, clock_gettime, sysconf under -std=c11 */
#include <unistd.h>

#include "tma_copy.h" /* examples/tma_copy: tc_copy, tc_layout, tc_map_desc */

#include "bench_host.h"
#include "bench_util.h"

#define MAX_SIZES 16
#define MAX_THREADS 256

typedef struct bench_ctx {
  tc_elem *x, *y;
  long long rows, cols;
  size_t bytes;
  unsigned grid;
  size_t smem;
  tc_params p;
  int impl; /* 0 = memcpy, 1 = kbd */
  int failed;
} bench_ctx;

static void run_once(void *c_) {
  bench_ctx *c = (bench_ctx *)c_;
  if (c->impl == 0) {
    memcpy(c->y, c->x, c->bytes);
    return;
  }
  const kbd_status s = tc_copy(kbd_cfg(kbd_dim(c->grid, 1, 1), c->smem, NULL), c->p);
  if (!kbd_ok(s)) {
    if (!c->failed) fprintf(stderr, "tma_copy_cpu: launch failed: %s\n", s.msg);
    c->failed = 1;
  }
}

typedef bench_result result;

static void set_kbd_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("KBD_CPU_THREADS", buf, 1);
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--bytes LIST] [--cols C] [--threads LIST|all] [--reps R] [--min-sample-ms MS] [--grid G] "
          "[--mem device|host] [--smoke]\n",
          argv0);
}

int main(int argc, char **argv) {
  long long sizes[MAX_SIZES] = {1ll << 20, 1ll << 22, 1ll << 24};
  int nsizes = 3, reps = 7, smoke = 0, mem_host = 0;
  long long cols = 16384 / (long long)sizeof(tc_elem), grid_arg = 0;
  double min_sample_ms = 50.0;
  const char *threads_arg = "1,all";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
      nsizes = bench_parse_list(argv[++i], sizes, MAX_SIZES);
      if (nsizes <= 0) return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--cols") && i + 1 < argc) {
      cols = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads_arg = argv[++i];
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--min-sample-ms") && i + 1 < argc) {
      min_sample_ms = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--grid") && i + 1 < argc) {
      grid_arg = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
      ++i;
      if (!strcmp(argv[i], "host"))
        mem_host = 1;
      else if (strcmp(argv[i], "device"))
        return usage(argv[0]), 2;
    } else if (!strcmp(argv[i], "--smoke")) {
      smoke = 1;
    } else {
      return usage(argv[0]), 2;
    }
  }
  if (smoke) { /* 129 rows of 200 elements: edge tiles on both sides */
    cols = 200;
    sizes[0] = 129 * 200 * (long long)sizeof(tc_elem);
    nsizes = 1;
    reps = 1;
    min_sample_ms = 0.0;
  }
  const long long row_bytes = cols * (long long)sizeof(tc_elem);
  if (cols < 1 || cols > INT32_MAX || row_bytes % 16 || reps < 1 || grid_arg < 0 || grid_arg > INT32_MAX) {
    fprintf(stderr, "tma_copy_cpu: --cols must make a row a multiple of 16 bytes, --reps >= 1, --grid >= 1\n");
    return 2;
  }
  const long cores_l = sysconf(_SC_NPROCESSORS_ONLN);
  const int cores = cores_l > 0 ? (cores_l > MAX_THREADS ? MAX_THREADS : (int)cores_l) : 1;
  long long tl[8];
  int nthreads = 0;
  {
    char *buf = bench_strdup(threads_arg);
    for (char *tok = strtok(buf, ","); tok && nthreads < 8; tok = strtok(NULL, ",")) {
      const long long v = !strcmp(tok, "all") ? cores : atoll(tok);
      if (v < 1 || v > MAX_THREADS) return usage(argv[0]), 2;
      tl[nthreads++] = v;
    }
    if (nthreads == 0) return usage(argv[0]), 2;
  }

  long long rows_max = 0;
  for (int i = 0; i < nsizes; ++i) {
    const long long r = sizes[i] / row_bytes;
    if (r < 1 || r > INT32_MAX) {
      fprintf(stderr, "tma_copy_cpu: %lld bytes is not 1 to 2^31-1 rows of %lld bytes\n", sizes[i], row_bytes);
      return 2;
    }
    rows_max = r > rows_max ? r : rows_max;
  }
  const size_t bytes_max = (size_t)(rows_max * row_bytes);
  tc_elem *x, *y;
  if (mem_host) {
    x = (tc_elem *)bench_host_alloc(bytes_max);
    y = (tc_elem *)bench_host_alloc(bytes_max);
  } else {
    KBD_CHECK(kbd_malloc((void **)&x, bytes_max));
    KBD_CHECK(kbd_malloc((void **)&y, bytes_max));
  }
  {
    unsigned char *h = (unsigned char *)malloc(bytes_max);
    if (!h) abort();
    for (size_t i = 0; i < bytes_max; ++i)
      h[i] = (unsigned char)((i * 2654435761u) >> 13);
    KBD_CHECK(kbd_copy_to_device(x, h, bytes_max)); /* kbd_malloc memory: marks x written */
    KBD_CHECK(kbd_memset_device(y, 0, bytes_max));
    free(h);
  }
  tc_smem l;
  const kbd_smem_plan plan = tc_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));

  printf("# tma_copy_cpu: kbd CPU machine running examples/tma_copy/tma_copy.cu (%s, %d x %d tiles, %d-stage ring, "
         "%d consumer warps) vs memcpy on the calling thread; %s memory; %d cores online; loadavg %.2f\n",
         TC_NAME, TC_ROWS, TC_COLS, TC_STAGES, TC_CONSUMERS, mem_host ? "registered host" : "kbd_malloc (device)",
         cores, bench_loadavg());
  printf("# GB/s counts bytes read + written (2 x matrix bytes); time per call = mean over `iters` calls, best and "
         "median of %d samples\n",
         reps);

  typedef struct row {
    long long bytes, rows;
    int threads;
    unsigned grid;
    result r[2];
  } row;
  row rowsv[MAX_SIZES * 8];
  int nrows = 0, bad_total = 0;
  for (int si = 0; si < nsizes; ++si) {
    const long long rows = sizes[si] / row_bytes;
    const size_t bytes = (size_t)(rows * row_bytes);
    const long long tiles = tc_tiles(rows, cols);
    const unsigned grid = (unsigned)(grid_arg ? grid_arg : tiles < 132 ? tiles : 132);
    tc_params p;
    kbd_tensor_map_desc d = tc_map_desc(x, rows, cols);
    KBD_CHECK(kbd_tensor_map_encode(&p.x, &d));
    d = tc_map_desc(y, rows, cols);
    KBD_CHECK(kbd_tensor_map_encode(&p.y, &d));
    p.rows = rows;
    p.cols = cols;
    for (int ti = 0; ti < nthreads; ++ti) {
      row *w = &rowsv[nrows++];
      w->bytes = (long long)bytes;
      w->rows = rows;
      w->threads = (int)tl[ti];
      w->grid = grid;
      bench_ctx c[2];
      for (int k = 0; k < 2; ++k) {
        c[k].x = x;
        c[k].y = y;
        c[k].rows = rows;
        c[k].cols = cols;
        c[k].bytes = bytes;
        c[k].grid = grid;
        c[k].smem = plan.bytes;
        c[k].p = p;
        c[k].impl = k;
        c[k].failed = 0;
      }
      set_kbd_threads(w->threads);
      bench_measure(run_once, c, sizeof *c, 2, reps, 1e-3 * min_sample_ms, 1ll << 30, w->r);
      for (int k = 0; k < 2; ++k) { /* correctness: one more call on a cleared output */
        KBD_CHECK(kbd_memset_device(y, 0, bytes));
        run_once(&c[k]);
        const int ok = !c[k].failed && !memcmp(x, y, bytes);
        if (!ok) {
          fprintf(stderr, "tma_copy_cpu: %s %lld x %lld threads=%d: y differs from x%s\n", k ? "kbd" : "memcpy", rows,
                  cols, w->threads, c[k].failed ? " (launch failed)" : "");
          bad_total = 1;
        }
        const result r = w->r[k];
        printf("BENCH bench=tma_copy_cpu dtype=%s impl=%s threads=%d bytes=%zu rows=%lld cols=%lld grid=%u iters=%lld "
               "reps=%d best_s=%.9g median_s=%.9g best_gbs=%.3f median_gbs=%.3f correct=%d\n",
               TC_NAME, k ? "kbd" : "memcpy", w->threads, bytes, rows, cols, grid, r.iters, reps, r.best_s, r.median_s,
               2.0 * (double)bytes / r.best_s * 1e-9, 2.0 * (double)bytes / r.median_s * 1e-9, ok);
      }
      printf("RATIO bench=tma_copy_cpu dtype=%s threads=%d bytes=%zu kbd_over_memcpy_median=%.3f "
             "kbd_over_memcpy_best=%.3f\n",
             TC_NAME, w->threads, bytes, w->r[1].median_s / w->r[0].median_s, w->r[1].best_s / w->r[0].best_s);
      fflush(stdout);
    }
  }

  printf("\n%11s %7s %6s | %11s %11s | %11s %11s | %9s\n", "bytes", "threads", "grid", "memcpy ms", "memcpy GB/s",
         "kbd ms", "kbd GB/s", "kbd/memcpy");
  for (int i = 0; i < nrows; ++i) {
    const row *w = &rowsv[i];
    const double b2 = 2.0 * (double)w->bytes;
    printf("%11lld %7d %6u | %11.3f %11.2f | %11.3f %11.2f | %9.1f\n", w->bytes, w->threads, w->grid,
           1e3 * w->r[0].median_s, b2 / w->r[0].median_s * 1e-9, 1e3 * w->r[1].median_s, b2 / w->r[1].median_s * 1e-9,
           w->r[1].median_s / w->r[0].median_s);
  }
  printf("(medians; GB/s = 2 x bytes / time; kbd/memcpy = time ratio, memcpy always on one thread)\n");

  if (mem_host) {
    bench_host_free(x);
    bench_host_free(y);
  } else {
    KBD_CHECK(kbd_free(x));
    KBD_CHECK(kbd_free(y));
  }
  return bad_total;
}

#else  /* a GPU program of kbd_add_program(tma_copy_bench): main() is in tma_copy_gpu.c */
typedef int tma_copy_cpu_bench_not_in_gpu_build;
#endif /* KBD_CPU */
