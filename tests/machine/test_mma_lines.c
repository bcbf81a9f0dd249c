/* test_mma_lines.c - MMA-warp handshakes that go wrong must be reported at the line of the mistake (issue 31 item 4;
 * the CPU machine emulating sm_100a; kbd/cpu/mbar.h, kbd/cpu/mma.h).
 *
 * One CTA of 256 threads: warp 0 produces A and B into a 2-stage ring with generic stores (full / empty barriers),
 * warp 1 is the MMA warp (it waits `full`, issues, and releases the stage with a commit on `empty`), warpgroup 1 the
 * epilogue, which reads T tiles through two Tensor Memory buffers (accfull: the MMA warp's commit; accempty: one
 * release per epilogue warp). Tile t is the sum over its two stages of A_s B_s^T, values exact in f32.
 *
 *   the correct pipeline: clean and exact under the default schedule, seeds 0-5 and 1 or 2 host threads;
 *   ML_PARITY_STUCK: the epilogue waits for accfull with parity 0 every time. The wait for tile 2 returns at once
 *     (phase 0 of buffer 0 completed long ago) and the epilogue reads the buffer the MMA warp is about to overwrite:
 *     reported at that wait, naming the phase it had already consumed there;
 *   ML_RELEASE_EARLY: the MMA warp releases the stage (kbd_mma_commit on `empty`) before issuing the MMA that reads
 *     it: the commit tracks only the MMAs issued before it, the producer refills the stage under the pending MMA -
 *     reported at the early release.
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

enum { ML_OK, ML_PARITY_STUCK, ML_RELEASE_EARLY };

#define ML_M 128
#define ML_N 64
#define ML_K 64
typedef KBD_STILE(bf16, ML_M, ML_K, KBD_SWIZZLE_128B) ml_a;
typedef KBD_STILE(bf16, ML_N, ML_K, KBD_SWIZZLE_128B) ml_b;

typedef struct ml_params {
  const kbd_bf16 *a, *b; /* A: 2 x ML_M x ML_K (one per stage of a tile), B: 2 x ML_N x ML_K */
  float *d;
  int tiles, brk;
} ml_params;

static int ml_line_acc_wait, ml_line_release;

