/* tests/examples/test_transpose_banks.c - examples/transpose makes no shared-memory bank conflict on the GPU.
 *
 * The kernel touches shared memory with exactly two calls per strip (transpose.cu, tr_transpose_tile):
 *     kbd_stile_load_t_at(v, in, k * TR_W, 0);   kbd_stile_store_at(out, v, 0, k * TR_W);
 * for strips k = w, w + TR_WARPS, ... of warp w (the TMA's own accesses are not the threads'). This test
 * replays the plan of kbd_stile_move_ (kbd/stile_move.h) for every warp and strip of one tile, with the
 * example's own types (transpose.h, both element sizes), and lists every warp-wide shared-memory instruction
 * with the address of each lane. Addresses come from the library's pure functions only: kbd_stile_ldsm_row
 * (the row a lane gives ldmatrix/stmatrix), kbd_tile_coord + kbd_stile_elem (the element path) and
 * kbd_smem_tile_offset (THE offset function, which the GPU code, the CPU machine and the TMA emulation use).
 *
 * Bank model: kbd/memmodel.h (kbd_smem_wavefronts, kbd_smem_ideal_wavefronts; docs/profiling.md), the functions
 * the CPU machine's profiler uses (KBD_CPU_PROFILE; tests/profile checks a real run of this kernel): 32 banks of
 * 4 bytes; a warp-wide access of b bytes per lane is served in phases of 128/b lanes (all 32 for b <= 4, 16 for
 * 8 bytes, 8 for 16 bytes: one ldmatrix/stmatrix 8x8 matrix, lanes 8m..8m+7, is one phase); inside a phase a
 * bank delivers one 4-byte word per wavefront (lanes reading the same word share it). So a phase costs the
 * largest number of distinct words any bank is asked for, and it is conflict free when that is 1.
 *
 *   tr_plan              the moves take the paths the bank argument assumes: bf16 ldmatrix .trans / stmatrix
 *                        (no .trans), f32 scalar reads and 16-byte writes
 *   tr_banks_bf16/_f32   every instruction of the tile is one wavefront per phase, every byte of the x tile
 *                        is read once and every byte of the y tile written once, so the tile costs exactly
 *                        bytes / 128 wavefronts each way: the minimum
 *   tr_control_none      the same replay on unswizzled tiles (KBD_SWIZZLE_NONE, same shapes) MUST conflict:
 *                        8 wavefronts per phase wherever 8 lanes walk down one column (bf16 both ways, f32
 *                        writes); f32 reads stay conflict free, as the strip reads whole lines
 *   tr_control_strip     the swizzle alone is not enough: an f32 strip of 32 x 32 (ROW) instead of 32 x 4
 *                        reads 8 lines x 4 columns per instruction, which the 16-byte swizzle maps to 8 banks:
 *                        4 wavefronts each
 *   tr_profiler_agrees   the kernel itself (both element sizes, one tile, linked from examples/transpose) run under
 *                        the CPU machine's profiler (KBD_CPU_PROFILE, kbd/cpu/profile.h): its two shared sites
 *                        have exactly the replay's instructions, wavefronts and conflict-free minimum
 */
#include "transpose.h"

#include <kbd/memmodel.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- the bank model: kbd/memmodel.h (kbd_smem_wavefronts, the function the CPU machine's profiler uses) ---- */

/* ---- the replay of one tile ---------------------------------------------------------------------------- */

typedef struct tb_stats {
  long instructions; /* warp-wide shared-memory instructions */
  long phases;       /* their phases: the wavefronts of a conflict-free access */
  long wavefronts;   /* what the bank model says they cost */
  int matrix;        /* 1: ldmatrix/stmatrix */
  int bytes;         /* bytes per lane of the (last) instruction */
  unsigned char touched[16384]; /* times each byte of the shared tile was accessed */
} tb_stats;

static void tb_account(tb_stats *st, const uint32_t *addr, int lanes, int bytes) {
  st->instructions++;
  st->phases += kbd_smem_ideal_wavefronts(addr, NULL, lanes, bytes);
  st->wavefronts += kbd_smem_wavefronts(addr, NULL, lanes, bytes);
  st->bytes = bytes;
  for (int l = 0; l < lanes; ++l)
    for (int b = 0; b < bytes; ++b) {
      assert_true(addr[l] + (uint32_t)b < sizeof st->touched);
      st->touched[addr[l] + (uint32_t)b]++;
    }
}

