/* tests/layout/test_layout.c - exhaustive checks of the fragment layouts in kbd/layout.h.
 *
 *   (a) bijection + coverage: every (t, i) lands inside the tile and every element is hit once;
 *   (b) agreement with the PTX ISA fragment tables (ptx-reference.md §4.3, §7.1), written out here
 *       element by element, with the CUTLASS/CuTe (thread, value) layouts decoded by a tiny CuTe
 *       evaluator, and with worked examples computed by hand;
 *   (c) ROW: vector chunks are contiguous and aligned, consecutive threads' chunks are adjacent;
 *   (d) the shape rules (function, runtime macro and _Static_assert) accept/reject what they should.
 * The expected values here never call the formulas of layout.h: they are enumerated independently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kbd/layout.h"

/* ---- (d, static part) the rules are constant expressions ------------------------------------ */

KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 64, 8, 128, 1);
KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 128, 256, 128, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_A, 32, 64, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_B, 64, 16, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(MMA_C, 16, 8, 32, 1);
KBD_LAYOUT_ASSERT_SHAPE(ROW, 1, 1024, 256, 4);
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_WGMMA_ACC, 64, 264, 128, 1), "N > 256 must be rejected");
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_WGMMA_ACC, 64, 12, 128, 1), "N % 8 != 0 must be rejected");
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_WGMMA_ACC, 32, 64, 128, 1), "M % 64 != 0 must be rejected");
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_ROW, 4, 6, 32, 4), "vec not dividing C must be rejected");
/* Degenerate arguments must not turn the macro into a division by zero (that would be a hard error). */
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_ROW, 4, 8, 0, 0), "zero threads/vec must be rejected");
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(0, 64, 64, 128, 1), "unknown layout id must be rejected");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_WGMMA_ACC, 128, 256, 128) == 256, "two m64n256 accumulators");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_MMA_A, 16, 16, 32) == 8, "a0..a7");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_MMA_B, 16, 8, 32) == 4, "b0..b3");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_MMA_C, 16, 8, 32) == 4, "c0..c3");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_ROW, 1, 1024, 256) == 4, "1x1024 over 256 threads");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(7, 16, 16, 32) == 0, "unknown layout id has no elements");

/* The id-driven form the tile macros can use: file scope, and inside a struct like a tile type. */
KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_WGMMA_ACC, 64, 64, 128, 1);
KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_ROW, 16, 64, 128, 8);
typedef struct probe_tile {
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_C, 32, 16, KBD_WARP_SIZE, 1);
  float v[KBD_LAYOUT_NPT(KBD_LAYOUT_MMA_C, 32, 16, KBD_WARP_SIZE)];
} probe_tile;
KBD_STATIC_ASSERT(sizeof(probe_tile) == 16 * sizeof(float), "32x16 MMA_C: 4 blocks x 4 registers per lane");

