/* kbd/layout.h - fragment layouts: which thread of a scope holds which element of a tile.
 *
 * A tile of R x C elements is spread over the registers of the threads of its owning scope (a warp,
 * a warpgroup or the CTA). Every thread keeps npt elements in a small array; a layout maps
 *     (t, i) -> (row, col)      t = thread index inside the scope, i = index in that thread's array
 * and is a bijection between {0..nthreads-1} x {0..npt-1} and the R x C tile (tests/layout proves it).
 *
 * Layout ids (plain integers, usable in constant expressions):
 *   KBD_LAYOUT_ROW        "striped vectors": the coalesced layout for global/shared loads and stores
 *   KBD_LAYOUT_WGMMA_ACC  wgmma m64nN accumulator (D) of a warpgroup, stacked in 64-row blocks
 *   KBD_LAYOUT_MMA_A      mma.sync m16n8k16 A operand (16-bit elements) of a warp, in 16x16 blocks
 *   KBD_LAYOUT_MMA_B      mma.sync m16n8k16 B operand (K x N) of a warp, in 16x8 blocks
 *   KBD_LAYOUT_MMA_C      mma.sync m16n8 C/D accumulator of a warp, in 16x8 blocks
 *   KBD_LAYOUT_TMEM_ACC   tcgen05 M=128 accumulator of a warpgroup read with tcgen05.ld.32x32b: thread t
 *                         holds row t of each 128-row block, all C columns in column order
 *
 * Block order of the generalised MMA/WGMMA shapes: the tile is cut into blocks of the instruction's
 * shape, and blocks are numbered ROW-MAJOR over the block grid (column block fastest). Thread t holds
 * block b's elements at i = b*E .. b*E+E-1 (E = elements per thread per block: 4 for C/B, 8 for A,
 * N/2 for one m64nN wgmma accumulator), in the instruction's own register order. Consequences:
 *   - the N/8 column blocks of one m64nN accumulator are exactly the instruction's d[0..N/2-1];
 *   - elements 2r, 2r+1 of any A/C/WGMMA fragment are two adjacent columns of one row, B's are two
 *     adjacent k of one column: a 16-bit tile packs them into the one .b32 register the instruction
 *     expects, with no shuffling.
 * See docs/layouts.md for formulas, pictures and the evidence.
 *
 * Everything is integer math on (t, i). The tile library calls these with a compile-time layout and
 * shape and an unrolled loop index i, so nvcc folds all of it except the few shifts/ands on t; the
 * arithmetic is done unsigned because signed division by a power of two needs extra sign-fixup
 * instructions in SASS, unsigned division is a single shift. Results are defined only for shapes
 * accepted by KBD_LAYOUT_SHAPE_OK and 0 <= t < nthreads, 0 <= i < npt (no checks on the hot path).
 */
#ifndef KBD_LAYOUT_H
#define KBD_LAYOUT_H

#include "config.h"

typedef struct kbd_coord {
  int row, col;
} kbd_coord;

#define KBD_LAYOUT_ROW 1
#define KBD_LAYOUT_WGMMA_ACC 2
#define KBD_LAYOUT_MMA_A 3
#define KBD_LAYOUT_MMA_B 4
#define KBD_LAYOUT_MMA_C 5
#define KBD_LAYOUT_TMEM_ACC 6

/* Largest tile any layout accepts (elements). A tile lives in registers (64K x 32-bit per SM) or in
 * at most 227 KiB of shared memory, so no real tile comes near 2^20 elements; the cap keeps every
 * index product of this file far inside int. */
#define KBD_LAYOUT_MAX_ELEMS (1 << 20)

/* ---- shape rules ------------------------------------------------------------------------------
 * Constant expressions (usable in _Static_assert / static_assert and array sizes). Arguments may be
 * evaluated several times. Divisors are guarded so that illegal inputs (0, negative) give 0 rather
 * than a division by zero inside a constant expression. */
