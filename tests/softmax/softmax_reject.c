/* tests/softmax/softmax_reject.c - compile-time rules of kbd/softmax.h (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the softmax_reject_* tests (tests/softmax/CMakeLists.txt). Case n breaks
 * one rule and must stop the compiler with that rule's message; case 0 (the positive control) makes every call
 * legally - a CTA-wide ROW row in two passes, a WGMMA_ACC scores block with an output accumulator of other
 * columns, an MMA_C pair, TMEM_ACC - and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct rj_params {
  const float *x;
  float *y, *lse;
  float scale;
} rj_params;

KBD_KERNEL(rj_kernel, 256, rj_params) {
  KBD_TILE(f32, 1, 1024, KBD_CTA) t, e;                                /* a CTA-wide row */
  KBD_TILE_L(f32, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) s, pr; /* a scores block */
  KBD_TILE_L(f32, 64, 32, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) o;     /* its output accumulator */
  KBD_SOFTMAX_STATE(t) rs;
  KBD_SOFTMAX_STATE(s) st;
  kbd_softmax_init(rs);
  kbd_softmax_init(st);
  kbd_load(t, p.x, 1024, 0);
  kbd_load2d(s, p.x, 64, 64, 64, 0, 0);
  kbd_fill(o, 1.0f);
#if KBD_REJECT_CASE == 0
  kbd_softmax_update(e, rs, t, p.scale);
  kbd_softmax_apply(e, rs, t, p.scale);
  kbd_store(p.y, e, 1024, 0);
  KBD_ROWVEC(f32, t) rl;
  kbd_softmax_finish(e, rl, rs, p.scale); /* a ROW o of s's shape */
  kbd_vec_store(p.lse, rl);
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_update(s, st, s, p.scale); /* in place: p may be s */
  kbd_softmax_update_lazy(s, st, s, p.scale, KBD_SOFTMAX_SLACK);
  kbd_softmax_update_lazy(pr, st, s, p.scale, 15);
  kbd_softmax_update_lazy_part(s, st, s, p.scale, KBD_SOFTMAX_SLACK); /* per-lane sums, then added across lanes */
  kbd_softmax_sum_rows(st);
  if (kbd_softmax_warp_rescales(st)) kbd_softmax_rescale(o, st);
  kbd_softmax_rescale(o, st);
  KBD_ROWVEC(f32, s) lse;
  kbd_softmax_finish(o, lse, st, p.scale);
  kbd_store2d(p.y, o, 64, 32, 32, 0, 0);
  kbd_vec_store_n(p.lse, lse, 60);
  {
    KBD_TILE_L(f32, 32, 16, KBD_WARP, KBD_LAYOUT_MMA_C) ms;
    KBD_TILE_L(f32, 32, 8, KBD_WARP, KBD_LAYOUT_MMA_C) mo;
    KBD_SOFTMAX_STATE(ms) mst;
    kbd_softmax_init(mst);
    kbd_load2d(ms, p.x, 32, 16, 16, 0, 0);
    kbd_fill(mo, 0.0f);
    kbd_softmax_update(ms, mst, ms, p.scale);
    kbd_softmax_rescale(mo, mst);
    KBD_ROWVEC(f32, ms) ml;
    kbd_softmax_finish(mo, ml, mst, p.scale);
    kbd_store2d(p.y, mo, 32, 8, 8, 0, 0);
    kbd_vec_store(p.lse, ml);
  }
  {
    KBD_TILE_L(f32, 128, 32, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) ts;
    KBD_TILE_L(f32, 128, 64, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) to;
    KBD_SOFTMAX_STATE(ts) tst;
    kbd_softmax_init(tst);
    kbd_load2d(ts, p.x, 128, 32, 32, 0, 0);
    kbd_fill(to, 0.0f);
    kbd_softmax_update(ts, tst, ts, p.scale);
    kbd_softmax_rescale(to, tst);
    KBD_ROWVEC(f32, ts) tl;
    kbd_softmax_finish(to, tl, tst, p.scale);
    kbd_store2d(p.y, to, 128, 64, 64, 0, 0);
    kbd_vec_store(p.lse, tl);
  }
