/* kbd/cpu/mma_state.h - the CPU machine's per-CTA MMA and Tensor Memory state (cpu/mma.h has the map of
 * the MMA emulation): the records of pending wgmma and tcgen05.mma operations, the emulated Tensor Memory cells,
 * the unwaited tcgen05.st / tcgen05.ld records, their freeing and reset at a new CTA, and the checks at a warp's
 * exit (an MMA never waited for or committed, Tensor Memory left allocated).
 */
#ifndef KBD_CPU_MMA_STATE_H
#define KBD_CPU_MMA_STATE_H

#include "../convert_sw.h"
#include "../layout.h"
#include "../mma_desc.h"
#include "mbar.h"

#if KBD_MODE_CPU

#define KBD_CPU_MMA_WGS (KBD_CPU_MAX_WARPS / 4)
#define KBD_CPU_MMA_GROUPS 256   /* wgmma groups one warp may have committed and not waited for */
#define KBD_CPU_TMEM_MMA 0x8000u /* tm_who flag: the cell was written by an MMA at a tcgen05.commit */

/* The 16-byte shared units an operation reads (every swizzle moves whole 16-byte units, §3) and a hash of
 * their shadow state at the issue. */
typedef struct kbd_cpu_mma_chunks {
  uint32_t *off;
  uint64_t *hash;
  uint32_t *gen; /* each unit's kbd_cpu_shadow_unit.gen when it was hashed */
  int n, cap;
  int gid; /* the warp (group index) that checked every unit; -1: units of several warps */
} kbd_cpu_mma_chunks;

/* One wgmma of a warpgroup: each of its 4 warps issues its part (the warp's 16 rows of the m64 block). */
typedef struct kbd_cpu_wgop {
  int kind, accumulate;
  uint32_t idesc;
  uint64_t adesc, bdesc;
  unsigned mask;    /* warps (id % 4) that issued it */
  unsigned retired; /* warps that retired it */
  int read_done;    /* the async read of its operands was recorded (first retirement) */
  int read_gid;     /* ... under the warp that retired it first (group index), at its clock read_clk */
  uint32_t read_clk;
  int n, dtype, saturate;
  const char *file; /* first issue */
  int line, first_warp;
  kbd_cpu_mma_chunks ch;
  void *d[4]; /* each warp's accumulator: lane l's N/2 values at (elem *)d + l * ld */
  int ld[4];
  /* A from registers (kbd_hw_wgmma_rs_*, cpu/mma_rs.h): where each warp's lanes held their 16-byte A
   * fragment (lane l at areg + l * alda * 4 bytes) and a copy of those bytes at the issue. The
   * machine never reads areg again after the issue (the tile may be out of scope by the retirement); the
   * copy is compared with a tile handed to a later register-A issue that overlaps it (kbd_hw_wgmma_a_touch). */
  int rs;
  const unsigned char *areg[4];
  int alda[4];
  unsigned char *asnap[4]; /* 32 lanes x 16 bytes */
  uint32_t *res[4];        /* each warp's K-step sums, 32 lanes x N/2 (f32 or s32 bits) in WGMMA_ACC order */
  uint32_t issue_clk[4];   /* each warp's clock at its issue */
  /* B, decoded once for the warpgroup by the first warp to issue (transposed: kel x N), and the 16-byte units it
   * reads: each later warp checks those units against its own ordering instead of decoding B again (B was 4x
   * the decode work of an instruction, and 40% of the sm_90a attention example's CPU time) */
  double *bt;
  uint32_t *bunits;
  int nbunits;
  /* mbarrier arrives made while the wgmma was pending in the arriving warp (kbd_cpu_wg_arrive): a write into its
   * operand units [lo, hi) ordered after one of them, before the wgmma retired, is reported at that arrive */
  int nrel;
  kbd_cpu_wgrel rel[KBD_CPU_WGRELS];
  uint32_t lo, hi;
} kbd_cpu_wgop;

typedef struct kbd_cpu_wg {
  kbd_cpu_wgop **ops; /* issue order; ops[0] is op number `first` */
  int first, n, cap;
} kbd_cpu_wg;

typedef struct kbd_cpu_wgq { /* one warp's wgmma bookkeeping */
  int issued;                /* ops of its warpgroup this warp issued (its next op's number) */
  int committed;             /* ops before this number are in committed groups */
  int retired;               /* ops before this number are retired in this warp */
  int ng, g0;                /* groups committed, first not yet waited for */
  int wait_ng, wait_n;       /* at the warp's last wgmma.wait_group: ng then, and its N (an early release's report) */
  int gend[KBD_CPU_MMA_GROUPS]; /* ring: end op number of group g at gend[g % KBD_CPU_MMA_GROUPS] */
} kbd_cpu_wgq;

