/* kbd/ptx/alloc.h - host-side device-memory calls of a GPU program (twin of cpu/alloc.h): the CUDA
 * runtime. Used by kbd/memory.h in nvcc builds and in the plain C host files of a GPU program. */
#ifndef KBD_PTX_ALLOC_H
#define KBD_PTX_ALLOC_H

#include "../config.h"
#include "../status.h"

#if !KBD_MODE_CPU
#include <cuda_runtime_api.h>

#if KBD_MODE_CUDA
#include "launch.h"
#define kbd_cuda_status_ kbd_cuda_status
#else
static inline kbd_status kbd_cuda_status_(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return kbd_status_ok();
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return kbd_status_make(KBD_ERR_OOM, "%s: %s", what, cudaGetErrorString(e));
  return kbd_status_make(KBD_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
#endif

#define KBD_H2D_ cudaMemcpyHostToDevice
#define KBD_D2H_ cudaMemcpyDeviceToHost
#define KBD_D2D_ cudaMemcpyDeviceToDevice

/* cudaMalloc of 0 bytes returns NULL on some drivers: allocate 1 so the pointer is valid and unique. */
static inline kbd_status kbd_hw_malloc(void **ptr, size_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMalloc(ptr, bytes ? bytes : 1), "kbd_malloc");
}
static inline kbd_status kbd_hw_free(void *ptr, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaFree(ptr), "kbd_free");
}
/* Mapped pinned host memory: with unified addressing (sm_90/sm_100) the host pointer is the device one. */
static inline kbd_status kbd_hw_host_register(void *ptr, size_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaHostRegister(ptr, bytes, cudaHostRegisterMapped), "kbd_host_register");
}
static inline kbd_status kbd_hw_host_unregister(void *ptr, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaHostUnregister(ptr), "kbd_host_unregister");
}
/* The call site is the CPU machine's, which checks the device range against its allocations. */
static inline kbd_status kbd_hw_copy(void *dst, const void *src, size_t bytes, int kind, const char *what,
                                     KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMemcpy(dst, src, bytes, (enum cudaMemcpyKind)kind), what);
}
static inline kbd_status kbd_hw_memset(void *ptr, int byte, size_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMemset(ptr, byte, bytes), "kbd_memset_device");
}
static inline kbd_status kbd_hw_memset_async(void *ptr, int byte, size_t bytes, void *stream, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMemsetAsync(ptr, byte, bytes, (cudaStream_t)stream), "kbd_memset_device_async");
}
/* From pageable host memory the runtime stages the source before returning, so src may go out of scope. */
static inline kbd_status kbd_hw_copy_h2d_async(void *dst, const void *src, size_t bytes, void *stream,
                                               KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream),
                          "kbd_copy_to_device_async");
}
static inline kbd_status kbd_hw_device_sync(void) {
  return kbd_cuda_status_(cudaDeviceSynchronize(), "kbd_device_sync");
}
static inline int kbd_hw_device_available(void) {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#endif /* !KBD_MODE_CPU */
#endif /* KBD_PTX_ALLOC_H */
