/* test_issue_counts.c - the execution model: per-thread operations are issued 32 times per warp, warp
 * collectives once per warp, elected-lane code once per warp - on the CPU as on the GPU. Where kernel code
 * would make the CPU count differ from the GPU's, the machine fails with KBD_ERR_ISSUE at the site. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

enum {
  IC_ATOMIC_PER_LANE,   /* ok: 32 atomics per warp */
  IC_ATOMIC_ELECTED,    /* ok: 1 atomic per warp */
  IC_ONE_LANE_TICKET,   /* ok: KBD_ELECT_ONE_VALUE ticket, 1 per warp */
  IC_BREAK_THEN_SYNC,   /* ok: leaving KBD_FOR_LANES with break ends the region */
  IC_ATOMIC_UNIFORM,    /* bug: atomic in warp-uniform code */
  IC_SYNC_IN_LANES,     /* bug: kbd_sync inside KBD_FOR_LANES */
  IC_REDUCE_IN_LANES,   /* bug: a warp reduction (shuffles) inside KBD_FOR_LANES */
  IC_SYNC_IN_ELECT,     /* bug: kbd_sync inside KBD_ELECT_ONE */
  IC_ELECT_IN_LANES     /* bug: elect.sync inside KBD_FOR_LANES */
};

typedef struct {
  int mode;
  uint32_t *count;
} ic_params;

static int ic_line;

static int early(int lane) { return lane == 3; }

KBD_KERNEL(ic_k, 128, ic_params) {
  switch (p.mode) {
  case IC_ATOMIC_PER_LANE:
    KBD_FOR_LANES(lane) { kbd_atomic_add_u32(p.count, 1u + 0u * (uint32_t)lane); }
    break;
  case IC_ATOMIC_ELECTED:
    KBD_ELECT_ONE { kbd_atomic_add_u32(p.count, 1u); }
    break;
  case IC_ONE_LANE_TICKET: {
    KBD_ELECT_ONE_VALUE(uint32_t, ticket, kbd_atomic_add_u32(p.count, 1u));
    (void)ticket;
    break;
  }
  case IC_BREAK_THEN_SYNC:
    KBD_FOR_LANES(lane) {
      if (early(lane)) break;
    }
    kbd_sync();
    KBD_ELECT_ONE { kbd_atomic_add_u32(p.count, 1u); }
    break;
  case IC_ATOMIC_UNIFORM:
    MT_MARK(ic_line); kbd_atomic_add_u32(p.count, 1u);
    break;
  case IC_SYNC_IN_LANES:
    KBD_FOR_LANES(lane) {
      (void)lane;
      MT_MARK(ic_line); kbd_sync();
    }
    break;
  case IC_REDUCE_IN_LANES: {
    kbd_lanes_f32 x;
    KBD_FOR_LANES(lane) {
      KBD_LANE(x, lane) = 1.0f;
      float r;
      MT_MARK(ic_line); kbd_warp_reduce(r, x, KBD_RED_SUM);
      (void)r;
    }
    break;
  }
  case IC_SYNC_IN_ELECT:
    KBD_ELECT_ONE {
      MT_MARK(ic_line); kbd_sync();
    }
    break;
  case IC_ELECT_IN_LANES:
    KBD_FOR_LANES(lane) {
      (void)lane;
      MT_MARK(ic_line); KBD_ELECT_ONE { kbd_atomic_add_u32(p.count, 1u); }
    }
    break;
  }
}

static kbd_status run_ic(int mode, uint32_t *got) {
  uint32_t *count = NULL;
  kbd_status s = kbd_malloc((void **)&count, sizeof *count);
  if (!kbd_ok(s)) return s;
  (void)kbd_memset_device(count, 0, sizeof *count);
  ic_params p = {mode, count};
  s = ic_k(kbd_cfg_1d(2), p);
  (void)kbd_copy_to_host(got, count, sizeof *got);
  (void)kbd_free(count);
  return s;
}

static void test_counts_match_the_gpu(void **state) {
  (void)state;
  for (long seed = 0; seed < 4; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      mt_env(threads, seed);
      uint32_t got = 0;
      MT_ASSERT_OK(run_ic(IC_ATOMIC_PER_LANE, &got));
      assert_int_equal(got, 2 * 4 * 32); /* 2 blocks x 4 warps x 32 lanes: the GPU's 256 threads */
      MT_ASSERT_OK(run_ic(IC_ATOMIC_ELECTED, &got));
      assert_int_equal(got, 2 * 4); /* one elected lane per warp */
      MT_ASSERT_OK(run_ic(IC_ONE_LANE_TICKET, &got));
      assert_int_equal(got, 2 * 4);
      MT_ASSERT_OK(run_ic(IC_BREAK_THEN_SYNC, &got));
      assert_int_equal(got, 2 * 4);
    }
}

static void expect_issue(int mode, const char *needle) {
  uint32_t got = 0;
  const kbd_status s = run_ic(mode, &got);
  MT_ASSERT_CODE(s, KBD_ERR_ISSUE);
  MT_ASSERT_AT(s, MT_LINE(ic_line));
  MT_ASSERT_HAS(s, needle);
}

static void test_misuse_is_reported(void **state) {
  (void)state;
  expect_issue(IC_ATOMIC_UNIFORM, "kbd_atomic_add_u32 in warp-uniform code: on the GPU every lane issues it");
  expect_issue(IC_SYNC_IN_LANES, "a barrier inside per-lane code (KBD_FOR_LANES entered at");
  expect_issue(IC_REDUCE_IN_LANES, "shfl.sync inside per-lane code");
  expect_issue(IC_SYNC_IN_ELECT, "a barrier inside elected-lane code (KBD_ELECT_ONE entered at");
  expect_issue(IC_ELECT_IN_LANES, "elect.sync (KBD_ELECT_ONE) inside per-lane code");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_counts_match_the_gpu),
      MT_TEST(test_misuse_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