/* One tcgen05.mma issued and not yet committed. */
typedef struct kbd_cpu_umma {
  uint32_t lane, col; /* D in Tensor Memory */
  int m, n, dtype, accumulate, saturate;
  uint32_t *res; /* the K-step sums (f32 or s32 bits), row-sparse: kbd_cpu_mma_dot_rows (mma_dot.h) */
  kbd_cpu_mma_chunks ch;
  const char *file;
  int line;
  uint32_t alane, acol, acols; /* A in Tensor Memory (cpu/mma_ts.h): acols > 0 */
  /* a CTA-pair MMA (cpu/mma_pair.h): the odd CTA, which holds A rows 128.., B rows n/2.. and D rows 128.. (in
   * lanes 0..127 of its Tensor Memory), and the 16-byte units read from its shared memory */
  struct kbd_cpu_cta *pair;
  kbd_cpu_mma_chunks pch;
} kbd_cpu_umma;

typedef struct kbd_cpu_tmem_alloc {
  int col, ncols, warp;
  const char *file;
  int line;
} kbd_cpu_tmem_alloc;

/* D regions remembered per warp: a GEMM alternates two accumulators, a pair MMA checks 2 CTAs */
#define KBD_CPU_RMEMO 4

/* The D region of an MMA whose Tensor Memory readers (tcgen05.ld) a warp last found ordered before its issue
 * (kbd_cpu_umma_check_readers_in): in Tensor Memory t of a CTA whose shared base was tbase, issued in a CTA whose base
 * was sbase, when t's tcgen05.ld count was seq. */
typedef struct kbd_cpu_rmemo {
  const void *t;
  uint32_t tbase, sbase, lane, col;
  int m, n;
  uint64_t seq;
} kbd_cpu_rmemo;

typedef struct kbd_cpu_mma_state {
  uint32_t base; /* cta->sh.base it was reset for: another value is a new CTA */
  kbd_cpu_wg wg[KBD_CPU_MMA_WGS];
  kbd_cpu_wgq wq[KBD_CPU_MAX_WARPS];
  kbd_cpu_umma **uq[KBD_CPU_MAX_WARPS]; /* per warp (its issuing thread): MMAs not committed */
  int un[KBD_CPU_MAX_WARPS], ucap[KBD_CPU_MAX_WARPS];
  /* Tensor Memory (allocated at the first tcgen05 use): value, writer clock, writer (group index | MMA flag), and
   * the last tcgen05.ld of the cell: its clock and warp (group index), plus (rclk2, rwho2) an earlier read by another
   * warp that the last one was not ordered after. Warps of one lane quarter (w % 4) in different warpgroups share
   * lanes (FA4: a softmax and a correction warpgroup read the same O), so two reads can be concurrent; a third
   * concurrent reader replaces the older record: a report that may be missed, never a false one. */
  uint32_t *tm_val, *tm_clk, *tm_rclk, *tm_rclk2;
  uint16_t *tm_who, *tm_rwho, *tm_rwho2;
  /* tcgen05.ld executed on this Tensor Memory (rdseq), and per column rdseq at the last one that read it; per warp,
   * the last D regions (in its own Tensor Memory or its pair peer's) found free of unordered readers */
  uint64_t rdseq, *tm_rdcol;
  kbd_cpu_rmemo rmemo[KBD_CPU_MAX_WARPS][KBD_CPU_RMEMO]; /* replaced round robin from rnext */
  uint8_t rnext[KBD_CPU_MAX_WARPS];
  kbd_cpu_tmem_alloc alloc[KBD_TMEM_COLS / KBD_TMEM_MIN_COLS];
  int nalloc, relinquished;
  const char *rel_file;
  int rel_line;
  /* per warp: its vector clock (this CTA's entries) at its last tcgen05.fence::after_thread_sync */
  uint32_t fsnap[KBD_CPU_MAX_WARPS][KBD_CPU_MAX_WARPS];
  double *sa, *sb, *sbt; /* scratch: decoded operands of one MMA (up to 256 x 32 each), B transposed */
  void *ts;              /* cpu/mma_ts.h: unwaited tcgen05.st and the A reads of MMAs with A in Tensor Memory */
  /* WGMMA_ACC for N = accmap_n: element i of lane l of warp q of the warpgroup is row (row - 16q) * N + col of
   * that warp's 16 x N K-step sums - kbd_layout_wgmma_acc, evaluated once per N instead of once per element
   * and instruction (its divisions by the run-time N were a third of the wgmma emulation's time) */
  int accmap_n;
  int32_t *accmap;                   /* 4 x 32 x N/2 */
  uint32_t tcseq[KBD_CPU_MAX_WARPS]; /* tcgen05.commits per warp in this block (kbd_cpu_warp.tcseen) */
  /* The .cta_group of this block's tcgen05 instructions (0: none yet), and the first one: ptxas rejects a kernel
   * that mixes 1 and 2 (ptx-reference 5.2), so the machine does too, naming both sites */
  int group, group_line;
  const char *group_file, *group_what;
  /* A collective tcgen05.alloc.cta_group::2 (kept in the even CTA of the pair): the warp that issued it first
   * waits here for its peer's (cpu/mma_pair.h). pa_rank: that warp's CTA rank + 1 (0: none waiting) */
  int pa_rank, pa_warp, pa_line;
  uint32_t pa_ncols, pa_col;
  const char *pa_file;
} kbd_cpu_mma_state;

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

