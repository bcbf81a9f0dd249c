/* pair_ring.h - the CTA-pair GEMM's 2-stage ring as its even CTA's MMA warp names it
 * (examples/gemm/gemm_kernel_pair.h): the A and B tiles (256 x PN per pair, PK of K per stage; each CTA holds 128 rows
 * of A and PN / 2 rows of B), the kernel's shared memory, and stage 0's operand descriptors and barrier addresses with
 * the strides that move them to stage s. Device code only: test_mma_pair_desc.c (through pair_case.h, on the CPU
 * machine) and tests/ptx/mma_pair_desc.cu (the PTX probe of the same loop) include it.
 */
#ifndef KBD_TEST_PAIR_RING_H
#define KBD_TEST_PAIR_RING_H

#define PN 128 /* the pair's N: each CTA loads PN / 2 rows of B */
#define PK 64  /* K per stage */
typedef KBD_STILE(bf16, 128, PK, KBD_SWIZZLE_128B) pair_a;
typedef KBD_STILE(bf16, PN / 2, PK, KBD_SWIZZLE_128B) pair_b;

/* In the kernel: the ring's shared memory, declared by name - the A and B tiles of stages 0 and 1 (a0, a1, b0, b1) and
 * their barriers (full[2], empty[2]). */
#define PAIR_RING_SHARED()                                                                                             \
  KBD_SHARED_STILE(pair_a, a0);                                                                                        \
  KBD_SHARED_STILE(pair_a, a1);                                                                                        \
  KBD_SHARED_STILE(pair_b, b0);                                                                                        \
  KBD_SHARED_STILE(pair_b, b1);                                                                                        \
  KBD_SHARED(kbd_mbarrier, full, 2);                                                                                   \
  KBD_SHARED(kbd_mbarrier, empty, 2)

/* Stage 0's descriptors and barriers, and what moves them to stage s: the operands by s x their stride
 * (kbd_mma_desc_advance), the barriers by 8 s bytes (32-bit shared addresses, kbd_mbarrier_addr). */
typedef struct pair_ring {
  uint64_t ad, bd;
  int astride, bstride;
  uint32_t full0, empty0;
} pair_ring;

KBD_DEV pair_ring pair_ring_of(pair_a a0, pair_a a1, pair_b b0, pair_b b1, kbd_mbarrier *full, kbd_mbarrier *empty) {
  pair_ring r;
  r.ad = kbd_mma_desc_of(a0);
  r.bd = kbd_mma_desc_of(b0);
  r.astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
  r.bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
  r.full0 = kbd_mbarrier_addr(full);
  r.empty0 = kbd_mbarrier_addr(empty);
  return r;
}

#endif /* KBD_TEST_PAIR_RING_H */
