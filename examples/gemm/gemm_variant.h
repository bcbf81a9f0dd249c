/* gemm_variant.h - the parts of the GEMM kernel that depend on the operand variant (gemm.h, gemm_variant): the
 * TMA loads of one stage and its MMAs (the MMA warp's loop on sm_100a). gemm.cu includes it once per variant,
 * after defining
 *   GEMM_VARIANT  the name prefix of the variant's functions (gemm_bf16_rr, ...; GEMM_VARIANTS in gemm.h)
 *   GEMM_A_TILE   the shared tile type of one consumer's A slice (128 x BK; K-major or MN-major)
 *   GEMM_B_TILE   the shared tile type of B (128 x BK, "N x K"; K-major or MN-major)
 *   GEMM_BH_TILE  one 64-row half of it (the TMA box of B; in a cluster column each CTA loads one half, multicast)
 * The producer (gemm_producer.h) and the arch's kernel text (gemm_kernel.h, gemm_kernel_sm100.h), included once
 * after all variants, call them from a switch on p.variant. The tile types are compile-time facts of kbd's tiles
 * (the wgmma transposes are immediates on sm_90a), so each variant has its own loads and MMAs; the rest is shared.
 *
 * The stage's loads (kt: its k-tile): the elected producer thread announces the stage's bytes on this CTA's `full`
 * barrier (every byte lands here, whoever issues the load) and loads its share: alone, the two A tiles and both B
 * halves; in a cluster (gemm.h, gemm_cluster) the CTAs of a cluster row split the A tiles and multicast them along the
 * row, and the CTAs of a cluster column split the B halves and multicast them along the column. A multicast load
 * completes bytes on the barrier at the same offset in every destination CTA, so each peer's `full` barrier counts this
 * CTA's share too.
 */
#if KBD_KERNEL_CODE /* device code: nvcc's host pass skips it (docs/kernels.md) */
#define GEMM_LOAD_STAGE KBD_CAT(GEMM_VARIANT, _load_stage)
/* ga: -1, the stage holds both consumers' A tiles (A slots GEMM_A_SLOT(s, g)); or, for the pingpong consumers
 * (gemm_kernel.h), consumer ga's only (A slot s). In a cluster row the CTA of rank rn loads the A tile of consumer
 * g = rn and multicasts it to the row; in pingpong the one A tile of stage s is loaded by the CTA of rank rn = s % 2,
 * so the two share the loads stage by stage. A slot's writer must not change with the turns: the peer's release of
 * a stage orders its reads only (no release.cluster), so a TMA write from the other CTA after this CTA's own write
 * into the same bytes would be unordered (the CPU machine reports it as a write-after-write race), where one CTA's
 * writes are ordered by its own producer's waits. */
