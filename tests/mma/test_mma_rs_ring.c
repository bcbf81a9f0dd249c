/* test_mma_rs_ring.c - kbd_mma_rs_ring (kbd/mma_rs.h): wgmma with A from registers and B named by a ring's stage 0
 * descriptor moved by the stage, on the CPU machine emulating sm_90a (KBD_CPU_ARCH=90). It is the P V of the sm_90a
 * attention key loop (examples/attention/attention_kernel.h), whose V stages it names this way.
 *
 * One warpgroup computes D (64 x RN) = sum over kt blocks i of A_i (64 x RK, a KBD_ACC_TILE register tile) B_i^T,
 * B_i written into stage i % 2 of a 2-stage ring of shared tiles and named by kbd_mma_rs_ring(acc, a, TB, b0, bstride,
 * i % 2, i > 0) with b0 = kbd_mma_desc_of(stage 0) and bstride the distance between the stages. Values are small
 * multiples of 1/4, so every sum is exact: D must equal the double reference bit for bit.
 *   RR_OK        exact, B K-major and MN-major (attention's V), under the default schedule, seeds 0-3, 1 or 2 host
 *                threads
 *   RR_NO_MOVE   the stride given as 0: every block reads stage 0, so the odd blocks multiply the even blocks' B -
 *                the result check must find wrong elements (it is what a descriptor that is not moved computes)
 *   RR_STRIDE    the stride a tile plus 16 bytes: stage 1's descriptor is off its swizzle repeat - KBD_ERR_INVALID
 *                at the call naming the alignment rule (kbd_mma_desc_tile_check)
 *   RR_TYPE      b0 made from a tile of another type at stage 0's address (64-byte swizzle, half the K): the
 *                descriptor is not one of TB's - KBD_ERR_INVALID at the call naming the descriptor rule
 * Each reject is reported in the first run, at the kbd_mma_rs_ring line.
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

#if KBD_CPU_ARCH != 90
#error "test_mma_rs_ring.c emulates sm_90a: build it with -DKBD_CPU_ARCH=90"
#endif

/* MT_MARK and the call it marks share a line (the reports name that line): clang-format is off around them */

#define RN 64 /* N */
#define RK 64 /* K per block (64 bf16 = one 128-byte swizzle row) */
typedef KBD_STILE(bf16, RN, RK, KBD_SWIZZLE_128B) rr_bk;
typedef KBD_STILE_MN(bf16, RN, RK, KBD_SWIZZLE_128B) rr_bmn;
typedef KBD_STILE(bf16, RN, RK / 2, KBD_SWIZZLE_64B) rr_b64; /* another type over stage 0's first bytes */

enum { RR_OK, RR_NO_MOVE, RR_STRIDE, RR_TYPE };

typedef struct rr_params {
  const kbd_bf16 *a, *b; /* kt blocks of A (64 x RK) and B (RN x RK), row-major, one after the other */
  float *d;              /* 64 x RN */
  int kt, brk;
} rr_params;

static int rr_line_mma;

static float rr_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* The kernel for B tiles of type BT (K-major or MN-major): stage i % 2 is rewritten only after the MMA that read it
 * two blocks before was waited for (kbd_mma_wait per block), so the ring's reuse is race-free. */
#define RR_KERNEL(name, BT)                                                                                            \
  KBD_KERNEL(name, 128, rr_params) {                                                                                   \
    KBD_SHARED_STILE(BT, b0);                                                                                          \
    KBD_SHARED_STILE(BT, b1);                                                                                          \
    KBD_ACC(f32, 64, RN) acc;                                                                                          \
    kbd_acc_bind(acc, (kbd_tmem *)0, 0, (uint64_t *)0);                                                                \
    const uint64_t bd =                                                                                                \
        p.brk == RR_TYPE ? kbd_mma_desc_of(KBD_STILE_AT(rr_b64, (unsigned char *)b0.p)) : kbd_mma_desc_of(b0);         \
    const int stride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);                                           \
    const int bstride = p.brk == RR_NO_MOVE ? 0 : p.brk == RR_STRIDE ? stride + 16 : stride;                           \
    for (int i = 0; i < p.kt; ++i) {                                                                                   \
      const int s = i % 2;                                                                                             \
      BT b = s ? b1 : b0;                                                                                              \
      {                                                                                                                \
        KBD_TILE(bf16, RN, RK, KBD_WARPGROUP) rb;                                                                      \
        kbd_load2d(rb, p.b + (size_t)i * RN * RK, RN, RK, RK, 0, 0);                                                   \
        kbd_stile_store(b, rb);                                                                                        \
      }                                                                                                                \
      kbd_fence_proxy_async();                                                                                         \
      kbd_sync();                                                                                                      \
      KBD_ACC_TILE(bf16, 64, RK) a;                                                                                    \
      kbd_load2d(a, p.a + (size_t)i * 64 * RK, 64, RK, RK, 0, 0);                                                      \
      RR_MMA_LINE;                                                                                                     \
      kbd_mma_wait(acc);                                                                                               \
      kbd_sync(); /* every warp's wait before any warp rewrites a stage */                                             \
    }                                                                                                                  \
    KBD_ACC_TILE(f32, 64, RN) r;                                                                                       \
    kbd_acc_load(r, acc, 0);                                                                                           \
    kbd_store2d(p.d, r, 64, RN, RN, 0, 0);                                                                             \
  }

