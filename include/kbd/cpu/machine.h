/* kbd/cpu/machine.h - the CPU machine behind KBD_CPU: blocks, warps as fibers, shared memory,
 * barriers, deadlock detection and diagnostics.
 *
 * Model (docs/cpu-machine.md has the full story):
 *  - A launch runs its blocks on host threads (KBD_CPU_THREADS, default: all cores). Blocks are
 *    independent, so results do not depend on the thread count.
 *  - Inside a block each warp is a fiber on one host thread, scheduled cooperatively: a warp runs until
 *    it waits (barrier) or ends. Kernel code therefore executes once per warp; per-lane work is written
 *    with KBD_FOR_LANES, and tiles hold the 32 lanes' fragments.
 *  - The order in which ready warps run is round robin, or a permutation drawn from KBD_CPU_SEED.
 *  - Shared memory is a real byte array per block, poisoned at block start.
 *  - When no warp can run and some have not ended, the block is deadlocked: the launch fails with a
 *    report of every warp's wait site.
 */
#ifndef KBD_CPU_MACHINE_H
#define KBD_CPU_MACHINE_H

#include "../config.h"

#if KBD_MODE_CPU

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../grid.h"
#include "../status.h"
#include "fiber.h"

#define KBD_CPU_MAX_WARPS (KBD_MAX_BLOCK_THREADS / KBD_WARP_SIZE)
#define KBD_CPU_MAX_STATICS 64
/* Poison: the 32-bit word 0x7FBF7FBF repeated (bytes BF 7F BF 7F). As f32 it is a NaN; each 16-bit half
 * is a NaN in both f16 and bf16; as an int32 it is an unlikely 2143256511. A value read through kbd that
 * still equals the pattern was never written. */
#define KBD_CPU_POISON_WORD 0x7FBF7FBFu
#define KBD_CPU_DEFAULT_STACK (256u * 1024u)
/* Blocks one host thread keeps in flight while earlier ones wait for other blocks. */
#define KBD_CPU_MAX_RESIDENT 64

typedef void (*kbd_cpu_entry)(const void *params);

enum { KBD_CPU_W_READY = 0, KBD_CPU_W_BLOCKED = 1, KBD_CPU_W_DONE = 2, KBD_CPU_W_FAULTED = 3 };

struct kbd_cpu_cta;
struct kbd_cpu_launch;

typedef struct kbd_cpu_warp {
  kbd_fiber fiber;
  struct kbd_cpu_cta *cta;
  int id;
  int state;
  int wait_bar; /* barrier id while blocked */
  int spinning; /* yielded in kbd_cpu_spin: waits for another block */
  const char *wait_file;
  int wait_line;
} kbd_cpu_warp;

/* One named barrier (PTX bar/barrier, ids 0..15). Counting is in threads, a warp arrives as 32. */
typedef struct kbd_cpu_barrier {
  int expected;     /* thread count of the barrier instance in flight */
  int arrived;      /* threads arrived so far */
  uint32_t waiters; /* warps blocked in bar.sync on it */
  const char *file; /* where the in-flight instance was first reached */
  int line;
} kbd_cpu_barrier;

typedef struct kbd_cpu_static {
  const void *key; /* address of the declaration site's marker */
  size_t off, bytes;
} kbd_cpu_static;

typedef struct kbd_cpu_cta {
  struct kbd_cpu_launch *L;
  unsigned bx, by, bz;
  unsigned long long linear;
  int nwarps;
  int last; /* last warp run (round robin) */
  int failed;
  int spins; /* consecutive spin yields without useful work */
  uint64_t rng;
  kbd_fiber sched;
  kbd_stack_pool stacks;
  struct kbd_cpu_cta *next; /* free list of recycled block states */
  unsigned char *smem;      /* KBD_MAX_SMEM_BYTES, 1024-byte aligned */
  size_t dyn_bytes;         /* dynamic shared memory sits at offset 0 */
  size_t smem_top;          /* end of dynamic + static allocations */
  int nstatics;
  kbd_cpu_static statics[KBD_CPU_MAX_STATICS];
  kbd_cpu_barrier bars[KBD_NUM_NAMED_BARRIERS];
  kbd_cpu_warp warps[KBD_CPU_MAX_WARPS];
} kbd_cpu_cta;

