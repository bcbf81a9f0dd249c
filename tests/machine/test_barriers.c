/* test_barriers.c - kbd_sync and named barriers (bar.sync / bar.arrive) on the CPU machine:
 * data exchange through shared memory, a missing barrier caught as poison, producer/consumer with
 * named barriers over several iterations, and barrier misuse reported with file:line. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

static const long k_seeds[] = {0, 1, 2, 3, 7, 12345};
static const long k_threads[] = {1, 2, 5};
#define NSEEDS ((int)(sizeof k_seeds / sizeof k_seeds[0]))
#define NTHREADS ((int)(sizeof k_threads / sizeof k_threads[0]))

/* ---- 1. exchange through shared memory across kbd_sync --------------------------------------------------- */

#define XW 4  /* warps per block */
#define XN 32 /* floats per warp slot */
#define XBLOCKS 6
#define XROUNDS 3

typedef struct {
  float *out;
  long long n;
  int rounds;
  int use_barrier;
} xchg_params;

static int xchg_load_line;

static float xchg_value(int blk, int round, int warp, int c) {
  return (float)(blk * 100000 + round * 1000 + warp * 100 + c);
}

/* Each round every warp writes its slot, then reads the slot of warp (w + 1 + round) % XW - written by a
 * different warp - and stores it to out. Two barriers per round: after the writes (so the reads see them)
 * and after the reads (so the next round's writes do not overwrite a slot still to be read). */
KBD_KERNEL(xchg, XW * 32, xchg_params) {
  KBD_SHARED(float, slots, XW * XN);
  KBD_TILE(f32, 1, XN, KBD_WARP) t;
  const int w = kbd_warp_id(), blk = (int)kbd_block_x();
  for (int r = 0; r < p.rounds; ++r) {
    kbd_zero(t);
    KBD_MAP(t, t, x, row, c, xchg_value(blk, r, w, c));
    kbd_store_smem(slots + w * XN, t, XN);
    if (p.use_barrier) kbd_sync();
    const int src = (w + 1 + r) % XW;
    MT_MARK(xchg_load_line); kbd_load_smem(t, slots + src * XN, XN);
    kbd_store(p.out, t, p.n, ((long long)(blk * p.rounds + r) * XW + w) * XN);
    if (p.use_barrier) kbd_sync();
  }
}

static void check_xchg(const float *out, int blocks, int rounds) {
  for (int b = 0; b < blocks; ++b)
    for (int r = 0; r < rounds; ++r)
      for (int w = 0; w < XW; ++w)
        for (int c = 0; c < XN; ++c) {
          const float got = out[((b * rounds + r) * XW + w) * XN + c];
          const float want = xchg_value(b, r, (w + 1 + r) % XW, c);
          if (got != want)
            fail_msg("block %d round %d warp %d col %d: got %g, want %g (%s=%s %s=%s)", b, r, w, c, got, want,
                     "KBD_CPU_SEED", getenv("KBD_CPU_SEED"), "KBD_CPU_THREADS", getenv("KBD_CPU_THREADS"));
        }
}

static void test_sync_exchange_all_seeds_and_threads(void **state) {
  (void)state;
  const long long n = (long long)XBLOCKS * XROUNDS * XW * XN;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof(float)));
  for (int si = 0; si < NSEEDS; ++si)
    for (int ti = 0; ti < NTHREADS; ++ti) {
      mt_env(k_threads[ti], k_seeds[si]);
      memset(out, 0, (size_t)n * sizeof(float));
      xchg_params p = {out, n, XROUNDS, 1};
      MT_ASSERT_OK(xchg(kbd_cfg(kbd_dim(XBLOCKS, 1, 1), 0, NULL), p));
      check_xchg(out, XBLOCKS, XROUNDS);
    }
  MT_ASSERT_OK(kbd_free(out));
}

/* The same kernel without its barriers: with round-robin order warp 0 runs first and alone until it ends,
 * so its load of warp 1's slot (never written yet) must be reported as poison - at the load's line. */