static void test_static_assert_block_scope(void **state) {
  (void)state;
  /* How the tile macros use it: a block-scope check plus an array sized by the layout. */
  KBD_LAYOUT_ASSERT_SHAPE(WGMMA_ACC, 64, 128, KBD_WARPGROUP_SIZE, 1);
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_MMA_B, 32, 16, KBD_WARP_SIZE, 1);
  float acc[KBD_LAYOUT_NPT(KBD_LAYOUT_WGMMA_ACC, 64, 128, KBD_WARPGROUP_SIZE)];
  KBD_STATIC_ASSERT(sizeof acc == 64 * sizeof(float), "m64n128 f32 accumulator = 64 registers per thread");
  acc[0] = 1.0f;
  assert_true(acc[0] == 1.0f);
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static const char *layout_name(int layout) {
  switch (layout) {
  case KBD_LAYOUT_ROW: return "ROW";
  case KBD_LAYOUT_WGMMA_ACC: return "WGMMA_ACC";
  case KBD_LAYOUT_MMA_A: return "MMA_A";
  case KBD_LAYOUT_MMA_B: return "MMA_B";
  case KBD_LAYOUT_MMA_C: return "MMA_C";
  default: return "?";
  }
}

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      print_error("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                             \
      fail_msg(__VA_ARGS__);                                                                                           \
    }                                                                                                                  \
  } while (0)

/* One hit counter per tile element, big enough for the largest tile tested. */
static unsigned char *g_hits;

static int setup(void **state) {
  (void)state;
  g_hits = (unsigned char *)malloc((size_t)KBD_LAYOUT_MAX_ELEMS);
  return g_hits ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  free(g_hits);
  g_hits = NULL;
  return 0;
}

/* (a) Every (t, i) lands inside the tile and hits a distinct element; npt*nthreads == R*C, so together
 * with distinctness every element is hit exactly once (also checked directly). */
static void check_bijection(int layout, int rows, int cols, int nthreads, int vec) {
  int npt = kbd_layout_npt(layout, rows, cols, nthreads);
  int owners = KBD_LAYOUT_THREADS(layout, nthreads);
  CHECK(kbd_layout_valid(layout, rows, cols, nthreads, vec), "%s %dx%d nt=%d vec=%d should be valid",
        layout_name(layout), rows, cols, nthreads, vec);
  CHECK((long long)npt * owners == (long long)rows * cols, "%s %dx%d: npt=%d x %d threads != %d elements",
        layout_name(layout), rows, cols, npt, owners, rows * cols);
  memset(g_hits, 0, (size_t)rows * (size_t)cols);
  for (int t = 0; t < owners; ++t) {
    for (int i = 0; i < npt; ++i) {
      kbd_coord c = kbd_layout_coord(layout, rows, cols, nthreads, vec, t, i);
      CHECK(c.row >= 0 && c.row < rows && c.col >= 0 && c.col < cols,
            "%s %dx%d nt=%d vec=%d: (t=%d,i=%d) -> (%d,%d) outside", layout_name(layout), rows, cols, nthreads, vec, t,
            i, c.row, c.col);
      unsigned char *h = &g_hits[(size_t)c.row * (size_t)cols + (size_t)c.col];
      CHECK(*h == 0, "%s %dx%d nt=%d vec=%d: (t=%d,i=%d) -> (%d,%d) hit twice", layout_name(layout), rows, cols,
            nthreads, vec, t, i, c.row, c.col);
      *h = 1;
    }
  }
  for (long e = 0; e < (long)rows * cols; ++e)
    CHECK(g_hits[e] == 1, "%s %dx%d: element %ld never hit", layout_name(layout), rows, cols, e);
}

static void expect_coord(kbd_coord got, int row, int col, const char *what) {
  CHECK(got.row == row && got.col == col, "%s: got (%d,%d), expected (%d,%d)", what, got.row, got.col, row, col);
}

/* ---- the PTX ISA tables (ptx-reference.md §7.1), one line per register ------------------------
 * Offsets from the lane's base: A and C from (g, 2q), B (k, n) from (2q, g); g = lane/4, q = lane%4. */
static const int kC16x8[4][2] = {
    {0, 0}, /* c0 = (g,   2q)   */
    {0, 1}, /* c1 = (g,   2q+1) */
    {8, 0}, /* c2 = (g+8, 2q)   */
    {8, 1}, /* c3 = (g+8, 2q+1) */
};
static const int kA16x16[8][2] = {
    {0, 0}, /* a0 = (g,   2q)     */
    {0, 1}, /* a1 = (g,   2q+1)   */
    {8, 0}, /* a2 = (g+8, 2q)     */
    {8, 1}, /* a3 = (g+8, 2q+1)   */
    {0, 8}, /* a4 = (g,   2q+8)   */
    {0, 9}, /* a5 = (g,   2q+9)   */
    {8, 8}, /* a6 = (g+8, 2q+8)   */
    {8, 9}, /* a7 = (g+8, 2q+9)   */
};
static const int kB16x8[4][2] = {
    {0, 0}, /* b0 = (k=2q,   n=g) */
    {1, 0}, /* b1 = (k=2q+1, n=g) */
    {8, 0}, /* b2 = (k=2q+8, n=g) */
    {9, 0}, /* b3 = (k=2q+9, n=g) */
};

/* (b) A warp-owned block layout: blocks of bh x bw elements visited row-major (column block fastest),
 * inside a block the registers in table order. Enumerated with nested loops, no divisions. */
static void check_mma_table(int layout, int rows, int cols, int bh, int bw, const int (*table)[2], int e,
                            int transposed_base) {
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, q = lane % 4;
    int br = transposed_base ? 2 * q : g, bc = transposed_base ? g : 2 * q;
    int i = 0;
    for (int bm = 0; bm < rows / bh; ++bm)
      for (int bn = 0; bn < cols / bw; ++bn)
        for (int j = 0; j < e; ++j, ++i) {
          kbd_coord c = kbd_layout_coord(layout, rows, cols, 32, 1, lane, i);
          int er = bm * bh + br + table[j][0], ec = bn * bw + bc + table[j][1];
          CHECK(c.row == er && c.col == ec, "%s %dx%d lane %d i %d (block %d,%d reg %d): got (%d,%d) want (%d,%d)",
                layout_name(layout), rows, cols, lane, i, bm, bn, j, c.row, c.col, er, ec);
        }
    CHECK(i == kbd_layout_npt(layout, rows, cols, 32), "%s %dx%d: table enumerated %d elements", layout_name(layout),
          rows, cols, i);
  }
}

/* ---- a tiny CuTe evaluator: a (thread, value) layout with flat modes -> column-major index ------
 * A coordinate x of a mode with shape (s0, s1, ...) splits colexicographically: x0 = x % s0,
 * x1 = (x / s0) % s1, ...; the index is sum x_k * d_k. */
