/* types_cvt_packed - kbd_f32x2_to_bf16x2 / kbd_f32x2_to_f16x2 (kbd/convert.h), the packed conversion the sm_90a
 * attention kernel rounds P with (one cvt.rn.bf16x2.f32 per pair), against the scalar path kbd_f32_to_bf16 /
 * kbd_f32_to_f16 (one cvt.rn each): both halves must carry exactly the scalar bits, in the right place (d[0] from
 * lo, d[1] from hi), for every pair of special values (signed zeros, the smallest and largest subnormals,
 * FLT_MIN, ties to even in the normal and subnormal ranges and the values beside them, the largest finite f32 and
 * the overflow boundary of each type, infinities, quiet and signalling NaNs of both signs with payloads) and
 * for pseudo-random bit patterns. The scalar results are pinned to literal bits first (docs/types.md), so the
 * comparison cannot pass with both paths wrong the same way, and two wrong packed conversions (halves swapped;
 * rounding by truncation) must be caught by the same comparison. Plain C11. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <kbd/convert.h>

static float fb(uint32_t u) { return kbd_cvt_bits_f32(u); }

/* Special f32 bit patterns. */
static const uint32_t specials[] = {
    0x00000000u, 0x80000000u,                           /* +-0 */
    0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, /* smallest and largest subnormals */
    0x00008000u, 0x00018000u, 0x00008001u,              /* bf16 subnormal ties (even down, odd up) and above */
    0x00800000u, 0x80800000u,                           /* FLT_MIN */
    0x3f800000u, 0xbf800000u,                           /* +-1 */
    0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x3f808001u, /* bf16 ties at 1 (even down, odd up), beside */
    0x3f801000u, 0x3f803000u, 0x3f800fffu,              /* f16 ties at 1 (even down, odd up), below */
    0x33000000u, 0x33c00000u, 0x33800000u,              /* 2^-25, 3 * 2^-25 (f16 subnormal ties), 2^-24 */
    0x477fe000u, 0x477fefffu, 0x477ff000u,              /* f16: 65504, below 65520, 65520 (overflows) */
    0x7f7f7fffu, 0x7f7f8000u, 0x7f7fffffu, 0xff7fffffu, /* bf16: below the tie, tie to inf, FLT_MAX */
    0x7f800000u, 0xff800000u,                           /* +-inf */
    0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800001u, /* quiet NaNs, payload, signalling */
    0xff812345u, 0x7fffffffu,
};
#define NSPECIALS (sizeof specials / sizeof specials[0])

typedef void (*cvt2_bf16)(kbd_bf16 *d, float lo, float hi);
typedef void (*cvt2_f16)(kbd_f16 *d, float lo, float hi);

/* Two deliberately wrong packed conversions, to show the comparison fails on them. */
static void swapped_bf16(kbd_bf16 *d, float lo, float hi) { kbd_f32x2_to_bf16x2(d, hi, lo); }
static void truncating_bf16(kbd_bf16 *d, float lo, float hi) {
  d[0].bits = (uint16_t)(kbd_cvt_f32_bits(lo) >> 16);
  d[1].bits = (uint16_t)(kbd_cvt_f32_bits(hi) >> 16);
}
static void swapped_f16(kbd_f16 *d, float lo, float hi) { kbd_f32x2_to_f16x2(d, hi, lo); }

