/* test_determinism.c - block/grid/warp indices of a 3D grid, bit-identical results for every host-thread
 * count and warp-order seed, and the warp order itself: round robin for seed 0, a seeded permutation
 * otherwise, the same for the same seed. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

/* ---- indices of a 3D grid ---------------------------------------------------------------------------------- */

#define GX 5
#define GY 3
#define GZ 2
#define NB (GX * GY * GZ)
#define IW 4 /* warps per block */

typedef struct {
  unsigned *blk; /* [linear block][warp][6]: block x y z, grid x y z as that warp saw them */
  int *warp;     /* [linear block][warp]: 100 per run of the warp's body + its kbd_warp_id() */
  int *tid;      /* [linear block][thread]: kbd_thread_idx(lane) + 1 */
} idx_params;

KBD_KERNEL(index_k, IW * 32, idx_params) {
  const unsigned bx = kbd_block_x(), by = kbd_block_y(), bz = kbd_block_z();
  const unsigned lin = bx + kbd_grid_x() * (by + kbd_grid_y() * bz);
  const int w = kbd_warp_id();
  unsigned *b = p.blk + ((size_t)lin * IW + (unsigned)w) * 6;
  b[0] = bx;
  b[1] = by;
  b[2] = bz;
  b[3] = kbd_grid_x();
  b[4] = kbd_grid_y();
  b[5] = kbd_grid_z();
  __atomic_fetch_add(&p.warp[lin * IW + (unsigned)w], 100 + w, __ATOMIC_RELAXED);
  KBD_FOR_LANES(lane) { p.tid[lin * IW * 32 + (unsigned)(w * 32 + lane)] += kbd_thread_idx(lane) + 1; }
}

static void test_3d_grid_indices(void **state) {
  (void)state;
  unsigned *blk = (unsigned *)calloc(NB * IW * 6, sizeof *blk);
  int *warp = (int *)calloc(NB * IW, sizeof *warp);
  int *tid = (int *)calloc(NB * IW * 32, sizeof *tid);
  assert_true(blk && warp && tid);
  const long threads[] = {1, 3};
  for (int ti = 0; ti < 2; ++ti) {
    mt_env(threads[ti], ti);
    memset(blk, 0xff, NB * IW * 6 * sizeof *blk);
    memset(warp, 0, NB * IW * sizeof *warp);
    memset(tid, 0, NB * IW * 32 * sizeof *tid);
    idx_params p = {blk, warp, tid};
    MT_ASSERT_OK(index_k(kbd_cfg(kbd_dim(GX, GY, GZ), 0, NULL), p));
    for (unsigned z = 0; z < GZ; ++z)
      for (unsigned y = 0; y < GY; ++y)
        for (unsigned x = 0; x < GX; ++x) {
          const unsigned lin = x + GX * (y + GY * z);
          const unsigned want[6] = {x, y, z, GX, GY, GZ};
          for (int w = 0; w < IW; ++w) {
            const unsigned *b = blk + ((size_t)lin * IW + (unsigned)w) * 6;
            for (int i = 0; i < 6; ++i)
              if (b[i] != want[i])
                fail_msg("block (%u,%u,%u) warp %d field %d: got %u want %u", x, y, z, w, i, b[i], want[i]);
            assert_int_equal(warp[lin * IW + (unsigned)w], 100 + w); /* ran once, with its own id */
          }
          for (int t = 0; t < IW * 32; ++t) assert_int_equal(tid[lin * IW * 32 + (unsigned)t], t + 1);
        }
  }
  free(blk);
  free(warp);
  free(tid);
}

/* ---- bit-identical results over host threads and seeds ----------------------------------------------------- */

#define DW 8     /* warps */
#define DN 32    /* floats per warp row */
#define DROUNDS 6
#define DBLOCKS 5

typedef struct {
  float *out;
  long long n;
} det_params;

static float det_init(int blk, int w, int c) { return (float)((blk * 7 + w * 13 + c * 5) % 17) * 0.37f + 0.11f * (float)c; }

/* A 1-D diffusion over the warps' rows: each round new[w] = 0.5 * cur[w] + 0.25 * (cur[w+1] + cur[w-1])
 * (cyclic), then the rows are squared-and-scaled so rounding makes the result sensitive to which values a
 * warp read. Two barriers per round make the reads see exactly the previous round. */
KBD_KERNEL(diffuse_k, DW * 32, det_params) {
  KBD_SHARED(float, rows, DW * DN);
  KBD_TILE(f32, 1, DN, KBD_WARP) a, b, c, s;
  const int w = kbd_warp_id(), blk = (int)kbd_block_x();
  kbd_zero(a);
  KBD_MAP(a, a, x, r, col, det_init(blk, w, col));
  kbd_store_smem(rows + w * DN, a, DN);
  kbd_sync();
  for (int r = 0; r < DROUNDS; ++r) {
    kbd_load_smem(a, rows + w * DN, DN);
    kbd_load_smem(b, rows + ((w + 1) % DW) * DN, DN);
    kbd_load_smem(c, rows + ((w + DW - 1) % DW) * DN, DN);
    kbd_sync();
    kbd_add(s, b, c);
    kbd_mul_s(s, s, 0.25f);
    kbd_mul_s(a, a, 0.5f);
    kbd_add(a, a, s);
    kbd_mul(s, a, a);
    kbd_mul_s(s, s, 0.01f);
    kbd_add(a, a, s);
    kbd_store_smem(rows + w * DN, a, DN);
    kbd_sync();
  }
  kbd_load_smem(a, rows + ((w + 3) % DW) * DN, DN);
  kbd_store(p.out, a, p.n, ((long long)blk * DW + w) * DN);
}

