/* kbd/cpu/global.h - device memory in CPU mode: the registry of kbd_malloc allocations and the checks of
 * kbd global-memory accesses against it.
 */
#ifndef KBD_CPU_GLOBAL_H
#define KBD_CPU_GLOBAL_H

#include "report.h"

#if KBD_MODE_CPU


typedef struct kbd_cpu_alloc {
  uintptr_t base;
  size_t bytes;
} kbd_cpu_alloc;

typedef struct kbd_cpu_registry {
  pthread_mutex_t mu;
  kbd_cpu_alloc *v;
  size_t n, cap;
} kbd_cpu_registry;

KBD_WEAK kbd_cpu_registry kbd_cpu_allocs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static inline int kbd_cpu_register(void *p, size_t bytes) {
  pthread_mutex_lock(&kbd_cpu_allocs.mu);
  int ok = 1;
  if (kbd_cpu_allocs.n == kbd_cpu_allocs.cap) {
    size_t cap = kbd_cpu_allocs.cap ? 2 * kbd_cpu_allocs.cap : 64;
    kbd_cpu_alloc *v = (kbd_cpu_alloc *)realloc(kbd_cpu_allocs.v, cap * sizeof *v);
    if (v) {
      kbd_cpu_allocs.v = v;
      kbd_cpu_allocs.cap = cap;
    } else {
      ok = 0;
    }
  }
  if (ok) {
    kbd_cpu_allocs.v[kbd_cpu_allocs.n].base = (uintptr_t)p;
    kbd_cpu_allocs.v[kbd_cpu_allocs.n].bytes = bytes;
    kbd_cpu_allocs.n++;
  }
  pthread_mutex_unlock(&kbd_cpu_allocs.mu);
  return ok;
}

static inline int kbd_cpu_unregister(void *p) {
  int found = 0;
  pthread_mutex_lock(&kbd_cpu_allocs.mu);
  for (size_t i = 0; i < kbd_cpu_allocs.n; ++i)
    if (kbd_cpu_allocs.v[i].base == (uintptr_t)p) {
      kbd_cpu_allocs.v[i] = kbd_cpu_allocs.v[--kbd_cpu_allocs.n];
      found = 1;
      break;
    }
  pthread_mutex_unlock(&kbd_cpu_allocs.mu);
  return found;
}

/* A global access of [lo, hi) by a kbd primitive. If it starts or ends inside a kbd_malloc allocation it
 * must lie wholly inside it - the GPU would fault or silently touch a neighbour. Memory kbd did not
 * allocate (a host array) is not checked. Allocation and free happen on the host between launches, so
 * the registry is read here without the lock. */
static inline void kbd_cpu_check_global(const void *lo, const void *hi, const char *file, int line, const char *what) {
  uintptr_t a = (uintptr_t)lo, b = (uintptr_t)hi;
  for (size_t i = 0; i < kbd_cpu_allocs.n; ++i) {
    const kbd_cpu_alloc *r = &kbd_cpu_allocs.v[i];
    /* A 0-byte allocation still owns its first byte for this test: no access may touch it. */
    int start_in = a >= r->base && a < r->base + (r->bytes ? r->bytes : 1);
    int end_in = b > r->base && b <= r->base + r->bytes;
    if (start_in && end_in) return;
    if (start_in || end_in)
      kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                    "%s touches bytes [%lld, %lld) of a %zu-byte allocation made by kbd_malloc", what,
                    (long long)(a - r->base), (long long)(b - r->base), r->bytes);
  }
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_GLOBAL_H */
