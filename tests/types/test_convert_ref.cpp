/* types_convert_ref - kbd's conversions (host/CPU path) against the CUDA toolkit's own host code.
 *
 * The references are the toolkit headers compiled for the host by the C++ compiler:
 *   f16   __half2float, __float2half_rn                       (cuda_fp16.h)
 *   bf16  __bfloat162float, __float2bfloat16_rn               (cuda_bf16.h)
 *   fp8   float(__nv_fp8_e4m3/e5m2), __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...)   (cuda_fp8.h)
 *   i32   the toolkit has no host __float2int_rn / __int2float_rn, so these are checked against
 *         the C library under the default rounding mode (rintf, int -> float) plus the PTX rules
 *         for saturation and NaN.
 * Results are compared as bit patterns, so a NaN matches only the exact NaN the toolkit returns.
 * Coverage: every f16/bf16/e4m3/e5m2 pattern; f32 patterns every 127 over all 2^32; every RNE tie
 * of each narrow type with its two neighbours; the overflow thresholds; the underflow ties;
 * specials (zeros, infinities, NaNs with several payloads and both signs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka 1.1 declares its functions without C linkage guards */
extern "C" {
#include <cmocka.h>
}

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <kbd/convert.h>

namespace {

constexpr uint64_t kSweepStride = 127; /* odd, so the sweep reaches every residue of the low bits */
constexpr int kMaxReported = 8;

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/* ---- toolkit references --------------------------------------------------------------------- */

uint32_t ref_f16_to_f32(uint16_t h) {
  __half_raw r;
  r.x = h;
  return bits(__half2float(__half(r)));
}
uint32_t ref_f32_to_f16(float x) { return __half_raw(__float2half_rn(x)).x; }

uint32_t ref_bf16_to_f32(uint16_t b) {
  __nv_bfloat16_raw r;
  r.x = b;
  return bits(__bfloat162float(__nv_bfloat16(r)));
}
uint32_t ref_f32_to_bf16(float x) { return __nv_bfloat16_raw(__float2bfloat16_rn(x)).x; }

uint32_t ref_e4m3_to_f32(uint8_t b) {
  __nv_fp8_e4m3 v;
  v.__x = b;
  return bits(static_cast<float>(v));
}
uint32_t ref_f32_to_e4m3(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }

uint32_t ref_e5m2_to_f32(uint8_t b) {
  __nv_fp8_e5m2 v;
  v.__x = b;
  return bits(static_cast<float>(v));
}
uint32_t ref_f32_to_e5m2(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }

/* cvt.rni.sat.s32.f32: RNE to integer, NaN -> 0, clamp. rintf rounds to nearest even in the default
 * mode; the range test is done in float before converting so the cast is always defined. */
uint32_t ref_f32_to_i32(float x) {
  if (std::isnan(x)) {
    return 0;
  }
  if (x >= 2147483648.0f) {
    return (uint32_t)INT32_MAX;
  }
  if (x < -2147483648.0f) {
    return (uint32_t)INT32_MIN;
  }
  return (uint32_t)(int32_t)std::rintf(x);
}
uint32_t ref_i32_to_f32(int32_t i) { return bits((float)i); }

/* ---- kbd under test ------------------------------------------------------------------------- */

uint32_t kbd_to_f16(float x) { return kbd_f32_to_f16(x).bits; }
uint32_t kbd_to_bf16(float x) { return kbd_f32_to_bf16(x).bits; }
uint32_t kbd_to_e4m3(float x) { return kbd_f32_to_e4m3(x).bits; }
uint32_t kbd_to_e5m2(float x) { return kbd_f32_to_e5m2(x).bits; }
uint32_t kbd_to_i32(float x) { return (uint32_t)kbd_f32_to_i32(x); }

using F32To = uint32_t (*)(float);
using DecodeRef = uint32_t (*)(uint8_t);

struct Mismatches {
  const char *what;
  uint64_t count = 0;
  explicit Mismatches(const char *w) : what(w) {}
  void check(uint32_t in, uint32_t got, uint32_t want) {
    if (got != want) {
      if (count < kMaxReported) {
        print_error("%s: input 0x%08x -> kbd 0x%08x, reference 0x%08x\n", what, in, got, want);
      }
      ++count;
    }
  }
};

/* f32 inputs that every f32 -> narrow test sees besides the sweep. */
std::vector<uint32_t> special_f32_inputs() {
  /* zeros, f32 subnormals, around 1, the largest finite values, inf, then NaNs: quiet, signalling,
   * and payloads that would survive a truncation to 16 or 8 bits */
  std::vector<uint32_t> v = {
      0x00000000u, 0x00000001u, 0x00000002u, 0x007fffffu, 0x00800000u, 0x00800001u, 0x3f800000u, 0x3f7fffffu,
      0x3f800001u, 0x7f7fffffu, 0x7f7ffffeu, 0x7f000000u, 0x7f800000u, 0x7fc00000u, 0x7fc00001u, 0x7fffffffu,
      0x7f800001u, 0x7fa00000u, 0x7f802000u, 0x7fbfffffu, 0x7fe00000u, 0x7f801000u, 0x7fd55555u,
  };
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) {
    v.push_back(v[i] | 0x80000000u);
  }
  return v;
}

