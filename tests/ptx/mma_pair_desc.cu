/* PTX probe for kbd_mma_pair_issue_commit_by_desc (kbd/mma_pair.h; tests/ptx/mma_pair_desc.check), the CTA-pair GEMM's
 * MMA-warp call: over a 2-stage ring, the even CTA's MMA warp names each stage's operands by stage 0's descriptors
 * moved by the stage (kbd_mma_desc_advance) and the stage's barrier by its 32-bit shared address, so per k-block one
 * elected section holds the 4 K-steps' tcgen05.mma.cta_group::2 and the multicast commit to that address. */
#include <kbd/tile.h>

typedef struct {
  int kt;
} ptx_pair_desc_params;

typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) pd_a;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) pd_b;

KBD_KERNEL(ptx_pair_desc, 128, ptx_pair_desc_params) {
  KBD_SHARED_STILE(pd_a, a0);
  KBD_SHARED_STILE(pd_a, a1);
  KBD_SHARED_STILE(pd_b, b0);
  KBD_SHARED_STILE(pd_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) kbd_tmem_alloc_pair(tm, 128);
  kbd_cluster_sync();
  KBD_ACC(f32, 128, 128) acc;
  kbd_acc_bind(acc, tm, 0, &empty[0]);
  if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    const uint64_t ad = kbd_mma_desc_of(a0), bd = kbd_mma_desc_of(b0);
    const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
    const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
    const uint32_t full0 = kbd_mbarrier_addr(full), empty0 = kbd_mbarrier_addr(empty);
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
      kbd_mma_pair_issue_commit_by_desc(acc, pd_a, pd_b, kbd_mma_desc_advance(ad, s * astride),
                                        kbd_mma_desc_advance(bd, s * bstride), i > 0, empty0 + 8u * (uint32_t)s);
    }
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}
