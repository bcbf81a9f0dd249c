/* test_gemm_epi_ring.c - the GEMM example's staging ring across tiles. Each storing warpgroup writes chunk i of its
 * walk into staging buffer i % 2 (gemm_epilogue.h, gemm_chunk_store) and waits until at most one of its TMA stores
 * still reads shared memory; the buffer index runs on from one tile to the next. A tile of D's last columns has an
 * odd number of chunks (here 72 columns: 5), and if the next tile restarted at buffer 0 it would overwrite the
 * buffer of the newest store, which the wait does not cover: a data race the CPU machine reports (KBD_ERR_RACE).
 * So one block (one CTA pair) walks tiles in which such an edge tile is followed by another tile, and D must be the
 * exact product (small multiples of 1/4: every sum is exact in f32):
 *   300 x 200 x 64, one CTA (cluster 1 x 1, grid 1): tiles (0,0) (1,0) (0,1) (1,1), (0,1) has 5 chunks
 *   sm_100a, CTA pair: 600 x 200 x 64 on one pair: three 256 x 256 tiles, warpgroup 1 of each CTA stores 5 chunks
 *     of each
 * Built per emulated arch; the sm_100a build runs the 1-CTA and the CTA-pair kernels, the sm_90a build both consumer
 * schedules (cooperative, and pingpong: there each consumer stores its 128 rows of a tile alone, through its own
 * buffers, after its own main loop). */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm.h"
#include "machine_test.h"

enum { ER_K = 64 };

static float er_a(int i, int q) { return (float)((i * 3 + q) % 5 - 2) / 4.0f; }
static float er_b(int q, int j) { return (float)((q + 2 * j) % 7 - 3) / 4.0f; }

/* A row-major M x K; B row-major K x N, or (pair) column-major; D f32 M x N */
static void er_run(int m, int n, int pair, int pingpong) {
  mt_env(1, 0);
  mt_quiet(1);
  kbd_bf16 *ha = malloc(sizeof *ha * (size_t)m * ER_K), *hb = malloc(sizeof *hb * (size_t)n * ER_K);
  float *hd = malloc(sizeof *hd * (size_t)m * n);
  assert_true(ha && hb && hd);
  for (int i = 0; i < m; ++i)
    for (int q = 0; q < ER_K; ++q)
      ha[i * ER_K + q] = kbd_f32_to_bf16(er_a(i, q));
  for (int q = 0; q < ER_K; ++q)
    for (int j = 0; j < n; ++j)
      hb[pair ? j * ER_K + q : q * n + j] = kbd_f32_to_bf16(er_b(q, j));
  void *da, *db, *dd;
  assert_int_equal(kbd_malloc(&da, sizeof *ha * (size_t)m * ER_K).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, sizeof *hb * (size_t)n * ER_K).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, sizeof *hd * (size_t)m * n).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof *ha * (size_t)m * ER_K).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof *hb * (size_t)n * ER_K).code, KBD_OK);
  assert_int_equal(kbd_memset_device(dd, 0xff, sizeof *hd * (size_t)m * n).code, KBD_OK); /* NaN */
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = m, g.n = n, g.k = ER_K;
  g.a = da, g.lda = ER_K, g.b = db, g.ldb = pair ? ER_K : n, g.b_col = pair;
  g.d = dd, g.ldd = n, g.d_f32 = 1;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.cluster = g.cluster_n = 1;
  g.pair = pair ? 1 : -1;
  g.grid = pair ? 2 : 1;
  g.pingpong = pingpong;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_OK) fail_msg("%d x %d%s pingpong %d: %s", m, n, pair ? " (pair)" : "", pingpong, st.msg);
  assert_int_equal(kbd_copy_to_host(hd, dd, sizeof *hd * (size_t)m * n).code, KBD_OK);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float ref = 0.0f;
      for (int q = 0; q < ER_K; ++q)
        ref += er_a(i, q) * er_b(q, j);
      if (hd[i * n + j] != ref)
        fail_msg("%d x %d%s pingpong %d: D[%d][%d] = %.9g, want %.9g", m, n, pair ? " (pair)" : "", pingpong, i, j,
                 hd[i * n + j], ref);
    }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
}

static void test_one_cta(void **state) {
  (void)state;
#if KBD_CPU_ARCH == 90
  er_run(300, 200, 0, -1);
  er_run(300, 200, 0, 1);
#else
  er_run(300, 200, 0, 0);
#endif
}
static void test_pair(void **state) {
  (void)state;
  if (KBD_MMA_ARCH != 100) skip();
  er_run(600, 200, 1, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_one_cta), cmocka_unit_test(test_pair)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
