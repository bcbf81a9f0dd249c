/* kbd/swizzle.h - shared-memory swizzles and the byte offset of an element of a shared tile.
 *
 * A shared tile is (element size, R x C, swizzle mode, major-ness). Its bytes are what one or more TMA
 * boxes write, and what ldmatrix/stmatrix, wgmma and tcgen05.mma read through a descriptor. Where element
 * (r, c) lives is ONE pure function, kbd_smem_tile_offset(): the GPU code, the CPU machine's TMA
 * emulation and the MMA descriptors all call it, so they cannot disagree. See docs/shared-tiles.md (API,
 * pictures) and docs/design/shared-tiles.md (why). Facts: ptx-reference.md §2.5, §3, §4.5-4.6, §5.6.
 *
 * Why swizzles exist: shared memory is 32 banks of 4 bytes; a 16-byte access (ldmatrix row, ld.v4, one
 * TMA/wgmma unit) covers a group of 4 banks, so a 128-byte line holds 8 such groups. Eight rows of a
 * row-major tile with 128-byte rows put the same column in the same bank group: an 8-way conflict for
 * ldmatrix and for a warp walking a column. The swizzle XORs the 16-byte chunk index with the line
 * index, so the 8 rows of one atom land in 8 different bank groups (tests/smem proves it).
 *
 * The swizzle of a mode is the CuTe-style Swizzle<B,M,S> bit-XOR on the shared-window byte address:
 *     A' = A ^ ((A >> S) & (((1 << B) - 1) << M))
 * B bits starting at bit M+S (the 128-byte line index) are XORed into the B bits starting at bit M (the
 * chunk index; M = 4 for 16-byte chunks, 5 for 32-byte atoms). It depends on the ABSOLUTE address, so
 * kbd_swizzle_apply() on an offset equals the hardware's placement only when the tile base is aligned to
 * the mode's repeat (kbd_swizzle_align_bytes); every kbd shared tile is placed so.
 *
 * Everything here is integer math (KBD_HD: one definition for the nvcc device pass, the CPU machine and
 * host code), unsigned inside because signed division by a power of two costs extra SASS instructions.
 * The shape rules are also constant expressions (KBD_SMEM_SHAPE_OK, KBD_SMEM_STATIC_CHECK) with one
 * message per rule, shared by the static assertions and by kbd_smem_shape_check().
 */
#ifndef KBD_SWIZZLE_H
#define KBD_SWIZZLE_H

#include "config.h"

/* ---- swizzle modes ------------------------------------------------------------------------------------ */

/* The values are plain integers usable in constant expressions; they are kbd's own numbering, NOT the
 * CUtensorMapSwizzle values nor the descriptor's 2/3-bit layout codes (those are mapped where encoded). */
typedef enum kbd_swizzle {
  KBD_SWIZZLE_NONE = 0,        /* identity: the plain TMA box image                                    */
  KBD_SWIZZLE_32B = 1,         /* 16-byte chunk bit 4 ^= line bit 7: Swizzle<1,4,3>, repeats every 256 B  */
  KBD_SWIZZLE_64B = 2,         /* chunk bits 4-5 ^= line bits 7-8: Swizzle<2,4,3>, repeats every 512 B    */
  KBD_SWIZZLE_128B = 3,        /* chunk bits 4-6 ^= line bits 7-9: Swizzle<3,4,3>, repeats every 1024 B   */
  KBD_SWIZZLE_128B_ATOM32 = 4, /* sm_100a 128B mode with 32-byte atoms: bits 5-6 ^= bits 7-8,
                                  Swizzle<2,5,2>, repeats every 512 B (TMA CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B,
                                  tcgen05 descriptor SWIZZLE_128B_BASE32B; tf32 MN-major operands) */
} kbd_swizzle;
#define KBD_SWIZZLE_COUNT 5
/* Left out on purpose: 128B with 32-byte atoms AND 8-byte flip (only a one-sentence description exists,
 * which lines flip is a guess: ptx-reference §3, §9.5), 128B with 64-byte atoms (CUTLASS's own mapping
 * disagrees with the PTX table: §9.5) and 96B (not a CUtensorMapSwizzle value; no MMA descriptor code). */

