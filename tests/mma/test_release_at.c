/* test_release_at.c - the 32-bit shared-address forms on the CPU machine emulating sm_90a: kbd_mbarrier_addr,
 * kbd_mbarrier_wait_at, kbd_mbarrier_arrive_at, and kbd_mma_release_at / kbd_mma_wait_at (the stage release the
 * sm_90a GEMM's main loop uses, examples/gemm/gemm_variant.h), where the caller names the barrier of the stage the
 * OLDER wgmma groups read.
 *
 * The pipeline: clusters of 2 CTAs, 256 threads each; warp 0 produces, warpgroup 1 consumes. Per CTA r of cluster c:
 * D (64 x RN) = A (rows 128c + 64r.., K) B^T over kt stages of RK through a 2-stage ring; each CTA loads its own A
 * and one half of B, multicast into both, so `empty` counts one release from each CTA's consumer. Every barrier is
 * named by its 32-bit address. Values are small multiples of 1/4: results exact, compared bit for bit.
 *
 *   RA_OK     the GEMM's pattern: release_at(previous stage, both CTAs) after each stage's MMAs, wait_at(last stage)
 *             after the loop - clean and exact under the default schedule, seeds 0-3, 1 or 2 host threads;
 *   RA_LOCAL  the release reaches this CTA's barrier only (mask 0) while the peer multicasts into the stage: the
 *             barriers count half the arrivals they wait for - a deadlock naming the producer's wait;
 *   RA_EARLY  the release names the NEWEST stage, whose group is still pending: the producer refills it under the MMA
 *             - a data race reported at that release, naming the MMA and the refill, whatever the schedule;
 *   RA_BADADDR a wait on an address past the block's shared memory: KBD_ERR_MBARRIER at that line;
 * and kbd_mbarrier_addr of consecutive barriers are 8 bytes apart, at the offset kbd's shared window gives them.
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

/* MT_MARK and the call it marks share a line (the reports name that line): clang-format is off around them */

enum { RA_OK, RA_LOCAL, RA_EARLY, RA_BADADDR };

#define RN 64 /* N: each CTA loads RN / 2 rows of B */
#define RK 64 /* K per stage (64 bf16 = one 128-byte swizzle row) */
typedef KBD_STILE(bf16, 64, RK, KBD_SWIZZLE_128B) ra_a;
typedef KBD_STILE(bf16, RN, RK, KBD_SWIZZLE_128B) ra_b;
typedef KBD_STILE(bf16, RN / 2, RK, KBD_SWIZZLE_128B) ra_bh;

typedef struct ra_params {
  kbd_tensor_map ma, mb;
  float *d;
  unsigned *addrs; /* per CTA: kbd_mbarrier_addr of empty[0], empty[1] */
  int kt, brk;
} ra_params;

static int ra_line_load_a, ra_line_load_b, ra_line_mma, ra_line_wait, ra_line_bad, ra_line_release;

KBD_KERNEL(ra_kernel, 256, ra_params) {
  KBD_SHARED_STILE(ra_a, a0);
  KBD_SHARED_STILE(ra_a, a1);
  KBD_SHARED_STILE(ra_b, b0);
  KBD_SHARED_STILE(ra_b, b1);
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
      const unsigned cta = cluster * 2u + rank;
      p.addrs[2 * cta] = kbd_mbarrier_addr(&empty[0]);
      p.addrs[2 * cta + 1] = kbd_mbarrier_addr(&empty[1]);
    }
  }
  kbd_cluster_sync();
  const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);

  if (kbd_warp_id() == 0) {
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      /* clang-format off */
      MT_MARK(ra_line_wait); kbd_mbarrier_wait_at(empty0 + 8u * (uint32_t)s, ((unsigned)(i / 2) & 1u) ^ 1u);
      /* clang-format on */
      ra_a a = s ? a1 : a0;
      ra_b b = s ? b1 : b0;
      ra_bh bh = KBD_STILE_AT(ra_bh, (unsigned char *)b.p + rank * KBD_STILE_BYTES(b) / 2u);
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(a) + KBD_STILE_BYTES(b)); /* both B halves land */
        /* clang-format off */
        MT_MARK(ra_line_load_a); kbd_tma_load2d(a, &p.ma, &full[s], (int)(cluster * 128u + rank * 64u), i * RK);
        /* clang-format on */
        /* clang-format off */
        MT_MARK(ra_line_load_b); kbd_tma_load_multicast2d(bh, &p.mb, &full[s], 3u, (int)(rank * (RN / 2u)), i * RK);
        /* clang-format on */
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC(f32, 64, RN) acc;
    const uint32_t peers = p.brk == RA_LOCAL ? 0u : 3u;
    int prev = 0;
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      if (p.brk == RA_BADADDR && i == 1) {
        /* clang-format off */
        MT_MARK(ra_line_bad); kbd_mbarrier_wait_at(0x40000u, 0u); /* 256 KiB: past any block's shared memory */
        /* clang-format on */
      }
      kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
      /* clang-format off */
      MT_MARK(ra_line_mma); kbd_mma(acc, s ? a1 : a0, s ? b1 : b0, i > 0);
      /* clang-format on */
      if (p.brk == RA_EARLY) {
        /* this stage: its group is still pending */
        /* clang-format off */
        MT_MARK(ra_line_release); kbd_mma_release_at(acc, empty0 + 8u * (uint32_t)s, peers);
        /* clang-format on */
      } else if (i > 0)
        kbd_mma_release_at(acc, empty0 + 8u * (uint32_t)prev, peers);
      prev = s;
    }
    if (p.brk != RA_EARLY) kbd_mma_wait_at(acc, empty0 + 8u * (uint32_t)prev, peers);
    kbd_mma_wait(acc);
    KBD_ACC_TILE(f32, 64, RN) r;
    kbd_acc_load(r, acc, 0);
    kbd_store2d(p.d + (size_t)(cluster * 128u + rank * 64u) * RN, r, 64, RN, RN, 0, 0);
  }
  kbd_cluster_sync(); /* no peer arrives on or multicasts into a CTA that has exited */
}

