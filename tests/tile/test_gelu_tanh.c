/* tests/tile/test_gelu_tanh.c - kbd_gelu_tanh (tile_ops.h) on the CPU machine against a double reference.
 *
 * Contract (tile_ops.h): the f32 result is within tol = 4*(1 + |2u|) ulp(v) of v, the exact value of
 * 0.5*x*(1 + tanh(u)), u = sqrt(2/pi)*(x + 0.044715*x^3), then rounded once into the destination dtype.
 * Reference v in double as x / (1 + exp(-2u)) - the same function (1 + tanh(u) = 2/(1 + exp(-2u))), without
 * the cancellation of 1 + tanh(u) for x < 0 that costs double up to 30 bits there; the identity itself is
 * checked against the tanh form where that form is accurate. Inputs: a dense grid over [-12, 12] (the
 * whole curve, down to results that underflow), a grid over [-120, 120], random f32 bit patterns (every
 * exponent), every f16 and bf16 bit pattern; the special values are checked bit-exactly.
 */
#include <kbd/tile.h>

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define GT_TILE 1024
#define GT_THREADS 128
#define GT_N (4 * 65536) /* a multiple of GT_TILE */

typedef struct gt_params {
  const void *a;
  void *d;
  long long n;
} gt_params;

/* d = gelu_tanh(a) with a and d of the same dtype. */
#define GT_KERNEL(dt)                                                                                            \
  KBD_KERNEL(gt_##dt, GT_THREADS, gt_params) {                                                                   \
    KBD_TILE(dt, 1, GT_TILE, KBD_CTA) a, d;                                                                      \
    const long long start = (long long)kbd_block_x() * GT_TILE;                                                  \
    kbd_load(a, (const kbd_##dt *)p.a, p.n, start);                                                              \
    kbd_gelu_tanh(d, a);                                                                                         \
    kbd_store((kbd_##dt *)p.d, d, p.n, start);                                                                   \
  }
GT_KERNEL(f32)
GT_KERNEL(f16)
GT_KERNEL(bf16)

/* bf16 d = gelu_tanh(f32 a): computed in f32, rounded once into bf16. */
KBD_KERNEL(gt_f32_to_bf16, GT_THREADS, gt_params) {
  KBD_TILE(f32, 1, GT_TILE, KBD_CTA) a;
  KBD_TILE(bf16, 1, GT_TILE, KBD_CTA) d;
  const long long start = (long long)kbd_block_x() * GT_TILE;
  kbd_load(a, (const kbd_f32 *)p.a, p.n, start);
  kbd_gelu_tanh(d, a);
  kbd_store((kbd_bf16 *)p.d, d, p.n, start);
}

/* ---- host side ------------------------------------------------------------------------------------------ */

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* The exact tanh-form GELU of a finite x, as x * sigmoid(2u). */
static double ref_gelu_tanh(double x) {
  const double u = 0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * u));
}

/* ulp of an f32 of magnitude |v| (2^-149 at the bottom). */
static double ulp_f32(double v) {
  int e;
  if (v == 0.0) return ldexp(1.0, -149);
  frexp(v, &e); /* |v| = m * 2^e, m in [0.5, 1) */
  return ldexp(1.0, (e - 24 < -149) ? -149 : e - 24);
}

static double tol_of(double x, double v) {
  const double z = 2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x); /* 2u */
  return 4.0 * (1.0 + fabs(z)) * ulp_f32(v);
}

/* Destination rounding, as the library does it (monotonic, so [round(v - tol), round(v + tol)] holds any
 * f32 within tol of v after its rounding). */
static float round_dt(int dt, double v) {
  const float f = (float)v;
  if (dt == KBD_DT_f16) return kbd_f16_to_f32(kbd_f32_to_f16(f));
  if (dt == KBD_DT_bf16) return kbd_bf16_to_f32(kbd_f32_to_bf16(f));
  return f;
}

typedef kbd_status (*gt_launcher)(kbd_launch_cfg, gt_params);

/* Runs launch over n inputs of size ein (host array in), results of size eout into out. */
static void run(gt_launcher launch, const void *in, size_t ein, void *out, size_t eout, long long n) {
  void *da = NULL, *dd = NULL;
  assert_true(kbd_ok(kbd_malloc(&da, (size_t)n * ein)));
  assert_true(kbd_ok(kbd_malloc(&dd, (size_t)n * eout)));
  assert_true(kbd_ok(kbd_copy_to_device(da, in, (size_t)n * ein)));
  gt_params p = {da, dd, n};
  assert_true(kbd_ok(launch(kbd_cfg_1d((unsigned)((n + GT_TILE - 1) / GT_TILE)), p)));
  assert_true(kbd_ok(kbd_device_sync()));
  assert_true(kbd_ok(kbd_copy_to_host(out, dd, (size_t)n * eout)));
  assert_true(kbd_ok(kbd_free(da)));
  assert_true(kbd_ok(kbd_free(dd)));
}

/* Checks got (already as f32) for input x against the contract in dtype dt; returns 1 when it holds and
 * raises *worst to |got - v| / tol. NaN inputs must give a NaN (f32: the canonical 0x7fffffff). */
static int check_one(int dt, float x, float got, double *worst) {
  if (isnan(x)) return isnan(got) && (dt != KBD_DT_f32 || f32_bits(got) == 0x7fffffffu);
  if (isinf(x)) return x > 0 ? got == INFINITY : f32_bits(got) == 0x80000000u;
  const double v = ref_gelu_tanh(x), tol = tol_of(x, v);
  const float lo = round_dt(dt, v - tol), hi = round_dt(dt, v + tol);
  const double r = fabs((double)got - v) / tol;
  if (r > *worst) *worst = r;
  return got >= lo && got <= hi;
}

static uint32_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 32);
}

