/* test_tune_gemm.c - gemm_run's picker (examples/gemm/gemm_run.c) on the CPU machine, for the emulated arch of the
 * target (KBD_CPU_ARCH):
 *   every_config      every candidate of gemm_configs that gemm_config_valid accepts (on sm_90a the pingpong
 *                     consumers with every cluster shape too, on sm_100a never), forced by name one at a time,
 *                     on three shapes (one tile; 2 x 2 tiles; 3 x 4 tiles with K, M and N edges), with B row-major and
 *                     column-major (the CTA-pair kernel's layout on sm_100a), on a device of 5 SMs (so the grid kinds
 *                     differ): D against a double reference, and the launch is the one named
 *   model_pick        tuning off: the pick is the model's, valid, the same twice; forced fields (cluster, pair,
 *                     grid) narrow it
 *   measured_pick     tuning on with a fake timer that calls one configuration fastest: gemm_run measures every valid
 *                     candidate (each checked against the default's D), launches and stores that one, and the next
 *                     call is a cache hit; D is right both times
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tune.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm.h"

static float tg_value(long long i, unsigned salt) {
  const unsigned long long h = ((unsigned long long)i + salt) * 0x9E3779B97F4A7C15ull;
  return (float)((int)((h >> 40) % 17u) - 8) / 8.0f;
}

typedef struct tg_problem {
  long long m, n, k;
  int b_col;
  float *fa, *fb; /* the values, row-major A (m x k) and B (k x n) */
  void *da, *db, *dd;
  double *ref;
} tg_problem;

