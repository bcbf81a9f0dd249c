/* tests/tma/test_tensormap_validate.c - kbd_tensor_map_validate and kbd_tensor_map_encode in CPU mode.
 *
 *   (a) baselines: a valid descriptor for every rank 1..5 x every swizzle mode passes, and encode stores it;
 *   (b) the rule table (tmap_cases.h): each case breaks one rule of cuTensorMapEncodeTiled (or sits on the
 *       accepted side of a limit); the status is KBD_ERR_INVALID, the message names "[rule <name>]" and the
 *       field with its value, and no other rule's tag appears; every rule of the validator is broken by at
 *       least one case; the accepted side of each limit passes;
 *   (c) encode: the same verdict with the call site prefixed, *out unchanged on failure, the description
 *       (entries past the rank zeroed) and the encoded mark stored on success; NULL / misaligned output map;
 *   (d) pure: validation reads only the descriptor (same verdict twice, descriptor bytes unchanged), and the
 *       kbd dtype mapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kbd/tensormap.h"
#include "tmap_cases.h"

static void *g_base; /* a 256-byte aligned address: validation never dereferences it */

static int setup(void **state) {
  (void)state;
  g_base = aligned_alloc(256, 4096);
  return g_base ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  free(g_base);
  return 0;
}

static void expect_ok(const kbd_tensor_map_desc *d, const char *what) {
  kbd_status s = kbd_tensor_map_validate(d);
  if (!kbd_ok(s)) fail_msg("%s: expected valid, got: %s", what, s.msg);
}

/* The message must carry exactly one rule tag, the expected one, plus the field = value text. */
static void expect_rule(kbd_status s, const char *rule, const char *text, const char *what) {
  char tag[64];
  snprintf(tag, sizeof tag, "[rule %s]", rule);
  if (s.code != KBD_ERR_INVALID) fail_msg("%s: expected KBD_ERR_INVALID (%s), got code %d: %s", what, rule, (int)s.code, s.msg);
  if (!strstr(s.msg, tag)) fail_msg("%s: message lacks %s: %s", what, tag, s.msg);
  if (strstr(s.msg, "[rule ") != strrchr(s.msg, '[')) fail_msg("%s: more than one rule tag: %s", what, s.msg);
  if (text && !strstr(s.msg, text)) fail_msg("%s: message lacks \"%s\": %s", what, text, s.msg);
}

/* (a) */
static void test_baselines_every_rank_and_swizzle(void **state) {
  (void)state;
  int n = 0;
  for (unsigned rank = 1; rank <= 5; rank++)
    for (int sw = KBD_TMAP_SWIZZLE_NONE; sw <= KBD_TMAP_SWIZZLE_128B_ATOM_64B; sw++) {
      kbd_tensor_map_desc d;
      tmap_baseline(&d, rank, sw, g_base);
      char what[64];
      snprintf(what, sizeof what, "baseline rank %u swizzle %s", rank, kbd_tmap_swizzle_name(sw));
      expect_ok(&d, what);
      kbd_tensor_map m;
      kbd_status s = kbd_tensor_map_encode(&m, &d);
      if (!kbd_ok(s)) fail_msg("%s: encode: %s", what, s.msg);
      assert_int_equal(m.encoded, KBD_TENSOR_MAP_ENCODED);
      assert_int_equal(m.desc.rank, rank);
      assert_int_equal(m.desc.swizzle, sw);
      assert_memory_equal(m.desc.box_dims, d.box_dims, rank * sizeof d.box_dims[0]);
      n++;
    }
  assert_int_equal(n, 35);
}

/* (b) */
static void test_rule_table(void **state) {
  (void)state;
  int rejected = 0, accepted = 0;
  for (size_t i = 0; i < TMAP_NCASES; i++) {
    const tmap_case *c = &tmap_cases[i];
    kbd_tensor_map_desc d;
    tmap_build(&d, c, g_base);
    kbd_status s = kbd_tensor_map_validate(&d);
    if (c->rule) {
      expect_rule(s, c->rule, c->text, c->name);
      rejected++;
    } else {
      if (!kbd_ok(s)) fail_msg("%s: expected valid, got: %s", c->name, s.msg);
      accepted++;
    }
  }
  assert_true(rejected >= 50);
  assert_true(accepted >= 30);
}

