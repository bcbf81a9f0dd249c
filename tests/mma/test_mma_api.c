/* test_mma_api.c - kbd_mma / kbd_acc_* (kbd/mma.h) on the CPU machine, built twice: KBD_CPU_ARCH=90 (wgmma
 * emulation, register accumulators) and 100 (tcgen05 + Tensor Memory). Each case runs one warpgroup kernel
 * (mma_case.h) and compares the whole M x N result with a double reference EXACTLY: the inputs are small
 * multiples of 1/4, so every product and partial sum is exact in f32 and any emulation order gives the same
 * bits. Cases cover every operand type family, K-major and MN-major operands, each swizzle, N from 8 to 256,
 * M = 64 and 128, f16 accumulators (f16 and e4m3 operands), s8/u8 operands in an i32 accumulator (all three
 * type pairs' codes, the full 8-bit ranges), and accumulate (a second kbd_mma adding onto the first). All under the default schedule and
 * seeds 0-3. Broken variants: the missing fence.proxy.async between generic stores and the MMA, and (sm_100a)
 * Tensor Memory not freed at exit. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

typedef struct mc_params {
  const void *a, *b;
  float *d;
  int twice, skip_fence, leak;
  int chunks, bad_col; /* read the accumulator in 8-column chunks of a rolled loop, col0 + bad_col */
} mc_params;

/* case 1: bf16, K-major x K-major, 128B swizzle, the smallest M */
#define MC_NAME mc_bf16_kk
#define MC_DTA bf16
#define MC_DTB bf16
#define MC_TA kbd_bf16
#define MC_TB kbd_bf16
#define MC_M 64
#define MC_N 64
#define MC_K 64
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) mc1_a;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) mc1_b;
#define MC_A mc1_a
#define MC_B mc1_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K

/* case 2: bf16, M = 128, N = 256 (the largest), B MN-major (a row-major K x N B), 64B swizzle, K = 32 */
#define MC_NAME mc_bf16_kmn
#define MC_M 128
#define MC_N 256
#define MC_K 32
typedef KBD_STILE(bf16, 128, 32, KBD_SWIZZLE_64B) mc2_a;
typedef KBD_STILE_MN(bf16, 256, 32, KBD_SWIZZLE_64B) mc2_b;
#define MC_A mc2_a
#define MC_B mc2_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K