typedef struct cute_mode {
  int n;
  int shape[4], stride[4];
} cute_mode;

static int cute_eval(const cute_mode *m, int x) {
  int idx = 0;
  for (int k = 0; k < m->n; ++k) {
    idx += (x % m->shape[k]) * m->stride[k];
    x /= m->shape[k];
  }
  return idx;
}

/* ---- (a) + (c): ROW ------------------------------------------------------------------------- */

static const int kThreads[] = {32, 64, 128, 256, 512, 1024};
static const int kVecs[] = {1, 2, 4, 8, 16};

/* (c) For every chunk j: thread t's vec elements are one aligned contiguous run of one row, thread
 * t+1's run starts right after it, and chunk j+1 of thread 0 follows chunk j of the last thread. */
static void check_row_coalescing(int rows, int cols, int nthreads, int vec) {
  int npt = kbd_layout_npt(KBD_LAYOUT_ROW, rows, cols, nthreads);
  long expect_start = 0;
  for (int j = 0; j < npt / vec; ++j) {
    for (int t = 0; t < nthreads; ++t) {
      kbd_coord c0 = kbd_layout_row(rows, cols, nthreads, vec, t, j * vec);
      long e0 = (long)c0.row * cols + c0.col;
      CHECK(e0 == expect_start, "ROW %dx%d nt=%d vec=%d: chunk %d of thread %d starts at %ld, expected %ld", rows,
            cols, nthreads, vec, j, t, e0, expect_start);
      CHECK(e0 % vec == 0, "ROW %dx%d vec=%d: chunk at %ld not vector aligned", rows, cols, vec, e0);
      for (int k = 1; k < vec; ++k) {
        kbd_coord ck = kbd_layout_row(rows, cols, nthreads, vec, t, j * vec + k);
        CHECK(ck.row == c0.row && ck.col == c0.col + k, "ROW %dx%d nt=%d vec=%d t=%d i=%d: (%d,%d) breaks the run",
              rows, cols, nthreads, vec, t, j * vec + k, ck.row, ck.col);
      }
      expect_start = e0 + vec;
    }
  }
  CHECK(expect_start == (long)rows * cols, "ROW %dx%d: chunks end at %ld", rows, cols, expect_start);
}

static int row_rule(int rows, int cols, int nthreads, int vec) {
  int vec_ok = vec == 1 || vec == 2 || vec == 4 || vec == 8 || vec == 16;
  long long n = (long long)rows * cols;
  return rows >= 1 && cols >= 1 && n <= (1 << 20) && nthreads >= 1 && nthreads <= 1024 && vec_ok && cols % vec == 0 &&
         n % ((long long)nthreads * vec) == 0;
}

static void test_row_bijection_and_coalescing(void **state) {
  static const int kRows[] = {1, 2, 3, 4, 5, 8, 16, 24, 32, 64, 96, 128, 256};
  static const int kCols[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 160, 256, 512, 1024};
  int shapes = 0;
  (void)state;
  for (size_t a = 0; a < sizeof kRows / sizeof kRows[0]; ++a)
    for (size_t b = 0; b < sizeof kCols / sizeof kCols[0]; ++b)
      for (size_t c = 0; c < sizeof kThreads / sizeof kThreads[0]; ++c)
        for (size_t d = 0; d < sizeof kVecs / sizeof kVecs[0]; ++d) {
          int r = kRows[a], cl = kCols[b], nt = kThreads[c], v = kVecs[d];
          int ok = row_rule(r, cl, nt, v);
          CHECK(kbd_layout_valid(KBD_LAYOUT_ROW, r, cl, nt, v) == ok, "ROW %dx%d nt=%d vec=%d: valid() != %d", r, cl,
                nt, v, ok);
          if (!ok) continue;
          CHECK(kbd_layout_npt(KBD_LAYOUT_ROW, r, cl, nt) == r * cl / nt, "ROW npt");
          check_bijection(KBD_LAYOUT_ROW, r, cl, nt, v);
          check_row_coalescing(r, cl, nt, v);
          ++shapes;
        }
  print_message("ROW: %d legal shapes checked\n", shapes);
  assert_true(shapes > 500);
}

/* Odd but legal owners (a CTA of 96 or 160 threads, a single thread) still give bijections. */
static void test_row_odd_thread_counts(void **state) {
  (void)state;
  check_bijection(KBD_LAYOUT_ROW, 3, 64, 96, 2);
  check_row_coalescing(3, 64, 96, 2);
  check_bijection(KBD_LAYOUT_ROW, 5, 32, 160, 1);
  check_row_coalescing(5, 32, 160, 1);
  check_bijection(KBD_LAYOUT_ROW, 7, 48, 1, 16);
  check_row_coalescing(7, 48, 1, 16);
}

