/* cluster_multicast.h - shared by host and kernel: a thread-block cluster that loads one tile ONCE for all of
 * its CTAs (multicast TMA) and combines the CTAs' partial results through distributed shared memory (DSMEM).
 * kbd/cluster.h has the calls, docs/clusters.md the rules.
 *
 * The operation, over an M x N row-major f32 matrix x and a CM_TR x N weight matrix w:
 *     out[r][c]  = x[r][c] * w[r % CM_TR][c]          (w repeats down the rows)
 *     colsum[c]  = sum over r of out[r][c]
 *
 * Work split. One cluster of n CTAs (n = 1, 2, 4 or 8, chosen at launch) owns one band of CM_TC columns:
 * cluster k, columns [k*CM_TC, (k+1)*CM_TC). Every CTA of the cluster needs the same w tile (all CM_TR rows of
 * the band), so the cluster loads it once: the tile is cut into CM_WSLICES slices, CTA rank r issues slices
 * [r*CM_WSLICES/n, (r+1)*CM_WSLICES/n) with kbd_tma_load_multicast, and each slice lands in every CTA of the
 * cluster - n times less L2 traffic for w than n separate loads. The x tiles (CM_TR x CM_TC) of the band are
 * dealt to the CTAs round robin: CTA r takes row tiles r, r + n, r + 2n, ..., each with a plain kbd_tma_load
 * into a CM_STAGES-deep ring. Each CTA keeps a running sum of its out tiles in registers, folds it to one
 * partial sum per column, and leaves the CM_TC partials in its shared memory. Then the all-reduce, split by
 * columns: CTA r reads columns [r*CM_TC/n, (r+1)*CM_TC/n) of every CTA's partials (its own and its peers',
 * through kbd_cluster_map), adds them in rank order and writes those columns of colsum. Every CTA does an
 * equal share and no CTA waits for one "root" CTA.
 *
 * Edges need no code: the TMA fills the part of a tile outside x (or w) with zeros, out is written with a
 * masked kbd_store2d, and colsum columns past N are not written; so any M, N >= 1 works. The tensor maps need
 * each row to start on 16 bytes, so x, w and out have a row pitch `ld` of N rounded up to 4 floats (cm_ld).
 *
 * Shared memory is dynamic and planned by cm_layout(): the multicast w tile and the barrier it completes on
 * must sit at the same offset in every CTA of the cluster (a multicast writes "this offset, in every CTA of
 * the mask"), and one plan evaluated by the same code in every CTA guarantees it.
 */
#ifndef CLUSTER_MULTICAST_H
#define CLUSTER_MULTICAST_H

#include <kbd/tile.h>

#define CM_TR 32                     /* x tile rows = w rows (the period of w down the rows) */
#define CM_TC 32                     /* columns per band: 32 f32 = one 128-byte line, one box per tile */
#define CM_WSLICES 8                 /* w is multicast in 8 slices of 4 rows; n must divide it: n = 1, 2, 4, 8 */
#define CM_STAGES 4                  /* x tiles in flight per CTA: 4 x 4 KiB */
#define CM_THREADS 128               /* one warpgroup: each thread holds 8 elements of a tile */
#define CM_CTA_COLS(n) (CM_TC / (n)) /* colsum columns each CTA of an n-CTA cluster finishes */
#define CM_MAX_ROWS (1LL << 20)      /* the self-check's exactness bound (main.c) */

/* No swizzle: the CTA reads whole 128-byte lines (each thread 16 bytes of one row), which is conflict-free
 * unswizzled, and an unswizzled tile may start at any 128-byte line - so a 4-row slice of w is itself a tile,
 * placed at its row of the whole w tile. */
typedef KBD_STILE(f32, CM_TR, CM_TC, KBD_SWIZZLE_NONE) cm_tile;                /* an x tile, the w tile */
typedef KBD_STILE(f32, CM_TR / CM_WSLICES, CM_TC, KBD_SWIZZLE_NONE) cm_wslice; /* one multicast slice of w */

typedef struct cm_params {
  kbd_tensor_map x;     /* M x N, boxes of cm_tile */
  kbd_tensor_map w;     /* CM_TR x N, boxes of cm_wslice */
  float *out;           /* M x N, row pitch ld */
  float *colsum;        /* N */
  long long rows, cols; /* M, N */
  long long ld;         /* row pitch of out (and of x, w) in elements */
} cm_params;

typedef struct cm_smem {
  size_t w, x, part, w_full, x_full;
} cm_smem;

/* The dynamic shared memory of one CTA (about 20 KiB), the same plan in every CTA of a cluster. */
KBD_HD kbd_smem_plan cm_layout(cm_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->w = kbd_smem_plan_stile(&p, "w (multicast)", cm_tile, 1);
  l->x = kbd_smem_plan_stile(&p, "x ring", cm_tile, CM_STAGES);
  l->part = kbd_smem_plan_array(&p, "column partials (read by peers)", float, CM_TC);
  l->w_full = kbd_smem_plan_mbarriers(&p, "w full (signalled by every CTA's multicast)", 1);
  l->x_full = kbd_smem_plan_mbarriers(&p, "x full", CM_STAGES);
  return p;
}

/* Host: the row pitch in elements of a matrix with `cols` f32 columns, rounded up to 16 bytes (tensor maps). */
static inline long long cm_ld(long long cols) { return (cols + 3) / 4 * 4; }

/* Host: clusters needed for `cols` columns (one band of CM_TC each). */
static inline long long cm_bands(long long cols) { return (cols + CM_TC - 1) / CM_TC; }

/* Host: the tensor map of a rows x cols f32 matrix at dev (row pitch ld elements), in boxes of box_rows rows
 * by one 128-byte line (CM_TC floats). */
static inline kbd_tensor_map_desc cm_map_desc(const float *dev, long long rows, long long cols, long long ld,
                                              uint32_t box_rows) {
  return kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, dev, (uint64_t)rows, (uint64_t)cols, (uint64_t)ld * sizeof(float),
                                box_rows, kbd_tma_box_cols_for(cm_tile), KBD_TMAP_SWIZZLE_NONE);
}

KBD_KERNEL_DECL(cm_scale_colsum, cm_params);

#endif
