/* test_attn_d256.c - the handshakes of the sm_100a kernel text of head_dim 256 (examples/attention/
 * attention_kernel_sm100_d256.h: one Q tile, two S buffers alternating by key block, an MMA warp, a softmax warpgroup and
 * a correction warpgroup) must fail clearly on the CPU machine when broken.
 *
 * The UNMODIFIED text is compiled here again (bf16) under test-only names, as is (the control, and with the correction's
 * vote counted) and once per injected bug, each a macro override defined just before the text is included and dropped
 * right after:
 *   d256_no_pv_wait     the MMA warp issues S_j+2 into buffer j % 2 without waiting for P_j V_j, which reads P_j there
 *   d256_no_o_wait      the correction does not wait for "O full" (P_j-1 V_j-1): a warp that rescales reads O while the
 *                       MMA may still accumulate into it, and one that skips lets "O corrected" run two phases ahead of
 *                       the MMA warp's wait (the first bug this text had: a lapped phase)
 *   d256_epi_parity     the epilogue waits for the last phase of "O full" instead of "O done": the softmax can be two
 *                       blocks ahead of O full, where a parity wait returns at once (the second bug this text had)
 *   d256_no_fix         the correction leaves O alone: every row of at_moving_max_d's inputs is wrong
 * The first three must be reported under every schedule tried (default, seeds 0-3) as a Tensor Memory race, a lapped
 * or misused barrier phase, an unwritten read or the deadlock it leads to; the last must give every row wrong under
 * every schedule; the control passes against the double reference under the same schedules, with the vote both
 * rescaling and skipping. Emulating sm_100a only: the text is sm_100a's.
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
#define ATTN_D 256

#define ATTN_KERNEL d256_control
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL

/* The correction's warp decision, counted: [0] warps that skipped, [1] that rescaled */
static long dv_votes[2];
static int dv_count(int rescales) {
  __atomic_fetch_add(&dv_votes[rescales != 0], 1, __ATOMIC_RELAXED);
  return rescales;
}
#pragma push_macro("kbd_softmax_warp_rescales")
#undef kbd_softmax_warp_rescales
#define kbd_softmax_warp_rescales(st)                                                                                  \
  dv_count(kbd_softmax_warp_any_(&(st).row_scale.v[0][0], KBD_VEC_SLOTS((st).row_scale), KBD_SITE))
#define ATTN_KERNEL d256_counted
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_softmax_warp_rescales")