static void test_every_rule_is_covered(void **state) {
  (void)state;
  for (size_t r = 0; r < TMAP_NRULES; r++) {
    int hits = !strcmp(tmap_rules[r], "desc_null"); /* test_desc_null */
    for (size_t i = 0; i < TMAP_NCASES; i++)
      if (tmap_cases[i].rule && !strcmp(tmap_cases[i].rule, tmap_rules[r])) hits++;
    if (!hits) fail_msg("rule %s is broken by no case of tmap_cases.h", tmap_rules[r]);
  }
  /* ... and the table names no rule the validator does not have. */
  for (size_t i = 0; i < TMAP_NCASES; i++) {
    if (!tmap_cases[i].rule) continue;
    int known = 0;
    for (size_t r = 0; r < TMAP_NRULES; r++) known |= !strcmp(tmap_cases[i].rule, tmap_rules[r]);
    if (!known) fail_msg("case %s names unknown rule %s", tmap_cases[i].name, tmap_cases[i].rule);
  }
}

static void test_desc_null(void **state) {
  (void)state;
  expect_rule(kbd_tensor_map_validate(NULL), "desc_null", "descriptor pointer is NULL", "validate(NULL)");
  kbd_tensor_map m;
  expect_rule(kbd_tensor_map_encode(&m, NULL), "desc_null", "descriptor pointer is NULL", "encode(NULL)");
}

/* Limits on both sides, exhaustively where cheap: each value alone decides. */
static void test_limits_swept(void **state) {
  (void)state;
  kbd_tensor_map_desc d;
  for (unsigned b = 0; b <= 300; b++) { /* box_dims[1] */
    tmap_baseline(&d, 2, KBD_TMAP_SWIZZLE_128B, g_base);
    d.box_dims[1] = b;
    kbd_status s = kbd_tensor_map_validate(&d);
    if (b >= 1 && b <= 256) expect_ok(&d, "box sweep");
    else expect_rule(s, "box_range", "box_dims[1] = ", "box sweep");
  }
  for (unsigned e = 0; e <= 12; e++) { /* element_strides[2] */
    tmap_baseline(&d, 3, KBD_TMAP_SWIZZLE_NONE, g_base);
    d.element_strides[2] = e;
    kbd_status s = kbd_tensor_map_validate(&d);
    if (e >= 1 && e <= 8) expect_ok(&d, "element stride sweep");
    else expect_rule(s, "estride_range", "element_strides[2] = ", "element stride sweep");
  }
  for (unsigned off = 0; off < 64; off++) { /* address alignment, none / 32B interleave */
    tmap_baseline(&d, 3, KBD_TMAP_SWIZZLE_NONE, g_base);
    d.global_address = (const char *)g_base + off;
    kbd_status s = kbd_tensor_map_validate(&d);
    if (off % 16 == 0) expect_ok(&d, "address sweep");
    else expect_rule(s, "addr_align16", "is not 16-byte aligned", "address sweep");
    tmap_il32(&d);
    s = kbd_tensor_map_validate(&d);
    if (off % 32 == 0) expect_ok(&d, "interleave 32B address sweep");
    else expect_rule(s, off % 16 ? "addr_align16" : "addr_align32_interleave", "aligned", "interleave 32B address sweep");
  }
  for (uint64_t st = 1024; st <= 1024 + 64; st++) { /* strides[0] multiple of 16 */
    tmap_baseline(&d, 2, KBD_TMAP_SWIZZLE_NONE, g_base);
    d.global_strides[0] = st;
    kbd_status s = kbd_tensor_map_validate(&d);
    if (st % 16 == 0) expect_ok(&d, "stride sweep");
    else expect_rule(s, "stride_mult16", "is not a multiple of 16", "stride sweep");
  }
  /* Inner box bytes vs each swizzle span, F16: accepted iff a multiple of 16 bytes and within the span. */
  for (int sw = KBD_TMAP_SWIZZLE_NONE; sw <= KBD_TMAP_SWIZZLE_128B_ATOM_64B; sw++)
    for (unsigned b = 1; b <= 256; b++) {
      tmap_baseline(&d, 2, sw, g_base);
      d.box_dims[0] = b;
      const unsigned bytes = 2 * b, span = sw == KBD_TMAP_SWIZZLE_NONE ? 1000u : kbd_tmap_swizzle_span(sw);
      kbd_status s = kbd_tensor_map_validate(&d);
      if (bytes % 16) expect_rule(s, "box_inner_mult16", "box_dims[0] = ", "inner box sweep");
      else if (bytes > span) expect_rule(s, "box_inner_span", "-byte span of swizzle", "inner box sweep");
      else expect_ok(&d, "inner box sweep");
    }
  /* Dims at 2^32 exactly and one more, in every dimension of a rank-5 tensor. */
  for (unsigned i = 0; i < 5; i++) {
    tmap_baseline(&d, 5, KBD_TMAP_SWIZZLE_NONE, g_base);
    tmap_small(&d);
    d.global_dims[i] = UINT64_C(1) << 32;
    if (i == 0) d.global_strides[0] = UINT64_C(1) << 33;
    expect_ok(&d, "dims 2^32");
    d.global_dims[i] += 1;
    char text[48];
    snprintf(text, sizeof text, "global_dims[%u] = 4294967297 ", i);
    expect_rule(kbd_tensor_map_validate(&d), "dim_range", text, "dims 2^32+1");
  }
}

