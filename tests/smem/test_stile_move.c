/* tests/smem/test_stile_move.c - moves between register tiles and shared tiles (kbd/stile_move.h).
 *
 * 1. The m8n8 matrix path (ldmatrix/stmatrix) against the PTX definition, on the host: for every fragment
 *    layout (MMA_A, MMA_B, MMA_C, WGMMA_ACC) over a sweep of shapes, every swizzle mode and major-ness,
 *    plain and transposed, and windows at aligned and unaligned origins, the row addresses
 *    kbd_stile_ldsm_row() gives each lane are replayed through the instruction's semantics (thread 8m+j
 *    supplies row j of matrix m; thread 4g+q receives M[g][2q..2q+1], or M[2q..2q+1][g] with .trans) and
 *    every element each thread receives must be the byte offset the per-element path uses
 *    (kbd_layout_coord + kbd_smem_tile_offset). Rows must be 16-byte aligned and inside the tile. Negative
 *    control: the same replay with the .trans decision flipped must disagree in every case.
 * 2. Data on the CPU machine, for every register layout (ROW warp / warpgroup / CTA, MMA_A, MMA_B, MMA_C,
 *    WGMMA_ACC) x dtype (f32, bf16, e4m3) x swizzle mode x major-ness: a register tile loaded from known bit
 *    patterns is stored (plain or transposed) into a shared tile; the raw shared bytes, read back with
 *    kbd_ld_shared, must hold element (r, c) at kbd_smem_tile_offset(r, c) as computed here; the shared tile
 *    is then loaded (plain or transposed) into every layout and compared. 1-byte elements run twice (row id,
 *    then column id) so that every misplacement shows.
 * 3. Windows: kbd_stile_load_at / _store_at / _load_t_at / _store_t_at of several register layouts on a
 *    larger shared tile at aligned and unaligned origins (store: the window holds the new values and every
 *    other byte is unchanged).
 * 4. Faults: a window outside the shared tile is KBD_ERR_BOUNDS at the call's file:line (load, store, and
 *    transposed, negative origins too); loading a never-written shared tile is KBD_ERR_POISON naming an
 *    unwritten element (matrix path and element path); two warps storing one tile unordered is a race.
 * 5. After a TMA load: the fragments equal the global tensor; a load before the mbarrier wait is reported at
 *    its line under every schedule (a race with the copy, or bytes not yet / still being written).
 */
#include <kbd/stile_move.h>
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

/* ======================================================================================================== */
/* 1. the matrix path against the PTX definition                                                            */
/* ======================================================================================================== */

static const int k_swz[] = {KBD_SWIZZLE_NONE, KBD_SWIZZLE_32B, KBD_SWIZZLE_64B, KBD_SWIZZLE_128B,
                            KBD_SWIZZLE_128B_ATOM32};

static int roundup(int x, int m) { return (x + m - 1) / m * m; }

/* Smallest legal extents >= (need_r, need_c) for 2-byte elements in (swz, major). */
static kbd_smem_shape legal_shape(int need_r, int need_c, int swz, int major) {
  const int inner_unit = swz == KBD_SWIZZLE_NONE ? 8 : KBD_SWIZZLE_SPAN(swz) / 2;
  const int outer_unit = swz == KBD_SWIZZLE_NONE ? 1 : 8;
  const int mn = major == KBD_SMEM_MN_MAJOR;
  return kbd_smem_shape_make(2, roundup(need_r, mn ? inner_unit : outer_unit),
                             roundup(need_c, mn ? outer_unit : inner_unit), swz, major);
}

typedef struct emu_totals {
  long cases, matrix_cases, trans_cases, plain_cases, unaligned, elements, flip_detected;
} emu_totals;

/* Replays the matrix instructions of one move; returns the number of elements whose replayed offset differs
 * from the per-element path (flip: invert the .trans decision, the negative control). */
static long emu_move(kbd_tile_shape t, kbd_smem_shape s, int trans, int r0, int c0, int flip, long *elements) {
  const int npairs = t.npt / 2, tr = kbd_stile_ldsm_trans(t.layout, s.major, trans) ^ flip;
  const int cont_col = s.major == KBD_SMEM_K_MAJOR, bytes = kbd_smem_tile_bytes(&s);
  int g0[64], gn[64], ng = 0;
  for (int g = 0; g < npairs / 4; ++g) g0[ng] = 4 * g, gn[ng++] = 4;
  if (npairs % 4 >= 2) g0[ng] = npairs / 4 * 4, gn[ng++] = 2;
  if (npairs % 2) g0[ng] = npairs - 1, gn[ng++] = 1;
  long bad = 0;
  for (int w = 0; w < t.scope / 32; ++w)
    for (int gi = 0; gi < ng; ++gi) {
      int addr[32];
      for (int lane = 0; lane < 32; ++lane) {
        const kbd_coord a = kbd_stile_ldsm_row(t, s.major, trans, r0, c0, 32 * w + lane, g0[gi], gn[gi]);
        const kbd_coord last = cont_col ? kbd_coord_make(a.row, a.col + 7) : kbd_coord_make(a.row + 7, a.col);
        if (a.row < 0 || a.col < 0 || last.row >= s.rows || last.col >= s.cols)
          fail_msg("layout %d %dx%d swz %d major %d trans %d (%d,%d): lane %d row (%d,%d) leaves the tile", t.layout,
                   t.rows, t.cols, s.swizzle, s.major, trans, r0, c0, lane, a.row, a.col);
        addr[lane] = kbd_smem_tile_offset(&s, a.row, a.col);
        if (addr[lane] % 16 || addr[lane] + 16 > bytes)
          fail_msg("layout %d: lane %d row address %d is not 16 aligned bytes inside the tile", t.layout, lane,
                   addr[lane]);
        /* the row's 8 elements are its 16 bytes: the instruction reads them as one row */
        for (int k = 1; k < 8; ++k) {
          const int o = cont_col ? kbd_smem_tile_offset(&s, a.row, a.col + k) : kbd_smem_tile_offset(&s, a.row + k, a.col);
          if (o != addr[lane] + 2 * k) fail_msg("layout %d: lane %d row element %d not contiguous", t.layout, lane, k);
        }
      }
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, q = lane % 4;
        for (int m = 0; m < gn[gi]; ++m)
          for (int h = 0; h < 2; ++h) {
            /* PTX: register m of thread 4g+q = {M_m[g][2q], M_m[g][2q+1]}, .trans {M_m[2q][g], M_m[2q+1][g]};
             * M_m[i][k] = element k of the row addressed by thread 8m+i */
            const int emu = tr ? addr[8 * m + 2 * q + h] + 2 * g : addr[8 * m + g] + 2 * (2 * q + h);
            const int i = 2 * (g0[gi] + m) + h;
            const kbd_coord rc = kbd_layout_coord(t.layout, t.rows, t.cols, t.scope, t.vec, 32 * w + lane, i);
            const kbd_coord e = kbd_stile_elem(trans, r0, c0, rc);
            const int ref = kbd_smem_tile_offset(&s, e.row, e.col);
            ++*elements;
            if (emu != ref) ++bad;
          }
      }
    }
  return bad;
}

