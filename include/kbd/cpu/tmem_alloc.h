/* kbd/cpu/tmem_alloc.h - Tensor Memory on the CPU machine emulating sm_100a (cpu/mma.h has the map): the
 * cells (allocated at the first tcgen05 use), the rules every tcgen05 instruction shares (warp-collective or
 * single-thread issue, one .cta_group per kernel), tcgen05.alloc / dealloc / relinquish_alloc_permit for one CTA
 * (the pair's collective forms: cpu/mma_pair.h), and which cells a tcgen05.ld / tcgen05.st of a shape reaches.
 */
#ifndef KBD_CPU_TMEM_ALLOC_H
#define KBD_CPU_TMEM_ALLOC_H

#include "mma_state.h"

#if KBD_MODE_CPU

static inline kbd_cpu_mma_state *kbd_cpu_tmem_state(kbd_cpu_cta *cta) {
  kbd_cpu_mma_state *S = kbd_cpu_mma_of(cta);
  if (KBD_UNLIKELY(!S->tm_val)) {
    const size_t cells = (size_t)KBD_TMEM_LANES * KBD_TMEM_COLS;
    S->tm_val = (uint32_t *)calloc(cells, sizeof(uint32_t));
    S->tm_clk = (uint32_t *)calloc(cells, sizeof(uint32_t));
    S->tm_who = (uint16_t *)calloc(cells, sizeof(uint16_t));
    S->tm_rclk = (uint32_t *)calloc(cells, sizeof(uint32_t));
    S->tm_rwho = (uint16_t *)calloc(cells, sizeof(uint16_t));
    S->tm_rclk2 = (uint32_t *)calloc(cells, sizeof(uint32_t));
    S->tm_rwho2 = (uint16_t *)calloc(cells, sizeof(uint16_t));
    S->tm_rdcol = (uint64_t *)calloc(KBD_TMEM_COLS, sizeof(uint64_t));
    if (!S->tm_val || !S->tm_clk || !S->tm_who || !S->tm_rclk || !S->tm_rwho || !S->tm_rclk2 || !S->tm_rwho2 ||
        !S->tm_rdcol) {
      fprintf(stderr, "kbd: out of host memory for Tensor Memory\n");
      abort();
    }
  }
  return S;
}

static inline void kbd_cpu_tcgen05_warp(const kbd_cpu_warp *w, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(kbd_cpu_issuers(w) != KBD_WARP_SIZE))
    kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                  "%s inside %s code: it is .sync.aligned, every thread of the warp executes it (call it from "
                  "warp-uniform code)",
                  what, w->lanes_depth ? "per-lane (KBD_FOR_LANES)" : "elected-lane (KBD_ELECT_ONE)");
}
static inline void kbd_cpu_tcgen05_single(const kbd_cpu_warp *w, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(kbd_cpu_issuers(w) != 1))
    kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                  "%s in warp-uniform code: all 32 threads of warp %d would issue it. Issue it from one thread: "
                  "KBD_ELECT_ONE { ... }",
                  what, w->id);
}

/* Every cta_group-qualified tcgen05 instruction of a block has the same group g (1 or 2). */
static inline void kbd_cpu_tcgen05_group(kbd_cpu_mma_state *S, int g, const char *what, KBD_SITE_PARAMS) {
  if (KBD_LIKELY(S->group == g)) return;
  if (S->group == 0) {
    S->group = g;
    S->group_file = kbd_file_;
    S->group_line = kbd_line_;
    S->group_what = what;
    return;
  }
  kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                "%s (.cta_group::%d) in a kernel whose %s at %s:%d is .cta_group::%d: ptxas rejects a kernel that "
                "mixes single-CTA and CTA-pair tcgen05 instructions (ptx-reference 5.2). A pair kernel uses the "
                "_pair calls (kbd_tmem_alloc_pair, kbd_mma_pair_issue, kbd_mma_pair_commit) for all of them",
                what, g, S->group_what, S->group_file, S->group_line, S->group);
}