#define KBD_LAYOUT_NZ_(x) ((x) > 0 ? (x) : 1)
#define KBD_LAYOUT_DIMS_OK_(rows, cols)                                                                                \
  ((rows) >= 1 && (cols) >= 1 && (rows) <= KBD_LAYOUT_MAX_ELEMS && (cols) <= KBD_LAYOUT_MAX_ELEMS &&                   \
   (long long)(rows) * (long long)(cols) <= (long long)KBD_LAYOUT_MAX_ELEMS)

/* ROW: vec is the number of elements one thread moves per vector access. PTX vector loads/stores
 * move at most 16 bytes (ld.v4.b32), so with 1-byte elements vec <= 16, and only powers of two.
 * vec | C keeps every vector inside one row (one contiguous, vec-aligned run of a row-major tile);
 * nthreads*vec | R*C makes every thread hold the same number of whole vectors. */
#define KBD_LAYOUT_ROW_OK(rows, cols, nthreads, vec)                                                                   \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) >= 1 && (nthreads) <= KBD_MAX_BLOCK_THREADS &&                        \
   ((vec) == 1 || (vec) == 2 || (vec) == 4 || (vec) == 8 || (vec) == 16) && (cols) % KBD_LAYOUT_NZ_(vec) == 0 &&       \
   (long long)(rows) * (long long)(cols) % ((long long)KBD_LAYOUT_NZ_(nthreads) * KBD_LAYOUT_NZ_(vec)) == 0)
/* WGMMA_ACC: M is always 64 per instruction and N is 8..256 step 8 (PTX shape table); taller tiles
 * are several accumulators stacked in 64-row blocks. The instruction is issued by a warpgroup. */
#define KBD_LAYOUT_WGMMA_ACC_OK(rows, cols, nthreads, vec)                                                             \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) == KBD_WARPGROUP_SIZE && (rows) % 64 == 0 && (cols) % 8 == 0 &&       \
   (cols) >= 8 && (cols) <= 256)
/* mma.sync fragments: a warp-wide instruction; A blocks are 16x16 (M x K), B 16x8 (K x N), C 16x8.
 * The fixed layouts take vec only so that every KBD_LAYOUT_<NAME>_OK has the same arguments. */
#define KBD_LAYOUT_MMA_A_OK(rows, cols, nthreads, vec)                                                                 \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) == KBD_WARP_SIZE && (rows) % 16 == 0 && (cols) % 16 == 0)
#define KBD_LAYOUT_MMA_B_OK(rows, cols, nthreads, vec)                                                                 \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) == KBD_WARP_SIZE && (rows) % 16 == 0 && (cols) % 8 == 0)
#define KBD_LAYOUT_MMA_C_OK(rows, cols, nthreads, vec)                                                                 \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) == KBD_WARP_SIZE && (rows) % 16 == 0 && (cols) % 8 == 0)

/* TMEM_ACC: an M = 128 tcgen05.mma writes D row m to TMEM lane m (ptx-reference §5.7, Layout D), and a
 * warp w of a warpgroup can only read lanes 32(w%4)..+31 (§5.1), so the register view is fixed by the
 * hardware: 128-row blocks, one row per thread. C is a multiple of 8 (the tcgen05.mma N step for M = 128)
 * up to 512 (the TMEM columns of a CTA); taller tiles are several accumulators stacked in 128-row blocks. */
#define KBD_LAYOUT_TMEM_ACC_OK(rows, cols, nthreads, vec)                                                              \
  (KBD_LAYOUT_DIMS_OK_(rows, cols) && (nthreads) == KBD_WARPGROUP_SIZE && (rows) % 128 == 0 && (cols) % 8 == 0 &&      \
   (cols) >= 8 && (cols) <= 512)

/* 1 if (rows, cols, nthreads, vec) is a legal shape for `layout`, else 0 (always exactly 0 or 1).
 * vec only matters for ROW (the fixed MMA/WGMMA layouts ignore it; pass 1). Unknown layout id: 0. */
