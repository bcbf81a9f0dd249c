/* PTX probe for KBD_LAYOUT_TMEM_ACC (tests/ptx/tmem_layout.check), on sm_90a and sm_100a: the epilogue of an
 * M = 128 tcgen05 accumulator in its register view (thread t holds row t whole, kbd/layout.h):
 *   - a 128 x 64 f32 TMEM_ACC tile gets its row maxima (kbd_reduce_rows: per thread, no shuffle, no barrier)
 *     and a row-broadcast subtraction, is converted to bf16 and stored to a 128B-swizzled K-major shared
 *     tile: 8 st.shared.v4 per thread (16-byte runs of the thread's row), STS.128 in SASS;
 *   - the tile is read back (ld.shared.v4, LDS.128) into a TMEM_ACC tile and stored to global memory;
 * 0 spills, no stack frame, no local memory (the fragments stay in registers). */
#include <kbd/stile_move.h>
#include <kbd/tile.h>

typedef struct {
  const float *acc; /* stands in for tcgen05.ld: the accumulator comes from global memory here */
  kbd_bf16 *out;
  float *rowmax;
} ptx_tmem_params;

typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) epi_tile;

KBD_KERNEL(ptx_tmem_layout, 128, ptx_tmem_params) {
  KBD_SHARED_STILE(epi_tile, s);
  KBD_TILE_L(f32, 128, 64, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) acc;
  KBD_TILE_L(bf16, 128, 64, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) h, back;
  kbd_load2d(acc, p.acc, 128, 64, 64, 0, 0);
  KBD_ROWVEC(f32, acc) m;
  kbd_reduce_rows(m, acc, KBD_RED_MAX);
  kbd_bcast_rows(acc, acc, m, KBD_OP_SUB);
  kbd_vec_store(p.rowmax, m);
  kbd_convert(h, acc);
  kbd_stile_store(s, h);
  kbd_sync();
  kbd_stile_load(back, s);
  kbd_store2d(p.out, back, 128, 64, 64, 0, 0);
}
