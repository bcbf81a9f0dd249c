/* kbd/cpu/wait.h - what a warp can wait for: named barriers, wait objects, polls of memory.
 *
 * A blocked warp records WHAT it waits for (a barrier instance, or any wait object with a function that
 * names it and its awaited state) and is made ready only by the event that releases it (the last
 * arrival, a phase completion, ...). When no warp of a group can run, every blocked warp is reported
 * with its file:line and its object - nothing hangs. Polls (acquire loads, atomics, KBD_SPIN_UNTIL) are
 * scheduling points: a warp that polls yields, the scheduler prefers warps doing real work, and a group
 * whose only runnable warps poll is set aside (kbd/cpu/sched.h).
 */
#ifndef KBD_CPU_WAIT_H
#define KBD_CPU_WAIT_H

#include "profile.h"
#include "shadow.h"
#include "trace.h"

#if KBD_MODE_CPU

/* Give the host thread back to the group's scheduler; the warp stays ready (a scheduling point). */
static inline void kbd_cpu_yield(void) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  kbd_fiber_switch(&w->fiber, &w->cta->G->sched);
}

/* Collectives and barriers are issued once per warp (kbd/launch.h); inside per-lane code the CPU would
 * issue them 32 times, or, inside elected-lane code, once where the GPU's other 31 lanes never arrive. */
