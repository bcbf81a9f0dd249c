/* types_numerics - kbd/numerics.h and the NaN bits of kbd's f32 primitives on the CPU machine.
 *
 * 1. The pure functions against an independent model (double arithmetic and fpclassify, not bit tests):
 *    kbd_f32_add_ftz (atom.add.f32) over literal cases, every subnormal operand of both signs against
 *    a set of partners, every pair of a special-value list, sums that land in the subnormal range, and
 *    random pairs biased towards the bottom binades; kbd_f32_canon_nan / kbd_f32_ftz over every pattern
 *    of the exponent fields they act on.
 * 2. NaN results of the primitives as bit patterns: every f32 result an op computes is 0x7fffffff (the
 *    GPU's canonical NaN) whatever NaN went in or none did (inf - inf, 0 * inf, 0 / 0, sqrt(-1)), while
 *    moves (kbd_convert, lane 0 of an inclusive scan) keep the payload - elementwise ops, warp / CTA /
 *    tile reductions, scans, row reductions and the device-wide reduce and scan.
 * 3. The softmax's exponential kbd_hw_ex2_ftz_f32 (the CPU twin of ex2.approx.ftz.f32) against exp2 in double
 *    over every f32 exponent argument in [-160, 130] at 1/64 steps and the special values: within 2 ulp where the
 *    result is normal, +0 where 2^x is below FLT_MIN, 1 for a subnormal argument, +0 / +inf / NaN for -inf / +inf
 *    / NaN.
 */
#include <kbd/reduce_tile.h>
#include <kbd/scan.h>
#include <kbd/tile.h>
#define KBD_DEVICE_IMPLEMENTATION
#include <kbd/device.h>
#include <kbd/numerics.h>

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

#include "kt_host.h"

