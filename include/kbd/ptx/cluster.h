/* kbd/ptx/cluster.h - thread-block clusters (GPU twin of cpu/cluster.h): the cluster's special registers, the
 * cluster barrier, mapa into a peer CTA's shared memory, a peer's mbarrier (releasing, or handing back reads),
 * multicast TMA loads. sm_90+ (both
 * kbd targets); ptx-reference §1.5-1.6, §2.1, §6.5. */
#ifndef KBD_PTX_CLUSTER_H
#define KBD_PTX_CLUSTER_H

#include "mbar.h"
#include "tma.h"

#if KBD_MODE_CUDA

/* Special registers (PTX ISA 7.8, sm_90). Not volatile: constant for the thread, so nvcc may hoist and merge
 * them like %ctaid. */
KBD_DEV unsigned kbd_hw_cluster_ctarank(void) {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_nctarank(void) {
  unsigned r;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_id_x(void) {
  unsigned r;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_id_y(void) {
  unsigned r;
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_id_z(void) {
  unsigned r;
  asm("mov.u32 %0, %%clusterid.z;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_dim_x(void) {
  unsigned r;
  asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_dim_y(void) {
  unsigned r;
  asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(r));
  return r;
}
KBD_DEV unsigned kbd_hw_cluster_dim_z(void) {
  unsigned r;
  asm("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(r));
  return r;
}

/* barrier.cluster.arrive.release.aligned / .relaxed.aligned; barrier.cluster.wait.acquire.aligned (PTX ISA 8.0,
 * sm_90). .aligned: every thread of the warp executes it - kbd calls it from warp-uniform code only. The
 * relaxed arrive drops the release (nothing this thread wrote is published) for a barrier that only paces. */
KBD_DEV void kbd_hw_cluster_arrive(int release, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  if (release)
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  else
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
KBD_DEV void kbd_hw_cluster_wait(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* No instruction: a promise to the compiler that a multicast mask (bit r = cluster rank r) is not 0, so a branch on
 * mask 0 in the code after it (kbd_mma_issue_commit_by_desc's one commit or the multicast one) folds away. A macro,
 * not a function: nvcc drops a __builtin_unreachable() inside an inlined function before the caller's compare of the
 * mask meets it (the caller keeps its test, checked on sm_100a PTX), where written in the caller's body it folds. A
 * mask of 0 reaching it would be undefined behaviour on the GPU; the CPU twin reports it at the caller's line. */
#define KBD_HW_CLUSTER_MASK_ASSUME(mask, what, file, line)                                                             \
  do {                                                                                                                 \
    (void)(what), (void)(file), (void)(line);                                                                          \
    if ((mask) == 0u) __builtin_unreachable();                                                                         \
  } while (0)

/* mapa.u64 d, a, rank (PTX ISA 7.8, sm_90): the generic address of the same shared-memory location in the CTA
 * of cluster rank `rank`; generic ld/st through it reach that CTA's shared memory (distributed shared memory).
 * Not volatile: a pure address computation. */
KBD_DEV void *kbd_hw_cluster_map(const void *p, unsigned rank, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  unsigned long long r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return (void *)r;
}
/* Scalar accesses through such an address are plain generic loads and stores: nothing to check on the GPU. */
KBD_DEV void kbd_hw_dsmem_read(const void *p, size_t bytes, int esize, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)esize, (void)what, KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_dsmem_write(const void *p, size_t bytes, int esize, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)esize, (void)what, KBD_SITE_UNUSED;
}

/* A write through a pointer that may be global or shared memory: a plain generic store; nothing to check. */
KBD_DEV void kbd_hw_mem_write(void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)what, KBD_SITE_UNUSED;
}

/* mapa.shared::cluster.u32 + mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote], count (PTX ISA
 * 8.0, sm_90; ptx-reference §1.6): arrivals on the barrier at the same offset in CTA `rank`. A remote barrier
 * takes arrivals only (the result must be the sink `_`); waits stay on the own CTA's barriers. */
KBD_DEV void kbd_hw_mbar_arrive_cluster(uint64_t *bar, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(kbd_ptx_smem_u32(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(remote), "r"(count) : "memory");
}

/* mapa.shared::cluster.u32 + mbarrier.arrive.shared::cluster.b64 _, [remote], count (PTX ISA 8.0, sm_90; no .sem:
 * .release at .cta scope, PTX ISA 9.7.13.15.13): the same arrivals, for handing back a buffer this thread only READ
 * and whose reads it waited for (a stage after wgmma.wait_group; docs/design/read-release.md). ptxas emits the bare
 * SYNCS.ARRIVE.TRANS64.RED, where .release.cluster costs MEMBAR.ALL.GPU first: nothing to publish, so no fence.
 * CUTLASS's ClusterBarrier::arrive(cta_id) is this form. Data written for a peer needs kbd_hw_mbar_arrive_cluster. */
KBD_DEV void kbd_hw_mbar_arrive_cluster_reads(uint64_t *bar, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(kbd_ptx_smem_u32(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0], %1;" ::"r"(remote), "r"(count) : "memory");
}

/* cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
 * [dst], [map, {c}], [mbar], mask (PTX ISA 8.0, sm_90; ptx-reference §2.1): the box lands at dst's offset in
 * every CTA whose bit (cluster rank) is set in the 16-bit mask, and each of them receives the complete-tx on
 * its barrier at mbar's offset. rank is a constant at every kbd call site, so the switch folds away. */
#define KBD__TMA_MC(dims, coords, ...)                                                                                 \
  asm volatile("cp.async.bulk.tensor." dims ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::"    \
               "cluster [%0], [%1, " coords "], [%2], %3;" ::"r"(d),                                                   \
               "l"(map), "r"(b), "h"(mask), __VA_ARGS__                                                                \
               : "memory")
KBD_DEV void kbd_hw_tma_load_multicast(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle,
                                       const kbd_tensor_map *map, uint64_t *bar, int rank, uint16_t mask, int32_t c0,
                                       int32_t c1, int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  (void)line_bytes, (void)lines, (void)swizzle, KBD_SITE_UNUSED;
  const uint32_t d = kbd_ptx_smem_u32(dst), b = kbd_ptx_smem_u32(bar);
  switch (rank) {
  case 1: KBD__TMA_MC("1d", "{%4}", "r"(c0)); break;
  case 2: KBD__TMA_MC("2d", "{%4, %5}", "r"(c0), "r"(c1)); break;
  case 3: KBD__TMA_MC("3d", "{%4, %5, %6}", "r"(c0), "r"(c1), "r"(c2)); break;
  case 4: KBD__TMA_MC("4d", "{%4, %5, %6, %7}", "r"(c0), "r"(c1), "r"(c2), "r"(c3)); break;
  default: KBD__TMA_MC("5d", "{%4, %5, %6, %7, %8}", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)); break;
  }
}
#undef KBD__TMA_MC

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_CLUSTER_H */
