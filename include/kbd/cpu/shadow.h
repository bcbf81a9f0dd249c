/* kbd/cpu/shadow.h - shadow state of shared memory and the race checker.
 *
 * Memory state lives BESIDE the data, never in it: every shared-memory byte has a shadow entry saying
 * whether it was written in this CTA, by which warp, at which point of that warp's history (a clock),
 * by which proxy (generic stores or the async proxy of TMA/MMA), whether an asynchronous write to it is
 * still pending, which warps read it since, and where. So any value a kernel stores is just data (no
 * poison value can be mistaken for "never written"), and a read of a byte nothing wrote fails whatever
 * the bytes hold.
 *
 * Race checking is happens-before, not schedule luck. Each warp carries a vector clock over the warps of
 * its group (the CTAs of one cluster; one CTA without clusters): its own entry counts its release operations (barrier
 * arrivals, later mbarrier arrivals and commits); clk[u] is the latest clock of warp u whose earlier accesses are
 * ordered before this warp's current point. A barrier instance joins the clocks of the warps that arrive (release) and
 * hands the join to the warps that wait on it (acquire). Two accesses to one byte, at least one a write, by warps w and
 * u race when the earlier one's stamp is not covered by the later warp's clock: whatever order the scheduler happened
 * to pick, the GPU may pick the other one. The checks (FastTrack style, per byte): read by w:  last writer x != w with
 * stamp > clk_w[x]                 -> read-after-write race write by w: last writer x != w with stamp > clk_w[x] ->
 * write-after-write race a reader u != w since that write with stamp > clk_w[u]   -> write-after-read race Reads since
 * the last write are a warp bitmask plus, per warp, the clock and site of its last read of the byte, so read-shared
 * data costs nothing extra however many warps read it.
 *
 * Distributed shared memory: a warp of another CTA of the cluster reads and writes this CTA's shadow with
 * its group index, so the same checks order it; its reads are kept as "the last remote read" of a byte.
 *
 * Stamps are never reset between CTAs: a group starts its clocks past every stamp its shadows hold, so a
 * stamp below `base` is "from an earlier CTA" = never written here. Cost: no per-CTA clearing at all;
 * the shadow is one lazily-touched mapping per cached CTA. Within a warp's 32 lanes nothing is checked:
 * the lanes of one warp instruction are ordered by the instruction itself.
 */
#ifndef KBD_CPU_SHADOW_H
#define KBD_CPU_SHADOW_H

#include "report.h"

#if KBD_MODE_CPU

/* The per-access checks are inlined into the access (the common, clean case is a few compares); reports
 * are out of line. */
#define KBD_CPU_HOT __attribute__((always_inline))

/* winfo bits: the writer warp's group index (kbd_cpu_warp.gid) in bits 0-8, then */
#define KBD_CPU_SH_ASYNC 0x200u   /* written by the async proxy (TMA); generic reads need the completion */
#define KBD_CPU_SH_PENDING 0x400u /* an asynchronous write has not completed yet: reading it is a bug */
#define KBD_CPU_SH_WARP 0x1ffu

/* ---- call sites ---------------------------------------------------------------------------------------- */

/* Interned call sites: a race report names the EARLIER access's file:line, so the shadow keeps a 16-bit
 * site id per access instead of a pointer and a line. One table for the process (weak: one instance
 * across translation units); a warp's last site is cached, so a loop of accesses interns once. */
#define KBD_CPU_MAX_SITES 65535
typedef struct kbd_cpu_site {
  const char *file;
  int line;
} kbd_cpu_site;
typedef struct kbd_cpu_sites {
  pthread_mutex_t mu;
  int n;
  kbd_cpu_site v[KBD_CPU_MAX_SITES + 1];
} kbd_cpu_sites;
KBD_WEAK kbd_cpu_sites kbd_cpu_sites_g = {PTHREAD_MUTEX_INITIALIZER, 0, {{NULL, 0}}};