#define CANON 0x7fffffffu

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float fb(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/* ---- 1. pure functions --------------------------------------------------------------------------------- */

/* atom.add.f32 from its PTX description, by other means than the implementation: classify with
 * fpclassify, add in double (exact for two flushed floats up to the final rounding, and double -> float
 * rounding of a double sum is correctly rounded since 53 >= 2*24 + 2), flush a result below FLT_MIN. */
static uint32_t model_add_ftz(uint32_t ua, uint32_t ub) {
  double a = (double)fb(ua), b = (double)fb(ub);
  if (isnan(a) || isnan(b)) return CANON;
  if (fpclassify(fb(ua)) == FP_SUBNORMAL) a = signbit(a) ? -0.0 : 0.0;
  if (fpclassify(fb(ub)) == FP_SUBNORMAL) b = signbit(b) ? -0.0 : 0.0;
  const float r = (float)(a + b);
  if (isnan(r)) return CANON; /* inf + -inf */
  if (fpclassify(r) == FP_SUBNORMAL) return signbit(r) ? 0x80000000u : 0u;
  return bits(r);
}

static void expect_add(uint32_t a, uint32_t b, uint32_t want) {
  const uint32_t got = bits(kbd_f32_add_ftz(fb(a), fb(b)));
  if (got != want) fail_msg("kbd_f32_add_ftz(0x%08x, 0x%08x) = 0x%08x, want 0x%08x", a, b, got, want);
  const uint32_t m = model_add_ftz(a, b);
  if (m != want) fail_msg("model(0x%08x, 0x%08x) = 0x%08x, want 0x%08x: the model is wrong", a, b, m, want);
}

/* Each rule of the PTX text, spelled out with literal bit patterns (the model could share a mistake). */
static void test_add_ftz_literals(void **state) {
  (void)state;
  const uint32_t one = 0x3f800000u, min_n = 0x00800000u; /* 1.0, FLT_MIN = 2^-126 */
  /* subnormal inputs flush: 2^-149 + 2^-149 is +0, not 2^-148; FLT_MIN + 2^-127 stays FLT_MIN */
  expect_add(0x00000001u, 0x00000001u, 0u);
  expect_add(min_n, 0x00400000u, min_n);
  expect_add(0x00400000u, min_n, min_n);
  expect_add(0x807fffffu, 0x807fffffu, 0x80000000u); /* -sub + -sub = -0 + -0 = -0 */
  expect_add(0x807fffffu, 0x007fffffu, 0u);          /* -0 + +0 = +0 (RNE) */
  expect_add(0x80000001u, 0x80000000u, 0x80000000u); /* -sub + -0 = -0 */
  expect_add(0x00000001u, one, one);
  /* subnormal results flush to the zero of the result's sign: 1.5*2^-126 - 2^-126 = 2^-127 -> +0 */
  expect_add(0x00c00000u, 0x80800000u, 0u);
  expect_add(0x80c00000u, 0x00800000u, 0x80000000u);
  expect_add(0x00800001u, 0x80800000u, 0u);          /* 2^-149 exactly: subnormal, flushed */
  expect_add(0x01000000u, 0x80800000u, min_n);       /* 2^-125 - 2^-126 = 2^-126: normal, kept */
  expect_add(0x01000001u, 0x80800000u, 0x00800002u); /* normal result just above the boundary */
  /* zeros */
  expect_add(0u, 0u, 0u);
  expect_add(0u, 0x80000000u, 0u);
  expect_add(0x80000000u, 0x80000000u, 0x80000000u);
  expect_add(one, 0xbf800000u, 0u); /* x + (-x) = +0 */
  /* rounding to nearest even */
  expect_add(one, 0x33800000u, one);               /* 1 + 2^-24: tie, stays even */
  expect_add(0x3f800001u, 0x33800000u, 0x3f800002u); /* (1 + 2^-23) + 2^-24: tie, rounds to even */
  expect_add(one, 0x33800001u, 0x3f800001u);       /* just above the tie */
  /* overflow and infinities */
  expect_add(0x7f7fffffu, 0x7f7fffffu, 0x7f800000u);
  expect_add(0xff7fffffu, 0xff7fffffu, 0xff800000u);
  expect_add(0x7f800000u, 0x00000001u, 0x7f800000u);
  expect_add(0xff800000u, one, 0xff800000u);
  /* NaN: any NaN in, or inf - inf, gives the canonical NaN */
  expect_add(0x7f800000u, 0xff800000u, CANON);
  expect_add(0x7fc01234u, one, CANON);
  expect_add(one, 0xffc00000u, CANON);
  expect_add(0x7f800001u, 0u, CANON); /* signaling */
  expect_add(0xff812345u, 0xffc00000u, CANON);
  expect_add(0x7fc00000u, 0x00000001u, CANON);
  expect_add(0x7fffffffu, 0x7f800000u, CANON);
}

static void check_add(uint32_t a, uint32_t b, long long *bad) {
  const uint32_t got = bits(kbd_f32_add_ftz(fb(a), fb(b))), want = model_add_ftz(a, b);
  if (got != want && (*bad)++ < 8)
    print_error("kbd_f32_add_ftz(0x%08x, 0x%08x) = 0x%08x, model 0x%08x\n", a, b, got, want);
}

static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x00000002u, 0x003fffffu, 0x00400000u, 0x00400001u,
    0x007ffffeu, 0x007fffffu, 0x807fffffu, 0x00800000u, 0x80800000u, 0x00800001u, 0x80800001u, 0x00c00000u,
    0x80c00000u, 0x00ffffffu, 0x01000000u, 0x81000000u, 0x01000001u, 0x0d000000u, 0x33800000u, 0x33800001u,
    0x3f800000u, 0xbf800000u, 0x3f800001u, 0x4b000000u, 0x7f000000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u,
    0xff800000u, 0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffc00000u, 0x7fc01234u, 0x7fffffffu, 0xffffffffu};
#define NSPEC (sizeof specials / sizeof specials[0])

/* Every subnormal of both signs (2^24 patterns) against partners that show each rule: zeros of both signs,
 * subnormals, the boundary normals, a value far above, inf and NaN; every pair of the special list in
 * both orders; sums that land in the subnormal range from normal operands; random pairs, three quarters
 * of them in the bottom four binades. */
