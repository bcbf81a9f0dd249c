/* test_fibers.c - the CPU machine's warp fibers under AddressSanitizer (built only in tests/sanitize, with
 * -fsanitize=address,undefined and the use-after-return check on):
 *   1. every warp keeps locals in a chain of frames across many barriers while other warps run on their own
 *      stacks, and one warp reads another's live locals through a pointer: no report, values intact;
 *   2. warps that fault deep in such a chain leave frames that never return; later launches reuse the same
 *      stacks (recycled groups) and must run clean;
 *   3. (separate process, `san_fibers overflow`) a real overflow of a warp's local array is reported by ASan
 *      as a stack-buffer-overflow in the kernel: the fiber stacks are checked, not just tolerated;
 *   4. (separate process, `san_fibers bounds`) UBSan reports an out-of-bounds index in a kernel;
 *   5. (separate process, `san_fibers after_return`) a warp reading a local of a function that returned, in a
 *      warp that has exited since, is reported as stack-use-after-return: each fiber has its own fake stack,
 *      kept after the warp's end until the stack is reused. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

#define FW 8      /* warps per block */
#define FBLOCKS 6 /* blocks */
#define FDEPTH 6  /* frames per warp between barriers */
#define FROUNDS 40

typedef struct {
  int *bad;  /* per warp: locals found changed (must stay 0) */
  int *seen; /* per warp: sum read from the neighbour warp's locals */
  int trap_warp;
  int overflow_at; /* index written into a 16-int local array (overflow mode: 16) */
} fib_params;

/* Per block: warp w publishes a pointer to one of its live locals for warp (w + 1) % FW. */
static int *volatile g_pub[FBLOCKS][FW];

static int fib_chain(const fib_params *p, int w, int depth, int round) {
  volatile int mine[16];
  for (int i = 0; i < 16; ++i)
    mine[i] = w * 1000 + depth * 100 + i + round;
  int bad = 0;
  if (depth == FDEPTH) {
    const int blk = (int)kbd_block_x();
    if (p->trap_warp == w) kbd_trap("fault deep in a chain of frames");
    g_pub[blk][w] = (int *)mine;
    kbd_sync(); /* every warp now has a live chain of FDEPTH frames on its own stack */
    const int *other = g_pub[blk][(w + FW - 1) % FW];
    int s = 0;
    for (int i = 0; i < 16; ++i)
      s += other[i];
    p->seen[blk * FW + w] += s;
    kbd_sync(); /* nobody reads `mine` after this */
  } else {
    bad += fib_chain(p, w, depth + 1, round);
  }
  for (int i = 0; i < 16; ++i)
    bad += mine[i] != w * 1000 + depth * 100 + i + round;
  return bad;
}

KBD_KERNEL(fib_k, FW * 32, fib_params) {
  const int w = kbd_warp_id(), blk = (int)kbd_block_x();
  int bad = 0;
  for (int r = 0; r < FROUNDS; ++r)
    bad += fib_chain(&p, w, 0, r);
  p.bad[blk * FW + w] = bad;
}

KBD_KERNEL(fib_bounds_k, 32, fib_params) {
  int a[16];
  for (int i = 0; i < 16; ++i)
    a[i] = i;
  p.bad[0] = a[p.overflow_at]; /* UBSan: index 16 out of bounds */
}

/* Out of line: UBSan cannot see the array's size here, ASan's redzone after it still catches the store. */
__attribute__((noinline)) static void fib_poke(volatile int *q, int i) { q[i] = 1; }

KBD_KERNEL(fib_overflow_k, 32, fib_params) {
  volatile int a[16];
  for (int i = 0; i < 16; ++i)
    a[i] = i;
  fib_poke(a, p.overflow_at); /* p.overflow_at == 16: one past the end */
  p.bad[0] = a[0];
}

/* Publishes the address of a local that dies when it returns. */
__attribute__((noinline)) static void fib_publish(void) {
  volatile int local[8];
  for (int i = 0; i < 8; ++i)
    local[i] = i;
  g_pub[0][0] = (int *)local;
}

/* Warp 0 publishes, arrives and exits (no scheduling point between the arrival and its end); warp 1 reads
 * after its wait, so after warp 0's end whatever the schedule. */
KBD_KERNEL(fib_after_return_k, 64, fib_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, mb, 1, 8);
  const int w = kbd_warp_id();
  if (w == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(&mb[0], 1); }
  }
  kbd_sync();
  if (w == 0) {
    fib_publish();
    KBD_ELECT_ONE { kbd_mbarrier_arrive(&mb[0]); }
  } else {
    kbd_mbarrier_wait(&mb[0], 0);
    p.bad[0] = g_pub[0][0][3];
  }
}

static int g_bad[FBLOCKS * FW], g_seen[FBLOCKS * FW];

static void run_clean(int threads, int seed) {
  mt_env(threads, seed);
  memset(g_bad, 0xff, sizeof g_bad);
  memset(g_seen, 0, sizeof g_seen);
  fib_params p = {g_bad, g_seen, -1, 0};
  MT_ASSERT_OK(fib_k(kbd_cfg(kbd_dim(FBLOCKS, 1, 1), 0, NULL), p));
  for (int b = 0; b < FBLOCKS; ++b)
    for (int w = 0; w < FW; ++w) {
      assert_int_equal(g_bad[b * FW + w], 0);
      /* the neighbour's deepest frame holds u*1000 + FDEPTH*100 + i + r, i < 16, summed over the rounds */
      const int u = (w + FW - 1) % FW;
      long long want = 0;
      for (int r = 0; r < FROUNDS; ++r)
        for (int i = 0; i < 16; ++i)
          want += u * 1000 + FDEPTH * 100 + i + r;
      assert_int_equal(g_seen[b * FW + w], (int)want);
    }
}

static void test_locals_survive_switches(void **state) {
  (void)state;
  for (int t = 1; t <= 2; ++t)
    for (int s = 0; s < 3; ++s)
      run_clean(t, s);
}

static void test_stacks_reused_after_faults(void **state) {
  (void)state;
  for (int k = 0; k < 3; ++k) {
    mt_env(1, k);
    fib_params p = {g_bad, g_seen, k % FW, 0};
    MT_ASSERT_CODE(fib_k(kbd_cfg(kbd_dim(FBLOCKS, 1, 1), 0, NULL), p), KBD_ERR_KERNEL);
    run_clean(1, k); /* the same stacks, carrying the faulted chains' frames */
  }
}

int main(int argc, char **argv) {
  if (argc > 1) {
    fib_params p = {g_bad, g_seen, -1, 16};
    const kbd_launch_cfg cfg = kbd_cfg(kbd_dim(1, 1, 1), 0, NULL);
    const kbd_status s = strcmp(argv[1], "overflow") == 0  ? fib_overflow_k(cfg, p)
                         : strcmp(argv[1], "bounds") == 0 ? fib_bounds_k(cfg, p)
                                                          : fib_after_return_k(cfg, p);
    printf("no sanitizer report: %s\n", s.msg);
    return 0;
  }
  const struct CMUnitTest tests[] = {MT_TEST(test_locals_survive_switches), MT_TEST(test_stacks_reused_after_faults)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
