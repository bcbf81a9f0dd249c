/* kbd/launch.h - defining a kernel once, launching it from plain C, and the indices inside it.
 *
 *   // shared header, seen by host .c and kernel .cu
 *   typedef struct { const float *a; float *c; int n; } scale_params;
 *   KBD_KERNEL_DECL(scale, scale_params);
 *
 *   // kernel .cu (C/CUDA common subset; compiled by nvcc, or as C with -DKBD_CPU)
 *   KBD_KERNEL(scale, 256, scale_params) { ... p.a, p.n ... }
 *
 *   // host .c (plain C in both modes)
 *   kbd_status s = scale(kbd_cfg_1d(blocks), params);
 *
 * Threads per block are fixed when the kernel is defined: CTA-owned tiles size their per-thread
 * fragments from it at compile time (KBD_CTA), and __launch_bounds__ lets ptxas budget registers.
 *
 * Execution model inside a kernel body: code runs once per warp in CPU mode and once per thread on the
 * GPU, so plain code must be warp-uniform (the same in all 32 lanes). Per-lane code goes in
 * KBD_FOR_LANES(lane) { ... } - a loop over 32 lanes on the CPU, the thread's own lane on the GPU.
 */
#ifndef KBD_LAUNCH_H
#define KBD_LAUNCH_H

#include "config.h"
#include "grid.h"
#include "status.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#endif

#define KBD__THREADS_RULE                                                                                              \
  "kbd: KBD_KERNEL threads per block must be a multiple of 32 (whole warps) between 32 and 1024 (the GPU's "           \
  "per-block limit)"

/* Declare the launcher of a kernel for host code: kbd_status name(kbd_launch_cfg cfg, P params). */
#define KBD_KERNEL_DECL(name, P) KBD_EXTERN_C kbd_status name(kbd_launch_cfg cfg, P params)

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* __COUNTER__ here, expanded once as an argument, is the base of the kernel's registry of warp-range barrier
 * ids (kbd/scope.h): each KBD_WARP_RANGE in the body takes the next value. */
#define KBD_KERNEL(name, threads, P) KBD_HW_KERNEL(name, threads, P, __COUNTER__)
/* The never-used last parameter of every kernel body: its TYPE carries the kernel's compile-time facts,
 * char[threads][1 + registry base], for KBD_BLOCK_THREADS and KBD_WARP_RANGE to read with sizeof. */
#define KBD__CTA_PARAM(threads, base) const char(*kbd_cta_)[(threads) > 0 ? (threads) : 1][(base) + 1]
#else /* host-only translation unit of a GPU program */
#define KBD_KERNEL(name, threads, P)                                                                                   \
  KBD_STATIC_ASSERT(0, "kbd: KBD_KERNEL must be compiled by nvcc or with -DKBD_CPU; host C files use "                 \
                       "KBD_KERNEL_DECL")
#endif

/* ---- inside a kernel ------------------------------------------------------------------------------- */

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* Outside a kernel body (a tile typedef at file scope, a device helper) this declaration stands in for the
 * body's kbd_cta_ parameter: never defined, only ever an operand of sizeof. Its block of KBD__NO_KERNEL
 * threads is no block a kernel can have, so checks that need the block can tell "no kernel here". */
#define KBD__NO_KERNEL (KBD_MAX_BLOCK_THREADS + KBD_WARP_SIZE)
extern const char (*const kbd_cta_)[KBD__NO_KERNEL][1];
#endif
/* Threads per block of the enclosing kernel, or KBD__NO_KERNEL outside a kernel body. */
#define KBD__CTA_THREADS ((int)(sizeof(*kbd_cta_) / sizeof((*kbd_cta_)[0])))
/* The enclosing kernel's first __COUNTER__ value (see KBD_KERNEL). */
#define KBD__CTA_COUNTER ((int)sizeof((*kbd_cta_)[0]) - 1)
/* Threads per block of the enclosing kernel, a compile-time constant. Outside a kernel body there is no
 * block: a compile error ("size of array is negative", in the expansion of KBD_BLOCK_THREADS). */
#define KBD_BLOCK_THREADS ((int)sizeof(char[KBD__CTA_THREADS <= KBD_MAX_BLOCK_THREADS ? KBD__CTA_THREADS : -1]))
/* Tile scopes: the number of threads that together own a tile. */
#define KBD_WARP 32
#define KBD_WARPGROUP 128
#define KBD_CTA KBD_BLOCK_THREADS

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* Per-lane code: KBD_FOR_LANES(lane) { ... } - the 32 lanes in order on the CPU, the thread's own lane on
 * the GPU. Per-thread operations (atomics) belong here or in KBD_ELECT_ONE; warp collectives (barriers,
 * shuffles, votes, reductions) never: the CPU machine reports both (KBD_ERR_ISSUE). */
#define KBD_FOR_LANES(lane) KBD_HW_FOR_LANES(lane)
/* Elected-lane code: KBD_ELECT_ONE { ... } runs in exactly one lane of the warp (elect.sync on the GPU;
 * once per warp on the CPU) - for operations the hardware wants issued once per warp: a TMA copy, an
 * mbarrier expect-tx, a tcgen05.mma, a ticket atomic. */
#define KBD_ELECT_ONE KBD_HW_ELECT_ONE
KBD_DEV int kbd_warp_id(void) { return kbd_hw_warp_id(); }
KBD_DEV unsigned kbd_block_x(void) { return kbd_hw_block_x(); }
KBD_DEV unsigned kbd_block_y(void) { return kbd_hw_block_y(); }
KBD_DEV unsigned kbd_block_z(void) { return kbd_hw_block_z(); }
KBD_DEV unsigned kbd_grid_x(void) { return kbd_hw_grid_x(); }
KBD_DEV unsigned kbd_grid_y(void) { return kbd_hw_grid_y(); }
KBD_DEV unsigned kbd_grid_z(void) { return kbd_hw_grid_z(); }
KBD_DEV size_t kbd_dynamic_smem_bytes(void) { return kbd_hw_dynamic_smem_bytes(); }
#endif

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* Block-linear thread index of `lane` in the running warp. */
KBD_DEV int kbd_thread_idx(int lane) { return kbd_warp_id() * KBD_WARP_SIZE + lane; }
KBD_DEV int kbd_warpgroup_id(void) { return kbd_warp_id() >> 2; }
/* Warps of the enclosing kernel's block (compile-time). */
#define kbd_num_warps() (KBD_BLOCK_THREADS / KBD_WARP_SIZE)
#endif

#endif /* KBD_LAUNCH_H */
