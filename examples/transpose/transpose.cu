/* transpose.cu - the kernel of examples/transpose: y = x^T through swizzled shared tiles (see transpose.h).
 *
 * Iteration `it` of a block handles tile t = block + it * grid: the x tile in ring stage s = it % TR_STAGES
 * (loaded TR_STAGES iterations ahead; its load completes full[s] in the phase of parity (it / TR_STAGES) & 1)
 * becomes the y tile in buffer o = it % TR_OUTBUFS. One barrier per tile orders everything:
 *   before it: every warp has read in[s] and written (and fenced) its strips of out[o]; warp 0's elected lane
 *              has seen the older stores finish reading the buffer that the next iteration writes;
 *   after it:  that lane stores out[o] and refills in[s] with the tile TR_STAGES iterations ahead.
 * So no empty barriers and no producer warp: the refill of a stage waits for the same barrier that the store
 * of its tile needs anyway.
 */
#include "transpose.h"

/* A warp's register strip (transpose.h): a register tile, so it exists in kernel code only. */
typedef TR_STRIP(TR_DT) tr_strip;

/* Warp 0's elected lane: announce the bytes on bar and start the TMA load of x's tile t into `in`. */
KBD_DEV void tr_load(tr_in_tile in, const kbd_tensor_map *x, kbd_mbarrier *bar, long long t, long long tiles_n) {
  kbd_mbarrier_arrive_expect_tx(bar, KBD_STILE_BYTES(in)); /* the whole box, edge tiles included */
  kbd_tma_load2d(in, x, bar, (int)(t / tiles_n * TR_TM), (int)(t % tiles_n * TR_TN));
}

/* out = in^T. Warp w moves strips w, w + TR_WARPS, ...: strip k is y's rows 0..TR_TN-1 by columns
 * k*TR_W .. k*TR_W + TR_W - 1, i.e. x's rows k*TR_W .. read down their columns. transpose.h says why each
 * warp-wide shared access is conflict free. */
KBD_DEV void tr_transpose_tile(tr_out_tile out, tr_in_tile in, int warp) {
  for (int k = warp; k < TR_STRIPS; k += TR_WARPS) {
    tr_strip v;
    kbd_stile_load_t_at(v, in, k * TR_W, 0); /* v[r][c] = in[k*TR_W + c][r] */
    kbd_stile_store_at(out, v, 0, k * TR_W); /* out[r][k*TR_W + c] = v[r][c] */
  }
}

KBD_KERNEL(tr_transpose, TR_THREADS, tr_params) {
  tr_smem l;
  const kbd_smem_plan plan = tr_layout(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  const int warp = kbd_warp_id();

  const long long tiles_n = (p.cols + TR_TN - 1) / TR_TN; /* tiles across a row of x */
  const long long tiles = tr_tiles(p.rows, p.cols);
  /* this block's tiles: t = block + it * grid, it = 0 .. mine - 1 */
  const long long mine = kbd_block_x() < tiles ? (tiles - 1 - kbd_block_x()) / kbd_grid_x() + 1 : 0;

  if (warp == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < TR_STAGES; ++s)
        kbd_mbarrier_init(&full[s], 1); /* tr_load's arrive.expect_tx */
      kbd_tma_prefetch_map(&p.x);       /* the first load and store do not wait for a descriptor fetch */
      kbd_tma_prefetch_map(&p.y);
    }
  }
  kbd_sync(); /* the mbarriers are initialised before anyone uses them */
  if (warp == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < TR_STAGES && s < mine; ++s)
        tr_load(KBD_SMEM_PLAN_STILE(tr_in_tile, smem, l.in, s), &p.x, &full[s], kbd_block_x() + s * kbd_grid_x(),
                tiles_n);
    }
  }

  for (long long it = 0; it < mine; ++it) {
    const int s = (int)(it % TR_STAGES), o = (int)(it % TR_OUTBUFS);
    const long long t = kbd_block_x() + it * kbd_grid_x();
    tr_in_tile in = KBD_SMEM_PLAN_STILE(tr_in_tile, smem, l.in, s);
    tr_out_tile out = KBD_SMEM_PLAN_STILE(tr_out_tile, smem, l.out, o);

    kbd_mbarrier_wait(&full[s], (unsigned)(it / TR_STAGES) & 1u);
    tr_transpose_tile(out, in, warp);
    kbd_fence_proxy_async(); /* this thread's generic writes of out[o] -> visible to the TMA (async proxy) */
    if (warp == 0) {
      /* The next iteration writes buffer (it + 1) % TR_OUTBUFS, last stored TR_OUTBUFS - 1 tiles ago: all but
       * the TR_OUTBUFS - 2 newest stores of this thread must have read their source. */
      KBD_ELECT_ONE { kbd_bulk_wait_group_read(TR_OUTBUFS - 2); }
    }
    kbd_sync(); /* out[o] is complete, in[s] read by every warp, the next buffer free */
    if (warp == 0) {
      KBD_ELECT_ONE {
        kbd_tma_store2d(&p.y, out, (int)(t % tiles_n * TR_TN), (int)(t / tiles_n * TR_TM)); /* (row, col) of y */
        kbd_bulk_commit_group();
        if (it + TR_STAGES < mine) tr_load(in, &p.x, &full[s], t + TR_STAGES * kbd_grid_x(), tiles_n);
      }
    }
  }
  /* The stores' global writes must be done before their thread exits (docs/tma.md). */
  if (warp == 0) {
    KBD_ELECT_ONE { kbd_bulk_wait_group(0); }
  }
}