static void emu_shape(emu_totals *T, int layout, int R, int C) {
  const int scope = layout == KBD_LAYOUT_WGMMA_ACC ? 128 : 32;
  const kbd_tile_shape t = kbd_tile_shape_of(R, C, scope, layout, KBD_DT_bf16, R * C / scope, 1, 2);
  static const int origins[] = {0, 3, 8, 13, 16};
  for (int si = 0; si < 5; ++si)
    for (int major = 0; major < 2; ++major)
      for (int trans = 0; trans < 2; ++trans) {
        const int wr = trans ? C : R, wc = trans ? R : C;
        const kbd_smem_shape s = legal_shape(wr + 16, wc + 16, k_swz[si], major);
        if (kbd_smem_shape_check(&s)) continue; /* 128B_ATOM32 K-major */
        for (int a = 0; a < 5; ++a)
          for (int b = 0; b < 5; ++b) {
            const int r0 = origins[a], c0 = origins[b];
            ++T->cases;
            if (!kbd_stile_ldsm_ok(t, major, r0, c0)) {
              /* only a window origin off the 8-element grid along the contiguous dimension takes the other path */
              if ((major == KBD_SMEM_K_MAJOR ? c0 : r0) % 8 == 0)
                fail_msg("layout %d %dx%d: aligned window (%d,%d) refused", layout, R, C, r0, c0);
              ++T->unaligned;
              continue;
            }
            ++T->matrix_cases;
            if (kbd_stile_ldsm_trans(layout, major, trans))
              ++T->trans_cases;
            else
              ++T->plain_cases;
            long n = 0, flip_n = 0;
            const long bad = emu_move(t, s, trans, r0, c0, 0, &n);
            if (bad)
              fail_msg("layout %d %dx%d swz %d major %d trans %d window (%d,%d): %ld of %ld elements differ from the "
                       "per-element path",
                       layout, R, C, k_swz[si], major, trans, r0, c0, bad, n);
            T->elements += n;
            if (emu_move(t, s, trans, r0, c0, 1, &flip_n) > 0) ++T->flip_detected;
          }
      }
}

static void test_ldsm_plan_matches_ptx(void **state) {
  (void)state;
  emu_totals T;
  memset(&T, 0, sizeof T);
  for (int R = 16; R <= 64; R += 16)
    for (int C = 16; C <= 64; C += 16) emu_shape(&T, KBD_LAYOUT_MMA_A, R, C);
  for (int R = 16; R <= 64; R += 16)
    for (int C = 8; C <= 64; C += 8) {
      emu_shape(&T, KBD_LAYOUT_MMA_B, R, C);
      emu_shape(&T, KBD_LAYOUT_MMA_C, R, C);
    }
  static const int acc_n[] = {8, 16, 24, 32, 40, 56, 64, 72, 128, 200, 256};
  for (int R = 64; R <= 128; R += 64)
    for (size_t k = 0; k < sizeof acc_n / sizeof acc_n[0]; ++k) emu_shape(&T, KBD_LAYOUT_WGMMA_ACC, R, acc_n[k]);
  print_message("ldsm plan: %ld cases, %ld on the matrix path (%ld .trans, %ld plain), %ld unaligned windows, %ld "
                "elements replayed\n",
                T.cases, T.matrix_cases, T.trans_cases, T.plain_cases, T.unaligned, T.elements);
  assert_true(T.matrix_cases > 10000);
  assert_true(T.trans_cases > 1000 && T.plain_cases > 1000 && T.unaligned > 1000);
  assert_int_equal(T.flip_detected, T.matrix_cases); /* the replay can tell .trans from plain in every case */
}

