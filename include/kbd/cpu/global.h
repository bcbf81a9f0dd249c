/* kbd/cpu/global.h - device memory on the CPU machine: the registry of kbd_malloc allocations (and of host
 * ranges registered with kbd_host_register), their shadow "written" state, and the checks of every kbd
 * global-memory access against them.
 *
 * Every kbd access must lie wholly inside ONE live allocation. Anything else fails with file:line and
 * the allocation named: wholly outside (past the end of the allocation below it), straddling an end,
 * inside a freed allocation (use after free: where it was allocated and freed), or memory kbd never
 * allocated (a host array passed as device memory - on the GPU an illegal address). Each allocation keeps
 * one "written" bit per data byte: a kbd load of bytes that nothing wrote (no copy to the device, no
 * memset, no kernel store) fails whatever the bytes hold, because cudaMalloc memory holds whatever the
 * previous owner of the physical pages left there. New allocations start never-written, their data a NaN
 * pattern for raw-pointer reads the machine cannot see.
 *
 * Lookup. Live allocations are kept sorted by base address (they never overlap), so the one that may
 * contain an access is found by binary search; each host thread remembers the last KBD_CPU_GCACHE
 * allocations it hit, which is where nearly every access of a kernel goes (its inputs and outputs), so the
 * search runs only when a kernel touches a new array. Freed allocations leave the sorted array for a
 * bounded history that only a failing access reads, to name a use after free.
 *
 * Concurrency. Blocks run on several host threads and read the registry without a lock, while another host
 * thread may call kbd_malloc / kbd_free (legal during a GPU launch too). Writers hold `mu` and make the
 * sequence number odd while they change the sorted array; a reader that saw it odd, or changed, searches
 * again, and a thread's cache is valid only for the sequence number it was filled under. Arrays replaced
 * when the registry grows are kept (retired, at most as much memory again as the current one), so a reader
 * that still holds one reads valid memory. Written bits only ever go from 0 to 1 during a launch and are
 * set with relaxed atomic ORs; a block that reads another block's output does so after an acquire of that
 * block's release, which orders the bits too.
 */
#ifndef KBD_CPU_GLOBAL_H
#define KBD_CPU_GLOBAL_H

#include "grace.h"
#include "report.h"

#if KBD_MODE_CPU

typedef struct kbd_cpu_alloc {
  uintptr_t base;
  size_t bytes;
  uint64_t *written; /* bit (o % 64) of word o / 64: data byte o was written; NULL for host memory */
  const char *file;  /* where it was allocated (or registered) */
  int line;
  const char *free_file; /* where it was freed (NULL while live) */
  int free_line;
  int live;
  int host; /* registered host memory (kbd_host_register): kernels may access it, the host writes it */
  /* KBD_CPU_PROFILE: the 32-byte sectors a kernel read ([0]) and wrote ([1]) in the profiled launch, one bit each
   * (allocated and cleared at the launch's start, kbd_cpu_touch_reset; NULL when not profiling) */
  uint64_t *touched[2];
  /* The global race checker's shadow (kbd/cpu/grace.h): chunks of last-write/last-read records, NULL until a
   * kernel's first plain access */
  kbd_cpu_gr_chunk **race;
} kbd_cpu_alloc;

/* The sorted array of live allocations: a header followed by `cap` record pointers. */
typedef struct kbd_cpu_livevec {
  size_t n, cap;
  struct kbd_cpu_livevec *retired; /* the smaller array this one replaced (kept for lock-free readers) */
} kbd_cpu_livevec;
#define KBD_CPU_LIVE_V(lv) ((kbd_cpu_alloc **)(void *)((lv) + 1))

/* Freed allocations are remembered (up to this many, oldest forgotten first) to name a use after free. */
#define KBD_CPU_FREED_HISTORY 4096

typedef struct kbd_cpu_registry {
  pthread_mutex_t mu; /* writers (allocate, free, register) and failure reports */
  kbd_cpu_livevec *live;
  unsigned seq;  /* odd while `live` changes; every change moves it on by 2 */
  size_t nfreed; /* frees so far: the newest freed record is freed[(nfreed - 1) % KBD_CPU_FREED_HISTORY] */
  kbd_cpu_alloc *freed[KBD_CPU_FREED_HISTORY];
} kbd_cpu_registry;

