/* test_gemm_args.c - gemm_run (examples/gemm/gemm_run.c) rejects every bad argument it checks with
 * KBD_ERR_INVALID and a message naming the argument, and launches nothing: D keeps its sentinel bytes (a launch
 * writes every element of D, and the control below shows that write is seen). Each case starts from a valid
 * call and changes one field. M, N or K of zero is a no-op: OK, D untouched. Runs on the CPU machine for the
 * emulated arch of the target (sm_100a: the MMA-warp kernel, and the CTA-pair kernel for a valid pair call and
 * its refusals - another layout, cluster options - and pingpong refused there; sm_90a: the consumer-warpgroup
 * kernel with both consumer schedules, cooperative and pingpong, for the valid call, pair refused there, and
 * pingpong with pair refused).
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm.h"
#include "machine_test.h"

/* A valid problem: 70 x 40 x 96, bf16, row-major A and B, bf16 D. Buffers have slack so a misaligned pointer into
 * them stays inside the allocation. */
#define GA_M 70
#define GA_N 40
#define GA_K 96
#define GA_SLACK 256
static kbd_bf16 *ga_a, *ga_b, *ga_c;
static unsigned char *ga_d;
static const size_t ga_dbytes = (size_t)GA_M * GA_N * 4 + GA_SLACK; /* room for an f32 D */

static int ga_setup(void **state) {
  (void)state;
  mt_env(1, 0);
  mt_quiet(1);
  kbd_bf16 ha[GA_M * GA_K], hb[GA_K * GA_N], hc[GA_M * GA_N];
  for (int i = 0; i < GA_M * GA_K; ++i) ha[i] = kbd_f32_to_bf16((float)(i % 7 - 3) / 4.0f);
  for (int i = 0; i < GA_K * GA_N; ++i) hb[i] = kbd_f32_to_bf16((float)(i % 5 - 2) / 4.0f);
  for (int i = 0; i < GA_M * GA_N; ++i) hc[i] = kbd_f32_to_bf16(1.0f);
  if (!kbd_ok(kbd_malloc((void **)&ga_a, sizeof ha + GA_SLACK)) ||
      !kbd_ok(kbd_malloc((void **)&ga_b, sizeof hb + GA_SLACK)) ||
      !kbd_ok(kbd_malloc((void **)&ga_c, sizeof hc + GA_SLACK)) || !kbd_ok(kbd_malloc((void **)&ga_d, ga_dbytes)))
    return -1;
  if (!kbd_ok(kbd_copy_to_device(ga_a, ha, sizeof ha)) || !kbd_ok(kbd_copy_to_device(ga_b, hb, sizeof hb)) ||
      !kbd_ok(kbd_copy_to_device(ga_c, hc, sizeof hc)))
    return -1;
  return 0;
}
static int ga_teardown(void **state) {
  (void)state;
  kbd_free(ga_a), kbd_free(ga_b), kbd_free(ga_c), kbd_free(ga_d);
  return 0;
}

static gemm_args ga_valid(void) {
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = GA_M, g.n = GA_N, g.k = GA_K;
  g.a = ga_a, g.lda = GA_K, g.b = ga_b, g.ldb = GA_N;
  g.d = ga_d, g.ldd = GA_N;
  g.c = ga_c, g.ldc = GA_N;
  g.alpha = 1.0f, g.beta = 0.5f, g.scale_a = g.scale_b = 1.0f;
  return g;
}

/* Fills D with the sentinel 0x5A, runs, and reports whether any byte of D changed. */
static int ga_run(const gemm_args *g, kbd_status *st) {
  assert_int_equal(kbd_memset_device(ga_d, 0x5A, ga_dbytes).code, KBD_OK);
  *st = gemm_run(g, NULL);
  unsigned char *h = malloc(ga_dbytes);
  assert_non_null(h);
  assert_int_equal(kbd_copy_to_host(h, ga_d, ga_dbytes).code, KBD_OK);
  int changed = 0;
  for (size_t i = 0; i < ga_dbytes; ++i) changed |= h[i] != 0x5A;
  free(h);
  return changed;
}

/* The control: the valid call writes D, and the values are right (exact: small multiples of 1/4 and 1/16); on
 * sm_100a also through the CTA-pair kernel (B column-major: the same values, ldb = K). */
