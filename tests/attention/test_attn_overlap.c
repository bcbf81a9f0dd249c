/* test_attn_overlap.c - the FA3 schedule of the attention kernel (docs/attention.md "The pipeline") on the CPU
 * machine: inter-warpgroup ping-pong and intra-warpgroup overlap, and results over many key blocks.
 *
 * The UNMODIFIED kernel text (examples/attention/attention_kernel.h, bf16, head_dim 64) is compiled here under
 * test-only names with logging wrappers around a few calls (#pragma push_macro/pop_macro, as test_attn_broken.c):
 * the first warp of each consumer warpgroup records, in the order the machine runs them,
 *   TURN   it passed kbd_scope_sync of its turn barrier    ISSUE_S / ISSUE_O   kbd_mma_release after the MMA, or
 *                                                                              the sm_90a key loop's issue by
 *                                                                              descriptor (kbd_mma_ring: S,
 *                                                                              kbd_mma_rs_ring: P V) returned
 *   SOFTMAX  kbd_softmax_update of a block (its max step)   WAIT_S / WAIT_O     kbd_mma_wait returned
 * On one block of 128 packed rows and 10 key blocks, under 10 schedules (1 and 2 host threads, seeds), the log
 * must show:
 *   - ping-pong: the turns alternate consumer 0, 1, 0, 1, ... (10 each), and every MMA a consumer issues inside
 *     its turn (between its TURN and its next SOFTMAX) is issued while the last turn taken is its own;
 *   - overlap: each consumer runs the softmax of blocks 1..9 while O += P V of the block before is issued and not
 *     yet waited for (9 softmaxes under a P V in flight; block 0 has no P V before it). On sm_100a the text's S wait
 *     commits after the P V issue, so there the P V is complete when the softmax starts: the log checks the calls'
 *     order, which is the text's schedule on both archs;
 *   - O and the lse within tolerance of a double reference.
 * Two variants show that the checks can fail: `at_serial` waits for P V right after issuing it (0 softmaxes under
 * a P V in flight, every schedule), and `at_no_turns` keeps the log calls but drops the turn barriers (the
 * alternation breaks under at least one of the schedules; the epilogue's own warpgroup barriers, which order the
 * staging of O for its TMA store, are kept and not logged). The second half runs attn_run (all three head_dims,
 * causal and not, GQA with ragged packed rows, seq_k past 1000: 9 to 18 key blocks per block) under 3
 * schedules against the reference.
 * Built twice: KBD_CPU_ARCH=90 (wgmma, P from registers) and 100 (tcgen05, P through shared memory).
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

/* ---- the log -------------------------------------------------------------------------------------------------- */

enum { OV_TURN, OV_ISSUE_S, OV_ISSUE_O, OV_SOFTMAX, OV_WAIT_S, OV_WAIT_O };
static const char *const ov_names[] = {"TURN", "ISSUE_S", "ISSUE_O", "SOFTMAX", "WAIT_S", "WAIT_O"};
typedef struct ov_event {
  int consumer, kind;
} ov_event;
#define OV_MAX 4096
static ov_event ov_log[OV_MAX];
static int ov_n;

/* The first warp of consumer warpgroup g (warps 4 and 8) logs; the tests launch one block. */
static void ov_add(int kind) {
  const int w = kbd_warp_id();
  if (w % 4 != 0 || w < 4) return;
  const int i = __atomic_fetch_add(&ov_n, 1, __ATOMIC_RELAXED);
  if (i < OV_MAX) ov_log[i].consumer = w / 4 - 1, ov_log[i].kind = kind;
}
/* One SOFTMAX per kbd_softmax_update: its max step calls kbd_softmax_rescale_of_ once per row slot. */
static void ov_softmax(void) {
  const int w = kbd_warp_id();
  if (w % 4 != 0 || w < 4) return;
  for (int i = __atomic_load_n(&ov_n, __ATOMIC_RELAXED) - 1; i >= 0; --i)
    if (ov_log[i].consumer == w / 4 - 1) {
      if (ov_log[i].kind == OV_SOFTMAX) return;
      break;
    }
  ov_add(OV_SOFTMAX);
}

/* ---- the kernels ---------------------------------------------------------------------------------------------- */

#define ATTN_DT bf16
#define ATTN_T kbd_bf16
#define ATTN_D 64

/* The wrappers: the library's own expansions of these calls (kbd/mma.h, kbd/scope.h) with a log entry. `sacc` is
 * the kernel's S accumulator. */
