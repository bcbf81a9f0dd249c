/* kbd/cpu/mma_pair.h - CTA-pair tcgen05 instructions (.cta_group::2) on the CPU machine emulating sm_100a (twin of
 * ptx/mma_pair.h; kbd/mma_pair.h, docs/design/cta-pair.md).
 *
 * A pair is the two CTAs of a cluster whose ranks differ in bit 0. The MMA is the single-CTA one's (cpu/mma_umma.h:
 * descriptor decoders, numeric contract, completion at the issuing thread's commit) with the operands and the
 * result split between the pair: A rows 0..M/2-1 and B rows 0..N/2-1 come from the even CTA's shared memory, A
 * rows M/2..M-1 and B rows N/2..N-1 from the odd CTA's, through the same descriptors (the same offsets), and D rows
 * 0..M/2-1 land in the even CTA's Tensor Memory, rows M/2..M-1 in the odd CTA's. M = 256: each CTA's 128 rows at
 * lanes 0..127 (Layout A). M = 128 (Layout B): each CTA's 64 rows folded, columns 0..N/2-1 at lanes 0..63 and
 * columns N/2..N-1 at lanes 64..127, both halves at the D address's columns 0..N/2-1 (kbd_cpu_pair_cell).
 * Every single-CTA check applies to each CTA's part: operand bytes delivered and ordered before the issuing
 * thread (the odd CTA's TMA loads complete on the even CTA's barrier, which the issuer waits on), generic stores
 * fenced, Tensor Memory readers ordered before the MMA, D inside an allocation of each CTA. Added here:
 *   - one .cta_group per kernel (also in cpu/tmem_alloc.h's single-CTA twins): ptxas rejects a mix;
 *   - the MMA is issued from the even CTA (kbd's rule: its Tensor Memory holds D's first half) while the odd CTA
 *     runs, and D's address is lane 0 (both layouts fill all 128 lanes);
 *   - the collective alloc: the first of the pair's two warps waits for the other's (a deadlock report names
 *     both), the two column counts agree, and both CTAs get the same columns;
 *   - a dealloc while a pair MMA that writes those columns is not complete, and a completion after the odd
 *     CTA freed its half.
 * The collective dealloc does not wait for the peer's: each CTA frees its own half, and a CTA that never frees
 * is the single-CTA leak report at its exit.
 */
#ifndef KBD_CPU_MMA_PAIR_H
#define KBD_CPU_MMA_PAIR_H

#include "cluster.h"
#include "mma_umma.h"
#include "tma.h"

#if KBD_MODE_CPU

/* The other CTA of w's pair. */
static inline kbd_cpu_cta *kbd_cpu_pair_peer(kbd_cpu_warp *w, const char *what, KBD_SITE_PARAMS) {
  const kbd_cpu_group *G = w->cta->G;
  const int r = w->cta->rank ^ 1;
  if (KBD_UNLIKELY(r >= G->nctas))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s (.cta_group::2) in CTA %d of a cluster of %d CTA(s): a CTA pair is cluster ranks 2k and 2k + 1, "
                  "so the cluster needs an even number of CTAs (kbd_cfg_cluster)",
                  what, w->cta->rank, G->nctas);
  return G->ctas[r];
}

/* ---- Tensor Memory allocation -------------------------------------------------------------------------------- */

static inline void kbd_cpu_pair_alloc_describe(const kbd_cpu_warp *w, kbd_text *out) {
  kbd_text_append(out,
                  "the pair's tcgen05.alloc.cta_group::2 of %u columns: a warp of cluster CTA %d (the pair peer) "
                  "must issue it too (one warp in each CTA, collectively)",
                  (unsigned)w->wait_arg, w->cta->rank ^ 1);
}

/* The first column c (a multiple of ncols) free in both CTAs, or -1. */
static inline int kbd_cpu_pair_free_col(const kbd_cpu_mma_state *A, const kbd_cpu_mma_state *B, uint32_t ncols) {
  for (uint32_t c = 0; c + ncols <= KBD_TMEM_COLS; c += ncols) {
    int busy = 0;
    for (int i = 0; i < A->nalloc; ++i)
      busy |= c < (uint32_t)(A->alloc[i].col + A->alloc[i].ncols) && (uint32_t)A->alloc[i].col < c + ncols;
    for (int i = 0; i < B->nalloc; ++i)
      busy |= c < (uint32_t)(B->alloc[i].col + B->alloc[i].ncols) && (uint32_t)B->alloc[i].col < c + ncols;
    if (!busy) return (int)c;
  }
  return -1;
}

/* tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [slot], ncols (one warp in each CTA of the pair). The
 * rendezvous lives in the even CTA's state: the first warp registers and blocks, the second picks the columns
 * (free in both CTAs), takes its half and wakes the first, which takes the same columns. */