/* The allocation holding columns [col, col + ncols), or -1. */
static inline int kbd_cpu_tmem_find(const kbd_cpu_mma_state *S, uint32_t col, uint32_t ncols) {
  for (int i = 0; i < S->nalloc; ++i)
    if (col >= (uint32_t)S->alloc[i].col && col + ncols <= (uint32_t)(S->alloc[i].col + S->alloc[i].ncols)) return i;
  return -1;
}
static inline void kbd_cpu_tmem_inside(const kbd_cpu_mma_state *S, uint32_t col, uint32_t ncols, const char *what,
                                       KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(kbd_cpu_tmem_find(S, col, ncols) < 0)) {
    kbd_text t = KBD_TEXT_INIT;
    for (int i = 0; i < S->nalloc; ++i)
      kbd_text_append(&t, "%s[%d, %d)", i ? ", " : "", S->alloc[i].col, S->alloc[i].col + S->alloc[i].ncols);
    const char *have = S->nalloc ? kbd_cpu_keep(kbd_cpu_self()->cta->L, &t) : "none";
    kbd_cpu_fault(KBD_ERR_BOUNDS, KBD_SITE_ARGS,
                  "%s: Tensor Memory columns [%u, %u) are not inside one allocation of this CTA (allocated: %s)", what,
                  col, col + ncols, have);
  }
}

static inline void kbd_cpu_tmem_describe(const kbd_cpu_warp *w, kbd_text *out) {
  kbd_text_append(out, "%u free Tensor Memory columns (tcgen05.alloc; none were freed)", (unsigned)w->wait_arg);
}

/* The allocation of columns [c, c + ncols) by warp w, and the write of its address to the shared slot (at `off`):
 * the single-CTA alloc's, and each CTA's half of a pair's (cpu/mma_pair.h). */
static inline void kbd_cpu_tmem_take(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t *slot, size_t off, uint32_t c,
                                     uint32_t ncols, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_tmem_alloc *a = &S->alloc[S->nalloc++];
  a->col = (int)c;
  a->ncols = (int)ncols;
  a->warp = w->id;
  a->file = kbd_file_;
  a->line = kbd_line_;
  const kbd_cpu_elem el = {-1, -1, 4};
  kbd_cpu_shadow_write(w, off, 4, 0, what, el, KBD_SITE_ARGS);
  *slot = KBD_TMEM_ADDR(0, c);
}

/* tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], ncols (one warp). First fit at a multiple of
 * ncols; waits while no such range is free (as the hardware does). */
static inline void kbd_hw_tmem_alloc(uint32_t *slot, uint32_t ncols, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "tcgen05.alloc", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, "tcgen05.alloc", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 1, "tcgen05.alloc", KBD_SITE_ARGS);
  if (ncols < KBD_TMEM_MIN_COLS || ncols > KBD_TMEM_COLS || (ncols & (ncols - 1)))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "tcgen05.alloc of %u columns: the count must be a power of two in 32..512 (ptx-reference 5.2)",
                  ncols);
  if (S->relinquished)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "tcgen05.alloc after this CTA gave up its allocation permit (tcgen05.relinquish_alloc_permit at "
                  "%s:%d): a later alloc is undefined behaviour (ptx-reference 5.2)",
                  S->rel_file, S->rel_line);
  const size_t off = kbd_cpu_check_smem(slot, 4, KBD_SITE_ARGS, "tcgen05.alloc (the address slot)");
  for (;;) {
    for (uint32_t c = 0; c + ncols <= KBD_TMEM_COLS; c += ncols) {
      int busy = 0;
      for (int i = 0; i < S->nalloc; ++i)
        busy |= c < (uint32_t)(S->alloc[i].col + S->alloc[i].ncols) && (uint32_t)S->alloc[i].col < c + ncols;
      if (busy) continue;
      kbd_cpu_tmem_take(w, S, slot, off, c, ncols, "tcgen05.alloc", KBD_SITE_ARGS);
      return;
    }
    kbd_cpu_block(S->alloc, ncols, kbd_cpu_tmem_describe, KBD_SITE_ARGS);
  }
}

/* tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols (one warp): exactly one earlier allocation. */
static inline void kbd_hw_tmem_dealloc(uint32_t taddr, uint32_t ncols, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "tcgen05.dealloc", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, "tcgen05.dealloc", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 1, "tcgen05.dealloc", KBD_SITE_ARGS);
  int i = 0;
  while (i < S->nalloc &&
         !(taddr >> 16 == 0 && (taddr & 0xFFFFu) == (uint32_t)S->alloc[i].col && ncols == (uint32_t)S->alloc[i].ncols))
    ++i;
  if (i == S->nalloc)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "tcgen05.dealloc of %u columns at lane %u, column %u: no allocation of this CTA is exactly that "
                  "(tcgen05.dealloc frees what one tcgen05.alloc returned)",
                  ncols, taddr >> 16, taddr & 0xFFFFu);
  S->alloc[i] = S->alloc[--S->nalloc];
  kbd_cpu_wake_waiters(w->cta, S->alloc);
}

/* tcgen05.relinquish_alloc_permit (one warp): the CTA will not allocate again. */
static inline void kbd_hw_tmem_relinquish(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "tcgen05.relinquish_alloc_permit", KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, "tcgen05.relinquish_alloc_permit", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 1, "tcgen05.relinquish_alloc_permit", KBD_SITE_ARGS);
  if (!S->relinquished) {
    S->relinquished = 1;
    S->rel_file = kbd_file_;
    S->rel_line = kbd_line_;
  }
}

/* ---- addressing of tcgen05.ld / tcgen05.st ----------------------------------------------------------------------- */

/* The lanes and columns a tcgen05.ld/st of this shape reaches, checked against the warp's quarter and the
 * allocations. Returns the number of registers per thread. */
static inline int kbd_cpu_tmem_access(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t taddr, int shape, int n,
                                      const char *what, KBD_SITE_PARAMS) {
  const uint32_t lane = taddr >> 16, col = taddr & 0xFFFFu, q = (uint32_t)(w->id & 3);
  uint32_t nl, nc;
  int regs;
  if (shape == KBD_TMEM_32X32B && n >= 1 && n <= 128 && !(n & (n - 1)))
    nl = 32, nc = (uint32_t)n, regs = n;
  else if (shape == KBD_TMEM_16X256B && n >= 1 && n <= 32 && !(n & (n - 1)))
    nl = 16, nc = 8u * (uint32_t)n, regs = 4 * n;
  else
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: shape %d with .x%d is not a tcgen05 shape kbd emulates (KBD_TMEM_32X32B .x1..x128, "
                  "KBD_TMEM_16X256B .x1..x32, powers of two; ptx-reference 5.3)",
                  what, shape, n);
  if (lane < 32 * q || lane + nl > 32 * q + 32)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s of lanes %u..%u by warp %d: warp w%%4 = %u reaches lanes %u..%u only (ptx-reference 5.3)", what,
                  lane, lane + nl - 1, w->id, q, 32 * q, 32 * q + 31);
  kbd_cpu_tmem_inside(S, col, nc, what, KBD_SITE_ARGS);
  return regs;
}
/* lane l's register j of a tcgen05.ld/st: its Tensor Memory cell. 16x256b gives each 16-lane x 8-column block
 * the mma.sync C fragment: the one definition in kbd/layout.h (kbd_layout_c16x8_), which WGMMA_ACC repeats -
 * that is why an M = 64 accumulator reads straight into a WGMMA_ACC view. */
static inline size_t kbd_cpu_tmem_reg(uint32_t taddr, int shape, int l, int j) {
  const uint32_t lane = taddr >> 16, col = taddr & 0xFFFFu;
  if (shape == KBD_TMEM_32X32B) return (size_t)(lane + (uint32_t)l) * KBD_TMEM_COLS + col + (uint32_t)j;
  const kbd_coord c = kbd_layout_c16x8_((unsigned)l, (unsigned)j % 4u);
  return (size_t)(lane + (uint32_t)c.row) * KBD_TMEM_COLS + col + 8u * ((uint32_t)j / 4u) + (uint32_t)c.col;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMEM_ALLOC_H */
