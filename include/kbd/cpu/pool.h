/* kbd/cpu/pool.h - host threads: the per-thread worker loop, the persistent thread pool, a launch.
 *
 * Groups of CTAs are taken in increasing block order by KBD_CPU_THREADS host threads. A group that
 * stalls (its warps only poll memory another block must change) is set aside and the next group is
 * started, so producer/consumer chains between blocks make progress on any thread count - as long as the
 * emulated GPU could hold one more group: residency follows its SM count and per-SM limits, never the host's.
 */
#ifndef KBD_CPU_POOL_H
#define KBD_CPU_POOL_H

#include "profile.h"
#include "sched.h"

#if KBD_MODE_CPU

/* ---- residency ----------------------------------------------------------------------------------------- */

/* The SM of sm_90a (H100 SXM, H200) and sm_100a (B200): 228 KiB of shared memory (at most 227 KiB for one block;
 * the system reserves 1 KiB per resident block, and blocks are given shared memory in 128-byte units), 2048
 * threads, 32 blocks, 65536 registers given to a warp in units of 256 (8 per thread). A block is resident on one
 * SM from its start to its end; the GPU starts another only where every limit leaves room, so these numbers, not
 * the host's threads, say which blocks run side by side. */
#define KBD_CPU_SM_SMEM (228u * 1024u)
#define KBD_CPU_SMEM_RESERVED 1024u
#define KBD_CPU_SMEM_UNIT 128u
#define KBD_CPU_SM_THREADS 2048
#define KBD_CPU_SM_BLOCKS 32
#define KBD_CPU_REG_UNIT 256
#if KBD_CPU_ARCH == 90
#define KBD_CPU_ARCH_SMS 132 /* H100 SXM / H200 */
#else
#define KBD_CPU_ARCH_SMS 148 /* B200 */
#endif

enum { KBD_CPU_LIM_BLOCKS = 0, KBD_CPU_LIM_THREADS = 1, KBD_CPU_LIM_SMEM = 2, KBD_CPU_LIM_REGS = 3 };
enum { KBD_CPU_REGS_NONE = 0, KBD_CPU_REGS_ENV = 1, KBD_CPU_REGS_SETMAXNREG = 2 };

/* What earlier launches of a kernel learned: static shared memory is placed when a declaration is first reached,
 * and a setmaxnreg budget shows only once a warp has moved registers, while the GPU knows both before the first
 * block starts. Keyed by the kernel's entry function (one per kernel and translation unit). */
typedef struct kbd_cpu_kfact {
  kbd_cpu_entry entry;
  size_t statics;
  int regs;
} kbd_cpu_kfact;
#define KBD_CPU_KFACTS 64
typedef struct kbd_cpu_kfacts_t {
  pthread_mutex_t mu;
  int n;
  kbd_cpu_kfact f[KBD_CPU_KFACTS];
} kbd_cpu_kfacts_t;
KBD_WEAK kbd_cpu_kfacts_t kbd_cpu_kfacts = {PTHREAD_MUTEX_INITIALIZER, 0, {{NULL, 0, 0}}};

static inline kbd_cpu_kfact kbd_cpu_kfact_get(kbd_cpu_entry entry) {
  kbd_cpu_kfact r = {entry, 0, 0};
  pthread_mutex_lock(&kbd_cpu_kfacts.mu);
  for (int i = 0; i < kbd_cpu_kfacts.n; ++i)
    if (kbd_cpu_kfacts.f[i].entry == entry) r = kbd_cpu_kfacts.f[i];
  pthread_mutex_unlock(&kbd_cpu_kfacts.mu);
  return r;
}

static inline void kbd_cpu_kfact_put(kbd_cpu_entry entry, size_t statics, int regs) {
  pthread_mutex_lock(&kbd_cpu_kfacts.mu);
  int i = 0;
  while (i < kbd_cpu_kfacts.n && kbd_cpu_kfacts.f[i].entry != entry)
    ++i;
  if (i == kbd_cpu_kfacts.n && i < KBD_CPU_KFACTS) kbd_cpu_kfacts.f[kbd_cpu_kfacts.n++].entry = entry;
  if (i < kbd_cpu_kfacts.n) {
    if (statics > kbd_cpu_kfacts.f[i].statics) kbd_cpu_kfacts.f[i].statics = statics;
    if (regs > kbd_cpu_kfacts.f[i].regs) kbd_cpu_kfacts.f[i].regs = regs;
  }
  pthread_mutex_unlock(&kbd_cpu_kfacts.mu);
}