static inline uint16_t kbd_cpu_site_id(kbd_cpu_warp *w, const char *file, int line) {
  const unsigned slot = (unsigned)line & 15u;
  if (w->sites[slot].file == file && w->sites[slot].line == line) return w->sites[slot].id;
  kbd_cpu_sites *S = &kbd_cpu_sites_g;
  uint16_t id = 0; /* 0: "a site the table had no room for" */
  pthread_mutex_lock(&S->mu);
  for (int i = S->n; i >= 1; --i) /* newest first: a kernel's sites are usually the latest interned */
    if (S->v[i].line == line && S->v[i].file == file) {
      id = (uint16_t)i;
      break;
    }
  if (!id && S->n < KBD_CPU_MAX_SITES) {
    id = (uint16_t)++S->n;
    S->v[id].file = file;
    S->v[id].line = line;
  }
  pthread_mutex_unlock(&S->mu);
  w->sites[slot].file = file;
  w->sites[slot].line = line;
  w->sites[slot].id = id;
  return id;
}

static inline kbd_cpu_site kbd_cpu_site_of(uint16_t id) {
  kbd_cpu_site s = {"<unknown site>", 0};
  if (id) {
    pthread_mutex_lock(&kbd_cpu_sites_g.mu);
    s = kbd_cpu_sites_g.v[id];
    pthread_mutex_unlock(&kbd_cpu_sites_g.mu);
  }
  return s;
}

/* ---- the shadow mapping --------------------------------------------------------------------------------- */

/* wclk, rmask, rrclk: 4 B; wsite, winfo, rrwho, rrsite: 2 B; per warp rclk 4 B + rsite 2 B: 47 MB for 227 KiB.
 * calloc of that size is fresh zero pages from the kernel, so only the pages a kernel's accesses touch cost
 * memory. */
static inline int kbd_cpu_shadow_map(kbd_cpu_shadow *sh) {
  const size_t B = KBD_MAX_SMEM_BYTES;
  const size_t bytes = B * (4 + 4 + 4 + 2 + 2 + 2 + 2) + (size_t)KBD_CPU_MAX_WARPS * B * (4 + 2);
  void *m = calloc(1, bytes);
  if (!m) return 0;
  char *p = (char *)m;
  sh->map = m;
  sh->wclk = (uint32_t *)(void *)p, p += 4 * B;
  sh->rmask = (uint32_t *)(void *)p, p += 4 * B;
  sh->rrclk = (uint32_t *)(void *)p, p += 4 * B;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->rclk[u] = (uint32_t *)(void *)p, p += 4 * B;
  sh->wsite = (uint16_t *)(void *)p, p += 2 * B;
  sh->winfo = (uint16_t *)(void *)p, p += 2 * B;
  sh->rrwho = (uint16_t *)(void *)p, p += 2 * B;
  sh->rrsite = (uint16_t *)(void *)p, p += 2 * B;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->rsite[u] = (uint16_t *)(void *)p, p += 2 * B;
  return 1;
}

static inline int kbd_cpu_shadow_init(kbd_cpu_shadow *sh) {
  sh->base = 1;
  return kbd_cpu_shadow_map(sh);
}

static inline void kbd_cpu_shadow_free(kbd_cpu_shadow *sh) {
  free(sh->map);
  sh->map = NULL;
}

/* Entries of the group's vector clocks in use: every warp of every CTA but the unused tail of the last. */
static inline int kbd_cpu_nclk(const kbd_cpu_group *G) {
  return (G->nctas - 1) * KBD_CPU_MAX_WARPS + G->ctas[G->nctas - 1]->nwarps;
}

/* Start a group: every clock starts past all stamps in its CTAs' shadows (one clock space for the cluster,
 * since a warp's stamps land in peer CTAs' shadows too). Near the 32-bit end the shadows are replaced by
 * fresh zero pages and stamps restart - once per 2^31 releases. Returns 0 when out of memory. */