static inline void kbd_cpu_check_collective(kbd_cpu_warp *w, const char *what, const char *file, int line) {
  if (KBD_UNLIKELY(w->lanes_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, file, line,
                  "%s inside per-lane code (KBD_FOR_LANES entered at %s:%d): it is a warp-wide operation that every "
                  "lane issues once; here it would be issued 32 times by one warp. Move it out of the loop",
                  what, w->region_file, w->region_line);
  if (KBD_UNLIKELY(w->elect_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, file, line,
                  "%s inside elected-lane code (KBD_ELECT_ONE entered at %s:%d): only one lane reaches it on the GPU, "
                  "but it needs all 32 lanes of the warp",
                  what, w->region_file, w->region_line);
}

/* Block the running warp on a wait object until kbd_cpu_wake; `desc` names the object and the awaited
 * state for a deadlock report. */
static inline void kbd_cpu_block(const void *obj, uint32_t arg, kbd_cpu_wait_describe desc, const char *file,
                                 int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  w->state = KBD_CPU_W_BLOCKED;
  w->wait_kind = KBD_CPU_WAIT_OBJ;
  w->wait_obj = obj;
  w->wait_arg = arg;
  w->wait_desc = desc;
  w->wait_file = file;
  w->wait_line = line;
  kbd_cpu_yield();
  w->wait_kind = KBD_CPU_WAIT_NONE;
  w->wait_obj = NULL;
}

static inline void kbd_cpu_wake(kbd_cpu_warp *w) {
  if (w->state == KBD_CPU_W_BLOCKED) w->state = KBD_CPU_W_READY;
}

/* Make ready every warp of the CTA blocked on `obj` (they re-check their condition). Only warps waiting on
 * that object: a warp that waited on it earlier and now sits at a barrier must stay blocked. */
static inline void kbd_cpu_wake_waiters(kbd_cpu_cta *cta, const void *obj) {
  for (int u = 0; u < cta->nwarps; ++u) {
    kbd_cpu_warp *x = &cta->warps[u];
    if (x->state == KBD_CPU_W_BLOCKED && x->wait_kind == KBD_CPU_WAIT_OBJ && x->wait_obj == obj) kbd_cpu_wake(x);
  }
}

/* A poll: yields with `spinning` set; the scheduler prefers other warps. */
static inline void kbd_cpu_spin(const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  w->spinning = 1;
  w->wait_kind = KBD_CPU_WAIT_SPIN;
  w->wait_file = file;
  w->wait_line = line;
  kbd_fiber_switch(&w->fiber, &w->cta->G->sched);
  w->wait_kind = KBD_CPU_WAIT_NONE;
}

/* Memory writes that can release a polling warp (in this or another block) bump this counter. */
static inline void kbd_cpu_note_progress(void) {
  if (kbd_cpu_cur) __atomic_fetch_add(&kbd_cpu_cur->cta->L->progress, 1ull, __ATOMIC_RELEASE);
}

/* ---- named barriers (PTX bar.sync / bar.arrive semantics) ---------------------------------------------------- */

/* A whole-block barrier (no thread count) after some warps exited: the GPU counts only non-exited threads
 * and completes it without them, so the kernel "works" there while its exited warps skipped whatever
 * the barrier was meant to order. Reported as its own misuse, at the arrival or at the exit, whichever
 * comes second, so the report does not depend on the schedule. */
KBD_NORETURN static inline void kbd_cpu_bar_after_exit(kbd_cpu_cta *cta, int id, const char *file, int line) {
  kbd_text t = KBD_TEXT_INIT;
  for (int i = 0; i < cta->nwarps; ++i)
    if (cta->warps[i].state == KBD_CPU_W_DONE) kbd_text_append(&t, " %d", i);
  const char *ex = kbd_cpu_keep(cta->L, &t);
  kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                "whole-block barrier %d is reached while warp(s)%s have exited: the GPU completes it without the "
                "exited threads (PTX counts only threads that have not exited), so they skip what it orders. Keep "
                "every warp alive until its last barrier, or use a named barrier with the live thread count",
                id, ex);
}

/* Barrier 0 serves two users: kbd_sync (`bar.sync 0` in the kernel's own code) and kbd's CTA-wide
 * collectives (kbd_cta_reduce, kbd_reduce of a KBD_CTA tile, CTA scans and tile reductions: `bar.sync 0`
 * inside the library). The GPU counts arrivals, not call sites, so a collective that only part of the block
 * reaches - the consumer warps of a warp-specialized kernel while the producer warp sits in a kbd_sync of
 * its own - "completes" there against that kbd_sync, and the collective reads shared slots the other warps
 * never wrote. The instance in flight keeps which kind began it (b->whole: 1 kbd_sync, 2 a collective;
 * both count the whole block) and the other kind may not join it. */
#define KBD_CPU_BAR_SYNC 1
#define KBD_CPU_BAR_COLLECTIVE 2

/* nthreads == 0 means every thread of the block, as in `bar.sync id;`; `collective`: a CTA-wide kbd
 * collective's barrier (see above). */
static inline void kbd_cpu_bar(int id, int nthreads, int arrive_only, int collective, const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w) kbd_cpu_fault(KBD_ERR_KERNEL, file, line, "barrier called outside a kernel"); /* aborts */
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_check_collective(w, arrive_only ? "bar.arrive" : "a barrier", file, line);
  const int all = cta->nwarps * KBD_WARP_SIZE;
  if (id < 0 || id >= KBD_NUM_NAMED_BARRIERS)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line, "barrier id %d is outside 0..15", id);
  if (arrive_only && nthreads == 0)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line, "bar.arrive on barrier %d needs an explicit thread count", id);
  const int whole = nthreads == 0;
  if (whole) nthreads = all;
  if (nthreads < 0 || nthreads % KBD_WARP_SIZE != 0 || nthreads > all)
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                  "barrier %d: thread count %d must be a multiple of 32 and at most the block's %d threads", id,
                  nthreads, all);
  if (whole)
    for (int i = 0; i < cta->nwarps; ++i)
      if (cta->warps[i].state == KBD_CPU_W_DONE) kbd_cpu_bar_after_exit(cta, id, file, line);
  kbd_cpu_barrier *b = &cta->bars[id];
  const int kind = !whole ? 0 : collective ? KBD_CPU_BAR_COLLECTIVE : KBD_CPU_BAR_SYNC;
  if (b->arrived == 0) {
    b->expected = nthreads;
    b->file = file;
    b->line = line;
    b->members = 0;
    b->whole = kind;
    memset(b->clk, 0, (size_t)kbd_cpu_nclk(cta->G) * sizeof b->clk[0]);
    memset(b->tcq, 0, sizeof b->tcq);
    cta->bar_rk[id].any = 0;
  } else if (b->expected != nthreads) {
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                  "barrier %d reached with thread count %d while the instance begun at %s:%d counts %d", id, nthreads,
                  b->file, b->line, b->expected);
  } else if (KBD_UNLIKELY(kind && b->whole && kind != b->whole)) {
    if (collective)
      kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                    "a CTA-wide collective (reduction or scan over the block) reaches barrier %d while the instance "
                    "in flight was begun by kbd_sync at %s:%d: only part of the block takes part in the collective, "
                    "and the GPU would pair it with that kbd_sync. Every warp of the block must reach it; for part "
                    "of the block use a warp range (kbd_scope_reduce, docs/scopes.md)",
                    id, b->file, b->line);
    kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                  "kbd_sync reaches barrier %d while the instance in flight was begun by a CTA-wide collective "
                  "(reduction or scan over the block) at %s:%d: only part of the block takes part in the collective, "
                  "and the GPU would pair this kbd_sync with it. Every warp of the block must reach it; for part of "
                  "the block use a warp range (kbd_scope_reduce, docs/scopes.md)",
                  id, b->file, b->line);
  }
  /* Release: the barrier carries what this warp did so far to the warps that wait on it. */
  kbd_cpu_release_into(b->clk, w);
  kbd_cpu_rk_release(&cta->bar_rk[id], w);
  kbd_cpu_tcseen_join(b->tcq, w->tcseen);
  b->members |= 1u << w->id;
  b->arrived += KBD_WARP_SIZE;
  kbd_cpu_tick(w);
  if (b->arrived == b->expected) {
    KBD_CPU_TRACE_BAR_DONE(w, id, b, file, line);
    /* Complete: every waiter (and this warp, unless it only arrives) acquires the join; a fresh instance. */
    for (int i = 0; i < cta->nwarps; ++i)
      if (b->waiters & (1u << i)) {
        kbd_cpu_acquire(&cta->warps[i], b->clk);
        kbd_cpu_rk_acquire(&cta->warps[i], &cta->bar_rk[id]);
        kbd_cpu_tcseen_join(cta->warps[i].tcseen, b->tcq);
        cta->warps[i].state = KBD_CPU_W_READY;
        cta->warps[i].wait_kind = KBD_CPU_WAIT_NONE;
      }
    if (!arrive_only) {
      kbd_cpu_acquire(w, b->clk);
      kbd_cpu_rk_acquire(w, &cta->bar_rk[id]);
      kbd_cpu_tcseen_join(w->tcseen, b->tcq);
      kbd_cpu_prof_wait(0);
    }
    b->waiters = 0;
    b->arrived = 0;
    kbd_cpu_yield(); /* a scheduling point, so seeds can reorder who runs first after the barrier */
    return;
  }
  if (arrive_only) return;
  kbd_cpu_prof_wait(1);
  b->waiters |= 1u << w->id;
  w->state = KBD_CPU_W_BLOCKED;
  w->wait_kind = KBD_CPU_WAIT_BAR;
  w->wait_bar = id;
  w->wait_file = file;
  w->wait_line = line;
  kbd_cpu_yield();
}