/* case 3: bf16, both MN-major (column-major A), 128B swizzle, 128 x 128 x 64 */
#define MC_NAME mc_bf16_mnmn
#define MC_M 128
#define MC_N 128
#define MC_K 64
typedef KBD_STILE_MN(bf16, 128, 64, KBD_SWIZZLE_128B) mc3_a;
typedef KBD_STILE_MN(bf16, 128, 64, KBD_SWIZZLE_128B) mc3_b;
#define MC_A mc3_a
#define MC_B mc3_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 4: f16, A MN-major with a 32B swizzle, N = 8 (the narrowest) */
#define MC_NAME mc_f16_n8
#define MC_DTA f16
#define MC_DTB f16
#define MC_TA kbd_f16
#define MC_TB kbd_f16
#define MC_M 64
#define MC_N 8
#define MC_K 16
typedef KBD_STILE_MN(f16, 64, 16, KBD_SWIZZLE_32B) mc4_a;
typedef KBD_STILE(f16, 8, 16, KBD_SWIZZLE_32B) mc4_b;
#define MC_A mc4_a
#define MC_B mc4_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 5: tf32 (f32 tiles), K-major, N = 24 */
#define MC_NAME mc_tf32
#define MC_DTA f32
#define MC_DTB f32
#define MC_TA float
#define MC_TB float
#define MC_M 64
#define MC_N 24
#define MC_K 32
typedef KBD_STILE(f32, 64, 32, KBD_SWIZZLE_128B) mc5_a;
typedef KBD_STILE(f32, 24, 32, KBD_SWIZZLE_128B) mc5_b;
#define MC_A mc5_a
#define MC_B mc5_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 6: e4m3 x e5m2 (a mixed fp8 pair), M = 128, K = 64 (two K-steps in a 64-byte row) */
#define MC_NAME mc_fp8
#define MC_DTA e4m3
#define MC_DTB e5m2
#define MC_TA kbd_e4m3
#define MC_TB kbd_e5m2
#define MC_M 128
#define MC_N 64
#define MC_K 64
typedef KBD_STILE(e4m3, 128, 64, KBD_SWIZZLE_64B) mc6_a;
typedef KBD_STILE(e5m2, 64, 64, KBD_SWIZZLE_64B) mc6_b;
#define MC_A mc6_a
#define MC_B mc6_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 7: f16 x f16 into an f16 accumulator (K-major, 128B): the sums are multiples of 1/16 below 128, exact in f16 */
#define MC_NAME mc_f16_f16acc
#define MC_DTA f16
#define MC_DTB f16
#define MC_TA kbd_f16
#define MC_TB kbd_f16
#define MC_DTD f16
#define MC_M 64
#define MC_N 64
#define MC_K 64
typedef KBD_STILE(f16, 64, 64, KBD_SWIZZLE_128B) mc7_a;
typedef KBD_STILE(f16, 64, 64, KBD_SWIZZLE_128B) mc7_b;
#define MC_A mc7_a
#define MC_B mc7_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 8: e4m3 x e4m3 into an f16 accumulator, M = 128 (sm_100a: one f16 in each 32-bit Tensor Memory cell) */
#define MC_NAME mc_fp8_f16acc
#define MC_DTA e4m3
#define MC_DTB e4m3
#define MC_TA kbd_e4m3
#define MC_TB kbd_e4m3
#define MC_M 128
#define MC_N 32
#define MC_K 64
typedef KBD_STILE(e4m3, 128, 64, KBD_SWIZZLE_64B) mc8_a;
typedef KBD_STILE(e4m3, 32, 64, KBD_SWIZZLE_64B) mc8_b;
#define MC_A mc8_a
#define MC_B mc8_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB
#undef MC_DTD

/* case 9: s8 x s8 into an i32 accumulator (the s32 D), M = 64, N = 24 (the largest N below the integer kinds'
 * step-16 range), K = 64 (two K-steps) */
#define MC_NAME mc_s8
#define MC_DTA s8
#define MC_DTB s8
#define MC_TA kbd_s8
#define MC_TB kbd_s8
#define MC_DTD i32
#define MC_M 64
#define MC_N 24
#define MC_K 64
typedef KBD_STILE(s8, 64, 64, KBD_SWIZZLE_64B) mc9_a;
typedef KBD_STILE(s8, 24, 64, KBD_SWIZZLE_64B) mc9_b;
#define MC_A mc9_a
#define MC_B mc9_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 10: u8 x s8 (a mixed pair: the idesc's A code U8), M = 128, N = 48, K = 128 (four K-steps, 128B) */
#define MC_NAME mc_u8s8
#define MC_DTA u8
#define MC_DTB s8
#define MC_TA kbd_u8
#define MC_TB kbd_s8
#define MC_M 128
#define MC_N 48
#define MC_K 128
typedef KBD_STILE(u8, 128, 128, KBD_SWIZZLE_128B) mc10_a;
typedef KBD_STILE(s8, 48, 128, KBD_SWIZZLE_128B) mc10_b;
#define MC_A mc10_a
#define MC_B mc10_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB

/* case 11: s8 x u8, M = 64, N = 256 (the widest), K = 32 (one K-step, 32B swizzle) */
#define MC_NAME mc_s8u8
#define MC_DTA s8
#define MC_DTB u8
#define MC_TA kbd_s8
#define MC_TB kbd_u8
#define MC_M 64
#define MC_N 256
#define MC_K 32
typedef KBD_STILE(s8, 64, 32, KBD_SWIZZLE_32B) mc11_a;
typedef KBD_STILE(u8, 256, 32, KBD_SWIZZLE_32B) mc11_b;
#define MC_A mc11_a
#define MC_B mc11_b
#include "mma_case.h"
#undef MC_NAME
#undef MC_A
#undef MC_B
#undef MC_M
#undef MC_N
#undef MC_K
#undef MC_DTA
#undef MC_DTB
#undef MC_TA
#undef MC_TB
#undef MC_DTD