static void test_add_ftz_sweep(void **state) {
  (void)state;
  long long bad = 0;
  static const uint32_t partners[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u,
                                      0x80800000u, 0x00800001u, 0x3f800000u, 0xff800000u, 0x7fc00000u};
  for (uint32_t m = 0; m < 0x00800000u; ++m)
    for (uint32_t s = 0; s < 2; ++s) {
      const uint32_t a = (s << 31) | m;
      for (size_t k = 0; k < sizeof partners / sizeof partners[0]; ++k) {
        check_add(a, partners[k], &bad);
        check_add(partners[k], a, &bad);
      }
    }
  for (size_t i = 0; i < NSPEC; ++i)
    for (size_t j = 0; j < NSPEC; ++j) check_add(specials[i], specials[j], &bad);
  /* a in [2^-126, 2^-124), b = -(a - d) for d < 2^-126 (a subnormal, possibly exact 0): every such result
   * is subnormal and must flush, with the sign of a - b's true value */
  for (uint32_t k = 0; k < (1u << 20); ++k) {
    const uint32_t a = 0x00800000u + (rnd() & 0x00ffffffu), d = rnd() & 0x007fffffu;
    const float b = -(fb(a) - fb(d)); /* exact: both multiples of 2^-149, |b| < 2^-124 */
    check_add(a, bits(b), &bad);
    check_add(bits(b), a, &bad);
    check_add(a ^ 0x80000000u, bits(b) ^ 0x80000000u, &bad);
  }
  for (long long k = 0; k < 4000000; ++k) {
    uint32_t a = rnd(), b = rnd();
    if (k % 4 != 0) {
      a = (a & 0x807fffffu) | ((rnd() % 4u) << 23); /* exponent field 0..3 */
      b = (b & 0x807fffffu) | ((rnd() % 4u) << 23);
    }
    check_add(a, b, &bad);
  }
  if (bad) fail_msg("kbd_f32_add_ftz: %lld mismatches with the model", bad);
}

/* canon_nan: every pattern with the exponent field all ones (every NaN and both infinities), and every
 * 4099th other pattern unchanged. ftz: every pattern with exponent field 0, and a sample of others. */
static void test_canon_and_ftz(void **state) {
  (void)state;
  for (uint32_t m = 0; m < 0x00800000u; ++m)
    for (uint32_t s = 0; s < 2; ++s) {
      const uint32_t nan_or_inf = (s << 31) | 0x7f800000u | m, sub = (s << 31) | m;
      const uint32_t want = m ? CANON : nan_or_inf;
      if (bits(kbd_f32_canon_nan(fb(nan_or_inf))) != want || kbd_f32_canon_nan_bits(nan_or_inf) != want ||
          bits(kbd_f32_arith_nan(fb(nan_or_inf))) != want || kbd_f32_arith_nan_bits(nan_or_inf) != want)
        fail_msg("canonical NaN of 0x%08x is not 0x%08x", nan_or_inf, want);
      assert_int_equal(kbd_f32_bits_isnan(nan_or_inf), m != 0);
      assert_int_equal(kbd_f32_bits_isnan(sub), 0);
      if (bits(kbd_f32_ftz(fb(sub))) != (s << 31)) fail_msg("kbd_f32_ftz(0x%08x) is not a zero of its sign", sub);
      if (bits(kbd_f32_ftz(fb(nan_or_inf))) != nan_or_inf) fail_msg("kbd_f32_ftz changed 0x%08x", nan_or_inf);
    }
  for (uint64_t u = 0x00800000u; u < 0x7f800000u; u += 4099)
    for (uint32_t s = 0; s < 2; ++s) {
      const uint32_t x = (s << 31) | (uint32_t)u;
      if (bits(kbd_f32_canon_nan(fb(x))) != x || bits(kbd_f32_ftz(fb(x))) != x)
        fail_msg("a normal value changed: 0x%08x", x);
    }
}

