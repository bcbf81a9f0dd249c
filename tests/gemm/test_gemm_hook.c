/* test_gemm_hook.c - examples/gemm with a user epilogue hook (gemm_hook_kernels.c: D = gelu_tanh(alpha A B + bias)
 * + C, -1 above the diagonal) through gemm_run on the CPU machine, every element against a double reference of that
 * formula. Shapes and options reach every kernel text of the emulated arch and every path into the hook: 300 x 200 x
 * 100 (two tile rows, so a CTA pair along M sharing B, two tile columns, a K edge), the same on a persistent grid of
 * one block (several tiles per block: on sm_100a both Tensor Memory buffers), on sm_100a the CTA-pair kernel, and on
 * sm_90a both consumer schedules (cooperative, pingpong: each consumer's epilogue runs alone, after its own main loop,
 * on its own 128-row tile, so the hook's row coordinate r0 comes from the consumer, not the schedule). The
 * default epilogue on the same call gives other values everywhere (no tanh, beta C instead of C, no triangle), so a
 * kernel that ignored GEMM_EPILOGUE fails, as does a hook given wrong coordinates (the triangle moves). */
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

#define GH_M 300
#define GH_N 200
#define GH_K 100
#define GH_LDK 104 /* K padded to 16 bytes, the TMA's row pitch */

static float gh_a(int i, int q) { return (float)((i * 7 + q * 3) % 9 - 4) / 8.0f; }
static float gh_b(int q, int j) { return (float)((q * 5 + j) % 7 - 3) / 8.0f; }
static float gh_c(int i, int j) { return (float)((i + 2 * j) % 5 - 2) / 4.0f; }
static float gh_bias(int j) { return (float)(j % 11 - 5) / 16.0f; }

/* One call: B row-major (pair 0) or column-major (pair 1, the CTA-pair kernel's layout), f32 D and C; pingpong as
 * gemm_args.pingpong (sm_90a: 1 pingpong, -1 cooperative consumers). */
static void gh_run(int grid, int pair, int pingpong) {
  const size_t na = (size_t)GH_M * GH_LDK, nb = (size_t)GH_N * GH_LDK; /* room for B either way (K x N < N x LDK) */
  kbd_bf16 *ha = calloc(na, sizeof *ha), *hb = calloc(nb, sizeof *hb);
  float *hc = malloc(sizeof(float) * GH_M * GH_N), *hd = malloc(sizeof(float) * GH_M * GH_N), hbias[GH_N];
  assert_true(ha && hb && hc && hd);
  for (int i = 0; i < GH_M; ++i)
    for (int q = 0; q < GH_K; ++q)
      ha[i * GH_LDK + q] = kbd_f32_to_bf16(gh_a(i, q));
  for (int q = 0; q < GH_K; ++q)
    for (int j = 0; j < GH_N; ++j)
      hb[pair ? j * GH_LDK + q : q * GH_N + j] = kbd_f32_to_bf16(gh_b(q, j));
  for (int i = 0; i < GH_M; ++i)
    for (int j = 0; j < GH_N; ++j)
      hc[i * GH_N + j] = gh_c(i, j);
  for (int j = 0; j < GH_N; ++j)
    hbias[j] = gh_bias(j);
  void *da, *db, *dc, *dd, *dbias;
  assert_int_equal(kbd_malloc(&da, na * 2).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, nb * 2).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dc, sizeof(float) * GH_M * GH_N).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, sizeof(float) * GH_M * GH_N).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dbias, sizeof hbias).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, na * 2).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, nb * 2).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dc, hc, sizeof(float) * GH_M * GH_N).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dbias, hbias, sizeof hbias).code, KBD_OK);
  assert_int_equal(kbd_memset_device(dd, 0xff, sizeof(float) * GH_M * GH_N).code, KBD_OK); /* NaN */

  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = GH_M, g.n = GH_N, g.k = GH_K;
  g.a = da, g.lda = GH_LDK, g.b = db, g.ldb = pair ? GH_LDK : GH_N, g.b_col = pair, g.pair = pair;
  g.d = dd, g.ldd = GH_N, g.d_f32 = 1, g.c = dc, g.ldc = GH_N, g.bias = (const float *)dbias;
  g.alpha = 0.5f, g.beta = 1.0f, g.scale_a = g.scale_b = 1.0f, g.grid = grid, g.pingpong = pingpong;
  gemm_config chosen;
  g.chosen = &chosen;
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_OK) fail_msg("grid %d pair %d pingpong %d: %s", grid, pair, pingpong, st.msg);
  if (pingpong) assert_int_equal(chosen.pingpong, pingpong > 0);
  assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * GH_M * GH_N).code, KBD_OK);
  for (int i = 0; i < GH_M; ++i)
    for (int j = 0; j < GH_N; ++j) {
      double y = 0; /* exact: products of eighths, sums far below 2^24 units */
      for (int q = 0; q < GH_K; ++q)
        y += (double)gh_a(i, q) * gh_b(q, j);
      y = 0.5 * y + gh_bias(j);
      const double ref =
          j > i ? -1.0 : 0.5 * y * (1.0 + tanh(0.7978845608028654 * (y + 0.044715 * y * y * y))) + gh_c(i, j);
      const double got = hd[i * GH_N + j];
      if (!(fabs(got - ref) <= 4e-6 * (1.0 + fabs(y) + fabs(ref))))
        fail_msg("grid %d pair %d pingpong %d: D[%d][%d] = %.9g, want %.9g (pre-activation %.9g)", grid, pair, pingpong,
                 i, j, got, ref, y);
    }
  kbd_free(da), kbd_free(db), kbd_free(dc), kbd_free(dd), kbd_free(dbias);
  free(ha), free(hb), free(hc), free(hd);
}

static void test_hook(void **state) {
  (void)state;
#if KBD_CPU_ARCH == 100
  gh_run(0, 0, 0);
  gh_run(1, 0, 0);
  gh_run(0, 1, 0);
#else
  gh_run(0, 0, -1);
  gh_run(1, 0, -1);
  gh_run(0, 0, 1);
  gh_run(1, 0, 1);
#endif
}

int main(void) {
  mt_env(2, 0);
  mt_quiet(1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_hook)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
