/* kbd/cpu/mbar.h - mbarriers on the CPU machine (twin of ptx/mbar.h).
 *
 * The state the hardware keeps in the 8-byte shared object (phase, pending arrivals, expected arrivals,
 * tx-count; PTX ISA mbarrier contents) lives in the CTA's table beside it, keyed by the object's shared
 * offset; the 8 bytes themselves go through the shadow, so initialisation is a write and every later use
 * a read for the race checker: a warp that uses a barrier another warp initialised, with nothing ordering
 * the two, is reported. Semantics (PTX ISA 9.7.13.15): init(n) sets phase 0, pending = expected = n,
 * tx 0; expect-tx adds to tx; complete-tx subtracts; an arrival subtracts from pending (expect-tx first
 * for arrive.expect_tx); the phase completes when pending and tx are both 0, and then pending := expected.
 * An arrival is a release and a successful wait an acquire (.release/.acquire, .cta scope): the waiter
 * acquires the join of the completed phase's arrivals.
 *
 * Issue counts are the GPU's: `n` is the number of threads executing the call - 1 in per-lane code
 * (KBD_FOR_LANES, once per lane) and elected-lane code (KBD_ELECT_ONE), 32 in warp-uniform code (every
 * thread of the warp executes it). An arrival from warp-uniform code therefore counts 32 arrivals, as on
 * the GPU. init, inval, expect-tx and complete-tx from warp-uniform code are reported (KBD_ERR_ISSUE):
 * 32 threads would initialise the object (undefined behaviour) or add 32 x the bytes.
 *
 * Misuse, each KBD_ERR_MBARRIER with the caller's file:line: an object that is not 8-byte aligned, use of
 * an object never initialised (or invalidated), init of a live object, init count outside 1..2^20-1,
 * more arrivals than the phase has pending, tx-count outside +-(2^20-1). A wait that can never return is
 * part of the deadlock report: "warp w at f:l waits for mbarrier ... phase k".
 */
#ifndef KBD_CPU_MBAR_H
#define KBD_CPU_MBAR_H

#include "machine.h"

#if KBD_MODE_CPU

#define KBD_CPU_MBAR_LIMIT ((1 << 20) - 1)

/* Threads that execute the call in the running warp: 1 in per-lane or elected-lane code, else 32. */
static inline int kbd_cpu_issuers(const kbd_cpu_warp *w) {
  return w->lanes_depth || w->elect_depth ? 1 : KBD_WARP_SIZE;
}

static inline void kbd_cpu_mbar_single(const kbd_cpu_warp *w, const char *what, const char *file, int line) {
  if (KBD_UNLIKELY(kbd_cpu_issuers(w) != 1))
    kbd_cpu_fault(KBD_ERR_ISSUE, file, line,
                  "%s in warp-uniform code: all 32 threads of warp %d would issue it. Issue it from one thread: "
                  "KBD_ELECT_ONE { ... } (or one lane of KBD_FOR_LANES)",
                  what, w->id);
}

/* The shared offset of a barrier object; faults unless it is 8-byte aligned shared memory of this CTA. */
static inline size_t kbd_cpu_mbar_off(const kbd_cpu_warp *w, const uint64_t *bar, const char *what, const char *file,
                                      int line) {
  const kbd_cpu_cta *cta = w->cta;
  const uintptr_t a = (uintptr_t)bar, lo = (uintptr_t)cta->smem;
  if (a < lo || a + 8 > lo + cta->smem_top)
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                  "%s: %p is not this block's shared memory: an mbarrier is an 8-byte object in shared memory "
                  "(KBD_SHARED_ALIGNED(kbd_mbarrier, name, n, 8))",
                  what, (const void *)bar);
  if (a % 8)
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line, "%s: mbarrier at shared byte %zu is not 8-byte aligned", what,
                  (size_t)(a - lo));
  return (size_t)(a - lo);
}

