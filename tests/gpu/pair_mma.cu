/* pair_mma.cu - one M = 256 (pm_kernel) or M = 128 (pm128_kernel) x N = 128 tile per CTA pair with tcgen05
 * .cta_group::2 (kbd/mma_pair.h), through a 2-stage TMA ring: the device test of the pair calls
 * (gpu_pair_mma_sm100a), the same kernels on the CPU machine (pair_mma_cpu), and the PTX/SASS probe
 * (tests/ptx/mma_pair.check).
 *
 *   warp 0 (each CTA)   allocates with its peer; loads this CTA's halves - A rows 256p + 128h.., B rows 64h.. -
 *                       completing on the even CTA's `full` (the even CTA arms it with both halves' bytes)
 *   warp 1 (even CTA)   issues the pair MMAs of each stage, frees the stage in both CTAs, commits the tile
 *   warpgroup 1 (each)  waits for its own half, reads it 32 columns at a time and releases it to the even CTA
 * pm128_kernel is the same with 64 rows of A per CTA: its accumulator is KBD_ACC(f32, 128, PM_N / 2), Tensor
 * Memory's fold of the CTA's 64 x PM_N half (Layout B), and the epilogue stores each view with kbd_store2d_folded.
 * Only sm_100a has CTA pairs: the program is built for sm_100a (and the CPU) only.
 */
#include "pair_mma.h"

typedef KBD_STILE(bf16, 128, PM_K, KBD_SWIZZLE_128B) pm_a;
typedef KBD_STILE(bf16, PM_N / 2, PM_K, KBD_SWIZZLE_128B) pm_b;

KBD_KERNEL(pm_kernel, 256, pm_params) {
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
    kbd_tmem_alloc_pair(tm, 128);
  }
  kbd_cluster_sync(); /* both CTAs' barriers and the allocation before any use */

  KBD_ACC(f32, 128, PM_N) acc; /* this CTA's 128 rows of the pair's 256 x PM_N */
  kbd_acc_bind(acc, tm, 0, accfull);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int k = 0; k < p.kt; ++k) {
        const int s = k % 2;
        kbd_mbarrier_wait(&empty[s], ((unsigned)(k / 2) & 1u) ^ 1u);
        if (kbd_cta_pair_leader())
          kbd_mbarrier_arrive_expect_tx(&full[s], 2 * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0)));
        kbd_tma_load_pair(s ? a1 : a0, &p.a, &full[s], k * PM_K, (int)(256u * pair + 128u * half));
        kbd_tma_load_pair(s ? b1 : b0, &p.b, &full[s], k * PM_K, (int)(64u * half));
      }
    }
  } else if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    for (int k = 0; k < p.kt; ++k) {
      const int s = k % 2;
      kbd_mbarrier_wait(&full[s], (unsigned)(k / 2) & 1u);
      kbd_mma_pair_issue(acc, s ? a1 : a0, s ? b1 : b0, k > 0);
      kbd_mma_pair_commit(acc, &empty[s]);
    }
    kbd_mma_pair_commit(acc, accfull);
  } else if (kbd_warpgroup_id() == 1) {
    kbd_acc_wait(acc, accfull, 0);
    const size_t row0 = 256u * pair + 128u * half;
    for (int c = 0; c < PM_N; c += 32) {
      KBD_ACC_TILE(f32, 128, 32) r;
      kbd_acc_load(r, acc, c);
      kbd_store2d(p.d + row0 * PM_N + (size_t)c, r, 128, 32, PM_N, 0, 0);
    }
    kbd_acc_release_pair(acc, accempty); /* (one tile: nobody waits; the call shows the multi-tile handshake) */
  }
  kbd_cluster_sync(); /* no Tensor Memory access of either CTA after this */
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}

typedef KBD_STILE(bf16, 64, PM_K, KBD_SWIZZLE_128B) pm_a64;

KBD_KERNEL(pm128_kernel, 256, pm_params) {
  KBD_SHARED_STILE(pm_a64, a0);
  KBD_SHARED_STILE(pm_a64, a1);
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
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], 1);
      }
      kbd_mbarrier_init(accfull, 1);
      kbd_mbarrier_init(accempty, 2 * KBD_ACC_RELEASES(128));
      kbd_fence_mbarrier_init();
    }
    kbd_tmem_alloc_pair(tm, 64);
  }
  kbd_cluster_sync();

  /* this CTA's 64 rows of the pair's 128 x PM_N, folded: lanes 0..63 hold columns 0..63, lanes 64..127 columns
   * 64..127 of the same 64 rows */
  KBD_ACC(f32, 128, PM_N / 2) acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int k = 0; k < p.kt; ++k) {
        const int s = k % 2;
        kbd_mbarrier_wait(&empty[s], ((unsigned)(k / 2) & 1u) ^ 1u);
        if (kbd_cta_pair_leader())
          kbd_mbarrier_arrive_expect_tx(&full[s], 2 * (KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b0)));
        kbd_tma_load_pair(s ? a1 : a0, &p.a, &full[s], k * PM_K, (int)(128u * pair + 64u * half));
        kbd_tma_load_pair(s ? b1 : b0, &p.b, &full[s], k * PM_K, (int)(64u * half));
      }
    }
  } else if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    for (int k = 0; k < p.kt; ++k) {
      const int s = k % 2;
      kbd_mbarrier_wait(&full[s], (unsigned)(k / 2) & 1u);
      kbd_mma_pair_issue(acc, s ? a1 : a0, s ? b1 : b0, k > 0); /* a has 64 rows: M = 128 across the pair */
      kbd_mma_pair_commit(acc, &empty[s]);
    }
    kbd_mma_pair_commit(acc, accfull);
  } else if (kbd_warpgroup_id() == 1) {
    kbd_acc_wait(acc, accfull, 0);
    const size_t row0 = 128u * pair + 64u * half;
    for (int c = 0; c < PM_N / 2; c += 32) {
      KBD_ACC_TILE(f32, 128, 32) r; /* row l: D row row0 + l % 64, columns (l / 64) * 64 + c.. */
      kbd_acc_load(r, acc, c);
      if (p.raw)
        kbd_store2d(p.d + 2u * row0 * (PM_N / 2), r, 128, PM_N / 2, PM_N / 2, 0, c);
      else
        kbd_store2d_folded(p.d + row0 * PM_N, r, PM_N / 2, 64, PM_N, PM_N, 0, c);
    }
    kbd_acc_release_pair(acc, accempty);
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 64);
}