static inline void kbd_hw_tmem_alloc_pair(uint32_t *slot, uint32_t ncols, KBD_SITE_PARAMS) {
  const char *what = "tcgen05.alloc.cta_group::2";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, what, KBD_SITE_ARGS);
  kbd_cpu_cta *peer = kbd_cpu_pair_peer(w, what, KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta), *P = kbd_cpu_tmem_state(peer);
  kbd_cpu_mma_state *L = (w->cta->rank & 1) ? P : S; /* the rendezvous */
  kbd_cpu_tcgen05_group(S, 2, what, KBD_SITE_ARGS);
  if (ncols < KBD_TMEM_MIN_COLS || ncols > KBD_TMEM_COLS || (ncols & (ncols - 1)))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s of %u columns: the count must be a power of two in 32..512 (ptx-reference 5.2)", what, ncols);
  if (S->relinquished)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s after this CTA gave up its allocation permit (tcgen05.relinquish_alloc_permit at %s:%d): a "
                  "later alloc is undefined behaviour (ptx-reference 5.2)",
                  what, S->rel_file, S->rel_line);
  const size_t off = kbd_cpu_check_smem(slot, 4, KBD_SITE_ARGS, "tcgen05.alloc.cta_group::2 (the address slot)");
  const int me = w->cta->rank + 1;
  while (L->pa_rank && L->pa_col != UINT32_MAX) /* the previous rendezvous is not picked up yet */
    kbd_cpu_block(&L->pa_rank, ncols, kbd_cpu_pair_alloc_describe, KBD_SITE_ARGS);
  if (L->pa_rank == me)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s issued by warp %d while warp %d of the same CTA already waits in one (%s:%d): the collective "
                  "is one warp in EACH CTA of the pair",
                  what, w->id, L->pa_warp, L->pa_file, L->pa_line);
  if (L->pa_rank == 0) { /* first: wait for the peer's warp */
    L->pa_rank = me;
    L->pa_warp = w->id;
    L->pa_ncols = ncols;
    L->pa_col = UINT32_MAX;
    L->pa_file = kbd_file_;
    L->pa_line = kbd_line_;
    while (L->pa_col == UINT32_MAX)
      kbd_cpu_block(&L->pa_rank, ncols, kbd_cpu_pair_alloc_describe, KBD_SITE_ARGS);
    const uint32_t c = L->pa_col;
    L->pa_rank = 0;
    L->pa_col = UINT32_MAX;
    kbd_cpu_tmem_take(w, S, slot, off, c, ncols, what, KBD_SITE_ARGS);
    kbd_cpu_wake_waiters(peer, &L->pa_rank);
    kbd_cpu_wake_waiters(w->cta, &L->pa_rank);
    return;
  }
  if (L->pa_ncols != ncols)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s of %u columns, but the pair peer's warp asked for %u at %s:%d: both warps of the collective "
                  "allocate the same columns",
                  what, ncols, L->pa_ncols, L->pa_file, L->pa_line);
  int c;
  while ((c = kbd_cpu_pair_free_col(S, P, ncols)) < 0)
    kbd_cpu_block(S->alloc, ncols, kbd_cpu_tmem_describe, KBD_SITE_ARGS);
  kbd_cpu_tmem_take(w, S, slot, off, (uint32_t)c, ncols, what, KBD_SITE_ARGS);
  L->pa_col = (uint32_t)c;
  kbd_cpu_wake_waiters(peer, &L->pa_rank);
}

/* A pair MMA not yet complete that writes columns [col, col + ncols) of CTA `cta`, or NULL. The MMAs wait in the
 * even CTA's queues (its thread issues them). */
static inline const kbd_cpu_umma *kbd_cpu_pair_pending(kbd_cpu_cta *cta, kbd_cpu_cta *even, uint32_t col,
                                                       uint32_t ncols) {
  const kbd_cpu_mma_state *L = (const kbd_cpu_mma_state *)even->mma;
  if (!L || L->base != even->sh.base) return NULL;
  for (int wi = 0; wi < KBD_CPU_MAX_WARPS; ++wi)
    for (int i = 0; i < L->un[wi]; ++i) {
      const kbd_cpu_umma *u = L->uq[wi][i];
      if (u->pair && (cta == even || u->pair == cta) && u->col < col + ncols &&
          col < u->col + (uint32_t)kbd_cpu_pair_cols(u))
        return u;
    }
  return NULL;
}

