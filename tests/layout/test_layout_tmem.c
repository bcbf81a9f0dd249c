/* tests/layout/test_layout_tmem.c - KBD_LAYOUT_TMEM_ACC, the register view of an M = 128 tcgen05 accumulator.
 *
 * Host checks (no kernel):
 *   (a) bijection + coverage of the layout for 128 x 8 .. 128 x 256 (step 8), 128 x 512, 256 x 64, 384 x 24;
 *   (b) agreement with the hardware facts, enumerated here independently of layout.h: tcgen05.ld.32x32b
 *       gives register j of lane l of warp w TMEM lane 32w + l, column j (ptx-reference §5.3), and D row m of
 *       an M = 128 MMA is TMEM lane m (§5.7, Layout D); block b of a taller tile is the b-th accumulator;
 *   (c) the shape rule (function, macro, static assertion) on a dense grid, and reject cases;
 *   (d) the shared-memory plan: run lengths, and the bank wavefronts of one warp-wide 16-byte store of 32
 *       rows, counted from kbd_smem_tile_offset (swizzled K-major: 4 = the minimum; NONE, 128-byte pitch: 32).
 * Kernels on the CPU machine:
 *   (e) row sum/max/min (f32, bit-exact against the documented per-thread pairwise tree) and i32
 *       sum/and/or/xor, column reductions (f32 bit-exact against the documented tree over rows), every
 *       lane's vector, kbd_vec_store, kbd_bcast_rows;
 *   (f) row scans (inclusive/exclusive sum and max) and totals against a sequential reference;
 *   (g) kbd_stile_store / kbd_stile_load and the transposed forms for every swizzle x major-ness x dtype
 *       (f32, bf16, e4m3): the raw shared bytes against kbd_smem_tile_offset, and the round trip;
 *   (h) kbd_store2d / kbd_load2d of a TMEM_ACC tile hanging over the edges of a tensor.
 */
#include <kbd/stile_move.h>
#include <kbd/tile.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) fail_msg(__VA_ARGS__);                                                                                \
  } while (0)

/* ---- (c, static part) ---------------------------------------------------------------------------------------- */

KBD_LAYOUT_ASSERT_SHAPE(TMEM_ACC, 128, 8, 128, 1);
KBD_LAYOUT_ASSERT_SHAPE(TMEM_ACC, 256, 512, 128, 1);
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_TMEM_ACC, 64, 64, 128, 1), "M = 64 is WGMMA_ACC's, not TMEM_ACC's");
KBD_STATIC_ASSERT(!KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_TMEM_ACC, 128, 520, 128, 1), "C > 512 must be rejected");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_TMEM_ACC, 128, 64, 128) == 64, "one row of 64 per thread");
KBD_STATIC_ASSERT(KBD_LAYOUT_NPT(KBD_LAYOUT_TMEM_ACC, 256, 32, 999) == 64, "owner fixed: a warpgroup");
KBD_STATIC_ASSERT(KBD_LAYOUT_THREADS(KBD_LAYOUT_TMEM_ACC, 32) == 128, "a warpgroup owns a TMEM_ACC tile");
typedef struct probe_tile {
  KBD_LAYOUT_STATIC_CHECK(KBD_LAYOUT_TMEM_ACC, 256, 16, KBD_WARPGROUP_SIZE, 1);
  float v[KBD_LAYOUT_NPT(KBD_LAYOUT_TMEM_ACC, 256, 16, KBD_WARPGROUP_SIZE)];
} probe_tile;
KBD_STATIC_ASSERT(sizeof(probe_tile) == 32 * sizeof(float), "256x16: two rows of 16 per thread");

/* ---- (a), (b) ----------------------------------------------------------------------------------------------- */

static unsigned char g_hits[512 * 512];

static void check_bijection(int R, int C) {
  const int npt = kbd_layout_npt(KBD_LAYOUT_TMEM_ACC, R, C, 128);
  CHECK(kbd_layout_valid(KBD_LAYOUT_TMEM_ACC, R, C, 128, 1), "%dx%d must be legal", R, C);
  CHECK(npt * 128 == R * C, "%dx%d: npt %d", R, C, npt);
  memset(g_hits, 0, (size_t)R * C);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < npt; ++i) {
      const kbd_coord c = kbd_layout_coord(KBD_LAYOUT_TMEM_ACC, R, C, 128, 1, t, i);
      const kbd_coord d = kbd_layout_tmem_acc(R, C, t, i);
      CHECK(c.row == d.row && c.col == d.col, "dispatch disagrees at %dx%d t=%d i=%d", R, C, t, i);
      CHECK(c.row >= 0 && c.row < R && c.col >= 0 && c.col < C, "%dx%d t=%d i=%d -> (%d,%d) outside", R, C, t, i,
            c.row, c.col);
      CHECK(g_hits[c.row * C + c.col]++ == 0, "%dx%d: (%d,%d) hit twice", R, C, c.row, c.col);
    }
  for (int k = 0; k < R * C; ++k) CHECK(g_hits[k] == 1, "%dx%d: element %d never hit", R, C, k);
}

