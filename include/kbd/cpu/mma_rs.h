/* kbd/cpu/mma_rs.h - wgmma with A from registers on the CPU machine (twin of ptx/mma_rs.h; emulating sm_90a,
 * KBD_CPU_ARCH == 90). docs/design/mma.md "A from registers".
 *
 * The instruction is the descriptor form's (cpu/mma_wgmma.h kbd_cpu_wgmma_issue: the same shape checks, B decoder,
 * numeric contract, timing and retirement); only A differs: it is read at the issue from the warp's lanes'
 * registers through the WGMMA_ACC layout function, and the op keeps a copy of those 16 bytes per lane.
 *
 * The A registers of a pending wgmma must not change (PTX ISA: touching them before the wgmma.wait_group that
 * covers it is undefined). The machine cannot watch ordinary stores to a register tile, and after the issue
 * the tile may be out of scope (a loop body that issues and releases), so it never reads the issue's address
 * again on its own. It checks where the library is handed a tile again: kbd_hw_wgmma_a_touch, which kbd_mma_rs
 * runs on its A before the wgmma.fence, compares every byte of that (live) tile that overlaps the A fragment
 * of a wgmma of this warp that is still pending with the copy taken at that wgmma's issue.
 */
#ifndef KBD_CPU_MMA_RS_H
#define KBD_CPU_MMA_RS_H

#include "mma_wgmma.h"

#if KBD_MODE_CPU

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 {d}, {a0..a3}, b-desc, scale-d, ...: the running warp's
 * part. a: the warp's lanes' A fragments, lane l's 4 registers (8 bf16) at (uint32_t *)a + l * lda. */
static inline void kbd_hw_wgmma_rs_bf16(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda,
                                        uint64_t bdesc, int accumulate, KBD_SITE_PARAMS) {
  if (!a) kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "wgmma.mma_async with A in registers: A is NULL");
  kbd_cpu_wgmma_issue(d, ld, kind, idesc, 0, a, lda, bdesc, accumulate, KBD_SITE_ARGS);
}
/* The same for f16 (the machine decodes the type from idesc like any wgmma). */
static inline void kbd_hw_wgmma_rs_f16(void *d, int ld, int kind, uint32_t idesc, const void *a, int lda,
                                       uint64_t bdesc, int accumulate, KBD_SITE_PARAMS) {
  if (!a) kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "wgmma.mma_async with A in registers: A is NULL");
  kbd_cpu_wgmma_issue(d, ld, kind, idesc, 0, a, lda, bdesc, accumulate, KBD_SITE_ARGS);
}

/* The wgmma function kbd_mma_rs calls for A type ta, B's smem major bm and N n (ptx/mma_rs.h: one per type, major
 * and N, which keeps cicc's and ptxas's time per call site down); the machine decodes them from idesc. */
#define kbd_hw_wgmma_rs_fn(ta, bm, n)                                                                                  \
  ((void)(bm), (void)(n), (int)(ta) == KBD_MMA_BF16 ? kbd_hw_wgmma_rs_bf16 : kbd_hw_wgmma_rs_f16)

/* The register tile a (n 32-bit registers per lane at (uint32_t *)a + l * lda, the warp's lanes) is about to
 * be A of new wgmmas: none of its bytes may differ from what a still pending wgmma of this warp read there.
 * The GPU twin packs and pins the registers before wgmma.fence. */
static inline void kbd_hw_wgmma_a_touch(void *a, int lda, int n, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(90, "wgmma.mma_async with A in registers", KBD_SITE_ARGS);
  const kbd_cpu_mma_state *S = kbd_cpu_mma_of(w->cta);
  const kbd_cpu_wgq *wq = &S->wq[w->id];
  const kbd_cpu_wg *g = &S->wg[w->id / 4];
  const int q = w->id & 3;
  for (int num = wq->retired; num < wq->issued; ++num) {
    const kbd_cpu_wgop *op = g->ops[num - g->first];
    if (!op->rs || !op->asnap[q]) continue;
    for (int l = 0; l < 32; ++l) {
      /* addresses as integers: the pending fragment and the new tile are different objects in general */
      const uintptr_t lo = (uintptr_t)a + (uintptr_t)l * (uintptr_t)lda * 4u, hi = lo + (uintptr_t)n * 4u;
      const uintptr_t olo = (uintptr_t)op->areg[q] + (uintptr_t)l * (uintptr_t)op->alda[q] * 4u, ohi = olo + 16u;
      for (uintptr_t x = lo > olo ? lo : olo; x < (hi < ohi ? hi : ohi); ++x) {
        const unsigned char now = ((const unsigned char *)a)[x - (uintptr_t)a];
        const unsigned char then = op->asnap[q][16 * l + (int)(x - olo)];
        if (KBD_LIKELY(now == then)) continue;
        const int e = (int)(x - olo) / 2; /* element of the fragment */
        const kbd_coord c = kbd_layout_wgmma_acc(64, 16, 32 * q + l, e);
        kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                      "register A changed under a pending wgmma: this kbd_mma_rs is handed a register tile whose "
                      "lane %d (warp %d) no longer holds what the wgmma issued at %s:%d read from it as A (element "
                      "%d of that K-step's fragment: row %d, k %d of its 64 x 16 block), and that wgmma is %s. The "
                      "tensor core may read either value: PTX leaves touching the A registers of a wgmma.mma_async "
                      "before the wgmma.wait_group that covers it undefined. Write the tile only after a wait that "
                      "retires the MMA (kbd_mma_wait, or the kbd_mma_release after the next kbd_mma)",
                      l, w->id, op->file, op->line, e, c.row, c.col,
                      num < wq->committed ? "committed and not waited for" : "not even committed");
      }
    }
  }
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_RS_H */
