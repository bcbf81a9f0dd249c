/* kbd/cpu/mma.h - the MMA twins on the CPU machine (twin of ptx/mma.h): wgmma (emulating sm_90a,
 * KBD_CPU_ARCH == 90) and tcgen05 with Tensor Memory (sm_100a, KBD_CPU_ARCH == 100). docs/design/mma.md.
 *
 * Operands. Every operand element is read through its descriptor with kbd_wgmma_desc_addr /
 * kbd_umma_desc_addr, from the descriptor bits alone, so a wrong start, LBO, SBO or swizzle reads the same
 * wrong bytes as the GPU. A descriptor address is an offset in the CTA's shared window: the CPU CTA's shared
 * memory is one 1024-byte aligned array (kbd/cpu/sched.h: aligned_alloc(1024)), so kbd_hw_smem_addr (pointer
 * - window base) has the same low 10 bits as the address and the descriptor's absolute-address XOR (§3,
 * §4.6) lands on the bytes kbd_smem_tile_offset names. Each element's address is decoded once per MMA (A:
 * M x K-step, B: N x K-step), never once per product.
 *
 * Numbers (docs/design/mma.md "Numeric contract"). Products are exact (tf32 inputs first lose their low 13
 * mantissa bits, fp8 inputs decode through kbd's conversions); a K-step's sum is taken in double and rounded
 * once to f32 (8-bit integers: exact, wrapped to s32); that is added to D in f32 (D = it when accumulate is 0).
 *
 * Time. The MMA reads its operands and computes at the issue into a pending record; D is written when the
 * MMA retires: sm_90a at the wgmma.wait_group that covers its group (in each warp, for that warp's 16 rows
 * of the m64 block), sm_100a at the issuing thread's tcgen05.commit, which then arrives once on the
 * mbarrier (release: a warp that waits for the phase acquires the MMA's Tensor Memory writes).
 *
 * Races on the operands. The issue only CHECKS the operand bytes (delivered, fenced if generic, ordered
 * before the issuing warp) and hashes their shadow state; the async proxy's read is recorded once, when the
 * operation retires: for a wgmma at its first retirement by any warp of the warpgroup, under warp 0 of the
 * warpgroup at that warp's current clock (kbd_mma_release arrives on the stage's `empty` barrier from warp 0
 * only, after its own wait_group, so a producer ordered after that arrive is ordered after this read); for
 * tcgen05 at the commit, under the committing warp, before its arrive. A producer that rewrote operand bytes
 * between the issue and the retirement changes their shadow hash (reported at the retirement, naming the
 * write's file:line); one that writes them after the retirement without waiting is a write-after-read race
 * of the shadow (reported at the write). So the report does not depend on the schedule.
 *
 * Tensor Memory: per CTA 128 lanes x 512 columns of 32 bit, with per cell the writer (warp, and whether an
 * MMA commit wrote it) and its clock, for the tcgen05.ld check "the reader acquired the commit's barrier and
 * ran tcgen05.fence::after_thread_sync after that" (ptx-reference §5.8).
 */
#ifndef KBD_CPU_MMA_H
#define KBD_CPU_MMA_H

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
  int n, cap;
} kbd_cpu_mma_chunks;

/* One wgmma of a warpgroup: each of its 4 warps issues its part (the warp's 16 rows of the m64 block). */
typedef struct kbd_cpu_wgop {
  int kind, accumulate;
  uint32_t idesc;
  uint64_t adesc, bdesc;
  unsigned mask;    /* warps (id % 4) that issued it */
  unsigned retired; /* warps that retired it */
  int read_done;    /* the async read of its operands was recorded (first retirement) */
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
} kbd_cpu_wgop;

typedef struct kbd_cpu_wg {
  kbd_cpu_wgop **ops; /* issue order; ops[0] is op number `first` */
  int first, n, cap;
} kbd_cpu_wg;

