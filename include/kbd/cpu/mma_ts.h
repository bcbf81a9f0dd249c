/* kbd/cpu/mma_ts.h - tcgen05.mma with A from Tensor Memory on the CPU machine (twin of ptx/mma_ts.h; emulating
 * sm_100a). kbd/mma_ts.h, docs/design/mma-ts.md.
 *
 * The instruction is the descriptor form's (cpu/mma.h kbd_hw_umma: shape checks, B decoder, numeric contract,
 * completion at the issuing thread's tcgen05.commit); only A differs: every element is read at the issue from
 * the emulated Tensor Memory cell that kbd_tmem_a_pos_of names (kbd/mma_ts_layout.h), the function the store
 * side uses too.
 *
 * Checks, each at the instruction that breaks the rule, so none depends on the schedule:
 *   - at the MMA, per A cell: written in this CTA; its tcgen05.st completed (the storing warp executed
 *     tcgen05.wait::st since: the machine keeps each cell's unwaited store, and the wait stamps the cell with the
 *     wait's clock); that wait ordered before the issue (the storer's release acquired by the MMA warp) and a
 *     tcgen05.fence::after_thread_sync of the MMA warp after that acquire - the rules tcgen05.ld has;
 *   - at a tcgen05.st, per cell: no MMA that reads the cell as A is still uncommitted, and every committed one
 *     is ordered before the store (the storer acquired the commit's barrier). The A cells of each completed
 *     MMA are kept in a ring of the last KBD_CPU_TS_READS, with the commit's clock and warp;
 *   - at any tcgen05.mma, for its D: no MMA that reads those cells as A may still be running, as far as the
 *     issuing warp knows. PTX orders two MMAs of one thread only when they share the accumulator
 *     (ptx-reference 5.8: mma -> mma pipelined "same accumulator and shape"), so an MMA writing over another's
 *     A needs that reader's completion first: a wait on an mbarrier phase that a tcgen05.commit covering the
 *     reader arrived on, or a chain of this CTA's barriers from such a wait (kbd_cpu_warp.tcseen: an arrival
 *     passes on what the arriving warp knows, as its vector clock)
 */
#ifndef KBD_CPU_MMA_TS_H
#define KBD_CPU_MMA_TS_H

#include "../mma_ts_layout.h"
#include "mma.h"

#if KBD_MODE_CPU

#define KBD_CPU_TS_READS 256 /* completed MMAs whose A reads a later tcgen05.st is checked against */

typedef struct kbd_cpu_ts_read {
  uint32_t lane, col, ncols, clk; /* A at (lane, col), ncols columns; read until the commit at clk */
  int m, who;                     /* rows; the committing warp (group index) */
  int wi;                         /* the committing warp in its CTA, and that commit's number (kbd_cpu_warp.tcseen) */
  uint32_t cseq;
  const char *file; /* the MMA's issue */
  int line;
} kbd_cpu_ts_read;

/* A tcgen05.ld of the warp whose tcgen05.wait::ld has not come yet (see "Registers of a tcgen05.ld in flight"
 * below): its destination cells d[l * ld + j] (lanes l < 32, registers j < regs), where its values wait in the
 * warp's stash, and its site. */
typedef struct kbd_cpu_ldp {
  uint32_t *d;
  int ld, regs;
  uint32_t at; /* first word in the warp's stash: value of (l, j) at at + l * regs + j */
  const char *file;
  int line;
} kbd_cpu_ldp;
#define KBD_CPU_LDP_MAX 16     /* tcgen05.ld in flight per warp (CPU machine limit) */
#define KBD_CPU_LDP_WORDS 8192 /* their registers x 32 lanes: a thread has at most 255 registers to load into */

