/* kbd/cpu/sched.h - the warp scheduler of one group of CTAs on one host thread.
 *
 * Warps are fibers switched cooperatively at scheduling points (barriers, waits, polls, the end of the
 * kernel). The next warp is the next ready one in round-robin order, or one drawn from a generator
 * seeded by KBD_CPU_SEED and the group's first block, so every seed is a reproducible interleaving.
 * Correctness checks never depend on the order (the race checker is happens-before based); seeds only
 * vary what a racy kernel computes.
 */
#ifndef KBD_CPU_SCHED_H
#define KBD_CPU_SCHED_H

#include "../hwdefs.h"
#include "wait.h"

#if KBD_MODE_CPU

/* Group-linear warp index g -> its warp. */
static inline kbd_cpu_warp *kbd_cpu_gwarp(kbd_cpu_group *G, int g) {
  return &G->ctas[g / KBD_CPU_MAX_WARPS]->warps[g % KBD_CPU_MAX_WARPS];
}
static inline int kbd_cpu_gvalid(const kbd_cpu_group *G, int g) {
  return g / KBD_CPU_MAX_WARPS < G->nctas && g % KBD_CPU_MAX_WARPS < G->ctas[g / KBD_CPU_MAX_WARPS]->nwarps;
}

/* Next warp to run: a ready warp that is not polling if there is one (pollers only re-check memory), in
 * round-robin order (seed 0) or drawn from the group's seeded generator. */
static inline int kbd_cpu_pick(kbd_cpu_group *G) {
  const int n = G->nctas * KBD_CPU_MAX_WARPS;
  for (int pass = 0; pass < 2; ++pass) {
    if (G->L->seed == 0) {
      for (int k = 1; k <= n; ++k) {
        const int g = (G->last + k) % n;
        if (!kbd_cpu_gvalid(G, g)) continue;
        const kbd_cpu_warp *w = kbd_cpu_gwarp(G, g);
        if (w->state == KBD_CPU_W_READY && (pass || !w->spinning)) return g;
      }
    } else {
      int ready[KBD_CPU_MAX_WARPS * KBD_CPU_MAX_GROUP], m = 0;
      for (int g = 0; g < n; ++g) {
        if (!kbd_cpu_gvalid(G, g)) continue;
        const kbd_cpu_warp *w = kbd_cpu_gwarp(G, g);
        if (w->state == KBD_CPU_W_READY && (pass || !w->spinning)) ready[m++] = g;
      }
      if (m) return ready[kbd_cpu_rand(&G->rng) % (uint64_t)m];
    }
  }
  return -1;
}

static inline void kbd_cpu_warp_main(void *arg) {
  kbd_cpu_warp *w = (kbd_cpu_warp *)arg;
  w->cta->L->entry(w->cta->L->params);
  w->state = KBD_CPU_W_DONE;
  kbd_cpu_warp_exit_check(w);
  kbd_fiber_exit(&w->fiber, &w->cta->G->sched);
}

/* Shared memory starts as a NaN pattern (0x7FBF7FBF words: NaN as f32, as each f16/bf16 half): detection
 * of never-written reads is the shadow's job, but a raw-pointer read the machine cannot see then yields
 * NaN rather than a stale value of an earlier block that happens to look right. */
static inline void kbd_cpu_poison(unsigned char *p, size_t off, size_t bytes) {
  static const unsigned char pat[64] = {0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF,
                                        0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F,
                                        0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF,
                                        0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F,
                                        0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F, 0xBF, 0x7F};
  size_t i = off;
  for (; i < off + bytes && (i & 1); ++i) /* to an even byte: the pattern's phase is the address parity */
    p[i] = 0x7F;
  for (; i + 64 <= off + bytes; i += 64) /* 64 bytes per copy: a block's poison is no longer a byte loop */
    memcpy(p + i, pat, 64);
  for (; i < off + bytes; ++i)
    p[i] = (i & 1) ? 0x7F : 0xBF;
}

