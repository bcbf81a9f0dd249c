/* tests/machine/scope_reject.c - compile-time rules of warp ranges (kbd/scope.h); never linked.
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the scope_reject_* tests (tests/machine/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake: as C11 (gcc, clang) and C++17 (g++) with -DKBD_CPU, and by nvcc for
 * sm_90a. Case n must stop the compiler with an error naming the rule it breaks; case 0, the positive
 * control, uses every construct correctly and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct scope_reject_params {
  int *out;
} scope_reject_params;

#if KBD_REJECT_CASE == 0
KBD_KERNEL(scope_ok_288, 288, scope_reject_params) {
  KBD_WARP_RANGE(consumers, 0, 8);
  KBD_WARP_RANGE(producer, 8, 1);
  if (kbd_scope_contains(consumers)) kbd_scope_sync(consumers);
  KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = producer.bar_id; }
}
/* 1024 threads: 8 warpgroup-reduction ids reserved, 7 ids left for ranges */
KBD_KERNEL(scope_ok_1024, 1024, scope_reject_params) {
  KBD_WARP_RANGE(r1, 0, 32);
  KBD_WARP_RANGE(r2, 0, 1);
  KBD_WARP_RANGE(r3, 1, 1);
  KBD_WARP_RANGE(r4, 2, 1);
  KBD_WARP_RANGE(r5, 3, 1);
  KBD_WARP_RANGE(r6, 4, 4);
  KBD_WARP_RANGE(r7, 31, 1);
  kbd_scope_sync(r1);
  KBD_FOR_LANES(l) {
    p.out[kbd_thread_idx(l)] = r2.bar_id + r3.bar_id + r4.bar_id + r5.bar_id + r6.bar_id + r7.bar_id;
  }
}
#elif KBD_REJECT_CASE == 1
/* a range outside a kernel body: no registry to take an id from */
KBD_DEV int scope_helper(void) {
  KBD_WARP_RANGE(r, 0, 1);
  return r.bar_id;
}
#elif KBD_REJECT_CASE == 2
KBD_KERNEL(scope_count0, 128, scope_reject_params) {
  KBD_WARP_RANGE(r, 0, 0);
  KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = r.bar_id; }
}
#elif KBD_REJECT_CASE == 3
/* warps 2..4 of a 4-warp block */
KBD_KERNEL(scope_too_big, 128, scope_reject_params) {
  KBD_WARP_RANGE(r, 2, 3);
  KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = r.bar_id; }
}
#elif KBD_REJECT_CASE == 4
KBD_KERNEL(scope_too_many, 1024, scope_reject_params) {
  KBD_WARP_RANGE(r1, 0, 1);
  KBD_WARP_RANGE(r2, 1, 1);
  KBD_WARP_RANGE(r3, 2, 1);
  KBD_WARP_RANGE(r4, 3, 1);
  KBD_WARP_RANGE(r5, 4, 1);
  KBD_WARP_RANGE(r6, 5, 1);
  KBD_WARP_RANGE(r7, 6, 1);
  KBD_WARP_RANGE(r8, 7, 1);
  KBD_FOR_LANES(l) {
    p.out[kbd_thread_idx(l)] = r1.bar_id + r2.bar_id + r3.bar_id + r4.bar_id + r5.bar_id + r6.bar_id + r7.bar_id +
                               r8.bar_id;
  }
}
#elif KBD_REJECT_CASE == 5
KBD_KERNEL(scope_negative, 128, scope_reject_params) {
  KBD_WARP_RANGE(r, -1, 2);
  KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = r.bar_id; }
}
#endif