/* Blocks per SM under each limit, the tightest in L->per_sm / L->limit, and the groups that may be resident at once
 * (a cluster is resident whole: SMs x blocks per SM / cluster size, with no finer model of GPCs). Returns the groups;
 * 0 when not even one fits. Called before the workers start and under L->mu after. */
static inline unsigned long long kbd_cpu_residency(kbd_cpu_launch *L) {
  const size_t foot = (L->foot + KBD_CPU_SMEM_UNIT - 1) / KBD_CPU_SMEM_UNIT * KBD_CPU_SMEM_UNIT + KBD_CPU_SMEM_RESERVED;
  int per = KBD_CPU_SM_BLOCKS, lim = KBD_CPU_LIM_BLOCKS;
  const int by_threads = KBD_CPU_SM_THREADS / L->threads, by_smem = (int)(KBD_CPU_SM_SMEM / foot);
  if (by_threads < per) per = by_threads, lim = KBD_CPU_LIM_THREADS;
  if (by_smem < per) per = by_smem, lim = KBD_CPU_LIM_SMEM;
  if (L->regs > 0) {
    const int per_warp = (L->regs * KBD_WARP_SIZE + KBD_CPU_REG_UNIT - 1) / KBD_CPU_REG_UNIT * KBD_CPU_REG_UNIT;
    const int by_regs = KBD_REGFILE_REGS / per_warp / (L->threads / KBD_WARP_SIZE);
    if (by_regs < per) per = by_regs, lim = KBD_CPU_LIM_REGS;
  }
  L->per_sm = per;
  L->limit = lim;
  return (unsigned long long)L->sms * (unsigned long long)per / (unsigned long long)L->csize;
}

/* Appends a byte count as "200 KiB" or "1000 bytes". */
static inline void kbd_cpu_append_bytes(kbd_text *t, size_t b) {
  if (b % 1024u == 0)
    kbd_text_append(t, "%zu KiB", b / 1024u);
  else
    kbd_text_append(t, "%zu bytes", b);
}

/* Why at most L->cap groups are resident: "grid 300 blocks x 200 KiB shared: at most 132 resident on sm_90a (1 per
 * SM)", then every limit per SM. */
static inline void kbd_cpu_residency_why(const kbd_cpu_launch *L, kbd_text *t) {
  const unsigned long long cap = __atomic_load_n(&L->cap, __ATOMIC_ACQUIRE);
  kbd_text_append(t, "grid %llu blocks", L->nblocks);
  if (L->csize > 1) kbd_text_append(t, " (%llu clusters of %d)", L->nclusters, L->csize);
  kbd_text_append(t, " x ");
  kbd_cpu_append_bytes(t, L->foot);
  kbd_text_append(t, " shared: at most %llu %sresident on sm_%da", cap, L->csize > 1 ? "clusters " : "", KBD_CPU_ARCH);
  if (L->sms_set) kbd_text_append(t, " with KBD_CPU_SMS=%d", L->sms);
  kbd_text_append(t, " (%d per SM", L->per_sm);
  if (L->csize > 1) kbd_text_append(t, ", %d SMs x %d / %d per cluster", L->sms, L->per_sm, L->csize);
  const size_t foot = (L->foot + KBD_CPU_SMEM_UNIT - 1) / KBD_CPU_SMEM_UNIT * KBD_CPU_SMEM_UNIT + KBD_CPU_SMEM_RESERVED;
  kbd_text_append(t, "); per SM, shared memory allows %zu (", (size_t)KBD_CPU_SM_SMEM / foot);
  kbd_cpu_append_bytes(t, L->foot);
  kbd_text_append(t, " + 1 KiB reserved per block, of 228 KiB), threads %d (%d each, of %d), the block limit %d",
                  KBD_CPU_SM_THREADS / L->threads, L->threads, KBD_CPU_SM_THREADS, KBD_CPU_SM_BLOCKS);
  if (L->regs > 0) {
    const int per_warp = (L->regs * KBD_WARP_SIZE + KBD_CPU_REG_UNIT - 1) / KBD_CPU_REG_UNIT * KBD_CPU_REG_UNIT;
    kbd_text_append(t, ", registers %d (%d per thread, %s)", KBD_REGFILE_REGS / per_warp / (L->threads / KBD_WARP_SIZE),
                    L->regs, L->regs_from == KBD_CPU_REGS_ENV ? "KBD_CPU_REGS" : "the setmaxnreg budget");
  } else {
    kbd_text_append(t, ", registers not counted (ptxas's count is unknown here: KBD_CPU_REGS=n sets it)");
  }
}

