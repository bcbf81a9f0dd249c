/* kbd/tile.h - the one header a kbd user includes.
 *
 * Charybdis (kbd): a header-only C tile library for NVIDIA sm_100a (Blackwell) and sm_90a (Hopper).
 * Build a kernel source with nvcc for the GPU, or with a host C compiler and -DKBD_CPU to run the same
 * source on the CPU machine (warps as fibers, real shared memory, barrier and deadlock checks).
 * Start with docs/getting-started.md.
 */
#ifndef KBD_TILE_H
#define KBD_TILE_H

#define KBD_VERSION_MAJOR 0
#define KBD_VERSION_MINOR 1
#define KBD_VERSION_PATCH 0

#include "cluster.h"
#include "config.h"
#include "convert.h"
#include "grid.h"
#include "launch.h"
#include "layout.h"
#include "mbarrier.h"
#include "memory.h"
#include "mma.h"
#include "mma_pair.h"
#include "mma_ts.h"
#include "smem_plan.h"
#include "status.h"
#include "stile.h"
#include "tensormap.h"
#include "tma.h"
#include "types.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "atomic.h"
#include "print.h"
#include "reduce.h"
#include "reduce_tile.h"
#include "regs.h"
#include "scan.h"
#include "scope.h"
#include "smem.h"
#include "softmax.h"
#include "stile_move.h"
#include "sync.h"
#include "tile_core.h"
#include "tile_io.h"
#include "tile_ops.h"
#endif

#endif /* KBD_TILE_H */
