/* test_mma_elected.c - the elected-lane forms of the MMA warp's calls (kbd/mma.h: kbd_mma_issue_elected,
 * kbd_mma_commit_elected; kbd/mma_ts.h: kbd_mma_ts_issue_elected) on the CPU machine emulating sm_100a: the key loop
 * of examples/attention's sm_100a MMA warp in small. One CTA of 256 threads; warp 1 is the MMA warp, warpgroup 1
 * reads S, writes P into Tensor Memory and reads O. In ONE KBD_ELECT_ONE section the MMA warp issues S = A B^T (A, B
 * shared tiles), commits it, then for each of ME_NB blocks waits for P_j ("P ready", kbd_acc_wait from the elected
 * thread), issues O += P_j V^T with P from Tensor Memory and commits O. Values are small multiples of 1/4: S and O
 * are exact against the host products.
 *   ME_OK          clean and exact, seeds -1..1, 1 or 2 host threads
 *   ME_ISSUE_UNI   kbd_mma_issue_elected from warp-uniform code: KBD_ERR_ISSUE at that line, naming the form
 *   ME_TS_LANES    kbd_mma_ts_issue_elected from per-lane code (KBD_FOR_LANES): KBD_ERR_ISSUE at that line
 *   ME_COMMIT_UNI  kbd_mma_commit_elected from warp-uniform code: KBD_ERR_ISSUE at that line
 *   ME_NO_READY    the elected thread does not wait for P_j: the TS MMA reads Tensor Memory the warpgroup is still
 *                  writing - reported at the TS issue, as kbd_mma_ts_issue's own check (test_mma_ts.c)
 *   ME_FIRST_ACC   the first P V accumulates (accumulate 1 for block 0): O's columns were never written - reported at
 *                  the TS issue
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

/* MT_MARK and the call it marks share a line (the reports name that line): clang-format is off around them */

enum { ME_OK, ME_ISSUE_UNI, ME_TS_LANES, ME_COMMIT_UNI, ME_NO_READY, ME_FIRST_ACC };
#define ME_M 128 /* rows of S, P and O */
#define ME_N 64  /* columns of S (keys); K of P V */
#define ME_K 64  /* K of A B^T */
#define ME_D 64  /* columns of O */
#define ME_NB 3  /* P blocks accumulated into O */
typedef KBD_STILE(bf16, ME_M, ME_K, KBD_SWIZZLE_128B) me_a;
typedef KBD_STILE(bf16, ME_N, ME_K, KBD_SWIZZLE_128B) me_b;
typedef KBD_STILE(bf16, ME_D, ME_N, KBD_SWIZZLE_128B) me_v; /* V^T: D x N, K-major */

typedef struct me_params {
  const kbd_bf16 *a, *b, *p, *v; /* a: M x K, b: N x K, p: NB x M x N, v: D x N; all row-major */
  float *s, *o;                  /* M x N, M x D */
  int brk;
} me_params;

static int me_line_issue, me_line_ts, me_line_lanes, me_line_commit;

static float me_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

