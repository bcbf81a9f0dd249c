/* test_attn_broken.c - broken variants of the attention kernel must fail clearly on the CPU machine.
 *
 * The UNMODIFIED kernel text (examples/attention/attention_kernel.h) is compiled here again, bf16 and head_dim
 * 64, under test-only kernel names, once as is (the control) and once per injected bug. A bug is a macro
 * override defined just before the text is included and dropped right after (#pragma push_macro/pop_macro),
 * so nothing else in the program sees it:
 *   at_no_rescale     kbd_softmax_rescale is a no-op: O keeps the earlier key blocks at their old max
 *   at_kfull_early    the consumer's wait on kfull[s] is skipped (kbd_mbarrier_wait on sm_100a, kbd_mbarrier_wait_at
 *                     of the stage's address on sm_90a; every other wait stays): the S = Q K^T MMA reads a K stage
 *                     the TMA may not have delivered
 *   at_no_expect_tx   the producer arrives on kfull[s] without expect_tx: the phase completes on the arrival
 *                     alone, before the K bytes land
 * The host side here builds attn_params itself (tensor maps through kbd/tensormap.h) and launches these kernels;
 * attn_run (examples/attention/attention_run.c) is not used.
 * Built twice: KBD_CPU_ARCH=90 (wgmma emulation) and 100 (tcgen05 + Tensor Memory).
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

/* ---- the kernels --------------------------------------------------------------------------------------------- */

/* Is b one of the K ring's full barriers? (the overrides below pass the kernel's own `kfull`) */
static int at_is_kfull(const kbd_mbarrier *b, const kbd_mbarrier *kfull) {
  for (int s = 0; s < ATTN_STAGES; ++s)
    if (b == &kfull[s]) return 1;
  return 0;
}

#define ATTN_DT bf16
#define ATTN_T kbd_bf16
#define ATTN_D 64

#define ATTN_KERNEL at_control
#include "attention_kernel.h"
#undef ATTN_KERNEL

#pragma push_macro("kbd_softmax_rescale")
#undef kbd_softmax_rescale
#define kbd_softmax_rescale(o, st) ((void)0)
#define ATTN_KERNEL at_no_rescale
#include "attention_kernel.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_softmax_rescale")

/* The same for a barrier named by its shared address (the sm_90a key loop waits by address) */
static inline int at_is_kfull_at(uint32_t addr, kbd_mbarrier *kfull) {
  for (int s = 0; s < ATTN_STAGES; ++s)
    if (addr == kbd_mbarrier_addr(&kfull[s])) return 1;
  return 0;
}

#pragma push_macro("kbd_mbarrier_wait")
#pragma push_macro("kbd_mbarrier_wait_at")
#undef kbd_mbarrier_wait
#undef kbd_mbarrier_wait_at
#define kbd_mbarrier_wait(bar, parity)                                                                                 \
  (at_is_kfull((bar), kfull) ? (void)0 : kbd_hw_mbar_wait((bar), (uint32_t)(parity), KBD_SITE))
#define kbd_mbarrier_wait_at(addr, parity)                                                                             \
  (at_is_kfull_at((uint32_t)(addr), kfull) ? (void)0                                                                   \
                                           : kbd_hw_mbar_wait_at((uint32_t)(addr), (uint32_t)(parity), KBD_SITE))
#define ATTN_KERNEL at_kfull_early
#include "attention_kernel.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_mbarrier_wait_at")
#pragma pop_macro("kbd_mbarrier_wait")

#pragma push_macro("kbd_mbarrier_arrive_expect_tx")
#undef kbd_mbarrier_arrive_expect_tx
#define kbd_mbarrier_arrive_expect_tx(bar, bytes)                                                                      \
  (at_is_kfull((bar), kfull) ? kbd_hw_mbar_arrive((bar), 1u, KBD_SITE)                                                 \
                             : kbd_hw_mbar_arrive_expect_tx((bar), (uint32_t)(bytes), KBD_SITE))
#define ATTN_KERNEL at_no_expect_tx
#include "attention_kernel.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_mbarrier_arrive_expect_tx")

/* ---- the host side ------------------------------------------------------------------------------------------- */

