/* test_attn_fa4.c - the handshakes of the sm_100a kernel text with FlashAttention-4's roles
 * (examples/attention/attention_kernel_sm100.h) must fail clearly on the CPU machine when broken.
 *
 * The UNMODIFIED text is compiled here again (bf16, head_dim 64) under test-only names, as is (the control) and
 * once per injected bug, each a macro override defined just before the text is included and dropped right after:
 *   fa4_no_p_wait   the MMA warp does not wait for the softmax's "P ready" barrier: O += P V may read P's Tensor
 *                   Memory cells before (or while) the softmax stores them, and the softmax may store the next P
 *                   over cells an MMA still reads
 *   fa4_no_o_wait   the softmax warpgroup does not wait for the "O full" barrier (the commit of P V): its
 *                   correction reads and rescales O while the MMA of the block before may still accumulate into it
 * The bug must be reported under every schedule tried (default, seeds 0-3) at a line of the kernel text that
 * takes part in the broken handshake, as a Tensor Memory race or an unwritten read; the control passes under the
 * same schedules against the double reference. Emulating sm_100a only: the text is sm_100a's.
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

/* kbd_acc_wait without the wait on one barrier (the kernel's own `pready` / `ofull`), every other wait kept */
static int fa_is(const kbd_mbarrier *a, const kbd_mbarrier *b) { return a == b; }
#pragma push_macro("kbd_acc_wait")
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_is((bar), pready) ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_p_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#undef kbd_acc_wait
#define kbd_acc_wait(acc, bar, parity)                                                                                 \
  (fa_is((bar), ofull) ? (void)0 : kbd__acc_wait_warp((bar), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL fa4_no_o_wait
#include "attention_kernel_sm100.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_acc_wait")

typedef kbd_status (*fa_kernel)(kbd_launch_cfg, attn_params);

/* Runs kernel on problem p (bf16, head_dim 64, no split) into r: the launch attn_run makes. */
static kbd_status fa_launch(fa_kernel kernel, const at_problem *p, const at_out *r) {
  const int group = p->heads_q / p->heads_kv;
  const long long heads = (long long)p->batch * p->heads_kv, rows = (long long)group * p->seq_q;
  attn_params a;
  memset(&a, 0, sizeof a);
  MT_ASSERT_OK(at_map(&a.q, p->dq, rows, heads, ATTN_WM));
  MT_ASSERT_OK(at_map(&a.k, p->dk, p->seq_k, heads, ATTN_BN(64)));
  MT_ASSERT_OK(at_map(&a.v, p->dv, p->seq_k, heads, ATTN_BN(64)));
  a.o = r->o, a.lse = r->lse;
  a.seq_q = p->seq_q, a.seq_k = p->seq_k, a.group = group, a.causal = p->causal, a.splits = 1;
  a.scale = p->scale > 0.0f ? p->scale : 0.125f;
  attn_smem l;
  const kbd_smem_plan plan = attn_layout_64(&l);
  MT_ASSERT_OK(kbd_smem_plan_status(&plan));
  const unsigned qblocks = (unsigned)((rows + ATTN_BM(64) - 1) / ATTN_BM(64));
  return kernel(kbd_cfg(kbd_dim(qblocks, (unsigned)heads, 1), plan.bytes, NULL), a);
}

/* One (batch, kv head), 2 q heads packed into 200 rows (a full block and a ragged one), 450 keys = 4 key blocks
 * of 128 (the last ragged), causal: both S buffers, the correction and the masked blocks all take part. */
static void fa_problem(at_problem *p) {
  at_init(p, ATTN_BF16, 1, 2, 1, 100, 450, 64, 1, 0.0f);
  for (long long i = 0; i < p->nrows * 64; ++i) p->q[i] = at_rand((unsigned long long)i, 1);
  for (long long i = 0; i < (long long)p->seq_k * 64; ++i) {
    p->k[i] = at_rand((unsigned long long)i, 2);
    p->v[i] = at_rand((unsigned long long)i, 3);
  }
  at_upload(p);
}

/* The text's lines holding `needle`, at most max. */
static int fa_lines(const char *needle, int *lines, int max) {
  FILE *f = fopen(FA_KERNEL_TEXT, "r");
  if (!f) fail_msg("cannot open %s", FA_KERNEL_TEXT);
  char buf[512];
  int line = 0, n = 0;
  while (fgets(buf, sizeof buf, f)) {
    ++line;
    if (strstr(buf, needle) && n < max) lines[n++] = line;
  }
  fclose(f);
  if (!n) fail_msg("%s has no line with \"%s\"", FA_KERNEL_TEXT, needle);
  return n;
}
/* Does the report name one of the lines holding needle1 or needle2? */
static int fa_at(const kbd_status s, const char *needle1, const char *needle2) {
  int lines[8], n = fa_lines(needle1, lines, 4);
  n += fa_lines(needle2, lines + n, 4);
  for (int i = 0; i < n; ++i) {
    char one[64];
    snprintf(one, sizeof one, "attention_kernel_sm100.h:%d: ", lines[i]);
    if (strstr(s.msg, one)) return 1;
  }
  return 0;
}

static void test_control(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    MT_ASSERT_OK(fa_launch(fa4_control, &p, &r));
    at_download(&r, &p);
    double worst;
    const long long bad = at_check(&p, &r, at_tolerance(p.dtype, 1.0), &worst, 0);
    if (bad != 0) fail_msg("control (seed %ld): %lld rows out of tolerance (worst %.3g)", seed, bad, worst);
    at_out_free(&r);
  }
  at_free(&p);
}

/* P V issued without waiting for P: under the default schedule a race on P's cells (the MMA reads a store not
 * ordered before it or not waited for, or the softmax stores over cells an MMA still reads), reported at the issue
 * or at the store. */
static void test_no_p_wait(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    const kbd_status s = fa_launch(fa4_no_p_wait, &p, &r);
    /* other schedules may let the MMA warp run two S buffers ahead first: then the softmax waits for an S phase
     * that came and went, a deadlock report that names it ("lapped") */
    const int lapped = seed >= 0 && s.code == KBD_ERR_DEADLOCK && strstr(s.msg, "lapped") &&
                       strstr(s.msg, "attention_kernel_sm100.h:");
    if (!lapped && ((s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) || !strstr(s.msg, "A operand") ||
                    !fa_at(s, "kbd_mma_ts_issue(", "kbd_tmem_a_store(")))
      fail_msg("no P wait (seed %ld): want a race on the A operand at the P V issue or the P store; got %s: %s", seed,
               kbd_code_name(s.code), s.msg);
    at_out_free(&r);
  }
  at_free(&p);
}

/* The correction without waiting for the commit of P V: its tcgen05.ld of O reads cells an MMA writes with nothing
 * ordering them (or that nothing wrote yet), reported at the correction's (or the epilogue's) O load. */
static void test_no_o_wait(void **state) {
  (void)state;
  at_problem p;
  fa_problem(&p);
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    at_out r;
    at_out_alloc(&r, &p);
    const kbd_status s = fa_launch(fa4_no_o_wait, &p, &r);
    if ((s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) || !strstr(s.msg, "tcgen05.ld") ||
        !fa_at(s, "kbd_acc_load(o, oacc, c)", "kbd_acc_load(o, oacc, c)"))
      fail_msg("no O wait (seed %ld): want a Tensor Memory race at the O load; got %s: %s", seed,
               kbd_code_name(s.code), s.msg);
    at_out_free(&r);
  }
  at_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_control), MT_TEST(test_no_p_wait), MT_TEST(test_no_o_wait)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
