/* types_convert_dt - the generic dtype accessors of kbd/convert.h, and the documented conversion
 * semantics (docs/types.md) pinned as literal bit patterns, independent of the CUDA toolkit.
 * Plain C11: this is how kernels and the CPU emulator use the header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <kbd/convert.h>

static uint32_t bits(float x) { return kbd_cvt_f32_bits(x); }
static float fb(uint32_t u) { return kbd_cvt_bits_f32(u); }

/* Storage big enough and aligned for any dtype. */
typedef union {
  kbd_f32 f32;
  kbd_i32 i32;
  kbd_f16 f16;
  kbd_bf16 bf16;
  kbd_e4m3 e4m3;
  kbd_e5m2 e5m2;
  kbd_s8 s8;
  kbd_u8 u8;
} cell;

static const int all_dts[] = {KBD_DT_f32, KBD_DT_f16, KBD_DT_bf16, KBD_DT_e4m3, KBD_DT_e5m2, KBD_DT_i32};

static void test_dt_sizes(void **state) {
  (void)state;
  assert_int_equal(KBD_DT_SIZE(KBD_DT_f32), sizeof(kbd_f32));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_i32), sizeof(kbd_i32));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_f16), sizeof(kbd_f16));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_bf16), sizeof(kbd_bf16));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_e4m3), sizeof(kbd_e4m3));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_e5m2), sizeof(kbd_e5m2));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_s8), sizeof(kbd_s8));
  assert_int_equal(KBD_DT_SIZE(KBD_DT_u8), sizeof(kbd_u8));
  assert_true(KBD_DT_VALID(KBD_DT_s8) && KBD_DT_VALID(KBD_DT_u8) && !KBD_DT_VALID(KBD_DT_u8 + 1));
  assert_true(KBD_DT_IS_INT(KBD_DT_s8) && KBD_DT_IS_INT(KBD_DT_u8) && KBD_DT_IS_INT(KBD_DT_i32));
  assert_false(KBD_DT_IS_FLOAT(KBD_DT_s8) || KBD_DT_IS_FLOAT(KBD_DT_u8) || KBD_DT_IS_FP8(KBD_DT_s8));
  assert_true(KBD_DT_IS_INT8(KBD_DT_u8) && !KBD_DT_IS_INT8(KBD_DT_e4m3) && KBD_DT_IS_FP8(KBD_DT_e5m2));
}

/* Values exactly representable in every dtype (integers, so i32 too): store then load is the
 * identity for each dtype, through both the f32 and the i32 accessors. */
static void test_dt_roundtrip_common(void **state) {
  (void)state;
  static const float vals[] = {0.0f, 1.0f, -1.0f, 2.0f, -3.0f, 4.0f, 6.0f, -12.0f, 16.0f, 448.0f, -448.0f};
  for (size_t d = 0; d < sizeof all_dts / sizeof all_dts[0]; ++d) {
    int dt = all_dts[d];
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; ++i) {
      cell c;
      memset(&c, 0xa5, sizeof c);
      kbd_dt_store_f32(&c, dt, vals[i]);
      assert_int_equal(bits(kbd_dt_load_f32(&c, dt)), bits(vals[i]));
      assert_int_equal(kbd_dt_load_i32(&c, dt), (int32_t)vals[i]);
      memset(&c, 0x5a, sizeof c);
      kbd_dt_store_i32(&c, dt, (int32_t)vals[i]);
      assert_int_equal(kbd_dt_load_i32(&c, dt), (int32_t)vals[i]);
    }
  }
}