#define KBD_LAYOUT_SHAPE_OK(layout, rows, cols, nthreads, vec)                                                         \
  ((layout) == KBD_LAYOUT_ROW         ? KBD_LAYOUT_ROW_OK(rows, cols, nthreads, vec)                                   \
   : (layout) == KBD_LAYOUT_WGMMA_ACC ? KBD_LAYOUT_WGMMA_ACC_OK(rows, cols, nthreads, vec)                             \
   : (layout) == KBD_LAYOUT_MMA_A     ? KBD_LAYOUT_MMA_A_OK(rows, cols, nthreads, vec)                                 \
   : (layout) == KBD_LAYOUT_MMA_B     ? KBD_LAYOUT_MMA_B_OK(rows, cols, nthreads, vec)                                 \
   : (layout) == KBD_LAYOUT_MMA_C     ? KBD_LAYOUT_MMA_C_OK(rows, cols, nthreads, vec)                                 \
   : (layout) == KBD_LAYOUT_TMEM_ACC  ? KBD_LAYOUT_TMEM_ACC_OK(rows, cols, nthreads, vec)                              \
                                      : 0)

/* " (here rows = 64, cols = 48)": the user's shape next to the rule. A static assertion's message must be a
 * string literal, so the arguments are spelled as text: their macro-expanded spelling, which is the value
 * whenever the user wrote a number or a macro naming one (gcc cannot print the value of a failed condition;
 * clang prints the condition with the values substituted). */
#define KBD__SHAPE_IS(R, C) " (here rows = " KBD_STR(R) ", cols = " KBD_STR(C) ")"

/* Messages naming each rule, for the static assertions of the tile macros. */
#define KBD_LAYOUT_RULE_ROW                                                                                            \
  "kbd: ROW tiles are R x C (R*C <= 2^20) owned by 1..1024 threads, with vec in {1,2,4,8,16} dividing C "              \
  "and R*C a multiple of nthreads*vec"
#define KBD_LAYOUT_RULE_WGMMA_ACC                                                                                      \
  "kbd: WGMMA_ACC tiles are (64*m) x N with N a multiple of 8 in 8..256, owned by a warpgroup (128 threads)"
#define KBD_LAYOUT_RULE_MMA_A "kbd: MMA_A tiles are (16*m) x (16*k) (M x K), owned by a warp (32 threads)"
#define KBD_LAYOUT_RULE_MMA_B "kbd: MMA_B tiles are (16*k) x (8*n) (K x N), owned by a warp (32 threads)"
#define KBD_LAYOUT_RULE_MMA_C "kbd: MMA_C tiles are (16*m) x (8*n), owned by a warp (32 threads)"
#define KBD_LAYOUT_RULE_TMEM_ACC                                                                                       \
  "kbd: TMEM_ACC tiles are (128*m) x C with C a multiple of 8 in 8..512, owned by a warpgroup (128 threads)"

/* Static check of a shape against a layout given by NAME (ROW, WGMMA_ACC, MMA_A, MMA_B, MMA_C, TMEM_ACC),
 * failing with that layout's rule as the message. A declaration: file or block scope. It tests the
 * one layout's rule only, so compilers that print the failed condition print a short one. */