static inline int kbd_cpu_shadow_start(kbd_cpu_group *G) {
  if (G->top > 0x7fff0000u) {
    for (int s = 0; s < G->nctas; ++s) {
      kbd_cpu_shadow_free(&G->ctas[s]->sh);
      if (!kbd_cpu_shadow_map(&G->ctas[s]->sh)) return 0;
    }
    G->top = 0;
  }
  const uint32_t base = G->top + 2;
  const int n = kbd_cpu_nclk(G);
  G->top = base;
  for (int s = 0; s < G->nctas; ++s) {
    kbd_cpu_cta *cta = G->ctas[s];
    cta->sh.base = base;
    cta->sh.remote_reads = 0;
    for (int i = 0; i < cta->nwarps; ++i) {
      kbd_cpu_warp *w = &cta->warps[i];
      for (int u = 0; u < n; ++u)
        w->clk[u] = base - 1; /* nothing of warp u is known yet */
      w->clk[w->gid] = base;
      w->fence_clk = base - 1;
      w->mbinit_fence_clk = w->pub_fence_clk = base - 1;
      w->pub_phase = w->cl_done_phase = 0;
      memset(w->tcseen, 0, sizeof w->tcseen);
      w->rk.any = 0; /* its vector is stale until a read release reaches the warp (kbd_cpu_rk_join) */
    }
  }
  return 1;
}

/* A release by w (barrier arrival, ...): later accesses of w get a new stamp. */
static inline void kbd_cpu_tick(kbd_cpu_warp *w) {
  kbd_cpu_group *G = w->cta->G;
  const uint32_t c = ++w->clk[w->gid];
  if (c > G->top) G->top = c;
}

/* dst := max(dst, w's clock): a release of what w did so far into a barrier or phase. */
static inline void kbd_cpu_release_into(uint32_t *dst, const kbd_cpu_warp *w) {
  const int n = kbd_cpu_nclk(w->cta->G);
  for (int u = 0; u < n; ++u)
    if (w->clk[u] > dst[u]) dst[u] = w->clk[u];
}

/* w acquires what `src` released: clk_w := max(clk_w, src). */
static inline void kbd_cpu_acquire(kbd_cpu_warp *w, const uint32_t *src) {
  const int n = kbd_cpu_nclk(w->cta->G);
  for (int u = 0; u < n; ++u)
    if (src[u] > w->clk[u]) w->clk[u] = src[u];
}

/* ---- read-completion knowledge (kbd_cpu_rk; docs/design/read-release.md) ------------------------------------------
 * A read release (an mbarrier arrival to another CTA without .release.cluster) publishes no writes, only that the
 * arriving warp's reads - and every read it knew complete - have completed. The knowledge travels beside the
 * vector clocks through every release/acquire edge (mbarrier phases, named barriers, the cluster barrier) and is
 * consulted by the write-after-read checks only, where clk did not already order the read. Kernels that never make
 * a read release pay one flag test per release and acquire. */

/* dst := max(dst, src) (src->any == 0: nothing to add). A first join copies, so a stale vector is never read. */
static inline void kbd_cpu_rk_join(kbd_cpu_rk *dst, const kbd_cpu_rk *src, int n) {
  if (KBD_LIKELY(!src->any)) return;
  if (!dst->any) {
    memcpy(dst->v, src->v, (size_t)n * sizeof dst->v[0]);
    dst->any = 1;
  } else {
    for (int u = 0; u < n; ++u)
      if (src->v[u] > dst->v[u]) dst->v[u] = src->v[u];
  }
  dst->file = src->file;
  dst->line = src->line;
}
/* A release by w (barrier arrival, releasing mbarrier arrival) passes on what it knows of completed reads. */
static inline void kbd_cpu_rk_release(kbd_cpu_rk *dst, const kbd_cpu_warp *w) {
  kbd_cpu_rk_join(dst, &w->rk, kbd_cpu_nclk(w->cta->G));
}
/* w acquires what a barrier instance or completed phase knew of completed reads. */
static inline void kbd_cpu_rk_acquire(kbd_cpu_warp *w, const kbd_cpu_rk *src) {
  kbd_cpu_rk_join(&w->rk, src, kbd_cpu_nclk(w->cta->G));
}
/* A read release by w at file:line: everything ordered before w (its vector clock, and what it knew of completed
 * reads) counts as read and complete - but as nothing written. */
