/* test_mma_rs.c - kbd_mma_rs (kbd/mma_rs.h): wgmma with A from registers, on the CPU machine emulating sm_90a
 * (KBD_CPU_ARCH=90).
 *
 * test_cases: one warpgroup kernel per case (mma_rs_case.h) - A a KBD_ACC_TILE(bf16 or f16, M, K) register tile
 * loaded from global memory, B an N x K shared tile - against a double reference of the whole M x N result,
 * accumulate 0 (D = A B^T) and 1 (D = C + A B^T, C stored into the accumulator first), under the default
 * schedule and seeds 0 and 1. The inputs are pseudo-random 16-bit values, so the f32 roundings of the
 * emulation are exercised; each element must be within the numeric contract of docs/mma.md,
 * 2 (K/16 + 1) 2^-24 (sum |a b| + |c|). The cases cover every N of the sample 8, 16, 24, 64, 128, 256 with both
 * types, B K-major and MN-major, the 32B, 64B and 128B swizzles, M = 64 and 128, and K from 16 to 128.
 *
 * The A-register rule (PTX: the A registers of a wgmma must not change before the wait_group that covers it):
 *   test_a_two_readers     two kbd_mma_rs read the same unchanged tile while the first is pending: no report,
 *                          both results right
 *   test_a_rewritten       the tile is rewritten between them: a report at the second call's line naming the
 *                          first call's line
 *   test_a_loop_wait       a loop whose tile is declared in its body and whose MMA stays pending past the end of
 *                          the body (kbd_mma_release), with a wait before the next rewrite: no report, right sum
 *                          (also the ASan case: the machine never reads a tile after its scope)
 *   test_a_loop_no_wait    the same loop without the wait: the second iteration's kbd_mma_rs reports
 * each caught in the first run under the default schedule.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"
#include "rs_operands.h"

#if KBD_CPU_ARCH != 90
#error "test_mma_rs.c emulates sm_90a: build it with -DKBD_CPU_ARCH=90"
#endif

typedef struct rc_params {
  const void *a, *b;
  const float *c;
  float *d;
  int accumulate;
} rc_params;

/* bf16, M = 64, N = 8, K = 16, B K-major, 32B swizzle */
#define RC_NAME rc_bf16_m64_n8
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 64
#define RC_N 8
#define RC_K 16
typedef KBD_STILE(bf16, 8, 16, KBD_SWIZZLE_32B) rc_bf16_m64_n8_b;
#define RC_B rc_bf16_m64_n8_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 64, N = 8, K = 32, B K-major, 64B swizzle */
#define RC_NAME rc_f16_m64_n8
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 64
#define RC_N 8
#define RC_K 32
typedef KBD_STILE(f16, 8, 32, KBD_SWIZZLE_64B) rc_f16_m64_n8_b;
#define RC_B rc_f16_m64_n8_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 128, N = 16, K = 32, B K-major, 64B swizzle */
#define RC_NAME rc_f16_m128_n16
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 128
#define RC_N 16
#define RC_K 32
typedef KBD_STILE(f16, 16, 32, KBD_SWIZZLE_64B) rc_f16_m128_n16_b;
#define RC_B rc_f16_m128_n16_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* bf16, M = 64, N = 16, K = 64, B MN-major, 32B swizzle */
#define RC_NAME rc_bf16_m64_n16
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 64
#define RC_N 16
#define RC_K 64
typedef KBD_STILE_MN(bf16, 16, 64, KBD_SWIZZLE_32B) rc_bf16_m64_n16_b;
#define RC_B rc_bf16_m64_n16_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* bf16, M = 64, N = 24, K = 64, B K-major, 128B swizzle */
#define RC_NAME rc_bf16_m64_n24
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 64
#define RC_N 24
#define RC_K 64
typedef KBD_STILE(bf16, 24, 64, KBD_SWIZZLE_128B) rc_bf16_m64_n24_b;
#define RC_B rc_bf16_m64_n24_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 128, N = 24, K = 16, B K-major, 32B swizzle */
#define RC_NAME rc_f16_m128_n24
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 128
#define RC_N 24
#define RC_K 16
typedef KBD_STILE(f16, 24, 16, KBD_SWIZZLE_32B) rc_f16_m128_n24_b;
#define RC_B rc_f16_m128_n24_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 64, N = 64, K = 64, B MN-major, 128B swizzle */
#define RC_NAME rc_f16_m64_n64
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 64
#define RC_N 64
#define RC_K 64
typedef KBD_STILE_MN(f16, 64, 64, KBD_SWIZZLE_128B) rc_f16_m64_n64_b;
#define RC_B rc_f16_m64_n64_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* bf16, M = 128, N = 64, K = 128, B MN-major, 64B swizzle */
#define RC_NAME rc_bf16_m128_n64
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 128
#define RC_N 64
#define RC_K 128
typedef KBD_STILE_MN(bf16, 64, 128, KBD_SWIZZLE_64B) rc_bf16_m128_n64_b;
#define RC_B rc_bf16_m128_n64_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* bf16, M = 128, N = 128, K = 32, B MN-major, 64B swizzle */
#define RC_NAME rc_bf16_m128_n128
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 128
#define RC_N 128
#define RC_K 32
typedef KBD_STILE_MN(bf16, 128, 32, KBD_SWIZZLE_64B) rc_bf16_m128_n128_b;
#define RC_B rc_bf16_m128_n128_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 64, N = 128, K = 48, B K-major, 32B swizzle */
#define RC_NAME rc_f16_m64_n128
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 64
#define RC_N 128
#define RC_K 48
typedef KBD_STILE(f16, 128, 48, KBD_SWIZZLE_32B) rc_f16_m64_n128_b;
#define RC_B rc_f16_m64_n128_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* bf16, M = 64, N = 256, K = 16, B MN-major, 32B swizzle */
#define RC_NAME rc_bf16_m64_n256
#define RC_DT bf16
#define RC_T kbd_bf16
#define RC_M 64
#define RC_N 256
#define RC_K 16
typedef KBD_STILE_MN(bf16, 256, 16, KBD_SWIZZLE_32B) rc_bf16_m64_n256_b;
#define RC_B rc_bf16_m64_n256_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B

