/* Must not compile: each CASE_* is an op its dtype does not support (tests/reduce/CMakeLists.txt). */
#include <kbd/reduce.h>
#include <kbd/scan.h>
#include <kbd/tile.h>

typedef struct { int unused; } rj_params;
KBD_KERNEL(rj, 32, rj_params) {
#if defined(CASE_xor_f32)
  KBD_TILE(f32, 1, 64, KBD_WARP) t;
  float s;
  kbd_fill(t, 1.0f);
  kbd_reduce(s, t, KBD_RED_XOR);
#elif defined(CASE_and_bf16)
  KBD_TILE(bf16, 1, 64, KBD_WARP) t;
  float s;
  kbd_fill(t, 1.0f);
  kbd_reduce(s, t, KBD_RED_AND);
#elif defined(CASE_scan_xor)
  kbd_lanes_i32 x, y;
  KBD_FOR_LANES(l) KBD_LANE(x, l) = l;
  kbd_warp_scan(y, x, KBD_RED_XOR, 0);
#endif
}