KBD_WEAK kbd_cpu_registry kbd_cpu_allocs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, {NULL}};

/* The allocations this host thread hit last, valid for registry sequence number `seq`. Four covers the
 * arrays of a typical kernel (inputs, output, a flag or workspace array), so their accesses never search. */
#define KBD_CPU_GCACHE 4
typedef struct kbd_cpu_gcache {
  unsigned seq, next;
  uintptr_t lo[KBD_CPU_GCACHE], hi[KBD_CPU_GCACHE]; /* [base, base + bytes) of r[k]; empty when unused */
  kbd_cpu_alloc *r[KBD_CPU_GCACHE];
} kbd_cpu_gcache;
KBD_WEAK __thread kbd_cpu_gcache kbd_cpu_gc;

/* ---- the sorted array (writers hold mu) ---------------------------------------------------------------- */

static inline void kbd_cpu_seq_begin(kbd_cpu_registry *R) {
  __atomic_store_n(&R->seq, R->seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE); /* the odd number is visible before any change */
}
static inline void kbd_cpu_seq_end(kbd_cpu_registry *R) { __atomic_store_n(&R->seq, R->seq + 1, __ATOMIC_RELEASE); }

/* Index of the first live record whose base is > a (so the one before it is the only candidate for a). */
static inline size_t kbd_cpu_live_upper(kbd_cpu_alloc *const *v, size_t n, uintptr_t a) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (__atomic_load_n(&v[mid], __ATOMIC_RELAXED)->base <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Room for one more live record: a larger array replaces the full one, which is kept (retired). */
static inline int kbd_cpu_live_reserve(kbd_cpu_registry *R) {
  kbd_cpu_livevec *old = R->live;
  if (old && old->n < old->cap) return 1;
  const size_t cap = old ? 2 * old->cap : 64;
  kbd_cpu_livevec *lv = (kbd_cpu_livevec *)malloc(sizeof *lv + cap * sizeof(kbd_cpu_alloc *));
  if (!lv) return 0;
  lv->n = old ? old->n : 0;
  lv->cap = cap;
  lv->retired = old;
  if (old) memcpy(KBD_CPU_LIVE_V(lv), KBD_CPU_LIVE_V(old), old->n * sizeof(kbd_cpu_alloc *));
  __atomic_store_n(&R->live, lv, __ATOMIC_RELEASE);
  return 1;
}

static inline void kbd_cpu_live_remove(kbd_cpu_registry *R, size_t i) {
  kbd_cpu_livevec *lv = R->live;
  kbd_cpu_alloc **v = KBD_CPU_LIVE_V(lv);
  for (size_t k = i; k + 1 < lv->n; ++k)
    __atomic_store_n(&v[k], v[k + 1], __ATOMIC_RELAXED);
  __atomic_store_n(&lv->n, lv->n - 1, __ATOMIC_RELAXED);
}

/* Move a live record to the freed history (its written bits go; the history forgets its oldest record). */
static inline void kbd_cpu_retire(kbd_cpu_registry *R, kbd_cpu_alloc *a, const char *file, int line) {
  a->live = 0;
  a->free_file = file;
  a->free_line = line;
  free(a->written);
  a->written = NULL;
  kbd_cpu_gr_free(a->race, a->bytes);
  a->race = NULL;
  free(a->touched[0]);
  free(a->touched[1]);
  a->touched[0] = a->touched[1] = NULL;
  kbd_cpu_alloc **slot = &R->freed[R->nfreed % KBD_CPU_FREED_HISTORY];
  free(*slot);
  *slot = a;
  R->nfreed++;
}

/* Record [p, p + bytes) allocated (host == 0: kbd_malloc, never-written) or registered (host == 1: host
 * memory, always written). Returns 0 when out of memory, -1 when a registered range overlaps a live one. */
static inline int kbd_cpu_register(void *p, size_t bytes, int host, const char *file, int line) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  kbd_cpu_alloc *a = (kbd_cpu_alloc *)calloc(1, sizeof *a);
  uint64_t *w = host ? NULL : (uint64_t *)calloc(bytes / 64 + 1, sizeof(uint64_t));
  if (!a || (!host && !w)) {
    free(a);
    free(w);
    return 0;
  }
  a->base = (uintptr_t)p;
  a->bytes = bytes;
  a->written = w;
  a->file = file;
  a->line = line;
  a->live = 1;
  a->host = host;
  const uintptr_t lo = a->base, hi = a->base + (bytes ? bytes : 1);
  pthread_mutex_lock(&R->mu);
  int ok = kbd_cpu_live_reserve(R);
  if (ok) {
    kbd_cpu_livevec *lv = R->live;
    kbd_cpu_alloc **v = KBD_CPU_LIVE_V(lv);
    size_t i = kbd_cpu_live_upper(v, lv->n, lo);
    /* Live records overlapping the new range. A range kbd just allocated is real memory nobody else owns,
     * so an overlapping record is stale: its memory went back without kbd_free / kbd_host_unregister. A
     * registration overlapping a live one is an error (cudaErrorHostMemoryAlreadyRegistered). */
    size_t first = i;
    while (first > 0 && v[first - 1]->base + (v[first - 1]->bytes ? v[first - 1]->bytes : 1) > lo)
      --first;
    size_t last = i;
    while (last < lv->n && v[last]->base < hi)
      ++last;
    if (first < last && host) {
      ok = -1;
    } else {
      kbd_cpu_seq_begin(R);
      for (size_t k = last; k-- > first;) {
        kbd_cpu_alloc *stale = v[k];
        kbd_cpu_live_remove(R, k);
        kbd_cpu_retire(R, stale, "<nowhere: its memory was released without kbd_free or kbd_host_unregister>", 0);
      }
      i = first;
      for (size_t k = lv->n; k > i; --k)
        __atomic_store_n(&v[k], v[k - 1], __ATOMIC_RELAXED);
      __atomic_store_n(&v[i], a, __ATOMIC_RELAXED);
      __atomic_store_n(&lv->n, lv->n + 1, __ATOMIC_RELAXED);
      kbd_cpu_seq_end(R);
    }
  }
  pthread_mutex_unlock(&R->mu);
  if (ok != 1) {
    free(a);
    free(w);
  }
  return ok;
}

