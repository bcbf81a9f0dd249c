/* kbd/cpu/mma_operand.h - an MMA's shape and its shared-memory operands on the CPU machine (cpu/mma.h has
 * the map): the instruction descriptor decoded and checked, each operand element read through its descriptor
 * (kbd_wgmma_desc_addr / kbd_umma_desc_addr, from the descriptor bits alone, so a wrong start, LBO, SBO or
 * swizzle reads the same wrong bytes as the GPU), the 16-byte units it reads checked at the issue and their
 * shadow state hashed, and the async proxy's read recorded at the retirement.
 */
#ifndef KBD_CPU_MMA_OPERAND_H
#define KBD_CPU_MMA_OPERAND_H

#include "mma_state.h"

#if KBD_MODE_CPU

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

/* kbd_acc_load / kbd_acc_store's column range (the GPU side checks nothing): a view past the accumulator would
 * read a neighbour's Tensor Memory on sm_100a and other registers (or none) on sm_90a. */
static inline void kbd_hw_acc_cols(int col0, int vcols, int acols, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(col0 < 0 || col0 % 8 != 0 || col0 + vcols > acols))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "kbd_acc_load / kbd_acc_store: col0 = %d: a %d-column view of a %d-column accumulator needs col0 a "
                  "multiple of 8 in 0..%d",
                  col0, vcols, acols, acols - vcols);
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

/* n consecutive elements of type t (es bytes each) from p, negated with neg: the decoder's switch once per run
 * instead of once per element, and bf16 (the GEMM's and the attention's type) as a loop the compiler unrolls. */
static inline void kbd_cpu_mma_elems(int t, const unsigned char *p, int es, int n, int neg, double *out) {
  if (t == KBD_MMA_BF16) {
    for (int i = 0; i < n; ++i) {
      uint16_t b;
      memcpy(&b, p + 2 * i, 2);
      const double v = (double)kbd_cvt_bits_f32((uint32_t)b << 16);
      out[i] = neg ? -v : v;
    }
    return;
  }
  for (int i = 0; i < n; ++i) {
    const double v = kbd_cpu_mma_elem(t, p + (size_t)i * (size_t)es);
    out[i] = neg ? -v : v;
  }
}

/* A digest of a 16-byte unit's shadow state (each byte's writer clock, flags and site), taken at the issue and
 * compared at the retirement. Each byte's state is one 64-bit word folded into one of four FNV-style chains (xor, then
 * multiply by an odd constant: a bijection, so a change of any one word always changes its chain, and the chains are
 * combined by rotations and xors, which keep that): four independent chains of 4 multiplies instead of one chain of 32
 * (one per byte and field), which had made this hash a fifth of a CPU-mode GPT-2 decode step. */
static inline uint64_t kbd_cpu_mma_hash_of(const uint32_t *wclk, const uint16_t *winfo, const uint16_t *wsite,
                                           int step) {
  uint64_t h[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull};
  for (int b = 0; b < 16; ++b)
    h[b & 3] =
        (h[b & 3] ^ ((uint64_t)wclk[b * step] << 32 | (uint64_t)winfo[b * step] << 16 | (uint64_t)wsite[b * step])) *
        0x100000001b3ull;
  return h[0] ^ (h[1] << 16 | h[1] >> 48) ^ (h[2] << 32 | h[2] >> 32) ^ (h[3] << 48 | h[3] >> 16);
}
/* The digest of the unit at off: from its summary (step 0: the same word 16 times) when that is current, the same
 * value as from its 16 bytes' state, which it equals. */
static inline uint64_t kbd_cpu_mma_hash(const kbd_cpu_shadow *sh, size_t off) {
  const kbd_cpu_shadow_unit *x = &sh->unit[off / 16];
  if (x->sgen == x->gen) return kbd_cpu_mma_hash_of(&x->wclk, &x->winfo, &x->wsite, 0);
  return kbd_cpu_mma_hash_of(sh->wclk + off, sh->winfo + off, sh->wsite + off, 1);
}

