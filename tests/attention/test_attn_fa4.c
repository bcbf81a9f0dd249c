/* test_attn_fa4.c - the handshakes of the sm_100a kernel text with FlashAttention-4's structure
 * (examples/attention/attention_kernel_sm100.h: two Q tiles, two softmax warpgroups, a correction warpgroup) must fail
 * clearly on the CPU machine when broken.
 *
 * The UNMODIFIED text is compiled here again (bf16, head_dim 64) under test-only names, as is (the control) and
 * once per injected bug, each a macro override defined just before the text is included and dropped right after:
 *   fa4_no_p_wait   the MMA warp does not wait for the softmax's "P ready" barrier: O += P V may read P's Tensor
 *                   Memory cells before (or while) the softmax stores them, and the softmax may store the next P
 *                   over cells an MMA still reads
 *   fa4_no_o_wait   the correction and the epilogue do not wait for the "O full" barrier (the commit of P V): they
 *                   read O while the MMA of the block before may still accumulate into it
 *   fa4_no_pv_wait  the MMA warp does not wait for P_t,j V_j to complete before S_t,j+1 = Q K^T writes over P_t,j
 *                   (P V reads it as A; PTX does not order two MMAs of one thread into different accumulators)
 *   fa4_no_f_wait   the correction warpgroup does not wait for "P ready" before it reads the row factors: it loads
 *                   Tensor Memory cells the softmax has not stored yet (or stores again)
 *   fa4_no_fix      the correction leaves O alone (no rescale): the output is wrong in every row whose maximum moves
 *                   after its first key block, which the inputs make every row
 *   fa4_lane0_vote  the correction decides whether its warp rescales from lane 0's row alone instead of the warp vote
 *                   (kbd_softmax_warp_rescales): a row whose max moved in a warp whose lane 0 kept its max is wrong
 * The handshake variants must be reported under every schedule tried (default, seeds 0-3) at a line of the kernel
 * text that takes part in the broken handshake, as a Tensor Memory race or an unwritten read; the last two must give
 * wrong rows under every schedule; the control passes under the same schedules against the double reference. The
 * inputs (fa_problem) make the lazy softmax (kbd_softmax_update_lazy) move the max of whole warps and of single rows
 * in otherwise still warps, so the correction both rescales and skips in every run (fa4_counted counts the votes).
 * Emulating sm_100a only: the text is sm_100a's.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention.h"
#include "attn_test.h"
#include "machine_test.h"

#define ATTN_DT bf16
#define ATTN_T kbd_bf16
#define ATTN_D 64

#define ATTN_KERNEL fa4_control
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL

/* kbd_acc_wait without the wait on one barrier array of the kernel (`pready` / `ofull`), every other wait kept; with
 * a view name, only that view's waits are dropped */