/* The decoded finite non-negative values of a narrow type in ascending code order, and the f32
 * inputs around every RNE decision point: each value, each midpoint between neighbours, the
 * midpoint between the largest finite value and the next step (the overflow threshold), all with
 * both neighbours in f32 and both signs. */
std::vector<uint32_t> decision_points(const std::vector<float> &ascending) {
  std::vector<uint32_t> pts;
  auto add = [&pts](float m) {
    for (int d = -2; d <= 2; ++d) {
      uint32_t u = bits(m) + (uint32_t)d;
      if (m == 0.0f && d < 0) {
        continue;
      }
      pts.push_back(u);
      pts.push_back(u ^ 0x80000000u);
    }
  };
  for (size_t i = 0; i < ascending.size(); ++i) {
    add(ascending[i]);
    if (i + 1 < ascending.size()) {
      /* exact: the midpoint of two narrow values needs one more bit than the narrow type has */
      add((ascending[i] + ascending[i + 1]) * 0.5f);
    }
  }
  const size_t n = ascending.size();
  const float top = ascending[n - 1];
  add(top + (top - ascending[n - 2]) * 0.5f);
  /* Quarter of the smallest subnormal and its half: deep underflow, and the tie that rounds to 0. */
  add(ascending[1] * 0.5f);
  add(ascending[1] * 0.25f);
  return pts;
}

std::vector<float> ascending_finite(uint32_t maxcode, uint32_t (*decode)(uint32_t)) {
  std::vector<float> v;
  for (uint32_t c = 0; c <= maxcode; ++c) {
    v.push_back(from_bits(decode(c)));
  }
  return v;
}

uint32_t dec_f16(uint32_t c) { return ref_f16_to_f32((uint16_t)c); }
uint32_t dec_bf16(uint32_t c) { return ref_bf16_to_f32((uint16_t)c); }
uint32_t dec_e4m3(uint32_t c) { return ref_e4m3_to_f32((uint8_t)c); }
uint32_t dec_e5m2(uint32_t c) { return ref_e5m2_to_f32((uint8_t)c); }

/* Biased f32 exponents [lo, hi] and `more`, as a list. */
std::vector<uint32_t> exps(uint32_t lo, uint32_t hi, std::initializer_list<uint32_t> more = {}) {
  std::vector<uint32_t> v(more);
  for (uint32_t e = lo; e <= hi; ++e) {
    v.push_back(e);
  }
  return v;
}

/* `binades`: biased f32 exponents whose 2^23 positive patterns are all checked. These are the
 * binades where the conversion's shift or special-casing changes (each subnormal-output binade, the
 * first normal ones, the overflow ones); within any other binade the code path is the same. */
uint64_t check_f32_to(const char *what, F32To got, F32To want, const std::vector<uint32_t> &extra,
                      const std::vector<uint32_t> &binades) {
  Mismatches mm(what);
  for (uint32_t e : binades) {
    for (uint32_t m = 0; m < (1u << 23); ++m) {
      uint32_t u = (e << 23) | m;
      mm.check(u, got(from_bits(u)), want(from_bits(u)));
    }
  }
  for (uint64_t i = 0; i <= 0xffffffffu; i += kSweepStride) {
    float x = from_bits((uint32_t)i);
    mm.check((uint32_t)i, got(x), want(x));
  }
  for (uint32_t u : special_f32_inputs()) {
    mm.check(u, got(from_bits(u)), want(from_bits(u)));
  }
  for (uint32_t u : extra) {
    mm.check(u, got(from_bits(u)), want(from_bits(u)));
  }
  return mm.count;
}

