/* test_mma_warp.c - the MMA-warp calls of kbd/mma.h (kbd_mma_issue, kbd_mma_commit, kbd_acc_wait,
 * kbd_acc_release; docs/design/mma-warp.md) on the CPU machine emulating sm_100a.
 *
 * One CTA of 256 threads: warp 1 is the MMA warp, warpgroup 1 the epilogue. They pass T tiles through two
 * Tensor Memory buffers (tile t in buffer t % 2), the handshake the sm_100a GEMM uses: accfull (the MMA warp's
 * commit) and accempty (one release per epilogue warp). Tile t is (1 + (t % 3 == 1)) * A B^T: the second MMA of
 * those tiles accumulates. The inputs are small multiples of 1/4, so every result is exact and compared bit
 * for bit, under the default schedule, seeds 0-7 and 1 or 2 host threads.
 * Broken variants, each caught in the first run under the default schedule: the MMA warp that waits for the
 * wrong event (an arrival the epilogue makes before its reads: the next MMA may overwrite what it still reads),
 * an epilogue that releases the buffer before reading it (both: a data race, at the MMA's issue or at the read,
 * whichever comes second), an MMA warp that does not wait at all (it laps the epilogue: a data race or a
 * deadlock), an epilogue that reads without waiting for the commit, and a commit made by another warp than the
 * one that issued the MMAs.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exact_host.h"
#include "machine_test.h"

enum { MW_OK, MW_WAIT_WRONG, MW_RELEASE_EARLY, MW_NO_EMPTY_WAIT, MW_NO_FULL_WAIT, MW_COMMIT_OTHER_WARP };

typedef struct mw_params {
  const kbd_bf16 *a, *b;
  float *d;
  int tiles, brk;
} mw_params;

#define MW_M 128
#define MW_N 64
#define MW_K 64
typedef KBD_STILE(bf16, MW_M, MW_K, KBD_SWIZZLE_128B) mw_a;
typedef KBD_STILE(bf16, MW_N, MW_K, KBD_SWIZZLE_128B) mw_b;

static int mw_line_issue, mw_line_load, mw_line_commit, mw_line_bars, mw_line_init, mw_line_wait_full;

KBD_KERNEL(mw_kernel, 256, mw_params) {
  KBD_SHARED_STILE(mw_a, a);
  KBD_SHARED_STILE(mw_b, b);
  MT_MARK(mw_line_bars); KBD_SHARED(kbd_mbarrier, accfull, 2);
  KBD_SHARED(kbd_mbarrier, accempty, 2);
  KBD_SHARED(kbd_mbarrier, got, 2); /* MW_WAIT_WRONG: the epilogue has the commit, before its reads */
  KBD_SHARED(kbd_mbarrier, done, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_TILE(bf16, MW_M, MW_K, KBD_CTA) ra;
  KBD_TILE(bf16, MW_N, MW_K, KBD_CTA) rb;
  kbd_load2d(ra, p.a, MW_M, MW_K, MW_K, 0, 0);
  kbd_load2d(rb, p.b, MW_N, MW_K, MW_K, 0, 0);
  kbd_stile_store(a, ra);
  kbd_stile_store(b, rb);
  kbd_fence_proxy_async(); /* generic stores -> the MMA's async-proxy reads */
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int i = 0; i < 2; ++i) {
        MT_MARK(mw_line_init); kbd_mbarrier_init(&accfull[i], 1);
        kbd_mbarrier_init(&accempty[i], KBD_ACC_RELEASES(128));
        kbd_mbarrier_init(&got[i], KBD_ACC_RELEASES(128));
      }
      kbd_mbarrier_init(done, 1);
    }
    kbd_tmem_alloc(tm, 128);
  }
  kbd_sync();

  KBD_ACC(f32, MW_M, MW_N) acc;
  if (kbd_warp_id() == 1) {
    for (int t = 0; t < p.tiles; ++t) {
      const int buf = t % 2;
      kbd_acc_bind(acc, tm, buf * MW_N, &accfull[buf]);
      const unsigned free_parity = ((unsigned)(t / 2) & 1u) ^ 1u; /* a fresh barrier counts as released */
      if (p.brk == MW_WAIT_WRONG)
        kbd_mbarrier_wait(&got[buf], free_parity);
      else if (p.brk != MW_NO_EMPTY_WAIT)
        kbd_mbarrier_wait(&accempty[buf], free_parity);
      MT_MARK(mw_line_issue); kbd_mma_issue(acc, a, b, 0);
      if (t % 3 == 1) kbd_mma_issue(acc, a, b, 1);
      MT_MARK(mw_line_commit); if (p.brk != MW_COMMIT_OTHER_WARP) kbd_mma_commit(acc, &accfull[buf]);
    }
    if (p.brk == MW_COMMIT_OTHER_WARP) {
      KBD_ELECT_ONE { kbd_mbarrier_arrive(done); }
    }
  } else if (kbd_warp_id() == 0 && p.brk == MW_COMMIT_OTHER_WARP) {
    /* commits of a thread that issued no MMA: they track nothing */
    kbd_mbarrier_wait(done, 0);
    for (int t = 0; t < p.tiles; ++t) {
      kbd_acc_bind(acc, tm, (t % 2) * MW_N, &accfull[t % 2]);
      kbd_mma_commit(acc, &accfull[t % 2]);
    }
  } else if (kbd_warpgroup_id() == 1) {
    for (int t = 0; t < p.tiles; ++t) {
      const int buf = t % 2;
      kbd_acc_bind(acc, tm, buf * MW_N, &accfull[buf]);
      MT_MARK(mw_line_wait_full); if (p.brk != MW_NO_FULL_WAIT) kbd_acc_wait(acc, &accfull[buf], (unsigned)(t / 2) & 1u);
      if (p.brk == MW_RELEASE_EARLY) kbd_acc_release(acc, &accempty[buf]);
      if (p.brk == MW_WAIT_WRONG) {
        KBD_ELECT_ONE { kbd_mbarrier_arrive(&got[buf]); }
      }
      KBD_ACC_TILE(f32, MW_M, MW_N) r;
      MT_MARK(mw_line_load); kbd_acc_load(r, acc, 0);
      if (p.brk != MW_RELEASE_EARLY) kbd_acc_release(acc, &accempty[buf]);
      kbd_store2d(p.d + (size_t)t * MW_M * MW_N, r, MW_M, MW_N, MW_N, 0, 0);
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
}

/* Runs T tiles; returns the status and, when it ran, checks every element of every tile (exact). */
static kbd_status mw_run(int tiles, int brk) {
  kbd_bf16 ha[MW_M * MW_K], hb[MW_N * MW_K];
  xh_fill_bf16(ha, MW_M, MW_K, 1);
  xh_fill_bf16(hb, MW_N, MW_K, 2);
  const size_t dn = (size_t)tiles * MW_M * MW_N;
  float *hd = malloc(sizeof(float) * dn);
  assert_non_null(hd);
  kbd_bf16 *da = (kbd_bf16 *)xh_upload(ha, sizeof ha), *db = (kbd_bf16 *)xh_upload(hb, sizeof hb);
  float *dd = (float *)xh_upload(NULL, sizeof(float) * dn);
  const mw_params p = {da, db, dd, tiles, brk};
  const kbd_status st = mw_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * dn).code, KBD_OK);
    for (int t = 0; t < tiles; ++t)
      for (int i = 0; i < MW_M; ++i)
        for (int j = 0; j < MW_N; ++j) {
          double ref = xh_dot_bf16(ha + i * MW_K, hb + j * MW_K, MW_K);
          if (t % 3 == 1) ref *= 2;
          const float got = hd[((size_t)t * MW_M + (size_t)i) * MW_N + (size_t)j];
          if ((double)got != ref) fail_msg("tile %d: D[%d][%d] = %.9g, want %.9g", t, i, j, got, ref);
        }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(hd);
  return st;
}