/* Forget the live record whose base is p and whose kind is `host`; 0 when there is none. */
static inline int kbd_cpu_unregister(void *p, int host, const char *file, int line) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  pthread_mutex_lock(&R->mu);
  kbd_cpu_alloc *a = NULL;
  if (R->live) {
    kbd_cpu_alloc **v = KBD_CPU_LIVE_V(R->live);
    const size_t i = kbd_cpu_live_upper(v, R->live->n, (uintptr_t)p);
    if (i > 0 && v[i - 1]->base == (uintptr_t)p && v[i - 1]->host == host) {
      a = v[i - 1];
      kbd_cpu_seq_begin(R);
      kbd_cpu_live_remove(R, i - 1);
      kbd_cpu_seq_end(R);
      kbd_cpu_retire(R, a, file, line);
    }
  }
  pthread_mutex_unlock(&R->mu);
  return a != NULL;
}

/* ---- lookup (any thread, no lock) ------------------------------------------------------------------------ */

/* The live allocation holding all of [a, b) (b > a), or NULL; *seq: the sequence number it is valid for. */
static inline kbd_cpu_alloc *kbd_cpu_global_search(uintptr_t a, uintptr_t b, unsigned *seq) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  for (;;) {
    const unsigned s0 = __atomic_load_n(&R->seq, __ATOMIC_ACQUIRE);
    if (s0 & 1) { /* a writer is changing the array: let it finish */
      sched_yield();
      continue;
    }
    kbd_cpu_alloc *r = NULL;
    kbd_cpu_livevec *lv = __atomic_load_n(&R->live, __ATOMIC_ACQUIRE);
    if (lv) {
      kbd_cpu_alloc *const *v = KBD_CPU_LIVE_V(lv);
      const size_t i = kbd_cpu_live_upper(v, __atomic_load_n(&lv->n, __ATOMIC_RELAXED), a);
      kbd_cpu_alloc *c = i ? __atomic_load_n(&v[i - 1], __ATOMIC_RELAXED) : NULL;
      if (c && b <= c->base + c->bytes) r = c;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the reads above happen before the re-check */
    if (__atomic_load_n(&R->seq, __ATOMIC_RELAXED) == s0) {
      *seq = s0;
      return r;
    }
  }
}