/* Which dimension of the tile is contiguous. The tile is indexed (r, c); for an MMA operand r is the M
 * (or N) index and c the K index, so the names follow the MMA convention (ptx-reference §4.6):
 *   K_MAJOR   c is contiguous: rows of C elements, the TMA box's inner dimension is C ("row-major").
 *   MN_MAJOR  r is contiguous: columns of R elements, the TMA box's inner dimension is R. */
typedef enum kbd_smem_major { KBD_SMEM_K_MAJOR = 0, KBD_SMEM_MN_MAJOR = 1 } kbd_smem_major;

#define KBD_SWIZZLE_VALID(m) ((m) >= KBD_SWIZZLE_NONE && (m) <= KBD_SWIZZLE_128B_ATOM32)
#define KBD_SWIZZLED(m) ((m) >= KBD_SWIZZLE_32B && (m) <= KBD_SWIZZLE_128B_ATOM32)

/* Swizzle<B,M,S> parameters (constant expressions; 0 for NONE and unknown modes: the identity). */
#define KBD_SWIZZLE_B(m)                                                                                               \
  ((m) == KBD_SWIZZLE_32B                                     ? 1                                                      \
   : (m) == KBD_SWIZZLE_64B || (m) == KBD_SWIZZLE_128B_ATOM32 ? 2                                                      \
   : (m) == KBD_SWIZZLE_128B                                  ? 3                                                      \
                                                              : 0)
#define KBD_SWIZZLE_M(m) ((m) == KBD_SWIZZLE_128B_ATOM32 ? 5 : 4)
#define KBD_SWIZZLE_S(m) ((m) == KBD_SWIZZLE_128B_ATOM32 ? 2 : 3)

/* Span: the bytes of one swizzled row, i.e. the largest inner box extent (boxDim[0] * elementSize) the
 * tensor map accepts for the mode and the row pitch of a swizzle atom (DRV; ptx-reference §2.3, §2.5).
 * NONE has no span: 0 (a NONE tile's row is its whole contiguous extent). */
#define KBD_SWIZZLE_SPAN(m) ((m) == KBD_SWIZZLE_32B ? 32 : (m) == KBD_SWIZZLE_64B ? 64 : KBD_SWIZZLE_B(m) > 0 ? 128 : 0)
/* Repeat: the pattern's period in bytes. The line-index bits start at bit M+S = 7 in every mode, so the
 * period is 2^B lines of 128 bytes: 256, 512, 1024 and 512 bytes. */
#define KBD_SWIZZLE_REPEAT(m) (KBD_SWIZZLE_B(m) > 0 ? (128 << KBD_SWIZZLE_B(m)) : 0)
/* Unit kept intact by the permutation: 16 bytes, 32 for the 32-byte-atom mode (16 for NONE: the TMA
 * transfer granule and the ldmatrix row). */
#define KBD_SWIZZLE_UNIT(m) ((m) == KBD_SWIZZLE_128B_ATOM32 ? 32 : 16)
/* Base alignment kbd requires of a tile in this mode: the repeat, so that the pattern's phase at the tile
 * base is 0 and kbd_swizzle_apply() on offsets equals the hardware's absolute-address swizzle (the
 * tensor-map/descriptor "base offset" is then 0, the only value CUTLASS uses: ptx-reference §4.5, §9.3).
 * NONE: 128 bytes, the Programming Guide's TMA destination rule (stricter than PTX's 16: §2.4, §9.2). */
#define KBD_SWIZZLE_ALIGN(m) (KBD_SWIZZLE_B(m) > 0 ? KBD_SWIZZLE_REPEAT(m) : 128)

/* ---- the permutation ---------------------------------------------------------------------------------- */

/* Physical byte offset of logical byte offset `off` from a base aligned to kbd_swizzle_align_bytes(mode)
 * (or the physical shared-window address of an absolute logical address: the formula is the same).
 * An XOR of higher bits into lower ones, so it is its own inverse: apply(apply(x)) == x. */
