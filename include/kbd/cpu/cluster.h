/* kbd/cpu/cluster.h - thread-block clusters on the CPU machine (twin of ptx/cluster.h).
 *
 * The CTAs of a cluster are one scheduling group (kbd/cpu/state.h): co-resident on one host thread, every
 * warp a fiber of the group, one vector-clock space over all of them. So the cluster barrier, distributed
 * shared memory (a peer's shared array, reached through kbd_cluster_map) and mbarriers signalled from a peer
 * behave as on the GPU, and the race checker orders accesses across CTAs exactly as within one.
 *
 * Cluster barrier (PTX barrier.cluster): every thread of the cluster arrives once per phase and waits for
 * the phase; kbd issues it per warp (.aligned) so it counts warps. An arrive twice without a wait between,
 * a wait without an arrive, a phase reached after some warp of the cluster exited (PTX `exit` releases a
 * cluster barrier held up only by exited threads: the exited CTA skipped what the barrier orders) are each
 * KBD_ERR_BARRIER; a phase some warp never reaches is a deadlock that names every CTA's warps.
 *
 * Distributed shared memory: an access to a peer's shared memory must come after something ordered it
 * after the peer started (CUDA: every CTA of the cluster must have started before its shared memory is
 * accessed; a kbd_cluster_sync does it), and before the peer's exit (its shared memory is released then):
 * the first is checked at the access, the second at the access (peer already gone) and at the peer's exit
 * (an earlier access its exit is not ordered after). Both KBD_ERR_RACE.
 */
#ifndef KBD_CPU_CLUSTER_H
#define KBD_CPU_CLUSTER_H

#include "tma.h"

#if KBD_MODE_CPU

static inline unsigned kbd_hw_cluster_ctarank(void) { return (unsigned)kbd_cpu_self()->cta->rank; }
static inline unsigned kbd_hw_cluster_nctarank(void) { return (unsigned)kbd_cpu_self()->cta->G->nctas; }
static inline unsigned kbd_hw_cluster_id_x(void) { return kbd_cpu_self()->cta->G->cx; }
static inline unsigned kbd_hw_cluster_id_y(void) { return kbd_cpu_self()->cta->G->cy; }
static inline unsigned kbd_hw_cluster_id_z(void) { return kbd_cpu_self()->cta->G->cz; }
static inline unsigned kbd_hw_cluster_dim_x(void) { return kbd_cpu_self()->cta->L->ccx; }
static inline unsigned kbd_hw_cluster_dim_y(void) { return kbd_cpu_self()->cta->L->ccy; }
static inline unsigned kbd_hw_cluster_dim_z(void) { return kbd_cpu_self()->cta->L->ccz; }

/* ---- the cluster barrier ------------------------------------------------------------------------------------ */

static inline void kbd_cpu_cluster_describe(const kbd_cpu_warp *w, kbd_text *out) {
  const kbd_cpu_group *G = w->cta->G;
  kbd_text_append(out,
                  "the cluster barrier to complete phase %u (%d of %d warps of the cluster arrived; the "
                  "phase was begun at %s:%d)",
                  (unsigned)w->wait_arg, G->cl_arrived, G->nwarps, G->cl_file ? G->cl_file : "?", G->cl_line);
}

static inline void kbd_cpu_cluster_complete(kbd_cpu_group *G) {
  const size_t n = (size_t)kbd_cpu_nclk(G) * sizeof G->cl_clk[0];
  memcpy(G->cl_done, G->cl_clk, n);
  memset(G->cl_clk, 0, n);
  G->cl_rk_done.any = 0;
  kbd_cpu_rk_join(&G->cl_rk_done, &G->cl_rk, kbd_cpu_nclk(G));
  G->cl_rk.any = 0;
  G->cl_arrived = 0;
  G->cl_phase++;
  for (int s = 0; s < G->nctas; ++s) {
    uint32_t woken = 0;
    for (int i = 0; i < G->ctas[s]->nwarps; ++i) {
      kbd_cpu_warp *x = &G->ctas[s]->warps[i];
      if (x->state == KBD_CPU_W_BLOCKED && x->wait_kind == KBD_CPU_WAIT_OBJ && x->wait_obj == (const void *)G) {
        kbd_cpu_wake(x);
        woken |= 1u << i;
      }
    }
    if (KBD_CPU_TRACED(G->ctas[s])) { /* KBD_CPU_TRACE: the completion that releases this CTA's waiters */
      char ws[KBD_CPU_WARP_LIST_CAP];
      kbd_cpu_trace_emit(G->ctas[s], "cluster barrier phase %u complete, wakes warps%s", G->cl_phase - 1u,
                         kbd_cpu_trace_warps(woken, ws, sizeof ws));
    }
  }
}