static inline kbd_cpu_mbar *kbd_cpu_mbar_find(kbd_cpu_cta *cta, size_t off) {
  for (int i = 0; i < cta->nmbars; ++i)
    if (cta->mbars[i].off == off) return &cta->mbars[i];
  return NULL;
}

/* Was m's initialisation published to w by fence.mbarrier_init and a cluster barrier phase w has waited on? That
 * orders the init (only the init: the fence covers nothing else) even when the phase was relaxed. */
static inline int kbd_cpu_mbar_init_published(const kbd_cpu_warp *w, const kbd_cpu_mbar *m) {
  const kbd_cpu_group *G = w->cta->G;
  const kbd_cpu_warp *iw = &G->ctas[m->init_gid / KBD_CPU_MAX_WARPS]->warps[m->init_gid % KBD_CPU_MAX_WARPS];
  return m->init_clk <= iw->pub_fence_clk && w->cl_done_phase > iw->pub_phase;
}

/* The live barrier at bar, after the shadow read that orders its initialisation before this use. */
static inline kbd_cpu_mbar *kbd_cpu_mbar_use(const uint64_t *bar, const char *what, const char *file, int line) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const size_t off = kbd_cpu_mbar_off(w, bar, what, file, line);
  kbd_cpu_mbar *m = kbd_cpu_mbar_find(w->cta, off);
  if (!m || !m->live) {
    const char *where = kbd_cpu_smem_at(w->cta, off);
    if (m)
      kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                    "%s: the mbarrier at %s was invalidated (kbd_mbarrier_inval); initialise it again first", what,
                    where);
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                  "%s: the mbarrier at %s was never initialised (kbd_mbarrier_init, once, before any use)", what,
                  where);
  }
  const kbd_cpu_elem el = {-1, -1, 8};
  if (!kbd_cpu_mbar_init_published(w, m)) kbd_cpu_shadow_read(w, off, 8, what, el, file, line);
  return m;
}

/* A parity wait cannot tell phase n - 1 from phase n + 1. So a warp that waited for phase n - 1 must have done so
 * before anything that lets phase n complete (an arrive that follows from its wait, through a barrier or a release
 * it takes part in): otherwise, in another schedule, the same warp reaches that wait when phase n has already
 * completed and waits for a parity that has come and gone (on the GPU: forever, or through the wrong phase). Checked
 * on the happens-before order when phase n completes, so the first run reports it whatever the schedule. */
static inline void kbd_cpu_mbar_order_check(kbd_cpu_cta *cta, const kbd_cpu_mbar *m) {
  if (!cta->L->race_check) return;
  for (int u = 0; u < cta->nwarps; ++u) {
    const int gid = cta->rank * KBD_CPU_MAX_WARPS + u;
    /* a read release orders execution too: what it knows complete happened before it */
    if ((m->obs[u] & ~KBD_CPU_OBS_STALE) != m->phase || m->clk[gid] >= m->obs_clk[u] ||
        (m->rk.any && m->rk.v[gid] >= m->obs_clk[u]))
      continue;
    const char *where = kbd_cpu_smem_at(cta, m->off);
    kbd_cpu_fault(KBD_ERR_MBARRIER, m->obs_file[u], m->obs_line[u],
                  "warp %d waited here for phase %u of the mbarrier at %s (initialised at %s:%d), but nothing orders "
                  "that wait before the arrivals that complete phase %u: in another schedule the warp arrives here "
                  "late, finds phase %u complete, and waits for parity %u, which came and went (a parity wait cannot "
                  "tell phase %u from %u). Make every waiting warp's wait precede whatever lets the barrier be "
                  "re-armed (e.g. wait before the warpgroup barrier that comes before the release)",
                  u, m->phase - 1u, where, m->file, m->line, m->phase, m->phase, (m->phase - 1u) & 1u, m->phase - 1u,
                  m->phase + 1u);
  }
}

