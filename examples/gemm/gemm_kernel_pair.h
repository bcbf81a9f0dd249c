/* gemm_kernel_pair.h - the sm_100a GEMM on CTA pairs (tcgen05 .cta_group::2; docs/gemm.md "CTA pairs",
 * docs/mma.md). gemm.cu includes it once, for sm_100a and the CPU machine emulating it: bf16 A row-major and B
 * column-major (both K-major tiles), f32 accumulation, the epilogue of the other kernels.
 *
 * Two CTAs of a cluster (ranks 0 and 1: the pair) compute a 256 x 256 tile of D together. Each holds 128 rows of A
 * and 128 rows (N) of B per stage; one MMA per K-step multiplies the pair's 256 x K A by its 256 x K B, the tensor
 * cores of both SMs reading both CTAs' shared memory, and each CTA receives its 128 x 256 half of D in its own
 * Tensor Memory. Against the single-CTA kernel (256 x 128 per CTA, both A tiles and the whole B tile staged) the
 * same output per SM needs 32 KiB of operands per stage instead of 48 KiB.
 *
 *   warp 0       producer (each CTA): its A rows and B rows of each stage, completing on the EVEN CTA's `full`
 *   warp 1       MMA warp (the even CTA only): one pair MMA per K-step into buffer j % 2 (256 columns each); its
 *                commits free a stage in both CTAs and announce a finished tile in both
 *   warps 2, 3   idle (and warp 1 of the odd CTA)
 *   warpgroups 1, 2   epilogue (each CTA): warpgroup g reads columns 128g.. of its CTA's half and releases the
 *                buffer to the even CTA's MMA warp
 */
#include "gemm_epilogue.h"