/* tcgen05.dealloc.cta_group::2.sync.aligned.b32 taddr, ncols (one warp in each CTA): this CTA's half. */
static inline void kbd_hw_tmem_dealloc_pair(uint32_t taddr, uint32_t ncols, KBD_SITE_PARAMS) {
  const char *what = "tcgen05.dealloc.cta_group::2";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, what, KBD_SITE_ARGS);
  kbd_cpu_cta *peer = kbd_cpu_pair_peer(w, what, KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 2, what, KBD_SITE_ARGS);
  int i = 0;
  while (i < S->nalloc &&
         !(taddr >> 16 == 0 && (taddr & 0xFFFFu) == (uint32_t)S->alloc[i].col && ncols == (uint32_t)S->alloc[i].ncols))
    ++i;
  if (i == S->nalloc)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s of %u columns at lane %u, column %u: no allocation of this CTA is exactly that (dealloc frees "
                  "what one tcgen05.alloc.cta_group::2 returned)",
                  what, ncols, taddr >> 16, taddr & 0xFFFFu);
  const kbd_cpu_umma *u = kbd_cpu_pair_pending(w->cta, (w->cta->rank & 1) ? peer : w->cta, taddr & 0xFFFFu, ncols);
  if (u)
    kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                  "%s frees Tensor Memory columns [%u, %u) of cluster CTA %d while the pair MMA issued at %s:%d, which "
                  "writes them, is not complete: commit it, wait for the commit in both CTAs and meet at a cluster "
                  "barrier before either CTA frees (ptx-reference 5.2)",
                  what, taddr & 0xFFFFu, (taddr & 0xFFFFu) + ncols, w->cta->rank, u->file, u->line);
  S->alloc[i] = S->alloc[--S->nalloc];
  kbd_cpu_wake_waiters(w->cta, S->alloc);
  if (peer->mma) kbd_cpu_wake_waiters(peer, ((kbd_cpu_mma_state *)peer->mma)->alloc);
}

/* tcgen05.relinquish_alloc_permit.cta_group::2 (one warp in each CTA): this CTA allocates no more. */
static inline void kbd_hw_tmem_relinquish_pair(KBD_SITE_PARAMS) {
  const char *what = "tcgen05.relinquish_alloc_permit.cta_group::2";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_warp(w, what, KBD_SITE_ARGS);
  (void)kbd_cpu_pair_peer(w, what, KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(w->cta);
  kbd_cpu_tcgen05_group(S, 2, what, KBD_SITE_ARGS);
  if (!S->relinquished) {
    S->relinquished = 1;
    S->rel_file = kbd_file_;
    S->rel_line = kbd_line_;
  }
}

/* ---- the MMA ------------------------------------------------------------------------------------------------- */

/* tcgen05.mma.cta_group::2.kind::K [dtmem], adesc, bdesc, idesc, accumulate (one thread of the even CTA). */
static inline void kbd_hw_umma_pair(uint32_t dtmem, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc,
                                    int accumulate, KBD_SITE_PARAMS) {
  const char *what = "tcgen05.mma.cta_group::2";
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(100, what, KBD_SITE_ARGS);
  kbd_cpu_tcgen05_single(w, what, KBD_SITE_ARGS);
  kbd_cpu_cta *peer = kbd_cpu_pair_peer(w, what, KBD_SITE_ARGS);
  if (cta->rank & 1)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s issued in cluster CTA %d, the odd CTA of its pair: kbd issues a pair MMA from the even CTA "
                  "(rank %d), whose Tensor Memory receives D's first half (test kbd_cta_pair_leader())",
                  what, cta->rank, cta->rank ^ 1);
  kbd_cpu_dsmem_reachable(w, peer, what, KBD_SITE_ARGS);
  const kbd_cpu_mma_shape s = kbd_cpu_mma_shape_of_g(KBD_MMA_SM100, kind, idesc, 2, what, KBD_SITE_ARGS);
  const char *why = kbd_umma_desc_check(adesc, s.amaj, s.aes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: A descriptor 0x%016llx: %s", what, (unsigned long long)adesc,
                  why);
  why = kbd_umma_desc_check(bdesc, s.bmaj, s.bes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: B descriptor 0x%016llx: %s", what, (unsigned long long)bdesc,
                  why);
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta), *P = kbd_cpu_tmem_state(peer);
  kbd_cpu_tcgen05_group(S, 2, what, KBD_SITE_ARGS);
  const uint32_t lane = dtmem >> 16, col = dtmem & 0xFFFFu;
  if (lane != 0)
    kbd_cpu_fault(
        KBD_ERR_INVALID, KBD_SITE_ARGS, "%s M = %d: the D address's lane is %u; it must be 0 (%s)", what, s.m, lane,
        s.m == 256 ? "Layout A: row r of each CTA's half at lane r"
                   : "Layout B: each CTA's 64 rows at lanes 0..63 and again at 64..127, one column half each");
  /* Tensor Memory columns of each CTA's half: N (Layout A), N/2 (Layout B's fold) */
  const int hn = s.n / 2, dcols = s.m == 256 ? s.n : hn, hm = s.m / 2;
  kbd_cpu_tmem_inside(S, col, (uint32_t)dcols, "tcgen05.mma.cta_group::2 (D, this CTA's half)", KBD_SITE_ARGS);
  kbd_cpu_tmem_inside(P, col, (uint32_t)dcols, "tcgen05.mma.cta_group::2 (D, the odd CTA's half)", KBD_SITE_ARGS);
  if (cta->L->race_check) {
    kbd_cpu_umma_check_readers_in(w, S, cta, S, lane, col, 128, dcols, KBD_SITE_ARGS);
    kbd_cpu_umma_check_readers_in(w, S, peer, P, lane, col, 128, dcols, KBD_SITE_ARGS);
  }
  kbd_cpu_prof_mma(kbd_cpu_prof_type(s.ta), s.m, s.n, s.kel);
  kbd_cpu_umma *u = kbd_cpu_umma_alloc(&s);
  u->pair = peer;
  kbd_cpu_mma_operand(cta, w, KBD_MMA_SM100, adesc, s.ta, s.amaj, 0, hm, s.kel, s.nega, S->sa, &u->ch,
                      "tcgen05.mma.cta_group::2 (operand A, this CTA's rows)", KBD_SITE_ARGS);
  kbd_cpu_mma_operand(peer, w, KBD_MMA_SM100, adesc, s.ta, s.amaj, 0, hm, s.kel, s.nega, S->sa + hm * s.kel, &u->pch,
                      "tcgen05.mma.cta_group::2 (operand A, the odd CTA's rows)", KBD_SITE_ARGS);
  kbd_cpu_mma_operand(cta, w, KBD_MMA_SM100, bdesc, s.tb, s.bmaj, 0, hn, s.kel, s.negb, S->sb, &u->ch,
                      "tcgen05.mma.cta_group::2 (operand B, this CTA's rows)", KBD_SITE_ARGS);
  kbd_cpu_mma_operand(peer, w, KBD_MMA_SM100, bdesc, s.tb, s.bmaj, 0, hn, s.kel, s.negb, S->sb + hn * s.kel, &u->pch,
                      "tcgen05.mma.cta_group::2 (operand B, the odd CTA's rows)", KBD_SITE_ARGS);
  kbd_cpu_umma_finish(w, S, u, &s, lane, col, accumulate, KBD_SITE_ARGS);
}

