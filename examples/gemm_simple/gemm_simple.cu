/* gemm_simple.cu - the kernel of examples/gemm_simple (gemm_simple.h has the block's structure; docs/gemm.md walks
 * through examples/gemm, whose kernels have the same pipeline). One kernel text: the roles differ per arch
 * (KBD_MMA_ARCH: wgmma consumers on sm_90a, an MMA warp and Tensor Memory on sm_100a), the setup, the producer and
 * the epilogue do not. Device code sits under KBD_KERNEL_CODE: nvcc's host pass needs only the launcher. */
#include "gemm_simple.h"

#if KBD_KERNEL_CODE
/* ==== THE EPILOGUE HOOK: the function to change ================================================================
 * y   on entry, the f32 accumulator (A B) of D's rows r0 .. r0 + 127 and columns c0 .. c0 + 15; on return, the
 *     values D gets (the store rounds them to bf16, gs_out_tile's type). Element (r, c) of y is D[r0 + r][c0 + c]:
 *     KBD_MAP(y, y, x, r, c, expr) computes per element with its coordinates, KBD_COLVEC / KBD_ROWVEC hold the
 *     per-column / per-row values of the thread's elements, kbd_load2d reads another M x N tensor (a residual).
 *     Elements past M or N are computed but never stored; masked loads read 0 there.
 * p   gs_params: add the fields the hook needs in gemm_simple.h and set them in main.c.
 * Shipped: D = gelu_tanh(A B + bias[column]), the MLP's first layer in GPT-2. */
typedef KBD_ACC_TILE(f32, GS_WM, GS_EPI_COLS) gs_chunk; /* one epilogue chunk, in registers */
KBD_DEV void gs_epilogue(gs_chunk *y, const gs_params *p, long long r0, long long c0) {
  (void)r0;
  KBD_COLVEC(f32, *y) bias; /* the bias of the columns this thread holds */
  kbd_vec_load(bias, p->bias, c0, p->n);
  kbd_bcast_cols(*y, *y, bias, KBD_OP_ADD);
  kbd_gelu_tanh(*y, *y);
}
/* ============================================================================================================== */

/* The producer warp: for each tile and k-step, wait for a free stage and load two 128-row A tiles and the B tile
 * into it; the TMA zero-fills what lies past M, N or K. Coordinates are (row, col) of each map: (m or n, k). The ring
 * position is a kbd_pipe (stage, parity), as in the consumers: a counter's % and / cost 8 instructions a k-step. */
KBD_DEV void gs_produce(unsigned char *smem, const gs_smem *l, const gs_params *p, kbd_mbarrier *full,
                        kbd_mbarrier *empty, long long tiles_m, long long tiles, int ktiles) {
  kbd_pipe ps = kbd_pipe_start(GS_STAGES);
  for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x()) {
    const int m0 = (int)(t % tiles_m * GS_BM), n0 = (int)(t / tiles_m * GS_BN);
    for (int kt = 0; kt < ktiles; ++kt, kbd_pipe_advance(&ps)) {
      const int s = ps.stage;
      gs_a_tile a0 = KBD_SMEM_PLAN_STILE(gs_a_tile, smem, l->a, 2 * s);
      gs_a_tile a1 = KBD_SMEM_PLAN_STILE(gs_a_tile, smem, l->a, 2 * s + 1);
      gs_b_tile b = KBD_SMEM_PLAN_STILE(gs_b_tile, smem, l->b, s);
      kbd_mbarrier_wait(&empty[s], ps.parity ^ 1u); /* fresh: parity 1 passes */
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], 2 * KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b));
        kbd_tma_load2d(a0, &p->a, &full[s], m0, kt * GS_BK);
        kbd_tma_load2d(a1, &p->a, &full[s], m0 + GS_WM, kt * GS_BK);
        kbd_tma_load2d(b, &p->b, &full[s], n0, kt * GS_BK);
      }
    }
  }
}