KBD_KERNEL(gemm_pair_bf16_rc, GEMM_THREADS, gemm_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  KBD_WARP_RANGE(epilogue0, 4, 4);
  KBD_WARP_RANGE(epilogue1, 8, 4);

  gemm_smem l;
  const kbd_smem_plan plan = gemm_layout_pair(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  kbd_mbarrier *accfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accfull);
  kbd_mbarrier *accempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.accempty);
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  const int half = (int)(kbd_cluster_ctarank() & 1u), even = kbd_cta_pair_leader();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < GEMM_PAIR_STAGES; ++s) {
        kbd_mbarrier_init(&full[s], 1);  /* the even CTA's arrive.expect_tx (both CTAs' bytes complete on it) */
        kbd_mbarrier_init(&empty[s], 1); /* the even CTA's MMA warp's commit, multicast to both CTAs */
      }
      for (int b = 0; b < GEMM_ACC_BUFS; ++b) {
        kbd_mbarrier_init(&accfull[b], 1); /* the commit after the tile's last K-step, multicast to both */
        /* every epilogue warp of BOTH CTAs releases the buffer to the even CTA's MMA warp */
        kbd_mbarrier_init(&accempty[b], 2 * KBD_ACC_RELEASES(128 * GEMM_CONSUMERS));
      }
      kbd_tma_prefetch_map(&p.a);
      kbd_tma_prefetch_map(&p.b);
      kbd_fence_mbarrier_init(); /* the peer completes bytes and arrives on these barriers */
    }
    kbd_tmem_alloc_pair(tmem, GEMM_TMEM_COLS_MW); /* with the peer: the same 512 columns in both CTAs */
  }
  kbd_cluster_sync(); /* barriers initialised in both CTAs, Tensor Memory address written */

  const long long tiles_m = (p.m + GEMM_PAIR_BM - 1) / GEMM_PAIR_BM, tiles_n = (p.n + GEMM_PAIR_BN - 1) / GEMM_PAIR_BN;
  const int ktiles = (int)((p.k + GEMM_BK - 1) / GEMM_BK);
  /* both CTAs of a pair walk the same tiles */
  const long long first = kbd_block_x() / 2, step = kbd_grid_x() / 2, tiles = tiles_m * tiles_n;

  if (kbd_warp_id() == 0) {
    /* the producer: this CTA's 128 rows of A (rows 128 * half of the pair's 256) and 128 rows of B (columns
     * 128 * half of the pair's 256: two boxes of the B map's 64 rows) */
    kbd_pipe ps = kbd_pipe_start(GEMM_PAIR_STAGES);
    for (long long t = first; t < tiles; t += step) {
      long long tm, tn;
      gemm_tile_coords(t, tiles_m, tiles_n, &tm, &tn);
      const int m0 = (int)(tm * GEMM_PAIR_BM) + GEMM_WM * half, n0 = (int)(tn * GEMM_PAIR_BN) + GEMM_BN * half;
      for (int kt = 0; kt < ktiles; ++kt, kbd_pipe_advance(&ps)) {
        const int s = ps.stage;
        kbd_mbarrier_wait(&empty[s], ps.parity ^ 1u); /* fresh: parity 1 passes */
        KBD_ELECT_ONE {
          gemm_a_k a = KBD_SMEM_PLAN_STILE(gemm_a_k, smem, l.a, s);
          gemm_b_k b = KBD_SMEM_PLAN_STILE(gemm_b_k, smem, l.b, s);
          if (even) kbd_mbarrier_arrive_expect_tx(&full[s], 2 * (KBD_STILE_BYTES(a) + KBD_STILE_BYTES(b)));
          kbd_tma_load_pair2d(a, &p.a, &full[s], m0, kt * GEMM_BK);
          for (int h = 0; h < 2; ++h) {
            gemm_bh_k bh = KBD_STILE_AT(gemm_bh_k, (unsigned char *)b.p + h * KBD_STILE_BYTES(b) / 2);
            kbd_tma_load_pair2d(bh, &p.b, &full[s], n0 + h * GEMM_BH, kt * GEMM_BK);
          }
        }
      }
    }
  } else if (kbd_warp_id() == 1 && even) {
    /* the MMA warp: tile j into buffer j % 2 once both CTAs' epilogues released what tile j - 2 left there */
    KBD_ACC(f32, GEMM_WM, GEMM_PAIR_BN) acc;        /* this CTA's 128 x 256 half; the MMA writes the peer's too */
    kbd_pipe ps = kbd_pipe_start(GEMM_PAIR_STAGES); /* the ring position: no % and / per k-block */
    /* stage 0's descriptors, moved by the stage (kbd_mma_desc_advance: one multiply-add per operand), the barriers'
     * 32-bit bases and the commit in the issue's elected section (kbd_mma_pair_issue_commit_by_desc): descriptors
     * rebuilt from the tiles' addresses every k-block and a separate kbd_mma_pair_commit were 12 instructions more per
     * k-block (59 -> 47; docs/gemm.md, "Why the loop looks like this"); the whole k-loop one elected section
     * (kbd_mma_pair_issue_commit_by_desc_elected, the waits by the elected thread): a section per k-block was a
     * convergence test, an ELECT and the wait's BSSY/BSYNC per k-block in a kernel ptxas cannot prove converged, with
     * the loop's values moved to uniform registers again in each (45 -> 37) */
    const gemm_a_k a = KBD_SMEM_PLAN_STILE(gemm_a_k, smem, l.a, 0);
    const gemm_b_k b = KBD_SMEM_PLAN_STILE(gemm_b_k, smem, l.b, 0);
    const uint64_t a0 = kbd_mma_desc_of(a), b0 = kbd_mma_desc_of(b);
    const int astride = (int)KBD_SMEM_PLAN_STILE_STRIDE(gemm_a_k), bstride = (int)KBD_SMEM_PLAN_STILE_STRIDE(gemm_b_k);
    const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
    int j = 0;
    for (long long t = first; t < tiles; t += step, ++j) {
      const int buf = j % GEMM_ACC_BUFS;
      kbd_acc_bind(acc, tmem, buf * GEMM_PAIR_BN, &accfull[buf]);
      kbd_mbarrier_wait(&accempty[buf], ((unsigned)(j / GEMM_ACC_BUFS) & 1u) ^ 1u); /* fresh: parity 1 passes */
      /* stage s is free in both CTAs once these MMAs have read it. The first k-block overwrites the accumulator; in
       * the loop every k-block accumulates, a constant there (kt > 0 per k-block was an R2UR and a UISETP). */
      KBD_ELECT_ONE {
        kbd_pipe q = ps; /* the elected thread's ring position; the warp's moves by ktiles after the section */
        if (ktiles > 0) {
          const int s = q.stage;
          kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, q.parity);
          kbd_mma_pair_issue_commit_by_desc_elected(acc, gemm_a_k, gemm_b_k, kbd_mma_desc_advance(a0, s * astride),
                                                    kbd_mma_desc_advance(b0, s * bstride), 0,
                                                    empty0 + 8u * (uint32_t)s);
          kbd_pipe_advance(&q);
        }
        for (int kt = 1; kt < ktiles; ++kt, kbd_pipe_advance(&q)) {
          const int s = q.stage;
          kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, q.parity);
          kbd_mma_pair_issue_commit_by_desc_elected(acc, gemm_a_k, gemm_b_k, kbd_mma_desc_advance(a0, s * astride),
                                                    kbd_mma_desc_advance(b0, s * bstride), 1,
                                                    empty0 + 8u * (uint32_t)s);
        }
      }
      if (ktiles > 0) { /* the warp's ring position: ktiles stages on, the parity flipped once per wrap */
        const unsigned at = (unsigned)ps.stage + (unsigned)ktiles;
        ps.stage = (int)(at % (unsigned)GEMM_PAIR_STAGES);
        ps.parity ^= at / (unsigned)GEMM_PAIR_STAGES & 1u;
      }
      kbd_mma_pair_commit(acc, &accfull[buf]); /* both CTAs' halves are complete */
    }
  } else if (kbd_warpgroup_id() > 0) {
    /* the epilogue warpgroups: D = act(alpha * acc + beta * C + bias), 16 columns at a time, 64 per load */
    const int g = kbd_warpgroup_id() - 1;
    const kbd_scope me = g == 0 ? epilogue0 : epilogue1;
    const int leader = kbd_scope_warp(me) == 0; /* the warp whose elected thread issues TMA stores */
    gemm_acc acc;                               /* columns 128g.. of this CTA's half */
    /* the warpgroup's staging buffers; chunk i of the block's walk goes through buffer sbuf = i % GEMM_EPI_BUFS */
    const gemm_out_f32 stage0 = KBD_SMEM_PLAN_STILE(gemm_out_f32, smem, l.out, g * GEMM_EPI_BUFS);
    unsigned char *stage = (unsigned char *)stage0.p;
    int sbuf = 0;
    int j = 0;
    for (long long t = first; t < tiles; t += step, ++j) {
      long long tm, tn;
      gemm_tile_coords(t, tiles_m, tiles_n, &tm, &tn);
      const int buf = j % GEMM_ACC_BUFS;
      kbd_acc_bind(acc, tmem, buf * GEMM_PAIR_BN + g * GEMM_BN, &accfull[buf]);
      kbd_acc_wait(acc, &accfull[buf], (unsigned)(j / GEMM_ACC_BUFS) & 1u);
      const long long r0 = tm * GEMM_PAIR_BM + GEMM_WM * half, cb = tn * GEMM_PAIR_BN + g * GEMM_BN;
      /* the buffer goes back to the even CTA's MMA warp once the warp's last load of it is done */
      gemm_tmem_epilogue(&acc, &accempty[buf], 1, &p, stage, &sbuf, me, leader, r0, cb);
    }
    if (leader) {
      KBD_ELECT_ONE { kbd_bulk_wait_group(0); } /* shared memory must outlive the stores */
    }
  }
  /* no Tensor Memory access of either CTA, no arrival on a peer's barrier and no load into a peer's stage after
   * this: both CTAs free their halves and exit */
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tmem, GEMM_TMEM_COLS_MW);
#endif
}
