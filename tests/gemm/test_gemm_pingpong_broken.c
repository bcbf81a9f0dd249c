/* test_gemm_pingpong_broken.c - the sm_90a GEMM's pingpong consumers (gemm_kernel.h, docs/gemm.md "Pingpong
 * consumers") with their ring walk or their turns broken, through the kernel text's two test seams, chosen at run
 * time:
 *   skip     GEMM__PP_SKIP: a consumer passes over one ring position too few for the other consumer's half of a
 *            tile (ktiles - 1): consumer 1 starts on consumer 0's last stage, and from then on each consumer reads
 *            stages holding the other's operands and releases stages the other still reads
 *   turn     GEMM__PP_NEXT: a consumer signals its own turn barrier instead of the other's after its last MMA issue:
 *            consumer 1 never gets its first turn
 * Either must be reported by the CPU machine in the first run under the default schedule (a deadlock naming a wait,
 * a data race on a stage, or an mbarrier misuse: more arrivals than a phase has), not a plain wrong D. The control is
 * the unbroken kernel (test_gemm_pingpong.c and the sm_90a runs of gemm_args / gemm_hook with the same calls).
 * Built for sm_90a only. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

static int broken_skip, broken_turn;
#define GEMM__PP_SKIP(ktiles) ((ktiles)-broken_skip)
#define GEMM__PP_NEXT(g) (broken_turn ? (g) : 1 - (g))
#include "gemm.cu"

static void run_broken(int skip, int turn, int grid, long long k) {
  broken_skip = skip, broken_turn = turn;
  mt_env(1, -1);
  mt_quiet(1);
  const long long M = 512, N = 256;
  kbd_bf16 *a, *b;
  float *d;
  assert_int_equal(kbd_malloc((void **)&a, sizeof(kbd_bf16) * (size_t)(M * k)).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&b, sizeof(kbd_bf16) * (size_t)(k * N)).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&d, sizeof(float) * (size_t)(M * N)).code, KBD_OK);
  assert_int_equal(kbd_memset_device(a, 0, sizeof(kbd_bf16) * (size_t)(M * k)).code, KBD_OK);
  assert_int_equal(kbd_memset_device(b, 0, sizeof(kbd_bf16) * (size_t)(k * N)).code, KBD_OK);
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = M, g.n = N, g.k = k;
  g.a = a, g.lda = k, g.b = b, g.ldb = N, g.d = d, g.ldd = N, g.d_f32 = 1;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.cluster = g.cluster_n = 1, g.grid = grid, g.pingpong = 1; /* several tiles per block: the turns come round */
  const kbd_status st = gemm_run(&g, NULL);
  if (st.code != KBD_ERR_DEADLOCK && st.code != KBD_ERR_RACE && st.code != KBD_ERR_MBARRIER)
    fail_msg("the broken pingpong %s (grid %d, K %lld) was not reported: code %d: %s", skip ? "ring skip" : "turn",
             grid, k, st.code, st.msg);
  assert_non_null(strstr(st.msg, "gemm_kernel"));
  print_message("reported (%s, grid %d, K %lld): %s: %.200s\n", skip ? "skip" : "turn", grid, k, kbd_code_name(st.code),
                st.msg);
  kbd_free(a), kbd_free(b), kbd_free(d);
}

static void test_ring_skip(void **state) {
  (void)state;
  run_broken(1, 0, 1, 192); /* 3 k-blocks per half in a ring of 6 */
  run_broken(1, 0, 2, 512); /* 8: more than the ring */
}
static void test_turn(void **state) {
  (void)state;
  run_broken(0, 1, 1, 192);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ring_skip), cmocka_unit_test(test_turn)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
