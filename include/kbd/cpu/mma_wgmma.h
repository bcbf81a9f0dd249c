/* kbd/cpu/mma_wgmma.h - wgmma on the CPU machine emulating sm_90a (KBD_CPU_ARCH == 90; twin of ptx/mma.h's
 * wgmma; cpu/mma.h has the map): the issue by each warp of a warpgroup (its 16 rows of the m64 block; B decoded
 * once for the warpgroup), wgmma.commit_group, and wgmma.wait_group, which retires the covered groups and writes
 * their D into the warps' accumulator registers. A from registers: cpu/mma_rs.h.
 */
#ifndef KBD_CPU_MMA_WGMMA_H
#define KBD_CPU_MMA_WGMMA_H

#include "mma_dot.h"

#if KBD_MODE_CPU

/* The WGMMA_ACC map of kbd_cpu_mma_state for N = n (rebuilt when N changes). */
static inline const int32_t *kbd_cpu_wgacc_map(kbd_cpu_mma_state *S, int n) {
  if (S->accmap_n != n) {
    free(S->accmap);
    S->accmap = (int32_t *)malloc(sizeof(int32_t) * 4u * 32u * (size_t)(n / 2));
    if (!S->accmap) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
    for (int q = 0; q < 4; ++q)
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < n / 2; ++i) {
          const kbd_coord c = kbd_layout_wgmma_acc(64, n, 32 * q + l, i);
          S->accmap[(q * 32 + l) * (n / 2) + i] = (c.row - 16 * q) * n + c.col;
        }
    S->accmap_n = n;
  }
  return S->accmap;
}

static inline void kbd_cpu_wgmma_describe(const kbd_cpu_warp *w, kbd_text *out) {
  const kbd_cpu_mma_state *S = (const kbd_cpu_mma_state *)w->cta->mma;
  const kbd_cpu_wg *g = &S->wg[w->id / 4];
  const int i = (int)w->wait_arg - g->first;
  if (i < 0 || i >= g->n) {
    kbd_text_puts(out, "a wgmma of its warpgroup");
    return;
  }
  const kbd_cpu_wgop *op = g->ops[i];
  kbd_text_append(out,
                  "the wgmma issued at %s:%d to be issued by every warp of its warpgroup (wgmma.wait_group): warp(s)",
                  op->file, op->line);
  for (int q = 0; q < 4; ++q)
    if (!(op->mask & (1u << q))) kbd_text_append(out, " %d", (w->id & ~3) + q);
  kbd_text_puts(out, " have not issued it");
}

static inline void kbd_cpu_wgmma_need_wg(kbd_cpu_warp *w, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY((w->id | 3) >= w->cta->nwarps))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: warp %d is in warpgroup %d, which this %d-warp block does not complete (a wgmma is issued by "
                  "the 4 warps of a warpgroup)",
                  what, w->id, w->id / 4, w->cta->nwarps);
}

/* wgmma.fence.sync.aligned: orders the warp's register accesses before the next wgmma. */
static inline void kbd_hw_wgmma_fence(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(90, "wgmma.fence", KBD_SITE_ARGS);
  kbd_cpu_check_collective(w, "wgmma.fence", KBD_SITE_ARGS);
}

/* A of one wgmma from registers: lane l's 8 16-bit elements at areg + l * alda * 4 bytes (element i in bytes
 * 2i, 2i+1: the low half of 32-bit register i/2 first, as the GPU packs them) into out[r][k], r = the row in
 * the warp's 16, through the one WGMMA_ACC layout function: the 16-bit A fragment of a 64 x 16 K-step is the
 * WGMMA_ACC fragment of a 64 x 16 tile (ptx-reference 4.3, 4.4), which is why KBD_ACC_TILE is the A operand. */