/* The warp-wide accesses of warp `warp` in one kbd_stile_move_ (kbd/stile_move.h) of register tile t and shared
 * tile s, window (r0, c0), transposed or not: the same decisions in the same order. */
static void tb_move(tb_stats *st, kbd_tile_shape t, kbd_smem_shape s, int r0, int c0, int trans, int warp) {
  uint32_t addr[32];
  if (kbd_stile_ldsm_ok(t, s.major, r0, c0)) {
    const int npairs = t.npt / 2;
    st->matrix = 1;
    for (int p0 = 0; p0 < npairs;) {
      const int nmat = npairs - p0 >= 4 ? 4 : npairs - p0 >= 2 ? 2 : 1;
      for (int l = 0; l < 32; ++l) {
        const kbd_coord rc = kbd_stile_ldsm_row(t, s.major, trans, r0, c0, (warp * 32 + l) % t.scope, p0, nmat);
        addr[l] = (uint32_t)kbd_smem_tile_offset(&s, rc.row, rc.col);
      }
      tb_account(st, addr, 8 * nmat, 16); /* lane 8m + j: row j of matrix m, 16 bytes */
      p0 += nmat;
    }
    return;
  }
  const int run = kbd_stile_run_len(t), rdim = kbd_stile_run_dim(t.layout, trans);
  const int vec_ok =
      run > 1 && rdim == kbd_stile_cont_dim(s.major) && ((unsigned)(rdim ? c0 : r0) & (unsigned)(run - 1)) == 0;
  st->matrix = 0;
  for (int i = 0; i < t.npt; i += run)
    for (int k = 0; k < (vec_ok ? 1 : run); ++k) {
      for (int l = 0; l < 32; ++l) {
        const kbd_coord e = kbd_stile_elem(trans, r0, c0, kbd_tile_coord(t, (warp * 32 + l) % t.scope, i + k));
        addr[l] = (uint32_t)kbd_smem_tile_offset(&s, e.row, e.col);
      }
      tb_account(st, addr, 32, (vec_ok ? run : 1) * t.esize);
    }
}

/* One tile of the kernel: every warp, every strip (transpose.cu, tr_transpose_tile). */
static void tb_tile(tb_stats *load, tb_stats *store, kbd_tile_shape strip, kbd_smem_shape in, kbd_smem_shape out) {
  const int w = strip.cols, strips = in.rows / w;
  memset(load, 0, sizeof *load);
  memset(store, 0, sizeof *store);
  for (int warp = 0; warp < TR_WARPS; ++warp)
    for (int k = warp; k < strips; k += TR_WARPS) {
      tb_move(load, strip, in, k * w, 0, 1, warp);   /* kbd_stile_load_t_at(v, in, k * W, 0) */
      tb_move(store, strip, out, 0, k * w, 0, warp); /* kbd_stile_store_at(out, v, 0, k * W) */
    }
}

/* Every byte of the tile accessed exactly once. */
static void tb_covers_once(const tb_stats *st, int bytes, const char *what) {
  for (int i = 0; i < (int)sizeof st->touched; ++i)
    if (st->touched[i] != (i < bytes ? 1 : 0))
      fail_msg("%s: byte %d accessed %d times (want %d)", what, i, st->touched[i], i < bytes ? 1 : 0);
}

static void tb_report(const char *what, const tb_stats *st) {
  printf("  %-32s %3ld instructions (%-17s %2d bytes/lane): %4ld wavefronts, conflict-free minimum %4ld\n", what,
         st->instructions, st->matrix ? "ldmatrix/stmatrix" : "ld/st.shared", st->bytes, st->wavefronts, st->phases);
}

/* ---- the example's types, both element sizes ------------------------------------------------------------ */

typedef TR_STRIP(bf16) strip_bf16;
typedef TR_STRIP(f32) strip_f32;
typedef TR_IN_TILE(bf16) in_bf16;
typedef TR_IN_TILE(f32) in_f32;
typedef TR_OUT_TILE(bf16) out_bf16;
typedef TR_OUT_TILE(f32) out_f32;
#define TB_SHAPE(type) KBD__SHAPE(*(type *)0)
#define TB_SMEM(type) KBD_STILE_SHAPE(KBD__STILE_OBJ(type))

static kbd_smem_shape tb_unswizzled(kbd_smem_shape s) {
  s.swizzle = KBD_SWIZZLE_NONE;
  assert_null(kbd_smem_shape_check(&s));
  return s;
}

