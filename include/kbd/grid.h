/* kbd/grid.h - grid shape, launch configuration and the launch checks shared by both modes. */
#ifndef KBD_GRID_H
#define KBD_GRID_H

#include "config.h"
#include "status.h"

typedef struct kbd_dim3 {
  unsigned x, y, z;
} kbd_dim3;

/* grid: blocks in x/y/z. smem_bytes: dynamic shared memory per block. stream: a cudaStream_t on the
 * GPU (NULL = default stream), ignored by the CPU machine (launches there are synchronous). */
typedef struct kbd_launch_cfg {
  kbd_dim3 grid;
  size_t smem_bytes;
  void *stream;
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
  return c;
}

static inline kbd_launch_cfg kbd_cfg_1d(unsigned blocks) { return kbd_cfg(kbd_dim(blocks, 1, 1), 0, NULL); }

/* Blocks needed to cover n items at per_block items each (0 when n == 0: an empty grid, which a launch
 * rejects - callers with possibly-empty inputs should skip the launch). */
static inline unsigned kbd_blocks_for(size_t n, size_t per_block) {
  return (unsigned)((n + per_block - 1) / per_block);
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
  return kbd_status_ok();
}

#endif /* KBD_GRID_H */
