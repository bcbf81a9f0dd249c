/* test_acc_discard.c - kbd_acc_discard (kbd/mma.h) and kbd_mma_rs_pin (kbd/mma_rs.h) on the CPU machine emulating
 * sm_90a (KBD_CPU_ARCH=90): the two calls attention's main loop makes between rounding P out of S's registers and
 * issuing the next S = Q K^T into them (examples/attention/attention_kernel.h, ATTN_P_ROUND).
 *
 *   test_discard_then_mma   an accumulator holding 1.0 is discarded: read back it is NaN in every element (the
 *                           machine's poison: a read the caller thought dead shows); kbd_mma_rs with accumulate 0
 *                           then overwrites it with A B^T (against a double reference)
 *   test_discard_pending    discarding an accumulator a pending wgmma still writes: KBD_ERR_RACE at the discard's
 *                           line, naming the wgmma's line
 *   test_pin_rewritten      a register A tile rewritten under the pending wgmma that read it: kbd_mma_rs_pin reports
 *                           it at the pin's line (the check kbd_mma_rs makes, run where the tile is computed)
 *   test_pin_after_wait     the same rewrite after kbd_mma_wait: no report
 * each under the default schedule.
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
#error "test_acc_discard.c emulates sm_90a: build it with -DKBD_CPU_ARCH=90"
#endif

typedef struct ad_params {
  const void *a, *b;
  float *d; /* [2][64][64]: the accumulator right after the discard, then after the MMA */
  int mode;
} ad_params;
enum { AD_DISCARD_MMA, AD_DISCARD_PENDING, AD_PIN_REWRITTEN, AD_PIN_AFTER_WAIT };
static int ad_line_mma, ad_line_call; /* recorded by the kernel (the CPU machine runs it as host code) */
#define AD_FILE "test_acc_discard.c"

KBD_KERNEL(ad_kernel, 128, ad_params) {
  KBD_SHARED_STILE(ro_b, b);
  ro_stage_b(b, p.b);
  KBD_ACC(f32, 64, 64) o;
  kbd_acc_bind(o, (kbd_tmem *)0, 0, (uint64_t *)0);
  KBD_ACC_TILE(bf16, 64, 64) a;
  kbd_load2d(a, (const kbd_bf16 *)p.a, 64, 64, 64, 0, 0);
  KBD_ACC_TILE(f32, 64, 64) r;
  if (p.mode == AD_DISCARD_MMA) {
    kbd_fill(r, 1.0f);
    kbd_acc_store(o, r, 0);
    kbd_acc_discard(o);
    kbd_acc_load(r, o, 0);
    kbd_store2d(p.d, r, 64, 64, 64, 0, 0);
    kbd_mma_rs(o, a, b, 0);
  } else if (p.mode == AD_DISCARD_PENDING) {
    /* each __LINE__ is the line of the call after it: one line each */
    // clang-format off
    ad_line_mma = __LINE__; kbd_mma_rs(o, a, b, 0);
    ad_line_call = __LINE__; kbd_acc_discard(o); /* broken: the wgmma still writes o */
    // clang-format on
  } else {
    // clang-format off
    ad_line_mma = __LINE__; kbd_mma_rs(o, a, b, 0);
    if (p.mode == AD_PIN_AFTER_WAIT) kbd_mma_wait(o);
    kbd_fill(a, 0.5f); /* AD_PIN_REWRITTEN: the wgmma may still read a */
    ad_line_call = __LINE__; kbd_mma_rs_pin(a);
    // clang-format on
  }
  kbd_mma_wait(o);
  kbd_acc_load(r, o, 0);
  kbd_store2d(p.d + 64 * 64, r, 64, 64, 64, 0, 0);
}

static float ad_rand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* Runs ad_kernel in `mode` under the default schedule; on success checks the result of the MMA (and, for
 * AD_DISCARD_MMA, that the discarded accumulator read back as NaN). */
static kbd_status ad_run(int mode) {
  static float hd[2 * 64 * 64];
  ro_ops o;
  ro_setup(&o, ad_rand, 4242u, sizeof hd);
  mt_env(1, -1);
  ad_params p = {o.da, o.db, (float *)o.dd, mode};
  const kbd_status st = ad_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, o.dd, sizeof hd).code, KBD_OK);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        if (mode == AD_DISCARD_MMA && !isnan(hd[i * 64 + j]))
          fail_msg("discarded accumulator[%d][%d] reads %.9g, want NaN", i, j, (double)hd[i * 64 + j]);
        double mag;
        const double ref = ro_dot(&o, i, j, &mag, NULL, NULL);
        const double tol = 2.0 * (64 / 16 + 1) * ldexp(1.0, -24) * mag, got = hd[64 * 64 + i * 64 + j];
        if (!(fabs(got - ref) <= tol)) fail_msg("mode %d: O[%d][%d] = %.9g, want %.9g", mode, i, j, got, ref);
      }
  }
  ro_free(&o);
  return st;
}

static void test_discard_then_mma(void **state) {
  (void)state;
  const kbd_status st = ad_run(AD_DISCARD_MMA);
  if (st.code != KBD_OK) fail_msg("discard, then an overwriting MMA: %s", st.msg);
}

static void test_discard_pending(void **state) {
  (void)state;
  const kbd_status st = ad_run(AD_DISCARD_PENDING);
  assert_int_equal(st.code, KBD_ERR_RACE);
  assert_non_null(strstr(st.msg, "kbd_acc_discard before wgmma.wait_group"));
  assert_true(ad_line_mma > 0 && ad_line_call > ad_line_mma);
  ro_expect_site(st.msg, AD_FILE, ad_line_call, 1);
  ro_expect_site(st.msg, AD_FILE, ad_line_mma, 0);
}

static void test_pin_rewritten(void **state) {
  (void)state;
  const kbd_status st = ad_run(AD_PIN_REWRITTEN);
  assert_int_equal(st.code, KBD_ERR_RACE);
  assert_non_null(strstr(st.msg, "register A changed under a pending wgmma"));
  ro_expect_site(st.msg, AD_FILE, ad_line_call, 1);
  ro_expect_site(st.msg, AD_FILE, ad_line_mma, 0);
}

static void test_pin_after_wait(void **state) {
  (void)state;
  const kbd_status st = ad_run(AD_PIN_AFTER_WAIT);
  if (st.code != KBD_OK) fail_msg("a rewrite after the wait, then kbd_mma_rs_pin: %s", st.msg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_discard_then_mma),
      cmocka_unit_test(test_discard_pending),
      cmocka_unit_test(test_pin_rewritten),
      cmocka_unit_test(test_pin_after_wait),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