static void test_pipeline(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 8; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = mw_run(7, MW_OK);
      if (st.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}

/* A broken handshake must be a data race reported at the MMA's issue (the epilogue read first) or at the read
 * (the MMA landed first), naming this file's line. */
static void mw_expect_race(int brk) {
  mt_env(1, -1);
  const kbd_status st = mw_run(4, brk);
  assert_int_equal(st.code, KBD_ERR_RACE);
  char want[64], want2[64];
  snprintf(want, sizeof want, "test_mma_warp.c:%d", MT_LINE(mw_line_issue));
  snprintf(want2, sizeof want2, "test_mma_warp.c:%d", MT_LINE(mw_line_load));
  if (!strstr(st.msg, want) && !strstr(st.msg, want2)) fail_msg("no issue/load line in: %s", st.msg);
  assert_non_null(strstr(st.msg, "Tensor Memory"));
}

/* The MMA warp waits for an arrival the epilogue makes before reading. */
static void test_wait_wrong(void **state) {
  (void)state;
  mw_expect_race(MW_WAIT_WRONG);
}

/* The epilogue releases the buffer after the commit's wait but before its reads. */
static void test_release_early(void **state) {
  (void)state;
  mw_expect_race(MW_RELEASE_EARLY);
}

/* No wait at all: the MMA warp runs ahead and may lap the epilogue's accfull phase (then the epilogue waits for a
 * parity that came and went: a deadlock report naming its wait, the lap and the commit that completed the phase it
 * missed) or overwrite a read buffer (a data race). */
static void test_no_empty_wait(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mw_run(4, MW_NO_EMPTY_WAIT);
  /* Under this schedule (one host thread, seed -1) the MMA warp laps the epilogue; another schedule may meet the
   * overwritten buffer first and report the race, which is why the check of the hint is not conditional here. */
  if (st.code != KBD_ERR_DEADLOCK) fail_msg("expected the lapped deadlock, got: %s", st.msg);
  /* The whole hint, every word of it, for each epilogue warp: the report holds paths as long as the checkout's
   * (tests/deep_path runs this test from a 200+ character path) and must never be cut. */
  char want[4096];
  for (int w = 4; w < 8; ++w)
    MT_ASSERT_HAS(st, mt_fmt(want, sizeof want,
                             "\n  warp %d at %s:%d waits for mbarrier at shared array declared at %s:%d, byte 0 "
                             "(initialised at %s:%d, count 1) to complete phase 2 (parity 0): 1 of 1 arrivals "
                             "missing; lapped: phases 0 (parity 0, completed by the arrival at %s:%d) and 1 "
                             "completed since this warp last saw the barrier complete (0 phases seen), so it now "
                             "waits for phase 2. If it meant phase 0, the arriving side ran two phases ahead of it: "
                             "a wait that holds the arrivals back until this warp has consumed the phase (e.g. on "
                             "the barrier this warp releases) is missing\n",
                             w, __FILE__, MT_LINE(mw_line_wait_full), __FILE__, MT_LINE(mw_line_bars), __FILE__,
                             MT_LINE(mw_line_init), __FILE__, MT_LINE(mw_line_commit)));
  MT_ASSERT_HAS(st, "\n  [kernel mw_kernel, block (0,0,0)]");
}

/* The epilogue reads without waiting for the MMA warp's commit. */
static void test_no_full_wait(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mw_run(2, MW_NO_FULL_WAIT);
  assert_int_not_equal(st.code, KBD_OK);
  char want[64];
  snprintf(want, sizeof want, "test_mma_warp.c:%d", MT_LINE(mw_line_load));
  if (!strstr(st.msg, want)) fail_msg("no load line %s in: %s", want, st.msg);
}

/* Another warp commits: tcgen05.commit tracks only the executing thread's MMAs, so nothing orders the MMA warp's
 * results before the epilogue's reads. */
static void test_commit_other_warp(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mw_run(2, MW_COMMIT_OTHER_WARP);
  assert_int_not_equal(st.code, KBD_OK);
  assert_non_null(strstr(st.msg, "test_mma_warp.c:"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipeline),
      cmocka_unit_test(test_wait_wrong),
      cmocka_unit_test(test_release_early),
      cmocka_unit_test(test_no_empty_wait),
      cmocka_unit_test(test_no_full_wait),
      cmocka_unit_test(test_commit_other_warp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