/* f16, M = 128, N = 256, K = 64, B K-major, 128B swizzle */
#define RC_NAME rc_f16_m128_n256
#define RC_DT f16
#define RC_T kbd_f16
#define RC_M 128
#define RC_N 256
#define RC_K 64
typedef KBD_STILE(f16, 256, 64, KBD_SWIZZLE_128B) rc_f16_m128_n256_b;
#define RC_B rc_f16_m128_n256_b
#include "mma_rs_case.h"
#undef RC_NAME
#undef RC_DT
#undef RC_T
#undef RC_M
#undef RC_N
#undef RC_K
#undef RC_B


static const struct {
  int m, n, k, dt;
  kbd_status (*run)(kbd_launch_cfg, rc_params);
  const char *name;
} rc_cases[] = {
    {64, 8, 16, KBD_DT_bf16, rc_bf16_m64_n8, "bf16 M64 N8 K16 B K-major 32B"},
    {64, 8, 32, KBD_DT_f16, rc_f16_m64_n8, "f16 M64 N8 K32 B K-major 64B"},
    {128, 16, 32, KBD_DT_f16, rc_f16_m128_n16, "f16 M128 N16 K32 B K-major 64B"},
    {64, 16, 64, KBD_DT_bf16, rc_bf16_m64_n16, "bf16 M64 N16 K64 B MN-major 32B"},
    {64, 24, 64, KBD_DT_bf16, rc_bf16_m64_n24, "bf16 M64 N24 K64 B K-major 128B"},
    {128, 24, 16, KBD_DT_f16, rc_f16_m128_n24, "f16 M128 N24 K16 B K-major 32B"},
    {64, 64, 64, KBD_DT_f16, rc_f16_m64_n64, "f16 M64 N64 K64 B MN-major 128B"},
    {128, 64, 128, KBD_DT_bf16, rc_bf16_m128_n64, "bf16 M128 N64 K128 B MN-major 64B"},
    {128, 128, 32, KBD_DT_bf16, rc_bf16_m128_n128, "bf16 M128 N128 K32 B MN-major 64B"},
    {64, 128, 48, KBD_DT_f16, rc_f16_m64_n128, "f16 M64 N128 K48 B K-major 32B"},
    {64, 256, 16, KBD_DT_bf16, rc_bf16_m64_n256, "bf16 M64 N256 K16 B MN-major 32B"},
    {128, 256, 64, KBD_DT_f16, rc_f16_m128_n256, "f16 M128 N256 K64 B K-major 128B"},
};
enum { RC_CASES = (int)(sizeof rc_cases / sizeof rc_cases[0]) };

/* pseudo-random values in [-1, 1) with full mantissas (rounded to the 16-bit type when stored) */
static float rc_rand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