typedef struct kbd_cpu_launch {
  kbd_launch_cfg cfg;
  int threads;
  kbd_cpu_entry entry;
  const void *params;
  const char *name;
  unsigned long long nblocks;
  unsigned long long next;       /* next block to start (atomic) */
  unsigned long long fail_block; /* lowest failed block, ~0 if none (atomic, guarded by mu) */
  pthread_mutex_t mu;
  kbd_status status;
  uint64_t seed;
  size_t stack_bytes;
  unsigned long long progress; /* bumped by flag writes and finished blocks (atomic) */
  int live_workers;            /* host threads still running blocks (atomic) */
  int stalled_workers;         /* of which only hold blocks waiting on other blocks (atomic) */
  long spin_timeout_ms;
} kbd_cpu_launch;

/* The warp whose fiber is running on this host thread. Weak: one instance for the whole program, no
 * matter how many translation units include kbd (a `static` would be one copy per TU). */
KBD_WEAK __thread kbd_cpu_warp *kbd_cpu_cur = NULL;

/* The running warp; kernel-only functions called from host code stop here with a message instead of
 * dereferencing NULL. */
static inline kbd_cpu_warp *kbd_cpu_self(void) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (KBD_UNLIKELY(!w)) {
    fprintf(stderr, "kbd: a kernel-only function (index, barrier, shared memory) was called outside a kernel\n");
    abort();
  }
  return w;
}

/* ---- environment --------------------------------------------------------------------------------- */

static inline long kbd_cpu_env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  char *end = NULL;
  long v = strtol(s, &end, 0);
  return (end && *end == '\0') ? v : dflt;
}

static inline int kbd_cpu_host_threads(void) {
  long n = kbd_cpu_env_long("KBD_CPU_THREADS", 0);
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n <= 0) n = 1;
  return n > 256 ? 256 : (int)n;
}

/* ---- faults ----------------------------------------------------------------------------------------- */

static inline void kbd_cpu_record(kbd_cpu_cta *cta, kbd_code code, const char *text) {
  kbd_cpu_launch *L = cta->L;
  pthread_mutex_lock(&L->mu);
  /* Keep the fault of the lowest block: every block below it runs to completion, so the reported
   * failure is the same for any host-thread count. */
  if (cta->linear < L->fail_block) {
    __atomic_store_n(&L->fail_block, cta->linear, __ATOMIC_RELEASE);
    char suffix[160];
    const int ns =
        snprintf(suffix, sizeof suffix, " [kernel %s, block (%u,%u,%u)]", L->name, cta->bx, cta->by, cta->bz);
    /* The text is cut, never the suffix that says where it happened. */
    L->status = kbd_status_make(code, "%.*s%s", (int)(KBD_STATUS_MSG_LEN - 1 - ns), text, suffix);
  }
  pthread_mutex_unlock(&L->mu);
  cta->failed = 1;
}