/* The reference is the tanh formula: where 1 + tanh(u) does not cancel much (x >= -2: 1 + tanh(u) >= 0.04),
 * the two forms agree to double precision. And the contract has teeth: the plain f32 tanh form 0.5*x*(1 +
 * tanhf(u)) breaks it for x < -3, where 1 + tanhf(u) cancels. */
static void test_reference_and_contract(void **state) {
  (void)state;
  for (int k = 0; k <= 4000; ++k) {
    const double x = -2.0 + k * 0.001 * 1.25;
    const double u = 0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x);
    const double t = 0.5 * x * (1.0 + tanh(u));
    assert_true(fabs(t - ref_gelu_tanh(x)) <= 1e-13 * fabs(t) + 1e-300);
  }
  int naive_fails = 0;
  for (int k = 0; k < 100; ++k) {
    const float x = -3.0f - 0.05f * (float)k;
    const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    const float naive = 0.5f * x * (1.0f + tanhf(u));
    const double v = ref_gelu_tanh(x);
    naive_fails += fabs((double)naive - v) > tol_of(x, v);
  }
  printf("gelu_tanh: the f32 form 0.5x(1 + tanhf(u)) breaks the contract at %d of 100 x in [-7.95, -3]\n",
         naive_fails);
  assert_true(naive_fails > 50);
}

/* f32: grids, random bit patterns, and bf16 from the same f32 inputs (one rounding). */
static void test_f32(void **state) {
  (void)state;
  float *in = malloc(GT_N * sizeof(float)), *out = malloc(GT_N * sizeof(float));
  uint16_t *hb = malloc(GT_N * sizeof(uint16_t));
  assert_non_null(in);
  assert_non_null(out);
  assert_non_null(hb);
  uint64_t seed = 12345;
  for (int k = 0; k < GT_N; ++k) {
    if (k < 2 * 65536)
      in[k] = -12.0f + 24.0f * (float)k / (2 * 65536); /* step 2^-13: the whole curve */
    else if (k < 3 * 65536)
      in[k] = -120.0f + 240.0f * (float)(k - 2 * 65536) / 65536;
    else
      in[k] = bits_f32(lcg(&seed)); /* every exponent; NaN and inf included when drawn */
  }
  run(gt_f32, in, 4, out, 4, GT_N);
  double worst = 0.0, worst_small = 0.0;
  int bad = 0;
  for (int k = 0; k < GT_N; ++k) {
    double w = 0.0;
    if (!check_one(KBD_DT_f32, in[k], out[k], &w)) {
      if (bad++ < 10) print_error("f32 gelu_tanh(%.9g) = %.9g, want %.9g\n", (double)in[k], (double)out[k],
                                  ref_gelu_tanh(in[k]));
    }
    if (w > worst) worst = w;
    if (fabsf(in[k]) <= 4.0f && w > worst_small) worst_small = w;
  }
  printf("gelu_tanh f32: %d inputs, worst |err|/tol = %.3f (%.3f for |x| <= 4), mismatches %d\n", GT_N, worst,
         worst_small, bad);
  assert_int_equal(bad, 0);
  assert_true(worst > 0.0); /* not vacuous: the f32 result is not the double one */

  run(gt_f32_to_bf16, in, 4, hb, 2, GT_N);
  bad = 0;
  for (int k = 0; k < GT_N; ++k) {
    kbd_bf16 h = {hb[k]};
    double w = 0.0;
    if (!check_one(KBD_DT_bf16, in[k], kbd_bf16_to_f32(h), &w) && bad++ < 10)
      print_error("f32 -> bf16 gelu_tanh(%.9g) = %.9g\n", (double)in[k], (double)kbd_bf16_to_f32(h));
  }
  assert_int_equal(bad, 0);
  free(in);
  free(out);
  free(hb);
}

