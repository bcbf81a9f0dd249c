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
 *
 * kbd_mma_pair_issue_commit_by_desc_elected, the k-loop of each tile in one KBD_ELECT_ONE (the GEMM's pair kernel):
 * exact as above; a B descriptor of another tile type reported at its line; a call from warp-uniform code
 * KBD_ERR_ISSUE at its line.
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
#include "pair_case.h"

/* PD_ELECTED*: the MMA warp's k-loop of each tile in one KBD_ELECT_ONE with kbd_mma_pair_issue_commit_by_desc_elected
 * (the stages' waits by the elected thread), as examples/gemm/gemm_kernel_pair.h writes it; PD_EL_UNIFORM: that form
 * from warp-uniform code */
enum { PD_OK, PD_LAYOUT, PD_STRIDE, PD_OTHER_BAR, PD_ELECTED, PD_EL_LAYOUT, PD_EL_UNIFORM };

typedef KBD_STILE(bf16, PN / 2, PK / 2, KBD_SWIZZLE_64B) pd_b64; /* another layout over B's first bytes */

static int pd_line_issue, pd_line_elected, pd_line_uniform;

KBD_KERNEL(pd_kernel, 256, pair_params) {
  PAIR_SHARED();
  const int leader = kbd_cta_pair_leader();
  if (kbd_warp_id() == 0) {
    pair_init_barriers(full, empty, accfull, accempty);
    kbd_tmem_alloc_pair(tm, 128);
  }
  kbd_cluster_sync(); /* the peers' barriers and the allocation before any use */

  pair_acc acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  const int steps = p.tiles * p.kt;
  if (kbd_warp_id() == 0) {
    pair_produce(&p, a0, a1, b0, b1, full, empty, 2u * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0)));
  } else if (kbd_warp_id() == 1 && leader) {
    pair_ring r = pair_ring_of(a0, a1, b0, b1, full, empty);
    if (p.brk == PD_LAYOUT || p.brk == PD_EL_LAYOUT)
      r.bd = kbd_mma_desc_of(KBD_STILE_AT(pd_b64, (unsigned char *)b0.p));
    const int as = p.brk == PD_STRIDE ? r.bstride : r.astride;
    if (p.brk == PD_ELECTED || p.brk == PD_EL_LAYOUT) {
      for (int t = 0; t < p.tiles; ++t) {
        if (t > 0) kbd_mbarrier_wait(accempty, (unsigned)(t - 1) & 1u);
        KBD_ELECT_ONE {
          for (int k = 0; k < p.kt; ++k) {
            const int i = t * p.kt + k, s = i % 2;
            kbd_mbarrier_wait_at(r.full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
            /* clang-format off */
            MT_MARK(pd_line_elected); kbd_mma_pair_issue_commit_by_desc_elected(acc, pair_a, pair_b, kbd_mma_desc_advance(r.ad, s * as), kbd_mma_desc_advance(r.bd, s * r.bstride), k > 0, r.empty0 + 8u * (uint32_t)s);
            /* clang-format on */
          }
        }
        kbd_mma_pair_commit(acc, accfull);
      }
    } else if (p.brk == PD_EL_UNIFORM) {
      kbd_mbarrier_wait_at(r.full0, 0u);
      /* clang-format off */
      MT_MARK(pd_line_uniform); kbd_mma_pair_issue_commit_by_desc_elected(acc, pair_a, pair_b, r.ad, r.bd, 0, r.empty0);
      /* clang-format on */
    } else {
      for (int i = 0; i < steps; ++i) {
        const int s = i % 2, t = i / p.kt, k = i % p.kt;
        const uint32_t cs = p.brk == PD_OTHER_BAR ? (uint32_t)(s ^ 1) : (uint32_t)s;
        if (k == 0 && t > 0) kbd_mbarrier_wait(accempty, (unsigned)(t - 1) & 1u);
        kbd_mbarrier_wait_at(r.full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
        /* clang-format off */
        MT_MARK(pd_line_issue); kbd_mma_pair_issue_commit_by_desc(acc, pair_a, pair_b, kbd_mma_desc_advance(r.ad, s * as), kbd_mma_desc_advance(r.bd, s * r.bstride), k > 0, r.empty0 + 8u * cs);
        /* clang-format on */
        if (k == p.kt - 1) kbd_mma_pair_commit(acc, accfull);
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    pair_epilogue(&p, &acc, accfull, accempty, 0);
  }
  kbd_cluster_sync(); /* no Tensor Memory access of either CTA after this */
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}

static kbd_status pd_run(int pairs, int tiles, int kt, int brk) { return pair_run(pd_kernel, pairs, tiles, kt, brk); }

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

/* the whole k-loop of a tile in one elected section: exact, one and two pairs, the ring wrapping */
static void test_pair_by_desc_elected(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 3; ++seed) {
      mt_env(threads, seed);
      kbd_status st = pd_run(1, 3, 3, PD_ELECTED);
      if (st.code != KBD_OK) fail_msg("one pair, threads %ld seed %ld: %s", threads, seed, st.msg);
      st = pd_run(2, 2, 3, PD_ELECTED);
      if (st.code != KBD_OK) fail_msg("two pairs, threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}
static void test_pair_by_desc_elected_bad_layout(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = pd_run(1, 2, 2, PD_EL_LAYOUT);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(pd_line_elected));
  MT_ASSERT_HAS(st, KBD_MMA_RULE_DESC_TILE);
}
static void test_pair_by_desc_elected_uniform(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = pd_run(1, 1, 1, PD_EL_UNIFORM);
  MT_ASSERT_CODE(st, KBD_ERR_ISSUE);
  MT_ASSERT_AT(st, MT_LINE(pd_line_uniform));
  MT_ASSERT_HAS(st, "kbd_mma_pair_issue_commit_by_desc_elected in warp-uniform code");
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_pair_by_desc),
                                     MT_TEST(test_pair_by_desc_bad_layout),
                                     MT_TEST(test_pair_by_desc_bad_stride),
                                     MT_TEST(test_pair_by_desc_other_barrier),
                                     MT_TEST(test_pair_by_desc_elected),
                                     MT_TEST(test_pair_by_desc_elected_bad_layout),
                                     MT_TEST(test_pair_by_desc_elected_uniform)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
