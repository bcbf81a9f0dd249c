/* tests/softmax/f32x2_reject.c - the arch rule of kbd/f32x2.h (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the f32x2_reject_* tests (tests/softmax/CMakeLists.txt). Cases 1-3 call
 * kbd_f32x2_fma / _mul / _add: they must compile cleanly for sm_100a (and the CPU machine emulating it) and stop the
 * compiler with the rule's message for sm_90a (and -DKBD_CPU_ARCH=90). Case 0 (the positive control) uses what is
 * meant for both archs - kbd_exp2_poly_ftz_x2, kbd_softmax_update_lazy_poly, kbd_softmax_rescale_packed - and must
 * compile cleanly with -Werror everywhere.
 */
#include <kbd/tile.h>

typedef struct fx_params {
  const float *x;
  float *y;
} fx_params;

KBD_KERNEL(fx_kernel, 128, fx_params) {
  KBD_TILE_L(f32, 128, 32, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) s;
  kbd_load2d(s, p.x, 128, 32, 32, 0, 0);
#if KBD_REJECT_CASE == 0
  KBD_TILE_L(f32, 128, 16, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) o;
  KBD_SOFTMAX_STATE(s) st;
  kbd_softmax_init(st);
  kbd_fill(o, 1.0f);
  kbd_softmax_update_lazy_poly(s, st, s, 0.125f, KBD_SOFTMAX_SLACK, 2);
  kbd_softmax_rescale_packed(o, st);
  kbd_store2d(p.y, o, 128, 16, 16, 0, 0);
  KBD_MAP(s, s, v, r, c, ((void)r, (void)c, v + 1.0f));
  KBD_FOR_LANES(l) {
    float e[2] = {p.x[0], p.x[1]}, y[2];
    kbd_exp2_poly_ftz_x2(y, e);
    if (l == 0) kbd_st_global(&p.y[0], y[0] + y[1]);
  }
#else
  KBD_FOR_LANES(l) {
    const float a[2] = {p.x[0], p.x[1]}, b[2] = {p.x[2], p.x[3]};
    float d[2];
#if KBD_REJECT_CASE == 1
    kbd_f32x2_fma(d, a, b, a);
#elif KBD_REJECT_CASE == 2
    kbd_f32x2_mul(d, a, b);
#else
    kbd_f32x2_add(d, a, b);
#endif
    if (l == 0) kbd_st_global(&p.y[0], d[0] + d[1]);
  }
#endif
  kbd_store2d(p.y, s, 128, 32, 32, 0, 0);
}
