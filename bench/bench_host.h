/* bench_host.h - CPU-only benchmarks compare kbd kernels with plain loops over the SAME host buffers: the
 * buffers are host memory mapped for kernels (kbd_host_register; cudaHostRegister on a GPU), so the CPU
 * machine's global-memory checks accept them and no copy distorts the comparison. */
#ifndef KBD_BENCH_HOST_H
#define KBD_BENCH_HOST_H

#include <stdlib.h>

static inline void *bench_host_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) abort();
  KBD_CHECK(kbd_host_register(p, bytes ? bytes : 1));
  return p;
}
static inline void bench_host_free(void *p) {
  KBD_CHECK(kbd_host_unregister(p));
  free(p);
}

#endif /* KBD_BENCH_HOST_H */