/* A successful wait saw phase m->phase - 1 complete: remembered for kbd_cpu_mbar_order_check. A wait at the same
 * call site as the warp's last one on this barrier that finds the SAME completion again is flagged
 * (KBD_CPU_OBS_STALE): the warp went round its loop without the phase moving on, so its parity did not flip - what
 * a one-shot barrier waited for in a loop does, and also what an epilogue whose parity never flips does, which then
 * runs on stale data. Only a later fault blames it (kbd_cpu_stale_wait, kbd/cpu/report.h), and only on a barrier
 * that is re-armed. */
static inline void kbd_cpu_mbar_observe(kbd_cpu_warp *w, kbd_cpu_mbar *m, const char *file, int line) {
  if (m->phase == 0u) return;                 /* the "preceding phase" of a fresh barrier: nothing completed */
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u) /* tcgen05.commits that arrived on the completed phase */
    if (m->tcq_done[u] > w->tcseen[u]) w->tcseen[u] = m->tcq_done[u];
  const int again =
      (m->obs[w->id] & ~KBD_CPU_OBS_STALE) == m->phase && m->obs_file[w->id] == file && m->obs_line[w->id] == line;
  m->obs[w->id] = m->phase | (again ? KBD_CPU_OBS_STALE : 0u);
  m->obs_clk[w->id] = w->clk[w->gid];
  m->obs_file[w->id] = file;
  m->obs_line[w->id] = line;
}

/* pending and tx both 0: the phase completes; waiters become ready and will acquire its join. */
static inline void kbd_cpu_mbar_check(kbd_cpu_cta *cta, kbd_cpu_mbar *m) {
  if (m->pending != 0 || m->tx != 0) return;
  kbd_cpu_mbar_order_check(cta, m);
  m->done_file[m->phase & 1u] = m->arr_file;
  m->done_line[m->phase & 1u] = m->arr_line;
  memcpy(m->tcq_done, m->tcq, sizeof m->tcq);
  memset(m->tcq, 0, sizeof m->tcq);
  m->phase++;
  KBD_CPU_TRACE_MBAR_DONE(cta, m);
  m->pending = m->expected;
  const size_t n = (size_t)kbd_cpu_nclk(cta->G) * sizeof m->clk[0];
  memcpy(m->done, m->clk, n);
  memset(m->clk, 0, n);
  m->rk_done.any = 0; /* read-completion knowledge: the completed phase's, and none yet for the next */
  kbd_cpu_rk_join(&m->rk_done, &m->rk, kbd_cpu_nclk(cta->G));
  m->rk.any = 0;
  for (int i = 0; i < cta->nwarps; ++i)
    if (m->waiters & (1u << i)) kbd_cpu_wake(&cta->warps[i]);
  m->waiters = 0;
}

static inline void kbd_cpu_mbar_tx(kbd_cpu_mbar *m, long long delta, const char *what, const char *file, int line) {
  const long long tx = (long long)m->tx + delta;
  if (tx > KBD_CPU_MBAR_LIMIT || tx < -KBD_CPU_MBAR_LIMIT)
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                  "%s: tx-count of the mbarrier initialised at %s:%d would be %lld bytes in phase %u; PTX allows "
                  "-(2^20-1) .. 2^20-1 per phase",
                  what, m->file, m->line, tx, m->phase);
  m->tx = (int32_t)tx;
}

/* More arrivals than the phase has pending: a fault. */
static inline void kbd_cpu_mbar_count_check(const kbd_cpu_warp *w, const kbd_cpu_mbar *m, int count, const char *what,
                                            const char *file, int line) {
  if (count > m->pending)
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                  "%s: %d arrival(s) at the mbarrier initialised at %s:%d (count %d), whose phase %u has only %d "
                  "pending%s",
                  what, count, m->file, m->line, m->expected, m->phase, m->pending,
                  kbd_cpu_issuers(w) == KBD_WARP_SIZE
                      ? " (called from warp-uniform code, each of the warp's 32 threads arrives; use KBD_ELECT_ONE "
                        "for one arrival per warp)"
                      : "");
}