/* barrier.cluster.arrive{.release|.relaxed}.aligned */
static inline void kbd_hw_cluster_arrive(int release, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_group *G = w->cta->G;
  kbd_cpu_check_collective(w, "kbd_cluster_arrive", KBD_SITE_ARGS);
  if (w->cl_arrived)
    kbd_cpu_fault(KBD_ERR_BARRIER, KBD_SITE_ARGS,
                  "kbd_cluster_arrive twice without a kbd_cluster_wait between: each thread arrives once per phase of "
                  "the cluster barrier (PTX barrier.cluster)");
  for (int s = 0; s < G->nctas; ++s)
    for (int i = 0; i < G->ctas[s]->nwarps; ++i)
      if (G->ctas[s]->warps[i].state == KBD_CPU_W_DONE) kbd_cpu_cluster_after_exit(G, KBD_SITE_ARGS);
  if (release) {
    kbd_cpu_release_into(G->cl_clk, w);
    kbd_cpu_rk_release(&G->cl_rk, w);
    kbd_cpu_tick(w);
  }
  if (G->cl_arrived == 0) {
    G->cl_file = kbd_file_;
    G->cl_line = kbd_line_;
  }
  w->cl_arrived = 1;
  w->cl_phase = G->cl_phase;
  if (w->mbinit_fence_clk > w->pub_fence_clk) { /* fenced inits since the last publication ride on this phase */
    w->pub_fence_clk = w->mbinit_fence_clk;
    w->pub_phase = G->cl_phase;
  }
  if (++G->cl_arrived == G->nwarps) kbd_cpu_cluster_complete(G);
}

/* barrier.cluster.wait.acquire.aligned: the phase this warp arrived at has completed. */
static inline void kbd_hw_cluster_wait(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_group *G = w->cta->G;
  kbd_cpu_check_collective(w, "kbd_cluster_wait", KBD_SITE_ARGS);
  if (!w->cl_arrived)
    kbd_cpu_fault(KBD_ERR_BARRIER, KBD_SITE_ARGS,
                  "kbd_cluster_wait without a kbd_cluster_arrive before it: a thread waits for the phase it arrived "
                  "at (use kbd_cluster_sync for both)");
  kbd_cpu_prof_wait(G->cl_phase == w->cl_phase); /* a barrier wait; blocked unless the phase already completed */
  if (G->cl_phase == w->cl_phase) {
    while (G->cl_phase == w->cl_phase)
      kbd_cpu_block(G, w->cl_phase, kbd_cpu_cluster_describe, KBD_SITE_ARGS);
  } else {
    kbd_cpu_yield(); /* a scheduling point, so seeds can reorder who runs first after the barrier */
  }
  /* The phase cannot have completed twice: this warp's arrival is part of the next one. */
  kbd_cpu_acquire(w, G->cl_done);
  kbd_cpu_rk_acquire(w, &G->cl_rk_done);
  w->cl_arrived = 0;
  w->cl_done_phase = G->cl_phase;
}

/* The GPU twin tells the compiler the mask is not 0 (__builtin_unreachable): a 0 there is undefined behaviour, which
 * here would surface much later as a multicast commit or arrive reaching no CTA and a producer waiting forever (a
 * deadlock report far from the cause). So the promise is checked where it is made. */