static void test_bijection(void **state) {
  (void)state;
  int n = 0;
  for (int C = 8; C <= 256; C += 8, ++n) check_bijection(128, C);
  check_bijection(128, 512);
  check_bijection(256, 64);
  check_bijection(384, 24);
  assert_int_equal(n, 32);
}

/* The hardware facts, written out: warp w of the warpgroup issues tcgen05.ld.32x32b.xN at TMEM lane 32w,
 * column C0 = the accumulator's column base; lane l's register j is TMEM (32w + l, C0 + j), and TMEM lane m of
 * an M = 128 accumulator holds D row m. Accumulator b of a (128*mb)-row tile is block b. */
static void test_hardware_mapping(void **state) {
  (void)state;
  static const int shapes[][2] = {{128, 8}, {128, 64}, {128, 256}, {256, 64}, {512, 16}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int R = shapes[s][0], C = shapes[s][1];
    for (int b = 0; b < R / 128; ++b)
      for (int w = 0; w < 4; ++w)
        for (int l = 0; l < 32; ++l)
          for (int j = 0; j < C; ++j) {
            const int tmem_lane = 32 * w + l, d_row = tmem_lane, d_col = j;
            const kbd_coord c = kbd_layout_coord(KBD_LAYOUT_TMEM_ACC, R, C, 128, 1, 32 * w + l, b * C + j);
            CHECK(c.row == 128 * b + d_row && c.col == d_col, "%dx%d acc %d warp %d lane %d reg %d: (%d,%d)", R, C, b,
                  w, l, j, c.row, c.col);
          }
  }
  /* hand-worked: 256 x 64, thread 37 (warp 1, lane 5), element 70 = block 1, column 6 -> row 165 */
  const kbd_coord c = kbd_layout_tmem_acc(256, 64, 37, 70);
  assert_int_equal(c.row, 165);
  assert_int_equal(c.col, 6);
}

/* ---- (c) ------------------------------------------------------------------------------------------------------ */

static void test_rules(void **state) {
  (void)state;
  static const int owners[] = {0, 32, 64, 127, 128, 129, 256};
  int accepted = 0;
  for (int r = -128; r <= 640; r += 8)
    for (int c = -8; c <= 600; ++c)
      for (size_t o = 0; o < sizeof owners / sizeof owners[0]; ++o) {
        const int nt = owners[o];
        const int want = r > 0 && r % 128 == 0 && c >= 8 && c <= 512 && c % 8 == 0 && nt == 128;
        const int got = kbd_layout_valid(KBD_LAYOUT_TMEM_ACC, r, c, nt, 1);
        CHECK(got == want, "TMEM_ACC %dx%d nt=%d: valid %d, rule %d", r, c, nt, got, want);
        CHECK(KBD_LAYOUT_SHAPE_OK(KBD_LAYOUT_TMEM_ACC, r, c, nt, 7) == got, "macro/function disagree");
        accepted += got;
      }
  assert_int_equal(accepted, 5 * 64); /* M in {128..640}, C in {8..512} */
  /* a TMEM_ACC-legal shape is not silently legal for the older ids, and vice versa */
  assert_false(kbd_layout_valid(KBD_LAYOUT_TMEM_ACC, 64, 64, 128, 1));
  assert_true(kbd_layout_valid(KBD_LAYOUT_WGMMA_ACC, 64, 64, 128, 1));
  assert_false(kbd_layout_valid(KBD_LAYOUT_WGMMA_ACC, 128, 512, 128, 1));
  assert_int_equal(kbd_layout_npt(KBD_LAYOUT_TMEM_ACC, 128, 48, 128), 48);
}

/* ---- (d) ------------------------------------------------------------------------------------------------------ */

static kbd_tile_shape tmem_shape(int R, int C, int es) {
  return kbd_tile_shape_of(R, C, 128, KBD_LAYOUT_TMEM_ACC, 0, R * C / 128, 1, es);
}

static void test_runs(void **state) {
  (void)state;
  assert_int_equal(kbd_stile_run_len(tmem_shape(128, 64, 4)), 4);
  assert_int_equal(kbd_stile_run_len(tmem_shape(128, 64, 2)), 8);
  assert_int_equal(kbd_stile_run_len(tmem_shape(128, 64, 1)), 16);
  assert_int_equal(kbd_stile_run_len(tmem_shape(128, 24, 1)), 8);
  assert_int_equal(kbd_stile_run_len(tmem_shape(128, 8, 2)), 8);
  assert_int_equal(kbd_stile_run_dim(KBD_LAYOUT_TMEM_ACC, 0), 1);
  assert_int_equal(kbd_stile_run_dim(KBD_LAYOUT_TMEM_ACC, 1), 0);
  /* every run is contiguous in one row: elements i .. i+run-1 are (row, c .. c+run-1) with c % run == 0 */
  const kbd_tile_shape t = tmem_shape(256, 40, 2);
  const int run = kbd_stile_run_len(t);
  for (int th = 0; th < 128; ++th)
    for (int i = 0; i < t.npt; i += run) {
      const kbd_coord a = kbd_tile_coord(t, th, i);
      CHECK(a.col % run == 0, "run start (%d,%d) not aligned", a.row, a.col);
      for (int k = 1; k < run; ++k) {
        const kbd_coord b = kbd_tile_coord(t, th, i + k);
        CHECK(b.row == a.row && b.col == a.col + k, "run broken at t=%d i=%d", th, i + k);
      }
    }
}

