/* test_mbar_poll.c - the polls of an mbarrier phase, kbd_mbarrier_try_wait and kbd_mbarrier_test_wait (kbd/mbarrier.h,
 * kbd/cpu/mbar.h), before and after the arrivals that complete it (issue 31: a mutant whose polls had the parity
 * inverted, or answered 1 for the current, incomplete phase, survived every other test).
 *
 * A poll names a phase by its parity, relative to the barrier's current phase: the current phase's parity is done
 * once that phase completes, the other parity names the immediately preceding phase, which is complete (PTX: waits
 * are valid for the current and the immediately preceding phase; for a fresh barrier the phase "before phase 0"
 * counts as complete). Each poll's answer is written to global memory and checked on the host against that rule:
 *   - the truth table, both calls x both parities, on a fresh barrier (count 1) in phase 0, after the arrival that
 *     completes phase 0 (now in phase 1), and after the one that completes phase 1 (now in phase 2);
 *   - a phase that is incomplete because of a missing arrival (count 2, one arrival) and because of transaction
 *     bytes still outstanding (the last arrival is an arrive.expect_tx), and complete after the complete_tx;
 *   - across warps, ordered by kbd_sync: warp 1 polls before and after warp 0's arrival;
 *   - a consumer that spins on each poll, then reads what the producer stored before its arrival: clean under the
 *     default schedule and 8 seeds x 1 and 2 host threads (a successful poll acquires the phase).
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define NPOLL 64 /* answers a kernel may record */

typedef struct {
  int mode;
  int *out; /* NPOLL poll answers, then (P_SPIN_*) 4 x 32 values the consumer read */
} poll_params;

enum {
  P_TABLE,      /* one warp: the truth table over phases 0, 1, 2 of a count-1 barrier */
  P_INCOMPLETE, /* one warp: count 2; one arrival, then an arrive.expect_tx with bytes outstanding, then complete_tx */
  P_CROSS_WARP, /* warp 1 polls, kbd_sync, warp 0 arrives, kbd_sync, warp 1 polls */
  P_SPIN_TRY,   /* warp 0 stores, arrives; warps 1-3 spin on try_wait (parity 0), then read */
  P_SPIN_TEST   /* the same with test_wait */
};

/* The answers of try_wait(0), try_wait(1), test_wait(0), test_wait(1) on bar, at out[*n .. *n + 3]. */
#define POLL4(bar, out, n)                                                                                             \
  do {                                                                                                                 \
    const int t0_ = kbd_mbarrier_try_wait((bar), 0), t1_ = kbd_mbarrier_try_wait((bar), 1);                            \
    const int s0_ = kbd_mbarrier_test_wait((bar), 0), s1_ = kbd_mbarrier_test_wait((bar), 1);                          \
    KBD_ELECT_ONE {                                                                                                    \
      kbd_st_global(&(out)[(n) + 0], t0_);                                                                             \
      kbd_st_global(&(out)[(n) + 1], t1_);                                                                             \
      kbd_st_global(&(out)[(n) + 2], s0_);                                                                             \
      kbd_st_global(&(out)[(n) + 3], s1_);                                                                             \
    }                                                                                                                  \
    (n) += 4;                                                                                                          \
  } while (0)

KBD_KERNEL(mbar_poll_k, 128, poll_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  KBD_SHARED(int, data, 32);
  const int w = kbd_warp_id();
  int n = 0;
  if (w == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(&bar[0], p.mode == P_INCOMPLETE ? 2 : 1); }
  }
  kbd_sync(); /* the initialisation before any use */
  switch (p.mode) {
  case P_TABLE:
    if (w == 0) {
      POLL4(&bar[0], p.out, n); /* phase 0 current: parity 0 not done, parity 1 (before phase 0) done */
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&bar[0]); }
      POLL4(&bar[0], p.out, n); /* phase 0 complete, phase 1 current */
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&bar[0]); }
      POLL4(&bar[0], p.out, n); /* phase 1 complete, phase 2 current */
    }
    break;
  case P_INCOMPLETE:
    if (w == 0) {
      POLL4(&bar[0], p.out, n);
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&bar[0]); } /* 1 of 2 arrivals */
      POLL4(&bar[0], p.out, n);
      KBD_ELECT_ONE { kbd_mbarrier_arrive_expect_tx(&bar[0], 64); } /* no arrival pending; 64 bytes are */
      POLL4(&bar[0], p.out, n);
      KBD_ELECT_ONE { kbd_mbarrier_complete_tx(&bar[0], 48); } /* 16 bytes still outstanding */
      POLL4(&bar[0], p.out, n);
      KBD_ELECT_ONE { kbd_mbarrier_complete_tx(&bar[0], 16); } /* phase 0 completes */
      POLL4(&bar[0], p.out, n);
    }
    break;
  case P_CROSS_WARP:
    if (w == 1) POLL4(&bar[0], p.out, n);
    kbd_sync();
    if (w == 0) {
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&bar[0]); }
    }
    kbd_sync();
    n = 4;
    if (w == 1) POLL4(&bar[0], p.out, n);
    break;
  case P_SPIN_TRY:
  case P_SPIN_TEST:
    if (w == 0) {
      KBD_FOR_LANES(l) { kbd_st_shared(&data[l], 1000 + l); }
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&bar[0]); }
    } else {
      if (p.mode == P_SPIN_TRY) {
        while (!kbd_mbarrier_try_wait(&bar[0], 0)) {
        }
      } else {
        while (!kbd_mbarrier_test_wait(&bar[0], 0)) {
        }
      }
      KBD_FOR_LANES(l) { kbd_st_global(&p.out[NPOLL + w * 32 + l], kbd_ld_shared(&data[l])); }
    }
    break;
  }
}