/* ---- WGMMA_ACC --------------------------------------------------------------------------------- */

static void test_wgmma_bijection(void **state) {
  (void)state;
  for (int mb = 1; mb <= 4; ++mb)
    for (int n = 8; n <= 256; n += 8) {
      CHECK(kbd_layout_npt(KBD_LAYOUT_WGMMA_ACC, 64 * mb, n, 128) == mb * n / 2, "npt of %dx%d", 64 * mb, n);
      check_bijection(KBD_LAYOUT_WGMMA_ACC, 64 * mb, n, 128, 1);
    }
}

/* (b) §4.3 two ways: the decoded formula as printed, and the register list d[4j..4j+3] of each warp
 * (the mma C pattern on rows 16w..16w+15, column block j). */
static void test_wgmma_ptx_table(void **state) {
  (void)state;
  for (int mb = 1; mb <= 2; ++mb)
    for (int n = 8; n <= 256; n += 8)
      for (int t = 0; t < 128; ++t) {
        int w = t / 32, l = t % 32, g = l / 4, q = l % 4;
        for (int m = 0; m < mb; ++m)
          for (int r = 0; r < n / 2; ++r) { /* r: register index d[r] of the m-th instruction */
            int i = m * (n / 2) + r;
            kbd_coord c = kbd_layout_wgmma_acc(64 * mb, n, t, i);
            int er = 64 * m + 16 * w + l / 4 + 8 * ((r / 2) % 2), ec = 8 * (r / 4) + 2 * (l % 4) + (r % 2);
            CHECK(c.row == er && c.col == ec, "WGMMA %dx%d t=%d i=%d: got (%d,%d), formula (%d,%d)", 64 * mb, n, t, i,
                  c.row, c.col, er, ec);
          }
        int i = 0;
        for (int m = 0; m < mb; ++m)
          for (int j = 0; j < n / 8; ++j)
            for (int k = 0; k < 4; ++k, ++i) {
              kbd_coord c = kbd_layout_coord(KBD_LAYOUT_WGMMA_ACC, 64 * mb, n, 128, 1, t, i);
              expect_coord(c, 64 * m + 16 * w + g + kC16x8[k][0], 8 * j + 2 * q + kC16x8[k][1], "WGMMA register list");
            }
      }
}

/* (b) CUTLASS CLayout_64xN = ((4,8,4),(2,2,N/8)) : ((128,1,16),(64,8,512)), (t, v) -> m + 64*n. */
static void test_wgmma_cute(void **state) {
  (void)state;
  for (int n = 8; n <= 256; n += 8) {
    cute_mode thr = {3, {4, 8, 4, 0}, {128, 1, 16, 0}};
    cute_mode val = {3, {2, 2, n / 8, 0}, {64, 8, 512, 0}};
    for (int t = 0; t < 128; ++t)
      for (int v = 0; v < n / 2; ++v) {
        int idx = cute_eval(&thr, t) + cute_eval(&val, v);
        expect_coord(kbd_layout_wgmma_acc(64, n, t, v), idx % 64, idx / 64, "WGMMA vs CLayout_64xN");
        /* the second stacked accumulator is the same layout 64 rows down */
        expect_coord(kbd_layout_wgmma_acc(128, n, t, n / 2 + v), 64 + idx % 64, idx / 64, "WGMMA m-block 1");
      }
  }
}

/* Each warp's share of the warpgroup accumulator is an MMA_C tile on its 16 rows (the property the
 * header uses: one definition of the C pattern). */
static void test_wgmma_warp_is_mma_c(void **state) {
  (void)state;
  for (int mb = 1; mb <= 2; ++mb)
    for (int n = 8; n <= 256; n += 8)
      for (int t = 0; t < 128; ++t)
        for (int i = 0; i < mb * n / 2; ++i) {
          kbd_coord a = kbd_layout_wgmma_acc(64 * mb, n, t, i);
          kbd_coord c = kbd_layout_mma_c(16 * mb, n, t % 32, i); /* warp's rows, compacted */
          int m = c.row / 16;
          expect_coord(a, 64 * m + 16 * (t / 32) + c.row % 16, c.col, "WGMMA warp slice == MMA_C");
        }
}

/* ---- MMA_A / MMA_B / MMA_C ------------------------------------------------------------------ */

static void test_mma_bijection(void **state) {
  (void)state;
  for (int bm = 1; bm <= 4; ++bm)
    for (int bn = 1; bn <= 4; ++bn) {
      check_bijection(KBD_LAYOUT_MMA_A, 16 * bm, 16 * bn, 32, 1);
      check_bijection(KBD_LAYOUT_MMA_B, 16 * bm, 8 * bn, 32, 1);
      check_bijection(KBD_LAYOUT_MMA_C, 16 * bm, 8 * bn, 32, 1);
    }
  check_bijection(KBD_LAYOUT_MMA_C, 128, 64, 32, 1); /* a larger per-warp accumulator */
}

