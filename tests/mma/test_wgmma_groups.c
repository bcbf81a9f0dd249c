/* test_wgmma_groups.c - wgmma.wait_group N on the CPU machine emulating sm_90a (kbd/cpu/mma.h kbd_hw_wgmma_wait,
 * kbd/mma.h kbd_mma / kbd_mma_release / kbd_mma_wait): the wait completes every committed group but the N newest,
 * so an accumulator of one of the N newest groups is still being written and reading it is a race (issue 31: a
 * mutant that treated wait_group(N) as wait_group(0) was killed only weakly, as no test read an accumulator whose
 * group a wait_group(N > 0) left pending).
 *
 * One warpgroup commits 2 or 3 groups - kbd_mma into acc1, acc2 (and acc3), each kbd_mma one group, A filled with
 * g for group g and B with 1/4, so acc_g holds 16 g everywhere (K = 64) - waits with wait_group(N) (the twin
 * directly, or kbd_mma_release, whose wait is wait_group(1)), then reads one accumulator with kbd_acc_load:
 *   - one of the N newest groups: KBD_ERR_RACE at the read's file:line naming that kbd_mma's line, "committed,
 *     not waited for", in the first run under the default schedule (and seeds 0-1);
 *   - an older group: clean, and the read already sees the group's result; after kbd_mma_wait every accumulator
 *     holds its value.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/mma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

#if KBD_MMA_ARCH != 90
#error "test_wgmma_groups.c emulates sm_90a: build it with -DKBD_CPU_ARCH=90"
#endif

#define WG_M 64
#define WG_N 64
#define WG_K 64
#define WG_CELLS (WG_M * WG_N)

typedef KBD_STILE(bf16, WG_M, WG_K, KBD_SWIZZLE_128B) wg_a;
typedef KBD_STILE(bf16, WG_N, WG_K, KBD_SWIZZLE_128B) wg_b;

typedef struct {
  int groups;  /* 2 or 3 kbd_mma (one group each) */
  int n;       /* wait_group(n) after the last commit */
  int release; /* 1: the wait is kbd_mma_release(acc2, empty) (wait_group(1)); 0: kbd_hw_wgmma_wait(n) */
  int read;    /* the accumulator read right after the wait: 1..groups */
  float *out;  /* 1 + groups accumulators of WG_M x WG_N: the early read, then each after kbd_mma_wait */
} wg_params;

static int wg_mma_line[4], wg_read_line;

KBD_KERNEL(wg_groups_k, 128, wg_params) {
  KBD_SHARED_STILE(wg_a, a1);
  KBD_SHARED_STILE(wg_a, a2);
  KBD_SHARED_STILE(wg_a, a3);
  KBD_SHARED_STILE(wg_b, b);
  KBD_SHARED_ALIGNED(kbd_mbarrier, empty, 1, 8);
  {
    KBD_TILE(bf16, WG_M, WG_K, KBD_WARPGROUP) ra;
    KBD_TILE(bf16, WG_N, WG_K, KBD_WARPGROUP) rb;
    kbd_fill(ra, 1.0f);
    kbd_stile_store(a1, ra);
    kbd_fill(ra, 2.0f);
    kbd_stile_store(a2, ra);
    kbd_fill(ra, 3.0f);
    kbd_stile_store(a3, ra);
    kbd_fill(rb, 0.25f);
    kbd_stile_store(b, rb);
  }
  kbd_fence_proxy_async(); /* the generic stores -> the MMAs' async-proxy reads */
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(&empty[0], 1); }
  }
  kbd_sync();
  KBD_ACC(f32, WG_M, WG_N) acc1, acc2, acc3;
  kbd_acc_bind(acc1, (kbd_tmem *)0, 0, &empty[0]); /* sm_90a: no Tensor Memory, no completion barrier */
  kbd_acc_bind(acc2, (kbd_tmem *)0, 0, &empty[0]);
  kbd_acc_bind(acc3, (kbd_tmem *)0, 0, &empty[0]);
  MT_MARK(wg_mma_line[1]); kbd_mma(acc1, a1, b, 0); /* group 1 */
  MT_MARK(wg_mma_line[2]); kbd_mma(acc2, a2, b, 0); /* group 2 */
  if (p.groups == 3) {
    MT_MARK(wg_mma_line[3]); kbd_mma(acc3, a3, b, 0); /* group 3 */
  }
  if (p.release) {
    kbd_mma_release(acc2, &empty[0]); /* wait_group(1); empty gets its arrive at the next release / wait */
  } else {
    kbd_hw_wgmma_wait(p.n, KBD_SITE);
  }
  KBD_ACC_TILE(f32, WG_M, WG_N) r;
  if (p.read == 1) {
    MT_MARK(wg_read_line); kbd_acc_load(r, acc1, 0);
  } else if (p.read == 2) {
    MT_MARK(wg_read_line); kbd_acc_load(r, acc2, 0);
  } else {
    MT_MARK(wg_read_line); kbd_acc_load(r, acc3, 0);
  }
  kbd_store2d(p.out, r, WG_M, WG_N, WG_N, 0, 0);
  kbd_mma_wait(acc2); /* wait_group(0): everything; the arrive on empty if kbd_mma_release set it */
  kbd_acc_load(r, acc1, 0);
  kbd_store2d(p.out + WG_CELLS, r, WG_M, WG_N, WG_N, 0, 0);
  kbd_acc_load(r, acc2, 0);
  kbd_store2d(p.out + 2 * WG_CELLS, r, WG_M, WG_N, WG_N, 0, 0);
  if (p.groups == 3) {
    kbd_acc_load(r, acc3, 0);
    kbd_store2d(p.out + 3 * WG_CELLS, r, WG_M, WG_N, WG_N, 0, 0);
  }
}

