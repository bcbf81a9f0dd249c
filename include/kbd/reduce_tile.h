/* kbd/reduce_tile.h - reductions of 2D register tiles along rows and columns, scans along rows.
 *
 *   KBD_ROWVEC(dt, t) m;                 the values of the rows this thread holds of tile t (dt: f32 for
 *   KBD_COLVEC(dt, t) c;                 float tiles, i32 for i32 tiles); ... of the columns (C++: t must
 *                                        not be named `v`, the vectors' own member)
 *   kbd_reduce_rows(m, t, op)            m = op over each row of t
 *   kbd_reduce_cols(c, t, op)            c = op over each column of t
 *   kbd_scan_rows(d, tot, t, op, excl)   ROW/TMEM_ACC tiles: d = scan of t along each row; tot = totals
 *   kbd_bcast_rows(d, a, m, op)          d[r][c] = a[r][c] op m[r]   (KBD_OP_ADD/SUB/MUL/DIV/MIN/MAX)
 *   kbd_bcast_cols(d, a, c, op)          d[r][c] = a[r][c] op c[c]
 *   kbd_vec_store(p, m)                  p[r] = m[r] (p[c] = c[c]), each index written once per scope
 *   kbd_vec_store_n(p, m, n)             the same for indices below n only (a tile over the edge of p)
 *   kbd_vec_load(m, p, base, n)          m[r] = p[base + r] (columns likewise), 0 where base + r >= n: e.g. a
 *                                        bias per column, then kbd_bcast_cols(t, t, m, KBD_OP_ADD)
 *   KBD_VEC_AT(m, lane, k), KBD_VEC_SLOTS(m), KBD_VEC_SLOT(m, i), KBD_VEC_INDEX(m, lane, k)
 *
 * Tiles: ROW (any scope), WGMMA_ACC and TMEM_ACC (warpgroup), MMA_C (warp). Ops as in kbd/reduce.h: sum,
 * max, min for every dtype (floats widened exactly to f32), and, or, xor for i32; scans: sum, max, min. Max/min are PTX
 * max.f32/min.f32 (NaN ignored, +0 > -0). Anything else fails to compile with a message naming the rule.
 *
 * Result placement (docs/design/tile-reductions.md): a vector holds, in every thread, exactly the rows
 * (columns) the thread holds part of, so a softmax/layernorm reads row r's value with no further
 * communication: element i of the tile uses slot KBD_VEC_SLOT(m, i) (a compile-time constant).
 *   WGMMA_ACC (64 mb) x N: 2 mb row slots (rows 64b + 16w + l/4 + 8h, slot 2b + h), N/4 column slots
 *                          (cols 8j + 2(l%4) + c, slot 2j + c); MMA_C: the same per 16 x 8 block.
 *   ROW R x C (scope S, vec V, CPR = C/V vectors per row): one slot per row held, V per column run.
 *   TMEM_ACC (128 mb) x C: mb row slots (row 128b + t, slot b), C column slots (column c, slot c).
 *
 * Algorithm (identical on CPU and GPU, so f32 results are bit-identical): (1) per thread, a pairwise tree
 * over each slot's elements in element order; (2) shfl.sync.bfly over the lane bits that the key does not
 * fix: masks 1, 2 for accumulator rows (the quad), 4, 8, 16 for accumulator columns (the 8 row groups),
 * 1 .. CPR/2 for ROW rows, CPR .. 16 for ROW columns; (3) when a key spans warps (accumulator columns: the
 * 4 warps of the warpgroup; ROW rows with CPR > 32; ROW columns of a multi-warp scope), lanes store the
 * warp partials to shared memory, barrier, each thread folds its key's partials (pairwise tree in warp
 * order), trailing barrier. Shared memory is per call site, sized from the tile at compile time, and only
 * exists when step 3 does. Barriers: bar.sync 0 when the scope is the block, else named barrier
 * KBD_REDUCE_WG_BARRIER + warpgroup (128 threads); every thread of the scope must reach the call (the CPU
 * machine reports a missing warp as a deadlock at the caller's file:line).
 * TMEM_ACC rows (and row scans) are entirely per thread: a thread holds its rows whole (kbd/layout.h), so
 * step 1 alone gives the result - no shuffle, no shared memory, no barrier. TMEM_ACC columns span every lane
 * and all 4 warps: step 2 with masks 1..16 per column (5 shuffles per column) and step 3 over the 4 warps
 * (C words per warp of shared memory, two barriers): correct, but ~5C shuffles per call - reduce rows.
 * Costs: docs/reduce.md; f32 sum error <= gamma_k * sum|x|, k = ceil(log2 n) + bfly steps + ceil(log2 warps).
 */
#ifndef KBD_REDUCE_TILE_H
#define KBD_REDUCE_TILE_H

#include "config.h"
#include "ops.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA

#include "reduce.h"
#include "scan.h"
#include "tile_ops.h"

/* ---- the plan: which slots, lanes and warps a row/column key spans (constant expressions) ------------- */

#define KBD__RT_ROWS 1
#define KBD__RT_COLS 2

#define KBD__RT_NZ(x) ((x) > 0 ? (x) : 1)
#define KBD__RT_LOG2(x) ((x) >= 32 ? 5 : (x) >= 16 ? 4 : (x) >= 8 ? 3 : (x) >= 4 ? 2 : (x) >= 2 ? 1 : 0)
/* ROW layout: vectors per row, stripes per row (K, > 1 when a row is wider than the scope), threads per
 * row group (G), and lanes of one group inside a warp (G' = min(G, 32)). */
#define KBD__RT_CPR(C, V) ((C) / KBD__RT_NZ(V))
#define KBD__RT_K(C, S, V) (KBD__RT_CPR(C, V) > (S) ? KBD__RT_CPR(C, V) / KBD__RT_NZ(S) : 1)
#define KBD__RT_G(C, S, V) (KBD__RT_CPR(C, V) < (S) ? KBD__RT_CPR(C, V) : (S))
#define KBD__RT_GW(C, S, V) (KBD__RT_G(C, S, V) < 32 ? KBD__RT_G(C, S, V) : 32)
/* A row of a ROW tile must be a power-of-two run of lanes inside a warp, or whole warps: otherwise rows
 * would start at irregular lanes and no fixed butterfly could separate them. */
