/* test_early_release_sm90.c - a stage released while a wgmma still reads it, on the CPU machine emulating sm_90a
 * (issue 31 item 4): the report names the release (file:line of the arrive that let the producer refill the stage)
 * and the wgmma that still read it, in the first run under the default schedule (kbd/cpu/mma_wgmma.h
 * kbd_cpu_wg_arrive; docs/design/shadow-and-races.md, "Early stage release").
 *
 * The pipeline: one CTA per 64 rows of D (2 CTAs), 256 threads; warp 0 produces, warpgroup 1 consumes. D (64 x EN) =
 * A (rows 64b.., K) B^T over kt stages of EK through a 2-stage ring (full[s]: the TMA loads; empty[s], count 1: the
 * consumer's release). Values are small multiples of 1/4: results exact, compared bit for bit (pipe_case.h).
 *
 * Correct (clean and exact under the default schedule, seeds 0-3, 1 or 2 host threads; each arrives for the previous
 * stage while the newest group still reads the current one, which the rule must not blame):
 *   ER_RELEASE     kbd_mma_release(acc, &empty[s]) after each stage (it arrives for the stage before);
 *   ER_RELEASE_AT  kbd_mma_release_at(previous stage's barrier), kbd_mma_wait_at after the loop;
 *   ER_WAIT1       hand-written: wgmma.wait_group(1), then a plain kbd_mbarrier_arrive on the previous stage's barrier;
 *   ER_WAIT0       kbd_mma_wait, then a plain arrive on this stage's barrier.
 * Broken (KBD_ERR_RACE at the release's line, naming the kbd_mma's line and the refill's, in the first run and the same
 * under seeds 0-3 and 1 or 2 host threads):
 *   ER_BEFORE_WAIT the whole warpgroup issued (a named barrier), the arrive, THEN kbd_mma_wait: the refill comes after
 *                  the wgmma retired, a write-after-read on its recorded reads;
 *   ER_NEWEST_AT   kbd_mma_release_at naming THIS stage's barrier: wait_group(1) leaves its group pending;
 *   ER_NEWEST_WAIT1 the hand-written twin: wgmma.wait_group(1), then a plain arrive on this stage's barrier;
 *   ER_PLAIN       a plain kbd_mbarrier_arrive instead of kbd_mma_release, no wait at all: the refill comes while the
 *                  wgmma is pending.
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
#include "pipe_case.h"

#if KBD_MMA_ARCH != 90
#error "test_early_release_sm90.c emulates sm_90a: build it with -DKBD_CPU_ARCH=90"
#endif

/* MT_MARK and the call it marks share a line (the reports name that line): clang-format is off around them */

enum { ER_RELEASE, ER_RELEASE_AT, ER_WAIT1, ER_WAIT0, ER_BEFORE_WAIT, ER_NEWEST_AT, ER_NEWEST_WAIT1, ER_PLAIN, ER_N };
static const char *const er_name[ER_N] = {"kbd_mma_release",
                                          "kbd_mma_release_at",
                                          "wait_group(1) + arrive",
                                          "wait + arrive",
                                          "arrive before the wait",
                                          "release_at of the newest",
                                          "wait_group(1) + arrive on the newest",
                                          "plain arrive, no wait"};

#define EN 64 /* N */
#define EK 64 /* K per stage (64 bf16 = one 128-byte swizzle row) */
typedef KBD_STILE(bf16, 64, EK, KBD_SWIZZLE_128B) er_a;
typedef KBD_STILE(bf16, EN, EK, KBD_SWIZZLE_128B) er_b;

typedef struct er_params {
  kbd_tensor_map ma, mb;
  float *d;
  int kt, brk;
} er_params;

static int er_line_load_a, er_line_load_b, er_line_mma, er_line_release;

/* One arrive on bar from the consumer warpgroup's first warp (elected: one arrival, as the barrier counts). */
static void er_arrive(kbd_mbarrier *bar) {
  if (kbd_warp_id() == 4) {
    KBD_ELECT_ONE {
      /* clang-format off */
      MT_MARK(er_line_release); kbd_mbarrier_arrive(bar);
      /* clang-format on */
    }
  }
}

