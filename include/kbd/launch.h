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

#if KBD_MODE_CPU
#include "cpu/machine.h"
#endif
#if KBD_MODE_CUDA
#include <cuda_runtime.h>
#endif

#define KBD__THREADS_RULE                                                                                              \
  "kbd: KBD_KERNEL threads per block must be a multiple of 32 (whole warps) between 32 and 1024 (the GPU's "           \
  "per-block limit)"

/* Declare the launcher of a kernel for host code: kbd_status name(kbd_launch_cfg cfg, P params). */
#define KBD_KERNEL_DECL(name, P) KBD_EXTERN_C kbd_status name(kbd_launch_cfg cfg, P params)

#if KBD_MODE_CPU

#define KBD_KERNEL(name, threads, P)                                                                                   \
  KBD_STATIC_ASSERT((threads) % 32 == 0 && (threads) >= 32 && (threads) <= 1024, KBD__THREADS_RULE);                   \
  static void name##_kbd_body(P p, const char(*kbd_cta_)[(threads) > 0 ? (threads) : 1]);                              \
  static void name##_kbd_entry(const void *kbd_params_) { name##_kbd_body(*(const P *)kbd_params_, NULL); }            \
  KBD_KERNEL_DECL(name, P);                                                                                            \
  KBD_EXTERN_C kbd_status name(kbd_launch_cfg cfg, P params) {                                                         \
    return kbd_cpu_launch_kernel(&cfg, (threads), name##_kbd_entry, &params, #name);                                   \
  }                                                                                                                    \
  static void name##_kbd_body(KBD_UNUSED P p, KBD_UNUSED const char(*kbd_cta_)[(threads) > 0 ? (threads) : 1])

#elif KBD_MODE_CUDA

static inline kbd_status kbd_cuda_status(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return kbd_status_ok();
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return kbd_status_make(KBD_ERR_OOM, "%s: %s", what, cudaGetErrorString(e));
  return kbd_status_make(KBD_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define KBD_KERNEL(name, threads, P)                                                                                   \
  KBD_STATIC_ASSERT((threads) % 32 == 0 && (threads) >= 32 && (threads) <= 1024, KBD__THREADS_RULE);                   \
  __global__ void __launch_bounds__((threads) > 0 && (threads) <= 1024 ? (threads) : 1024)                             \
      name##_kbd_dev(const __grid_constant__ P p, const char(*kbd_cta_)[(threads) > 0 ? (threads) : 1]);               \
  KBD_KERNEL_DECL(name, P);                                                                                            \
  KBD_EXTERN_C kbd_status name(kbd_launch_cfg cfg, P params) {                                                         \
    kbd_status s_ = kbd_check_launch(&cfg, (threads), #name);                                                          \
    if (!kbd_ok(s_)) return s_;                                                                                        \
    if (cfg.smem_bytes > KBD_DEFAULT_SMEM_BYTES) {                                                                     \
      s_ = kbd_cuda_status(                                                                                            \
          cudaFuncSetAttribute(name##_kbd_dev, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cfg.smem_bytes),      \
          #name ": raising the dynamic shared-memory limit");                                                          \
      if (!kbd_ok(s_)) return s_;                                                                                      \
    }                                                                                                                  \
    name##_kbd_dev<<<dim3(cfg.grid.x, cfg.grid.y, cfg.grid.z), (threads), cfg.smem_bytes, (cudaStream_t)cfg.stream>>>( \
        params, NULL);                                                                                                 \
    return kbd_cuda_status(cudaGetLastError(), "launch of " #name);                                                    \
  }                                                                                                                    \
  __global__ void __launch_bounds__((threads) > 0 && (threads) <= 1024 ? (threads) : 1024) name##_kbd_dev(             \
      KBD_UNUSED const __grid_constant__ P p, KBD_UNUSED const char(*kbd_cta_)[(threads) > 0 ? (threads) : 1])

#else /* host-only translation unit of a GPU program */
#define KBD_KERNEL(name, threads, P)                                                                                   \
  KBD_STATIC_ASSERT(0, "kbd: KBD_KERNEL must be compiled by nvcc or with -DKBD_CPU; host C files use "                 \
                       "KBD_KERNEL_DECL")
#endif

/* ---- inside a kernel ------------------------------------------------------------------------------- */

/* Threads per block of the enclosing kernel, a compile-time constant. */
#define KBD_BLOCK_THREADS ((int)sizeof(*kbd_cta_))
/* Tile scopes: the number of threads that together own a tile. */
#define KBD_WARP 32
#define KBD_WARPGROUP 128
#define KBD_CTA KBD_BLOCK_THREADS

#if KBD_MODE_CPU
/* Per-lane code. CPU: all 32 lanes of the running warp in order. */
#define KBD_FOR_LANES(lane) for (int lane = 0; lane < KBD_WARP_SIZE; ++lane)
KBD_DEV int kbd_warp_id(void) { return kbd_cpu_self()->id; }
KBD_DEV unsigned kbd_block_x(void) { return kbd_cpu_self()->cta->bx; }
KBD_DEV unsigned kbd_block_y(void) { return kbd_cpu_self()->cta->by; }
KBD_DEV unsigned kbd_block_z(void) { return kbd_cpu_self()->cta->bz; }
KBD_DEV unsigned kbd_grid_x(void) { return kbd_cpu_self()->cta->L->cfg.grid.x; }
KBD_DEV unsigned kbd_grid_y(void) { return kbd_cpu_self()->cta->L->cfg.grid.y; }
KBD_DEV unsigned kbd_grid_z(void) { return kbd_cpu_self()->cta->L->cfg.grid.z; }
KBD_DEV size_t kbd_dynamic_smem_bytes(void) { return kbd_cpu_self()->cta->dyn_bytes; }
#elif KBD_MODE_CUDA
/* GPU: the loop runs once with the thread's own lane; nvcc removes it. */
#define KBD_FOR_LANES(lane)                                                                                            \
  for (int lane = (int)(threadIdx.x & 31u), kbd_lane_once_ = 1; kbd_lane_once_; kbd_lane_once_ = 0)
KBD_DEV int kbd_warp_id(void) { return (int)(threadIdx.x >> 5); }
KBD_DEV unsigned kbd_block_x(void) { return blockIdx.x; }
KBD_DEV unsigned kbd_block_y(void) { return blockIdx.y; }
KBD_DEV unsigned kbd_block_z(void) { return blockIdx.z; }
KBD_DEV unsigned kbd_grid_x(void) { return gridDim.x; }
KBD_DEV unsigned kbd_grid_y(void) { return gridDim.y; }
KBD_DEV unsigned kbd_grid_z(void) { return gridDim.z; }
KBD_DEV size_t kbd_dynamic_smem_bytes(void) {
  unsigned r;
  /* %dynamic_smem_size: the launch's dynamic shared memory in bytes (PTX special register, sm_20+). */
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}
#endif

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* Block-linear thread index of `lane` in the running warp. */
KBD_DEV int kbd_thread_idx(int lane) { return kbd_warp_id() * KBD_WARP_SIZE + lane; }
KBD_DEV int kbd_warpgroup_id(void) { return kbd_warp_id() >> 2; }
/* Warps of the enclosing kernel's block (compile-time). */
#define kbd_num_warps() (KBD_BLOCK_THREADS / KBD_WARP_SIZE)
#endif

#endif /* KBD_LAUNCH_H */