typedef struct kbd_cpu_wgq {    /* one warp's wgmma bookkeeping */
  int issued;                   /* ops of its warpgroup this warp issued (its next op's number) */
  int committed;                /* ops before this number are in committed groups */
  int retired;                  /* ops before this number are retired in this warp */
  int ng, g0;                   /* groups committed, first not yet waited for */
  int gend[KBD_CPU_MMA_GROUPS]; /* ring: end op number of group g at gend[g % KBD_CPU_MMA_GROUPS] */
} kbd_cpu_wgq;

/* One tcgen05.mma issued and not yet committed. */
typedef struct kbd_cpu_umma {
  uint32_t lane, col; /* D in Tensor Memory */
  int m, n, dtype, accumulate, saturate;
  uint32_t *res; /* m x n K-step sums (f32 or s32 bits) */
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

/* cpu/mma_ts.h (included at the end of this file): A operands in Tensor Memory */
static inline void kbd_cpu_ts_reset(kbd_cpu_mma_state *S);
static inline void kbd_cpu_ts_st(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t taddr, int shape, int regs,
                                 KBD_SITE_PARAMS);
static inline void kbd_cpu_ts_wait_st(kbd_cpu_warp *w, kbd_cpu_mma_state *S);
/* cpu/mma_ts.h: the registers of a tcgen05.ld in flight until tcgen05.wait::ld */
static inline void kbd_cpu_ld_issue(void *d, int ld, int shape, int n, KBD_SITE_PARAMS);
static inline void kbd_cpu_ld_wait(KBD_SITE_PARAMS);
static inline void kbd_cpu_ld_pending_cells(const void *c, int ld, int regs, const char *what, const char *verb,
                                            KBD_SITE_PARAMS);
static inline void kbd_cpu_ts_retire(kbd_cpu_warp *w, kbd_cpu_mma_state *S, const kbd_cpu_umma *u);
static inline void kbd_cpu_ts_check_d(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t lane, uint32_t col, int m, int n,
                                      KBD_SITE_PARAMS);
static inline void kbd_cpu_ts_check_d_pending(kbd_cpu_warp *w, const kbd_cpu_mma_state *S, uint32_t lane, uint32_t col,
                                              int m, int n, KBD_SITE_PARAMS);
static inline int kbd_cpu_ts_pending_cell(const kbd_cpu_mma_state *S, size_t x);
/* cpu/mma_pair.h (included at the end of this file): CTA-pair MMAs */
static inline void kbd_cpu_pair_complete_check(const kbd_cpu_umma *u, KBD_SITE_PARAMS);

/* ---- state ------------------------------------------------------------------------------------------------ */

static inline void kbd_cpu_mma_chunks_free(kbd_cpu_mma_chunks *c) {
  free(c->off);
  free(c->hash);
  c->off = NULL;
  c->hash = NULL;
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
  free(S->sa);
  free(S->sb);
  free(S->sbt);
  free(S->ts);
  free(S->accmap);
  free(S);
}

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

static inline void kbd_cpu_mma_exit(kbd_cpu_warp *w);

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
    S->nalloc = 0;
    S->relinquished = 0;
    S->group = 0;
    S->pa_rank = 0;
    memset(S->fsnap, 0, sizeof S->fsnap);
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

/* ---- the instruction's shape and types ---------------------------------------------------------------------- */

typedef struct kbd_cpu_mma_shape {
  int kind, ta, tb, td, m, n, amaj, bmaj, nega, negb, sat, aes, bes, kel;
} kbd_cpu_mma_shape;

/* group: the instruction's .cta_group (the idesc's legal M and N depend on it; wgmma: 1) */
static inline kbd_cpu_mma_shape kbd_cpu_mma_shape_of_g(int arch, int kind, uint32_t idesc, int group, const char *what,
                                                       KBD_SITE_PARAMS) {
  kbd_cpu_mma_shape s;
  if (kind < KBD_MMA_KIND_F16 || kind > KBD_MMA_KIND_I8)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: kind %d is not a kbd_mma_kind (f16, tf32, f8f6f4, i8)", what,
                  kind);
  const char *why = kbd_umma_idesc_check(idesc, kind, group);
  if (why) kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: instruction descriptor 0x%08x: %s", what, idesc, why);
  s.kind = kind;
  s.ta = kbd_umma_idesc_type(kind, kbd_umma_idesc_a_code(idesc));
  s.tb = kbd_umma_idesc_type(kind, kbd_umma_idesc_b_code(idesc));
  s.td = kbd_umma_idesc_dtype(idesc);
  s.m = kbd_umma_idesc_m(idesc);
  s.n = kbd_umma_idesc_n(idesc);
  s.amaj = kbd_umma_idesc_a_major(idesc);
  s.bmaj = kbd_umma_idesc_b_major(idesc);
  s.nega = (int)kbd_umma_idesc_negate_a(idesc);
  s.negb = (int)kbd_umma_idesc_negate_b(idesc);
  s.sat = (int)kbd_umma_idesc_saturate(idesc);
  s.aes = kbd_mma_type_bytes(s.ta);
  s.bes = kbd_mma_type_bytes(s.tb);
  s.kel = KBD_MMA_KSTEP_BYTES / s.aes;
  if (arch == KBD_MMA_SM90) {
    why = kbd_wgmma_shape_check(s.ta, s.tb, s.td, s.m, s.n, s.amaj, s.bmaj);
    if (why) kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s: %s", what, why);
  }
  return s;
}
static inline kbd_cpu_mma_shape kbd_cpu_mma_shape_of(int arch, int kind, uint32_t idesc, const char *what,
                                                     KBD_SITE_PARAMS) {
  return kbd_cpu_mma_shape_of_g(arch, kind, idesc, 1, what, KBD_SITE_ARGS);
}

