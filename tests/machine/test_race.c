/* test_race.c - the shadow state and the happens-before race checker of the CPU machine.
 *
 * Every racy kernel here must be reported in its FIRST run under the default schedule (and under every
 * seed), with both sites, the warps, the allocation, the byte and the tile element; every correct kernel
 * must run clean under every seed, whatever values it stores.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define RW 4 /* warps */
#define RN 32

typedef struct {
  int mode;
  float *out;
  uint32_t *flag;
} race_params;

enum {
  R_REWRITE_NO_BARRIER, /* warp 0 rewrites warp 1's slot while warp 1 reads it: RAW or WAR, any order */
  R_REUSE_NO_TRAILING,  /* a ring reused without the trailing barrier: write after another warp's read */
  R_TWO_WRITERS,        /* warps 0 and 1 store the same bytes: write after write */
  R_CORRECT_RING,       /* the same ring with both barriers: no report */
  R_PRODUCER_CONSUMER,  /* bar.arrive by the producer, bar.sync by the consumer: no report */
  R_POISON_VALUES       /* stores the old poison bit patterns as data: no report */
};

static int race_line_a, race_line_b;

KBD_KERNEL(race_k, RW * 32, race_params) {
  const int w = kbd_warp_id();
  KBD_SHARED(float, s, RW * RN);
  KBD_TILE(f32, 1, RN, KBD_WARP) t;
  kbd_fill(t, (float)(w + 1));
  switch (p.mode) {
  case R_REWRITE_NO_BARRIER:
    kbd_store_smem(s + w * RN, t, RN);
    kbd_sync();
    if (w == 0) {
      MT_MARK(race_line_a); kbd_store_smem(s + 1 * RN, t, RN);
    }
    if (w == 1) {
      MT_MARK(race_line_b); kbd_load_smem(t, s + 1 * RN, RN);
    }
    break;
  case R_REUSE_NO_TRAILING:
  case R_CORRECT_RING:
    for (int round = 0; round < 3; ++round) {
      MT_MARK(race_line_a); kbd_store_smem(s + w * RN, t, RN);
      kbd_sync();
      MT_MARK(race_line_b); kbd_load_smem(t, s + ((w + 1) % RW) * RN, RN);
      if (p.mode == R_CORRECT_RING) kbd_sync(); /* the trailing barrier: nobody overwrites a slot being read */
    }
    break;
  case R_TWO_WRITERS:
    if (w < 2) {
      MT_MARK(race_line_a); kbd_store_smem(s, t, RN);
    }
    break;
  case R_PRODUCER_CONSUMER:
    for (int round = 0; round < 4; ++round) {
      if (w == 0) { /* producer: fill, then signal "full" without waiting */
        kbd_fill(t, (float)round);
        kbd_bar_sync(2, 64); /* wait "empty": the consumer has read the previous round */
        kbd_store_smem(s, t, RN);
        kbd_bar_arrive(1, 64);
      } else if (w == 1) { /* consumer */
        kbd_bar_arrive(2, 64);
        kbd_bar_sync(1, 64);
        kbd_load_smem(t, s, RN);
      }
    }
    break;
  case R_POISON_VALUES: {
    KBD_SHARED(int32_t, si, RW * RN);
    KBD_TILE(i32, 1, RN, KBD_WARP) ti;
    /* 0x7FBF7FBF, the value the old machine mistook for "never written", comes in from global memory */
    kbd_load(ti, (const int32_t *)(const void *)p.out, RW * RN, w * RN);
    kbd_store_smem(si + w * RN, ti, RN);
    kbd_sync();
    kbd_load_smem(ti, si + ((w + 1) % RW) * RN, RN);
    kbd_store((int32_t *)(void *)p.out, ti, RW * RN, w * RN);
    break;
  }
  }
  if (p.mode != R_POISON_VALUES) kbd_store(p.out, t, RW * RN, w * RN);
}

static kbd_status run_race(int mode, long seed) {
  mt_env(1, seed);
  float *out = NULL;
  kbd_status s = kbd_malloc((void **)&out, RW * RN * sizeof(float));
  if (!kbd_ok(s)) return s;
  race_params p = {mode, out, NULL};
  s = race_k(kbd_cfg_1d(1), p);
  kbd_free(out);
  return s;
}

static void test_rewrite_without_barrier(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed) {
    kbd_status s = run_race(R_REWRITE_NO_BARRIER, seed);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_HAS(s, "shared array declared at");
    MT_ASSERT_HAS(s, "tile element (0, ");
    MT_ASSERT_HAS(s, "nothing orders the two");
  }
  /* Default schedule: warp 0 writes first, warp 1's read is the second access. */
  kbd_status s = run_race(R_REWRITE_NO_BARRIER, 0);
  char b[4096];
  MT_ASSERT_AT(s, MT_LINE(race_line_b));
  MT_ASSERT_HAS(s, "data race (read after write)");
  MT_ASSERT_HAS(s, "this access: warp 1 reads it here (kbd_load_smem)");
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "earlier:     warp 0 wrote it at %s:%d", __FILE__, MT_LINE(race_line_a)));
  MT_ASSERT_HAS(s, "byte 128, tile element (0, 0)");
}