/* A store writes exactly KBD_DT_SIZE bytes: the bytes after it are untouched. */
static void test_dt_store_width(void **state) {
  (void)state;
  static const int width_dts[] = {KBD_DT_f32,  KBD_DT_f16, KBD_DT_bf16, KBD_DT_e4m3,
                                  KBD_DT_e5m2, KBD_DT_i32, KBD_DT_s8,   KBD_DT_u8};
  for (size_t d = 0; d < sizeof width_dts / sizeof width_dts[0]; ++d) {
    int dt = width_dts[d];
    union {
      cell c;
      unsigned char b[8];
    } u;
    memset(&u, 0xcc, sizeof u);
    kbd_dt_store_f32(&u.c, dt, 1.0f);
    for (size_t k = (size_t)KBD_DT_SIZE(dt); k < sizeof u.b; ++k) {
      assert_int_equal(u.b[k], 0xcc);
    }
  }
}

/* The accessors agree with the direct conversions for every f16 pattern decoded to f32, and
 * every fp8 pattern: the narrow value survives store/load (NaN -> the canonical NaN). */
static void test_dt_matches_direct(void **state) {
  (void)state;
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    kbd_f16 v16 = {(uint16_t)h};
    kbd_bf16 vb = {(uint16_t)h};
    cell c;
    assert_int_equal(bits(kbd_dt_load_f32(&v16, KBD_DT_f16)), bits(kbd_f16_to_f32(v16)));
    assert_int_equal(bits(kbd_dt_load_f32(&vb, KBD_DT_bf16)), bits(kbd_bf16_to_f32(vb)));
    kbd_dt_store_f32(&c, KBD_DT_f16, kbd_f16_to_f32(v16));
    assert_int_equal(c.f16.bits, kbd_f32_to_f16(kbd_f16_to_f32(v16)).bits);
    kbd_dt_store_f32(&c, KBD_DT_bf16, kbd_bf16_to_f32(vb));
    assert_int_equal(c.bf16.bits, kbd_f32_to_bf16(kbd_bf16_to_f32(vb)).bits);
    /* f32 accessors on f32 and i32 storage are a plain copy / __float2int_rn */
    float x = fb(h * 0x10001u);
    kbd_dt_store_f32(&c, KBD_DT_f32, x);
    assert_int_equal(bits(kbd_dt_load_f32(&c, KBD_DT_f32)), bits(x));
    kbd_dt_store_f32(&c, KBD_DT_i32, x);
    assert_int_equal(c.i32, kbd_f32_to_i32(x));
  }
  for (uint32_t b = 0; b <= 0xffu; ++b) {
    kbd_e4m3 v4 = {(uint8_t)b};
    kbd_e5m2 v5 = {(uint8_t)b};
    cell c;
    kbd_dt_store_f32(&c, KBD_DT_e4m3, kbd_dt_load_f32(&v4, KBD_DT_e4m3));
    assert_int_equal(c.e4m3.bits, (b & 0x7fu) == 0x7fu ? 0x7fu : b);
    kbd_dt_store_f32(&c, KBD_DT_e5m2, kbd_dt_load_f32(&v5, KBD_DT_e5m2));
    assert_int_equal(c.e5m2.bits, (b & 0x7fu) > 0x7cu ? 0x7fu : (b & 0x7fu) == 0x7cu ? (b & 0x80u) | 0x7bu : b);
  }
}

/* i32 <-> float storage: rounding through f32, saturation, NaN -> 0. */
static void test_dt_int_crossings(void **state) {
  (void)state;
  cell c;
  kbd_dt_store_f32(&c, KBD_DT_i32, 2.5f);
  assert_int_equal(c.i32, 2);
  kbd_dt_store_f32(&c, KBD_DT_i32, -3.5f);
  assert_int_equal(c.i32, -4);
  kbd_dt_store_f32(&c, KBD_DT_i32, 3e9f);
  assert_int_equal(c.i32, INT32_MAX);
  kbd_dt_store_f32(&c, KBD_DT_i32, fb(0x7fc00000u));
  assert_int_equal(c.i32, 0);
  /* i32 -> f16 -> i32: 65519 rounds to 65504; 70000 overflows to inf, which loads as INT32_MAX */
  kbd_dt_store_i32(&c, KBD_DT_f16, 65519);
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_f16), 65504);
  kbd_dt_store_i32(&c, KBD_DT_f16, 70000);
  assert_int_equal(c.f16.bits, 0x7c00u);
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_f16), INT32_MAX);
  /* fp8 saturates instead: 1000 -> 448 (e4m3) and -1e6 -> -57344 (e5m2) */
  kbd_dt_store_i32(&c, KBD_DT_e4m3, 1000);
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_e4m3), 448);
  kbd_dt_store_i32(&c, KBD_DT_e5m2, -1000000);
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_e5m2), -57344);
  /* Double rounding above 2^24, by design (i32 -> f32 -> bf16, the GPU's two cvts):
   * 2^24 + 2^16 + 1 ties in f32 to 2^24 + 2^16, a bf16 tie that goes to the even 2^24. */
  kbd_dt_store_i32(&c, KBD_DT_bf16, (1 << 24) + (1 << 16) + 1);
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_bf16), 1 << 24);
}

