/* kbd/stile_move.h - moves between register tiles and shared tiles (kbd/stile.h).
 *
 *   kbd_stile_load(t, s)                 register tile t <- shared tile s        (same R x C, same dtype)
 *   kbd_stile_store(s, t)                shared tile s   <- register tile t
 *   kbd_stile_load_at(t, s, r0, c0)      t <- the R x C window of s at (r0, c0)  (r0, c0 may be run-time values)
 *   kbd_stile_store_at(s, t, r0, c0)     the window of s at (r0, c0) <- t
 *   kbd_stile_load_t(t, s)               t[r][c] = s[c][r]  (t is R x C, s is C x R)
 *   kbd_stile_store_t(s, t)              s[c][r] = t[r][c]
 *   kbd_stile_load_t_at / _store_t_at    the same on the C x R window of s at (r0, c0): t[r][c] = s[r0+c][c0+r]
 *
 * Any register layout and scope; each thread moves exactly the elements its fragment owns. Element (r, c) of
 * the shared tile is at byte kbd_stile_offset(s, r, c) = kbd_smem_tile_offset() (kbd/swizzle.h), the one
 * offset function, so swizzle and major-ness are honoured by construction. r0, c0 must be the same for every
 * thread of the tile's scope (the matrix instructions below are warp-collective).
 *
 * How (all decided at compile time, except the window's alignment test, which folds when r0/c0 are constants
 * or multiples of 8 the compiler can see, e.g. 16*k):
 *   - 16-bit dtypes (f16, bf16) in MMA_A, MMA_B, MMA_C and WGMMA_ACC: ldmatrix / stmatrix m8n8 (.x4, .x2 for
 *     a remainder of two 8x8 matrices), .trans where the shared tile's contiguous dimension is not the one
 *     along which a thread's element pairs run. Every (layout, major-ness, transposed or not) combination
 *     maps; the only condition is that the window origin along the contiguous dimension (c0 K-major, r0
 *     MN-major) is a multiple of 8, so each row an instruction addresses is 16 aligned bytes (see the proof
 *     below). One instruction moves four 8x8 matrices = 8 elements per thread.
 *   - everything else: per thread, one ld.shared/st.shared per run of consecutive elements (a ROW vector of
 *     vec elements, an MMA pair, 16 bytes of a TMEM_ACC row) when the run lies along the contiguous
 *     dimension at an aligned start (at most 16 bytes, inside one 16-byte swizzle unit), else one per element.
 *   - TMEM_ACC (thread t holds row t of each 128-row block whole, kbd/layout.h): runs of 16 bytes (4 f32,
 *     8 bf16/f16, 16 fp8 or 8 when C is not a multiple of 16), i.e. ld/st.shared.v4 along the row for a
 *     K-major tile (and for a transposed move into an MN-major one); an MN-major tile (not transposed) takes
 *     the element path: one access per element, the 32 lanes on 32 consecutive elements of one column
 *     (contiguous inside a 16-byte unit). Wavefronts of one warp-wide 16-byte access (32 rows, same column
 *     chunk): 32 x 16 bytes need at least 4; with any swizzle the 8 threads of a quarter-warp are 8
 *     consecutive rows, whose chunk index is XORed with 8 distinct line phases (128B: row%8; 64B: row%2
 *     picks the 64-byte half and row/2%4 the XOR; 32B: row%4 the quarter and row/4%2 the XOR), so they cover
 *     all 32 banks: 4 wavefronts, the minimum. A NONE tile whose row pitch is a multiple of 128 bytes puts
 *     all 32 rows' chunks in one bank group: 32 wavefronts (8-way conflict) - swizzle an epilogue tile.
 *     tests/layout/test_layout_tmem.c counts this from kbd_smem_tile_offset.
 * CPU mode: the same plan (the m8n8 instructions are emulated as the PTX ISA defines them, ptx-reference
 * §7.2), every byte through the shared-memory checks (bounds of one allocation, never-written bytes, bytes a
 * TMA copy is still writing, races), each report naming the shared-tile element (row, col); a window that
 * is not inside the shared tile fails with KBD_ERR_BOUNDS at the caller's file:line (unchecked on the GPU).
 *
 * Why the matrix path is exact (ptx-reference §7.2). ldmatrix .m8n8 with n matrices: thread 8m + j supplies
 * the address of row j of matrix m, a row being 8 consecutive b16 elements (16 bytes, 16-byte aligned);
 * register m of thread t = 4g + q receives {M_m[g][2q], M_m[g][2q+1]} (no .trans) or {M_m[2q][g],
 * M_m[2q+1][g]} (.trans). stmatrix is the inverse. In kbd's fragment layouts (kbd/layout.h) element pair p
 * (elements 2p, 2p+1: one .b32) of lane 4g + q lies at O_p + (g along one dimension, 2q and 2q+1 along the
 * other, the "pair dimension"), with the 8x8 block origin O_p = the coordinate of pair p of the warp's lane 0,
 * whose coordinates are multiples of 8: A/C/WGMMA_ACC pair along columns, B along rows. Let memory row j of
 * matrix m start at O_p + j along the shared tile's strided dimension: its 8 elements run along the
 * contiguous dimension from a multiple of 8, i.e. 16 aligned bytes inside one 16-byte swizzle unit (the
 * swizzles permute whole 16- or 32-byte units; a NONE tile's lines are multiples of 16 bytes). If the pair
 * dimension is the contiguous one, thread 4g + q receives row g, elements 2q, 2q+1: no .trans; otherwise
 * it receives rows 2q, 2q+1, element g: .trans. tests/smem/test_stile_move.c replays the PTX definition over
 * the addresses kbd_stile_ldsm_row() computes for every layout, shape, swizzle, major-ness, transposition and
 * window of a sweep, and compares each thread's elements with the per-element path.
 *
 * The instructions are the twins kbd_hw_ldmatrix, kbd_hw_stmatrix and kbd_hw_smem_copy: inline PTX in
 * ptx/smatrix.h (ldmatrix sm_75+, stmatrix sm_90+; kbd builds sm_90a and sm_100a only), the PTX
 * definition over checked bytes in cpu/smatrix.h.
 */