/* clang-format off */
#define RR_MMA_LINE MT_MARK(rr_line_mma); kbd_mma_rs_ring(acc, a, rr_bk, bd, bstride, s, i > 0)
RR_KERNEL(rr_kernel_k, rr_bk)
#undef RR_MMA_LINE
#define RR_MMA_LINE MT_MARK(rr_line_mma); kbd_mma_rs_ring(acc, a, rr_bmn, bd, bstride, s, i > 0)
RR_KERNEL(rr_kernel_mn, rr_bmn)
#undef RR_MMA_LINE
/* clang-format on */

typedef kbd_status (*rr_kernel)(kbd_launch_cfg, rr_params);

/* Runs kernel over kt blocks; when it ran, *wrong = the elements of D that differ from the exact reference. */
static kbd_status rr_run(rr_kernel kernel, int kt, int brk, int *wrong) {
  const size_t na = (size_t)kt * 64 * RK, nb = (size_t)kt * RN * RK;
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * na), *hb = malloc(sizeof(kbd_bf16) * nb);
  float *hd = malloc(sizeof(float) * 64 * RN);
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hd);
  for (int i = 0; i < kt; ++i)
    for (int r = 0; r < 64; ++r)
      for (int k = 0; k < RK; ++k)
        ha[((size_t)i * 64 + (size_t)r) * RK + (size_t)k] = kbd_f32_to_bf16(rr_value(r, k, 2 * i + 1));
  for (int i = 0; i < kt; ++i)
    for (int n = 0; n < RN; ++n)
      for (int k = 0; k < RK; ++k)
        hb[((size_t)i * RN + (size_t)n) * RK + (size_t)k] = kbd_f32_to_bf16(rr_value(n, k, 2 * i + 2));
  kbd_bf16 *da, *db;
  float *dd;
  assert_int_equal(kbd_malloc((void **)&da, sizeof(kbd_bf16) * na).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&db, sizeof(kbd_bf16) * nb).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * 64 * RN).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * na).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * nb).code, KBD_OK);
  rr_params p;
  memset(&p, 0, sizeof p);
  p.a = da, p.b = db, p.d = dd, p.kt = kt, p.brk = brk;
  const kbd_status st = kernel(kbd_cfg_1d(1), p);
  *wrong = 0;
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * 64 * RN).code, KBD_OK);
    for (int r = 0; r < 64; ++r)
      for (int n = 0; n < RN; ++n) {
        double ref = 0;
        for (int i = 0; i < kt; ++i)
          for (int k = 0; k < RK; ++k)
            ref += (double)kbd_bf16_to_f32(ha[((size_t)i * 64 + (size_t)r) * RK + (size_t)k]) *
                   (double)kbd_bf16_to_f32(hb[((size_t)i * RN + (size_t)n) * RK + (size_t)k]);
        *wrong += (double)hd[(size_t)r * RN + (size_t)n] != ref;
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
  return st;
}

static void test_ring_exact(void **state) {
  (void)state;
  const rr_kernel kernels[2] = {rr_kernel_k, rr_kernel_mn};
  for (int m = 0; m < 2; ++m)
    for (long threads = 1; threads <= 2; ++threads)
      for (long seed = -1; seed <= 3; ++seed) {
        mt_env(threads, seed);
        int wrong;
        const kbd_status st = rr_run(kernels[m], 5, RR_OK, &wrong);
        if (st.code != KBD_OK) fail_msg("%s-major B, threads %ld seed %ld: %s", m ? "MN" : "K", threads, seed, st.msg);
        if (wrong)
          fail_msg("%s-major B, threads %ld seed %ld: %d elements wrong", m ? "MN" : "K", threads, seed, wrong);
      }
}

/* a descriptor that is not moved by the stage reads stage 0 for every block: the check sees it */
static void test_ring_not_moved(void **state) {
  (void)state;
  mt_env(1, -1);
  int wrong;
  MT_ASSERT_OK(rr_run(rr_kernel_mn, 4, RR_NO_MOVE, &wrong));
  if (wrong == 0) fail_msg("stride 0: every element right, want the odd blocks' products wrong");
}

static void expect_invalid(rr_kernel kernel, int brk, const char *why) {
  mt_env(1, -1);
  mt_quiet(1);
  int wrong;
  const kbd_status st = rr_run(kernel, 4, brk, &wrong);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(rr_line_mma));
  MT_ASSERT_HAS(st, why);
}
static void test_ring_bad_stride(void **state) {
  (void)state;
  expect_invalid(rr_kernel_k, RR_STRIDE, KBD_MMA_RULE_ALIGN);
  expect_invalid(rr_kernel_mn, RR_STRIDE, KBD_MMA_RULE_ALIGN);
}
static void test_ring_wrong_tile_type(void **state) {
  (void)state;
  expect_invalid(rr_kernel_k, RR_TYPE, KBD_MMA_RULE_DESC_TILE);
  expect_invalid(rr_kernel_mn, RR_TYPE, KBD_MMA_RULE_DESC_TILE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_ring_exact),
      MT_TEST(test_ring_not_moved),
      MT_TEST(test_ring_bad_stride),
      MT_TEST(test_ring_wrong_tile_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
