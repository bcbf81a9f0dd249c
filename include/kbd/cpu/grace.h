/* kbd/cpu/grace.h - races on global memory (docs/design/global-races.md, docs/cpu-machine.md "Races on global
 * memory").
 *
 * Within one launch, two kbd accesses to one global byte from different blocks, or from two warps of one block, at
 * least one a write, neither an atomic, with no happens-before path between them, are a KBD_ERR_RACE naming both
 * sites. Happens-before, not schedule luck: the check holds whichever block ran first and on any host-thread count.
 *
 * Ordering. Inside a scheduling group (one CTA, or the CTAs of one cluster) the shared-memory checker's vector
 * clocks over the group's warps order accesses (barriers, mbarriers, the cluster barrier). Between groups a
 * release (kbd_st_release_*, kbd_atomic_add_acq_rel_u32) leaves on the flag's sync object what the releasing
 * warp knows: its group's clocks and every other group's clocks it knew; an acquire (kbd_ld_acquire_*, the
 * acq_rel add) joins it. Knowledge of other groups is kept per warp as a log of snapshots, each stamped with the
 * warp's clock after the acquire that produced it, so a barrier that orders warp u before warp w hands w
 * everything u had acquired by then with no change to the barrier code: w knows u's snapshot stamped c when
 * w's clock of u is >= c. Clocks in records and snapshots are relative to the group's first clock.
 *
 * Shadow: per data byte the last write and the last read (a 64-bit record each: launch tag, group + 1, warp, relative
 * clock) and their sites, in 4 KiB-of-data chunks whose write and read halves are allocated on first use; records of
 * an earlier launch read as "no access". The read records of a 64-byte unit that one access read whole are kept as one
 * summary until an access needs them per byte (kbd_cpu_gr_uread, "Read records per unit" below).
 * Records are relaxed atomics; an access publishes its own records, fences, then checks the others', so two host
 * threads touching one byte at the same moment cannot both miss each other.
 */
#ifndef KBD_CPU_GRACE_H
#define KBD_CPU_GRACE_H

#include "shadow.h"

#if KBD_MODE_CPU

#define KBD_CPU_GR_CHUNK_LOG 12
#define KBD_CPU_GR_CHUNK ((size_t)1 << KBD_CPU_GR_CHUNK_LOG)
/* Groups a snapshot knows one by one; beyond, the lowest collapse into a floor ("all known"), which can only hide
 * a race with a block that many links back in a chain, never report a correct kernel. */
#define KBD_CPU_GR_KNOWN 64
#define KBD_CPU_GR_MAXGRP 0xffffffu  /* group index + 1 fits 24 bits */
#define KBD_CPU_GR_MAXCLK 0x7ffffffu /* relative clock fits 27 bits */
/* A chunk's records are cleared once per this many launches: each record carries the low bits of its launch epoch,
 * and one of an earlier launch in the window reads as "no access" (ordered by the kernel boundary). */
#define KBD_CPU_GR_TAGS 16u
#define KBD_CPU_GR_SYNC_BUCKETS 1024u

/* A record: bits 60-63 the launch epoch's low bits, 36-59 group index + 1, 27-35 warp (group index), 0-26 relative
 * clock; 0: none. */
static inline uint64_t kbd_cpu_gr_rec(unsigned tag, uint32_t g1, uint32_t gid, uint32_t c) {
  return (uint64_t)tag << 60 | (uint64_t)g1 << 36 | (uint64_t)gid << 27 | c;
}
/* r if it belongs to the launch with tag `tag`, else 0 (an earlier launch's). */
static inline uint64_t kbd_cpu_gr_live(uint64_t r, unsigned tag) { return (unsigned)(r >> 60) == tag ? r : 0; }
static inline uint32_t kbd_cpu_gr_g1(uint64_t r) { return (uint32_t)(r >> 36) & KBD_CPU_GR_MAXGRP; }
static inline uint32_t kbd_cpu_gr_gid(uint64_t r) { return (uint32_t)(r >> 27) & 0x1ffu; }
static inline uint32_t kbd_cpu_gr_clk(uint64_t r) { return (uint32_t)r & KBD_CPU_GR_MAXCLK; }

/* Read records per unit of KBD_CPU_GR_UNIT bytes (a read half's urec/usite). A TMA box line or a tile load reads
 * whole units, and every byte of the unit then gets the same record: urec[u] holds it once for the unit, as a summary
 * that *is* each byte's record (their per-byte entries are stale), KBD_CPU_GR_UNONE for "no reader" (each byte's
 * record 0), or 0: the per-byte entries are the records. An access that covers a unit in part, or a write that finds
 * its reader not ordered (to report the race at its byte, as before), first expands the summary into the per-byte
 * entries and sets 0, which stays until the chunk's records are cleared. KBD_CPU_GR_UBUSY marks a unit being expanded:
 * nobody uses its records until the expansion ends. 1 and 2 are never records (a record's group index + 1 >= 1). */
#define KBD_CPU_GR_UNIT_LOG 6
#define KBD_CPU_GR_UNIT ((size_t)1 << KBD_CPU_GR_UNIT_LOG)
#define KBD_CPU_GR_UNONE ((uint64_t)1)
#define KBD_CPU_GR_UBUSY ((uint64_t)2)

/* The last writes (or reads) of a chunk's bytes and their sites (kbd_cpu_site_id); in a read half also the units'
 * summaries (unused in a write half). */
typedef struct kbd_cpu_gr_half {
  uint64_t rec[KBD_CPU_GR_CHUNK];
  uint16_t site[KBD_CPU_GR_CHUNK];
  uint64_t urec[KBD_CPU_GR_CHUNK >> KBD_CPU_GR_UNIT_LOG];
  uint16_t usite[KBD_CPU_GR_CHUNK >> KBD_CPU_GR_UNIT_LOG];
} kbd_cpu_gr_half;
/* h[0]: writes, h[1]: reads, each allocated on the first access of its kind, so an input that kernels only read or
 * an output they only write costs half the shadow. */