KBD_DEV void GEMM_LOAD_STAGE(unsigned char *smem, const gemm_smem *l, int s, const gemm_params *p,
                             const gemm_cluster *cl, int m0, int n0, int kt, kbd_mbarrier *full, int ga) {
  const int k0 = kt * KBD_COLS(KBD__STILE_OBJ(GEMM_A_TILE));
  /* (row, col) in each map: (k0, m or n) for an MN-major tile (the map's rows are K), (m or n, k0) otherwise */
  const int a_mn = KBD_STILE_MAJOR(KBD__STILE_OBJ(GEMM_A_TILE)) == KBD_SMEM_MN_MAJOR;
  const int b_mn = KBD_STILE_MAJOR(KBD__STILE_OBJ(GEMM_B_TILE)) == KBD_SMEM_MN_MAJOR;
  const int g0 = ga < 0 ? 0 : ga, g1 = ga < 0 ? GEMM_CONSUMERS : ga + 1;
  GEMM_B_TILE b = KBD_SMEM_PLAN_STILE(GEMM_B_TILE, smem, l->b, s);
  kbd_mbarrier_arrive_expect_tx(full, (g1 - g0) * KBD_STILE_BYTES(KBD__STILE_OBJ(GEMM_A_TILE)) + KBD_STILE_BYTES(b));
  /* A: tile g holds rows m0 + g * GEMM_WM (consumer / accumulator g) */
  for (int g = g0; g < g1; ++g) {
    if (cl->cn > 1 && (ga < 0 ? g : s & 1) != cl->rn) continue; /* the row peer loads it (cn is 1 or 2) */
    GEMM_A_TILE a = KBD_SMEM_PLAN_STILE(GEMM_A_TILE, smem, l->a, ga < 0 ? GEMM_A_SLOT(s, g) : s);
    const int mg = m0 + g * GEMM_WM;
    if (cl->cn > 1)
      kbd_tma_load_multicast2d(a, &p->a, full, cl->row, a_mn ? k0 : mg, a_mn ? mg : k0);
    else
      kbd_tma_load2d(a, &p->a, full, a_mn ? k0 : mg, a_mn ? mg : k0);
  }
  /* B: half h holds columns n0 + h * GEMM_BH, the first or second half of the B tile's bytes */
  for (int h = cl->rm; h < 2; h += cl->cm) {
    GEMM_BH_TILE bh = KBD_STILE_AT(GEMM_BH_TILE, (unsigned char *)b.p + h * KBD_STILE_BYTES(b) / 2);
    const int nh = n0 + h * GEMM_BH;
    if (cl->cm > 1)
      kbd_tma_load_multicast2d(bh, &p->b, full, cl->col, b_mn ? k0 : nh, b_mn ? nh : k0);
    else
      kbd_tma_load2d(bh, &p->b, full, b_mn ? k0 : nh, b_mn ? nh : k0);
  }
}

/* K-tiles of the product: BK is 64 bf16 or 128 e4m3 values (one 128-byte swizzle row either way). */
#define GEMM_KTILES KBD_CAT(GEMM_VARIANT, _ktiles)
KBD_DEV int GEMM_KTILES(long long k) {
  const int bk = KBD_COLS(KBD__STILE_OBJ(GEMM_A_TILE));
  return (int)((k + bk - 1) / bk);
}

#if GEMM__TEXT_ARCH == 90
/* sm_90a, one consumer warpgroup g: the main loop of one tile. Each stage's MMAs (kbd_mma_ring: wgmma.fence, the
 * K-steps, commit_group) are issued as soon as it is full; kbd_mma_release_lanes then waits for the PREVIOUS stage's
 * MMAs and frees that stage, while this one's are in flight; after the loop kbd_mma_wait_at frees the last. Why it
 * looks like this (docs/gemm.md, "Why the loop looks like this"):
 *   - one loop per variant, picked once per tile: a switch per stage was a jump table (LDC + BRX) every k-block;
 *   - the operands named by stage 0's descriptors and the stage (kbd_mma_ring: one multiply-add per operand in
 *     uniform registers), where the tiles' addresses were turned into descriptors every k-block (the shared window's
 *     base, the tile address, a broadcast, mask, shift and or per operand: 74 -> 65 non-MMA instructions);
 *   - one release for one CTA and a cluster, its lanes chosen before the loop (kbd_mma_lanes: lane r of the first
 *     warp arrives at rank r, a 1-CTA launch being rank 0 of its own cluster): no test of the release kind, the
 *     leader warp or the lane's bit in the loop, no branch (65 -> 55, and 51 -> 47 for each thread's own lane bit);
 *     a loop per release kind was +0.9 s (55%) of the sm_90a device compile;
 *   - the barriers' bases from kbd_mbarrier_addr_uniform: ptxas rebuilt a plain kbd_mbarrier_addr from the shared
 *     window in every k-block (55 -> 51). */
#define GEMM_MAINLOOP KBD_CAT(GEMM_VARIANT, _mainloop)
/* aslot: stage 0's A tile (GEMM_A_SLOT(0, g), or in pingpong 0); stage s's lies s A tiles further (gemm.h,
 * GEMM_A_SLOT). turn: NULL, or (pingpong) the other consumer's turn barrier, on which every thread arrives once it has
 * issued the tile's last MMAs, before it waits for them: the other consumer's MMAs then queue behind these on the
 * tensor cores instead of waiting for them to finish. */
