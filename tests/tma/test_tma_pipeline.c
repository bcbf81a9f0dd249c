/* test_tma_pipeline.c - TMA rings on the CPU machine: 1-8 stages x 1-4 consumer warps, full/empty mbarriers,
 * kbd_pipe positions, under 8 scheduling seeds and 1 and 2 host threads; and the broken variants, each with
 * its own diagnostic at the right line in the first run under the default schedule: expect-tx larger than
 * the box (deadlock naming the barrier, its phase and the outstanding bytes), a plain arrive instead of
 * arrive.expect_tx (the phase completes before the data), the wrong parity (a consumer that does not really
 * wait), a consumer that never releases its stage (the producer's deadlock, naming the empty barrier), and
 * a read of the stage before the wait.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define MAXC 4  /* consumer warps (warps 0..C-1); warp 4 produces */
#define MAXS 8  /* ring stages */
#define TR 8    /* tile rows */
#define TC 32   /* tile cols (f32): 128-byte lines, no swizzle */
#define NTILES 24

typedef KBD_STILE(f32, TR, TC, KBD_SWIZZLE_NONE) ring_tile;

typedef struct {
  kbd_tensor_map x; /* NTILES * TR rows x TC cols f32 */
  float *out;       /* NTILES x MAXC partial sums */
  int stages, consumers, mode;
} pipe_params;

enum { P_OK, P_EXPECT_MORE, P_NO_EXPECT, P_WRONG_PARITY, P_NO_RELEASE, P_READ_EARLY };

static int pl_line, pl_read;

KBD_KERNEL(pipe_k, (MAXC + 1) * 32, pipe_params) {
  KBD_SHARED_ALIGNED(unsigned char, ring_mem, MAXS * TR * TC * 4, 128);
  KBD_SHARED_ALIGNED(kbd_mbarrier, full, MAXS, 8);
  KBD_SHARED_ALIGNED(kbd_mbarrier, empty, MAXS, 8);
  const int w = kbd_warp_id();
  if (w == MAXC) {
    KBD_ELECT_ONE {
      for (int s = 0; s < p.stages; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], (uint32_t)p.consumers); /* each consumer warp once (elected) */
      }
    }
  }
  kbd_sync();
  if (w == MAXC) { /* producer */
    kbd_pipe ps = kbd_pipe_start(p.stages);
    for (int it = 0; it < NTILES; ++it, kbd_pipe_advance(&ps)) {
      ring_tile t = KBD_STILE_AT(ring_tile, ring_mem + ps.stage * TR * TC * 4);
      MT_MARK(pl_line); kbd_mbarrier_wait(&empty[ps.stage], ps.parity ^ 1u);
      KBD_ELECT_ONE {
        if (p.mode == P_NO_EXPECT)
          kbd_mbarrier_arrive(&full[ps.stage]);
        else
          kbd_mbarrier_arrive_expect_tx(&full[ps.stage], KBD_STILE_BYTES(t) + (p.mode == P_EXPECT_MORE ? 16 : 0));
        kbd_tma_load2d(t, &p.x, &full[ps.stage], it * TR, 0);
      }
    }
    return;
  }
  if (w >= p.consumers) return;
  /* Every consumer reads every tile (its share of the rows), so every consumer waits on every phase in
   * order. (Splitting tiles between consumers that share a stage would let one wait for round r of a stage
   * while it is still in round r-1: parity r equals the parity of round r-2, which counts as complete - the
   * machine reports such a kernel through the data it reads too early.) */
  kbd_pipe ps = kbd_pipe_start(p.stages);
  for (int it = 0; it < NTILES; ++it, kbd_pipe_advance(&ps)) {
    ring_tile t = KBD_STILE_AT(ring_tile, ring_mem + ps.stage * TR * TC * 4);
    if (p.mode == P_READ_EARLY) {
      MT_MARK(pl_line); (void)kbd_ld_shared(kbd_stile_ptr(t, 0, 0));
    }
    if (p.mode == P_WRONG_PARITY) {
      MT_MARK(pl_line); kbd_mbarrier_wait(&full[ps.stage], ps.parity ^ 1u);
    } else {
      kbd_mbarrier_wait(&full[ps.stage], ps.parity);
    }
    float sum = 0.0f;
    for (int r = w; r < TR; r += p.consumers)
      for (int c = 0; c < TC; ++c) {
        MT_MARK(pl_read); sum += kbd_ld_shared(kbd_stile_ptr(t, r, c));
      }
    KBD_ELECT_ONE {
      /* both blocks compute the same sums; block 0 stores them (two blocks storing the same bytes is a race even with
       * equal values, and the machine's global-memory race check reports it) */
      if (kbd_block_x() == 0) kbd_st_global(&p.out[it * MAXC + w], sum);
      if (!(p.mode == P_NO_RELEASE && w == 0)) kbd_mbarrier_arrive(&empty[ps.stage]);
    }
  }
}