static inline void kbd_cpu_rk_release_reads(kbd_cpu_rk *dst, const kbd_cpu_warp *w, const char *file, int line) {
  const int n = kbd_cpu_nclk(w->cta->G);
  kbd_cpu_rk_join(dst, &w->rk, n);
  if (!dst->any) {
    memcpy(dst->v, w->clk, (size_t)n * sizeof dst->v[0]);
    dst->any = 1;
  } else {
    for (int u = 0; u < n; ++u)
      if (w->clk[u] > dst->v[u]) dst->v[u] = w->clk[u];
  }
  dst->file = file;
  dst->line = line;
}
/* Is a read of warp u (group index) at clock c, which w's vector clock does not order, known complete to w? */
static inline int kbd_cpu_rk_covers(const kbd_cpu_warp *w, uint32_t u, uint32_t c) {
  return w->rk.any && w->rk.v[u] >= c;
}

/* dst := max(dst, src) over a CTA's warps: tcgen05 completion knowledge (kbd_cpu_warp.tcseen) passed on by a
 * barrier, as a vector clock is. Commit numbers only grow, so the later commit of a warp covers the earlier. */
static inline void kbd_cpu_tcseen_join(uint32_t *dst, const uint32_t *src) {
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    if (src[u] > dst[u]) dst[u] = src[u];
}

/* "warp 3" in a one-CTA group, "warp 3 of cluster CTA 1" in a cluster: numbers only, so a buffer of the longest
 * such text holds every one. */
#define KBD_CPU_WHO_CAP sizeof "warp -2147483648 of cluster CTA -2147483648"
static inline const char *kbd_cpu_who(const kbd_cpu_group *G, int gid, char *buf, size_t cap) {
  if (G->nctas == 1)
    snprintf(buf, cap, "warp %d", gid % KBD_CPU_MAX_WARPS);
  else
    snprintf(buf, cap, "warp %d of cluster CTA %d", gid % KBD_CPU_MAX_WARPS, gid / KBD_CPU_MAX_WARPS);
  return buf;
}

/* ---- describing a byte ----------------------------------------------------------------------------------- */

/* "dynamic shared memory, byte 96" or "KBD_SHARED array declared at f.c:12, byte 8"; in a cluster, bytes of
 * another CTA than the running warp's say whose. */
static inline void kbd_cpu_smem_where(const kbd_cpu_cta *cta, size_t off, kbd_text *out) {
  if (cta->G && cta->G->nctas > 1 && (!kbd_cpu_cur || kbd_cpu_cur->cta != cta))
    kbd_text_append(out, "cluster CTA %d's ", cta->rank);
  if (off < cta->dyn_bytes) {
    kbd_text_append(out, "dynamic shared memory, byte %zu", off);
    return;
  }
  for (int i = 0; i < cta->nstatics; ++i) {
    const kbd_cpu_static *s = &cta->statics[i];
    if (off >= s->off && off < s->off + s->bytes) {
      kbd_text_append(out, "shared array declared at %s:%d, byte %zu", s->file, s->line, off - s->off);
      return;
    }
  }
  kbd_text_append(out, "shared-memory byte %zu", off);
}

/* The same, as a string the launch keeps (for a kbd_cpu_fault argument). */
static inline const char *kbd_cpu_smem_at(const kbd_cpu_cta *cta, size_t off) {
  kbd_text t = KBD_TEXT_INIT;
  kbd_cpu_smem_where(cta, off, &t);
  return kbd_cpu_keep(cta->L, &t);
}

/* An element description from the caller: "tile element (r, c)" or "" when the access is not a tile's. */
typedef struct kbd_cpu_elem {
  long long row, col; /* of the access's first byte; row < 0: none. A run continues along the row. */
  int esize;
} kbd_cpu_elem;
static inline kbd_cpu_elem kbd_cpu_no_elem(void) {
  kbd_cpu_elem e = {-1, -1, 1};
  return e;
}
/* ", tile element (r, c)" of byte b of an access that starts at byte off (numbers only, as above). */
#define KBD_CPU_ELEM_CAP sizeof ", tile element (-9223372036854775808, -9223372036854775808)"
static inline void kbd_cpu_elem_text(kbd_cpu_elem el, size_t off, size_t b, char *buf, size_t cap) {
  buf[0] = '\0';
  if (el.row >= 0)
    snprintf(buf, cap, ", tile element (%lld, %lld)", el.row,
             el.col + (long long)((b - off) / (size_t)(el.esize > 0 ? el.esize : 1)));
}