/* The epilogue of one warpgroup's 128 x 128 accumulator, 16 columns at a time: the hook, then bf16 into the
 * staging tile and one TMA store (clipped at D's edges). The loop stays rolled: on sm_90a kbd_acc_load reaches the
 * registers of a run-time column through one branch per chunk, on sm_100a it reads Tensor Memory at that column. */
KBD_DEV void gs_epilogue_tile(gs_acc *acc, const gs_params *p, gs_out_tile out, kbd_scope me, long long r0,
                              long long n0) {
  const int leader = kbd_scope_warp(me) == 0; /* its elected thread issues the TMA stores */
  KBD_NO_UNROLL
  for (int c = 0; c < GS_BN; c += GS_EPI_COLS) {
    const long long c0 = n0 + c;
    if (c0 >= p->n) break;
    gs_chunk y;
    KBD_ACC_TILE(bf16, GS_WM, GS_EPI_COLS) yb;
    kbd_acc_load(y, *acc, c);
    gs_epilogue(&y, p, r0, c0);
    kbd_convert(yb, y);
    if (leader) {
      KBD_ELECT_ONE { kbd_bulk_wait_group_read(0); } /* the previous store has read the staging tile */
    }
    kbd_scope_sync(me);
    kbd_stile_store(out, yb);
    kbd_fence_proxy_async(); /* generic-proxy writes, read by the TMA (async proxy) */
    kbd_scope_sync(me);
    if (leader) {
      KBD_ELECT_ONE {
        kbd_tma_store2d(&p->d, out, (int)r0, (int)c0);
        kbd_bulk_commit_group();
      }
    }
  }
}

#if KBD_MMA_ARCH == 100
/* sm_100a, the MMA warp's elected thread: k-block i (counted since the warp's first) waits for its stage, issues its
 * 8 MMAs into acc and commits the stage's release (mask 0: this CTA's barrier). a0, b0: stage 0's descriptors. */
KBD_DEV void gs_mma_kblock(gs_acc2 *acc, uint64_t a0, uint64_t b0, uint32_t full0, uint32_t empty0, uint32_t i,
                           int accumulate) {
  const uint32_t s = i % GS_STAGES;
  kbd_mbarrier_wait_at(full0 + 8u * s, (i / GS_STAGES) & 1u);
  kbd_mma_issue_commit_by_desc_elected(
      *acc, gs_a2_tile, gs_b_tile, kbd_mma_desc_add_bytes(a0, (int32_t)(s * KBD_SMEM_PLAN_STILE_STRIDE(gs_a2_tile))),
      kbd_mma_desc_add_bytes(b0, (int32_t)(s * KBD_SMEM_PLAN_STILE_STRIDE(gs_b_tile))), accumulate, empty0 + 8u * s, 0);
}
#endif
#endif

KBD_KERNEL(gemm_simple, GS_THREADS, gs_params) {
#if KBD_KERNEL_CODE
  KBD_WARP_RANGE(wg1, 4, 4);
  KBD_WARP_RANGE(wg2, 8, 4);
  gs_smem l;
  const kbd_smem_plan plan = gs_layout(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  kbd_mbarrier *accfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accfull);
  kbd_mbarrier *accempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accempty);
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < GS_STAGES; ++s) {
        kbd_mbarrier_init(&full[s], 1); /* the producer's arrive.expect_tx */
        /* sm_90a: one release arrive per consumer warpgroup; sm_100a: the MMA warp's commit */
        kbd_mbarrier_init(&empty[s], KBD_MMA_ARCH == 90 ? 2 : 1);
      }
      for (int b = 0; b < GS_ACC_BUFS; ++b) {
        kbd_mbarrier_init(&accfull[b], 1);                          /* the MMA warp's commit after a tile */
        kbd_mbarrier_init(&accempty[b], KBD_ACC_RELEASES(2 * 128)); /* every epilogue warp */
      }
    }
    kbd_tmem_alloc(tmem, GS_ACC_BUFS * 2 * GS_BN); /* sm_100a: both buffers, 512 columns; nothing on sm_90a */
  }
  kbd_sync(); /* barriers initialised, Tensor Memory address written */

  const long long tiles_m = (p.m + GS_BM - 1) / GS_BM, tiles = tiles_m * ((p.n + GS_BN - 1) / GS_BN);
  const int ktiles = (int)((p.k + GS_BK - 1) / GS_BK);
  const int g = kbd_warpgroup_id() - 1; /* the consumer / epilogue warpgroup: 0 or 1 */
  const kbd_scope me = g == 0 ? wg1 : wg2;
  gs_out_tile out = KBD_SMEM_PLAN_STILE(gs_out_tile, smem, l.out, g < 0 ? 0 : g);
  gs_acc acc;
