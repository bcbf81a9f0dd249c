/* test_attn_decode.c - flash-decoding (attn_run with splits N > 1) against the forward pass (splits 1) on the
 * same inputs: O and lse must agree to f32 accuracy up to the rounding of O to the element type.
 *
 * Why they can agree that closely: each pass rounds P = exp(scale (s - m)) to bf16/f16 for the P V MMA, with m
 * the running row max of the blocks read so far - the whole key range in the forward pass, the split's own
 * range in a split. In general those maxima differ, so the rounded P differ (by up to u = 2^-8 bf16, 2^-11 f16,
 * relative) and the two outputs could only be compared to ~4u. The inputs here make the maxima equal: every key
 * block starts with a "dominant" key k = (8, 0, ..., 0) and every query has q[0] = 1, so its score is exactly 8,
 * while every other key scores < 8 (k[0] = 0, |q[c] k[c]| <= 1 on dims 1..7 and <= 2^-8 on the <= 248 others:
 * < 7 + 1). A split's first block holds the dominant key, and any key block a row sees at all has its first
 * key visible (the causal mask is a prefix of the keys), so each split's running max and the forward pass's are
 * 8 from their first block on: P is bit for bit the same, every rescale factor is exp2(0) = 1, and what remains
 * is f32 arithmetic in a different order (per-block row sums, the split's 1/sum, the combine's lse weights).
 *
 * Tolerance (per element): O_fwd and O_dec are weighted means of |v| <= 1 whose f32 errors come from <= 64
 * block sums, one division and the combine's expf/logf of the lse: each a relative 2^-24, together < 2^-16
 * absolute. Rounded to the element type, two f32 values that close are equal or one ulp apart, so
 * |O_1 - O_N| <= 2^-16 + ulp(max(|O_1|, |O_N|)); and at least 99% of the elements must be bit for bit equal
 * (a 2^-16 difference crosses a rounding boundary of a ulp >= 2^-14 rarely). lse: the same f32 errors on
 * ln(sum) plus the ulp of |lse| <= 16: |lse_1 - lse_N| <= 2^-16 + 2^-20 |lse|. Rows that see no key (causal,
 * seq_q > seq_k) must be O = 0 and lse = -inf in both, exactly.
 * Both outputs are also checked against the double reference (attn_test.h), so they cannot agree by being
 * equally wrong. Built twice: KBD_CPU_ARCH=90 and 100.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "attention.h"
#include "attn_test.h"
#include "machine_test.h"

typedef struct at_dcase {
  attn_dtype dt;
  int batch, hq, hkv, sq, sk, d, causal, splits; /* splits 0: attn_pick_splits(a, 132), as --decode */
  float scale;
  int want_empty, want_masked; /* the case must have (query block, split) pairs with no key block / masked rows */
  const char *what;
} at_dcase;

static const at_dcase at_dcases[] = {
    {ATTN_BF16, 1, 8, 1, 1, 3000, 128, 0, 8, 0.0f, 0, 0, "decode, one query, 8 q heads per kv head"},
    {ATTN_F16, 2, 4, 2, 16, 2000, 64, 1, 5, 0.5f, 0, 0, "16 queries, causal, batch 2"},
    {ATTN_BF16, 1, 2, 2, 7, 1500, 256, 1, 3, 0.0f, 0, 0, "head_dim 256, 7 queries, causal"},
    {ATTN_F16, 3, 6, 3, 16, 777, 256, 0, 4, 0.0f, 0, 0, "head_dim 256, batch 3, GQA"},
    {ATTN_BF16, 1, 4, 2, 9, 4000, 128, 0, 0, 0.5f, 0, 0, "splits picked for 132 SMs (--decode)"},
    {ATTN_F16, 1, 1, 1, 5, 1000, 64, 0, ATTN_SPLITS_MAX, 0.0f, 1, 0, "64 splits of 8 key blocks: 56 empty"},
    {ATTN_F16, 2, 2, 1, 300, 400, 128, 1, 4, 0.0f, 1, 0, "causal 300 x 400: late splits see no key"},
    {ATTN_BF16, 1, 4, 2, 300, 200, 64, 1, 4, 0.5f, 1, 1, "causal 300 x 200: 100 masked rows per head"},
    {ATTN_BF16, 1, 3, 1, 16, 9, 256, 1, 2, 0.0f, 0, 1, "causal 16 x 9, one key block: 7 masked rows per head"},
};
#define AT_NDCASES ((int)(sizeof at_dcases / sizeof at_dcases[0]))