#define KBD__RT_ROW_SHAPE_OK(C, S, V)                                                                                  \
  ((KBD__RT_CPR(C, V) <= 32 && KBD__RT_CPR(C, V) >= 1 && (KBD__RT_CPR(C, V) & (KBD__RT_CPR(C, V) - 1)) == 0) ||        \
   (KBD__RT_CPR(C, V) % 32 == 0 && KBD__RT_CPR(C, V) > 0 &&                                                            \
    ((S) % KBD__RT_NZ(KBD__RT_CPR(C, V)) == 0 || KBD__RT_CPR(C, V) % KBD__RT_NZ(S) == 0)))
#define KBD__RT_LAYOUT_OK(L)                                                                                           \
  ((L) == KBD_LAYOUT_ROW || (L) == KBD_LAYOUT_WGMMA_ACC || (L) == KBD_LAYOUT_MMA_C || (L) == KBD_LAYOUT_TMEM_ACC)

/* Slots (distinct keys) per thread. */
#define KBD__RT_NSLOT(L, R, C, S, V, AX)                                                                               \
  ((L) == KBD_LAYOUT_TMEM_ACC    ? ((AX) == KBD__RT_ROWS ? (R) / 128 : (C))                                            \
   : (L) == KBD_LAYOUT_WGMMA_ACC ? ((AX) == KBD__RT_ROWS ? 2 * ((R) / 64) : (C) / 4)                                   \
   : (L) == KBD_LAYOUT_MMA_C     ? ((AX) == KBD__RT_ROWS ? 2 * ((R) / 16) : (C) / 4)                                   \
   : (AX) == KBD__RT_ROWS        ? (int)((long long)(R) * (C) / KBD__RT_NZ(S) / KBD__RT_NZ(V)) / KBD__RT_K(C, S, V)    \
                                 : KBD__RT_K(C, S, V) * (V))
/* Lane bits [lo, hi) that vary inside one key: the butterfly masks 1<<lo .. 1<<(hi-1). */
#define KBD__RT_LO(L, C, S, V, AX)                                                                                     \
  ((L) == KBD_LAYOUT_TMEM_ACC                       ? 0                                                                \
   : (L) != KBD_LAYOUT_ROW                          ? ((AX) == KBD__RT_ROWS ? 0 : 2)                                   \
   : (AX) == KBD__RT_COLS && KBD__RT_CPR(C, V) < 32 ? KBD__RT_LOG2(KBD__RT_CPR(C, V))                                  \
                                                    : 0)
#define KBD__RT_HI(L, C, S, V, AX)                                                                                     \
  ((L) == KBD_LAYOUT_TMEM_ACC ? ((AX) == KBD__RT_ROWS ? 0 : 5)                                                         \
   : (L) != KBD_LAYOUT_ROW    ? ((AX) == KBD__RT_ROWS ? 2 : 5)                                                         \
   : (AX) == KBD__RT_ROWS     ? KBD__RT_LOG2(KBD__RT_GW(C, S, V))                                                      \
   : KBD__RT_CPR(C, V) < 32   ? 5                                                                                      \
                              : 0)
/* Cross-warp step: xn warps of the scope share a key, `xs` apart (1: consecutive warps). */
#define KBD__RT_XS(L, C, S, V, AX)                                                                                     \
  ((L) == KBD_LAYOUT_ROW && (AX) == KBD__RT_COLS && KBD__RT_CPR(C, V) > 32 ? KBD__RT_CPR(C, V) / 32 : 1)
#define KBD__RT_XN(L, C, S, V, AX)                                                                                     \
  ((L) == KBD_LAYOUT_WGMMA_ACC || (L) == KBD_LAYOUT_TMEM_ACC ? ((AX) == KBD__RT_COLS ? 4 : 1)                          \
   : (L) == KBD_LAYOUT_MMA_C                                 ? 1                                                       \
   : (AX) == KBD__RT_ROWS                                    ? (KBD__RT_G(C, S, V) > 32 ? KBD__RT_G(C, S, V) / 32 : 1) \
   : KBD__RT_K(C, S, V) > 1                                  ? 1                                                       \
                                                             : ((S) / 32) / KBD__RT_NZ(KBD__RT_XS(L, C, S, V, AX)))
/* Lanes per warp that hold distinct partials of one slot (the representatives after the butterfly). */
#define KBD__RT_NREP(L, C, S, V, AX) (32 >> (KBD__RT_HI(L, C, S, V, AX) - KBD__RT_LO(L, C, S, V, AX)))

typedef struct kbd_rt_plan {
  int layout, rows, cols, scope, vec, axis; /* the tile and the axis */
  int npt, nslot, n;                        /* elements per thread, slots, elements per slot */
  int lo, hi, xn, xs, nrep;                 /* butterfly lane bits, cross-warp group, representatives */
  int k, g, gw;                             /* ROW: stripes per row, threads per row, lanes per row in a warp */
} kbd_rt_plan;

/* Every field is a constant at the call site, so the always-inlined helpers fold to straight-line code. */
KBD_HD kbd_rt_plan kbd_rt_plan_of(int L, int R, int C, int S, int V, int AX) {
  kbd_rt_plan p;
  p.layout = L;
  p.rows = R;
  p.cols = C;
  p.scope = S;
  p.vec = V;
  p.axis = AX;
  p.npt = (int)((long long)R * C / KBD__RT_NZ(S));
  p.nslot = KBD__RT_NSLOT(L, R, C, S, V, AX);
  p.n = p.npt / KBD__RT_NZ(p.nslot);
  p.lo = KBD__RT_LO(L, C, S, V, AX);
  p.hi = KBD__RT_HI(L, C, S, V, AX);
  p.xn = KBD__RT_XN(L, C, S, V, AX);
  p.xs = KBD__RT_XS(L, C, S, V, AX);
  p.nrep = KBD__RT_NREP(L, C, S, V, AX);
  p.k = KBD__RT_K(C, S, V);
  p.g = KBD__RT_G(C, S, V);
  p.gw = KBD__RT_GW(C, S, V);
  if (L == KBD_LAYOUT_TMEM_ACC) { /* for the row scan: a row is one C-element run of one thread (K = G = 1) */
    p.vec = C;
    p.k = p.g = p.gw = 1;
  }
  return p;
}