static float *dev_x, *dev_out, host_x[NTILES * TR * TC], host_out[NTILES * MAXC];

static int group_setup(void **state) {
  (void)state;
  for (int i = 0; i < NTILES * TR * TC; ++i)
    host_x[i] = (float)((i * 37) % 19 - 9);
  if (kbd_malloc((void **)&dev_x, sizeof host_x).code != KBD_OK) return -1;
  if (kbd_malloc((void **)&dev_out, sizeof host_out).code != KBD_OK) return -1;
  return kbd_copy_to_device(dev_x, host_x, sizeof host_x).code == KBD_OK ? 0 : -1;
}

static kbd_status run(int stages, int consumers, int mode) {
  pipe_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d =
      kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, dev_x, NTILES * TR, TC, TC * 4, TR, TC, KBD_TMAP_SWIZZLE_NONE);
  assert_int_equal(kbd_tensor_map_encode(&p.x, &d).code, KBD_OK);
  p.out = dev_out;
  p.stages = stages;
  p.consumers = consumers;
  p.mode = mode;
  assert_int_equal(kbd_memset_device(dev_out, 0xff, sizeof host_out).code, KBD_OK);
  return pipe_k(kbd_cfg_1d(2), p);
}

/* Every ring depth and consumer count, under the default schedule, 8 seeds, and 1 and 2 host threads. */
static void test_rings_run_clean(void **state) {
  (void)state;
  for (int stages = 1; stages <= MAXS; ++stages)
    for (int consumers = 1; consumers <= MAXC; ++consumers)
      for (long seed = -1; seed < 8; ++seed)
        for (long threads = 1; threads <= 2; ++threads) {
          mt_env(threads, seed);
          const kbd_status s = run(stages, consumers, P_OK);
          if (s.code != KBD_OK)
            fail_msg("%d stages, %d consumers, seed %ld, %ld threads: %s", stages, consumers, seed, threads, s.msg);
          assert_int_equal(kbd_copy_to_host(host_out, dev_out, sizeof host_out).code, KBD_OK);
          for (int it = 0; it < NTILES; ++it)
            for (int c = 0; c < MAXC; ++c) {
              float want = 0.0f; /* consumer c's rows, in its order; small integers: exact */
              for (int r = c; r < TR; r += consumers)
                for (int k = 0; k < TC; ++k)
                  want += host_x[(it * TR + r) * TC + k];
              const float got = host_out[it * MAXC + c];
              if (c < consumers ? got != want : !(got != got)) /* unused slots keep the NaN fill */
                fail_msg("%d stages, %d consumers: tile %d consumer %d: %g, want %g", stages, consumers, it, c, got,
                         c < consumers ? want : 0.0f / 0.0f);
            }
        }
}

static void test_expect_more_than_delivered(void **state) {
  (void)state;
  const kbd_status s = run(2, 1, P_EXPECT_MORE);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  MT_ASSERT_HAS(s, "16 transaction bytes outstanding");
  MT_ASSERT_HAS(s, "phase 0");
}

static void test_plain_arrive_instead_of_expect_tx(void **state) {
  (void)state;
  const kbd_status s = run(2, 1, P_NO_EXPECT);
  if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("%s", s.msg);
  MT_ASSERT_AT(s, MT_LINE(pl_read));
}

static void test_wrong_parity(void **state) {
  (void)state;
  const kbd_status s = run(2, 1, P_WRONG_PARITY);
  if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("%s", s.msg);
  MT_ASSERT_AT(s, MT_LINE(pl_read));
}

static void test_consumer_never_releases(void **state) {
  (void)state;
  const kbd_status s = run(2, 2, P_NO_RELEASE);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  MT_ASSERT_HAS(s, "mbarrier at");
  MT_ASSERT_HAS(s, "1 of 2 arrivals missing");
  char at[128];
  snprintf(at, sizeof at, "test_tma_pipeline.c:%d", MT_LINE(pl_line));
  MT_ASSERT_HAS(s, at); /* the producer's wait on empty */
}

static void test_read_before_wait(void **state) {
  (void)state;
  const kbd_status s = run(2, 1, P_READ_EARLY);
  if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("%s", s.msg);
  MT_ASSERT_AT(s, MT_LINE(pl_line));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_rings_run_clean),         MT_TEST(test_expect_more_than_delivered),
      MT_TEST(test_plain_arrive_instead_of_expect_tx), MT_TEST(test_wrong_parity),
      MT_TEST(test_consumer_never_releases), MT_TEST(test_read_before_wait),
  };
  return cmocka_run_group_tests(tests, group_setup, NULL);
}