#pragma push_macro("kbd_mma_release")
#pragma push_macro("kbd_mma_wait")
#pragma push_macro("kbd_scope_sync")
#pragma push_macro("kbd_softmax_rescale_of_")
#pragma push_macro("kbd_mma_ring")
#pragma push_macro("kbd_mma_rs_ring")
#undef kbd_mma_release
#undef kbd_mma_wait
#undef kbd_scope_sync
#undef kbd_softmax_rescale_of_
#undef kbd_mma_ring
#undef kbd_mma_rs_ring
/* the sm_90a key loop issues S and P V by descriptor (kbd/mma.h, kbd/mma_rs.h) and releases by address */
#define kbd_mma_ring(acc, TA, TB, a0, astride, b0, bstride, s, accumulate)                                             \
  do {                                                                                                                 \
    kbd__mma_ring_(acc, KBD__STILE_OBJ(TA), KBD__STILE_OBJ(TB), a0, astride, b0, bstride, s, accumulate,               \
                   KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TA))), KBD__MMA_TYPE(KBD_DTYPE(KBD__STILE_OBJ(TB))));        \
    ov_add(OV_ISSUE_S);                                                                                                \
  } while (0)
#define kbd_mma_rs_ring(acc, a, TB, b0, bstride, s, accumulate)                                                        \
  do {                                                                                                                 \
    kbd__mma_rs_ring_(acc, a, KBD__STILE_OBJ(TB), b0, bstride, s, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));            \
    ov_add(OV_ISSUE_O);                                                                                                \
  } while (0)
#define OV_IS_S(acc) ((const void *)&(acc) == (const void *)&sacc)
#define kbd_mma_release(acc, empty)                                                                                    \
  do {                                                                                                                 \
    kbd__mma_release_(acc, empty);                                                                                     \
    ov_add(OV_IS_S(acc) ? OV_ISSUE_S : OV_ISSUE_O);                                                                    \
  } while (0)
#define kbd_mma_wait(acc)                                                                                              \
  do {                                                                                                                 \
    kbd__mma_wait_(acc);                                                                                               \
    ov_add(OV_IS_S(acc) ? OV_WAIT_S : OV_WAIT_O);                                                                      \
  } while (0)
/* only the turn barriers (turn0, turn1) are turns: the epilogue's warpgroup barriers (the staging of O) are not */
static int ov_is_turn(const char *name) { return name[0] == 't' && name[1] == 'u' && name[2] == 'r' && name[3] == 'n'; }
#define OV_IS_TURN(s) ov_is_turn((s).name)
#define kbd_scope_sync(s) (kbd_scope_sync_at((s), KBD_SITE), OV_IS_TURN(s) ? ov_add(OV_TURN) : (void)0)
#define kbd_softmax_rescale_of_(m_old, m_new, sl2) (ov_softmax(), (kbd_softmax_rescale_of_)(m_old, m_new, sl2))

#define ATTN_KERNEL at_logged
#include "attention_kernel.h"
#undef ATTN_KERNEL

/* P V waited for right after its issue: the softmax never runs under it. The kernel's own wait for it after the
 * softmax then only logs (on sm_100a a second wait on odone with no MMA between would be the parity hazard the kernel
 * avoids). */
static int ov_o_waited[64];
#undef kbd_mma_release
#undef kbd_mma_wait
#define kbd_mma_release(acc, empty)                                                                                    \
  do {                                                                                                                 \
    kbd__mma_release_(acc, empty);                                                                                     \
    ov_add(OV_IS_S(acc) ? OV_ISSUE_S : OV_ISSUE_O);                                                                    \
    if (!OV_IS_S(acc)) {                                                                                               \
      kbd__mma_wait_(acc);                                                                                             \
      ov_add(OV_WAIT_O);                                                                                               \
      ov_o_waited[kbd_warp_id()] = 1;                                                                                  \
    }                                                                                                                  \
  } while (0)
#define kbd_mma_wait(acc)                                                                                              \
  do {                                                                                                                 \
    if (OV_IS_S(acc) || !ov_o_waited[kbd_warp_id()]) kbd__mma_wait_(acc);                                              \
    if (!OV_IS_S(acc)) ov_o_waited[kbd_warp_id()] = 0;                                                                 \
  } while (0)