/* The same through this thread's cache of recent hits: the common case is a few compares. */
static inline kbd_cpu_alloc *kbd_cpu_global_find(uintptr_t a, uintptr_t b) {
  kbd_cpu_gcache *c = &kbd_cpu_gc;
  if (KBD_LIKELY(c->seq == __atomic_load_n(&kbd_cpu_allocs.seq, __ATOMIC_ACQUIRE)))
    for (int k = 0; k < KBD_CPU_GCACHE; ++k)
      if (a >= c->lo[k] && b <= c->hi[k]) return c->r[k];
  unsigned seq;
  kbd_cpu_alloc *r = kbd_cpu_global_search(a, b, &seq);
  if (c->seq != seq) {
    memset(c, 0, sizeof *c);
    c->seq = seq;
  }
  if (r) {
    const unsigned k = c->next++ % KBD_CPU_GCACHE;
    c->lo[k] = r->base;
    c->hi[k] = r->base + r->bytes;
    c->r[k] = r;
  }
  return r;
}

/* ---- written bits ------------------------------------------------------------------------------------------ */

/* The mask of bits [sh, sh + n) of a word (n >= 1, sh + n <= 64). */
static inline uint64_t kbd_cpu_bitmask(unsigned sh, size_t n) {
  return (n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1)) << sh;
}

/* Offset of the first never-written byte of [off, off + n), or (size_t)-1: one word load per 64 bytes. */
static inline size_t kbd_cpu_first_unwritten(const uint64_t *w, size_t off, size_t n) {
  for (size_t i = off, end = off + n; i < end;) {
    const unsigned sh = (unsigned)(i & 63);
    const size_t take = 64 - sh < end - i ? 64 - sh : end - i;
    const uint64_t m = kbd_cpu_bitmask(sh, take), got = __atomic_load_n(&w[i >> 6], __ATOMIC_RELAXED) & m;
    if (KBD_UNLIKELY(got != m)) return (i & ~(size_t)63) + (size_t)__builtin_ctzll(~got & m);
    i += take;
  }
  return (size_t)-1;
}

/* Mark [off, off + n) written: a load per word, an atomic OR only for a word that still has a 0 bit (so
 * rewriting an output costs no read-modify-write and no cache-line ping-pong between host threads). */
static inline void kbd_cpu_set_written(uint64_t *w, size_t off, size_t n) {
  for (size_t i = off, end = off + n; i < end;) {
    const unsigned sh = (unsigned)(i & 63);
    const size_t take = 64 - sh < end - i ? 64 - sh : end - i;
    const uint64_t m = kbd_cpu_bitmask(sh, take);
    if ((__atomic_load_n(&w[i >> 6], __ATOMIC_RELAXED) & m) != m) __atomic_fetch_or(&w[i >> 6], m, __ATOMIC_RELAXED);
    i += take;
  }
}

/* Bits [i, i + n) of w as the low bits of a word (1 <= n <= 64). */
static inline uint64_t kbd_cpu_get_bits(const uint64_t *w, size_t i, size_t n) {
  const unsigned sh = (unsigned)(i & 63);
  uint64_t v = __atomic_load_n(&w[i >> 6], __ATOMIC_RELAXED) >> sh;
  if (sh && sh + n > 64) v |= __atomic_load_n(&w[(i >> 6) + 1], __ATOMIC_RELAXED) << (64 - sh);
  return n >= 64 ? v : v & (((uint64_t)1 << n) - 1);
}

/* ---- reports ---------------------------------------------------------------------------------------------- */

