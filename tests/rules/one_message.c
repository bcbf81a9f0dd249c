/* tests/rules/one_message.c - one message per mistake (issue 31, item 9): never linked.
 *
 * Compiled with -DKBD_MSG_CASE=<n> by the rules_msg_* tests (tests/rules/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake with MAX_ERRORS: as C11 by gcc and clang, as C++17 by g++, all with -DKBD_CPU,
 * and as CUDA by nvcc for sm_90a. Case n is one common mistake; the compile must fail, its FIRST error line must be
 * the kbd rule (naming the call, the rule and the fix), and the compiler may print at most the given number of
 * error lines in all - the rule check comes first and the call's other uses of the wrong argument must
 * not add errors of their own. Case 0 is the positive control: every call used correctly compiles cleanly
 * under -Werror.
 */
#include <kbd/tile.h>

typedef struct msg_params {
  float *f;
  kbd_bf16 *h;
  long long n;
  kbd_tensor_map map;
} msg_params;

typedef KBD_STILE(f32, 4, 64, KBD_SWIZZLE_NONE) msg_stile;

KBD_KERNEL(msg_kernel, 128, msg_params) {
  KBD_TILE(f32, 4, 64, KBD_WARP) t, u;
  KBD_TILE(f32, 1, 64, KBD_WARP) r;
  KBD_TILE(f32, 8, 64, KBD_WARP) w;
  KBD_SHARED_STILE(msg_stile, s);
  KBD_SHARED(float, sm, 256);
  kbd_lanes_f32 lanes;
  float x = 1.0f;
  KBD_FOR_LANES(q) KBD_LANE(lanes, q) = p.f[q];
  kbd_load2d(t, p.f, 4, 64, 64, 0, 0);
  kbd_load(r, p.f, p.n, 0);
  kbd_zero(u);
  kbd_zero(w);
  (void)x;
  (void)sm;
  (void)s;
  (void)lanes;
#if KBD_MSG_CASE == 0
  /* every call below, used correctly */
  kbd_store(p.f, r, p.n, 0);
  kbd_store2d(p.f, t, 4, 64, 64, 0, 0);
  kbd_store_smem(sm, t, 64);
  kbd_load_smem(u, sm, 64);
  kbd_stile_store(s, t);
  kbd_stile_load(u, s);
  kbd_stile_store_at(s, r, 0, 0);
  kbd_tma_store2d(&p.map, s, 0, 0);
  kbd_tma_reduce_add2d(&p.map, s, 0, 0);
  kbd_reduce(x, t, KBD_RED_SUM);
  kbd_warp_reduce(x, lanes, KBD_RED_MAX);
  kbd_fill(t, x);
  kbd_add_s(t, t, x);
  kbd_mul_s(u, t, 2);
  kbd_add(t, t, u);
  kbd_fma(t, t, u, t);
  kbd_exp(u, t);
  kbd_convert(w, w);
  kbd_store2d(p.f, u, 4, 64, 64, 0, 0);
  kbd_store2d(p.f, w, 8, 64, 64, 0, 0);
  p.f[0] = x;
/* ---- the old (source-first) argument order of every store-like call ---------------------------------------- */
#elif KBD_MSG_CASE == 1
  kbd_store(r, p.f, p.n, 0);
#elif KBD_MSG_CASE == 2
  kbd_store2d(t, p.f, 4, 64, 64, 0, 0);
#elif KBD_MSG_CASE == 3
  kbd_store_smem(t, sm, 64);
#elif KBD_MSG_CASE == 4
  kbd_stile_store(t, s);
#elif KBD_MSG_CASE == 5
  kbd_stile_store_at(r, s, 0, 0);
#elif KBD_MSG_CASE == 6
  kbd_tma_store2d(s, &p.map, 0, 0);
#elif KBD_MSG_CASE == 7
  kbd_tma_reduce_add2d(s, &p.map, 0, 0);
#elif KBD_MSG_CASE == 8
  /* a load's destination, the register tile, comes first too */
  kbd_stile_load(s, t);
/* ---- a tile where a scalar is wanted ----------------------------------------------------------------------- */
#elif KBD_MSG_CASE == 9
  kbd_reduce(u, t, KBD_RED_SUM);
#elif KBD_MSG_CASE == 10
  kbd_warp_reduce(u, lanes, KBD_RED_SUM);
#elif KBD_MSG_CASE == 11
  kbd_fill(t, u);
#elif KBD_MSG_CASE == 12
  kbd_add_s(t, t, u);
#elif KBD_MSG_CASE == 13
  /* a pointer is no scalar either */
  kbd_mul_s(t, t, p.f);
/* ---- a scalar where a tile is wanted ----------------------------------------------------------------------- */
#elif KBD_MSG_CASE == 14
  kbd_reduce(x, x, KBD_RED_SUM);
#elif KBD_MSG_CASE == 15
  kbd_add(t, t, x);
#elif KBD_MSG_CASE == 16
  kbd_fill(x, 1.0f);
#elif KBD_MSG_CASE == 17
  kbd_load(x, p.f, p.n, 0);
#elif KBD_MSG_CASE == 18
  kbd_fma(t, t, x, t);
#elif KBD_MSG_CASE == 19
  kbd_exp(x, t);
#elif KBD_MSG_CASE == 20
  /* a scalar where the destination pointer goes */
  kbd_store(x, r, p.n, 0);
/* ---- operands that do not match ---------------------------------------------------------------------------- */
#elif KBD_MSG_CASE == 21
  kbd_add(t, t, w);
#elif KBD_MSG_CASE == 22
  kbd_convert(t, w);
#elif KBD_MSG_CASE == 23
  /* a bf16 pointer for an f32 tile */
  kbd_load2d(t, p.h, 4, 64, 64, 0, 0);
/* ---- a shared tile where a register tile is wanted, and the reverse ---------------------------------------- */
#elif KBD_MSG_CASE == 24
  kbd_add(t, t, s);
#elif KBD_MSG_CASE == 25
  kbd_load2d(s, p.f, 4, 64, 64, 0, 0);
#elif KBD_MSG_CASE == 26
  kbd_reduce(x, s, KBD_RED_SUM);
#elif KBD_MSG_CASE == 27
  kbd_tma_store2d(&p.map, t, 0, 0);
#elif KBD_MSG_CASE == 28
  kbd_stile_store(s, u);
  /* the destination is a shared tile */
  kbd_stile_load(s, s);
#else
#error "unknown KBD_MSG_CASE"
#endif
}