/* ---- reading the operands ---------------------------------------------------------------------------------- */

static inline double kbd_cpu_mma_elem(int t, const unsigned char *p) {
  switch (t) {
  case KBD_MMA_F16: {
    kbd_f16 h;
    memcpy(&h.bits, p, 2);
    return (double)kbd_cvt_sw_f16_to_f32(h);
  }
  case KBD_MMA_BF16: {
    uint16_t b;
    memcpy(&b, p, 2);
    return (double)kbd_cvt_bits_f32((uint32_t)b << 16);
  }
  case KBD_MMA_TF32: { /* the MMA ignores the low 13 mantissa bits (§4.1) */
    uint32_t u;
    memcpy(&u, p, 4);
    return (double)kbd_cvt_bits_f32(u & 0xFFFFE000u);
  }
  case KBD_MMA_E4M3: {
    kbd_e4m3 v;
    v.bits = p[0];
    return (double)kbd_cvt_sw_e4m3_to_f32(v);
  }
  case KBD_MMA_E5M2: {
    kbd_e5m2 v;
    v.bits = p[0];
    return (double)kbd_cvt_sw_e5m2_to_f32(v);
  }
  case KBD_MMA_S8: return (double)(int8_t)p[0];
  default: return (double)p[0]; /* U8 */
  }
}

static inline uint64_t kbd_cpu_mma_hash(const kbd_cpu_shadow *sh, size_t off) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t b = off; b < off + 16; ++b) {
    h = (h ^ (uint64_t)sh->wclk[b]) * 0x100000001b3ull;
    h = (h ^ ((uint64_t)sh->winfo[b] << 16 | (uint64_t)sh->wsite[b])) * 0x100000001b3ull;
  }
  return h;
}

/* The async proxy will read the 16 bytes at off: CHECK them (written, delivered, generic writes fenced by their
 * writer, ordered before w) without recording a read (the read is recorded when the MMA retires). */