/* Report a fault in the running warp and stop it; the launch returns `code`. Never returns. */
KBD_NORETURN KBD_PRINTF(4, 5) static inline void kbd_cpu_fault(kbd_code code, const char *file, int line,
                                                               const char *fmt, ...) {
  char text[KBD_STATUS_MSG_LEN];
  kbd_cpu_warp *w = kbd_cpu_cur;
  int n = snprintf(text, sizeof text, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  if (!w) { /* not inside a kernel: a programming error in host code */
    fprintf(stderr, "kbd: %s\n", text);
    abort();
  }
  size_t len = strlen(text);
  snprintf(text + len, sizeof text - len, " (warp %d)", w->id);
  kbd_cpu_record(w->cta, code, text);
  w->state = KBD_CPU_W_FAULTED;
  kbd_fiber_switch(&w->fiber, &w->cta->sched);
  abort(); /* a faulted fiber is never resumed */
}

/* kbd_trap: an explicit kernel-side failure with a message (GPU: `trap`). */
#define kbd_trap(msg) kbd_cpu_fault(KBD_ERR_KERNEL, __FILE__, __LINE__, "kbd_trap: %s", msg)

/* ---- scheduling -------------------------------------------------------------------------------------- */

static inline uint64_t kbd_cpu_rand(uint64_t *s) { /* splitmix64: cheap, good enough to permute warps */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Next warp to run: a ready warp that is not spinning if there is one (spinners only re-check a flag),
 * in round-robin order (seed 0) or drawn from the block's seeded generator. */
static inline int kbd_cpu_pick(kbd_cpu_cta *cta) {
  int n = cta->nwarps;
  for (int pass = 0; pass < 2; ++pass) {
    if (cta->L->seed == 0) {
      for (int k = 1; k <= n; ++k) {
        int i = (cta->last + k) % n;
        if (cta->warps[i].state == KBD_CPU_W_READY && (pass || !cta->warps[i].spinning)) return i;
      }
    } else {
      int ready[KBD_CPU_MAX_WARPS], m = 0;
      for (int i = 0; i < n; ++i)
        if (cta->warps[i].state == KBD_CPU_W_READY && (pass || !cta->warps[i].spinning)) ready[m++] = i;
      if (m) return ready[kbd_cpu_rand(&cta->rng) % (uint64_t)m];
    }
  }
  return -1;
}

/* Give the host thread back to the block's scheduler; the warp stays ready (a scheduling point). */
static inline void kbd_cpu_yield(void) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  kbd_fiber_switch(&w->fiber, &w->cta->sched);
}

static inline void kbd_cpu_warp_main(void *arg) {
  kbd_cpu_warp *w = (kbd_cpu_warp *)arg;
  w->cta->L->entry(w->cta->L->params);
  w->state = KBD_CPU_W_DONE;
  kbd_fiber_switch(&w->fiber, &w->cta->sched);
  abort();
}

/* One warp's part of a deadlock report ("" for a running or faulted warp). */
static inline int kbd_cpu_warp_wait(const kbd_cpu_cta *cta, int i, char *buf, size_t cap) {
  const kbd_cpu_warp *w = &cta->warps[i];
  if (w->state == KBD_CPU_W_BLOCKED) {
    const kbd_cpu_barrier *b = &cta->bars[w->wait_bar];
    return snprintf(buf, cap, "waits at %s:%d on barrier %d (%d of %d threads arrived);", w->wait_file, w->wait_line,
                    w->wait_bar, b->arrived, b->expected);
  }
  if (w->state == KBD_CPU_W_READY && w->spinning)
    return snprintf(buf, cap, "spins at %s:%d waiting for another block;", w->wait_file, w->wait_line);
  buf[0] = '\0';
  return 0;
}

/* Describe every unfinished warp of `cta` into text: exited warps first (usually the culprit), then each
 * waiting warp; when that would not fit, runs of warps waiting at the same place are merged. */
static inline size_t kbd_cpu_describe(const kbd_cpu_cta *cta, char *text, size_t n, size_t cap) {
  for (int i = 0; i < cta->nwarps && n < cap; ++i)
    if (cta->warps[i].state == KBD_CPU_W_DONE) n += (size_t)snprintf(text + n, cap - n, " warp %d has exited;", i);
  const size_t start = n < cap ? n : cap;
  for (int pass = 0; pass < 2; ++pass) {
    n = start;
    for (int i = 0; i < cta->nwarps && n < cap;) {
      char what[256], next[256];
      if (!kbd_cpu_warp_wait(cta, i, what, sizeof what)) {
        ++i;
        continue;
      }
      int j = i + 1;
      if (pass == 1)
        while (j < cta->nwarps && kbd_cpu_warp_wait(cta, j, next, sizeof next) && strcmp(what, next) == 0)
          ++j;
      if (j == i + 1)
        n += (size_t)snprintf(text + n, cap - n, " warp %d %s", i, what);
      else
        n += (size_t)snprintf(text + n, cap - n, " warps %d-%d each %s", i, j - 1, what);
      i = j;
    }
    if (n + 64 < cap) break; /* fits with room for the kernel/block suffix */
  }
  return n < cap ? n : cap;
}

static inline void kbd_cpu_deadlock(kbd_cpu_cta *cta) {
  char text[KBD_STATUS_MSG_LEN];
  size_t n = (size_t)snprintf(text, sizeof text, "deadlock: every live warp of the block is blocked;");
  kbd_cpu_describe(cta, text, n, sizeof text);
  kbd_cpu_record(cta, KBD_ERR_DEADLOCK, text);
}

static inline void kbd_cpu_poison(unsigned char *p, size_t off, size_t bytes) {
  /* The pattern depends on the address (even byte 0xBF, odd byte 0x7F), so any aligned element of any
   * size sees the same bits as a 0x7FBF7FBF word would give it. */
  for (size_t i = off; i < off + bytes; ++i)
    p[i] = (i & 1) ? 0x7F : 0xBF;
}

static inline void kbd_cpu_cta_start(kbd_cpu_cta *cta, unsigned long long b) {
  kbd_cpu_launch *L = cta->L;
  const unsigned gx = L->cfg.grid.x, gy = L->cfg.grid.y;
  cta->linear = b;
  cta->bx = (unsigned)(b % gx);
  cta->by = (unsigned)((b / gx) % gy);
  cta->bz = (unsigned)(b / ((unsigned long long)gx * gy));
  cta->nwarps = L->threads / KBD_WARP_SIZE;
  cta->last = -1;
  cta->failed = 0;
  cta->spins = 0;
  cta->rng = L->seed * 0x2545F4914F6CDD1Dull + cta->linear;
  cta->dyn_bytes = L->cfg.smem_bytes;
  cta->smem_top = L->cfg.smem_bytes;
  cta->nstatics = 0;
  memset(cta->bars, 0, sizeof cta->bars);
  kbd_cpu_poison(cta->smem, 0, cta->dyn_bytes);
  for (int i = 0; i < cta->nwarps; ++i) {
    kbd_cpu_warp *w = &cta->warps[i];
    w->cta = cta;
    w->id = i;
    w->state = KBD_CPU_W_READY;
    w->spinning = 0;
    w->wait_bar = -1;
    kbd_fiber_init(&w->fiber, kbd_stack_pool_get(&cta->stacks, (size_t)i), cta->stacks.each, kbd_cpu_warp_main, w);
  }
}

enum { KBD_CPU_CTA_DONE = 0, KBD_CPU_CTA_FAILED = 1, KBD_CPU_CTA_STALLED = 2 };

/* Run the block's warps until it ends, fails, or stalls: every runnable warp is spinning on a flag that
 * only another block can set (each has re-checked once since the last useful work). */
static inline int kbd_cpu_cta_step(kbd_cpu_cta *cta) {
  int worked = 0;
  for (;;) {
    int i = kbd_cpu_pick(cta);
    if (i < 0) {
      for (int k = 0; k < cta->nwarps; ++k)
        if (cta->warps[k].state != KBD_CPU_W_DONE) {
          kbd_cpu_deadlock(cta);
          return KBD_CPU_CTA_FAILED;
        }
      return KBD_CPU_CTA_DONE;
    }
    kbd_cpu_warp *w = &cta->warps[i];
    cta->last = i;
    w->spinning = 0;
    kbd_cpu_cur = w;
    kbd_fiber_switch(&cta->sched, &w->fiber);
    kbd_cpu_cur = NULL;
    if (cta->failed) return KBD_CPU_CTA_FAILED;
    if (w->spinning) {
      int runnable = 0;
      for (int k = 0; k < cta->nwarps; ++k)
        runnable += cta->warps[k].state == KBD_CPU_W_READY;
      if (++cta->spins >= runnable) {
        cta->spins = 0;
        if (worked) __atomic_fetch_add(&cta->L->progress, 1ull, __ATOMIC_RELEASE);
        return KBD_CPU_CTA_STALLED;
      }
    } else {
      cta->spins = 0;
      worked = 1;
    }
  }
}

/* A spinning warp (kbd_cpu_spin) yields with `spinning` set; the scheduler prefers other warps. */
static inline void kbd_cpu_spin(const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  w->spinning = 1;
  w->wait_file = file;
  w->wait_line = line;
  kbd_fiber_switch(&w->fiber, &w->cta->sched);
}

/* Memory writes that can release a spinning block bump this counter (kbd/atomic.h). */
static inline void kbd_cpu_note_progress(void) {
  if (kbd_cpu_cur) __atomic_fetch_add(&kbd_cpu_cur->cta->L->progress, 1ull, __ATOMIC_RELEASE);
}

/* Block state (fiber stacks + 227 KiB of shared memory) is recycled across launches: allocating it per
 * launch cost an mmap, 8+ mprotects and fresh page faults every time, which dominated small launches. */
typedef struct kbd_cpu_cta_cache {
  pthread_mutex_t mu;
  kbd_cpu_cta *head;
  int count;
} kbd_cpu_cta_cache;
#define KBD_CPU_CTA_CACHE_MAX 64
KBD_WEAK kbd_cpu_cta_cache kbd_cpu_ctas = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static inline void kbd_cpu_cta_destroy(kbd_cpu_cta *cta) {
  kbd_stack_pool_free(&cta->stacks);
  free(cta->smem);
  free(cta);
}

static inline void kbd_cpu_cta_free(kbd_cpu_cta *cta) {
  if (!cta) return;
  pthread_mutex_lock(&kbd_cpu_ctas.mu);
  if (kbd_cpu_ctas.count < KBD_CPU_CTA_CACHE_MAX) {
    cta->next = kbd_cpu_ctas.head;
    kbd_cpu_ctas.head = cta;
    kbd_cpu_ctas.count++;
    cta = NULL;
  }
  pthread_mutex_unlock(&kbd_cpu_ctas.mu);
  if (cta) kbd_cpu_cta_destroy(cta);
}

static inline kbd_cpu_cta *kbd_cpu_cta_new(kbd_cpu_launch *L) {
  const size_t nwarps = (size_t)(L->threads / KBD_WARP_SIZE);
  kbd_cpu_cta *cta = NULL;
  pthread_mutex_lock(&kbd_cpu_ctas.mu);
  for (kbd_cpu_cta **pp = &kbd_cpu_ctas.head; *pp; pp = &(*pp)->next) {
    const kbd_stack_pool *st = &(*pp)->stacks;
    /* Any cached block with enough stacks of the requested size fits. */
    if (st->count >= nwarps && st->each >= L->stack_bytes && st->each < L->stack_bytes + st->page) {
      cta = *pp;
      *pp = cta->next;
      kbd_cpu_ctas.count--;
      break;
    }
  }
  pthread_mutex_unlock(&kbd_cpu_ctas.mu);
  if (cta) {
    cta->L = L;
    return cta;
  }
  cta = (kbd_cpu_cta *)calloc(1, sizeof *cta);
  if (!cta) return NULL;
  cta->L = L;
  cta->smem = (unsigned char *)aligned_alloc(1024, KBD_MAX_SMEM_BYTES);
  if (!cta->smem || !kbd_stack_pool_init(&cta->stacks, nwarps, L->stack_bytes)) {
    free(cta->smem);
    free(cta);
    return NULL;
  }
  return cta;
}

/* C11 timespec_get: available under -std=c11 whatever feature macros the includer set. */
static inline void kbd_cpu_now(struct timespec *t) { timespec_get(t, TIME_UTC); }
static inline double kbd_cpu_ms_since(const struct timespec *t0) {
  struct timespec t;
  kbd_cpu_now(&t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) * 1e-6;
}

/* Cross-block deadlock: every live worker has only stalled blocks and nothing moved for a while. */
static inline void kbd_cpu_cross_deadlock(kbd_cpu_cta **act, int nact) {
  for (int a = 0; a < nact; ++a) {
    char text[KBD_STATUS_MSG_LEN];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "cross-block deadlock: every running block waits for another block that cannot run;");
    kbd_cpu_describe(act[a], text, n, sizeof text);
    kbd_cpu_record(act[a], KBD_ERR_DEADLOCK, text);
  }
}

