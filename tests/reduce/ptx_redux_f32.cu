/* PTX probe: an f32 warp max and min are one redux.sync.{max,min}.f32 each on every target where ptxas
 * accepts the f32 form (sm_100a, sm_100f, sm_103a, sm_103f; ptx/redux.h). tests/ptx registers the sm_100f
 * and sm_103a builds against ptx_redux_f32.check (sm_100a is covered by the examples' checks).
 * With -DPTX_REDUX_DIRECT the raw wrapper is called directly: on any other target that must not compile,
 * and the error names the targets that have it. */
#include <kbd/reduce.h>
#include <kbd/tile.h>

typedef struct {
  const float *x;
  float *y;
} ptx_redux_f32_params;

KBD_KERNEL(ptx_redux_f32, 128, ptx_redux_f32_params) {
  kbd_lanes_f32 w;
  KBD_FOR_LANES(l) { KBD_LANE(w, l) = p.x[kbd_thread_idx(l)]; }
  float mx, mn;
  kbd_warp_reduce(mx, w, KBD_RED_MAX);
  kbd_warp_reduce(mn, w, KBD_RED_MIN);
#if defined(PTX_REDUX_DIRECT) && KBD_DEVICE_PASS
  mx += kbd_ptx_redux_sync_max_f32(mn, 0xffffffffu);
#endif
  KBD_FOR_LANES(l) { p.y[kbd_thread_idx(l)] = mx - mn; }
}