static void test_mma_ptx_tables(void **state) {
  (void)state;
  for (int bm = 1; bm <= 4; ++bm)
    for (int bn = 1; bn <= 4; ++bn) {
      check_mma_table(KBD_LAYOUT_MMA_A, 16 * bm, 16 * bn, 16, 16, kA16x16, 8, 0);
      check_mma_table(KBD_LAYOUT_MMA_B, 16 * bm, 8 * bn, 16, 8, kB16x8, 4, 1);
      check_mma_table(KBD_LAYOUT_MMA_C, 16 * bm, 8 * bn, 16, 8, kC16x8, 4, 0);
    }
}

/* (b) CUTLASS SM80 m16n8k16 traits: A ((4,8),(2,2,2)):((32,1),(16,8,128)) -> m + 16k;
 * B ((4,8),(2,2)):((16,1),(8,64)) -> n + 8k; C (SM80_16x8_Row) ((4,8),(2,2)):((32,1),(16,8)) -> m + 16n. */
static void test_mma_cute(void **state) {
  cute_mode thr_ac = {2, {4, 8, 0, 0}, {32, 1, 0, 0}}, thr_b = {2, {4, 8, 0, 0}, {16, 1, 0, 0}};
  cute_mode val_a = {3, {2, 2, 2, 0}, {16, 8, 128, 0}}, val_b = {2, {2, 2, 0, 0}, {8, 64, 0, 0}};
  cute_mode val_c = {2, {2, 2, 0, 0}, {16, 8, 0, 0}};
  (void)state;
  for (int l = 0; l < 32; ++l) {
    for (int v = 0; v < 8; ++v) {
      int idx = cute_eval(&thr_ac, l) + cute_eval(&val_a, v);
      expect_coord(kbd_layout_mma_a(16, 16, l, v), idx % 16, idx / 16, "MMA_A vs SM80 ALayout");
    }
    for (int v = 0; v < 4; ++v) {
      int ib = cute_eval(&thr_b, l) + cute_eval(&val_b, v), ic = cute_eval(&thr_ac, l) + cute_eval(&val_c, v);
      expect_coord(kbd_layout_mma_b(16, 8, l, v), ib / 8, ib % 8, "MMA_B vs SM80 BLayout");
      expect_coord(kbd_layout_mma_c(16, 8, l, v), ic % 16, ic / 16, "MMA_C vs SM80_16x8_Row");
    }
  }
}

/* Register packing: for 16-bit elements the instructions take two elements per .b32 register,
 * {x[2r] low, x[2r+1] high}. A, C and the wgmma accumulator pair two adjacent columns of a row
 * (even first); B pairs two adjacent k of a column. */
static void test_register_pairs(void **state) {
  (void)state;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 128; i += 2) {
      kbd_coord a = kbd_layout_wgmma_acc(128, 128, t, i), b = kbd_layout_wgmma_acc(128, 128, t, i + 1);
      CHECK(a.row == b.row && a.col % 2 == 0 && b.col == a.col + 1, "WGMMA pair t=%d i=%d", t, i);
    }
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < 32; i += 2) {
      kbd_coord a = kbd_layout_mma_a(32, 32, l, i), a1 = kbd_layout_mma_a(32, 32, l, i + 1);
      kbd_coord b = kbd_layout_mma_b(32, 32, l, i), b1 = kbd_layout_mma_b(32, 32, l, i + 1);
      kbd_coord c = kbd_layout_mma_c(32, 32, l, i), c1 = kbd_layout_mma_c(32, 32, l, i + 1);
      CHECK(a.row == a1.row && a.col % 2 == 0 && a1.col == a.col + 1, "MMA_A pair l=%d i=%d", l, i);
      CHECK(b.col == b1.col && b.row % 2 == 0 && b1.row == b.row + 1, "MMA_B pair l=%d i=%d", l, i);
      CHECK(c.row == c1.row && c.col % 2 == 0 && c1.col == c.col + 1, "MMA_C pair l=%d i=%d", l, i);
    }
  }
}

/* ---- worked examples, by hand ---------------------------------------------------------------- */