KBD_DEV void GEMM_MAINLOOP(gemm_acc *acc, unsigned char *smem, const gemm_smem *l, int aslot, int ktiles, kbd_pipe *ps,
                           kbd_mbarrier *full, kbd_mbarrier *empty, const gemm_cluster *cl, kbd_mbarrier *turn) {
  /* the barriers' base addresses kept in registers (kbd_mbarrier_addr_uniform: ptxas rebuilt a plain one from the
   * shared window every k-block) */
  const uint32_t full0 = kbd_mbarrier_addr_uniform(full), empty0 = kbd_mbarrier_addr_uniform(empty);
  /* every CTA that wrote into the stage waits for this one's release: lane r of the warpgroup's first warp arrives
   * at rank r (one CTA: rank 0, itself; cl->peers is its own bit there) */
  const uint32_t lanes = kbd_mma_lanes((kbd_warp_id() & 3) == 0 ? cl->peers : 0u);
  /* the operands' descriptors in stage 0; stage s lies s strides further in both rings (kbd_mma_ring) */
  const GEMM_A_TILE a = KBD_SMEM_PLAN_STILE(GEMM_A_TILE, smem, l->a, aslot);
  const GEMM_B_TILE b = KBD_SMEM_PLAN_STILE(GEMM_B_TILE, smem, l->b, 0);
  const uint64_t a0 = kbd_mma_desc_of(a), b0 = kbd_mma_desc_of(b);
  const int astride = (int)KBD_SMEM_PLAN_STILE_STRIDE(GEMM_A_TILE);
  const int bstride = (int)KBD_SMEM_PLAN_STILE_STRIDE(GEMM_B_TILE);
  int prev = 0; /* the stage of the previous k-block */
  for (int kt = 0; kt < ktiles; ++kt, kbd_pipe_advance(ps)) {
    const int s = ps->stage;
    kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, ps->parity);
    kbd_mma_ring(*acc, GEMM_A_TILE, GEMM_B_TILE, a0, astride, b0, bstride, s, kt > 0);
    /* the previous stage is free in this CTA (and its peers) once its MMAs are done */
    kbd_mma_release_lanes(*acc, empty0 + 8u * (uint32_t)prev, kt > 0 ? lanes : 0u);
    prev = s;
  }
  if (turn) kbd_mbarrier_arrive(turn);
  if (ktiles > 0) kbd_mma_wait_at(*acc, empty0 + 8u * (uint32_t)prev, cl->peers);
}
#else
/* sm_100a, the MMA warp: tile j accumulates into buffer j % 2 once the epilogue has released what tile j - 2 left
 * there; each stage is freed by a commit as soon as its MMAs have read it. */