/* `other` is the earlier access's warp (group index). */
KBD_NORETURN static inline void kbd_cpu_race(const kbd_cpu_cta *cta, kbd_cpu_warp *w, const char *kind,
                                             const char *what, int w_is_write, size_t off, int other, int other_write,
                                             uint16_t other_site, kbd_cpu_elem el, size_t el_off, const char *file,
                                             int line) {
  char elem[KBD_CPU_ELEM_CAP] = "", me[KBD_CPU_WHO_CAP], them[KBD_CPU_WHO_CAP];
  const char *where = kbd_cpu_smem_at(cta, off);
  kbd_cpu_elem_text(el, el_off, off, elem, sizeof elem);
  const kbd_cpu_site o = kbd_cpu_site_of(other_site);
  /* An asynchronous copy's bytes carry its issuer and issue site: the reader lacks the mbarrier wait. */
  const int async = other_write && (cta->sh.winfo[off] & KBD_CPU_SH_ASYNC);
  /* The earlier write is covered only by a read release (kbd_cpu_rk): say which arrive that was and why it does not
   * order a write. */
  kbd_text rr = KBD_TEXT_INIT;
  if (other_write && kbd_cpu_rk_covers(w, (uint32_t)other, cta->sh.wclk[off]))
    kbd_text_append(&rr,
                    "\n  the only thing between them is the read release at %s:%d (mbarrier.arrive to another CTA "
                    "without .release.cluster, e.g. kbd_mma_release_mc's stage release): it hands back a buffer "
                    "whose readers waited for their reads, and orders no write. A warp that wrote into the buffer "
                    "must publish it with a releasing arrive (kbd_mbarrier_arrive_cluster)",
                    w->rk.file ? w->rk.file : "?", w->rk.line);
  const char *rrnote = rr.len ? kbd_cpu_keep(cta->L, &rr) : "";
  kbd_cpu_fault(KBD_ERR_RACE, file, line,
                "data race (%s) on %s%s:\n  this access: %s %s it here (%s)\n  earlier:     %s%s %s it at "
                "%s:%d\n  nothing orders the two (%s): the GPU may run them in either order%s",
                kind, where, elem, kbd_cpu_who(w->cta->G, w->gid, me, sizeof me), w_is_write ? "writes" : "reads", what,
                async ? "an asynchronous copy (TMA) issued by " : "", kbd_cpu_who(w->cta->G, other, them, sizeof them),
                other_write ? "wrote" : "read", o.file, o.line,
                async               ? "the reader did not wait on the copy's mbarrier phase"
                : cta->G->nctas > 1 ? "no barrier, or one the two warps do not both take part in; between CTAs "
                                      "of a cluster: kbd_cluster_sync, or an mbarrier the writer signals"
                                    : "no barrier, or one the two warps do not both take part in",
                rrnote);
}

/* ---- the checks ------------------------------------------------------------------------------------------- */