KBD_HD uint32_t kbd_swizzle_apply(int mode, uint32_t off) {
  const unsigned b = (unsigned)KBD_SWIZZLE_B(mode), m = (unsigned)KBD_SWIZZLE_M(mode);
  const unsigned s = (unsigned)KBD_SWIZZLE_S(mode);
  return off ^ ((off >> s) & (((1u << b) - 1u) << m));
}

KBD_HD int kbd_swizzle_span_bytes(int mode) { return KBD_SWIZZLE_SPAN(mode); }
KBD_HD int kbd_swizzle_repeat_bytes(int mode) { return KBD_SWIZZLE_REPEAT(mode); }
KBD_HD int kbd_swizzle_align_bytes(int mode) { return KBD_SWIZZLE_ALIGN(mode); }
KBD_HD int kbd_swizzle_unit_bytes(int mode) { return KBD_SWIZZLE_UNIT(mode); }

/* Phase of the pattern at shared-window address `addr`: the 128-byte line index within the repeat,
 * (addr / 128) % (repeat / 128). It is the "matrix base offset" of the wgmma/tcgen05 descriptor and the
 * CPG's swizzle offset for a pattern starting at addr (ptx-reference §3, §4.5); 0 for NONE. kbd tiles
 * start at phase 0; a nonzero phase at a tile base means it was placed without its alignment. */
KBD_HD int kbd_swizzle_phase(int mode, uint32_t addr) {
  const int lines = KBD_SWIZZLE_REPEAT(mode) / 128;
  return lines > 0 ? (int)((addr >> 7) % (unsigned)lines) : 0;
}

/* ---- shared tile shapes ------------------------------------------------------------------------------- */

typedef struct kbd_smem_shape {
  int esize;   /* element bytes: 1, 2 or 4 */
  int rows;    /* R */
  int cols;    /* C */
  int swizzle; /* a kbd_swizzle */
  int major;   /* a kbd_smem_major */
} kbd_smem_shape;

/* Contiguous extent in bytes (cols*esize K-major, rows*esize MN-major) and the strided extent in
 * elements (rows K-major, cols MN-major). Constant expressions. */
#define KBD_SMEM_INNER_BYTES(esize, rows, cols, major)                                                                 \
  ((long long)((major) == KBD_SMEM_MN_MAJOR ? (rows) : (cols)) * (long long)(esize))
#define KBD_SMEM_OUTER(rows, cols, major) ((major) == KBD_SMEM_MN_MAJOR ? (cols) : (rows))

/* The rules, each with its message. Constant expressions (arguments may be evaluated several times);
 * each rule is written so that it holds vacuously when an earlier rule already fails (no division by
 * zero, no overflow inside a constant expression), so exactly the first broken rule reports. */
#define KBD_SMEM_RULE_ESIZE "kbd: shared tile element size must be 1, 2 or 4 bytes"
#define KBD_SMEM_ESIZE_OK(esize) ((esize) == 1 || (esize) == 2 || (esize) == 4)

#define KBD_SMEM_RULE_SWIZZLE "kbd: unknown swizzle mode (use KBD_SWIZZLE_NONE, _32B, _64B, _128B or _128B_ATOM32)"
#define KBD_SMEM_SWIZZLE_OK(swz) KBD_SWIZZLE_VALID(swz)

#define KBD_SMEM_RULE_MAJOR "kbd: shared tile major-ness must be KBD_SMEM_K_MAJOR or KBD_SMEM_MN_MAJOR"
#define KBD_SMEM_MAJOR_OK(major) ((major) == KBD_SMEM_K_MAJOR || (major) == KBD_SMEM_MN_MAJOR)

#define KBD_SMEM_RULE_DIMS                                                                                             \
  "kbd: shared tile rows and cols must be positive and rows*cols*esize at most 227 KiB (one block's shared memory)"
