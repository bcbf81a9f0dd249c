/* bench_util.h - small helpers shared by the kbd benchmarks (host side, plain C11 + POSIX).
 *
 * Timing is wall clock (CLOCK_MONOTONIC). A "sample" runs the measured call `iters` times and yields the
 * mean time per call; a measurement is `reps` samples, reported as best (minimum) and median.
 */
#ifndef KBD_BENCH_UTIL_H
#define KBD_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A writable copy of a command-line list for strtok, as long as the list (the process frees it at exit). */
static inline char *bench_strdup(const char *s) {
  const size_t n = strlen(s) + 1;
  char *p = (char *)malloc(n);
  if (!p) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  return (char *)memcpy(p, s, n);
}

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v in place; returns the median (mean of the middle two for an even count). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double bench_min(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; ++i)
    if (v[i] < m) m = v[i];
  return m;
}

/* One timed implementation: run(ctx) is one call of it. */
typedef void (*bench_run_fn)(void *ctx);
typedef struct bench_result {
  double best_s, median_s; /* per call */
  long long iters;         /* calls per sample */
  int reps;                /* samples */
} bench_result;

/* Warm-up (first touch of pages, thread stacks, caches) and calibration: calls per sample so that one sample
 * lasts at least min_sample_s (at most max_iters). */
static inline long long bench_calibrate(bench_run_fn run, void *ctx, double min_sample_s, long long max_iters) {
  run(ctx);
  long long iters = 1;
  for (;;) {
    const double t0 = bench_now_s();
    for (long long i = 0; i < iters; ++i)
      run(ctx);
    const double dt = bench_now_s() - t0;
    if (dt >= min_sample_s || iters >= max_iters) return iters;
    const long long want = dt > 0 ? (long long)(iters * (1.2 * min_sample_s / dt)) + 1 : iters * 10;
    iters = want > iters * 10 ? iters * 10 : (want > iters ? want : iters + 1);
  }
}

/* Measures m (<= 4) implementations, contexts ctx[0..m) of ctx_size bytes each, with their samples interleaved
 * (0, 1, 0, 1, ...) so that a change in machine load during the run affects all of them alike. */
static inline void bench_measure(bench_run_fn run, void *ctx, size_t ctx_size, int m, int reps, double min_sample_s,
                                 long long max_iters, bench_result *out) {
  double samples[4][64];
  long long iters[4];
  if (reps > 64) reps = 64;
  if (m > 4) m = 4;
  for (int k = 0; k < m; ++k)
    iters[k] = bench_calibrate(run, (char *)ctx + (size_t)k * ctx_size, min_sample_s, max_iters);
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < m; ++k) {
      void *c = (char *)ctx + (size_t)k * ctx_size;
      const double t0 = bench_now_s();
      for (long long i = 0; i < iters[k]; ++i)
        run(c);
      samples[k][r] = (bench_now_s() - t0) / (double)iters[k];
    }
  for (int k = 0; k < m; ++k) {
    out[k].best_s = bench_min(samples[k], reps);
    out[k].median_s = bench_median(samples[k], reps);
    out[k].iters = iters[k];
    out[k].reps = reps;
  }
}

/* The 1-minute load average, or -1 if /proc/loadavg cannot be read: printed next to the CPU numbers
 * because the 2-core machine they were taken on is shared with other builds. */
static inline double bench_loadavg(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double l = -1.0;
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1.0;
    fclose(f);
  }
  return l;
}

/* Parse "a,b,c" of positive integers, with k/m/g suffixes (powers of two) and "2^k". Returns the count. */
static inline int bench_parse_list(const char *s, long long *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end = NULL;
    long long v;
    if (s[0] == '2' && s[1] == '^') {
      v = 1ll << strtol(s + 2, &end, 10);
    } else {
      v = strtoll(s, &end, 0);
      if (end && (*end == 'k' || *end == 'K'))
        v <<= 10, ++end;
      else if (end && (*end == 'm' || *end == 'M'))
        v <<= 20, ++end;
      else if (end && (*end == 'g' || *end == 'G'))
        v <<= 30, ++end;
    }
    if (!end || end == s || v <= 0) return -1;
    out[n++] = v;
    s = end;
    if (*s == ',')
      ++s;
    else if (*s)
      return -1;
  }
  return n;
}

#endif /* KBD_BENCH_UTIL_H */
