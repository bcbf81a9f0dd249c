/* PTX probe for kbd_mma_pair_issue_commit_by_desc (kbd/mma_pair.h; tests/ptx/mma_pair_desc.check), the CTA-pair GEMM's
 * MMA-warp call: over a 2-stage ring, the even CTA's MMA warp names each stage's operands by stage 0's descriptors
 * moved by the stage (kbd_mma_desc_advance) and the stage's barrier by its 32-bit shared address, so per k-block one
 * elected section holds the 4 K-steps' tcgen05.mma.cta_group::2 and the multicast commit to that address. */
#include <kbd/tile.h>

#include "../mma/pair_ring.h" /* the ring as tests/mma/test_mma_pair_desc.c runs it on the CPU machine */

typedef struct {
  int kt;
} ptx_pair_desc_params;

KBD_KERNEL(ptx_pair_desc, 128, ptx_pair_desc_params) {
  PAIR_RING_SHARED();
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) kbd_tmem_alloc_pair(tm, 128);
  kbd_cluster_sync();
  KBD_ACC(f32, 128, PN) acc;
  kbd_acc_bind(acc, tm, 0, &empty[0]);
  if (kbd_warp_id() == 1 && kbd_cta_pair_leader()) {
    const pair_ring r = pair_ring_of(a0, a1, b0, b1, full, empty);
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait_at(r.full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
      kbd_mma_pair_issue_commit_by_desc(acc, pair_a, pair_b, kbd_mma_desc_advance(r.ad, s * r.astride),
                                        kbd_mma_desc_advance(r.bd, s * r.bstride), i > 0, r.empty0 + 8u * (uint32_t)s);
    }
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free_pair(tm, 128);
}