/* tcgen05.commit.cta_group::2 ... .multicast::cluster [bar], mask (one thread). */
static inline void kbd_hw_umma_commit_pair(uint64_t *bar, uint16_t mask, KBD_SITE_PARAMS) {
  kbd_cpu_umma_commit_mc_g(bar, mask, 2, "tcgen05.commit.cta_group::2", KBD_SITE_ARGS);
}

/* the 32-bit form: the barrier at shared address addr (cpu/mbar.h, kbd_cpu_mbar_at) */
static inline void kbd_hw_umma_commit_pair_at(uint32_t addr, uint16_t mask, KBD_SITE_PARAMS) {
  kbd_hw_umma_commit_pair(kbd_cpu_mbar_at(addr, "tcgen05.commit.cta_group::2", KBD_SITE_ARGS), mask, KBD_SITE_ARGS);
}

/* ---- TMA into a pair ------------------------------------------------------------------------------------------ */

/* cp.async.bulk.tensor ... .cta_group::2: one box into this CTA's shared memory, completing its bytes on the
 * barrier at bar's offset in the even CTA of the pair. */
static inline void kbd_hw_tma_load_pair(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle,
                                        const kbd_tensor_map *map, uint64_t *bar, int rank, int32_t c0, int32_t c1,
                                        int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  const char *what = kbd_cpu_tma_name(KBD_CPU_TN_LOAD_PAIR, rank, 0);
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(100, "cp.async.bulk.tensor .cta_group::2", KBD_SITE_ARGS);
  kbd_cpu_cta *peer = kbd_cpu_pair_peer(w, what, KBD_SITE_ARGS);
  kbd_cpu_cta *even = (w->cta->rank & 1) ? peer : w->cta;
  const int32_t c[5] = {c0, c1, c2, c3, c4};
  const uint32_t bytes = line_bytes * lines;
  const size_t off = kbd_cpu_tma_load_check(w, dst, line_bytes, lines, swizzle, map, rank, c,
                                            KBD_CPU_TMA_WHAT(KBD_CPU_TN_LOAD_PAIR, rank), KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_peer_mbar(w, even, bar, what, KBD_SITE_ARGS);
  kbd_cpu_copy_issue_to(w->cta, even, w, m, off, bytes, map, kbd_cpu_tma_land, c, what, KBD_SITE_ARGS);
  kbd_cpu_prof_tma(0, bytes);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_PAIR_H */