/* ---- freeing and resetting --------------------------------------------------------------------------------------- */

static inline void kbd_cpu_mma_chunks_free(kbd_cpu_mma_chunks *c) {
  free(c->off);
  free(c->hash);
  free(c->gen);
  c->off = NULL;
  c->hash = NULL;
  c->gen = NULL;
  c->n = c->cap = 0;
}
static inline void kbd_cpu_wgop_free(kbd_cpu_wgop *op) {
  if (!op) return;
  kbd_cpu_mma_chunks_free(&op->ch);
  for (int q = 0; q < 4; ++q) {
    free(op->res[q]);
    free(op->asnap[q]);
  }
  free(op->bt);
  free(op->bunits);
  free(op);
}
static inline void kbd_cpu_umma_free(kbd_cpu_umma *u) {
  if (!u) return;
  kbd_cpu_mma_chunks_free(&u->ch);
  kbd_cpu_mma_chunks_free(&u->pch);
  free(u->res);
  free(u);
}

/* Drops what an earlier CTA left (a faulted one may leave pending MMAs). */
static inline void kbd_cpu_mma_clear(kbd_cpu_mma_state *S) {
  for (int g = 0; g < KBD_CPU_MMA_WGS; ++g) {
    for (int i = 0; i < S->wg[g].n; ++i)
      kbd_cpu_wgop_free(S->wg[g].ops[i]);
    S->wg[g].n = 0;
    S->wg[g].first = 0;
  }
  for (int w = 0; w < KBD_CPU_MAX_WARPS; ++w) {
    for (int i = 0; i < S->un[w]; ++i)
      kbd_cpu_umma_free(S->uq[w][i]);
    S->un[w] = 0;
    memset(&S->wq[w], 0, sizeof S->wq[w]);
  }
  memset(S->tcseq, 0, sizeof S->tcseq);
}

static inline void kbd_cpu_mma_destroy(void *p) {
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)p;
  if (!S) return;
  kbd_cpu_mma_clear(S);
  for (int g = 0; g < KBD_CPU_MMA_WGS; ++g)
    free(S->wg[g].ops);
  for (int w = 0; w < KBD_CPU_MAX_WARPS; ++w)
    free(S->uq[w]);
  free(S->tm_val);
  free(S->tm_clk);
  free(S->tm_who);
  free(S->tm_rclk);
  free(S->tm_rwho);
  free(S->tm_rclk2);
  free(S->tm_rwho2);
  free(S->tm_rdcol);
  free(S->sa);
  free(S->sb);
  free(S->sbt);
  free(S->ts);
  free(S->accmap);
  free(S);
}

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

/* ---- at a warp's exit -------------------------------------------------------------------------------------------- */

