/* test_regs.c - setmaxnreg on the CPU machine: the CTA's register budget (KBD_REGS_PER_THREAD x threads) is
 * a pool that .dec fills and .inc drains. Counts that fit run under every schedule, in either order of the
 * producer's .dec and the consumers' .inc; counts that oversubscribe the budget hang on the GPU and are a
 * deadlock report naming setmaxnreg.inc with the numbers here, under every schedule. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

typedef struct {
  int *done;
  int late; /* 1: the producer gives its registers back only after the consumers asked for theirs */
} rg_params;

static int inc_line, inc_over_line, bad_line;


/* 384 threads: 168 registers each at launch. 40 x 128 + 232 x 256 = 64512 = 168 x 384: fits exactly. */
KBD_KERNEL(regs_fit, 384, rg_params) {
  if (kbd_warpgroup_id() == 0) {
    if (p.late) kbd_bar_sync(1, 384); /* after every consumer warp announced its .inc */
    kbd_setmaxnreg_dec(40);
  } else {
    if (p.late) kbd_bar_arrive(1, 384);
    MT_MARK(inc_line); kbd_setmaxnreg_inc(232); /* late: waits for the producer's .dec */
  }
  __atomic_fetch_add(p.done, 1, __ATOMIC_RELAXED);
}

/* Consumers block in .inc before the producer's first .dec, then wait at their own barrier while the other
 * producer warps' .decs go on: a warp woken for the register pool must not leave a barrier it now waits at. */
typedef struct {
  int *arrived, *seen_min;
} rg_wake_params;
KBD_KERNEL(regs_then_barrier, 384, rg_wake_params) {
  if (kbd_warpgroup_id() == 0) {
    kbd_bar_sync(1, 384);
    kbd_setmaxnreg_dec(40);
  } else {
    kbd_bar_arrive(1, 384);
    kbd_setmaxnreg_inc(232);
    KBD_ELECT_ONE { __atomic_fetch_add(p.arrived, 1, __ATOMIC_RELAXED); }
    kbd_bar_sync(2, 256); /* the 8 consumer warps */
    KBD_ELECT_ONE {
      const int n = __atomic_load_n(p.arrived, __ATOMIC_RELAXED);
      int cur = __atomic_load_n(p.seen_min, __ATOMIC_RELAXED);
      while (n < cur && !__atomic_compare_exchange_n(p.seen_min, &cur, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      }
    }
  }
}

/* 56 x 128 + 232 x 256 = 66560 > 64512: one consumer warp waits forever for 2048 registers. */
KBD_KERNEL(regs_over, 384, rg_params) {
  if (kbd_warpgroup_id() == 0) {
    kbd_setmaxnreg_dec(56);
  } else {
    MT_MARK(inc_over_line); kbd_setmaxnreg_inc(232);
  }
  __atomic_fetch_add(p.done, 1, __ATOMIC_RELAXED);
}

/* .inc to fewer registers than the warp has is undefined behaviour on the GPU. */
KBD_KERNEL(regs_inc_down, 256, rg_params) {
  MT_MARK(bad_line); kbd_setmaxnreg_inc(128); /* 256 threads launch with 256 each */
  __atomic_fetch_add(p.done, 1, __ATOMIC_RELAXED);
}

static void test_budget_formula(void **state) {
  (void)state;
  assert_int_equal(KBD_REGS_PER_THREAD(384), 168); /* ptxas' count for the GEMM (examples/gemm/gemm.check) */
  assert_int_equal(KBD_REGS_PER_THREAD(512), 128);
  assert_int_equal(KBD_REGS_PER_THREAD(256), 256);
  assert_int_equal(KBD_REGS_PER_THREAD(128), 256);
  assert_int_equal(KBD_REGS_PER_THREAD(640), 96); /* 102.4 rounded down to the allocation step of 8 */
}

static void test_fitting_counts_run_in_either_order(void **state) {
  (void)state;
  int *done = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&done, sizeof *done));
  for (int late = 0; late < 2; ++late)
    for (long seed = 0; seed < 4; ++seed) {
      mt_env(1, seed);
      *done = 0;
      rg_params p = {done, late};
      MT_ASSERT_OK(regs_fit(kbd_cfg(kbd_dim(2, 1, 1), 0, NULL), p));
      assert_int_equal(*done, 2 * 12); /* every warp of both blocks got through */
      assert_int_not_equal(MT_LINE(inc_line), 0);
    }
  MT_ASSERT_OK(kbd_free(done));
}

static void test_pool_wakeup_leaves_barriers_alone(void **state) {
  (void)state;
  int *arrived = NULL, *seen_min = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&arrived, sizeof *arrived));
  MT_ASSERT_OK(kbd_malloc((void **)&seen_min, sizeof *seen_min));
  for (long seed = 0; seed < 4; ++seed) {
    mt_env(1, seed);
    *arrived = 0;
    *seen_min = 1000;
    rg_wake_params p = {arrived, seen_min};
    MT_ASSERT_OK(regs_then_barrier(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p));
    assert_int_equal(*arrived, 8);
    assert_int_equal(*seen_min, 8); /* no consumer warp got past its barrier before all 8 had arrived */
  }
  MT_ASSERT_OK(kbd_free(arrived));
  MT_ASSERT_OK(kbd_free(seen_min));
}

static void test_oversubscribed_counts_deadlock(void **state) {
  (void)state;
  int *done = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&done, sizeof *done));
  for (long seed = 0; seed < 4; ++seed) {
    mt_env(1, seed);
    *done = 0;
    rg_params p = {done, 0};
    kbd_status s = regs_over(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    char b[4096];
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "at %s:%d waits for setmaxnreg.inc: 2048 more registers for this warp (168 -> 232 per thread), the CTA's pool holds", __FILE__, MT_LINE(inc_over_line)));
    MT_ASSERT_HAS(s, "168 registers per thread x 384 threads = 64512");
    assert_int_equal(*done, 11); /* 14336 registers given back: 7 of the 8 consumer warps got theirs */
  }
  MT_ASSERT_OK(kbd_free(done));
}

static void test_inc_below_current_count_faults(void **state) {
  (void)state;
  int *done = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&done, sizeof *done));
  *done = 0;
  rg_params p = {done, 0};
  kbd_status s = regs_inc_down(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(bad_line));
  MT_ASSERT_HAS(s, "setmaxnreg.inc 128 in warp 0, which has 256 registers per thread");
  MT_ASSERT_OK(kbd_free(done));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_budget_formula),
      MT_TEST(test_fitting_counts_run_in_either_order),
      MT_TEST(test_pool_wakeup_leaves_barriers_alone),
      MT_TEST(test_oversubscribed_counts_deadlock),
      MT_TEST(test_inc_below_current_count_faults),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