/* Why [a, b) is not wholly inside one live allocation, naming the allocation involved, appended to out. */
static inline void kbd_cpu_global_explain(uintptr_t a, uintptr_t b, const char *what, kbd_text *out) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  pthread_mutex_lock(&R->mu);
  kbd_cpu_alloc *const *v = R->live ? KBD_CPU_LIVE_V(R->live) : NULL;
  const size_t n = R->live ? R->live->n : 0;
  const kbd_cpu_alloc *cut = NULL, *freed = NULL, *below = NULL;
  /* Straddling a live allocation's start or end (a 0-byte one counts as 1 byte: nothing fits in it). */
  for (size_t i = 0; i < n && !cut; ++i)
    if (b > v[i]->base && a < v[i]->base + (v[i]->bytes ? v[i]->bytes : 1)) cut = v[i];
  /* Inside a freed allocation, newest first: its address may have been handed out more than once. One whose
   * memory a live allocation now reuses in part is not the story (the heap recycled it: an index just past that
   * live allocation is the usual culprit, below), whichever layout the host's malloc happened to pick. */
  for (size_t k = 0; !cut && k < R->nfreed && k < KBD_CPU_FREED_HISTORY && !freed; ++k) {
    const kbd_cpu_alloc *f = R->freed[(R->nfreed - 1 - k) % KBD_CPU_FREED_HISTORY];
    if (!(a >= f->base && a < f->base + (f->bytes ? f->bytes : 1))) continue;
    int reused = 0;
    for (size_t i = 0; i < n && !reused; ++i)
      reused =
          v[i]->base < f->base + (f->bytes ? f->bytes : 1) && f->base < v[i]->base + (v[i]->bytes ? v[i]->bytes : 1);
    if (!reused) freed = f;
  }
  /* Wholly outside every allocation: the nearest one below is the usual culprit (an index past n). */
  for (size_t i = 0; i < n; ++i)
    if (v[i]->base + v[i]->bytes <= a) below = v[i];
  if (below && a - (below->base + below->bytes) >= ((uintptr_t)1 << 20)) below = NULL;
  if (cut) {
    kbd_text_append(out,
                    "%s touches bytes [%lld, %lld) of a %zu-byte %s (base %p, %s at %s:%d): it is not wholly inside it",
                    what, (long long)(a - cut->base), (long long)(b - cut->base), cut->bytes,
                    cut->host ? "registered host range" : "allocation", (void *)cut->base,
                    cut->host ? "registered" : "allocated", cut->file, cut->line);
  } else if (freed) {
    kbd_text_append(out, "%s touches byte %lld of a %zu-byte %s (base %p) that was %s: %s at %s:%d, %s at %s:%d (%s)",
                    what, (long long)(a - freed->base), freed->bytes,
                    freed->host ? "registered host range" : "allocation", (void *)freed->base,
                    freed->host ? "unregistered" : "freed", freed->host ? "registered" : "allocated", freed->file,
                    freed->line, freed->host ? "unregistered" : "freed", freed->free_file, freed->free_line,
                    freed->host ? "an access after kbd_host_unregister" : "use after free");
  } else if (below) {
    kbd_text_append(out, "%s touches %p, %lld bytes past the end of the %zu-byte %s (base %p) %s at %s:%d", what,
                    (void *)a, (long long)(a - (below->base + below->bytes)), below->bytes,
                    below->host ? "registered host range" : "allocation", (void *)below->base,
                    below->host ? "registered" : "allocated", below->file, below->line);
  } else {
    kbd_text_append(out,
                    "%s touches %p, which is not device memory from kbd_malloc (a host pointer? on the GPU this is an "
                    "illegal address; host memory that kernels may access is registered with kbd_host_register)",
                    what, (void *)a);
  }
  pthread_mutex_unlock(&R->mu);
}

KBD_NORETURN static inline void kbd_cpu_global_fault(uintptr_t a, uintptr_t b, const char *file, int line,
                                                     const char *what) {
  kbd_text text = KBD_TEXT_INIT;
  kbd_cpu_global_explain(a, b, what, &text);
  /* outside a kernel kbd_cpu_fault aborts: nothing to keep */
  kbd_cpu_fault(KBD_ERR_BOUNDS, file, line, "%s",
                kbd_cpu_cur ? kbd_cpu_keep(kbd_cpu_cur->cta->L, &text) : kbd_text_str(&text));
}

KBD_NORETURN static inline void kbd_cpu_poison_fault(const kbd_cpu_alloc *r, size_t off, const char *file, int line,
                                                     const char *what) {
  kbd_cpu_fault(KBD_ERR_POISON, file, line,
                "%s reads never-written global memory: byte %lld of the %zu-byte allocation (base %p) allocated at "
                "%s:%d (nothing copied, set or stored there)",
                what, (long long)off, r->bytes, (void *)r->base, r->file, r->line);
}

/* ---- kernel accesses ---------------------------------------------------------------------------------------- */

