/* kbd/cpu/alloc.h - host-side device-memory calls on the CPU machine (twin of ptx/alloc.h): host memory
 * plus the registry of kbd/cpu/global.h, so that kernel accesses are checked against live allocations
 * and their written state, and host copies and memsets against the allocation they name. */
#ifndef KBD_CPU_ALLOC_H
#define KBD_CPU_ALLOC_H

#include "global.h"
#include "sched.h" /* kbd_cpu_poison */

#if KBD_MODE_CPU

#define KBD_H2D_ 1
#define KBD_D2H_ 2
#define KBD_D2D_ 3

/* 256-byte aligned like cudaMalloc. Data starts as a NaN pattern and never-written in the shadow. */
static inline kbd_status kbd_hw_malloc(void **ptr, size_t bytes, KBD_SITE_PARAMS) {
  const size_t rounded = (bytes + 255) / 256 * 256;
  void *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!p) return kbd_status_make(KBD_ERR_OOM, "%s:%d: kbd_malloc: %zu bytes: out of host memory", KBD_SITE_ARGS, bytes);
  kbd_cpu_poison((unsigned char *)p, 0, bytes);
  if (kbd_cpu_register(p, bytes, 0, KBD_SITE_ARGS) != 1) {
    free(p);
    return kbd_status_make(KBD_ERR_OOM, "%s:%d: kbd_malloc: cannot grow the allocation registry", KBD_SITE_ARGS);
  }
  *ptr = p;
  return kbd_status_ok();
}

static inline kbd_status kbd_hw_free(void *ptr, KBD_SITE_PARAMS) {
  if (!kbd_cpu_unregister(ptr, 0, KBD_SITE_ARGS))
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_free: %p was not returned by kbd_malloc (or was freed already)",
                           KBD_SITE_ARGS, ptr);
  free(ptr);
  return kbd_status_ok();
}

/* Host memory kernels may access (cudaHostRegister with cudaHostRegisterMapped on the GPU). A range that
 * overlaps a registered or allocated one is refused, as cudaHostRegister refuses memory registered twice. */
static inline kbd_status kbd_hw_host_register(void *ptr, size_t bytes, KBD_SITE_PARAMS) {
  const int r = kbd_cpu_register(ptr, bytes, 1, KBD_SITE_ARGS);
  if (r < 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "%s:%d: kbd_host_register: [%p, +%zu) overlaps memory already registered or allocated",
                           KBD_SITE_ARGS, ptr, bytes);
  if (!r) return kbd_status_make(KBD_ERR_OOM, "%s:%d: kbd_host_register: out of host memory", KBD_SITE_ARGS);
  return kbd_status_ok();
}
static inline kbd_status kbd_hw_host_unregister(void *ptr, KBD_SITE_PARAMS) {
  if (!kbd_cpu_unregister(ptr, 1, KBD_SITE_ARGS))
    return kbd_status_make(KBD_ERR_INVALID, "%s:%d: kbd_host_unregister: %p was not registered with kbd_host_register",
                           KBD_SITE_ARGS, ptr);
  return kbd_status_ok();
}

/* kind: 1 host->device, 2 device->host, 3 device->device. The device side of the copy must lie wholly inside
 * one live allocation (or registered host range), as for a kernel access; the host side is the caller's.
 * Bytes a copy lands in device memory become written (device->device: as written as their source bytes). A
 * copy to the host of never-written bytes is allowed: programs copy whole buffers back. */
static inline kbd_status kbd_hw_copy(void *dst, const void *src, size_t bytes, int kind, const char *what,
                                     KBD_SITE_PARAMS) {
  if (!bytes) return kbd_status_ok();
  kbd_status st = kbd_status_ok();
  kbd_cpu_alloc *d = NULL, *s = NULL;
  if (kind != KBD_D2H_ && !(d = kbd_cpu_host_range(dst, bytes, what, "destination", &st, KBD_SITE_ARGS))) return st;
  if (kind != KBD_H2D_ && !(s = kbd_cpu_host_range(src, bytes, what, "source", &st, KBD_SITE_ARGS))) return st;
  memmove(dst, src, bytes);
  if (kind == KBD_H2D_) kbd_cpu_host_wrote(d, (uintptr_t)dst - d->base, bytes);
  if (kind == KBD_D2D_ && !kbd_cpu_copy_written(d, (uintptr_t)dst - d->base, s, (uintptr_t)src - s->base, bytes))
    return kbd_status_make(KBD_ERR_OOM, "%s:%d: %s: out of host memory", KBD_SITE_ARGS, what);
  return kbd_status_ok();
}

static inline kbd_status kbd_hw_memset(void *ptr, int byte, size_t bytes, KBD_SITE_PARAMS) {
  if (!bytes) return kbd_status_ok();
  kbd_status st = kbd_status_ok();
  kbd_cpu_alloc *d = kbd_cpu_host_range(ptr, bytes, "kbd_memset_device", "destination", &st, KBD_SITE_ARGS);
  if (!d) return st;
  memset(ptr, byte, bytes);
  kbd_cpu_host_wrote(d, (uintptr_t)ptr - d->base, bytes);
  return kbd_status_ok();
}

/* CPU launches are synchronous: stream order is program order. */
static inline kbd_status kbd_hw_memset_async(void *ptr, int byte, size_t bytes, void *stream, KBD_SITE_PARAMS) {
  (void)stream;
  return kbd_hw_memset(ptr, byte, bytes, KBD_SITE_ARGS);
}
static inline kbd_status kbd_hw_copy_h2d_async(void *dst, const void *src, size_t bytes, void *stream,
                                               KBD_SITE_PARAMS) {
  (void)stream;
  return kbd_hw_copy(dst, src, bytes, KBD_H2D_, "kbd_copy_to_device_async", KBD_SITE_ARGS);
}
static inline kbd_status kbd_hw_device_sync(void) { return kbd_status_ok(); }
static inline int kbd_hw_device_available(void) { return 1; }

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_ALLOC_H */
