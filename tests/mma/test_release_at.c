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
 *             - a data race (write after read) at a load or a read of bytes still being written at the MMA, each
 *             naming the MMA, whatever the schedule;
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

static int ra_line_load_a, ra_line_load_b, ra_line_mma, ra_line_wait, ra_line_bad;

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
      if (p.brk == RA_EARLY)
        kbd_mma_release_at(acc, empty0 + 8u * (uint32_t)s, peers); /* this stage: its group is still pending */
      else if (i > 0)
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

static float ra_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* `clusters` clusters of 2 CTAs over kt stages. Returns the status and, when it ran, checks every element (exact)
 * and the barriers' addresses. */
static kbd_status ra_run(int clusters, int kt, int brk) {
  const int M = clusters * 128, K = kt * RK, ctas = 2 * clusters;
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * (size_t)M * (size_t)K), *hb = malloc(sizeof(kbd_bf16) * RN * (size_t)K);
  float *hd = malloc(sizeof(float) * (size_t)M * RN);
  unsigned haddr[8];
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hd);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ha[(size_t)i * K + k] = kbd_f32_to_bf16(ra_value(i, k, 1));
  for (int j = 0; j < RN; ++j)
    for (int k = 0; k < K; ++k)
      hb[(size_t)j * K + k] = kbd_f32_to_bf16(ra_value(j, k, 2));
  kbd_bf16 *da, *db;
  float *dd;
  unsigned *daddr;
  assert_int_equal(kbd_malloc((void **)&da, sizeof(kbd_bf16) * (size_t)M * K).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&db, sizeof(kbd_bf16) * RN * (size_t)K).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * (size_t)M * RN).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&daddr, sizeof haddr).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * (size_t)M * K).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * RN * (size_t)K).code, KBD_OK);
  ra_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc ta = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, da, (uint64_t)M, (uint64_t)K, (uint64_t)K * 2u, 64,
                                                  RK, KBD_TMAP_SWIZZLE_128B);
  kbd_tensor_map_desc tb = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, db, RN, (uint64_t)K, (uint64_t)K * 2u, RN / 2, RK,
                                                  KBD_TMAP_SWIZZLE_128B);
  assert_int_equal(kbd_tensor_map_encode(&p.ma, &ta).code, KBD_OK);
  assert_int_equal(kbd_tensor_map_encode(&p.mb, &tb).code, KBD_OK);
  p.d = dd;
  p.addrs = daddr;
  p.kt = kt;
  p.brk = brk;
  assert_true(ctas <= 4);
  const kbd_status st = ra_kernel(kbd_cfg_cluster(kbd_cfg_1d((unsigned)ctas), 2, 1, 1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)M * RN).code, KBD_OK);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < RN; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k)
          ref += (double)kbd_bf16_to_f32(ha[(size_t)i * K + k]) * (double)kbd_bf16_to_f32(hb[(size_t)j * K + k]);
        const float got = hd[(size_t)i * RN + (size_t)j];
        if ((double)got != ref) fail_msg("D[%d][%d] = %.9g, want %.9g", i, j, got, ref);
      }
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
  kbd_free(da), kbd_free(db), kbd_free(dd), kbd_free(daddr);
  free(ha), free(hb), free(hd);
  return st;
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

/* The newest stage released while its group is pending: the refill and the MMA that reads the stage overlap. The
 * schedule decides which side the machine meets first: the refill's write (a data race, write after read, at a load
 * line) or the MMA's read of bytes the refill is still writing (KBD_ERR_POISON at the MMA's line); every report names
 * the MMA's line. */
static void test_release_newest(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = ra_run(1, 4, RA_EARLY);
      char a[4096], b[4096], mma[4096];
      mt_fmt(mma, sizeof mma, "%s:%d", __FILE__, MT_LINE(ra_line_mma));
      if (st.code == KBD_ERR_POISON) {
        MT_ASSERT_AT(st, MT_LINE(ra_line_mma));
        MT_ASSERT_HAS(st, "which an asynchronous copy is still writing");
        continue;
      }
      MT_ASSERT_CODE(st, KBD_ERR_RACE);
      mt_fmt(a, sizeof a, "%s:%d: ", __FILE__, MT_LINE(ra_line_load_a));
      mt_fmt(b, sizeof b, "%s:%d: ", __FILE__, MT_LINE(ra_line_load_b));
      if (!strstr(st.msg, a) && !strstr(st.msg, b))
        fail_msg("threads %ld seed %ld: not at a load line (%d or %d): %s", threads, seed, MT_LINE(ra_line_load_a),
                 MT_LINE(ra_line_load_b), st.msg);
      MT_ASSERT_HAS(st, "data race (write after read)");
      MT_ASSERT_HAS(st, mma);
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