static int fa_in(const kbd_mbarrier *bar, const kbd_mbarrier *arr) { return bar == &arr[0] || bar == &arr[1]; }
#pragma push_macro("kbd_acc_wait")
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_in((bar), ocorr) ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_c_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_in((bar), ofull) && strstr(#parity, "n - 1") ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_o_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_in((bar), ofull) && !strcmp(#acc, "s") ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_pv_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_in((bar), pready) && !strcmp(#acc, "fac") ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_f_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_acc_wait")
/* the correction's rescale of O by the factors, and only it: kbd_softmax_rescale_packed of the correction's state `cs`
 * (the text's packed rescale; the softmax's factors keep the same bits through the scalar one) */
#pragma push_macro("kbd_softmax_rescale_packed")
#undef kbd_softmax_rescale_packed
#define kbd_softmax_rescale_packed(o, st)                                                                              \
  do {                                                                                                                 \
    if (strcmp(#st, "cs")) KBD__SM_SCALE_ROWS(o, (st).row_scale, (st).row_scale.v[kbd_srl_][kbd_k_], "rescale");       \
  } while (0)
#define ATTN_KERNEL fa4_no_fix
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_softmax_rescale_packed")

/* The correction's warp decision, counted (the control's text otherwise): [0] warps that skipped, [1] that rescaled */
static long fa_votes[2];
static int fa_count(int rescales) {
  __atomic_fetch_add(&fa_votes[rescales != 0], 1, __ATOMIC_RELAXED);
  return rescales;
}
#pragma push_macro("kbd_softmax_warp_rescales")
#undef kbd_softmax_warp_rescales
#define kbd_softmax_warp_rescales(st)                                                                                  \
  fa_count(kbd_softmax_warp_any_(&(st).row_scale.v[0][0], KBD_VEC_SLOTS((st).row_scale), KBD_SITE))
#define ATTN_KERNEL fa4_counted
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#undef kbd_softmax_warp_rescales
/* the broken decision: lane 0's row only (the CPU machine holds the warp's 32 lanes; lane 0 is v[0]) */
#define kbd_softmax_warp_rescales(st) ((st).row_scale.v[0][0] != 1.0f)
#define ATTN_KERNEL fa4_lane0_vote
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_softmax_warp_rescales")

typedef at_kernel fa_kernel;

/* Runs kernel on problem p (bf16, head_dim 64, no split) into r: the launch attn_run makes. */
static kbd_status fa_launch(fa_kernel kernel, const at_problem *p, const at_out *r) {
  attn_smem l;
  return at_launch_text(kernel, p, r, attn_layout_fa4_64(&l), ATTN_FA4_BM);
}

/* One (batch, kv head), 2 q heads packed into 300 rows (a block of two Q tiles and a block of one, 44 rows), 450
 * keys = 4 key blocks of 128 (the last ragged), causal: both tiles, the one-tile block, the correction and the
 * masked blocks all take part; at_movers' rows move their max at every block, the others keep it after block 0. */
static void fa_problem(at_problem *p) { at_movers(p, 64, 150, 450, 1); }

/* Does the report name one of the text's lines holding one of the needles (a NULL-terminated list): a fault's site,
 * or a deadlock report's waiting warps? */
static int fa_at(const kbd_status s, const char *const *needles) {
  static const char *const sites[] = {": ", " waits", NULL};
  return at_names_line(s.msg, FA_KERNEL_TEXT, needles, sites);
}

/* Runs a broken variant under the default schedule and seeds 0-3: each run must stop with one of the codes (a
 * KBD_OK-terminated list) at a line of the text holding one of the needles, with `what` in the message. */
static void fa_expect(fa_kernel kernel, const char *name, const kbd_code *codes, const char *what,
                      const char *const *needles) {
  at_problem p;
  fa_problem(&p);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    const kbd_status s = fa_launch(kernel, &p, &r);
    int code_ok = 0;
    for (const kbd_code *c = codes; *c; ++c)
      code_ok |= s.code == *c;
    if (!code_ok || !strstr(s.msg, what) || !fa_at(s, needles)) {
      char want[256] = "";
      for (const char *const *n = needles; *n; ++n)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s\"%s\"", n == needles ? "" : " or ", *n);
      fail_msg("%s (seed %ld): want a report naming \"%s\" at a line with %s; got %s: %s", name, seed, what, want,
               kbd_code_name(s.code), s.msg);
    }
    at_out_free(&r);
  }
  at_free(&p);
}

static void fa_control_runs(const at_problem *p, long seeds, const char *what) {
  at_control_runs(fa_launch, fa4_control, p, seeds, NULL, what);
}

static void test_control(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  fa_control_runs(&p, 4, "control");
  at_free(&p);
}

/* P V issued without waiting for "O corrected" (the MMA warp's only wait per tile and block: the correction arrives
 * on it after it saw P ready): the MMA reads P cells the softmax may still store or accumulates onto O cells the
 * correction may still store, or the softmax's and the MMA warp's barrier phases run ahead of a waiter (a lapped
 * phase: the misuse report, or the deadlock it leads to, naming the waits). */
static void test_no_c_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_ERR_POISON, KBD_ERR_MBARRIER, KBD_ERR_DEADLOCK, KBD_OK};
  static const char *const at[] = {"kbd_mma_ts_issue_elected(",
                                   "kbd_tmem_a_store(",
                                   "kbd_acc_wait(fac, &pready[t]",
                                   "kbd_acc_store_async(oacc, o, c)",
                                   "kbd_acc_load(o, oacc, c)",
                                   "kbd_acc_wait(s, &sfull[t]",
                                   NULL};
  fa_expect(fa4_no_c_wait, "no O-corrected wait", codes, "", at);
}

/* The epilogue reading O without waiting for the last P V: the read is not ordered before the correction's last store
 * or the MMA's last write over O, reported at that store, that MMA or the read itself. */
static void test_no_o_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_OK};
  static const char *const at[] = {"kbd_acc_store_async(oacc, o, c)", "kbd_mma_ts_issue_elected(",
                                   "kbd_acc_load(o, oacc, c)", NULL};
  fa_expect(fa4_no_o_wait, "no final O wait", codes, "Tensor Memory", at);
}

