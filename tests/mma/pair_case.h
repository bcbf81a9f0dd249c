/* pair_case.h - the CTA-pair GEMM of test_mma_pair.c and test_mma_pair_desc.c (kbd/mma_pair.h, tcgen05
 * .cta_group::2) on the CPU machine emulating sm_100a: the kernels' parameters, the parts of the kernel both write
 * the same way (the shared memory, the barriers' initialisation, warp 0's loads, warpgroup 1's epilogue) and the
 * runner; the tiles and the ring are pair_ring.h's.
 *
 * Per pair: D (256 x PN) = A (256 x K) B^T for `tiles` output tiles, through one 128-column accumulator per CTA.
 * Per CTA: warp 0 loads this CTA's halves (A rows 128h.., B rows 64h..) through a 2-stage ring with
 * kbd_tma_load_pair2d, completing on the even CTA's `full`, which the even CTA arms with both halves' bytes; the even
 * CTA's warp 1 issues the pair MMAs (each test its own way); warpgroup 1 of each CTA waits for its half (`accfull`),
 * reads it and releases it to the issuer (kbd_acc_release_pair on the even CTA's `accempty`, which counts the 8
 * epilogue warps of the pair). Values are small multiples of 1/4: the results are exact (pipe_case.h).
 * Include after cmocka.h.
 */
#ifndef KBD_TEST_PAIR_CASE_H
#define KBD_TEST_PAIR_CASE_H

#include "pair_ring.h"
#include "pipe_case.h"

typedef KBD_ACC(f32, 128, PN) pair_acc;

typedef struct pair_params {
  kbd_tensor_map ma, mb;
  float *d;
  int tiles, kt, brk;
} pair_params;

/* In the kernel: its shared memory, declared by name - the ring's (PAIR_RING_SHARED: a0, a1, b0, b1, full[2],
 * empty[2]), the accumulator's barriers (accfull, accempty) and the Tensor Memory address (tm). */
#define PAIR_SHARED()                                                                                                  \
  PAIR_RING_SHARED();                                                                                                  \
  KBD_SHARED(kbd_mbarrier, accfull, 1);                                                                                \
  KBD_SHARED(kbd_mbarrier, accempty, 1);                                                                               \
  KBD_SHARED(kbd_tmem, tm, 1)

/* Warp 0's elected thread: the ring's barriers (one arrival each: the even CTA's arm, the commit), the
 * accumulator's (accfull: the commit; accempty: the pair's 8 epilogue warps), published to the cluster. */
KBD_DEV void pair_init_barriers(kbd_mbarrier *full, kbd_mbarrier *empty, kbd_mbarrier *accfull,
                                kbd_mbarrier *accempty) {
  KBD_ELECT_ONE {
    for (int s = 0; s < 2; ++s) {
      kbd_mbarrier_init(&full[s], 1);
      kbd_mbarrier_init(&empty[s], 1);
    }
    kbd_mbarrier_init(accfull, 1);
    kbd_mbarrier_init(accempty, 2 * KBD_ACC_RELEASES(128));
    kbd_fence_mbarrier_init();
  }
}

/* Warp 0: this CTA's halves of every k-block of every tile into the ring; the even CTA arms `full` with `expect`
 * bytes (both halves: 2 x (A + B) tile bytes). */
KBD_DEV void pair_produce(const pair_params *p, pair_a a0, pair_a a1, pair_b b0, pair_b b1, kbd_mbarrier *full,
                          kbd_mbarrier *empty, uint32_t expect) {
  const unsigned rank = kbd_cluster_ctarank(), half = rank & 1u, pair = rank / 2u;
  KBD_ELECT_ONE {
    for (int i = 0; i < p->tiles * p->kt; ++i) {
      const int s = i % 2, t = i / p->kt, k = i % p->kt;
      kbd_mbarrier_wait(&empty[s], ((unsigned)(i / 2) & 1u) ^ 1u);
      if (kbd_cta_pair_leader()) kbd_mbarrier_arrive_expect_tx(&full[s], expect);
      kbd_tma_load_pair2d(s ? a1 : a0, &p->ma, &full[s],
                          (int)((pair * (unsigned)p->tiles + (unsigned)t) * 256u + 128u * half), k * PK);
      kbd_tma_load_pair2d(s ? b1 : b0, &p->mb, &full[s], (int)(64u * half), k * PK);
    }
  }
}

/* Warpgroup 1: per tile, this CTA's half of D out of Tensor Memory into p->d, the accumulator released to the
 * issuer after the read (`release_first`: before it, a broken epilogue). */
KBD_DEV void pair_epilogue(const pair_params *p, pair_acc *acc, kbd_mbarrier *accfull, kbd_mbarrier *accempty,
                           int release_first) {
  const unsigned rank = kbd_cluster_ctarank(), half = rank & 1u, pair = rank / 2u;
  for (int t = 0; t < p->tiles; ++t) {
    kbd_acc_wait(*acc, accfull, (unsigned)t & 1u);
    if (release_first) kbd_acc_release_pair(*acc, accempty);
    KBD_ACC_TILE(f32, 128, PN) r;
    kbd_acc_load(r, *acc, 0);
    if (!release_first) kbd_acc_release_pair(*acc, accempty);
    const size_t row0 = ((size_t)(pair * (unsigned)p->tiles + (unsigned)t) * 256u + 128u * half);
    kbd_store2d(p->d + row0 * PN, r, 128, PN, PN, 0, 0);
  }
}

typedef kbd_status (*pair_kernel)(kbd_launch_cfg, pair_params);

/* `pairs` pairs in one cluster of 2 * pairs CTAs, each computing `tiles` 256 x PN tiles over kt * PK of K.
 * Returns the status and, when it ran, checks every element (exact). */
static inline kbd_status pair_run(pair_kernel kernel, int pairs, int tiles, int kt, int brk) {
  pc_gemm g;
  pair_params p;
  memset(&p, 0, sizeof p);
  pc_setup(&g, pairs * tiles * 256, PN, kt * PK, &p.ma, 128, &p.mb, PN / 2, PK);
  p.d = g.dd;
  p.tiles = tiles;
  p.kt = kt;
  p.brk = brk;
  return pc_finish(&g, kernel(kbd_cfg_cluster(kbd_cfg_1d((unsigned)(2 * pairs)), (unsigned)(2 * pairs), 1, 1), p));
}

#endif /* KBD_TEST_PAIR_CASE_H */