static inline void kbd_cpu_mma_check_unit(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, const char *what,
                                          KBD_SITE_PARAMS) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid;
  const int race = cta->L->race_check;
  for (size_t b = off; b < off + 16; ++b) {
    const uint32_t c = sh->wclk[b], info = sh->winfo[b], x = info & KBD_CPU_SH_WARP;
    if (KBD_UNLIKELY(c < base || (info & KBD_CPU_SH_PENDING) || (race && x != me && c > w->clk[x])))
      kbd_cpu_shadow_read_fault(cta, w, off, 16, what, kbd_cpu_no_elem(), KBD_SITE_ARGS);
    if (info & KBD_CPU_SH_ASYNC) continue;
    const kbd_cpu_warp *xw = &cta->G->ctas[x / KBD_CPU_MAX_WARPS]->warps[x % KBD_CPU_MAX_WARPS];
    if (KBD_UNLIKELY(c > xw->fence_clk)) {
      char who[KBD_CPU_WHO_CAP];
      const char *where = kbd_cpu_smem_at(cta, b);
      const kbd_cpu_site s = kbd_cpu_site_of(sh->wsite[b]);
      kbd_cpu_fault(KBD_ERR_RACE, KBD_SITE_ARGS,
                    "%s reads %s through the async proxy, but %s wrote it with generic stores at %s:%d and has "
                    "not executed fence.proxy.async since (kbd_fence_proxy_async, then a barrier)",
                    what, where, kbd_cpu_who(cta->G, (int)x, who, sizeof who), s.file, s.line);
    }
  }
}

static inline void kbd_cpu_mma_chunk_add(kbd_cpu_mma_chunks *c, const kbd_cpu_shadow *sh, uint32_t off) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->off = (uint32_t *)realloc(c->off, sizeof(uint32_t) * (size_t)c->cap);
    c->hash = (uint64_t *)realloc(c->hash, sizeof(uint64_t) * (size_t)c->cap);
    if (!c->off || !c->hash) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
  }
  c->off[c->n] = off;
  c->hash[c->n++] = kbd_cpu_mma_hash(sh, off);
}

/* Decodes rows row0 .. row0+nrows-1 of one K-step of an operand into out[r][k] (r from 0, kel per row),
 * checking every 16-byte unit read; ch (may be NULL) collects the units, and so does units (may be NULL: a
 * malloc'd array of *nunits offsets). */
static inline void kbd_cpu_mma_operand_u(kbd_cpu_cta *cta, kbd_cpu_warp *w, int arch, uint64_t desc, int type,
                                         int major, int row0, int nrows, int kel, int neg, double *out,
                                         kbd_cpu_mma_chunks *ch, uint32_t **units, int *nunits, const char *what,
                                         KBD_SITE_PARAMS) {
  const int es = kbd_mma_type_bytes(type);
  if (units) {
    *nunits = 0;
    *units = (uint32_t *)malloc(sizeof(uint32_t) * ((size_t)nrows * (size_t)kel * (size_t)es / 16u + 1u));
    if (!*units) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
  }
  const size_t top = cta->smem_top;
  for (int r = 0; r < nrows; ++r)
    for (int k = 0; k < kel; ++k) {
      const uint32_t a = arch == KBD_MMA_SM90 ? kbd_wgmma_desc_addr(desc, major, es, row0 + r, k)
                                              : kbd_umma_desc_addr(desc, major, es, row0 + r, k);
      if (KBD_UNLIKELY((size_t)(a & ~15u) + 16 > top))
        kbd_cpu_fault(KBD_ERR_BOUNDS, KBD_SITE_ARGS,
                      "%s: the descriptor 0x%016llx names shared address %u for row %d, k %d, outside the CTA's "
                      "%zu bytes of shared memory",
                      what, (unsigned long long)desc, a, row0 + r, k, top);
      if ((a & 15u) == 0) {
        kbd_cpu_mma_check_unit(cta, w, a, what, KBD_SITE_ARGS);
        if (ch) kbd_cpu_mma_chunk_add(ch, &cta->sh, a);
        if (units) (*units)[(*nunits)++] = a;
      }
      const double v = kbd_cpu_mma_elem(type, cta->smem + a);
      out[r * kel + k] = neg ? -v : v;
    }
}
static inline void kbd_cpu_mma_operand(kbd_cpu_cta *cta, kbd_cpu_warp *w, int arch, uint64_t desc, int type, int major,
                                       int row0, int nrows, int kel, int neg, double *out, kbd_cpu_mma_chunks *ch,
                                       const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_mma_operand_u(cta, w, arch, desc, type, major, row0, nrows, kel, neg, out, ch, NULL, NULL, what,
                        KBD_SITE_ARGS);
}

