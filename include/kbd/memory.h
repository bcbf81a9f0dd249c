/* kbd/memory.h - host helpers for device memory. Every call returns a kbd_status.
 *
 * GPU programs: thin wrappers over the CUDA runtime (cudaMalloc, cudaMemcpy, ...).
 * CPU mode: malloc/memcpy, plus a registry of live allocations so that kbd tile accesses that run past
 * the end of one fail with file:line, and a free of an unknown pointer is reported instead of crashing.
 */
#ifndef KBD_MEMORY_H
#define KBD_MEMORY_H

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "status.h"

#if KBD_MODE_CPU
#include "cpu/machine.h"
#else
#include <cuda_runtime_api.h>
#endif

#if !KBD_MODE_CPU && !KBD_MODE_CUDA
static inline kbd_status kbd_cuda_status_(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return kbd_status_ok();
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return kbd_status_make(KBD_ERR_OOM, "%s: %s", what, cudaGetErrorString(e));
  return kbd_status_make(KBD_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
#elif KBD_MODE_CUDA
#include "launch.h"
#define kbd_cuda_status_ kbd_cuda_status
#endif

/* Allocate `bytes` of device memory (256-byte aligned, like cudaMalloc). bytes == 0 gives a valid
 * pointer that no access may touch. */
static inline kbd_status kbd_malloc(void **ptr, size_t bytes) {
  if (!ptr) return kbd_status_make(KBD_ERR_INVALID, "kbd_malloc: NULL output pointer");
  *ptr = NULL;
#if KBD_MODE_CPU
  size_t rounded = (bytes + 255) / 256 * 256;
  void *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!p) return kbd_status_make(KBD_ERR_OOM, "kbd_malloc: %zu bytes: out of host memory", bytes);
  if (!kbd_cpu_register(p, bytes)) {
    free(p);
    return kbd_status_make(KBD_ERR_OOM, "kbd_malloc: cannot grow the allocation registry");
  }
  *ptr = p;
  return kbd_status_ok();
#else
  return kbd_cuda_status_(cudaMalloc(ptr, bytes ? bytes : 1), "kbd_malloc");
#endif
}

static inline kbd_status kbd_free(void *ptr) {
  if (!ptr) return kbd_status_ok();
#if KBD_MODE_CPU
  if (!kbd_cpu_unregister(ptr))
    return kbd_status_make(KBD_ERR_INVALID, "kbd_free: %p was not returned by kbd_malloc (or was freed already)", ptr);
  free(ptr);
  return kbd_status_ok();
#else
  return kbd_cuda_status_(cudaFree(ptr), "kbd_free");
#endif
}

static inline kbd_status kbd_copy_(void *dst, const void *src, size_t bytes, int kind, const char *what) {
  if (bytes && (!dst || !src)) return kbd_status_make(KBD_ERR_INVALID, "%s: NULL pointer with %zu bytes", what, bytes);
#if KBD_MODE_CPU
  (void)kind;
  if (bytes) memmove(dst, src, bytes);
  return kbd_status_ok();
#else
  return kbd_cuda_status_(cudaMemcpy(dst, src, bytes, (enum cudaMemcpyKind)kind), what);
#endif
}

#if KBD_MODE_CPU
#define KBD_H2D_ 1
#define KBD_D2H_ 2
#define KBD_D2D_ 3
#else
#define KBD_H2D_ cudaMemcpyHostToDevice
#define KBD_D2H_ cudaMemcpyDeviceToHost
#define KBD_D2D_ cudaMemcpyDeviceToDevice
#endif

static inline kbd_status kbd_copy_to_device(void *dst, const void *src, size_t bytes) {
  return kbd_copy_(dst, src, bytes, KBD_H2D_, "kbd_copy_to_device");
}
static inline kbd_status kbd_copy_to_host(void *dst, const void *src, size_t bytes) {
  return kbd_copy_(dst, src, bytes, KBD_D2H_, "kbd_copy_to_host");
}
static inline kbd_status kbd_copy_on_device(void *dst, const void *src, size_t bytes) {
  return kbd_copy_(dst, src, bytes, KBD_D2D_, "kbd_copy_on_device");
}

static inline kbd_status kbd_memset_device(void *ptr, int byte, size_t bytes) {
  if (bytes && !ptr) return kbd_status_make(KBD_ERR_INVALID, "kbd_memset_device: NULL pointer");
#if KBD_MODE_CPU
  if (bytes) memset(ptr, byte, bytes);
  return kbd_status_ok();
#else
  return kbd_cuda_status_(cudaMemset(ptr, byte, bytes), "kbd_memset_device");
#endif
}

/* Wait for all launched work (CPU launches are synchronous already). */
static inline kbd_status kbd_device_sync(void) {
#if KBD_MODE_CPU
  return kbd_status_ok();
#else
  return kbd_cuda_status_(cudaDeviceSynchronize(), "kbd_device_sync");
#endif
}

/* 1 when kernels can run here: always in CPU mode; on a GPU build, when a CUDA device is present. */
static inline int kbd_device_available(void) {
#if KBD_MODE_CPU
  return 1;
#else
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#endif
}

#endif /* KBD_MEMORY_H */
