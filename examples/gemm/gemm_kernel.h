/* gemm_kernel.h - the sm_90a GEMM kernel, also the CPU machine's when it emulates sm_90a (see gemm.h for the block's
 * structure and docs/gemm.md for a walkthrough; gemm_kernel_sm100.h is the sm_100a kernel, with an MMA warp).
 *
 * gemm.cu includes this file once, after gemm_variant.h once per operand variant (GEMM_VARIANTS, gemm.h): the
 * producer's loads and the consumers' MMAs of a stage are the variant's functions, picked by a switch on the
 * uniform parameter p.variant once per stage; everything else is compiled once. It also compiles for sm_100a (kbd_mma
 * is arch-neutral), where the consumer warpgroups would issue their own tcgen05.mma; gemm.cu builds gemm_kernel_sm100.h
 * there instead. Two consumer schedules, a uniform run-time parameter (p.pingpong): both consumers on every stage of a
 * 256 x 128 tile (cooperative), or each consumer its own 128 rows of the tile, the two in turn (pingpong: docs/gemm.md,
 * "Pingpong consumers"); the same main loops serve both.
 */
#include "gemm_producer.h"

/* Pingpong (p.pingpong, docs/gemm.md "Pingpong consumers"): the ring positions a consumer passes over for the other
 * consumer's half of each tile, and the barrier its turn signal goes to. Test seams only: tests/gemm/
 * test_gemm_pingpong_broken.c defines them wrong before including gemm.cu and requires the CPU machine to report it. */
#ifndef GEMM__PP_SKIP
#define GEMM__PP_SKIP(ktiles) (ktiles)
#endif
#ifndef GEMM__PP_NEXT
#define GEMM__PP_NEXT(g) (1 - (g))
#endif
/* n steps of the ring at once (a pingpong consumer's skip, once per tile) */
KBD_DEV void gemm__pipe_skip(kbd_pipe *ps, int n) {
  const int at = ps->stage + n;
  ps->stage = at % ps->stages;
  ps->parity ^= (uint32_t)(at / ps->stages) & 1u;
}

#define GEMM__KTILES_CASE(v, name)                                                                                     \
  case v:                                                                                                              \
    ktiles = KBD_CAT(name, _ktiles)(p.k);                                                                              \
    break;
#define GEMM__MAINLOOP_CASE(v, name)                                                                                   \
  case v: KBD_CAT(name, _mainloop)(&acc, smem, &l, aslot, ktiles, &ps, full, empty, &cl, next); break;

