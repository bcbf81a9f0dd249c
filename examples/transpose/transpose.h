/* transpose.h - shared by host and kernel: y = x^T, where x is a row-major M x N matrix and y the N x M one,
 * through swizzled shared tiles, with no shared-memory bank conflict on the GPU.
 *
 * A block is TR_WARPS warps. Per tile, the TMA loads a TR_TM x TR_TN box of x into a shared `in` tile (128B
 * swizzle: each row is one 128-byte span), the warps move it transposed into a shared `out` tile with
 * kbd_stile_load_t_at / kbd_stile_store_at, and the TMA stores `out` as a TR_TN x TR_TM box of y. Edges
 * need no code: the load fills the part of a tile outside x with zeros and the store drops the part outside
 * y, so any M, N >= 1 works. The tensor maps need each matrix row to start on 16 bytes, so x and y are
 * allocated with padded row pitches (leading dimensions, tr_ld) and the padding is never written.
 * Blocks take tiles in a grid-stride loop (a persistent kernel: launch about one block per SM); loads run
 * TR_STAGES tiles ahead, and the store of one tile overlaps the transposition of the next.
 *
 * Why there is no bank conflict (docs/shared-tiles.md "Transpose"; tests/examples/test_transpose_banks.c
 * proves it from the library's offset function): each warp moves one "strip" at a time, the register tile
 * TR_STRIP (tr_strip in transpose.cu): TR_TN rows of y by TR_W columns of y (= TR_W rows of x read down
 * their columns), picked per element size.
 *   16-bit types: an MMA_C tile of 64 x 16. Its element pairs run along y's rows, i.e. down x's columns, so
 *     the load is ldmatrix .trans and the store stmatrix. Each 8x8 matrix is 8 consecutive lines at the
 *     same 16-byte chunk, which the 128B swizzle spreads over the 8 bank groups: one wavefront per matrix.
 *   32-bit types: a ROW tile of 32 x 4: lane l holds y row l, 4 consecutive columns. The load is 4 scalar
 *     reads, each of one whole 128-byte line of `in` (32 lanes, 32 banks); the store is one 16-byte write
 *     per lane, and the 8 lanes of a quarter warp write the same chunk of 8 consecutive lines, again
 *     spread over the 8 bank groups by the swizzle.
 *
 * The element type is named once, on the TR_DT line below: the bf16 programs (transpose_*) use the default,
 * the f32 ones (transpose_f32_*) are the same sources compiled with -DTR_DT=f32 (examples/CMakeLists.txt;
 * transpose_f32.cu is that build's kernel file). The types are macros of the element type so that the bank
 * test can build both element sizes' geometry from this one header.
 */
#ifndef TRANSPOSE_H
#define TRANSPOSE_H

#include <kbd/tile.h>

#ifndef TR_DT
#define TR_DT bf16 /* the element type: bf16 or f32 */
#endif

#define TR_CAT_(a, b) a##b
#define TR_CAT(a, b) TR_CAT_(a, b)
typedef TR_CAT(kbd_, TR_DT) tr_elem; /* kbd_bf16 or kbd_f32 */
#define TR_NAME KBD_STR(TR_DT)       /* "bf16" or "f32", for messages */
KBD_STATIC_ASSERT(sizeof(tr_elem) == 2 || sizeof(tr_elem) == 4, "transpose: the element type must be 2 or 4 bytes");

/* The shared tiles' swizzle. Only the transpose_noswz programs change it (to KBD_SWIZZLE_NONE, the control that
 * shows what the swizzle buys: KBD_CPU_PROFILE reports 8 wavefronts per 8x8 matrix there, docs/profiling.md). */
#ifndef TR_SWIZZLE
#define TR_SWIZZLE KBD_SWIZZLE_128B
#endif