KBD_KERNEL(ml_kernel, 256, ml_params) {
  KBD_SHARED_STILE(ml_a, a0);
  KBD_SHARED_STILE(ml_a, a1);
  KBD_SHARED_STILE(ml_b, b0);
  KBD_SHARED_STILE(ml_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  KBD_SHARED(kbd_mbarrier, accfull, 2);
  KBD_SHARED(kbd_mbarrier, accempty, 2);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int i = 0; i < 2; ++i) {
        kbd_mbarrier_init(&full[i], KBD_WARP_SIZE); /* the producer warp's 32 threads arrive */
        kbd_mbarrier_init(&empty[i], 1);
        kbd_mbarrier_init(&accfull[i], 1);
        kbd_mbarrier_init(&accempty[i], KBD_ACC_RELEASES(128));
      }
    }
    kbd_tmem_alloc(tm, 128);
  }
  kbd_sync();

  KBD_ACC(f32, ML_M, ML_N) acc;
  if (kbd_warp_id() == 0) { /* producer: stage s of k-block i (two per tile) */
    KBD_TILE(bf16, ML_M, ML_K, KBD_WARP) ra;
    KBD_TILE(bf16, ML_N, ML_K, KBD_WARP) rb;
    for (int i = 0; i < 2 * p.tiles; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait(&empty[s], ((unsigned)(i / 2) & 1u) ^ 1u);
      kbd_load2d(ra, p.a + (size_t)(i % 2) * ML_M * ML_K, ML_M, ML_K, ML_K, 0, 0);
      kbd_load2d(rb, p.b + (size_t)(i % 2) * ML_N * ML_K, ML_N, ML_K, ML_K, 0, 0);
      kbd_stile_store(s ? a1 : a0, ra);
      kbd_stile_store(s ? b1 : b0, rb);
      kbd_fence_proxy_async();       /* generic stores -> the MMA's async-proxy reads */
      kbd_mbarrier_arrive(&full[s]); /* warp-uniform: 32 arrivals */
    }
  } else if (kbd_warp_id() == 1) { /* the MMA warp */
    for (int t = 0; t < p.tiles; ++t) {
      const int buf = t % 2;
      kbd_acc_bind(acc, tm, buf * ML_N, &accfull[buf]);
      kbd_mbarrier_wait(&accempty[buf], ((unsigned)(t / 2) & 1u) ^ 1u);
      for (int k = 0; k < 2; ++k) {
        const int i = 2 * t + k, s = i % 2;
        kbd_mbarrier_wait(&full[s], (unsigned)(i / 2) & 1u);
        if (p.brk == ML_RELEASE_EARLY) {
          MT_MARK(ml_line_release); kbd_mma_commit(acc, &empty[s]);
        }
        kbd_mma_issue(acc, s ? a1 : a0, s ? b1 : b0, k);
        if (p.brk != ML_RELEASE_EARLY) kbd_mma_commit(acc, &empty[s]);
      }
      kbd_mma_commit(acc, &accfull[buf]);
    }
  } else if (kbd_warpgroup_id() == 1) { /* the epilogue */
    for (int t = 0; t < p.tiles; ++t) {
      const int buf = t % 2;
      const unsigned parity = p.brk == ML_PARITY_STUCK ? 0u : (unsigned)(t / 2) & 1u;
      kbd_acc_bind(acc, tm, buf * ML_N, &accfull[buf]);
      MT_MARK(ml_line_acc_wait); kbd_acc_wait(acc, &accfull[buf], parity);
      KBD_ACC_TILE(f32, ML_M, ML_N) r;
      kbd_acc_load(r, acc, 0);
      kbd_acc_release(acc, &accempty[buf]);
      kbd_store2d(p.d + (size_t)t * ML_M * ML_N, r, ML_M, ML_N, ML_N, 0, 0);
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
}

static kbd_status ml_run(int tiles, int brk) {
  enum { NA = 2 * ML_M * ML_K, NB = 2 * ML_N * ML_K };
  static kbd_bf16 ha[NA], hb[NB];
  for (int s = 0; s < 2; ++s) {
    xh_fill_bf16(ha + s * ML_M * ML_K, ML_M, ML_K, 1 + s);
    xh_fill_bf16(hb + s * ML_N * ML_K, ML_N, ML_K, 3 + s);
  }
  const size_t dn = (size_t)tiles * ML_M * ML_N;
  float *hd = malloc(sizeof(float) * dn);
  assert_non_null(hd);
  kbd_bf16 *da = (kbd_bf16 *)xh_upload(ha, sizeof ha), *db = (kbd_bf16 *)xh_upload(hb, sizeof hb);
  float *dd = (float *)xh_upload(NULL, sizeof(float) * dn);
  const ml_params p = {da, db, dd, tiles, brk};
  const kbd_status st = ml_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * dn).code, KBD_OK);
    for (int t = 0; t < tiles; ++t)
      for (int i = 0; i < ML_M; ++i)
        for (int j = 0; j < ML_N; ++j) {
          double ref = 0;
          for (int s = 0; s < 2; ++s)
            ref += xh_dot_bf16(ha + (s * ML_M + i) * ML_K, hb + (s * ML_N + j) * ML_K, ML_K);
          const float got = hd[((size_t)t * ML_M + (size_t)i) * ML_N + (size_t)j];
          if ((double)got != ref) fail_msg("tile %d: D[%d][%d] = %.9g, want %.9g", t, i, j, got, ref);
        }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(hd);
  return st;
}

static void test_pipeline_clean(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed < 6; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = ml_run(5, ML_OK);
      if (st.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}

/* The report starts at `line` of this file. */
static void ml_expect_at(kbd_status st, int line, const char *has) {
  if (st.code == KBD_OK) fail_msg("the broken kernel ran clean");
  char want[4096];
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "%s:%d: ", __FILE__, line));
  MT_ASSERT_HAS(st, has);
}

static void test_parity_stuck(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = ml_run(4, ML_PARITY_STUCK);
    ml_expect_at(st, MT_LINE(ml_line_acc_wait), "returned at once");
  }
}

static void test_release_early(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = ml_run(3, ML_RELEASE_EARLY);
    ml_expect_at(st, MT_LINE(ml_line_release), "before issuing the MMA");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipeline_clean),
      cmocka_unit_test(test_parity_stuck),
      cmocka_unit_test(test_release_early),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