#define GEMM_MMA_WARP KBD_CAT(GEMM_VARIANT, _mma_warp)
#define GEMM_MMA_KLOOP KBD_CAT(GEMM_VARIANT, _mma_kloop)
#define GEMM__RING_STEP 8u                               /* bytes of one kbd_mbarrier: one k-block */
#define GEMM__RING_BYTES (GEMM__RING_STEP * GEMM_STAGES) /* one pass of the ring */
/* One tile's k-blocks; mc (a constant at each call): the stage is freed in the cluster peers too; *ring: the ring
 * position in bytes of the barrier arrays, 8 per k-block since the warp's first (see GEMM_MMA_WARP). Why it looks like
 * this (docs/gemm.md, "Why the loop looks like this"):
 *   - both consumers' accumulators are one 256-row accumulator (gemm_acc2): tcgen05 takes M = 128 per instruction,
 *     so kbd_mma_issue issues the two 128-row blocks side by side in columns (accumulator g at column g * GEMM_BN of
 *     the buffer, where the epilogue reads it), and both A tiles of a stage are one 256-row tile (GEMM_A2_TILE: the
 *     two 128-row tiles are adjacent in the ring and laid out as one of twice the rows): one issue builds the
 *     descriptors once where an issue per accumulator built them twice (99 -> 71 non-MMA instructions per k-block);
 *   - one loop per release kind, picked once per tile: a test of csize in the loop was 6 instructions per k-block;
 *   - the commit from the issue's elected section (kbd_mma_issue_commit_by_desc, the stage's barrier as a 32-bit
 *     address): a separate kbd_mma_commit was a second elect.sync section (4 instructions per k-block);
 *   - the operands named by stage 0's descriptors moved by the stage (kbd_mma_desc_advance), not rebuilt from the
 *     tile addresses (61 -> 50 on one CTA, 65 -> 54 in a cluster);
 *   - the first k-block (accumulate 0) issued before the loop: in the loop the accumulate predicate is a constant,
 *     where kt > 0 was an R2UR and a UISETP per k-block (50 -> 47, 54 -> 53);
 *   - the ring position one counter of barrier bytes: the barriers' offset is one mask of it, the stages' operands
 *     that offset times a constant, the parity one bit of it; kbd_pipe's stage, compare, two selects and xor were two
 *     instructions more per k-block (47 -> 45, 53 -> 51);
 *   - the cluster's release mask known non-zero (it holds this CTA's own bit): kbd_mma_issue_commit_by_desc's test
 *     of mask 0 (one commit or the multicast one) folds away, where it was a UISETP, the mask's conversion and a
 *     second, predicated commit per k-block (51 -> 47);
 *   - the whole k-loop one elected section (kbd_mma_issue_commit_by_desc_elected; the elected thread waits for the
 *     stages too): ptxas cannot prove this warp converged (the epilogue's divergent code calls a division
 *     subroutine), so a section per k-block tested convergence (BRA.DIV), bracketed the wait (BSSY/BSYNC) and
 *     elected anew every k-block (45 -> 37 on one CTA, 47 -> 40 in a cluster);
 *   - the stage's descriptors one 64-bit add of the stage's offset to stage 0's (kbd_mma_desc_add_bytes), which
 *     ptxas does on the pair (LEA, IADD3.X) before the moves to uniform registers, so that every K-step's descriptor
 *     is one UIADD3.64 of it; stage 0's high word kept apart (kbd_mma_desc_advance) made the first K-step a 32-bit
 *     add, an add with carry and a zero register per operand (37 -> 36, 40 -> 38). */