typedef struct kbd_cpu_gr_chunk {
  unsigned epoch; /* launch epoch when its records were last cleared; ~0u while one thread clears them */
  kbd_cpu_gr_half *h[2];
} kbd_cpu_gr_chunk;

/* What is known of other groups: for each group (index + 1, sorted) its warps' relative clocks. */
typedef struct kbd_cpu_gr_know {
  uint32_t floor; /* groups (index + 1) below it: everything known */
  int n, cap, nclk;
  uint32_t *g1;
  uint32_t *v; /* n x nclk */
} kbd_cpu_gr_know;

/* A warp's state, reset when the warp struct runs a new group (or launch). */
typedef struct kbd_cpu_gr_warp {
  struct kbd_cpu_gr_warp *all; /* every state made, kept reachable from kbd_cpu_gr_g */
  unsigned epoch;
  uint32_t g1;              /* its group's index + 1 */
  uint32_t base1;           /* the group's first clock - 1: relative clock = clock - base1 */
  unsigned long long first; /* the group's first block (kbd_cpu_group.first): the key, cheaper to compare than g1 */
  int nlog, caplog;
  uint32_t *logc;         /* logc[i]: the warp's clock once it knew logk[i] (increasing) */
  kbd_cpu_gr_know **logk; /* snapshots, each a superset of the one before */
} kbd_cpu_gr_warp;

/* A flag's sync object: what the latest release (sequence) on it published. */
typedef struct kbd_cpu_gr_sync {
  struct kbd_cpu_gr_sync *next;
  uintptr_t addr;
  unsigned epoch;
  kbd_cpu_gr_know k;
} kbd_cpu_gr_sync;

typedef struct kbd_cpu_gr_global {
  pthread_mutex_t mu; /* epochs, the warp-state list, sync objects and the flag operations they go with */
  unsigned epoch;     /* the last launch epoch handed out */
  kbd_cpu_gr_warp *all;
  kbd_cpu_gr_sync *b[KBD_CPU_GR_SYNC_BUCKETS];
} kbd_cpu_gr_global;
KBD_WEAK kbd_cpu_gr_global kbd_cpu_gr_g = {PTHREAD_MUTEX_INITIALIZER, 0, NULL, {NULL}};

/* ---- knowledge ------------------------------------------------------------------------------------------- */

static inline void kbd_cpu_gr_know_clear(kbd_cpu_gr_know *k, int nclk) {
  if (k->nclk != nclk) { /* the clock arrays are sized by nclk */
    free(k->g1);
    free(k->v);
    k->g1 = NULL;
    k->v = NULL;
    k->cap = 0;
  }
  k->floor = 0;
  k->n = 0;
  k->nclk = nclk;
}
static inline void kbd_cpu_gr_know_free(kbd_cpu_gr_know *k) {
  free(k->g1);
  free(k->v);
  memset(k, 0, sizeof *k);
}
/* Index of group g1 in k, or -(insertion point) - 1. */
static inline int kbd_cpu_gr_know_find(const kbd_cpu_gr_know *k, uint32_t g1) {
  int lo = 0, hi = k->n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (k->g1[mid] < g1)
      lo = mid + 1;
    else if (k->g1[mid] > g1)
      hi = mid;
    else
      return mid;
  }
  return -lo - 1;
}
/* Is warp u of group g1 at relative clock c covered by k? */
static inline int kbd_cpu_gr_know_covers(const kbd_cpu_gr_know *k, uint32_t g1, uint32_t u, uint32_t c) {
  if (g1 < k->floor) return 1;
  const int i = kbd_cpu_gr_know_find(k, g1);
  return i >= 0 && (int)u < k->nclk && k->v[(size_t)i * (size_t)k->nclk + u] >= c;
}
/* Every group below f counts as known (their entries go); returns 1 if that raised the floor. */
static inline int kbd_cpu_gr_know_floor(kbd_cpu_gr_know *k, uint32_t f) {
  if (f <= k->floor) return 0;
  k->floor = f;
  int drop = 0;
  while (drop < k->n && k->g1[drop] < f)
    ++drop;
  const size_t nc = (size_t)k->nclk;
  memmove(k->g1, &k->g1[drop], (size_t)(k->n - drop) * sizeof k->g1[0]);
  memmove(k->v, &k->v[(size_t)drop * nc], (size_t)(k->n - drop) * nc * sizeof k->v[0]);
  k->n -= drop;
  return 1;
}
/* k := k joined with group g1's clocks v (nclk of them); returns 1 if k grew, -1 when out of memory. */
static inline int kbd_cpu_gr_know_put(kbd_cpu_gr_know *k, uint32_t g1, const uint32_t *v) {
  if (g1 < k->floor) return 0;
  const size_t nc = (size_t)k->nclk;
  int i = kbd_cpu_gr_know_find(k, g1);
  if (i >= 0) {
    int grew = 0;
    for (size_t u = 0; u < nc; ++u)
      if (v[u] > k->v[(size_t)i * nc + u]) k->v[(size_t)i * nc + u] = v[u], grew = 1;
    return grew;
  }
  i = -i - 1;
  if (k->n == k->cap) {
    const int cap = k->cap ? 2 * k->cap : 8;
    uint32_t *g = (uint32_t *)realloc(k->g1, (size_t)cap * sizeof *g);
    if (!g) return -1;
    k->g1 = g;
    uint32_t *vv = (uint32_t *)realloc(k->v, (size_t)cap * nc * sizeof *vv + 1);
    if (!vv) return -1;
    k->v = vv;
    k->cap = cap;
  }
  memmove(&k->g1[i + 1], &k->g1[i], (size_t)(k->n - i) * sizeof k->g1[0]);
  memmove(&k->v[((size_t)i + 1) * nc], &k->v[(size_t)i * nc], (size_t)(k->n - i) * nc * sizeof k->v[0]);
  k->g1[i] = g1;
  memcpy(&k->v[(size_t)i * nc], v, nc * sizeof k->v[0]);
  k->n++;
  if (k->n > KBD_CPU_GR_KNOWN) /* the lowest groups become the floor: over-approximates, never under */
    kbd_cpu_gr_know_floor(k, k->g1[k->n - KBD_CPU_GR_KNOWN - 1] + 1);
  return 1;
}
/* dst := dst joined with src (same nclk); returns 1 if dst grew, -1 when out of memory. */
static inline int kbd_cpu_gr_know_join(kbd_cpu_gr_know *dst, const kbd_cpu_gr_know *src) {
  int grew = kbd_cpu_gr_know_floor(dst, src->floor);
  for (int i = 0; i < src->n; ++i) {
    const int r = kbd_cpu_gr_know_put(dst, src->g1[i], &src->v[(size_t)i * (size_t)src->nclk]);
    if (r < 0) return -1;
    grew |= r;
  }
  return grew;
}
/* Does k cover everything src knows of groups other than `skip`? */
static inline int kbd_cpu_gr_know_within(const kbd_cpu_gr_know *src, const kbd_cpu_gr_know *k, uint32_t skip) {
  if (src->floor > k->floor || src->nclk != k->nclk) return 0;
  for (int i = 0; i < src->n; ++i) {
    if (src->g1[i] == skip || src->g1[i] < k->floor) continue;
    const int j = kbd_cpu_gr_know_find(k, src->g1[i]);
    if (j < 0) return 0;
    for (int u = 0; u < k->nclk; ++u)
      if (src->v[(size_t)i * (size_t)k->nclk + (size_t)u] > k->v[(size_t)j * (size_t)k->nclk + (size_t)u]) return 0;
  }
  return 1;
}
static inline kbd_cpu_gr_know *kbd_cpu_gr_know_copy(const kbd_cpu_gr_know *src, int nclk) {
  kbd_cpu_gr_know *k = (kbd_cpu_gr_know *)calloc(1, sizeof *k);
  if (!k) return NULL;
  k->nclk = nclk;
  if (src && kbd_cpu_gr_know_join(k, src) < 0) {
    kbd_cpu_gr_know_free(k);
    free(k);
    return NULL;
  }
  return k;
}