static inline void kbd_cpu_mbar_arrivals(kbd_cpu_warp *w, kbd_cpu_mbar *m, int count, const char *what,
                                         const char *file, int line) {
  kbd_cpu_mbar_count_check(w, m, count, what, file, line);
  if (w->cta->mma_arrive) w->cta->mma_arrive(w, m, file, line); /* before the tick: the clock this arrive releases */
  /* Release: the phase carries what this warp did so far to the warps that wait for it, and the tcgen05
   * completions it knows of (of its own CTA: a peer's barrier numbers another CTA's warps). */
  kbd_cpu_release_into(m->clk, w);
  kbd_cpu_rk_release(&m->rk, w);
  if (m >= w->cta->mbars && m < w->cta->mbars + KBD_CPU_MAX_MBARS) kbd_cpu_tcseen_join(m->tcq, w->tcseen);
  kbd_cpu_tick(w);
  m->pending -= count;
  m->arr_file = file;
  m->arr_line = line;
}

/* `count` arrivals that release no writes (mbarrier.arrive without .release.cluster on another CTA's barrier:
 * kbd/cpu/cluster.h): the phase carries only read-completion knowledge (kbd_cpu_rk) - everything ordered before this
 * warp counts as read and complete for the write-after-read checks of the warps that wait for the phase, and as
 * nothing for their read-after-write and write-after-write checks. No tcgen05 completion knowledge either: that
 * orders Tensor Memory reads after MMA writes. */
static inline void kbd_cpu_mbar_read_arrivals(kbd_cpu_warp *w, kbd_cpu_mbar *m, int count, const char *what,
                                              const char *file, int line) {
  kbd_cpu_mbar_count_check(w, m, count, what, file, line);
  if (w->cta->mma_arrive) w->cta->mma_arrive(w, m, file, line);
  kbd_cpu_rk_release_reads(&m->rk, w, file, line);
  kbd_cpu_tick(w);
  m->pending -= count;
  m->arr_file = file;
  m->arr_line = line;
}

static inline void kbd_hw_mbar_init(uint64_t *bar, uint32_t count, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_mbarrier_init", KBD_SITE_ARGS);
  const size_t off = kbd_cpu_mbar_off(w, bar, "kbd_mbarrier_init", KBD_SITE_ARGS);
  if (count < 1 || count > KBD_CPU_MBAR_LIMIT)
    kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS, "kbd_mbarrier_init: arrival count %u is outside 1 .. 2^20-1", count);
  kbd_cpu_mbar *m = kbd_cpu_mbar_find(w->cta, off);
  if (m && m->live)
    kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS,
                  "kbd_mbarrier_init of a live mbarrier (initialised at %s:%d): invalidate it first "
                  "(kbd_mbarrier_inval); PTX leaves init of a valid mbarrier undefined",
                  m->file, m->line);
  if (!m) {
    if (w->cta->nmbars == KBD_CPU_MAX_MBARS)
      kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS, "more than %d mbarriers in one block (CPU machine limit)",
                    KBD_CPU_MAX_MBARS);
    m = &w->cta->mbars[w->cta->nmbars++];
  }
  const kbd_cpu_elem el = {-1, -1, 8};
  kbd_cpu_shadow_write(w, off, 8, 0, "kbd_mbarrier_init", el, KBD_SITE_ARGS);
  memset(m, 0, sizeof *m);
  m->off = off;
  m->live = 1;
  m->pending = m->expected = (int32_t)count;
  m->file = kbd_file_;
  m->line = kbd_line_;
  m->init_gid = w->gid;
  m->init_clk = w->clk[w->gid];
  memset(bar, 0, 8); /* the bytes are opaque; no kernel may read them */
}

