/* kbd/cpu/mem.h - shared-memory declarations and checked memory accesses on the CPU machine (twin of
 * ptx/mem.h). Every kbd access to shared memory goes through the shadow: bounds of one allocation,
 * never-written bytes, pending asynchronous writes and races (kbd/cpu/shadow.h). */
#ifndef KBD_CPU_MEM_H
#define KBD_CPU_MEM_H

#include "machine.h"

#if KBD_MODE_CPU

/* The declaration site's address keys the allocation: every warp reaching it gets the same block-wide
 * array, as with __shared__. */
#define KBD_HW_SHARED_ALIGNED(type, name, count, align)                                                                \
  static const char name##_kbd_site_ = 0;                                                                              \
  type *name =                                                                                                         \
      (type *)kbd_cpu_smem_static(&name##_kbd_site_, sizeof(type) * (size_t)(count), (align), __FILE__, __LINE__)

#define KBD_HW_SHARED_IF(type, name, count, align, used)                                                               \
  static const char name##_kbd_site_ = 0;                                                                              \
  type *name = (used) ? (type *)kbd_cpu_smem_static(&name##_kbd_site_, sizeof(type) * (size_t)(count), (align),        \
                                                    __FILE__, __LINE__)                                                \
                      : NULL

static inline void *kbd_hw_dynamic_smem(void) { return kbd_cpu_self()->cta->smem; }

/* A check the CPU machine makes: fail the launch with `code` and a message at file:line. */
#define KBD_HW_FAULT(code, file, line, ...) kbd_cpu_fault((code), (file), (line), __VA_ARGS__)

/* A shared tile placed at p: inside one allocation of this block, and at its swizzle's alignment (the
 * offset function assumes pattern phase 0 at the base; the CPU's shared array is 1024-byte aligned like the
 * GPU's window, so the offset's alignment is the address's). */
static inline void kbd_hw_stile_bind(const void *p, size_t bytes, int align, const char *type, KBD_SITE_PARAMS) {
  const size_t off = kbd_cpu_check_smem(p, bytes, KBD_SITE_ARGS, "KBD_STILE_AT");
  if (off % (size_t)align)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "KBD_STILE_AT(%s): the tile base is shared byte %zu, not a multiple of %d (the alignment its "
                  "swizzle mode needs, so that the hardware's address-based pattern starts at the tile base)",
                  type, off, align);
}

static inline void kbd_hw_smem_read(const void *p, size_t bytes, int esize, const char *what, long long row,
                                    long long col, KBD_SITE_PARAMS) {
  kbd_cpu_elem el = {row, col, esize};
  kbd_cpu_smem_read(p, bytes, what, el, KBD_SITE_ARGS);
}
static inline void kbd_hw_smem_write(const void *p, size_t bytes, int esize, const char *what, long long row,
                                     long long col, KBD_SITE_PARAMS) {
  kbd_cpu_elem el = {row, col, esize};
  kbd_cpu_smem_write(p, bytes, what, el, KBD_SITE_ARGS);
}
/* Bounds of a whole range at once (a tile's span, gaps between rows included): one report naming the
 * tile's full extent instead of its first bad chunk. */
static inline void kbd_hw_global_range(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, bytes, KBD_CPU_G_BOUNDS, KBD_SITE_ARGS, what);
}
static inline void kbd_hw_global_read(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, bytes, KBD_CPU_G_READ, KBD_SITE_ARGS, what);
}
static inline void kbd_hw_global_write(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, bytes, KBD_CPU_G_WRITE, KBD_SITE_ARGS, what);
}

static inline void kbd_hw_fence_proxy_async(KBD_SITE_PARAMS) {
  (void)kbd_file_, (void)kbd_line_;
  kbd_cpu_shadow_fence_async(kbd_cpu_self());
}

KBD_NORETURN static inline void kbd_hw_trap(const char *msg, KBD_SITE_PARAMS) {
  kbd_cpu_fault(KBD_ERR_KERNEL, KBD_SITE_ARGS, "kbd_trap: %s", msg);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MEM_H */