/* Runs case c (accumulate 0 or 1) and checks every element against the double reference. */
static void rc_run(int c, int accumulate, long seed) {
  const int m = rc_cases[c].m, n = rc_cases[c].n, k = rc_cases[c].k, dt = rc_cases[c].dt;
  const size_t es = (size_t)KBD_DT_SIZE(dt);
  unsigned char *ha = malloc((size_t)(m * k) * es), *hb = malloc((size_t)(n * k) * es);
  float *hc = malloc(sizeof(float) * (size_t)(m * n)), *hd = malloc(sizeof(float) * (size_t)(m * n));
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hc), assert_non_null(hd);
  uint32_t s = 12345u + 977u * (uint32_t)c;
  for (int i = 0; i < m * k; ++i) kbd_dt_store_f32(ha + (size_t)i * es, dt, rc_rand(&s));
  for (int i = 0; i < n * k; ++i) kbd_dt_store_f32(hb + (size_t)i * es, dt, rc_rand(&s));
  for (int i = 0; i < m * n; ++i) hc[i] = 4.0f * rc_rand(&s);
  void *da, *db, *dc, *dd;
  assert_int_equal(kbd_malloc(&da, (size_t)(m * k) * es).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, (size_t)(n * k) * es).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dc, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, (size_t)(m * k) * es).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, (size_t)(n * k) * es).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dc, hc, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  mt_env(1, seed);
  rc_params p = {da, db, (const float *)dc, (float *)dd, accumulate};
  const kbd_status st = rc_cases[c].run(kbd_cfg_1d(1), p);
  if (st.code != KBD_OK) fail_msg("%s accumulate %d seed %ld: %s", rc_cases[c].name, accumulate, seed, st.msg);
  assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = accumulate ? (double)hc[i * n + j] : 0.0, mag = accumulate ? fabs((double)hc[i * n + j]) : 0.0;
      for (int q = 0; q < k; ++q) {
        const double pr = (double)kbd_dt_load_f32(ha + (size_t)(i * k + q) * es, dt) *
                          (double)kbd_dt_load_f32(hb + (size_t)(j * k + q) * es, dt);
        ref += pr;
        mag += fabs(pr);
      }
      const double tol = 2.0 * (k / 16 + 1) * ldexp(1.0, -24) * mag;
      if (fabs((double)hd[i * n + j] - ref) > tol)
        fail_msg("%s accumulate %d seed %ld: D[%d][%d] = %.9g, want %.9g (tolerance %.3g)", rc_cases[c].name,
                 accumulate, seed, i, j, (double)hd[i * n + j], ref, tol);
    }
  kbd_free(da), kbd_free(db), kbd_free(dc), kbd_free(dd);
  free(ha), free(hb), free(hc), free(hd);
}

static void test_cases(void **state) {
  (void)state;
  for (int c = 0; c < RC_CASES; ++c)
    for (int accumulate = 0; accumulate < 2; ++accumulate)
      for (long seed = -1; seed < 2; ++seed) rc_run(c, accumulate, seed);
}

/* ---- the A-register rule ---------------------------------------------------------------------------------- */

typedef struct rm_params {
  const void *a, *b;
  float *d;
  int mode;
} rm_params;
enum { RM_TWO_READERS, RM_REWRITE, RM_LOOP_WAIT, RM_LOOP_NO_WAIT, RM_ITERS = 3 };
/* the lines of the kbd_mma_rs calls, recorded by the kernel (the CPU machine runs it as host code) */
static int rm_line_first, rm_line_second, rm_line_loop;
#define RM_FILE "test_mma_rs.c"