static inline void kbd_hw_mbar_inval(uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_mbarrier_inval", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_inval", KBD_SITE_ARGS);
  for (int i = 0; i < w->cta->ncopies; ++i)
    if (w->cta->copies[i].mbar == (int)(m - w->cta->mbars))
      kbd_cpu_fault(KBD_ERR_MBARRIER, KBD_SITE_ARGS,
                    "kbd_mbarrier_inval while the asynchronous copy issued at %s:%d still signals this barrier",
                    w->cta->copies[i].file, w->cta->copies[i].line);
  const kbd_cpu_elem el = {-1, -1, 8};
  kbd_cpu_shadow_write(w, m->off, 8, 0, "kbd_mbarrier_inval", el, KBD_SITE_ARGS);
  m->live = 0;
}

/* mbarrier.arrive (count arrivals per issuing thread) */
static inline void kbd_hw_mbar_arrive(uint64_t *bar, uint32_t count, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_arrive", KBD_SITE_ARGS);
  kbd_cpu_mbar_arrivals(w, m, (int)count * kbd_cpu_issuers(w), "kbd_mbarrier_arrive", KBD_SITE_ARGS);
  kbd_cpu_mbar_check(w->cta, m);
}

/* mbarrier.arrive.expect_tx: expect-tx(bytes), then one arrival */
static inline void kbd_hw_mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_mbarrier_arrive_expect_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_arrive_expect_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar_tx(m, (long long)bytes, "kbd_mbarrier_arrive_expect_tx", KBD_SITE_ARGS);
  m->tx_file = kbd_file_;
  m->tx_line = kbd_line_;
  kbd_cpu_mbar_arrivals(w, m, 1, "kbd_mbarrier_arrive_expect_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar_check(w->cta, m);
}

static inline void kbd_hw_mbar_expect_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_mbarrier_expect_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_expect_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar_tx(m, (long long)bytes, "kbd_mbarrier_expect_tx", KBD_SITE_ARGS);
  m->tx_file = kbd_file_;
  m->tx_line = kbd_line_;
}

/* mbarrier.complete_tx: what a finished asynchronous copy does (without moving data). Not a release. */
static inline void kbd_hw_mbar_complete_tx(uint64_t *bar, uint32_t bytes, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_mbarrier_complete_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_complete_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar_tx(m, -(long long)bytes, "kbd_mbarrier_complete_tx", KBD_SITE_ARGS);
  kbd_cpu_mbar_check(w->cta, m);
}

/* Deliver every copy in flight that signals m, in issue order: the data lands, its bytes become written by
 * the async proxy (stamped at the issuer's clock when it issued the copy), and complete-tx subtracts the
 * bytes, releasing that stamp into the phase - a warp that waits for the phase may read them, any other
 * read is a race. The machine delivers when someone waits on m (or m already has waiters at the issue), so
 * a read that does not wait sees the bytes still pending whatever the schedule. */
static inline void kbd_cpu_copies_deliver(kbd_cpu_cta *cta, kbd_cpu_mbar *m) {
  const int mi = (int)(m - cta->mbars);
  int k = 0;
  for (int i = 0; i < cta->ncopies; ++i) {
    const kbd_cpu_copy c = cta->copies[i];
    if (c.mbar != mi) {
      cta->copies[k++] = c;
      continue;
    }
    kbd_cpu_cta *to = c.dst ? c.dst : cta;
    if (c.land)
      c.land(to, &c);
    else
      memcpy(to->smem + c.off, c.src, c.bytes);
    const uint16_t info = (uint16_t)((unsigned)c.issuer | KBD_CPU_SH_ASYNC);
    for (size_t b = c.off; b < c.off + c.bytes; ++b)
      to->sh.winfo[b] = info;
    if (c.bytes) kbd_cpu_shadow_delivered(&to->sh, c.off, c.bytes, info);
    if (c.clk > m->clk[c.issuer]) m->clk[c.issuer] = c.clk;
    m->tx -= (int32_t)c.bytes;
    kbd_cpu_mbar_check(cta, m);
  }
  cta->ncopies = k;
}