static inline void kbd_cpu_mma_exit(kbd_cpu_warp *w) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)cta->mma;
  if (!S || S->base != cta->sh.base) return; /* no MMA in this CTA */
  const kbd_cpu_wgq *wq = &S->wq[w->id];
  const kbd_cpu_wg *g = &S->wg[w->id / 4];
  if (wq->retired < wq->issued) {
    const kbd_cpu_wgop *op = g->ops[wq->retired - g->first];
    kbd_cpu_fault(KBD_ERR_ISSUE, op->file, op->line,
                  "warp %d ends while this wgmma is %s: its accumulator is never written. Commit and wait before "
                  "the warp ends (wgmma.commit_group, wgmma.wait_group 0: kbd_mma_wait)",
                  w->id, wq->retired < wq->committed ? "not waited for" : "not committed");
  }
  for (int i = 0; i < g->n; ++i)
    if (!(g->ops[i]->mask & (1u << (w->id & 3))))
      kbd_cpu_fault(KBD_ERR_ISSUE, g->ops[i]->file, g->ops[i]->line,
                    "warp %d ends without issuing this wgmma, which warp %d of its warpgroup issued: wgmma is "
                    "warpgroup-collective (all 4 warps issue every wgmma)",
                    w->id, g->ops[i]->first_warp);
  if (S->un[w->id]) {
    const kbd_cpu_umma *u = S->uq[w->id][0];
    kbd_cpu_fault(KBD_ERR_ISSUE, u->file, u->line,
                  "warp %d ends while this tcgen05.mma (and %d more) was never committed: its Tensor Memory result "
                  "never lands. tcgen05.commit to an mbarrier (kbd_mma_release / kbd_mma_wait) from the issuing thread",
                  w->id, S->un[w->id] - 1);
  }
  for (int i = 0; i < cta->nwarps; ++i)
    if (cta->warps[i].state != KBD_CPU_W_DONE) return;
  if (S->nalloc)
    kbd_cpu_fault(KBD_ERR_INVALID, S->alloc[0].file, S->alloc[0].line,
                  "the block exits with Tensor Memory columns [%d, %d) allocated here (warp %d) still allocated: "
                  "free them (kbd_tmem_free, tcgen05.dealloc) before the block ends",
                  S->alloc[0].col, S->alloc[0].col + S->alloc[0].ncols, S->alloc[0].warp);
}

/* The running CTA's MMA state, reset when the CTA is a new one. */
static inline kbd_cpu_mma_state *kbd_cpu_mma_of(kbd_cpu_cta *cta) {
  kbd_cpu_mma_state *S = (kbd_cpu_mma_state *)cta->mma;
  if (KBD_UNLIKELY(!S)) {
    S = (kbd_cpu_mma_state *)calloc(1, sizeof *S);
    if (S) {
      S->sa = (double *)malloc(sizeof(double) * 256 * 32); /* a CTA pair's M = 256 */
      S->sb = (double *)malloc(sizeof(double) * 256 * 32);
      S->sbt = (double *)malloc(sizeof(double) * 256 * 32);
    }
    if (!S || !S->sa || !S->sb || !S->sbt) {
      fprintf(stderr, "kbd: out of host memory for the MMA emulation state\n");
      abort();
    }
    cta->mma = S;
    cta->mma_exit = kbd_cpu_mma_exit;
    cta->mma_free = kbd_cpu_mma_destroy;
  }
  if (S->base != cta->sh.base) {
    /* Tensor Memory stamps are compared with the shadow's base like shared-memory stamps; when the shadow
     * restarted its clocks (kbd_cpu_shadow_start), old stamps must go. */
    if (S->tm_clk && cta->sh.base < S->base) memset(S->tm_clk, 0, sizeof(uint32_t) * KBD_TMEM_LANES * KBD_TMEM_COLS);
    kbd_cpu_mma_clear(S);
    kbd_cpu_ts_reset(S);
    cta->wg_early = 0;
    S->nalloc = 0;
    S->relinquished = 0;
    S->group = 0;
    S->pa_rank = 0;
    memset(S->fsnap, 0, sizeof S->fsnap);
    memset(S->rmemo, 0, sizeof S->rmemo);
    S->base = cta->sh.base;
  }
  return S;
}

/* The emulated arch must be the instruction's: the sm_90a twin set only when emulating sm_90a, tcgen05 only
 * when emulating sm_100a (the accumulator's type differs, so it is a compile-time choice, KBD_CPU_ARCH). */
static inline void kbd_cpu_mma_arch(int arch, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(KBD_CPU_ARCH != arch))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s is an sm_%da instruction, but this build emulates sm_%da (KBD_CPU_ARCH=%d): build with "
                  "-DKBD_CPU_ARCH=%d",
                  what, arch, (int)KBD_CPU_ARCH, (int)KBD_CPU_ARCH, arch);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_STATE_H */