/* ---- 2. NaN bits of the primitives on the CPU machine ---------------------------------------------------- */

enum { O_ADD, O_SUB, O_MUL, O_DIV, O_MIN, O_MAX, O_FMA, O_NEG, O_ABS, O_SQRT, O_RSQRT, O_EXP, O_EXP2, O_LOG,
       O_TANH, O_SIGMOID, O_GELU, O_ADD_S, O_COPY, O_NOPS };
static const char *const op_names[O_NOPS] = {"add", "sub",  "mul",  "div",     "min",  "max",   "fma",
                                             "neg", "abs",  "sqrt", "rsqrt",   "exp",  "exp2",  "log",
                                             "tanh", "sigmoid", "gelu", "add_s", "convert"};

#define EW_N 256
typedef struct {
  const float *a, *b, *c;
  float *d;
  int op;
  float s;
} ew_params;

KBD_KERNEL(num_ew, 32, ew_params) {
  KBD_TILE(f32, 1, EW_N, KBD_WARP) a, b, c, d;
  kbd_load(a, p.a, EW_N, 0);
  kbd_load(b, p.b, EW_N, 0);
  kbd_load(c, p.c, EW_N, 0);
  switch (p.op) {
  case O_ADD: kbd_add(d, a, b); break;
  case O_SUB: kbd_sub(d, a, b); break;
  case O_MUL: kbd_mul(d, a, b); break;
  case O_DIV: kbd_div(d, a, b); break;
  case O_MIN: kbd_min(d, a, b); break;
  case O_MAX: kbd_max(d, a, b); break;
  case O_FMA: kbd_fma(d, a, b, c); break;
  case O_NEG: kbd_neg(d, a); break;
  case O_ABS: kbd_abs(d, a); break;
  case O_SQRT: kbd_sqrt(d, a); break;
  case O_RSQRT: kbd_rsqrt(d, a); break;
  case O_EXP: kbd_exp(d, a); break;
  case O_EXP2: kbd_exp2(d, a); break;
  case O_LOG: kbd_log(d, a); break;
  case O_TANH: kbd_tanh(d, a); break;
  case O_SIGMOID: kbd_sigmoid(d, a); break;
  case O_GELU: kbd_gelu(d, a); break;
  case O_ADD_S: kbd_add_s(d, a, p.s); break;
  default: kbd_convert(d, a); break;
  }
  kbd_store(p.d, d, EW_N, 0);
}

/* NaNs of every kind (quiet, signaling, either sign, payloads), the values that make a NaN out of none
 * (inf, 0, -1), and ordinary ones. */
static const uint32_t ew_vals[] = {0x7fc01234u, 0xffc00000u, 0xff812345u, 0x7f800001u, 0x7fffffffu,
                                   0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x3f800000u,
                                   0xbf800000u, 0x00000001u, 0x7f7fffffu, 0x40490fdbu, 0xc2b00000u};
#define NVALS (sizeof ew_vals / sizeof ew_vals[0])

static int ref_is_nan(int op, float x, float y, float z, float s) {
  switch (op) {
  case O_ADD: return isnan(x + y);
  case O_SUB: return isnan(x - y);
  case O_MUL: return isnan(x * y);
  case O_DIV: return isnan(x / y);
  case O_MIN:
  case O_MAX: return isnan(x) && isnan(y);
  case O_FMA: return isnan(fma((double)x, (double)y, (double)z)); /* no overflow of x*y in double */
  case O_SQRT:
  case O_RSQRT: return isnan(x) || x < 0;
  case O_LOG: return isnan(x) || x < 0;
  case O_ADD_S: return isnan(x + s);
  case O_GELU: return isnan(0.5f * x * erfcf(-x * 0.70710678f)); /* tile_ops.h's formula: NaN at -inf too */
  default: return isnan(x); /* neg abs exp exp2 tanh sigmoid convert: NaN exactly for a NaN input */
  }
}

