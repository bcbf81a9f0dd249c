/* tma_pipeline.h - shared by host and kernel: y = max(x * scale + shift, 0) over an M x N bf16 matrix,
 * streamed through shared memory by the TMA (kbd/tma.h).
 *
 * A block is a producer warp and a consumer warpgroup. The producer loads 32 x 64 tiles of x into a
 * 4-stage ring with kbd_tma_load, paced by `full` / `empty` mbarriers; the consumers move each tile to
 * registers, compute in f32, write the result into one of two output tiles and store it with kbd_tma_store
 * while the next tile is computed. Edges: the TMA fills the part of a tile outside the matrix with zeros on
 * the way in and drops it on the way out, so any M, N >= 1 works with no masking in the kernel. Blocks take
 * tiles in a grid-stride loop (a persistent kernel: launch about one block per SM).
 *
 * Shared memory is dynamic and laid out by tp_layout() (kbd/smem_plan.h), the same function on the host
 * (to size the launch) and in the kernel (to find the pieces).
 */
#ifndef TMA_PIPELINE_H
#define TMA_PIPELINE_H

#include <kbd/tile.h>

#define TP_ROWS 32          /* tile rows */
#define TP_COLS 64          /* tile cols: 64 bf16 = 128 bytes, one 128B swizzle span, so one box per tile */
#define TP_STAGES 4         /* input ring depth */
#define TP_OUTBUFS 2        /* output tiles: one being stored by the TMA while the other is written */
#define TP_THREADS (5 * 32) /* warps 0-3: the consumer warpgroup, warp 4: the producer */

typedef KBD_STILE(bf16, TP_ROWS, TP_COLS, KBD_SWIZZLE_128B) tp_tile;

typedef struct tp_params {
  kbd_tensor_map x; /* input, boxes of tp_tile */
  kbd_tensor_map y; /* output, the same geometry */
  long long rows, cols;
  float scale, shift;
} tp_params;

typedef struct tp_smem {
  size_t in, out, full, empty;
} tp_smem;

/* The dynamic shared memory of one block (26 KiB). */
KBD_HD kbd_smem_plan tp_layout(tp_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->in = kbd_smem_plan_stile(&p, "x ring", tp_tile, TP_STAGES);
  l->out = kbd_smem_plan_stile(&p, "y tiles", tp_tile, TP_OUTBUFS);
  l->full = kbd_smem_plan_mbarriers(&p, "full", TP_STAGES);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", TP_STAGES);
  return p;
}

/* Host: the tensor map of a rows x cols row-major bf16 matrix at dev, in boxes of tp_tile. */
static inline kbd_tensor_map_desc tp_map_desc(const kbd_bf16 *dev, long long rows, long long cols) {
  return kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, dev, (uint64_t)rows, (uint64_t)cols, (uint64_t)cols * 2,
                                kbd_tma_box_rows_for(tp_tile), kbd_tma_box_cols_for(tp_tile), KBD_TMAP_SWIZZLE_128B);
}

KBD_KERNEL_DECL(tp_scale_relu, tp_params);

#endif
