/* kbd/cpu/tmem_pending.h - what is in flight in the CPU machine's Tensor Memory (cpu/mma.h has the map):
 * tcgen05.st not yet waited for (tcgen05.wait::st) and the A operands that MMAs read from Tensor Memory
 * (cpu/mma_ts.h), until and after their commit. The checks, each at the instruction that breaks the rule:
 *   - at a tcgen05.st, per cell: no MMA that reads the cell as A is still uncommitted, and every committed one
 *     is ordered before the store (the storer acquired the commit's barrier). The A cells of each completed
 *     MMA are kept in a ring of the last KBD_CPU_TS_READS, with the commit's clock and warp;
 *   - at any tcgen05.mma, for its D: no tcgen05.st over it in flight, and no MMA that reads those cells as A may
 *     still be running, as far as the issuing warp knows. PTX orders two MMAs of one thread only when they share
 *     the accumulator (ptx-reference 5.8: mma -> mma pipelined "same accumulator and shape"), so an MMA writing
 *     over another's A needs that reader's completion first: a wait on an mbarrier phase that a tcgen05.commit
 *     covering the reader arrived on, or a chain of this CTA's barriers from such a wait (kbd_cpu_warp.tcseen:
 *     an arrival passes on what the arriving warp knows, as its vector clock).
 */
#ifndef KBD_CPU_TMEM_PENDING_H
#define KBD_CPU_TMEM_PENDING_H

#include "tmem_alloc.h"

#if KBD_MODE_CPU

/* Does an A of m rows at (alane, acol), ncols columns, use Tensor Memory cell (lane, col)? */
static inline int kbd_cpu_ts_a_has(uint32_t alane, int m, uint32_t acol, uint32_t ncols, uint32_t lane, uint32_t col) {
  if (col < acol || col >= acol + ncols || lane < alane) return 0;
  const uint32_t r = lane - alane; /* Layout D: rows 0..127 at lanes 0..127; F: rows 16w + i at lanes 32w + i */
  return m == 128 ? r < 128u : (r < 112u && r % 32u < 16u);
}

/* tcgen05.st (cpu/mma.h kbd_hw_tmem_st) wrote these cells: none may be A of an MMA that can still read it, and
 * they are pending until the warp's tcgen05.wait::st. */
static inline void kbd_cpu_ts_st(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t taddr, int shape, int regs,
                                 KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_ts_state *T = kbd_cpu_ts_of(S);
  const uint16_t mark = (uint16_t)(w->gid + 1);
  /* an MMA reading the cells as A that is not even committed: it completes at some later time */
  for (int wi = 0; wi < cta->nwarps; ++wi)
    for (int i = 0; i < S->un[wi]; ++i) {
      const kbd_cpu_umma *u = S->uq[wi][i];
      if (!u->acols) continue;
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < regs; ++j) {
          const size_t x = kbd_cpu_tmem_reg(taddr, shape, l, j);
          const uint32_t ln = (uint32_t)(x / KBD_TMEM_COLS), cl = (uint32_t)(x % KBD_TMEM_COLS);
          if (kbd_cpu_ts_a_has(u->alane, u->m, u->acol, u->acols, ln, cl))
            kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                          "tcgen05.st writes Tensor Memory lane %u, column %u, which the tcgen05.mma issued at %s:%d "
                          "reads as its A operand, and that MMA is not even committed: it may read the new value. "
                          "Store over an A only after the commit that covers its MMAs (kbd_mma_commit, then "
                          "kbd_acc_wait on that barrier)",
                          ln, cl, u->file, u->line);
        }
    }
  /* completed MMAs whose commit this warp has not acquired */
  if (cta->L->race_check) {
    const int n = T->nrd < KBD_CPU_TS_READS ? T->nrd : KBD_CPU_TS_READS;
    for (int i = 0; i < n; ++i) {
      const kbd_cpu_ts_read *e = &T->rd[i];
      if (e->who == w->gid || e->clk <= w->clk[e->who]) continue;
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < regs; ++j) {
          const size_t x = kbd_cpu_tmem_reg(taddr, shape, l, j);
          const uint32_t ln = (uint32_t)(x / KBD_TMEM_COLS), cl = (uint32_t)(x % KBD_TMEM_COLS);
          if (kbd_cpu_ts_a_has(e->lane, e->m, e->col, e->ncols, ln, cl)) {
            char them[KBD_CPU_WHO_CAP];
            kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                          "data race (write after read) on Tensor Memory lane %u, column %u: the tcgen05.mma issued "
                          "at %s:%d reads it as its A operand until the commit of %s, and nothing orders that commit "
                          "before this tcgen05.st (wait for the commit's barrier, kbd_acc_wait, first): on the GPU "
                          "the MMA may read the new value",
                          ln, cl, e->file, e->line, kbd_cpu_who(cta->G, e->who, them, sizeof them));
          }
        }
    }
  }
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < regs; ++j)
      T->pend[kbd_cpu_tmem_reg(taddr, shape, l, j)] = mark;
  const uint32_t col = taddr & 0xFFFFu, ncols = shape == KBD_TMEM_32X32B ? (uint32_t)regs : 8u * (uint32_t)(regs / 4);
  uint16_t *c0 = &T->c0[w->id], *c1 = &T->c1[w->id];
  if (*c1 == 0 || col < *c0) *c0 = (uint16_t)col;
  if (col + ncols > *c1) *c1 = (uint16_t)(col + ncols);
}