/* Fragment index of the e-th element (element order) of slot k. Each slot has exactly p.n elements. */
KBD_HD int kbd_rt_elem(kbd_rt_plan p, int k, int e) {
  const unsigned uk = (unsigned)k, ue = (unsigned)e;
  if (p.layout == KBD_LAYOUT_TMEM_ACC) { /* element i: row block i/C, column i%C */
    const unsigned c = (unsigned)p.cols;
    return p.axis == KBD__RT_ROWS ? (int)(uk * c + ue) : (int)(ue * c + uk);
  }
  if (p.layout ==
      KBD_LAYOUT_WGMMA_ACC) { /* element i: block i/(N/2), ii = i%(N/2): row 2-set (ii/2)%2, col 4-set ii/4 */
    const unsigned half = (unsigned)p.cols / 2u;
    if (p.axis == KBD__RT_ROWS) return (int)((uk / 2u) * half + 4u * (ue / 2u) + 2u * (uk % 2u) + ue % 2u);
    return (int)((ue / 2u) * half + 4u * (uk / 2u) + 2u * (ue % 2u) + uk % 2u);
  }
  if (p.layout == KBD_LAYOUT_MMA_C) { /* block b = i/4 (bm = b/nb, bn = b%nb), c-register i%4 */
    const unsigned nb = (unsigned)p.cols / 8u;
    if (p.axis == KBD__RT_ROWS) return (int)(((uk / 2u) * nb + ue / 2u) * 4u + 2u * (uk % 2u) + ue % 2u);
    return (int)(((ue / 2u) * nb + uk / 2u) * 4u + 2u * (ue % 2u) + uk % 2u);
  }
  /* ROW: slot k of the rows = stripes kK .. kK+K-1; slot k of the columns = element k%V of stripes
   * k/V, k/V + K, k/V + 2K, ... */
  const unsigned v = (unsigned)p.vec, kk = (unsigned)p.k;
  if (p.axis == KBD__RT_ROWS) return (int)(uk * kk * v + ue);
  return (int)((uk / v + kk * ue) * v + uk % v);
}

/* Slot of fragment element i (the inverse of kbd_rt_elem). */
KBD_HD int kbd_rt_slot(kbd_rt_plan p, int i) {
  const unsigned ui = (unsigned)i;
  if (p.layout == KBD_LAYOUT_TMEM_ACC)
    return p.axis == KBD__RT_ROWS ? (int)(ui / (unsigned)p.cols) : (int)(ui % (unsigned)p.cols);
  if (p.layout == KBD_LAYOUT_WGMMA_ACC) {
    const unsigned half = (unsigned)p.cols / 2u, ii = ui % half;
    return p.axis == KBD__RT_ROWS ? (int)(2u * (ui / half) + (ii / 2u) % 2u) : (int)(2u * (ii / 4u) + ii % 2u);
  }
  if (p.layout == KBD_LAYOUT_MMA_C) {
    const unsigned nb = (unsigned)p.cols / 8u, b = ui / 4u;
    return p.axis == KBD__RT_ROWS ? (int)(2u * (b / nb) + (ui % 4u) / 2u) : (int)(2u * (b % nb) + ui % 2u);
  }
  const unsigned v = (unsigned)p.vec, kk = (unsigned)p.k, j = ui / v;
  return p.axis == KBD__RT_ROWS ? (int)(j / kk) : (int)((j % kk) * v + ui % v);
}

/* Row (axis rows) or column (axis cols) of slot k in scope thread tid. */
KBD_HD int kbd_rt_index(kbd_rt_plan p, int tid, int k) {
  const kbd_coord c = kbd_layout_coord(p.layout, p.rows, p.cols, p.scope, p.vec, tid, kbd_rt_elem(p, k, 0));
  return p.axis == KBD__RT_ROWS ? c.row : c.col;
}

/* ---- lanes and shuffles ----------------------------------------------------------------------------------- */

#if KBD_MODE_CPU
#define KBD__RT_LANE(l) (l)
#else
#define KBD__RT_LANE(l) ((int)(threadIdx.x & 31u) + 0 * (l))
#endif

/* Elements of fragment `frag` (dtype dt, npt per lane) as f32 / i32 bits. */
KBD_TILE_FN uint32_t kbd_rt_load_(const void *frag, int dt, int fl, int npt, int l, int i) {
  const char *q = (const char *)frag + ((size_t)l * (size_t)npt + (size_t)i) * (size_t)KBD_DT_SIZE(dt);
  return fl ? kbd_cvt_f32_bits(kbd_dt_load_f32(q, dt)) : (uint32_t)kbd_dt_load_i32(q, dt);
}

/* In place pairwise tree over x[0..n) (each entry KBD_LANES_HELD lanes, stride `ls`): stride 1, 2, 4, ...,
 * combining x[e] op x[e+s]; the result is in x[0]. Depth ceil(log2 n), n - 1 ops per lane. Raw ops: the
 * caller ends the chain (kbd_red_chain_end_b32). */
KBD_TILE_FN void kbd_rt_tree_(uint32_t *x, int n, int ls, int op, int fl) {
  KBD_UNROLL for (int s = 1; s < n; s *= 2) {
    KBD_UNROLL for (int e = 0; e + s < n; e += 2 * s) {
      for (int l = 0; l < KBD_LANES_HELD; ++l)
        x[e * ls + l] = kbd_red_op_raw_b32(op, fl, x[e * ls + l], x[(e + s) * ls + l]);
    }
  }
}

/* ---- reduction -------------------------------------------------------------------------------------------- */

/* The steps below combine with raw ops (NaN + x is NaN, so only the bits of a result can differ from the
 * GPU's); one pass over the results gives them the GPU's NaN bits. A key whose value went through no op
 * at all (one element, no lanes or warps to combine) was only moved and keeps its bits, as on the GPU.
 * CPU only: nothing to do in the nvcc device pass, where the instructions give those bits. */
KBD_TILE_FN void kbd_rt_chain_end_(kbd_rt_plan p, int fl, uint32_t *acc) {
#if KBD_MODE_CPU
  if (!fl || (p.n <= 1 && p.hi <= p.lo && p.xn <= 1)) return;
  for (int i = 0; i < p.nslot * KBD_LANES_HELD; ++i)
    acc[i] = kbd_red_chain_end_b32(fl, acc[i]);
#else
  (void)p;
  (void)fl;
  (void)acc;
#endif
}

/* acc[k][l] = op over key k of the tile, for every lane l. tmp: p.n x KBD_LANES_HELD scratch. slots: the
 * call site's shared memory (nwarps x nslot x nrep words) when p.xn > 1, else unused. */