enum {
  MC_BF16_KK,
  MC_BF16_KMN,
  MC_BF16_MNMN,
  MC_F16_N8,
  MC_TF32,
  MC_FP8,
  MC_F16_F16ACC,
  MC_FP8_F16ACC,
  MC_S8,
  MC_U8S8,
  MC_S8U8,
  MC_CASES
};
static const struct {
  int m, n, k, dta, dtb;
  kbd_status (*run)(kbd_launch_cfg, mc_params);
  const char *name;
} mc_cases[MC_CASES] = {
    {64, 64, 64, KBD_DT_bf16, KBD_DT_bf16, mc_bf16_kk, "bf16 K x K 128B"},
    {128, 256, 32, KBD_DT_bf16, KBD_DT_bf16, mc_bf16_kmn, "bf16 K x MN 64B n256"},
    {128, 128, 64, KBD_DT_bf16, KBD_DT_bf16, mc_bf16_mnmn, "bf16 MN x MN 128B"},
    {64, 8, 16, KBD_DT_f16, KBD_DT_f16, mc_f16_n8, "f16 MN x K 32B n8"},
    {64, 24, 32, KBD_DT_f32, KBD_DT_f32, mc_tf32, "tf32 K x K n24"},
    {128, 64, 64, KBD_DT_e4m3, KBD_DT_e5m2, mc_fp8, "e4m3 x e5m2"},
    {64, 64, 64, KBD_DT_f16, KBD_DT_f16, mc_f16_f16acc, "f16 x f16 -> f16"},
    {128, 32, 64, KBD_DT_e4m3, KBD_DT_e4m3, mc_fp8_f16acc, "e4m3 x e4m3 -> f16"},
    {64, 24, 64, KBD_DT_s8, KBD_DT_s8, mc_s8, "s8 x s8 -> i32 n24"},
    {128, 48, 128, KBD_DT_u8, KBD_DT_s8, mc_u8s8, "u8 x s8 -> i32 n48"},
    {64, 256, 32, KBD_DT_s8, KBD_DT_u8, mc_s8u8, "s8 x u8 -> i32 n256"},
};

/* Float operands: small multiples of 1/4 (exact sums). 8-bit integers: the type's whole range (-128..127 or 0..255,
 * every sum below 2^24 in magnitude, so exact in the f32 the kernel stores), including both extremes. */
static float mc_value(int i, int j, int salt, int dt) {
  if (KBD_DT_IS_INT8(dt)) {
    const int v = (i * 37 + j * 11 + salt * 101) % 256;
    return (float)(dt == KBD_DT_s8 ? v - 128 : v);
  }
  return (float)(((i * 7 + j * 3 + salt * 5) % 9) - 4) / 4.0f;
}