/* ---- exits in a cluster (kbd/cpu/cluster.h) ---------------------------------------------------------------- */

/* A phase of the cluster barrier while warps of the cluster have exited: see the top of this file. */
KBD_NORETURN static inline void kbd_cpu_cluster_after_exit(kbd_cpu_group *G, const char *file, int line) {
  kbd_text t = KBD_TEXT_INIT;
  for (int s = 0; s < G->nctas; ++s)
    for (int i = 0; i < G->ctas[s]->nwarps; ++i)
      if (G->ctas[s]->warps[i].state == KBD_CPU_W_DONE) kbd_text_append(&t, " %d(CTA %d)", i, s);
  const char *ex = kbd_cpu_keep(G->ctas[0]->L, &t);
  kbd_cpu_fault(KBD_ERR_BARRIER, file, line,
                "the cluster barrier is reached while warp(s)%s have exited: the GPU completes it without the exited "
                "threads (PTX exit releases a cluster barrier held up only by exited threads), so they skipped what "
                "it orders - a cluster barrier one CTA does not take part in. Every warp of every CTA of the cluster "
                "must reach it",
                ex);
}

static inline int kbd_cpu_cta_exited(const kbd_cpu_cta *cta) {
  for (int i = 0; i < cta->nwarps; ++i)
    if (cta->warps[i].state != KBD_CPU_W_DONE) return 0;
  return 1;
}

/* The last warp of a CTA ends: every access a peer made to its shared memory must be ordered before some
 * warp's exit of this CTA (then before the release of the memory). Only CTAs that peers touched pay the scan. */