KBD_TILE_FN void kbd_rt_reduce_(kbd_rt_plan p, const void *frag, int dt, int op, uint32_t *acc, uint32_t *tmp,
                                int tmp_rows, uint32_t *slots, int block_threads, const char *file, int line) {
  const int fl = KBD_DT_IS_FLOAT(dt), L = KBD_LANES_HELD;
  /* (1) per thread: gather slot k's elements in element order, fold them as a pairwise tree */
  KBD_UNROLL for (int k = 0; k < p.nslot; ++k) {
    KBD_UNROLL for (int e = 0; e < p.n; ++e) {
      const int i = kbd_rt_elem(p, k, e);
      for (int l = 0; l < L; ++l)
        tmp[e * L + l] = kbd_rt_load_(frag, dt, fl, p.npt, l, i);
    }
    /* p.n <= tmp_rows always; the constant bound lets gcc see the tree's reach (no -Warray-bounds) */
    kbd_rt_tree_(tmp, p.n < tmp_rows ? p.n : tmp_rows, L, op, fl);
    for (int l = 0; l < L; ++l)
      acc[k * L + l] = tmp[l];
  }
  /* (2) butterfly over the lane bits the key leaves free; masks ascending, all slots per mask (the
   * shuffles of one mask are independent: they pipeline). Partners compute a op b and b op a: the same
   * bits, so every lane of a key ends with identical values. */
  KBD_UNROLL for (int b = p.lo; b < p.hi; ++b) {
    KBD_UNROLL for (int k = 0; k < p.nslot; ++k) {
      uint32_t y[KBD_LANES_HELD];
      kbd_hw_shfl_b32(KBD_SHFL_BFLY, y, &acc[k * L], 1u << b, KBD_SHFL_C, file, line);
      for (int l = 0; l < L; ++l)
        acc[k * L + l] = kbd_red_op_raw_b32(op, fl, acc[k * L + l], y[l]);
    }
  }
  if (p.xn <= 1) {
    kbd_rt_chain_end_(p, fl, acc);
    return;
  }
  /* (3) across warps: the representative lanes (free bits 0) publish the warp's partials, one word per
   * (warp, slot, representative), representatives adjacent so a warp's stores and loads hit distinct
   * banks; barrier; each thread folds the xn partials of its key in warp order; barrier (WAR: the next
   * execution of this call site rewrites the slots). */
  const int w = kbd_warp_id(), nws = p.scope / KBD_WARP_SIZE, ws = w % nws, per = p.xs * p.xn;
  const int first = w - ws + ws % p.xs + ws / per * per; /* block warp of member 0 */
  const uint32_t fmask = ((1u << (p.hi - p.lo)) - 1u) << p.lo;
  for (int l = 0; l < L; ++l) {
    const unsigned lane = (unsigned)KBD__RT_LANE(l);
    if ((lane & fmask) == 0u) {
      const unsigned rep = (lane & ((1u << p.lo) - 1u)) | ((lane >> p.hi) << p.lo);
      KBD_UNROLL for (int k = 0; k < p.nslot; ++k) { slots[((size_t)w * p.nslot + k) * p.nrep + rep] = acc[k * L + l]; }
    }
  }
  kbd_red_barrier_(p.scope, block_threads, file, line);
  for (int l = 0; l < L; ++l) {
    const unsigned lane = (unsigned)KBD__RT_LANE(l);
    const unsigned rep = (lane & ((1u << p.lo) - 1u)) | ((lane >> p.hi) << p.lo);
    KBD_UNROLL for (int k = 0; k < p.nslot; ++k) {
      uint32_t xv[KBD_WARP_SIZE];
      KBD_UNROLL for (int m = 0; m < p.xn; ++m) {
        xv[m] = slots[((size_t)(first + m * p.xs) * p.nslot + k) * p.nrep + rep];
      }
      /* one lane's tree: stride 1 as the "lanes" dimension */
      KBD_UNROLL for (int s = 1; s < p.xn; s *= 2) {
        KBD_UNROLL for (int e = 0; e + s < p.xn; e += 2 * s) xv[e] = kbd_red_op_raw_b32(op, fl, xv[e], xv[e + s]);
      }
      acc[k * L + l] = xv[0];
    }
  }
  kbd_rt_chain_end_(p, fl, acc);
  kbd_red_barrier_(p.scope, block_threads, file, line);
}

/* ---- row scan (ROW tiles; TMEM_ACC: a ROW plan with one C-element run per row) ----------------------------- */

/* d = scan of t along each row; tot[k][l] = row totals. ex, gt: nst x KBD_LANES_HELD scratch (nst = npt/V
 * stripes); slots: nwarps x nst words when p.xn > 1. */
