/* kbd/ptx/launch.h - a kernel definition for the GPU (twin of cpu/launch.h): a __global__ function with
 * __launch_bounds__ and __grid_constant__ parameters (so tensor maps can ride in them), and an extern "C"
 * launcher that checks the launch, raises the dynamic shared-memory limit when needed, and launches. */
#ifndef KBD_PTX_LAUNCH_H
#define KBD_PTX_LAUNCH_H

#include "../grid.h"
#include "../status.h"

#if KBD_MODE_CUDA
#include <cuda_runtime.h>

static inline kbd_status kbd_cuda_status(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return kbd_status_ok();
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return kbd_status_make(KBD_ERR_OOM, "%s: %s", what, cudaGetErrorString(e));
  return kbd_status_make(KBD_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define KBD_HW_KERNEL(name, threads, P, base)                                                                          \
  KBD_STATIC_ASSERT((threads) % 32 == 0 && (threads) >= 32 && (threads) <= 1024, KBD__THREADS_RULE);                   \
  __global__ void __launch_bounds__((threads) > 0 && (threads) <= 1024 ? (threads) : 1024)                             \
      name##_kbd_dev(const __grid_constant__ P p, KBD__CTA_PARAM(threads, base));                                      \
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
  __global__ void __launch_bounds__((threads) > 0 && (threads) <= 1024 ? (threads) : 1024)                             \
      name##_kbd_dev(KBD_UNUSED const __grid_constant__ P p, KBD_UNUSED KBD__CTA_PARAM(threads, base))

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_LAUNCH_H */