/* The slow half of a read check: find the first bad byte of [off, off + n) and report it. */
KBD_NORETURN static inline void kbd_cpu_shadow_read_fault(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                          const char *what, kbd_cpu_elem el, const char *file,
                                                          int line) {
  const kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t me = (uint32_t)w->gid;
  char elem[KBD_CPU_ELEM_CAP];
  for (size_t b = off; b < off + n; ++b) {
    const uint32_t c = sh->wclk[b], info = sh->winfo[b], x = info & KBD_CPU_SH_WARP;
    kbd_cpu_elem_text(el, off, b, elem, sizeof elem);
    const char *where = c < sh->base || (info & KBD_CPU_SH_PENDING) ? kbd_cpu_smem_at(cta, b) : "";
    if (c < sh->base)
      kbd_cpu_fault(KBD_ERR_POISON, file, line,
                    "%s reads never-written shared memory (%s%s); likely cause: the write that should fill these "
                    "bytes is missing or addresses other bytes, or it belongs to another warp and no barrier "
                    "(kbd_sync, or the mbarrier its copy completes) orders it before this read",
                    what, where, elem);
    if (info & KBD_CPU_SH_PENDING)
      kbd_cpu_fault(KBD_ERR_POISON, file, line,
                    "%s reads %s%s, which an asynchronous copy is still writing: wait for its completion first", what,
                    where, elem);
    if (cta->L->race_check && x != me && c > w->clk[x])
      kbd_cpu_race(cta, w, "read after write", what, 0, b, (int)x, 1, sh->wsite[b], el, off, file, line);
  }
  kbd_cpu_fault(KBD_ERR_KERNEL, file, line, "internal: shadow read check without a culprit");
}

/* Do the n entries from p all equal v? Accesses are nearly always to bytes one store wrote (same clock,
 * writer and flags), so the checks below run once per access, not once per byte. */
/* p[0..n) is uniform iff p[0..n-1) equals p[1..n): one overlapping memcmp, which libc does 16-32 bytes
 * at a time, instead of a compare per entry. */
static inline int kbd_cpu_uniform(const void *p, size_t n, size_t esize) {
  return n <= 1 || memcmp(p, (const char *)p + esize, (n - 1) * esize) == 0;
}

/* A read by warp w of bytes [off, off + n) of cta's shared memory (w's own CTA, or a peer of its cluster)
 * through a kbd primitive. The report is built only on failure. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_read_at(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                      const char *what, kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid;
  const uint32_t *wclk = sh->wclk + off;
  const uint16_t *winfo = sh->winfo + off;
  const int race = cta->L->race_check;
  const uint32_t c0 = wclk[0], i0 = winfo[0], x0 = i0 & KBD_CPU_SH_WARP;
  if (KBD_LIKELY(kbd_cpu_uniform(wclk, n, 4) && kbd_cpu_uniform(winfo, n, 2))) {
    if (KBD_UNLIKELY(c0 < base || (i0 & KBD_CPU_SH_PENDING) || (race && x0 != me && c0 > w->clk[x0])))
      kbd_cpu_shadow_read_fault(cta, w, off, n, what, el, file, line);
  } else {
    uint32_t bad = 0;
    for (size_t b = 0; b < n; ++b) {
      const uint32_t c = wclk[b], info = winfo[b], x = info & KBD_CPU_SH_WARP;
      bad |= (uint32_t)(c < base) | (info & KBD_CPU_SH_PENDING) |
             ((uint32_t)race & (uint32_t)(x != me) & (uint32_t)(c > w->clk[x]));
    }
    if (KBD_UNLIKELY(bad)) kbd_cpu_shadow_read_fault(cta, w, off, n, what, el, file, line);
  }
  if (!race) return;
  const uint32_t now = w->clk[me];
  const uint16_t site = kbd_cpu_site_id(w, file, line);
  if (KBD_UNLIKELY(w->cta != cta)) { /* a peer CTA's warp: the byte's last remote read */
    sh->remote_reads = 1;
    for (size_t b = off; b < off + n; ++b) {
      sh->rrclk[b] = now;
      sh->rrwho[b] = (uint16_t)me;
      sh->rrsite[b] = site;
    }
    return;
  }
  const uint32_t bit = 1u << w->id;
  uint32_t *rmask = sh->rmask + off, *rclk = sh->rclk[w->id] + off;
  uint16_t *rsite = sh->rsite[w->id] + off;
  for (size_t b = 0; b < n; ++b) {
    rmask[b] |= bit;
    rclk[b] = now;
    rsite[b] = site;
  }
}

