/* kbd/cpu/mma_ts.h - tcgen05.mma with A from Tensor Memory on the CPU machine (twin of ptx/mma_ts.h; emulating
 * sm_100a). kbd/mma_ts.h, docs/design/mma-ts.md.
 *
 * The instruction is the descriptor form's (cpu/mma_umma.h kbd_hw_umma: shape checks, B decoder, numeric
 * contract, completion at the issuing thread's tcgen05.commit); only A differs: every element is read at the issue
 * from the emulated Tensor Memory cell that kbd_tmem_a_pos_of names (kbd/mma_ts_layout.h), the function the store
 * side uses too. At the MMA, per A cell: written in this CTA; its tcgen05.st completed (the storing warp executed
 * tcgen05.wait::st since: the machine keeps each cell's unwaited store, and the wait stamps the cell with the wait's
 * clock); that wait ordered before the issue (the storer's release acquired by the MMA warp) and a
 * tcgen05.fence::after_thread_sync of the MMA warp after that acquire - the rules tcgen05.ld has. The checks of
 * later stores and MMAs against this MMA's A reads are in cpu/tmem_pending.h.
 */
#ifndef KBD_CPU_MMA_TS_H
#define KBD_CPU_MMA_TS_H

#include "../mma_ts_layout.h"
#include "mma_umma.h"

#if KBD_MODE_CPU

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

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_TS_H */