typedef struct kbd_cpu_ts_state {
  uint16_t pend[KBD_TMEM_LANES * KBD_TMEM_COLS]; /* group index + 1 of the warp whose tcgen05.st of the cell is not
                                                    waited for (tcgen05.wait::st); 0: none */
  uint16_t c0[KBD_CPU_MAX_WARPS], c1[KBD_CPU_MAX_WARPS]; /* columns [c0, c1) of the warp's unwaited stores */
  kbd_cpu_ts_read rd[KBD_CPU_TS_READS];
  int nrd;                                             /* entries written so far (the ring holds the last ones) */
  int nldp[KBD_CPU_MAX_WARPS];                         /* tcgen05.ld in flight per warp */
  kbd_cpu_ldp ldp[KBD_CPU_MAX_WARPS][KBD_CPU_LDP_MAX]; /* ... and each of them */
  /* last (a new CTA does not clear it, and calloc leaves the pages of warps that never load untouched): */
  uint32_t stash[KBD_CPU_MAX_WARPS][KBD_CPU_LDP_WORDS];
} kbd_cpu_ts_state;

static inline kbd_cpu_ts_state *kbd_cpu_ts_of(kbd_cpu_mma_state *S) {
  if (KBD_UNLIKELY(!S->ts)) {
    S->ts = calloc(1, sizeof(kbd_cpu_ts_state));
    if (!S->ts) {
      fprintf(stderr, "kbd: out of host memory (Tensor Memory A operands)\n");
      abort();
    }
  }
  return (kbd_cpu_ts_state *)S->ts;
}

/* A new CTA: nothing of the last one's stores and reads is pending. */
static inline void kbd_cpu_ts_reset(kbd_cpu_mma_state *S) {
  if (S->ts) memset(S->ts, 0, offsetof(kbd_cpu_ts_state, stash));
}

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

/* One A cell the MMA is about to read (ptx-reference 5.8, the tcgen05.ld rules plus the store's completion). */
static inline void kbd_cpu_ts_check_cell(kbd_cpu_warp *w, kbd_cpu_mma_state *S, size_t x, KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  const uint32_t c = S->tm_clk[x], who = S->tm_who[x] & 0x7FFFu, mma = S->tm_who[x] & KBD_CPU_TMEM_MMA;
  const size_t ln = x / KBD_TMEM_COLS, cl = x % KBD_TMEM_COLS;
  char them[KBD_CPU_WHO_CAP];
  if (KBD_UNLIKELY(c < cta->sh.base))
    kbd_cpu_fault(KBD_ERR_POISON, KBD_SITE_ARGS,
                  "tcgen05.mma reads its A operand from Tensor Memory lane %zu, column %zu, which nothing wrote in "
                  "this CTA (store A first: kbd_tmem_a_store)",
                  ln, cl);
  const kbd_cpu_ts_state *T = (const kbd_cpu_ts_state *)S->ts;
  if (KBD_UNLIKELY(T && T->pend[x]))
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "tcgen05.mma reads its A operand from Tensor Memory lane %zu, column %zu, whose tcgen05.st by %s "
                  "has not completed: that warp has not executed tcgen05.wait::st since. The storing warps end with "
                  "kbd_tmem_a_ready (wait::st, fence::before_thread_sync, an arrive) and the MMA warp waits for that "
                  "barrier (kbd_acc_wait) before kbd_mma_ts_issue",
                  ln, cl, kbd_cpu_who(cta->G, (int)T->pend[x] - 1, them, sizeof them));
  if (!cta->L->race_check || (who == (uint32_t)w->gid && !mma)) return;
  const uint32_t *snap = S->fsnap[w->id];
  const int rb = cta->rank * KBD_CPU_MAX_WARPS;
  const int local = (int)who >= rb && (int)who < rb + KBD_CPU_MAX_WARPS;
  if (who != (uint32_t)w->gid && c > w->clk[who])
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "tcgen05.mma reads its A operand from Tensor Memory lane %zu, column %zu, which %s %s with nothing "
                  "ordering that before this issue: the storing warps signal with kbd_tmem_a_ready and the MMA "
                  "warp waits for that barrier (kbd_acc_wait) before kbd_mma_ts_issue",
                  ln, cl, kbd_cpu_who(cta->G, (int)who, them, sizeof them),
                  mma ? "wrote with an MMA" : "stored (tcgen05.st, waited)");
  if (local && (who != (uint32_t)w->gid ? snap[who - (uint32_t)rb] < c : snap[who - (uint32_t)rb] <= c))
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "tcgen05.mma reads its A operand from Tensor Memory lane %zu, column %zu, which %s wrote, without "
                  "tcgen05.fence::after_thread_sync after the wait that acquired it (ptx-reference 5.8)",
                  ln, cl, kbd_cpu_who(cta->G, (int)who, them, sizeof them));
}