static void test_elementwise_nan_bits(void **state) {
  (void)state;
  setenv("KBD_CPU_THREADS", "1", 1);
  float *a = (float *)kt_host_alloc(EW_N * 4), *b = (float *)kt_host_alloc(EW_N * 4);
  float *c = (float *)kt_host_alloc(EW_N * 4), *d = (float *)kt_host_alloc(EW_N * 4);
  for (int i = 0; i < EW_N; ++i) {
    const int k = i % (int)(NVALS * NVALS);
    a[i] = fb(ew_vals[k / NVALS]);
    b[i] = fb(ew_vals[k % NVALS]);
    c[i] = fb(ew_vals[(size_t)(i * 7) % NVALS]);
  }
  long long nans = 0;
  for (int op = 0; op < O_NOPS; ++op) {
    const float s = -INFINITY;
    ew_params p = {a, b, c, d, op, s};
    memset(d, 0xee, EW_N * 4);
    assert_int_equal(num_ew(kbd_cfg_1d(1), p).code, KBD_OK);
    for (int i = 0; i < EW_N; ++i) {
      const uint32_t got = bits(d[i]);
      if (op == O_COPY) { /* a move: the payload survives, as on the GPU */
        if (got != bits(a[i])) fail_msg("convert f32 -> f32 of 0x%08x gave 0x%08x", bits(a[i]), got);
        continue;
      }
      const int want_nan = ref_is_nan(op, a[i], b[i], c[i], s);
      if (want_nan) {
        ++nans;
        if (got != CANON)
          fail_msg("%s(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want the canonical NaN 0x7fffffff", op_names[op], bits(a[i]),
                   bits(b[i]), bits(c[i]), got);
      } else if (isnan(d[i])) {
        fail_msg("%s(0x%08x, 0x%08x, 0x%08x) = NaN 0x%08x, want a number", op_names[op], bits(a[i]), bits(b[i]),
                 bits(c[i]), got);
      }
    }
  }
  assert_true(nans > 1000); /* the inputs really exercise the NaN paths */
  kt_host_free(a);
  kt_host_free(b);
  kt_host_free(c);
  kt_host_free(d);
}

/* Warp, CTA and tile sums, a warp scan and warp/CTA max, 64 threads. */
typedef struct {
  const float *x;
  float *out;  /* per warp: warp sum, CTA sum, tile sum, warp max, CTA max */
  float *scan; /* per thread: inclusive warp scan (sum) */
} red_params;

KBD_KERNEL(num_red, 64, red_params) {
  const int w = kbd_warp_id();
  kbd_lanes_f32 x, sc;
  KBD_FOR_LANES(l) KBD_LANE(x, l) = p.x[w * 32 + l];
  float ws, cs, ts, wm, cm;
  kbd_warp_reduce(ws, x, KBD_RED_SUM);
  kbd_cta_reduce(cs, x, KBD_RED_SUM);
  kbd_warp_reduce(wm, x, KBD_RED_MAX);
  kbd_cta_reduce(cm, x, KBD_RED_MAX);
  KBD_TILE(f32, 1, 128, KBD_CTA) t;
  kbd_load(t, p.x, 64, 0);
  kbd_reduce(ts, t, KBD_RED_SUM);
  kbd_warp_scan(sc, x, KBD_RED_SUM, 0);
  KBD_FOR_LANES(l) p.scan[w * 32 + l] = KBD_LANE(sc, l);
  p.out[w * 5 + 0] = ws;
  p.out[w * 5 + 1] = cs;
  p.out[w * 5 + 2] = ts;
  p.out[w * 5 + 3] = wm;
  p.out[w * 5 + 4] = cm;
}

static void run_red(const float *x, float *out, float *scan) {
  red_params p = {x, out, scan};
  assert_int_equal(num_red(kbd_cfg_1d(1), p).code, KBD_OK);
}

