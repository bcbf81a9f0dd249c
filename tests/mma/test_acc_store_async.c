/* test_acc_store_async.c - kbd_acc_store_async (tcgen05.st left in flight) and the tcgen05.wait::st in kbd_acc_release
 * on the CPU machine emulating sm_100a.
 *
 * One CTA of 256 threads: warp 1 is the MMA warp, warpgroup 1 a correction that rescales the accumulator in place,
 * the handshake of the FlashAttention-4 correction (examples/attention/attention_kernel_sm100.h). The MMA warp writes
 * D = A B^T and commits to `full`; warpgroup 1 waits, loads D, stores 2 D back with kbd_acc_store_async and releases
 * to `fixed` (one arrive per warp); then either the MMA warp waits for `fixed` and accumulates D += A B^T (3 A B^T,
 * read back by warpgroup 1 after the second commit), or warps 2-3 wait for `fixed` and read lanes 64-127 (2 A B^T).
 * The inputs are small multiples of 1/4: every result is exact and compared bit for bit, under the default schedule
 * and seeds 0-3.
 * Broken variants: the correction arrives on `fixed` with a plain mbarrier arrive instead of kbd_acc_release (no
 * tcgen05.wait::st: its stores may not have landed): the MMA that builds on them, or the other warps' tcgen05.ld,
 * must be reported as a race naming the store's incompleteness, at the line of the MMA or of the load, in the first
 * run under the default schedule.
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

enum { SA_MMA, SA_LOAD, SA_MMA_NO_WAIT_ST, SA_LOAD_NO_WAIT_ST };

typedef struct sa_params {
  const kbd_bf16 *a, *b;
  float *d;
  int mode;
} sa_params;

#define SA_M 128
#define SA_N 64
#define SA_K 64
typedef KBD_STILE(bf16, SA_M, SA_K, KBD_SWIZZLE_128B) sa_a;
typedef KBD_STILE(bf16, SA_N, SA_K, KBD_SWIZZLE_128B) sa_b;

static int sa_line_issue, sa_line_load;

KBD_KERNEL(sa_kernel, 256, sa_params) {
  KBD_SHARED_STILE(sa_a, a);
  KBD_SHARED_STILE(sa_b, b);
  KBD_SHARED(kbd_mbarrier, full, 1);
  KBD_SHARED(kbd_mbarrier, fixed, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_TILE(bf16, SA_M, SA_K, KBD_CTA) ra;
  KBD_TILE(bf16, SA_N, SA_K, KBD_CTA) rb;
  kbd_load2d(ra, p.a, SA_M, SA_K, SA_K, 0, 0);
  kbd_load2d(rb, p.b, SA_N, SA_K, SA_K, 0, 0);
  kbd_stile_store(a, ra);
  kbd_stile_store(b, rb);
  kbd_fence_proxy_async(); /* generic stores -> the MMA's async-proxy reads */
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(full, 1);
      kbd_mbarrier_init(fixed, KBD_ACC_RELEASES(128));
    }
    kbd_tmem_alloc(tm, 64);
  }
  kbd_sync();

  const int via_mma = p.mode == SA_MMA || p.mode == SA_MMA_NO_WAIT_ST;
  const int wait_st = p.mode == SA_MMA || p.mode == SA_LOAD;
  KBD_ACC(f32, SA_M, SA_N) acc;
  kbd_acc_bind(acc, tm, 0, full);
  if (kbd_warp_id() == 1) {
    kbd_mma_issue(acc, a, b, 0);
    kbd_mma_commit(acc, full);
    if (via_mma) {
      kbd_acc_wait(acc, fixed, 0);
      MT_MARK(sa_line_issue); kbd_mma_issue(acc, a, b, 1);
      kbd_mma_commit(acc, full);
    }
  } else if ((kbd_warp_id() == 2 || kbd_warp_id() == 3) && !via_mma) {
    /* lanes 64-127 of the rescaled D, read by the warps of warpgroup 0 that reach them (tcgen05.ld: warp w reads
     * lanes 32 (w % 4) ..) */
    uint32_t cells[KBD_LANES_HELD * 32];
    kbd_acc_wait(acc, fixed, 0);
    for (int c = 0; c < SA_N; c += 32) {
      const uint32_t at = acc.taddr + ((uint32_t)(32 * kbd_warp_id()) << 16) + (uint32_t)c;
      MT_MARK(sa_line_load); kbd_hw_tmem_ld(cells, 32, at, KBD_TMEM_32X32B, 32, KBD_SITE);
      kbd_hw_tmem_wait_ld(KBD_SITE);
      KBD_FOR_LANES(lane) {
        for (int j = 0; j < 32; ++j) {
          float x;
          memcpy(&x, &cells[KBD_LANES_HELD > 1 ? lane * 32 + j : j], 4);
          kbd_st_global(&p.d[(size_t)(32 * kbd_warp_id() + lane) * SA_N + (size_t)(c + j)], x);
        }
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC_TILE(f32, SA_M, SA_N) r;
    kbd_acc_wait(acc, full, 0);
    kbd_acc_load(r, acc, 0);
    KBD_MAP(r, r, x, i, j, 2.0f * x);
    kbd_acc_store_async(acc, r, 0);
    if (wait_st) {
      kbd_acc_release(acc, fixed);
    } else {
      /* the broken release: the fence and the arrive, without tcgen05.wait::st */
      kbd_hw_tcgen05_fence_before(KBD_SITE);
      KBD_ELECT_ONE { kbd_mbarrier_arrive(fixed); }
    }
    if (via_mma) {
      kbd_acc_wait(acc, full, 1);
      kbd_acc_load(r, acc, 0);
      kbd_store2d(p.d, r, SA_M, SA_N, SA_N, 0, 0);
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 64);
}

static float sa_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* Runs one mode; when it completes, checks the rows it writes (all 128 through the MMA, 64-127 through the loads)
 * exactly against 3 A B^T / 2 A B^T. */
static kbd_status sa_run(int mode) {
  kbd_bf16 ha[SA_M * SA_K], hb[SA_N * SA_K];
  for (int i = 0; i < SA_M; ++i)
    for (int k = 0; k < SA_K; ++k) ha[i * SA_K + k] = kbd_f32_to_bf16(sa_value(i, k, 1));
  for (int i = 0; i < SA_N; ++i)
    for (int k = 0; k < SA_K; ++k) hb[i * SA_K + k] = kbd_f32_to_bf16(sa_value(i, k, 2));
  float *hd = malloc(sizeof(float) * SA_M * SA_N);
  assert_non_null(hd);
  kbd_bf16 *da, *db;
  float *dd;
  assert_int_equal(kbd_malloc((void **)&da, sizeof ha).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&db, sizeof hb).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * SA_M * SA_N).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof ha).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof hb).code, KBD_OK);
  const sa_params p = {da, db, dd, mode};
  const kbd_status st = sa_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * SA_M * SA_N).code, KBD_OK);
    const int via_mma = mode == SA_MMA;
    for (int i = via_mma ? 0 : 64; i < SA_M; ++i)
      for (int j = 0; j < SA_N; ++j) {
        double ref = 0;
        for (int k = 0; k < SA_K; ++k)
          ref += (double)kbd_bf16_to_f32(ha[i * SA_K + k]) * (double)kbd_bf16_to_f32(hb[j * SA_K + k]);
        ref *= via_mma ? 3 : 2;
        const float got = hd[(size_t)i * SA_N + (size_t)j];
        if ((double)got != ref) fail_msg("mode %d: D[%d][%d] = %.9g, want %.9g", mode, i, j, got, ref);
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(hd);
  return st;
}