/* tcgen05.mma.cta_group::1.kind::f16 [dtmem], [atmem], bdesc, idesc, accumulate (one thread). */
static inline void kbd_hw_umma_ts(uint32_t dtmem, int kind, uint32_t idesc, uint32_t atmem, uint64_t bdesc,
                                  int accumulate, KBD_SITE_PARAMS) {
  const char *what = "tcgen05.mma (A in Tensor Memory)";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_single(w, what, KBD_SITE_ARGS);
  if (kind != KBD_MMA_KIND_F16)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: kind %d: kbd offers A in Tensor Memory for kind::f16 only", what,
                  kind);
  const kbd_cpu_mma_shape s = kbd_cpu_mma_shape_of(KBD_MMA_SM100, kind, idesc, what, KBD_SITE_ARGS);
  if (s.amaj != KBD_SMEM_K_MAJOR)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: instruction descriptor 0x%08x transposes A: an A in Tensor Memory is row-major (K along the "
                  "columns, PTX ISA 9.2 Table 51), the transpose-A bit must be 0",
                  what, idesc);
  const char *why = kbd_umma_desc_check(bdesc, s.bmaj, s.bes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: B descriptor 0x%016llx: %s", what, (unsigned long long)bdesc,
                  why);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  kbd_cpu_tcgen05_group(S, 1, what, KBD_SITE_ARGS);
  const uint32_t lane = dtmem >> 16, col = dtmem & 0xFFFFu, alane = atmem >> 16, acol = atmem & 0xFFFFu;
  if (s.m == 128 ? lane != 0 : (lane != 0 && lane != 16))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s M = %d: the D address's lane is %u; it must be 0%s (ptx-reference 5.7)", what, s.m, lane,
                  s.m == 64 ? " or 16 (Layout F)" : " (Layout D)");
  if (alane != lane)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s M = %d: the A address's lane is %u and D's %u: A and D use the same lane alignment (PTX ISA 9.2 "
                  "§9.7.16.10.5)",
                  what, s.m, alane, lane);
  const uint32_t acols = (uint32_t)(s.kel * s.aes / 4);
  kbd_cpu_tmem_inside(S, acol, acols, "tcgen05.mma (A in Tensor Memory)", KBD_SITE_ARGS);
  kbd_cpu_tmem_inside(S, col, (uint32_t)s.n, "tcgen05.mma (D)", KBD_SITE_ARGS);
  if (cta->L->race_check) kbd_cpu_umma_check_readers(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_ts_check_d(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_ts_check_d_pending(w, S, lane, col, s.m, s.n, KBD_SITE_ARGS);
  kbd_cpu_prof_mma(kbd_cpu_prof_type(s.ta), s.m, s.n, s.kel);
  kbd_cpu_umma *u = kbd_cpu_umma_alloc(&s);
  /* A: every element from its cell (kbd_tmem_a_pos_of), each cell checked once (at its first byte) */
  for (int r = 0; r < s.m; ++r)
    for (int k = 0; k < s.kel; ++k) {
      const kbd_tmem_a_pos p = kbd_tmem_a_pos_of(s.m, s.aes, r, k);
      const size_t x = (size_t)(alane + p.lane) * KBD_TMEM_COLS + acol + p.col;
      if (p.byte == 0) kbd_cpu_ts_check_cell(w, S, x, KBD_SITE_ARGS);
      const uint32_t bits = S->tm_val[x] >> (8u * p.byte);
      const unsigned char b[4] = {(unsigned char)(bits & 0xFFu), (unsigned char)((bits >> 8) & 0xFFu), 0, 0};
      const double v = kbd_cpu_mma_elem(s.ta, b);
      S->sa[r * s.kel + k] = s.nega ? -v : v;
    }
  u->alane = alane;
  u->acol = acol;
  u->acols = acols;
  kbd_cpu_umma_record(w, S, u, &s, lane, col, accumulate, bdesc, KBD_SITE_ARGS);
}

/* kbd_tmem_a_store's columns: k0 a multiple of 8 (a whole number of cells, and tcgen05.st's 32x32b chunks) and
 * the view inside A. */
static inline void kbd_hw_tmem_a_cols(int k0, int cols, int kcols, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(k0 < 0 || k0 % 8 != 0 || k0 + cols > kcols))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "kbd_tmem_a_store: k0 = %d: a %d-column view of a %d-column (K) A operand needs k0 a multiple of 8 "
                  "in 0..%d",
                  k0, cols, kcols, kcols - cols);
}