static inline void kbd_cpu_cluster_mask_assume(uint32_t mask, const char *what, KBD_SITE_PARAMS) {
  if (mask == 0u)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "kbd_cluster_mask_assume(%s): the multicast mask is 0, but the code after it was compiled for a "
                  "non-zero mask (on the GPU this is undefined behaviour: a commit or arrive that reaches no CTA); a "
                  "mask of the cluster's CTAs holds at least the issuing CTA's own bit (1u << kbd_cluster_ctarank())",
                  what);
}

#define KBD_HW_CLUSTER_MASK_ASSUME(mask, what, file, line) kbd_cpu_cluster_mask_assume((mask), (what), (file), (line))

/* ---- distributed shared memory -------------------------------------------------------------------------------- */

static inline kbd_cpu_cta *kbd_cpu_cluster_cta(kbd_cpu_warp *w, unsigned rank, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_group *G = w->cta->G;
  if (rank >= (unsigned)G->nctas)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: cluster rank %u, but the cluster has %d CTA(s) (ranks 0..%d)",
                  what, rank, G->nctas, G->nctas - 1);
  return G->ctas[rank];
}

/* mapa: the same shared-memory offset in the CTA of cluster rank `rank`. */
static inline void *kbd_hw_cluster_map(const void *p, unsigned rank, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *peer = kbd_cpu_cluster_cta(w, rank, "kbd_cluster_map", KBD_SITE_ARGS);
  const uintptr_t a = (uintptr_t)p, lo = (uintptr_t)w->cta->smem;
  if (a < lo || a >= lo + KBD_MAX_SMEM_BYTES)
    kbd_cpu_fault(KBD_ERR_BOUNDS, KBD_SITE_ARGS,
                  "kbd_cluster_map: %p is not a shared-memory address of this block (mapa maps this CTA's shared "
                  "memory to a peer's)",
                  p);
  return peer->smem + (a - lo);
}

/* The CTA of the group whose shared memory holds p (NULL: none). */
static inline kbd_cpu_cta *kbd_cpu_smem_owner(const kbd_cpu_group *G, const void *p) {
  const uintptr_t a = (uintptr_t)p;
  for (int s = 0; s < G->nctas; ++s) {
    const uintptr_t lo = (uintptr_t)G->ctas[s]->smem;
    if (a >= lo && a < lo + KBD_MAX_SMEM_BYTES) return G->ctas[s];
  }
  return NULL;
}

/* A peer CTA's shared memory is reachable once something ordered this warp after the peer started (it has
 * seen a clock of one of the peer's warps) and until the peer exits. */
static inline void kbd_cpu_dsmem_reachable(const kbd_cpu_warp *w, const kbd_cpu_cta *peer, const char *what,
                                           KBD_SITE_PARAMS) {
  if (kbd_cpu_cta_exited(peer))
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "%s touches the shared memory of cluster CTA %d, which has exited (its shared memory is released "
                  "when its last thread ends): keep every CTA alive while peers use its shared memory - a "
                  "kbd_cluster_sync() before the end of the kernel",
                  what, peer->rank);
  /* A completed cluster barrier phase, even a relaxed one, had every warp of the cluster arrive. */
  if (w->cl_done_phase > 0) return;
  const int base = peer->rank * KBD_CPU_MAX_WARPS;
  for (int i = 0; i < peer->nwarps; ++i)
    if (w->clk[base + i] >= peer->sh.base) return;
  kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                "%s touches the shared memory of cluster CTA %d before anything orders this warp after that CTA "
                "started (CUDA requires every CTA of the cluster to have started before its shared memory is "
                "accessed): kbd_cluster_sync() first",
                what, peer->rank);
}

/* A checked scalar access of shared memory that may be a peer CTA's (kbd_ld_shared / kbd_st_shared through a
 * kbd_cluster_map pointer; generic ld/st on the GPU). */