static void ga_check_valid(int pair, int pingpong) {
  gemm_args g = ga_valid();
  gemm_config chosen;
  g.pingpong = pingpong, g.chosen = &chosen;
  if (pair) { /* B[q][j] at j * K + q: a column-major copy of the same B */
    kbd_bf16 hb[GA_K * GA_N];
    for (int q = 0; q < GA_K; ++q)
      for (int j = 0; j < GA_N; ++j) hb[j * GA_K + q] = kbd_f32_to_bf16((float)((q * GA_N + j) % 5 - 2) / 4.0f);
    assert_int_equal(kbd_copy_to_device(ga_b, hb, sizeof hb).code, KBD_OK);
    g.pair = 1, g.b_col = 1, g.ldb = GA_K;
  }
  kbd_status st;
  assert_int_equal(ga_run(&g, &st), 1);
  assert_int_equal(st.code, KBD_OK);
  if (pingpong) assert_int_equal(chosen.pingpong, pingpong > 0); /* the schedule asked for ran */
  kbd_bf16 hd[GA_M * GA_N];
  assert_int_equal(kbd_copy_to_host(hd, ga_d, sizeof hd).code, KBD_OK);
  for (int i = 0; i < GA_M; ++i)
    for (int j = 0; j < GA_N; ++j) {
      double ref = 0.5;
      for (int q = 0; q < GA_K; ++q) ref += (double)((i * GA_K + q) % 7 - 3) / 4.0 * ((q * GA_N + j) % 5 - 2) / 4.0;
      const double got = kbd_bf16_to_f32(hd[i * GA_N + j]);
      if (got != (double)kbd_bf16_to_f32(kbd_f32_to_bf16((float)ref)))
        fail_msg("pair %d pingpong %d: D[%d][%d] = %g, want %g", pair, pingpong, i, j, got, ref);
    }
  if (pair) { /* restore the row-major B the other cases use */
    kbd_bf16 hb[GA_K * GA_N];
    for (int i = 0; i < GA_K * GA_N; ++i) hb[i] = kbd_f32_to_bf16((float)(i % 5 - 2) / 4.0f);
    assert_int_equal(kbd_copy_to_device(ga_b, hb, sizeof hb).code, KBD_OK);
  }
}
static void test_valid(void **state) {
  (void)state;
  ga_check_valid(0, 0);
#if KBD_CPU_ARCH == 100
  ga_check_valid(1, 0);
#else
  ga_check_valid(0, 1);
  ga_check_valid(0, -1);
#endif
}

/* Each activation of the default epilogue (gemm.h's gemm_act) with alpha, beta * C and the bias, f32 D, against a
 * double reference of its own formula: y = 0.75 * A B + 0.5 * C + bias, then none, relu, gelu (erf) or gelu_tanh
 * (GPT-2's 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3)))). The tolerance is 4e-6 * (1 + |y|): the f32 epilogue's
 * rounding and kbd_gelu_tanh's few ulp (kbd/tile_ops.h), far below the 1e-4 .. 2e-4 that the two GELU forms differ
 * by around |y| = 1 .. 3, so each case also proves that the neighbouring activation's formula would fail it: a kernel
 * that applied gelu for gelu_tanh (or nothing) fails here. */