static void test_worked_examples(void **state) {
  (void)state;
  /* WGMMA 64x64, t=37, i=5: w = 1, l = 5, g = 1, q = 1; d[5] is in column block 5/4 = 1, (5/2)%2 = 0
   * (upper row), 5%2 = 1 (odd column): row = 16*1 + 1 + 0 = 17, col = 8*1 + 2*1 + 1 = 11. */
  expect_coord(kbd_layout_wgmma_acc(64, 64, 37, 5), 17, 11, "wgmma t=37 i=5");
  /* WGMMA 64x64, t=127, i=31: w = 3, g = 7, q = 3; block 7, (31/2)%2 = 1: row 48+7+8 = 63, col 56+6+1 = 63. */
  expect_coord(kbd_layout_wgmma_acc(64, 64, 127, 31), 63, 63, "wgmma last element");
  /* WGMMA 64x24, t=66, i=10: w = 2, l = 2, g = 0, q = 2; block 2, (10/2)%2 = 1: row 32+0+8 = 40, col 16+4 = 20. */
  expect_coord(kbd_layout_wgmma_acc(64, 24, 66, 10), 40, 20, "wgmma n24 t=66 i=10");
  /* WGMMA 128x16 (two accumulators, 8 per thread each), t=0, i=9: m-block 1, d[1]: (64, 1). */
  expect_coord(kbd_layout_wgmma_acc(128, 16, 0, 9), 64, 1, "wgmma m-block 1");
  /* MMA_C 32x16 (2x2 blocks), lane 13 (g = 3, q = 1), i=10: block 2 = (1, 0), c2: row 16+3+8 = 27, col 2. */
  expect_coord(kbd_layout_mma_c(32, 16, 13, 10), 27, 2, "mma_c lane 13 i 10");
  /* same tile, i=7: block 1 = (0, 1), c3: row 3+8 = 11, col 8+2+1 = 11. */
  expect_coord(kbd_layout_mma_c(32, 16, 13, 7), 11, 11, "mma_c lane 13 i 7");
  /* MMA_A 16x16, lane 22 (g = 5, q = 2): a6 = (g+8, 2q+8) = (13, 12); a5 = (g, 2q+9) = (5, 13). */
  expect_coord(kbd_layout_mma_a(16, 16, 22, 6), 13, 12, "mma_a a6");
  expect_coord(kbd_layout_mma_a(16, 16, 22, 5), 5, 13, "mma_a a5");
  /* MMA_A 32x32 (2x2 blocks), lane 31 (g = 7, q = 3), i=27: block 3 = (1, 1), a3 = (g+8, 2q+1): (31, 23). */
  expect_coord(kbd_layout_mma_a(32, 32, 31, 27), 31, 23, "mma_a 32x32");
  /* MMA_B 16x8, lane 9 (g = 2, q = 1): b3 = (k = 2q+9, n = g) = (11, 2). */
  expect_coord(kbd_layout_mma_b(16, 8, 9, 3), 11, 2, "mma_b b3");
  /* MMA_B 32x16 (2x2 blocks), lane 9, i=13: block 3 = (1, 1), b1 = (2q+1, g): (16+3, 8+2) = (19, 10). */
  expect_coord(kbd_layout_mma_b(32, 16, 9, 13), 19, 10, "mma_b 32x16");
  /* ROW 1x1024 f32 over 256 threads, vec 4 (one ld.v4.f32 each): t=5, i=2 -> e = 5*4 + 2 = 22. */
  expect_coord(kbd_layout_row(1, 1024, 256, 4, 5, 2), 0, 22, "row 1x1024");
  /* ROW 64x64 f16 over 128 threads, vec 8: t=9, i=13 -> j = 1, k = 5, e = (128+9)*8 + 5 = 1101 = 17*64 + 13. */
  expect_coord(kbd_layout_row(64, 64, 128, 8, 9, 13), 17, 13, "row 64x64");
  /* ROW 8x24 over 32 threads, vec 2 (npt 6): t=31, i=5 -> j = 2, k = 1, e = (64+31)*2 + 1 = 191 = (7, 23). */
  expect_coord(kbd_layout_row(8, 24, 32, 2, 31, 5), 7, 23, "row 8x24 last");
}

/* ---- dispatcher and npt --------------------------------------------------------------------- */