/* The same arithmetic on the host, in the same order (f32, no contraction under -std=c11). */
static void det_reference(float *out) {
  for (int blk = 0; blk < DBLOCKS; ++blk) {
    float cur[DW][DN], nxt[DW][DN];
    for (int w = 0; w < DW; ++w)
      for (int c = 0; c < DN; ++c) cur[w][c] = det_init(blk, w, c);
    for (int r = 0; r < DROUNDS; ++r) {
      for (int w = 0; w < DW; ++w)
        for (int c = 0; c < DN; ++c) {
          float s = cur[(w + 1) % DW][c] + cur[(w + DW - 1) % DW][c];
          s = s * 0.25f;
          float a = cur[w][c] * 0.5f;
          a = a + s;
          s = a * a;
          s = s * 0.01f;
          nxt[w][c] = a + s;
        }
      memcpy(cur, nxt, sizeof cur);
    }
    for (int w = 0; w < DW; ++w)
      for (int c = 0; c < DN; ++c) out[(blk * DW + w) * DN + c] = cur[(w + 3) % DW][c];
  }
}

static void test_bit_identical_over_threads_and_seeds(void **state) {
  (void)state;
  const long long n = (long long)DBLOCKS * DW * DN;
  float *out = NULL, *ref = (float *)malloc((size_t)n * sizeof *ref);
  assert_non_null(ref);
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof *out));
  det_reference(ref);
  const long threads[] = {1, 2, 3, 8};
  for (int ti = 0; ti < 4; ++ti)
    for (long seed = 0; seed <= 5; ++seed) {
      mt_env(threads[ti], seed);
      memset(out, 0, (size_t)n * sizeof *out);
      det_params p = {out, n};
      MT_ASSERT_OK(diffuse_k(kbd_cfg(kbd_dim(DBLOCKS, 1, 1), 0, NULL), p));
      if (memcmp(out, ref, (size_t)n * sizeof *out) != 0) {
        for (long long i = 0; i < n; ++i)
          if (memcmp(&out[i], &ref[i], sizeof *out) != 0)
            fail_msg("threads %ld seed %ld: element %lld is %.9g, reference %.9g", threads[ti], seed, i, out[i],
                     ref[i]);
      }
    }
  MT_ASSERT_OK(kbd_free(out));
  free(ref);
}

/* ---- warp order -------------------------------------------------------------------------------------------- */

#define OW 8 /* warps */
#define OBLOCKS 3

typedef struct {
  int *cnt; /* [block][2] entries in each log */
  int *log; /* [block][2][OW] warp ids in the order the warps got there */
} ord_params;

/* Log 0: the order in which the warps first run. Log 1: the order in which they leave a kbd_sync. */
KBD_KERNEL(order_k, OW * 32, ord_params) {
  const int blk = (int)kbd_block_x(), w = kbd_warp_id();
  KBD_FOR_LANES(lane) {
    if (lane == 0) {
      const int i = __atomic_fetch_add(&p.cnt[blk * 2], 1, __ATOMIC_RELAXED);
      p.log[(blk * 2) * OW + i] = w;
    }
  }
  kbd_sync();
  KBD_FOR_LANES(lane) {
    if (lane == 0) {
      const int i = __atomic_fetch_add(&p.cnt[blk * 2 + 1], 1, __ATOMIC_RELAXED);
      p.log[(blk * 2 + 1) * OW + i] = w;
    }
  }
}

static void run_order(long threads, long seed, int *log) {
  int cnt[OBLOCKS * 2] = {0};
  mt_env(threads, seed);
  memset(log, 0xff, OBLOCKS * 2 * OW * sizeof *log);
  ord_params p = {cnt, log};
  MT_ASSERT_OK(order_k(kbd_cfg(kbd_dim(OBLOCKS, 1, 1), 0, NULL), p));
  for (int i = 0; i < OBLOCKS * 2; ++i) assert_int_equal(cnt[i], OW);
  for (int l = 0; l < OBLOCKS * 2; ++l) { /* each log is a permutation of 0..OW-1 */
    int seen = 0;
    for (int i = 0; i < OW; ++i) {
      const int w = log[l * OW + i];
      assert_true(w >= 0 && w < OW);
      assert_false(seen & (1 << w));
      seen |= 1 << w;
    }
  }
}

static int is_identity(const int *v) {
  for (int i = 0; i < OW; ++i)
    if (v[i] != i) return 0;
  return 1;
}

static void test_warp_order(void **state) {
  (void)state;
  int log[OBLOCKS * 2 * OW], again[OBLOCKS * 2 * OW];
  /* seed 0: round robin in every block, at the start and after the barrier */
  run_order(1, 0, log);
  for (int l = 0; l < OBLOCKS * 2; ++l)
    if (!is_identity(log + l * OW)) fail_msg("seed 0: log %d is not 0,1,...,%d", l, OW - 1);
  run_order(2, 0, again);
  assert_memory_equal(log, again, sizeof log);

  int differs = 0;
  for (long seed = 1; seed <= 5; ++seed) {
    run_order(1, seed, log);
    for (int b = 0; b < OBLOCKS; ++b) differs += !is_identity(log + (b * 2) * OW);
    /* the same seed gives the same order, for any host-thread count */
    run_order(1, seed, again);
    assert_memory_equal(log, again, sizeof log);
    run_order(3, seed, again);
    assert_memory_equal(log, again, sizeof log);
  }
  if (differs == 0) fail_msg("seeds 1..5 all ran the warps in round-robin order");
  /* a large seed, and two different seeds giving two different orders */
  run_order(1, 12345, log);
  run_order(1, 54321, again);
  assert_true(memcmp(log, again, sizeof log) != 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_3d_grid_indices),
      MT_TEST(test_bit_identical_over_threads_and_seeds),
      MT_TEST(test_warp_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