KBD_KERNEL(me_kernel, 256, me_params) {
  KBD_SHARED_STILE(me_a, a);
  KBD_SHARED_STILE(me_b, b);
  KBD_SHARED_STILE(me_v, v);
  KBD_SHARED(kbd_mbarrier, sfull, 1);
  KBD_SHARED(kbd_mbarrier, pready, 1);
  KBD_SHARED(kbd_mbarrier, ofull, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  {
    KBD_TILE(bf16, ME_M, ME_K, KBD_CTA) ra;
    KBD_TILE(bf16, ME_N, ME_K, KBD_CTA) rb;
    KBD_TILE(bf16, ME_D, ME_N, KBD_CTA) rv;
    kbd_load2d(ra, p.a, ME_M, ME_K, ME_K, 0, 0);
    kbd_load2d(rb, p.b, ME_N, ME_K, ME_K, 0, 0);
    kbd_load2d(rv, p.v, ME_D, ME_N, ME_N, 0, 0);
    kbd_stile_store(a, ra);
    kbd_stile_store(b, rb);
    kbd_stile_store(v, rv);
    kbd_fence_proxy_async(); /* generic stores -> the MMAs' async-proxy reads */
  }
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(sfull, 1);
      kbd_mbarrier_init(pready, KBD_ACC_RELEASES(128));
      kbd_mbarrier_init(ofull, 1);
    }
    kbd_tmem_alloc(tm, 256);
  }
  kbd_sync();
  KBD_ACC(f32, ME_M, ME_N) s;
  KBD_ACC(f32, ME_M, ME_D) o;
  KBD_TMEM_A(bf16, ME_M, ME_N) pt;
  kbd_acc_bind(s, tm, 0, sfull);
  kbd_acc_bind(o, tm, ME_N, ofull);
  kbd_tmem_a_bind(pt, tm, ME_N + ME_D);
  if (kbd_warp_id() == 1) {
    if (p.brk == ME_ISSUE_UNI) {
      /* clang-format off */
      MT_MARK(me_line_issue); kbd_mma_issue_elected(s, a, b, 0);
      /* clang-format on */
    } else if (p.brk == ME_COMMIT_UNI) {
      KBD_ELECT_ONE { kbd_mma_issue_elected(s, a, b, 0); }
      /* clang-format off */
      MT_MARK(me_line_commit); kbd_mma_commit_elected(s, sfull);
      /* clang-format on */
    } else if (p.brk == ME_TS_LANES) {
      KBD_FOR_LANES(l) {
        (void)l;
        /* clang-format off */
        MT_MARK(me_line_lanes); kbd_mma_ts_issue_elected(o, pt, v, 0);
        /* clang-format on */
      }
    } else {
      KBD_ELECT_ONE {
        kbd_mma_issue_elected(s, a, b, 0);
        kbd_mma_commit_elected(s, sfull);
        for (int j = 0; j < ME_NB; ++j) {
          if (p.brk != ME_NO_READY) kbd_acc_wait(o, pready, (unsigned)j & 1u);
          /* clang-format off */
          MT_MARK(me_line_ts); kbd_mma_ts_issue_elected(o, pt, v, p.brk == ME_FIRST_ACC || j > 0);
          /* clang-format on */
          kbd_mma_commit_elected(o, ofull);
        }
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    kbd_acc_wait(s, sfull, 0u);
    KBD_ACC_TILE(f32, ME_M, ME_N) rs;
    kbd_acc_load(rs, s, 0);
    kbd_store2d(p.s, rs, ME_M, ME_N, ME_N, 0, 0);
    for (int j = 0; j < ME_NB; ++j) {
      if (j > 0) kbd_acc_wait(o, ofull, (unsigned)(j - 1) & 1u); /* P_j-1 V read: its cells may be rewritten */
      KBD_ACC_TILE(bf16, ME_M, ME_N) rp;
      kbd_load2d(rp, p.p + (size_t)j * ME_M * ME_N, ME_M, ME_N, ME_N, 0, 0);
      kbd_tmem_a_store(pt, rp, 0);
      kbd_tmem_a_ready(pt, pready);
    }
    kbd_acc_wait(o, ofull, (unsigned)(ME_NB - 1) & 1u);
    KBD_ACC_TILE(f32, ME_M, ME_D) ro;
    kbd_acc_load(ro, o, 0);
    kbd_store2d(p.o, ro, ME_M, ME_D, ME_D, 0, 0);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 256);
}

static kbd_bf16 *me_host(size_t n, int cols, int salt) {
  kbd_bf16 *h = malloc(sizeof(kbd_bf16) * n);
  assert_non_null(h);
  for (size_t i = 0; i < n; ++i)
    h[i] = kbd_f32_to_bf16(me_value((int)(i / (size_t)cols), (int)(i % (size_t)cols), salt));
  return h;
}
static kbd_bf16 *me_dev(const kbd_bf16 *h, size_t n) {
  kbd_bf16 *d;
  assert_int_equal(kbd_malloc((void **)&d, sizeof(kbd_bf16) * n).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(d, h, sizeof(kbd_bf16) * n).code, KBD_OK);
  return d;
}
static double me_f(const kbd_bf16 *h, size_t i) { return (double)kbd_bf16_to_f32(h[i]); }

static kbd_status me_run(int brk) {
  const size_t na = (size_t)ME_M * ME_K, nb = (size_t)ME_N * ME_K, np = (size_t)ME_NB * ME_M * ME_N;
  const size_t nv = (size_t)ME_D * ME_N;
  kbd_bf16 *ha = me_host(na, ME_K, 1), *hb = me_host(nb, ME_K, 2), *hp = me_host(np, ME_N, 3),
           *hv = me_host(nv, ME_N, 4);
  kbd_bf16 *da = me_dev(ha, na), *db = me_dev(hb, nb), *dp = me_dev(hp, np), *dv = me_dev(hv, nv);
  float *ds, *dout, *hs = malloc(sizeof(float) * ME_M * ME_N), *ho = malloc(sizeof(float) * ME_M * ME_D);
  assert_non_null(hs), assert_non_null(ho);
  assert_int_equal(kbd_malloc((void **)&ds, sizeof(float) * ME_M * ME_N).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dout, sizeof(float) * ME_M * ME_D).code, KBD_OK);
  me_params prm = {da, db, dp, dv, ds, dout, brk};
  const kbd_status st = me_kernel(kbd_cfg_1d(1), prm);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hs, ds, sizeof(float) * ME_M * ME_N).code, KBD_OK);
    assert_int_equal(kbd_copy_to_host(ho, dout, sizeof(float) * ME_M * ME_D).code, KBD_OK);
    for (int i = 0; i < ME_M; ++i) {
      for (int j = 0; j < ME_N; ++j) { /* S = A B^T */
        double ref = 0;
        for (int k = 0; k < ME_K; ++k)
          ref += me_f(ha, (size_t)i * ME_K + k) * me_f(hb, (size_t)j * ME_K + k);
        if ((double)hs[i * ME_N + j] != ref) fail_msg("S[%d][%d] = %.9g, want %.9g", i, j, hs[i * ME_N + j], ref);
      }
      for (int c = 0; c < ME_D; ++c) { /* O = sum_j P_j V */
        double ref = 0;
        for (int j = 0; j < ME_NB; ++j)
          for (int k = 0; k < ME_N; ++k)
            ref += me_f(hp, ((size_t)j * ME_M + (size_t)i) * ME_N + k) * me_f(hv, (size_t)c * ME_N + k);
        if ((double)ho[i * ME_D + c] != ref) fail_msg("O[%d][%d] = %.9g, want %.9g", i, c, ho[i * ME_D + c], ref);
      }
    }
  }
  kbd_free(da), kbd_free(db), kbd_free(dp), kbd_free(dv), kbd_free(ds), kbd_free(dout);
  free(ha), free(hb), free(hp), free(hv), free(hs), free(ho);
  return st;
}