/* Wavefronts of one warp-wide access where every thread moves `bytes` (16) bytes at byte offsets off[0..31]:
 * a wavefront serves at most one distinct 4-byte word per bank, so the count is the largest number of distinct
 * words any bank must deliver. */
static int wavefronts(const int *off, int bytes) {
  int worst = 0;
  for (int bank = 0; bank < 32; ++bank) {
    int words[32 * 4], n = 0;
    for (int l = 0; l < 32; ++l)
      for (int b = 0; b < bytes; b += 4) {
        const int w = (off[l] + b) / 4;
        if (w % 32 != bank) continue;
        int seen = 0;
        for (int k = 0; k < n; ++k) seen |= words[k] == w;
        if (!seen) words[n++] = w;
      }
    if (n > worst) worst = n;
  }
  return worst;
}

static void test_bank_wavefronts(void **state) {
  (void)state;
  static const int swz[] = {KBD_SWIZZLE_32B, KBD_SWIZZLE_64B, KBD_SWIZZLE_128B};
  static const int es_list[] = {4, 2, 1};
  for (size_t e = 0; e < 3; ++e)
    for (size_t s = 0; s < 3; ++s) {
      const int es = es_list[e], C = 256 / es; /* 256-byte rows: two 128-byte blocks */
      const kbd_smem_shape sh = kbd_smem_shape_make(es, 128, C, swz[s], KBD_SMEM_K_MAJOR);
      CHECK(kbd_smem_shape_check(&sh) == NULL, "shape");
      const kbd_tile_shape t = tmem_shape(128, C, es);
      const int run = kbd_stile_run_len(t);
      assert_int_equal(run * es, 16);
      for (int w = 0; w < 4; ++w)
        for (int i = 0; i < t.npt; i += run) {
          int off[32];
          for (int l = 0; l < 32; ++l) {
            const kbd_coord c = kbd_tile_coord(t, 32 * w + l, i);
            off[l] = kbd_smem_tile_offset(&sh, c.row, c.col);
            CHECK(off[l] % 16 == 0, "16-byte access not aligned");
          }
          const int wf = wavefronts(off, 16);
          CHECK(wf == 4, "es %d swizzle %d warp %d element %d: %d wavefronts, want 4", es, swz[s], w, i, wf);
        }
    }
  /* NONE with a 128-byte row pitch: all 32 rows' chunks in the same 4 banks */
  const kbd_smem_shape none = kbd_smem_shape_make(4, 128, 32, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
  int off[32];
  for (int l = 0; l < 32; ++l) {
    const kbd_coord c = kbd_tile_coord(tmem_shape(128, 32, 4), l, 4);
    off[l] = kbd_smem_tile_offset(&none, c.row, c.col);
  }
  assert_int_equal(wavefronts(off, 16), 32);
}

/* ---- kernels: (e) reductions -------------------------------------------------------------------------------- */

typedef struct red_params {
  const void *x;   /* [2 instances][R][C] */
  void *rraw;      /* [256 threads][row slots]: every lane's row vector */
  void *craw;      /* [256 threads][C]: every lane's column vector */
  void *rvec;      /* [2][R] kbd_vec_store */
  void *cvec;      /* [2][C] */
  void *brow;      /* [2][R][C] t - rows */
  int op;
} red_params;

#define RED_CASE(OP)                                                                                                   \
  case OP:                                                                                                             \
    kbd_reduce_rows(m, t, OP);                                                                                         \
    kbd_reduce_cols(c, t, OP);                                                                                         \
    break;

/* 256 threads: warpgroup g owns instance g. */
#define RED_KERNEL(name, DT, T, VT, R, C, OPS)                                                                         \
  KBD_KERNEL(name, 256, red_params) {                                                                                  \
    const int g = kbd_warp_id() / 4;                                                                                   \
    KBD_TILE_L(DT, R, C, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) t, d;                                                     \
    kbd_load2d(t, (const T *)p.x + (size_t)g * (R) * (C), R, C, C, 0, 0);                                              \
    KBD_ROWVEC(VT, t) m;                                                                                               \
    KBD_COLVEC(VT, t) c;                                                                                               \
    memset(&m, 0, sizeof m);                                                                                           \
    memset(&c, 0, sizeof c);                                                                                           \
    switch (p.op) {                                                                                                    \
      OPS(RED_CASE)                                                                                                    \
    default: break;                                                                                                    \
    }                                                                                                                  \
    KBD_FOR_LANES(l) {                                                                                                 \
      const int th = kbd_thread_idx(l);                                                                                \
      for (int k = 0; k < KBD_VEC_SLOTS(m); ++k) ((T *)p.rraw)[th * KBD_VEC_SLOTS(m) + k] = KBD_VEC_AT(m, l, k);       \
      for (int k = 0; k < KBD_VEC_SLOTS(c); ++k) ((T *)p.craw)[th * KBD_VEC_SLOTS(c) + k] = KBD_VEC_AT(c, l, k);       \
    }                                                                                                                  \
    kbd_vec_store((T *)p.rvec + (size_t)g * (R), m);                                                                   \
    kbd_vec_store((T *)p.cvec + (size_t)g * (C), c);                                                                   \
    kbd_bcast_rows(d, t, m, KBD_OP_SUB);                                                                               \
    kbd_store2d((T *)p.brow + (size_t)g * (R) * (C), d, R, C, C, 0, 0);                                                \
  }

#define OPS_F(X) X(KBD_RED_SUM) X(KBD_RED_MAX) X(KBD_RED_MIN)
#define OPS_I(X) X(KBD_RED_SUM) X(KBD_RED_AND) X(KBD_RED_OR) X(KBD_RED_XOR)
enum { FR = 256, FC = 48, IR = 128, IC = 16 };
RED_KERNEL(red_f32, f32, float, f32, FR, FC, OPS_F)
RED_KERNEL(red_i32, i32, int32_t, i32, IR, IC, OPS_I)

static void *dev_alloc(size_t bytes) {
  void *d = NULL;
  assert_true(kbd_ok(kbd_malloc(&d, bytes)));
  return d;
}
static void dev_free(void *d) { assert_true(kbd_ok(kbd_free(d))); }

static float fop(int op, float a, float b) {
  if (op == KBD_RED_SUM) return a + b;
  if (op == KBD_RED_MAX) return a > b ? a : b;
  return a < b ? a : b;
}
static int32_t iop(int op, int32_t a, int32_t b) {
  if (op == KBD_RED_SUM) return (int32_t)((uint32_t)a + (uint32_t)b);
  if (op == KBD_RED_AND) return a & b;
  if (op == KBD_RED_OR) return a | b;
  return a ^ b;
}
/* The documented per-thread order: pairwise tree, stride 1, 2, 4, ... (x is overwritten). */
static float ftree(int op, float *x, int n) {
  for (int s = 1; s < n; s *= 2)
    for (int e = 0; e + s < n; e += 2 * s) x[e] = fop(op, x[e], x[e + s]);
  return x[0];
}

static unsigned g_rng = 12345u;
static unsigned rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}

