/* cluster_multicast.cu - the kernel of examples/cluster_multicast (see cluster_multicast.h, docs/clusters.md):
 * out = x * w (w repeating down the rows) and colsum = the column sums of out, with w loaded once per cluster
 * by multicast and the column sums combined across the cluster through DSMEM.
 *
 * One CTA, start to end (rank r of an n-CTA cluster):
 *   1. init its barriers, fence.mbarrier_init, kbd_cluster_arrive ... kbd_cluster_wait: every CTA of the
 *      cluster has started and initialised w_full before any peer multicasts into it;
 *   2. warp 0 starts its first CM_STAGES x tiles (between the arrive and the wait: they need no peer), then
 *      announces the WHOLE w tile on w_full (n slices land there, one from each CTA, in any order) and
 *      multicasts its own slices to the cluster;
 *   3. w_full's phase 0 -> w in registers; then per x tile: wait, move to registers, barrier (every warp has
 *      read the stage), refill the stage, out = x * w to global, acc += out;
 *   4. acc folded to CM_TC column partials in this CTA's shared memory, kbd_cluster_sync (all partials of the
 *      cluster written and visible), each CTA adds its share of the columns over all CTAs (DSMEM reads);
 *   5. kbd_cluster_sync: no CTA exits while a peer may still read its partials.
 * Pacing of the x ring (as in examples/transpose): tile `it` of this CTA uses stage it % CM_STAGES, whose load
 * completes x_full[s] in the phase of parity (it / CM_STAGES) & 1; one kbd_sync per tile frees the stage.
 */
#include "cluster_multicast.h"

/* A tile in registers: 8 elements per thread, each thread 2 rows x 4 consecutive columns (ROW layout). */
typedef KBD_TILE(f32, CM_TR, CM_TC, KBD_WARPGROUP) cm_frag;

/* Warp 0's elected lane: expect the whole w tile on w_full, then multicast this CTA's slices of the band's w
 * to every CTA of the cluster. Each CTA's w_full expects CM_TR x CM_TC floats because every CTA's copy of the
 * tile receives all n CTAs' slices; expecting only the own slices would let the phase complete while a
 * peer's slice is still in flight (the CPU machine reports the early read as KBD_ERR_POISON). */
KBD_DEV void cm_load_w(unsigned char *smem, const cm_smem *l, const kbd_tensor_map *w, kbd_mbarrier *w_full, int c0) {
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  const uint16_t everyone = (uint16_t)((1u << n) - 1u); /* bit r = cluster rank r */
  const int per_cta = CM_WSLICES / (int)n;
  kbd_mbarrier_arrive_expect_tx(w_full, KBD_STILE_TYPE_BYTES(cm_tile));
  for (int s = (int)rank * per_cta; s < ((int)rank + 1) * per_cta; ++s) {
    /* slice s = rows [s*4, s*4 + 4) of w, at that row of the w tile: the same offset in every CTA */
    cm_wslice slice = KBD_SMEM_PLAN_STILE(cm_wslice, smem, l->w, s);
    kbd_tma_load_multicast2d(slice, w, w_full, everyone, s * KBD_ROWS(slice), c0);
  }
}

/* Warp 0's elected lane: announce the bytes on bar and start the TMA load of row tile t of the band at c0.
 * A plain load: x tiles are this CTA's alone. */
KBD_DEV void cm_load_x(cm_tile in, const kbd_tensor_map *x, kbd_mbarrier *bar, long long t, int c0) {
  kbd_mbarrier_arrive_expect_tx(bar, KBD_STILE_BYTES(in)); /* the whole box, edge tiles included */
  kbd_tma_load2d(in, x, bar, (int)(t * CM_TR), c0);
}

/* part[c] = column c's sum, from the vector kbd_reduce_cols left in every thread. Warp 0 alone writes: a
 * 32-column row of the tile is 8 lanes, so warp 0 holds every column, and its lanes that hold the same column
 * (l, l + 8, l + 16, l + 24) write the same value - within one warp that is no race. A checked store
 * (kbd_st_shared) on purpose: peers read part[] through DSMEM, and the CPU machine orders those reads against
 * these writes. */
#define CM_FRAG_EXPR (*(cm_frag *)0) /* a cm_frag expression for the compile-time queries (never evaluated) */
typedef KBD_COLVEC(f32, CM_FRAG_EXPR) cm_colvec;
KBD_STATIC_ASSERT(CM_TC / KBD_VEC(CM_FRAG_EXPR) <= KBD_WARP_SIZE,
                  "cluster_multicast: warp 0 must hold every column of a tile (a row at most 32 lanes wide)");
KBD_DEV void cm_store_partials(float *part, const cm_colvec *partial) {
  if (kbd_warp_id() != 0) return;
  KBD_FOR_LANES(lane) {
    for (int k = 0; k < KBD_VEC_SLOTS(*partial); ++k)
      kbd_st_shared(&part[KBD_VEC_INDEX(*partial, lane, k)], KBD_VEC_AT(*partial, lane, k));
  }
}