/* Entries past the rank are ignored: garbage there changes nothing. */
static void test_entries_past_rank_ignored(void **state) {
  (void)state;
  for (unsigned rank = 1; rank <= 4; rank++) {
    kbd_tensor_map_desc d;
    tmap_baseline(&d, rank, KBD_TMAP_SWIZZLE_64B, g_base);
    for (unsigned i = rank; i < 5; i++) {
      d.global_dims[i] = 0;
      d.box_dims[i] = 1000;
      d.element_strides[i] = 0;
    }
    for (unsigned i = rank - 1; i < 4; i++) d.global_strides[i] = 3;
    expect_ok(&d, "garbage past the rank");
    kbd_tensor_map m;
    assert_true(kbd_ok(kbd_tensor_map_encode(&m, &d)));
    for (unsigned i = rank; i < 5; i++) {
      assert_int_equal(m.desc.global_dims[i], 0);
      assert_int_equal(m.desc.box_dims[i], 0);
      assert_int_equal(m.desc.element_strides[i], 0);
    }
    for (unsigned i = rank - 1; i < 4; i++) assert_int_equal(m.desc.global_strides[i], 0);
  }
}

/* (c) */
static void test_encode_table(void **state) {
  (void)state;
  for (size_t i = 0; i < TMAP_NCASES; i++) {
    const tmap_case *c = &tmap_cases[i];
    kbd_tensor_map_desc d;
    tmap_build(&d, c, g_base);
    kbd_tensor_map m;
    memset(&m, 0xA5, sizeof m);
    kbd_tensor_map before = m;
    const int line = __LINE__ + 1;
    kbd_status s = kbd_tensor_map_encode(&m, &d);
    if (c->rule) {
      expect_rule(s, c->rule, c->text, c->name);
      char site[128];
      snprintf(site, sizeof site, "test_tensormap_validate.c:%d: kbd_tensor_map_encode: tensor map: ", line);
      if (!strstr(s.msg, site)) fail_msg("%s: message lacks the call site \"%s\": %s", c->name, site, s.msg);
      assert_memory_equal(&m, &before, sizeof m);
    } else {
      if (!kbd_ok(s)) fail_msg("%s: encode: %s", c->name, s.msg);
      assert_int_equal(m.encoded, KBD_TENSOR_MAP_ENCODED);
      assert_int_equal(m.desc.dtype, d.dtype);
      assert_int_equal(m.desc.rank, d.rank);
      assert_ptr_equal(m.desc.global_address, d.global_address);
      assert_memory_equal(m.desc.global_dims, d.global_dims, d.rank * sizeof(uint64_t));
      if (d.rank > 1) assert_memory_equal(m.desc.global_strides, d.global_strides, (d.rank - 1) * sizeof(uint64_t));
      assert_memory_equal(m.desc.element_strides, d.element_strides, d.rank * sizeof(uint32_t));
      assert_int_equal(m.desc.interleave, d.interleave);
      assert_int_equal(m.desc.swizzle, d.swizzle);
      assert_int_equal(m.desc.l2_promotion, d.l2_promotion);
      assert_int_equal(m.desc.oob_fill, d.oob_fill);
    }
  }
}