/* For the deadlock report: the barrier, its phase and what it still lacks. */
static inline void kbd_cpu_mbar_describe(const kbd_cpu_warp *w, kbd_text *out) {
  const kbd_cpu_mbar *m = (const kbd_cpu_mbar *)w->wait_obj;
  kbd_text_puts(out, "mbarrier at ");
  kbd_cpu_smem_where(w->cta, m->off, out);
  kbd_text_append(out,
                  " (initialised at %s:%d, count %d) to complete phase %u (parity %u): %d of %d "
                  "arrivals missing",
                  m->file, m->line, m->expected, m->phase, (unsigned)w->wait_arg, m->pending, m->expected);
  if (m->tx > 0)
    kbd_text_append(out, ", %d transaction bytes outstanding (expected at %s:%d)", (int)m->tx,
                    m->tx_file ? m->tx_file : "?", m->tx_line);
  if (m->tx < 0)
    kbd_text_append(out,
                    ", %d bytes landed that no expect-tx announced (a plain arrive where "
                    "kbd_mbarrier_arrive_expect_tx belongs?)",
                    (int)-m->tx);
  /* Lapped: a phase of the parity this warp waits for completed (and the one after it too) since the warp last
   * saw this barrier complete, so the warp now waits for the phase after that. A waiter the arriving side must
   * not outrun by two phases - the usual cause is a missing wait on the arriving side (e.g. for the "empty"
   * barrier this warp releases) - would rather have acquired that completed phase. */
  const uint32_t seen = m->obs[w->id] & ~KBD_CPU_OBS_STALE, par = (uint32_t)w->wait_arg & 1u;
  if (m->phase >= 2u && seen + 2u <= m->phase)
    kbd_text_append(out,
                    "; lapped: phases %u (parity %u, completed by the arrival at %s:%d) and %u completed since this "
                    "warp last saw the barrier complete (%u phases seen), so it now waits for phase %u. If it meant "
                    "phase %u, the arriving side ran two phases ahead of it: a wait that holds the arrivals back "
                    "until this warp has consumed the phase (e.g. on the barrier this warp releases) is missing",
                    m->phase - 2u, par, m->done_file[par] ? m->done_file[par] : "?", m->done_line[par], m->phase - 1u,
                    seen, m->phase, m->phase - 2u);
}

/* try_wait.parity: has the phase with parity `parity` completed? The current phase has the parity of
 * `phase`; the one before it the other parity (PTX: waits are valid for the current and the immediately
 * preceding phase only). True acquires the completed phase; false is a poll (a scheduling point). */
static inline int kbd_hw_mbar_try_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_try_wait", KBD_SITE_ARGS);
  if ((m->phase & 1u) == (parity & 1u)) kbd_cpu_copies_deliver(w->cta, m);
  if ((m->phase & 1u) != (parity & 1u)) {
    kbd_cpu_acquire(w, m->done);
    kbd_cpu_rk_acquire(w, &m->rk_done);
    kbd_cpu_mbar_observe(w, m, KBD_SITE_ARGS);
    kbd_cpu_prof_wait(0); /* a successful try/test_wait; the failed polls before it are not waits */
    return 1;
  }
  kbd_cpu_spin(KBD_SITE_ARGS);
  return 0;
}

/* test_wait.parity: the same question without the hardware suspend; on the CPU machine both are polls. */
static inline int kbd_hw_mbar_test_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  return kbd_hw_mbar_try_wait(bar, parity, KBD_SITE_ARGS);
}

/* Wait until the phase with parity `parity` has completed: the warp blocks on the barrier and only its
 * phase completion wakes it. */
static inline void kbd_hw_mbar_wait(uint64_t *bar, uint32_t parity, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_mbarrier_wait", KBD_SITE_ARGS);
  if ((m->phase & 1u) == (parity & 1u)) kbd_cpu_copies_deliver(w->cta, m);
  kbd_cpu_prof_wait((m->phase & 1u) == (parity & 1u));
  while ((m->phase & 1u) == (parity & 1u)) {
    m->waiters |= 1u << w->id;
    kbd_cpu_block(m, parity & 1u, kbd_cpu_mbar_describe, KBD_SITE_ARGS);
  }
  kbd_cpu_acquire(w, m->done);
  kbd_cpu_rk_acquire(w, &m->rk_done);
  kbd_cpu_mbar_observe(w, m, KBD_SITE_ARGS);
}