/* Steps 4 and 5: the cluster's column sums. part[] holds this CTA's CM_TC partials (cm_store_partials). After the
 * cluster barrier, CTA r finishes columns [r*k, r*k + k), k = CM_TC / n: one lane per column reads that column's
 * partial in every CTA of the cluster, rank 0 first (a fixed order, so the result does not depend on scheduling), and
 * writes the sum to colsum. */
KBD_DEV void cm_cluster_colsum(const float *part, float *colsum, long long c0, long long cols) {
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  const int k = CM_CTA_COLS((int)n);
  kbd_cluster_sync(); /* every CTA's part[] is written; the release/acquire pair makes it visible here */
  if (kbd_warp_id() == 0) {
    KBD_FOR_LANES(lane) {
      const int c = (int)rank * k + lane; /* column of the band */
      if (lane < k && c0 + c < cols) {
        float sum = 0.0f;
        for (unsigned q = 0; q < n; ++q) {
          const float *peer = kbd_cluster_map(part, q); /* part in CTA q (this CTA's own for q == rank) */
          sum += kbd_ld_shared(&peer[c]);
        }
        colsum[c0 + c] = sum;
      }
    }
  }
  kbd_cluster_sync(); /* peers may still be reading this CTA's part[]: stay alive until they are done */
}

KBD_KERNEL(cm_scale_colsum, CM_THREADS, cm_params) {
  cm_smem l;
  const kbd_smem_plan plan = cm_layout(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *w_full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.w_full);
  kbd_mbarrier *x_full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.x_full);
  float *part = KBD_SMEM_PLAN_ARRAY(float, smem, l.part);
  const int warp = kbd_warp_id();
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  const int c0 = (int)kbd_cluster_id_x() * CM_TC; /* this cluster's band of columns */

  /* this CTA's x tiles: row tiles t = rank + it * n, it = 0 .. mine - 1 */
  const long long row_tiles = (p.rows + CM_TR - 1) / CM_TR;
  const long long mine = rank < row_tiles ? (row_tiles - 1 - rank) / n + 1 : 0;

  /* 1. Barriers, made visible to the cluster before anyone signals them: peers' multicasts complete bytes on
   * this CTA's w_full, so it must be initialised (and fenced) before the cluster barrier they all pass. */
  if (warp == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(w_full, 1); /* this CTA's arrive.expect_tx; the bytes come from every CTA */
      for (int s = 0; s < CM_STAGES; ++s)
        kbd_mbarrier_init(&x_full[s], 1); /* cm_load_x's arrive.expect_tx */
      kbd_fence_mbarrier_init();          /* fence.mbarrier_init.release.cluster */
      kbd_tma_prefetch_map(&p.x);
      kbd_tma_prefetch_map(&p.w);
    }
  }
  kbd_cluster_arrive(); /* this CTA has started and its barriers are initialised (a release) */

  /* 2. Loads. The x tiles involve no peer, so they start while the cluster barrier completes (the thread that
   * initialised x_full issues them); w goes into peers' shared memory, so it waits for every CTA's arrival. */
  if (warp == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < CM_STAGES && s < mine; ++s)
        cm_load_x(KBD_SMEM_PLAN_STILE(cm_tile, smem, l.x, s), &p.x, &x_full[s], rank + (long long)s * n, c0);
    }
  }
  kbd_cluster_wait(); /* every CTA of the cluster has started and initialised w_full */
  if (warp == 0) {
    KBD_ELECT_ONE { cm_load_w(smem, &l, &p.w, w_full, c0); }
  }

  /* 3. Every CTA waits for its copy of w (all n slices), even one with no x tile: a multicast must not land
   * in a CTA that has exited. */
  const cm_tile w_tile = KBD_SMEM_PLAN_STILE(cm_tile, smem, l.w, 0);
  cm_frag w, x, acc;
  kbd_mbarrier_wait(w_full, 0);
  kbd_stile_load(w, w_tile);
  kbd_zero(acc);
  for (long long it = 0; it < mine; ++it) {
    const int s = (int)(it % CM_STAGES);
    const long long t = rank + it * n;
    cm_tile in = KBD_SMEM_PLAN_STILE(cm_tile, smem, l.x, s);

    kbd_mbarrier_wait(&x_full[s], (unsigned)(it / CM_STAGES) & 1u);
    kbd_stile_load(x, in);
    kbd_sync(); /* every warp has read stage s: it may be refilled */
    if (warp == 0 && it + CM_STAGES < mine) {
      KBD_ELECT_ONE { cm_load_x(in, &p.x, &x_full[s], t + (long long)CM_STAGES * n, c0); }
    }
    kbd_mul(x, x, w); /* row i of every x tile meets row i of w: the tile height is w's period */
    kbd_store2d(p.out, x, p.rows, p.cols, p.ld, t * CM_TR, c0);
    kbd_add(acc, acc, x);
  }

  /* 4. This CTA's partial column sums, left in its shared memory for the cluster. */
  cm_colvec partial;
  kbd_reduce_cols(partial, acc, KBD_RED_SUM); /* every thread: the sums of the 4 columns it holds */
  cm_store_partials(part, &partial);
  cm_cluster_colsum(part, p.colsum, c0, p.cols); /* 4 and 5 */
}
