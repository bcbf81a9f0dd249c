/* pair_mma_kernel.h - the text of pair_mma.cu's kernels, included once per pair M after defining
 *   PM_KERNEL  the kernel's name      PM_M  the pair's M: 256 (each CTA 128 rows of A and D) or 128 (64 rows; the
 *                                           accumulator is Tensor Memory's fold of the CTA's 64 x PM_N, Layout B)
 * Per CTA: warp 0 allocates with its peer and loads this CTA's halves - A rows PM_M p + (PM_M / 2) h.., B rows
 * 64h.. - completing on the even CTA's `full` (the even CTA arms it with both halves' bytes); warp 1 of the even
 * CTA issues the pair MMAs of each stage, frees the stage in both CTAs and commits the tile; warpgroup 1 waits for
 * its own half, reads it 32 columns at a time and releases it to the even CTA.
 */
#define PM_AROWS (PM_M / 2)                      /* rows of A (and of D) per CTA */
#define PM_ACOLS (PM_M == 256 ? PM_N : PM_N / 2) /* Tensor Memory columns of this CTA's half of D */

KBD_KERNEL(PM_KERNEL, 256, pm_params) {
  typedef KBD_STILE(bf16, PM_AROWS, PM_K, KBD_SWIZZLE_128B) pm_a;
  KBD_SHARED_STILE(pm_a, a0);
  KBD_SHARED_STILE(pm_a, a1);
  KBD_SHARED_STILE(pm_b, b0);
  KBD_SHARED_STILE(pm_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  KBD_SHARED(kbd_mbarrier, accfull, 1);
  KBD_SHARED(kbd_mbarrier, accempty, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  const unsigned half = kbd_cluster_ctarank() & 1u, pair = kbd_block_x() / 2u;
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < 2; ++s) {
        kbd_mbarrier_init(&full[s], 1);  /* the even CTA's arrive.expect_tx */
        kbd_mbarrier_init(&empty[s], 1); /* the even CTA's MMA warp's commit, multicast to both */
      }
      kbd_mbarrier_init(accfull, 1);
      kbd_mbarrier_init(accempty, 2 * KBD_ACC_RELEASES(128)); /* both CTAs' epilogue warps */
      kbd_fence_mbarrier_init();                              /* the peer completes bytes and arrives on these */
    }
    if (p.small_alloc)
      kbd_tmem_alloc_pair(tm, 32);
    else
      kbd_tmem_alloc_pair(tm, PM_ACOLS);
  }
  kbd_cluster_sync(); /* both CTAs' barriers and the allocation before any use */

  /* this CTA's half of the pair's PM_M x PM_N: 128 rows (M = 256), or 64 rows folded into 128 lanes (M = 128:
   * lanes 0..63 hold columns 0..PM_N/2-1, lanes 64..127 the rest, of the same 64 rows) */
  KBD_ACC(f32, 128, PM_ACOLS) acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int k = 0; k < p.kt; ++k) {
        const int s = k % 2;
        kbd_mbarrier_wait(&empty[s], ((unsigned)(k / 2) & 1u) ^ 1u);
        if (kbd_cta_pair_leader())
          kbd_mbarrier_arrive_expect_tx(&full[s], 2 * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0)));
        kbd_tma_load_pair2d(s ? a1 : a0, &p.a, &full[s], (int)(PM_M * pair + PM_AROWS * half), k * PM_K);
        kbd_tma_load_pair2d(s ? b1 : b0, &p.b, &full[s], (int)(64u * half), k * PM_K);
      }
    }
  } else if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    for (int k = 0; k < p.kt; ++k) {
      const int s = k % 2;
      kbd_mbarrier_wait(&full[s], (unsigned)(k / 2) & 1u);
      kbd_mma_pair_issue(acc, s ? a1 : a0, s ? b1 : b0, k > 0); /* a's rows pick the pair's M */
      kbd_mma_pair_commit(acc, &empty[s]);
    }
    kbd_mma_pair_commit(acc, accfull);
  } else if (kbd_warpgroup_id() == 1) {
    kbd_acc_wait(acc, accfull, 0);
    const size_t row0 = PM_M * pair + PM_AROWS * half;
    for (int c = 0; c < PM_ACOLS; c += 32) {
      KBD_ACC_TILE(f32, 128, 32) r;
      kbd_acc_load(r, acc, c);
#if PM_M == 256
      kbd_store2d(p.d + row0 * PM_N + (size_t)c, r, 128, 32, PM_N, 0, 0);
#else
      /* row l of the view: D row row0 + l % 64, columns (l / 64) * PM_N/2 + c.. */
      if (p.raw)
        kbd_store2d(p.d + 2u * row0 * (PM_N / 2), r, 128, PM_N / 2, PM_N / 2, 0, c);
      else
        kbd_store2d_folded(p.d + row0 * PM_N, r, PM_N / 2, 64, PM_N, PM_N, 0, c);
#endif
    }
    kbd_acc_release_pair(acc, accempty); /* (one tile: nobody waits; the call shows the multi-tile handshake) */
  }
  kbd_cluster_sync(); /* no Tensor Memory access of either CTA after this */
  if (kbd_warp_id() == 0) {
    if (p.small_alloc)
      kbd_tmem_free_pair(tm, 32);
    else
      kbd_tmem_free_pair(tm, PM_ACOLS);
  }
}

#undef PM_AROWS
#undef PM_ACOLS