static inline void kbd_cpu_dsmem_access(const void *p, size_t bytes, int esize, int store, const char *what,
                                        KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta->G->nctas > 1 ? kbd_cpu_smem_owner(w->cta->G, p) : w->cta;
  if (!cta) cta = w->cta; /* not shared memory at all: the bounds check names it */
  if (cta != w->cta) kbd_cpu_dsmem_reachable(w, cta, what, KBD_SITE_ARGS);
  const size_t off = kbd_cpu_check_smem_in(cta, p, bytes, KBD_SITE_ARGS, what);
  const kbd_cpu_elem el = {-1, -1, esize};
  if (store)
    kbd_cpu_shadow_write_at(cta, w, off, bytes, 0, what, el, KBD_SITE_ARGS);
  else
    kbd_cpu_shadow_read_at(cta, w, off, bytes, what, el, KBD_SITE_ARGS);
}
static inline void kbd_hw_dsmem_read(const void *p, size_t bytes, int esize, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_dsmem_access(p, bytes, esize, 0, what, KBD_SITE_ARGS);
}
static inline void kbd_hw_dsmem_write(const void *p, size_t bytes, int esize, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_dsmem_access(p, bytes, esize, 1, what, KBD_SITE_ARGS);
}

/* A checked write through a pointer that may be global memory or shared memory (this CTA's or, in a cluster, a
 * peer's): kbd_vec_store's destination. */
static inline void kbd_hw_mem_write(void *p, size_t bytes, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  if (kbd_cpu_smem_owner(w->cta->G, p))
    kbd_cpu_dsmem_access(p, bytes, (int)bytes, 1, what, KBD_SITE_ARGS);
  else
    kbd_cpu_global_access(p, bytes, KBD_CPU_G_WRITE, KBD_SITE_ARGS, what);
}

/* ---- mbarriers of a peer, multicast TMA ---------------------------------------------------------------------- */

/* The live mbarrier at the offset of `bar` (this CTA's address) in cluster CTA `rank`; the issuing warp reads
 * its 8 bytes, so the peer's initialisation must be ordered before (kbd_fence_mbarrier_init, then a cluster
 * barrier). */
static inline kbd_cpu_mbar *kbd_cpu_peer_mbar(kbd_cpu_warp *w, kbd_cpu_cta *peer, const uint64_t *bar, const char *what,
                                              KBD_SITE_PARAMS) {
  const size_t off = kbd_cpu_mbar_off(w, bar, what, KBD_SITE_ARGS);
  if (peer == w->cta) return kbd_cpu_mbar_use(bar, what, KBD_SITE_ARGS);
  kbd_cpu_dsmem_reachable(w, peer, what, KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_find(peer, off);
  if (!m || !m->live)
    kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS,
                  "%s: cluster CTA %d has no initialised mbarrier at shared byte %zu (the offset of this CTA's "
                  "barrier): each CTA initialises its own copy before a peer signals it",
                  what, peer->rank, off);
  const kbd_cpu_elem el = {-1, -1, 8};
  if (!kbd_cpu_mbar_init_published(w, m)) kbd_cpu_shadow_read_at(peer, w, off, 8, what, el, KBD_SITE_ARGS);
  const kbd_cpu_warp *iw = &peer->warps[m->init_gid % KBD_CPU_MAX_WARPS];
  if (m->init_clk > iw->mbinit_fence_clk)
    kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS,
                  "%s: the mbarrier of cluster CTA %d initialised at %s:%d is used by another CTA, but its "
                  "initialising thread executed no kbd_fence_mbarrier_init() after the init (fence.mbarrier_init."
                  "release.cluster makes an init visible to the cluster; then a kbd_cluster_sync)",
                  what, peer->rank, m->file, m->line);
  return m;
}

/* mapa + mbarrier.arrive.release.cluster.shared::cluster: `count` arrivals per executing thread on the barrier
 * at bar's offset in CTA `rank` (a release at cluster scope: the peer's waiters acquire this warp's work). */