/* The async proxy will read the 16 bytes at off: CHECK them (written, delivered, generic writes fenced by their
 * writer, ordered before w) without recording a read (the read is recorded when the MMA retires). */
static inline void kbd_cpu_mma_check_unit(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, const char *what,
                                          KBD_SITE_PARAMS) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid;
  const int race = cta->L->race_check;
  /* The 16 bytes nearly always come from one store or one TMA box (the same clock and writer): then byte off's checks
   * are every byte's, and the loop below would fault at byte off first, so checking it alone reports the same. */
  /* A current unit summary (kbd_cpu_shadow_unit) says so without loading the bytes' 96 bytes of write state. */
  uint32_t c0, i0;
  uint16_t s0;
  uint32_t diff = 0;
  if (!kbd_cpu_shadow_unit_uniform(sh, off / 16, &c0, &i0, &s0)) {
    const uint32_t *wc = sh->wclk + off;
    const uint16_t *wi = sh->winfo + off;
    for (int b = 1; b < 16; ++b)
      diff |= (wc[b] ^ wc[0]) | (uint32_t)(wi[b] ^ wi[0]);
    c0 = wc[0];
    i0 = wi[0];
  }
  const size_t end = diff ? off + 16 : off + 1;
  for (size_t b = off; b < end; ++b) {
    const uint32_t c = diff ? sh->wclk[b] : c0, info = diff ? sh->winfo[b] : i0, x = info & KBD_CPU_SH_WARP;
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

/* Loads the summary of the unit at off toward the cache (a hint: no effect on what is checked). The operand walks
 * rows 128 bytes or more apart, and the checks of one unit waited on the load of its shadow (the first load
 * of a unit's clocks alone took 12 % of a 2-layer GPT-2 run, when it read the unit's 64 bytes of wclk); fetched a few
 * rows ahead, their latencies overlap. A unit whose summary is stale (written in parts) loads its bytes' state on
 * demand. */
static inline void kbd_cpu_mma_prefetch_unit(const kbd_cpu_shadow *sh, size_t off) {
  __builtin_prefetch(&sh->unit[off / 16]);
}
/* How many rows ahead the prefetch runs. */
#define KBD_CPU_MMA_PF_AHEAD 4

/* A unit that warp gid checked (kbd_cpu_mma_check_unit): its offset, its write state's digest and change count. */
static inline void kbd_cpu_mma_chunk_add(kbd_cpu_mma_chunks *c, const kbd_cpu_shadow *sh, uint32_t off, int gid) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->off = (uint32_t *)realloc(c->off, sizeof(uint32_t) * (size_t)c->cap);
    c->hash = (uint64_t *)realloc(c->hash, sizeof(uint64_t) * (size_t)c->cap);
    c->gen = (uint32_t *)realloc(c->gen, sizeof(uint32_t) * (size_t)c->cap);
    if (!c->off || !c->hash || !c->gen) {
      fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
      abort();
    }
  }
  if (c->n == 0)
    c->gid = gid;
  else if (c->gid != gid)
    c->gid = -1;
  c->off[c->n] = off;
  c->gen[c->n] = sh->unit[off / 16].gen;
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
  /* The descriptor's start, LBO and SBO count 16-byte units and every swizzle permutes whole 16-byte units (§3), so
   * the 16 / es elements of a K-major row that share a unit are consecutive bytes: the decoder runs once per unit
   * (whose first byte gets the checks below), and the unit's other elements follow at es-byte steps. */
  const int per = major == KBD_SMEM_K_MAJOR ? 16 / es : 1;
  for (int r = 0; r < nrows; ++r) {
    if (r + KBD_CPU_MMA_PF_AHEAD < nrows)
      for (int k = 0; k < kel; k += per) {
        const int rr = row0 + r + KBD_CPU_MMA_PF_AHEAD;
        const uint32_t a = arch == KBD_MMA_SM90 ? kbd_wgmma_desc_addr(desc, major, es, rr, k)
                                                : kbd_umma_desc_addr(desc, major, es, rr, k);
        if ((a & 15u) == 0 && (size_t)a + 16 <= top) kbd_cpu_mma_prefetch_unit(&cta->sh, a);
      }
    for (int k = 0; k < kel; k += per) {
      const uint32_t a = arch == KBD_MMA_SM90 ? kbd_wgmma_desc_addr(desc, major, es, row0 + r, k)
                                              : kbd_umma_desc_addr(desc, major, es, row0 + r, k);
      if (KBD_UNLIKELY((size_t)(a & ~15u) + 16 > top))
        kbd_cpu_fault(KBD_ERR_BOUNDS, KBD_SITE_ARGS,
                      "%s: the descriptor 0x%016llx names shared address %u for row %d, k %d, outside the CTA's "
                      "%zu bytes of shared memory",
                      what, (unsigned long long)desc, a, row0 + r, k, top);
      if ((a & 15u) == 0) {
        kbd_cpu_mma_check_unit(cta, w, a, what, KBD_SITE_ARGS);
        if (ch) kbd_cpu_mma_chunk_add(ch, &cta->sh, a, w->gid);
        if (units) (*units)[(*nunits)++] = a;
      }
      kbd_cpu_mma_elems(type, cta->smem + a, es, per < kel - k ? per : kel - k, neg, out + r * kel + k);
    }
  }
}
static inline void kbd_cpu_mma_operand(kbd_cpu_cta *cta, kbd_cpu_warp *w, int arch, uint64_t desc, int type, int major,
                                       int row0, int nrows, int kel, int neg, double *out, kbd_cpu_mma_chunks *ch,
                                       const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_mma_operand_u(cta, w, arch, desc, type, major, row0, nrows, kel, neg, out, ch, NULL, NULL, what,
                        KBD_SITE_ARGS);
}