#ifndef KBD_STILE_MOVE_H
#define KBD_STILE_MOVE_H

#include "config.h"
#include "layout.h"
#include "stile.h"
#include "swizzle.h"
#include "tile_core.h"

/* ---- the plan: pure functions of compile-time shapes and the window (host and device) ------------------- */

/* Shared-tile coordinates of register-tile element rc for a window at (r0, c0), transposed or not. */
KBD_HD kbd_coord kbd_stile_elem(int trans, int r0, int c0, kbd_coord rc) {
  return trans ? kbd_coord_make(r0 + rc.col, c0 + rc.row) : kbd_coord_make(r0 + rc.row, c0 + rc.col);
}

/* The shared tile's contiguous dimension: 1 = columns (K-major), 0 = rows (MN-major). */
KBD_HD int kbd_stile_cont_dim(int major) { return major == KBD_SMEM_MN_MAJOR ? 0 : 1; }

/* A thread's runs of consecutive fragment elements: ROW vectors of vec elements along a row; MMA/WGMMA pairs
 * (the two halves of one .b32), along a row except MMA_B's (two adjacent k of one column); TMEM_ACC 16-byte
 * pieces of the thread's row. Returned in shared-tile coordinates: 1 = along columns, 0 = along rows. */
KBD_HD int kbd_stile_run_len(kbd_tile_shape t) {
  /* TMEM_ACC: the widest PTX vector access is 16 bytes; C is a multiple of 8, so only fp8 rows that are
   * not a multiple of 16 elements need the 8-element run. */
  if (t.layout == KBD_LAYOUT_TMEM_ACC) return 16 / t.esize > 8 && t.cols % 16 != 0 ? 8 : 16 / t.esize;
  return t.layout == KBD_LAYOUT_ROW ? t.vec : 2;
}
KBD_HD int kbd_stile_run_dim(int layout, int trans) { return (layout == KBD_LAYOUT_MMA_B ? 0 : 1) ^ (trans != 0); }