typedef kbd_status (*at_kernel)(kbd_launch_cfg, attn_params);

/* Runs kernel on problem p (bf16, head_dim 64, no split) into r. */
static kbd_status at_launch(at_kernel kernel, const at_problem *p, const at_out *r) {
  assert_int_equal(p->d, 64);
  assert_int_equal(p->dtype, ATTN_BF16);
  const int group = p->heads_q / p->heads_kv;
  const long long heads = (long long)p->batch * p->heads_kv, rows = (long long)group * p->seq_q;
  attn_params a;
  memset(&a, 0, sizeof a);
  MT_ASSERT_OK(at_map(&a.q, p->dq, rows, heads, ATTN_WM));
  MT_ASSERT_OK(at_map(&a.k, p->dk, p->seq_k, heads, ATTN_BN(64)));
  MT_ASSERT_OK(at_map(&a.v, p->dv, p->seq_k, heads, ATTN_BN(64)));
  MT_ASSERT_OK(at_map(&a.om, r->o, rows, heads, ATTN_WM)); /* the epilogue's TMA store */
  a.o = r->o, a.lse = r->lse;
  a.seq_q = p->seq_q, a.seq_k = p->seq_k, a.group = group, a.causal = p->causal, a.splits = 1;
  a.scale = p->scale > 0.0f ? p->scale : 0.125f;
  attn_smem l;
  const kbd_smem_plan plan = attn_layout_64(&l);
  MT_ASSERT_OK(kbd_smem_plan_status(&plan));
  const unsigned qblocks = (unsigned)((rows + ATTN_BM(64) - 1) / ATTN_BM(64));
  return kernel(kbd_cfg(kbd_dim(qblocks, (unsigned)heads, 1), plan.bytes, NULL), a);
}

/* Runs kernel on p and returns its status; when it ran, *bad_rows = rows out of tolerance of the reference. */
static kbd_status at_run_check(at_kernel kernel, const at_problem *p, long long *bad_rows, int *unwritten) {
  at_out r;
  at_out_alloc(&r, p);
  const kbd_status s = at_launch(kernel, p, &r);
  *bad_rows = -1;
  *unwritten = -1;
  if (kbd_ok(s)) {
    at_download(&r, p);
    double worst;
    *bad_rows = at_check(p, &r, at_tolerance(p->dtype, 1.0), &worst, 0);
    *unwritten = 0;
    for (long long i = 0; i < p->nq; ++i)
      *unwritten += r.ho[i] == 0xFFFFu;
  }
  at_out_free(&r);
  return s;
}

/* The same text without an override passes: what the broken variants get wrong is the injected bug only. */
static void test_control(void **state) {
  (void)state;
  at_problem p;
  at_moving_max(&p, 100, 300); /* 200 rows: 2 blocks of ATTN_BM = 128, the second ragged */
  for (long seed = -1; seed < 3; ++seed) {
    mt_env(seed < 0 ? 2 : 1, seed);
    long long bad;
    int unwritten;
    MT_ASSERT_OK(at_run_check(at_control, &p, &bad, &unwritten));
    if (bad != 0 || unwritten != 0)
      fail_msg("control (sm_%d, seed %ld): %lld rows out of tolerance, %d elements unwritten", KBD_CPU_ARCH, seed, bad,
               unwritten);
  }
  at_free(&p);
}

/* Without the rescale, O keeps the earlier blocks' P V at their old max: too heavy by exp(1) per block since.
 * The row max of every row moves at every key block (at_moving_max), so EVERY row is wrong, by far more than
 * the tolerance (the first keys' values in [-1, 1) are weighted e and e^2 instead of 1/e and 1/e^2 relative to the
 * last one). The row sums are rescaled inside kbd_softmax_update, so only O is wrong: the lse still matches. */
static void test_missing_rescale(void **state) {
  (void)state;
  at_problem p;
  at_moving_max(&p, 100, 300); /* 200 rows: 2 blocks of ATTN_BM = 128, the second ragged */
  mt_env(1, 0);
  at_out r;
  at_out_alloc(&r, &p);
  MT_ASSERT_OK(at_launch(at_no_rescale, &p, &r));
  at_download(&r, &p);
  at_assert_every_row_wrong(&p, &r, "missing rescale");
  at_out_free(&r);
  at_free(&p);
}

