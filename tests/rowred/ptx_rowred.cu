/* PTX probe (tests/rowred/CMakeLists.txt, tools/kbd-ptx-check.sh): a softmax-style row max / row sum of a
 * 64 x 64 wgmma accumulator is the quad butterfly (shfl.sync.bfly masks 1 and 2) with no shared memory and
 * no barrier; a column sum is the butterfly over the 8 row groups (masks 4, 8, 16) and then shared memory
 * with the warpgroup's named barrier (256-thread block: two warpgroups, barriers 8 and 9). 0 spills. */
#include <kbd/tile.h>

typedef struct {
  const float *x;
  float *y, *rows, *cols;
} ptx_rowred_params;

KBD_KERNEL(ptx_rowred_rows, 256, ptx_rowred_params) {
  const int wg = kbd_warpgroup_id();
  KBD_TILE_L(f32, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  kbd_load2d(acc, p.x + wg * 64 * 64, 64, 64, 64, 0, 0);
  KBD_ROWVEC(f32, acc) m, s;
  kbd_reduce_rows(m, acc, KBD_RED_MAX);
  kbd_bcast_rows(acc, acc, m, KBD_OP_SUB);
  kbd_exp(acc, acc);
  kbd_reduce_rows(s, acc, KBD_RED_SUM);
  kbd_bcast_rows(acc, acc, s, KBD_OP_DIV);
  kbd_store2d(p.y + wg * 64 * 64, acc, 64, 64, 64, 0, 0);
  kbd_vec_store(p.rows + wg * 64, s);
}

KBD_KERNEL(ptx_rowred_cols, 256, ptx_rowred_params) {
  const int wg = kbd_warpgroup_id();
  KBD_TILE_L(f32, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  kbd_load2d(acc, p.x + wg * 64 * 64, 64, 64, 64, 0, 0);
  KBD_COLVEC(f32, acc) c;
  kbd_reduce_cols(c, acc, KBD_RED_SUM);
  kbd_vec_store(p.cols + wg * 64, c);
}
