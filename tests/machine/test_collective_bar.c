/* test_collective_bar.c - barrier 0 is shared by kbd_sync and kbd's CTA-wide collectives (bar.sync 0 inside
 * kbd_cta_reduce, kbd_reduce of a KBD_CTA tile, CTA scans). On the GPU a collective that only part of the
 * block reaches completes against another warp's kbd_sync, and reads reduction slots that warp never wrote.
 * The CPU machine keeps the two kinds of instance apart (kbd/cpu/wait.h): whichever arrives second is a
 * KBD_ERR_BARRIER naming the collective and the kbd_sync site, in the first run under the default schedule
 * and under every seed. Correct kernels that use both, one after the other, run clean under every seed. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define CB_WARPS 4

enum {
  CB_SYNC_VS_REDUCE,  /* bug: warp 0 in kbd_sync while warps 1..3 are in kbd_cta_reduce */
  CB_REDUCE_VS_SYNC,  /* bug: warp 0 in kbd_cta_reduce while warps 1..3 are in kbd_sync */
  CB_TILE_REDUCE_PART, /* bug: warps 1..3 in kbd_reduce of a KBD_CTA tile while warp 0 is in kbd_sync */
  CB_BOTH_IN_TURN     /* ok: every warp: kbd_sync, kbd_cta_reduce, kbd_sync, kbd_reduce of a CTA tile */
};

typedef struct {
  int mode;
  float *out; /* one result per warp */
} cb_params;

static int cb_sync_line, cb_coll_line;

KBD_KERNEL(cb_k, CB_WARPS * 32, cb_params) {
  const int w = kbd_warp_id();
  kbd_lanes_f32 x;
  KBD_FOR_LANES(lane) { KBD_LANE(x, lane) = (float)(w * 32 + lane); }
  float r = -1.0f;
  switch (p.mode) {
  case CB_SYNC_VS_REDUCE:
    if (w == 0) {
      MT_MARK(cb_sync_line); kbd_sync();
    } else {
      MT_MARK(cb_coll_line); kbd_cta_reduce(r, x, KBD_RED_SUM);
    }
    break;
  case CB_REDUCE_VS_SYNC:
    if (w == 0) {
      MT_MARK(cb_coll_line); kbd_cta_reduce(r, x, KBD_RED_SUM);
    } else {
      MT_MARK(cb_sync_line); kbd_sync();
    }
    break;
  case CB_TILE_REDUCE_PART: {
    KBD_TILE(f32, 1, 512, KBD_CTA) t;
    kbd_fill(t, 1.0f);
    if (w == 0) {
      MT_MARK(cb_sync_line); kbd_sync();
    } else {
      MT_MARK(cb_coll_line); kbd_reduce(r, t, KBD_RED_SUM);
    }
    break;
  }
  case CB_BOTH_IN_TURN: {
    KBD_TILE(f32, 1, 512, KBD_CTA) t;
    kbd_fill(t, 1.0f);
    float a, b;
    kbd_sync();
    kbd_cta_reduce(a, x, KBD_RED_SUM);
    kbd_sync();
    kbd_reduce(b, t, KBD_RED_SUM);
    r = a + b;
    break;
  }
  }
  KBD_FOR_LANES(lane) {
    if (lane == 0) kbd_st_global(&p.out[w], r);
  }
}

static kbd_status run_cb(int mode) {
  float *out = NULL;
  kbd_status s = kbd_malloc((void **)&out, CB_WARPS * sizeof(float));
  if (!kbd_ok(s)) return s;
  cb_params p = {mode, out};
  s = cb_k(kbd_cfg_1d(1), p);
  if (kbd_ok(s) && mode == CB_BOTH_IN_TURN) {
    float host[CB_WARPS];
    (void)kbd_copy_to_host(host, out, sizeof host);
    for (int w = 0; w < CB_WARPS; ++w) /* 0 + 1 + ... + 127, and 512 ones: exact in f32 */
      if (host[w] != 127.0f * 128.0f / 2.0f + 512.0f)
        s = kbd_status_make(KBD_ERR_INVALID, "warp %d's result %g is wrong", w, (double)host[w]);
  }
  (void)kbd_free(out);
  return s;
}

/* Whichever kind arrived first began the instance; the report is made at the other kind's site and names the
 * first one's, so both the collective and the kbd_sync site are in it. */
static void expect_separated(kbd_status s) {
  char b[4096];
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_HAS(s, "CTA-wide collective (reduction or scan over the block)");
  MT_ASSERT_HAS(s, "only part of the block takes part in the collective");
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "%s:%d", __FILE__, MT_LINE(cb_sync_line)));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "%s:%d", __FILE__, MT_LINE(cb_coll_line)));
}

static void test_partial_collective_first_run(void **state) {
  (void)state;
  char b[4096];
  /* Default schedule (round robin from warp 0): warp 0 begins the instance, a warp of the other kind is the
   * second arrival and is reported at its own site. */
  mt_env(1, -1);
  kbd_status s = run_cb(CB_SYNC_VS_REDUCE);
  expect_separated(s);
  MT_ASSERT_AT(s, MT_LINE(cb_coll_line));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "in flight was begun by kbd_sync at %s:%d", __FILE__, MT_LINE(cb_sync_line)));
  s = run_cb(CB_REDUCE_VS_SYNC);
  expect_separated(s);
  MT_ASSERT_AT(s, MT_LINE(cb_sync_line));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "kbd_sync reaches barrier 0 while the instance in flight was begun by a "
                                       "CTA-wide collective (reduction or scan over the block) at %s:%d",
                          __FILE__, MT_LINE(cb_coll_line)));
  s = run_cb(CB_TILE_REDUCE_PART);
  expect_separated(s);
  MT_ASSERT_AT(s, MT_LINE(cb_coll_line));
}

static void test_partial_collective_every_seed(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      mt_env(threads, seed);
      expect_separated(run_cb(CB_SYNC_VS_REDUCE));
      expect_separated(run_cb(CB_REDUCE_VS_SYNC));
      expect_separated(run_cb(CB_TILE_REDUCE_PART));
    }
}

static void test_both_in_turn_run_clean(void **state) {
  (void)state;
  mt_env(1, -1);
  MT_ASSERT_OK(run_cb(CB_BOTH_IN_TURN));
  for (long seed = 0; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      mt_env(threads, seed);
      MT_ASSERT_OK(run_cb(CB_BOTH_IN_TURN));
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_partial_collective_first_run),
      MT_TEST(test_partial_collective_every_seed),
      MT_TEST(test_both_in_turn_run_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