#define KBD_SMEM_DIMS_OK(esize, rows, cols)                                                                            \
  (!KBD_SMEM_ESIZE_OK(esize) ||                                                                                        \
   ((rows) >= 1 && (cols) >= 1 && (long long)(rows) <= (long long)KBD_MAX_SMEM_BYTES &&                                \
    (long long)(cols) <= (long long)KBD_MAX_SMEM_BYTES &&                                                              \
    (long long)(rows) * (long long)(cols) * (long long)(esize) <= (long long)KBD_MAX_SMEM_BYTES))

#define KBD_SMEM_RULE_CHUNK                                                                                            \
  "kbd: unswizzled shared tile: the contiguous extent (cols*esize K-major, rows*esize MN-major) must be a multiple "   \
  "of 16 bytes (TMA moves whole 16-byte units)"
#define KBD_SMEM_CHUNK_OK(esize, rows, cols, swz, major)                                                               \
  ((swz) != KBD_SWIZZLE_NONE || KBD_SMEM_INNER_BYTES(esize, rows, cols, major) % 16 == 0)

#define KBD_SMEM_RULE_SPAN                                                                                             \
  "kbd: swizzled shared tile: the contiguous extent (cols*esize K-major, rows*esize MN-major) must be a multiple of "  \
  "the swizzle span (32, 64 or 128 bytes): one TMA box fills one span-wide block"
#define KBD_SMEM_SPAN_OK(esize, rows, cols, swz, major)                                                                \
  (!KBD_SWIZZLED(swz) || KBD_SMEM_INNER_BYTES(esize, rows, cols, major) % KBD_SWIZZLE_SPAN(swz) == 0)

#define KBD_SMEM_RULE_ROWS8                                                                                            \
  "kbd: swizzled shared tile: the strided extent (rows K-major, cols MN-major) must be a multiple of 8 (one "          \
  "swizzle atom is 8 rows of span bytes)"
#define KBD_SMEM_ROWS8_OK(rows, cols, swz, major) (!KBD_SWIZZLED(swz) || KBD_SMEM_OUTER(rows, cols, major) % 8 == 0)

#define KBD_SMEM_RULE_ATOM32                                                                                           \
  "kbd: KBD_SWIZZLE_128B_ATOM32 is for MN-major tiles only (tcgen05's 128B/32-byte-atom layout is invalid for "        \
  "K-major operands)"
#define KBD_SMEM_ATOM32_OK(swz, major) ((swz) != KBD_SWIZZLE_128B_ATOM32 || (major) != KBD_SMEM_K_MAJOR)

/* 1 if (esize, R, C, swizzle, major) is a legal shared tile, else 0. */
#define KBD_SMEM_SHAPE_OK(esize, rows, cols, swz, major)                                                               \
  (KBD_SMEM_ESIZE_OK(esize) && KBD_SMEM_SWIZZLE_OK(swz) && KBD_SMEM_MAJOR_OK(major) &&                                 \
   KBD_SMEM_DIMS_OK(esize, rows, cols) && KBD_SMEM_CHUNK_OK(esize, rows, cols, swz, major) &&                          \
   KBD_SMEM_SPAN_OK(esize, rows, cols, swz, major) && KBD_SMEM_ROWS8_OK(rows, cols, swz, major) &&                     \
   KBD_SMEM_ATOM32_OK(swz, major))

/* Compile-time check: one static assertion per rule, so the failing one carries its rule as the message.
 * A sequence of declarations: file scope, block scope, or inside a struct. Later rules are guarded by the
 * earlier ones, so only the first broken rule fires. */