/* Runs case c; returns the launch status and, if it ran, checks every element (exact). */
static kbd_status mc_run_chunked(int c, int twice, int skip_fence, int leak, int check, int chunks, int bad_col) {
  const int m = mc_cases[c].m, n = mc_cases[c].n, k = mc_cases[c].k;
  const size_t ea = (size_t)KBD_DT_SIZE(mc_cases[c].dta), eb = (size_t)KBD_DT_SIZE(mc_cases[c].dtb);
  unsigned char *ha = malloc((size_t)(m * k) * ea), *hb = malloc((size_t)(n * k) * eb);
  float *hd = malloc(sizeof(float) * (size_t)(m * n));
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hd);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) kbd_dt_store_f32(ha + (size_t)(i * k + j) * ea, mc_cases[c].dta, mc_value(i, j, 1, mc_cases[c].dta));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) kbd_dt_store_f32(hb + (size_t)(i * k + j) * eb, mc_cases[c].dtb, mc_value(i, j, 2, mc_cases[c].dtb));
  void *da, *db;
  float *dd;
  assert_int_equal(kbd_malloc(&da, (size_t)(m * k) * ea).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, (size_t)(n * k) * eb).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, (size_t)(m * k) * ea).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, (size_t)(n * k) * eb).code, KBD_OK);
  mc_params p = {da, db, dd, twice, skip_fence, leak, chunks, bad_col};
  const kbd_status st = mc_cases[c].run(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK && check) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int q = 0; q < k; ++q)
          ref += (double)kbd_dt_load_f32(ha + (size_t)(i * k + q) * ea, mc_cases[c].dta) *
                 (double)kbd_dt_load_f32(hb + (size_t)(j * k + q) * eb, mc_cases[c].dtb);
        if (twice) ref *= 2;
        if ((double)hd[i * n + j] != ref)
          fail_msg("%s (sm_%d): D[%d][%d] = %.9g, want %.9g", mc_cases[c].name, KBD_CPU_ARCH, i, j, hd[i * n + j], ref);
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
  return st;
}

static kbd_status mc_run(int c, int twice, int skip_fence, int leak, int check) {
  return mc_run_chunked(c, twice, skip_fence, leak, check, 0, 0);
}

static void test_cases(void **state) {
  (void)state;
  for (int c = 0; c < MC_CASES; ++c)
    for (long seed = -1; seed < 4; ++seed)
      for (int twice = 0; twice < 2; ++twice) {
        mt_env(1, seed);
        const kbd_status st = mc_run(c, twice, 0, 0, 1);
        if (st.code != KBD_OK) fail_msg("%s (sm_%d) seed %ld: %s", mc_cases[c].name, KBD_CPU_ARCH, seed, st.msg);
      }
}

/* kbd_acc_load with a run-time col0 (a KBD_NO_UNROLL chunk loop, as the GEMM epilogue has): every case, exact. */
static void test_chunked_load(void **state) {
  (void)state;
  for (int c = 0; c < MC_CASES; ++c) {
    mt_env(1, -1);
    const kbd_status st = mc_run_chunked(c, 1, 0, 0, 1, 1, 0);
    if (st.code != KBD_OK) fail_msg("%s (sm_%d), chunked: %s", mc_cases[c].name, KBD_CPU_ARCH, st.msg);
  }
}

/* col0 not a multiple of 8 (the last chunk would also run past the accumulator): reported at the load. */
static void test_bad_col0(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mc_run_chunked(MC_BF16_KK, 0, 0, 0, 0, 1, 4);
  assert_int_equal(st.code, KBD_ERR_INVALID);
  assert_non_null(strstr(st.msg, "mma_case.h:"));
  assert_non_null(strstr(st.msg, "col0 = 4"));
}

/* Generic stores to the operand tiles without fence.proxy.async: the MMA reads through the async proxy and
 * may see stale bytes on the GPU. Caught in the first run under the default schedule. */
static void test_missing_proxy_fence(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mc_run(MC_BF16_KK, 0, 1, 0, 0);
  assert_int_not_equal(st.code, KBD_OK);
  assert_non_null(strstr(st.msg, "mma_case.h:"));
  assert_non_null(strstr(st.msg, "fence"));
}

/* sm_100a: the CTA exits with its Tensor Memory still allocated. */
static void test_tmem_leak(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = mc_run(MC_BF16_KK, 0, 0, 1, 0);
  if (KBD_CPU_ARCH == 100) {
    assert_int_not_equal(st.code, KBD_OK);
    assert_non_null(strstr(st.msg, "Tensor Memory"));
  } else {
    assert_int_equal(st.code, KBD_OK); /* sm_90a has no Tensor Memory: kbd_tmem_alloc/free are no-ops */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_missing_proxy_fence),
      cmocka_unit_test(test_tmem_leak),
      cmocka_unit_test(test_chunked_load),
      cmocka_unit_test(test_bad_col0),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
