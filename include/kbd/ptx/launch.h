/* kbd/ptx/launch.h - a kernel definition for the GPU (twin of cpu/launch.h): a __global__ function with
 * __launch_bounds__ and __grid_constant__ parameters (so tensor maps can ride in them), and an extern "C"
 * launcher that checks the launch, raises the dynamic shared-memory limit when needed, and launches. */
#ifndef KBD_PTX_LAUNCH_H
#define KBD_PTX_LAUNCH_H

#include "../grid.h"
#include "../status.h"

#if KBD_MODE_CUDA
#include <cuda_runtime.h>
#include <stdio.h>

static inline kbd_status kbd_cuda_status(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return kbd_status_ok();
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return kbd_status_make(KBD_ERR_OOM, "%s: %s", what, cudaGetErrorString(e));
  return kbd_status_make(KBD_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* A cluster launch: the shape rides in a launch attribute of cudaLaunchKernelEx (there is no <<<>>> form for a
 * run-time shape); 9..16 CTAs need the kernel's non-portable attribute first (kbd_check_cluster allowed them). */
template <typename P>
static kbd_status kbd_cuda_launch_cluster(void (*kernel)(P), const kbd_launch_cfg *cfg, int threads, const P &params,
                                          const char *name) {
  const kbd_dim3 c = cfg->cluster;
  if (c.x * c.y * c.z > KBD_MAX_CLUSTER_CTAS) {
    kbd_status s = kbd_cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
                                   "allowing a non-portable cluster size");
    if (!kbd_ok(s)) return s;
  }
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(cfg->grid.x, cfg->grid.y, cfg->grid.z);
  lc.blockDim = dim3((unsigned)threads, 1, 1);
  lc.dynamicSmemBytes = cfg->smem_bytes;
  lc.stream = (cudaStream_t)cfg->stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = c.x;
  attr[0].val.clusterDim.y = c.y;
  attr[0].val.clusterDim.z = c.z;
  lc.attrs = attr;
  lc.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&lc, kernel, params);
  if (e == cudaSuccess) return kbd_status_ok();
  kbd_text what = KBD_TEXT_INIT;
  kbd_text_append(&what, "launch of %s as clusters of (%u, %u, %u)", name, c.x, c.y, c.z);
  const kbd_status s = kbd_cuda_status(e, kbd_text_str(&what));
  kbd_text_free(&what);
  return s;
}

/* __launch_bounds__(threads, 1): with a minimum of one block per SM ptxas fixes the register count at entry
 * (65536 / threads at most), which setmaxnreg needs - without it ptxas ignores setmaxnreg (C7508).
 * The __global__ entry takes P alone and calls the body, an always-inlined device function. The body's second
 * parameter carries the kernel's __COUNTER__ base in its type, and that base differs between nvcc's passes when
 * the host pass skips kernel bodies (KBD_KERNEL_CODE): in the entry's signature it would change the mangled
 * name the host stub registers. p reaches the body by reference, so &p.field stays the __grid_constant__
 * parameter's own address (a tensor map in a parameter must not be copied to the stack). */
#define KBD_HW_KERNEL(name, threads, P, base)                                                                          \
  KBD_STATIC_ASSERT((threads) % 32 == 0 && (threads) >= 32 && (threads) <= 1024, KBD__THREADS_RULE);                   \
  static __device__ __forceinline__ void name##_kbd_body(const P &p, KBD__CTA_PARAM(threads, base));                   \
  __global__ void __launch_bounds__((threads) > 0 && (threads) <= 1024 ? (threads) : 1024, 1)                          \
      name##_kbd_dev(const __grid_constant__ P p) {                                                                    \
    name##_kbd_body(p, NULL);                                                                                          \
  }                                                                                                                    \
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
    if ((cfg.cluster.x | cfg.cluster.y | cfg.cluster.z) != 0)                                                          \
      return kbd_cuda_launch_cluster(name##_kbd_dev, &cfg, (threads), params, #name);                                  \
    name##_kbd_dev<<<dim3(cfg.grid.x, cfg.grid.y, cfg.grid.z), (threads), cfg.smem_bytes, (cudaStream_t)cfg.stream>>>( \
        params);                                                                                                       \
    return kbd_cuda_status(cudaGetLastError(), "launch of " #name);                                                    \
  }                                                                                                                    \
  static __device__ __forceinline__ void name##_kbd_body(KBD_UNUSED const P &p,                                        \
                                                         KBD_UNUSED KBD__CTA_PARAM(threads, base))

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_LAUNCH_H */