KBD_KERNEL(rm_kernel, 128, rm_params) {
  KBD_SHARED_STILE(ro_b, b);
  ro_stage_b(b, p.b);
  KBD_ACC(f32, 64, 64) o1;
  KBD_ACC(f32, 64, 64) o2;
  kbd_acc_bind(o1, (kbd_tmem *)0, 0, (uint64_t *)0);
  kbd_acc_bind(o2, (kbd_tmem *)0, 0, (uint64_t *)0);
  if (p.mode == RM_TWO_READERS || p.mode == RM_REWRITE) {
    KBD_ACC_TILE(bf16, 64, 64) a;
    kbd_load2d(a, (const kbd_bf16 *)p.a, 64, 64, 64, 0, 0);
    rm_line_first = __LINE__; kbd_mma_rs(o1, a, b, 0);
    if (p.mode == RM_REWRITE) kbd_fill(a, 0.5f);        /* broken: o1's wgmma may still read a */
    rm_line_second = __LINE__; kbd_mma_rs(o2, a, b, 0);
    kbd_mma_wait(o2); /* wait_group 0: both MMAs */
    KBD_ACC_TILE(f32, 64, 64) r;
    kbd_acc_load(r, o2, 0);
    kbd_store2d(p.d + 64 * 64, r, 64, 64, 64, 0, 0);
  } else {
    for (int it = 0; it < RM_ITERS; ++it) {
      if (p.mode == RM_LOOP_WAIT) kbd_mma_wait(o1); /* retires the previous iteration's MMA before the rewrite */
      KBD_ACC_TILE(bf16, 64, 64) pt;                /* its scope ends while its MMA is still pending */
      kbd_fill(pt, 0.25f * (float)(it + 1));
      rm_line_loop = __LINE__; kbd_mma_rs(o1, pt, b, it > 0);
      kbd_mma_release(o1, (uint64_t *)0); /* wait_group 1: the MMA just issued stays in flight */
    }
  }
  kbd_mma_wait(o1);
  KBD_ACC_TILE(f32, 64, 64) r;
  kbd_acc_load(r, o1, 0);
  kbd_store2d(p.d, r, 64, 64, 64, 0, 0);
}

/* Runs rm_kernel in `mode` under the default schedule; on success checks o1 (and o2 for two readers). */
static kbd_status rm_run(int mode) {
  static float hd[2 * 64 * 64];
  ro_ops o;
  ro_setup(&o, rc_rand, 777u, sizeof hd);
  mt_env(1, -1);
  rm_params p = {o.da, o.db, (float *)o.dd, mode};
  const kbd_status st = rm_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, o.dd, sizeof hd).code, KBD_OK);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double mag, bsum, bmag;
        double ref = ro_dot(&o, i, j, &mag, &bsum, &bmag);
        if (mode == RM_LOOP_WAIT) { /* P = 0.25 (it + 1) everywhere: O = (0.25 + 0.5 + 0.75) * rowsum(B) */
          ref = 1.5 * bsum;
          mag = 1.5 * bmag;
        }
        const double tol = 2.0 * (RM_ITERS * 64 / 16 + 1) * ldexp(1.0, -24) * mag;
        if (fabs((double)hd[i * 64 + j] - ref) > tol)
          fail_msg("mode %d: O[%d][%d] = %.9g, want %.9g", mode, i, j, (double)hd[i * 64 + j], ref);
        if (mode == RM_TWO_READERS && hd[64 * 64 + i * 64 + j] != hd[i * 64 + j])
          fail_msg("two readers: O2[%d][%d] = %.9g differs from O1's %.9g", i, j, (double)hd[64 * 64 + i * 64 + j],
                   (double)hd[i * 64 + j]);
      }
  }
  ro_free(&o);
  return st;
}

static void test_a_two_readers(void **state) {
  (void)state;
  const kbd_status st = rm_run(RM_TWO_READERS);
  if (st.code != KBD_OK) fail_msg("two kbd_mma_rs reading an unchanged tile: %s", st.msg);
}

static void test_a_rewritten(void **state) {
  (void)state;
  const kbd_status st = rm_run(RM_REWRITE);
  assert_int_equal(st.code, KBD_ERR_RACE);
  assert_non_null(strstr(st.msg, "register A changed under a pending wgmma"));
  assert_non_null(strstr(st.msg, "committed and not waited for"));
  assert_true(rm_line_first > 0 && rm_line_second > rm_line_first);
  /* reported where the tile is next handed over, naming the wgmma that read the old values */
  ro_expect_site(st.msg, RM_FILE, rm_line_second, 1);
  ro_expect_site(st.msg, RM_FILE, rm_line_first, 0);
}

static void test_a_loop_wait(void **state) {
  (void)state;
  const kbd_status st = rm_run(RM_LOOP_WAIT);
  if (st.code != KBD_OK) fail_msg("loop with a wait before each rewrite: %s", st.msg);
}

static void test_a_loop_no_wait(void **state) {
  (void)state;
  const kbd_status st = rm_run(RM_LOOP_NO_WAIT);
  assert_int_equal(st.code, KBD_ERR_RACE);
  assert_non_null(strstr(st.msg, "register A changed under a pending wgmma"));
  assert_true(rm_line_loop > 0);
  ro_expect_site(st.msg, RM_FILE, rm_line_loop, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),          cmocka_unit_test(test_a_two_readers), cmocka_unit_test(test_a_rewritten),
      cmocka_unit_test(test_a_loop_wait),    cmocka_unit_test(test_a_loop_no_wait),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