#undef kbd_mma_rs_ring
#define kbd_mma_rs_ring(acc, a, TB, b0, bstride, s, accumulate)                                                        \
  do {                                                                                                                 \
    kbd__mma_rs_ring_(acc, a, KBD__STILE_OBJ(TB), b0, bstride, s, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));            \
    ov_add(OV_ISSUE_O);                                                                                                \
    kbd__mma_wait_(acc);                                                                                               \
    ov_add(OV_WAIT_O);                                                                                                 \
    ov_o_waited[kbd_warp_id()] = 1;                                                                                    \
  } while (0)
#define ATTN_KERNEL at_serial
#include "attention_kernel.h"
#undef ATTN_KERNEL

/* The turns logged but not taken: no turn barrier at all. */
#undef kbd_mma_release
#undef kbd_mma_wait
#undef kbd_scope_sync
#pragma push_macro("kbd_scope_arrive")
#undef kbd_scope_arrive
#undef kbd_mma_rs_ring
#define kbd_mma_rs_ring(acc, a, TB, b0, bstride, s, accumulate)                                                        \
  do {                                                                                                                 \
    kbd__mma_rs_ring_(acc, a, KBD__STILE_OBJ(TB), b0, bstride, s, accumulate, KBD__MMA_TYPE(KBD_DTYPE(a)));            \
    ov_add(OV_ISSUE_O);                                                                                                \
  } while (0)
#define kbd_mma_release(acc, empty)                                                                                    \
  do {                                                                                                                 \
    kbd__mma_release_(acc, empty);                                                                                     \
    ov_add(OV_IS_S(acc) ? OV_ISSUE_S : OV_ISSUE_O);                                                                    \
  } while (0)
#define kbd_mma_wait(acc)                                                                                              \
  do {                                                                                                                 \
    kbd__mma_wait_(acc);                                                                                               \
    ov_add(OV_IS_S(acc) ? OV_WAIT_S : OV_WAIT_O);                                                                      \
  } while (0)
#define kbd_scope_sync(s) (OV_IS_TURN(s) ? ov_add(OV_TURN) : kbd_scope_sync_at((s), KBD_SITE))
#define kbd_scope_arrive(s) ((void)(s))
#define ATTN_KERNEL at_no_turns
#include "attention_kernel.h"
#undef ATTN_KERNEL
#pragma pop_macro("kbd_scope_arrive")

#pragma pop_macro("kbd_mma_rs_ring")
#pragma pop_macro("kbd_mma_ring")
#pragma pop_macro("kbd_softmax_rescale_of_")
#pragma pop_macro("kbd_scope_sync")
#pragma pop_macro("kbd_mma_wait")
#pragma pop_macro("kbd_mma_release")
#undef ATTN_DT
#undef ATTN_T
#undef ATTN_D

/* ---- the host side of the logged kernels (bf16, head_dim 64, one block) --------------------------------------- */

typedef kbd_status (*at_kernel)(kbd_launch_cfg, attn_params);

static kbd_status at_launch(at_kernel kernel, const at_problem *p, const at_out *r) {
  const int group = p->heads_q / p->heads_kv;
  const long long heads = (long long)p->batch * p->heads_kv, rows = (long long)group * p->seq_q;
  assert_true(heads == 1 && rows <= ATTN_BM(64)); /* one block: the log is one block's */
  attn_params a;
  memset(&a, 0, sizeof a);
  MT_ASSERT_OK(at_map(&a.q, p->dq, rows, heads, ATTN_WM));
  MT_ASSERT_OK(at_map(&a.k, p->dk, p->seq_k, heads, ATTN_BN(64)));
  MT_ASSERT_OK(at_map(&a.v, p->dv, p->seq_k, heads, ATTN_BN(64)));
  MT_ASSERT_OK(at_map(&a.om, r->o, rows, heads, ATTN_WM)); /* the epilogue's TMA store */
  a.o = r->o, a.lse = r->lse;
  a.seq_q = p->seq_q, a.seq_k = p->seq_k, a.group = group, a.causal = p->causal, a.splits = 1;
  a.scale = 0.125f;
  attn_smem l;
  const kbd_smem_plan plan = attn_layout_64(&l);
  MT_ASSERT_OK(kbd_smem_plan_status(&plan));
  ov_n = 0;
  memset(ov_o_waited, 0, sizeof ov_o_waited);
  return kernel(kbd_cfg(kbd_dim(1, 1, 1), plan.bytes, NULL), a);
}

/* GQA 2:1, 64 queries per head (128 packed rows: both consumers full), 1250 keys = 10 key blocks of 128, the last
 * ragged; no causal mask, so every block is computed by both consumers. */