static void sa_ok(int mode) {
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = sa_run(mode);
    if (st.code != KBD_OK) fail_msg("mode %d seed %ld: %s", mode, seed, st.msg);
  }
}

/* The MMA builds on the stores: kbd_acc_release's wait::st makes them complete before its arrive. */
static void test_release_then_mma(void **state) {
  (void)state;
  sa_ok(SA_MMA);
}

/* Other warps read the stored cells after the release. */
static void test_release_then_load(void **state) {
  (void)state;
  sa_ok(SA_LOAD);
}

/* The broken release, under the default schedule: a race at `line`, naming the store that has not completed. */
static void sa_expect(int mode, int line) {
  mt_env(1, -1);
  const kbd_status st = sa_run(mode);
  if (st.code != KBD_ERR_RACE) fail_msg("mode %d: want KBD_ERR_RACE, got %s: %s", mode, kbd_code_name(st.code), st.msg);
  char want[64];
  snprintf(want, sizeof want, "test_acc_store_async.c:%d", line);
  if (!strstr(st.msg, want)) fail_msg("mode %d: no \"%s\" in: %s", mode, want, st.msg);
  if (!strstr(st.msg, "has not completed") || !strstr(st.msg, "tcgen05.wait::st"))
    fail_msg("mode %d: the report does not name the incomplete store: %s", mode, st.msg);
}

static void test_no_wait_st_mma(void **state) {
  (void)state;
  sa_expect(SA_MMA_NO_WAIT_ST, MT_LINE(sa_line_issue));
}

static void test_no_wait_st_load(void **state) {
  (void)state;
  sa_expect(SA_LOAD_NO_WAIT_ST, MT_LINE(sa_line_load));
}

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_release_then_mma), MT_TEST(test_release_then_load),
                                     MT_TEST(test_no_wait_st_mma), MT_TEST(test_no_wait_st_load)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
