/* PTX probe for CTA-pair MMAs (kbd/mma_pair.h, twin ptx/mma_pair.h) on sm_100a (tests/ptx/mma_pair.check): the
 * kernel of tests/mma/test_mma_pair.c in one stage. Warp 0 allocates with its peer (tcgen05.alloc.cta_group::2)
 * and loads this CTA's halves of A (128 x 64) and B (64 x 64) with cp.async.bulk.tensor .cta_group::2, both
 * completing on the even CTA's barrier (mapa); the even CTA's warp 1 issues the 4 K-steps of the M = 256, N = 128
 * pair MMA and commits to both CTAs (multicast mask); warpgroup 1 reads this CTA's half and releases it to the
 * even CTA. Every cta_group-qualified instruction must be ::2 (ptxas rejects a mix), no wgmma, no spill. */
#include <kbd/tile.h>

typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) pp_a;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) pp_b;

typedef struct {
  kbd_tensor_map ma, mb;
  float *d;
} ptx_pair_params;

KBD_KERNEL(ptx_pair_bf16, 256, ptx_pair_params) {
  KBD_SHARED_STILE(pp_a, a);
  KBD_SHARED_STILE(pp_b, b);
  KBD_SHARED(kbd_mbarrier, full, 1);
  KBD_SHARED(kbd_mbarrier, accfull, 1);
  KBD_SHARED(kbd_mbarrier, accempty, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  const unsigned half = kbd_cluster_ctarank() & 1u;
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(full, 1);
      kbd_mbarrier_init(accfull, 1);
      kbd_mbarrier_init(accempty, 2 * KBD_ACC_RELEASES(128));
      kbd_fence_mbarrier_init();
    }
    kbd_tmem_alloc_pair(tm, 128);
  }
  kbd_cluster_sync();
  KBD_ACC(f32, 128, 128) acc;
  kbd_acc_bind(acc, tm, 0, accfull);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      if (kbd_cta_pair_leader()) kbd_mbarrier_arrive_expect_tx(full, 2u * (KBD_STILE_BYTES(a) + KBD_STILE_BYTES(b)));
      kbd_tma_load_pair(a, &p.ma, full, 0, (int)(128u * half));
      kbd_tma_load_pair(b, &p.mb, full, 0, (int)(64u * half));
    }
  } else if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    kbd_mbarrier_wait(full, 0);
    kbd_mma_pair_issue(acc, a, b, 0);
    kbd_mma_pair_commit(acc, accfull);
  } else if (kbd_warpgroup_id() == 1) {
    kbd_acc_wait(acc, accfull, 0);
    KBD_ACC_TILE(f32, 128, 32) r;
    kbd_acc_load(r, acc, 0);
    kbd_acc_release_pair(acc, accempty);
    kbd_store2d(p.d + (size_t)half * 128u * 32u, r, 128, 32, 32, 0, 0);
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}