static void test_missing_barrier_is_poison(void **state) {
  (void)state;
  const long long n = (long long)XROUNDS * XW * XN;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof(float)));
  mt_env(1, 0);
  xchg_params p = {out, n, XROUNDS, 0};
  kbd_status s = xchg(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_AT(s, MT_LINE(xchg_load_line));
  MT_ASSERT_HAS(s, "kbd_load_smem reads never-written shared memory");
  /* warp 0 reads slot 1: the first element of that slot is at byte offset 1 * XN * 4 */
  MT_ASSERT_HAS(s, "byte 128, tile element (0, 0))");
  MT_ASSERT_HAS(s, "(warp 0)");
  MT_ASSERT_HAS(s, "[kernel xchg, block (0,0,0)]");

  /* Control: the same launch with the barriers passes under round robin too. */
  p.use_barrier = 1;
  MT_ASSERT_OK(xchg(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p));
  check_xchg(out, 1, XROUNDS);
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- 2. named barriers: producer / consumer ---------------------------------------------------------------- */

#define PC_N 64 /* floats per producer */
#define PC_ITERS 5
#define PC_BLOCKS 3

typedef struct {
  float *out;
  long long n;
  int iters;
} pc_params;

static float pc_value(int blk, int it, int producer, int c) {
  return (float)(blk * 100000 + it * 1000 + producer * 100 + c);
}

/* Warps 0-1 produce, warps 2-3 consume. Barrier 1 ("full"): producers arrive, consumers sync.
 * Barrier 2 ("empty"): consumers arrive, producers sync before overwriting. 128 threads each. */
KBD_KERNEL(prodcons, 128, pc_params) {
  KBD_SHARED(float, buf, 2 * PC_N);
  const int w = kbd_warp_id(), blk = (int)kbd_block_x();
  for (int it = 0; it < p.iters; ++it) {
    if (w < 2) {
      KBD_TILE(f32, 1, PC_N, KBD_WARP) t;
      if (it > 0) kbd_bar_sync(2, 128);
      kbd_zero(t);
      KBD_MAP(t, t, x, r, c, pc_value(blk, it, w, c));
      kbd_store_smem(buf + w * PC_N, t, PC_N);
      kbd_bar_arrive(1, 128);
    } else {
      KBD_TILE(f32, 1, 2 * PC_N, KBD_WARP) both; /* both producers' slots */
      kbd_bar_sync(1, 128);
      kbd_load_smem(both, buf, 2 * PC_N);
      kbd_store(p.out, both, p.n, ((long long)(blk * p.iters + it) * 2 + (w - 2)) * 2 * PC_N);
      if (it + 1 < p.iters) kbd_bar_arrive(2, 128);
    }
  }
}

static void test_named_barrier_producer_consumer(void **state) {
  (void)state;
  const long long n = (long long)PC_BLOCKS * PC_ITERS * 2 * 2 * PC_N;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof(float)));
  for (int si = 0; si < NSEEDS; ++si)
    for (int ti = 0; ti < NTHREADS; ++ti) {
      mt_env(k_threads[ti], k_seeds[si]);
      memset(out, 0, (size_t)n * sizeof(float));
      pc_params p = {out, n, PC_ITERS};
      MT_ASSERT_OK(prodcons(kbd_cfg(kbd_dim(PC_BLOCKS, 1, 1), 0, NULL), p));
      for (int b = 0; b < PC_BLOCKS; ++b)
        for (int it = 0; it < PC_ITERS; ++it)
          for (int cons = 0; cons < 2; ++cons)
            for (int e = 0; e < 2 * PC_N; ++e) {
              const float got = out[((b * PC_ITERS + it) * 2 + cons) * 2 * PC_N + e];
              const float want = pc_value(b, it, e / PC_N, e % PC_N);
              if (got != want)
                fail_msg("seed %ld threads %ld: block %d iter %d consumer %d elem %d: got %g want %g", k_seeds[si],
                         k_threads[ti], b, it, cons, e, got, want);
            }
    }
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- 2b. misuse ------------------------------------------------------------------------------------------ */

enum {
  MIS_ID16,
  MIS_ID_NEG,
  MIS_COUNT48,
  MIS_COUNT_OVER_BLOCK,
  MIS_COUNT_MISMATCH,
  MIS_ARRIVE_ZERO,
  MIS_VALID_EXTREMES
};

typedef struct {
  int mode;
  int *ran; /* MIS_VALID_EXTREMES: warps past the barriers */
} mis_params;

static int mis_line, mis_first_line;