#if KBD_MMA_ARCH == 90
  if (g < 0) {
    kbd_setmaxnreg_dec(40); /* 40 x 128 + 232 x 256 = 168 x 384: the launch's register budget */
    if (kbd_warp_id() == 0) gs_produce(smem, &l, &p, full, empty, tiles_m, tiles, ktiles);
  } else {
    kbd_setmaxnreg_inc(232);                 /* room for the 128 accumulator registers per thread */
    kbd_acc_bind(acc, tmem, 0, &accfull[0]); /* sm_90a: registers, so this only resets its release state */
    /* The ring named once, before the loop: the stage barriers by one 32-bit shared base plus 8 x stage (a
     * kbd_mbarrier pointer is a 64-bit generic address that ptxas rebuilt and null-tested every k-step), the
     * stage's operands by stage 0's descriptors and the stage (kbd_mma_ring: one multiply-add per operand in
     * uniform registers, where each tile's address was made into a descriptor every k-step). docs/gemm.md,
     * "Start from gemm_simple". */
    const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
    const gs_a_tile a = KBD_SMEM_PLAN_STILE(gs_a_tile, smem, l.a, g); /* stage s: A tile 2 s + g */
    const gs_b_tile b = KBD_SMEM_PLAN_STILE(gs_b_tile, smem, l.b, 0);
    const uint64_t a0 = kbd_mma_desc_of(a), b0 = kbd_mma_desc_of(b);
    const int astride = 2 * (int)KBD_SMEM_PLAN_STILE_STRIDE(gs_a_tile);
    const int bstride = (int)KBD_SMEM_PLAN_STILE_STRIDE(gs_b_tile);
    kbd_pipe ps = kbd_pipe_start(GS_STAGES);
    for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x()) {
      /* the first k-step (accumulate 0, nothing to release yet) before the loop: in the loop the accumulate flag is
       * a constant and the release unconditional, where kt > 0 tests cost a branch and predicate per k-step */
      int prev = ps.stage; /* the stage of the previous k-step */
      kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)prev, ps.parity);
      kbd_mma_ring(acc, gs_a_tile, gs_b_tile, a0, astride, b0, bstride, prev, 0);
      kbd_pipe_advance(&ps);
      for (int kt = 1; kt < ktiles; ++kt, kbd_pipe_advance(&ps)) {
        const int s = ps.stage;
        kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, ps.parity);
        kbd_mma_ring(acc, gs_a_tile, gs_b_tile, a0, astride, b0, bstride, s, 1);
        /* the previous stage is free once its wgmma group is done; this one's stays in flight (mask 0: this CTA) */
        kbd_mma_release_at(acc, empty0 + 8u * (uint32_t)prev, 0);
        prev = s;
      }
      /* every group done (acc readable); frees the last stage: ktiles >= 1, main.c requires K >= 1 */
      kbd_mma_wait_at(acc, empty0 + 8u * (uint32_t)prev, 0);
      gs_epilogue_tile(&acc, &p, out, me, t % tiles_m * GS_BM + g * GS_WM, t / tiles_m * GS_BN);
    }
  }