/* Eligibility: 16-bit fragment layouts only. */
static void test_ldsm_eligibility(void **state) {
  (void)state;
  const int layouts[] = {KBD_LAYOUT_ROW, KBD_LAYOUT_MMA_A, KBD_LAYOUT_MMA_B, KBD_LAYOUT_MMA_C, KBD_LAYOUT_WGMMA_ACC};
  for (int li = 0; li < 5; ++li)
    for (int es = 1; es <= 4; es *= 2) {
      const int L = layouts[li];
      const kbd_tile_shape t = kbd_tile_shape_of(64, 64, L == KBD_LAYOUT_WGMMA_ACC ? 128 : 32, L, 0, 64, 4, es);
      const int want = L != KBD_LAYOUT_ROW && es == 2;
      assert_int_equal(kbd_stile_ldsm_ok(t, KBD_SMEM_K_MAJOR, 0, 0), want);
      assert_int_equal(kbd_stile_ldsm_ok(t, KBD_SMEM_MN_MAJOR, 8, 3), want);
      assert_int_equal(kbd_stile_ldsm_ok(t, KBD_SMEM_K_MAJOR, 8, 3), 0);
      assert_int_equal(kbd_stile_ldsm_ok(t, KBD_SMEM_MN_MAJOR, 3, 8), 0);
    }
}

/* ======================================================================================================== */
/* 2. data: every layout x dtype x swizzle x major, plain and transposed                                    */
/* ======================================================================================================== */

typedef struct mv_params {
  const void *src; /* R x C row-major bit patterns */
  void *img;       /* the shared tile's bytes after the store */
  void *out;       /* MV_NL tiles R x C row-major: each load layout's result */
  int store;       /* store layout index */
  int tstore, tload;
} mv_params;

#define MV_NL 7
/* X(index, dt, R, C, scope, layout, owner): the register layouts (256-thread block: CTA != warpgroup) */
#define MV_LAYOUTS(X, dt, R, C)                                                                                  \
  X(0, dt, R, C, KBD_WARP, KBD_LAYOUT_ROW, w == 0)                                                               \
  X(1, dt, R, C, KBD_WARPGROUP, KBD_LAYOUT_ROW, w < 4)                                                           \
  X(2, dt, R, C, KBD_CTA, KBD_LAYOUT_ROW, 1)                                                                     \
  X(3, dt, R, C, KBD_WARP, KBD_LAYOUT_MMA_A, w == 1)                                                             \
  X(4, dt, R, C, KBD_WARP, KBD_LAYOUT_MMA_B, w == 2)                                                             \
  X(5, dt, R, C, KBD_WARP, KBD_LAYOUT_MMA_C, w == 3)                                                             \
  X(6, dt, R, C, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC, w >= 4)