/* ---- Registers of a tcgen05.ld in flight ----------------------------------------------------------------------
 * tcgen05.ld is asynchronous: its destination registers hold the loaded values only after the warp's
 * tcgen05.wait::ld (ptx-reference 5.3, 5.8); before it a read gets whatever the register held, and a write races
 * with the load's. kbd_acc_load waits itself; the raw twin kbd_hw_tmem_ld leaves the wait to its caller. The
 * machine cannot watch plain C reads of registers (they are host memory), so it does the best it can at both ends:
 *   - at the ld (kbd_cpu_ld_issue), the loaded values go to the warp's stash and the destination cells get
 *     KBD_CPU_LD_POISON, a signalling-NaN pattern: arithmetic on a cell read too early gives NaN (f32 keeps the
 *     payload, quieted), not a plausible stale value;
 *   - kbd operations that take registers by address check them against the warp's loads in flight
 *     (kbd_cpu_ld_pending_cells): a tcgen05.st of such cells, a second tcgen05.ld into them - a KBD_ERR_RACE naming
 *     the reading call's file:line and the tcgen05.ld's;
 *   - at tcgen05.wait::ld (kbd_cpu_ld_wait), a cell that no longer holds the poison was written before the load
 *     completed (its value would land over that write at an unknown time): KBD_ERR_RACE at the wait naming the ld;
 *     then the stash is delivered into the registers.
 * A plain C read before the wait is not reported: it only sees the poison (docs/cpu-machine.md, "what the machine
 * cannot see"). These are hooks of the twins in cpu/mma.h: kbd_hw_tmem_ld calls kbd_cpu_ld_issue after writing its
 * registers, kbd_hw_tmem_st calls kbd_cpu_ld_pending_cells on its source first, kbd_hw_tmem_wait_ld calls
 * kbd_cpu_ld_wait, so every raw tcgen05.ld is checked (tests/mma/test_tmem_ld_wait.c). */
#define KBD_CPU_LD_POISON 0x7FA7E1D0u /* f32 signalling NaN, payload 0x27E1D0 */

/* The record of warp wi's load in flight whose destination holds the 32-bit cell p, or NULL. */
static inline const kbd_cpu_ldp *kbd_cpu_ldp_find(const kbd_cpu_ts_state *T, int wi, const void *p) {
  for (int i = 0; i < T->nldp[wi]; ++i) {
    const kbd_cpu_ldp *r = &T->ldp[wi][i];
    const uintptr_t a = (uintptr_t)p, b = (uintptr_t)r->d;
    if (a < b || (a - b) % 4u) continue;
    const size_t k = (a - b) / 4u;
    if (k / (size_t)r->ld < 32u && k % (size_t)r->ld < (size_t)r->regs) return r;
  }
  return NULL;
}

/* A kbd operation of the running warp reads (or overwrites) the 32-bit cells c[l * ld + j], l < 32, j < regs: none may
 * be the destination of one of its tcgen05.ld still in flight. `what` names the operation, `verb` what it does. */