#define KBD_SMEM_STATIC_CHECK(esize, rows, cols, swz, major)                                                           \
  KBD_STATIC_ASSERT(KBD_SMEM_ESIZE_OK(esize), KBD_SMEM_RULE_ESIZE);                                                    \
  KBD_STATIC_ASSERT(KBD_SMEM_SWIZZLE_OK(swz), KBD_SMEM_RULE_SWIZZLE);                                                  \
  KBD_STATIC_ASSERT(KBD_SMEM_MAJOR_OK(major), KBD_SMEM_RULE_MAJOR);                                                    \
  KBD_STATIC_ASSERT(KBD_SMEM_DIMS_OK(esize, rows, cols), KBD_SMEM_RULE_DIMS);                                          \
  KBD_STATIC_ASSERT(!(KBD_SMEM_ESIZE_OK(esize) && KBD_SMEM_MAJOR_OK(major) && KBD_SMEM_DIMS_OK(esize, rows, cols)) ||  \
                        KBD_SMEM_CHUNK_OK(esize, rows, cols, swz, major),                                              \
                    KBD_SMEM_RULE_CHUNK);                                                                              \
  KBD_STATIC_ASSERT(!(KBD_SMEM_ESIZE_OK(esize) && KBD_SMEM_MAJOR_OK(major) && KBD_SMEM_DIMS_OK(esize, rows, cols)) ||  \
                        KBD_SMEM_SPAN_OK(esize, rows, cols, swz, major),                                               \
                    KBD_SMEM_RULE_SPAN);                                                                               \
  KBD_STATIC_ASSERT(!(KBD_SMEM_MAJOR_OK(major) && KBD_SMEM_DIMS_OK(esize, rows, cols)) ||                              \
                        KBD_SMEM_ROWS8_OK(rows, cols, swz, major),                                                     \
                    KBD_SMEM_RULE_ROWS8);                                                                              \
  KBD_STATIC_ASSERT(!KBD_SMEM_MAJOR_OK(major) || KBD_SMEM_ATOM32_OK(swz, major), KBD_SMEM_RULE_ATOM32)

KBD_HD kbd_smem_shape kbd_smem_shape_make(int esize, int rows, int cols, int swizzle, int major) {
  kbd_smem_shape s;
  s.esize = esize;
  s.rows = rows;
  s.cols = cols;
  s.swizzle = swizzle;
  s.major = major;
  return s;
}

/* NULL if the shape is legal, else the message of the first rule it breaks (a string literal). */
KBD_HD const char *kbd_smem_shape_check(const kbd_smem_shape *s) {
  const int e = s->esize, r = s->rows, c = s->cols, w = s->swizzle, j = s->major;
  if (!KBD_SMEM_ESIZE_OK(e)) return KBD_SMEM_RULE_ESIZE;
  if (!KBD_SMEM_SWIZZLE_OK(w)) return KBD_SMEM_RULE_SWIZZLE;
  if (!KBD_SMEM_MAJOR_OK(j)) return KBD_SMEM_RULE_MAJOR;
  if (!KBD_SMEM_DIMS_OK(e, r, c)) return KBD_SMEM_RULE_DIMS;
  if (!KBD_SMEM_CHUNK_OK(e, r, c, w, j)) return KBD_SMEM_RULE_CHUNK;
  if (!KBD_SMEM_SPAN_OK(e, r, c, w, j)) return KBD_SMEM_RULE_SPAN;
  if (!KBD_SMEM_ROWS8_OK(r, c, w, j)) return KBD_SMEM_RULE_ROWS8;
  if (!KBD_SMEM_ATOM32_OK(w, j)) return KBD_SMEM_RULE_ATOM32;
  return (const char *)0;
}

/* ---- geometry of a legal shape -------------------------------------------------------------------------
 * The tile is cut along its contiguous dimension into BLOCKS of block_bytes (the span; NONE: the whole
 * contiguous extent, i.e. one block). A block holds the tile's full strided extent: O lines of
 * block_bytes each, line o at o*block_bytes (O = rows K-major, cols MN-major) - exactly the image of one
 * TMA box {inner = block_bytes/esize, outer = O} (ptx-reference §2.5, with the row pitch P = span). Blocks
 * follow each other at block_stride = O*block_bytes. For swizzled modes a block is a stack of O/8 atoms
 * of 8 lines x span bytes (1024/512/256 bytes = one repeat or two), "stacked along rows first, then
 * along columns", which is the CUTLASS/ThunderKittens K-major smem layout for wgmma/tcgen05 operands.
 * Then the mode's swizzle is applied to the whole offset. */