#define MV_STORE(idx, dt, R, C, S, L, own)                                                                       \
  case idx:                                                                                                      \
    if (own) {                                                                                                   \
      KBD_TILE_L(dt, R, C, S, L) t;                                                                              \
      kbd_load2d(t, (const kbd_##dt *)p.src, R, C, C, 0, 0);                                                     \
      if (p.tstore)                                                                                              \
        kbd_stile_store_t(s, t);                                                                                 \
      else                                                                                                       \
        kbd_stile_store(s, t);                                                                                   \
    }                                                                                                            \
    break;
#define MV_LOAD(idx, dt, R, C, S, L, own)                                                                        \
  if (own) {                                                                                                     \
    KBD_TILE_L(dt, R, C, S, L) t;                                                                                \
    if (p.tload)                                                                                                 \
      kbd_stile_load_t(t, s);                                                                                    \
    else                                                                                                         \
      kbd_stile_load(t, s);                                                                                      \
    kbd_store2d((kbd_##dt *)p.out + (size_t)(idx) * (R) * (C), t, R, C, C, 0, 0);                                \
  }

/* Raw image of a shared tile, 4 bytes at a time through the checked shared reads (warp 0). */
#define DUMP_IMAGE(st, dst)                                                                                      \
  do {                                                                                                           \
    if (kbd_warp_id() == 0)                                                                                      \
      for (int b_ = 0; b_ < KBD_STILE_BYTES(st); b_ += 4) {                                                      \
        const uint32_t v_ = kbd_ld_shared((const uint32_t *)(const void *)((const char *)(st).p + b_));          \
        memcpy((char *)(dst) + b_, &v_, 4);                                                                      \
      }                                                                                                          \
  } while (0)

#define MV_KERNEL(name, dt, R, C, SWZ, MAJ)                                                                      \
  typedef KBD_STILE_MJ(dt, R, C, SWZ, MAJ) name##_st;                                                            \
  KBD_KERNEL(name, 256, mv_params) {                                                                             \
    KBD_SHARED_STILE(name##_st, s);                                                                              \
    const int w = kbd_warp_id();                                                                                 \
    switch (p.store) { MV_LAYOUTS(MV_STORE, dt, R, C) }                                                          \
    kbd_sync();                                                                                                  \
    DUMP_IMAGE(s, p.img);                                                                                        \
    MV_LAYOUTS(MV_LOAD, dt, R, C)                                                                                \
  }

/* (dtype, R x C): f32 and bf16 64 x 64, e4m3 128 x 128 (a 128-byte swizzle span needs 128 one-byte elements) */
#define MV_CONFIGS(X, dt, N)                                                                                     \
  X(dt##_none_k, dt, N, N, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR)                                                   \
  X(dt##_none_mn, dt, N, N, KBD_SWIZZLE_NONE, KBD_SMEM_MN_MAJOR)                                                 \
  X(dt##_32_k, dt, N, N, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR)                                                      \
  X(dt##_32_mn, dt, N, N, KBD_SWIZZLE_32B, KBD_SMEM_MN_MAJOR)                                                    \
  X(dt##_64_k, dt, N, N, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR)                                                      \
  X(dt##_64_mn, dt, N, N, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR)                                                    \
  X(dt##_128_k, dt, N, N, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR)                                                    \
  X(dt##_128_mn, dt, N, N, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR)                                                  \
  X(dt##_a32_mn, dt, N, N, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR)

#define MV_DEF(tag, dt, R, C, SWZ, MAJ) MV_KERNEL(mv_##tag, dt, R, C, SWZ, MAJ)
MV_CONFIGS(MV_DEF, f32, 64)
MV_CONFIGS(MV_DEF, bf16, 64)
MV_CONFIGS(MV_DEF, e4m3, 128)

typedef kbd_status (*mv_launcher)(kbd_launch_cfg, mv_params);
typedef struct mv_kind {
  const char *name;
  mv_launcher launch;
  int es, n, swz, major;
} mv_kind;
#define MV_KIND(tag, dt, R, C, SWZ, MAJ) {#tag, mv_##tag, (int)sizeof(kbd_##dt), R, SWZ, MAJ},
static const mv_kind mv_kinds[] = {MV_CONFIGS(MV_KIND, f32, 64) MV_CONFIGS(MV_KIND, bf16, 64)
                                       MV_CONFIGS(MV_KIND, e4m3, 128)};
static const char *const mv_layout_names[MV_NL] = {"ROW warp",  "ROW warpgroup", "ROW CTA",  "MMA_A",
                                                   "MMA_B", "MMA_C", "WGMMA_ACC"};

/* Bit pattern of element (r, c): unique per element for 2- and 4-byte types; 1-byte types carry the row
 * (seed 0) or the column (seed 1), so the two runs together pin every element. */
static uint32_t val(int es, int seed, int r, int c, int C) {
  if (es == 1) return (uint32_t)(seed ? c : r) & 0xffu;
  if (es == 2) return (uint32_t)(r * C + c + 1) ^ (seed ? 0x8000u : 0u);
  return 0x40000000u + (uint32_t)seed * 0x100000u + (uint32_t)(r * 4096 + c);
}
static uint32_t rd(const unsigned char *b, int es, long k) {
  uint32_t v = 0;
  memcpy(&v, b + k * es, (size_t)es);
  return v;
}
static void wr(unsigned char *b, int es, long k, uint32_t v) { memcpy(b + k * es, &v, (size_t)es); }

static void *dev_alloc(size_t bytes) {
  void *d = NULL;
  assert_true(kbd_ok(kbd_malloc(&d, bytes)));
  return d;
}

static void mv_run(const mv_kind *K, int store, int tstore, int tload, int seed) {
  const int es = K->es, N = K->n;
  const size_t tile = (size_t)N * N * es;
  unsigned char *h_src = malloc(tile), *h_img = malloc(tile), *h_out = malloc(tile * MV_NL);
  assert_non_null(h_src);
  assert_non_null(h_img);
  assert_non_null(h_out);
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) wr(h_src, es, (long)r * N + c, val(es, seed, r, c, N));
  void *d_src = dev_alloc(tile), *d_img = dev_alloc(tile), *d_out = dev_alloc(tile * MV_NL);
  assert_true(kbd_ok(kbd_copy_to_device(d_src, h_src, tile)));
  mv_params p;
  p.src = d_src;
  p.img = d_img;
  p.out = d_out;
  p.store = store;
  p.tstore = tstore;
  p.tload = tload;
  const kbd_status st = K->launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("%s store %s: launch failed: %s", K->name, mv_layout_names[store], st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h_img, d_img, tile)));
  assert_true(kbd_ok(kbd_copy_to_host(h_out, d_out, tile * MV_NL)));
  /* the image: shared element (a, b) at the offset computed here holds register element (a, b), or (b, a) */
  const kbd_smem_shape s = kbd_smem_shape_make(es, N, N, K->swz, K->major);
  long bad = 0;
  for (int a = 0; a < N; ++a)
    for (int b = 0; b < N; ++b) {
      const int off = kbd_smem_tile_offset(&s, a, b);
      uint32_t got = 0;
      memcpy(&got, h_img + off, (size_t)es);
      const uint32_t want = tstore ? val(es, seed, b, a, N) : val(es, seed, a, b, N);
      if (got != want && bad++ < 3)
        print_error("%s store %s%s seed %d: shared element (%d, %d) at byte %d = 0x%x, want 0x%x\n", K->name,
                    mv_layout_names[store], tstore ? " (transposed)" : "", seed, a, b, off, got, want);
    }
  /* every load layout: register element (r, c) = shared (r, c) or (c, r) */
  for (int l = 0; l < MV_NL; ++l)
    for (int r = 0; r < N; ++r)
      for (int c = 0; c < N; ++c) {
        const int a = tload ? c : r, b = tload ? r : c;
        const uint32_t want = tstore ? val(es, seed, b, a, N) : val(es, seed, a, b, N);
        const uint32_t got = rd(h_out, es, (long)l * N * N + (long)r * N + c);
        if (got != want && bad++ < 6)
          print_error("%s store %s%s load %s%s seed %d: element (%d, %d) = 0x%x, want 0x%x\n", K->name,
                      mv_layout_names[store], tstore ? " (t)" : "", mv_layout_names[l], tload ? " (t)" : "", seed, r,
                      c, got, want);
      }
  if (bad) fail_msg("%s store %s: %ld wrong elements", K->name, mv_layout_names[store], bad);
  assert_true(kbd_ok(kbd_free(d_src)));
  assert_true(kbd_ok(kbd_free(d_img)));
  assert_true(kbd_ok(kbd_free(d_out)));
  free(h_src);
  free(h_img);
  free(h_out);
}

static void mv_dtype(int es, int transposed) {
  int runs = 0;
  for (size_t k = 0; k < sizeof mv_kinds / sizeof mv_kinds[0]; ++k) {
    if (mv_kinds[k].es != es) continue;
    for (int store = 0; store < MV_NL; ++store)
      for (int seed = 0; seed < (es == 1 ? 2 : 1); ++seed) {
        if (transposed) {
          mv_run(&mv_kinds[k], store, 1, 0, seed);
          mv_run(&mv_kinds[k], store, 0, 1, seed);
          mv_run(&mv_kinds[k], store, 1, 1, seed);
          runs += 3;
        } else {
          mv_run(&mv_kinds[k], store, 0, 0, seed);
          ++runs;
        }
      }
  }
  assert_int_equal(runs, 9 * MV_NL * (es == 1 ? 2 : 1) * (transposed ? 3 : 1));
}

static void test_roundtrip_f32(void **state) {
  (void)state;
  mv_dtype(4, 0);
}
static void test_roundtrip_bf16(void **state) {
  (void)state;
  mv_dtype(2, 0);
}
static void test_roundtrip_e4m3(void **state) {
  (void)state;
  mv_dtype(1, 0);
}
static void test_transposed_f32(void **state) {
  (void)state;
  mv_dtype(4, 1);
}
static void test_transposed_bf16(void **state) {
  (void)state;
  mv_dtype(2, 1);
}
static void test_transposed_e4m3(void **state) {
  (void)state;
  mv_dtype(1, 1);
}

/* ======================================================================================================== */
/* 3. windows                                                                                               */
/* ======================================================================================================== */

typedef struct win_params {
  const void *src; /* SN x SN: the whole shared tile's contents */
  const void *pat; /* the register tile's contents (R x C row-major, R*C <= 64*64) */
  void *img;       /* the shared tile after the operation */
  void *out;       /* the loaded register tile, row-major */
  int op;          /* 0 load_at, 1 store_at, 2 load_t_at, 3 store_t_at */
  int layout;      /* WIN_LAYOUTS index */
  int r0, c0;
} win_params;

#define WIN_NL 6
/* X(index, dt, R, C, scope, layout, owner) */
#define WIN_LAYOUTS(X, dt)                                                                                       \
  X(0, dt, 16, 32, KBD_WARP, KBD_LAYOUT_MMA_A, w == 0)                                                           \
  X(1, dt, 32, 16, KBD_WARP, KBD_LAYOUT_MMA_B, w == 0)                                                           \
  X(2, dt, 16, 24, KBD_WARP, KBD_LAYOUT_MMA_C, w == 0)                                                           \
  X(3, dt, 16, 32, KBD_WARP, KBD_LAYOUT_ROW, w == 0)                                                             \
  X(4, dt, 32, 64, KBD_CTA, KBD_LAYOUT_ROW, 1)                                                                   \
  X(5, dt, 64, 48, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC, w < 4)
static const int win_rows[WIN_NL] = {16, 32, 16, 16, 32, 64}, win_cols[WIN_NL] = {32, 16, 24, 32, 64, 48};

/* WIN_MARK: the move's source line, for the fault tests (the whole kernel expands on one line, so it is
 * the line the move reports). */
static int win_case_line;
#define WIN_MARK __atomic_store_n(&win_case_line, __LINE__, __ATOMIC_RELAXED)
#define WIN_CASE(idx, dt, R, C, S, L, own)                                                                       \
  case idx:                                                                                                      \
    if (own) {                                                                                                   \
      KBD_TILE_L(dt, R, C, S, L) t;                                                                              \
      if (p.op & 1) kbd_load2d(t, (const kbd_##dt *)p.pat, R, C, C, 0, 0);                                       \
      WIN_MARK;                                                                                                  \
      switch (p.op) {                                                                                            \
      case 0: kbd_stile_load_at(t, s, p.r0, p.c0); break;                                                        \
      case 1: kbd_stile_store_at(s, t, p.r0, p.c0); break;                                                       \
      case 2: kbd_stile_load_t_at(t, s, p.r0, p.c0); break;                                                      \
      default: kbd_stile_store_t_at(s, t, p.r0, p.c0); break;                                                    \
      }                                                                                                          \
      if (!(p.op & 1)) kbd_store2d((kbd_##dt *)p.out, t, R, C, C, 0, 0);                                         \
    }                                                                                                            \
    break;

#define WIN_KERNEL(name, dt, SN, SWZ, MAJ)                                                                       \
  typedef KBD_STILE_MJ(dt, SN, SN, SWZ, MAJ) name##_st;                                                          \
  KBD_KERNEL(name, 256, win_params) {                                                                            \
    KBD_SHARED_STILE(name##_st, s);                                                                              \
    const int w = kbd_warp_id();                                                                                 \
    KBD_TILE(dt, SN, SN, KBD_CTA) all;                                                                           \
    kbd_load2d(all, (const kbd_##dt *)p.src, SN, SN, SN, 0, 0);                                                  \
    kbd_stile_store(s, all);                                                                                     \
    kbd_sync();                                                                                                  \
    switch (p.layout) { WIN_LAYOUTS(WIN_CASE, dt) }                                                              \
    kbd_sync();                                                                                                  \
    if (p.op & 1) DUMP_IMAGE(s, p.img);                                                                          \
  }

#define WIN_CONFIGS(X, dt, SN)                                                                                   \
  X(dt##_none_k, dt, SN, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR)                                                     \
  X(dt##_32_mn, dt, SN, KBD_SWIZZLE_32B, KBD_SMEM_MN_MAJOR)                                                      \
  X(dt##_64_k, dt, SN, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR)                                                        \
  X(dt##_128_k, dt, SN, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR)                                                      \
  X(dt##_128_mn, dt, SN, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR)

#define WIN_DEF(tag, dt, SN, SWZ, MAJ) WIN_KERNEL(win_##tag, dt, SN, SWZ, MAJ)
WIN_CONFIGS(WIN_DEF, bf16, 128)
WIN_CONFIGS(WIN_DEF, f32, 96)
WIN_CONFIGS(WIN_DEF, e4m3, 128)

typedef kbd_status (*win_launcher)(kbd_launch_cfg, win_params);
typedef struct win_kind {
  const char *name;
  win_launcher launch;
  int es, n, swz, major;
} win_kind;
#define WIN_KIND(tag, dt, SN, SWZ, MAJ) {#tag, win_##tag, (int)sizeof(kbd_##dt), SN, SWZ, MAJ},
static const win_kind win_kinds[] = {WIN_CONFIGS(WIN_KIND, bf16, 128) WIN_CONFIGS(WIN_KIND, f32, 96)
                                         WIN_CONFIGS(WIN_KIND, e4m3, 128)};
static const char *const win_op_names[4] = {"kbd_stile_load_at", "kbd_stile_store_at", "kbd_stile_load_t_at",
                                            "kbd_stile_store_t_at"};

typedef struct win_bufs {
  unsigned char *h_src, *h_pat, *h_img, *h_out;
  void *d_src, *d_pat, *d_img, *d_out;
} win_bufs;

static void win_bufs_init(win_bufs *B, const win_kind *K, int seed) {
  const int es = K->es, N = K->n;
  const size_t big = (size_t)N * N * es, small = (size_t)64 * 64 * es;
  B->h_src = malloc(big), B->h_img = malloc(big), B->h_pat = malloc(small), B->h_out = malloc(small);
  assert_true(B->h_src && B->h_img && B->h_pat && B->h_out);
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) wr(B->h_src, es, (long)r * N + c, val(es, seed, r, c, N));
  /* the pattern: distinct from every src value (1-byte: the top bit set; src values are < 128) */
  for (long k = 0; k < 64 * 64; ++k)
    wr(B->h_pat, es, k, es == 1 ? (uint32_t)(0x80 | (k % 127)) : es == 2 ? 0xC000u + (uint32_t)k : 0x7f000000u + (uint32_t)k);
  B->d_src = dev_alloc(big), B->d_img = dev_alloc(big), B->d_pat = dev_alloc(small), B->d_out = dev_alloc(small);
  assert_true(kbd_ok(kbd_copy_to_device(B->d_src, B->h_src, big)));
  assert_true(kbd_ok(kbd_copy_to_device(B->d_pat, B->h_pat, small)));
}
static void win_bufs_free(win_bufs *B) {
  assert_true(kbd_ok(kbd_free(B->d_src)) && kbd_ok(kbd_free(B->d_img)) && kbd_ok(kbd_free(B->d_pat)) &&
              kbd_ok(kbd_free(B->d_out)));
  free(B->h_src), free(B->h_img), free(B->h_pat), free(B->h_out);
}

static kbd_status win_launch(const win_kind *K, win_bufs *B, int op, int layout, int r0, int c0) {
  win_params p;
  memset(&p, 0, sizeof p);
  p.src = B->d_src, p.pat = B->d_pat, p.img = B->d_img, p.out = B->d_out;
  p.op = op, p.layout = layout, p.r0 = r0, p.c0 = c0;
  return K->launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
}

static long win_run(const win_kind *K, win_bufs *B, int seed, int op, int layout, int r0, int c0) {
  const int es = K->es, N = K->n, R = win_rows[layout], C = win_cols[layout], tr = op >= 2;
  const kbd_status st = win_launch(K, B, op, layout, r0, c0);
  if (!kbd_ok(st)) fail_msg("%s %s layout %d at (%d, %d): launch failed: %s", K->name, win_op_names[op], layout, r0, c0, st.msg);
  long bad = 0;
  if (op & 1) {
    assert_true(kbd_ok(kbd_copy_to_host(B->h_img, B->d_img, (size_t)N * N * es)));
    const kbd_smem_shape s = kbd_smem_shape_make(es, N, N, K->swz, K->major);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) {
        /* register element (r, c) of the window that shared (a, b) holds, if any */
        const int r = tr ? b - c0 : a - r0, c = tr ? a - r0 : b - c0;
        const int in = r >= 0 && r < R && c >= 0 && c < C;
        const uint32_t want = in ? rd(B->h_pat, es, (long)r * C + c) : val(es, seed, a, b, N);
        uint32_t got = 0;
        memcpy(&got, B->h_img + kbd_smem_tile_offset(&s, a, b), (size_t)es);
        if (got != want && bad++ < 3)
          print_error("%s %s layout %d at (%d, %d): shared (%d, %d) = 0x%x, want 0x%x%s\n", K->name, win_op_names[op],
                      layout, r0, c0, a, b, got, want, in ? "" : " (outside the window: unchanged)");
      }
  } else {
    assert_true(kbd_ok(kbd_copy_to_host(B->h_out, B->d_out, (size_t)R * C * es)));
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        const int a = tr ? r0 + c : r0 + r, b = tr ? c0 + r : c0 + c;
        const uint32_t want = val(es, seed, a, b, N), got = rd(B->h_out, es, (long)r * C + c);
        if (got != want && bad++ < 3)
          print_error("%s %s layout %d at (%d, %d): element (%d, %d) = 0x%x, want shared (%d, %d) = 0x%x\n", K->name,
                      win_op_names[op], layout, r0, c0, r, c, got, a, b, want);
      }
  }
  return bad;
}

static void test_windows(void **state) {
  (void)state;
  long runs = 0, bad = 0;
  for (size_t k = 0; k < sizeof win_kinds / sizeof win_kinds[0]; ++k) {
    const win_kind *K = &win_kinds[k];
    for (int seed = 0; seed < (K->es == 1 ? 2 : 1); ++seed) {
      win_bufs B;
      win_bufs_init(&B, K, seed);
      for (int op = 0; op < 4; ++op)
        for (int layout = 0; layout < WIN_NL; ++layout) {
          const int wr_ = op >= 2 ? win_cols[layout] : win_rows[layout];
          const int wc_ = op >= 2 ? win_rows[layout] : win_cols[layout];
          /* aligned, unaligned along either dimension, and flush with the far corner */
          const int org[5][2] = {{0, 0}, {16, 32}, {8, 3}, {5, 8}, {K->n - wr_, K->n - wc_}};
          for (int o = 0; o < 5; ++o) {
            bad += win_run(K, &B, seed, op, layout, org[o][0], org[o][1]);
            ++runs;
          }
        }
      win_bufs_free(&B);
    }
  }
  if (bad) fail_msg("%ld wrong elements over %ld window moves", bad, runs);
  assert_int_equal(runs, (5 + 5 + 5 * 2) * 4 * WIN_NL * 5);
}

/* ======================================================================================================== */
/* 4. faults                                                                                                */
/* ======================================================================================================== */

static void expect_bounds(const win_kind *K, win_bufs *B, int op, int layout, int r0, int c0) {
  char want[256];
  const int R = win_rows[layout], C = win_cols[layout], tr = op >= 2;
  win_case_line = 0;
  const kbd_status st = win_launch(K, B, op, layout, r0, c0);
  MT_ASSERT_CODE(st, KBD_ERR_BOUNDS);
  snprintf(want, sizeof want, "%s: the %d x %d window at (%d, %d) is not inside the %d x %d shared tile",
           win_op_names[op], tr ? C : R, tr ? R : C, r0, c0, K->n, K->n);
  MT_ASSERT_HAS(st, want);
  assert_true(MT_LINE(win_case_line) > 0);
  MT_ASSERT_AT(st, MT_LINE(win_case_line));
}

static void test_window_out_of_bounds(void **state) {
  (void)state;
  const win_kind *K = &win_kinds[3]; /* bf16 128B K-major, 128 x 128 */
  win_bufs B;
  win_bufs_init(&B, K, 0);
  expect_bounds(K, &B, 0, 0, 113, 0);  /* MMA_A 16 x 32: one row past the edge */
  expect_bounds(K, &B, 0, 0, 0, 97);   /* one column past */
  expect_bounds(K, &B, 1, 5, -8, 0);   /* WGMMA_ACC store at a negative origin */
  expect_bounds(K, &B, 2, 1, 0, 97);   /* load_t of MMA_B 32 x 16: a 16 x 32 window */
  expect_bounds(K, &B, 3, 4, 100, 0);  /* store_t of ROW CTA 32 x 64: 64 rows from 100 */
  expect_bounds(K, &B, 1, 3, 0, 1000); /* far outside */
  /* the edge itself is fine */
  assert_int_equal(win_run(K, &B, 0, 0, 0, 112, 96), 0);
  win_bufs_free(&B);
}

/* never-written shared tiles: the matrix path (bf16 MMA_A) and the element path (f32 ROW), and a tile only
 * partly written (a window) then loaded whole */
typedef struct pz_params {
  int mode;
} pz_params;
static int pz_line;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) pz_bf16_tile;
typedef KBD_STILE_MN(f32, 32, 32, KBD_SWIZZLE_64B) pz_f32_tile;

KBD_KERNEL(pz_kernel, 128, pz_params) {
  KBD_SHARED_STILE(pz_bf16_tile, sb);
  KBD_SHARED_STILE(pz_f32_tile, sf);
  const int w = kbd_warp_id();
  if (p.mode == 0 && w == 0) {
    KBD_TILE_L(bf16, 64, 64, KBD_WARP, KBD_LAYOUT_MMA_A) t;
    MT_MARK(pz_line); kbd_stile_load(t, sb);
  } else if (p.mode == 1) {
    KBD_TILE(f32, 32, 32, KBD_WARPGROUP) t;
    MT_MARK(pz_line); kbd_stile_load(t, sf);
  } else if (p.mode == 2) {
    KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
    KBD_TILE_L(bf16, 16, 64, KBD_WARP, KBD_LAYOUT_MMA_A) part;
    kbd_zero(part);
    if (w == 0) kbd_stile_store_at(sb, part, 0, 0); /* rows 0-15 only */
    kbd_sync();
    MT_MARK(pz_line); kbd_stile_load(acc, sb);
  } else if (p.mode == 3) {
    /* every warp stores its own copy of a warp tile into the same shared tile: unordered writes */
    KBD_TILE_L(bf16, 64, 64, KBD_WARP, KBD_LAYOUT_MMA_C) t;
    kbd_zero(t);
    MT_MARK(pz_line); kbd_stile_store(sb, t);
  }
}

static void test_never_written(void **state) {
  (void)state;
  pz_params p;
  p.mode = 0;
  kbd_status st = pz_kernel(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(st, KBD_ERR_POISON);
  MT_ASSERT_AT(st, MT_LINE(pz_line));
  MT_ASSERT_HAS(st, "kbd_stile_load reads never-written shared memory (shared array declared at");
  MT_ASSERT_HAS(st, "tile element (");
  p.mode = 1;
  st = pz_kernel(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(st, KBD_ERR_POISON);
  MT_ASSERT_AT(st, MT_LINE(pz_line));
  MT_ASSERT_HAS(st, "kbd_stile_load reads never-written shared memory");
  /* partly written: the element named is one the window did not cover (row >= 16) */
  p.mode = 2;
  st = pz_kernel(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(st, KBD_ERR_POISON);
  MT_ASSERT_AT(st, MT_LINE(pz_line));
  const char *e = strstr(st.msg, "tile element (");
  assert_non_null(e);
  int er = -1, ec = -1;
  assert_int_equal(sscanf(e, "tile element (%d, %d)", &er, &ec), 2);
  if (er < 16 || er >= 64 || ec < 0 || ec >= 64) fail_msg("named element (%d, %d) was written: %s", er, ec, st.msg);
}

static void test_store_race(void **state) {
  (void)state;
  pz_params p;
  p.mode = 3;
  const kbd_status st = pz_kernel(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  MT_ASSERT_AT(st, MT_LINE(pz_line));
  MT_ASSERT_HAS(st, "write after write");
  MT_ASSERT_HAS(st, "kbd_stile_store");
}

/* TMA -> kbd_stile_load: the TMA's box image is what the moves read (MMA_A fragments of every warp equal the
 * global tensor), and a warp that loads before waiting on the mbarrier is reported at its line. */
typedef struct tma_mv_params {
  kbd_tensor_map map;
  kbd_bf16 *out;
  int mode;
} tma_mv_params;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) tma_mv_tile;
static int tma_line;

KBD_KERNEL(tma_mv_kernel, 128, tma_mv_params) {
  KBD_SHARED_STILE(tma_mv_tile, t);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  const int w = kbd_warp_id();
  if (w == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(&bar[0], 1); }
  }
  kbd_sync();
  if (w == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(t));
      kbd_tma_load2d(t, &p.map, &bar[0], 0, 0);
    }
  }
  KBD_TILE_L(bf16, 16, 64, KBD_WARP, KBD_LAYOUT_MMA_A) a;
  if (p.mode == 1 && w == 1) {
    MT_MARK(tma_line); kbd_stile_load_at(a, t, 16, 0);
  }
  kbd_mbarrier_wait(&bar[0], 0);
  kbd_stile_load_at(a, t, 16 * w, 0);
  kbd_store2d(p.out, a, 64, 64, 64, 16 * w, 0);
}

static void test_after_tma(void **state) {
  (void)state;
  kbd_bf16 h_in[64 * 64], h_out[64 * 64];
  for (int k = 0; k < 64 * 64; ++k) h_in[k].bits = (uint16_t)(0x3000 + k);
  kbd_bf16 *d_in = (kbd_bf16 *)dev_alloc(sizeof h_in), *d_out = (kbd_bf16 *)dev_alloc(sizeof h_out);
  assert_true(kbd_ok(kbd_copy_to_device(d_in, h_in, sizeof h_in)));
  assert_true(kbd_ok(kbd_memset_device(d_out, 0, sizeof h_out)));
  tma_mv_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, d_in, 64, 64, 128, 64, 64, KBD_TMAP_SWIZZLE_128B);
  assert_true(kbd_ok(kbd_tensor_map_encode(&p.map, &d)));
  p.out = d_out;
  MT_ASSERT_OK(tma_mv_kernel(kbd_cfg_1d(1), p));
  assert_true(kbd_ok(kbd_copy_to_host(h_out, d_out, sizeof h_out)));
  for (int k = 0; k < 64 * 64; ++k)
    if (h_out[k].bits != h_in[k].bits) fail_msg("element (%d, %d) = 0x%x, want 0x%x", k / 64, k % 64, h_out[k].bits, h_in[k].bits);
  /* default schedule: warp 0 issues and waits (the data lands), then warp 1 reads without waiting */
  p.mode = 1;
  kbd_status st = tma_mv_kernel(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  MT_ASSERT_AT(st, MT_LINE(tma_line));
  MT_ASSERT_HAS(st, "warp 1 reads it here (kbd_stile_load_at)");
  MT_ASSERT_HAS(st, "an asynchronous copy (TMA) issued by warp 0");
  /* other schedules: before the issue (never written), in flight (pending) or landed: never clean */
  for (long seed = 1; seed < 8; ++seed) {
    mt_env(1, seed);
    st = tma_mv_kernel(kbd_cfg_1d(1), p);
    if (st.code != KBD_ERR_RACE && st.code != KBD_ERR_POISON) fail_msg("seed %ld: %s", seed, st.msg);
    MT_ASSERT_AT(st, MT_LINE(tma_line));
    MT_ASSERT_HAS(st, "kbd_stile_load_at");
  }
  mt_env(1, 0);
  assert_true(kbd_ok(kbd_free(d_in)) && kbd_ok(kbd_free(d_out)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_ldsm_eligibility),   MT_TEST(test_ldsm_plan_matches_ptx), MT_TEST(test_roundtrip_f32),
      MT_TEST(test_roundtrip_bf16),     MT_TEST(test_roundtrip_e4m3),        MT_TEST(test_transposed_f32),
      MT_TEST(test_transposed_bf16),    MT_TEST(test_transposed_e4m3),       MT_TEST(test_windows),
      MT_TEST(test_window_out_of_bounds), MT_TEST(test_never_written),       MT_TEST(test_store_race),
      MT_TEST(test_after_tma),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