/* `clusters` clusters of 2 CTAs over kt stages. Returns the status and, when it ran, checks every element (exact)
 * and the barriers' addresses. */
static kbd_status ra_run(int clusters, int kt, int brk) {
  const int ctas = 2 * clusters;
  unsigned haddr[8], *daddr;
  pc_gemm g;
  ra_params p;
  memset(&p, 0, sizeof p);
  pc_setup(&g, clusters * 128, RN, kt * RK, &p.ma, 64, &p.mb, RN / 2, RK);
  assert_int_equal(kbd_malloc((void **)&daddr, sizeof haddr).code, KBD_OK);
  p.d = g.dd;
  p.addrs = daddr;
  p.kt = kt;
  p.brk = brk;
  assert_true(ctas <= 4);
  const kbd_status st = ra_kernel(kbd_cfg_cluster(kbd_cfg_1d((unsigned)ctas), 2, 1, 1), p);
  if (st.code == KBD_OK) {
    /* empty[1] is 8 bytes after empty[0], both 8-byte aligned, past the four 8 KiB tiles declared before them, and
     * at the same offset in every CTA (one kernel, one shared layout) */
    assert_int_equal(kbd_copy_to_host(haddr, daddr, sizeof(unsigned) * (size_t)(2 * ctas)).code, KBD_OK);
    for (int c = 0; c < ctas; ++c) {
      assert_int_equal(haddr[2 * c + 1], haddr[2 * c] + 8u);
      assert_int_equal(haddr[2 * c] % 8u, 0u);
      assert_true(haddr[2 * c] >= 4u * 64u * RK * 2u);
      assert_int_equal(haddr[2 * c], haddr[0]);
    }
  }
  kbd_free(daddr);
  return pc_finish(&g, st);
}

static void test_clean(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = ra_run(2, 6, RA_OK);
      if (st.code != KBD_OK) fail_msg("release_at, threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}

/* mask 0 in a multicast pipeline: the peer's release never comes, the producer waits forever */
static void test_local_release(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = ra_run(1, 4, RA_LOCAL);
  MT_ASSERT_CODE(st, KBD_ERR_DEADLOCK);
  char want[4096];
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "%s:%d", __FILE__, MT_LINE(ra_line_wait)));
}

/* The newest stage released while its group is pending: the producers refill it under the MMA. Reported at the
 * release (the arrive that let the refill in), naming the MMA, in the first run and whatever the schedule. */
static void test_release_newest(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = ra_run(1, 4, RA_EARLY);
      char want[4096];
      MT_ASSERT_CODE(st, KBD_ERR_RACE);
      MT_ASSERT_AT(st, MT_LINE(ra_line_release));
      MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "stage released here while the wgmma issued at %s:%d still read it",
                               __FILE__, MT_LINE(ra_line_mma)));
      MT_ASSERT_HAS(st, "the warp's last wgmma.wait_group(1) left its group pending");
      char a[4096], b[4096];
      mt_fmt(a, sizeof a, "What the machine saw next: %s:%d: ", __FILE__, MT_LINE(ra_line_load_a));
      mt_fmt(b, sizeof b, "What the machine saw next: %s:%d: ", __FILE__, MT_LINE(ra_line_load_b));
      if (!strstr(st.msg, a) && !strstr(st.msg, b))
        fail_msg("threads %ld seed %ld: the refill is not a load line (%d or %d): %s", threads, seed,
                 MT_LINE(ra_line_load_a), MT_LINE(ra_line_load_b), st.msg);
    }
}

/* an address that names no barrier of the block */
static void test_bad_address(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = ra_run(1, 4, RA_BADADDR);
  MT_ASSERT_CODE(st, KBD_ERR_MBARRIER);
  MT_ASSERT_AT(st, MT_LINE(ra_line_bad));
  MT_ASSERT_HAS(st, "kbd_mbarrier_wait_at: shared address 262144 is not an mbarrier of this block");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_clean),
      MT_TEST(test_local_release),
      MT_TEST(test_release_newest),
      MT_TEST(test_bad_address),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