static inline void kbd_cpu_wgmma_reg_operand(const unsigned char *areg, int alda, int q, int type, int kel, int neg,
                                             double *out) {
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 8; ++i) {
      const kbd_coord c = kbd_layout_wgmma_acc(64, 16, 32 * q + l, i);
      const double v = kbd_cpu_mma_elem(type, areg + (size_t)l * (size_t)alda * 4u + 2u * (unsigned)i);
      out[(c.row - 16 * q) * kel + c.col] = neg ? -v : v;
    }
}

/* ---- a stage released while a wgmma still reads it (docs/design/shadow-and-races.md, "Early stage release") ----
 * The machine does not know which bytes an mbarrier guards, so an arrive made while a wgmma is pending is not a fault
 * by itself (the GEMM arrives for the previous stage while the newest group still reads the current one). It is
 * remembered on each wgmma still pending in the arriving warp - issued and not retired by that warp's own
 * wgmma.wait_group, as the GPU counts: one warp's wait does not complete another warp's view - and blamed only when
 * a write into that wgmma's operand units is ordered after the arrive and not after the wgmma's completion, which is a
 * race whatever the barrier: then that arrive is what let the writer in. */

/* Early arrives rel[0..nrel) of op, whose reads are in the shadow (under op->read_gid at op->read_clk): remembered so
 * that a later write-after-read race on them names the arrive (kbd_cpu_wg_early_race). */
static inline void kbd_cpu_wg_early_read(kbd_cpu_cta *cta, const kbd_cpu_wgop *op, const kbd_cpu_wgrel *rel, int nrel) {
  kbd_cpu_wgrel_read *e = &cta->wgrel_reads[cta->nwgrel_reads++ % KBD_CPU_WGREL_READS];
  e->rclk = op->read_clk;
  e->reader = op->read_gid;
  e->file = op->file;
  e->line = op->line;
  e->nrel = nrel;
  memcpy(e->rel, rel, sizeof e->rel[0] * (size_t)nrel);
}

/* The first retirement of op, which carries early arrives. */
static inline void kbd_cpu_wg_early_retired(kbd_cpu_cta *cta, const kbd_cpu_wgop *op) {
  cta->wg_early--;
  kbd_cpu_wg_early_read(cta, op, op->rel, op->nrel);
}

/* An mbarrier arrive by w (kbd/cpu/mbar.h calls it before the arrive's release). */
static inline void kbd_cpu_wg_arrive(kbd_cpu_warp *w, const kbd_cpu_mbar *m, const char *file, int line) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)cta->mma;
  if (!S || S->base != cta->sh.base) return;
  const kbd_cpu_wgq *wq = &S->wq[w->id];
  if (wq->retired == wq->issued) return;
  const kbd_cpu_wg *g = &S->wg[w->id / 4];
  const kbd_cpu_cta *mcta = cta; /* the barrier's CTA: a remote arrive names a peer's */
  for (int i = 0; i < cta->G->nctas; ++i) {
    const kbd_cpu_cta *c = cta->G->ctas[i];
    if (m >= c->mbars && m < c->mbars + KBD_CPU_MAX_MBARS) mcta = c;
  }
  for (int num = wq->retired; num < wq->issued; ++num) {
    kbd_cpu_wgop *op = g->ops[num - g->first];
    /* a sibling warp's wait found it complete, and this warp is ordered after that wait: its reads are over */
    if (op->read_done && w->clk[op->read_gid] >= op->read_clk) continue;
    if (op->nrel == KBD_CPU_WGRELS) continue;
    int seen = 0;
    for (int j = 0; j < op->nrel && !seen; ++j)
      seen = op->rel[j].line == line && op->rel[j].file == file && op->rel[j].mcta == mcta && op->rel[j].moff == m->off;
    if (seen) continue;
    kbd_cpu_wgrel *r = &op->rel[op->nrel++];
    r->file = file;
    r->line = line;
    r->gid = w->gid;
    r->clk = w->clk[w->gid];
    r->mcta = mcta;
    r->moff = m->off;
    r->how = KBD_CPU_WGREL_UNCOMMITTED;
    r->wait_n = wq->wait_n;
    if (num < wq->committed) { /* its group k: was it committed before the warp's last wait, which then left it? */
      int k = wq->g0;
      while (k < wq->ng - 1 && wq->gend[k % KBD_CPU_MMA_GROUPS] <= num)
        ++k;
      r->how = wq->wait_ng > k ? KBD_CPU_WGREL_LEFT : KBD_CPU_WGREL_COMMITTED;
    }
    if (op->read_done) /* its reads are in the shadow already, stamped where the sibling's wait found them done */
      kbd_cpu_wg_early_read(cta, op, r, 1);
    else if (op->nrel == 1)
      cta->wg_early++;
  }
}