KBD_DEV void GEMM_MMA_KLOOP(gemm_acc2 *acc, unsigned char *smem, const gemm_smem *l, uint32_t full0, uint32_t empty0,
                            int ktiles, uint32_t *ring, const int mc, const gemm_cluster *cl) {
  const uint32_t peers = mc ? cl->peers : 0u; /* 0: this CTA's barrier only */
  /* gemm_cluster_of puts this CTA's own rank in peers: a non-zero mask lets nvcc drop the multicast commit's mask
   * test (the CPU machine reports a zero mask here) */
  if (mc) kbd_cluster_mask_assume(peers);
  const GEMM_A2_TILE a = KBD_SMEM_PLAN_STILE(GEMM_A2_TILE, smem, l->a, 0);
  const GEMM_B_TILE b = KBD_SMEM_PLAN_STILE(GEMM_B_TILE, smem, l->b, 0);
  const uint64_t a0 = kbd_mma_desc_of(a), b0 = kbd_mma_desc_of(b);
  /* the operands' bytes per byte of barrier offset (stage s: offset 8 s; the strides are multiples of 1 KiB) */
  const int aper = (int)KBD_SMEM_PLAN_STILE_STRIDE(GEMM_A2_TILE) / 8;
  const int bper = (int)KBD_SMEM_PLAN_STILE_STRIDE(GEMM_B_TILE) / 8;
  if (ktiles <= 0) return;
  /* the commit tracks every MMA this thread issued: it frees the stage once they have read it (in a cluster in this
   * CTA and its peers). One elected section around the k-loop: its thread waits for each stage, issues and commits;
   * the tile's commit after it (GEMM_MMA_WARP) elects the same lane, as elect.sync over the same converged warp does
   * every time (ptx-reference 6.3; the per-k-block sections relied on it as well). */
  const uint32_t c0 = *ring, end = c0 + GEMM__RING_STEP * (uint32_t)ktiles;
  KBD_ELECT_ONE {
    uint32_t c = c0;
    {
      const uint32_t o = c % GEMM__RING_BYTES;
      kbd_mbarrier_wait_at(full0 + o, (c / GEMM__RING_BYTES) & 1u);
      kbd_mma_issue_commit_by_desc_elected(
          *acc, GEMM_A2_TILE, GEMM_B_TILE, kbd_mma_desc_add_bytes(a0, (int32_t)(o * (uint32_t)aper)),
          kbd_mma_desc_add_bytes(b0, (int32_t)(o * (uint32_t)bper)), 0, empty0 + o, peers);
    }
    for (c += GEMM__RING_STEP; c != end; c += GEMM__RING_STEP) {
      const uint32_t o = c % GEMM__RING_BYTES;
      kbd_mbarrier_wait_at(full0 + o, (c / GEMM__RING_BYTES) & 1u);
      kbd_mma_issue_commit_by_desc_elected(
          *acc, GEMM_A2_TILE, GEMM_B_TILE, kbd_mma_desc_add_bytes(a0, (int32_t)(o * (uint32_t)aper)),
          kbd_mma_desc_add_bytes(b0, (int32_t)(o * (uint32_t)bper)), 1, empty0 + o, peers);
    }
  }
  *ring = end; /* the warp's copy: only the elected thread's counter moved */
}
KBD_DEV void GEMM_MMA_WARP(unsigned char *smem, const gemm_smem *l, kbd_tmem *tmem, kbd_mbarrier *full,
                           kbd_mbarrier *empty, kbd_mbarrier *accfull, kbd_mbarrier *accempty, const gemm_cluster *cl,
                           int csize, long long first, long long step, long long ctiles, long long k) {
  const int ktiles = GEMM_KTILES(k);
  gemm_acc2 acc;
  /* the ring position: 8 bytes of barrier per k-block since the first (GEMM__RING_STEP), so the stage's barriers lie
   * at offset ring % GEMM__RING_BYTES and its parity is bit log2(GEMM__RING_BYTES): the producer's kbd_pipe sequence.
   * GEMM_STAGES is a power of two, so the count wraps at 2^32 in step with both. */
  KBD_STATIC_ASSERT((GEMM_STAGES & (GEMM_STAGES - 1)) == 0, "gemm: the MMA warp's ring counter needs a power-of-two "
                                                            "GEMM_STAGES");
  uint32_t ring = 0;
  const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
  int j = 0;
  for (long long t = first; t < ctiles; t += step, ++j) {
    const int buf = j % GEMM_ACC_BUFS;
    kbd_acc_bind(acc, tmem, buf * GEMM_CONSUMERS * GEMM_BN, &accfull[buf]);
    kbd_mbarrier_wait(&accempty[buf], ((unsigned)(j / GEMM_ACC_BUFS) & 1u) ^ 1u); /* fresh: parity 1 passes */
    if (csize > 1)
      GEMM_MMA_KLOOP(&acc, smem, l, full0, empty0, ktiles, &ring, 1, cl);
    else
      GEMM_MMA_KLOOP(&acc, smem, l, full0, empty0, ktiles, &ring, 0, cl);
    kbd_mma_commit(acc, &accfull[buf]); /* the tile's accumulators are complete */
  }
}
#endif
#endif
#undef GEMM_LOAD_STAGE
#undef GEMM_KTILES
#undef GEMM_MAINLOOP
#undef GEMM_MMA_WARP
#undef GEMM_MMA_KLOOP
#undef GEMM__RING_STEP
#undef GEMM__RING_BYTES