static void test_dispatch_and_npt(void **state) {
  (void)state;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 64; ++i) {
      kbd_coord x = kbd_layout_coord(KBD_LAYOUT_WGMMA_ACC, 64, 128, 128, 1, t, i);
      kbd_coord y = kbd_layout_wgmma_acc(64, 128, t, i);
      CHECK(x.row == y.row && x.col == y.col, "dispatch WGMMA");
      x = kbd_layout_coord(KBD_LAYOUT_ROW, 32, 64, 128, 4, t, i % 16);
      y = kbd_layout_row(32, 64, 128, 4, t, i % 16);
      CHECK(x.row == y.row && x.col == y.col, "dispatch ROW");
    }
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 16; ++i) {
      kbd_coord x = kbd_layout_coord(KBD_LAYOUT_MMA_A, 32, 32, 32, 1, l, i), y = kbd_layout_mma_a(32, 32, l, i);
      CHECK(x.row == y.row && x.col == y.col, "dispatch MMA_A");
      x = kbd_layout_coord(KBD_LAYOUT_MMA_B, 32, 16, 32, 1, l, i), y = kbd_layout_mma_b(32, 16, l, i);
      CHECK(x.row == y.row && x.col == y.col, "dispatch MMA_B");
      x = kbd_layout_coord(KBD_LAYOUT_MMA_C, 32, 16, 32, 1, l, i), y = kbd_layout_mma_c(32, 16, l, i);
      CHECK(x.row == y.row && x.col == y.col, "dispatch MMA_C");
    }
  expect_coord(kbd_layout_coord(0, 16, 16, 32, 1, 0, 0), -1, -1, "unknown layout id");
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_WGMMA_ACC, 64, 256, 128), 128);
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_WGMMA_ACC, 64, 256, 999), 128); /* owner fixed by the instruction */
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_MMA_A, 64, 32, 32), 64);
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_MMA_B, 32, 32, 32), 32);
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_MMA_C, 16, 8, 32), 4);
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_ROW, 64, 64, 128), 32);
  assert_int_equal(kbd_layout_npt(99, 64, 64, 128), 0);
}

/* ---- (d) shape rules ------------------------------------------------------------------------ */

typedef struct shape_case {
  int layout, rows, cols, nthreads, vec;
} shape_case;

static void test_rejects(void **state) {
  static const shape_case bad[] = {
      {KBD_LAYOUT_WGMMA_ACC, 64, 0, 128, 1},      /* N = 0 */
      {KBD_LAYOUT_WGMMA_ACC, 64, 4, 128, 1},      /* N < 8 */
      {KBD_LAYOUT_WGMMA_ACC, 64, 12, 128, 1},     /* N not a multiple of 8 */
      {KBD_LAYOUT_WGMMA_ACC, 64, 100, 128, 1},    /* N not a multiple of 8 */
      {KBD_LAYOUT_WGMMA_ACC, 64, 264, 128, 1},    /* N > 256 */
      {KBD_LAYOUT_WGMMA_ACC, 64, 512, 128, 1},    /* N > 256 */
      {KBD_LAYOUT_WGMMA_ACC, 32, 64, 128, 1},     /* M not a multiple of 64 */
      {KBD_LAYOUT_WGMMA_ACC, 96, 64, 128, 1},     /* M not a multiple of 64 */
      {KBD_LAYOUT_WGMMA_ACC, 0, 64, 128, 1},      /* empty */
      {KBD_LAYOUT_WGMMA_ACC, -64, 64, 128, 1},    /* negative */
      {KBD_LAYOUT_WGMMA_ACC, 64, 64, 32, 1},      /* owned by a warp, not a warpgroup */
      {KBD_LAYOUT_WGMMA_ACC, 64, 64, 256, 1},     /* owned by two warpgroups */
      {KBD_LAYOUT_MMA_C, 8, 8, 32, 1},            /* M not a multiple of 16 */
      {KBD_LAYOUT_MMA_C, 16, 4, 32, 1},           /* N not a multiple of 8 */
      {KBD_LAYOUT_MMA_C, 16, 12, 32, 1},          /* N not a multiple of 8 */
      {KBD_LAYOUT_MMA_C, 16, 8, 64, 1},           /* not a warp */
      {KBD_LAYOUT_MMA_A, 16, 8, 32, 1},           /* K not a multiple of 16 */
      {KBD_LAYOUT_MMA_A, 24, 16, 32, 1},          /* M not a multiple of 16 */
      {KBD_LAYOUT_MMA_A, 16, 16, 128, 1},         /* not a warp */
      {KBD_LAYOUT_MMA_B, 8, 8, 32, 1},            /* K not a multiple of 16 */
      {KBD_LAYOUT_MMA_B, 16, 12, 32, 1},          /* N not a multiple of 8 */
      {KBD_LAYOUT_MMA_B, 16, 8, 16, 1},           /* not a warp */
      {KBD_LAYOUT_ROW, 4, 6, 32, 4},              /* vec does not divide C */
      {KBD_LAYOUT_ROW, 4, 24, 32, 16},            /* vec does not divide C */
      {KBD_LAYOUT_ROW, 16, 48, 32, 3},            /* vec not a power of two */
      {KBD_LAYOUT_ROW, 16, 64, 32, 32},           /* vec > 16 (no 32-element vector access) */
      {KBD_LAYOUT_ROW, 16, 64, 32, 0},            /* vec 0 */
      {KBD_LAYOUT_ROW, 1, 32, 32, 2},             /* R*C not a multiple of nthreads*vec */
      {KBD_LAYOUT_ROW, 3, 40, 128, 1},            /* R*C not a multiple of nthreads */
      {KBD_LAYOUT_ROW, 64, 64, 0, 1},             /* no threads */
      {KBD_LAYOUT_ROW, 64, 64, 2048, 1},          /* more threads than a CTA */
      {KBD_LAYOUT_ROW, 2048, 1024, 256, 4},       /* over KBD_LAYOUT_MAX_ELEMS */
      {KBD_LAYOUT_ROW, 0, 64, 32, 1},             /* empty */
      {0, 64, 64, 128, 1},                        /* unknown ids */
      {6, 64, 64, 128, 1},
  };
  (void)state;
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    shape_case s = bad[k];
    CHECK(!kbd_layout_valid(s.layout, s.rows, s.cols, s.nthreads, s.vec), "case %zu (%s %dx%d nt=%d vec=%d) accepted",
          k, layout_name(s.layout), s.rows, s.cols, s.nthreads, s.vec);
    CHECK(!KBD_LAYOUT_SHAPE_OK(s.layout, s.rows, s.cols, s.nthreads, s.vec), "macro accepted case %zu", k);
  }
}

