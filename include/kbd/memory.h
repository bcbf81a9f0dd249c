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
#include "cpu/alloc.h"
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
 * pointer that no access may touch. CPU mode records where (kbd_malloc is a macro passing the call site)
 * so that a bad access can name the allocation. */
#define kbd_malloc(ptr, bytes) kbd_malloc_at((ptr), (bytes), KBD_SITE)
static inline kbd_status kbd_malloc_at(void **ptr, size_t bytes, KBD_SITE_PARAMS) {
  if (!ptr) return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_malloc: NULL output pointer", KBD_SITE_ARGS);
  *ptr = NULL;
#if KBD_MODE_CPU
  return kbd_hw_malloc(ptr, bytes, KBD_SITE_ARGS);
#else
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaMalloc(ptr, bytes ? bytes : 1), "kbd_malloc");
#endif
}

/* Free device memory. CPU mode remembers where, so a later access names the use after free. */
#define kbd_free(ptr) kbd_free_at((ptr), KBD_SITE)
static inline kbd_status kbd_free_at(void *ptr, KBD_SITE_PARAMS) {
  if (!ptr) return kbd_status_ok();
#if KBD_MODE_CPU
  return kbd_hw_free(ptr, KBD_SITE_ARGS);
#else
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaFree(ptr), "kbd_free");
#endif
}

/* Let kernels access host memory [ptr, ptr + bytes) directly (zero-copy; on the GPU cudaHostRegister
 * with cudaHostRegisterMapped: with unified addressing on sm_90/sm_100 the host pointer is the device
 * pointer). Every access crosses PCIe/NVLink-C2C on the GPU: for flags, small outputs and tests, not for
 * bulk data. kbd_host_unregister before the memory goes away; an access after it is reported. */
#define kbd_host_register(ptr, bytes) kbd_host_register_at((ptr), (bytes), KBD_SITE)
#define kbd_host_unregister(ptr) kbd_host_unregister_at((ptr), KBD_SITE)
static inline kbd_status kbd_host_register_at(void *ptr, size_t bytes, KBD_SITE_PARAMS) {
  if (!ptr || !bytes)
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_host_register: NULL pointer or 0 bytes", KBD_SITE_ARGS);
#if KBD_MODE_CPU
  return kbd_hw_host_register(ptr, bytes, KBD_SITE_ARGS);
#else
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaHostRegister(ptr, bytes, cudaHostRegisterMapped), "kbd_host_register");
#endif
}
static inline kbd_status kbd_host_unregister_at(void *ptr, KBD_SITE_PARAMS) {
#if KBD_MODE_CPU
  return kbd_hw_host_unregister(ptr, KBD_SITE_ARGS);
#else
  KBD_SITE_UNUSED;
  return kbd_cuda_status_(cudaHostUnregister(ptr), "kbd_host_unregister");
#endif
}

static inline kbd_status kbd_copy_(void *dst, const void *src, size_t bytes, int kind, const char *what) {
  if (bytes && (!dst || !src)) return kbd_status_make(KBD_ERR_INVALID, "%s: NULL pointer with %zu bytes", what, bytes);
#if KBD_MODE_CPU
  return kbd_hw_copy(dst, src, bytes, kind, what);
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
  return kbd_hw_memset(ptr, byte, bytes);
#else
  return kbd_cuda_status_(cudaMemset(ptr, byte, bytes), "kbd_memset_device");
#endif
}

/* The same, ordered on `stream` (a cudaStream_t; NULL = the legacy default stream): work the caller queued
 * on a non-blocking stream is NOT ordered with the synchronous calls above, so library code that prepares
 * memory for a launch on the caller's stream uses these. CPU launches are synchronous: plain calls. */
static inline kbd_status kbd_memset_device_async(void *ptr, int byte, size_t bytes, void *stream) {
  if (bytes && !ptr) return kbd_status_make(KBD_ERR_INVALID, "kbd_memset_device_async: NULL pointer");
#if KBD_MODE_CPU
  (void)stream;
  return kbd_hw_memset(ptr, byte, bytes);
#else
  return kbd_cuda_status_(cudaMemsetAsync(ptr, byte, bytes, (cudaStream_t)stream), "kbd_memset_device_async");
#endif
}
/* From pageable host memory the runtime stages the source before returning, so src may go out of scope. */
static inline kbd_status kbd_copy_to_device_async(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes && (!dst || !src))
    return kbd_status_make(KBD_ERR_INVALID, "kbd_copy_to_device_async: NULL pointer with %zu bytes", bytes);
#if KBD_MODE_CPU
  (void)stream;
  return kbd_hw_copy(dst, src, bytes, KBD_H2D_, "kbd_copy_to_device_async");
#else
  return kbd_cuda_status_(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream),
                          "kbd_copy_to_device_async");
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