/* The inputs described above (values exact in bf16 and f16). */
static void at_dominant_inputs(at_problem *p) {
  const int d = p->d, bn = ATTN_BN(d);
  for (long long r = 0; r < p->nrows; ++r)
    for (int c = 0; c < d; ++c)
      AT_Q(p, r, c) = c == 0 ? 1.0f : at_rand((unsigned long long)(r * d + c), 11) / (c < 8 ? 1.0f : 16.0f);
  const long long krows = (long long)p->batch * p->heads_kv * p->seq_k;
  for (long long r = 0; r < krows; ++r)
    for (int c = 0; c < d; ++c) {
      const int first = (r % p->seq_k) % bn == 0;
      AT_K(p, r, c) = first ? (c == 0 ? 8.0f : 0.0f)
                            : c == 0 ? 0.0f
                                     : at_rand((unsigned long long)(r * d + c), 12) / (c < 8 ? 1.0f : 16.0f);
      AT_V(p, r, c) = at_rand((unsigned long long)(r * d + c), 13);
    }
}

/* (query block, split) pairs of the decode launch whose key range is empty (attention.h's attn_key_blocks). */
static long long at_empty_splits(const at_problem *p, int splits) {
  const int rows = p->heads_q / p->heads_kv * p->seq_q, bm = attn_block_rows(p->d);
  long long n = 0;
  for (int r0 = 0; r0 < rows; r0 += bm)
    for (int s = 0; s < splits; ++s) {
      int kb0, kb1;
      attn_key_blocks(r0, rows - r0 < bm ? rows - r0 : bm, p->seq_q, p->seq_k, p->causal, ATTN_BN(p->d), s, splits,
                      &kb0, &kb1);
      n += kb0 == kb1;
    }
  return n;
}