static void test_reduction_nan_bits(void **state) {
  (void)state;
  float x[64], out[10], scan[64];
  KT_HOST_SCOPE(x);
  KT_HOST_SCOPE(out);
  KT_HOST_SCOPE(scan);
  /* a NaN with a payload at lane 5 of warp 0 */
  for (int i = 0; i < 64; ++i) x[i] = 1.0f;
  x[5] = fb(0x7fc01234u);
  run_red(x, out, scan);
  assert_int_equal(bits(out[0]), CANON);
  assert_int_equal(bits(out[1]), CANON);
  assert_int_equal(bits(out[2]), CANON);
  assert_true(out[3] == 1.0f && out[4] == 1.0f); /* max ignores the NaN */
  assert_true(out[5] == 32.0f && bits(out[6]) == CANON && bits(out[7]) == CANON);
  for (int i = 0; i < 5; ++i) assert_true(scan[i] == (float)(i + 1));
  for (int i = 5; i < 32; ++i) assert_int_equal(bits(scan[i]), CANON);
  for (int i = 32; i < 64; ++i) assert_true(scan[i] == (float)(i - 31));
  /* lane 0 of an inclusive scan is a move: a NaN there keeps its bits, the lanes after it do not */
  x[5] = 1.0f;
  x[0] = fb(0xffc00000u);
  run_red(x, out, scan);
  assert_int_equal(bits(scan[0]), 0xffc00000u);
  for (int i = 1; i < 32; ++i) assert_int_equal(bits(scan[i]), CANON);
  assert_int_equal(bits(out[0]), CANON);
  /* a NaN out of no NaN: +inf in warp 0, -inf in warp 1 */
  x[0] = 1.0f;
  x[3] = INFINITY;
  x[40] = -INFINITY;
  run_red(x, out, scan);
  assert_int_equal(bits(out[0]), 0x7f800000u);
  assert_int_equal(bits(out[5]), 0xff800000u);
  assert_int_equal(bits(out[1]), CANON);
  assert_int_equal(bits(out[6]), CANON);
  assert_int_equal(bits(out[2]), CANON);
  /* all NaN (mixed signs and payloads): max gives the canonical NaN */
  for (int i = 0; i < 64; ++i) x[i] = fb((i & 1 ? 0xffc00000u : 0x7f800001u) + (uint32_t)i);
  run_red(x, out, scan);
  for (int k = 0; k < 10; ++k) assert_int_equal(bits(out[k]), CANON);
}

/* Row sums of a 4 x 32 warp tile. */
typedef struct {
  const float *x;
  float *rows;
} row_params;

KBD_KERNEL(num_rows, 32, row_params) {
  KBD_TILE(f32, 4, 32, KBD_WARP) t;
  kbd_load2d(t, p.x, 4, 32, 32, 0, 0);
  KBD_ROWVEC(f32, t) m;
  kbd_reduce_rows(m, t, KBD_RED_SUM);
  kbd_vec_store(p.rows, m);
}