/* A read by the running warp of its own CTA's shared bytes. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_read(kbd_cpu_warp *w, size_t off, size_t n, const char *what,
                                                   kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow_read_at(w->cta, w, off, n, what, el, file, line);
}

/* ---- bulk stores still reading shared memory (kbd/cpu/tma.h) ---------------------------------------------- */
enum { KBD_CPU_ST_STORE = 0, KBD_CPU_ST_ADD = 1, KBD_CPU_ST_MIN = 2, KBD_CPU_ST_MAX = 3, KBD_CPU_ST_BULK = 4 };

static inline const char *kbd_cpu_store_name(int op) {
  static const char *const names[5] = {"kbd_tma_store", "kbd_tma_reduce_add", "kbd_tma_reduce_min",
                                       "kbd_tma_reduce_max", "kbd_bulk_store"};
  return names[op];
}

/* A shared write (generic or async) of [off, off + n) while a store still reads some of it. */
static inline void kbd_cpu_store_overlap(const kbd_cpu_cta *cta, size_t off, size_t n, const char *what,
                                         const char *file, int line) {
  for (int i = 0; i < cta->nstores; ++i) {
    const kbd_cpu_store *st = &cta->stores[i];
    if (off < st->off + st->bytes && st->off < off + n)
      kbd_cpu_fault(KBD_ERR_RACE, file, line,
                    "%s writes shared bytes [%zu, %zu) that the %s issued at %s:%d (warp %d) may still be reading: "
                    "wait for it first (kbd_bulk_wait_group_read after kbd_bulk_commit_group, in the issuing "
                    "thread, then a barrier)",
                    what, off > st->off ? off : st->off, off + n < st->off + st->bytes ? off + n : st->off + st->bytes,
                    kbd_cpu_store_name(st->op), st->file, st->line, st->issuer);
  }
}

/* A write by warp w of bytes [off, off + n) of cta's shared memory (its own CTA's, or a peer's of its cluster);
 * flags: KBD_CPU_SH_ASYNC / _PENDING. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_write_at(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                       unsigned flags, const char *what, kbd_cpu_elem el,
                                                       const char *file, int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid, now = w->clk[me];
  uint32_t *wclk = sh->wclk, *rmask = sh->rmask;
  uint16_t *winfo = sh->winfo;
  uint16_t *wsite = sh->wsite;
  const int race = cta->L->race_check;
  const uint16_t site = race ? kbd_cpu_site_id(w, file, line) : 0;
  /* Readers of this CTA are rmask bits; their clock entries sit at this CTA's rank in the group's clocks. */
  const int rbase = cta->rank * KBD_CPU_MAX_WARPS;
  if (KBD_UNLIKELY(cta->nstores)) kbd_cpu_store_overlap(cta, off, n, what, file, line);
  if (race) {
    const uint32_t c0 = wclk[off], x0 = winfo[off] & KBD_CPU_SH_WARP;
    uint32_t readers = 0;
    if (KBD_LIKELY(kbd_cpu_uniform(wclk + off, n, 4) && kbd_cpu_uniform(winfo + off, n, 2))) {
      if (c0 >= base) {
        if (KBD_UNLIKELY(x0 != me && c0 > w->clk[x0]))
          kbd_cpu_race(cta, w, "write after write", what, 1, off, (int)x0, 1, wsite[off], el, off, file, line);
        readers = rmask[off];
        if (!kbd_cpu_uniform(rmask + off, n, 4))
          for (size_t b = off + 1; b < off + n; ++b)
            readers |= rmask[b];
      }
    } else {
      for (size_t b = off; b < off + n; ++b) {
        const uint32_t c = wclk[b], x = winfo[b] & KBD_CPU_SH_WARP;
        if (c < base) continue;
        if (KBD_UNLIKELY(x != me && c > w->clk[x]))
          kbd_cpu_race(cta, w, "write after write", what, 1, b, (int)x, 1, wsite[b], el, off, file, line);
        readers |= rmask[b];
      }
    }
    if (w->cta == cta) readers &= ~(1u << w->id);
    while (readers) { /* other warps read these bytes since their last write: was each read ordered before? */
      const int u = __builtin_ctz(readers);
      readers &= readers - 1;
      const uint32_t *rclk = sh->rclk[u], seen = w->clk[rbase + u];
      if (kbd_cpu_uniform(rmask + off, n, 4) && kbd_cpu_uniform(rclk + off, n, 4) &&
          kbd_cpu_uniform(wclk + off, n, 4)) {
        if (KBD_UNLIKELY(wclk[off] >= base && rclk[off] > seen) &&
            !kbd_cpu_rk_covers(w, (uint32_t)(rbase + u), rclk[off]))
          kbd_cpu_race(cta, w, "write after read", what, 1, off, rbase + u, 0, sh->rsite[u][off], el, off, file, line);
        continue;
      }
      for (size_t b = off; b < off + n; ++b)
        if (KBD_UNLIKELY(wclk[b] >= base && (rmask[b] >> u & 1u) && rclk[b] > seen) &&
            !kbd_cpu_rk_covers(w, (uint32_t)(rbase + u), rclk[b]))
          kbd_cpu_race(cta, w, "write after read", what, 1, b, rbase + u, 0, sh->rsite[u][b], el, off, file, line);
    }
    if (KBD_UNLIKELY(sh->remote_reads))
      for (size_t b = off; b < off + n; ++b) {
        const uint32_t rc = sh->rrclk[b], who = sh->rrwho[b];
        if (rc >= base && who != me && rc > w->clk[who] && !kbd_cpu_rk_covers(w, who, rc))
          kbd_cpu_race(cta, w, "write after read", what, 1, b, (int)who, 0, sh->rrsite[b], el, off, file, line);
        sh->rrclk[b] = 0;
      }
  } else if (KBD_UNLIKELY(sh->remote_reads)) {
    memset(sh->rrclk + off, 0, n * sizeof *sh->rrclk);
  }
  const uint16_t info = (uint16_t)(me | flags);
  for (size_t b = off; b < off + n; ++b) {
    wclk[b] = now;
    wsite[b] = site;
    winfo[b] = info;
  }
  memset(rmask + off, 0, n * sizeof *rmask);
}