static tb_stats tb_load, tb_store; /* 16 KiB each: not on the stack */

static void tr_plan(void **state) {
  (void)state;
  const kbd_tile_shape b = TB_SHAPE(strip_bf16), f = TB_SHAPE(strip_f32);
  const kbd_smem_shape bi = TB_SMEM(in_bf16), bo = TB_SMEM(out_bf16), fi = TB_SMEM(in_f32), fo = TB_SMEM(out_f32);
  /* the example's geometry: 128-byte lines, 8 KiB tiles, strips that tile the y tile */
  assert_int_equal(bi.rows * bi.esize * bi.cols, 8192);
  assert_int_equal(fi.rows * fi.esize * fi.cols, 8192);
  assert_int_equal(bi.cols * bi.esize, 128);
  assert_int_equal(fi.cols * fi.esize, 128);
  assert_int_equal(bi.swizzle, KBD_SWIZZLE_128B);
  assert_int_equal(fo.swizzle, KBD_SWIZZLE_128B);
  assert_int_equal(b.rows, bo.rows);
  assert_int_equal(f.rows, fo.rows);
  /* bf16: ldmatrix .trans from x's K-major tile (pairs run down its columns), stmatrix into y's (along rows) */
  for (int k = 0; k < TR_TM / b.cols; ++k) {
    assert_true(kbd_stile_ldsm_ok(b, bi.major, k * b.cols, 0));
    assert_true(kbd_stile_ldsm_ok(b, bo.major, 0, k * b.cols));
  }
  assert_int_equal(kbd_stile_ldsm_trans(b.layout, bi.major, 1), 1);
  assert_int_equal(kbd_stile_ldsm_trans(b.layout, bo.major, 0), 0);
  assert_int_equal(b.npt, 32); /* 16 pairs: four .x4 each way */
  /* f32: no matrix path; one lane's 4 elements run down x's columns (one read each) and along y's rows (one
   * 16-byte write) */
  assert_false(kbd_stile_ldsm_ok(f, fi.major, 0, 0));
  assert_int_equal(f.layout, KBD_LAYOUT_ROW);
  assert_int_equal(kbd_stile_run_len(f) * f.esize, 16);
  assert_true(kbd_stile_run_dim(f.layout, 1) != kbd_stile_cont_dim(fi.major));
  assert_true(kbd_stile_run_dim(f.layout, 0) == kbd_stile_cont_dim(fo.major));
}

static void tb_expect_conflict_free(kbd_tile_shape strip, kbd_smem_shape in, kbd_smem_shape out, const char *name) {
  char what[64];
  tb_tile(&tb_load, &tb_store, strip, in, out);
  snprintf(what, sizeof what, "%s x tile reads", name);
  tb_report(what, &tb_load);
  snprintf(what, sizeof what, "%s y tile writes", name);
  tb_report(what, &tb_store);
  assert_int_equal(tb_load.wavefronts, tb_load.phases);
  assert_int_equal(tb_store.wavefronts, tb_store.phases);
  /* ... and every phase moves 128 useful bytes: nothing read or written twice, nothing missed */
  tb_covers_once(&tb_load, kbd_smem_tile_bytes(&in), "x tile reads");
  tb_covers_once(&tb_store, kbd_smem_tile_bytes(&out), "y tile writes");
  assert_int_equal(tb_load.phases, kbd_smem_tile_bytes(&in) / 128);
  assert_int_equal(tb_store.phases, kbd_smem_tile_bytes(&out) / 128);
}

static void tr_banks_bf16(void **state) {
  (void)state;
  tb_expect_conflict_free(TB_SHAPE(strip_bf16), TB_SMEM(in_bf16), TB_SMEM(out_bf16), "bf16");
  assert_true(tb_load.matrix && tb_store.matrix);
  assert_int_equal(tb_load.instructions, 16); /* 4 warps x 4 ldmatrix.x4.trans */
  assert_int_equal(tb_store.instructions, 16);
}

static void tr_banks_f32(void **state) {
  (void)state;
  tb_expect_conflict_free(TB_SHAPE(strip_f32), TB_SMEM(in_f32), TB_SMEM(out_f32), "f32");
  assert_false(tb_load.matrix || tb_store.matrix);
  assert_int_equal(tb_load.instructions, 64); /* 16 strips x 4 scalar reads */
  assert_int_equal(tb_store.instructions, 16); /* 16 strips x 1 16-byte write */
  assert_int_equal(tb_store.bytes, 16);
}

