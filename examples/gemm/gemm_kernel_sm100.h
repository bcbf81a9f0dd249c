/* gemm_kernel_sm100.h - the GEMM kernel for sm_100a (and the CPU machine emulating it): one MMA warp and two
 * accumulator buffers in Tensor Memory, so the epilogue of one tile runs while the tensor cores compute the next
 * (docs/gemm.md, "The sm_100a kernel"; docs/design/mma-warp.md). gemm.cu includes it once, after gemm_variant.h
 * once per operand variant, like gemm_kernel.h: the producer warp and the MMA warp run the variant's functions,
 * picked by a switch on the uniform parameter p.variant (the operand majors are fields of tcgen05's run-time
 * instruction descriptor, but kbd's tiles carry them as types); the epilogue is compiled once. The block shape,
 * the shared-memory plan and the parameters are the same, so the host code does not depend on the arch.
 *
 *   warp 0       producer: TMA loads of A (two 128-row tiles) and B into the 4-stage ring; in a cluster (gemm.h,
 *                gemm_cluster) a column pair shares B (each CTA loads one 64-row half and multicasts it) and a
 *                row pair shares A (each loads one of the two A tiles and multicasts it)
 *   warp 1       MMA warp: for each tile, two 128 x 128 accumulators (one per A half) in buffer t % 2
 *   warps 2, 3   idle
 *   warpgroups 1, 2   epilogue: warpgroup g reads accumulator g of the tile's buffer (its warps' lane quarters
 *                cover the 128 rows), applies alpha, beta C, bias and the activation, stores D with the TMA
 */
#include "gemm_producer.h"

#define GEMM__MMA_WARP_CASE(v, name)                                                                                   \
  case v:                                                                                                              \
    KBD_CAT(name, _mma_warp)(smem, &l, tmem, full, empty, accfull, accempty, &cl, csize, first, step, ctiles, p.k);    \
    break;

KBD_KERNEL(gemm_kernel, GEMM_THREADS, gemm_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  KBD_WARP_RANGE(epilogue0, 4, 4);
  KBD_WARP_RANGE(epilogue1, 8, 4);

  gemm_smem l;
  const kbd_smem_plan plan = gemm_layout(&l, p.variant == GEMM_E4M3_RC);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  kbd_mbarrier *accfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accfull);
  kbd_mbarrier *accempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accempty);
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  const int csize = p.cluster * p.cluster_n;
  const gemm_cluster cl = gemm_cluster_of(p.cluster, p.cluster_n, csize > 1 ? (int)kbd_cluster_ctarank() : 0);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < GEMM_STAGES; ++s) {
        kbd_mbarrier_init(&full[s], 1); /* the producer's arrive.expect_tx */
        /* the MMA warps' commits once the stage's MMAs have read it: this CTA's and its peers', since each
         * writes its share of A or B into this stage */
        kbd_mbarrier_init(&empty[s], (unsigned)cl.npeers);
      }
      for (int b = 0; b < GEMM_ACC_BUFS; ++b) {
        kbd_mbarrier_init(&accfull[b], 1); /* the MMA warp's commit after the tile's last K-step */
        kbd_mbarrier_init(&accempty[b], KBD_ACC_RELEASES(128 * GEMM_CONSUMERS)); /* every epilogue warp */
      }
      kbd_tma_prefetch_map(&p.a);
      kbd_tma_prefetch_map(&p.b);
      kbd_fence_mbarrier_init(); /* the peer arrives on these barriers and multicasts against them */
    }
    kbd_tmem_alloc(tmem, GEMM_TMEM_COLS_MW); /* both buffers: all 512 columns */
  }
  /* barriers initialised (in every CTA of the cluster), Tensor Memory address written */
  if (csize > 1)
    kbd_cluster_sync();
  else
    kbd_sync();

  const long long tiles_m = (p.m + GEMM_BM - 1) / GEMM_BM, tiles_n = (p.n + GEMM_BN - 1) / GEMM_BN;
  /* the cluster's tiles: every CTA of a cluster walks the same sequence (they exchange operands every stage) */
  const long long first = kbd_block_x() / csize, step = kbd_grid_x() / csize;
  const long long ctiles = gemm_cluster_tiles(tiles_m, tiles_n, &cl);

  if (kbd_warp_id() == 0) {
    /* the producer: the same ring walk as the sm_90a kernel (gemm_variant.h) */
    gemm_produce(smem, &l, &p, &cl, full, empty, first, step, ctiles, 0);
  } else if (kbd_warp_id() == 1) {
    /* the MMA warp: two accumulators per tile in buffer j % 2 (gemm_variant.h) */
    switch (p.variant) { GEMM_VARIANTS(GEMM__MMA_WARP_CASE) }
  } else if (kbd_warpgroup_id() > 0) {
    /* the epilogue warpgroups: D = act(alpha * acc + beta * C + bias), 16 columns at a time, 64 per load */
    const int g = kbd_warpgroup_id() - 1;
    const kbd_scope me = g == 0 ? epilogue0 : epilogue1;
    const int leader = kbd_scope_warp(me) == 0; /* the warp whose elected thread issues TMA stores */
    gemm_acc acc;
    /* the warpgroup's staging buffers; chunk i of the block's walk goes through buffer sbuf = i % GEMM_EPI_BUFS */
    const gemm_out_f32 stage0 = KBD_SMEM_PLAN_STILE(gemm_out_f32, smem, l.out, g * GEMM_EPI_BUFS);
    unsigned char *stage = (unsigned char *)stage0.p;
    int sbuf = 0;
    int j = 0;
    for (long long t = first; t < ctiles; t += step, ++j) {
      long long tm, tn;
      gemm_cluster_tile(t, tiles_m, tiles_n, &cl, &tm, &tn);
      const int buf = j % GEMM_ACC_BUFS;
      kbd_acc_bind(acc, tmem, buf * GEMM_CONSUMERS * GEMM_BN + g * GEMM_BN, &accfull[buf]);
      kbd_acc_wait(acc, &accfull[buf], (unsigned)(j / GEMM_ACC_BUFS) & 1u);
      const long long r0 = tm * GEMM_BM + g * GEMM_WM;
      /* the MMA warp may reuse the buffer once the warp's last load of it is done (gemm_epilogue.h) */
      gemm_tmem_epilogue(&acc, &accempty[buf], 0, &p, stage, &sbuf, me, leader, r0, tn * GEMM_BN);
    }
    if (leader) {
      KBD_ELECT_ONE { kbd_bulk_wait_group(0); } /* shared memory must outlive the stores */
    }
  }
  /* every accumulator read is done before the columns are freed; in a cluster, no peer still arrives on this CTA's
   * barriers or multicasts into its shared memory when it exits */
  if (csize > 1)
    kbd_cluster_sync();
  else
    kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, GEMM_TMEM_COLS_MW);
#endif
}
#undef GEMM__MMA_WARP_CASE