#else
  if (kbd_warp_id() == 0) {
    gs_produce(smem, &l, &p, full, empty, tiles_m, tiles, ktiles);
  } else if (kbd_warp_id() == 1) {
    /* the MMA warp: tile j into buffer j % 2. Both 128-row A tiles of a stage are adjacent in the ring, laid out as
     * one 256-row tile, and both epilogues' accumulators are adjacent in Tensor Memory: one 256 x 128 accumulator,
     * so one issue builds the descriptors once for all 8 MMAs, and its thread also commits the stage's release.
     * Stage s's operands are stage 0's descriptors moved by s tiles: one 64-bit add, which ptxas does on the
     * register pair before moving it to uniform registers (docs/mma.md). */
    KBD_STATIC_ASSERT((GS_STAGES & (GS_STAGES - 1)) == 0, "gemm_simple: the k-block counter wraps at 2^32 in step "
                                                          "with the ring only for a power-of-two GS_STAGES");
    gs_acc2 acc2;
    const gs_a2_tile a = KBD_SMEM_PLAN_STILE(gs_a2_tile, smem, l.a, 0); /* stage 0 */
    const gs_b_tile b = KBD_SMEM_PLAN_STILE(gs_b_tile, smem, l.b, 0);
    const uint64_t a0 = kbd_mma_desc_of(a), b0 = kbd_mma_desc_of(b);
    const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
    uint32_t kb = 0; /* k-blocks issued since the first tile: the ring position */
    int j = 0;
    for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x(), ++j) {
      const int buf = j % GS_ACC_BUFS;
      kbd_acc_bind(acc2, tmem, buf * 2 * GS_BN, &accfull[buf]);
      kbd_mbarrier_wait(&accempty[buf], ((unsigned)(j / GS_ACC_BUFS) & 1u) ^ 1u); /* tile j - 2 read out */
      /* The tile's whole k-loop is one elected section (docs/mma.md, "One elected section around the sm_100a
       * k-loop"): ptxas cannot prove this warp converged (the other warps' 64-bit tile divisions call a subroutine
       * under per-thread conditions), so an elect.sync per k-block cost a run-time convergence test (BRA.DIV), a
       * BSSY/BSYNC region and R2URs of the loop's values every k-block. The first k-block (accumulate 0) is issued
       * before the loop, so that in the loop the accumulate flag is a constant. ktiles >= 1: main.c requires K >= 1. */
      const uint32_t end = kb + (uint32_t)ktiles;
      KBD_ELECT_ONE {
        gs_mma_kblock(&acc2, a0, b0, full0, empty0, kb, 0);
        for (uint32_t i = kb + 1u; i != end; ++i)
          gs_mma_kblock(&acc2, a0, b0, full0, empty0, i, 1);
      }
      kb = end;                            /* the warp's copy: only the elected thread's loop counted */
      kbd_mma_commit(acc2, &accfull[buf]); /* the tile's accumulators are complete */
    }
  } else if (g >= 0) {
    int j = 0;
    for (long long t = kbd_block_x(); t < tiles; t += kbd_grid_x(), ++j) {
      const int buf = j % GS_ACC_BUFS;
      kbd_acc_bind(acc, tmem, buf * 2 * GS_BN + g * GS_BN, &accfull[buf]);
      kbd_acc_wait(acc, &accfull[buf], (unsigned)(j / GS_ACC_BUFS) & 1u);
      gs_epilogue_tile(&acc, &p, out, me, t % tiles_m * GS_BM + g * GS_WM, t / tiles_m * GS_BN);
      kbd_acc_release(acc, &accempty[buf]); /* every load done: the MMA warp may refill the buffer */
    }
  }
#endif
  if (g >= 0 && kbd_scope_warp(me) == 0) {
    KBD_ELECT_ONE { kbd_bulk_wait_group(0); } /* shared memory must outlive the TMA stores */
  }
  kbd_sync(); /* every Tensor Memory read is done before the columns are freed */
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, GS_ACC_BUFS * 2 * GS_BN);
#endif
}