static void test_reduce_f32(void **state) {
  (void)state;
  const size_t n = 2 * FR * FC;
  float *h = malloc(n * sizeof(float)), *rraw = malloc(256 * (FR / 128) * sizeof(float));
  float *craw = malloc(256 * FC * sizeof(float)), *rv = malloc(2 * FR * sizeof(float));
  float *cv = malloc(2 * FC * sizeof(float)), *br = malloc(n * sizeof(float));
  for (size_t k = 0; k < n; ++k) h[k] = ((float)(rnd() % 20001) - 10000.0f) * 0.37f + 0.001f * (float)(k % 7);
  void *dx = dev_alloc(n * 4), *drr = dev_alloc(256 * (FR / 128) * 4), *dcr = dev_alloc(256 * FC * 4);
  void *drv = dev_alloc(2 * FR * 4), *dcv = dev_alloc(2 * FC * 4), *dbr = dev_alloc(n * 4);
  assert_true(kbd_ok(kbd_copy_to_device(dx, h, n * 4)));
  static const int ops[] = {KBD_RED_SUM, KBD_RED_MAX, KBD_RED_MIN};
  for (int o = 0; o < 3; ++o) {
    const int op = ops[o];
    red_params p = {dx, drr, dcr, drv, dcv, dbr, op};
    const kbd_status st = red_f32(kbd_cfg_1d(1), p);
    CHECK(kbd_ok(st), "launch: %s", st.msg);
    assert_true(kbd_ok(kbd_copy_to_host(rraw, drr, 256 * (FR / 128) * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(craw, dcr, 256 * FC * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(rv, drv, 2 * FR * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(cv, dcv, 2 * FC * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(br, dbr, n * 4)));
    for (int g = 0; g < 2; ++g) {
      const float *x = h + (size_t)g * FR * FC;
      float rref[FR], cref[FC];
      for (int r = 0; r < FR; ++r) {
        float tmp[FC];
        memcpy(tmp, x + r * FC, sizeof tmp);
        rref[r] = ftree(op, tmp, FC);
      }
      for (int c = 0; c < FC; ++c) {
        float part[128];
        for (int t = 0; t < 128; ++t) {
          float col[FR / 128];
          for (int b = 0; b < FR / 128; ++b) col[b] = x[(128 * b + t) * FC + c];
          part[t] = ftree(op, col, FR / 128);
        }
        cref[c] = ftree(op, part, 128); /* butterfly over 32 lanes, then the 4 warps: one tree in thread order */
      }
      for (int r = 0; r < FR; ++r) {
        CHECK(memcmp(&rv[g * FR + r], &rref[r], 4) == 0, "op %d inst %d row %d: %.9g want %.9g", op, g, r,
              rv[g * FR + r], rref[r]);
        for (int cc = 0; cc < FC; ++cc) {
          const float want = x[r * FC + cc] - rref[r];
          CHECK(memcmp(&br[(size_t)g * FR * FC + r * FC + cc], &want, 4) == 0, "bcast_rows (%d,%d)", r, cc);
        }
      }
      for (int t = 0; t < 128; ++t) {
        for (int b = 0; b < FR / 128; ++b)
          CHECK(memcmp(&rraw[(g * 128 + t) * (FR / 128) + b], &rref[128 * b + t], 4) == 0,
                "op %d thread %d slot %d: not row %d", op, g * 128 + t, b, 128 * b + t);
        for (int c = 0; c < FC; ++c)
          CHECK(memcmp(&craw[(g * 128 + t) * FC + c], &cref[c], 4) == 0, "op %d thread %d column %d: %.9g want %.9g",
                op, g * 128 + t, c, craw[(g * 128 + t) * FC + c], cref[c]);
      }
      for (int c = 0; c < FC; ++c)
        CHECK(memcmp(&cv[g * FC + c], &cref[c], 4) == 0, "op %d inst %d col %d: %.9g want %.9g", op, g, c,
              cv[g * FC + c], cref[c]);
    }
  }
  dev_free(dx), dev_free(drr), dev_free(dcr), dev_free(drv), dev_free(dcv), dev_free(dbr);
  free(h), free(rraw), free(craw), free(rv), free(cv), free(br);
}

static void test_reduce_i32(void **state) {
  (void)state;
  const size_t n = 2 * IR * IC;
  int32_t *h = malloc(n * 4), *rraw = malloc(256 * 4), *craw = malloc(256 * IC * 4), *rv = malloc(2 * IR * 4);
  int32_t *cv = malloc(2 * IC * 4), *br = malloc(n * 4);
  for (size_t k = 0; k < n; ++k) h[k] = (int32_t)(rnd() * 2654435761u);
  void *dx = dev_alloc(n * 4), *drr = dev_alloc(256 * 4), *dcr = dev_alloc(256 * IC * 4);
  void *drv = dev_alloc(2 * IR * 4), *dcv = dev_alloc(2 * IC * 4), *dbr = dev_alloc(n * 4);
  assert_true(kbd_ok(kbd_copy_to_device(dx, h, n * 4)));
  static const int ops[] = {KBD_RED_SUM, KBD_RED_AND, KBD_RED_OR, KBD_RED_XOR};
  for (int o = 0; o < 4; ++o) {
    const int op = ops[o];
    red_params p = {dx, drr, dcr, drv, dcv, dbr, op};
    const kbd_status st = red_i32(kbd_cfg_1d(1), p);
    CHECK(kbd_ok(st), "launch: %s", st.msg);
    assert_true(kbd_ok(kbd_copy_to_host(rraw, drr, 256 * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(craw, dcr, 256 * IC * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(rv, drv, 2 * IR * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(cv, dcv, 2 * IC * 4)));
    for (int g = 0; g < 2; ++g) {
      const int32_t *x = h + (size_t)g * IR * IC;
      for (int r = 0; r < IR; ++r) {
        int32_t a = x[r * IC];
        for (int c = 1; c < IC; ++c) a = iop(op, a, x[r * IC + c]);
        CHECK(rv[g * IR + r] == a, "i32 op %d inst %d row %d", op, g, r);
        CHECK(rraw[g * 128 + r] == a, "i32 op %d thread %d", op, g * 128 + r);
      }
      for (int c = 0; c < IC; ++c) {
        int32_t a = x[c];
        for (int r = 1; r < IR; ++r) a = iop(op, a, x[r * IC + c]);
        CHECK(cv[g * IC + c] == a, "i32 op %d inst %d col %d", op, g, c);
        for (int t = 0; t < 128; ++t) CHECK(craw[(g * 128 + t) * IC + c] == a, "i32 col lane %d", t);
      }
    }
  }
  dev_free(dx), dev_free(drr), dev_free(dcr), dev_free(drv), dev_free(dcv), dev_free(dbr);
  free(h), free(rraw), free(craw), free(rv), free(cv), free(br);
}

/* ---- kernels: (f) row scans ----------------------------------------------------------------------------------- */

typedef struct scan_params {
  const float *x; /* [R][C] */
  float *d;       /* [R][C] */
  float *tot;     /* [R] */
  int which;      /* 0 incl sum, 1 excl sum, 2 incl max, 3 excl max */
} scan_params;
enum { SR = 256, SC = 40 };

KBD_KERNEL(scan_f32, 128, scan_params) {
  KBD_TILE_L(f32, SR, SC, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) t, d;
  KBD_ROWVEC(f32, t) tot;
  kbd_load2d(t, p.x, SR, SC, SC, 0, 0);
  switch (p.which) {
  case 0: kbd_scan_rows(d, tot, t, KBD_RED_SUM, 0); break;
  case 1: kbd_scan_rows(d, tot, t, KBD_RED_SUM, 1); break;
  case 2: kbd_scan_rows(d, tot, t, KBD_RED_MAX, 0); break;
  default: kbd_scan_rows(d, tot, t, KBD_RED_MAX, 1); break;
  }
  kbd_store2d(p.d, d, SR, SC, SC, 0, 0);
  kbd_vec_store(p.tot, tot);
}

static void test_scan_rows(void **state) {
  (void)state;
  float *h = malloc(SR * SC * 4), *out = malloc(SR * SC * 4), *tot = malloc(SR * 4);
  for (int k = 0; k < SR * SC; ++k) h[k] = ((float)(rnd() % 2001) - 1000.0f) * 0.731f;
  float *dx = dev_alloc(SR * SC * 4), *dd = dev_alloc(SR * SC * 4), *dt = dev_alloc(SR * 4);
  assert_true(kbd_ok(kbd_copy_to_device(dx, h, SR * SC * 4)));
  for (int which = 0; which < 4; ++which) {
    const int op = which < 2 ? KBD_RED_SUM : KBD_RED_MAX, excl = which & 1;
    scan_params p = {dx, dd, dt, which};
    const kbd_status st = scan_f32(kbd_cfg_1d(1), p);
    CHECK(kbd_ok(st), "launch: %s", st.msg);
    assert_true(kbd_ok(kbd_copy_to_host(out, dd, SR * SC * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(tot, dt, SR * 4)));
    for (int r = 0; r < SR; ++r) {
      float run = 0;
      for (int c = 0; c < SC; ++c) {
        const float prev = c == 0 ? (op == KBD_RED_SUM ? 0.0f : -INFINITY) : run;
        run = c == 0 ? h[r * SC] : fop(op, run, h[r * SC + c]); /* sequential: the documented in-thread order */
        const float want = excl ? prev : run;
        CHECK(memcmp(&out[r * SC + c], &want, 4) == 0, "scan %d (%d,%d): %.9g want %.9g", which, r, c, out[r * SC + c],
              want);
      }
      CHECK(memcmp(&tot[r], &run, 4) == 0, "scan %d total of row %d: %.9g want %.9g", which, r, tot[r], run);
    }
  }
  dev_free(dx), dev_free(dd), dev_free(dt);
  free(h), free(out), free(tot);
}

/* ---- kernels: (g) shared tiles ------------------------------------------------------------------------------ */

typedef struct mv_params {
  const void *src; /* R x C */
  void *img, *imgt; /* raw bytes of the R x C tile after kbd_stile_store, of the C x R tile after _store_t */
  void *out, *outt; /* R x C: kbd_stile_load of the first, kbd_stile_load_t of the second */
} mv_params;

#define DUMP_IMAGE(st, dst)                                                                                            \
  do {                                                                                                                 \
    if (kbd_warp_id() == 0)                                                                                            \
      for (int b_ = 0; b_ < KBD_STILE_BYTES(st); b_ += 4) {                                                            \
        const uint32_t v_ = kbd_ld_shared((const uint32_t *)(const void *)((const char *)(st).p + b_));                \
        memcpy((char *)(dst) + b_, &v_, 4);                                                                            \
      }                                                                                                                \
  } while (0)

#define MV_KERNEL(name, dt, R, C, SWZ, MAJ)                                                                            \
  typedef KBD_STILE_MJ(dt, R, C, SWZ, MAJ) name##_st;                                                                  \
  typedef KBD_STILE_MJ(dt, C, R, SWZ, MAJ) name##_stt;                                                                 \
  KBD_KERNEL(name, 128, mv_params) {                                                                                   \
    KBD_SHARED_STILE(name##_st, s);                                                                                    \
    KBD_SHARED_STILE(name##_stt, st);                                                                                  \
    KBD_TILE_L(dt, R, C, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) t, u, v;                                                  \
    kbd_load2d(t, (const kbd_##dt *)p.src, R, C, C, 0, 0);                                                             \
    kbd_stile_store(s, t);                                                                                             \
    kbd_stile_store_t(st, t);                                                                                          \
    kbd_sync();                                                                                                        \
    DUMP_IMAGE(s, p.img);                                                                                              \
    DUMP_IMAGE(st, p.imgt);                                                                                            \
    kbd_stile_load(u, s);                                                                                              \
    kbd_stile_load_t(v, st);                                                                                           \
    kbd_store2d((kbd_##dt *)p.out, u, R, C, C, 0, 0);                                                                  \
    kbd_store2d((kbd_##dt *)p.outt, v, R, C, C, 0, 0);                                                                 \
  }

/* 16 KiB per shared tile: f32 128 x 32, bf16 128 x 64, e4m3 128 x 128 (128-byte rows: every span fits) */
#define MV_CONFIGS(X, dt, C)                                                                                           \
  X(dt##_none_k, dt, 128, C, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR)                                                       \
  X(dt##_none_mn, dt, 128, C, KBD_SWIZZLE_NONE, KBD_SMEM_MN_MAJOR)                                                     \
  X(dt##_32_k, dt, 128, C, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR)                                                          \
  X(dt##_32_mn, dt, 128, C, KBD_SWIZZLE_32B, KBD_SMEM_MN_MAJOR)                                                        \
  X(dt##_64_k, dt, 128, C, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR)                                                          \
  X(dt##_64_mn, dt, 128, C, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR)                                                        \
  X(dt##_128_k, dt, 128, C, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR)                                                        \
  X(dt##_128_mn, dt, 128, C, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR)                                                      \
  X(dt##_a32_mn, dt, 128, C, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR)

#define MV_DEF(tag, dt, R, C, SWZ, MAJ) MV_KERNEL(mv_##tag, dt, R, C, SWZ, MAJ)
MV_CONFIGS(MV_DEF, f32, 32)
MV_CONFIGS(MV_DEF, bf16, 64)
MV_CONFIGS(MV_DEF, e4m3, 128)

typedef struct mv_kind {
  const char *name;
  kbd_status (*launch)(kbd_launch_cfg, mv_params);
  int es, R, C, swz, major;
} mv_kind;
#define MV_KIND(tag, dt, R, C, SWZ, MAJ) {#tag, mv_##tag, (int)sizeof(kbd_##dt), R, C, SWZ, MAJ},
static const mv_kind mv_kinds[] = {MV_CONFIGS(MV_KIND, f32, 32) MV_CONFIGS(MV_KIND, bf16, 64)
                                       MV_CONFIGS(MV_KIND, e4m3, 128)};

/* Bit pattern of element (r, c): unique for 2- and 4-byte types; 1-byte types carry the row (seed 0) or the
 * column (seed 1), so the two runs together pin every element. */
static uint32_t val(int es, int seed, int r, int c, int C) {
  if (es == 1) return (uint32_t)(seed ? c : r) & 0xffu;
  if (es == 2) return (uint32_t)(r * C + c + 1) & 0x7fffu;
  return 0x40000000u + (uint32_t)(r * 4096 + c);
}
static uint32_t rd(const unsigned char *b, int es, long k) {
  uint32_t v = 0;
  memcpy(&v, b + k * es, (size_t)es);
  return v;
}

static void mv_run(const mv_kind *K, int seed) {
  const int es = K->es, R = K->R, C = K->C;
  const size_t bytes = (size_t)R * C * es;
  unsigned char *src = malloc(bytes), *img = malloc(bytes), *imgt = malloc(bytes), *out = malloc(bytes),
                *outt = malloc(bytes);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const uint32_t v = val(es, seed, r, c, C);
      memcpy(src + ((size_t)r * C + c) * es, &v, (size_t)es);
    }
  void *ds = dev_alloc(bytes), *di = dev_alloc(bytes), *dit = dev_alloc(bytes), *dout = dev_alloc(bytes),
       *doutt = dev_alloc(bytes);
  assert_true(kbd_ok(kbd_copy_to_device(ds, src, bytes)));
  mv_params p = {ds, di, dit, dout, doutt};
  const kbd_status st = K->launch(kbd_cfg_1d(1), p);
  CHECK(kbd_ok(st), "%s: launch failed: %s", K->name, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(img, di, bytes)));
  assert_true(kbd_ok(kbd_copy_to_host(imgt, dit, bytes)));
  assert_true(kbd_ok(kbd_copy_to_host(out, dout, bytes)));
  assert_true(kbd_ok(kbd_copy_to_host(outt, doutt, bytes)));
  const kbd_smem_shape s = kbd_smem_shape_make(es, R, C, K->swz, K->major);
  const kbd_smem_shape stt = kbd_smem_shape_make(es, C, R, K->swz, K->major);
  long bad = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const uint32_t want = val(es, seed, r, c, C);
      const uint32_t a = rd(img + kbd_smem_tile_offset(&s, r, c), es, 0);
      const uint32_t b = rd(imgt + kbd_smem_tile_offset(&stt, c, r), es, 0);
      const uint32_t x = rd(out, es, (long)r * C + c), y = rd(outt, es, (long)r * C + c);
      if ((a != want || b != want || x != want || y != want) && bad++ < 4)
        print_error("%s seed %d (%d,%d): image 0x%x, transposed image 0x%x, load 0x%x, load_t 0x%x; want 0x%x\n",
                    K->name, seed, r, c, a, b, x, y, want);
    }
  if (bad) fail_msg("%s seed %d: %ld wrong elements", K->name, seed, bad);
  dev_free(ds), dev_free(di), dev_free(dit), dev_free(dout), dev_free(doutt);
  free(src), free(img), free(imgt), free(out), free(outt);
}

static void test_stile_roundtrip(void **state) {
  (void)state;
  int runs = 0;
  for (size_t k = 0; k < sizeof mv_kinds / sizeof mv_kinds[0]; ++k)
    for (int seed = 0; seed < (mv_kinds[k].es == 1 ? 2 : 1); ++seed, ++runs) mv_run(&mv_kinds[k], seed);
  assert_int_equal(runs, 9 * 4);
}

/* ---- kernels: (h) global memory ------------------------------------------------------------------------------ */

typedef struct g_params {
  const float *src; /* GR x GLD, the tile's source at (0, 0) */
  float *dst;       /* GR x GLD tensor, pre-filled */
  float *back;      /* 128 x 32: kbd_load2d of dst at (r0, c0), zeros outside */
  int r0, c0;
} g_params;
enum { GR = 200, GC = 50, GLD = 56, TR = 128, TC = 32 };

KBD_KERNEL(gmem, 128, g_params) {
  KBD_TILE_L(f32, TR, TC, KBD_WARPGROUP, KBD_LAYOUT_TMEM_ACC) t, u;
  kbd_load2d(t, p.src, TR, TC, TC, 0, 0);
  kbd_store2d(p.dst, t, GR, GC, GLD, p.r0, p.c0);
  kbd_sync();
  kbd_load2d(u, p.dst, GR, GC, GLD, p.r0, p.c0);
  kbd_store2d(p.back, u, TR, TC, TC, 0, 0);
}

static void test_global(void **state) {
  (void)state;
  /* 16-byte aligned origins take the vector path (a chunk over the right edge falls back), the others not */
  static const int origins[][2] = {{0, 0}, {80, 30}, {-20, -5}, {72, 18}, {72, 16}, {8, 20}, {-4, -4}};
  float *src = malloc(TR * TC * 4), *dst = malloc(GR * GLD * 4), *back = malloc(TR * TC * 4);
  for (int k = 0; k < TR * TC; ++k) src[k] = (float)(k + 1);
  float *ds = dev_alloc(TR * TC * 4), *dd = dev_alloc(GR * GLD * 4), *db = dev_alloc(TR * TC * 4);
  assert_true(kbd_ok(kbd_copy_to_device(ds, src, TR * TC * 4)));
  for (size_t o = 0; o < sizeof origins / sizeof origins[0]; ++o) {
    const int r0 = origins[o][0], c0 = origins[o][1];
    for (int k = 0; k < GR * GLD; ++k) dst[k] = -1.0f;
    assert_true(kbd_ok(kbd_copy_to_device(dd, dst, GR * GLD * 4)));
    g_params p = {ds, dd, db, r0, c0};
    const kbd_status st = gmem(kbd_cfg_1d(1), p);
    CHECK(kbd_ok(st), "launch: %s", st.msg);
    assert_true(kbd_ok(kbd_copy_to_host(dst, dd, GR * GLD * 4)));
    assert_true(kbd_ok(kbd_copy_to_host(back, db, TR * TC * 4)));
    for (int r = 0; r < GR; ++r)
      for (int c = 0; c < GLD; ++c) {
        const int tr = r - r0, tc = c - c0, in = tr >= 0 && tr < TR && tc >= 0 && tc < TC && c < GC;
        const float want = in ? src[tr * TC + tc] : -1.0f;
        CHECK(dst[r * GLD + c] == want, "origin (%d,%d): tensor (%d,%d) = %g, want %g", r0, c0, r, c,
              dst[r * GLD + c], want);
      }
    for (int r = 0; r < TR; ++r)
      for (int c = 0; c < TC; ++c) {
        const int gr = r + r0, gc = c + c0, in = gr >= 0 && gr < GR && gc >= 0 && gc < GC;
        const float want = in ? src[r * TC + c] : 0.0f;
        CHECK(back[r * TC + c] == want, "origin (%d,%d): loaded (%d,%d) = %g, want %g", r0, c0, r, c,
              back[r * TC + c], want);
      }
  }
  dev_free(ds), dev_free(dd), dev_free(db);
  free(src), free(dst), free(back);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bijection),       cmocka_unit_test(test_hardware_mapping),
      cmocka_unit_test(test_rules),           cmocka_unit_test(test_runs),
      cmocka_unit_test(test_bank_wavefronts), cmocka_unit_test(test_reduce_f32),
      cmocka_unit_test(test_reduce_i32),      cmocka_unit_test(test_scan_rows),
      cmocka_unit_test(test_stile_roundtrip), cmocka_unit_test(test_global),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