static inline void kbd_cpu_cta_start(kbd_cpu_group *G, kbd_cpu_cta *cta, unsigned bx, unsigned by, unsigned bz,
                                     int slot) {
  kbd_cpu_launch *L = G->L;
  cta->G = G;
  cta->L = L;
  cta->rank = slot;
  cta->bx = bx;
  cta->by = by;
  cta->bz = bz;
  cta->linear =
      (unsigned long long)bx + (unsigned long long)L->cfg.grid.x * (by + (unsigned long long)L->cfg.grid.y * bz);
  cta->nwarps = L->threads / KBD_WARP_SIZE;
  cta->dyn_bytes = L->cfg.smem_bytes;
  cta->smem_top = L->cfg.smem_bytes;
  cta->smem_need = L->cfg.smem_bytes;
  cta->nstatics = 0;
  memset(cta->bars, 0, sizeof cta->bars);
  for (int i = 0; i < KBD_NUM_NAMED_BARRIERS; ++i)
    cta->bar_rk[i].any = 0;
  cta->nmbars = 0;
  cta->ncopies = 0;
  cta->nstores = 0;
  cta->reg_base = KBD_REGS_PER_THREAD(L->threads);
  cta->reg_pool = 0;
  kbd_cpu_poison(cta->smem, 0, cta->dyn_bytes);
  for (int i = 0; i < cta->nwarps; ++i) {
    kbd_cpu_warp *w = &cta->warps[i];
    w->cta = cta;
    w->id = i;
    w->gid = slot * KBD_CPU_MAX_WARPS + i;
    w->state = KBD_CPU_W_READY;
    w->spinning = 0;
    w->wait_kind = KBD_CPU_WAIT_NONE;
    w->wait_bar = -1;
    w->lanes_depth = w->elect_depth = 0;
    w->bulk_groups = 0;
    w->nreg = cta->reg_base;
    w->cl_arrived = 0;
    w->cl_phase = 0;
    memset(w->sites, 0, sizeof w->sites);
    const size_t k = (size_t)slot * KBD_CPU_MAX_WARPS + (size_t)i;
    kbd_fiber_init(&w->fiber, kbd_stack_pool_get(&G->stacks, k), G->stacks.each, kbd_cpu_warp_main, w);
  }
}

/* Start the group of cluster k (linear over the grid of clusters, x fastest): its CTA of cluster rank r
 * (%cluster_ctarank = x + y * cx + z * cx * cy inside the cluster) is slot r. Without clusters a group is
 * one CTA and k its block. G->first is the lowest block index of the group (its rank 0), which grows with k,
 * so "groups in increasing order" is also "lowest blocks first" for the report of the lowest failing block. */
static inline void kbd_cpu_group_start(kbd_cpu_group *G, unsigned long long k) {
  const kbd_cpu_launch *L = G->L;
  const unsigned ncx = L->cfg.grid.x / L->ccx, ncy = L->cfg.grid.y / L->ccy;
  G->cx = (unsigned)(k % ncx);
  G->cy = (unsigned)((k / ncx) % ncy);
  G->cz = (unsigned)(k / ((unsigned long long)ncx * ncy));
  G->last = -1;
  G->failed = 0;
  G->spins = 0;
  G->rng = G->L->seed * 0x2545F4914F6CDD1Dull + k;
  G->nwarps = 0;
  G->cl_phase = 0;
  G->cl_arrived = 0;
  G->cl_file = NULL;
  G->cl_line = 0;
  for (int s = 0; s < G->nctas; ++s) {
    const unsigned rx = (unsigned)s % L->ccx, ry = ((unsigned)s / L->ccx) % L->ccy,
                   rz = (unsigned)s / (L->ccx * L->ccy);
    kbd_cpu_cta_start(G, G->ctas[s], G->cx * L->ccx + rx, G->cy * L->ccy + ry, G->cz * L->ccz + rz, s);
    G->nwarps += G->ctas[s]->nwarps;
  }
  G->first = G->ctas[0]->linear;
  kbd_cpu_trace_setup(G->L);
  if (!kbd_cpu_shadow_start(G)) {
    fprintf(stderr, "kbd: out of host memory for the shared-memory shadow\n");
    abort();
  }
  memset(G->cl_clk, 0, sizeof G->cl_clk);
  memset(G->cl_done, 0, sizeof G->cl_done);
  G->cl_rk.any = G->cl_rk_done.any = 0;
}

enum { KBD_CPU_GROUP_DONE = 0, KBD_CPU_GROUP_FAILED = 1, KBD_CPU_GROUP_STALLED = 2 };

/* Run the group's warps until it ends, fails, or stalls: every runnable warp is polling memory that only
 * another group can change (each has re-checked once since the last useful work). */
static inline int kbd_cpu_group_step(kbd_cpu_group *G) {
  int worked = 0;
  for (;;) {
    const int g = kbd_cpu_pick(G);
    if (g < 0) {
      for (int s = 0; s < G->nctas; ++s)
        for (int k = 0; k < G->ctas[s]->nwarps; ++k)
          if (G->ctas[s]->warps[k].state != KBD_CPU_W_DONE) {
            kbd_cpu_deadlock(G, G->nctas > 1
                                    ? "every live warp of the cluster waits, and nothing it waits for can "
                                      "happen"
                                    : "every live warp of the block waits, and nothing it waits for can happen");
            return KBD_CPU_GROUP_FAILED;
          }
      return KBD_CPU_GROUP_DONE;
    }
    kbd_cpu_warp *w = kbd_cpu_gwarp(G, g);
    G->last = g;
    w->spinning = 0;
    kbd_cpu_cur = w;
    if (KBD_CPU_TRACED(w->cta)) kbd_cpu_trace_run(w);
    kbd_fiber_switch(&G->sched, &w->fiber);
    if (KBD_CPU_TRACED(w->cta)) kbd_cpu_trace_stop(w);
    kbd_cpu_cur = NULL;
    if (G->failed) return KBD_CPU_GROUP_FAILED;
    if (w->spinning) {
      int runnable = 0;
      for (int k = 0; k < G->nctas * KBD_CPU_MAX_WARPS; ++k)
        runnable += kbd_cpu_gvalid(G, k) && kbd_cpu_gwarp(G, k)->state == KBD_CPU_W_READY;
      if (++G->spins >= runnable) {
        G->spins = 0;
        if (worked) __atomic_fetch_add(&G->L->progress, 1ull, __ATOMIC_RELEASE);
        return KBD_CPU_GROUP_STALLED;
      }
    } else {
      G->spins = 0;
      worked = 1;
    }
  }
}

