/* test_mma_pair_desc.c - kbd_mma_pair_issue_commit_by_desc (kbd/mma_pair.h), the CTA-pair GEMM's MMA-warp call, on
 * the CPU machine emulating sm_100a.
 *
 * The kernel of test_mma_pair.c with the even CTA's MMA warp written as examples/gemm/gemm_kernel_pair.h writes it:
 * stage 0's descriptors (kbd_mma_desc_of) moved by s x the ring's stride (kbd_mma_desc_advance), the stages' barriers
 * as 32-bit shared addresses (kbd_mbarrier_addr + 8 x s), one call per k-block issuing the pair MMAs and committing
 * the stage to both CTAs. One and two pairs per cluster, 3 tiles of 3 k-blocks through a 2-stage ring (the ring
 * wraps inside a tile and across tiles); exact under the default schedule, seeds 0-2 and 1 or 2 host threads.
 *
 * Broken variants, each reported in the first run: a B descriptor of another tile type (the descriptor check at the
 * call's line), the stride of the wrong operand (the second stage's A named in bytes the producer refills: a race
 * naming the call's line), and each stage committed to the other stage's barrier (that barrier's phases run ahead of
 * the producer's waits on it: reported at the producer's wait, never a silent result).
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"
#include "pipe_case.h"

enum { PD_OK, PD_LAYOUT, PD_STRIDE, PD_OTHER_BAR };

#define PN 128 /* the pair's N: each CTA loads PN / 2 rows of B */
#define PK 64  /* K per stage */
typedef KBD_STILE(bf16, 128, PK, KBD_SWIZZLE_128B) pd_a;
typedef KBD_STILE(bf16, PN / 2, PK, KBD_SWIZZLE_128B) pd_b;
typedef KBD_STILE(bf16, PN / 2, PK / 2, KBD_SWIZZLE_64B) pd_b64; /* another layout over B's first bytes */

typedef struct pd_params {
  kbd_tensor_map ma, mb;
  float *d;
  int tiles, kt, brk;
} pd_params;

static int pd_line_issue;

KBD_KERNEL(pd_kernel, 256, pd_params) {
  KBD_SHARED_STILE(pd_a, a0);
  KBD_SHARED_STILE(pd_a, a1);
  KBD_SHARED_STILE(pd_b, b0);
  KBD_SHARED_STILE(pd_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  KBD_SHARED(kbd_mbarrier, accfull, 1);
  KBD_SHARED(kbd_mbarrier, accempty, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  const unsigned rank = kbd_cluster_ctarank(), half = rank & 1u, pair = rank / 2u;
  const int leader = kbd_cta_pair_leader();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < 2; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], 1);
      }
      kbd_mbarrier_init(accfull, 1);
      kbd_mbarrier_init(accempty, 2 * KBD_ACC_RELEASES(128));
      kbd_fence_mbarrier_init();
    }
    kbd_tmem_alloc_pair(tm, 128);
  }
  kbd_cluster_sync(); /* the peers' barriers and the allocation before any use */

  KBD_ACC(f32, 128, PN) acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  const int steps = p.tiles * p.kt;
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int i = 0; i < steps; ++i) {
        const int s = i % 2, t = i / p.kt, k = i % p.kt;
        kbd_mbarrier_wait(&empty[s], ((unsigned)(i / 2) & 1u) ^ 1u);
        if (leader) kbd_mbarrier_arrive_expect_tx(&full[s], 2u * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0)));
        kbd_tma_load_pair2d(s ? a1 : a0, &p.ma, &full[s],
                            (int)((pair * (unsigned)p.tiles + (unsigned)t) * 256u + 128u * half), k * PK);
        kbd_tma_load_pair2d(s ? b1 : b0, &p.mb, &full[s], (int)(64u * half), k * PK);
      }
    }
  } else if (kbd_warp_id() == 1 && leader) {
    const uint64_t ad = kbd_mma_desc_of(a0);
    const uint64_t bd =
        p.brk == PD_LAYOUT ? kbd_mma_desc_of(KBD_STILE_AT(pd_b64, (unsigned char *)b0.p)) : kbd_mma_desc_of(b0);
    const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
    const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
    const int as = p.brk == PD_STRIDE ? bstride : astride;
    const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
    for (int i = 0; i < steps; ++i) {
      const int s = i % 2, t = i / p.kt, k = i % p.kt;
      const uint32_t cs = p.brk == PD_OTHER_BAR ? (uint32_t)(s ^ 1) : (uint32_t)s;
      if (k == 0 && t > 0) kbd_mbarrier_wait(accempty, (unsigned)(t - 1) & 1u);
      kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
      /* clang-format off */
      MT_MARK(pd_line_issue); kbd_mma_pair_issue_commit_by_desc(acc, pd_a, pd_b, kbd_mma_desc_advance(ad, s * as), kbd_mma_desc_advance(bd, s * bstride), k > 0, empty0 + 8u * cs);
      /* clang-format on */
      if (k == p.kt - 1) kbd_mma_pair_commit(acc, accfull);
    }
  } else if (kbd_warpgroup_id() == 1) {
    for (int t = 0; t < p.tiles; ++t) {
      kbd_acc_wait(acc, accfull, (unsigned)t & 1u);
      KBD_ACC_TILE(f32, 128, PN) r;
      kbd_acc_load(r, acc, 0);
      kbd_acc_release_pair(acc, accempty);
      const size_t row0 = ((size_t)(pair * (unsigned)p.tiles + (unsigned)t) * 256u + 128u * half);
      kbd_store2d(p.d + row0 * PN, r, 128, PN, PN, 0, 0);
    }
  }
  kbd_cluster_sync(); /* no Tensor Memory access of either CTA after this */
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}