/* One host thread: takes blocks in increasing order and runs them. A block that stalls waiting for
 * another block is set aside and the next block is started, up to KBD_CPU_MAX_RESIDENT per thread, so
 * producer/consumer chains between blocks (decoupled look-back) make progress on any thread count. */
static inline void *kbd_cpu_worker(void *arg) {
  kbd_cpu_launch *L = (kbd_cpu_launch *)arg;
  kbd_cpu_cta *act[KBD_CPU_MAX_RESIDENT];
  kbd_cpu_cta *spare = NULL;
  int nact = 0, stalled_flag = 0, oom = 0;
  int drained = 0; /* no more blocks to take */
  struct timespec t0;
  unsigned long long p0 = 0;
  for (;;) {
    int all_stalled = nact > 0;
    for (int a = 0; a < nact;) {
      kbd_cpu_cta *cta = act[a];
      if (cta->linear > __atomic_load_n(&L->fail_block, __ATOMIC_ACQUIRE)) { /* irrelevant after a failure */
        act[a] = act[--nact];
        kbd_cpu_cta_free(spare);
        spare = cta;
        continue;
      }
      int r = kbd_cpu_cta_step(cta);
      if (r == KBD_CPU_CTA_STALLED) {
        ++a;
        continue;
      }
      all_stalled = 0;
      __atomic_fetch_add(&L->progress, 1ull, __ATOMIC_RELEASE);
      act[a] = act[--nact];
      kbd_cpu_cta_free(spare);
      spare = cta;
    }
    if (!drained && (nact == 0 || all_stalled) && nact < KBD_CPU_MAX_RESIDENT) {
      unsigned long long b = __atomic_fetch_add(&L->next, 1ull, __ATOMIC_RELAXED);
      if (b >= L->nblocks || b > __atomic_load_n(&L->fail_block, __ATOMIC_ACQUIRE)) {
        drained = 1;
      } else {
        kbd_cpu_cta *cta = spare ? spare : kbd_cpu_cta_new(L);
        spare = NULL;
        if (!cta) {
          oom = 1;
          break;
        }
        kbd_cpu_cta_start(cta, b);
        act[nact++] = cta;
        continue;
      }
    }
    if (nact == 0) break;
    if (!all_stalled) {
      if (stalled_flag) __atomic_fetch_sub(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
      stalled_flag = 0;
      continue;
    }
    /* Everything here waits on other blocks. */
    if (!stalled_flag) {
      stalled_flag = 1;
      __atomic_fetch_add(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
      p0 = __atomic_load_n(&L->progress, __ATOMIC_ACQUIRE);
      kbd_cpu_now(&t0);
    } else {
      unsigned long long p = __atomic_load_n(&L->progress, __ATOMIC_ACQUIRE);
      if (p != p0) {
        p0 = p;
        kbd_cpu_now(&t0);
      } else if (__atomic_load_n(&L->stalled_workers, __ATOMIC_ACQUIRE) ==
                     __atomic_load_n(&L->live_workers, __ATOMIC_ACQUIRE) &&
                 kbd_cpu_ms_since(&t0) > (double)L->spin_timeout_ms) {
        kbd_cpu_cross_deadlock(act, nact);
        for (int a = 0; a < nact; ++a)
          kbd_cpu_cta_free(act[a]);
        nact = 0;
        break;
      }
    }
    sched_yield();
  }
  if (stalled_flag) __atomic_fetch_sub(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
  __atomic_fetch_sub(&L->live_workers, 1, __ATOMIC_ACQ_REL);
  for (int a = 0; a < nact; ++a)
    kbd_cpu_cta_free(act[a]);
  kbd_cpu_cta_free(spare);
  if (oom) {
    pthread_mutex_lock(&L->mu);
    if (L->fail_block == ~0ull) {
      L->fail_block = 0;
      L->status = kbd_status_make(KBD_ERR_OOM, "kernel %s: cannot allocate the CPU machine's block state", L->name);
    }
    pthread_mutex_unlock(&L->mu);
  }
  return NULL;
}

/* ---- host threads ------------------------------------------------------------------------------------ */

/* A pool of host threads kept between launches: creating and joining pthreads cost 60-80 us per thread
 * per launch, more than a small kernel's whole run. The launching thread is always worker 0; a launch
 * that finds the pool busy (another host thread is launching) creates its own threads. The pool belongs
 * to one process: after fork() the child starts a fresh one. */
typedef struct kbd_cpu_pool {
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  long pid;              /* process that owns the threads */
  int nthreads;          /* pool threads alive */
  int busy;              /* a launch is using the pool */
  unsigned long gen;     /* job generation */
  int want, taken, running;
  kbd_cpu_launch *job;
} kbd_cpu_pool;

KBD_WEAK kbd_cpu_pool kbd_cpu_pool_g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                        PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, NULL};

static inline void *kbd_cpu_pool_main(void *arg) {
  kbd_cpu_pool *P = (kbd_cpu_pool *)arg;
  pthread_mutex_lock(&P->mu);
  unsigned long seen = 0;
  for (;;) {
    while (P->gen == seen) pthread_cond_wait(&P->go, &P->mu);
    seen = P->gen;
    if (P->taken >= P->want) continue;
    P->taken++;
    kbd_cpu_launch *L = P->job;
    pthread_mutex_unlock(&P->mu);
    kbd_cpu_worker(L);
    pthread_mutex_lock(&P->mu);
    if (--P->running == 0) pthread_cond_broadcast(&P->done);
  }
  return NULL;
}

/* Run L on the calling thread plus `extra` pool threads. Returns 0 (nothing run) if the pool is busy. */
static inline int kbd_cpu_pool_run(kbd_cpu_launch *L, int extra) {
  kbd_cpu_pool *P = &kbd_cpu_pool_g;
  if (P->pid != (long)getpid()) { /* first use, or a child after fork(): the threads are not ours */
    const kbd_cpu_pool fresh = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                (long)getpid(), 0, 0, 0, 0, 0, 0, NULL};
    *P = fresh;
  }
  pthread_mutex_lock(&P->mu);
  if (P->busy) {
    pthread_mutex_unlock(&P->mu);
    return 0;
  }
  while (P->nthreads < extra) {
    pthread_t t;
    if (pthread_create(&t, NULL, kbd_cpu_pool_main, P) != 0) break;
    pthread_detach(t);
    P->nthreads++;
  }
  if (extra > P->nthreads) extra = P->nthreads;
  P->busy = 1;
  P->job = L;
  P->want = extra;
  P->taken = 0;
  P->running = extra;
  L->live_workers = extra + 1;
  P->gen++;
  pthread_cond_broadcast(&P->go);
  pthread_mutex_unlock(&P->mu);
  kbd_cpu_worker(L);
  pthread_mutex_lock(&P->mu);
  while (P->running > 0) pthread_cond_wait(&P->done, &P->mu);
  P->busy = 0;
  P->job = NULL;
  pthread_mutex_unlock(&P->mu);
  return 1;
}

/* Run a kernel on the CPU machine. Synchronous: returns when every block has ended or one failed. */
static inline kbd_status kbd_cpu_launch_kernel(const kbd_launch_cfg *cfg, int threads, kbd_cpu_entry entry,
                                               const void *params, const char *name) {
  kbd_status s = kbd_check_launch(cfg, threads, name);
  if (!kbd_ok(s)) return s;
  kbd_cpu_launch L;
  memset(&L, 0, sizeof L);
  L.cfg = *cfg;
  L.threads = threads;
  L.entry = entry;
  L.params = params;
  L.name = name;
  L.nblocks = (unsigned long long)cfg->grid.x * cfg->grid.y * cfg->grid.z;
  L.fail_block = ~0ull;
  L.status = kbd_status_ok();
  L.seed = (uint64_t)kbd_cpu_env_long("KBD_CPU_SEED", 0);
  long kb = kbd_cpu_env_long("KBD_CPU_STACK_KB", 0);
  L.stack_bytes = kb > 0 ? (size_t)kb * 1024u : KBD_CPU_DEFAULT_STACK;
  L.spin_timeout_ms = kbd_cpu_env_long("KBD_CPU_SPIN_TIMEOUT_MS", 200);
  pthread_mutex_init(&L.mu, NULL);
  unsigned long long nw = (unsigned long long)kbd_cpu_host_threads();
  if (nw > L.nblocks) nw = L.nblocks;
  L.live_workers = (int)nw;
  if (nw <= 1) {
    L.live_workers = 1;
    kbd_cpu_worker(&L);
  } else if (kbd_cpu_pool_run(&L, (int)nw - 1)) {
    /* ran on this thread + the pool */
  } else {
    pthread_t tid[256];
    unsigned long long started = 0;
    for (; started < nw; ++started)
      if (pthread_create(&tid[started], NULL, kbd_cpu_worker, &L) != 0) break;
    /* Threads that could not be created never count as live. */
    __atomic_fetch_sub(&L.live_workers, (int)(nw - started), __ATOMIC_ACQ_REL);
    if (started == 0) {
      L.live_workers = 1;
      kbd_cpu_worker(&L);
    }
    for (unsigned long long i = 0; i < started; ++i)
      pthread_join(tid[i], NULL);
  }
  pthread_mutex_destroy(&L.mu);
  if (!kbd_ok(L.status) && kbd_cpu_env_long("KBD_CPU_QUIET", 0) == 0)
    fprintf(stderr, "kbd: %s: %s\n", kbd_code_name(L.status.code), L.status.msg);
  return L.status;
}

/* ---- barriers (PTX bar.sync / bar.arrive semantics) ----------------------------------------------------- */

/* nthreads == 0 means every thread of the block, as in `bar.sync id;`. */
static inline void kbd_cpu_bar(int id, int nthreads, int arrive_only, const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w) kbd_cpu_fault(KBD_ERR_KERNEL, file, line, "barrier called outside a kernel"); /* aborts */
  kbd_cpu_cta *cta = w->cta;
  const int all = cta->nwarps * KBD_WARP_SIZE;
  if (id < 0 || id >= KBD_NUM_NAMED_BARRIERS)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line, "barrier id %d is outside 0..15", id);
  if (arrive_only && nthreads == 0)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line, "bar.arrive on barrier %d needs an explicit thread count", id);
  if (nthreads == 0) nthreads = all;
  if (nthreads < 0 || nthreads % KBD_WARP_SIZE != 0 || nthreads > all)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                  "barrier %d: thread count %d must be a multiple of 32 and at most the block's %d threads", id,
                  nthreads, all);
  kbd_cpu_barrier *b = &cta->bars[id];
  if (b->arrived == 0) {
    b->expected = nthreads;
    b->file = file;
    b->line = line;
  } else if (b->expected != nthreads) {
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                  "barrier %d reached with thread count %d while the instance begun at %s:%d counts %d", id, nthreads,
                  b->file, b->line, b->expected);
  }
  b->arrived += KBD_WARP_SIZE;
  if (b->arrived == b->expected) {
    /* Barrier complete: release every waiter, start a fresh instance. */
    for (int i = 0; i < cta->nwarps; ++i)
      if (b->waiters & (1u << i)) cta->warps[i].state = KBD_CPU_W_READY;
    b->waiters = 0;
    b->arrived = 0;
    kbd_cpu_yield(); /* a scheduling point, so seeds can reorder who runs first after the barrier */
    return;
  }
  if (arrive_only) return;
  b->waiters |= 1u << w->id;
  w->state = KBD_CPU_W_BLOCKED;
  w->wait_bar = id;
  w->wait_file = file;
  w->wait_line = line;
  kbd_cpu_yield();
}

