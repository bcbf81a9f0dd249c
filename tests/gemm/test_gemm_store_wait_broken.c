/* test_gemm_store_wait_broken.c - the GEMM example's pipelined epilogue stores (gemm_epilogue.h, gemm_chunk_store):
 * each storing warpgroup writes chunk i into staging buffer i % GEMM_EPI_BUFS and, before that, waits until at most
 * GEMM_EPI_BUFS - 1 of its TMA stores still read shared memory. Here every kbd_bulk_wait_group_read(n) of the kernels
 * waits for one group fewer (n + 1): the store of chunk i - 2 may still be reading the buffer chunk i overwrites.
 * The CPU machine must report that write as a data race (KBD_ERR_RACE naming the store) in the first run, on every
 * kernel text of the emulated arch (sm_100a: the MMA-warp kernel and the CTA-pair kernel; sm_90a: both consumer
 * schedules, cooperative and pingpong) and for both staging types
 * (bf16 D: the first half of a buffer, f32 D: all of it). The control is the unbroken example (gemm_args_sm*,
 * gemm_hook_sm* and tests/examples run the same kernels with the same stores and must pass). Built per emulated
 * arch.
 *
 * It also checks that the shared-memory plans with two staging buffers per warpgroup fit the 227 KiB a block may
 * have (kbd_smem_plan_status, the check gemm_run makes before a launch) and prints their size. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

/* the example's kernels with the read-completion wait one group short (the kernel text itself is unchanged) */
#include <kbd/tma.h>
#undef kbd_bulk_wait_group_read
#define kbd_bulk_wait_group_read(n) kbd_hw_bulk_wait((int)(n) + 1, 1, KBD_SITE)
#include "gemm.cu"

/* M x N x K = 256 x 512 x 64 on one persistent block (pair: one pair): every warpgroup stores 8 or more chunks in a
 * row, so a buffer is reused while the store of two chunks before may still read it */
static void run_broken(int d_f32, int pair, int pingpong) {
  mt_env(1, -1);
  mt_quiet(1);
  enum { M = 256, N = 512, K = 64 };
  void *a, *b, *d;
  assert_int_equal(kbd_malloc(&a, sizeof(kbd_bf16) * M * K).code, KBD_OK);
  assert_int_equal(kbd_malloc(&b, sizeof(kbd_bf16) * K * N).code, KBD_OK);
  assert_int_equal(kbd_malloc(&d, sizeof(float) * M * N).code, KBD_OK);
  assert_int_equal(kbd_memset_device(a, 0, sizeof(kbd_bf16) * M * K).code, KBD_OK);
  assert_int_equal(kbd_memset_device(b, 0, sizeof(kbd_bf16) * K * N).code, KBD_OK);
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = M, g.n = N, g.k = K;
  g.a = a, g.lda = K, g.b = b, g.ldb = pair ? K : N, g.b_col = pair, g.d = d, g.ldd = N, g.d_f32 = d_f32;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.cluster = g.cluster_n = 1;
  g.pair = pair ? 1 : -1;
  g.grid = pair ? 2 : 1;
  g.pingpong = pingpong;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_ERR_RACE)
    fail_msg("the short store wait (%s D%s, pingpong %d) was not reported as a race: code %d: %s",
             d_f32 ? "f32" : "bf16", pair ? ", CTA pair" : "", pingpong, st.code, st.msg);
  assert_non_null(strstr(st.msg, pair ? "gemm_pair" : "gemm_kernel"));
  print_message("reported (%s D%s): %.200s\n", d_f32 ? "f32" : "bf16", pair ? ", pair" : "", st.msg);
  kbd_free(a), kbd_free(b), kbd_free(d);
}

/* sm_90a: the cooperative and the pingpong consumers; sm_100a: the one MMA-warp kernel */
static void run_schedules(int d_f32) {
  if (KBD_MMA_ARCH == 90) {
    run_broken(d_f32, 0, -1);
    run_broken(d_f32, 0, 1);
  } else {
    run_broken(d_f32, 0, 0);
  }
}
static void test_bf16_d(void **state) {
  (void)state;
  run_schedules(0);
}
static void test_f32_d(void **state) {
  (void)state;
  run_schedules(1);
}
static void test_pair(void **state) {
  (void)state;
  if (KBD_MMA_ARCH != 100) skip();
  run_broken(0, 1, 0);
  run_broken(1, 1, 0);
}

/* the plans the kernels launch with: two 8 KiB staging buffers per consumer warpgroup, within 227 KiB */
static void test_plans_fit(void **state) {
  (void)state;
  for (int k = 0; k < 5; ++k) {
    gemm_smem l;
    const char *name = k == 0 ? "bf16" : k == 1 ? "e4m3" : k == 2 ? "pair" : k == 3 ? "pingpong bf16" : "pingpong e4m3";
    const kbd_smem_plan p = k < 2    ? gemm_layout(&l, k)
                            : k == 2 ? gemm_layout_pair(&l)
                                     : gemm_layout_pingpong(&l, k - 3);
    const kbd_status st = kbd_smem_plan_status(&p);
    if (st.code != KBD_OK) fail_msg("%s plan: %s", name, st.msg);
    /* the staging pieces end before the barriers, which come right after them */
    assert_true(l.out + (size_t)GEMM_CONSUMERS * GEMM_EPI_BUFS * GEMM_OUT_BYTES <= l.full);
    print_message("%s plan: %zu bytes (limit %u)\n", name, p.bytes, (unsigned)KBD_MAX_SMEM_BYTES);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bf16_d), cmocka_unit_test(test_f32_d),
                                     cmocka_unit_test(test_pair), cmocka_unit_test(test_plans_fit)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