static void test_elected_loop(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 1; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = me_run(ME_OK);
      if (st.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}
static void me_expect_issue(int brk, const int *line, const char *what) {
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = me_run(brk);
  MT_ASSERT_CODE(st, KBD_ERR_ISSUE);
  MT_ASSERT_AT(st, MT_LINE(*line)); /* marked by the run */
  MT_ASSERT_HAS(st, what);
}
/* from warp-uniform code all 32 threads would issue the MMAs: named at the call, with the form's name */
static void test_issue_uniform(void **state) {
  (void)state;
  me_expect_issue(ME_ISSUE_UNI, &me_line_issue, "kbd_mma_issue_elected in warp-uniform code");
}
static void test_ts_lanes(void **state) {
  (void)state;
  me_expect_issue(ME_TS_LANES, &me_line_lanes, "kbd_mma_ts_issue_elected in per-lane (KBD_FOR_LANES) code");
}
static void test_commit_uniform(void **state) {
  (void)state;
  me_expect_issue(ME_COMMIT_UNI, &me_line_commit, "kbd_mma_commit_elected in warp-uniform code");
}
/* the elected TS issue keeps kbd_mma_ts_issue's checks: P read before the warpgroup's store completed */
static void test_no_ready_wait(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = me_run(ME_NO_READY);
  if (st.code != KBD_ERR_POISON && st.code != KBD_ERR_RACE) fail_msg("not reported: %s", st.msg);
  MT_ASSERT_AT(st, MT_LINE(me_line_ts));
  MT_ASSERT_HAS(st, "A operand from Tensor Memory");
}
/* ... and onto never-written accumulator columns */
static void test_first_accumulates(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = me_run(ME_FIRST_ACC);
  if (st.code == KBD_OK) fail_msg("not reported");
  MT_ASSERT_AT(st, MT_LINE(me_line_ts));
  MT_ASSERT_HAS(st, "accumulate = 1");
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_elected_loop),  MT_TEST(test_issue_uniform),
                                     MT_TEST(test_ts_lanes),      MT_TEST(test_commit_uniform),
                                     MT_TEST(test_no_ready_wait), MT_TEST(test_first_accumulates)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