/* The status of a kernel whose S = Q K^T MMA reads a K stage before the TMA delivered it: POISON at the S issue's
 * line of attention_kernel.h (sm_90a: kbd_mma_ring by descriptor, sm_100a: kbd_mma), naming the MMA instruction,
 * operand B (K) and a byte of the K ring. */
static void at_assert_k_undelivered(kbd_status s, const char *variant, long threads, long seed) {
  char want[256] = "", one[64];
  int lines[4], at_line = 0;
  /* the lines the CPU machine may report: S = Q K^T is issued for the first key block before the loop and for block
   * j+1 inside it */
  const int n = at_text_lines(
      AT_KERNEL_TEXT, KBD_CPU_ARCH == 90 ? "kbd_mma_ring(sacc, ATTN_Q, ATTN_K," : "kbd_mma(sacc, q, k, 0)", lines, 4);
  for (int i = 0; i < n; ++i) {
    snprintf(one, sizeof one, "attention_kernel.h:%d: ", lines[i]);
    if (strstr(s.msg, one)) at_line = 1;
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? " or " : "", one);
  }
  const char *mma = KBD_CPU_ARCH == 90 ? "wgmma.mma_async (operand B) reads dynamic shared memory, byte "
                                       : "tcgen05.mma (operand B) reads dynamic shared memory, byte ";
  if (s.code != KBD_ERR_POISON || !at_line || !strstr(s.msg, mma) ||
      !strstr(s.msg, "which an asynchronous copy is still writing"))
    fail_msg("%s (sm_%d, %ld threads, seed %ld): want %s at \"%s\" \"%s...\" an asynchronous copy is still writing; "
             "got %s: %s",
             variant, KBD_CPU_ARCH, threads, seed, kbd_code_name(KBD_ERR_POISON), want, mma, kbd_code_name(s.code),
             s.msg);
  attn_smem l;
  (void)attn_layout_64(&l);
  const size_t byte = (size_t)strtoull(strstr(s.msg, mma) + strlen(mma), NULL, 10);
  if (byte < l.k || byte >= l.k + ATTN_STAGES * (size_t)(ATTN_BN(64) * 64 * 2))
    fail_msg("%s (sm_%d): byte %zu is not in the K ring [%zu, %zu)", variant, KBD_CPU_ARCH, byte, l.k,
             l.k + ATTN_STAGES * (size_t)(ATTN_BN(64) * 64 * 2));
}

/* The consumer skips its wait on kfull[s] (every other wait stays): the MMA reads K while the TMA still writes
 * it. Under every schedule tried: default, seeds 0-7, 1 and 2 host threads. */
static void test_k_read_before_full(void **state) {
  (void)state;
  at_problem p;
  at_moving_max(&p, 100, 300); /* 200 rows: 2 blocks of ATTN_BM = 128, the second ragged */
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 8; ++seed) {
      mt_env(threads, seed);
      long long bad;
      int unwritten;
      at_assert_k_undelivered(at_run_check(at_kfull_early, &p, &bad, &unwritten), "kfull wait skipped", threads, seed);
    }
  at_free(&p);
}

/* The producer arrives on kfull[s] without expect_tx: one arrival is all the phase waits for, so it completes
 * before the K bytes land and the consumer's wait lets the MMA read a stage still being written. */
static void test_missing_expect_tx(void **state) {
  (void)state;
  at_problem p;
  at_moving_max(&p, 100, 300); /* 200 rows: 2 blocks of ATTN_BM = 128, the second ragged */
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 8; ++seed) {
      mt_env(threads, seed);
      long long bad;
      int unwritten;
      at_assert_k_undelivered(at_run_check(at_no_expect_tx, &p, &bad, &unwritten), "expect_tx missing", threads, seed);
    }
  at_free(&p);
}

int main(void) {
  mt_quiet(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_control),
      cmocka_unit_test(test_missing_rescale),
      cmocka_unit_test(test_k_read_before_full),
      cmocka_unit_test(test_missing_expect_tx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
