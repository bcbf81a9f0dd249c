/* main.c - host side of layernorm: f32 and bf16 against a double-precision reference.
 * Usage: layernorm_<mode> [rows] [cols]   (default 61 x 16393 = 1,000,000+ elements, odd hidden size) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layernorm.h"

int main(int argc, char **argv) {
  const long long rows = argc > 1 ? atoll(argv[1]) : 61, cols = argc > 2 ? atoll(argv[2]) : 16393;
  if (rows < 1 || cols < 1) {
    fprintf(stderr, "usage: %s [rows >= 1] [cols >= 1]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("layernorm: no CUDA device present; nothing to run\n");
    return 77;
  }
  const long long n = rows * cols;
  const float eps = 1e-5f;
  float *hx = (float *)malloc(4 * n), *hy = (float *)malloc(4 * n), *hg = (float *)malloc(4 * cols),
        *hb = (float *)malloc(4 * cols);
  kbd_bf16 *bx = (kbd_bf16 *)malloc(2 * n), *by = (kbd_bf16 *)malloc(2 * n);
  if (!hx || !hy || !hg || !hb || !bx || !by) return 1;
  for (long long i = 0; i < n; ++i) /* a large offset per row: the two-pass variance must cope */
    hx[i] = (float)((i * 7919) % 2001 - 1000) / 300.0f + (float)(i / cols % 5) * 100.0f;
  for (long long c = 0; c < cols; ++c)
    hg[c] = 1.0f + (float)(c % 13) / 13.0f, hb[c] = (float)(c % 7) - 3.0f;
  for (long long i = 0; i < n; ++i)
    bx[i] = kbd_f32_to_bf16(hx[i]);
  void *dx, *dy;
  float *dg, *db;
  KBD_CHECK(kbd_malloc(&dx, 4 * n));
  KBD_CHECK(kbd_malloc(&dy, 4 * n));
  KBD_CHECK(kbd_malloc((void **)&dg, 4 * cols));
  KBD_CHECK(kbd_malloc((void **)&db, 4 * cols));
  KBD_CHECK(kbd_copy_to_device(dg, hg, 4 * cols));
  KBD_CHECK(kbd_copy_to_device(db, hb, 4 * cols));
  layernorm_params p = {dx, dy, dg, db, rows, cols, eps, KBD_DT_f32};
  long long bad = 0;
  double worst[2] = {0, 0};
  for (int pass = 0; pass < 2; ++pass) {
    KBD_CHECK(kbd_copy_to_device(dx, pass ? (void *)bx : (void *)hx, (pass ? 2 : 4) * (size_t)n));
    p.dtype = pass ? KBD_DT_bf16 : KBD_DT_f32;
    KBD_CHECK(layernorm(kbd_cfg_1d((unsigned)rows), p));
    KBD_CHECK(kbd_device_sync());
    KBD_CHECK(kbd_copy_to_host(pass ? (void *)by : (void *)hy, dy, (pass ? 2 : 4) * (size_t)n));
    for (long long r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (long long c = 0; c < cols; ++c)
        m += pass ? kbd_bf16_to_f32(bx[r * cols + c]) : hx[r * cols + c];
      m /= (double)cols;
      for (long long c = 0; c < cols; ++c) {
        const double d = (pass ? kbd_bf16_to_f32(bx[r * cols + c]) : hx[r * cols + c]) - m;
        v += d * d;
      }
      const double rstd = 1.0 / sqrt(v / (double)cols + eps);
      for (long long c = 0; c < cols; ++c) {
        const double xin = pass ? kbd_bf16_to_f32(bx[r * cols + c]) : hx[r * cols + c];
        const double want = (xin - m) * rstd * hg[c] + hb[c];
        const double got = pass ? kbd_bf16_to_f32(by[r * cols + c]) : hy[r * cols + c];
        /* f32: the mean's rounding is amplified by rstd (~1/std); bf16: one output rounding (2^-8 rel). */
        const double err = fabs(got - want), tol = pass ? 0x1p-8 * fabs(want) + 1e-2 : 2e-3;
        if (!(err <= tol)) ++bad;
        worst[pass] = err > worst[pass] ? err : worst[pass];
      }
    }
  }
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("layernorm (%s): %lld x %lld, f32 and bf16, worst abs. error f32 %.2e bf16 %.2e, mismatches = %lld -> %s\n",
         mode, rows, cols, worst[0], worst[1], bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  KBD_CHECK(kbd_free(dg));
  KBD_CHECK(kbd_free(db));
  free(hx), free(hy), free(hg), free(hb), free(bx), free(by);
  return bad ? 1 : 0;
}