static float host_out[4 * WG_CELLS];

static kbd_status run_wg(wg_params p, long seed) {
  mt_env(1, seed);
  float *out = NULL;
  for (int i = 0; i < 4 * WG_CELLS; ++i)
    host_out[i] = -1.0f;
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_copy_to_device(out, host_out, sizeof host_out);
  if (kbd_ok(s)) {
    p.out = out;
    s = wg_groups_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  kbd_free(out);
  return s;
}

static void wg_expect(const char *what, const float *v, float want) {
  for (int i = 0; i < WG_CELLS; ++i)
    if (v[i] != want) fail_msg("%s: element %d is %g, want %g", what, i, (double)v[i], (double)want);
}

/* groups x n x the accumulator read: a race exactly when it belongs to one of the n newest groups. */
static void test_wait_group_n(void **state) {
  (void)state;
  char b[4096];
  for (int groups = 2; groups <= 3; ++groups)
    for (int n = 0; n < groups; ++n)
      for (int read = 1; read <= groups; ++read)
        for (long seed = -1; seed < 2; ++seed) {
          wg_params p = {groups, n, 0, read, NULL};
          const kbd_status s = run_wg(p, seed);
          if (read > groups - n) {
            if (s.code != KBD_ERR_RACE)
              fail_msg("%d groups, wait_group(%d), read acc%d (seed %ld): expected a race at the read, got %s: %s",
                       groups, n, read, seed, kbd_code_name(s.code), s.msg);
            MT_ASSERT_AT(s, MT_LINE(wg_read_line));
            MT_ASSERT_HAS(s, mt_fmt(b, sizeof b,
                                    "accumulator read before wgmma.wait_group: the wgmma issued at %s:%d (committed, "
                                    "not waited for)",
                                    __FILE__, MT_LINE(wg_mma_line[read])));
          } else {
            if (s.code != KBD_OK)
              fail_msg("%d groups, wait_group(%d), read acc%d (seed %ld): expected a clean run, got: %s", groups, n,
                       read, seed, s.msg);
            wg_expect("the read right after the wait", host_out, 16.0f * (float)read);
            for (int g = 1; g <= groups; ++g)
              wg_expect("an accumulator after kbd_mma_wait", host_out + g * WG_CELLS, 16.0f * (float)g);
          }
        }
}

/* The public form: kbd_mma_release after the second kbd_mma is wait_group(1): acc1 is done, acc2 is not. */
static void test_release_keeps_the_newest(void **state) {
  (void)state;
  char b[4096];
  for (long seed = -1; seed < 2; ++seed) {
    wg_params p = {2, 1, 1, 1, NULL};
    MT_ASSERT_OK(run_wg(p, seed));
    wg_expect("acc1 after kbd_mma_release", host_out, 16.0f);
    wg_expect("acc2 after kbd_mma_wait", host_out + 2 * WG_CELLS, 32.0f);
    p.read = 2;
    const kbd_status s = run_wg(p, seed);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_AT(s, MT_LINE(wg_read_line));
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "the wgmma issued at %s:%d (committed, not waited for)", __FILE__,
                            MT_LINE(wg_mma_line[2])));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_wait_group_n),
      MT_TEST(test_release_keeps_the_newest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