/* A write by w into [off, off + n) of cta's shared memory while some pending wgmma carries early arrives: a write
 * into its operand units that is ordered after one of them is reported there. A write the arrives do not order
 * (the writer waited for nothing) is left to the retirement's check, and writes by the wgmma's own warpgroup are not
 * refills. */
static inline void kbd_cpu_wg_early_write(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n, const char *what,
                                          const char *file, int line) {
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)cta->mma;
  if (!S || S->base != cta->sh.base) {
    cta->wg_early = 0;
    return;
  }
  for (int gi = 0; gi < KBD_CPU_MMA_WGS; ++gi) {
    const kbd_cpu_wg *g = &S->wg[gi];
    if (w->cta == cta && w->id / 4 == gi) continue;
    for (int i = 0; i < g->n; ++i) {
      const kbd_cpu_wgop *op = g->ops[i];
      if (!op->nrel || op->read_done || off >= op->hi || op->lo >= off + n) continue;
      for (int c = 0; c < op->ch.n; ++c) {
        const size_t u = op->ch.off[c];
        if (u >= off + n || off >= u + 16) continue;
        const kbd_cpu_wgrel *r = kbd_cpu_wgrel_known(w, op->rel, op->nrel);
        if (r) kbd_cpu_wg_early_report(cta, w, r, u > off ? u : off, op->file, op->line, what, file, line);
        break;
      }
    }
  }
}

/* wgmma.mma_async.sync.aligned m64nNk*: the running warp's part (rows 16(w%4).. of the m64 block). A comes
 * from the descriptor adesc, or (areg not NULL: the register-A form, cpu/mma_rs.h) from the warp's lanes'
 * registers at areg (lane stride alda 32-bit registers). */
