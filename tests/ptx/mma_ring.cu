/* PTX probe for the GEMM main loops' calls (issue 27; tests/ptx/mma_ring.check): kbd_mbarrier_addr_uniform (the
 * barrier's shared address, then a shuffle from lane 0 over the whole warp), and on sm_90a kbd_mma_ring (the stage
 * index shuffled after wgmma.fence, two multiply-adds into the descriptors' low words, the K-steps' wgmmas) with
 * kbd_mma_release_lanes (wait_group 1, then one predicated remote arrive per lane: no branch in the loop); on sm_100a
 * the MMA warp's k-loop in one elected section (kbd_mma_issue_commit_by_desc_elected). */
#include <kbd/tile.h>

typedef struct {
  float *out;
  int kt;
  unsigned mask;
} ptx_ring_params;

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) ring_a;
typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) ring_b;

KBD_KERNEL(ptx_ring, 128, ptx_ring_params) {
  KBD_SHARED_STILE(ring_a, a0);
  KBD_SHARED_STILE(ring_a, a1);
  KBD_SHARED_STILE(ring_b, b0);
  KBD_SHARED_STILE(ring_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  const uint32_t full0 = kbd_mbarrier_addr_uniform(full);
  const uint32_t empty0 = kbd_mbarrier_addr_uniform(empty);
#if KBD_MMA_ARCH == 90
  KBD_ACC(f32, 64, 128) acc;
  const uint64_t ad = kbd_mma_desc_of(a0), bd = kbd_mma_desc_of(b0);
  const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
  const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
  const uint32_t lanes = kbd_mma_lanes((kbd_warp_id() & 3) == 0 ? p.mask : 0u);
  int prev = 0;
  for (int i = 0; i < p.kt; ++i) {
    const int s = i % 2;
    kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
    kbd_mma_ring(acc, ring_a, ring_b, ad, astride, bd, bstride, s, i > 0);
    kbd_mma_release_lanes(acc, empty0 + 8u * (uint32_t)prev, i > 0 ? lanes : 0u);
    prev = s;
  }
  kbd_mma_wait(acc);
  KBD_ACC_TILE(f32, 64, 128) r;
  kbd_acc_load(r, acc, 0);
  kbd_store2d(p.out, r, 64, 128, 128, 0, 0);
#else
  /* the sm_100a MMA warp's k-loop as the GEMM writes it: one elected section around the stage waits and
   * kbd_mma_issue_commit_by_desc_elected (the stage's descriptors by one 64-bit add) */
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) kbd_tmem_alloc(tm, 128);
  kbd_sync();
  if (kbd_warp_id() == 1) {
    KBD_ACC(f32, 64, 128) acc;
    kbd_acc_bind(acc, tm, 0, &full[1]);
    const uint64_t ad = kbd_mma_desc_of(a0), bd = kbd_mma_desc_of(b0);
    const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
    const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
    KBD_ELECT_ONE {
      for (int i = 0; i < p.kt; ++i) {
        const uint32_t s = (uint32_t)i % 2u;
        kbd_mbarrier_wait_at(full0 + 8u * s, (unsigned)(i / 2) & 1u);
        kbd_mma_issue_commit_by_desc_elected(acc, ring_a, ring_b, kbd_mma_desc_add_bytes(ad, (int32_t)s * astride),
                                             kbd_mma_desc_add_bytes(bd, (int32_t)s * bstride), i > 0, empty0 + 8u * s,
                                             p.mask);
      }
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
#endif
}
