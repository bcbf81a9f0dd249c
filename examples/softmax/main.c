/* main.c - host side of softmax: checks f32 and bf16 against a double-precision reference, including
 * the documented edge rows. Usage: softmax_<mode> [rows] [cols]   (default 64 x 1000003/64 -> ~1e6) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax.h"

static void ref_row(const float *x, double *y, long long n) {
  double m = -INFINITY;
  int nan = 0;
  long long ninf = 0;
  for (long long i = 0; i < n; ++i) {
    if (isnan(x[i]))
      nan = 1;
    else if (x[i] > m)
      m = x[i];
    if (x[i] == INFINITY) ++ninf;
  }
  if (nan) {
    for (long long i = 0; i < n; ++i)
      y[i] = NAN;
    return;
  }
  if (m == -INFINITY) { /* all -inf: equal logits */
    for (long long i = 0; i < n; ++i)
      y[i] = 1.0 / (double)n;
    return;
  }
  if (m == INFINITY) {
    for (long long i = 0; i < n; ++i)
      y[i] = x[i] == INFINITY ? 1.0 / (double)ninf : 0.0;
    return;
  }
  double s = 0;
  for (long long i = 0; i < n; ++i)
    s += exp((double)x[i] - m);
  for (long long i = 0; i < n; ++i)
    y[i] = exp((double)x[i] - m) / s;
}

int main(int argc, char **argv) {
  const long long rows = argc > 1 ? atoll(argv[1]) : 64, cols = argc > 2 ? atoll(argv[2]) : 1000003 / 64;
  if (rows < 5 || cols < 1) {
    fprintf(stderr, "usage: %s [rows >= 5] [cols >= 1]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("softmax: no CUDA device present; nothing to run\n");
    return 77;
  }
  const long long n = rows * cols;
  float *hx = (float *)malloc(sizeof(float) * n), *hy = (float *)malloc(sizeof(float) * n);
  kbd_bf16 *bx = (kbd_bf16 *)malloc(2 * n), *by = (kbd_bf16 *)malloc(2 * n);
  double *ref = (double *)malloc(sizeof(double) * cols);
  if (!hx || !hy || !bx || !by || !ref) return 1;
  for (long long i = 0; i < n; ++i)
    hx[i] = (float)((i * 7919) % 4001 - 2000) / 100.0f;
  for (long long c = 0; c < cols; ++c) {
    hx[0 * cols + c] = -INFINITY;                          /* row 0: all -inf -> 1/cols */
    hx[1 * cols + c] = 3.0e38f - (float)(c % 7) * 1.0e37f; /* row 1: huge values */
    hx[2 * cols + c] = c % 3 == 0 ? INFINITY : (float)c;   /* row 2: +inf entries share the mass */
    hx[3 * cols + c] = c == cols / 2 ? NAN : 1.0f;         /* row 3: a NaN -> NaN row */
    hx[4 * cols + c] = c == 0 ? 5.0f : -INFINITY;          /* row 4: one finite, rest masked */
  }
  for (long long i = 0; i < n; ++i)
    bx[i] = kbd_f32_to_bf16(hx[i]);
  void *dx, *dy;
  KBD_CHECK(kbd_malloc(&dx, sizeof(float) * n));
  KBD_CHECK(kbd_malloc(&dy, sizeof(float) * n));
  softmax_params p = {dx, dy, rows, cols};
  double worst_f32 = 0, worst_bf16 = 0;
  long long bad = 0;
  for (int pass = 0; pass < 2; ++pass) {
    KBD_CHECK(kbd_copy_to_device(dx, pass ? (void *)bx : (void *)hx, (pass ? 2 : 4) * (size_t)n));
    KBD_CHECK(pass ? softmax_bf16(kbd_cfg_1d((unsigned)rows), p) : softmax_f32(kbd_cfg_1d((unsigned)rows), p));
    KBD_CHECK(kbd_device_sync());
    KBD_CHECK(kbd_copy_to_host(pass ? (void *)by : (void *)hy, dy, (pass ? 2 : 4) * (size_t)n));
    for (long long r = 0; r < rows; ++r) {
      if (pass) { /* the bf16 kernel saw bf16-rounded inputs: the reference does too */
        for (long long c = 0; c < cols; ++c)
          hx[r * cols + c] = kbd_bf16_to_f32(bx[r * cols + c]);
      }
      ref_row(hx + r * cols, ref, cols);
      for (long long c = 0; c < cols; ++c) {
        const double got = pass ? (double)kbd_bf16_to_f32(by[r * cols + c]) : (double)hy[r * cols + c];
        if (isnan(ref[c])) {
          if (!isnan(got)) ++bad;
          continue;
        }
        if (isnan(got)) {
          ++bad;
          continue;
        }
        /* f32: a few ulp of exp plus the sum's rounding; bf16: one rounding of the output (2^-8). */
        const double err = fabs(got - ref[c]) / (ref[c] > 1e-30 ? ref[c] : 1.0);
        const double tol = pass ? 0x1p-8 : 1e-5;
        if (err > tol && fabs(got - ref[c]) > 1e-37) ++bad;
        if (pass)
          worst_bf16 = err > worst_bf16 ? err : worst_bf16;
        else
          worst_f32 = err > worst_f32 ? err : worst_f32;
      }
    }
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("softmax (%s): %lld x %lld, f32 and bf16, worst rel. error f32 %.2e bf16 %.2e, mismatches = %lld -> %s\n",
         mode, rows, cols, worst_f32, worst_bf16, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  free(hx), free(hy), free(bx), free(by), free(ref);
  return bad ? 1 : 0;
}
