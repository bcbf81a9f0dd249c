/* kbd/cpu/pool.h - host threads: the per-thread worker loop, the persistent thread pool, a launch.
 *
 * Groups of CTAs are taken in increasing block order by KBD_CPU_THREADS host threads. A group that
 * stalls (its warps only poll memory another block must change) is set aside and the next group is
 * started, so producer/consumer chains between blocks make progress on any thread count.
 */
#ifndef KBD_CPU_POOL_H
#define KBD_CPU_POOL_H

#include "profile.h"
#include "sched.h"

#if KBD_MODE_CPU

/* Cross-block deadlock: every live worker has only stalled blocks and nothing moved for a while. */
static inline void kbd_cpu_cross_deadlock(kbd_cpu_group **act, int nact) {
  for (int a = 0; a < nact; ++a)
    kbd_cpu_deadlock(act[a], "cross-block deadlock: every running block polls memory that no running block changes");
}

/* One host thread: takes blocks in increasing order and runs them. A block that stalls waiting for
 * another block is set aside and the next block is started, up to KBD_CPU_MAX_RESIDENT per thread, so
 * producer/consumer chains between blocks (decoupled look-back) make progress on any thread count. */
static inline void *kbd_cpu_worker(void *arg) {
  kbd_cpu_launch *L = (kbd_cpu_launch *)arg;
  kbd_cpu_group *act[KBD_CPU_MAX_RESIDENT];
  kbd_cpu_group *spare = NULL;
  int nact = 0, stalled_flag = 0, oom = 0;
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
        kbd_cpu_group_free(spare);
        spare = G;
        continue;
      }
      int r = kbd_cpu_group_step(G);
      if (r == KBD_CPU_GROUP_STALLED) {
        ++a;
        continue;
      }
      all_stalled = 0;
      __atomic_fetch_add(&L->progress, 1ull, __ATOMIC_RELEASE);
      act[a] = act[--nact];
      kbd_cpu_group_free(spare);
      spare = G;
    }
    if (!drained && (nact == 0 || all_stalled) && nact < KBD_CPU_MAX_RESIDENT) {
      /* The next cluster (the next block without clusters); its lowest block is at least its index. */
      unsigned long long b = __atomic_fetch_add(&L->next, 1ull, __ATOMIC_RELAXED);
      if (b >= L->nclusters || b > __atomic_load_n(&L->fail_block, __ATOMIC_ACQUIRE)) {
        drained = 1;
      } else {
        kbd_cpu_group *G = spare ? spare : kbd_cpu_group_new(L, L->csize);
        spare = NULL;
        if (!G) {
          oom = 1;
          break;
        }
        kbd_cpu_group_start(G, b);
        act[nact++] = G;
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
          kbd_cpu_group_free(act[a]);
        nact = 0;
        break;
      }
    }
    sched_yield();
  }
  if (stalled_flag) __atomic_fetch_sub(&L->stalled_workers, 1, __ATOMIC_ACQ_REL);
  kbd_cpu_prof_worker_end(L);
  __atomic_fetch_sub(&L->live_workers, 1, __ATOMIC_ACQ_REL);
  for (int a = 0; a < nact; ++a)
    kbd_cpu_group_free(act[a]);
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
  pthread_mutex_init(&L.mu, NULL);
  kbd_cpu_prof_begin(&L);
  unsigned long long nw = (unsigned long long)kbd_cpu_host_threads();
  if (nw > L.nclusters) nw = L.nclusters;
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