/* ---- recycled group state ------------------------------------------------------------------------------ */

/* Group state (fiber stacks, 227 KiB of shared memory per CTA and its shadow mapping) is recycled across
 * launches: allocating it per launch cost an mmap, 8+ mprotects and fresh page faults every time, which
 * dominated small launches. */
typedef struct kbd_cpu_group_cache {
  pthread_mutex_t mu;
  kbd_cpu_group *head;
  int count;
} kbd_cpu_group_cache;
#define KBD_CPU_GROUP_CACHE_MAX 64
KBD_WEAK kbd_cpu_group_cache kbd_cpu_groups = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static inline void kbd_cpu_group_destroy(kbd_cpu_group *G) {
  for (int s = 0; s < G->nctas; ++s) {
    kbd_cpu_shadow_free(&G->ctas[s]->sh);
    if (G->ctas[s]->mma_free) G->ctas[s]->mma_free(G->ctas[s]->mma);
    free(G->ctas[s]->smem);
    free(G->ctas[s]);
  }
  kbd_stack_pool_free(&G->stacks);
  free(G);
}

static inline void kbd_cpu_group_free(kbd_cpu_group *G) {
  if (!G) return;
  pthread_mutex_lock(&kbd_cpu_groups.mu);
  if (kbd_cpu_groups.count < KBD_CPU_GROUP_CACHE_MAX) {
    G->next = kbd_cpu_groups.head;
    kbd_cpu_groups.head = G;
    kbd_cpu_groups.count++;
    G = NULL;
  }
  pthread_mutex_unlock(&kbd_cpu_groups.mu);
  if (G) kbd_cpu_group_destroy(G);
}

static inline kbd_cpu_group *kbd_cpu_group_new(kbd_cpu_launch *L, int nctas) {
  const size_t nstacks = (size_t)(nctas - 1) * KBD_CPU_MAX_WARPS + (size_t)(L->threads / KBD_WARP_SIZE);
  kbd_cpu_group *G = NULL;
  pthread_mutex_lock(&kbd_cpu_groups.mu);
  for (kbd_cpu_group **pp = &kbd_cpu_groups.head; *pp; pp = &(*pp)->next) {
    const kbd_stack_pool *st = &(*pp)->stacks;
    /* Any cached group with enough CTAs and stacks of the requested size fits. */
    if ((*pp)->nctas == nctas && st->count >= nstacks && st->each >= L->stack_bytes &&
        st->each < L->stack_bytes + st->page) {
      G = *pp;
      *pp = G->next;
      kbd_cpu_groups.count--;
      break;
    }
  }
  pthread_mutex_unlock(&kbd_cpu_groups.mu);
  if (G) {
    G->L = L;
    return G;
  }
  G = (kbd_cpu_group *)calloc(1, sizeof *G);
  if (!G) return NULL;
  G->L = L;
  if (!kbd_stack_pool_init(&G->stacks, nstacks, L->stack_bytes)) {
    free(G);
    return NULL;
  }
  /* The shared array is page-aligned (the GPU aligns shared memory to 1024 bytes, which a page includes), so that a
   * dynamic size that is a multiple of the page size ends exactly at a guard page (kbd_cpu_guard_want, cpu/shadow.h);
   * aligned_alloc wants a size that is a multiple of the alignment. */
  const long pgl = sysconf(_SC_PAGESIZE);
  const size_t pg = pgl >= 1024 ? (size_t)pgl : 1024u;
  const size_t smem_alloc = (KBD_MAX_SMEM_BYTES + pg - 1) / pg * pg;
  for (int s = 0; s < nctas; ++s) {
    kbd_cpu_cta *cta = (kbd_cpu_cta *)calloc(1, sizeof *cta);
    if (cta) cta->smem = (unsigned char *)aligned_alloc(pg, smem_alloc);
    if (!cta || !cta->smem || !kbd_cpu_shadow_init(&cta->sh)) {
      if (cta) free(cta->smem);
      free(cta);
      G->nctas = s;
      kbd_cpu_group_destroy(G);
      return NULL;
    }
    G->ctas[s] = cta;
  }
  G->nctas = nctas;
  return G;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SCHED_H */