KBD_KERNEL(er_kernel, 256, er_params) {
  KBD_SHARED_STILE(er_a, a0);
  KBD_SHARED_STILE(er_a, a1);
  KBD_SHARED_STILE(er_b, b0);
  KBD_SHARED_STILE(er_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < 2; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], 1);
      }
    }
  }
  kbd_sync();
  const int row0 = (int)kbd_block_x() * 64;
  if (kbd_warp_id() == 0) {
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait(&empty[s], ((unsigned)(i / 2) & 1u) ^ 1u);
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0));
        /* clang-format off */
        MT_MARK(er_line_load_a); kbd_tma_load2d(s ? a1 : a0, &p.ma, &full[s], row0, i * EK);
        MT_MARK(er_line_load_b); kbd_tma_load2d(s ? b1 : b0, &p.mb, &full[s], 0, i * EK);
        /* clang-format on */
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC(f32, 64, EN) acc;
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait(&full[s], (unsigned)(i / 2) & 1u);
      /* clang-format off */
      MT_MARK(er_line_mma); kbd_mma(acc, s ? a1 : a0, s ? b1 : b0, i > 0);
      /* clang-format on */
      switch (p.brk) {
      case ER_RELEASE: kbd_mma_release(acc, &empty[s]); break;
      case ER_RELEASE_AT:
        if (i > 0) kbd_mma_release_at(acc, kbd_mbarrier_addr(&empty[1 - s]), 0u);
        break;
      case ER_WAIT1:
        kbd_hw_wgmma_wait(1, KBD_SITE);
        if (i > 0) er_arrive(&empty[1 - s]);
        break;
      case ER_WAIT0:
        kbd_mma_wait(acc);
        er_arrive(&empty[s]);
        break;
      case ER_BEFORE_WAIT:
        kbd_bar_sync(1, 128); /* every warp issued (and waited for `full` before that): only the wgmma is early */
        er_arrive(&empty[s]);
        kbd_mma_wait(acc);
        break;
      case ER_NEWEST_AT:
        /* clang-format off */
        MT_MARK(er_line_release); kbd_mma_release_at(acc, kbd_mbarrier_addr(&empty[s]), 0u);
        /* clang-format on */
        break;
      case ER_NEWEST_WAIT1:
        kbd_hw_wgmma_wait(1, KBD_SITE);
        er_arrive(&empty[s]);
        break;
      default: er_arrive(&empty[s]); break; /* ER_PLAIN */
      }
    }
    if (p.brk == ER_RELEASE_AT)
      kbd_mma_wait_at(acc, kbd_mbarrier_addr(&empty[(p.kt - 1) % 2]), 0u);
    else
      kbd_mma_wait(acc); /* ER_RELEASE: also the last stage's arrive */
    KBD_ACC_TILE(f32, 64, EN) r;
    kbd_acc_load(r, acc, 0);
    kbd_store2d(p.d + (size_t)row0 * EN, r, 64, EN, EN, 0, 0);
  }
}

/* 2 CTAs over kt stages. Returns the status and, when it ran, checks every element (exact). */
static kbd_status er_run(int kt, int brk) {
  pc_gemm g;
  er_params p;
  memset(&p, 0, sizeof p);
  pc_setup(&g, 128, EN, kt * EK, &p.ma, 64, &p.mb, EN, EK);
  p.d = g.dd;
  p.kt = kt;
  p.brk = brk;
  return pc_finish(&g, er_kernel(kbd_cfg_1d(2), p));
}

static void test_clean(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      for (int brk = ER_RELEASE; brk <= ER_WAIT0; ++brk) {
        const kbd_status st = er_run(6, brk);
        if (st.code != KBD_OK) fail_msg("%s, threads %ld seed %ld: %s", er_name[brk], threads, seed, st.msg);
      }
    }
}

/* A broken variant: the race report at the release line, naming the kbd_mma and the refill (a load line), with the
 * wgmma's state at the arrive; the first run under the default schedule, then the same under seeds and threads. */
static void er_expect(int brk, const char *how) {
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 3; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = er_run(6, brk);
      char want[4096], a[4096], b[4096];
      if (st.code != KBD_ERR_RACE)
        fail_msg("%s, threads %ld seed %ld: status %d, want a race: %s", er_name[brk], threads, seed, (int)st.code,
                 st.msg);
      mt_fmt(want, sizeof want, "%s:%d: stage released here while the wgmma issued at %s:%d still read it", __FILE__,
             MT_LINE(er_line_release), __FILE__, MT_LINE(er_line_mma));
      if (!strstr(st.msg, want))
        fail_msg("%s, threads %ld seed %ld: not at the release (%d) naming the kbd_mma (%d): %s", er_name[brk], threads,
                 seed, MT_LINE(er_line_release), MT_LINE(er_line_mma), st.msg);
      MT_ASSERT_HAS(st, how);
      mt_fmt(a, sizeof a, "What the machine saw next: %s:%d: warp 0 writes ", __FILE__, MT_LINE(er_line_load_a));
      mt_fmt(b, sizeof b, "What the machine saw next: %s:%d: warp 0 writes ", __FILE__, MT_LINE(er_line_load_b));
      if (!strstr(st.msg, a) && !strstr(st.msg, b))
        fail_msg("%s, threads %ld seed %ld: the refill is not a load line (%d or %d): %s", er_name[brk], threads, seed,
                 MT_LINE(er_line_load_a), MT_LINE(er_line_load_b), st.msg);
    }
}

static void test_arrive_before_wait(void **state) {
  (void)state;
  er_expect(ER_BEFORE_WAIT, "while that wgmma was committed, with no wgmma.wait_group in that warp since");
}

static void test_release_at_newest(void **state) {
  (void)state;
  er_expect(ER_NEWEST_AT,
            "while that wgmma was committed, and the warp's last wgmma.wait_group(1) left its group pending");
}

static void test_wait1_newest(void **state) {
  (void)state;
  er_expect(ER_NEWEST_WAIT1,
            "while that wgmma was committed, and the warp's last wgmma.wait_group(1) left its group pending");
}

static void test_plain_arrive(void **state) {
  (void)state;
  er_expect(ER_PLAIN, "while that wgmma was committed, with no wgmma.wait_group in that warp since");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_clean),        MT_TEST(test_arrive_before_wait), MT_TEST(test_release_at_newest),
      MT_TEST(test_wait1_newest), MT_TEST(test_plain_arrive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