static void test_reuse_without_trailing_barrier(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed) {
    kbd_status s = run_race(R_REUSE_NO_TRAILING, seed);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_HAS(s, "data race (");
  }
  kbd_status s = run_race(R_REUSE_NO_TRAILING, 0);
  MT_ASSERT_AT(s, MT_LINE(race_line_a));
  MT_ASSERT_HAS(s, "data race (write after read)");
  char b[4096];
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "read it at %s:%d", __FILE__, MT_LINE(race_line_b)));
}

static void test_two_writers(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed) {
    kbd_status s = run_race(R_TWO_WRITERS, seed);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_AT(s, MT_LINE(race_line_a));
    MT_ASSERT_HAS(s, "data race (write after write)");
    MT_ASSERT_HAS(s, "byte 0, tile element (0, 0)");
  }
}

static void test_correct_kernels_run_clean(void **state) {
  (void)state;
  for (long seed = 0; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      mt_env(threads, seed);
      MT_ASSERT_OK(run_race(R_CORRECT_RING, seed));
      MT_ASSERT_OK(run_race(R_PRODUCER_CONSUMER, seed));
    }
}

static void test_any_value_is_data(void **state) {
  (void)state;
  int32_t *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, RW * RN * sizeof(int32_t)));
  race_params p = {R_POISON_VALUES, (float *)(void *)out, NULL};
  int32_t in[RW * RN];
  for (int i = 0; i < RW * RN; ++i)
    in[i] = 2143256511;
  for (long seed = 0; seed < 4; ++seed) {
    mt_env(1, seed);
    MT_ASSERT_OK(kbd_copy_to_device(out, in, sizeof in));
    MT_ASSERT_OK(race_k(kbd_cfg_1d(1), p));
    int32_t host[RW * RN];
    MT_ASSERT_OK(kbd_copy_to_host(host, out, sizeof host));
    for (int i = 0; i < RW * RN; ++i)
      assert_int_equal(host[i], 2143256511);
  }
  MT_ASSERT_OK(kbd_free(out));
}

static void test_race_check_switch(void **state) {
  (void)state;
  setenv("KBD_CPU_RACECHECK", "0", 1);
  kbd_status s = run_race(R_TWO_WRITERS, 0);
  unsetenv("KBD_CPU_RACECHECK");
  MT_ASSERT_OK(s); /* the race is not looked for; never-written reads still are */
  MT_ASSERT_CODE(run_race(R_TWO_WRITERS, 0), KBD_ERR_RACE);
}

/* ---- waits: a hand-written spin is a scheduling point, never a hang ---------------------------------------- */

static int spin_line;

KBD_KERNEL(spin_k, 64, race_params) {
  if (p.mode == 0) { /* nobody ever writes the flag */
    MT_MARK(spin_line); while (kbd_ld_acquire_u32(p.flag) == 0) {}
  } else if (kbd_warp_id() == 0) { /* warp 0 waits for warp 1 of the same block, which runs after it */
    while (kbd_ld_acquire_u32(p.flag) == 0) {}
  } else {
    for (int i = 0; i < 1000; ++i) kbd_syncwarp();
    kbd_st_release_u32(p.flag, 1u);
  }
}

static void test_hand_written_spin(void **state) {
  (void)state;
  uint32_t *flag = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&flag, sizeof *flag));
  setenv("KBD_CPU_SPIN_TIMEOUT_MS", "50", 1);
  for (long threads = 1; threads <= 2; ++threads) {
    mt_env(threads, 0);
    MT_ASSERT_OK(kbd_memset_device(flag, 0, sizeof *flag));
    race_params p = {0, NULL, flag};
    kbd_status s = spin_k(kbd_cfg_1d(1), p);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    char b[4096];
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "warp 0 at %s:%d polls memory", __FILE__, MT_LINE(spin_line)));
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "warp 1 at %s:%d polls memory", __FILE__, MT_LINE(spin_line)));
    MT_ASSERT_OK(kbd_memset_device(flag, 0, sizeof *flag));
    p.mode = 1;
    MT_ASSERT_OK(spin_k(kbd_cfg_1d(1), p));
  }
  unsetenv("KBD_CPU_SPIN_TIMEOUT_MS");
  MT_ASSERT_OK(kbd_free(flag));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_rewrite_without_barrier), MT_TEST(test_reuse_without_trailing_barrier),
      MT_TEST(test_two_writers),             MT_TEST(test_correct_kernels_run_clean),
      MT_TEST(test_any_value_is_data),       MT_TEST(test_race_check_switch),
      MT_TEST(test_hand_written_spin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