static void test_row_reduction_nan_bits(void **state) {
  (void)state;
  float x[128], rows[4];
  KT_HOST_SCOPE(x);
  KT_HOST_SCOPE(rows);
  for (int i = 0; i < 128; ++i) x[i] = 0.5f;
  x[32 + 7] = INFINITY; /* row 1: inf - inf */
  x[32 + 30] = -INFINITY;
  x[64 + 31] = fb(0xff812345u); /* row 2: a signaling NaN with a payload */
  row_params p = {x, rows};
  assert_int_equal(num_rows(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(rows[0] == 16.0f && rows[3] == 16.0f);
  assert_int_equal(bits(rows[1]), CANON);
  assert_int_equal(bits(rows[2]), CANON);
}

/* kbd/device.h: the f32 sum of 10000 elements with one NaN, reduce and scan. */
static void test_ex2_ftz(void **state) {
  (void)state;
  long normal = 0, flushed = 0;
  for (int i = -160 * 64; i <= 130 * 64; ++i) {
    const float x = (float)i / 64.0f;
    const float got = kbd_hw_ex2_ftz_f32(x);
    const double want = exp2((double)x);
    if (want < (double)FLT_MIN) {
      if (!(got == 0.0f && !signbit(got))) fail_msg("ex2_ftz(%g) = %a, want +0 (2^x = %a is below FLT_MIN)", x, got, want);
      ++flushed;
    } else if (want > (double)FLT_MAX) {
      if (!(isinf(got) && got > 0.0f)) fail_msg("ex2_ftz(%g) = %a, want +inf", x, got);
    } else {
      const double ulp = ldexp(1.0, ilogb(want) - 23);
      if (!(fabs((double)got - want) <= 2.0 * ulp)) fail_msg("ex2_ftz(%g) = %a, want %a within 2 ulp", x, got, want);
      ++normal;
    }
  }
  assert_true(normal > 200 * 64 && flushed > 30 * 64);
  assert_true(kbd_hw_ex2_ftz_f32(ldexpf(1.0f, -130)) == 1.0f && kbd_hw_ex2_ftz_f32(-ldexpf(1.0f, -140)) == 1.0f);
  assert_true(kbd_hw_ex2_ftz_f32(0.0f) == 1.0f && kbd_hw_ex2_ftz_f32(-0.0f) == 1.0f);
  assert_true(kbd_hw_ex2_ftz_f32(-INFINITY) == 0.0f && !signbit(kbd_hw_ex2_ftz_f32(-INFINITY)));
  assert_true(isinf(kbd_hw_ex2_ftz_f32(INFINITY)) && kbd_hw_ex2_ftz_f32(INFINITY) > 0.0f);
  assert_true(isnan(kbd_hw_ex2_ftz_f32(NAN)));
  assert_true(kbd_hw_ex2_ftz_f32(-126.0f) == FLT_MIN && kbd_hw_ex2_ftz_f32(-127.0f) == 0.0f);
}

static void test_device_nan_bits(void **state) {
  (void)state;
  enum { N = 10000, AT = 5000 };
  float *h = (float *)malloc(N * 4), *got = (float *)malloc(N * 4);
  for (int i = 0; i < N; ++i) h[i] = 1.0f;
  h[AT] = fb(0xffc0beefu);
  void *in = NULL, *out = NULL, *wsr = NULL, *wss = NULL;
  assert_true(kbd_ok(kbd_malloc(&in, N * 4)));
  assert_true(kbd_ok(kbd_malloc(&out, N * 4)));
  assert_true(kbd_ok(kbd_malloc(&wsr, kbd_device_reduce_workspace_bytes(N))));
  assert_true(kbd_ok(kbd_malloc(&wss, kbd_device_scan_workspace_bytes(N))));
  assert_true(kbd_ok(kbd_copy_to_device(in, h, N * 4)));
  assert_int_equal(kbd_device_reduce_f32((const float *)in, N, (float *)out, KBD_RED_SUM, wsr, NULL).code, KBD_OK);
  float r = 0;
  assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
  assert_int_equal(bits(r), CANON);
  assert_int_equal(kbd_device_scan_f32((const float *)in, (float *)out, N, KBD_RED_SUM, 0, wss, NULL).code, KBD_OK);
  assert_true(kbd_ok(kbd_copy_to_host(got, out, N * 4)));
  for (int i = 0; i < N; ++i) {
    if (i < AT && got[i] != (float)(i + 1)) fail_msg("scan[%d] = %g, want %d", i, (double)got[i], i + 1);
    if (i >= AT && bits(got[i]) != CANON) fail_msg("scan[%d] = 0x%08x, want 0x7fffffff", i, bits(got[i]));
  }
  kbd_free(in);
  kbd_free(out);
  kbd_free(wsr);
  kbd_free(wss);
  free(h);
  free(got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_ftz_literals),      cmocka_unit_test(test_add_ftz_sweep),
      cmocka_unit_test(test_canon_and_ftz),         cmocka_unit_test(test_elementwise_nan_bits),
      cmocka_unit_test(test_reduction_nan_bits),    cmocka_unit_test(test_row_reduction_nan_bits),
      cmocka_unit_test(test_device_nan_bits),       cmocka_unit_test(test_ex2_ftz),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