/* res[r * n + c] = the K-step sum of A row r and B row c, rounded once (f32), or wrapped (s32). Each sum runs
 * over k in order; the loop over c inside keeps that order per element and lets the compiler vectorise across
 * columns (bt: B transposed, scratch of kel x n). */
static inline void kbd_cpu_mma_transpose(const kbd_cpu_mma_shape *s, const double *B, double *bt) {
  const int kel = s->kel, n = s->n;
  for (int c = 0; c < n; ++c)
    for (int k = 0; k < kel; ++k)
      bt[k * n + c] = B[c * kel + k];
}
static inline void kbd_cpu_mma_dot_t(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
                                     uint32_t *res) {
  const int kel = s->kel, n = s->n;
  double acc[256];
  for (int r = 0; r < rows; ++r) {
    const double *a = A + r * kel;
    for (int c = 0; c < n; ++c)
      acc[c] = 0;
    for (int k = 0; k < kel; ++k) {
      const double av = a[k], *b = bt + k * n;
      for (int c = 0; c < n; ++c)
        acc[c] += av * b[c];
    }
    for (int c = 0; c < n; ++c) /* s32: |sum| < 2^21, exact in double */
      res[r * n + c] = s->td == KBD_MMA_S32 ? (uint32_t)(int64_t)acc[c] : kbd_cvt_f32_bits((float)acc[c]);
  }
}
static inline void kbd_cpu_mma_dot(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *B, double *bt,
                                   uint32_t *res) {
  kbd_cpu_mma_transpose(s, B, bt);
  kbd_cpu_mma_dot_t(s, A, rows, bt, res);
}

/* D := (accumulate ? D + sum : sum) in f32, or s32 (wrapping, or saturating with the idesc's saturate bit), or for
 * an f16 D (its bits in the low half; the K-step sum arrives rounded to f32): D + sum in f32, rounded once to f16. */