/* KBD_CPU_G_ATOMIC: an atomic or acquire/release flag access, which never races (kbd/cpu/grace.h) */
enum { KBD_CPU_G_BOUNDS = 0, KBD_CPU_G_READ = 1, KBD_CPU_G_WRITE = 2, KBD_CPU_G_RMW = 3, KBD_CPU_G_ATOMIC = 4 };

/* ---- compulsory traffic (KBD_CPU_PROFILE) ----------------------------------------------------------------
 * The DRAM bytes a launch needs at least: every 32-byte sector (the unit DRAM and L2 move) read, and every one
 * written, counted once however often the kernel touches it - the traffic if every re-read hit L2. The
 * profiler's global_read/write_bytes count every access instead (no L2 at all); the truth lies between. */
/* The running worker's counters {read, written} in bytes (whole sectors); NULL when the launch is not profiled. */
KBD_WEAK __thread long long *kbd_cpu_touch_ctr = NULL;

/* At a profiled launch's start: every live allocation gets cleared sector bitmaps (an allocation whose bitmap
 * cannot be allocated is not counted). */
static inline void kbd_cpu_touch_reset(void) {
  kbd_cpu_registry *R = &kbd_cpu_allocs;
  pthread_mutex_lock(&R->mu);
  kbd_cpu_livevec *lv = R->live;
  for (size_t i = 0; lv && i < lv->n; ++i) {
    kbd_cpu_alloc *a = KBD_CPU_LIVE_V(lv)[i];
    const size_t words = (a->bytes + 32 * 64 - 1) / (32 * 64);
    for (int k = 0; k < 2; ++k) {
      if (!a->touched[k])
        a->touched[k] = (uint64_t *)calloc(words ? words : 1, sizeof(uint64_t));
      else
        memset(a->touched[k], 0, (words ? words : 1) * sizeof(uint64_t));
    }
  }
  pthread_mutex_unlock(&R->mu);
}

/* Sectors of [off, off + n) of r newly read / written in this launch, into the worker's counters. Several workers
 * may set bits of one word: fetch_or tells each which bits it set first, so no sector counts twice. */
static inline void kbd_cpu_touch(kbd_cpu_alloc *r, size_t off, size_t n, int mode) {
  const size_t s0 = off / 32, s1 = (off + n - 1) / 32;
  for (int k = 0; k < 2; ++k) {
    uint64_t *bm = r->touched[k];
    if (!bm || !(mode & (k ? KBD_CPU_G_WRITE : KBD_CPU_G_READ))) continue;
    long long added = 0;
    for (size_t sct = s0; sct <= s1;) {
      const size_t wi = sct / 64, last = s1 / 64 == wi ? s1 % 64 : 63;
      const uint64_t hi = last == 63 ? ~0ull : ((1ull << (last + 1)) - 1), mask = hi & ~((1ull << (sct % 64)) - 1);
      const uint64_t old = __atomic_fetch_or(&bm[wi], mask, __ATOMIC_RELAXED);
      added += __builtin_popcountll(mask & ~old);
      sct = wi * 64 + last + 1;
    }
    kbd_cpu_touch_ctr[k] += added * 32;
  }
}

/* A kbd access of global bytes [lo, lo + bytes) in a kernel: bounds always; reads (mode & KBD_CPU_G_READ)
 * check the written bits, writes set them; plain (non-atomic) reads and writes are checked for races with other
 * blocks and warps (kbd/cpu/grace.h). An access of 0 bytes touches nothing. */
static inline void kbd_cpu_global_access(const void *lo, size_t bytes, int mode, const char *file, int line,
                                         const char *what) {
  const uintptr_t a = (uintptr_t)lo, b = a + bytes;
  if (KBD_UNLIKELY(!bytes)) return;
  kbd_cpu_alloc *r = KBD_LIKELY(b > a) ? kbd_cpu_global_find(a, b) : NULL; /* b <= a: wrapped past the top */
  if (KBD_UNLIKELY(!r)) kbd_cpu_global_fault(a, b, file, line, what);
  if (KBD_UNLIKELY(kbd_cpu_touch_ctr != NULL) && mode != KBD_CPU_G_BOUNDS) kbd_cpu_touch(r, a - r->base, bytes, mode);
  if ((mode & KBD_CPU_G_RMW) && !(mode & KBD_CPU_G_ATOMIC)) {
    const kbd_cpu_gr_alloc ga = {r->base, r->bytes, r->file, r->line, r->host};
    kbd_cpu_gr_access(&r->race, &ga, a - r->base, bytes, (mode & KBD_CPU_G_WRITE) != 0, file, line, what);
  }
  uint64_t *w = r->written;
  if (!w) return; /* registered host memory: the host may have written any of it at any time */
  if (mode & KBD_CPU_G_READ) {
    const size_t bad = kbd_cpu_first_unwritten(w, a - r->base, bytes);
    if (KBD_UNLIKELY(bad != (size_t)-1)) kbd_cpu_poison_fault(r, bad, file, line, what);
  }
  if (mode & KBD_CPU_G_WRITE) kbd_cpu_set_written(w, a - r->base, bytes);
}

