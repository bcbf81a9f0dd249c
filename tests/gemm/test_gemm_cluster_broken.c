/* test_gemm_cluster_broken.c - the GEMM example's kernels with the cluster release broken. In a cluster the CTAs
 * of a column share B and the CTAs of a row share A (each multicasts its share into its peers), so a stage may be
 * refilled only when the MMAs of the CTA and of all its peers have read it. Two breaks, chosen at run time:
 *   local        a CTA pair: the stage is released in the CTA's own barrier only (kbd_mma_lanes of the own rank
 *                and kbd_mma_wait_at with mask 0 on sm_90a, kbd_mma_issue_commit_by_desc(_elected) with mask 0 on
 *                sm_100a, where the loops pass the peers)
 *   column only  a 2 x 2 cluster: the release reaches the column peer (B) but not the row peer (A)
 * Either way the barriers count fewer arrivals than they wait for, and the CPU machine must report it in the first
 * run under the default schedule (a deadlock naming the producer's wait, or a data race on the stage when a
 * peer's multicast overtakes a reader). The control is the unbroken example (gemm_args_sm* and tests/examples run
 * it with 1 x 2, 2 x 1 and 2 x 2 clusters). Built per emulated arch.
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

/* the example's kernels with the release broken (the kernel text itself is unchanged; `cl` points to its gemm_cluster
 * in the sm_90a consumers' main loop and the sm_100a MMA warp, gemm_variant.h) */
static int broken_column_only; /* 0: local, 1: column only */
#include <kbd/mma.h>
#undef kbd_mma_release_at
#undef kbd_mma_wait_at
#undef kbd_mma_issue_commit_at
#undef kbd_mma_issue_commit_by_desc
#undef kbd_mma_issue_commit_by_desc_elected
#undef kbd_mma_lanes
/* the mask is 0 in the single-CTA loops and the peers in the cluster ones */
#define GEMM_BROKEN_MASK(mask) ((mask) == 0u ? 0u : broken_column_only ? (uint32_t)cl->col : 0u)
#define kbd_mma_release_at(acc, addr, mask) kbd__mma_release_at_(acc, addr, GEMM_BROKEN_MASK(mask))
#define kbd_mma_wait_at(acc, addr, mask) kbd__mma_wait_at_(acc, addr, GEMM_BROKEN_MASK(mask))
#define kbd_mma_issue_commit_at(acc, a, b, accumulate, bar, mask)                                                      \
  kbd__mma_issue_commit_at_(acc, a, b, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)), KBD__MMA_TYPE(KBD_DTYPE(b)), bar,      \
                            GEMM_BROKEN_MASK(mask))
#define kbd_mma_issue_commit_by_desc(acc, TA, TB, adesc, bdesc, accumulate, bar, mask)                                 \
  kbd__mma_issue_commit_by_desc_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate,                \
                                 KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                         \
                                 KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))), bar, GEMM_BROKEN_MASK(mask))
#define kbd_mma_issue_commit_by_desc_elected(acc, TA, TB, adesc, bdesc, accumulate, bar, mask)                         \
  kbd__mma_issue_commit_by_desc_one_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), adesc, bdesc, accumulate,            \
                                     KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))),                                     \
                                     KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))), bar, GEMM_BROKEN_MASK(mask))
/* sm_90a's release by lanes (kbd_mma_lanes of the peers, every loop): the own rank's lane only, or the column's */
#define kbd_mma_lanes(mask)                                                                                            \
  kbd__mma_lanes_((mask) == 0u ? 0u : broken_column_only ? (uint32_t)cl->col : 1u << (cl->rm + cl->cm * cl->rn))
#include "gemm.cu"

static void run_broken(int column_only) {
  broken_column_only = column_only;
  mt_env(1, -1);
  mt_quiet(1);
  enum { M = 600, N = 256, K = 192 };
  kbd_bf16 *a, *b;
  kbd_bf16 *d;
  assert_int_equal(kbd_malloc((void **)&a, sizeof(kbd_bf16) * M * K).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&b, sizeof(kbd_bf16) * K * N).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&d, sizeof(kbd_bf16) * M * N).code, KBD_OK);
  assert_int_equal(kbd_memset_device(a, 0, sizeof(kbd_bf16) * M * K).code, KBD_OK);
  assert_int_equal(kbd_memset_device(b, 0, sizeof(kbd_bf16) * K * N).code, KBD_OK);
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = M, g.n = N, g.k = K;
  g.a = a, g.lda = K, g.b = b, g.ldb = N, g.d = d, g.ldd = N;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.grid = column_only ? 4 : 2, g.cluster = 2; /* one cluster, several tiles each: stages are reused */
  g.cluster_n = column_only ? 2 : 1;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_ERR_DEADLOCK && st.code != KBD_ERR_RACE)
    fail_msg("the broken cluster release (%s) was not reported: code %d: %s", column_only ? "column only" : "local",
             st.code, st.msg);
  assert_non_null(strstr(st.msg, "gemm_kernel"));
  print_message("reported (%s): %.160s\n", kbd_code_name(st.code), st.msg);
  kbd_free(a), kbd_free(b), kbd_free(d);
}

static void test_local_release(void **state) {
  (void)state;
  run_broken(0);
}
static void test_column_only_release(void **state) {
  (void)state;
  run_broken(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_local_release), cmocka_unit_test(test_column_only_release)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
