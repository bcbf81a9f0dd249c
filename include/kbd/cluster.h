/* kbd/cluster.h - thread-block clusters (sm_90+): CTAs that run together, wait on one barrier, read and write
 * each other's shared memory, and share TMA loads.
 *
 *   host:  kbd_cfg_cluster(cfg, x, y, z)           launch the grid as clusters of x*y*z CTAs (kbd/grid.h)
 *
 *   kbd_cluster_ctarank()                  this CTA's rank in its cluster, 0 .. kbd_cluster_size()-1
 *   kbd_cluster_size()                     CTAs per cluster
 *   kbd_cluster_id_x() / _y() / _z()       the cluster's index in the grid of clusters
 *   kbd_cluster_dim_x() / _y() / _z()      the cluster's shape
 *   kbd_cluster_sync()                     barrier of every thread of the cluster (arrive.release +
 *                                          wait.acquire): writes before it, in any CTA, are visible after it
 *   kbd_cluster_arrive() / kbd_cluster_wait()      the two halves, to overlap work between them
 *   kbd_cluster_arrive_relaxed()           an arrival that publishes nothing (pacing only)
 *   kbd_cluster_map(p, rank)               p (this CTA's shared memory) at the same offset in CTA `rank`:
 *                                          read and write it with kbd_ld_shared / kbd_st_shared
 *   kbd_mbarrier_arrive_cluster(bar, rank)         one arrival per executing thread on the mbarrier at bar's
 *                                          offset in CTA `rank` (release at cluster scope)
 *   kbd_mbarrier_arrive_cluster_reads(bar, rank)   the same arrival without the release (no GPU-scope fence): it
 *                                          hands back a buffer the thread only READ, after waiting for those
 *                                          reads (kbd_mma_release_mc's stage release); a peer that overwrites a
 *                                          byte this CTA wrote before it is a race (docs/design/read-release.md)
 *   kbd_cluster_mask_assume(mask)          a promise that the multicast mask `mask` is not 0: on the GPU no
 *                                          instruction, only __builtin_unreachable() for mask 0, so tests of mask 0
 *                                          after it fold away (the sm_100a GEMM's MMA loop); on the CPU machine a
 *                                          mask of 0 is KBD_ERR_INVALID at this line, naming the expression
 *   kbd_tma_load_multicast2d(tile, &map, &bar, mask, row, col)   (1d..5d as kbd_tma_load2d)
 *                                          kbd_tma_load2d into `tile`'s offset of EVERY CTA whose bit is set in
 *                                          mask (bit r = rank r); each completes the bytes on its own barrier
 *                                          at bar's offset, which must expect them
 *
 * Rules (each a CPU-mode diagnostic with file:line):
 *   - the cluster barrier is warp-uniform code every warp of every CTA reaches, once per phase: arrive, then
 *     wait; a CTA that exits instead (the GPU then completes the barrier without it) is KBD_ERR_BARRIER, one
 *     that waits elsewhere a deadlock naming each CTA's warps;
 *   - a peer's shared memory is touched only after a kbd_cluster_sync (every CTA has started; CUDA's rule)
 *     and before the peer exits: end a kernel that uses peers' memory with kbd_cluster_sync();
 *   - a peer's mbarrier must be initialised before it is signalled: kbd_mbarrier_init, kbd_fence_mbarrier_init,
 *     then kbd_cluster_sync, before any peer arrives on it or multicasts into its CTA;
 *   - accesses across CTAs are race-checked like those within one (KBD_ERR_RACE).
 * docs/clusters.md has the patterns; examples/cluster_multicast the template.
 */
#ifndef KBD_CLUSTER_H
#define KBD_CLUSTER_H

#include "config.h"
#include "grid.h"
#include "tma.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"

KBD_DEV unsigned kbd_cluster_ctarank(void) { return kbd_hw_cluster_ctarank(); }
KBD_DEV unsigned kbd_cluster_size(void) { return kbd_hw_cluster_nctarank(); }
KBD_DEV unsigned kbd_cluster_id_x(void) { return kbd_hw_cluster_id_x(); }
KBD_DEV unsigned kbd_cluster_id_y(void) { return kbd_hw_cluster_id_y(); }
KBD_DEV unsigned kbd_cluster_id_z(void) { return kbd_hw_cluster_id_z(); }
KBD_DEV unsigned kbd_cluster_dim_x(void) { return kbd_hw_cluster_dim_x(); }
KBD_DEV unsigned kbd_cluster_dim_y(void) { return kbd_hw_cluster_dim_y(); }
KBD_DEV unsigned kbd_cluster_dim_z(void) { return kbd_hw_cluster_dim_z(); }

