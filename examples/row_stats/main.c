/* main.c - host side of row_stats: per-row mean and max against a double-precision reference.
 * Usage: row_stats_<mode> [rows] [cols]   (default 1001 x 3001: both edges of the tiles masked) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "row_stats.h"

int main(int argc, char **argv) {
  const long long rows = argc > 1 ? atoll(argv[1]) : 1001, cols = argc > 2 ? atoll(argv[2]) : 3001;
  if (rows < 1 || cols < 1) {
    fprintf(stderr, "usage: %s [rows >= 1] [cols >= 1]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("row_stats: no CUDA device present; nothing to run\n");
    return 77;
  }
  const long long n = rows * cols;
  float *hx = (float *)malloc(4 * n), *hmean = (float *)malloc(4 * rows), *hmax = (float *)malloc(4 * rows);
  if (!hx || !hmean || !hmax) return 1;
  /* Values in [-10, 10) plus a per-row offset; every row's max is somewhere else, some rows all negative. */
  for (long long i = 0; i < n; ++i)
    hx[i] = (float)((i * 7919 + i / cols * 104729) % 2000 - 1000) / 100.0f + (float)(i / cols % 7 - 3) * 20.0f;
  float *dx, *dmean, *dmax;
  KBD_CHECK(kbd_malloc((void **)&dx, 4 * n));
  KBD_CHECK(kbd_malloc((void **)&dmean, 4 * rows));
  KBD_CHECK(kbd_malloc((void **)&dmax, 4 * rows));
  KBD_CHECK(kbd_copy_to_device(dx, hx, 4 * n));
  row_stats_params p = {dx, dmean, dmax, rows, cols};
  KBD_CHECK(row_stats(kbd_cfg_1d((unsigned)((rows + RS_TR - 1) / RS_TR)), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hmean, dmean, 4 * rows));
  KBD_CHECK(kbd_copy_to_host(hmax, dmax, 4 * rows));
  long long bad = 0;
  double worst = 0.0;
  for (long long r = 0; r < rows; ++r) {
    double s = 0.0, a = 0.0, m = -INFINITY;
    for (long long c = 0; c < cols; ++c) {
      const double x = hx[r * cols + c];
      s += x, a += fabs(x), m = x > m ? x : m;
    }
    /* f32 sums: each of the RS_TC column partials adds cols/RS_TC values, then a tree of log2(RS_TC) levels and
     * the scaling: error <= (cols/RS_TC + 9) * 2^-24 * sum|x| / cols, well inside 1e-5 * mean|x|. The max is exact. */
    const double err = fabs(hmean[r] - s / (double)cols), tol = 1e-5 * a / (double)cols;
    if (!(err <= tol) || hmax[r] != (float)m) ++bad;
    worst = err / tol > worst ? err / tol : worst;
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("row_stats (%s): %lld x %lld, worst mean error %.2f of tolerance, mismatches = %lld -> %s\n", mode, rows, cols,
         worst, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dmean));
  KBD_CHECK(kbd_free(dmax));
  free(hx), free(hmean), free(hmax);
  return bad ? 1 : 0;
}
