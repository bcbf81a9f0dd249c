/* PTX probe for the lead's ptx check: i32 reductions at warp scope are one redux.sync each, and the CTA
 * i32 sum uses redux.sync twice (warp totals, then totals of totals); f32 max on sm_100a is redux.f32. */
#include <kbd/reduce.h>
#include <kbd/tile.h>

typedef struct {
  const int32_t *x;
  int32_t *y;
  float *f;
} ptx_i32_params;

KBD_KERNEL(ptx_i32, 256, ptx_i32_params) {
  kbd_lanes_i32 v;
  kbd_lanes_f32 w;
  KBD_FOR_LANES(l) {
    KBD_LANE(v, l) = p.x[kbd_thread_idx(l)];
    KBD_LANE(w, l) = (float)KBD_LANE(v, l);
  }
  int32_t s, a, c;
  float m;
  kbd_warp_reduce(s, v, KBD_RED_SUM);
  kbd_warp_reduce(a, v, KBD_RED_AND);
  kbd_cta_reduce(c, v, KBD_RED_SUM);
  kbd_warp_reduce(m, w, KBD_RED_MAX);
  KBD_FOR_LANES(l) {
    p.y[kbd_thread_idx(l)] = s + a + c;
    p.f[kbd_thread_idx(l)] = m;
  }
}