/* A write by the running warp of its own CTA's shared bytes. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_write(kbd_cpu_warp *w, size_t off, size_t n, unsigned flags,
                                                    const char *what, kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow_write_at(w->cta, w, off, n, flags, what, el, file, line);
}

/* The async proxy reads [off, off + n) (a TMA store, an MMA operand): generic writes must have been
 * fenced by their writer (fence.proxy.async) and be ordered before this point. */
static inline void kbd_cpu_shadow_async_read(kbd_cpu_warp *w, size_t off, size_t n, const char *what, const char *file,
                                             int line) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_shadow *sh = &cta->sh;
  kbd_cpu_shadow_read(w, off, n, what, kbd_cpu_no_elem(), file, line);
  for (size_t b = off; b < off + n; ++b) {
    const uint32_t info = sh->winfo[b], x = info & KBD_CPU_SH_WARP;
    if (info & KBD_CPU_SH_ASYNC) continue;
    const kbd_cpu_warp *xw = &cta->G->ctas[x / KBD_CPU_MAX_WARPS]->warps[x % KBD_CPU_MAX_WARPS];
    if (sh->wclk[b] > xw->fence_clk) {
      char who[KBD_CPU_WHO_CAP];
      const char *where = kbd_cpu_smem_at(cta, b);
      const kbd_cpu_site s = kbd_cpu_site_of(sh->wsite[b]);
      kbd_cpu_fault(KBD_ERR_RACE, file, line,
                    "%s reads %s through the async proxy, but %s wrote it with generic stores at %s:%d and has "
                    "not executed fence.proxy.async since (kbd_fence_proxy_async)",
                    what, where, kbd_cpu_who(cta->G, (int)x, who, sizeof who), s.file, s.line);
    }
  }
}

/* fence.proxy.async by w: its generic writes so far become visible to the async proxy. */
static inline void kbd_cpu_shadow_fence_async(kbd_cpu_warp *w) {
  w->fence_clk = w->clk[w->gid];
  kbd_cpu_tick(w);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SHADOW_H */
