/* Must not compile: each CASE_* breaks one rule of kbd/reduce_tile.h (tests/rowred/CMakeLists.txt checks
 * the message). */
#include <kbd/tile.h>

typedef struct {
  int unused;
} rj_params;
KBD_KERNEL(rj, 128, rj_params) {
  KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  kbd_fill(acc, 1.0f);
#if defined(CASE_layout_mma_a)
  KBD_TILE_L(bf16, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_A) a;
  KBD_ROWVEC(f32, a) m;
  kbd_fill(a, 1.0f);
  kbd_reduce_rows(m, a, KBD_RED_SUM);
#elif defined(CASE_row_shape)
  KBD_TILE(f32, 4, 24, KBD_WARP) t; /* vec 1: 24 vectors per row, rows start at irregular lanes */
  KBD_ROWVEC(f32, t) m;
  kbd_fill(t, 1.0f);
  kbd_reduce_rows(m, t, KBD_RED_SUM);
#elif defined(CASE_xor_f32)
  KBD_ROWVEC(f32, acc) m;
  kbd_reduce_rows(m, acc, KBD_RED_XOR);
#elif defined(CASE_vec_dtype)
  KBD_TILE_L(i32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) ai;
  KBD_ROWVEC(f32, ai) m;
  kbd_fill(ai, 1.0f);
  kbd_reduce_rows(m, ai, KBD_RED_MAX);
#elif defined(CASE_wrong_kind)
  KBD_ROWVEC(f32, acc) m;
  kbd_reduce_cols(m, acc, KBD_RED_SUM);
#elif defined(CASE_other_tile)
  KBD_TILE_L(f32, 64, 32, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc2;
  KBD_ROWVEC(f32, acc2) m;
  kbd_reduce_rows(m, acc, KBD_RED_SUM);
#elif defined(CASE_scan_layout)
  KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) d;
  KBD_ROWVEC(f32, acc) tot;
  kbd_scan_rows(d, tot, acc, KBD_RED_SUM, 0);
#elif defined(CASE_scan_xor)
  KBD_TILE_L(i32, 4, 128, KBD_WARPGROUP, KBD_LAYOUT_ROW) t, d;
  KBD_ROWVEC(i32, t) tot;
  kbd_fill(t, 1.0f);
  kbd_scan_rows(d, tot, t, KBD_RED_XOR, 0);
#elif defined(CASE_bcast_op)
  KBD_ROWVEC(f32, acc) m;
  kbd_reduce_rows(m, acc, KBD_RED_MAX);
  kbd_bcast_rows(acc, acc, m, KBD_OP_EXP);
#endif
}