/* ---- tests ---------------------------------------------------------------------------------- */

void test_f16_all_patterns(void **state) {
  (void)state;
  Mismatches to32("f16->f32"), back("f16->f32->f16"), roundtrip("f16 round trip");
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    kbd_f16 v;
    v.bits = (uint16_t)h;
    float x = kbd_f16_to_f32(v);
    to32.check(h, bits(x), ref_f16_to_f32((uint16_t)h));
    float rx = from_bits(ref_f16_to_f32((uint16_t)h));
    back.check(h, kbd_f32_to_f16(rx).bits, ref_f32_to_f16(rx));
    if ((h & 0x7fffu) <= 0x7c00u) {
      roundtrip.check(h, kbd_f32_to_f16(x).bits, h);
    }
  }
  assert_int_equal(to32.count + back.count + roundtrip.count, 0);
}

void test_bf16_all_patterns(void **state) {
  (void)state;
  Mismatches to32("bf16->f32"), back("bf16->f32->bf16"), roundtrip("bf16 round trip");
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    kbd_bf16 v;
    v.bits = (uint16_t)h;
    float x = kbd_bf16_to_f32(v);
    to32.check(h, bits(x), ref_bf16_to_f32((uint16_t)h));
    float rx = from_bits(ref_bf16_to_f32((uint16_t)h));
    back.check(h, kbd_f32_to_bf16(rx).bits, ref_f32_to_bf16(rx));
    if ((h & 0x7fffu) <= 0x7f80u) {
      roundtrip.check(h, kbd_f32_to_bf16(x).bits, h);
    }
  }
  assert_int_equal(to32.count + back.count + roundtrip.count, 0);
}

void test_e4m3_all_patterns(void **state) {
  (void)state;
  Mismatches to32("e4m3->f32"), back("e4m3->f32->e4m3"), roundtrip("e4m3 round trip");
  for (uint32_t b = 0; b <= 0xffu; ++b) {
    kbd_e4m3 v;
    v.bits = (uint8_t)b;
    float x = kbd_e4m3_to_f32(v);
    to32.check(b, bits(x), ref_e4m3_to_f32((uint8_t)b));
    float rx = from_bits(ref_e4m3_to_f32((uint8_t)b));
    back.check(b, kbd_f32_to_e4m3(rx).bits, ref_f32_to_e4m3(rx));
    /* every non-NaN code (e4m3 has no infinity) survives the round trip */
    roundtrip.check(b, kbd_f32_to_e4m3(x).bits, (b & 0x7fu) == 0x7fu ? 0x7fu : b);
  }
  assert_int_equal(to32.count + back.count + roundtrip.count, 0);
}

void test_e5m2_all_patterns(void **state) {
  (void)state;
  Mismatches to32("e5m2->f32"), back("e5m2->f32->e5m2"), roundtrip("e5m2 round trip");
  for (uint32_t b = 0; b <= 0xffu; ++b) {
    kbd_e5m2 v;
    v.bits = (uint8_t)b;
    float x = kbd_e5m2_to_f32(v);
    to32.check(b, bits(x), ref_e5m2_to_f32((uint8_t)b));
    float rx = from_bits(ref_e5m2_to_f32((uint8_t)b));
    back.check(b, kbd_f32_to_e5m2(rx).bits, ref_f32_to_e5m2(rx));
    /* finite codes survive; +-inf saturate to +-57344 (satfinite); NaNs become 0x7f */
    uint32_t want = (b & 0x7fu) > 0x7cu ? 0x7fu : (b & 0x7fu) == 0x7cu ? (b & 0x80u) | 0x7bu : b;
    roundtrip.check(b, kbd_f32_to_e5m2(x).bits, want);
  }
  assert_int_equal(to32.count + back.count + roundtrip.count, 0);
}

void test_f32_to_f16(void **state) {
  (void)state;
  assert_int_equal(check_f32_to("f32->f16", kbd_to_f16, ref_f32_to_f16,
                                decision_points(ascending_finite(0x7bffu, dec_f16)),
                                /* 2^-26 .. 2^-13 (underflow tie, subnormal outputs, first normals), 2^15 */
                                exps(101, 114, {142})),
                   0);
}

void test_f32_to_bf16(void **state) {
  (void)state;
  assert_int_equal(check_f32_to("f32->bf16", kbd_to_bf16, ref_f32_to_bf16,
                                decision_points(ascending_finite(0x7f7fu, dec_bf16)),
                                /* f32 subnormals, 2^-126, 2^127 (overflow to inf) */
                                {0u, 1u, 254u}),
                   0);
}