static int host_out[NPOLL + 4 * 32];

static kbd_status run_poll(int mode, long threads, long seed) {
  mt_env(threads, seed);
  int *out = NULL;
  for (int i = 0; i < NPOLL + 4 * 32; ++i)
    host_out[i] = -1;
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_copy_to_device(out, host_out, sizeof host_out); /* -1: no answer recorded */
  if (kbd_ok(s)) {
    poll_params p = {mode, out};
    s = mbar_poll_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  kbd_free(out);
  return s;
}

/* Compare the recorded answers with want[]: each row is try_wait(0), try_wait(1), test_wait(0), test_wait(1). */
static void expect_answers(int mode, const int (*want)[4], int rows, const char *const *what) {
  static const char *const call[4] = {"kbd_mbarrier_try_wait(bar, 0)", "kbd_mbarrier_try_wait(bar, 1)",
                                      "kbd_mbarrier_test_wait(bar, 0)", "kbd_mbarrier_test_wait(bar, 1)"};
  MT_ASSERT_OK(run_poll(mode, 1, -1));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < 4; ++c)
      if (host_out[4 * r + c] != want[r][c])
        fail_msg("%s %s returned %d, want %d", what[r], call[c], host_out[4 * r + c], want[r][c]);
  for (int i = 4 * rows; i < NPOLL; ++i)
    assert_int_equal(host_out[i], -1);
}

static void test_fresh_barrier_phases(void **state) {
  (void)state;
  static const int want[3][4] = {{0, 1, 0, 1}, {1, 0, 1, 0}, {0, 1, 0, 1}};
  static const char *const what[3] = {
      "fresh barrier (phase 0 current, no arrival):",
      "after the arrival that completes phase 0 (phase 1 current):",
      "after the arrival that completes phase 1 (phase 2 current):",
  };
  expect_answers(P_TABLE, want, 3, what);
}

static void test_incomplete_phase(void **state) {
  (void)state;
  static const int want[5][4] = {{0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}, {1, 0, 1, 0}};
  static const char *const what[5] = {
      "count 2, no arrival:",
      "count 2, 1 of 2 arrivals:",
      "all arrivals, 64 transaction bytes outstanding:",
      "all arrivals, 16 transaction bytes outstanding:",
      "all arrivals and bytes (phase 0 complete):",
  };
  expect_answers(P_INCOMPLETE, want, 5, what);
}

static void test_cross_warp(void **state) {
  (void)state;
  static const int want[2][4] = {{0, 1, 0, 1}, {1, 0, 1, 0}};
  static const char *const what[2] = {
      "warp 1 before warp 0's arrival:",
      "warp 1 after warp 0's arrival:",
  };
  expect_answers(P_CROSS_WARP, want, 2, what);
  for (long seed = 0; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      MT_ASSERT_OK(run_poll(P_CROSS_WARP, threads, seed));
      static const int flat[8] = {0, 1, 0, 1, 1, 0, 1, 0};
      for (int i = 0; i < 8; ++i)
        assert_int_equal(host_out[i], flat[i]);
    }
}

static void test_spin_then_read(void **state) {
  (void)state;
  for (int mode = P_SPIN_TRY; mode <= P_SPIN_TEST; ++mode)
    for (long seed = -1; seed < 8; ++seed)
      for (long threads = 1; threads <= 2; ++threads) {
        MT_ASSERT_OK(run_poll(mode, threads, seed));
        for (int w = 1; w < 4; ++w)
          for (int l = 0; l < 32; ++l)
            assert_int_equal(host_out[NPOLL + w * 32 + l], 1000 + l);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_fresh_barrier_phases),
      MT_TEST(test_incomplete_phase),
      MT_TEST(test_cross_warp),
      MT_TEST(test_spin_then_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
