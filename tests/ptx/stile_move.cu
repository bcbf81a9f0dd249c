/* PTX probe for kbd/stile_move.h (tests/ptx/stile_move.check), on sm_90a and sm_100a:
 *   - an MMA operand fragment loop: 16x16 MMA_A bf16 fragments out of a 64x64 K-major 128B-swizzled shared
 *     tile (kbd_stile_load_at with a run-time k) must be one ldmatrix.x4 each;
 *   - the same out of an MN-major tile: ldmatrix.x4.trans;
 *   - a 16x16 MMA_B fragment of a K-major (k, n) tile: ldmatrix.x4.trans, and of an N x K tile through
 *     kbd_stile_load_t: ldmatrix.x4 (no .trans);
 *   - the epilogue: a 64x64 WGMMA_ACC bf16 accumulator into a K-major 128B tile: stmatrix.x4;
 *   - a ROW f32 tile: st.shared.v4 / ld.shared.v4 (16-byte runs inside one swizzle unit);
 * no local memory anywhere (the fragments stay in registers). */
#include <kbd/stile_move.h>
#include <kbd/tile.h>

typedef struct {
  const kbd_bf16 *a;
  kbd_bf16 *out;
  float *fout;
  int ktiles;
} ptx_stile_params;

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) k_tile;
typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) mn_tile;
typedef KBD_STILE(f32, 16, 128, KBD_SWIZZLE_128B) f_tile;

KBD_KERNEL(ptx_stile_move, 128, ptx_stile_params) {
  KBD_SHARED_STILE(k_tile, sk);
  KBD_SHARED_STILE(mn_tile, smn);
  KBD_SHARED_STILE(f_tile, sf);
  KBD_TILE(bf16, 64, 64, KBD_WARPGROUP) g;
  kbd_load2d(g, p.a, 64, 64, 64, 0, 0);
  kbd_stile_store(sk, g);
  kbd_stile_store(smn, g);
  kbd_sync();

  /* A fragments: row block = warp, k blocks in a run-time loop (the window origin is 16*k) */
  KBD_TILE_L(bf16, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_A) fa, fsum;
  KBD_TILE_L(bf16, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_B) fb, fbt;
  kbd_zero(fsum);
  for (int k = 0; k < p.ktiles; ++k) {
    kbd_stile_load_at(fa, sk, 16 * kbd_warp_id(), 16 * k);
    kbd_add(fsum, fsum, fa);
    kbd_stile_load_at(fa, smn, 16 * kbd_warp_id(), 16 * k);
    kbd_add(fsum, fsum, fa);
  }
  kbd_stile_load_at(fb, sk, 16, 16 * kbd_warp_id());
  kbd_stile_load_t_at(fbt, sk, 16 * kbd_warp_id(), 32);
  kbd_store2d(p.out, fsum, 64, 64, 64, 16 * kbd_warp_id(), 0);
  kbd_store2d(p.out, fb, 64, 64, 64, 16 * kbd_warp_id(), 16);
  kbd_store2d(p.out, fbt, 64, 64, 64, 16 * kbd_warp_id(), 32);
  kbd_sync();

  /* epilogue: accumulator (bf16 after conversion) into the K-major tile */
  KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  kbd_zero(acc);
  KBD_MAP(acc, acc, x, r, c, (float)(r * 64 + c));
  kbd_stile_store(sk, acc);

  /* ROW f32 through 16-byte vectors */
  KBD_TILE(f32, 16, 128, KBD_WARPGROUP) f;
  kbd_zero(f);
  KBD_MAP(f, f, x, r, c, (float)(r - c));
  kbd_stile_store(sf, f);
  kbd_sync();
  kbd_stile_load(f, sf);
  kbd_store2d(p.fout, f, 16, 128, 128, 0, 0);
  kbd_stile_load(g, sk);
  kbd_store2d(p.out, g, 64, 64, 64, 0, 0);
}
