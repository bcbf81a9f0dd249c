/* tma_copy.h - shared by host and kernel: y = x over an M x N row-major matrix, moved entirely by the TMA
 * (kbd/tma.h) through a ring of shared-memory stages. The threads never touch the data.
 *
 * A block is one producer warp and TC_CONSUMERS consumer warps. The producer loads tiles of x into a
 * TC_STAGES-deep ring with kbd_tma_load, each stage paced by a `full` and an `empty` mbarrier; a consumer
 * waits for a full stage, stores it to y with kbd_tma_store straight from the ring, waits until the TMA has
 * read it (kbd_bulk_wait_group_read) and hands the stage back. Edges need no code: the load fills the part of
 * a tile outside the matrix with zeros and the store drops it, so any M, N >= 1 works as long as a row is a
 * multiple of 16 bytes (the tensor map's row pitch rule). Blocks take tiles in a grid-stride loop (a
 * persistent kernel: launch about one block per SM).
 *
 * The element type is named once, on the TC_DT line below: the bf16 programs (tma_copy_*) use the default,
 * the f32 ones (tma_copy_f32_*) are the same sources compiled with -DTC_DT=f32 (examples/CMakeLists.txt;
 * tma_copy_f32.cu is that build's kernel file). A tile is 64 rows of 128 bytes either way (64 x 64 bf16 or
 * 64 x 32 f32): one 128B-swizzle span per row, so one TMA box per tile.
 */
#ifndef TMA_COPY_H
#define TMA_COPY_H

#include <kbd/tile.h>

#ifndef TC_DT
#define TC_DT bf16 /* the element type: bf16 or f32 */
#endif

#define TC_CAT_(a, b) a##b
#define TC_CAT(a, b) TC_CAT_(a, b)
typedef TC_CAT(kbd_, TC_DT) tc_elem; /* kbd_bf16 or kbd_f32 */
#define TC_NAME KBD_STR(TC_DT)       /* "bf16" or "f32", for messages */

#define TC_ROWS 64                             /* tile rows: box_dims[1] */
#define TC_COLS ((int)(128 / sizeof(tc_elem))) /* tile cols: 128 bytes = one 128B swizzle span = box_dims[0] */
#define TC_STAGES 16                           /* ring depth: 16 x 8 KiB in flight per block */
#define TC_CONSUMERS 4                         /* consumer warps 0..3; warp 4 is the producer */
#define TC_THREADS ((TC_CONSUMERS + 1) * 32)

typedef KBD_STILE(TC_DT, TC_ROWS, TC_COLS, KBD_SWIZZLE_128B) tc_tile;

typedef struct tc_params {
  kbd_tensor_map x; /* source, boxes of tc_tile */
  kbd_tensor_map y; /* destination, the same geometry */
  long long rows, cols;
} tc_params;

typedef struct tc_smem {
  size_t ring, full, empty;
} tc_smem;

/* The dynamic shared memory of one block (128 KiB of ring + 256 bytes of mbarriers). */
KBD_HD kbd_smem_plan tc_layout(tc_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->ring = kbd_smem_plan_stile(&p, "ring", tc_tile, TC_STAGES);
  l->full = kbd_smem_plan_mbarriers(&p, "full", TC_STAGES);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", TC_STAGES);
  return p;
}

/* Tiles of a rows x cols matrix. */
KBD_HD long long tc_tiles(long long rows, long long cols) {
  return (rows + TC_ROWS - 1) / TC_ROWS * ((cols + TC_COLS - 1) / TC_COLS);
}

/* Host: the tensor map of a rows x cols row-major matrix at dev, in boxes of tc_tile. */
static inline kbd_tensor_map_desc tc_map_desc(const tc_elem *dev, long long rows, long long cols) {
  return kbd_tensor_map_desc_2d((kbd_tmap_dtype)KBD_TMAP_DT_OF(TC_CAT(KBD_DT_, TC_DT)), dev, (uint64_t)rows,
                                (uint64_t)cols, (uint64_t)cols * sizeof(tc_elem), kbd_tma_box_rows_for(tc_tile),
                                kbd_tma_box_cols_for(tc_tile), KBD_TMAP_SWIZZLE_128B);
}

KBD_KERNEL_DECL(tc_copy, tc_params);

#endif