#define KBD_LAYOUT_ASSERT_SHAPE(NAME, rows, cols, nthreads, vec)                                                       \
  KBD_STATIC_ASSERT(KBD_LAYOUT_##NAME##_OK(rows, cols, nthreads, vec), KBD_LAYOUT_RULE_##NAME)

/* The same, for a layout given as an integer id (a tile macro's parameter, where NAME cannot be
 * pasted): one assertion per layout, so the failing one carries that layout's rule as its message.
 * A sequence of declarations, usable at file/block scope and inside a struct (C11 and C++ allow a
 * static assertion as a member declaration). */
#define KBD_LAYOUT_STATIC_CHECK(layout, rows, cols, nthreads, vec)                                                     \
  KBD_STATIC_ASSERT((layout) >= KBD_LAYOUT_ROW && (layout) <= KBD_LAYOUT_TMEM_ACC,                                     \
                    "kbd: unknown layout id (use KBD_LAYOUT_ROW, _WGMMA_ACC, _MMA_A, _MMA_B, _MMA_C or _TMEM_ACC)");   \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_ROW || KBD_LAYOUT_ROW_OK(rows, cols, nthreads, vec),                        \
                    KBD_LAYOUT_RULE_ROW KBD__SHAPE_IS(rows, cols));                                                    \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_WGMMA_ACC || KBD_LAYOUT_WGMMA_ACC_OK(rows, cols, nthreads, vec),            \
                    KBD_LAYOUT_RULE_WGMMA_ACC KBD__SHAPE_IS(rows, cols));                                              \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_MMA_A || KBD_LAYOUT_MMA_A_OK(rows, cols, nthreads, vec),                    \
                    KBD_LAYOUT_RULE_MMA_A KBD__SHAPE_IS(rows, cols));                                                  \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_MMA_B || KBD_LAYOUT_MMA_B_OK(rows, cols, nthreads, vec),                    \
                    KBD_LAYOUT_RULE_MMA_B KBD__SHAPE_IS(rows, cols));                                                  \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_MMA_C || KBD_LAYOUT_MMA_C_OK(rows, cols, nthreads, vec),                    \
                    KBD_LAYOUT_RULE_MMA_C KBD__SHAPE_IS(rows, cols));                                                  \
  KBD_STATIC_ASSERT((layout) != KBD_LAYOUT_TMEM_ACC || KBD_LAYOUT_TMEM_ACC_OK(rows, cols, nthreads, vec),              \
                    KBD_LAYOUT_RULE_TMEM_ACC KBD__SHAPE_IS(rows, cols))

/* Threads that own a tile of `layout`: fixed by the instruction for MMA (a warp), WGMMA and TMEM_ACC (a
 * warpgroup), the caller's choice for ROW; 0 for an unknown id. */
#define KBD_LAYOUT_THREADS(layout, nthreads)                                                                           \
  ((layout) == KBD_LAYOUT_ROW                                                                     ? (nthreads)         \
   : (layout) == KBD_LAYOUT_WGMMA_ACC || (layout) == KBD_LAYOUT_TMEM_ACC                          ? KBD_WARPGROUP_SIZE \
   : (layout) == KBD_LAYOUT_MMA_A || (layout) == KBD_LAYOUT_MMA_B || (layout) == KBD_LAYOUT_MMA_C ? KBD_WARP_SIZE      \
                                                                                                  : 0)
/* Elements per thread (constant expression: the size of a tile's register array). Meaningful for
 * shapes accepted by KBD_LAYOUT_SHAPE_OK; 0 for an unknown layout id. */
#define KBD_LAYOUT_NPT(layout, rows, cols, nthreads)                                                                   \
  (KBD_LAYOUT_THREADS(layout, nthreads) > 0                                                                            \
       ? (int)((long long)(rows) * (long long)(cols) / KBD_LAYOUT_NZ_(KBD_LAYOUT_THREADS(layout, nthreads)))           \
       : 0)

/* ---- per-layout maps ------------------------------------------------------------------------ */

KBD_HD kbd_coord kbd_coord_make(int row, int col) {
  kbd_coord c;
  c.row = row;
  c.col = col;
  return c;
}

/* ROW ("striped vectors"): the row-major tile is read as a flat array e = r*C + c cut into vec-element
 * chunks; chunk number j*nthreads + t belongs to thread t as its j-th chunk:
 *     j = i / vec, k = i % vec, e = (j*nthreads + t)*vec + k, (row, col) = (e / C, e % C).
 * For every j the threads of a warp touch one contiguous run of 32*vec elements, each thread one
 * aligned vec-element vector: with vec*sizeof(elem) = 16 that is one ld/st.v4.b32 per thread and four
 * fully used 128-byte lines per warp (coalesced), and consecutive threads hit consecutive 16-byte
 * shared-memory slots (no bank conflict beyond the unavoidable 4 wavefronts of a 512-byte access). */
