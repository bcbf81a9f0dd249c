/* kt_host.h - CPU-only tests that keep their buffers in host memory: kernels reach them as mapped host
 * memory (kbd_host_register; cudaHostRegister with cudaHostRegisterMapped on the GPU), so the CPU machine's
 * global-memory checks accept them while still rejecting any other host pointer.
 *
 * Include after <kbd/tile.h> and the system headers. In a test file:
 *   #define malloc(n) kt_host_alloc(n)     heap buffers: registered for their lifetime
 *   #define free(p) kt_host_free(p)
 *   float out[4]; KT_HOST_SCOPE(out);      arrays on the stack: registered until the scope ends
 */
#ifndef KT_HOST_H
#define KT_HOST_H

#include <stdlib.h>

static inline void *kt_host_alloc_(size_t bytes) {
  void *p = (malloc)(bytes ? bytes : 1);
  if (p && !kbd_ok(kbd_host_register(p, bytes ? bytes : 1))) abort();
  return p;
}
static inline void kt_host_free_(void *p) {
  if (!p) return;
  (void)kbd_host_unregister(p);
  (free)(p);
}
static inline void *kt_host_reg_(void *p, size_t bytes) {
  if (!kbd_ok(kbd_host_register(p, bytes))) abort();
  return p;
}
static inline void kt_host_unreg_(void **pp) { (void)kbd_host_unregister(*pp); }

#define kt_host_alloc(n) kt_host_alloc_(n)
#define kt_host_free(p) kt_host_free_(p)
#define KT_HOST_SCOPE(arr)                                                                                             \
  void *KBD_CAT(kt_reg_, __LINE__) __attribute__((cleanup(kt_host_unreg_))) = kt_host_reg_((arr), sizeof(arr))

#endif /* KT_HOST_H */
