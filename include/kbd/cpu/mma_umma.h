/* kbd/cpu/mma_umma.h - tcgen05.mma with A and B in shared memory on the CPU machine emulating sm_100a
 * (KBD_CPU_ARCH == 100; twin of ptx/mma.h's tcgen05.mma; cpu/mma.h has the map): the issue (operands read and
 * summed into a pending record), and tcgen05.commit, which completes the issuing thread's MMAs (D lands in Tensor
 * Memory, the operand reads end) and arrives on the mbarrier with release semantics. The other forms build on it:
 * A in Tensor Memory (cpu/mma_ts.h), CTA pairs (cpu/mma_pair.h; a pair MMA's completion is here).
 */
#ifndef KBD_CPU_MMA_UMMA_H
#define KBD_CPU_MMA_UMMA_H

#include "cluster.h"
#include "mma_dot.h"
#include "tmem_pending.h"

#if KBD_MODE_CPU

/* The MMA about to be issued may write D at any time from now on: every read of those cells by another warp must
 * happen before this issue (the reader's fence::before_thread_sync + arrive, this thread's wait) and be covered
 * by this warp's last tcgen05.fence::after_thread_sync (ptx-reference 5.8). An epilogue that releases an
 * accumulator buffer too early, or an MMA warp that does not wait for the release, fails here at the first
 * overlap. */
/* The Tensor Memory lane of D row r of an MMA whose D address has lane `lane` (ptx-reference 5.7: M = 128 Layout
 * D, row r at lane r; M = 64 Layout F, rows 16w.. at lanes 32w..). */
static inline uint32_t kbd_cpu_umma_lane(int m, uint32_t lane, int r) {
  return m == 128 ? lane + (uint32_t)r : (uint32_t)(r % 16 + 32 * (r / 16)) + lane;
}
/* T: the Tensor Memory of CTA tc that D lands in (the issuer's, or a pair peer's). Only the issuer's own warps
 * have a fence snapshot; a peer's reader must be ordered before the issue by the clocks alone. */
static inline void kbd_cpu_umma_check_readers_in(kbd_cpu_warp *w, kbd_cpu_mma_state *S, const kbd_cpu_cta *tc,
                                                 const kbd_cpu_mma_state *T, uint32_t lane, uint32_t col, int m, int n,
                                                 KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  const uint32_t me = (uint32_t)w->gid, base = tc->sh.base;
  const uint32_t *snap = S->fsnap[w->id];
  const int rb = cta->rank * KBD_CPU_MAX_WARPS;
  /* A cell passes while its read records stay: they change only at a tcgen05.ld (or a new CTA: the bases), and
   * what they are compared with, this warp's vector clock and its fence snapshot, only grow. So an MMA that writes
   * the region the warp's last MMA did, with no tcgen05.ld of those columns since, passes without the m x n scan
   * (the k-loop of one accumulator issues K/16 such MMAs). */
  kbd_cpu_rmemo *mo = NULL;
  for (int i = 0; i < KBD_CPU_RMEMO && !mo; ++i) {
    kbd_cpu_rmemo *e = &S->rmemo[w->id][i];
    if (e->t == (const void *)T && e->tbase == base && e->sbase == cta->sh.base && e->lane == lane && e->col == col &&
        e->m == m && e->n == n)
      mo = e;
  }
  if (mo) {
    uint64_t last = 0;
    for (int c = 0; c < n; ++c)
      last = T->tm_rdcol[col + (uint32_t)c] > last ? T->tm_rdcol[col + (uint32_t)c] : last;
    if (last <= mo->seq) return;
  } else
    mo = &S->rmemo[w->id][S->rnext[w->id]++ % KBD_CPU_RMEMO];
  for (int r = 0; r < m; ++r) {
    const uint32_t ln = kbd_cpu_umma_lane(m, lane, r);
    for (int c = 0; c < n; ++c) {
      const size_t x = (size_t)ln * KBD_TMEM_COLS + col + (uint32_t)c;
      for (int k = 0; k < 2; ++k) {
        const uint32_t rc = k ? T->tm_rclk2[x] : T->tm_rclk[x], who = k ? T->tm_rwho2[x] : T->tm_rwho[x];
        if (KBD_LIKELY(rc < base || who == me)) continue;
        const int unordered = rc > w->clk[who];
        const int local = (int)who >= rb && (int)who < rb + KBD_CPU_MAX_WARPS;
        if (unordered || (local && snap[who - (uint32_t)rb] < rc)) {
          char them[KBD_CPU_WHO_CAP];
          kbd_cpu_who(cta->G, (int)who, them, sizeof them);
          kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                        "tcgen05.mma writes Tensor Memory lane %u, column %zu, which %s read (tcgen05.ld) %s: the MMA "
                        "may overwrite it before that read. The reader releases it (kbd_acc_release: "
                        "tcgen05.fence::before_thread_sync, then an mbarrier arrive) and the MMA warp waits for that "
                        "phase before issuing (kbd_mma_issue fences after the wait)",
                        ln, (size_t)col + (size_t)c, them,
                        unordered ? "with nothing ordering the read before this issue"
                                  : "and no tcgen05.fence::after_thread_sync followed the wait that ordered it");
        }
      }
    }
  }
  mo->t = (const void *)T;
  mo->tbase = base;
  mo->sbase = cta->sh.base;
  mo->lane = lane;
  mo->col = col;
  mo->m = m;
  mo->n = n;
  mo->seq = T->rdseq;
}
static inline void kbd_cpu_umma_check_readers(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t lane, uint32_t col, int m,
                                              int n, KBD_SITE_PARAMS) {
  kbd_cpu_umma_check_readers_in(w, S, w->cta, S, lane, col, m, n, KBD_SITE_ARGS);
}