static double ga_act_ref(int act, double y) {
  if (act == GEMM_ACT_RELU) return y > 0 ? y : 0;
  if (act == GEMM_ACT_GELU) return 0.5 * y * (1.0 + erf(y / sqrt(2.0)));
  if (act == GEMM_ACT_GELU_TANH)
    return 0.5 * y * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (y + 0.044715 * y * y * y)));
  return y;
}
static void test_activations(void **state) {
  (void)state;
  float hbias[GA_N];
  for (int j = 0; j < GA_N; ++j)
    hbias[j] = (float)(j % 9 - 4) / 8.0f;
  float *bias;
  assert_int_equal(kbd_malloc((void **)&bias, sizeof hbias).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(bias, hbias, sizeof hbias).code, KBD_OK);
  float *hc = malloc(sizeof(float) * GA_M * GA_N), *hd = malloc(sizeof(float) * GA_M * GA_N);
  assert_non_null(hc), assert_non_null(hd);
  for (int i = 0; i < GA_M * GA_N; ++i)
    hc[i] = (float)(i % 11 - 5) / 4.0f;
  float *c;
  assert_int_equal(kbd_malloc((void **)&c, sizeof(float) * GA_M * GA_N).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(c, hc, sizeof(float) * GA_M * GA_N).code, KBD_OK);
  const int acts[] = {GEMM_ACT_NONE, GEMM_ACT_RELU, GEMM_ACT_GELU, GEMM_ACT_GELU_TANH};
  for (int ai = 0; ai < 4; ++ai) {
    const int act = acts[ai];
    gemm_args g = ga_valid();
    g.d_f32 = 1, g.d = ga_d, g.ldd = GA_N;
    g.c = c, g.ldc = GA_N; /* f32, as D */
    g.alpha = 0.75f, g.bias = bias, g.act = act;
    const kbd_status st = gemm_run(&g, NULL);
    if (st.code != KBD_OK) fail_msg("act %d: %s", act, st.msg);
    assert_int_equal(kbd_copy_to_host(hd, ga_d, sizeof(float) * GA_M * GA_N).code, KBD_OK);
    int told_apart = 0; /* elements where the other formula (gelu <-> gelu_tanh, none <-> relu) is out of tolerance */
    const int other = act == GEMM_ACT_GELU        ? GEMM_ACT_GELU_TANH
                      : act == GEMM_ACT_GELU_TANH ? GEMM_ACT_GELU
                      : act == GEMM_ACT_RELU      ? GEMM_ACT_NONE
                                                  : GEMM_ACT_RELU;
    for (int i = 0; i < GA_M; ++i)
      for (int j = 0; j < GA_N; ++j) {
        double y = 0;
        for (int q = 0; q < GA_K; ++q)
          y += (double)((i * GA_K + q) % 7 - 3) / 4.0 * ((q * GA_N + j) % 5 - 2) / 4.0;
        y = 0.75 * y + 0.5 * hc[i * GA_N + j] + hbias[j];
        const double ref = ga_act_ref(act, y), got = hd[i * GA_N + j], tol = 4e-6 * (1.0 + fabs(y));
        if (fabs(got - ref) > tol)
          fail_msg("act %d: D[%d][%d] = %.9g, want %.9g (pre-activation %.9g)", act, i, j, got, ref, y);
        told_apart += fabs(ga_act_ref(other, y) - ref) > tol;
      }
    if (told_apart < 10)
      fail_msg("act %d: only %d elements tell it from act %d: the check is blind", act, told_apart, other);
  }
  free(hc), free(hd);
  kbd_free(c), kbd_free(bias);
}

/* One changed field, the message fragment it must produce. */
typedef struct ga_case {
  const char *what, *msg;
  void (*edit)(gemm_args *);
} ga_case;
static void e_null_args(gemm_args *g) { (void)g; }
static void e_neg_m(gemm_args *g) { g->m = -1; }
static void e_huge_k(gemm_args *g) { g->k = (1ll << 31) + 1; }
static void e_act(gemm_args *g) { g->act = 7; }
static void e_fp8_layout(gemm_args *g) { g->fp8 = 1, g->b_col = 0; }
static void e_alpha(gemm_args *g) { g->alpha = (float)NAN; }
static void e_grid(gemm_args *g) { g->grid = -3; }
static void e_cluster(gemm_args *g) { g->cluster = 3; }
static void e_cluster_n(gemm_args *g) { g->cluster_n = -1; }
static void e_null_a(gemm_args *g) { g->a = NULL; }
static void e_null_b(gemm_args *g) { g->b = NULL; }
static void e_null_d(gemm_args *g) { g->d = NULL; }
static void e_mis_a(gemm_args *g) { g->a = (const char *)g->a + 2; }
static void e_mis_d(gemm_args *g) { g->d = (char *)g->d + 8; }
static void e_short_lda(gemm_args *g) { g->lda = GA_K - 8; }
static void e_short_ldb_col(gemm_args *g) { g->b_col = 1, g->ldb = GA_N; } /* column-major B needs ldb >= K */
static void e_odd_ldb(gemm_args *g) { g->ldb = GA_N + 4; }                 /* 88 bytes: not a multiple of 16 */
static void e_odd_ldd(gemm_args *g) { g->ldd = GA_N + 1; }
static void e_null_c(gemm_args *g) { g->c = NULL; }
static void e_short_ldc(gemm_args *g) { g->ldc = GA_N - 1; }
static void e_mis_c(gemm_args *g) { g->c = (const char *)g->c + 1; }
static void e_mis_bias(gemm_args *g) { g->bias = (const float *)((const char *)ga_c + 2); }
static void e_pair(gemm_args *g) { g->pair = 2; }
static void e_pingpong(gemm_args *g) { g->pingpong = 2; }
#if KBD_CPU_ARCH == 100
static void e_pair_layout(gemm_args *g) { g->pair = 1; } /* B row-major: the pair kernel takes a K-major B */
static void e_pair_cluster(gemm_args *g) { g->pair = 1, g->b_col = 1, g->ldb = GA_K, g->cluster = 2; }
static void e_pingpong_arch(gemm_args *g) { g->pingpong = 1; }
#else
static void e_pair_arch(gemm_args *g) { g->pair = 1, g->b_col = 1, g->ldb = GA_K; }
static void e_pingpong_pair(gemm_args *g) { g->pingpong = 1, g->pair = 1, g->b_col = 1, g->ldb = GA_K; }
#endif