static inline void kbd_cpu_ld_pending_cells(const void *c, int ld, int regs, const char *what, const char *verb,
                                            KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const kbd_cpu_mma_state *S = (const kbd_cpu_mma_state *)w->cta->mma;
  const kbd_cpu_ts_state *T = S ? (const kbd_cpu_ts_state *)S->ts : NULL;
  if (KBD_LIKELY(!T || T->nldp[w->id] == 0)) return;
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < regs; ++j) {
      const uint32_t *x = (const uint32_t *)c + (size_t)l * (size_t)ld + (size_t)j;
      const kbd_cpu_ldp *r = kbd_cpu_ldp_find(T, w->id, x);
      if (KBD_UNLIKELY(r != NULL))
        kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                      "%s %s lane %d's register %d, which the tcgen05.ld at %s:%d loads into, and this warp has "
                      "executed no tcgen05.wait::ld since: the register does not hold the loaded value yet "
                      "(kbd_hw_tmem_wait_ld after the ld, as kbd_acc_load does)",
                      what, verb, l, (int)(((uintptr_t)x - (uintptr_t)r->d) / 4u % (uintptr_t)r->ld), r->file, r->line);
    }
}

/* Hook of tcgen05.ld: the twin has checked the instruction and written the values into d (lane stride ld, shape and
 * .xn as the twin's); from here they are in flight until the warp's tcgen05.wait::ld. */
static inline void kbd_cpu_ld_issue(void *d, int ld, int shape, int n, KBD_SITE_PARAMS) {
  const int regs = shape == KBD_TMEM_16X256B ? 4 * n : n;
  kbd_cpu_warp *w = kbd_cpu_self();
  /* the destination must not be another load's in flight: the two loads' writes are unordered */
  kbd_cpu_ld_pending_cells(d, ld, regs, "tcgen05.ld", "loads into", KBD_SITE_ARGS);
  kbd_cpu_ts_state *T = kbd_cpu_ts_of(kbd_cpu_tmem_state(w->cta));
  int *nr = &T->nldp[w->id];
  uint32_t at = 0;
  for (int i = 0; i < *nr; ++i) {
    const kbd_cpu_ldp *r = &T->ldp[w->id][i];
    at = r->at + 32u * (uint32_t)r->regs > at ? r->at + 32u * (uint32_t)r->regs : at;
  }
  if (KBD_UNLIKELY(*nr == KBD_CPU_LDP_MAX || at + 32u * (uint32_t)regs > KBD_CPU_LDP_WORDS))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "tcgen05.ld: %d loads (%u registers x 32 lanes) of this warp are already in flight, more than the "
                  "CPU machine tracks (%d loads, %d words) and than a thread's 255 registers hold: "
                  "kbd_hw_tmem_wait_ld first",
                  *nr, at / 32u, KBD_CPU_LDP_MAX, KBD_CPU_LDP_WORDS);
  kbd_cpu_ldp *r = &T->ldp[w->id][(*nr)++];
  r->d = (uint32_t *)d;
  r->ld = ld;
  r->regs = regs;
  r->at = at;
  r->file = kbd_file_;
  r->line = kbd_line_;
  uint32_t *stash = T->stash[w->id] + at;
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < regs; ++j) {
      uint32_t *x = r->d + (size_t)l * (size_t)ld + (size_t)j;
      stash[l * regs + j] = *x;
      *x = KBD_CPU_LD_POISON;
    }
}

/* Hook of tcgen05.wait::ld: the warp's loads complete; a cell written meanwhile is reported, then the values arrive. */
static inline void kbd_cpu_ld_wait(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)w->cta->mma;
  kbd_cpu_ts_state *T = S ? (kbd_cpu_ts_state *)S->ts : NULL;
  if (!T || T->nldp[w->id] == 0) return;
  for (int i = 0; i < T->nldp[w->id]; ++i) {
    const kbd_cpu_ldp *r = &T->ldp[w->id][i];
    const uint32_t *stash = T->stash[w->id] + r->at;
    for (int l = 0; l < 32; ++l)
      for (int j = 0; j < r->regs; ++j) {
        uint32_t *x = r->d + (size_t)l * (size_t)r->ld + (size_t)j;
        if (KBD_UNLIKELY(*x != KBD_CPU_LD_POISON))
          kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                        "tcgen05.wait::ld: lane %d's register %d, which the tcgen05.ld at %s:%d loads into, was "
                        "written before this wait: on the GPU the load's value lands over that write at an unknown "
                        "time (wait first, then write; or load into other registers)",
                        l, j, r->file, r->line);
        *x = stash[l * r->regs + j];
      }
  }
  T->nldp[w->id] = 0;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_TS_H */
