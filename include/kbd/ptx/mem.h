/* kbd/ptx/mem.h - shared-memory declarations, memory-access hooks, proxy fence, trap (GPU twin of
 * cpu/mem.h). The access hooks exist for the CPU machine's checks; here they are empty and vanish. */
#ifndef KBD_PTX_MEM_H
#define KBD_PTX_MEM_H

#include "../config.h"

#if KBD_MODE_CUDA

/* A block-wide static array: __shared__ (.shared in PTX), at the given alignment. */
#define KBD_HW_SHARED_ALIGNED(type, name, count, align)                                                                \
  __shared__ __align__(align)                                                                                          \
  type name##_kbd_arr_[(count)];                                                                                       \
  type *name = name##_kbd_arr_

/* KBD_HW_SHARED_ALIGNED when `used` (a compile-time constant), else a NULL pointer: nvcc drops the unused
 * __shared__ array, so a call site that needs no scratch costs no shared memory. */
#define KBD_HW_SHARED_IF(type, name, count, align, used)                                                               \
  __shared__ __align__(align)                                                                                          \
  type name##_kbd_arr_[(count)];                                                                                       \
  type *name = (used) ? name##_kbd_arr_ : NULL

/* The launch's dynamic shared memory: an extern .shared array, 1024-aligned so 128B swizzle atoms line up. */
KBD_DEV void *kbd_hw_dynamic_smem(void) {
  extern __shared__ __align__(1024) unsigned char kbd_dyn_smem_[];
  return kbd_dyn_smem_;
}

/* A check the CPU machine makes (printf-style message); the GPU path does not check. */
#define KBD_HW_FAULT(code, file, line, ...) ((void)(code), (void)(file), (void)(line))

/* Shared tile placement: checked by the CPU machine only (alignment comes from the declaration or planner). */
KBD_DEV void kbd_hw_stile_bind(const void *p, size_t bytes, int align, const char *type, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)align, (void)type, KBD_SITE_UNUSED;
}

/* Checks of kbd accesses (bounds, never-written bytes, races) are the CPU machine's; nothing on the GPU. */
KBD_DEV void kbd_hw_smem_read(const void *p, size_t bytes, int esize, const char *what, long long row, long long col,
                              KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)esize, (void)what, (void)row, (void)col, KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_smem_write(const void *p, size_t bytes, int esize, const char *what, long long row, long long col,
                               KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)esize, (void)what, (void)row, (void)col, KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_global_range(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)what, KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_global_read(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)what, KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_global_write(const void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)what, KBD_SITE_UNUSED;
}

/* fence.proxy.async.shared::cta;     PTX ISA 8.0, sm_90 - makes this thread's generic-proxy writes to
 * shared memory visible to the async proxy (TMA stores, wgmma/tcgen05 operand reads). */
KBD_DEV void kbd_hw_fence_proxy_async(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* trap;     PTX ISA 1.0 - aborts the kernel; the host sees cudaErrorLaunchFailure. */
KBD_DEV void kbd_hw_trap(const char *msg, KBD_SITE_PARAMS) {
  (void)msg, KBD_SITE_UNUSED;
  asm volatile("trap;");
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_MEM_H */