static inline void kbd_cpu_wgmma_issue(void *d, int ld, int kind, uint32_t idesc, uint64_t adesc, const void *areg,
                                       int alda, uint64_t bdesc, int accumulate, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  const int rs = areg != NULL;
  kbd_cpu_mma_arch(90, "wgmma.mma_async", KBD_SITE_ARGS);
  kbd_cpu_check_collective(w, "wgmma.mma_async", KBD_SITE_ARGS);
  kbd_cpu_wgmma_need_wg(w, "wgmma.mma_async", KBD_SITE_ARGS);
  const kbd_cpu_mma_shape s = kbd_cpu_mma_shape_of(KBD_MMA_SM90, kind, idesc, "wgmma.mma_async", KBD_SITE_ARGS);
  const char *why;
  if (!rs) {
    why = kbd_wgmma_desc_check(adesc, s.amaj, s.aes);
    if (why)
      kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "wgmma.mma_async: A descriptor 0x%016llx: %s",
                    (unsigned long long)adesc, why);
  } else {
    /* tf32 and 8-bit A fragments are other register layouts (ptx-reference 4.4), which kbd does not offer */
    if (s.aes != 2)
      kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                    "wgmma.mma_async with A in registers: kbd emulates the 16-bit (f16 / bf16) A fragment only; the "
                    "idesc gives %d-byte A elements",
                    s.aes);
    if (s.amaj != KBD_SMEM_K_MAJOR)
      kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                    "wgmma.mma_async with A in registers: the idesc says A is MN-major, but a register A has no "
                    "transpose (no imm-trans-a, ptx-reference 4.1): build the idesc with KBD_SMEM_K_MAJOR for A");
    if (alda < 4)
      kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                    "wgmma.mma_async with A in registers: %d registers per lane cannot hold the 4 of an A fragment",
                    alda);
  }
  why = kbd_wgmma_desc_check(bdesc, s.bmaj, s.bes);
  if (why)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "wgmma.mma_async: B descriptor 0x%016llx: %s",
                  (unsigned long long)bdesc, why);
  /* ld counts 32-bit registers per lane; an f16 D packs two values per register */
  if (!d || ld < (s.td == KBD_MMA_F16 ? s.n / 4 : s.n / 2))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "wgmma.mma_async: the accumulator (%p, %d registers per lane) cannot hold N/2 = %d values per lane",
                  d, ld, s.n / 2);
  for (int u = w->id & ~3; u <= (w->id | 3); ++u)
    if (cta->warps[u].state == KBD_CPU_W_DONE)
      kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                    "wgmma.mma_async: warp %d of this warpgroup has exited and can never issue its part: wgmma is "
                    "warpgroup-collective (all 4 warps issue every wgmma)",
                    u);
  kbd_cpu_mma_state *S = kbd_cpu_mma_of(cta);
  kbd_cpu_wg *g = &S->wg[w->id / 4];
  kbd_cpu_wgq *wq = &S->wq[w->id];
  const int q = w->id & 3, num = wq->issued++;
  kbd_cpu_wgop *op;
  if (num - g->first < g->n) {
    op = g->ops[num - g->first];
    if (op->kind != kind || op->idesc != idesc || op->adesc != adesc || op->bdesc != bdesc ||
        op->accumulate != accumulate || op->rs != rs)
      kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                    "the 4 warps of warpgroup %d issue different wgmma instructions as their wgmma number %d: warp %d "
                    "issued kind %d, idesc 0x%08x, A %s0x%016llx, B 0x%016llx, accumulate %d at %s:%d; warp %d here "
                    "kind %d, idesc 0x%08x, A %s0x%016llx, B 0x%016llx, accumulate %d (wgmma is .sync.aligned: the "
                    "warpgroup executes the same instruction)",
                    w->id / 4, num, op->first_warp, op->kind, op->idesc, op->rs ? "in registers, " : "",
                    (unsigned long long)op->adesc, (unsigned long long)op->bdesc, op->accumulate, op->file, op->line,
                    w->id, kind, idesc, rs ? "in registers, " : "", (unsigned long long)adesc,
                    (unsigned long long)bdesc, accumulate);
  } else {
    kbd_cpu_prof_mma(kbd_cpu_prof_type(s.ta), s.m, s.n, s.kel); /* once per warpgroup instruction: its first warp */
    op = (kbd_cpu_wgop *)calloc(1, sizeof *op);
    if (!op ||
        (g->n == g->cap && !(g->ops = (kbd_cpu_wgop **)realloc(
                                 g->ops, sizeof(kbd_cpu_wgop *) * (size_t)(g->cap = g->cap ? 2 * g->cap : 16))))) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
    g->ops[g->n++] = op;
    op->kind = kind;
    op->idesc = idesc;
    op->adesc = adesc;
    op->bdesc = bdesc;
    op->accumulate = accumulate;
    op->rs = rs;
    op->n = s.n;
    op->dtype = s.td;
    op->saturate = s.sat;
    op->file = kbd_file_;
    op->line = kbd_line_;
    op->first_warp = w->id;
  }
  /* A: this warp's 16 rows of the m64 block; B: all N rows (collected once for the warpgroup). */
  if (rs) {
    const unsigned char *ar = (const unsigned char *)areg;
    kbd_cpu_wgmma_reg_operand(ar, alda, q, s.ta, s.kel, s.nega, S->sa);
    op->asnap[q] = (unsigned char *)malloc(32u * 16u);
    if (!op->asnap[q]) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
    for (int l = 0; l < 32; ++l)
      memcpy(op->asnap[q] + 16 * l, ar + (size_t)l * (size_t)alda * 4u, 16);
    op->areg[q] = ar;
    op->alda[q] = alda;
  } else {
    kbd_cpu_mma_operand(cta, w, KBD_MMA_SM90, adesc, s.ta, s.amaj, 16 * q, 16, s.kel, s.nega, S->sa, &op->ch,
                        "wgmma.mma_async (operand A)", KBD_SITE_ARGS);
  }
  if (!op->bt) {
    kbd_cpu_mma_operand_u(cta, w, KBD_MMA_SM90, bdesc, s.tb, s.bmaj, 0, s.n, s.kel, s.negb, S->sb, &op->ch, &op->bunits,
                          &op->nbunits, "wgmma.mma_async (operand B)", KBD_SITE_ARGS);
    op->bt = (double *)malloc(sizeof(double) * (size_t)s.kel * (size_t)s.n);
    if (!op->bt) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
    kbd_cpu_mma_transpose(&s, S->sb, op->bt);
  } else {
    for (int i = 0; i < op->nbunits; ++i)
      kbd_cpu_mma_check_unit(cta, w, op->bunits[i], "wgmma.mma_async (operand B)", KBD_SITE_ARGS);
  }
  uint32_t *rows = (uint32_t *)malloc(sizeof(uint32_t) * 16u * (size_t)s.n);
  op->res[q] = (uint32_t *)malloc(sizeof(uint32_t) * 16u * (size_t)s.n);
  if (!rows || !op->res[q]) {
    fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
    abort();
  }
  kbd_cpu_mma_dot_t(&s, S->sa, 16, op->bt, rows);
  /* WGMMA_ACC: thread t = 32q + l holds element i at (row, col) = kbd_layout_wgmma_acc(64, N, t, i) */
  const int32_t *map = kbd_cpu_wgacc_map(S, s.n) + q * 32 * (s.n / 2);
  for (int j = 0; j < 32 * (s.n / 2); ++j)
    op->res[q][j] = rows[map[j]];
  free(rows);
  op->d[q] = d;
  op->ld[q] = ld;
  op->lo = UINT32_MAX, op->hi = 0;
  for (int c = 0; c < op->ch.n; ++c) {
    if (op->ch.off[c] < op->lo) op->lo = op->ch.off[c];
    if (op->ch.off[c] + 16u > op->hi) op->hi = op->ch.off[c] + 16u;
  }
  cta->mma_arrive = kbd_cpu_wg_arrive;
  cta->mma_early_write = kbd_cpu_wg_early_write;
  op->mask |= 1u << q;
  op->issue_clk[q] = w->clk[w->gid];
  if (op->mask == 0xFu) /* a warp of the warpgroup may wait for this one */
    kbd_cpu_wake_waiters(cta, g);
  kbd_cpu_tick(w); /* later writes of this warp get a new stamp, so a rewrite of the operands shows */
}

