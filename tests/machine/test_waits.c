/* test_waits.c - wait objects of the CPU machine: a warp blocks on any object that names itself and the
 * state it waits for, only the event that releases it makes it ready, and a wait nothing can end is one
 * multi-line deadlock report naming each waiting warp's file:line and <object, state>. The objects of the
 * next layers (mbarrier phases, cluster barriers, TMEM allocation) are built on these two calls; here a
 * test-only "event" stands in for them. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

typedef struct {
  int set;
  uint32_t waiters; /* warps blocked on it */
} test_event;

static test_event g_ev;
static int wait_line;

static void event_describe(const kbd_cpu_warp *w, kbd_text *out) {
  kbd_text_append(out, "test event %p to be set (awaited value %u)", w->wait_obj, w->wait_arg);
}

/* The test's "hardware": set the event, wake exactly the warps blocked on it. */
static void event_set(test_event *e) {
  kbd_cpu_cta *cta = kbd_cpu_self()->cta;
  e->set = 1;
  for (int i = 0; i < cta->nwarps; ++i)
    if (e->waiters >> i & 1u) kbd_cpu_wake(&cta->warps[i]);
  e->waiters = 0;
}

typedef struct {
  int setter; /* warp that sets the event, -1: none */
  int *order;
} ev_params;

KBD_KERNEL(wait_k, 128, ev_params) {
  const int w = kbd_warp_id();
  if (w == p.setter) {
    for (int i = 0; i < 3; ++i) kbd_hw_poll_wait(KBD_SITE); /* let the waiters block first */
    p.order[4] = 1;
    event_set(&g_ev);
  } else {
    while (!g_ev.set) {
      g_ev.waiters |= 1u << w;
      MT_MARK(wait_line); kbd_cpu_block(&g_ev, 1u, event_describe, __FILE__, __LINE__);
    }
    p.order[w] = p.order[4]; /* ran after the setter: sees its write */
  }
}

static void test_event_releases_waiters(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      mt_env(threads, seed);
      int order[5] = {0, 0, 0, 0, 0};
      g_ev.set = 0;
      g_ev.waiters = 0;
      ev_params p = {3, order};
      MT_ASSERT_OK(wait_k(kbd_cfg_1d(1), p));
      for (int w = 0; w < 3; ++w)
        assert_int_equal(order[w], 1);
    }
}

static void test_unreleased_wait_is_reported(void **state) {
  (void)state;
  int order[5] = {0, 0, 0, 0, 0};
  g_ev.set = 0;
  g_ev.waiters = 0;
  ev_params p = {-1, order};
  const kbd_status s = wait_k(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  char b[4096];
  for (int w = 0; w < 4; ++w)
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "\n  warp %d at %s:%d waits for test event %p to be set (awaited value 1)", w,
                            __FILE__, MT_LINE(wait_line), (void *)&g_ev));
  MT_ASSERT_HAS(s, "[kernel wait_k, block (0,0,0)]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_event_releases_waiters),
      MT_TEST(test_unreleased_wait_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
