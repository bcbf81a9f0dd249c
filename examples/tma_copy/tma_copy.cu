/* tma_copy.cu - the kernel of examples/tma_copy: y = x through a TMA ring (see tma_copy.h, docs/tma.md).
 *
 * Pacing, per ring stage s (iteration `it` of the block uses stage it % TC_STAGES, and its phase parity is
 * (it / TC_STAGES) & 1):
 *   full[s]   count 1: the producer's arrive.expect_tx, then the load's bytes complete it.
 *   empty[s]  count 1: the one consumer warp that stored the stage arrives once, from its elected lane.
 * Consumer warp c owns the iterations it = c, c + TC_CONSUMERS, ... (so, with TC_STAGES a multiple of
 * TC_CONSUMERS, the stages s = c mod TC_CONSUMERS). Each stage has exactly one consumer, so no consumer
 * waits for another and no stores need electing across warps; TC_CONSUMERS stores can read shared memory
 * at once while the producer keeps the other stages loading.
 */
#include "tma_copy.h"

KBD_KERNEL(tc_copy, TC_THREADS, tc_params) {
  tc_smem l;
  const kbd_smem_plan plan = tc_layout(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  const int warp = kbd_warp_id();

  if (warp == TC_CONSUMERS) {
    KBD_ELECT_ONE {
      for (int s = 0; s < TC_STAGES; ++s) {
        kbd_mbarrier_init(&full[s], 1);  /* the producer's arrive.expect_tx */
        kbd_mbarrier_init(&empty[s], 1); /* the arrival of the stage's one consumer */
      }
      kbd_tma_prefetch_map(&p.x); /* the first load and store do not wait for a descriptor fetch */
      kbd_tma_prefetch_map(&p.y);
    }
  }
  kbd_sync(); /* the mbarriers are initialised before anyone uses them */

  const long long tiles_c = (p.cols + TC_COLS - 1) / TC_COLS;
  const long long tiles = tc_tiles(p.rows, p.cols);
  /* this block's tiles: t = block + it * grid, it = 0 .. mine - 1 */
  const long long mine = kbd_block_x() < tiles ? (tiles - 1 - kbd_block_x()) / kbd_grid_x() + 1 : 0;

  if (warp == TC_CONSUMERS) { /* the producer */
    for (long long it = 0; it < mine; ++it) {
      const int s = (int)(it % TC_STAGES);
      const unsigned parity = (unsigned)(it / TC_STAGES) & 1u;
      const long long t = kbd_block_x() + it * kbd_grid_x();
      tc_tile stage = KBD_SMEM_PLAN_STILE(tc_tile, smem, l.ring, s);
      /* the stage's consumer has released it (a fresh barrier's parity 1 counts as released) */
      kbd_mbarrier_wait(&empty[s], parity ^ 1u);
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(stage));
        kbd_tma_load2d(stage, &p.x, &full[s], (int)(t / tiles_c * TC_ROWS), (int)(t % tiles_c * TC_COLS));
      }
    }
    return; /* its last loads complete on full[] without it */
  }

  /* consumer warp `warp` */
  for (long long it = warp; it < mine; it += TC_CONSUMERS) {
    const int s = (int)(it % TC_STAGES);
    const unsigned parity = (unsigned)(it / TC_STAGES) & 1u;
    const long long t = kbd_block_x() + it * kbd_grid_x();
    tc_tile stage = KBD_SMEM_PLAN_STILE(tc_tile, smem, l.ring, s);
    kbd_mbarrier_wait(&full[s], parity);
    KBD_ELECT_ONE {
      /* No fence.proxy.async: the stage was written by the TMA (async proxy) and is read by the TMA, and no
       * thread wrote it with generic stores - the fence orders generic writes before async-proxy reads, and
       * there are none. The mbarrier wait above orders the load's completion before this issue. */
      kbd_tma_store2d(&p.y, stage, (int)(t / tiles_c * TC_ROWS), (int)(t % tiles_c * TC_COLS));
      kbd_bulk_commit_group();
      /* The TMA reads the stage after the issue returns: only once this thread's group has been read may the
       * producer load the stage again. The global writes may still be in flight; nothing here waits for them. */
      kbd_bulk_wait_group_read(0);
      kbd_mbarrier_arrive(&empty[s]);
    }
  }
  /* The block's end: the last stores' global writes must be done before their thread exits (docs/tma.md; PTX
   * does not promise that an exiting CTA waits for them). Once per consumer warp, after its last tile. */
  KBD_ELECT_ONE { kbd_bulk_wait_group(0); }
}