/* ---- launches and warps ------------------------------------------------------------------------------------ */

/* Whether launch L checks global races; its epoch is handed out on first use (pool.h starts launches). */
static inline int kbd_cpu_gr_on(kbd_cpu_launch *L) {
  if (KBD_LIKELY(__atomic_load_n(&L->grace_epoch, __ATOMIC_ACQUIRE) != 0)) return L->grace_on;
  kbd_cpu_gr_global *g = &kbd_cpu_gr_g;
  pthread_mutex_lock(&g->mu);
  if (!L->grace_epoch) {
    L->grace_on = L->race_check && kbd_cpu_env_long("KBD_CPU_GLOBAL_RACECHECK", 1) != 0;
    if (++g->epoch == 0 || g->epoch == ~0u) g->epoch = 1; /* 0: unset, ~0u: a chunk being reset */
    __atomic_store_n(&L->grace_epoch, g->epoch, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g->mu);
  return L->grace_on;
}

/* The entries of the group's vector clocks in use (every warp of every CTA but the unused tail of the last). */
static inline int kbd_cpu_gr_nclk(const kbd_cpu_group *G) {
  return (G->nctas - 1) * KBD_CPU_MAX_WARPS + G->ctas[G->nctas - 1]->nwarps;
}
/* The running group's index in the launch + 1 (clusters in linear order, x fastest), 0 past the record's range. */
static inline uint32_t kbd_cpu_gr_group1(const kbd_cpu_group *G) {
  const kbd_cpu_launch *L = G->L;
  const unsigned long long ncx = L->cfg.grid.x / L->ccx, ncy = L->cfg.grid.y / L->ccy;
  const unsigned long long k = G->cx + ncx * (G->cy + ncy * G->cz);
  return k + 1 > KBD_CPU_GR_MAXGRP ? 0 : (uint32_t)(k + 1);
}

static inline void kbd_cpu_gr_log_clear(kbd_cpu_gr_warp *s) {
  for (int i = 0; i < s->nlog; ++i) {
    kbd_cpu_gr_know_free(s->logk[i]);
    free(s->logk[i]);
  }
  s->nlog = 0;
}

/* The state of warp w for its current group and launch, or NULL when the group is past the records' range or out
 * of memory (nothing checked for it). */
static inline kbd_cpu_gr_warp *kbd_cpu_gr_state(kbd_cpu_warp *w) {
  const kbd_cpu_group *G = w->cta->G;
  const unsigned E = w->cta->L->grace_epoch;
  kbd_cpu_gr_warp *s = (kbd_cpu_gr_warp *)w->grace;
  if (KBD_LIKELY(s && s->epoch == E && s->first == G->first)) return s->g1 ? s : NULL;
  const uint32_t g1 = kbd_cpu_gr_group1(G);
  if (!s) {
    s = (kbd_cpu_gr_warp *)calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_lock(&kbd_cpu_gr_g.mu);
    s->all = kbd_cpu_gr_g.all;
    kbd_cpu_gr_g.all = s;
    pthread_mutex_unlock(&kbd_cpu_gr_g.mu);
    w->grace = s;
  }
  kbd_cpu_gr_log_clear(s);
  s->epoch = E;
  s->g1 = g1;
  s->first = G->first;
  s->base1 = G->ctas[0]->sh.base - 1;
  return g1 ? s : NULL;
}

/* Warp u's state if it belongs to the same group and launch as s (else it knows nothing of other groups yet). */
static inline const kbd_cpu_gr_warp *kbd_cpu_gr_peer(const kbd_cpu_warp *u, const kbd_cpu_gr_warp *s) {
  const kbd_cpu_gr_warp *p = (const kbd_cpu_gr_warp *)u->grace;
  return p && p->epoch == s->epoch && p->g1 == s->g1 ? p : NULL;
}

/* The latest snapshot of peer p that warp w is ordered after (w's clock of p's warp >= its stamp), or NULL. */
static inline const kbd_cpu_gr_know *kbd_cpu_gr_seen(const kbd_cpu_gr_warp *p, uint32_t wclk) {
  for (int i = p->nlog; i-- > 0;)
    if (p->logc[i] <= wclk) return p->logk[i];
  return NULL;
}

/* Is record r (another group's) ordered before warp w: did some warp of w's group that w is ordered after (w
 * itself included) know it? */
static inline int kbd_cpu_gr_other_ordered(const kbd_cpu_warp *w, const kbd_cpu_gr_warp *s, uint64_t r) {
  const uint32_t g1 = kbd_cpu_gr_g1(r), u = kbd_cpu_gr_gid(r), c = kbd_cpu_gr_clk(r);
  const kbd_cpu_group *G = w->cta->G;
  for (int k = 0; k < G->nctas; ++k) {
    const kbd_cpu_cta *cta = G->ctas[k];
    for (int i = 0; i < cta->nwarps; ++i) {
      const kbd_cpu_warp *x = &cta->warps[i];
      const kbd_cpu_gr_warp *p = x == w ? s : kbd_cpu_gr_peer(x, s);
      if (!p || !p->nlog) continue;
      const kbd_cpu_gr_know *kn = kbd_cpu_gr_seen(p, w->clk[x->gid]);
      if (kn && kbd_cpu_gr_know_covers(kn, g1, u, c)) return 1;
    }
  }
  return 0;
}

/* Is record r (0: none) ordered before warp w? A read record may also be known complete through a read release
 * (kbd_cpu_rk), which orders a later write after it. */
static inline int kbd_cpu_gr_ordered(const kbd_cpu_warp *w, const kbd_cpu_gr_warp *s, uint64_t r, int is_read) {
  if (!r) return 1;
  if (kbd_cpu_gr_g1(r) == s->g1) {
    const uint32_t u = kbd_cpu_gr_gid(r), c = kbd_cpu_gr_clk(r) + s->base1;
    return u == (uint32_t)w->gid || w->clk[u] >= c || (is_read && kbd_cpu_rk_covers(w, u, c));
  }
  return kbd_cpu_gr_other_ordered(w, s, r);
}

/* ---- reports ----------------------------------------------------------------------------------------------- */

/* "block (1,0,0) warp 2" (", cluster CTA r" in a cluster) of record r in launch L. */
static inline void kbd_cpu_gr_who(const kbd_cpu_launch *L, uint64_t r, kbd_text *out) {
  const unsigned long long k = kbd_cpu_gr_g1(r) - 1ull, ncx = L->cfg.grid.x / L->ccx, ncy = L->cfg.grid.y / L->ccy;
  const unsigned gid = kbd_cpu_gr_gid(r), rank = gid / KBD_CPU_MAX_WARPS;
  const unsigned long long cx = k % ncx, cy = (k / ncx) % ncy, cz = k / (ncx * ncy);
  const unsigned rx = rank % L->ccx, ry = (rank / L->ccx) % L->ccy, rz = rank / (L->ccx * L->ccy);
  kbd_text_append(out, "block (%llu,%llu,%llu) warp %u", cx * L->ccx + rx, cy * L->ccy + ry, cz * L->ccz + rz,
                  gid % KBD_CPU_MAX_WARPS);
}

typedef struct kbd_cpu_gr_alloc {
  uintptr_t base;
  size_t bytes;
  const char *file; /* where it was allocated */
  int line;
  int host;
} kbd_cpu_gr_alloc;

KBD_NORETURN static inline void kbd_cpu_gr_race(kbd_cpu_warp *w, const kbd_cpu_gr_warp *s, const char *kind,
                                                const kbd_cpu_gr_alloc *a, size_t off, int me_write, uint64_t me,
                                                uint64_t other, int other_write, uint16_t other_site, const char *what,
                                                const char *file, int line) {
  kbd_cpu_launch *L = w->cta->L;
  kbd_text t = KBD_TEXT_INIT;
  const kbd_cpu_site o = kbd_cpu_site_of(other_site);
  kbd_text_append(&t, "data race (%s) on global memory: byte %zu of the %zu-byte %s (base %p) %s at %s:%d:\n", kind,
                  off, a->bytes, a->host ? "registered host range" : "allocation", (void *)a->base,
                  a->host ? "registered" : "allocated", a->file, a->line);
  kbd_text_append(&t, "  this access: ");
  kbd_cpu_gr_who(L, me, &t);
  kbd_text_append(&t, " %s it here (%s)\n  earlier:     ", me_write ? "writes" : "reads", what);
  kbd_cpu_gr_who(L, other, &t);
  kbd_text_append(&t, " %s it at %s:%d\n  nothing orders the two (", other_write ? "wrote" : "read", o.file, o.line);
  if (kbd_cpu_gr_g1(other) != s->g1)
    kbd_text_append(&t, "different blocks, and no release/acquire chain between them: the earlier block must "
                        "publish with kbd_st_release_* or kbd_atomic_add_acq_rel_u32 on a flag that the later "
                        "block reads with kbd_ld_acquire_* (or the acq_rel add) before this access; a relaxed "
                        "atomic or a plain store orders nothing");
  else if (kbd_cpu_gr_gid(other) / KBD_CPU_MAX_WARPS != (uint32_t)w->gid / KBD_CPU_MAX_WARPS)
    kbd_text_append(&t, "two CTAs of one cluster: kbd_cluster_sync, or an mbarrier the earlier CTA signals");
  else
    kbd_text_append(&t, "two warps of one block, and no barrier that both take part in between them");
  kbd_text_append(&t, "): the GPU may run them in either order");
  kbd_cpu_fault(KBD_ERR_RACE, file, line, "%s", kbd_cpu_keep(L, &t));
}

/* ---- the shadow --------------------------------------------------------------------------------------------- */

/* Chunk i of an allocation's shadow table *tab (allocated on first use), its records those of epoch E. NULL when
 * out of memory (that chunk is not checked). */
static inline kbd_cpu_gr_chunk *kbd_cpu_gr_chunk_get(kbd_cpu_gr_chunk ***tab, size_t bytes, size_t i, unsigned E) {
  kbd_cpu_gr_chunk **t = __atomic_load_n(tab, __ATOMIC_ACQUIRE);
  if (KBD_UNLIKELY(!t)) {
    kbd_cpu_gr_chunk **nt = (kbd_cpu_gr_chunk **)calloc((bytes >> KBD_CPU_GR_CHUNK_LOG) + 1, sizeof *nt);
    if (!nt) return NULL;
    kbd_cpu_gr_chunk **exp = NULL;
    if (__atomic_compare_exchange_n(tab, &exp, nt, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      t = nt;
    } else {
      free(nt);
      t = exp;
    }
  }
  kbd_cpu_gr_chunk *c = __atomic_load_n(&t[i], __ATOMIC_ACQUIRE);
  if (KBD_UNLIKELY(!c)) {
    kbd_cpu_gr_chunk *nc = (kbd_cpu_gr_chunk *)calloc(1, sizeof *nc); /* fresh zero pages: touched on use */
    if (!nc) return NULL;
    nc->epoch = E;
    kbd_cpu_gr_chunk *exp = NULL;
    if (__atomic_compare_exchange_n(&t[i], &exp, nc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      c = nc;
    } else {
      free(nc);
      c = exp;
    }
  }
  for (;;) { /* records of an earlier launch are ordered before this one: cleared once per KBD_CPU_GR_TAGS launches */
    unsigned e = __atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE);
    if (KBD_LIKELY(e != ~0u && E - e < KBD_CPU_GR_TAGS)) return c;
    if (e != ~0u && __atomic_compare_exchange_n(&c->epoch, &e, ~0u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      for (int k = 0; k < 2; ++k)
        if (c->h[k]) {
          memset(c->h[k]->rec, 0, sizeof c->h[k]->rec);
          for (size_t u = 0; u < KBD_CPU_GR_CHUNK >> KBD_CPU_GR_UNIT_LOG; ++u)
            c->h[k]->urec[u] = KBD_CPU_GR_UNONE;
        }
      __atomic_store_n(&c->epoch, E, __ATOMIC_RELEASE);
      return c;
    }
    sched_yield();
  }
}

/* Half k of chunk c, allocated when `make` (NULL: none yet, or out of memory). */
static inline kbd_cpu_gr_half *kbd_cpu_gr_half_get(kbd_cpu_gr_chunk *c, int k, int make) {
  kbd_cpu_gr_half *h = __atomic_load_n(&c->h[k], __ATOMIC_ACQUIRE);
  if (KBD_LIKELY(h) || !make) return h;
  /* Zeroed by stores, not calloc: calloc's fresh pages would be mapped to the shared zero page by the access's first
   * load of a record and copied at its first store, a second fault per page whose TLB flush interrupts every core
   * running the process (5 % of a GPT-2 decode step, which reads each weight chunk once per launch). */
  kbd_cpu_gr_half *nh = (kbd_cpu_gr_half *)malloc(sizeof *nh);
  if (!nh) return NULL;
  memset(nh, 0, sizeof *nh);
  for (size_t u = 0; u < KBD_CPU_GR_CHUNK >> KBD_CPU_GR_UNIT_LOG; ++u)
    nh->urec[u] = KBD_CPU_GR_UNONE;
  if (__atomic_compare_exchange_n(&c->h[k], &h, nh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return nh;
  free(nh);
  return h;
}

/* Unit u's summary in read half h (0: the per-byte entries are the records), once no expansion is under way. */
static inline uint64_t kbd_cpu_gr_usum(kbd_cpu_gr_half *h, size_t u) {
  uint64_t S;
  while ((S = __atomic_load_n(&h->urec[u], __ATOMIC_ACQUIRE)) == KBD_CPU_GR_UBUSY)
    sched_yield(); /* another host thread is writing the unit's 64 per-byte entries */
  return S;
}
/* The record a summary S stands for in the launch with tag `tag` (0: none). */
static inline uint64_t kbd_cpu_gr_urd(uint64_t S, unsigned tag) {
  return S == KBD_CPU_GR_UNONE ? 0 : kbd_cpu_gr_live(S, tag);
}
/* Unit u's records from its summary into its per-byte entries (nothing when they already are the records). The unit
 * is marked busy while they are written, so no summary changes meanwhile and nobody reads half-written entries. */
static inline void kbd_cpu_gr_uexpand(kbd_cpu_gr_half *h, size_t u) {
  for (;;) {
    uint64_t S = kbd_cpu_gr_usum(h, u);
    if (!S) return;
    if (!__atomic_compare_exchange_n(&h->urec[u], &S, KBD_CPU_GR_UBUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      continue;
    const uint64_t v = S == KBD_CPU_GR_UNONE ? 0 : S;
    const uint16_t site = __atomic_load_n(&h->usite[u], __ATOMIC_RELAXED);
    for (size_t j = u << KBD_CPU_GR_UNIT_LOG, e = j + KBD_CPU_GR_UNIT; j < e; ++j) {
      __atomic_store_n(&h->rec[j], v, __ATOMIC_RELAXED);
      __atomic_store_n(&h->site[j], site, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&h->urec[u], (uint64_t)0, __ATOMIC_RELEASE);
    return;
  }
}

/* An allocation's shadow goes with it (kbd_free, kbd_host_unregister). */
static inline void kbd_cpu_gr_free(kbd_cpu_gr_chunk **tab, size_t bytes) {
  if (!tab) return;
  for (size_t i = 0; i <= bytes >> KBD_CPU_GR_CHUNK_LOG; ++i)
    if (tab[i]) {
      free(tab[i]->h[0]);
      free(tab[i]->h[1]);
      free(tab[i]);
    }
  free(tab);
}

/* Read pass of an access that covers unit u of read half h whole, from the unit's summary: what the per-byte step
 * does to each byte, done once - the bytes share one record, so they all keep it (this warp's own, or a concurrent
 * reader's) or all get this read's. 0 when the per-byte entries are the records (the caller takes the per-byte path).
 */
static inline int kbd_cpu_gr_uread(kbd_cpu_gr_half *h, size_t u, const kbd_cpu_warp *w, const kbd_cpu_gr_warp *s,
                                   unsigned tag, uint64_t me, uint16_t site, uint64_t *okr, uint64_t *concurrent) {
  uint64_t S = kbd_cpu_gr_usum(h, u);
  for (;;) {
    if (S == KBD_CPU_GR_UBUSY) S = kbd_cpu_gr_usum(h, u);
    if (!S) return 0;
    const uint64_t R = kbd_cpu_gr_urd(S, tag);
    if (R == me || R == *concurrent) return 1;
    if (R && R != *okr) {
      if (!kbd_cpu_gr_ordered(w, s, R, 1)) {
        *concurrent = R;
        return 1;
      }
      *okr = R;
    }
    /* a read-modify-write, so a summary another host thread changed meanwhile is tested again, never overwritten */
    if (__atomic_compare_exchange_n(&h->urec[u], &S, me, 0, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)) {
      __atomic_store_n(&h->usite[u], site, __ATOMIC_RELAXED);
      return 1;
    }
  }
}
/* A write's check of the readers of unit u (covered whole) from its summary: one test for the record every byte
 * holds, then "no reader" for all. A reader not ordered before the write: the summary is expanded and 0 returned, so
 * the per-byte path reports it at its byte as before (0 too when the entries are the records). */
static inline int kbd_cpu_gr_uclear(kbd_cpu_gr_half *h, size_t u, const kbd_cpu_warp *w, const kbd_cpu_gr_warp *s,
                                    unsigned tag, uint64_t *okr) {
  uint64_t S = kbd_cpu_gr_usum(h, u);
  for (;;) {
    if (S == KBD_CPU_GR_UBUSY) S = kbd_cpu_gr_usum(h, u);
    if (!S) return 0;
    const uint64_t R = kbd_cpu_gr_urd(S, tag);
    if (!R) return 1;
    if (R != *okr) {
      if (!kbd_cpu_gr_ordered(w, s, R, 1)) {
        kbd_cpu_gr_uexpand(h, u);
        return 0;
      }
      *okr = R;
    }
    if (__atomic_compare_exchange_n(&h->urec[u], &S, KBD_CPU_GR_UNONE, 0, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)) return 1;
  }
}

/* A plain (non-atomic) kbd access by the running warp of bytes [off, off + n) of allocation a, whose shadow table
 * is *tab. Two passes with a full fence between: publish this access's records, then check the others'. */
static inline void kbd_cpu_gr_access(kbd_cpu_gr_chunk ***tab, const kbd_cpu_gr_alloc *a, size_t off, size_t n,
                                     int write, const char *file, int line, const char *what) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w || !kbd_cpu_gr_on(w->cta->L)) return;
  const kbd_cpu_gr_warp *s = kbd_cpu_gr_state(w);
  if (!s) return;
  const uint32_t rel = w->clk[w->gid] - s->base1;
  if (KBD_UNLIKELY(rel > KBD_CPU_GR_MAXCLK)) return;
  const unsigned E = w->cta->L->grace_epoch;
  const unsigned tag = E % KBD_CPU_GR_TAGS;
  const uint64_t me = kbd_cpu_gr_rec(tag, s->g1, (uint32_t)w->gid, rel);
  const uint16_t site = kbd_cpu_site_id(w, file, line);
  /* Most bytes of an access share their records: the last record found ordered (for a read check, a write check)
   * and the last reader found concurrent are not looked up again. */
  uint64_t okw = me, okr = me, concurrent = me;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = off, end = off + n; i < end;) {
      kbd_cpu_gr_chunk *c = kbd_cpu_gr_chunk_get(tab, a->bytes, i >> KBD_CPU_GR_CHUNK_LOG, E);
      const size_t j0 = i & (KBD_CPU_GR_CHUNK - 1);
      const size_t take = KBD_CPU_GR_CHUNK - j0 < end - i ? KBD_CPU_GR_CHUNK - j0 : end - i;
      /* pass 0 publishes into the half of its own kind (allocating it); pass 1 reads the other kind's, reloading
       * the pointer after the fence so that a half another thread just made is seen */
      kbd_cpu_gr_half *hw = c ? kbd_cpu_gr_half_get(c, 0, write && pass == 0) : NULL;
      kbd_cpu_gr_half *hr = c ? kbd_cpu_gr_half_get(c, 1, !write && pass == 0) : NULL;
      /* The passes that use read records (a read's first, a write's second) take a unit the access covers whole
       * from its summary when it has one, and expand the summary of a unit covered in part. Bytes below rdone: read
       * records done by their unit's summary; units from unext on: not looked at yet. */
      const int units = hr && (write ? pass == 1 : pass == 0);
      size_t unext = j0, rdone = j0;
      for (size_t j = j0; j < j0 + take; ++j) {
        const size_t at = i + (j - j0);
        if (units && j >= unext) {
          const size_t u = j >> KBD_CPU_GR_UNIT_LOG, ub = u << KBD_CPU_GR_UNIT_LOG;
          unext = ub + KBD_CPU_GR_UNIT;
          if (j != ub || unext > j0 + take)
            kbd_cpu_gr_uexpand(hr, u);
          else if (write ? kbd_cpu_gr_uclear(hr, u, w, s, tag, &okr)
                         : kbd_cpu_gr_uread(hr, u, w, s, tag, me, site, &okr, &concurrent))
            rdone = unext;
        }
        if (write && pass == 0) {
          if (!hw) break;
          const uint64_t W = kbd_cpu_gr_live(__atomic_load_n(&hw->rec[j], __ATOMIC_RELAXED), tag);
          if (W == me) continue;
          if (W != okw) {
            if (!kbd_cpu_gr_ordered(w, s, W, 0))
              kbd_cpu_gr_race(w, s, "write after write", a, at, 1, me, W, 1,
                              __atomic_load_n(&hw->site[j], __ATOMIC_RELAXED), what, file, line);
            okw = W;
          }
          __atomic_store_n(&hw->rec[j], me, __ATOMIC_RELAXED);
          __atomic_store_n(&hw->site[j], site, __ATOMIC_RELAXED);
        } else if (write) {
          /* Another write landed between the passes: it cannot be ordered after this one (that takes a release
           * after this access returns), so the two are concurrent. */
          const uint64_t W = hw ? kbd_cpu_gr_live(__atomic_load_n(&hw->rec[j], __ATOMIC_RELAXED), tag) : me;
          if (KBD_UNLIKELY(W != me))
            kbd_cpu_gr_race(w, s, "write after write", a, at, 1, me, W, 1,
                            __atomic_load_n(&hw->site[j], __ATOMIC_RELAXED), what, file, line);
          if (j < rdone) continue;
          const uint64_t R = hr ? kbd_cpu_gr_live(__atomic_load_n(&hr->rec[j], __ATOMIC_RELAXED), tag) : 0;
          if (!R) continue;
          if (R != okr) {
            if (!kbd_cpu_gr_ordered(w, s, R, 1))
              kbd_cpu_gr_race(w, s, "write after read", a, at, 1, me, R, 0,
                              __atomic_load_n(&hr->site[j], __ATOMIC_RELAXED), what, file, line);
            okr = R;
          }
          __atomic_store_n(&hr->rec[j], (uint64_t)0, __ATOMIC_RELAXED);
        } else if (pass == 0) {
          if (!hr) break;
          if (j < rdone) {
            j = rdone - 1;
            continue;
          }
          /* Keep the reader a later write must be ordered after: a read ordered after the recorded one replaces
           * it; of concurrent readers the first stays. */
          const uint64_t R = kbd_cpu_gr_live(__atomic_load_n(&hr->rec[j], __ATOMIC_RELAXED), tag);
          if (R == me || R == concurrent) continue;
          if (R && R != okr) {
            if (!kbd_cpu_gr_ordered(w, s, R, 1)) {
              concurrent = R;
              continue;
            }
            okr = R;
          }
          __atomic_store_n(&hr->rec[j], me, __ATOMIC_RELAXED);
          __atomic_store_n(&hr->site[j], site, __ATOMIC_RELAXED);
        } else {
          if (!hw) break; /* nothing wrote this chunk in this launch */
          const uint64_t W = kbd_cpu_gr_live(__atomic_load_n(&hw->rec[j], __ATOMIC_RELAXED), tag);
          if (W && W != okw) {
            if (!kbd_cpu_gr_ordered(w, s, W, 0))
              kbd_cpu_gr_race(w, s, "read after write", a, at, 0, me, W, 1,
                              __atomic_load_n(&hw->site[j], __ATOMIC_RELAXED), what, file, line);
            okw = W;
          }
        }
      }
      i += take;
    }
    if (pass == 0) __atomic_thread_fence(__ATOMIC_SEQ_CST); /* own records visible before others' are read */
  }
}

/* ---- flags: release and acquire -------------------------------------------------------------------------- */

/* The running warp's state when flag operations are tracked, with the lock held that makes a flag's memory
 * operation and its sync object change together (an acquire that reads a value sees the knowledge of the store
 * that wrote it, whichever host thread ran that store); NULL (and no lock) when not tracked. */
static inline kbd_cpu_gr_warp *kbd_cpu_gr_sync_begin(void) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w || !kbd_cpu_gr_on(w->cta->L)) return NULL;
  kbd_cpu_gr_warp *s = kbd_cpu_gr_state(w);
  if (s) pthread_mutex_lock(&kbd_cpu_gr_g.mu);
  return s;
}
static inline void kbd_cpu_gr_sync_end(kbd_cpu_gr_warp *s) {
  if (s) pthread_mutex_unlock(&kbd_cpu_gr_g.mu);
}

/* The sync object of flag p in this launch (created or reset as needed); NULL when out of memory. Objects of
 * launches more than 16 back are reused, so their number stays bounded by the flags of recent launches. */
static inline kbd_cpu_gr_sync *kbd_cpu_gr_sync_of(const void *p, unsigned E, int nclk, int create) {
  kbd_cpu_gr_global *g = &kbd_cpu_gr_g;
  const uintptr_t a = (uintptr_t)p;
  kbd_cpu_gr_sync **head = &g->b[(a >> 3) % KBD_CPU_GR_SYNC_BUCKETS], *stale = NULL;
  for (kbd_cpu_gr_sync *o = *head; o; o = o->next) {
    if (o->addr == a) {
      if (o->epoch != E) {
        if (!create) return NULL;
        o->epoch = E;
        kbd_cpu_gr_know_clear(&o->k, nclk);
      }
      return o;
    }
    if (!stale && E - o->epoch > 16u) stale = o;
  }
  if (!create) return NULL;
  if (!stale) {
    stale = (kbd_cpu_gr_sync *)calloc(1, sizeof *stale);
    if (!stale) return NULL;
    stale->next = *head;
    *head = stale;
  }
  stale->addr = a;
  stale->epoch = E;
  kbd_cpu_gr_know_clear(&stale->k, nclk);
  return stale;
}

/* What warp w knows of other groups: the join of every peer's snapshot that w is ordered after (its own latest
 * included); NULL when out of memory. */
static inline kbd_cpu_gr_know *kbd_cpu_gr_known(const kbd_cpu_warp *w, const kbd_cpu_gr_warp *s) {
  const kbd_cpu_group *G = w->cta->G;
  kbd_cpu_gr_know *k = kbd_cpu_gr_know_copy(NULL, kbd_cpu_gr_nclk(G));
  if (!k) return NULL;
  for (int c = 0; c < G->nctas; ++c)
    for (int i = 0; i < G->ctas[c]->nwarps; ++i) {
      const kbd_cpu_warp *x = &G->ctas[c]->warps[i];
      const kbd_cpu_gr_warp *p = x == w ? s : kbd_cpu_gr_peer(x, s);
      const kbd_cpu_gr_know *kn = p ? kbd_cpu_gr_seen(p, w->clk[x->gid]) : NULL;
      if (kn && kbd_cpu_gr_know_join(k, kn) < 0) {
        kbd_cpu_gr_know_free(k);
        free(k);
        return NULL;
      }
    }
  return k;
}

/* Acquire (lock held): the running warp joins what flag p's releases published. Its own group's part joins its
 * vector clock; other groups' parts become a new snapshot, stamped with the warp's clock after a tick (so a peer
 * ordered after this point knows it, and one ordered only before does not). */
static inline void kbd_cpu_gr_acquire(kbd_cpu_gr_warp *s, const void *p) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  const kbd_cpu_gr_sync *o = kbd_cpu_gr_sync_of(p, s->epoch, 0, 0);
  if (!o) return;
  const int nc = o->k.nclk;
  const int own = kbd_cpu_gr_know_find(&o->k, s->g1);
  if (own >= 0)
    for (int u = 0; u < nc; ++u) {
      const uint32_t v = o->k.v[(size_t)own * (size_t)nc + (size_t)u];
      if (v && v + s->base1 > w->clk[u]) w->clk[u] = v + s->base1;
    }
  if (o->k.n - (own >= 0) == 0 && !o->k.floor) return;
  /* Polls and look-back windows acquire the same knowledge again and again: nothing new, no snapshot. */
  if (s->nlog && kbd_cpu_gr_know_within(&o->k, s->logk[s->nlog - 1], s->g1)) return;
  kbd_cpu_gr_know *k = kbd_cpu_gr_know_copy(s->nlog ? s->logk[s->nlog - 1] : NULL, nc);
  if (!k) return;
  /* the own group's entry stays out of snapshots: the vector clock carries it */
  int grew = kbd_cpu_gr_know_floor(k, o->k.floor);
  for (int i = 0; i < o->k.n && grew >= 0; ++i)
    if (o->k.g1[i] != s->g1) {
      const int r = kbd_cpu_gr_know_put(k, o->k.g1[i], &o->k.v[(size_t)i * (size_t)nc]);
      grew = r < 0 ? -1 : grew | r;
    }
  if (grew <= 0 || (s->nlog == s->caplog && s->caplog >= 1 << 20)) {
    kbd_cpu_gr_know_free(k);
    free(k);
    return;
  }
  if (s->nlog == s->caplog) {
    const int cap = s->caplog ? 2 * s->caplog : 8;
    uint32_t *lc = (uint32_t *)realloc(s->logc, (size_t)cap * sizeof *lc);
    kbd_cpu_gr_know **lk = lc ? (kbd_cpu_gr_know **)realloc(s->logk, (size_t)cap * sizeof *lk) : NULL;
    if (lc) s->logc = lc;
    if (!lk) {
      kbd_cpu_gr_know_free(k);
      free(k);
      return;
    }
    s->logk = lk;
    s->caplog = cap;
  }
  kbd_cpu_tick(w);
  s->logc[s->nlog] = w->clk[w->gid];
  s->logk[s->nlog++] = k;
}

/* Release (lock held) onto flag p: its sync object becomes (join == 0: a release store starts a new release
 * sequence) or is joined with (join == 1: a read-modify-write continues it) what the running warp knows - its
 * group's vector clock and everything its group's warps that it is ordered after had acquired. Then the warp's
 * clock ticks, so its later accesses are not covered. */
static inline void kbd_cpu_gr_release(kbd_cpu_gr_warp *s, void *p, int join) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  const int nc = kbd_cpu_gr_nclk(w->cta->G);
  kbd_cpu_gr_sync *o = kbd_cpu_gr_sync_of(p, s->epoch, nc, 1);
  if (o) {
    if (!join || o->k.nclk != nc) kbd_cpu_gr_know_clear(&o->k, nc);
    kbd_cpu_gr_know *k = kbd_cpu_gr_known(w, s);
    uint32_t v[KBD_CPU_MAX_GW];
    for (int u = 0; u < nc; ++u)
      v[u] = w->clk[u] - s->base1;
    int bad = !k || kbd_cpu_gr_know_join(&o->k, k) < 0 || kbd_cpu_gr_know_put(&o->k, s->g1, v) < 0;
    if (k) {
      kbd_cpu_gr_know_free(k);
      free(k);
    }
    if (bad) kbd_cpu_gr_know_floor(&o->k, KBD_CPU_GR_MAXGRP + 1); /* out of memory: over-approximate */
  }
  kbd_cpu_tick(w);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_GRACE_H */