/* A new pending MMA record (the descriptor and the Tensor Memory A forms); kbd_cpu_umma_finish adds its sums. */
static inline kbd_cpu_umma *kbd_cpu_umma_alloc(const kbd_cpu_mma_shape *s) {
  (void)s; /* the sums are allocated at the finish, once their live rows are known (kbd_cpu_mma_dot_rows) */
  kbd_cpu_umma *u = (kbd_cpu_umma *)calloc(1, sizeof *u);
  if (!u) {
    fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
    abort();
  }
  return u;
}

/* Warp wi's issuing thread has one more uncommitted MMA (also cpu/mma_ts.h's). */
static inline void kbd_cpu_umma_push(kbd_cpu_mma_state *S, int wi, kbd_cpu_umma *u) {
  if (S->un[wi] == S->ucap[wi]) {
    S->ucap[wi] = S->ucap[wi] ? 2 * S->ucap[wi] : 16;
    S->uq[wi] = (kbd_cpu_umma **)realloc(S->uq[wi], sizeof(kbd_cpu_umma *) * (size_t)S->ucap[wi]);
    if (!S->uq[wi]) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
  }
  S->uq[wi][S->un[wi]++] = u;
}

/* The end of an MMA's issue, once S->sa and S->sb hold its operands (every form): the K-step sums, the record's
 * D and site, and the warp's queue. */
static inline void kbd_cpu_umma_finish(kbd_cpu_warp *w, kbd_cpu_mma_state *S, kbd_cpu_umma *u,
                                       const kbd_cpu_mma_shape *s, uint32_t lane, uint32_t col, int accumulate,
                                       KBD_SITE_PARAMS) {
  u->res = kbd_cpu_mma_dot_rows(s, S->sa, s->m, S->sb, S->sbt);
  u->lane = lane;
  u->col = col;
  u->m = s->m;
  u->n = s->n;
  u->dtype = s->td;
  u->accumulate = accumulate;
  u->saturate = s->sat;
  u->file = kbd_file_;
  u->line = kbd_line_;
  kbd_cpu_umma_push(S, w->id, u);
  kbd_cpu_tick(w);
}
/* The rest of an MMA's issue, once S->sa holds its A (both single-CTA forms): B through its descriptor, then
 * the finish. */