/* Function, macro (evaluated at run time) and a rule written out here agree on a dense grid that
 * crosses every boundary, illegal shapes included. */
static void test_rules_grid(void **state) {
  static const int kOwners[] = {0, 1, 16, 32, 64, 96, 128, 256, 1024, 2048};
  int accepted[6] = {0};
  (void)state;
  for (int r = -16; r <= 272; r += 4)
    for (int c = -8; c <= 300; ++c)
      for (size_t o = 0; o < sizeof kOwners / sizeof kOwners[0]; ++o) {
        int nt = kOwners[o];
        int want[6];
        want[KBD_LAYOUT_WGMMA_ACC] = r > 0 && r % 64 == 0 && c % 8 == 0 && c >= 8 && c <= 256 && nt == 128;
        want[KBD_LAYOUT_MMA_A] = r > 0 && r % 16 == 0 && c > 0 && c % 16 == 0 && nt == 32;
        want[KBD_LAYOUT_MMA_B] = r > 0 && r % 16 == 0 && c > 0 && c % 8 == 0 && nt == 32;
        want[KBD_LAYOUT_MMA_C] = want[KBD_LAYOUT_MMA_B];
        for (int layout = KBD_LAYOUT_WGMMA_ACC; layout <= KBD_LAYOUT_MMA_C; ++layout) {
          int got = kbd_layout_valid(layout, r, c, nt, 1);
          CHECK(got == want[layout], "%s %dx%d nt=%d: valid()=%d, rule says %d", layout_name(layout), r, c, nt, got,
                want[layout]);
          CHECK(KBD_LAYOUT_SHAPE_OK(layout, r, c, nt, 1) == got, "macro/function disagree");
          accepted[layout] += got;
        }
        for (int v = 0; v <= 17; ++v) {
          int got = kbd_layout_valid(KBD_LAYOUT_ROW, r, c, nt, v);
          CHECK(got == row_rule(r, c, nt, v), "ROW %dx%d nt=%d vec=%d: valid()=%d", r, c, nt, v, got);
          CHECK(KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_ROW, r, c, nt, v) == got, "ROW macro/function disagree");
          accepted[KBD_LAYOUT_ROW] += got;
        }
      }
  /* 4 M values x 32 N values for wgmma; sanity that the grid really crosses legal shapes */
  assert_int_equal(accepted[KBD_LAYOUT_WGMMA_ACC], 4 * 32);
  for (int layout = KBD_LAYOUT_ROW; layout <= KBD_LAYOUT_MMA_C; ++layout) assert_true(accepted[layout] > 0);
}

/* Exactly the instruction's N list is legal (ptx-reference §4.1: 8..256 step 8 for f16/bf16/tf32/fp8),
 * so a legal WGMMA_ACC tile always maps onto real m64nN instructions. */
static void test_wgmma_n_list(void **state) {
  int count = 0;
  (void)state;
  for (int n = 0; n <= 512; ++n) count += kbd_layout_valid(KBD_LAYOUT_WGMMA_ACC, 64, n, 128, 1);
  assert_int_equal(count, 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static_assert_block_scope),
      cmocka_unit_test(test_row_bijection_and_coalescing),
      cmocka_unit_test(test_row_odd_thread_counts),
      cmocka_unit_test(test_wgmma_bijection),
      cmocka_unit_test(test_wgmma_ptx_table),
      cmocka_unit_test(test_wgmma_cute),
      cmocka_unit_test(test_wgmma_warp_is_mma_c),
      cmocka_unit_test(test_mma_bijection),
      cmocka_unit_test(test_mma_ptx_tables),
      cmocka_unit_test(test_mma_cute),
      cmocka_unit_test(test_register_pairs),
      cmocka_unit_test(test_worked_examples),
      cmocka_unit_test(test_dispatch_and_npt),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_rules_grid),
      cmocka_unit_test(test_wgmma_n_list),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