/* ---- the 32-bit forms: a barrier named by its shared address (its offset in the block's shared window, which
 * starts at 0 on the CPU machine as kbd_hw_smem_addr's operands do) ---- */
static inline uint32_t kbd_hw_mbar_addr(uint64_t *bar, KBD_SITE_PARAMS) {
  return (uint32_t)kbd_cpu_mbar_off(kbd_cpu_self(), bar, "kbd_mbarrier_addr", KBD_SITE_ARGS);
}
/* kbd_mbarrier_addr_uniform: the same address; on the GPU a shuffle of the whole warp, so per-lane or elected code is
 * a KBD_ERR_ISSUE fault here as it is a hang or undefined result there. */
static inline uint32_t kbd_hw_mbar_addr_uniform(uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "kbd_mbarrier_addr_uniform (shfl.sync)", KBD_SITE_ARGS);
  return (uint32_t)kbd_cpu_mbar_off(kbd_cpu_self(), bar, "kbd_mbarrier_addr_uniform", KBD_SITE_ARGS);
}
/* The object at shared address addr of the running block; faults past its shared memory (alignment, liveness and
 * the rest are the pointer forms' checks). */
static inline uint64_t *kbd_cpu_mbar_at(uint32_t addr, const char *what, const char *file, int line) {
  const kbd_cpu_cta *cta = kbd_cpu_self()->cta;
  if ((size_t)addr + 8 > cta->smem_top)
    kbd_cpu_fault(KBD_ERR_MBARRIER, file, line,
                  "%s: shared address %u is not an mbarrier of this block: its shared memory ends at byte %zu "
                  "(name the barrier with kbd_mbarrier_addr)",
                  what, addr, cta->smem_top);
  return (uint64_t *)(void *)(cta->smem + addr);
}
static inline void kbd_hw_mbar_wait_at(uint32_t addr, uint32_t parity, KBD_SITE_PARAMS) {
  kbd_hw_mbar_wait(kbd_cpu_mbar_at(addr, "kbd_mbarrier_wait_at", KBD_SITE_ARGS), parity, KBD_SITE_ARGS);
}
static inline void kbd_hw_mbar_arrive_at(uint32_t addr, uint32_t count, KBD_SITE_PARAMS) {
  kbd_hw_mbar_arrive(kbd_cpu_mbar_at(addr, "kbd_mbarrier_arrive_at", KBD_SITE_ARGS), count, KBD_SITE_ARGS);
}
/* defined in cpu/cluster.h, which comes after this file (it includes it through cpu/tma.h) */
static inline void kbd_hw_mbar_arrive_cluster_reads(uint64_t *bar, unsigned rank, uint32_t count, KBD_SITE_PARAMS);
static inline void kbd_hw_mbar_arrive_cluster_reads_at(uint32_t addr, unsigned rank, uint32_t count, KBD_SITE_PARAMS) {
  kbd_hw_mbar_arrive_cluster_reads(kbd_cpu_mbar_at(addr, "kbd_mbarrier_arrive_cluster_reads (at)", KBD_SITE_ARGS), rank,
                                   count, KBD_SITE_ARGS);
}

/* fence.mbarrier_init.release.cluster: this thread's earlier initialisations become visible to the other CTAs
 * of the cluster (a peer that signals or multicasts into such a barrier checks it: kbd/cpu/cluster.h). Within a
 * CTA a barrier after the init orders it (checked by the shadow). */
static inline void kbd_hw_fence_mbar_init(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  KBD_SITE_UNUSED;
  w->mbinit_fence_clk = w->clk[w->gid];
  kbd_cpu_tick(w);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MBAR_H */