static void tg_make(tg_problem *p, long long m, long long n, long long k, int b_col) {
  memset(p, 0, sizeof *p);
  p->m = m, p->n = n, p->k = k, p->b_col = b_col;
  p->fa = (float *)malloc(sizeof(float) * (size_t)(m * k));
  p->fb = (float *)malloc(sizeof(float) * (size_t)(k * n));
  p->ref = (double *)malloc(sizeof(double) * (size_t)(m * n));
  kbd_bf16 *ha = (kbd_bf16 *)malloc(sizeof(kbd_bf16) * (size_t)(m * k));
  kbd_bf16 *hb = (kbd_bf16 *)malloc(sizeof(kbd_bf16) * (size_t)(k * n));
  assert_true(p->fa && p->fb && p->ref && ha && hb);
  for (long long i = 0; i < m * k; ++i)
    p->fa[i] = tg_value(i, 1), ha[i] = kbd_f32_to_bf16(p->fa[i]);
  for (long long q = 0; q < k; ++q)
    for (long long j = 0; j < n; ++j) {
      p->fb[q * n + j] = tg_value(q * n + j, 2);
      hb[b_col ? j * k + q : q * n + j] = kbd_f32_to_bf16(p->fb[q * n + j]);
    }
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      double s = 0;
      for (long long q = 0; q < k; ++q)
        s += (double)p->fa[i * k + q] * p->fb[q * n + j];
      p->ref[i * n + j] = s;
    }
  assert_int_equal(kbd_malloc(&p->da, sizeof(kbd_bf16) * (size_t)(m * k)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&p->db, sizeof(kbd_bf16) * (size_t)(k * n)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&p->dd, sizeof(float) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(p->da, ha, sizeof(kbd_bf16) * (size_t)(m * k)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(p->db, hb, sizeof(kbd_bf16) * (size_t)(k * n)).code, KBD_OK);
  free(ha), free(hb);
}

static void tg_free(tg_problem *p) {
  kbd_free(p->da), kbd_free(p->db), kbd_free(p->dd);
  free(p->fa), free(p->fb), free(p->ref);
}

static gemm_args tg_args(const tg_problem *p) {
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = p->m, g.n = p->n, g.k = p->k;
  g.a = p->da, g.lda = p->k, g.b = p->db, g.ldb = p->b_col ? p->k : p->n, g.b_col = p->b_col;
  g.d = p->dd, g.ldd = p->n, g.d_f32 = 1, g.alpha = 1.0f;
  g.sms = 5;
  return g;
}

/* Runs g (D poisoned first) and checks D; the summation of exact products in f32 is within (K + 8) 2^-24 of sum|a b|.
 */
static void tg_run_check(const tg_problem *p, const gemm_args *g, const char *what) {
  assert_int_equal(kbd_memset_device(p->dd, 0xff, sizeof(float) * (size_t)(p->m * p->n)).code, KBD_OK);
  const kbd_status s = gemm_run(g, NULL);
  if (!kbd_ok(s)) fail_msg("%s: %s", what, s.msg);
  float *hd = (float *)malloc(sizeof(float) * (size_t)(p->m * p->n));
  assert_non_null(hd);
  assert_int_equal(kbd_copy_to_host(hd, p->dd, sizeof(float) * (size_t)(p->m * p->n)).code, KBD_OK);
  for (long long i = 0; i < p->m; ++i)
    for (long long j = 0; j < p->n; ++j) {
      double mag = 0;
      for (long long q = 0; q < p->k; ++q)
        mag += fabs((double)p->fa[i * p->k + q] * p->fb[q * p->n + j]);
      const double want = p->ref[i * p->n + j], got = hd[i * p->n + j];
      if (!(fabs(got - want) <= (double)(p->k + 8) * 0x1p-24 * mag + 1e-6)) {
        free(hd);
        fail_msg("%s: %lld x %lld x %lld: D[%lld][%lld] = %.9g, want %.9g", what, p->m, p->n, p->k, i, j, got, want);
      }
    }
  free(hd);
}

static const long long tg_shapes[3][3] = {{70, 40, 96}, {300, 200, 152}, {520, 400, 104}};

static void test_every_config(void **state) {
  (void)state;
  int ran = 0, ran_pair = 0, ran_c22 = 0, ran_tile = 0, ran_balanced = 0, ran_pp = 0;
  for (int s = 0; s < 3; ++s)
    for (int b_col = 0; b_col < 2; ++b_col) {
      tg_problem p;
      tg_make(&p, tg_shapes[s][0], tg_shapes[s][1], tg_shapes[s][2], b_col);
      gemm_args g = tg_args(&p);
      gemm_config cfg[GEMM_CONFIGS_MAX];
      const int n = gemm_configs(&g, g.sms, cfg);
      assert_true(n > 0 && n <= GEMM_CONFIGS_MAX);
      kbd_tune_opts o = kbd_tune_opts_default();
      o.tune = 0, o.log = 0, o.cache_path = "off";
      for (int i = 0; i < n; ++i) {
        char why[200] = "", what[160];
        if (!gemm_config_valid(&g, &cfg[i], why, sizeof why)) {
          assert_true(why[0] != '\0'); /* an invalid candidate says why */
          continue;
        }
        gemm_config chosen;
        o.force = cfg[i].name;
        g.tune = &o, g.chosen = &chosen;
        snprintf(what, sizeof what, "config %s (b_col %d)", cfg[i].name, b_col);
        tg_run_check(&p, &g, what);
        /* the launch is the one named, or an earlier name for the same launch */
        assert_int_equal(chosen.pair, cfg[i].pair);
        assert_int_equal(chosen.cluster, cfg[i].cluster);
        assert_int_equal(chosen.cluster_n, cfg[i].cluster_n);
        assert_int_equal(chosen.pingpong, cfg[i].pingpong);
        assert_string_equal(chosen.reason, "forced");
        ++ran;
        ran_pp += cfg[i].pingpong;
        ran_pair += cfg[i].pair, ran_c22 += cfg[i].cluster == 2 && cfg[i].cluster_n == 2;
        ran_tile += cfg[i].grid_kind == GEMM_GRID_TILE, ran_balanced += cfg[i].grid_kind == GEMM_GRID_BALANCED;
      }
      tg_free(&p);
    }
  print_message("tune_gemm sm_%d: %d forced configurations run (%d pair, %d 2x2 clusters, %d pingpong)\n", KBD_CPU_ARCH,
                ran, ran_pair, ran_c22, ran_pp);
  assert_true(ran >= 30);
  assert_true(ran_c22 > 0 && ran_tile > 0 && ran_balanced > 0);
  if (KBD_CPU_ARCH == 100) {
    assert_true(ran_pair > 0);
    assert_int_equal(ran_pp, 0); /* no pingpong consumers on sm_100a: never valid */
  } else {
    assert_int_equal(ran_pair, 0); /* no pair kernel on sm_90a: never valid */
    assert_true(ran_pp >= 12);     /* the pingpong consumers with every cluster shape */
  }
}

static void test_model_pick(void **state) {
  (void)state;
  tg_problem p;
  tg_make(&p, 520, 400, 104, 1);
  gemm_args g = tg_args(&p);
  kbd_tune_opts o = kbd_tune_opts_default();
  o.tune = 0, o.log = 0, o.cache_path = "off";
  gemm_config c1, c2;
  g.tune = &o, g.chosen = &c1;
  tg_run_check(&p, &g, "model pick");
  assert_string_equal(c1.reason, "model");
  char why[200];
  assert_true(gemm_config_valid(&g, &c1, why, sizeof why));
  g.chosen = &c2;
  tg_run_check(&p, &g, "model pick again");
  assert_string_equal(c1.name, c2.name);
  /* forced fields narrow the choice: each value of each (one of them is not the model's own pick) */
  for (int v = 1; v <= 2; ++v) {
    g.cluster = v, g.cluster_n = 0;
    tg_run_check(&p, &g, "cluster forced");
    assert_int_equal(c2.cluster, v);
    assert_int_equal(c2.pair, 0); /* a forced cluster shape is the 1-SM kernel's */
    g.cluster = 0, g.cluster_n = v;
    tg_run_check(&p, &g, "cluster_n forced");
    assert_int_equal(c2.cluster_n, v);
    assert_int_equal(c2.pair, 0);
  }
  if (KBD_CPU_ARCH == 100) {
    g.cluster_n = 0, g.pair = 1;
    tg_run_check(&p, &g, "pair forced");
    assert_int_equal(c2.pair, 1);
  }
  g.cluster_n = 0, g.pair = -1;
  tg_run_check(&p, &g, "no pair");
  assert_int_equal(c2.pair, 0);
  g.pair = 0, g.grid = 3;
  tg_run_check(&p, &g, "grid 3");
  assert_int_equal(c2.grid, 3);
  tg_free(&p);
}

/* The fake timer: 1 ms, and 0.25 ms for the configuration named tg_fast; each call runs the launch (the CPU machine).
 */
static const char *tg_fast;
static int tg_timed;
static kbd_status tg_time(void *ctx, const kbd_tune_space *sp, int index, double *ms) {
  (void)ctx;
  ++tg_timed;
  *ms = strcmp(sp->cand[index].name, tg_fast) ? 1.0 : 0.25;
  return sp->launch(sp->cand[index].config, sp->shape, sp->ctx);
}

static void test_measured_pick(void **state) {
  (void)state;
  char dir[64] = "/tmp/kbd_tune_gemm_XXXXXX", cache[128];
  assert_non_null(mkdtemp(dir));
  snprintf(cache, sizeof cache, "%s/tune.txt", dir);
  tg_problem p;
  tg_make(&p, 520, 400, 104, 1);
  gemm_args g = tg_args(&p);
  const kbd_tune_timer timer = {tg_time, NULL};
  kbd_tune_opts o = kbd_tune_opts_default();
  o.tune = 1, o.log = 0, o.cache_path = cache, o.timer = &timer, o.warmup = 0, o.reps = 3;
  tg_fast = "c1x2.tile"; /* valid and unlike any other launch here (3 x 4 tiles on 5 SMs), and not the model's pick */
  gemm_config c;
  g.tune = &o, g.chosen = &c;
  tg_run_check(&p, &g, "measured");
  assert_string_equal(c.reason, "measured");
  assert_string_equal(c.name, tg_fast);
  assert_true(tg_timed >= 3 * 5); /* several candidates, 3 runs each */
  /* stored: the next call is the cache's and times nothing */
  tg_timed = 0;
  tg_run_check(&p, &g, "cached");
  assert_string_equal(c.reason, "cached");
  assert_string_equal(c.name, tg_fast);
  assert_int_equal(tg_timed, 0);
  /* a forced field the cached configuration does not satisfy: measured again among the rest */
  g.cluster_n = 1;
  tg_fast = "c2x1.tile";
  tg_run_check(&p, &g, "narrowed");
  assert_string_equal(c.reason, "measured");
  assert_string_equal(c.name, "c2x1.tile");
  tg_free(&p);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_config),
      cmocka_unit_test(test_model_pick),
      cmocka_unit_test(test_measured_pick),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