/* S_t,j+1 issued over P_t,j without waiting for P_t,j V_j: the CPU machine's MMA order rule reports the write over
 * A cells an MMA of another accumulator may still read, at the S issue. */
static void test_no_pv_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_OK};
  static const char *const at[] = {"kbd_mma_issue_elected(s, q, k, 0)", NULL};
  fa_expect(fa4_no_pv_wait, "no P V wait", codes, "A operand", at);
}

/* The correction reading the factors without waiting for them: its tcgen05.ld of the factor columns reads cells the
 * softmax has not stored (or stores again) with nothing ordering them, reported at that load or at the softmax's
 * store of the factors. */
static void test_no_f_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_ERR_POISON, KBD_OK};
  static const char *const at[] = {"kbd_acc_load(f, fac, 0)", "kbd_acc_store_async(fac, f, 0)", NULL};
  fa_expect(fa4_no_f_wait, "no factor wait", codes, "tcgen05", at);
}

/* No rescale of O: every handshake is kept, so the run completes, and on at_moving_max's inputs (300 rows: a block of
 * two tiles and a block of one; 450 keys, 4 key blocks, the row max growing at each) every row is wrong. */
static void test_no_fix(void **state) {
  (void)state;
  at_problem p;
  at_moving_max(&p, 150, 450);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    MT_ASSERT_OK(fa_launch(fa4_no_fix, &p, &r));
    at_download(&r, &p);
    at_assert_every_row_wrong(&p, &r, "no rescale");
    at_out_free(&r);
  }
  at_free(&p);
}

/* The correction's vote: on fa_problem every run (default schedule, seeds 0-3) has warps that skip the rescale and
 * warps that make it, and every row is within the tolerance (the control's check, on the counted text). */
static void test_lazy_votes(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  at_control_runs(fa_launch, fa4_counted, &p, 4, fa_votes, "counted");
  at_free(&p);
}

/* The lane-0 decision: every lone mover (row 7 of an odd warp, where lane 0's row keeps its max) is wrong by far more
 * than the tolerance (its O is not brought to the new max: the earlier blocks weigh e^8 too much). Other rows may be
 * wrong too: in the movers' warps, causal rows see different key blocks, and lane 0's row may see no key of the last
 * block that a later row of its warp sees. */
static void test_lane0_vote(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  double *o = (double *)malloc(sizeof(double) * 64);
  assert_non_null(o);
  const double tol = at_tolerance(p.dtype, 1.0);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    MT_ASSERT_OK(fa_launch(fa4_lane0_vote, &p, &r));
    at_download(&r, &p);
    long lone = 0;
    for (long long row = 0; row < p.nrows; ++row) {
      double lse, err = 0.0;
      at_reference(&p, row, o, &lse);
      for (int c = 0; c < 64; ++c) {
        const double e = fabs(at_value(r.ho[row * 64 + c], p.dtype) - o[c]);
        if (e > err) err = e;
      }
      const int alone = at_mover(row) && (row / 32) % 2 == 1;
      lone += alone;
      if (alone && !(err > 10.0 * tol))
        fail_msg("lane-0 vote (seed %ld): lone mover row %lld max |O - ref| = %.3g, want > %.3g", seed, row, err,
                 10.0 * tol);
    }
    if (lone != 5) fail_msg("%ld lone movers, want 5 (rows 39, 103, 167, 231, 295)", lone);
    at_out_free(&r);
  }
  free(o);
  at_free(&p);
}

/* attn_fa4_range against a brute force: per tile, the key blocks up to the last one any of its rows sees (each row's
 * visible keys counted directly, the causal bound of its own query index), cut to the split's share; both tiles start
 * at the same block when both have one; n is the larger count. Shapes where a tile's rows wrap into the next head
 * (so tile 0 can need more blocks than tile 1), GQA, causal and not, 1-4 splits. */