#define OV_BLOCKS 10
static void ov_problem(at_problem *p) {
  at_init(p, ATTN_BF16, 1, 2, 1, 64, 1250, 64, 0, 0.125f);
  for (long long i = 0; i < p->nq; ++i) p->q[i] = at_rand((unsigned long long)i, 11);
  for (long long i = 0; i < p->nk; ++i) p->k[i] = at_rand((unsigned long long)i, 12), p->v[i] = at_rand((unsigned long long)i, 13);
  at_upload(p);
}

static void ov_dump(const char *why) {
  printf("  %s; the log (%d events):\n ", why, ov_n);
  for (int i = 0; i < ov_n && i < OV_MAX; ++i) printf(" %d:%s", ov_log[i].consumer, ov_names[ov_log[i].kind]);
  printf("\n");
}

/* Softmaxes of consumer c that ran while a P V of c was issued and not yet waited for. */
static int ov_softmax_under_o(int c) {
  int in_flight = 0, n = 0;
  for (int i = 0; i < ov_n; ++i) {
    if (ov_log[i].consumer != c) continue;
    if (ov_log[i].kind == OV_ISSUE_O) in_flight = 1;
    if (ov_log[i].kind == OV_WAIT_O) in_flight = 0;
    if (ov_log[i].kind == OV_SOFTMAX) n += in_flight;
  }
  return n;
}

/* The ping-pong: returns NULL when the turns alternate 0, 1, 0, 1, ... (OV_BLOCKS each) and every MMA issued inside
 * a turn (between a consumer's TURN and its next SOFTMAX) comes while the last turn taken is the issuer's. */
static const char *ov_turn_error(void) {
  int holder = -1, turns[2] = {0, 0}, in_turn[2] = {0, 0};
  for (int i = 0; i < ov_n; ++i) {
    const ov_event e = ov_log[i];
    if (e.kind == OV_TURN) {
      if (e.consumer == holder || (holder < 0 && e.consumer != 0)) return "the turns do not alternate 0, 1, 0, 1";
      holder = e.consumer;
      ++turns[e.consumer];
      in_turn[e.consumer] = 1;
    } else if (e.kind == OV_SOFTMAX) {
      in_turn[e.consumer] = 0;
    } else if ((e.kind == OV_ISSUE_S || e.kind == OV_ISSUE_O) && in_turn[e.consumer] && holder != e.consumer) {
      return "a consumer issued an MMA of its turn after the other consumer had taken the next turn";
    }
  }
  if (turns[0] != OV_BLOCKS || turns[1] != OV_BLOCKS) return "not one turn per key block and consumer";
  return NULL;
}

/* Runs kernel on p under (threads, seed), checks the output; the log is left in ov_log. */
static void ov_run(at_kernel kernel, const at_problem *p, long threads, long seed, const char *name) {
  mt_env(threads, seed);
  at_out r;
  at_out_alloc(&r, p);
  MT_ASSERT_OK(at_launch(kernel, p, &r));
  at_download(&r, p);
  double worst;
  const long long bad = at_check(p, &r, at_tolerance(p->dtype, 1.0), &worst, 1);
  if (bad) fail_msg("%s (sm_%d, %ld threads, seed %ld): %lld rows out of tolerance", name, KBD_CPU_ARCH, threads, seed, bad);
  if (ov_n > OV_MAX) fail_msg("%s: the log overflowed (%d events)", name, ov_n);
  at_out_free(&r);
}

#define OV_SCHEDULES 10
static const long ov_sched[OV_SCHEDULES][2] = {{1, -1}, {2, -1}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 5}, {2, 6}, {2, 7}};

static void test_schedule(void **state) {
  (void)state;
  at_problem p;
  ov_problem(&p);
  for (int k = 0; k < OV_SCHEDULES; ++k) {
    const long threads = ov_sched[k][0], seed = ov_sched[k][1];
    ov_run(at_logged, &p, threads, seed, "logged kernel");
    const char *err = ov_turn_error();
    if (err) {
      ov_dump(err);
      fail_msg("ping-pong (sm_%d, %ld threads, seed %ld): %s", KBD_CPU_ARCH, threads, seed, err);
    }
    for (int c = 0; c < 2; ++c)
      if (ov_softmax_under_o(c) != OV_BLOCKS - 1) {
        ov_dump("softmax not under P V");
        fail_msg("overlap (sm_%d, %ld threads, seed %ld): consumer %d ran %d softmaxes with P V of the block before "
                 "in flight, want %d",
                 KBD_CPU_ARCH, threads, seed, c, ov_softmax_under_o(c), OV_BLOCKS - 1);
      }
  }
  at_free(&p);
}