static inline uint32_t kbd_cpu_mma_acc(int dtype, int saturate, int accumulate, uint32_t d, uint32_t sum) {
  if (dtype == KBD_MMA_F16) {
    kbd_f16 h;
    h.bits = (uint16_t)d;
    const float v = (accumulate ? kbd_cvt_sw_f16_to_f32(h) : 0.0f) + kbd_cvt_bits_f32(sum);
    return kbd_cvt_sw_f32_to_f16(v).bits;
  }
  if (dtype == KBD_MMA_S32) {
    if (!accumulate) return sum;
    if (!saturate) return d + sum;
    const int64_t v = (int64_t)(int32_t)d + (int64_t)(int32_t)sum;
    return (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
  }
  return accumulate ? kbd_cvt_f32_bits(kbd_cvt_bits_f32(d) + kbd_cvt_bits_f32(sum)) : sum;
}

/* The operation retires: its operand units must still hold what the issue read (else a producer overwrote
 * them while the MMA could still read them: reported at that write), then the async proxy's read is
 * recorded under `reader` at its current clock. */
static inline void kbd_cpu_mma_retire_read(kbd_cpu_cta *cta, kbd_cpu_warp *reader, const kbd_cpu_mma_chunks *ch,
                                           const char *what, const char *ifile, int iline, KBD_SITE_PARAMS) {
  kbd_cpu_shadow *sh = &cta->sh;
  for (int i = 0; i < ch->n; ++i)
    if (KBD_UNLIKELY(kbd_cpu_mma_hash(sh, ch->off[i]) != ch->hash[i])) {
      const size_t b = ch->off[i];
      char who[KBD_CPU_WHO_CAP];
      const char *where = kbd_cpu_smem_at(cta, b);
      const kbd_cpu_site s = kbd_cpu_site_of(sh->wsite[b]);
      kbd_cpu_fault(KBD_ERR_RACE, s.file, s.line,
                    "data race (write after read) on %s: %s writes it here while the %s issued at %s:%d still reads "
                    "it (the MMA retires only at %s:%d): on the GPU the tensor core may read the new bytes. Wait "
                    "for the consumer's release of the stage (kbd_mma_release -> the `empty` mbarrier) first, and "
                    "let the consumer release it only after the MMAs that read it completed (a wgmma.wait_group "
                    "covering them, as kbd_mma_release and kbd_mma_release_mc do; a tcgen05.commit)",
                    where, kbd_cpu_who(cta->G, sh->winfo[b] & KBD_CPU_SH_WARP, who, sizeof who), what, ifile, iline,
                    kbd_file_, kbd_line_);
    }
  if (!cta->L->race_check) return;
  for (int i = 0; i < ch->n; ++i)
    kbd_cpu_shadow_read_at(cta, reader, ch->off[i], 16, what, kbd_cpu_no_elem(), ifile, iline);
}

/* ---- shared addresses ----------------------------------------------------------------------------------------- */

/* __cvta_generic_to_shared: p's offset in the running CTA's shared window (which starts at 0). */
static inline uint32_t kbd_hw_smem_addr(const void *p, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const uintptr_t a = (uintptr_t)p, lo = (uintptr_t)w->cta->smem;
  if (a < lo || a >= lo + w->cta->smem_top)
    kbd_cpu_fault(KBD_ERR_BOUNDS, KBD_SITE_ARGS,
                  "kbd_hw_smem_addr: %p is not in this CTA's shared memory (%zu bytes in use): an MMA operand must "
                  "be a shared tile",
                  p, w->cta->smem_top);
  return (uint32_t)(a - lo);
}

/* ---- sm_90a: wgmma ------------------------------------------------------------------------------------------- */

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
    if (!op->read_done) {
      op->read_done = 1;
      kbd_cpu_mma_retire_read(cta, &cta->warps[w->id & ~3], &op->ch, "wgmma.mma_async", op->file, op->line,
                              KBD_SITE_ARGS);
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

/* kbd_acc_load / kbd_acc_store's column range (the GPU side checks nothing): a view past the accumulator would
 * read a neighbour's Tensor Memory on sm_100a and other registers (or none) on sm_90a. */
static inline void kbd_hw_acc_cols(int col0, int vcols, int acols, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(col0 < 0 || col0 % 8 != 0 || col0 + vcols > acols))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "kbd_acc_load / kbd_acc_store: col0 = %d: a %d-column view of a %d-column accumulator needs col0 a "
                  "multiple of 8 in 0..%d",
                  col0, vcols, acols, acols - vcols);
}

/* A register read of lane l's n values at (elem *)d + l * ld while a wgmma of this warp not yet retired writes
 * some of them (the GPU side is a no-op: the registers are the accumulator). */
static inline void kbd_hw_wgmma_acc_touch(const void *d, int ld, int n, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_arch(90, "a register read of a wgmma accumulator", KBD_SITE_ARGS);
  kbd_cpu_mma_state *S = kbd_cpu_mma_of(cta);
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
                      "accumulator read before wgmma.wait_group: the wgmma issued at %s:%d (%s) still writes these "
                      "registers (lane %d); wait for its group first (kbd_mma_wait, wgmma.wait_group)",
                      op->file, op->line, num < wq->committed ? "committed, not waited for" : "not even committed", l);
    }
  }
}

/* ---- sm_100a: Tensor Memory ------------------------------------------------------------------------------------ */

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
    if (!S->tm_val || !S->tm_clk || !S->tm_who || !S->tm_rclk || !S->tm_rwho || !S->tm_rclk2 || !S->tm_rwho2) {
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
}
static inline void kbd_cpu_umma_check_readers(kbd_cpu_warp *w, kbd_cpu_mma_state *S, uint32_t lane, uint32_t col, int m,
                                              int n, KBD_SITE_PARAMS) {
  kbd_cpu_umma_check_readers_in(w, S, w->cta, S, lane, col, m, n, KBD_SITE_ARGS);
}