/* 1 when the shape and window admit the m8n8 matrix instructions (see the header comment). */
KBD_HD int kbd_stile_ldsm_ok(kbd_tile_shape t, int major, int r0, int c0) {
  const int frag = t.layout == KBD_LAYOUT_MMA_A || t.layout == KBD_LAYOUT_MMA_B || t.layout == KBD_LAYOUT_MMA_C ||
                   t.layout == KBD_LAYOUT_WGMMA_ACC;
  const unsigned origin = (unsigned)(kbd_stile_cont_dim(major) ? c0 : r0);
  return frag && t.esize == 2 && (origin & 7u) == 0;
}

/* .trans or not: the pair dimension is not the shared tile's contiguous dimension. */
KBD_HD int kbd_stile_ldsm_trans(int layout, int major, int trans) {
  return kbd_stile_run_dim(layout, trans) != kbd_stile_cont_dim(major);
}

/* Shared-tile coordinates of the row whose address scope thread `tid` supplies to the instruction that moves
 * the thread's pairs pair0 .. pair0 + nmat - 1 (nmat = 1, 2 or 4): row (lane % 8) of matrix (lane / 8) %
 * nmat (lanes past 8*nmat repeat valid rows; the instruction ignores them). */
KBD_HD kbd_coord kbd_stile_ldsm_row(kbd_tile_shape t, int major, int trans, int r0, int c0, int tid, int pair0,
                                    int nmat) {
  const unsigned ut = (unsigned)tid, m = (ut / 8u) % 4u & (unsigned)(nmat - 1), j = ut % 8u;
  const kbd_coord o =
      kbd_layout_coord(t.layout, t.rows, t.cols, t.scope, t.vec, (int)(ut & ~31u), 2 * (pair0 + (int)m));
  kbd_coord s = kbd_stile_elem(trans, r0, c0, o);
  if (kbd_stile_cont_dim(major))
    s.row += (int)j;
  else
    s.col += (int)j;
  return s;
}

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"

/* ---- the move ------------------------------------------------------------------------------------------ */

/* GPU: force-inlined, so the shapes fold to straight-line code. CPU: one out-of-line copy per translation
 * unit (the shapes are run-time values there; inlining every call site's specialisation costs compile time,
 * not emulation time worth having). */
#if KBD_MODE_CPU
#define KBD__STILE_FN static __attribute__((noinline, unused))
#else
#define KBD__STILE_FN KBD_TILE_FN
#endif

/* nmat matrices (pairs pair0 ..) of every held lane through one ldmatrix/stmatrix. */
KBD__STILE_FN void kbd__stile_mat(kbd_tile_shape t, char *frag, char *base, kbd_smem_shape s, int r0, int c0, int trans,
                                  int store, int pair0, int nmat, const char *what, KBD_SITE_PARAMS) {
  const int tr = kbd_stile_ldsm_trans(t.layout, s.major, trans), cont_col = kbd_stile_cont_dim(s.major);
  char *row[KBD_LANES_HELD];
  kbd_coord at[KBD_LANES_HELD];
  uint32_t d[KBD_LANES_HELD][4];
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    at[l] = kbd_stile_ldsm_row(t, s.major, trans, r0, c0, KBD_SCOPE_TID(t.scope, l), pair0, nmat);
    row[l] = base + kbd_smem_tile_offset(&s, at[l].row, at[l].col);
  }
  if (store) {
    for (int l = 0; l < KBD_LANES_HELD; ++l)
      KBD_UNROLL for (int m = 0; m < nmat; ++m) memcpy(&d[l][m], frag + ((size_t)l * t.npt + 2 * (pair0 + m)) * 2, 4);
    kbd_hw_stmatrix(d, row, at, nmat, tr, cont_col, what, KBD_SITE_ARGS);
  } else {
    kbd_hw_ldmatrix(d, row, at, nmat, tr, cont_col, what, KBD_SITE_ARGS);
    for (int l = 0; l < KBD_LANES_HELD; ++l)
      KBD_UNROLL for (int m = 0; m < nmat; ++m) memcpy(frag + ((size_t)l * t.npt + 2 * (pair0 + m)) * 2, &d[l][m], 4);
  }
}