/* tcgen05.wait::st: the warp's stores have landed; a cell's write counts from now (its clock is the wait's). */
static inline void kbd_cpu_ts_wait_st(kbd_cpu_warp *w, kbd_cpu_mma_state *S) {
  kbd_cpu_ts_state *T = (kbd_cpu_ts_state *)S->ts;
  if (!T || T->c1[w->id] == 0) return;
  const uint16_t mark = (uint16_t)(w->gid + 1);
  const uint32_t now = w->clk[w->gid], q = 32u * (uint32_t)(w->id & 3);
  for (uint32_t ln = q; ln < q + 32u; ++ln)
    for (uint32_t c = T->c0[w->id]; c < T->c1[w->id]; ++c) {
      const size_t x = (size_t)ln * KBD_TMEM_COLS + c;
      if (T->pend[x] != mark) continue;
      T->pend[x] = 0;
      if ((S->tm_who[x] & 0x7FFFu) == (uint32_t)w->gid && !(S->tm_who[x] & KBD_CPU_TMEM_MMA)) S->tm_clk[x] = now;
    }
  T->c0[w->id] = T->c1[w->id] = 0;
}

/* The group index + 1 of the warp whose tcgen05.st of cell x is in flight (no tcgen05.wait::st since), 0 if none. */
static inline int kbd_cpu_ts_pending_cell(const kbd_cpu_mma_state *S, size_t x) {
  const kbd_cpu_ts_state *T = (const kbd_cpu_ts_state *)S->ts;
  return T ? T->pend[x] : 0;
}

/* Cells of an m-row region at lane (Layout D for 128 rows, F for 64), columns [col, col + n), that a tcgen05.st still
 * in flight wrote (its warp has executed no tcgen05.wait::st since): the group index + 1 of that warp for the first
 * such cell, 0 if none; *ln / *cl name it. A kbd_acc_store_async's stores stay in flight until the warp's
 * kbd_acc_release (wait::st, fence, arrive): an arrive without that wait hands on a write that has not landed. */
static inline int kbd_cpu_ts_pending_in(const kbd_cpu_cta *cta, const kbd_cpu_mma_state *S, uint32_t lane, int m,
                                        uint32_t col, uint32_t n, uint32_t *ln, uint32_t *cl) {
  const kbd_cpu_ts_state *T = (const kbd_cpu_ts_state *)S->ts;
  if (!T) return 0;
  for (int wi = 0; wi < cta->nwarps; ++wi) {
    if (T->c1[wi] == 0) continue;
    const uint32_t q = 32u * (uint32_t)(wi & 3);
    const uint32_t c0 = T->c0[wi] > col ? T->c0[wi] : col, c1 = T->c1[wi] < col + n ? T->c1[wi] : col + n;
    for (uint32_t l = q; l < q + 32u; ++l)
      for (uint32_t c = c0; c < c1; ++c) {
        const uint16_t who = T->pend[(size_t)l * KBD_TMEM_COLS + c];
        if (who && kbd_cpu_ts_a_has(lane, m, col, n, l, c)) {
          *ln = l;
          *cl = c;
          return who;
        }
      }
  }
  return 0;
}

/* An MMA about to write D (m rows at lane, columns [col, col + n)) over a tcgen05.st in flight: the store may land
 * after the MMA's write, or (accumulate = 1) the MMA may add onto the old value. */