static inline void kbd_hw_mbar_arrive_cluster(uint64_t *bar, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *peer = kbd_cpu_cluster_cta(w, rank, "kbd_mbarrier_arrive_cluster", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_peer_mbar(w, peer, bar, "kbd_mbarrier_arrive_cluster", KBD_SITE_ARGS);
  kbd_cpu_mbar_arrivals(w, m, (int)count * kbd_cpu_issuers(w), "kbd_mbarrier_arrive_cluster", KBD_SITE_ARGS);
  kbd_cpu_mbar_check(peer, m);
}

/* mapa + mbarrier.arrive.shared::cluster (no .sem: .release at .cta scope): `count` arrivals per executing thread on
 * the barrier at bar's offset in CTA `rank`, handing back a buffer this warp has only READ (docs/design/
 * read-release.md). To this CTA's own barrier it is a release like kbd_mbarrier_arrive (.cta scope covers its
 * waiters); to a peer's it releases nothing the PTX memory model would order, and carries only what the GPU's
 * execution order guarantees - that the reads this warp knew complete (a wgmma.wait_group that retired them, or
 * anything ordered before this warp) are over before the peer's waiter can see the phase. So a peer's producer that
 * waited for the phase may overwrite bytes those reads touched (write-after-read: clean), but a byte this CTA wrote,
 * or a read still in flight at the arrive (a wgmma group not yet waited for: its read is recorded when it retires,
 * after this warp's clock moved on), is a data race at the producer's write. */
static inline void kbd_hw_mbar_arrive_cluster_reads(uint64_t *bar, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  const char *what = "kbd_mbarrier_arrive_cluster_reads";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *peer = kbd_cpu_cluster_cta(w, rank, what, KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_peer_mbar(w, peer, bar, what, KBD_SITE_ARGS);
  const int n = (int)count * kbd_cpu_issuers(w);
  if (peer == w->cta)
    kbd_cpu_mbar_arrivals(w, m, n, what, KBD_SITE_ARGS);
  else
    kbd_cpu_mbar_read_arrivals(w, m, n, what, KBD_SITE_ARGS);
  kbd_cpu_mbar_check(peer, m);
}

/* cp.async.bulk.tensor ... .multicast::cluster: one box into the same shared offset of every CTA whose bit is
 * set in mask, each completing the bytes on its own mbarrier at bar's offset. */
static inline void kbd_hw_tma_load_multicast(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle,
                                             const kbd_tensor_map *map, uint64_t *bar, int rank, uint16_t mask,
                                             int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4,
                                             KBD_SITE_PARAMS) {
  const char *what = kbd_cpu_tma_name(KBD_CPU_TN_LOAD_MULTICAST, rank, 0);
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_group *G = w->cta->G;
  kbd_cpu_mbar_single(w, what, KBD_SITE_ARGS); /* before the mask: an issue from 32 threads is the first error */
  if (mask == 0 || (G->nctas < 16 && (mask >> G->nctas) != 0))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: CTA mask 0x%04x names no CTA or a rank outside the cluster of %d CTA(s) (bit r = cluster "
                  "rank r)",
                  what, (unsigned)mask, G->nctas);
  const int32_t c[5] = {c0, c1, c2, c3, c4};
  const uint32_t bytes = line_bytes * lines;
  const size_t off = kbd_cpu_tma_load_check(w, dst, line_bytes, lines, swizzle, map, rank, c,
                                            KBD_CPU_TMA_WHAT(KBD_CPU_TN_LOAD_MULTICAST, rank), KBD_SITE_ARGS);
  for (int r = 0; r < G->nctas; ++r) {
    if (!(mask >> r & 1u)) continue;
    kbd_cpu_cta *peer = G->ctas[r];
    if (peer != w->cta) {
      kbd_cpu_dsmem_reachable(w, peer, what, KBD_SITE_ARGS);
      kbd_cpu_check_smem_in(peer, peer->smem + off, bytes, KBD_SITE_ARGS,
                            "the multicast's destination in a peer CTA (the same offset in every CTA: place "
                            "multicast tiles in dynamic shared memory)");
    }
    kbd_cpu_mbar *m = kbd_cpu_peer_mbar(w, peer, bar, what, KBD_SITE_ARGS);
    kbd_cpu_copy_issue_at(peer, w, m, off, bytes, map, kbd_cpu_tma_land, c, what, KBD_SITE_ARGS);
  }
  /* One read of global memory however many CTAs receive the box: that is the point of multicast. */
  kbd_cpu_prof_tma(0, bytes);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_CLUSTER_H */