/* Every f16 and bf16 bit pattern. */
static void test_half_all_patterns(void **state) {
  (void)state;
  uint16_t in[65536], out[65536];
  for (int dti = 0; dti < 2; ++dti) {
    const int dt = dti ? KBD_DT_bf16 : KBD_DT_f16;
    for (int k = 0; k < 65536; ++k) in[k] = (uint16_t)k;
    run(dti ? gt_bf16 : gt_f16, in, 2, out, 2, 65536);
    int bad = 0;
    double worst = 0.0;
    for (int k = 0; k < 65536; ++k) {
      float x, got;
      if (dti) {
        kbd_bf16 a = {in[k]}, d = {out[k]};
        x = kbd_bf16_to_f32(a), got = kbd_bf16_to_f32(d);
      } else {
        kbd_f16 a = {in[k]}, d = {out[k]};
        x = kbd_f16_to_f32(a), got = kbd_f16_to_f32(d);
      }
      if (!check_one(dt, x, got, &worst) && bad++ < 10)
        print_error("%s gelu_tanh(%.9g) = %.9g\n", dti ? "bf16" : "f16", (double)x, (double)got);
    }
    assert_int_equal(bad, 0);
  }
}

/* Special values, bit-exact: no NaN from any non-NaN input, however large. */
static void test_special_values(void **state) {
  (void)state;
  static const struct {
    uint32_t x, want;
  } cases[] = {
      {0x00000000u, 0x00000000u}, /* +0 -> +0 */
      {0x80000000u, 0x80000000u}, /* -0 -> -0 */
      {0x7f800000u, 0x7f800000u}, /* +inf -> +inf */
      {0xff800000u, 0x80000000u}, /* -inf -> -0 (x * sigmoid would be -inf * 0) */
      {0x7149f2cau, 0x7149f2cau}, /* 1e30 -> 1e30 */
      {0xf149f2cau, 0x80000000u}, /* -1e30 -> -0 */
      {0x7f7fffffu, 0x7f7fffffu}, /* FLT_MAX -> FLT_MAX */
      {0xff7fffffu, 0x80000000u}, /* -FLT_MAX -> -0 */
      {0xc2c80000u, 0x80000000u}, /* -100 -> -0 (exp(-2u) overflows the exact value too) */
      {0x7fc00000u, 0x7fffffffu}, /* NaN -> the canonical NaN */
      {0xffc00001u, 0x7fffffffu}, /* -NaN with a payload -> the canonical NaN */
      {0x7f800001u, 0x7fffffffu}, /* signalling NaN -> the canonical NaN */
  };
  enum { NC = sizeof cases / sizeof cases[0] };
  float in[GT_TILE], out[GT_TILE];
  for (int k = 0; k < GT_TILE; ++k) in[k] = bits_f32(cases[k % NC].x);
  run(gt_f32, in, 4, out, 4, GT_TILE);
  assert_true(bits_f32(cases[4].x) == 1e30f);
  for (int k = 0; k < GT_TILE; ++k) {
    if (f32_bits(out[k]) != cases[k % NC].want)
      fail_msg("gelu_tanh(0x%08x) = 0x%08x, want 0x%08x", (unsigned)cases[k % NC].x, (unsigned)f32_bits(out[k]),
               (unsigned)cases[k % NC].want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_and_contract),
      cmocka_unit_test(test_f32),
      cmocka_unit_test(test_half_all_patterns),
      cmocka_unit_test(test_special_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
