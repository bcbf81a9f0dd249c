/* kbd/memory.h - host helpers for device memory. Every call returns a kbd_status.
 *
 * GPU programs: thin wrappers over the CUDA runtime (cudaMalloc, cudaMemcpy, ...): kbd/ptx/alloc.h.
 * CPU mode: host memory plus a registry of allocations (kbd/cpu/alloc.h, kbd/cpu/global.h), so that a kbd
 * access outside a live allocation, or a read of bytes nothing wrote, fails with file:line and the allocation
 * named, and a free of an unknown pointer is reported instead of crashing. The calls are macros passing
 * the call site (KBD_SITE) so that those reports can say where the memory was allocated and freed; each
 * still is an expression whose value is a kbd_status.
 */
#ifndef KBD_MEMORY_H
#define KBD_MEMORY_H

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "status.h"

#include "hw.h"

/* Allocate `bytes` of device memory (256-byte aligned, like cudaMalloc). bytes == 0 gives a valid
 * pointer that no access may touch. CPU mode records where (kbd_malloc is a macro passing the call site)
 * so that a bad access can name the allocation. */
#define kbd_malloc(ptr, bytes) kbd_malloc_at((ptr), (bytes), KBD_SITE)
static inline kbd_status kbd_malloc_at(void **ptr, size_t bytes, KBD_SITE_PARAMS) {
  if (!ptr) return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_malloc: NULL output pointer", KBD_SITE_ARGS);
  *ptr = NULL;
  return kbd_hw_malloc(ptr, bytes, KBD_SITE_ARGS);
}

/* Free device memory. CPU mode remembers where, so a later access names the use after free. */
#define kbd_free(ptr) kbd_free_at((ptr), KBD_SITE)
static inline kbd_status kbd_free_at(void *ptr, KBD_SITE_PARAMS) {
  if (!ptr) return kbd_status_ok();
  return kbd_hw_free(ptr, KBD_SITE_ARGS);
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
  return kbd_hw_host_register(ptr, bytes, KBD_SITE_ARGS);
}
static inline kbd_status kbd_host_unregister_at(void *ptr, KBD_SITE_PARAMS) {
  return kbd_hw_host_unregister(ptr, KBD_SITE_ARGS);
}

/* Copies and memsets (cudaMemcpy, cudaMemset). Macros passing the call site: in CPU mode the device side
 * must lie wholly inside one live allocation (or registered host range), else KBD_ERR_BOUNDS names the
 * allocation and this file:line; bytes landing in an allocation count as written for the kernels' checks. */
#define kbd_copy_to_device(dst, src, bytes)                                                                            \
  kbd_copy_at_((dst), (src), (bytes), KBD_H2D_, "kbd_copy_to_device", KBD_SITE)
#define kbd_copy_to_host(dst, src, bytes) kbd_copy_at_((dst), (src), (bytes), KBD_D2H_, "kbd_copy_to_host", KBD_SITE)
#define kbd_copy_on_device(dst, src, bytes)                                                                            \
  kbd_copy_at_((dst), (src), (bytes), KBD_D2D_, "kbd_copy_on_device", KBD_SITE)
#define kbd_memset_device(ptr, byte, bytes) kbd_memset_device_at((ptr), (byte), (bytes), KBD_SITE)

static inline kbd_status kbd_copy_at_(void *dst, const void *src, size_t bytes, int kind, const char *what,
                                      KBD_SITE_PARAMS) {
  if (bytes && (!dst || !src))
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: %s: NULL pointer with %zu bytes", KBD_SITE_ARGS, what, bytes);
  return kbd_hw_copy(dst, src, bytes, kind, what, KBD_SITE_ARGS);
}

static inline kbd_status kbd_memset_device_at(void *ptr, int byte, size_t bytes, KBD_SITE_PARAMS) {
  if (bytes && !ptr) return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_memset_device: NULL pointer", KBD_SITE_ARGS);
  return kbd_hw_memset(ptr, byte, bytes, KBD_SITE_ARGS);
}

/* The same, ordered on `stream` (a cudaStream_t; NULL = the legacy default stream): work the caller queued
 * on a non-blocking stream is NOT ordered with the synchronous calls above, so library code that prepares
 * memory for a launch on the caller's stream uses these. CPU launches are synchronous: plain calls. */
#define kbd_memset_device_async(ptr, byte, bytes, stream)                                                              \
  kbd_memset_device_async_at((ptr), (byte), (bytes), (stream), KBD_SITE)
#define kbd_copy_to_device_async(dst, src, bytes, stream)                                                              \
  kbd_copy_to_device_async_at((dst), (src), (bytes), (stream), KBD_SITE)

static inline kbd_status kbd_memset_device_async_at(void *ptr, int byte, size_t bytes, void *stream, KBD_SITE_PARAMS) {
  if (bytes && !ptr)
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_memset_device_async: NULL pointer", KBD_SITE_ARGS);
  return kbd_hw_memset_async(ptr, byte, bytes, stream, KBD_SITE_ARGS);
}
/* From pageable host memory the runtime stages the source before returning, so src may go out of scope. */
static inline kbd_status kbd_copy_to_device_async_at(void *dst, const void *src, size_t bytes, void *stream,
                                                     KBD_SITE_PARAMS) {
  if (bytes && (!dst || !src))
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_copy_to_device_async: NULL pointer with %zu bytes",
                           KBD_SITE_ARGS, bytes);
  return kbd_hw_copy_h2d_async(dst, src, bytes, stream, KBD_SITE_ARGS);
}

/* Wait for all launched work (CPU launches are synchronous already). */
static inline kbd_status kbd_device_sync(void) { return kbd_hw_device_sync(); }

/* 1 when kernels can run here: always in CPU mode; on a GPU build, when a CUDA device is present. */
static inline int kbd_device_available(void) { return kbd_hw_device_available(); }

#endif /* KBD_MEMORY_H */