/* `pairs` pairs in one cluster of 2 * pairs CTAs, each computing `tiles` 256 x PN tiles over kt * PK of K.
 * Returns the status and, when it ran, checks every element (exact). */
static kbd_status pd_run(int pairs, int tiles, int kt, int brk) {
  pc_gemm g;
  pd_params p;
  memset(&p, 0, sizeof p);
  pc_setup(&g, pairs * tiles * 256, PN, kt * PK, &p.ma, 128, &p.mb, PN / 2, PK);
  p.d = g.dd;
  p.tiles = tiles;
  p.kt = kt;
  p.brk = brk;
  const kbd_status st = pd_kernel(kbd_cfg_cluster(kbd_cfg_1d((unsigned)(2 * pairs)), (unsigned)(2 * pairs), 1, 1), p);
  if (st.code == KBD_OK) pc_check(&g);
  pc_free(&g);
  return st;
}

static void test_pair_by_desc(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 3; ++seed) {
      mt_env(threads, seed);
      kbd_status st = pd_run(1, 3, 3, PD_OK);
      if (st.code != KBD_OK) fail_msg("one pair, threads %ld seed %ld: %s", threads, seed, st.msg);
      st = pd_run(2, 2, 3, PD_OK);
      if (st.code != KBD_OK) fail_msg("two pairs, threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}
static void test_pair_by_desc_bad_layout(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = pd_run(1, 2, 2, PD_LAYOUT);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(pd_line_issue));
  MT_ASSERT_HAS(st, KBD_MMA_RULE_DESC_TILE);
}
static void test_pair_by_desc_bad_stride(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = pd_run(1, 2, 2, PD_STRIDE);
  if (st.code == KBD_OK) fail_msg("A moved by B's stride was not reported");
  /* B's stride moves A's second stage into the ring's other tiles: the MMA reads bytes the producer refills */
  char at[64];
  snprintf(at, sizeof at, "test_mma_pair_desc.c:%d", MT_LINE(pd_line_issue));
  MT_ASSERT_HAS(st, at);
}
static void test_pair_by_desc_other_barrier(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = pd_run(1, 2, 3, PD_OTHER_BAR);
  if (st.code == KBD_OK) fail_msg("a commit to the other stage's barrier was not reported");
  /* the default schedule: the other stage's empty barrier completes a phase early, one the producer's parity wait on
   * it can no longer tell apart (reported at that wait, naming the barrier) */
  MT_ASSERT_HAS(st, "mbarrier");
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_pair_by_desc), MT_TEST(test_pair_by_desc_bad_layout),
                                     MT_TEST(test_pair_by_desc_bad_stride), MT_TEST(test_pair_by_desc_other_barrier)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
