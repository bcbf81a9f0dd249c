/* test_tmem_ld_wait.c - registers of a raw tcgen05.ld before its tcgen05.wait::ld (issue 31, item 5) on the CPU
 * machine emulating sm_100a.
 *
 * tcgen05.ld is asynchronous: the destination registers hold the loaded values only after the warp's
 * tcgen05.wait::ld. kbd_acc_load waits itself; a kernel calling the raw twin kbd_hw_tmem_ld must wait before using
 * the registers. One warp stores known words into Tensor Memory columns 0..7 (tcgen05.st + wait::st), loads them back
 * with the raw tcgen05.ld into `back`, then, per mode:
 *   - OK:          waits, stores `back` to columns 8..15 and reads those back: clean, every word where it belongs;
 *   - ST_EARLY:    stores `back` (tcgen05.st reads the registers) before the wait: KBD_ERR_RACE at the st's line,
 *                  naming the ld's file:line;
 *   - LD_TWICE:    a second tcgen05.ld into the same registers before the wait: KBD_ERR_RACE at the second ld,
 *                  naming the first;
 *   - WRITE_EARLY: a plain C write of one register before the wait: KBD_ERR_RACE at the wait, naming the ld and the
 *                  register (the load's value would land over the write);
 *   - READ_EARLY:  a plain C read before the wait - what the machine cannot report (docs/cpu-machine.md): the run is
 *                  clean, but the read sees KBD_CPU_LD_POISON (an f32 signalling NaN), not the loaded value, and
 *                  after the wait the register holds the loaded value.
 * Each broken mode is reported in the first run under the default schedule, and under seeds 0-3 with 1 and 2 host
 * threads; the correct twins are clean under the same schedules.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

/* The raw twins (kbd/cpu/mma.h) call the pending-register hooks of kbd/cpu/mma_ts.h themselves. */

enum { LW_OK, LW_ST_EARLY, LW_LD_TWICE, LW_WRITE_EARLY, LW_READ_EARLY, LW_MODES };

typedef struct lw_params {
  int mode;
} lw_params;

static int lw_line_ld, lw_line_use;
static uint32_t lw_seen_early, lw_seen_after; /* READ_EARLY: back[0] before and after the wait */
static int lw_bad_words;                      /* OK: words of columns 8..15 that are not the stored ones */

static uint32_t lw_word(int l, int j) { return 0x3F800000u + (uint32_t)(l * 64 + j); } /* floats near 1.0 */

KBD_KERNEL(lw_kernel, 128, lw_params) {
  KBD_SHARED_ALIGNED(uint32_t, slot, 1, 4);
  const int w = kbd_warp_id();
  if (w == 0) {
    kbd_hw_tmem_alloc(slot, 32, KBD_SITE);
    kbd_hw_tmem_relinquish(KBD_SITE);
  }
  kbd_hw_tcgen05_fence_before(KBD_SITE);
  kbd_sync();
  kbd_hw_tcgen05_fence_after(KBD_SITE);
  kbd_hw_smem_read(slot, 4, 4, "slot", -1, -1, KBD_SITE);
  const uint32_t taddr = *slot;
  if (w == 0) {
    uint32_t cells[32 * 32], back[32 * 32];
    for (int l = 0; l < 32; ++l)
      for (int j = 0; j < 8; ++j)
        cells[l * 32 + j] = lw_word(l, j);
    kbd_hw_tmem_st(taddr, cells, 32, KBD_TMEM_32X32B, 8, KBD_SITE);
    kbd_hw_tmem_wait_st(KBD_SITE);
    MT_MARK(lw_line_ld); kbd_hw_tmem_ld(back, 32, taddr, KBD_TMEM_32X32B, 8, KBD_SITE);
    switch (p.mode) {
    case LW_ST_EARLY:
      MT_MARK(lw_line_use); kbd_hw_tmem_st(taddr + 8u, back, 32, KBD_TMEM_32X32B, 8, KBD_SITE);
      kbd_hw_tmem_wait_ld(KBD_SITE);
      break;
    case LW_LD_TWICE:
      MT_MARK(lw_line_use); kbd_hw_tmem_ld(back, 32, taddr, KBD_TMEM_32X32B, 8, KBD_SITE);
      kbd_hw_tmem_wait_ld(KBD_SITE);
      break;
    case LW_WRITE_EARLY:
      back[3 * 32 + 5] = 0;
      MT_MARK(lw_line_use); kbd_hw_tmem_wait_ld(KBD_SITE);
      break;
    case LW_READ_EARLY:
      __atomic_store_n(&lw_seen_early, back[0], __ATOMIC_RELAXED);
      kbd_hw_tmem_wait_ld(KBD_SITE);
      __atomic_store_n(&lw_seen_after, back[0], __ATOMIC_RELAXED);
      break;
    default: /* LW_OK */
      kbd_hw_tmem_wait_ld(KBD_SITE);
      MT_MARK(lw_line_use); kbd_hw_tmem_st(taddr + 8u, back, 32, KBD_TMEM_32X32B, 8, KBD_SITE);
      kbd_hw_tmem_wait_st(KBD_SITE);
      kbd_hw_tmem_ld(cells, 32, taddr + 8u, KBD_TMEM_32X32B, 8, KBD_SITE);
      kbd_hw_tmem_wait_ld(KBD_SITE);
      int bad = 0;
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 8; ++j)
          bad += cells[l * 32 + j] != lw_word(l, j);
      __atomic_store_n(&lw_bad_words, bad, __ATOMIC_RELAXED);
      break;
    }
  }
  kbd_hw_tcgen05_fence_before(KBD_SITE);
  kbd_sync();
  kbd_hw_tcgen05_fence_after(KBD_SITE);
  if (w == 0) kbd_hw_tmem_dealloc(taddr, 32, KBD_SITE);
}

