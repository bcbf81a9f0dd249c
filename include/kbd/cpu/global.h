/* kbd/cpu/global.h - device memory on the CPU machine: the registry of kbd_malloc allocations, their
 * shadow "written" state, and the checks of every kbd global-memory access against them.
 *
 * Every kbd access must lie wholly inside ONE live allocation. Anything else fails with file:line and
 * the allocation named: wholly outside (past the end of the allocation below it), straddling an end,
 * inside a freed allocation (use after free: where it was allocated and freed), or memory kbd never
 * allocated (a host array passed as device memory - on the GPU an illegal address). Each allocation keeps
 * one state byte per data byte: a kbd load of bytes that nothing wrote (no copy to the device, no memset,
 * no kernel store) fails whatever the bytes hold. New allocations start never-written, their data a NaN
 * pattern for raw-pointer reads the machine cannot see.
 *
 * Allocation and free happen on the host between launches; during a launch the registry is only read,
 * so lookups take no lock. State bytes are written by several host threads (blocks) with relaxed atomics;
 * a block that reads another block's output does so after an acquire of that block's release, which
 * orders the state bytes too.
 */
#ifndef KBD_CPU_GLOBAL_H
#define KBD_CPU_GLOBAL_H

#include "report.h"

#if KBD_MODE_CPU

typedef struct kbd_cpu_alloc {
  uintptr_t base;
  size_t bytes;
  int live;
  uint8_t *written; /* one state byte per data byte: 1 = written */
  const char *file; /* where it was allocated */
  int line;
  const char *free_file; /* where it was freed (live == 0) */
  int free_line;
  int host; /* registered host memory (kbd_host_register): kernels may access it, the host writes it */
} kbd_cpu_alloc;

/* Freed allocations are remembered (up to this many) to name a use after free. */
#define KBD_CPU_FREED_HISTORY 4096

typedef struct kbd_cpu_registry {
  pthread_mutex_t mu;
  kbd_cpu_alloc *v;
  size_t n, cap;
  size_t nfreed;
} kbd_cpu_registry;

KBD_WEAK kbd_cpu_registry kbd_cpu_allocs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};
/* The last allocation this host thread hit: consecutive accesses nearly always go to the same one. */
KBD_WEAK __thread long kbd_cpu_alloc_hit = -1;

static inline int kbd_cpu_register(void *p, size_t bytes, int host, const char *file, int line) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  uint8_t *st = (uint8_t *)calloc(bytes ? bytes : 1, 1);
  if (!st) return 0;
  if (host) memset(st, 1, bytes); /* the host may have written any of it, and may write it any time */
  pthread_mutex_lock(&R->mu);
  int ok = 1;
  if (R->nfreed > KBD_CPU_FREED_HISTORY) { /* forget the oldest freed entries */
    size_t k = 0;
    for (size_t i = 0; i < R->n; ++i) {
      if (!R->v[i].live && R->nfreed > KBD_CPU_FREED_HISTORY / 2) {
        R->nfreed--;
        continue;
      }
      R->v[k++] = R->v[i];
    }
    R->n = k;
  }
  if (R->n == R->cap) {
    size_t cap = R->cap ? 2 * R->cap : 64;
    kbd_cpu_alloc *v = (kbd_cpu_alloc *)realloc(R->v, cap * sizeof *v);
    if (v) {
      R->v = v;
      R->cap = cap;
    } else {
      ok = 0;
    }
  }
  if (ok) {
    kbd_cpu_alloc a = {(uintptr_t)p, bytes, 1, st, file, line, NULL, 0, host};
    R->v[R->n++] = a;
  } else {
    free(st);
  }
  kbd_cpu_alloc_hit = -1;
  pthread_mutex_unlock(&R->mu);
  return ok;
}

/* The live allocation whose base is p, or NULL. */
static inline kbd_cpu_alloc *kbd_cpu_find_base(const void *p) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  for (size_t i = R->n; i-- > 0;)
    if (R->v[i].live && R->v[i].base == (uintptr_t)p) return &R->v[i];
  return NULL;
}

static inline int kbd_cpu_unregister(void *p, int host, const char *file, int line) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  pthread_mutex_lock(&R->mu);
  kbd_cpu_alloc *a = kbd_cpu_find_base(p);
  if (a && a->host != host) a = NULL;
  if (a) {
    a->live = 0;
    a->free_file = file;
    a->free_line = line;
    free(a->written);
    a->written = NULL;
    R->nfreed++;
  }
  kbd_cpu_alloc_hit = -1;
  pthread_mutex_unlock(&R->mu);
  return a != NULL;
}

/* Mark [p, p + bytes) of a live allocation written (host copies and memsets); other memory is ignored. */
static inline void kbd_cpu_mark_written(const void *p, size_t bytes) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  const uintptr_t a = (uintptr_t)p;
  pthread_mutex_lock(&R->mu);
  for (size_t i = 0; i < R->n; ++i) {
    kbd_cpu_alloc *r = &R->v[i];
    if (!r->live || a >= r->base + r->bytes || a + bytes <= r->base) continue;
    const uintptr_t lo = a > r->base ? a : r->base,
                    hi = a + bytes < r->base + r->bytes ? a + bytes : r->base + r->bytes;
    memset(r->written + (lo - r->base), 1, hi - lo);
  }
  pthread_mutex_unlock(&R->mu);
}