void test_f32_to_e4m3(void **state) {
  (void)state;
  assert_int_equal(check_f32_to("f32->e4m3", kbd_to_e4m3, ref_f32_to_e4m3,
                                decision_points(ascending_finite(0x7eu, dec_e4m3)),
                                /* 2^-12 .. 2^-5, 2^8 (448 and the 464 tie), 2^9 (saturation) */
                                exps(115, 122, {135, 136})),
                   0);
}

void test_f32_to_e5m2(void **state) {
  (void)state;
  assert_int_equal(check_f32_to("f32->e5m2", kbd_to_e5m2, ref_f32_to_e5m2,
                                decision_points(ascending_finite(0x7bu, dec_e5m2)),
                                /* 2^-19 .. 2^-13, 2^15 (57344 and the 61440 threshold), 2^16 */
                                exps(108, 114, {142, 143})),
                   0);
}

void test_f32_to_i32(void **state) {
  (void)state;
  /* +-2^31 and neighbours, +-0.5 / 1.5 / 2.5, 2^23 and 2^24 edges */
  std::vector<uint32_t> extra = {0x4f000000u, 0xcf000000u, 0x4effffffu, 0xceffffffu, 0x4f000001u, 0xcf000001u,
                                 0x3f000000u, 0xbf000000u, 0x3fc00000u, 0xbfc00000u, 0x40200000u, 0xc0200000u,
                                 0x4b000000u, 0x4b7fffffu, 0x4b800000u, 0x3effffffu, 0x3f000001u};
  /* Every representable k + 0.5 (|k + 0.5| < 2^23) and, for every 16th, the floats either side of it. */
  for (int64_t k = -(int64_t(1) << 23); k < (int64_t(1) << 23); ++k) {
    uint32_t u = bits((float)k + 0.5f);
    extra.push_back(u);
    if ((k & 15) == 0) {
      extra.push_back(u + 1);
      extra.push_back(u - 1);
    }
  }
  /* 2^-2 .. 2^31: every shift of the integer rounding and the saturation binade */
  assert_int_equal(check_f32_to("f32->i32", kbd_to_i32, ref_f32_to_i32, extra, exps(125, 158)), 0);
}

void test_i32_to_f32(void **state) {
  (void)state;
  Mismatches mm("i32->f32");
  auto one = [&mm](int32_t i) { mm.check((uint32_t)i, bits(kbd_i32_to_f32(i)), ref_i32_to_f32(i)); };
  for (uint64_t i = 0; i <= 0xffffffffu; i += kSweepStride) {
    one((int32_t)(uint32_t)i);
  }
  const int32_t edges[] = {0,
                           1,
                           -1,
                           INT32_MAX,
                           INT32_MIN,
                           INT32_MIN + 1,
                           INT32_MAX - 1,
                           1 << 24,
                           (1 << 24) + 1,
                           (1 << 24) + 3,
                           -(1 << 24) - 1,
                           -(1 << 24) - 3,
                           INT32_MAX - 64,
                           INT32_MAX - 63};
  for (int32_t e : edges) {
    one(e);
  }
  /* Every RNE tie of a 25..31-bit magnitude (s discarded bits, the last kept bit odd or even) and,
   * for a subset, the integers on either side of it. */
  for (int s = 1; s <= 7; ++s) {
    for (uint32_t q = 1u << 23; q < (1u << 24); ++q) {
      int32_t t = (int32_t)((q << s) | (1u << (s - 1)));
      one(t);
      one(-t);
      if ((q & 7u) == 0) {
        one(t - 1);
        one(t + 1);
        one(-t - 1);
      }
    }
  }
  assert_int_equal(mm.count, 0);
}

} // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16_all_patterns),  cmocka_unit_test(test_bf16_all_patterns),
      cmocka_unit_test(test_e4m3_all_patterns), cmocka_unit_test(test_e5m2_all_patterns),
      cmocka_unit_test(test_f32_to_f16),        cmocka_unit_test(test_f32_to_bf16),
      cmocka_unit_test(test_f32_to_e4m3),       cmocka_unit_test(test_f32_to_e5m2),
      cmocka_unit_test(test_f32_to_i32),        cmocka_unit_test(test_i32_to_f32),
  };
  return cmocka_run_group_tests_name("types_convert_ref", tests, NULL, NULL);
}