#define kbd_cluster_arrive() kbd_hw_cluster_arrive(1, KBD_SITE)
#define kbd_cluster_arrive_relaxed() kbd_hw_cluster_arrive(0, KBD_SITE)
#define kbd_cluster_wait() kbd_hw_cluster_wait(KBD_SITE)
#define kbd_cluster_sync()                                                                                             \
  do {                                                                                                                 \
    kbd_hw_cluster_arrive(1, KBD_SITE);                                                                                \
    kbd_hw_cluster_wait(KBD_SITE);                                                                                     \
  } while (0)

#define kbd_cluster_map(p, rank) ((__typeof__(p))kbd_hw_cluster_map((p), (unsigned)(rank), KBD_SITE))
#define kbd_mbarrier_arrive_cluster(bar, rank) kbd_hw_mbar_arrive_cluster((bar), (unsigned)(rank), 1u, KBD_SITE)
#define kbd_mbarrier_arrive_cluster_reads(bar, rank)                                                                   \
  kbd_hw_mbar_arrive_cluster_reads((bar), (unsigned)(rank), 1u, KBD_SITE)

/* __FILE__ and __LINE__ spelled out: KBD_SITE would be one argument of the twin macro */
#define kbd_cluster_mask_assume(mask) KBD_HW_CLUSTER_MASK_ASSUME((uint32_t)(mask), #mask, __FILE__, __LINE__)

/* Per block b of the tile: one multicast box at x + b * box_dims[0] (kbd/tma.h). */
KBD_DEV void kbd_tma_load_multicast_(char *dst, uint32_t line_bytes, uint32_t lines, int swz, int boxes, uint32_t box0,
                                     const kbd_tensor_map *map, uint64_t *bar, uint16_t mask, int rank, int32_t c0,
                                     int32_t c1, int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  for (int b = 0; b < boxes; ++b)
    kbd_hw_tma_load_multicast(dst + (size_t)b * line_bytes * lines, line_bytes, lines, swz, map, bar, rank, mask,
                              c0 + (int32_t)(b * box0), c1, c2, c3, c4, KBD_SITE_ARGS);
}
#define KBD__TMA_LOAD_MC(tile, map, bar, mask, ...)                                                                    \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    kbd_tma_load_multicast_((char *)(tile).p, KBD__TMA_GEOM(tile), (map), (bar), (uint16_t)(mask), __VA_ARGS__,        \
                            KBD_SITE);                                                                                 \
  } while (0)
/* Coordinates outermost first, as kbd_tma_load2d (kbd/tma.h reverses them for the hardware). */
#define kbd_tma_load_multicast1d(tile, map, bar, mask, col) KBD__TMA_LOAD_MC(tile, map, bar, mask, KBD__TMA_REV1(col))
#define kbd_tma_load_multicast2d(tile, map, bar, mask, row, col)                                                       \
  KBD__TMA_LOAD_MC(tile, map, bar, mask, KBD__TMA_REV2(row, col))
#define kbd_tma_load_multicast3d(tile, map, bar, mask, d2, row, col)                                                   \
  KBD__TMA_LOAD_MC(tile, map, bar, mask, KBD__TMA_REV3(d2, row, col))
#define kbd_tma_load_multicast4d(tile, map, bar, mask, d3, d2, row, col)                                               \
  KBD__TMA_LOAD_MC(tile, map, bar, mask, KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_load_multicast5d(tile, map, bar, mask, d4, d3, d2, row, col)                                           \
  KBD__TMA_LOAD_MC(tile, map, bar, mask, KBD__TMA_REV5(d4, d3, d2, row, col))
#define kbd_tma_load_multicast(...)                                                                                    \
  KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_load_multicast", "tile, map, bar, mask, "), __VA_ARGS__)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_CLUSTER_H */