/* k / 4 rounded to nearest, ties to even, in integer arithmetic (an independent reference). */
static int32_t rne_quarter(int32_t k) {
  const int32_t q = (k >= 0 ? k : k - 3) / 4, rem = k - 4 * q; /* floor division: rem in 0..3 */
  return rem < 2 ? q : rem > 2 ? q + 1 : (q % 2 == 0 ? q : q + 1);
}
static int32_t clamp32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* s8 / u8: every value survives both accessors exactly; f32 stores round to nearest even then saturate (every
 * quarter in -300..300 against an integer reference); i32 stores saturate; NaN stores 0; integer loads widen. */
static void test_dt_int8(void **state) {
  (void)state;
  for (int v = -128; v <= 255; ++v) {
    cell c;
    if (v <= 127) {
      memset(&c, 0xa5, sizeof c);
      kbd_dt_store_i32(&c, KBD_DT_s8, v);
      assert_int_equal(c.s8, v);
      assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_s8), v);
      assert_int_equal(bits(kbd_dt_load_f32(&c, KBD_DT_s8)), bits((float)v));
      kbd_dt_store_f32(&c, KBD_DT_s8, (float)v);
      assert_int_equal(c.s8, v);
    }
    if (v >= 0) {
      kbd_dt_store_i32(&c, KBD_DT_u8, v);
      assert_int_equal(c.u8, v);
      assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_u8), v);
      assert_int_equal(bits(kbd_dt_load_f32(&c, KBD_DT_u8)), bits((float)v));
      kbd_dt_store_f32(&c, KBD_DT_u8, (float)v);
      assert_int_equal(c.u8, v);
    }
  }
  for (int32_t k = -1200; k <= 1200; ++k) {
    cell c;
    const float x = (float)k / 4.0f;
    kbd_dt_store_f32(&c, KBD_DT_s8, x);
    if (c.s8 != clamp32(rne_quarter(k), -128, 127)) fail_msg("s8 <- %g gave %d", (double)x, c.s8);
    kbd_dt_store_f32(&c, KBD_DT_u8, x);
    if (c.u8 != clamp32(rne_quarter(k), 0, 255)) fail_msg("u8 <- %g gave %d", (double)x, c.u8);
  }
  /* ties at the edges: 127.5 rounds to 128 then saturates; -128.5 rounds to -128; 255.5 to 256 -> 255 */
  assert_int_equal(kbd_f32_to_s8(127.5f), 127);
  assert_int_equal(kbd_f32_to_s8(-128.5f), -128);
  assert_int_equal(kbd_f32_to_u8(255.5f), 255);
  assert_int_equal(kbd_f32_to_u8(-0.5f), 0);
  /* infinities saturate, NaN is 0 (cvt.rni.sat) */
  assert_int_equal(kbd_f32_to_s8(fb(0x7f800000u)), 127);
  assert_int_equal(kbd_f32_to_s8(fb(0xff800000u)), -128);
  assert_int_equal(kbd_f32_to_u8(fb(0xff800000u)), 0);
  assert_int_equal(kbd_f32_to_s8(fb(0x7fc00000u)), 0);
  assert_int_equal(kbd_f32_to_u8(fb(0xffffffffu)), 0);
  assert_int_equal(kbd_f32_to_s8(3e9f), 127);
  /* integer narrowing saturates (cvt.sat.s8.s32), never wraps: 200 is not -56 */
  assert_int_equal(kbd_i32_to_s8(200), 127);
  assert_int_equal(kbd_i32_to_s8(INT32_MIN), -128);
  assert_int_equal(kbd_i32_to_u8(-1), 0);
  assert_int_equal(kbd_i32_to_u8(256), 255);
  /* crossings with the float types go through f32: an s8 stored to e4m3 and back */
  cell c;
  kbd_dt_store_i32(&c, KBD_DT_e4m3, kbd_dt_load_i32(&(kbd_s8){-100}, KBD_DT_s8));
  assert_int_equal(kbd_dt_load_i32(&c, KBD_DT_e4m3), -96); /* e4m3 spacing is 8 in [64, 128): -100 -> -96 */
}