/* ---- shared memory ---------------------------------------------------------------------------------------- */

static inline void *kbd_cpu_smem_static(const void *key, size_t bytes, size_t align, const char *file, int line) {
  kbd_cpu_cta *cta = kbd_cpu_self()->cta;
  for (int i = 0; i < cta->nstatics; ++i)
    if (cta->statics[i].key == key) return cta->smem + cta->statics[i].off;
  if (cta->nstatics == KBD_CPU_MAX_STATICS)
    kbd_cpu_fault(KBD_ERR_INVALID, file, line, "more than %d static shared-memory declarations", KBD_CPU_MAX_STATICS);
  size_t off = (cta->smem_top + align - 1) / align * align;
  if (off + bytes > KBD_MAX_SMEM_BYTES)
    kbd_cpu_fault(KBD_ERR_INVALID, file, line,
                  "static shared memory of %zu bytes brings the block to %zu bytes (dynamic %zu), over the %u-byte "
                  "(227 KiB) limit",
                  bytes, off + bytes, cta->dyn_bytes, KBD_MAX_SMEM_BYTES);
  kbd_cpu_static *s = &cta->statics[cta->nstatics++];
  s->key = key;
  s->off = off;
  s->bytes = bytes;
  /* Poison from the old top: the alignment gap is not addressable data either. */
  kbd_cpu_poison(cta->smem, cta->smem_top, off + bytes - cta->smem_top);
  cta->smem_top = off + bytes;
  return cta->smem + off;
}