KBD_KERNEL(gemm_kernel, GEMM_THREADS, gemm_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  KBD_WARP_RANGE(producer, 0, 4);
  KBD_WARP_RANGE(consumer0, 4, 4);
  KBD_WARP_RANGE(consumer1, 8, 4);

  /* pingpong or both consumers on every stage: a uniform parameter, so one kernel text (and one main loop per
   * variant) serves both schedules, and the compile time stays (docs/gemm.md, "Pingpong consumers") */
  const int pp = p.pingpong;
  const int stages = pp ? GEMM_PP_STAGES : GEMM_STAGES;
  gemm_smem l;
  const kbd_smem_plan plan = gemm_layout_of(&l, p.variant == GEMM_E4M3_RC, pp);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  kbd_mbarrier *accbar = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accbar);
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);
  kbd_mbarrier *turn = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.turn);

  const int csize = p.cluster * p.cluster_n;
  const gemm_cluster cl = gemm_cluster_of(p.cluster, p.cluster_n, csize > 1 ? (int)kbd_cluster_ctarank() : 0);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < stages; ++s) {
        kbd_mbarrier_init(&full[s], 1); /* the producer's arrive.expect_tx */
        /* kbd_mma_release: one arrive per consumer warpgroup reading the stage (both, or in pingpong the one whose
         * half it holds), of this CTA and of each peer (each writes its share of A or B into this stage) */
        kbd_mbarrier_init(&empty[s], (unsigned)((pp ? 1 : GEMM_CONSUMERS) * cl.npeers));
      }
      for (int g = 0; g < GEMM_CONSUMERS; ++g) {
        kbd_mbarrier_init(&accbar[g], 1);         /* kbd_mma_wait's commit */
        if (pp) kbd_mbarrier_init(&turn[g], 128); /* every thread of the other consumer, after its last MMA issue */
      }
      kbd_tma_prefetch_map(&p.a);
      kbd_tma_prefetch_map(&p.b);
      kbd_fence_mbarrier_init(); /* the peer arrives on these barriers and multicasts against them */
    }
    kbd_tmem_alloc(tmem, GEMM_TMEM_COLS); /* sm_100a: the two accumulators' columns; nothing on sm_90a */
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

  if (kbd_scope_contains(producer)) {
    kbd_setmaxnreg_dec(
        40); /* the producer only computes addresses: 40 x 128 + 232 x 256 = 168 x 384, the launch budget */
    if (kbd_warp_id() == 0) {
      if (pp)
        gemm_produce(smem, &l, &p, &cl, full, empty, first, step, ctiles, 1);
      else
        gemm_produce(smem, &l, &p, &cl, full, empty, first, step, ctiles, 0);
    }
  } else {
    kbd_setmaxnreg_inc(232); /* room for the 128 accumulator registers per thread on sm_90a */
    const int g = kbd_warpgroup_id() - 1;
    const kbd_scope me = g == 0 ? consumer0 : consumer1;
    const int leader = kbd_scope_warp(me) == 0; /* the warp whose elected thread issues TMA stores */
    gemm_acc acc;
    kbd_acc_bind(acc, tmem, g * GEMM_BN, &accbar[g]);
    /* the warpgroup's staging buffers; chunk i of the block's walk goes through buffer sbuf = i % GEMM_EPI_BUFS */
    const gemm_out_f32 stage0 = KBD_SMEM_PLAN_STILE(gemm_out_f32, smem, l.out, g * GEMM_EPI_BUFS);
    unsigned char *stage = (unsigned char *)stage0.p;
    int sbuf = 0;

    int ktiles = 0;
    switch (p.variant) { GEMM_VARIANTS(GEMM__KTILES_CASE) }
    kbd_pipe ps = kbd_pipe_start(stages); /* the ring position (a counter's % and / cost 8 instructions) */
    /* Both consumers: consumer g's A tile of stage s is A slot g GEMM_STAGES + s (gemm.h, GEMM_A_SLOT). Pingpong: A
     * slot s; the producer loads each tile's top half (consumer 0) and then its bottom half (consumer 1), so the half
     * of the block's i-th tile that consumer g computes occupies ring positions (2i + g) ktiles .. + ktiles - 1, and
     * the consumer passes over the other half's positions. Its turn: it waits on turn[g] before its first MMA of a
     * tile, and the main loop arrives on turn[1 - g] after the last one is issued, so the two main loops take the
     * tensor cores in turn (consumer 0's first wait finds a fresh barrier's parity 1 complete). */
    const int aslot = pp ? 0 : GEMM_A_SLOT(0, g);
    kbd_mbarrier *next = pp ? &turn[GEMM__PP_NEXT(g)] : NULL;
    uint32_t tpar = g == 0 ? 1u : 0u;
    if (pp && g == 1) gemm__pipe_skip(&ps, GEMM__PP_SKIP(ktiles));
    for (long long t = first; t < ctiles; t += step) {
      long long tm, tn;
      gemm_cluster_tile(t, tiles_m, tiles_n, &cl, &tm, &tn);

      if (pp) {
        kbd_mbarrier_wait(&turn[g], tpar);
        tpar ^= 1u;
      }
      /* the main loop of the variant (gemm_variant.h): a uniform branch once per tile */
      switch (p.variant) { GEMM_VARIANTS(GEMM__MAINLOOP_CASE) }
      if (pp) gemm__pipe_skip(&ps, GEMM__PP_SKIP(ktiles));
      kbd_mma_wait(acc);

      /* epilogue, 16 columns at a time: D = act(alpha * acc + beta * C + bias), stored by the TMA from two
       * staging buffers in turn; meanwhile the producer is already filling the ring for this block's next tile */
      const long long r0 = tm * GEMM_BM + g * GEMM_WM;
      /* a rolled loop: its body is compiled once (an unrolled epilogue was half the kernel's compile time); on
       * sm_90a kbd_acc_load reaches the accumulator registers of a run-time column through one branch per
       * chunk, on sm_100a it reads Tensor Memory at that column */
      KBD_NO_UNROLL
      for (int c = 0; c < GEMM_BN; c += GEMM_EPI_COLS) {
        const long long c0 = tn * GEMM_BN + c;
        if (c0 >= p.n) break; /* the rest of the tile is past D's last column */
        gemm_chunk y;
        kbd_acc_load(y, acc, c);
        gemm_chunk_math(&y, &p, r0, c0);

        gemm_chunk_store(&y, &p, stage, &sbuf, me, leader, r0, c0);
      }
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
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, GEMM_TMEM_COLS);
#endif
}
#undef GEMM__KTILES_CASE
#undef GEMM__MAINLOOP_CASE