/* The semantics table of docs/types.md, as bit patterns. */
static void test_documented_semantics(void **state) {
  (void)state;
  const float inf = fb(0x7f800000u), ninf = fb(0xff800000u);
  const float qnan = fb(0x7fc00000u), nnan = fb(0xffc00001u), snan = fb(0x7f800001u);
  /* f16 */
  assert_int_equal(kbd_f32_to_f16(65504.0f).bits, 0x7bffu);
  assert_int_equal(kbd_f32_to_f16(fb(0x477fefffu)).bits, 0x7bffu); /* just below 65520 */
  assert_int_equal(kbd_f32_to_f16(65520.0f).bits, 0x7c00u);        /* tie -> even -> inf */
  assert_int_equal(kbd_f32_to_f16(ninf).bits, 0xfc00u);
  assert_int_equal(kbd_f32_to_f16(qnan).bits, 0x7fffu);
  assert_int_equal(kbd_f32_to_f16(nnan).bits, 0x7fffu);
  assert_int_equal(kbd_f32_to_f16(snan).bits, 0x7fffu);
  assert_int_equal(kbd_f32_to_f16(fb(0x33000000u)).bits, 0x0000u); /* 2^-25: tie -> 0 */
  assert_int_equal(kbd_f32_to_f16(fb(0xb3000001u)).bits, 0x8001u); /* just above: -2^-24 */
  assert_int_equal(kbd_f32_to_f16(-0.0f).bits, 0x8000u);
  assert_int_equal(bits(kbd_f16_to_f32((kbd_f16){0x0001u})), 0x33800000u); /* 2^-24, subnormal kept */
  assert_int_equal(bits(kbd_f16_to_f32((kbd_f16){0xfe01u})), 0x7fffffffu);
  /* bf16 */
  assert_int_equal(kbd_f32_to_bf16(fb(0x7f7fffffu)).bits, 0x7f80u); /* FLT_MAX rounds to inf */
  assert_int_equal(kbd_f32_to_bf16(fb(0x3f808000u)).bits, 0x3f80u); /* tie, even */
  assert_int_equal(kbd_f32_to_bf16(fb(0x3f818000u)).bits, 0x3f82u); /* tie, odd -> up */
  assert_int_equal(kbd_f32_to_bf16(nnan).bits, 0x7fffu);
  assert_int_equal(kbd_f32_to_bf16(fb(0x00000001u)).bits, 0x0000u);
  assert_int_equal(bits(kbd_bf16_to_f32((kbd_bf16){0xffa1u})), 0xffa10000u); /* NaN kept as is */
  /* e4m3: max 448, no inf, NaN 0x7f */
  assert_int_equal(kbd_f32_to_e4m3(448.0f).bits, 0x7eu);
  assert_int_equal(kbd_f32_to_e4m3(464.0f).bits, 0x7eu);
  assert_int_equal(kbd_f32_to_e4m3(1e30f).bits, 0x7eu);
  assert_int_equal(kbd_f32_to_e4m3(inf).bits, 0x7eu);
  assert_int_equal(kbd_f32_to_e4m3(ninf).bits, 0xfeu);
  assert_int_equal(kbd_f32_to_e4m3(qnan).bits, 0x7fu);
  assert_int_equal(kbd_f32_to_e4m3(nnan).bits, 0x7fu);
  assert_int_equal(kbd_f32_to_e4m3(fb(0x3a800000u)).bits, 0x00u); /* 2^-10: tie -> 0 */
  assert_int_equal(kbd_f32_to_e4m3(fb(0xba800001u)).bits, 0x81u); /* just above: -2^-9 */
  assert_int_equal(kbd_f32_to_e4m3(-0.0f).bits, 0x80u);
  assert_int_equal(bits(kbd_e4m3_to_f32((kbd_e4m3){0x01u})), 0x3b000000u); /* 2^-9 */
  assert_int_equal(bits(kbd_e4m3_to_f32((kbd_e4m3){0xffu})), 0x7fffffffu);
  /* e5m2: max 57344, inf exists but satfinite never produces it, NaN 0x7f */
  assert_int_equal(kbd_f32_to_e5m2(57344.0f).bits, 0x7bu);
  assert_int_equal(kbd_f32_to_e5m2(fb(0x476fffffu)).bits, 0x7bu);
  assert_int_equal(kbd_f32_to_e5m2(61440.0f).bits, 0x7bu);
  assert_int_equal(kbd_f32_to_e5m2(ninf).bits, 0xfbu);
  assert_int_equal(kbd_f32_to_e5m2(fb(0x7fc00001u)).bits, 0x7fu);
  assert_int_equal(kbd_f32_to_e5m2(fb(0x37000000u)).bits, 0x00u); /* 2^-17: tie -> 0 */
  assert_int_equal(kbd_f32_to_e5m2(fb(0x37800000u)).bits, 0x01u); /* 2^-16, smallest subnormal */
  assert_int_equal(bits(kbd_e5m2_to_f32((kbd_e5m2){0xfcu})), 0xff800000u);
  assert_int_equal(bits(kbd_e5m2_to_f32((kbd_e5m2){0xfdu})), 0x7fffffffu);
  /* i32 */
  assert_int_equal(kbd_f32_to_i32(0.5f), 0);
  assert_int_equal(kbd_f32_to_i32(1.5f), 2);
  assert_int_equal(kbd_f32_to_i32(-2.5f), -2);
  assert_int_equal(kbd_f32_to_i32(2147483648.0f), INT32_MAX);
  assert_int_equal(kbd_f32_to_i32(-2147483648.0f), INT32_MIN);
  assert_int_equal(kbd_f32_to_i32(ninf), INT32_MIN);
  assert_int_equal(kbd_f32_to_i32(nnan), 0);
  assert_int_equal(bits(kbd_i32_to_f32(INT32_MAX)), 0x4f000000u);
  assert_int_equal(bits(kbd_i32_to_f32((1 << 24) + 1)), 0x4b800000u); /* tie -> even */
  assert_int_equal(bits(kbd_i32_to_f32((1 << 24) + 3)), 0x4b800002u); /* tie -> even, up */
  assert_int_equal(bits(kbd_i32_to_f32(INT32_MIN)), 0xcf000000u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dt_sizes),         cmocka_unit_test(test_dt_roundtrip_common),
      cmocka_unit_test(test_dt_store_width),   cmocka_unit_test(test_dt_matches_direct),
      cmocka_unit_test(test_dt_int_crossings), cmocka_unit_test(test_documented_semantics),
      cmocka_unit_test(test_dt_int8),
  };
  return cmocka_run_group_tests_name("types_convert_dt", tests, NULL, NULL);
}