static inline void kbd_cpu_ts_check_d_pending(kbd_cpu_warp *w, const kbd_cpu_mma_state *S, uint32_t lane, uint32_t col,
                                              int m, int n, KBD_SITE_PARAMS) {
  uint32_t ln, cl;
  const int who = kbd_cpu_ts_pending_in(w->cta, S, lane, m, col, (uint32_t)n, &ln, &cl);
  if (KBD_UNLIKELY(who)) {
    char them[KBD_CPU_WHO_CAP];
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "tcgen05.mma writes its D over Tensor Memory lane %u, column %u, whose tcgen05.st by %s has not "
                  "completed: that warp has executed no tcgen05.wait::st since. A store that an MMA builds on must "
                  "be complete before the storing warp signals (kbd_acc_release after kbd_acc_store_async: wait::st, "
                  "fence::before_thread_sync, an arrive)",
                  ln, cl, kbd_cpu_who(w->cta->G, who - 1, them, sizeof them));
  }
}

/* The MMA u completes (its commit, by warp w): its A reads end at this clock. */
static inline void kbd_cpu_ts_retire(kbd_cpu_warp *w, kbd_cpu_mma_state *S, const kbd_cpu_umma *u) {
  kbd_cpu_ts_state *T = kbd_cpu_ts_of(S);
  kbd_cpu_ts_read *e = &T->rd[T->nrd++ % KBD_CPU_TS_READS];
  e->lane = u->alane;
  e->col = u->acol;
  e->ncols = u->acols;
  e->m = u->m;
  e->clk = w->clk[w->gid];
  e->who = w->gid;
  e->wi = w->id;
  e->cseq = S->tcseq[w->id];
  e->file = u->file;
  e->line = u->line;
}

/* Do an m-row Tensor Memory region at lane0 (Layout D for 128 rows, F for 64) and another share a lane? */
static inline int kbd_cpu_ts_lanes_meet(uint32_t lane0, int m, uint32_t lane1, int m1) {
  for (uint32_t l = 0; l < KBD_TMEM_LANES; ++l)
    if (kbd_cpu_ts_a_has(lane0, m, 0, 1, l, 0) && kbd_cpu_ts_a_has(lane1, m1, 0, 1, l, 0)) return 1;
  return 0;
}

/* An MMA about to write D (m rows at lane, columns [col, col + n)): no MMA that reads any of those cells as A may
 * still run, as far as the issuing warp w knows (the file comment). */
static inline void kbd_cpu_ts_check_d(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t lane, uint32_t col, int m, int n,
                                      KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  const kbd_cpu_ts_state *T = (const kbd_cpu_ts_state *)S->ts;
  if (!T) return; /* no MMA has read an A from Tensor Memory in this CTA */
  const uint32_t c1 = col + (uint32_t)n;
  for (int wi = 0; wi < cta->nwarps; ++wi)
    for (int i = 0; i < S->un[wi]; ++i) {
      const kbd_cpu_umma *u = S->uq[wi][i];
      if (!u->acols || u->acol >= c1 || u->acol + u->acols <= col || !kbd_cpu_ts_lanes_meet(u->alane, u->m, lane, m))
        continue;
      kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                    "tcgen05.mma writes its D over Tensor Memory columns %u..%u, which the tcgen05.mma issued at %s:%d "
                    "(not even committed) reads as its A operand: PTX orders two MMAs of one thread only when they "
                    "accumulate into the same D (ptx-reference 5.8), so the writer needs the reader's completion "
                    "first (commit it, and wait for that barrier before this issue)",
                    u->acol, u->acol + u->acols - 1, u->file, u->line);
    }
  const int nrd = T->nrd < KBD_CPU_TS_READS ? T->nrd : KBD_CPU_TS_READS;
  for (int i = 0; i < nrd; ++i) {
    const kbd_cpu_ts_read *e = &T->rd[i];
    if (e->col >= c1 || e->col + e->ncols <= col || w->tcseen[e->wi] >= e->cseq ||
        !kbd_cpu_ts_lanes_meet(e->lane, e->m, lane, m))
      continue;
    char them[KBD_CPU_WHO_CAP];
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "tcgen05.mma writes its D over Tensor Memory columns %u..%u, which the tcgen05.mma issued at %s:%d "
                  "reads as its A operand, and this warp has not seen that MMA complete: %s committed it, but this "
                  "warp has waited for no mbarrier phase that commit (or a later one of that warp) arrived on, nor "
                  "for a barrier or mbarrier a warp that did wait arrived on afterwards. PTX "
                  "orders two MMAs of one thread only when they accumulate into the same D (ptx-reference 5.8): "
                  "wait for the reader's commit before writing over its A",
                  e->col, e->col + e->ncols - 1, e->file, e->line, kbd_cpu_who(cta->G, e->who, them, sizeof them));
  }
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMEM_PENDING_H */