enum { KBD_CPU_G_BOUNDS = 0, KBD_CPU_G_READ = 1, KBD_CPU_G_WRITE = 2, KBD_CPU_G_RMW = 3 };

KBD_NORETURN static inline void kbd_cpu_global_fault(uintptr_t a, uintptr_t b, const char *file, int line,
                                                     const char *what) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  /* Straddling a live allocation's start or end. */
  for (size_t i = 0; i < R->n; ++i) {
    const kbd_cpu_alloc *r = &R->v[i];
    if (!r->live || b <= r->base || a >= r->base + (r->bytes ? r->bytes : 1)) continue;
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                  "%s touches bytes [%lld, %lld) of a %zu-byte allocation (base %p, allocated at %s:%d): it is "
                  "not wholly inside it",
                  what, (long long)(a - r->base), (long long)(b - r->base), r->bytes, (void *)r->base, r->file,
                  r->line);
  }
  /* Inside a freed allocation (newest first: its address may have been handed out twice). */
  for (size_t i = R->n; i-- > 0;) {
    const kbd_cpu_alloc *r = &R->v[i];
    if (r->live || a < r->base || a >= r->base + (r->bytes ? r->bytes : 1)) continue;
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                  "%s touches byte %lld of a %zu-byte allocation (base %p) that was freed: allocated at %s:%d, "
                  "freed at %s:%d (use after free, or after kbd_host_unregister)",
                  what, (long long)(a - r->base), r->bytes, (void *)r->base, r->file, r->line, r->free_file,
                  r->free_line);
  }
  /* Wholly outside every allocation: name the nearest one below, the usual culprit (an index past n). */
  const kbd_cpu_alloc *below = NULL;
  for (size_t i = 0; i < R->n; ++i) {
    const kbd_cpu_alloc *r = &R->v[i];
    if (r->live && r->base + r->bytes <= a && (!below || r->base > below->base)) below = r;
  }
  if (below && a - (below->base + below->bytes) < ((uintptr_t)1 << 20))
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                  "%s touches %p, %lld bytes past the end of the %zu-byte allocation (base %p) allocated at %s:%d",
                  what, (void *)a, (long long)(a - (below->base + below->bytes)), below->bytes, (void *)below->base,
                  below->file, below->line);
  kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                "%s touches %p, which is not device memory from kbd_malloc (a host pointer? on the GPU this is an "
                "illegal address)",
                what, (void *)a);
}

/* A kbd access of global bytes [lo, lo + bytes): bounds always; `mode` reads check the written state,
 * writes set it. */
static inline void kbd_cpu_global_access(const void *lo, size_t bytes, int mode, const char *file, int line,
                                         const char *what) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  const uintptr_t a = (uintptr_t)lo, b = a + bytes;
  kbd_cpu_alloc *r = NULL;
  const long h = kbd_cpu_alloc_hit;
  if (h >= 0 && (size_t)h < R->n && R->v[h].live && a >= R->v[h].base && b <= R->v[h].base + R->v[h].bytes) {
    r = &R->v[h];
  } else {
    for (size_t i = R->n; i-- > 0;) {
      kbd_cpu_alloc *c = &R->v[i];
      if (c->live && a >= c->base && b <= c->base + c->bytes && bytes) {
        r = c;
        kbd_cpu_alloc_hit = (long)i;
        break;
      }
    }
  }
  if (KBD_UNLIKELY(!r)) kbd_cpu_global_fault(a, b, file, line, what);
  uint8_t *st = r->written + (a - r->base);
  if ((mode & KBD_CPU_G_READ) && !r->host)
    for (size_t i = 0; i < bytes; ++i)
      if (KBD_UNLIKELY(!__atomic_load_n(&st[i], __ATOMIC_RELAXED)))
        kbd_cpu_fault(KBD_ERR_POISON, file, line,
                      "%s reads never-written global memory: byte %lld of the %zu-byte allocation (base %p) "
                      "allocated at %s:%d (nothing copied, set or stored there)",
                      what, (long long)(a + i - r->base), r->bytes, (void *)r->base, r->file, r->line);
  if (mode & KBD_CPU_G_WRITE)
    for (size_t i = 0; i < bytes; ++i)
      if (!st[i]) __atomic_store_n(&st[i], (uint8_t)1, __ATOMIC_RELAXED);
}

/* Bounds only (kept for callers that check a range before moving it piecewise). */
static inline void kbd_cpu_check_global(const void *lo, const void *hi, const char *file, int line, const char *what) {
  kbd_cpu_global_access(lo, (size_t)((const char *)hi - (const char *)lo), KBD_CPU_G_BOUNDS, file, line, what);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_GLOBAL_H */
