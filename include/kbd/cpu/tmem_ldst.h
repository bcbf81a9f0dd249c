/* kbd/cpu/tmem_ldst.h - tcgen05.ld, tcgen05.st, their waits and the tcgen05 fences on the CPU machine
 * emulating sm_100a (twins in ptx/mma.h; cpu/mma.h has the map). Each Tensor Memory cell keeps its writer (warp,
 * and whether an MMA commit wrote it) and clock, and its last readers, for the check "the reader acquired the
 * writer's release and ran tcgen05.fence::after_thread_sync after that" (ptx-reference 5.8).
 */
#ifndef KBD_CPU_TMEM_LDST_H
#define KBD_CPU_TMEM_LDST_H

#include "tmem_pending.h"

#if KBD_MODE_CPU

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

/* ---- tcgen05.ld, tcgen05.st and their waits ---------------------------------------------------------------------- */

/* tcgen05.ld.sync.aligned.shape.xn.b32 (one warp). */
static inline void kbd_hw_tmem_ld(void *d, int ld, uint32_t taddr, int shape, int n, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(100, "tcgen05.ld", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, "tcgen05.ld", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  const int regs = kbd_cpu_tmem_access(w, S, taddr, shape, n, "tcgen05.ld", KBD_SITE_ARGS);
  const uint32_t me = (uint32_t)w->gid, base = cta->sh.base, now = w->clk[w->gid];
  const uint32_t *snap = S->fsnap[w->id];
  const int rb = cta->rank * KBD_CPU_MAX_WARPS;
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < regs; ++j) {
      const size_t x = kbd_cpu_tmem_reg(taddr, shape, l, j);
      const uint32_t c = S->tm_clk[x], who = S->tm_who[x] & 0x7FFFu, mma = S->tm_who[x] & KBD_CPU_TMEM_MMA;
      if (KBD_UNLIKELY(c < base))
        kbd_cpu_fault(KBD_ERR_POISON, KBD_SITE_ARGS,
                      "tcgen05.ld reads Tensor Memory lane %zu, column %zu, which nothing wrote in this CTA",
                      x / KBD_TMEM_COLS, x % KBD_TMEM_COLS);
      if (KBD_UNLIKELY(cta->L->race_check && (who != me || mma))) {
        char them[KBD_CPU_WHO_CAP]; /* named only when a fault is reported: this loop runs for every element read */
        const int local = (int)who >= rb && (int)who < rb + KBD_CPU_MAX_WARPS;
        const int unacquired = who != me && c > w->clk[who];
        const int unfenced = local && (who != me ? snap[who - (uint32_t)rb] < c : snap[who - (uint32_t)rb] <= c);
        if (KBD_UNLIKELY(unacquired || unfenced)) kbd_cpu_who(cta->G, (int)who, them, sizeof them);
        if (unacquired)
          kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                        "tcgen05.ld of Tensor Memory lane %zu, column %zu, which %s %s: this warp has not waited for "
                        "%s (an mbarrier wait, then tcgen05.fence::after_thread_sync)",
                        x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, mma ? "an MMA committed by" : "was written by", them,
                        mma ? "the phase that commit arrives on" : "that write");
        /* acquired, but the fence::after_thread_sync that orders the ld after the wait is missing; for the
         * committing warp itself: no fence since its commit */
        if (unfenced)
          kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                        "tcgen05.ld of Tensor Memory lane %zu, column %zu, which %s %s, without "
                        "tcgen05.fence::after_thread_sync after the wait that acquired it (ptx-reference 5.8)",
                        x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, mma ? "an MMA committed by" : "was written by", them);
      }
      const int pend = kbd_cpu_ts_pending_cell(S, x);
      if (KBD_UNLIKELY(pend && (uint32_t)pend != me + 1)) {
        char them[KBD_CPU_WHO_CAP];
        kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                      "tcgen05.ld of Tensor Memory lane %zu, column %zu, whose tcgen05.st by %s has not completed: "
                      "that warp has executed no tcgen05.wait::st since (kbd_acc_release after kbd_acc_store_async, "
                      "or kbd_tmem_a_ready, waits for its stores before the arrive)",
                      x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, kbd_cpu_who(cta->G, pend - 1, them, sizeof them));
      }
      ((uint32_t *)d)[(size_t)l * (size_t)ld + (size_t)j] = S->tm_val[x];
      const uint32_t prc = S->tm_rclk[x], pwho = S->tm_rwho[x];
      if (prc >= base && pwho != me && prc > w->clk[pwho]) { /* a concurrent earlier read: keep it too */
        S->tm_rclk2[x] = prc;
        S->tm_rwho2[x] = (uint16_t)pwho;
      }
      S->tm_rclk[x] = now;
      S->tm_rwho[x] = (uint16_t)me;
    }
  const uint64_t seq = ++S->rdseq;
  const uint32_t col0 = taddr & 0xFFFFu, ncols = shape == KBD_TMEM_32X32B ? (uint32_t)regs : 8u * (uint32_t)(regs / 4);
  for (uint32_t c = col0; c < col0 + ncols; ++c)
    S->tm_rdcol[c] = seq;
  kbd_cpu_ld_issue(d, ld, shape, n, KBD_SITE_ARGS); /* in flight until tcgen05.wait::ld (cpu/mma_ts.h) */
}

