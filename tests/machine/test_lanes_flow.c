/* test_lanes_flow.c - control flow in per-lane and elected-lane code keeps the GPU's meaning
 * (kbd/cpu/lanes.h, docs/execution-model.md).
 *
 * On the GPU the body of KBD_FOR_LANES runs once per thread for its own lane, so `continue` and `break`
 * end that lane's body only and the other lanes still run theirs; the results below prove the later lanes
 * ran. `return` leaves with the lanes that take it: accepted in lane 0's iteration (the whole warp's
 * return when the condition is warp-uniform), a KBD_ERR_ISSUE fault from a later lane, and a fault out
 * of KBD_ELECT_ONE. A KBD_FOR_LANES nested in per-lane or elected-lane code would run 32 times per lane
 * here and once on the GPU: a fault. Each fault names the region's file:line, in the first run.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

typedef struct {
  int mode;
  int32_t *out; /* 64 words: 2 warps; then 64 words the code after the switch writes */
} lf_params;

enum { L_CONTINUE, L_BREAK, L_RETURN_UNIFORM, L_RETURN_LATER, L_RETURN_ELECT, L_NESTED, L_LANES_IN_ELECT };

static int lf_line;

KBD_KERNEL(lanes_flow_k, 64, lf_params) {
  switch (p.mode) {
  case L_CONTINUE:
    KBD_FOR_LANES(l) {
      if (l % 2) continue;
      kbd_st_global(&p.out[kbd_thread_idx(l)], 1);
    }
    break;
  case L_BREAK:
    KBD_FOR_LANES(l) {
      if (l == 3) break; /* lane 3's body ends; lanes 4..31 run theirs */
      kbd_st_global(&p.out[kbd_thread_idx(l)], 1);
    }
    break;
  case L_RETURN_UNIFORM:
    KBD_FOR_LANES(l) {
      if (kbd_warp_id() == 1) return; /* warp-uniform: the whole warp 1 leaves in lane 0's iteration */
      kbd_st_global(&p.out[kbd_thread_idx(l)], 1);
    }
    break;
  case L_RETURN_LATER:
    MT_MARK(lf_line); KBD_FOR_LANES(l) {
      if (l == 5) return;
      kbd_st_global(&p.out[kbd_thread_idx(l)], 1);
    }
    break;
  case L_RETURN_ELECT:
    MT_MARK(lf_line); KBD_ELECT_ONE {
      return;
    }
    break;
  case L_NESTED:
    KBD_FOR_LANES(l) {
      MT_MARK(lf_line); KBD_FOR_LANES(m) { (void)m; }
      (void)l;
    }
    break;
  case L_LANES_IN_ELECT:
    KBD_ELECT_ONE {
      MT_MARK(lf_line); KBD_FOR_LANES(m) { (void)m; }
    }
    break;
  }
  /* a word of its own per thread: two warps storing the same word with no barrier between them is a race on global
   * memory, whatever the value */
  KBD_FOR_LANES(l) {
    if (p.mode != L_RETURN_UNIFORM) kbd_st_global(&p.out[64 + kbd_thread_idx(l)], 2);
  }
}

static int32_t host_out[128];

static kbd_status run_lf(int mode, long seed) {
  mt_env(1, seed);
  int32_t *out = NULL;
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_memset_device(out, 0, sizeof host_out);
  if (kbd_ok(s)) {
    lf_params p = {mode, out};
    s = lanes_flow_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  kbd_free(out);
  return s;
}

static void test_continue_ends_one_lane(void **state) {
  (void)state;
  MT_ASSERT_OK(run_lf(L_CONTINUE, -1));
  for (int t = 0; t < 32; ++t)
    assert_int_equal(host_out[t], t % 2 ? 0 : 1);
}

static void test_break_ends_one_lane(void **state) {
  (void)state;
  MT_ASSERT_OK(run_lf(L_BREAK, -1));
  for (int t = 0; t < 32; ++t)
    assert_int_equal(host_out[t], t == 3 ? 0 : 1);
}

static void test_uniform_return_from_lane0(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    MT_ASSERT_OK(run_lf(L_RETURN_UNIFORM, seed));
    for (int t = 0; t < 32; ++t)
      assert_int_equal(host_out[t], 1); /* warp 0 ran on */
    for (int t = 32; t < 64; ++t)
      assert_int_equal(host_out[t], 0); /* warp 1 left before storing anything */
  }
}

static void expect_issue(int mode, const char *needle) {
  for (long seed = -1; seed < 4; ++seed) {
    kbd_status s = run_lf(mode, seed);
    MT_ASSERT_CODE(s, KBD_ERR_ISSUE);
    MT_ASSERT_AT(s, MT_LINE(lf_line));
    MT_ASSERT_HAS(s, needle);
  }
}

static void test_return_from_later_lane(void **state) {
  (void)state;
  expect_issue(L_RETURN_LATER, "return (or goto) out of KBD_FOR_LANES in lane 5's iteration, after lanes 0..4");
}

static void test_return_from_elected_lane(void **state) {
  (void)state;
  expect_issue(L_RETURN_ELECT, "return (or goto) out of KBD_ELECT_ONE");
}

static void test_nested_lanes(void **state) {
  (void)state;
  expect_issue(L_NESTED, "KBD_FOR_LANES inside per-lane code");
}

static void test_lanes_inside_elect(void **state) {
  (void)state;
  expect_issue(L_LANES_IN_ELECT, "KBD_FOR_LANES inside elected-lane code");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_continue_ends_one_lane), MT_TEST(test_break_ends_one_lane),
      MT_TEST(test_uniform_return_from_lane0), MT_TEST(test_return_from_later_lane),
      MT_TEST(test_return_from_elected_lane), MT_TEST(test_nested_lanes),
      MT_TEST(test_lanes_inside_elect),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
