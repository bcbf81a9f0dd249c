// tests/smem/test_swizzle_cxx.cpp - kbd/swizzle.h compiled as C++17 (nvcc's host pass and C++ users see the
// header this way): the rules work in static_assert and inside a struct, enum values pass as the int
// parameters, and a few offsets worked by hand agree. The exhaustive checks live in test_swizzle.c.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// this cmocka.h has no extern "C" of its own
extern "C" {
#include <cmocka.h>
}

#include "kbd/swizzle.h"

KBD_SMEM_STATIC_CHECK(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
static_assert(!KBD_SMEM_SHAPE_OK(2, 64, 64, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_K_MAJOR), "ATOM32 is MN-major only");
static_assert(!KBD_SMEM_SHAPE_OK(4, 6, 32, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR), "rows must be a multiple of 8");
static_assert(KBD_SWIZZLE_REPEAT(KBD_SWIZZLE_32B) == 256 && KBD_SWIZZLE_SPAN(KBD_SWIZZLE_128B) == 128, "facts");
struct probe_smem {
  KBD_SMEM_STATIC_CHECK(1, 16, 128, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR);
  unsigned char bytes[16 * 128];
};
static_assert(sizeof(probe_smem) == 2048, "the checks add no members");

static void test_cxx_offsets(void **state) {
  (void)state;
  const kbd_smem_shape s = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  assert_null(kbd_smem_shape_check(&s));
  assert_int_equal(kbd_smem_tile_offset(&s, 1, 0), 144);          // line 1: chunk 0 -> position 1
  assert_int_equal(kbd_smem_tile_offset(&s, 7, 0), 7 * 128 + 112); // line 7: chunk 0 -> position 7
  assert_int_equal(kbd_smem_tile_offset(&s, 8, 0), 1024);          // next atom, phase 0 again
  const kbd_smem_shape m = kbd_smem_shape_make(1, 128, 8, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR);
  // MN-major fp8, 64B: K line 1 (bytes 64..127 of 128-byte line 0), M chunk 0 -> chunk 4 of line 0, unswizzled
  assert_int_equal(kbd_smem_tile_offset(&m, 0, 1), 64);
  // K line 2 = line 1: chunk 0 -> position 1; M 64 starts the second block, after 8 K lines of 64 bytes
  assert_int_equal(kbd_smem_tile_offset(&m, 0, 2), 128 + 16);
  assert_int_equal(kbd_smem_tile_offset(&m, 64, 0), 512);
  assert_int_equal(kbd_swizzle_apply(KBD_SWIZZLE_128B, 0x3F0u), 0x380u);
  const kbd_smem_shape bad = kbd_smem_shape_make(2, 8, 8, 9, KBD_SMEM_K_MAJOR);
  assert_string_equal(kbd_smem_shape_check(&bad), KBD_SMEM_RULE_SWIZZLE);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cxx_offsets)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