KBD_HD kbd_coord kbd_layout_row(int rows, int cols, int nthreads, int vec, int t, int i) {
  unsigned v = (unsigned)vec, c = (unsigned)cols;
  unsigned e = (((unsigned)i / v) * (unsigned)nthreads + (unsigned)t) * v + (unsigned)i % v;
  (void)rows;
  return kbd_coord_make((int)(e / c), (int)(e % c));
}

/* One m16n8 C/D block of mma.sync (PTX ISA "Matrix Fragments for mma.m16n8k16", c0..c3):
 * lane = 4g + q holds rows g and g+8, columns 2q and 2q+1; element j: row g + 8*(j/2), col 2q + j%2.
 * This is the single definition of the per-warp accumulator pattern: MMA_C repeats it over a block
 * grid, WGMMA_ACC repeats it per warp (the wgmma D fragment of warp w is this pattern on rows
 * 16w..16w+15), and an MMA_A 16x16 block is two of them side by side (k 0-7 and 8-15). */
KBD_HD kbd_coord kbd_layout_c16x8_(unsigned lane, unsigned j) {
  return kbd_coord_make((int)(lane / 4u + 8u * (j / 2u)), (int)(2u * (lane % 4u) + j % 2u));
}

/* MMA_C: (16*mb) x (8*nb) accumulator of one warp. Element i: block b = i/4 (row-major over the
 * mb x nb block grid, i.e. bm = b / nb, bn = b % nb), c-register j = i%4 of that block. */
KBD_HD kbd_coord kbd_layout_mma_c(int rows, int cols, int lane, int i) {
  unsigned nb = (unsigned)cols / 8u, b = (unsigned)i / 4u;
  kbd_coord c = kbd_layout_c16x8_((unsigned)lane, (unsigned)i % 4u);
  (void)rows;
  c.row += (int)(16u * (b / nb));
  c.col += (int)(8u * (b % nb));
  return c;
}

/* WGMMA_ACC: (64*mb) x N accumulator of a warpgroup (ptx-reference §4.3, CUTLASS CLayout_64xN).
 * Each thread holds N/2 elements per m64 block: element i lies in m-block i / (N/2), and inside it
 * element ii = i % (N/2) is d[ii] of the instruction. The hardware gives warp w (= t/32, the warp
 * rank inside the warpgroup) the 16 rows 16w..16w+15 of each m64 block — the four warps' slices of
 * the accumulator datapath — laid out exactly as an mma.sync 16 x N C tile with N/8 column blocks.
 *     row = 64*(i/(N/2)) + 16*w + g + 8*((ii/2)%2),  col = 8*(ii/4) + 2q + ii%2   (g = l/4, q = l%4) */
KBD_HD kbd_coord kbd_layout_wgmma_acc(int rows, int cols, int t, int i) {
  unsigned per_block = (unsigned)cols / 2u, ut = (unsigned)t, ui = (unsigned)i;
  kbd_coord c = kbd_layout_mma_c(16, cols, (int)(ut % 32u), (int)(ui % per_block));
  (void)rows;
  c.row += (int)(64u * (ui / per_block) + 16u * (ut / 32u));
  return c;
}

/* MMA_A: (16*mb) x (16*kb) A operand (M x K, 16-bit elements) of one warp. Per 16x16 block, a0..a7:
 * row g + 8*((j/2)%2), col 2q + j%2 + 8*(j/4) — a0..a3 cover k 0-7 and a4..a7 k 8-15 with the C
 * pattern. Block b = i/8, row-major over the mb x kb grid (k block fastest, so one k-step of a
 * 16-row strip is 8 consecutive elements = the 4 .b32 registers the instruction takes). */
