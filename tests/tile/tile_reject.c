/* tests/tile/tile_reject.c - compile-time rules of the tile API (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the tile_reject_* tests (tests/tile/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake: as C11 with -DKBD_CPU, as C++17 with -DKBD_CPU, and as CUDA by nvcc
 * for sm_90a. Case n must stop the compiler with an error naming the rule it breaks. Case 0 is the
 * positive control: every construct the other cases get wrong, used correctly, must compile cleanly
 * (with -Werror) on each of those compilers.
 */
#include <kbd/tile.h>

typedef struct reject_params {
  float *f;
  kbd_bf16 *h;
  kbd_i32 *i;
  long long n;
} reject_params;

#if KBD_REJECT_CASE == 0
/* --- positive control ------------------------------------------------------------------------------ */
KBD_KERNEL(reject_ok_32, 32, reject_params) {
  KBD_TILE(f32, 1, 64, KBD_WARP) a, b;
  kbd_load(a, p.f, p.n, 0);
  kbd_exp(b, a);
  kbd_store(p.f, b, p.n, 0);
  kbd_store((void *)p.f, b, p.n, 0); /* docs/tiles.md: a void * is accepted for any tile */
}
KBD_KERNEL(reject_ok_1024, 1024, reject_params) {
  KBD_TILE(f32, 1, 4096, KBD_CTA) a, b, d;
  KBD_TILE(bf16, 1, 4096, KBD_CTA) h;
  KBD_TILE(i32, 1, 4096, KBD_CTA) k;
  KBD_TILE(f32, 2, 64, KBD_WARP) m;
  KBD_TILE_L(f32, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  KBD_TILE_L(f32, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_C) mc;
  kbd_load(a, p.f, p.n, 0);
  kbd_load(h, p.h, p.n, 0);
  kbd_load(k, p.i, p.n, 0);
  kbd_convert(b, h);
  kbd_add(d, a, b);
  kbd_fma(d, a, b, d);
  kbd_gelu(d, d);
  kbd_add(k, k, k);
  kbd_abs(k, k);
  kbd_store(p.i, k, p.n, 0);
  kbd_convert(h, d);
  kbd_store(p.h, h, p.n, 0);
  kbd_load2d(m, p.f, 2, 64, 64, 0, 0);
  KBD_MAP(m, m, x, r, c, (c <= r) ? x : -1.0f);
  kbd_store2d(p.f, m, 2, 64, 64, 0, 0);
  kbd_zero(acc);
  kbd_store2d(p.f, acc, 64, 64, 64, 0, 0);
  kbd_fill(mc, 1.0f);
  kbd_store2d(p.f, mc, 16, 16, 16, 0, 0);
}

#elif KBD_REJECT_CASE == 1
/* rows*cols = 48 is not a multiple of the warp's 32 threads */
KBD_KERNEL(reject_1, 128, reject_params) {
  KBD_TILE(f32, 1, 48, KBD_WARP) t;
  kbd_zero(t);
}

#elif KBD_REJECT_CASE == 2
/* a scope of 48 threads is not whole warps */
KBD_KERNEL(reject_2, 96, reject_params) {
  KBD_TILE(f32, 1, 96, 48) t;
  kbd_zero(t);
}

#elif KBD_REJECT_CASE == 3
/* no dtype token f64 */
KBD_KERNEL(reject_3, 128, reject_params) {
  KBD_TILE(f64, 1, 64, KBD_WARP) t;
  kbd_zero(t);
}

#elif KBD_REJECT_CASE == 4
/* exp on an integer destination */
KBD_KERNEL(reject_4, 128, reject_params) {
  KBD_TILE(i32, 1, 64, KBD_WARP) t;
  kbd_load(t, p.i, p.n, 0);
  kbd_exp(t, t);
  kbd_store(p.i, t, p.n, 0);
}

#elif KBD_REJECT_CASE == 5
/* more threads than a block may have */
KBD_KERNEL(reject_5, 2048, reject_params) { (void)p; }

#elif KBD_REJECT_CASE == 6
/* not whole warps */
KBD_KERNEL(reject_6, 100, reject_params) { (void)p; }

#elif KBD_REJECT_CASE == 7
/* operands of different shapes */
KBD_KERNEL(reject_7, 128, reject_params) {
  KBD_TILE(f32, 1, 64, KBD_WARP) a;
  KBD_TILE(f32, 1, 128, KBD_WARP) b;
  kbd_load(a, p.f, p.n, 0);
  kbd_load(b, p.f, p.n, 0);
  kbd_add(a, a, b);
  kbd_store(p.f, a, p.n, 0);
}

#elif KBD_REJECT_CASE == 8
/* kbd_load is for 1 x N tiles */
KBD_KERNEL(reject_8, 128, reject_params) {
  KBD_TILE(f32, 2, 64, KBD_WARP) t;
  kbd_load(t, p.f, p.n, 0);
  kbd_store2d(p.f, t, 2, 64, 64, 0, 0);
}

#elif KBD_REJECT_CASE == 9
/* a float pointer for a bf16 tile */
KBD_KERNEL(reject_9, 128, reject_params) {
  KBD_TILE(bf16, 1, 64, KBD_WARP) t;
  kbd_load(t, p.f, p.n, 0);
  kbd_store(p.h, t, p.n, 0);
}

#elif KBD_REJECT_CASE == 10
/* a wgmma accumulator has N a multiple of 8 */
KBD_KERNEL(reject_10, 128, reject_params) {
  KBD_TILE_L(f32, 64, 12, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) t;
  kbd_zero(t);
  kbd_store2d(p.f, t, 64, 12, 12, 0, 0);
}

#elif KBD_REJECT_CASE == 11
/* a wgmma accumulator belongs to a warpgroup, not a warp */
KBD_KERNEL(reject_11, 128, reject_params) {
  KBD_TILE_L(f32, 64, 64, KBD_WARP, KBD_LAYOUT_WGMMA_ACC) t;
  kbd_zero(t);
  kbd_store2d(p.f, t, 64, 64, 64, 0, 0);
}

#elif KBD_REJECT_CASE == 12
/* fma is float-only too */
KBD_KERNEL(reject_12, 128, reject_params) {
  KBD_TILE(i32, 1, 64, KBD_WARP) t;
  kbd_load(t, p.i, p.n, 0);
  kbd_fma(t, t, t, t);
  kbd_store(p.i, t, p.n, 0);
}

#elif KBD_REJECT_CASE == 13
/* the source-first order of kbd before 2026-11: the pointer lands where the tile goes */
KBD_KERNEL(reject_13, 128, reject_params) {
  KBD_TILE(f32, 1, 64, KBD_WARP) t;
  kbd_load(t, p.f, p.n, 0);
  kbd_store(t, p.f, p.n, 0);
}

#elif KBD_REJECT_CASE == 14
/* the same for the 2D and shared-memory stores */
KBD_KERNEL(reject_14, 128, reject_params) {
  KBD_TILE(f32, 4, 64, KBD_WARP) t;
  kbd_load2d(t, p.f, 4, 64, 64, 0, 0);
  kbd_store2d(t, p.f, 4, 64, 64, 0, 0);
}

#else
#error "tile_reject.c: unknown KBD_REJECT_CASE"
#endif