static const ga_case ga_cases[] = {
    {"args NULL", "args is NULL", e_null_args},
    {"m < 0", "m = -1", e_neg_m},
    {"k > 2^31", "at most 2^31", e_huge_k},
    {"act", "act = 7", e_act},
    {"fp8 layout", "fp8 takes a row-major A and a column-major B", e_fp8_layout},
    {"alpha NaN", "alpha = nan", e_alpha},
    {"grid", "grid = -3", e_grid},
    {"cluster", "cluster = 3", e_cluster},
    {"cluster_n", "cluster_n = -1: 0 (one), 1 or 2 CTAs per cluster along N", e_cluster_n},
    {"a NULL", "a is NULL", e_null_a},
    {"b NULL", "b is NULL", e_null_b},
    {"d NULL", "d is NULL", e_null_d},
    {"a misaligned", "is not 16-byte aligned", e_mis_a},
    {"d misaligned", "d = ", e_mis_d},
    {"lda short", "lda = 88 is shorter than a row of a", e_short_lda},
    {"ldb short (column-major)", "ldb = 40 is shorter than a row of b (96", e_short_ldb_col},
    {"ldb bytes", "ldb = 44 elements = 88 bytes", e_odd_ldb},
    {"ldd bytes", "ldd = 41 elements", e_odd_ldd},
    {"c NULL with beta", "c is NULL but beta = 0.5", e_null_c},
    {"ldc short", "ldc = 39", e_short_ldc},
    {"c misaligned", "c = ", e_mis_c},
    {"bias misaligned", "bias = ", e_mis_bias},
    {"pair", "pair = 2: 0 or 1", e_pair},
#if KBD_CPU_ARCH == 100
    {"pair layout", "pair = 1 takes bf16 A row-major and B column-major", e_pair_layout},
    {"pair cluster", "the pair is the cluster (2 CTAs)", e_pair_cluster},
    {"pingpong sm_100a", "pingpong consumers exist in the sm_90a kernel only", e_pingpong_arch},
#else
    {"pair sm_90a", "CTA pairs (tcgen05 .cta_group::2) exist on sm_100a only", e_pair_arch},
    {"pingpong with pair", "pingpong = 1 with pair = 1", e_pingpong_pair},
#endif
    {"pingpong", "pingpong = 2: 1 (pingpong consumers), -1 (cooperative consumers) or 0", e_pingpong},
};

static void test_rejects(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof ga_cases / sizeof ga_cases[0]; ++i) {
    gemm_args g = ga_valid();
    ga_cases[i].edit(&g);
    kbd_status st;
    const int changed = ga_run(ga_cases[i].edit == e_null_args ? NULL : &g, &st);
    if (st.code != KBD_ERR_INVALID) fail_msg("%s: code %d (%s), want KBD_ERR_INVALID", ga_cases[i].what, st.code, st.msg);
    if (!strstr(st.msg, "gemm_run: ") || !strstr(st.msg, ga_cases[i].msg))
      fail_msg("%s: message \"%s\" lacks \"%s\"", ga_cases[i].what, st.msg, ga_cases[i].msg);
    if (changed) fail_msg("%s: D was written although the call was refused", ga_cases[i].what);
  }
}

/* Zero sizes are no-ops: OK and nothing written, even with NULL operands (they are not read). */
static void test_zero_sizes(void **state) {
  (void)state;
  for (int which = 0; which < 3; ++which) {
    gemm_args g = ga_valid();
    if (which == 0) g.m = 0;
    if (which == 1) g.n = 0;
    if (which == 2) g.k = 0, g.a = NULL, g.b = NULL;
    kbd_status st;
    const int changed = ga_run(&g, &st);
    assert_int_equal(st.code, KBD_OK);
    assert_int_equal(changed, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_activations),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_zero_sizes),
  };
  return cmocka_run_group_tests(tests, ga_setup, ga_teardown);
}
