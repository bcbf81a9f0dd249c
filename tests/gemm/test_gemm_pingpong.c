/* test_gemm_pingpong.c - the sm_90a GEMM's pingpong consumers (gemm_params.pingpong, docs/gemm.md "Pingpong
 * consumers") on the CPU machine emulating sm_90a: each consumer warpgroup computes its own 128 rows of a 256 x 128
 * tile, the two main loops in turn through one ring of 6 stages (the producer loads a tile's top half, then its bottom
 * half), each consumer passing over the other's ring positions and waiting for its turn.
 *   variants     every operand variant (bf16 A and B row- or column-major, e4m3) forced to pingpong, 300 x 200 x 136
 *                (M, N and K edges) on one persistent block: four tiles, so both consumers take several turns and the
 *                ring wraps with the turns
 *   ring         the ring positions against the ring size: 1 k-block per half (K = 40), 9 (K = 520, more than the 6
 *                stages: a skip wraps the ring), a persistent grid of 3 blocks for 6 tiles; and every cluster shape
 *                (2 x 1 shares B, 1 x 2 shares A: the A tile of a stage loaded by one CTA of the row, 2 x 2)
 *   seeds        a 1-CTA and a 2 x 2 cluster launch under 8 schedule seeds x 1 and 2 host threads (other interleavings
 *                of the producer, the turns and the peers)
 *   schedules    the same call with pingpong = -1 and 1 gives the same D, and gemm_args.chosen names the schedule
 *   model        the cost model's pingpong row: pingpong's gain over the cooperative consumers grows as K shrinks
 *                and as the epilogue grows (GPT-2 small's layers, K = 768, with the bias and the tanh GELU, against
 *                8192^3 with alpha only), and the picker takes pingpong for K = 768 with a bias
 * D is compared with the exact product (inputs are multiples of 1/4: every sum is exact in f32, and e4m3 holds them).
 * A wrong ring position or turn shows as a wrong element here, or the CPU machine reports it
 * (test_gemm_pingpong_broken.c). Built for sm_90a only: the sm_100a text has no pingpong (test_gemm_args.c checks that
 * gemm_run refuses it there). */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tune.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm.h"
#include "machine_test.h"

static float pp_a(long long i, long long q) { return (float)((i * 3 + q * 5) % 9 - 4) / 4.0f; }
static float pp_b(long long q, long long j) { return (float)((q + 2 * j) % 7 - 3) / 4.0f; }

typedef struct pp_call {
  long long m, n, k;
  int a_col, b_col, fp8, grid, cluster, cluster_n, pingpong;
} pp_call;
static long pp_threads = 1, pp_seed = 0; /* the CPU machine's host threads and schedule seed (test_seeds) */

/* Runs c (f32 D) and compares every element with the exact product; returns the schedule gemm_run launched. Keeps
 * D in *out (m x n) when out is not NULL. */