/* A tcgen05.st over cell x must come after the cell's last read (tcgen05.ld) and last write (a tcgen05.st, or an
 * MMA's D at its commit) by another warp: that warp's wait::ld / wait::st or commit, fence::before_thread_sync and an
 * arrive, then this warp's wait and fence::after_thread_sync (ptx-reference 5.8). Otherwise the store may land before
 * that read (which then sees the new value) or under that write. The read side matters where two warpgroups share
 * lanes: an epilogue that reads O without waiting for the last MMA, then a correction warpgroup that stores over it,
 * would otherwise hide the early read from the MMA's own check (kbd_cpu_umma_check_readers sees the last reader). */
static inline void kbd_cpu_tmem_st_order(kbd_cpu_warp *w, const kbd_cpu_mma_state *S, size_t x, KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  const uint32_t me = (uint32_t)w->gid, base = cta->sh.base;
  const uint32_t *snap = S->fsnap[w->id];
  const int rb = cta->rank * KBD_CPU_MAX_WARPS;
  for (int k = 0; k < 2; ++k) {
    const uint32_t rc = k ? S->tm_rclk2[x] : S->tm_rclk[x], rwho = k ? S->tm_rwho2[x] : S->tm_rwho[x];
    if (rc < base || rwho == me) continue;
    const int local = (int)rwho >= rb && (int)rwho < rb + KBD_CPU_MAX_WARPS;
    const int unordered = rc > w->clk[rwho], unfenced = local && snap[rwho - (uint32_t)rb] < rc;
    if (KBD_UNLIKELY(unordered || unfenced)) {
      char them[KBD_CPU_WHO_CAP];
      kbd_cpu_who(cta->G, (int)rwho, them, sizeof them);
      kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                    "tcgen05.st over Tensor Memory lane %zu, column %zu, which %s read (tcgen05.ld) %s: the store may "
                    "land before that read. The reader releases the cells (kbd_acc_release: "
                    "tcgen05.fence::before_thread_sync, then an mbarrier arrive) and this warp waits for that phase",
                    x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, them,
                    unordered ? "with nothing ordering the read before this store"
                              : "and no tcgen05.fence::after_thread_sync followed the wait that ordered it");
    }
  }
  const uint32_t c = S->tm_clk[x], who = S->tm_who[x] & 0x7FFFu, mma = S->tm_who[x] & KBD_CPU_TMEM_MMA;
  if (c >= base && (who != me || mma)) {
    const int local = (int)who >= rb && (int)who < rb + KBD_CPU_MAX_WARPS;
    const int unacquired = who != me && c > w->clk[who];
    const int unfenced = local && (who != me ? snap[who - (uint32_t)rb] < c : snap[who - (uint32_t)rb] <= c);
    if (KBD_UNLIKELY(unacquired || unfenced)) {
      char them[KBD_CPU_WHO_CAP];
      kbd_cpu_who(cta->G, (int)who, them, sizeof them);
      kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                    "tcgen05.st over Tensor Memory lane %zu, column %zu, which %s %s %s: the two writes are unordered "
                    "(an mbarrier wait, then tcgen05.fence::after_thread_sync)",
                    x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, mma ? "an MMA committed by" : "was written by", them,
                    unacquired ? "and this warp has not waited for that write"
                               : "without tcgen05.fence::after_thread_sync after the wait that acquired it");
    }
  }
}

