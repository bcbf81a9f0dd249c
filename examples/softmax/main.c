/* main.c - host side of softmax: checks f32 and bf16 against a double-precision reference, including
 * the documented edge rows. Usage: softmax_<mode> [rows] [cols]   (default 64 x 1000003/64 -> ~1e6) */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax.h"

#define F32_U 0x1p-24 /* f32 unit roundoff */

/* The softmax of one row in double precision, with the special values of kbd/softmax.h (softmax.h): a NaN or
 * a +inf anywhere -> the whole row NaN; all -inf (fully masked) -> zeros; otherwise exp(x - max) / sum.
 * tol[i] bounds the f32 kernel's relative error at element i, to first order in u = 2^-24 (T tiles of 1024,
 * n = cols, m the row max, R the spread of its finite logits). kbd/softmax.h computes p = ex2(fma(x, c, -M)),
 * c = fl(log2 e), M = fl(m c), sums p, rescales the sum by ex2(m_old c - M_new) per tile, and divides:
 *   p: the roundings of its exponent 3|x - m| u (fl(c), the FFMA; 3 also covers (x - m) c), ex2 4u (2 ulp);
 *      the error of M is common to the row and cancels in the division
 *   the sum: per tile a tree over 4 elements x 5 shuffles x 8 warps, 10u; its terms' errors weighted by y,
 *      4u + 3u sum y |x - m| <= 4u + 3u ln n (the entropy of y); one FFMA per tile, T u; the rescale factors,
 *      4u each (ex2), |m| u each (the GPU fuses m_old c - M_new into one FFMA that keeps M_new's rounding,
 *      so the factor is not 1 when the max stays), and the roundings of their exponents, 2R u over the row
 *   the division (or a reciprocal and a multiply), 2u
 * A row whose finite logits are all its max or more than 104 below it (exp underflows to 0 in f32 there) sums
 * `count` equal terms and zeros (10 + T roundings), then divides: tol = (12 + T) u, whatever the logits' size -
 * kbd/softmax.h documents huge finite logits as exact, and row 1 (up to 3e38) holds it to that. */
static void ref_row(const float *x, double *y, double *tol, long long n) {
  double m = -INFINITY, lo = INFINITY;
  int bad = 0;
  for (long long i = 0; i < n; ++i) {
    if (isnan(x[i]) || x[i] == INFINITY) bad = 1;
    if (x[i] > m) m = x[i];
    if (x[i] > -INFINITY && x[i] < lo) lo = x[i];
  }
  if (bad || m == -INFINITY) { /* NaN/+inf: NaN; fully masked: 0 */
    for (long long i = 0; i < n; ++i)
      y[i] = bad ? NAN : 0.0, tol[i] = 0.0;
    return;
  }
  int exact = 1;
  double s = 0;
  for (long long i = 0; i < n; ++i) {
    s += exp((double)x[i] - m);
    if (x[i] != m && x[i] - m >= -104.0) exact = 0;
  }
  const double T = (double)((n + SOFTMAX_TILE - 1) / SOFTMAX_TILE), R = m - lo;
  for (long long i = 0; i < n; ++i) {
    y[i] = exp((double)x[i] - m) / s;
    tol[i] =
        F32_U * (exact ? 12.0 + T
                       : 20.0 + 3.0 * fabs(x[i] - m) + 3.0 * log((double)n) + 5.0 * T + (T + 1.0) * fabs(m) + 2.0 * R);
  }
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
  double *ref = (double *)malloc(sizeof(double) * cols), *tol = (double *)malloc(sizeof(double) * cols);
  if (!hx || !hy || !bx || !by || !ref || !tol) return 1;
  for (long long i = 0; i < n; ++i)
    hx[i] = (float)((i * 7919) % 4001 - 2000) / 100.0f;
  for (long long c = 0; c < cols; ++c) {
    hx[0 * cols + c] = -INFINITY;                          /* row 0: all -inf (fully masked) -> zeros */
    hx[1 * cols + c] = 3.0e38f - (float)(c % 7) * 1.0e37f; /* row 1: huge values -> exact */
    hx[2 * cols + c] = c % 3 == 0 ? INFINITY : (float)c;   /* row 2: a +inf -> NaN row */
    hx[3 * cols + c] = c == cols / 2 ? NAN : 1.0f;         /* row 3: a NaN -> NaN row */
    hx[4 * cols + c] = c == 0 ? 5.0f : -INFINITY;          /* row 4: one finite, rest masked -> exact */
  }
  for (long long i = 0; i < n; ++i)
    bx[i] = kbd_f32_to_bf16(hx[i]);
  void *dx, *dy;
  KBD_CHECK(kbd_malloc(&dx, sizeof(float) * n));
  KBD_CHECK(kbd_malloc(&dy, sizeof(float) * n));
  double worst_f32 = 0, worst_bf16 = 0;
  long long bad = 0, rows_bad = 0;
  for (int pass = 0; pass < 2; ++pass) {
    softmax_params p = {dx, dy, rows, cols, pass ? KBD_DT_bf16 : KBD_DT_f32};
    KBD_CHECK(kbd_copy_to_device(dx, pass ? (void *)bx : (void *)hx, (pass ? 2 : 4) * (size_t)n));
    KBD_CHECK(softmax(kbd_cfg_1d((unsigned)rows), p));
    KBD_CHECK(kbd_device_sync());
    KBD_CHECK(kbd_copy_to_host(pass ? (void *)by : (void *)hy, dy, (pass ? 2 : 4) * (size_t)n));
    for (long long r = 0; r < rows; ++r) {
      if (pass) { /* the bf16 kernel saw bf16-rounded inputs: the reference does too */
        for (long long c = 0; c < cols; ++c)
          hx[r * cols + c] = kbd_bf16_to_f32(bx[r * cols + c]);
      }
      ref_row(hx + r * cols, ref, tol, cols);
      long long row_bad = 0;
      for (long long c = 0; c < cols; ++c) {
        const double got = pass ? (double)kbd_bf16_to_f32(by[r * cols + c]) : (double)hy[r * cols + c];
        if (isnan(ref[c]) || isnan(got)) {
          row_bad += !(isnan(ref[c]) && isnan(got));
          continue;
        }
        if (ref[c] == 0.0) { /* masked (-inf) logits and fully masked rows: exactly 0 */
          row_bad += got != 0.0;
          continue;
        }
        /* bf16: one more rounding of the f32 result, relative 2^-8 (8 significant bits) */
        const double t = pass ? 0x1p-8 + tol[c] * (1.0 + 0x1p-8) : tol[c];
        const double err = fabs(got - ref[c]) / ref[c];
        /* below FLT_MIN the exponential returns 0 (kbd/softmax.h flushes subnormals): the error is absolute there */
        if (err > t && fabs(got - ref[c]) > FLT_MIN) ++row_bad;
        if (ref[c] > FLT_MIN) {
          if (pass)
            worst_bf16 = err > worst_bf16 ? err : worst_bf16;
          else
            worst_f32 = err > worst_f32 ? err : worst_f32;
        }
      }
      if (row_bad && ++rows_bad <= 8) /* name the first rows that failed */
        fprintf(stderr, "softmax: %s row %lld: %lld mismatches\n", pass ? "bf16" : "f32", r, row_bad);
      bad += row_bad;
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
  free(hx), free(hy), free(bx), free(by), free(ref), free(tol);
  return bad ? 1 : 0;
}