/* The operation retires: its operand units must still hold what the issue read (else a producer overwrote
 * them while the MMA could still read them: reported at that write), then the async proxy's read is
 * recorded under `reader` at its current clock.
 * A unit whose change count (kbd_cpu_shadow_unit.gen) is the one taken with its hash has the write state it had then:
 * nothing wrote it since, so its hash is unchanged (the retirement does not load its 64 + 32 + 32 bytes of write state
 * to hash it again), and, if the warp that checked it at the issue is the reader, the read checks pass again (that
 * warp's clocks only grew): only the read is recorded. A changed count takes the exact path: the hash compared, every
 * check made. */
static inline void kbd_cpu_mma_retire_read(kbd_cpu_cta *cta, kbd_cpu_warp *reader, const kbd_cpu_mma_chunks *ch,
                                           const char *what, const char *ifile, int iline, KBD_SITE_PARAMS) {
  kbd_cpu_shadow *sh = &cta->sh;
  for (int i = 0; i < ch->n; ++i) {
    if (KBD_LIKELY(sh->unit[ch->off[i] / 16].gen == ch->gen[i])) continue;
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
  }
  if (!cta->L->race_check) return;
  const int own = reader->cta == cta, checked = ch->gid == reader->gid;
  for (int i = 0; i < ch->n; ++i) {
    if (KBD_LIKELY(checked && sh->unit[ch->off[i] / 16].gen == ch->gen[i])) {
      if (own)
        kbd_cpu_shadow_read_record_unit(cta, reader, ch->off[i], ifile, iline);
      else
        kbd_cpu_shadow_read_record(cta, reader, ch->off[i], 16, ifile, iline);
    } else {
      kbd_cpu_shadow_read_at(cta, reader, ch->off[i], 16, what, kbd_cpu_no_elem(), ifile, iline);
    }
  }
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

/* kbd_mma_ring / kbd_mma_issue_commit_by_desc: the caller's descriptor `which` (A or B) broke rule `why`
 * (kbd_mma_desc_tile_check, mma.h). The GPU has no twin: it reads whatever the descriptor names. */
static inline void kbd_hw_mma_desc_fault(const char *which, uint64_t d, const char *why, KBD_SITE_PARAMS) {
  kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s descriptor 0x%016llx: %s", which, (unsigned long long)d, why);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_OPERAND_H */