KBD_TILE_FN void kbd_rt_scan_rows_(kbd_rt_plan p, void *dfrag, int ddt, const void *tfrag, int tdt, int op, int excl,
                                   uint32_t *ex, uint32_t *gt, uint32_t *tot, uint32_t *slots, int block_threads,
                                   const char *file, int line) {
  const int fl = KBD_DT_IS_FLOAT(tdt), L = KBD_LANES_HELD, V = p.vec, nst = p.npt / V, gw = p.gw;
  const uint32_t pad = kbd_red_pad_b32(op, fl);
  /* (1) per stripe: the thread's run total (sequential, element order), then an inclusive Hillis-Steele scan
   * of the run totals over the row's gw lanes (full-warp shfl.up, lanes below the delta inside their group
   * keep their value), the exclusive prefix (shfl.up by 1, group lane 0 gets the identity) and the group
   * total (shfl.idx from the group's last lane: the segment mask in c, as CUDA's width = gw). */
  KBD_UNROLL for (int j = 0; j < nst; ++j) {
    uint32_t r[KBD_LANES_HELD], y[KBD_LANES_HELD];
    for (int l = 0; l < L; ++l) {
      uint32_t a = kbd_rt_load_(tfrag, tdt, fl, p.npt, l, j * V);
      KBD_UNROLL for (int k = 1; k < V; ++k) {
        a = kbd_red_op_b32(op, fl, a, kbd_rt_load_(tfrag, tdt, fl, p.npt, l, j * V + k));
      }
      r[l] = a;
    }
    KBD_UNROLL for (int dl = 1; dl < gw; dl <<= 1) {
      kbd_hw_shfl_b32(KBD_SHFL_UP, y, r, (uint32_t)dl, KBD_SHFL_C_UP, file, line);
      for (int l = 0; l < L; ++l)
        if ((KBD__RT_LANE(l) & (gw - 1)) >= dl) r[l] = kbd_red_op_b32(op, fl, y[l], r[l]);
    }
    if (gw > 1) {
      kbd_hw_shfl_b32(KBD_SHFL_UP, y, r, 1u, KBD_SHFL_C_UP, file, line);
      for (int l = 0; l < L; ++l)
        ex[j * L + l] = (KBD__RT_LANE(l) & (gw - 1)) == 0 ? pad : y[l];
      kbd_hw_shfl_b32(KBD_SHFL_IDX, &gt[j * L], r, (uint32_t)(gw - 1), ((uint32_t)(32 - gw) << 8) | KBD_SHFL_C, file,
                      line);
    } else {
      for (int l = 0; l < L; ++l) {
        ex[j * L + l] = pad;
        gt[j * L + l] = r[l];
      }
    }
  }
  /* (2) rows spanning xn warps: lane 0 publishes each stripe's warp total; barrier; every warp folds the
   * totals of its row group sequentially in warp order: its prefix (warps before it) and the row total. */
  if (p.xn > 1) {
    const int w = kbd_warp_id(), nws = p.scope / KBD_WARP_SIZE, ws = w % nws, wi = ws % p.xn, first = w - wi;
    for (int l = 0; l < L; ++l)
      if (KBD__RT_LANE(l) == 0) {
        KBD_UNROLL for (int j = 0; j < nst; ++j) slots[(size_t)w * nst + j] = gt[j * L + l];
      }
    kbd_red_barrier_(p.scope, block_threads, file, line);
    KBD_UNROLL for (int j = 0; j < nst; ++j) {
      uint32_t a = slots[(size_t)first * nst + j], pre = a;
      KBD_UNROLL for (int m = 1; m < p.xn; ++m) {
        if (m == wi) pre = a;
        a = kbd_red_op_b32(op, fl, a, slots[(size_t)(first + m) * nst + j]);
      }
      for (int l = 0; l < L; ++l) {
        if (wi > 0) ex[j * L + l] = kbd_red_op_b32(op, fl, pre, ex[j * L + l]);
        gt[j * L + l] = a;
      }
    }
    kbd_red_barrier_(p.scope, block_threads, file, line);
  }
  /* (3) the K stripes of a row in order, with a carry; each stripe's outputs are its prefix op the thread's
   * run (recomputed: a few ops instead of npt live registers across the barriers). The first element of a
   * row gets op's empty value in an exclusive scan. */
  const int kk = p.k;
  KBD_UNROLL for (int rs = 0; rs < p.nslot; ++rs) {
    for (int l = 0; l < L; ++l) {
      const int row_first = KBD_SCOPE_TID(p.scope, l) % p.g == 0;
      uint32_t carry = 0;
      KBD_UNROLL for (int s = 0; s < kk; ++s) {
        const int j = rs * kk + s;
        const uint32_t b = s == 0 ? ex[j * L + l] : kbd_red_op_b32(op, fl, carry, ex[j * L + l]);
        carry = s == 0 ? gt[j * L + l] : kbd_red_op_b32(op, fl, carry, gt[j * L + l]);
        uint32_t run = 0;
        KBD_UNROLL for (int k = 0; k < V; ++k) {
          const uint32_t x = kbd_rt_load_(tfrag, tdt, fl, p.npt, l, j * V + k);
          uint32_t o = excl ? (k == 0 ? b : kbd_red_op_b32(op, fl, b, run)) : 0u;
          run = k == 0 ? x : kbd_red_op_b32(op, fl, run, x);
          if (!excl) o = kbd_red_op_b32(op, fl, b, run);
          if (excl && k == 0 && s == 0 && row_first)
            o = fl ? kbd_cvt_f32_bits(kbd_red_empty_f32(op)) : (uint32_t)kbd_red_empty_i32(op);
          void *pd = (char *)dfrag + ((size_t)l * p.npt + (size_t)j * V + k) * (size_t)KBD_DT_SIZE(ddt);
          if (fl)
            kbd_dt_store_f32(pd, ddt, kbd_cvt_bits_f32(o));
          else
            kbd_dt_store_i32(pd, ddt, (int32_t)o);
        }
      }
      tot[rs * L + l] = carry;
    }
  }
}

/* ---- vectors: types, compile-time checks ---------------------------------------------------------------------- */

#define KBD__RT_VEC_RULE                                                                                               \
  "kbd: row/column reductions of a ROW tile need C/vec (vectors per row) to be a power of two <= 32, or a "            \
  "multiple of 32 that divides or is a multiple of the scope's thread count"
#define KBD__RT_CHECK_LAYOUT(L, C, S, V)                                                                               \
  KBD_STATIC_ASSERT(KBD__RT_LAYOUT_OK(L), "kbd: row/column reductions take ROW, WGMMA_ACC or MMA_C tiles "             \
                                          "and TMEM_ACC tiles (MMA_A/MMA_B are MMA operands: convert them first)");    \
  KBD_STATIC_ASSERT((L) != KBD_LAYOUT_ROW || KBD__RT_ROW_SHAPE_OK(C, S, V), KBD__RT_VEC_RULE)

/* The vector width that matters for the fragment order: ROW tiles only (the fixed MMA layouts ignore it). */
#define KBD__RT_TVEC(t) (KBD_LAYOUT(t) == KBD_LAYOUT_ROW ? KBD_VEC(t) : 1)

/* A vector: v[lanes][slots] of dt, plus the source tile's shape in its type (never set, never read; a
 * different member name than a tile's kbd_meta_, so a vector is not accepted where a tile is). */
