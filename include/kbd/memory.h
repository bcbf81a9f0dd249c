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

static inline kbd_status kbd_copy_(void *dst, const void *src, size_t bytes, int kind, const char *what) {
  if (bytes && (!dst || !src)) return kbd_status_make(KBD_ERR_INVALID, "%s: NULL pointer with %zu bytes", what, bytes);
  return kbd_hw_copy(dst, src, bytes, kind, what);
}

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
  return kbd_hw_memset(ptr, byte, bytes);
}

/* The same, ordered on `stream` (a cudaStream_t; NULL = the legacy default stream): work the caller queued
 * on a non-blocking stream is NOT ordered with the synchronous calls above, so library code that prepares
 * memory for a launch on the caller's stream uses these. CPU launches are synchronous: plain calls. */
static inline kbd_status kbd_memset_device_async(void *ptr, int byte, size_t bytes, void *stream) {
  if (bytes && !ptr) return kbd_status_make(KBD_ERR_INVALID, "kbd_memset_device_async: NULL pointer");
  return kbd_hw_memset_async(ptr, byte, bytes, stream);
}
/* From pageable host memory the runtime stages the source before returning, so src may go out of scope. */
static inline kbd_status kbd_copy_to_device_async(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes && (!dst || !src))
    return kbd_status_make(KBD_ERR_INVALID, "kbd_copy_to_device_async: NULL pointer with %zu bytes", bytes);
  return kbd_hw_copy_h2d_async(dst, src, bytes, stream);
}

/* Wait for all launched work (CPU launches are synchronous already). */
static inline kbd_status kbd_device_sync(void) { return kbd_hw_device_sync(); }

/* 1 when kernels can run here: always in CPU mode; on a GPU build, when a CUDA device is present. */
static inline int kbd_device_available(void) { return kbd_hw_device_available(); }

#endif /* KBD_MEMORY_H */