/* A residency slot for the next group, if fewer than cap groups hold one. */
static inline int kbd_cpu_slot_take(kbd_cpu_launch *L) {
  unsigned long long r = __atomic_load_n(&L->resident, __ATOMIC_ACQUIRE);
  do {
    if (r >= __atomic_load_n(&L->cap, __ATOMIC_ACQUIRE)) return 0;
  } while (!__atomic_compare_exchange_n(&L->resident, &r, r + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return 1;
}
static inline void kbd_cpu_slot_put(kbd_cpu_launch *L) { __atomic_fetch_sub(&L->resident, 1ull, __ATOMIC_ACQ_REL); }

/* After a group ran: the shared memory its CTAs declared, and a setmaxnreg budget (a warp's count moved away from
 * the launch count, KBD_REGS_PER_THREAD: ptxas gave the kernel the whole budget). Either can only lower cap; blocks
 * already resident stay (docs/cpu-machine.md "Residency"). */
static inline void kbd_cpu_learn(kbd_cpu_group *G) {
  kbd_cpu_launch *L = G->L;
  size_t top = 0;
  int regs = 0;
  for (int s = 0; s < G->nctas; ++s) {
    const kbd_cpu_cta *cta = G->ctas[s];
    if (cta->smem_need > top) top = cta->smem_need; /* as the GPU lays it out: no guard page */
    if (__atomic_load_n(&L->regs_from, __ATOMIC_ACQUIRE) == KBD_CPU_REGS_NONE)
      for (int i = 0; i < cta->nwarps && !regs; ++i)
        if (cta->warps[i].nreg != cta->reg_base || cta->reg_pool) regs = cta->reg_base;
  }
  if (top <= __atomic_load_n(&L->foot, __ATOMIC_ACQUIRE) && !regs) return;
  pthread_mutex_lock(&L->mu);
  if (top > L->foot) __atomic_store_n(&L->foot, top, __ATOMIC_RELEASE);
  if (regs && L->regs_from == KBD_CPU_REGS_NONE) {
    L->regs = regs;
    __atomic_store_n(&L->regs_from, KBD_CPU_REGS_SETMAXNREG, __ATOMIC_RELEASE);
  }
  unsigned long long cap = kbd_cpu_residency(L);
  __atomic_store_n(&L->cap, cap ? cap : 1ull, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&L->mu);
  kbd_cpu_kfact_put(L->entry, top - L->cfg.smem_bytes, L->regs_from == KBD_CPU_REGS_SETMAXNREG ? L->regs : 0);
}

/* The first block of group k (its cluster rank 0), as kbd_cpu_group_start places it. */
static inline void kbd_cpu_group_block(const kbd_cpu_launch *L, unsigned long long k, unsigned b[3]) {
  const unsigned ncx = L->cfg.grid.x / L->ccx, ncy = L->cfg.grid.y / L->ccy;
  b[0] = (unsigned)(k % ncx) * L->ccx;
  b[1] = (unsigned)((k / ncx) % ncy) * L->ccy;
  b[2] = (unsigned)(k / ((unsigned long long)ncx * ncy)) * L->ccz;
}

/* Cross-block deadlock: every live worker has only stalled blocks (or waits for a residency slot) and nothing moved
 * for a while. When blocks have not started, the resident ones fill the GPU: say so, and which would start next. */
static inline void kbd_cpu_cross_deadlock(kbd_cpu_group **act, int nact) {
  if (nact == 0) return;
  kbd_cpu_launch *L = act[0]->L;
  /* Every worker reports the state the first one saw: once it frees its groups, another worker may take the freed
   * slot and move L->next past the grid (that group is never started: it is above the failed block). */
  unsigned long long first = 0, now = __atomic_load_n(&L->next, __ATOMIC_ACQUIRE) + 1;
  __atomic_compare_exchange_n(&L->stuck, &first, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  const unsigned long long next = (first ? first : now) - 1;
  if (next >= L->nclusters) {
    for (int a = 0; a < nact; ++a)
      kbd_cpu_deadlock(act[a], "cross-block deadlock: every running block polls memory that no running block changes");
    return;
  }
  kbd_text why = KBD_TEXT_INIT;
  unsigned b[3], e[3];
  kbd_cpu_group_block(L, next, b);
  kbd_cpu_group_block(L, L->nclusters - 1, e);
  kbd_text_append(&why,
                  "cross-block deadlock: every resident block polls memory that no resident block changes, and no "
                  "other block can become resident - ");
  kbd_cpu_residency_why(L, &why);
  const unsigned long long left = L->nclusters - next;
  if (left == 1)
    kbd_text_append(&why, ". Block (%u,%u,%u)%s has not started", b[0], b[1], b[2],
                    L->csize > 1 ? " (the last cluster)" : "");
  else
    kbd_text_append(&why, ". Blocks (%u,%u,%u) .. (%u,%u,%u) (%llu %s) have not started", b[0], b[1], b[2],
                    e[0] + L->ccx - 1, e[1] + L->ccy - 1, e[2] + L->ccz - 1, left,
                    L->csize > 1 ? "clusters" : "blocks");
  kbd_text_append(&why,
                  ": the next to start would be block (%u,%u,%u), once a resident block ends. If the wait below is "
                  "for one of them, the GPU hangs here too: launch at most as many blocks as are resident (a "
                  "persistent loop over the work), or let a block wait only for blocks that started before it (a "
                  "ticket, kbd/atomic.h)",
                  b[0], b[1], b[2]);
  for (int a = 0; a < nact; ++a)
    kbd_cpu_deadlock(act[a], kbd_text_str(&why));
  kbd_text_free(&why);
}

/* A group leaves this worker (ended, failed, or irrelevant after a lower block failed): its slot is free. */
static inline void kbd_cpu_group_leave(kbd_cpu_launch *L, kbd_cpu_group *G, kbd_cpu_group **spare) {
  kbd_cpu_slot_put(L);
  kbd_cpu_group_free(*spare);
  *spare = G;
}

/* One host thread: takes groups in increasing order and runs them. A group that stalls waiting for another block is
 * set aside and the next group is started, so producer/consumer chains between blocks (decoupled look-back) make
 * progress on any thread count - but only while a residency slot is free: the host threads together never run more
 * groups side by side than the emulated GPU holds, so a wait that hangs there is a deadlock here too. */
static inline void *kbd_cpu_worker(void *arg) {
  kbd_cpu_launch *L = (kbd_cpu_launch *)arg;
  kbd_cpu_group **act = NULL;
  int nact = 0, acap = 0;
  kbd_cpu_group *spare = NULL;
  int stalled_flag = 0, oom = 0;
  int drained = 0; /* no more blocks to take */
  struct timespec t0;
  unsigned long long p0 = 0;
  kbd_cpu_prof_worker_begin(L);
  for (;;) {
    int all_stalled = nact > 0;
    for (int a = 0; a < nact;) {
      kbd_cpu_group *G = act[a];
      if (G->first > __atomic_load_n(&L->fail_block, __ATOMIC_ACQUIRE)) { /* irrelevant after a failure */
        act[a] = act[--nact];
        kbd_cpu_group_leave(L, G, &spare);
        continue;
      }
      int r = kbd_cpu_group_step(G);
      kbd_cpu_learn(G);
      if (r == KBD_CPU_GROUP_STALLED) {
        ++a;
        continue;
      }
      all_stalled = 0;
      __atomic_fetch_add(&L->progress, 1ull, __ATOMIC_RELEASE);
      act[a] = act[--nact];
      kbd_cpu_group_leave(L, G, &spare);
    }
    int no_slot = 0; /* would start a group, but the resident ones fill the GPU */
    if (!drained && (nact == 0 || all_stalled)) {
      if (nact == acap) {
        const int n = acap ? 2 * acap : 16;
        kbd_cpu_group **grown = (kbd_cpu_group **)realloc(act, (size_t)n * sizeof *act);
        if (!grown) {
          oom = 1;
          break;
        }
        act = grown;
        acap = n;
      }
      if (!kbd_cpu_slot_take(L)) {
        no_slot = 1;
      } else {
        /* The next cluster (the next block without clusters); its lowest block is at least its index. */
        unsigned long long b = __atomic_fetch_add(&L->next, 1ull, __ATOMIC_RELAXED);
        if (b >= L->nclusters || b > __atomic_load_n(&L->fail_block, __ATOMIC_ACQUIRE)) {
          drained = 1;
          kbd_cpu_slot_put(L);
        } else {
          kbd_cpu_group *G = spare ? spare : kbd_cpu_group_new(L, L->csize);
          spare = NULL;
          if (!G) {
            kbd_cpu_slot_put(L);
            oom = 1;
            break;
          }
          kbd_cpu_group_start(G, b);
          act[nact++] = G;
          continue;
        }
      }
    }
    if (nact == 0 && !no_slot) break;
    if (!all_stalled && nact > 0) {
      if (stalled_flag) __atomic_fetch_sub(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
      stalled_flag = 0;
      continue;
    }
    /* Everything here waits on other blocks, or for a slot that only another worker's group can free. */
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
      } else if (nact > 0 &&
                 __atomic_load_n(&L->stalled_workers, __ATOMIC_ACQUIRE) ==
                     __atomic_load_n(&L->live_workers, __ATOMIC_ACQUIRE) &&
                 kbd_cpu_ms_since(&t0) > (double)L->spin_timeout_ms) {
        kbd_cpu_cross_deadlock(act, nact);
        for (int a = 0; a < nact; ++a) {
          kbd_cpu_slot_put(L);
          kbd_cpu_group_free(act[a]);
        }
        nact = 0;
        break;
      }
    }
    sched_yield();
  }
  if (stalled_flag) __atomic_fetch_sub(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
  kbd_cpu_prof_worker_end(L);
  __atomic_fetch_sub(&L->live_workers, 1, __ATOMIC_ACQ_REL);
  for (int a = 0; a < nact; ++a) {
    kbd_cpu_slot_put(L);
    kbd_cpu_group_free(act[a]);
  }
  free(act);
  kbd_cpu_group_free(spare);
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
  long pid;          /* process that owns the threads */
  int nthreads;      /* pool threads alive */
  int busy;          /* a launch is using the pool */
  unsigned long gen; /* job generation */
  int want, taken, running;
  kbd_cpu_launch *job;
} kbd_cpu_pool;

KBD_WEAK kbd_cpu_pool kbd_cpu_pool_g = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, NULL};

static inline void *kbd_cpu_pool_main(void *arg) {
  kbd_cpu_pool *P = (kbd_cpu_pool *)arg;
  pthread_mutex_lock(&P->mu);
  unsigned long seen = 0;
  for (;;) {
    while (P->gen == seen)
      pthread_cond_wait(&P->go, &P->mu);
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
    const kbd_cpu_pool fresh = {PTHREAD_MUTEX_INITIALIZER,
                                PTHREAD_COND_INITIALIZER,
                                PTHREAD_COND_INITIALIZER,
                                (long)getpid(),
                                0,
                                0,
                                0,
                                0,
                                0,
                                0,
                                NULL};
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
  while (P->running > 0)
    pthread_cond_wait(&P->done, &P->mu);
  P->busy = 0;
  P->job = NULL;
  pthread_mutex_unlock(&P->mu);
  return 1;
}

/* A whole-number setting in lo..hi: 0 when unset, -1 when set to anything else. */
static inline long kbd_cpu_env_range(const char *name, long lo, long hi) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end = NULL;
  const long v = strtol(s, &end, 10);
  return (end && *end == '\0' && v >= lo && v <= hi) ? v : -1;
}

/* Run a kernel on the CPU machine. Synchronous: returns when every block has ended or one failed. */
static inline kbd_status kbd_cpu_launch_kernel(const kbd_launch_cfg *cfg, int threads, kbd_cpu_entry entry,
                                               const void *params, const char *name) {
  kbd_status s = kbd_check_launch(cfg, threads, name);
  if (!kbd_ok(s)) return s;
  const long sms = kbd_cpu_env_range("KBD_CPU_SMS", 1, 65536), regs = kbd_cpu_env_range("KBD_CPU_REGS", 1, 255);
  if (sms < 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: KBD_CPU_SMS=%s: the emulated GPU's SM count must be a whole number in "
                           "1..65536 (unset: %d, sm_%da)",
                           name, getenv("KBD_CPU_SMS"), KBD_CPU_ARCH_SMS, KBD_CPU_ARCH);
  if (regs < 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "launch of %s: KBD_CPU_REGS=%s: registers per thread must be a whole number in 1..255 "
                           "(ptxas's count, e.g. from cuobjdump --dump-resource-usage)",
                           name, getenv("KBD_CPU_REGS"));
  kbd_cpu_launch L;
  memset(&L, 0, sizeof L);
  L.cfg = *cfg;
  L.threads = threads;
  L.entry = entry;
  L.params = params;
  L.name = name;
  L.nblocks = (unsigned long long)cfg->grid.x * cfg->grid.y * cfg->grid.z;
  const kbd_dim3 cl = kbd_cluster_dims(cfg);
  L.ccx = cl.x;
  L.ccy = cl.y;
  L.ccz = cl.z;
  L.csize = (int)(cl.x * cl.y * cl.z);
  L.nclusters = L.nblocks / (unsigned long long)L.csize;
  L.fail_block = ~0ull;
  L.status = kbd_status_ok();
  L.seed = (uint64_t)kbd_cpu_env_long("KBD_CPU_SEED", 0);
  long kb = kbd_cpu_env_long("KBD_CPU_STACK_KB", 0);
  L.stack_bytes = kb > 0 ? (size_t)kb * 1024u : KBD_CPU_DEFAULT_STACK;
  L.spin_timeout_ms = kbd_cpu_env_long("KBD_CPU_SPIN_TIMEOUT_MS", 200);
  L.race_check = kbd_cpu_env_long("KBD_CPU_RACECHECK", 1) != 0;
  const kbd_cpu_kfact kf = kbd_cpu_kfact_get(entry);
  L.sms = sms ? (int)sms : KBD_CPU_ARCH_SMS;
  L.sms_set = sms != 0;
  L.foot = cfg->smem_bytes + kf.statics;
  L.regs = regs ? (int)regs : kf.regs;
  L.regs_from = regs ? KBD_CPU_REGS_ENV : kf.regs ? KBD_CPU_REGS_SETMAXNREG : KBD_CPU_REGS_NONE;
  L.cap = kbd_cpu_residency(&L);
  if (L.cap == 0) {
    kbd_text t = KBD_TEXT_INIT;
    kbd_cpu_residency_why(&L, &t);
    s = kbd_status_make(KBD_ERR_INVALID, "launch of %s: %s%s: the GPU cannot start it", name,
                        L.per_sm ? "a cluster does not fit: " : "no block fits on an SM: ", kbd_text_str(&t));
    kbd_text_free(&t);
    return s;
  }
  pthread_mutex_init(&L.mu, NULL);
  kbd_cpu_prof_begin(&L);
  unsigned long long nw = (unsigned long long)kbd_cpu_host_threads();
  if (nw > L.nclusters) nw = L.nclusters;
  if (nw > L.cap) nw = L.cap; /* more host threads than resident groups would only wait for slots */
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
  kbd_cpu_prof_end(&L);
  kbd_cpu_kept_free(&L);
  pthread_mutex_destroy(&L.mu);
  if (!kbd_ok(L.status) && kbd_cpu_env_long("KBD_CPU_QUIET", 0) == 0) {
    fprintf(stderr, "kbd: %s: %s\n", kbd_code_name(L.status.code), L.status.msg);
    L.status.reported = 1;
  }
  return L.status;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_POOL_H */
