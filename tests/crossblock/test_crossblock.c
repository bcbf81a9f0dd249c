/* Blocks that wait for other blocks' global flags: the CPU machine must make progress on any host
 * thread count (it keeps waiting blocks resident and runs others) and report a cross-block deadlock
 * instead of hanging. */
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct chain_params {
  uint32_t *flags; /* one per block, 0 = not yet published */
  uint32_t *order; /* order[b] = value block b published */
  int reverse;     /* 1: block b waits for block b+1 (the later block) instead of b-1 */
} chain_params;

static int g_spin_line;

/* Each block publishes 1 + the value of its predecessor in the chain: the result is a running count,
 * correct only if every wait really waited. Two warps per block, the second waits at a barrier. */
KBD_KERNEL(chain, 64, chain_params) {
  const unsigned b = kbd_block_x(), nb = kbd_grid_x();
  const int has_pred = p.reverse ? b + 1 < nb : b > 0;
  const unsigned pred = p.reverse ? b + 1 : b - 1;
  uint32_t v = 1;
  if (kbd_warp_id() == 0 && has_pred) {
    KBD_SPIN_UNTIL(kbd_ld_acquire_u32(&p.flags[pred]) != 0);
    v = kbd_ld_acquire_u32(&p.flags[pred]) + 1;
  }
  kbd_sync();
  if (kbd_warp_id() == 0) {
    p.order[b] = v;
    kbd_st_release_u32(&p.flags[b], v);
  }
}

typedef struct cycle_params {
  uint32_t *flags;
} cycle_params;

/* Block 0 waits for block 1 and block 1 for block 0: a cross-block deadlock. */
KBD_KERNEL(cycle, 32, cycle_params) {
  const unsigned b = kbd_block_x();
  g_spin_line = __LINE__ + 1;
  KBD_SPIN_UNTIL(kbd_ld_acquire_u32(&p.flags[1 - b]) != 0);
  kbd_st_release_u32(&p.flags[b], 1);
}

static void run_chain(unsigned nblocks, int reverse, const char *threads, const char *seed) {
  setenv("KBD_CPU_THREADS", threads, 1);
  setenv("KBD_CPU_SEED", seed, 1);
  uint32_t *flags, *order;
  assert_true(kbd_ok(kbd_malloc((void **)&flags, nblocks * sizeof *flags)));
  assert_true(kbd_ok(kbd_malloc((void **)&order, nblocks * sizeof *order)));
  assert_true(kbd_ok(kbd_memset_device(flags, 0, nblocks * sizeof *flags)));
  assert_true(kbd_ok(kbd_memset_device(order, 0, nblocks * sizeof *order)));
  chain_params p = {flags, order, reverse};
  kbd_status s = chain(kbd_cfg_1d(nblocks), p);
  assert_int_equal(s.code, KBD_OK);
  for (unsigned b = 0; b < nblocks; ++b) {
    const uint32_t expect = reverse ? nblocks - b : b + 1;
    assert_int_equal(order[b], expect);
  }
  kbd_free(flags);
  kbd_free(order);
}

static void test_chain_forward(void **state) {
  (void)state;
  const char *threads[] = {"1", "2", "5"};
  const char *seeds[] = {"0", "1", "99"};
  for (int t = 0; t < 3; ++t)
    for (int s = 0; s < 3; ++s) run_chain(200, 0, threads[t], seeds[s]);
}

/* Every block waits for a LATER block: legal only while the whole grid is resident, as here (60 and 100 blocks
 * of 64 threads; the emulated GPU holds 32 per SM), so the machine must keep waiting blocks resident and start the
 * next ones on any thread count. A grid past residency is a deadlock (test_residency.c). */
static void test_chain_backward(void **state) {
  (void)state;
  run_chain(60, 1, "1", "0");
  run_chain(100, 1, "2", "0");
  run_chain(60, 1, "1", "7");
}

static void test_cycle_is_reported(void **state) {
  (void)state;
  setenv("KBD_CPU_QUIET", "1", 1);
  const char *threads[] = {"1", "2"};
  for (int t = 0; t < 2; ++t) {
    setenv("KBD_CPU_THREADS", threads[t], 1);
    uint32_t *flags;
    assert_true(kbd_ok(kbd_malloc((void **)&flags, 2 * sizeof *flags)));
    assert_true(kbd_ok(kbd_memset_device(flags, 0, 2 * sizeof *flags)));
    cycle_params p = {flags};
    kbd_status s = cycle(kbd_cfg_1d(2), p);
    assert_int_equal(s.code, KBD_ERR_DEADLOCK);
    char site[64];
    snprintf(site, sizeof site, "test_crossblock.c:%d", g_spin_line);
    assert_non_null(strstr(s.msg, "cross-block deadlock"));
    assert_non_null(strstr(s.msg, site));
    assert_non_null(strstr(s.msg, "block (0,0,0)")); /* the lowest block is the one reported */
    kbd_free(flags);
  }
  unsetenv("KBD_CPU_QUIET");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_forward),
      cmocka_unit_test(test_chain_backward),
      cmocka_unit_test(test_cycle_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
