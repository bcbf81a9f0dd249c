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