/* Control: the same kernel on unswizzled tiles. The check above must fail here. */
static void tr_control_none(void **state) {
  (void)state;
  tb_tile(&tb_load, &tb_store, TB_SHAPE(strip_bf16), tb_unswizzled(TB_SMEM(in_bf16)), tb_unswizzled(TB_SMEM(out_bf16)));
  tb_report("bf16 unswizzled x tile reads", &tb_load);
  tb_report("bf16 unswizzled y tile writes", &tb_store);
  assert_int_equal(tb_load.wavefronts, 8 * tb_load.phases); /* an 8x8 matrix's rows share one bank group */
  assert_int_equal(tb_store.wavefronts, 8 * tb_store.phases);
  tb_tile(&tb_load, &tb_store, TB_SHAPE(strip_f32), tb_unswizzled(TB_SMEM(in_f32)), tb_unswizzled(TB_SMEM(out_f32)));
  tb_report("f32 unswizzled x tile reads", &tb_load);
  tb_report("f32 unswizzled y tile writes", &tb_store);
  assert_int_equal(tb_load.wavefronts, tb_load.phases);       /* whole lines: no swizzle needed */
  assert_int_equal(tb_store.wavefronts, 8 * tb_store.phases); /* 8 lines, one chunk: one bank group */
}

/* The replay against the profiler's record of a real run of the kernel on one tile (grid 1, 64 x 64 x). */
long long prof_tr_run_swz(long long rows, long long cols, unsigned grid); /* tests/profile/prof_tr_*.c */
long long prof_tr_run_f32(long long rows, long long cols, unsigned grid);
static void tb_agrees(const tb_stats *st, const char *what, int op) {
  const kbd_profile *p = kbd_profile_last();
  const kbd_profile_site *s = NULL;
  assert_non_null(p);
  for (int i = 0; i < p->nsites; ++i)
    if (strcmp(p->sites[i].what, what) == 0) s = &p->sites[i];
  assert_non_null(s);
  assert_int_equal(s->op, op);
  assert_int_equal(s->instructions, st->instructions);
  assert_int_equal(s->wavefronts, st->wavefronts);
  assert_int_equal(s->ideal, st->phases);
  assert_int_equal(s->bytes_per_lane, st->bytes);
}
static void tr_profiler_agrees(void **state) {
  (void)state;
  setenv("KBD_CPU_THREADS", "1", 1);
  kbd_profile_enable(1);
  tb_tile(&tb_load, &tb_store, TB_SHAPE(strip_bf16), TB_SMEM(in_bf16), TB_SMEM(out_bf16));
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  tb_agrees(&tb_load, "kbd_stile_load_t_at", KBD_PROFILE_LDMATRIX);
  tb_agrees(&tb_store, "kbd_stile_store_at", KBD_PROFILE_STMATRIX);
  /* f32: x tiles are 64 x 32 (128-byte lines), so a 64 x 32 x is one tile */
  tb_tile(&tb_load, &tb_store, TB_SHAPE(strip_f32), TB_SMEM(in_f32), TB_SMEM(out_f32));
  assert_int_equal(prof_tr_run_f32(64, 32, 1), 0);
  tb_agrees(&tb_load, "kbd_stile_load_t_at", KBD_PROFILE_LD);
  tb_agrees(&tb_store, "kbd_stile_store_at", KBD_PROFILE_ST);
  kbd_profile_enable(-1);
}

/* Control: with the swizzle but a wide f32 strip, a read instruction covers 8 lines x 4 columns. */
typedef KBD_TILE(f32, 32, 32, KBD_WARP) wide_strip_f32;
static void tr_control_strip(void **state) {
  (void)state;
  tb_tile(&tb_load, &tb_store, TB_SHAPE(wide_strip_f32), TB_SMEM(in_f32), TB_SMEM(out_f32));
  tb_report("f32 32 x 32 strip x tile reads", &tb_load);
  tb_report("f32 32 x 32 strip y tile writes", &tb_store);
  assert_int_equal(tb_load.wavefronts, 4 * tb_load.phases);
  assert_int_equal(tb_store.wavefronts, tb_store.phases);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tr_plan),         cmocka_unit_test(tr_banks_bf16),    cmocka_unit_test(tr_banks_f32),
      cmocka_unit_test(tr_control_none), cmocka_unit_test(tr_control_strip), cmocka_unit_test(tr_profiler_agrees),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
