/* test_stage_release.c - the stage release of a multicast pipeline on the CPU machine emulating sm_90a: the consumer
 * hands a stage back to every CTA that writes into it with an arrival that releases nothing
 * (kbd_mbarrier_arrive_cluster_reads, kbd_mma_release_mc's remote arrives; docs/design/read-release.md).
 *
 * Clusters of 2 CTAs, 256 threads each: warp 0 produces, warpgroup 1 consumes. Per CTA r of cluster c: D (64 x SN)
 * = A (rows 128c + 64r.., K) B^T over kt stages of SK through a 2-stage ring; each CTA loads its own A and one half
 * of B (rows 32r..), multicast into both CTAs, so a stage of CTA r is refilled by both producers and `empty` counts
 * one release from each CTA's consumer. Values are small multiples of 1/4: results exact, compared bit for bit.
 *
 *   the GEMM's pattern (kbd_mma_release_mc after each stage's MMAs), the same with a wait and hand-written
 *   releases, and with the producer passing the released stage on to another warp that loads it (the read
 *   releases' knowledge travels through a named barrier): clean and exact under the default schedule, seeds 0-3
 *   and 1 or 2 host threads;
 *   a consumer that WRITES into a stage and then releases it with kbd_mbarrier_arrive_cluster_reads: the peer's
 *   producer overwrites the byte - a data race (write after write) at its load, naming the write and the release;
 *   a release before the wgmma group that reads the stage was waited for: the producer refills the stage under the
 *   pending MMA - a data race reported at that release, naming the MMA and the refill; both in the first run under
 *   the default schedule.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"
#include "pipe_case.h"

enum { SR_OK, SR_OK_MANUAL, SR_RELAY, SR_WRITE, SR_EARLY };

#define SN 64 /* N: each CTA loads SN / 2 rows of B */
#define SK 64 /* K per stage (64 bf16 = one 128-byte swizzle row) */
typedef KBD_STILE(bf16, 64, SK, KBD_SWIZZLE_128B) sr_a;
typedef KBD_STILE(bf16, SN, SK, KBD_SWIZZLE_128B) sr_b;
typedef KBD_STILE(bf16, SN / 2, SK, KBD_SWIZZLE_128B) sr_bh;

typedef struct sr_params {
  kbd_tensor_map ma, mb;
  float *d;
  int kt, brk;
} sr_params;

static int sr_line_load_a, sr_line_load_b, sr_line_mma, sr_line_write, sr_line_release;

/* One arrival on `empty` in every CTA of the cluster, releasing nothing (the broken variants' hand-written release). */
static void sr_release(kbd_mbarrier *empty) {
  if (kbd_warp_id() == 4) {
    KBD_ELECT_ONE {
      for (unsigned r = 0; r < 2; ++r) {
        MT_MARK(sr_line_release); kbd_mbarrier_arrive_cluster_reads(empty, r);
      }
    }
  }
}

KBD_KERNEL(sr_kernel, 256, sr_params) {
  KBD_SHARED_STILE(sr_a, a0);
  KBD_SHARED_STILE(sr_a, a1);
  KBD_SHARED_STILE(sr_b, b0);
  KBD_SHARED_STILE(sr_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  const unsigned rank = kbd_cluster_ctarank(), cluster = kbd_cluster_id_x();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < 2; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], 2); /* one release from each CTA's consumer warpgroup */
      }
      kbd_fence_mbarrier_init(); /* the peer arrives on `empty` and multicasts against `full` */
    }
  }
  kbd_cluster_sync();

  const int relay = p.brk == SR_RELAY;
  if (kbd_warp_id() == 0 || (relay && kbd_warp_id() == 1)) {
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      /* both consumers released the stage's last fill (SR_RELAY: warp 0 waits and passes it on to warp 1, which
       * loads: what the read releases told warp 0 must reach warp 1 through the named barrier) */
      if (kbd_warp_id() == 0) kbd_mbarrier_wait(&empty[s], ((unsigned)(i / 2) & 1u) ^ 1u);
      if (relay) kbd_bar_sync(2, 64);
      if (kbd_warp_id() != relay) continue;
      sr_a a = s ? a1 : a0;
      sr_b b = s ? b1 : b0;
      sr_bh bh = KBD_STILE_AT(sr_bh, (unsigned char *)b.p + rank * KBD_STILE_BYTES(b) / 2u);
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(a) + KBD_STILE_BYTES(b)); /* both B halves land */
        MT_MARK(sr_line_load_a); kbd_tma_load2d(a, &p.ma, &full[s], (int)(cluster * 128u + rank * 64u), i * SK);
        MT_MARK(sr_line_load_b); kbd_tma_load_multicast2d(bh, &p.mb, &full[s], 3u, (int)(rank * (SN / 2u)), i * SK);
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC(f32, 64, SN) acc;
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait(&full[s], (unsigned)(i / 2) & 1u);
      MT_MARK(sr_line_mma); kbd_mma(acc, s ? a1 : a0, s ? b1 : b0, i > 0);
      if (p.brk == SR_OK || p.brk == SR_RELAY) {
        kbd_mma_release_mc(acc, &empty[s], 3u); /* waits for stage i - 1's MMAs, frees it in both CTAs */
      } else if (p.brk == SR_EARLY) {
        /* every warp of the warpgroup has issued (so each one's wait for `full` precedes the release), but nobody
         * waited for the MMAs: they may still read the stage */
        kbd_bar_sync(1, 128);
        sr_release(&empty[s]);
      } else {
        kbd_mma_wait(acc); /* every MMA so far has read its operands */
        if (p.brk == SR_WRITE && rank == 1 && i == 0 && kbd_warp_id() == 4) {
          /* the first word of B's half 0: CTA 0's producer multicasts the next fill over it */
          MT_MARK(sr_line_write); kbd_st_shared((uint32_t *)(s ? b1 : b0).p, 0u);
        }
        sr_release(&empty[s]);
      }
    }
    kbd_mma_wait(acc);
    KBD_ACC_TILE(f32, 64, SN) r;
    kbd_acc_load(r, acc, 0);
    kbd_store2d(p.d + (size_t)(cluster * 128u + rank * 64u) * SN, r, 64, SN, SN, 0, 0);
  }
  kbd_cluster_sync(); /* no peer arrives on or multicasts into a CTA that has exited */
}