/* wgmma.mma_async.sync.aligned m64nNk* with A from shared memory (descriptor adesc). */
static inline void kbd_hw_wgmma(void *d, int ld, int kind, uint32_t idesc, uint64_t adesc, uint64_t bdesc,
                                int accumulate, KBD_SITE_PARAMS) {
  kbd_cpu_wgmma_issue(d, ld, kind, idesc, adesc, NULL, 0, bdesc, accumulate, KBD_SITE_ARGS);
}

/* The wgmma function kbd_mma calls on sm_90a for operand types ta, tb, smem majors am, bm and N n (ptx/mma.h: one
 * per type family, variant and N, which keeps cicc's and ptxas's time per call site down). The machine decodes all of
 * it from kind and idesc like any wgmma: kbd_hw_wgmma for every choice. */
#define kbd_hw_wgmma_fn(ta, tb, am, bm, n) ((void)(ta), (void)(tb), (void)(am), (void)(bm), (void)(n), kbd_hw_wgmma)

/* wgmma.commit_group: the warp's uncommitted wgmmas become one group (possibly empty). */
static inline void kbd_hw_wgmma_commit(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mma_arch(90, "wgmma.commit_group", KBD_SITE_ARGS);
  kbd_cpu_check_collective(w, "wgmma.commit_group", KBD_SITE_ARGS);
  kbd_cpu_wgq *wq = &kbd_cpu_mma_of(w->cta)->wq[w->id];
  if (wq->ng - wq->g0 == KBD_CPU_MMA_GROUPS)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "wgmma.commit_group: %d groups committed and not waited for (CPU machine limit): wgmma.wait_group",
                  KBD_CPU_MMA_GROUPS);
  wq->gend[wq->ng++ % KBD_CPU_MMA_GROUPS] = wq->issued;
  wq->committed = wq->issued;
}