#elif KBD_REJECT_CASE == 1 /* scores of bf16: the exponentials and sums are f32 math */
  KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) h;
  kbd_fill(h, 0.0f);
  kbd_softmax_update(pr, st, h, p.scale);
#elif KBD_REJECT_CASE == 2 /* p of bf16 (convert after the update) */
  KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) h;
  kbd_softmax_update(h, st, s, p.scale);
#elif KBD_REJECT_CASE == 3 /* p of another shape than s */
  kbd_softmax_update(o, st, s, p.scale);
#elif KBD_REJECT_CASE == 4 /* a state declared for another tile shape (the row tile's) */
  kbd_softmax_update(pr, rs, s, p.scale);
#elif KBD_REJECT_CASE == 5 /* a ROW o with other columns than the scores: its rows sit elsewhere */
  KBD_TILE(f32, 1, 512, KBD_CTA) half;
  kbd_fill(half, 0.0f);
  kbd_softmax_update(e, rs, t, p.scale);
  kbd_softmax_rescale(half, rs);
#elif KBD_REJECT_CASE == 6 /* a WGMMA_ACC o of other rows (128) than the 64-row scores */
  KBD_TILE_L(f32, 128, 32, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) tall;
  kbd_fill(tall, 0.0f);
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_rescale(tall, st);
#elif KBD_REJECT_CASE == 7 /* o in another layout (MMA_C rows are not WGMMA_ACC rows) */
  KBD_TILE_L(f32, 64, 32, KBD_WARP, KBD_LAYOUT_MMA_C) mc;
  kbd_fill(mc, 0.0f);
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_finish(mc, st.row_sum, st, p.scale);
#elif KBD_REJECT_CASE == 8 /* o of bf16 */
  KBD_TILE_L(bf16, 64, 32, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) ho;
  kbd_fill(ho, 0.0f);
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_rescale(ho, st);
#elif KBD_REJECT_CASE == 9 /* lse a column vector of s */
  KBD_COLVEC(f32, s) cl;
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_finish(o, cl, st, p.scale);
#elif KBD_REJECT_CASE == 10 /* lse the row vector of another tile (the CTA row's) */
  KBD_ROWVEC(f32, t) rl;
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_finish(o, rl, st, p.scale);
#elif KBD_REJECT_CASE == 11 /* apply: scores of bf16 */
  KBD_TILE(bf16, 1, 1024, KBD_CTA) h;
  kbd_fill(h, 0.0f);
  kbd_softmax_update(e, rs, t, p.scale);
  kbd_softmax_apply(e, rs, h, p.scale);
#elif KBD_REJECT_CASE == 12 /* apply: p of another shape */
  KBD_TILE(f32, 1, 512, KBD_CTA) half;
  kbd_softmax_update(e, rs, t, p.scale);
  kbd_softmax_apply(half, rs, t, p.scale);
#elif KBD_REJECT_CASE == 13 /* apply: the state of another tile */
  kbd_softmax_update(pr, st, s, p.scale);
  kbd_softmax_apply(e, st, t, p.scale);
#elif KBD_REJECT_CASE == 14 /* lazy: a slack past f16's range */
  kbd_softmax_update_lazy(pr, st, s, p.scale, 16);
#elif KBD_REJECT_CASE == 15 /* lazy: a negative slack */
  kbd_softmax_update_lazy(pr, st, s, p.scale, -1);
#elif KBD_REJECT_CASE == 16 /* lazy: scores of bf16 */
  KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) sb;
  kbd_softmax_update_lazy(pr, st, sb, p.scale, 8);
#elif KBD_REJECT_CASE == 17 /* per-lane sums of a CTA-wide row: its parts are in 8 warps, no shuffle adds them */
  kbd_softmax_update_lazy_part(e, rs, t, p.scale, 8);
#elif KBD_REJECT_CASE == 18 /* the same for the final addition */
  kbd_softmax_sum_rows(rs);
#elif KBD_REJECT_CASE == 19 /* part: a slack past f16's range */
  kbd_softmax_update_lazy_part(pr, st, s, p.scale, 16);
#endif
  (void)pr;
  (void)o;
  (void)e;
}
