// tests/layout/test_layout_cxx.cpp - kbd/layout.h compiled as C++17 (nvcc's host pass and C++ users see
// the header this way): the rules work in static_assert / constexpr array sizes and the maps agree with
// a few hand-computed values. The exhaustive checks live in test_layout.c.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// this cmocka.h has no extern "C" of its own
extern "C" {
#include <cmocka.h>
}

#include "kbd/layout.h"

KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 64, 256, 128, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_A, 16, 16, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(ROW, 128, 64, 128, 8);
static_assert(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_WGMMA_ACC, 64, 260, 128, 1), "N = 260 must be rejected");
static_assert(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_MMA_B, 16, 8, 0, 0), "degenerate owner must be rejected");
static_assert(KBD_LAYOUT_NPT(KBD_LAYOUT_ROW, 128, 64, 128) == 64, "128x64 over 128 threads");
struct probe_tile {
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_A, 32, 32, 32, 1);
  float v[KBD_LAYOUT_NPT(KBD_LAYOUT_MMA_A, 32, 32, 32)];
};
static_assert(sizeof(probe_tile) == 32 * sizeof(float), "32x32 MMA_A: 4 blocks x 8 values per lane");

static void test_cxx_maps(void **state) {
  (void)state;
  float acc[KBD_LAYOUT_NPT(KBD_LAYOUT_WGMMA_ACC, 64, 64, 128)];
  static_assert(sizeof acc == 32 * sizeof(float), "m64n64: 32 values per thread");
  acc[0] = 0.0f;
  assert_true(acc[0] == 0.0f);
  kbd_coord c = kbd_layout_wgmma_acc(64, 64, 37, 5); // w 1, g 1, q 1, d[5]: (17, 11)
  assert_int_equal(c.row, 17);
  assert_int_equal(c.col, 11);
  c = kbd_layout_coord(KBD_LAYOUT_MMA_B, 16, 8, 32, 1, 9, 3); // b3 of lane 9: (2q+9, g) = (11, 2)
  assert_int_equal(c.row, 11);
  assert_int_equal(c.col, 2);
  c = kbd_layout_coord(KBD_LAYOUT_ROW, 1, 1024, 256, 4, 5, 2); // e = 5*4 + 2
  assert_int_equal(c.row, 0);
  assert_int_equal(c.col, 22);
  assert_int_equal(kbd_layout_valid(KBD_LAYOUT_MMA_C, 16, 12, 32, 1), 0);
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_MMA_A, 32, 32, 32), 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cxx_maps)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