static inline void kbd_cpu_umma_record(kbd_cpu_warp *w, kbd_cpu_mma_state *S, kbd_cpu_umma *u,
                                       const kbd_cpu_mma_shape *s, uint32_t lane, uint32_t col, int accumulate,
                                       uint64_t bdesc, KBD_SITE_PARAMS) {
  kbd_cpu_mma_operand(w->cta, w, KBD_MMA_SM100, bdesc, s->tb, s->bmaj, 0, s->n, s->kel, s->negb, S->sb, &u->ch,
                      "tcgen05.mma (operand B)", KBD_SITE_ARGS);
  kbd_cpu_umma_finish(w, S, u, s, lane, col, accumulate, KBD_SITE_ARGS);
}

/* tcgen05.mma.cta_group::1.kind::K [dtmem], adesc, bdesc, idesc, accumulate (one thread). */
static inline void kbd_hw_umma(uint32_t dtmem, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc, int accumulate,
                               KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(100, "tcgen05.mma", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_single(w, "tcgen05.mma", KBD_SITE_ARGS);
  const kbd_cpu_mma_shape s = kbd_cpu_mma_shape_of(KBD_MMA_SM100, kind, idesc, "tcgen05.mma", KBD_SITE_ARGS);
  const char *why = kbd_umma_desc_check(adesc, s.amaj, s.aes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "tcgen05.mma: A descriptor 0x%016llx: %s", (unsigned long long)adesc,
                  why);
  why = kbd_umma_desc_check(bdesc, s.bmaj, s.bes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "tcgen05.mma: B descriptor 0x%016llx: %s", (unsigned long long)bdesc,
                  why);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  kbd_cpu_tcgen05_group(S, 1, "tcgen05.mma", KBD_SITE_ARGS);
  const uint32_t lane = dtmem >> 16, col = dtmem & 0xFFFFu;
  if (s.m == 128 ? lane != 0 : (lane != 0 && lane != 16))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "tcgen05.mma M = %d: the D address's lane is %u; it must be 0%s (ptx-reference 5.7)", s.m, lane,
                  s.m == 64 ? " or 16 (Layout F: rows 16w.. at lanes 32w + lane..)" : " (Layout D: row m at lane m)");
  kbd_cpu_tmem_inside(S, col, (uint32_t)s.n, "tcgen05.mma (D)", KBD_SITE_ARGS);
  if (cta->L->race_check) kbd_cpu_umma_check_readers(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_ts_check_d(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_ts_check_d_pending(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_prof_mma(kbd_cpu_prof_type(s.ta), s.m, s.n, s.kel);
  kbd_cpu_umma *u = kbd_cpu_umma_alloc(&s);
  kbd_cpu_mma_operand(cta, w, KBD_MMA_SM100, adesc, s.ta, s.amaj, 0, s.m, s.kel, s.nega, S->sa, &u->ch,
                      "tcgen05.mma (operand A)", KBD_SITE_ARGS);
  kbd_cpu_umma_record(w, S, u, &s, lane, col, accumulate, bdesc, KBD_SITE_ARGS);
}

/* ---- completion: tcgen05.commit ---------------------------------------------------------------------------------- */

/* A pair MMA's D row r (0..M-1 across the pair), column c: which CTA's Tensor Memory (*hi: the odd CTA's) and the
 * cell there. M = 256 (Layout A): rows 128.. are the odd CTA's, row r & 127 at lane r & 127, column c. M = 128
 * (Layout B, the fold): rows 64.. are the odd CTA's; of each CTA's 64 rows, columns 0..N/2-1 are at lanes 0..63
 * and columns N/2..N-1 at lanes 64..127, both at D's columns 0..N/2-1. Sources: TVM's tmem_datapath_layout ("B":
 * M = 128, cta_group::2, column halves folded across the two 64-lane halves; it cites PTX ISA 9.7.16.10.5) and
 * CUTLASS's 2-SM Tensor Memory allocator for 64 rows per SM (lane stride 64 between the column halves); the PTX
 * ISA figure itself was not reachable (docs/design/cta-pair.md). */
static inline size_t kbd_cpu_pair_cell(const kbd_cpu_umma *u, int r, int c, int *hi) {
  if (u->m == 256) {
    *hi = r >= 128;
    return (size_t)(u->lane + (uint32_t)(r & 127)) * KBD_TMEM_COLS + u->col + (uint32_t)c;
  }
  const int hn = u->n / 2;
  *hi = r >= 64;
  return (size_t)(u->lane + (uint32_t)(r & 63) + 64u * (uint32_t)(c >= hn)) * KBD_TMEM_COLS + u->col +
         (uint32_t)(c % hn);
}
/* Tensor Memory columns a pair MMA's D takes in each CTA: N (Layout A) or N/2 (Layout B). */
static inline int kbd_cpu_pair_cols(const kbd_cpu_umma *u) { return u->m == 256 ? u->n : u->n / 2; }

/* The Tensor Memory cell of D row r, column c of an MMA (ptx-reference 5.7: M = 128 Layout D, M = 64 Layout F). */
static inline size_t kbd_cpu_umma_cell(const kbd_cpu_umma *u, int r, int c) {
  const uint32_t lane = kbd_cpu_umma_lane(u->m, u->lane, r);
  return (size_t)lane * KBD_TMEM_COLS + u->col + (uint32_t)c;
}

/* At the completion of a pair MMA (its commit): the odd CTA still holds D's columns. */
static inline void kbd_cpu_pair_complete_check(const kbd_cpu_umma *u, KBD_SITE_PARAMS) {
  const kbd_cpu_mma_state *P = kbd_cpu_tmem_state(u->pair);
  if (KBD_UNLIKELY(kbd_cpu_tmem_find(P, u->col, (uint32_t)kbd_cpu_pair_cols(u)) < 0))
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "the pair MMA issued at %s:%d completes here, but cluster CTA %d freed its Tensor Memory columns "
                  "[%u, %u) before: a CTA frees only after the commit's barrier phase (both CTAs wait for it) and a "
                  "cluster barrier",
                  u->file, u->line, u->pair->rank, u->col, u->col + (uint32_t)kbd_cpu_pair_cols(u));
}

/* n cells of Tensor Memory T from cell x on (one lane, consecutive columns) take an MMA's K-step sums res[0..n-1]
 * (res NULL: a row of +0 sums, kbd_cpu_mma_dot_rows's header 0, landed by the same kbd_cpu_mma_acc with sum 0):
 * first the accumulate checks of every cell (each reads only its own cell's record, and a fault ends the launch, so
 * checking the run before writing it reports what a cell-by-cell loop reports), then the values, then the stamps -
 * three loops without the per-cell branches, which the f32 D (the common case) turns into vector code. */
static inline void kbd_cpu_umma_land(kbd_cpu_warp *w, const kbd_cpu_umma *u, kbd_cpu_mma_state *T, uint32_t tbase,
                                     size_t x, const uint32_t *res, int n) {
  const uint32_t me = (uint32_t)w->gid, now = w->clk[w->gid];
  uint32_t *val = T->tm_val + x, *clk = T->tm_clk + x;
  uint16_t *who = T->tm_who + x;
  /* The accumulate checks as one branch-free pass first (a cell this warp's MMA wrote in this CTA passes both), and
   * the cell-by-cell loop, which reports the first failing cell, only when some cell may fail. */
  int suspect = 0;
  if (u->accumulate)
    for (int c = 0; c < n; ++c)
      suspect |= (clk[c] < tbase) | ((who[c] & 0x7FFFu) != me);
  if (suspect)
    for (int c = 0; c < n; ++c) {
      const uint32_t wr = who[c] & 0x7FFFu;
      if (KBD_UNLIKELY(clk[c] < tbase))
        kbd_cpu_fault(KBD_ERR_POISON, u->file, u->line,
                      "tcgen05.mma with accumulate = 1 adds onto Tensor Memory lane %zu, column %zu, which nothing "
                      "wrote in this CTA (start the accumulation with accumulate = 0)",
                      (x + (size_t)c) / KBD_TMEM_COLS, (x + (size_t)c) % KBD_TMEM_COLS);
      if (KBD_UNLIKELY(wr != me && clk[c] > w->clk[wr])) {
        char them[KBD_CPU_WHO_CAP];
        kbd_cpu_fault(KBD_ERR_RACE, u->file, u->line,
                      "tcgen05.mma accumulates onto Tensor Memory lane %zu, column %zu, which %s wrote "
                      "(tcgen05.st) with nothing ordering it before this MMA (tcgen05.wait::st, "
                      "fence::before_thread_sync, a barrier, fence::after_thread_sync)",
                      (x + (size_t)c) / KBD_TMEM_COLS, (x + (size_t)c) % KBD_TMEM_COLS,
                      kbd_cpu_who(w->cta->G, (int)wr, them, sizeof them));
      }
    }
  if (!res) {
    if (u->dtype == KBD_MMA_F32 && !u->accumulate)
      memset(val, 0, sizeof(uint32_t) * (size_t)n);
    else if (u->dtype == KBD_MMA_F32)
      for (int c = 0; c < n; ++c)
        val[c] = kbd_cpu_mma_acc(KBD_MMA_F32, 0, 1, val[c], 0u);
    else
      for (int c = 0; c < n; ++c)
        val[c] = kbd_cpu_mma_acc(u->dtype, u->saturate, u->accumulate, val[c], 0u);
  } else if (u->dtype == KBD_MMA_F32 && !u->accumulate)
    memcpy(val, res, sizeof(uint32_t) * (size_t)n);
  else if (u->dtype == KBD_MMA_F32)
    for (int c = 0; c < n; ++c)
      val[c] = kbd_cpu_mma_acc(KBD_MMA_F32, 0, 1, val[c], res[c]);
  else
    for (int c = 0; c < n; ++c)
      val[c] = kbd_cpu_mma_acc(u->dtype, u->saturate, u->accumulate, val[c], res[c]);
  for (int c = 0; c < n; ++c) {
    clk[c] = now;
    who[c] = (uint16_t)(me | KBD_CPU_TMEM_MMA);
  }
}

/* The executing thread's uncommitted MMAs complete: their D lands in Tensor Memory and their operand reads end. Each
 * row of D lands as runs of consecutive cells: one run of N (single CTA, and a pair's Layout A), or two runs of N/2
 * (a pair's Layout B folds the column halves onto lanes 64 apart, kbd_cpu_pair_cell); a pair's rows of the odd
 * CTA's half land in its Tensor Memory. */
static inline void kbd_cpu_umma_complete(kbd_cpu_warp *w, KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  const uint32_t base = cta->sh.base;
  for (int i = 0; i < S->un[w->id]; ++i) {
    kbd_cpu_umma *u = S->uq[w->id][i];
    kbd_cpu_mma_state *P = NULL;
    if (u->pair) {
      kbd_cpu_pair_complete_check(u, KBD_SITE_ARGS);
      P = kbd_cpu_tmem_state(u->pair);
    }
    const int run = u->pair && u->m != 256 ? u->n / 2 : u->n;
    const uint32_t *rows = u->res + u->m; /* the stored rows after the headers (kbd_cpu_mma_dot_rows) */
    for (int r = 0; r < u->m; ++r) {
      const uint32_t *row = u->res[r] ? rows + (size_t)(u->res[r] - 1u) * (size_t)u->n : NULL;
      for (int c = 0; c < u->n; c += run) {
        int hi = 0;
        const size_t x = u->pair ? kbd_cpu_pair_cell(u, r, c, &hi) : kbd_cpu_umma_cell(u, r, c);
        kbd_cpu_umma_land(w, u, hi ? P : S, hi ? u->pair->sh.base : base, x, row ? row + c : NULL, run);
      }
    }
    kbd_cpu_mma_retire_read(cta, w, &u->ch, "tcgen05.mma", u->file, u->line, KBD_SITE_ARGS);
    if (u->pair)
      kbd_cpu_mma_retire_read(u->pair, w, &u->pch, "tcgen05.mma (CTA pair)", u->file, u->line, KBD_SITE_ARGS);
    if (u->acols) kbd_cpu_ts_retire(w, S, u);
    kbd_cpu_umma_free(u);
  }
  S->un[w->id] = 0;
}
/* tcgen05.commit.cta_group::1.mbarrier::arrive::one [bar] (one thread): the thread's MMAs complete (their D
 * lands in Tensor Memory, their operand reads end), then one arrival on bar with release semantics. */
static inline void kbd_hw_umma_commit(uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "tcgen05.commit", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_single(w, "tcgen05.commit", KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "tcgen05.commit", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 1, "tcgen05.commit", KBD_SITE_ARGS);
  ++S->tcseq[w->id];
  kbd_cpu_umma_complete(w, KBD_SITE_ARGS);
  kbd_cpu_mbar_arrivals(w, m, 1, "tcgen05.commit", KBD_SITE_ARGS);
  m->tcq[w->id] = S->tcseq[w->id];
  kbd_cpu_mbar_check(w->cta, m);
}
/* tcgen05.commit ... .multicast::cluster [bar], mask: the same completion, then one arrival (release, cluster
 * scope) on the barrier at bar's offset in every CTA of the mask. */
static inline void kbd_cpu_umma_commit_mc_g(uint64_t *bar, uint16_t mask, int group, const char *what,
                                            KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_group *G = w->cta->G;
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_single(w, what, KBD_SITE_ARGS);
  if (mask == 0 || (G->nctas < 16 && (mask >> G->nctas) != 0))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: CTA mask 0x%04x names no CTA or a rank outside the cluster of %d CTA(s) (bit r = cluster "
                  "rank r)",
                  what, (unsigned)mask, G->nctas);
  kbd_cpu_mbar_use(bar, what, KBD_SITE_ARGS); /* bar must be a barrier of this CTA's own shared memory */
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, group, what, KBD_SITE_ARGS);
  ++S->tcseq[w->id];
  kbd_cpu_umma_complete(w, KBD_SITE_ARGS);
  for (int r = 0; r < G->nctas; ++r) {
    if (!(mask >> r & 1u)) continue;
    kbd_cpu_cta *peer = kbd_cpu_cluster_cta(w, (unsigned)r, what, KBD_SITE_ARGS);
    kbd_cpu_mbar *m = kbd_cpu_peer_mbar(w, peer, bar, what, KBD_SITE_ARGS);
    kbd_cpu_mbar_arrivals(w, m, 1, what, KBD_SITE_ARGS);
    if (peer == w->cta) m->tcq[w->id] = S->tcseq[w->id]; /* completion known within this CTA only */
    kbd_cpu_mbar_check(peer, m);
  }
}
static inline void kbd_hw_umma_commit_mc(uint64_t *bar, uint16_t mask, KBD_SITE_PARAMS) {
  kbd_cpu_umma_commit_mc_g(bar, mask, 1, "tcgen05.commit (multicast)", KBD_SITE_ARGS);
}

/* the 32-bit forms: the barrier at shared address addr (cpu/mbar.h, kbd_cpu_mbar_at) */
static inline void kbd_hw_umma_commit_at(uint32_t addr, KBD_SITE_PARAMS) {
  kbd_hw_umma_commit(kbd_cpu_mbar_at(addr, "tcgen05.commit", KBD_SITE_ARGS), KBD_SITE_ARGS);
}
static inline void kbd_hw_umma_commit_mc_at(uint32_t addr, uint16_t mask, KBD_SITE_PARAMS) {
  kbd_hw_umma_commit_mc(kbd_cpu_mbar_at(addr, "tcgen05.commit (multicast)", KBD_SITE_ARGS), mask, KBD_SITE_ARGS);
}

/* The caller says it runs in elected-lane code (KBD_ELECT_ONE): `what` issues from the calling thread without
 * electing one. From warp-uniform code all 32 threads of the warp would issue its MMAs and commit; from per-lane code
 * (KBD_FOR_LANES) each lane would. Both are faults here, where the GPU would multiply the work silently. */
static inline void kbd_hw_umma_elected(const char *what, KBD_SITE_PARAMS) {
  const kbd_cpu_warp *w = kbd_cpu_self();
  if (KBD_UNLIKELY(!w->elect_depth || w->lanes_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                  "%s in %s code: it issues from the calling thread and belongs inside the MMA warp's KBD_ELECT_ONE "
                  "{ ... } (around the whole k-loop); %s. Or call the form without _elected, which elects a lane "
                  "itself",
                  what, w->lanes_depth ? "per-lane (KBD_FOR_LANES)" : "warp-uniform",
                  w->lanes_depth ? "each lane would issue the MMAs and the commit"
                                 : "all 32 threads of the warp would issue the MMAs and the commit");
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_UMMA_H */