static kbd_status lw_run(int mode) {
  __atomic_store_n(&lw_bad_words, -1, __ATOMIC_RELAXED);
  __atomic_store_n(&lw_seen_early, 0u, __ATOMIC_RELAXED);
  __atomic_store_n(&lw_seen_after, 0u, __ATOMIC_RELAXED);
  const lw_params p = {mode};
  return lw_kernel(kbd_cfg_1d(1), p);
}

/* The first run under the default schedule, then seeds 0-3 with one and two host threads. */
#define LW_SCHEDULES(stmt)                                                                                             \
  for (long th = 1; th <= 2; ++th)                                                                                     \
    for (long seed = -1; seed < 4; ++seed) {                                                                           \
      if (th == 2 && seed < 0) continue;                                                                               \
      mt_env(th, seed);                                                                                                \
      stmt;                                                                                                            \
    }

static void test_wait_then_use_is_clean(void **state) {
  (void)state;
  LW_SCHEDULES({
    const kbd_status s = lw_run(LW_OK);
    if (s.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", th, seed, s.msg);
    assert_int_equal(__atomic_load_n(&lw_bad_words, __ATOMIC_RELAXED), 0);
  });
}

/* The three broken kernels: a race at the reading (or overwriting) call, naming the ld. */
static void test_use_before_wait_is_reported(void **state) {
  (void)state;
  static const int modes[] = {LW_ST_EARLY, LW_LD_TWICE, LW_WRITE_EARLY};
  static const char *const says[] = {"tcgen05.st reads lane 0's register 0, which the tcgen05.ld at",
                                     "tcgen05.ld loads into lane 0's register 0, which the tcgen05.ld at",
                                     "tcgen05.wait::ld: lane 3's register 5, which the tcgen05.ld at"};
  char b[4096];
  int reports = 0;
  for (int m = 0; m < 3; ++m) {
    LW_SCHEDULES({
      const kbd_status s = lw_run(modes[m]);
      if (s.code != KBD_ERR_RACE)
        fail_msg("mode %d, threads %ld seed %ld: expected KBD_ERR_RACE, got %s: %s", modes[m], th, seed,
                 kbd_code_name(s.code), s.msg);
      MT_ASSERT_AT(s, MT_LINE(lw_line_use));
      MT_ASSERT_HAS(s, says[m]);
      MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "tcgen05.ld at %s:%d", __FILE__, MT_LINE(lw_line_ld)));
      ++reports;
    });
  }
  assert_int_equal(reports, 3 * 9);
}

/* The one the machine cannot report: the early read sees the poison, the read after the wait the value. */
static void test_early_read_sees_the_poison(void **state) {
  (void)state;
  const kbd_status s = lw_run(LW_READ_EARLY);
  MT_ASSERT_OK(s);
  assert_int_equal(__atomic_load_n(&lw_seen_early, __ATOMIC_RELAXED), KBD_CPU_LD_POISON);
  assert_int_equal(__atomic_load_n(&lw_seen_after, __ATOMIC_RELAXED), lw_word(0, 0));
  float f;
  const uint32_t u = KBD_CPU_LD_POISON;
  memcpy(&f, &u, 4);
  assert_true(f != f); /* a NaN: arithmetic on an early read gives NaN, not a plausible stale value */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_wait_then_use_is_clean),
      MT_TEST(test_use_before_wait_is_reported),
      MT_TEST(test_early_read_sees_the_poison),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