/* tcgen05.st.sync.aligned.shape.xn.b32 (one warp). */
static inline void kbd_hw_tmem_st(uint32_t taddr, const void *s, int ld, int shape, int n, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(100, "tcgen05.st", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, "tcgen05.st", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  const int regs = kbd_cpu_tmem_access(w, S, taddr, shape, n, "tcgen05.st", KBD_SITE_ARGS);
  kbd_cpu_ld_pending_cells(s, ld, regs, "tcgen05.st", "reads", KBD_SITE_ARGS); /* not a load's registers in flight */
  const uint32_t now = w->clk[w->gid];
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < regs; ++j) {
      const size_t x = kbd_cpu_tmem_reg(taddr, shape, l, j);
      if (KBD_UNLIKELY(cta->L->race_check)) kbd_cpu_tmem_st_order(w, S, x, KBD_SITE_ARGS);
      S->tm_val[x] = ((const uint32_t *)s)[(size_t)l * (size_t)ld + (size_t)j];
      S->tm_clk[x] = now;
      S->tm_who[x] = (uint16_t)w->gid;
    }
  kbd_cpu_ts_st(w, S, taddr, shape, regs, KBD_SITE_ARGS); /* pending until wait::st; not over a pending MMA's A */
}

static inline void kbd_hw_tmem_wait_ld(KBD_SITE_PARAMS) {
  kbd_cpu_mma_arch(100, "tcgen05.wait::ld", KBD_SITE_ARGS);
  kbd_cpu_ld_wait(KBD_SITE_ARGS); /* the loads' values arrive in their registers now */
}
static inline void kbd_hw_tmem_wait_st(KBD_SITE_PARAMS) {
  kbd_cpu_mma_arch(100, "tcgen05.wait::st", KBD_SITE_ARGS);
  kbd_cpu_warp *w = kbd_cpu_self();
  if (w->cta->mma) kbd_cpu_ts_wait_st(w, (kbd_cpu_mma_state *)w->cta->mma);
}

/* ---- tcgen05 fences ---------------------------------------------------------------------------------------------- */

static inline void kbd_hw_tcgen05_fence_before(KBD_SITE_PARAMS) {
  kbd_cpu_mma_arch(100, "tcgen05.fence::before_thread_sync", KBD_SITE_ARGS);
}
/* fence::after_thread_sync: the warp's tcgen05 operations after it are ordered after what it acquired before
 * it (ptx-reference 5.8). The machine keeps the warp's clock at the fence: a tcgen05.ld needs the writer's
 * stamp covered by THAT clock, not only by the warp's current one. */
static inline void kbd_hw_tcgen05_fence_after(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "tcgen05.fence::after_thread_sync", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_mma_of(w->cta);
  const uint32_t *c = w->clk + w->cta->rank * KBD_CPU_MAX_WARPS;
  for (int u = 0; u < w->cta->nwarps; ++u)
    S->fsnap[w->id][u] = c[u];
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMEM_LDST_H */