#if KBD_MODE_CPU
/* KBD_CPU_PROFILE (kbd/cpu/profile.h): the warp instructions of the vector / element path of kbd_stile_move_,
 * each with its 32 lanes' addresses from the same plan and offset function, recorded at the caller's site.
 * The matrix path is recorded by the ldmatrix/stmatrix emulation itself (cpu/smatrix.h), which sees all rows. */
KBD__STILE_FN void kbd__stile_prof(kbd_tile_shape t, char *base, kbd_smem_shape s, int r0, int c0, int trans, int store,
                                   int run, int vec_ok, const char *what, KBD_SITE_PARAMS) {
  char *a[KBD_LANES_HELD];
  const int per_run = vec_ok ? 1 : run, bytes = (vec_ok ? run : 1) * t.esize;
  for (int i = 0; i < t.npt; i += run)
    for (int k = 0; k < per_run; ++k) {
      for (int l = 0; l < KBD_LANES_HELD; ++l) {
        const kbd_coord e = kbd_stile_elem(trans, r0, c0, kbd_tile_coord(t, KBD_SCOPE_TID(t.scope, l), i + k));
        a[l] = base + kbd_smem_tile_offset(&s, e.row, e.col);
      }
      kbd_hw_prof_smem(what, store ? KBD_PROFILE_ST : KBD_PROFILE_LD, bytes, a, NULL, KBD_LANES_HELD, KBD_SITE_ARGS);
    }
}
#endif

/* The one routine behind every macro below. t: the register tile's shape, frag its v array; base, s: the shared
 * tile; (r0, c0): the window origin in the shared tile; trans: t[r][c] <-> s[r0+c][c0+r]. */
KBD__STILE_FN void kbd_stile_move_(kbd_tile_shape t, void *frag_, char *base, kbd_smem_shape s, int r0, int c0,
                                   int trans, int store, const char *what, KBD_SITE_PARAMS) {
  char *frag = (char *)frag_;
  const int es = t.esize, wr = trans ? t.cols : t.rows, wc = trans ? t.rows : t.cols;
  (void)what;
  if (r0 < 0 || c0 < 0 || r0 > s.rows - wr || c0 > s.cols - wc)
    KBD_HW_FAULT(KBD_ERR_BOUNDS, kbd_file_, kbd_line_,
                 "%s: the %d x %d window at (%d, %d) is not inside the %d x %d shared tile", what, wr, wc, r0, c0,
                 s.rows, s.cols);
  if (kbd_stile_ldsm_ok(t, s.major, r0, c0)) {
    const int npairs = t.npt / 2;
    KBD_UNROLL for (int g = 0; g < npairs / 4; ++g)
        kbd__stile_mat(t, frag, base, s, r0, c0, trans, store, 4 * g, 4, what, KBD_SITE_ARGS);
    if (npairs % 4 >= 2) kbd__stile_mat(t, frag, base, s, r0, c0, trans, store, npairs / 4 * 4, 2, what, KBD_SITE_ARGS);
    if (npairs % 2) kbd__stile_mat(t, frag, base, s, r0, c0, trans, store, npairs - 1, 1, what, KBD_SITE_ARGS);
    return;
  }
  /* Runs along the contiguous dimension starting at a multiple of the run length are run*es <= 16 aligned
   * bytes inside one 16-byte swizzle unit: one vector access. */
  const int run = kbd_stile_run_len(t), rdim = kbd_stile_run_dim(t.layout, trans);
  const int along_col = rdim == 1, rb = run * es;
  const int vec_ok =
      run > 1 && rdim == kbd_stile_cont_dim(s.major) && ((unsigned)(rdim ? c0 : r0) & (unsigned)(run - 1)) == 0;
#if KBD_MODE_CPU
  if (KBD_UNLIKELY(kbd_hw_prof_on()))
    kbd__stile_prof(t, base, s, r0, c0, trans, store, run, vec_ok, what, KBD_SITE_ARGS);
#endif
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    const int tid = KBD_SCOPE_TID(t.scope, l);
    char *f = frag + (size_t)l * t.npt * es;
    KBD_UNROLL for (int i = 0; i < t.npt; i += run) {
      if (vec_ok) {
        const kbd_coord e = kbd_stile_elem(trans, r0, c0, kbd_tile_coord(t, tid, i));
        char *m = base + kbd_smem_tile_offset(&s, e.row, e.col);
        if (store)
          kbd_hw_smem_write(m, (size_t)rb, along_col ? es : rb, what, e.row, e.col, KBD_SITE_ARGS);
        else
          kbd_hw_smem_read(m, (size_t)rb, along_col ? es : rb, what, e.row, e.col, KBD_SITE_ARGS);
        kbd_hw_smem_copy(m, f + (size_t)i * es, rb, store);
        continue;
      }
      KBD_UNROLL for (int k = 0; k < run; ++k) {
        const kbd_coord e = kbd_stile_elem(trans, r0, c0, kbd_tile_coord(t, tid, i + k));
        char *m = base + kbd_smem_tile_offset(&s, e.row, e.col);
        if (store)
          kbd_hw_smem_write(m, (size_t)es, es, what, e.row, e.col, KBD_SITE_ARGS);
        else
          kbd_hw_smem_read(m, (size_t)es, es, what, e.row, e.col, KBD_SITE_ARGS);
        kbd_hw_smem_copy(m, f + (size_t)(i + k) * es, es, store);
      }
    }
  }
}