/* A shared-memory access of [p, p+bytes) by a kbd primitive: it must lie inside ONE allocation (the
 * dynamic region or one KBD_SHARED array). On the GPU the arrays sit in another order, so running off
 * one into its neighbour is a different bug there - report it here. */
static inline void kbd_cpu_check_smem(const void *p, size_t bytes, const char *file, int line, const char *what) {
  kbd_cpu_cta *cta = kbd_cpu_cur->cta;
  const uintptr_t lo = (uintptr_t)p, base = (uintptr_t)cta->smem;
  const long long off = (long long)(lo - base), end = off + (long long)bytes;
  if (lo >= base && end <= (long long)cta->dyn_bytes) return;
  for (int i = 0; i < cta->nstatics; ++i) {
    const kbd_cpu_static *s = &cta->statics[i];
    if (off >= (long long)s->off && end <= (long long)(s->off + s->bytes)) return;
  }
  if (lo < base || lo >= base + KBD_MAX_SMEM_BYTES)
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line, "%s: %p is not a shared-memory address of this block", what, p);
  kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                "%s touches shared-memory bytes [%lld, %lld), which is not inside one allocation (dynamic: [0, %zu)"
                "; %d static arrays; %zu bytes in use)",
                what, off, end, cta->dyn_bytes, cta->nstatics, cta->smem_top);
}

/* Did a read of `esize`-byte elements see poison? 1-byte types are judged on their aligned 2-byte pair,
 * since a single byte cannot tell poison from data. */
static inline int kbd_cpu_is_poison(const void *p, size_t esize) {
  uintptr_t a = (uintptr_t)p;
  if (esize == 1) a &= ~(uintptr_t)1, esize = 2;
  const unsigned char *c = (const unsigned char *)a;
  for (size_t i = 0; i < esize; ++i)
    if (c[i] != (((a + i) & 1) ? 0x7F : 0xBF)) return 0;
  return 1;
}

/* ---- the global-memory registry (device allocations in CPU mode) ------------------------------------------- */

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
#endif /* KBD_CPU_MACHINE_H */