/* wgmma.wait_group n: every committed group but the n newest is complete; their D values are written now. */
static inline void kbd_hw_wgmma_wait(int n, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(90, "wgmma.wait_group", KBD_SITE_ARGS);
  kbd_cpu_check_collective(w, "wgmma.wait_group", KBD_SITE_ARGS);
  if (n < 0 || n > 7)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "wgmma.wait_group %d: N must be a constant in 0..7", n);
  kbd_cpu_mma_state *S = kbd_cpu_mma_of(cta);
  kbd_cpu_wgq *wq = &S->wq[w->id];
  kbd_cpu_wg *g = &S->wg[w->id / 4];
  const int q = w->id & 3;
  wq->wait_ng = wq->ng;
  wq->wait_n = n;
  if (wq->ng - wq->g0 <= n) return;
  const int upto = wq->gend[(wq->ng - n - 1) % KBD_CPU_MMA_GROUPS];
  wq->g0 = wq->ng - n;
  for (int num = wq->retired; num < upto; ++num) {
    kbd_cpu_wgop *op = g->ops[num - g->first];
    /* The warpgroup's MMA starts once all 4 warps issued it: until then this wait cannot return. */
    while (op->mask != 0xFu) {
      kbd_cpu_block(g, (uint32_t)num, kbd_cpu_wgmma_describe, KBD_SITE_ARGS);
      op = g->ops[num - g->first];
    }
    /* Completion is causally after all four issues (the MMA could not start before them), so a warp that
     * retires the group knows the other warps got that far: e.g. a release of the operands' stage by one
     * warp is ordered after every warp's wait for that stage (kbd/cpu/mbar.h's phase-order check). */
    for (int q2 = 0; q2 < 4; ++q2) {
      const int gid = cta->rank * KBD_CPU_MAX_WARPS + (w->id & ~3) + q2;
      if (op->issue_clk[q2] > w->clk[gid]) w->clk[gid] = op->issue_clk[q2];
    }
    /* The operands' reads complete once, when the first warp's wait finds the group done: they are recorded under
     * that warp at its clock then (which it ticks past, so its later accesses are not covered with them), and every
     * warp that retires the group later is ordered after that point - its wait also observed the completion. A warp
     * that never waited is not: its arrive does not carry the reads' completion (kbd_cpu_wg_arrive). */
    if (!op->read_done) {
      op->read_done = 1;
      kbd_cpu_mma_retire_read(cta, w, &op->ch, "wgmma.mma_async", op->file, op->line, KBD_SITE_ARGS);
      op->read_gid = w->gid;
      op->read_clk = w->clk[w->gid];
      kbd_cpu_tick(w);
      if (op->nrel) kbd_cpu_wg_early_retired(cta, op);
    } else if (op->read_clk > w->clk[op->read_gid]) {
      w->clk[op->read_gid] = op->read_clk;
    }
    const int h = op->n / 2;
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < h; ++i) {
        if (op->dtype == KBD_MMA_F16) { /* packed: element i is half i % 2 of register i / 2 (ld in registers) */
          uint16_t *p = (uint16_t *)((uint32_t *)op->d[q] + (size_t)l * (size_t)op->ld[q]) + i;
          *p = (uint16_t)kbd_cpu_mma_acc(op->dtype, 0, op->accumulate, *p, op->res[q][l * h + i]);
        } else {
          uint32_t *p = (uint32_t *)op->d[q] + (size_t)l * (size_t)op->ld[q] + i;
          *p = kbd_cpu_mma_acc(op->dtype, op->saturate, op->accumulate, *p, op->res[q][l * h + i]);
        }
      }
    op->retired |= 1u << q;
  }
  wq->retired = upto;
  int k = 0; /* free the ops every warp has retired, from the oldest */
  while (k < g->n && g->ops[k]->retired == 0xFu)
    kbd_cpu_wgop_free(g->ops[k++]);
  if (k) {
    memmove(g->ops, g->ops + k, sizeof(kbd_cpu_wgop *) * (size_t)(g->n - k));
    g->n -= k;
    g->first += k;
  }
}