KBD_HD int kbd_smem_tile_bytes(const kbd_smem_shape *s) { return s->rows * s->cols * s->esize; }
/* Block width in bytes as a constant expression (the TMA box line of a tile: kbd/tma.h). */
#define KBD_SMEM_BLOCK_BYTES(esize, rows, cols, swz, major)                                                            \
  (KBD_SWIZZLED(swz) ? KBD_SWIZZLE_SPAN(swz) : (int)KBD_SMEM_INNER_BYTES(esize, rows, cols, major))
KBD_HD int kbd_smem_block_bytes(const kbd_smem_shape *s) {
  return KBD_SMEM_BLOCK_BYTES(s->esize, s->rows, s->cols, s->swizzle, s->major);
}
KBD_HD int kbd_smem_block_stride(const kbd_smem_shape *s) {
  return KBD_SMEM_OUTER(s->rows, s->cols, s->major) * kbd_smem_block_bytes(s);
}
KBD_HD int kbd_smem_align_bytes(const kbd_smem_shape *s) { return KBD_SWIZZLE_ALIGN(s->swizzle); }

/* Byte offset of element (r, c) from the tile base (aligned to kbd_smem_align_bytes). Defined for shapes
 * kbd_smem_shape_check() accepts and 0 <= r < rows, 0 <= c < cols; no checks on this hot path. With a
 * constant shape nvcc folds all of it to shifts, masks and one XOR. */
KBD_HD int kbd_smem_tile_offset(const kbd_smem_shape *s, int r, int c) {
  const unsigned mn = s->major == KBD_SMEM_MN_MAJOR;
  const unsigned esize = (unsigned)s->esize;
  const unsigned outer = mn ? (unsigned)c : (unsigned)r;                       /* line within the block */
  const unsigned inner = (mn ? (unsigned)r : (unsigned)c) * esize;             /* byte within the tile's line */
  const unsigned lines = (unsigned)KBD_SMEM_OUTER(s->rows, s->cols, s->major); /* lines per block */
  const unsigned blk = (unsigned)kbd_smem_block_bytes(s);
  const unsigned lin = (inner / blk) * (lines * blk) + outer * blk + inner % blk;
  return (int)kbd_swizzle_apply(s->swizzle, lin);
}

/* ---- facts for the MMA descriptors (ptx-reference §4.6; encoding comes with the MMA issue) ---------------
 * Byte values of the descriptor's stride (SBO) and leading (LBO) byte offsets for a descriptor whose start
 * address is a block start plus a K offset inside the block (K-major), or the tile start (MN-major):
 *   K-major, 32B/64B/128B:  SBO = 8*span (next group of 8 rows);  LBO = 16 (unused by the hardware for
 *                           swizzled K-major, "assumed 1"; CUTLASS writes 1 = 16 bytes). One instruction
 *                           reads 32 bytes of K, inside one block; the next block is block_stride away.
 *   MN-major, 32B/64B/128B: LBO = block_stride (next span-wide block along M/N); SBO = 8*span (next group
 *                           of 8 K lines).
 * 0 (no claim) for NONE (a plain row-major tile is the canonical no-swizzle layout only with 16-byte lines)
 * and for 128B_ATOM32 (its descriptor strides are a CUTLASS-only detail, §5.6): both come with the MMA
 * issue. tests/smem checks the §4.6 address formulas with these values against kbd_smem_tile_offset. */
KBD_HD int kbd_smem_desc_sbo(const kbd_smem_shape *s) {
  const int m = s->swizzle;
  return (m == KBD_SWIZZLE_32B || m == KBD_SWIZZLE_64B || m == KBD_SWIZZLE_128B) ? 8 * KBD_SWIZZLE_SPAN(m) : 0;
}
KBD_HD int kbd_smem_desc_lbo(const kbd_smem_shape *s) {
  const int m = s->swizzle;
  if (!(m == KBD_SWIZZLE_32B || m == KBD_SWIZZLE_64B || m == KBD_SWIZZLE_128B)) return 0;
  return s->major == KBD_SMEM_MN_MAJOR ? kbd_smem_block_stride(s) : 16;
}

#endif /* KBD_SWIZZLE_H */