/* The overlap check on a kernel that waits for P V right after issuing it: none counted, under every schedule. */
static void test_serial_variant_has_no_overlap(void **state) {
  (void)state;
  at_problem p;
  ov_problem(&p);
  for (int k = 0; k < OV_SCHEDULES; ++k) {
    ov_run(at_serial, &p, ov_sched[k][0], ov_sched[k][1], "serial variant");
    for (int c = 0; c < 2; ++c)
      if (ov_softmax_under_o(c) != 0)
        fail_msg("serial variant (sm_%d): consumer %d counted %d softmaxes under a P V in flight, want 0", KBD_CPU_ARCH,
                 c, ov_softmax_under_o(c));
  }
  at_free(&p);
}

/* The ping-pong check on a kernel without turn barriers: it still computes the right result, and the check
 * finds a broken alternation under at least one of the schedules. */
static void test_no_turns_variant_breaks_ping_pong(void **state) {
  (void)state;
  at_problem p;
  ov_problem(&p);
  int broken = 0;
  for (int k = 0; k < OV_SCHEDULES; ++k) {
    ov_run(at_no_turns, &p, ov_sched[k][0], ov_sched[k][1], "variant without turns");
    broken += ov_turn_error() != NULL;
  }
  printf("  variant without turns (sm_%d): alternation broken under %d of %d schedules\n", KBD_CPU_ARCH, broken,
         OV_SCHEDULES);
  if (!broken)
    fail_msg("variant without turns (sm_%d): the ping-pong check passed under all %d schedules", KBD_CPU_ARCH,
             OV_SCHEDULES);
  at_free(&p);
}

/* ---- attn_run over many key blocks ------------------------------------------------------------------------------ */

/* batch 1, heads 4/2 (GQA: 2 q heads per kv head, packed rows wrap between heads), seq_q 200 (400 packed rows: 4
 * blocks of 128 or 7 of 64, the last ragged), seq_k 1100 (9 key blocks of 128 or 18 of 64, the last ragged). */
static void ov_attn_run(int d, int causal, long threads, long seed) {
  at_problem p;
  at_init(&p, ATTN_BF16, 1, 4, 2, 200, 1100, d, causal, 0.0f);
  for (long long i = 0; i < p.nq; ++i) p.q[i] = at_rand((unsigned long long)i, 21);
  for (long long i = 0; i < p.nk; ++i) p.k[i] = at_rand((unsigned long long)i, 22), p.v[i] = at_rand((unsigned long long)i, 23);
  at_upload(&p);
  mt_env(threads, seed);
  at_out r;
  at_out_alloc(&r, &p);
  attn_args a;
  memset(&a, 0, sizeof a);
  a.dtype = ATTN_BF16, a.batch = 1, a.heads_q = 4, a.heads_kv = 2, a.seq_q = 200, a.seq_k = 1100, a.head_dim = d;
  a.causal = causal, a.q = p.dq, a.k = p.dk, a.v = p.dv, a.o = r.o, a.lse = r.lse, a.splits = 1;
  MT_ASSERT_OK(attn_run(&a));
  at_download(&r, &p);
  double worst;
  const long long bad = at_check(&p, &r, at_tolerance(p.dtype, 1.0), &worst, 1);
  if (bad)
    fail_msg("attn_run head_dim %d%s (sm_%d, %ld threads, seed %ld): %lld rows out of tolerance (worst %.3g)", d,
             causal ? " causal" : "", KBD_CPU_ARCH, threads, seed, bad, worst);
  at_out_free(&r);
  at_free(&p);
}

static void test_many_key_blocks(void **state) {
  (void)state;
  static const long sched[3][2] = {{1, -1}, {2, 1}, {1, 5}};
  for (int d = 64; d <= 256; d *= 2)
    for (int causal = 0; causal <= 1; ++causal)
      for (int k = 0; k < 3; ++k) ov_attn_run(d, causal, sched[k][0], sched[k][1]);
}

int main(void) {
  mt_quiet(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schedule),
      cmocka_unit_test(test_serial_variant_has_no_overlap),
      cmocka_unit_test(test_no_turns_variant_breaks_ping_pong),
      cmocka_unit_test(test_many_key_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