/* ---- compile-time rules and the macros ------------------------------------------------------------------ */

#define KBD__STILE_DTYPE_RULE                                                                                          \
  "kbd: kbd_stile_load/store: the register tile and the shared tile must have the same dtype (kbd_convert the "        \
  "register tile first)"
#define KBD__STILE_SAME_RULE                                                                                           \
  "kbd: kbd_stile_load/store: the register tile and the shared tile must have the same rows and cols (a window of a "  \
  "larger shared tile: kbd_stile_load_at/kbd_stile_store_at)"
#define KBD__STILE_FIT_RULE                                                                                            \
  "kbd: kbd_stile_load_at/store_at: the register tile (R x C) must fit inside the shared tile (at least R x C)"
#define KBD__STILE_TSAME_RULE                                                                                          \
  "kbd: kbd_stile_load_t/store_t: the shared tile must be C x R for an R x C register tile (t[r][c] = s[c][r])"
#define KBD__STILE_TFIT_RULE                                                                                           \
  "kbd: kbd_stile_load_t_at/store_t_at: the transposed register tile (C x R) must fit inside the shared tile"

/* fit: 0 same shape, 1 a window; tr: transposed. */
#define KBD__STILE_RULES(t, s, fit, tr)                                                                                \
  KBD__IS_REG(t);                                                                                                      \
  KBD__IS_STILE(s);                                                                                                    \
  KBD_STATIC_ASSERT(KBD_DTYPE(t) == KBD_DTYPE(s), KBD__STILE_DTYPE_RULE);                                              \
  KBD_STATIC_ASSERT((fit) || (tr) || (KBD_ROWS(t) == KBD_ROWS(s) && KBD_COLS(t) == KBD_COLS(s)),                       \
                    KBD__STILE_SAME_RULE);                                                                             \
  KBD_STATIC_ASSERT(!(fit) || (tr) || (KBD_ROWS(t) <= KBD_ROWS(s) && KBD_COLS(t) <= KBD_COLS(s)),                      \
                    KBD__STILE_FIT_RULE);                                                                              \
  KBD_STATIC_ASSERT((fit) || !(tr) || (KBD_ROWS(t) == KBD_COLS(s) && KBD_COLS(t) == KBD_ROWS(s)),                      \
                    KBD__STILE_TSAME_RULE);                                                                            \
  KBD_STATIC_ASSERT(!(fit) || !(tr) || (KBD_ROWS(t) <= KBD_COLS(s) && KBD_COLS(t) <= KBD_ROWS(s)), KBD__STILE_TFIT_RULE)

#define KBD__STILE_MOVE(t, s, r0, c0, fit, tr, store, what)                                                            \
  do {                                                                                                                 \
    KBD__STILE_RULES(t, s, fit, tr);                                                                                   \
    kbd_stile_move_(KBD__SHAPE(t), (void *)(t).v, (char *)(void *)(s).p, KBD_STILE_SHAPE(s), (int)(r0), (int)(c0), tr, \
                    store, what, __FILE__, __LINE__);                                                                  \
  } while (0)