/* Bounds only, of [lo, hi) (kept for callers that check a range before moving it piecewise). */
static inline void kbd_cpu_check_global(const void *lo, const void *hi, const char *file, int line, const char *what) {
  kbd_cpu_global_access(lo, (size_t)((const char *)hi - (const char *)lo), KBD_CPU_G_BOUNDS, file, line, what);
}

/* ---- host calls (copies and memsets between launches) ---------------------------------------------------- */

/* The device side [p, p + bytes) of a host call: the allocation holding all of it, or NULL with a
 * KBD_ERR_BOUNDS status in *st naming the allocation ("kbd_copy_to_device (destination) touches ..."). On the
 * GPU cudaMemcpy / cudaMemset of such a range fails or writes memory the program does not own. */
static inline kbd_cpu_alloc *kbd_cpu_host_range(const void *p, size_t bytes, const char *what, const char *role,
                                                kbd_status *st, KBD_SITE_PARAMS) {
  const uintptr_t a = (uintptr_t)p, b = a + bytes;
  kbd_cpu_alloc *r = b > a ? kbd_cpu_global_find(a, b) : NULL;
  if (!r) {
    kbd_text w = KBD_TEXT_INIT, text = KBD_TEXT_INIT;
    kbd_text_append(&w, "%s (%s)", what, role);
    kbd_cpu_global_explain(a, b, kbd_text_str(&w), &text);
    *st = kbd_status_make(KBD_ERR_BOUNDS, "%s:%d: %s", KBD_SITE_ARGS, kbd_text_str(&text));
    kbd_text_free(&w);
    kbd_text_free(&text);
  }
  return r;
}

/* Bytes [off, off + n) of r were written by the host (a copy or a memset). */
static inline void kbd_cpu_host_wrote(kbd_cpu_alloc *r, size_t off, size_t n) {
  if (r->written) kbd_cpu_set_written(r->written, off, n);
}

/* A device-to-device copy carries the written state with the data: bytes copied from never-written source
 * bytes hold whatever those held, so they are never-written in the destination too. */
static inline int kbd_cpu_copy_written(kbd_cpu_alloc *d, size_t doff, const kbd_cpu_alloc *s, size_t soff, size_t n) {
  if (!d->written) return 1; /* host memory: always counts as written */
  if (!s->written) {
    kbd_cpu_set_written(d->written, doff, n);
    return 1;
  }
  /* Through a copy of the source bits: source and destination may overlap (memmove). */
  const size_t words = n / 64 + 1;
  uint64_t *tmp = (uint64_t *)malloc(words * sizeof *tmp);
  if (!tmp) return 0;
  for (size_t k = 0, i = 0; i < n; ++k, i += 64)
    tmp[k] = kbd_cpu_get_bits(s->written, soff + i, n - i < 64 ? n - i : 64);
  for (size_t i = 0; i < n;) {
    const size_t o = doff + i;
    const unsigned sh = (unsigned)(o & 63);
    const size_t take = 64 - sh < n - i ? 64 - sh : n - i;
    const uint64_t m = kbd_cpu_bitmask(sh, take), bits = (kbd_cpu_get_bits(tmp, i, take) << sh) & m;
    uint64_t *wp = &d->written[o >> 6];
    __atomic_store_n(wp, (__atomic_load_n(wp, __ATOMIC_RELAXED) & ~m) | bits, __ATOMIC_RELAXED);
    i += take;
  }
  free(tmp);
  return 1;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_GLOBAL_H */