/* ---- geometry, for any element type token dt --------------------------------------------------------- */
#define TR_TM 64 /* tile rows of x = tile columns of y */
/* tile columns of x: one 128-byte swizzle span per row (64 bf16, 32 f32) */
#define TR_TN_OF(dt) ((int)(128 / sizeof(TR_CAT(kbd_, dt))))
/* x's tile (TR_TM x TR_TN, one box) and y's (TR_TN x TR_TM: 64 x 64 bf16 is one box, 32 x 64 f32 two) */
#define TR_IN_TILE(dt) KBD_STILE(dt, TR_TM, TR_TN_OF(dt), TR_SWIZZLE)
#define TR_OUT_TILE(dt) KBD_STILE(dt, TR_TN_OF(dt), TR_TM, TR_SWIZZLE)
/* A warp's strip (see above): ldmatrix/stmatrix pairs for 16-bit types, scalar reads + 16-byte writes else. */
#define TR_W_OF(dt) (sizeof(TR_CAT(kbd_, dt)) == 2 ? 16 : 4)
#define TR_LAYOUT_OF(dt) (sizeof(TR_CAT(kbd_, dt)) == 2 ? KBD_LAYOUT_MMA_C : KBD_LAYOUT_ROW)
#define TR_STRIP(dt) KBD_TILE_L(dt, TR_TN_OF(dt), TR_W_OF(dt), KBD_WARP, TR_LAYOUT_OF(dt))

/* ---- this build ---------------------------------------------------------------------------------------- */
#define TR_TN TR_TN_OF(TR_DT)    /* 64 bf16 or 32 f32 */
#define TR_W TR_W_OF(TR_DT)      /* strip width: 16 or 4 columns of y */
#define TR_STRIPS (TR_TM / TR_W) /* strips per tile: 4 or 16 */
#define TR_WARPS 4               /* warp w moves strips w, w + 4, ... */
#define TR_THREADS (TR_WARPS * 32)
#define TR_STAGES 6  /* x tiles in flight per block: 6 x 8 KiB */
#define TR_OUTBUFS 2 /* y tiles: one being stored while the next is written */

typedef TR_IN_TILE(TR_DT) tr_in_tile;
typedef TR_OUT_TILE(TR_DT) tr_out_tile;

typedef struct tr_params {
  kbd_tensor_map x;     /* M x N, boxes of tr_in_tile */
  kbd_tensor_map y;     /* N x M, boxes of tr_out_tile */
  long long rows, cols; /* M, N */
} tr_params;

typedef struct tr_smem {
  size_t in, out, full;
} tr_smem;

/* The dynamic shared memory of one block (64 KiB of tiles + 48 bytes of mbarriers). */
KBD_HD kbd_smem_plan tr_layout(tr_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->in = kbd_smem_plan_stile(&p, "in", tr_in_tile, TR_STAGES);
  l->out = kbd_smem_plan_stile(&p, "out", tr_out_tile, TR_OUTBUFS);
  l->full = kbd_smem_plan_mbarriers(&p, "full", TR_STAGES);
  return p;
}

/* Tiles of an M x N x. */
KBD_HD long long tr_tiles(long long rows, long long cols) {
  return (rows + TR_TM - 1) / TR_TM * ((cols + TR_TN - 1) / TR_TN);
}

/* Host: the row pitch in elements of a matrix with `cols` columns: rounded up to 16 bytes (tensor maps). */
static inline long long tr_ld(long long cols) {
  const long long per16 = 16 / (long long)sizeof(tr_elem);
  return (cols + per16 - 1) / per16 * per16;
}

/* Host: the tensor map of a rows x cols row-major matrix at dev (row pitch ld elements), in boxes of the
 * tile type whose box is box_rows x box_cols. */
static inline kbd_tensor_map_desc tr_map_desc(const tr_elem *dev, long long rows, long long cols, long long ld,
                                              uint32_t box_rows, uint32_t box_cols) {
  return kbd_tensor_map_desc_2d((kbd_tmap_dtype)KBD_TMAP_DT_OF(TR_CAT(KBD_DT_, TR_DT)), dev, (uint64_t)rows,
                                (uint64_t)cols, (uint64_t)ld * sizeof(tr_elem), box_rows, box_cols,
                                kbd_tmap_swizzle_of(TR_SWIZZLE));
}

KBD_KERNEL_DECL(tr_transpose, tr_params);

#endif
