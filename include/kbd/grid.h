/* kbd/grid.h - grid shape, launch configuration and the launch checks shared by both modes. */
#ifndef KBD_GRID_H
#define KBD_GRID_H

#include "config.h"
#include "status.h"

typedef struct kbd_dim3 {
  unsigned x, y, z;
} kbd_dim3;

/* grid: blocks in x/y/z. smem_bytes: dynamic shared memory per block. stream: a cudaStream_t on the
 * GPU (NULL = default stream), ignored by the CPU machine (launches there are synchronous).
 * cluster: CTAs per thread-block cluster in x/y/z (sm_90+; kbd/cluster.h); all zero (the default) or all
 * one is no cluster. cluster_nonportable: allow 9..16 CTAs per cluster (the GPU's non-portable sizes). */
typedef struct kbd_launch_cfg {
  kbd_dim3 grid;
  size_t smem_bytes;
  void *stream;
  kbd_dim3 cluster;
  int cluster_nonportable;
} kbd_launch_cfg;

static inline kbd_dim3 kbd_dim(unsigned x, unsigned y, unsigned z) {
  kbd_dim3 d;
  d.x = x;
  d.y = y;
  d.z = z;
  return d;
}

static inline kbd_launch_cfg kbd_cfg(kbd_dim3 grid, size_t smem_bytes, void *stream) {
  kbd_launch_cfg c;
  c.grid = grid;
  c.smem_bytes = smem_bytes;
  c.stream = stream;
  c.cluster = kbd_dim(0, 0, 0);
  c.cluster_nonportable = 0;
  return c;
}

/* cfg launched as clusters of x * y * z CTAs (every grid dimension a multiple of the cluster's). */
static inline kbd_launch_cfg kbd_cfg_cluster(kbd_launch_cfg cfg, unsigned x, unsigned y, unsigned z) {
  cfg.cluster = kbd_dim(x, y, z);
  return cfg;
}

/* The cluster shape a launch runs with: (1, 1, 1) when cfg sets none. */
static inline kbd_dim3 kbd_cluster_dims(const kbd_launch_cfg *cfg) {
  const kbd_dim3 c = cfg->cluster;
  return (c.x | c.y | c.z) == 0 ? kbd_dim(1, 1, 1) : c;
}

static inline kbd_launch_cfg kbd_cfg_1d(unsigned blocks) { return kbd_cfg(kbd_dim(blocks, 1, 1), 0, NULL); }

/* Blocks needed to cover n items at per_block items each (0 when n == 0: an empty grid, which a launch
 * rejects - callers with possibly-empty inputs should skip the launch). */
static inline unsigned kbd_blocks_for(size_t n, size_t per_block) {
  return (unsigned)((n + per_block - 1) / per_block);
}

/* The cluster rules of a launch (CUDA programming guide, thread block clusters; cudaLaunchKernelEx with
 * cudaLaunchAttributeClusterDimension): every dimension 1 or more, the grid a whole number of clusters in
 * each dimension, at most 8 CTAs (the portable size), or 16 with cluster_nonportable (the non-portable
 * maximum of sm_90 and sm_100, cudaFuncAttributeNonPortableClusterSizeAllowed). */
static inline kbd_status kbd_check_cluster(const kbd_launch_cfg *cfg, const char *kernel) {
  const kbd_dim3 c = cfg->cluster;
  if ((c.x | c.y | c.z) == 0) return kbd_status_ok();
  if (c.x == 0 || c.y == 0 || c.z == 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: cluster (%u, %u, %u) has a zero dimension; every dimension is at least 1 "
                           "(or all three 0 for no cluster)",
                           kernel, c.x, c.y, c.z);
  if (cfg->grid.x % c.x || cfg->grid.y % c.y || cfg->grid.z % c.z)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: grid (%u, %u, %u) is not a whole number of clusters (%u, %u, %u): each grid "
                           "dimension must be a multiple of the cluster's",
                           kernel, cfg->grid.x, cfg->grid.y, cfg->grid.z, c.x, c.y, c.z);
  const unsigned long long n = (unsigned long long)c.x * c.y * c.z;
  if (n > KBD_MAX_CLUSTER_CTAS_NONPORTABLE)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: cluster (%u, %u, %u) has %llu CTAs; sm_90/sm_100 allow at most %d (%d "
                           "portably)",
                           kernel, c.x, c.y, c.z, n, KBD_MAX_CLUSTER_CTAS_NONPORTABLE, KBD_MAX_CLUSTER_CTAS);
  if (n > KBD_MAX_CLUSTER_CTAS && !cfg->cluster_nonportable)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: cluster (%u, %u, %u) has %llu CTAs, over the portable %d; set "
                           "cfg.cluster_nonportable = 1 for up to %d (the GPU may still refuse the shape when its "
                           "CTAs cannot be co-resident)",
                           kernel, c.x, c.y, c.z, n, KBD_MAX_CLUSTER_CTAS, KBD_MAX_CLUSTER_CTAS_NONPORTABLE);
  return kbd_status_ok();
}

/* The GPU's launch limits, checked identically before a CPU-machine run and before a CUDA launch. */
static inline kbd_status kbd_check_launch(const kbd_launch_cfg *cfg, int threads, const char *kernel) {
  if (!cfg) return kbd_status_make(KBD_ERR_INVALID, "launch of %s: NULL launch configuration", kernel);
  if (threads <= 0 || threads > KBD_MAX_BLOCK_THREADS || threads % KBD_WARP_SIZE != 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: %d threads per block; kbd blocks are whole warps, 32..%d threads", kernel,
                           threads, KBD_MAX_BLOCK_THREADS);
  if (cfg->grid.x == 0 || cfg->grid.y == 0 || cfg->grid.z == 0)
    return kbd_status_make(KBD_ERR_INVALID, "launch of %s: empty grid (%u, %u, %u)", kernel, cfg->grid.x, cfg->grid.y,
                           cfg->grid.z);
  if (cfg->grid.x > 0x7fffffffu || cfg->grid.y > 65535u || cfg->grid.z > 65535u)
    return kbd_status_make(KBD_ERR_INVALID, "launch of %s: grid (%u, %u, %u) exceeds (2^31-1, 65535, 65535)", kernel,
                           cfg->grid.x, cfg->grid.y, cfg->grid.z);
  if (cfg->smem_bytes > KBD_MAX_SMEM_BYTES)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: %zu bytes of dynamic shared memory exceeds the %u-byte (227 KiB) per-block "
                           "limit of sm_90/sm_100",
                           kernel, cfg->smem_bytes, KBD_MAX_SMEM_BYTES);
  return kbd_check_cluster(cfg, kernel);
}

#endif /* KBD_GRID_H */