KBD_HD kbd_coord kbd_layout_mma_a(int rows, int cols, int lane, int i) {
  unsigned kb = (unsigned)cols / 16u, ui = (unsigned)i, b = ui / 8u, j = ui % 8u;
  kbd_coord c = kbd_layout_c16x8_((unsigned)lane, j % 4u);
  (void)rows;
  c.row += (int)(16u * (b / kb));
  c.col += (int)(16u * (b % kb) + 8u * (j / 4u));
  return c;
}

/* MMA_B: (16*kb) x (8*nb) B operand, row = k, col = n, of one warp. Per 16x8 block, b0..b3:
 * k = 2q + j%2 + 8*(j/2), n = g (each lane holds one column n = g; pairs b0b1 / b2b3 are adjacent k,
 * the packing of the instruction's two .b32 B registers). Block b = i/4, row-major over the kb x nb
 * grid (n block fastest). */
KBD_HD kbd_coord kbd_layout_mma_b(int rows, int cols, int lane, int i) {
  unsigned nb = (unsigned)cols / 8u, ul = (unsigned)lane, ui = (unsigned)i, b = ui / 4u, j = ui % 4u;
  (void)rows;
  return kbd_coord_make((int)(16u * (b / nb) + 2u * (ul % 4u) + j % 2u + 8u * (j / 2u)),
                        (int)(8u * (b % nb) + ul / 4u));
}

/* TMEM_ACC: (128*mb) x C accumulator of a warpgroup as tcgen05.ld.32x32b delivers it (ptx-reference §5.3:
 * register j of lane l of warp w = TMEM lane 32w + l, column C0 + j; §5.7: D row m = TMEM lane m):
 *     row = 128*(i/C) + t,  col = i % C.
 * A thread's elements i = b*C .. b*C+C-1 are one whole row in column order, so any aligned run of them is
 * one contiguous run of a row-major image (the 16-byte shared/global vector accesses of stile_move.h and
 * tile_io.h), and a row reduction needs no communication at all. */
KBD_HD kbd_coord kbd_layout_tmem_acc(int rows, int cols, int t, int i) {
  unsigned c = (unsigned)cols, ui = (unsigned)i;
  (void)rows;
  return kbd_coord_make((int)(128u * (ui / c) + (unsigned)t), (int)(ui % c));
}

/* ---- dispatch ------------------------------------------------------------------------------- */

/* (row, col) of element i of thread t for any layout; {-1, -1} for an unknown id. With a constant
 * layout the branches fold away. nthreads/vec are only read by ROW. */
KBD_HD kbd_coord kbd_layout_coord(int layout, int rows, int cols, int nthreads, int vec, int t, int i) {
  if (layout == KBD_LAYOUT_ROW) return kbd_layout_row(rows, cols, nthreads, vec, t, i);
  if (layout == KBD_LAYOUT_WGMMA_ACC) return kbd_layout_wgmma_acc(rows, cols, t, i);
  if (layout == KBD_LAYOUT_MMA_A) return kbd_layout_mma_a(rows, cols, t, i);
  if (layout == KBD_LAYOUT_MMA_B) return kbd_layout_mma_b(rows, cols, t, i);
  if (layout == KBD_LAYOUT_MMA_C) return kbd_layout_mma_c(rows, cols, t, i);
  if (layout == KBD_LAYOUT_TMEM_ACC) return kbd_layout_tmem_acc(rows, cols, t, i);
  return kbd_coord_make(-1, -1);
}

/* Elements per thread (see KBD_LAYOUT_NPT). */
KBD_HD int kbd_layout_npt(int layout, int rows, int cols, int nthreads) {
  return KBD_LAYOUT_NPT(layout, rows, cols, nthreads);
}

/* 1 if the shape is legal for the layout, else 0 (see KBD_LAYOUT_SHAPE_OK). */
KBD_HD int kbd_layout_valid(int layout, int rows, int cols, int nthreads, int vec) {
  return KBD_LAYOUT_SHAPE_OK(layout, rows, cols, nthreads, vec) ? 1 : 0;
}

#endif /* KBD_LAYOUT_H */
