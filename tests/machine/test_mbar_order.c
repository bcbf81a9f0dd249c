/* test_mbar_order.c - the CPU machine's phase-order check (kbd/cpu/mbar.h): a warp's wait for phase n - 1 of an
 * mbarrier must happen before the arrivals that complete phase n, or in some schedule the warp arrives late, finds
 * phase n complete, and waits for a parity that came and went (a parity wait cannot tell n - 1 from n + 1). The
 * check is on the happens-before order, so the first run under the default schedule reports it, even though in
 * that run every wait is on time; the correct ring (every consumer warp releases, or the release follows a
 * barrier the waiting warps take part in) passes under every schedule. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

enum { MO_LEADER_ONLY = 0, MO_ALL_RELEASE = 1, MO_BARRIER_THEN_LEADER = 2 };

typedef struct {
  int mode, iters;
  int *done;
} mo_params;

static int follower_wait_line;

/* Warp 0 produces, warps 1 and 2 consume a 1-stage ring of `iters` rounds. */
KBD_KERNEL(mbar_order, 96, mo_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, full, 1, 8);
  KBD_SHARED_ALIGNED(kbd_mbarrier, empty, 1, 8);
  KBD_WARP_RANGE(consumers, 1, 2);
  const int w = kbd_warp_id();
  if (w == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(full, 1);
      kbd_mbarrier_init(empty, p.mode == MO_ALL_RELEASE ? 2 : 1);
    }
  }
  kbd_sync();
  for (int it = 0; it < p.iters; ++it) {
    const unsigned par = (unsigned)it & 1u;
    if (w == 0) {
      kbd_mbarrier_wait(empty, par ^ 1u); /* a fresh barrier's parity 1 counts as released */
      KBD_ELECT_ONE { kbd_mbarrier_arrive(full); }
    } else {
      if (w == 2) {
        MT_MARK(follower_wait_line); kbd_mbarrier_wait(full, par);
      } else {
        kbd_mbarrier_wait(full, par);
      }
      if (p.mode == MO_BARRIER_THEN_LEADER) kbd_scope_sync(consumers);
      if (p.mode == MO_ALL_RELEASE || w == 1) {
        KBD_ELECT_ONE { kbd_mbarrier_arrive(empty); }
      }
    }
  }
  KBD_ELECT_ONE { __atomic_fetch_add(p.done, 1, __ATOMIC_RELAXED); }
}

static kbd_status run(int mode, int iters, long seed, int *done) {
  mt_env(1, seed);
  *done = 0;
  mo_params p = {mode, iters, done};
  return mbar_order(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
}

static void test_unordered_follower_is_reported_in_the_first_run(void **state) {
  (void)state;
  int *done = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&done, sizeof *done));
  kbd_status s = run(MO_LEADER_ONLY, 6, 0, done); /* default schedule: every wait happens to be on time */
  MT_ASSERT_CODE(s, KBD_ERR_MBARRIER);
  MT_ASSERT_AT(s, MT_LINE(follower_wait_line));
  MT_ASSERT_HAS(s, "warp 2 waited here for phase 0 of the mbarrier");
  MT_ASSERT_HAS(s, "nothing orders that wait before the arrivals that complete phase 1");
  /* other schedules: the same report, or the hang itself (a late follower aliases the parity) */
  for (long seed = 1; seed < 6; ++seed) {
    s = run(MO_LEADER_ONLY, 6, seed, done);
    if (s.code != KBD_ERR_DEADLOCK) MT_ASSERT_CODE(s, KBD_ERR_MBARRIER);
  }
  MT_ASSERT_OK(kbd_free(done));
}

static void test_ordered_rings_pass(void **state) {
  (void)state;
  int *done = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&done, sizeof *done));
  for (int mode = MO_ALL_RELEASE; mode <= MO_BARRIER_THEN_LEADER; ++mode)
    for (long seed = 0; seed < 6; ++seed) {
      MT_ASSERT_OK(run(mode, 9, seed, done));
      assert_int_equal(*done, 3);
    }
  MT_ASSERT_OK(kbd_free(done));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_unordered_follower_is_reported_in_the_first_run),
      MT_TEST(test_ordered_rings_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
