/* tma_pipeline.cu - the kernel of examples/tma_pipeline (see tma_pipeline.h and docs/tma.md). */
#include "tma_pipeline.h"

KBD_KERNEL(tp_scale_relu, TP_THREADS, tp_params) {
  KBD_WARP_RANGE(consumers, 0, 4);
  KBD_WARP_RANGE(producer, 4, 1);

  tp_smem l;
  const kbd_smem_plan plan = tp_layout(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);

  if (kbd_scope_contains(producer)) {
    KBD_ELECT_ONE {
      for (int s = 0; s < TP_STAGES; ++s) {
        kbd_mbarrier_init(&full[s], 1);  /* the producer's arrive.expect_tx */
        kbd_mbarrier_init(&empty[s], 4); /* one arrival per consumer warp */
      }
      kbd_tma_prefetch_map(&p.x);
    }
  }
  kbd_sync(); /* the mbarriers are initialised before anyone uses them */

  const long long tiles_c = (p.cols + TP_COLS - 1) / TP_COLS;
  const long long tiles = (p.rows + TP_ROWS - 1) / TP_ROWS * tiles_c;

  if (kbd_scope_contains(producer)) {
    int it = 0;
    for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x(), ++it) {
      const int s = it % TP_STAGES;
      const unsigned parity = (unsigned)(it / TP_STAGES) & 1u;
      tp_tile in = KBD_SMEM_PLAN_STILE(tp_tile, smem, l.in, s);
      /* the consumers released this stage (a fresh barrier's parity 1 counts as released) */
      kbd_mbarrier_wait(&empty[s], parity ^ 1u);
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(in));
        kbd_tma_load2d(in, &p.x, &full[s], (int)(t / tiles_c * TP_ROWS), (int)(t % tiles_c * TP_COLS));
      }
    }
    return;
  }

  /* the consumer warpgroup */
  KBD_TILE(bf16, TP_ROWS, TP_COLS, KBD_WARPGROUP) xb, yb;
  KBD_TILE(f32, TP_ROWS, TP_COLS, KBD_WARPGROUP) v;
  int it = 0;
  for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x(), ++it) {
    const int s = it % TP_STAGES, o = it % TP_OUTBUFS;
    tp_tile in = KBD_SMEM_PLAN_STILE(tp_tile, smem, l.in, s);
    tp_tile out = KBD_SMEM_PLAN_STILE(tp_tile, smem, l.out, o);

    kbd_mbarrier_wait(&full[s], (unsigned)(it / TP_STAGES) & 1u);
    kbd_stile_load(xb, in);
    KBD_ELECT_ONE { kbd_mbarrier_arrive(&empty[s]); } /* the stage is in registers: the producer may refill it */

    kbd_convert(v, xb);
    kbd_mul_s(v, v, p.scale);
    kbd_add_s(v, v, p.shift);
    kbd_max_s(v, v, 0.0f);
    kbd_convert(yb, v);

    /* Output tile o was stored two tiles ago: the thread that issued that store waits until at most the
     * newest group (last tile's) still reads shared memory, and the barrier tells everyone. */
    if (kbd_warp_id() == 0) {
      KBD_ELECT_ONE { kbd_bulk_wait_group_read(TP_OUTBUFS - 1); }
    }
    kbd_scope_sync(consumers);
    kbd_stile_store(out, yb);
    kbd_fence_proxy_async(); /* these generic writes must be visible to the TMA's reads */
    kbd_scope_sync(consumers);
    if (kbd_warp_id() == 0) {
      KBD_ELECT_ONE {
        kbd_tma_store2d(&p.y, out, (int)(t / tiles_c * TP_ROWS), (int)(t % tiles_c * TP_COLS));
        kbd_bulk_commit_group();
      }
    }
  }
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_bulk_wait_group(0); } /* the block's shared memory must outlive the stores */
  }
}