/* A new pending MMA record with room for its m x n K-step sums (the descriptor and the Tensor Memory A forms). */
static inline kbd_cpu_umma *kbd_cpu_umma_alloc(const kbd_cpu_mma_shape *s) {
  kbd_cpu_umma *u = (kbd_cpu_umma *)calloc(1, sizeof *u);
  if (u) u->res = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)s->m * (size_t)s->n);
  if (!u || !u->res) {
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
  kbd_cpu_mma_dot(s, S->sa, s->m, S->sb, S->sbt, u->res);
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

/* tcgen05.commit.cta_group::1.mbarrier::arrive::one [bar] (one thread): the thread's MMAs complete (their D
 * lands in Tensor Memory, their operand reads end), then one arrival on bar with release semantics. */
/* The executing thread's uncommitted MMAs complete: their D lands in Tensor Memory and their operand reads end. */
static inline void kbd_cpu_umma_complete(kbd_cpu_warp *w, KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_mma_state *S = kbd_cpu_tmem_state(cta);
  const uint32_t me = (uint32_t)w->gid, now = w->clk[w->gid], base = cta->sh.base;
  for (int i = 0; i < S->un[w->id]; ++i) {
    kbd_cpu_umma *u = S->uq[w->id][i];
    if (u->pair) kbd_cpu_pair_complete_check(u, KBD_SITE_ARGS);
    for (int r = 0; r < u->m; ++r) {
      /* a pair MMA: the rows of the odd CTA's half land in its Tensor Memory (kbd_cpu_pair_cell) */
      kbd_cpu_mma_state *T = S;
      uint32_t tbase = base;
      const size_t x0 = u->pair ? 0 : kbd_cpu_umma_cell(u, r, 0);
      for (int c = 0; c < u->n; ++c) {
        size_t x = x0 + (size_t)c;
        if (u->pair) {
          int hi;
          x = kbd_cpu_pair_cell(u, r, c, &hi);
          T = hi ? kbd_cpu_tmem_state(u->pair) : S;
          tbase = hi ? u->pair->sh.base : base;
        }
        if (u->accumulate) {
          const uint32_t who = T->tm_who[x] & 0x7FFFu;
          if (T->tm_clk[x] < tbase)
            kbd_cpu_fault(KBD_ERR_POISON, u->file, u->line,
                          "tcgen05.mma with accumulate = 1 adds onto Tensor Memory lane %zu, column %zu, which nothing "
                          "wrote in this CTA (start the accumulation with accumulate = 0)",
                          x / KBD_TMEM_COLS, x % KBD_TMEM_COLS);
          if (who != me && T->tm_clk[x] > w->clk[who]) {
            char them[KBD_CPU_WHO_CAP];
            kbd_cpu_fault(KBD_ERR_RACE, u->file, u->line,
                          "tcgen05.mma accumulates onto Tensor Memory lane %zu, column %zu, which %s wrote "
                          "(tcgen05.st) with nothing ordering it before this MMA (tcgen05.wait::st, "
                          "fence::before_thread_sync, a barrier, fence::after_thread_sync)",
                          x / KBD_TMEM_COLS, x % KBD_TMEM_COLS, kbd_cpu_who(cta->G, (int)who, them, sizeof them));
          }
        }
        T->tm_val[x] = kbd_cpu_mma_acc(u->dtype, u->saturate, u->accumulate, T->tm_val[x], u->res[r * u->n + c]);
        T->tm_clk[x] = now;
        T->tm_who[x] = (uint16_t)(me | KBD_CPU_TMEM_MMA);
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

/* ---- at a warp's exit ---------------------------------------------------------------------------------------- */

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

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_H */

#include "mma_pair.h" /* CTA-pair MMAs (.cta_group::2): defines kbd_cpu_pair_complete_check */
#include "mma_ts.h"   /* A operands in Tensor Memory: defines the kbd_cpu_ts_* hooks declared above */
