/* tests/layout/layout_reject.c - compiled (never linked) by the layout_reject_<n> tests: case n must stop
 * the compiler with the named layout's rule as the message; case 0 is the control and must compile. */
#include "kbd/layout.h"

#if KBD_REJECT_CASE == 0
KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 64, 256, 128, 1);
KBD_LAYOUT_ASSERT_SHAPE(ROW, 32, 64, 128, 4);
KBD_LAYOUT_ASSERT_SHAPE(MMA_A, 32, 32, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_B, 32, 16, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_C, 32, 16, 32, 1);
KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_ROW, 1, 1024, 256, 4);
struct legal_tile {
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_WGMMA_ACC, 128, 96, 128, 1);
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_A, 16, 16, 32, 1);
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_B, 16, 8, 32, 1);
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_C, 16, 8, 32, 1);
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_TMEM_ACC, 256, 512, 128, 1);
  int v;
};
KBD_LAYOUT_ASSERT_SHAPE(TMEM_ACC, 128, 8, 128, 1);
#elif KBD_REJECT_CASE == 1
KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 64, 260, 128, 1); /* N not a multiple of 8, > 256 */
#elif KBD_REJECT_CASE == 2
KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 48, 64, 128, 1); /* M not a multiple of 64 */
#elif KBD_REJECT_CASE == 3
KBD_LAYOUT_ASSERT_SHAPE(ROW, 4, 6, 32, 4); /* vec does not divide C */
#elif KBD_REJECT_CASE == 4
KBD_LAYOUT_ASSERT_SHAPE(MMA_A, 16, 8, 32, 1); /* K not a multiple of 16 */
#elif KBD_REJECT_CASE == 5
KBD_LAYOUT_ASSERT_SHAPE(MMA_B, 8, 8, 32, 1); /* K not a multiple of 16 */
#elif KBD_REJECT_CASE == 6
KBD_LAYOUT_ASSERT_SHAPE(MMA_C, 16, 8, 128, 1); /* a warpgroup cannot own an mma.sync fragment */
#elif KBD_REJECT_CASE == 7
KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_WGMMA_ACC, 64, 260, 128, 1); /* id form, file scope */
#elif KBD_REJECT_CASE == 8
struct bad_tile { /* id form inside a struct, as a tile type declares it */
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_A, 16, 8, 32, 1);
  int v;
};
#elif KBD_REJECT_CASE == 9
KBD_LAYOUT_STATIC_CHECK(9, 64, 64, 128, 1); /* unknown layout id */
#elif KBD_REJECT_CASE == 10
KBD_LAYOUT_ASSERT_SHAPE(TMEM_ACC, 64, 64, 128, 1); /* M = 64 is not a TMEM_ACC (Layout D) accumulator */
#elif KBD_REJECT_CASE == 11
KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_TMEM_ACC, 128, 520, 128, 1); /* C > 512 TMEM columns, id form */
#elif KBD_REJECT_CASE == 12
struct bad_tmem { /* a warp cannot own it: tcgen05.ld reaches only its own 32 lanes */
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_TMEM_ACC, 128, 64, 32, 1);
  int v;
};
#endif

int kbd_layout_reject_unit;