/* kbd_acc_wait without one of the text's waits, every other kept */
#pragma push_macro("kbd_acc_wait")
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (!strcmp(#acc, "s") && !strcmp(#bar, "ofull") ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL d256_no_pv_wait
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (!strcmp(#acc, "oacc") && !strcmp(#bar, "ofull") ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL d256_no_o_wait
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
/* the epilogue's wait on "O done" replaced by a parity wait for the last phase of "O full" */
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (!strcmp(#bar, "odone") ? kbd__acc_wait_warp(ofull, (uint32_t)(n - 1) & 1u, KBD_SITE)                               \
                          : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL d256_epi_parity
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_acc_wait")
/* the correction's rescale of O, and only it: kbd_softmax_rescale_packed of the correction's state `cs` (the text's
 * packed rescale; the softmax's factors keep the same bits through the scalar one) */
#pragma push_macro("kbd_softmax_rescale_packed")
#undef kbd_softmax_rescale_packed
#define kbd_softmax_rescale_packed(o, st)                                                                              \
  do {                                                                                                                 \
    if (strcmp(#st, "cs")) KBD__SM_SCALE_ROWS(o, (st).row_scale, (st).row_scale.v[kbd_srl_][kbd_k_], "rescale");       \
  } while (0)
#define ATTN_KERNEL d256_no_fix
#include "attention_kernel_sm100_d256.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_softmax_rescale_packed")

typedef at_kernel dv_kernel;

/* Runs kernel on problem p (bf16, head_dim 256, no split) into r: the launch attn_run makes. */
static kbd_status dv_launch(dv_kernel kernel, const at_problem *p, const at_out *r) {
  attn_smem l;
  return at_launch_text(kernel, p, r, attn_layout_fa4_256(&l), ATTN_FA4_D256_BM);
}

/* One (batch, kv head), 2 q heads packed into 200 rows (a block of 128 and one of 72), 450 keys = 8 key blocks of 64
 * (the last ragged), causal: both S buffers several times over, the one-block tail, masked blocks; at_movers' rows
 * (two climbing columns at head_dim 256) move their max at every block, the others keep it after block 0. */
static void dv_problem(at_problem *p) { at_movers(p, 256, 100, 450, 2); }

static void test_control(void **state) {
  (void)state;
  at_problem p;
  dv_problem(&p);
  at_control_runs(dv_launch, d256_counted, &p, 4, dv_votes, "control");
  at_free(&p);
  /* plain random inputs, GQA 3:1 with rows wrapping between heads, not causal, 3 blocks of rows */
  at_init(&p, ATTN_BF16, 1, 3, 1, 100, 200, 256, 0, 0.0f);
  for (long long i = 0; i < p.nrows * 256; ++i) p.q[i] = at_rand((unsigned long long)i, 4);
  for (long long i = 0; i < (long long)p.seq_k * 256; ++i) {
    p.k[i] = at_rand((unsigned long long)i, 5);
    p.v[i] = at_rand((unsigned long long)i, 6);
  }
  at_upload(&p);
  at_control_runs(dv_launch, d256_control, &p, 4, NULL, "control, GQA");
  at_free(&p);
}

/* Runs a broken variant under the default schedule and seeds 0-3: each run must stop with one of the codes (a
 * KBD_OK-terminated list), the report naming the kernel text. */
static void dv_expect(dv_kernel kernel, const char *name, const kbd_code *codes) {
  at_problem p;
  dv_problem(&p);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    const kbd_status s = dv_launch(kernel, &p, &r);
    int code_ok = 0;
    for (const kbd_code *c = codes; *c; ++c) code_ok |= s.code == *c;
    if (!code_ok || !strstr(s.msg, "attention_kernel_sm100_d256.h:"))
      fail_msg("%s (seed %ld): want a report at a line of the kernel text; got %s: %s", name, seed,
               kbd_code_name(s.code), s.msg);
    at_out_free(&r);
  }
  at_free(&p);
}

static void test_no_pv_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_OK};
  dv_expect(d256_no_pv_wait, "no P V wait before S", codes);
}

static void test_no_o_wait(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_ERR_MBARRIER, KBD_ERR_DEADLOCK, KBD_ERR_POISON, KBD_OK};
  dv_expect(d256_no_o_wait, "no O full wait in the correction", codes);
}

static void test_epi_parity(void **state) {
  (void)state;
  static const kbd_code codes[] = {KBD_ERR_RACE, KBD_ERR_MBARRIER, KBD_ERR_POISON, KBD_OK};
  dv_expect(d256_epi_parity, "epilogue on O full's parity", codes);
}

/* No rescale of O: every handshake kept, so the run completes, and on at_moving_max_d's inputs (200 rows: a block of
 * 128 and one of 72; 450 keys, 8 key blocks of 64, the row max growing at each) every row is wrong. */
static void test_no_fix(void **state) {
  (void)state;
  at_problem p;
  at_moving_max_d(&p, 100, 450, 256);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    MT_ASSERT_OK(dv_launch(d256_no_fix, &p, &r));
    at_download(&r, &p);
    at_assert_every_row_wrong(&p, &r, "no rescale (head_dim 256)");
    at_out_free(&r);
  }
  at_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_control), MT_TEST(test_no_pv_wait), MT_TEST(test_no_o_wait),
                                     MT_TEST(test_epi_parity), MT_TEST(test_no_fix)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