static void at_run_case(const at_dcase *c, long threads, long seed) {
  const clock_t t0 = clock();
  at_problem p;
  at_init(&p, c->dt, c->batch, c->hq, c->hkv, c->sq, c->sk, c->d, c->causal, c->scale);
  at_dominant_inputs(&p);
  at_upload(&p);
  attn_args a;
  memset(&a, 0, sizeof a);
  a.dtype = c->dt, a.batch = c->batch, a.heads_q = c->hq, a.heads_kv = c->hkv, a.seq_q = c->sq, a.seq_k = c->sk;
  a.head_dim = c->d, a.causal = c->causal, a.scale = c->scale, a.q = p.dq, a.k = p.dk, a.v = p.dv;
  const int splits = c->splits ? c->splits : attn_pick_splits(&a, 132);
  if (splits < 2) fail_msg("%s: %d splits: not a decode case", c->what, splits);
  const long long empty = at_empty_splits(&p, splits);
  if (c->want_empty && empty == 0) fail_msg("%s: no split without keys", c->what);

  mt_env(threads, seed);
  at_out r1, rn;
  at_out_alloc(&r1, &p);
  at_out_alloc(&rn, &p);
  a.o = r1.o, a.lse = r1.lse, a.splits = 1;
  MT_ASSERT_OK(attn_run(&a));
  void *work = NULL;
  a.o = rn.o, a.lse = rn.lse, a.splits = splits;
  const size_t wbytes = attn_workspace_bytes(&a);
  assert_int_equal(kbd_malloc(&work, wbytes).code, KBD_OK);
  assert_int_equal(kbd_memset_device(work, AT_SENTINEL, wbytes).code, KBD_OK);
  a.workspace = work;
  MT_ASSERT_OK(attn_run(&a));
  at_download(&r1, &p);
  at_download(&rn, &p);

  long long masked = 0, differ = 0;
  double worst_o = 0.0, worst_lse = 0.0;
  double *ref = (double *)malloc(sizeof(double) * (size_t)c->d);
  assert_non_null(ref);
  for (long long row = 0; row < p.nrows; ++row) {
    double ref_lse;
    const int sees = at_reference(&p, row, ref, &ref_lse);
    masked += !sees;
    const double l1 = (double)r1.hlse[row], ln = (double)rn.hlse[row];
    if (!sees) {
      if (l1 != -INFINITY || ln != -INFINITY)
        fail_msg("%s (sm_%d): row %lld sees no key: lse %g (splits 1), %g (splits %d), want -inf", c->what,
                 KBD_CPU_ARCH, row, l1, ln, splits);
    } else {
      const double dl = fabs(l1 - ln);
      if (!(dl <= 0x1p-16 + 0x1p-20 * fabs(l1)))
        fail_msg("%s (sm_%d, %ld threads, seed %ld): lse[%lld] = %.9g (splits 1), %.9g (splits %d)", c->what,
                 KBD_CPU_ARCH, threads, seed, row, l1, ln, splits);
      if (dl > worst_lse) worst_lse = dl;
      if (!(fabs(l1 - ref_lse) <= 1e-4 + 1e-5 * fabs(ref_lse)))
        fail_msg("%s (sm_%d): lse[%lld] = %.9g, reference %.9g", c->what, KBD_CPU_ARCH, row, l1, ref_lse);
    }
    for (int col = 0; col < c->d; ++col) {
      const uint16_t b1 = r1.ho[row * c->d + col], bn = rn.ho[row * c->d + col];
      const double o1 = at_value(b1, c->dt), on = at_value(bn, c->dt), dd = fabs(o1 - on);
      const double big = fabs(o1) > fabs(on) ? fabs(o1) : fabs(on);
      if (!sees && (o1 != 0.0 || on != 0.0))
        fail_msg("%s (sm_%d): row %lld sees no key: O[%d] = %g (splits 1), %g (splits %d), want 0", c->what,
                 KBD_CPU_ARCH, row, col, o1, on, splits);
      if (!(dd <= 0x1p-16 + at_ulp(big, c->dt)))
        fail_msg("%s (sm_%d, %ld threads, seed %ld): O[row %lld][%d] = %.9g (splits 1), %.9g (splits %d)", c->what,
                 KBD_CPU_ARCH, threads, seed, row, col, o1, on, splits);
      differ += b1 != bn;
      if (dd > worst_o) worst_o = dd;
      if (!(fabs(o1 - ref[col]) <= at_tolerance(c->dt, 1.0)))
        fail_msg("%s (sm_%d): O[row %lld][%d] = %.9g, reference %.9g", c->what, KBD_CPU_ARCH, row, col, o1, ref[col]);
    }
  }
  if (differ * 100 > p.nq)
    fail_msg("%s (sm_%d): %lld of %lld elements differ between splits 1 and %d (at most 1%% may)", c->what,
             KBD_CPU_ARCH, differ, p.nq, splits);
  if (c->want_masked && masked == 0) fail_msg("%s: no fully masked row", c->what);
  printf("  sm_%d %-52s splits %2d: %lld empty (block, split), %lld masked rows, %lld/%lld elements differ, "
         "max |dO| %.3g, max |dlse| %.3g (%.2f s)\n",
         KBD_CPU_ARCH, c->what, splits, empty, masked, differ, p.nq, worst_o, worst_lse,
         (double)(clock() - t0) / CLOCKS_PER_SEC);
  free(ref);
  kbd_free(work);
  at_out_free(&r1);
  at_out_free(&rn);
  at_free(&p);
}

static void test_decode_matches_forward(void **state) {
  (void)state;
  for (int i = 0; i < AT_NDCASES; ++i) at_run_case(&at_dcases[i], -1, -1);
}

/* The cheaper cases again under other schedules and host-thread counts (the order in which warps and blocks run
 * changes; the results must not). */
static void test_decode_schedules(void **state) {
  (void)state;
  const long sched[3][2] = {{1, 0}, {2, 1}, {1, 5}};
  const int cases[] = {0, 1, 4, 5, 7, 8};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); ++i)
      at_run_case(&at_dcases[cases[i]], sched[k][0], sched[k][1]);
}

int main(void) {
  mt_quiet(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decode_matches_forward),
      cmocka_unit_test(test_decode_schedules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