static void test_ranges(void **state) {
  (void)state;
  static const int seqs_q[] = {1, 7, 100, 127, 128, 129, 150, 255, 256, 300, 1000};
  static const int seqs_k[] = {1, 100, 128, 129, 450, 1000};
  long checked = 0, tile0_longer = 0;
  for (size_t a = 0; a < sizeof seqs_q / sizeof *seqs_q; ++a)
    for (size_t b = 0; b < sizeof seqs_k / sizeof *seqs_k; ++b)
      for (int group = 1; group <= 4; group *= 2)
        for (int causal = 0; causal < 2; ++causal)
          for (int splits = 1; splits <= 4; ++splits) {
            attn_params pr;
            memset(&pr, 0, sizeof pr);
            pr.seq_q = seqs_q[a], pr.seq_k = seqs_k[b], pr.group = group, pr.causal = causal, pr.splits = splits;
            const int rows = group * pr.seq_q, bn = ATTN_BN(64), all = (pr.seq_k + bn - 1) / bn;
            const int per = (all + splits - 1) / splits;
            for (int blk = 0; blk * ATTN_FA4_BM < rows; ++blk)
              for (int sp = 0; sp < splits; ++sp) {
                const attn_range r = attn_fa4_range(&pr, bn, blk, sp);
                int want[2] = {0, 0}, n = 0;
                for (int t = 0; t < 2; ++t) {
                  int end = 0; /* keys [0, end) some row of the tile sees */
                  for (int row = blk * ATTN_FA4_BM + ATTN_FA4_TM * t;
                       row < rows && row < blk * ATTN_FA4_BM + ATTN_FA4_TM * (t + 1); ++row) {
                    int e = pr.seq_k;
                    if (causal) {
                      e = row % pr.seq_q + pr.seq_k - pr.seq_q + 1;
                      e = e < 0 ? 0 : e > pr.seq_k ? pr.seq_k : e;
                    }
                    if (e > end) end = e;
                  }
                  const int nb = (end + bn - 1) / bn, lo = sp * per, hi = (sp + 1) * per < nb ? (sp + 1) * per : nb;
                  want[t] = hi > lo ? hi - lo : 0;
                  if (want[t] > n) n = want[t];
                  if (want[t] > 0 && r.kb0 != lo)
                    fail_msg("seq %d x %d, group %d, causal %d, split %d/%d, block %d, tile %d: kb0 %d, want %d",
                             pr.seq_q, pr.seq_k, group, causal, sp, splits, blk, t, r.kb0, lo);
                }
                if (r.nt[0] != want[0] || r.nt[1] != want[1] || r.n != n)
                  fail_msg(
                      "seq %d x %d, group %d, causal %d, split %d/%d, block %d: nt {%d, %d} n %d, want {%d, %d} %d",
                      pr.seq_q, pr.seq_k, group, causal, sp, splits, blk, r.nt[0], r.nt[1], r.n, want[0], want[1], n);
                tile0_longer += want[0] > want[1] && want[1] > 0;
                ++checked;
              }
          }
  if (tile0_longer == 0) fail_msg("no case where tile 0 needs more key blocks than tile 1 (%ld checked)", checked);
}

/* A shape where tile 0 needs more key blocks than tile 1 (its rows wrap into the next head), run against the double
 * reference: 2 q heads of 300 rows, causal, 300 keys; in block 1 (rows 256-511) tile 0 holds the last queries of head
 * 0 (all 3 key blocks) and tile 1 queries 84-211 of head 1 (2 key blocks). */
static void test_tile0_longer(void **state) {
  (void)state;
  at_problem p;
  at_init(&p, ATTN_BF16, 1, 2, 1, 300, 300, 64, 1, 0.0f);
  for (long long i = 0; i < p.nrows * 64; ++i)
    p.q[i] = at_rand((unsigned long long)i, 4);
  for (long long i = 0; i < (long long)p.seq_k * 64; ++i) {
    p.k[i] = at_rand((unsigned long long)i, 5);
    p.v[i] = at_rand((unsigned long long)i, 6);
  }
  at_upload(&p);
  attn_params pr;
  memset(&pr, 0, sizeof pr);
  pr.seq_q = 300, pr.seq_k = 300, pr.group = 2, pr.causal = 1, pr.splits = 1;
  const attn_range r = attn_fa4_range(&pr, ATTN_BN(64), 1, 0);
  if (r.nt[0] != 3 || r.nt[1] != 2) fail_msg("block 1: nt {%d, %d}, want {3, 2}", r.nt[0], r.nt[1]);
  fa_control_runs(&p, 2, "tile 0 longer");
  at_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_control),     MT_TEST(test_no_c_wait),  MT_TEST(test_no_o_wait),
                                     MT_TEST(test_no_pv_wait),  MT_TEST(test_no_f_wait),  MT_TEST(test_no_fix),
                                     MT_TEST(test_lazy_votes),  MT_TEST(test_lane0_vote), MT_TEST(test_ranges),
                                     MT_TEST(test_tile0_longer)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