/* An access `what` to lane l's n 32-bit cells at d + l * ld while a wgmma of this warp not yet retired writes some
 * of them: a race, with the fix `fix` (kbd_acc_load's read, kbd_acc_discard's write). */
static inline void kbd_cpu_wgmma_pending_write(const void *d, int ld, int n, const char *what, const char *fix,
                                               KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const kbd_cpu_mma_state *S = kbd_cpu_mma_of(w->cta);
  const kbd_cpu_wgq *wq = &S->wq[w->id];
  const kbd_cpu_wg *g = &S->wg[w->id / 4];
  const int q = w->id & 3;
  for (int num = wq->retired; num < wq->issued; ++num) {
    const kbd_cpu_wgop *op = g->ops[num - g->first];
    for (int l = 0; l < 32; ++l) {
      const char *lo = (const char *)d + (size_t)l * (size_t)ld * 4u, *hi = lo + (size_t)n * 4u;
      const char *olo = (const char *)op->d[q] + (size_t)l * (size_t)op->ld[q] * 4u;
      const char *ohi = olo + (size_t)(op->n / 2) * (op->dtype == KBD_MMA_F16 ? 2u : 4u);
      if (lo < ohi && olo < hi)
        kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                      "%s before wgmma.wait_group: the wgmma issued at %s:%d (%s) still writes these registers (lane "
                      "%d); %s",
                      what, op->file, op->line, num < wq->committed ? "committed, not waited for" : "not even committed",
                      l, fix);
    }
  }
}

/* A register read of the accumulator (the GPU side is a no-op: the registers are the accumulator). */
static inline void kbd_hw_wgmma_acc_touch(const void *d, int ld, int n, KBD_SITE_PARAMS) {
  kbd_cpu_mma_arch(90, "a register read of a wgmma accumulator", KBD_SITE_ARGS);
  kbd_cpu_wgmma_pending_write(d, ld, n, "accumulator read", "wait for its group first (kbd_mma_wait, wgmma.wait_group)",
                              KBD_SITE_ARGS);
}

/* kbd_acc_discard: lane l's n cells at (uint32_t *)d + l * ld become a quiet NaN (0x7fc00000), so a read that
 * the caller believed dead shows in the results; discarding cells a wgmma of this warp still writes is the GPU's
 * register write under a pending wgmma, reported as a race. */
static inline void kbd_hw_wgmma_acc_discard(void *d, int ld, int n, KBD_SITE_PARAMS) {
  kbd_cpu_mma_arch(90, "kbd_acc_discard of a wgmma accumulator", KBD_SITE_ARGS);
  kbd_cpu_wgmma_pending_write(d, ld, n, "kbd_acc_discard", "discard the accumulator after its wait (kbd_mma_wait)",
                              KBD_SITE_ARGS);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < n; ++i) ((uint32_t *)d)[(size_t)l * (size_t)ld + (size_t)i] = 0x7fc00000u;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_WGMMA_H */