static int pp_run(const pp_call *c, float **out) {
  mt_env(pp_threads, pp_seed);
  mt_quiet(1);
  const long long m = c->m, n = c->n, k = c->k;
  const int esz = c->fp8 ? 1 : 2;
  /* leading dimensions padded to 16 bytes, as the TMA requires */
  const long long lda = c->a_col ? (m + 15) / 16 * 16 : (k + 15) / 16 * 16,
                  ldb = c->b_col ? (k + 15) / 16 * 16 : (n + 15) / 16 * 16;
  const long long a_rows = c->a_col ? k : m, b_rows = c->b_col ? n : k;
  unsigned char *ha = calloc((size_t)(a_rows * lda), (size_t)esz), *hb = calloc((size_t)(b_rows * ldb), (size_t)esz);
  float *hd = malloc(sizeof(float) * (size_t)(m * n));
  assert_true(ha && hb && hd);
  for (long long i = 0; i < m; ++i)
    for (long long q = 0; q < k; ++q) {
      const long long at = c->a_col ? q * lda + i : i * lda + q;
      if (c->fp8)
        ((kbd_e4m3 *)ha)[at] = kbd_f32_to_e4m3(pp_a(i, q));
      else
        ((kbd_bf16 *)ha)[at] = kbd_f32_to_bf16(pp_a(i, q));
    }
  for (long long q = 0; q < k; ++q)
    for (long long j = 0; j < n; ++j) {
      const long long at = c->b_col ? j * ldb + q : q * ldb + j;
      if (c->fp8)
        ((kbd_e4m3 *)hb)[at] = kbd_f32_to_e4m3(pp_b(q, j));
      else
        ((kbd_bf16 *)hb)[at] = kbd_f32_to_bf16(pp_b(q, j));
    }
  void *da, *db, *dd;
  assert_int_equal(kbd_malloc(&da, (size_t)(a_rows * lda * esz)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, (size_t)(b_rows * ldb * esz)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, (size_t)(a_rows * lda * esz)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, (size_t)(b_rows * ldb * esz)).code, KBD_OK);
  assert_int_equal(kbd_memset_device(dd, 0xff, sizeof(float) * (size_t)(m * n)).code, KBD_OK); /* NaN */
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = m, g.n = n, g.k = k;
  g.a = da, g.lda = lda, g.b = db, g.ldb = ldb, g.a_col = c->a_col, g.b_col = c->b_col, g.fp8 = c->fp8;
  g.d = dd, g.ldd = n, g.d_f32 = 1;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.grid = c->grid, g.cluster = c->cluster, g.cluster_n = c->cluster_n, g.pingpong = c->pingpong;
  gemm_config chosen;
  g.chosen = &chosen;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_OK)
    fail_msg("%lld x %lld x %lld (a_col %d b_col %d fp8 %d grid %d cluster %d x %d pingpong %d): %s", m, n, k, c->a_col,
             c->b_col, c->fp8, c->grid, c->cluster, c->cluster_n, c->pingpong, st.msg);
  assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      float ref = 0.0f;
      for (long long q = 0; q < k; ++q)
        ref += pp_a(i, q) * pp_b(q, j);
      if (hd[i * n + j] != ref)
        fail_msg("%lld x %lld x %lld (a_col %d b_col %d fp8 %d grid %d cluster %d x %d, %s): D[%lld][%lld] = %.9g, "
                 "want %.9g",
                 m, n, k, c->a_col, c->b_col, c->fp8, c->grid, c->cluster, c->cluster_n, chosen.name, i, j,
                 hd[i * n + j], ref);
    }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb);
  if (out)
    *out = hd;
  else
    free(hd);
  return chosen.pingpong;
}

static void test_variants(void **state) {
  (void)state;
  static const int v[5][3] = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 1}}; /* a_col, b_col, fp8 */
  for (int i = 0; i < 5; ++i) {
    const pp_call c = {300, 200, 136, v[i][0], v[i][1], v[i][2], 1, 1, 1, 1};
    assert_int_equal(pp_run(&c, NULL), 1);
  }
}

static void test_ring(void **state) {
  (void)state;
  static const pp_call calls[] = {
      {300, 200, 40, 0, 0, 0, 1, 1, 1, 1},  /* one k-block per half: every position a turn */
      {300, 200, 520, 0, 1, 0, 1, 1, 1, 1}, /* 9 k-blocks per half: a skip passes a whole ring */
      {700, 300, 200, 1, 0, 0, 3, 1, 1, 1}, /* 3 blocks for 3 x 3 tiles (persistent, uneven) */
      /* clusters, with 2 or 4 k-blocks per half: a stage slot holds either consumer's operands in turn (with 3, a
       * tile pair is exactly the 6 stages and each slot would always hold the same consumer's) */
      {600, 400, 104, 0, 0, 0, 2, 2, 1, 1}, /* a column pair shares B */
      {600, 400, 104, 0, 1, 0, 2, 1, 2, 1}, /* a row pair shares A: stage s's A tile from the CTA of rank s % 2 */
      {600, 400, 200, 1, 1, 0, 4, 2, 2, 1}, /* 2 x 2 */
      {600, 400, 392, 0, 1, 1, 4, 2, 2, 1}, /* 2 x 2, e4m3 (4 k-blocks of 128) */
  };
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
    assert_int_equal(pp_run(&calls[i], NULL), 1);
}

static void test_seeds(void **state) {
  (void)state;
  static const pp_call calls[] = {{300, 200, 104, 0, 1, 0, 1, 1, 1, 1}, {600, 400, 104, 1, 0, 0, 4, 2, 2, 1}};
  for (pp_threads = 1; pp_threads <= 2; ++pp_threads)
    for (pp_seed = 0; pp_seed < 8; ++pp_seed)
      for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        assert_int_equal(pp_run(&calls[i], NULL), 1);
  pp_threads = 1, pp_seed = 0;
}