static inline void kbd_cpu_cluster_exit_check(kbd_cpu_cta *cta) {
  kbd_cpu_group *G = cta->G;
  if (G->nctas == 1 || !cta->L->race_check || !kbd_cpu_cta_exited(cta)) return;
  const kbd_cpu_shadow *sh = &cta->sh;
  const int lo = cta->rank * KBD_CPU_MAX_WARPS, hi = lo + KBD_CPU_MAX_WARPS;
  for (size_t b = 0; b < cta->smem_top; ++b) {
    int who = -1, read = 0;
    uint32_t c = 0;
    uint16_t site = 0;
    const int x = sh->winfo[b] & KBD_CPU_SH_WARP;
    if (sh->wclk[b] >= sh->base && (x < lo || x >= hi) && !(sh->winfo[b] & KBD_CPU_SH_ASYNC))
      who = x, c = sh->wclk[b], site = sh->wsite[b];
    else if (sh->remote_reads && sh->rrclk[b] >= sh->base)
      who = sh->rrwho[b], c = sh->rrclk[b], site = sh->rrsite[b], read = 1;
    if (who < 0) continue;
    int ordered = 0; /* a remote read also counts when some warp knows it complete (a read release) */
    for (int i = 0; i < cta->nwarps && !ordered; ++i)
      ordered = cta->warps[i].clk[who] >= c || (read && kbd_cpu_rk_covers(&cta->warps[i], (uint32_t)who, c));
    if (!ordered) {
      char them[KBD_CPU_WHO_CAP];
      const char *where = kbd_cpu_smem_at(cta, b);
      const kbd_cpu_site s = kbd_cpu_site_of(site);
      kbd_cpu_fault(KBD_ERR_RACE, s.file, s.line,
                    "cluster CTA %d exits while nothing orders this access by %s to its %s before the exit: on the "
                    "GPU the CTA's shared memory may already be released. Keep every CTA alive while peers use its "
                    "shared memory - a kbd_cluster_sync() before the end of the kernel",
                    cta->rank, kbd_cpu_who(G, who, them, sizeof them), where);
    }
  }
}

/* A warp ends: a whole-block barrier instance already waited on by others would complete on the GPU
 * without it (see kbd_cpu_bar_after_exit). */
static inline void kbd_cpu_warp_exit_check(kbd_cpu_warp *w) {
  kbd_cpu_cta *cta = w->cta;
  /* The last warp leaves with an asynchronous copy still writing shared memory: on the GPU the block's
   * shared memory is released under it. Nobody waited on its mbarrier. */
  if (cta->ncopies) {
    int live = 0;
    for (int i = 0; i < cta->nwarps; ++i)
      live += cta->warps[i].state != KBD_CPU_W_DONE;
    if (!live)
      kbd_cpu_fault(KBD_ERR_MBARRIER, cta->copies[0].file, cta->copies[0].line,
                    "the block exits while this asynchronous copy (%u bytes) is still in flight: no warp waited on "
                    "its mbarrier. Wait for the phase it completes before the block ends",
                    cta->copies[0].bytes);
  }
  /* Bulk stores are waited for by the thread that issued them; one leaving without doing so may leave the
   * TMA reading shared memory the block is about to release. */
  for (int i = 0; i < cta->nstores; ++i)
    if (cta->stores[i].issuer == w->id)
      kbd_cpu_fault(KBD_ERR_MBARRIER, cta->stores[i].file, cta->stores[i].line,
                    "warp %d ends while this %s was not waited for: %s kbd_bulk_wait_group(0) before the "
                    "warp ends",
                    w->id, kbd_cpu_store_name(cta->stores[i].op, cta->stores[i].rank),
                    cta->stores[i].group ? "call" : "commit it (kbd_bulk_commit_group) and call");
  /* MMAs not retired / committed, Tensor Memory still allocated (kbd/cpu/mma.h) */
  if (cta->mma_exit) cta->mma_exit(w);
  for (int id = 0; id < KBD_NUM_NAMED_BARRIERS; ++id) {
    const kbd_cpu_barrier *b = &cta->bars[id];
    if (b->arrived > 0 && b->whole && b->waiters) kbd_cpu_bar_after_exit(cta, id, b->file, b->line);
  }
  /* A cluster barrier phase in flight that this warp has not arrived at: the GPU releases it without the
   * exited thread. Reported here or at the arrival, whichever comes second, so not by schedule. */
  if (cta->G->cl_arrived > 0 && !(w->cl_arrived && w->cl_phase == cta->G->cl_phase))
    kbd_cpu_cluster_after_exit(cta->G, cta->G->cl_file, cta->G->cl_line);
  kbd_cpu_cluster_exit_check(cta);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_WAIT_H */
