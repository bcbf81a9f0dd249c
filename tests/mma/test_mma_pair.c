/* test_mma_pair.c - CTA-pair MMAs (kbd/mma_pair.h: tcgen05 .cta_group::2) on the CPU machine emulating sm_100a.
 *
 * Clusters of 2 and 4 CTAs (one or two pairs), 256 threads each. Per pair: D (256 x PN) = A (256 x K) B^T for
 * PT output tiles, through one 128-column accumulator per CTA. Per CTA: warp 0 allocates (collectively with its
 * peer) and loads this CTA's halves (A rows 128h.., B rows 64h..) through a 2-stage ring with
 * kbd_tma_load_pair, completing on the even CTA's `full`; the even CTA arms `full` with both halves' bytes; its
 * warp 1 issues kbd_mma_pair_issue and frees each stage in both CTAs with kbd_mma_pair_commit; warpgroup 1 of
 * each CTA waits for its half (`accfull`), reads it and releases it to the issuer (kbd_acc_release_pair on the
 * even CTA's `accempty`, which counts the 8 epilogue warps of the pair). Values are small multiples of 1/4:
 * the results are exact and compared bit for bit under the default schedule, seeds 0-5 and 1 or 2 host threads.
 *
 * Broken variants, each reported in the first run under the default schedule with its kind and this file's line:
 * the odd CTA issuing the MMA, a commit that reaches only the issuing CTA (the odd CTA's epilogue waits forever:
 * a deadlock), an odd CTA that never allocates (the collective alloc waits: a deadlock naming it), an `full`
 * armed with only the even CTA's bytes, a single-CTA commit in a pair kernel (ptxas rejects the mix; the machine
 * names both sites), the odd CTA freeing its Tensor Memory while MMAs still write it, and an odd-CTA epilogue
 * that releases its half before reading it.
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
#include "pair_case.h"

enum { PR_OK, PR_ODD_ISSUES, PR_COMMIT_ONE, PR_NO_PEER_ALLOC, PR_EXPECT_HALF, PR_MIX, PR_FREE_EARLY, PR_RELEASE_EARLY };

static int pr_line_issue, pr_line_commit, pr_line_alloc, pr_line_free, pr_line_mix;

KBD_KERNEL(pr_kernel, 256, pair_params) {
  PAIR_SHARED();
  const unsigned rank = kbd_cluster_ctarank(), half = rank & 1u;
  const int leader = kbd_cta_pair_leader();
  if (kbd_warp_id() == 0) {
    pair_init_barriers(full, empty, accfull, accempty);
    MT_MARK(pr_line_alloc); if (!(p.brk == PR_NO_PEER_ALLOC && half)) kbd_tmem_alloc_pair(tm, 128);
  }
  kbd_cluster_sync(); /* the peers' barriers and the allocation before any use */

  pair_acc acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  const int steps = p.tiles * p.kt;
  if (kbd_warp_id() == 0) {
    const uint32_t both = 2u * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0));
    pair_produce(&p, a0, a1, b0, b1, full, empty, p.brk == PR_EXPECT_HALF ? both / 2u : both);
    if (p.brk == PR_FREE_EARLY && half) {
      MT_MARK(pr_line_free); kbd_tmem_free_pair(tm, 128);
    }
  } else if (kbd_warp_id() == 1 && (leader != (p.brk == PR_ODD_ISSUES))) {
    for (int i = 0; i < steps; ++i) {
      const int s = i % 2, t = i / p.kt, k = i % p.kt;
      if (k == 0 && t > 0) kbd_mbarrier_wait(accempty, (unsigned)(t - 1) & 1u);
      if (p.brk != PR_ODD_ISSUES) kbd_mbarrier_wait(&full[s], (unsigned)(i / 2) & 1u);
      MT_MARK(pr_line_issue); kbd_mma_pair_issue(acc, s ? a1 : a0, s ? b1 : b0, k > 0);
      MT_MARK(pr_line_mix); if (p.brk == PR_MIX) kbd_mma_commit(acc, &empty[s]); else kbd_mma_pair_commit(acc, &empty[s]);
      if (k == p.kt - 1) {
        if (p.brk == PR_COMMIT_ONE) {
          KBD_ELECT_ONE { kbd_hw_umma_commit_pair(accfull, (uint16_t)(1u << rank), KBD_SITE); }
        } else {
          MT_MARK(pr_line_commit); kbd_mma_pair_commit(acc, accfull);
        }
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    pair_epilogue(&p, &acc, accfull, accempty, p.brk == PR_RELEASE_EARLY && half);
  }
  kbd_cluster_sync(); /* no Tensor Memory access of either CTA after this */
  if (kbd_warp_id() == 0 && !(p.brk == PR_NO_PEER_ALLOC && half) && !(p.brk == PR_FREE_EARLY && half))
    kbd_tmem_free_pair(tm, 128);
}

static kbd_status pr_run(int pairs, int tiles, int kt, int brk) { return pair_run(pr_kernel, pairs, tiles, kt, brk); }

static void test_pair(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 6; ++seed) {
      mt_env(threads, seed);
      kbd_status st = pr_run(1, 3, 3, PR_OK);
      if (st.code != KBD_OK) fail_msg("one pair, threads %ld seed %ld: %s", threads, seed, st.msg);
      st = pr_run(2, 2, 2, PR_OK);
      if (st.code != KBD_OK) fail_msg("two pairs, threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}

/* The report's kind, this file's line and a phrase. */
static void pr_expect(int brk, kbd_code code, int line, const char *phrase) {
  mt_env(1, -1);
  const kbd_status st = pr_run(1, 2, 2, brk);
  if (st.code != code) fail_msg("variant %d: code %d, want %d: %s", brk, (int)st.code, (int)code, st.msg);
  char want[64];
  snprintf(want, sizeof want, "test_mma_pair.c:%d", line);
  if (line && !strstr(st.msg, want)) fail_msg("variant %d: no %s in: %s", brk, want, st.msg);
  if (!strstr(st.msg, phrase)) fail_msg("variant %d: no \"%s\" in: %s", brk, phrase, st.msg);
}

static void test_odd_issues(void **state) {
  (void)state;
  pr_expect(PR_ODD_ISSUES, KBD_ERR_INVALID, MT_LINE(pr_line_issue), "the odd CTA of its pair");
}
static void test_commit_one(void **state) {
  (void)state;
  pr_expect(PR_COMMIT_ONE, KBD_ERR_DEADLOCK, 0, "deadlock");
}
static void test_no_peer_alloc(void **state) {
  (void)state;
  pr_expect(PR_NO_PEER_ALLOC, KBD_ERR_DEADLOCK, MT_LINE(pr_line_alloc), "must issue it too");
}
static void test_expect_half(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = pr_run(1, 2, 2, PR_EXPECT_HALF);
  if (st.code == KBD_OK) fail_msg("an expect-tx of half the bytes was not reported");
  if (!strstr(st.msg, "test_mma_pair.c:")) fail_msg("no site in: %s", st.msg);
}
static void test_mix(void **state) {
  (void)state;
  pr_expect(PR_MIX, KBD_ERR_INVALID, MT_LINE(pr_line_mix), "mixes single-CTA and CTA-pair");
}
static void test_free_early(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = pr_run(1, 2, 2, PR_FREE_EARLY);
  if (st.code == KBD_OK) fail_msg("an early free was not reported");
  if (!strstr(st.msg, "Tensor Memory")) fail_msg("not a Tensor Memory report: %s", st.msg);
}
static void test_release_early(void **state) {
  (void)state;
  pr_expect(PR_RELEASE_EARLY, KBD_ERR_RACE, 0, "Tensor Memory");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pair),         cmocka_unit_test(test_odd_issues), cmocka_unit_test(test_commit_one),
      cmocka_unit_test(test_no_peer_alloc), cmocka_unit_test(test_expect_half), cmocka_unit_test(test_mix),
      cmocka_unit_test(test_free_early),    cmocka_unit_test(test_release_early),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