KBD_KERNEL(misuse, 128, mis_params) {
  const int w = kbd_warp_id();
  switch (p.mode) {
  case MIS_ID16:
    MT_MARK(mis_line); kbd_bar_sync(16, 128);
    break;
  case MIS_ID_NEG:
    MT_MARK(mis_line); kbd_bar_sync(-1, 128);
    break;
  case MIS_COUNT48:
    MT_MARK(mis_line); kbd_bar_sync(1, 48);
    break;
  case MIS_COUNT_OVER_BLOCK:
    MT_MARK(mis_line); kbd_bar_sync(1, 256);
    break;
  case MIS_COUNT_MISMATCH:
    if (w == 0) {
      MT_MARK(mis_first_line); kbd_bar_sync(3, 64);
    } else if (w == 1) {
      MT_MARK(mis_line); kbd_bar_sync(3, 96);
    }
    break;
  case MIS_ARRIVE_ZERO:
    MT_MARK(mis_line); kbd_bar_arrive(1, 0);
    break;
  case MIS_VALID_EXTREMES: /* the largest id and the whole block as count are legal */
    kbd_bar_sync(15, 128);
    kbd_bar_sync(0, 0);
    kbd_bar_sync(15, 0);
    if (w % 2 == 0) kbd_bar_arrive(7, 128); else kbd_bar_sync(7, 128);
    __atomic_fetch_add(p.ran, 1, __ATOMIC_RELAXED);
    break;
  }
}

static kbd_status run_misuse(int mode) {
  mis_params p = {mode, NULL};
  return misuse(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
}

static void test_barrier_id_out_of_range(void **state) {
  (void)state;
  kbd_status s = run_misuse(MIS_ID16);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "barrier id 16 is outside 0..15");
  MT_ASSERT_HAS(s, "(warp 0)");
  s = run_misuse(MIS_ID_NEG);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "barrier id -1 is outside 0..15");
}

static void test_barrier_count_not_warp_multiple(void **state) {
  (void)state;
  kbd_status s = run_misuse(MIS_COUNT48);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "thread count 48 must be a multiple of 32");
}

static void test_barrier_count_over_block(void **state) {
  (void)state;
  kbd_status s = run_misuse(MIS_COUNT_OVER_BLOCK);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "thread count 256");
  MT_ASSERT_HAS(s, "at most the block's 128 threads");
}

static void test_barrier_count_mismatch(void **state) {
  (void)state;
  mt_env(1, 0); /* warp 0 begins the instance with 64, warp 1 then arrives with 96 */
  kbd_status s = run_misuse(MIS_COUNT_MISMATCH);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "barrier 3 reached with thread count 96");
  char b[4096];
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "instance begun at %s:%d counts 64", __FILE__, MT_LINE(mis_first_line)));
  MT_ASSERT_HAS(s, "(warp 1)");
}

static void test_bar_arrive_count_zero(void **state) {
  (void)state;
  kbd_status s = run_misuse(MIS_ARRIVE_ZERO);
  MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
  MT_ASSERT_AT(s, MT_LINE(mis_line));
  MT_ASSERT_HAS(s, "bar.arrive on barrier 1 needs an explicit thread count");
}

static void test_barrier_valid_extremes(void **state) {
  (void)state;
  int *ran = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&ran, sizeof *ran));
  for (int si = 0; si < NSEEDS; ++si) {
    mt_env(1, k_seeds[si]);
    *ran = 0;
    mis_params p = {MIS_VALID_EXTREMES, ran};
    MT_ASSERT_OK(misuse(kbd_cfg(kbd_dim(2, 1, 1), 0, NULL), p));
    assert_int_equal(*ran, 2 * 4);
  }
  MT_ASSERT_OK(kbd_free(ran));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_sync_exchange_all_seeds_and_threads),
      MT_TEST(test_missing_barrier_is_poison),
      MT_TEST(test_named_barrier_producer_consumer),
      MT_TEST(test_barrier_id_out_of_range),
      MT_TEST(test_barrier_count_not_warp_multiple),
      MT_TEST(test_barrier_count_over_block),
      MT_TEST(test_barrier_count_mismatch),
      MT_TEST(test_bar_arrive_count_zero),
      MT_TEST(test_barrier_valid_extremes),
  };
  return cmocka_run_group_tests(tests, mt_group_setup, NULL);
}