static uint32_t rng_state = 12345u;
static uint32_t rng(void) { /* xorshift32 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* Pairs (lo, hi) whose packed halves differ from the scalar conversions: every pair of specials, then `randoms`
 * random pairs. The packed result is written into a 4-element array at offset 1 with guards around it, so a
 * conversion that wrote outside its two elements is counted too. */
static long mismatches_bf16(cvt2_bf16 f, long randoms) {
  long bad = 0;
  for (long n = 0; n < (long)(NSPECIALS * NSPECIALS) + randoms; ++n) {
    const uint32_t ulo = n < (long)(NSPECIALS * NSPECIALS) ? specials[n % NSPECIALS] : rng();
    const uint32_t uhi = n < (long)(NSPECIALS * NSPECIALS) ? specials[n / NSPECIALS] : rng();
    kbd_bf16 d[4];
    for (int i = 0; i < 4; ++i)
      d[i].bits = 0xa5a5u;
    f(&d[1], fb(ulo), fb(uhi));
    bad += d[1].bits != kbd_f32_to_bf16(fb(ulo)).bits || d[2].bits != kbd_f32_to_bf16(fb(uhi)).bits ||
           d[0].bits != 0xa5a5u || d[3].bits != 0xa5a5u;
  }
  return bad;
}
static long mismatches_f16(cvt2_f16 f, long randoms) {
  long bad = 0;
  for (long n = 0; n < (long)(NSPECIALS * NSPECIALS) + randoms; ++n) {
    const uint32_t ulo = n < (long)(NSPECIALS * NSPECIALS) ? specials[n % NSPECIALS] : rng();
    const uint32_t uhi = n < (long)(NSPECIALS * NSPECIALS) ? specials[n / NSPECIALS] : rng();
    kbd_f16 d[4];
    for (int i = 0; i < 4; ++i)
      d[i].bits = 0xa5a5u;
    f(&d[1], fb(ulo), fb(uhi));
    bad += d[1].bits != kbd_f32_to_f16(fb(ulo)).bits || d[2].bits != kbd_f32_to_f16(fb(uhi)).bits ||
           d[0].bits != 0xa5a5u || d[3].bits != 0xa5a5u;
  }
  return bad;
}

/* The scalar path the packed one is compared with, pinned to the documented bits (RNE, ties to even, overflow to
 * inf, NaN -> 0x7fff, subnormals kept). */
static void test_scalar_reference_bits(void **state) {
  (void)state;
  static const uint32_t in[] = {0x3f808000u, 0x3f818000u, 0x3f808001u, 0x00008000u, 0x00018000u,
                                0x00000001u, 0x7f7f7fffu, 0x7f7f8000u, 0x7f800000u, 0xff800000u,
                                0x7f800001u, 0xffc00000u, 0x80000000u};
  static const uint16_t bf16[] = {0x3f80u, 0x3f82u, 0x3f81u, 0x0000u, 0x0002u, 0x0000u, 0x7f7fu,
                                  0x7f80u, 0x7f80u, 0xff80u, 0x7fffu, 0x7fffu, 0x8000u};
  for (size_t i = 0; i < sizeof in / sizeof in[0]; ++i)
    assert_int_equal(kbd_f32_to_bf16(fb(in[i])).bits, bf16[i]);
  static const uint32_t hin[] = {0x3f801000u, 0x3f803000u, 0x33000000u, 0x33c00000u, 0x33800000u,
                                 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x7fc12345u, 0x80000000u};
  static const uint16_t f16[] = {0x3c00u, 0x3c02u, 0x0000u, 0x0002u, 0x0001u,
                                 0x7bffu, 0x7bffu, 0x7c00u, 0x7fffu, 0x8000u};
  for (size_t i = 0; i < sizeof hin / sizeof hin[0]; ++i)
    assert_int_equal(kbd_f32_to_f16(fb(hin[i])).bits, f16[i]);
}

static void test_bf16x2_equals_two_scalar(void **state) {
  (void)state;
  rng_state = 12345u;
  assert_int_equal(mismatches_bf16(kbd_f32x2_to_bf16x2, 1000000), 0);
  /* the 32-bit word a wgmma A fragment register takes: lo in the low half */
  kbd_bf16 d[2];
  kbd_f32x2_to_bf16x2(d, 1.0f, -2.0f);
  assert_int_equal(d[0].bits, 0x3f80u);
  assert_int_equal(d[1].bits, 0xc000u);
  assert_int_equal(kbd_hw_cvt_rn_bf16x2_f32(-2.0f, 1.0f), 0xc0003f80u);
}

static void test_f16x2_equals_two_scalar(void **state) {
  (void)state;
  rng_state = 777u;
  assert_int_equal(mismatches_f16(kbd_f32x2_to_f16x2, 1000000), 0);
  kbd_f16 d[2];
  kbd_f32x2_to_f16x2(d, 1.0f, -2.0f);
  assert_int_equal(d[0].bits, 0x3c00u);
  assert_int_equal(d[1].bits, 0xc000u);
  assert_int_equal(kbd_hw_cvt_rn_f16x2_f32(-2.0f, 1.0f), 0xc0003c00u);
}

/* The comparison catches the mistakes it is for: swapped halves and rounding by truncation (ties and the values
 * above them round differently, NaN keeps its payload). */
static void test_wrong_conversions_are_caught(void **state) {
  (void)state;
  rng_state = 1u;
  assert_true(mismatches_bf16(swapped_bf16, 0) > 0);
  assert_true(mismatches_bf16(truncating_bf16, 0) > 0);
  assert_true(mismatches_f16(swapped_f16, 0) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_reference_bits),
      cmocka_unit_test(test_bf16x2_equals_two_scalar),
      cmocka_unit_test(test_f16x2_equals_two_scalar),
      cmocka_unit_test(test_wrong_conversions_are_caught),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