static void test_encode_output_map(void **state) {
  (void)state;
  kbd_tensor_map_desc d;
  tmap_baseline(&d, 2, KBD_TMAP_SWIZZLE_128B, g_base);
  kbd_status s = kbd_tensor_map_encode(NULL, &d);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "[rule map_null]"));
  unsigned char *raw = (unsigned char *)aligned_alloc(KBD_TENSOR_MAP_ALIGN, 4 * sizeof(kbd_tensor_map));
  assert_non_null(raw);
  for (unsigned off = 16; off < KBD_TENSOR_MAP_ALIGN; off += 16) {
    memset(raw, 0x5A, 4 * sizeof(kbd_tensor_map));
    s = kbd_tensor_map_encode((kbd_tensor_map *)(void *)(raw + off), &d);
    assert_int_equal(s.code, KBD_ERR_INVALID);
    assert_non_null(strstr(s.msg, "[rule map_align]"));
    assert_non_null(strstr(s.msg, "is not 128-byte aligned"));
    for (size_t i = 0; i < 4 * sizeof(kbd_tensor_map); i++) assert_int_equal(raw[i], 0x5A);
  }
  s = kbd_tensor_map_encode((kbd_tensor_map *)(void *)(raw + KBD_TENSOR_MAP_ALIGN), &d);
  assert_true(kbd_ok(s));
  free(raw);
  /* The type itself: 128-byte aligned (a member of a params struct keeps it). */
  struct params {
    int n;
    kbd_tensor_map a, b;
  };
  assert_int_equal(KBD_ALIGNOF(kbd_tensor_map), 128);
  assert_int_equal(offsetof(struct params, a) % 128, 0);
  assert_int_equal(offsetof(struct params, b) % 128, 0);
}

/* (d) */
static void test_pure(void **state) {
  (void)state;
  for (size_t i = 0; i < TMAP_NCASES; i++) {
    kbd_tensor_map_desc d, copy;
    tmap_build(&d, &tmap_cases[i], g_base);
    copy = d;
    kbd_status a = kbd_tensor_map_validate(&d), b = kbd_tensor_map_validate(&d);
    assert_int_equal(a.code, b.code);
    assert_string_equal(a.msg, b.msg);
    assert_memory_equal(&d, &copy, sizeof d);
  }
}

static void test_dtype_mapping(void **state) {
  (void)state;
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_f32), KBD_TMAP_DT_F32);
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_f16), KBD_TMAP_DT_F16);
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_bf16), KBD_TMAP_DT_BF16);
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_e4m3), KBD_TMAP_DT_U8);
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_e5m2), KBD_TMAP_DT_U8);
  assert_int_equal(KBD_TMAP_DT_OF(KBD_DT_i32), KBD_TMAP_DT_I32);
  assert_int_equal(KBD_TMAP_DT_OF(0), -1);
  for (int dt = KBD_DT_f32; dt <= KBD_DT_i32; dt++) /* element sizes agree with kbd/types.h */
    assert_int_equal(kbd_tmap_dtype_bits(KBD_TMAP_DT_OF(dt)), 8 * KBD_DT_SIZE(dt));
  assert_int_equal(kbd_tmap_swizzle_of(KBD_SWIZZLE_NONE), KBD_TMAP_SWIZZLE_NONE);
  assert_int_equal(kbd_tmap_swizzle_of(KBD_SWIZZLE_32B), KBD_TMAP_SWIZZLE_32B);
  assert_int_equal(kbd_tmap_swizzle_of(KBD_SWIZZLE_64B), KBD_TMAP_SWIZZLE_64B);
  assert_int_equal(kbd_tmap_swizzle_of(KBD_SWIZZLE_128B), KBD_TMAP_SWIZZLE_128B);
  assert_int_equal(kbd_tmap_swizzle_of(KBD_SWIZZLE_128B_ATOM32), KBD_TMAP_SWIZZLE_128B_ATOM_32B);
  for (int sw = KBD_TMAP_SWIZZLE_32B; sw <= KBD_TMAP_SWIZZLE_128B; sw++) /* spans agree with kbd/swizzle.h */
    assert_int_equal(kbd_tmap_swizzle_span(sw), KBD_SWIZZLE_SPAN(sw));
  /* The 2-D helper: a row-major 1000 x 300 bf16 matrix with a 64x64 box and 128B swizzle, as in the docs. */
  kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, g_base, 1000, 300, 608, 64, 64, KBD_TMAP_SWIZZLE_128B);
  expect_ok(&d, "desc_2d");
  assert_int_equal(d.global_dims[0], 300);
  assert_int_equal(d.global_dims[1], 1000);
  assert_int_equal(d.box_dims[0], 64);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_baselines_every_rank_and_swizzle),
      cmocka_unit_test(test_rule_table),
      cmocka_unit_test(test_every_rule_is_covered),
      cmocka_unit_test(test_desc_null),
      cmocka_unit_test(test_limits_swept),
      cmocka_unit_test(test_entries_past_rank_ignored),
      cmocka_unit_test(test_encode_table),
      cmocka_unit_test(test_encode_output_map),
      cmocka_unit_test(test_pure),
      cmocka_unit_test(test_dtype_mapping),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