/* The public front end: the destination comes first (the register tile for a load, the shared tile for a store),
 * and an old source-first call, a swapped pair of kinds, is caught before anything reads either argument and then
 * moved with the pair swapped back; any other wrong kind is its own one message and the move works on stand-ins
 * (kbd/tile_core.h, "one message per mistake"). */
#define KBD__STILE_FRONT(t, s, r0, c0, fit, tr, store, what, sig)                                                      \
  do {                                                                                                                 \
    enum { kbd_ssw_ = KBD__KIND_OF(t) == KBD_KIND_SMEM && KBD__KIND_OF(s) == KBD_KIND_REG };                           \
    KBD_STATIC_ASSERT(!kbd_ssw_, "kbd: the destination comes first: " sig "; the register tile t and the shared tile " \
                                 "s are swapped");                                                                     \
    KBD__NEED_REG(KBD__PICK(kbd_ssw_, s, t), sig ", operand t", "a shared tile's elements load with kbd_stile_load");  \
    KBD__NEED_SMEM(KBD__PICK(kbd_ssw_, t, s), sig ", operand s", "declare it with KBD_STILE / KBD_SHARED_STILE");      \
    enum {                                                                                                             \
      kbd_sok_ = KBD__KIND_OF(KBD__PICK(kbd_ssw_, s, t)) == KBD_KIND_REG &&                                            \
                 KBD__KIND_OF(KBD__PICK(kbd_ssw_, t, s)) == KBD_KIND_SMEM                                              \
    };                                                                                                                 \
    KBD__BIND(kbd_smt_, KBD__OR(kbd_sok_, KBD__PICK(kbd_ssw_, s, t), kbd__reg_standin32));                             \
    KBD__BIND_VAL(kbd_sms_, KBD__OR(kbd_sok_, KBD__PICK(kbd_ssw_, t, s), kbd__smem_standin));                              \
    KBD__STILE_MOVE(KBD__AT(kbd_smt_), KBD__AT(kbd_sms_), r0, c0, fit, tr, store, what);                               \
  } while (0)
#define kbd_stile_load(t, s) KBD__STILE_FRONT(t, s, 0, 0, 0, 0, 0, "kbd_stile_load", "kbd_stile_load(t, s)")
#define kbd_stile_store(s, t) KBD__STILE_FRONT(t, s, 0, 0, 0, 0, 1, "kbd_stile_store", "kbd_stile_store(s, t)")
#define kbd_stile_load_at(t, s, r0, c0)                                                                                \
  KBD__STILE_FRONT(t, s, r0, c0, 1, 0, 0, "kbd_stile_load_at", "kbd_stile_load_at(t, s, r0, c0)")
#define kbd_stile_store_at(s, t, r0, c0)                                                                               \
  KBD__STILE_FRONT(t, s, r0, c0, 1, 0, 1, "kbd_stile_store_at", "kbd_stile_store_at(s, t, r0, c0)")
#define kbd_stile_load_t(t, s) KBD__STILE_FRONT(t, s, 0, 0, 0, 1, 0, "kbd_stile_load_t", "kbd_stile_load_t(t, s)")
#define kbd_stile_store_t(s, t) KBD__STILE_FRONT(t, s, 0, 0, 0, 1, 1, "kbd_stile_store_t", "kbd_stile_store_t(s, t)")
#define kbd_stile_load_t_at(t, s, r0, c0)                                                                              \
  KBD__STILE_FRONT(t, s, r0, c0, 1, 1, 0, "kbd_stile_load_t_at", "kbd_stile_load_t_at(t, s, r0, c0)")
#define kbd_stile_store_t_at(s, t, r0, c0)                                                                             \
  KBD__STILE_FRONT(t, s, r0, c0, 1, 1, 1, "kbd_stile_store_t_at", "kbd_stile_store_t_at(s, t, r0, c0)")

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_STILE_MOVE_H */