/* `clusters` clusters of 2 CTAs over kt stages. Returns the status and, when it ran, checks every element (exact). */
static kbd_status sr_run(int clusters, int kt, int brk) {
  pc_gemm g;
  sr_params p;
  memset(&p, 0, sizeof p);
  pc_setup(&g, clusters * 128, SN, kt * SK, &p.ma, 64, &p.mb, SN / 2, SK);
  p.d = g.dd;
  p.kt = kt;
  p.brk = brk;
  return pc_finish(&g, sr_kernel(kbd_cfg_cluster(kbd_cfg_1d((unsigned)(2 * clusters)), 2, 1, 1), p));
}

/* The GEMM's pattern, and the hand-written release after a full wait (the control of the broken variants below):
 * every refill of a stage overwrites bytes the other CTA's MMAs read, ordered only by the read release. */
static void test_clean(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      kbd_status st = sr_run(2, 6, SR_OK);
      if (st.code != KBD_OK) fail_msg("kbd_mma_release_mc, threads %ld seed %ld: %s", threads, seed, st.msg);
      st = sr_run(2, 6, SR_OK_MANUAL);
      if (st.code != KBD_OK) fail_msg("wait + read release, threads %ld seed %ld: %s", threads, seed, st.msg);
      st = sr_run(2, 6, SR_RELAY);
      if (st.code != KBD_OK) fail_msg("relayed to the loading warp, threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}

/* A consumer wrote into the stage: the read release orders its reads, not its write, so CTA 0's multicast of the
 * next fill races with it. Reported at the load, naming the write, the warp and the release. */
static void test_write_then_release(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = sr_run(1, 4, SR_WRITE);
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  char want[4096];
  MT_ASSERT_AT(st, MT_LINE(sr_line_load_b));
  MT_ASSERT_HAS(st, "data race (write after write) on cluster CTA 1's shared array declared at ");
  MT_ASSERT_HAS(st, "this access: warp 0 of cluster CTA 0 writes it here (kbd_tma_load_multicast2d)");
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "earlier:     warp 4 of cluster CTA 1 wrote it at %s:%d\n", __FILE__,
                           MT_LINE(sr_line_write)));
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want,
                           "the only thing between them is the read release at %s:%d (mbarrier.arrive to another CTA "
                           "without .release.cluster",
                           __FILE__, MT_LINE(sr_line_release)));
  MT_ASSERT_HAS(st, "must publish it with a releasing arrive (kbd_mbarrier_arrive_cluster)");
  /* the same under every seed and with two host threads (the report does not depend on the schedule) */
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = 0; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status s2 = sr_run(1, 4, SR_WRITE);
      MT_ASSERT_CODE(s2, KBD_ERR_RACE);
      MT_ASSERT_AT(s2, MT_LINE(sr_line_load_b));
    }
}

/* The release comes before the wgmma group that reads the stage was waited for: a producer refills the stage under
 * the pending MMA. Reported at that release (the arrive that let the refill in), naming the MMA and the refill (the A
 * load or the B multicast, whichever reaches the MMA's operands first), whatever the schedule. */
static void test_release_before_wait(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = sr_run(1, 4, SR_EARLY);
      MT_ASSERT_CODE(st, KBD_ERR_RACE);
      char a[4096], b[4096], mma[4096];
      MT_ASSERT_AT(st, MT_LINE(sr_line_release));
      MT_ASSERT_HAS(st, mt_fmt(mma, sizeof mma, "stage released here while the wgmma issued at %s:%d still read it",
                               __FILE__, MT_LINE(sr_line_mma)));
      mt_fmt(a, sizeof a, "What the machine saw next: %s:%d: ", __FILE__, MT_LINE(sr_line_load_a));
      mt_fmt(b, sizeof b, "What the machine saw next: %s:%d: ", __FILE__, MT_LINE(sr_line_load_b));
      if (!strstr(st.msg, a) && !strstr(st.msg, b))
        fail_msg("threads %ld seed %ld: the refill is not a load line (%d or %d): %s", threads, seed,
                 MT_LINE(sr_line_load_a), MT_LINE(sr_line_load_b), st.msg);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_clean),
      MT_TEST(test_write_then_release),
      MT_TEST(test_release_before_wait),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