static void test_schedules(void **state) {
  (void)state;
  pp_call c = {520, 260, 200, 0, 1, 0, 2, 1, 1, -1};
  float *coop, *pp;
  assert_int_equal(pp_run(&c, &coop), 0);
  c.pingpong = 1;
  assert_int_equal(pp_run(&c, &pp), 1);
  assert_memory_equal(coop, pp, sizeof(float) * 520 * 260);
  free(coop), free(pp);
}

/* The model's time of the pingpong and the cooperative configuration of the same cluster shape and grid kind. */
static void pp_model(long long m, long long n, long long k, int bias, int act, double *coop, double *pp) {
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = m, g.n = n, g.k = k, g.bias = bias ? (const float *)&g : NULL, g.act = act, g.alpha = 1.0f;
  gemm_config cfg[GEMM_CONFIGS_MAX];
  const int nc = gemm_configs(&g, 132, cfg);
  *coop = *pp = -1;
  for (int i = 0; i < nc; ++i) {
    if (!strcmp(cfg[i].name, "c2x1.persist")) *coop = gemm_config_estimate(&g, &cfg[i], 90, 132);
    if (!strcmp(cfg[i].name, "pp2x1.persist")) {
      char why[128];
      assert_true(cfg[i].pingpong);
      assert_int_equal(gemm_config_valid(&g, &cfg[i], why, sizeof why), 1);
      *pp = gemm_config_estimate(&g, &cfg[i], 90, 132);
    }
  }
  assert_true(*coop > 0 && *pp > 0);
}

static void test_model(void **state) {
  (void)state;
  double c_big, p_big, c_attn, p_attn, c_fc, p_fc;
  pp_model(8192, 8192, 8192, 0, GEMM_ACT_NONE, &c_big, &p_big);
  pp_model(8192, 2304, 768, 1, GEMM_ACT_NONE, &c_attn, &p_attn);
  pp_model(8192, 3072, 768, 1, GEMM_ACT_GELU_TANH, &c_fc, &p_fc);
  print_message("model: 8192^3 alpha: cooperative %.1f us, pingpong %.1f us; c_attn: %.1f / %.1f us; c_fc: %.1f / "
                "%.1f us\n",
                c_big * 1e6, p_big * 1e6, c_attn * 1e6, p_attn * 1e6, c_fc * 1e6, p_fc * 1e6);
  /* pingpong hides the epilogue: its gain is larger where the epilogue is a larger share of the tile's time */
  assert_true(p_attn < c_attn);
  assert_true(p_fc < c_fc);
  assert_true(c_attn / p_attn > c_big / p_big + 0.05);
  assert_true(c_fc / p_fc > c_attn / p_attn);
  /* the picker (no forced field, tuning off: the model) takes pingpong for K = 768 with a bias */
  gemm_args g;
  memset(&g, 0, sizeof g);
  const long long m = 256, n = 128, k = 768;
  void *da, *db, *dd, *dbias;
  assert_int_equal(kbd_malloc(&da, 2 * m * k).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, 2 * n * k).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, 2 * m * n).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dbias, 4 * n).code, KBD_OK);
  assert_int_equal(kbd_memset_device(da, 0, 2 * m * k).code, KBD_OK);
  assert_int_equal(kbd_memset_device(db, 0, 2 * n * k).code, KBD_OK);
  assert_int_equal(kbd_memset_device(dbias, 0, 4 * n).code, KBD_OK);
  g.m = m, g.n = n, g.k = k, g.a = da, g.lda = k, g.b = db, g.ldb = n, g.d = dd, g.ldd = n, g.bias = dbias;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  kbd_tune_opts o = kbd_tune_opts_default();
  o.tune = 0, o.cache_path = "off"; /* the model's pick, not a cached one */
  gemm_config chosen;
  g.tune = &o, g.chosen = &chosen;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_OK) fail_msg("%s", st.msg);
  if (!chosen.pingpong) fail_msg("the model picked %s (%s) for K = 768 with a bias", chosen.name, chosen.reason);
  kbd_free(da), kbd_free(db), kbd_free(dd), kbd_free(dbias);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_variants), cmocka_unit_test(test_ring),
                                     cmocka_unit_test(test_seeds), cmocka_unit_test(test_schedules),
                                     cmocka_unit_test(test_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