#define KBD__RT_VTYPE(dt, t, AX)                                                                                       \
  struct {                                                                                                             \
    KBD__RT_CHECK_LAYOUT(KBD_LAYOUT(t), KBD_COLS(t), KBD_SCOPE(t), KBD__RT_TVEC(t));                                   \
    KBD_STATIC_ASSERT(KBD_DT_##dt == (KBD_DT_IS_FLOAT(KBD_DTYPE(t)) ? KBD_DT_f32 : KBD_DT_i32),                        \
                      "kbd: the row/column vector of a float tile is f32, of an i32 tile i32");                        \
    char (*kbd_vmeta_)[KBD__POS(KBD_ROWS(t))][KBD__POS(KBD_COLS(t))][KBD__POS(KBD_SCOPE(t))][KBD__POS(KBD_LAYOUT(t))]  \
                      [KBD__POS(KBD__RT_TVEC(t))][AX][KBD_DT_##dt];                                                    \
    /* C++: a tile named `v` cannot be described here - the array member `v` would change the name's meaning in        \
     * this struct ([basic.scope.class]); name such tiles otherwise */                                                 \
    kbd_##dt v[KBD_LANES_HELD]                                                                                         \
              [KBD__POS(KBD__RT_NSLOT(KBD_LAYOUT(t), KBD_ROWS(t), KBD_COLS(t), KBD_SCOPE(t), KBD__RT_TVEC(t), AX))];   \
  }
#define KBD_ROWVEC(dt, t) KBD__RT_VTYPE(dt, t, KBD__RT_ROWS)
#define KBD_COLVEC(dt, t) KBD__RT_VTYPE(dt, t, KBD__RT_COLS)

#define KBD__VM(x) (*(x).kbd_vmeta_)
#define KBD__V_R(x) ((int)(sizeof(KBD__VM(x)) / sizeof(KBD__VM(x)[0])))
#define KBD__V_C(x) ((int)(sizeof(KBD__VM(x)[0]) / sizeof(KBD__VM(x)[0][0])))
#define KBD__V_S(x) ((int)(sizeof(KBD__VM(x)[0][0]) / sizeof(KBD__VM(x)[0][0][0])))
#define KBD__V_L(x) ((int)(sizeof(KBD__VM(x)[0][0][0]) / sizeof(KBD__VM(x)[0][0][0][0])))
#define KBD__V_VEC(x) ((int)(sizeof(KBD__VM(x)[0][0][0][0]) / sizeof(KBD__VM(x)[0][0][0][0][0])))
#define KBD__V_AX(x) ((int)(sizeof(KBD__VM(x)[0][0][0][0][0]) / sizeof(KBD__VM(x)[0][0][0][0][0][0])))
#define KBD__V_DT(x) ((int)sizeof(KBD__VM(x)[0][0][0][0][0][0]))
#define KBD__V_PLAN(x) kbd_rt_plan_of(KBD__V_L(x), KBD__V_R(x), KBD__V_C(x), KBD__V_S(x), KBD__V_VEC(x), KBD__V_AX(x))
#define KBD__T_PLAN(t, AX) kbd_rt_plan_of(KBD_LAYOUT(t), KBD_ROWS(t), KBD_COLS(t), KBD_SCOPE(t), KBD__RT_TVEC(t), AX)

/* Slots of vector m; slot of tile element i; m's value in slot k of `lane` (inside KBD_FOR_LANES on the
 * CPU, the thread's own on the GPU); the row/column index that slot k of `lane` holds. */
#define KBD_VEC_SLOTS(m) ((int)(sizeof((m).v[0]) / sizeof((m).v[0][0])))
#define KBD_VEC_SLOT(m, i) kbd_rt_slot(KBD__V_PLAN(m), (i))
#if KBD_MODE_CPU
#define KBD_VEC_AT(m, lane, k) ((m).v[(lane)][(k)])
#else
#define KBD_VEC_AT(m, lane, k) ((m).v[0 * (lane)][(k)])
#endif
#define KBD_VEC_INDEX(m, lane, k) kbd_rt_index(KBD__V_PLAN(m), KBD_SCOPE_TID(KBD__V_S(m), (lane)), (k))

#define KBD__RT_MATCH(m, t, AX)                                                                                        \
  KBD_STATIC_ASSERT(KBD__V_AX(m) == (AX), "kbd: wrong vector kind: rows need a KBD_ROWVEC, columns a KBD_COLVEC");     \
  KBD_STATIC_ASSERT(KBD__V_R(m) == KBD_ROWS(t) && KBD__V_C(m) == KBD_COLS(t) && KBD__V_S(m) == KBD_SCOPE(t) &&         \
                        KBD__V_L(m) == KBD_LAYOUT(t) && KBD__V_VEC(m) == KBD__RT_TVEC(t),                              \
                    "kbd: the vector was declared for a tile of another shape, scope, layout or vector width")
#define KBD__RT_SCOPE_OK(t)                                                                                            \
  KBD_STATIC_ASSERT(KBD_SCOPE(t) == KBD_WARP || KBD_SCOPE(t) == KBD_BLOCK_THREADS ||                                   \
                        (KBD_SCOPE(t) == KBD_WARPGROUP && KBD_BLOCK_THREADS % KBD_WARPGROUP == 0),                     \
                    "kbd: row/column reductions are over KBD_WARP, KBD_WARPGROUP (in a block of whole "                \
                    "warpgroups) or KBD_CTA tiles")
#define KBD__RT_SAME_VEC(a, b)                                                                                         \
  KBD_STATIC_ASSERT(KBD__RT_TVEC(a) == KBD__RT_TVEC(b),                                                                \
                    "kbd: ROW tile operands of different element sizes have different "                                \
                    "vector widths (vec): their fragments do not line up")

/* The call site's shared memory for the cross-warp step: `words` 32-bit slots, allocated only if `used` (a
 * constant). GPU: a static __shared__ array that nvcc drops when unused. CPU: the machine's per-block
 * static allocation, keyed by this call site. */
#define KBD__RT_SMEM(name, words, used) KBD_HW_SHARED_IF(uint32_t, name, KBD__POS(words), 16, used)

/* [slot][lane] bits -> the vector's v[lane][slot] (bit copy: f32 bits into float, i32 into int32_t). */
#define KBD__RT_OUT(m, acc)                                                                                            \
  for (int kbd_ol_ = 0; kbd_ol_ < KBD_LANES_HELD; ++kbd_ol_)                                                           \
  KBD_UNROLL for (int kbd_ok_ = 0; kbd_ok_ < KBD_VEC_SLOTS(m); ++kbd_ok_)                                              \
      memcpy(&(m).v[kbd_ol_][kbd_ok_], &(acc)[kbd_ok_][kbd_ol_], 4)

/* ---- public macros ------------------------------------------------------------------------------------------ */

#define KBD__RT_REDUCE(m, t, op, AX)                                                                                   \
  do {                                                                                                                 \
    KBD__RED_DT_OK(KBD_DTYPE(t), op);                                                                                  \
    KBD__RT_SCOPE_OK(t);                                                                                               \
    KBD__RT_MATCH(m, t, AX);                                                                                           \
    const kbd_rt_plan kbd_rp_ = KBD__T_PLAN(t, AX);                                                                    \
    /* the plan's inputs as short constants: the scratch size below uses each of them many times */                    \
    enum { kbd_rl_ = KBD_LAYOUT(t), kbd_rc_ = KBD_COLS(t), kbd_rs_ = KBD_SCOPE(t), kbd_rv_ = KBD__RT_TVEC(t) };        \
    uint32_t kbd_racc_[KBD_VEC_SLOTS(m)][KBD_LANES_HELD];                                                              \
    uint32_t kbd_rtmp_[KBD__POS(KBD_NPT(t) / KBD_VEC_SLOTS(m))][KBD_LANES_HELD];                                       \
    KBD__RT_SMEM(kbd_rsl_,                                                                                             \
                 (KBD_BLOCK_THREADS / KBD_WARP_SIZE) * KBD_VEC_SLOTS(m) *                                              \
                     KBD__RT_NREP(kbd_rl_, kbd_rc_, kbd_rs_, kbd_rv_, AX),                                             \
                 KBD__RT_XN(kbd_rl_, kbd_rc_, kbd_rs_, kbd_rv_, AX) > 1);                                              \
    kbd_rt_reduce_(kbd_rp_, (t).v, KBD_DTYPE(t), (op), &kbd_racc_[0][0], &kbd_rtmp_[0][0],                             \
                   (int)(sizeof kbd_rtmp_ / sizeof kbd_rtmp_[0]), kbd_rsl_, KBD_BLOCK_THREADS, __FILE__, __LINE__);    \
    KBD__RT_OUT(m, kbd_racc_);                                                                                         \
  } while (0)

#define kbd_reduce_rows(m, t, op) KBD__RT_REDUCE(m, t, op, KBD__RT_ROWS)
#define kbd_reduce_cols(m, t, op) KBD__RT_REDUCE(m, t, op, KBD__RT_COLS)

/* Stripes of a row scan per thread: ROW npt/vec runs; TMEM_ACC one C-element run per 128-row block. */
#define KBD__RT_NST(t)                                                                                                 \
  KBD__POS(KBD_LAYOUT(t) == KBD_LAYOUT_TMEM_ACC ? KBD_ROWS(t) / 128 : KBD_NPT(t) / KBD__POS(KBD_VEC(t)))

#define kbd_scan_rows(d, tot, t, op, excl)                                                                             \
  do {                                                                                                                 \
    KBD__SCAN_OP_OK(op);                                                                                               \
    KBD_STATIC_ASSERT(KBD_LAYOUT(t) == KBD_LAYOUT_ROW || KBD_LAYOUT(t) == KBD_LAYOUT_TMEM_ACC,                         \
                      "kbd: kbd_scan_rows scans ROW tiles and TMEM_ACC tiles");                                        \
    KBD__SAME_SHAPE(d, t);                                                                                             \
    KBD__RT_SAME_VEC(d, t);                                                                                            \
    KBD__RT_SCOPE_OK(t);                                                                                               \
    KBD__RT_MATCH(tot, t, KBD__RT_ROWS);                                                                               \
    const kbd_rt_plan kbd_sp_ = KBD__T_PLAN(t, KBD__RT_ROWS);                                                          \
    uint32_t kbd_sex_[KBD__RT_NST(t)][KBD_LANES_HELD];                                                                 \
    uint32_t kbd_sgt_[KBD__RT_NST(t)][KBD_LANES_HELD];                                                                 \
    uint32_t kbd_stot_[KBD_VEC_SLOTS(tot)][KBD_LANES_HELD];                                                            \
    enum { kbd_sl_ = KBD_LAYOUT(t), kbd_sc_ = KBD_COLS(t), kbd_ss_ = KBD_SCOPE(t), kbd_sv_ = KBD__RT_TVEC(t) };        \
    KBD__RT_SMEM(kbd_ssl_, (KBD_BLOCK_THREADS / KBD_WARP_SIZE) * KBD__RT_NST(t),                                       \
                 KBD__RT_XN(kbd_sl_, kbd_sc_, kbd_ss_, kbd_sv_, KBD__RT_ROWS) > 1);                                    \
    kbd_rt_scan_rows_(kbd_sp_, (d).v, KBD_DTYPE(d), (t).v, KBD_DTYPE(t), (op), (excl), &kbd_sex_[0][0],                \
                      &kbd_sgt_[0][0], &kbd_stot_[0][0], kbd_ssl_, KBD_BLOCK_THREADS, __FILE__, __LINE__);             \
    KBD__RT_OUT(tot, kbd_stot_);                                                                                       \
  } while (0)

/* The broadcast op as a constant for the checks (KBD__IF_CONST, kbd/smem.h): a variable op gets the
 * constant rule's message only. */
#define KBD__RT_BOP(op) KBD__IF_CONST(op, KBD_OP_ADD)
#define KBD__RT_BCAST(d, a, m, op, AX)                                                                                 \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__IS_CONST(op),                                                                               \
                      "kbd: the kbd_bcast_rows/cols op must be a compile-time constant KBD_OP_ADD, _SUB, _MUL, _DIV, " \
                      "_MIN or _MAX");                                                                                 \
    KBD_STATIC_ASSERT(KBD__RT_BOP(op) == KBD_OP_ADD || KBD__RT_BOP(op) == KBD_OP_SUB ||                                \
                          KBD__RT_BOP(op) == KBD_OP_MUL || KBD__RT_BOP(op) == KBD_OP_DIV ||                            \
                          KBD__RT_BOP(op) == KBD_OP_MIN || KBD__RT_BOP(op) == KBD_OP_MAX,                              \
                      "kbd: kbd_bcast_rows/cols take KBD_OP_ADD, _SUB, _MUL, _DIV, _MIN or _MAX");                     \
    KBD__SAME_SHAPE(d, a);                                                                                             \
    KBD__RT_SAME_VEC(d, a);                                                                                            \
    KBD__RT_MATCH(m, a, AX);                                                                                           \
    const kbd_rt_plan kbd_bp_ = KBD__T_PLAN(a, AX);                                                                    \
    for (int kbd_bl_ = 0; kbd_bl_ < KBD_LANES_HELD; ++kbd_bl_) {                                                       \
      KBD_UNROLL for (int kbd_bi_ = 0; kbd_bi_ < KBD_NPT(a); ++kbd_bi_) {                                              \
        const void *kbd_bm_ = &(m).v[kbd_bl_][kbd_rt_slot(kbd_bp_, kbd_bi_)];                                          \
        if (KBD_DT_IS_FLOAT(KBD_DTYPE(d)))                                                                             \
          kbd_dt_store_f32(&(d).v[kbd_bl_][kbd_bi_], KBD_DTYPE(d),                                                     \
                           kbd_f32_binop((op), kbd_dt_load_f32(&(a).v[kbd_bl_][kbd_bi_], KBD_DTYPE(a)),                \
                                         kbd_dt_load_f32(kbd_bm_, KBD__V_DT(m))));                                     \
        else                                                                                                           \
          kbd_dt_store_i32(&(d).v[kbd_bl_][kbd_bi_], KBD_DTYPE(d),                                                     \
                           kbd_i32_binop((op), kbd_dt_load_i32(&(a).v[kbd_bl_][kbd_bi_], KBD_DTYPE(a)),                \
                                         kbd_dt_load_i32(kbd_bm_, KBD__V_DT(m)), __FILE__, __LINE__));                 \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#define kbd_bcast_rows(d, a, m, op) KBD__RT_BCAST(d, a, m, op, KBD__RT_ROWS)
#define kbd_bcast_cols(d, a, m, op) KBD__RT_BCAST(d, a, m, op, KBD__RT_COLS)

/* p[index] = value for every slot, written by one thread per index in each scope instance: the lane whose
 * butterfly bits are 0, in the first warp of its cross-warp group. p: float * for f32 vectors, int32_t *
 * for i32. A warp- or warpgroup-scoped tile exists once per warp / warpgroup: offset p per instance.
 * kbd_vec_store_n writes only the indices below n (a tile that hangs over the end of p's n entries). */
#define kbd_vec_store(p, m) kbd_vec_store_n(p, m, 0x7fffffffffffffffLL)
#define kbd_vec_store_n(p, m, n)                                                                                       \
  do {                                                                                                                 \
    const kbd_rt_plan kbd_vp_ = KBD__V_PLAN(m);                                                                        \
    const long long kbd_vn_ = (long long)(n);                                                                          \
    const int kbd_vws_ = kbd_warp_id() % (kbd_vp_.scope / KBD_WARP_SIZE);                                              \
    const int kbd_vlead_ = kbd_vp_.xn <= 1 || (kbd_vws_ % (kbd_vp_.xs * kbd_vp_.xn)) / kbd_vp_.xs == 0;                \
    const unsigned kbd_vfm_ = ((1u << (kbd_vp_.hi - kbd_vp_.lo)) - 1u) << kbd_vp_.lo;                                  \
    for (int kbd_vl_ = 0; kbd_vl_ < KBD_LANES_HELD; ++kbd_vl_) {                                                       \
      if (!kbd_vlead_ || ((unsigned)KBD__RT_LANE(kbd_vl_) & kbd_vfm_) != 0u) continue;                                 \
      const int kbd_vt_ = KBD_SCOPE_TID(kbd_vp_.scope, kbd_vl_);                                                       \
      KBD_UNROLL for (int kbd_vk_ = 0; kbd_vk_ < KBD_VEC_SLOTS(m); ++kbd_vk_) {                                        \
        const int kbd_vi_ = kbd_rt_index(kbd_vp_, kbd_vt_, kbd_vk_);                                                   \
        if (kbd_vi_ >= kbd_vn_) continue;                                                                              \
        __typeof__(&(p)[0]) kbd_vd_ = &(p)[kbd_vi_];                                                                   \
        kbd_hw_mem_write(kbd_vd_, sizeof *kbd_vd_, "kbd_vec_store", KBD_SITE);                                         \
        *kbd_vd_ = (m).v[kbd_vl_][kbd_vk_];                                                                            \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* KBD_CPU_PROFILE (kbd/cpu/profile.h): kbd_vec_load's warp instructions, one per slot, with the 32 lanes'
 * addresses (indices at or past n: inactive lanes). Nothing on the GPU. */
#if KBD_MODE_CPU
#define KBD__VEC_LOAD_PROF(m, p, lb, ln, lp)                                                                           \
  if (KBD_UNLIKELY(kbd_hw_prof_on())) {                                                                                \
    for (int kbd_pk_ = 0; kbd_pk_ < KBD_VEC_SLOTS(m); ++kbd_pk_) {                                                     \
      char *kbd_pa_[KBD_LANES_HELD];                                                                                   \
      unsigned char kbd_pv_[KBD_LANES_HELD];                                                                           \
      for (int kbd_pl_ = 0; kbd_pl_ < KBD_LANES_HELD; ++kbd_pl_) {                                                     \
        const long long kbd_pi_ = (lb) + kbd_rt_index((lp), KBD_SCOPE_TID((lp).scope, kbd_pl_), kbd_pk_);              \
        kbd_pv_[kbd_pl_] = (unsigned char)(kbd_pi_ < (ln));                                                            \
        kbd_pa_[kbd_pl_] = (char *)(uintptr_t)(&(p)[kbd_pv_[kbd_pl_] ? kbd_pi_ : 0]);                                  \
      }                                                                                                                \
      kbd_hw_prof_global("kbd_vec_load", KBD_PROFILE_LD, (int)sizeof((p)[0]), kbd_pa_, kbd_pv_, KBD_LANES_HELD,        \
                         KBD_SITE);                                                                                    \
    }                                                                                                                  \
  }
#else
#define KBD__VEC_LOAD_PROF(m, p, lb, ln, lp)
#endif

/* The inverse: every thread reads the indices its slots stand for (a handful of loads of the same few lines
 * across the scope, served by L1). Indices at or past n read as 0, so a tile hanging over the edge is safe. */
#define kbd_vec_load(m, p, base, n)                                                                                    \
  do {                                                                                                                 \
    const kbd_rt_plan kbd_lp_ = KBD__V_PLAN(m);                                                                        \
    const long long kbd_lb_ = (long long)(base), kbd_ln_ = (long long)(n);                                             \
    KBD__VEC_LOAD_PROF(m, p, kbd_lb_, kbd_ln_, kbd_lp_)                                                                \
    for (int kbd_ll_ = 0; kbd_ll_ < KBD_LANES_HELD; ++kbd_ll_) {                                                       \
      const int kbd_lt_ = KBD_SCOPE_TID(kbd_lp_.scope, kbd_ll_);                                                       \
      KBD_UNROLL for (int kbd_lk_ = 0; kbd_lk_ < KBD_VEC_SLOTS(m); ++kbd_lk_) {                                        \
        const long long kbd_li_ = kbd_lb_ + kbd_rt_index(kbd_lp_, kbd_lt_, kbd_lk_);                                   \
        if (kbd_li_ < kbd_ln_) {                                                                                       \
          kbd_hw_global_read(&(p)[kbd_li_], sizeof((p)[0]), "kbd_vec_load", KBD_SITE);                                 \
          (m).v[kbd_ll_][kbd_lk_] = (p)[kbd_li_];                                                                      \
        } else {                                                                                                       \
          (m).v[kbd_ll_][kbd_lk_] = 0;                                                                                 \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_REDUCE_TILE_H */
