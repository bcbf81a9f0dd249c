/* test_mma_cpu.c - the CPU machine's MMA twins (include/kbd/cpu/mma.h), built twice: KBD_CPU_ARCH=90 (wgmma) and
 * KBD_CPU_ARCH=100 (tcgen05 + Tensor Memory). One generic one-warpgroup kernel calls the twins directly: it places
 * A (M x K) and B (N x K) as shared tiles of a runtime kbd_smem_shape (K- or MN-major, each swizzle) with TMA loads
 * (kbd_hw_tma_load, one box per span-wide block) or with generic stores + fence.proxy.async, builds descriptors
 * with kbd_wgmma_smem_desc / kbd_umma_smem_desc, runs the MMAs of every K-step and writes D to global memory.
 * Every element is compared with a double reference: exactly for 8-bit integers and for inputs whose products
 * and sums are exact (small multiples of 1/4), else within the documented bound 2 (K/kstep + 1) 2^-24 sum|ab|.
 * Cases: every kind and type mix, N in {8, 16, 24, 40, 64, 128, 256}, both majors where legal, each swizzle, M = 64
 * and 128, accumulate 0/1, negate A/B, under the default schedule and seeds; tf32 input truncation; a doubled
 * SBO gives a wrong answer. Broken variants, each asserting the fault kind and the file:line of the first run
 * under the default schedule: every check of cpu/mma.h. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/mma_desc.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

#define T_ABYTES 32768 /* A at shared byte 0 (up to 128 x 128 bytes), B at 32768 (up to 256 x 128 bytes) */
#define T_SMEM 98304
#define T_COLS 256 /* Tensor Memory columns allocated */

enum {
  V_OK = 0,
  V_NOFENCE,     /* generic operand stores without fence.proxy.async */
  V_NOBAR,       /* warp 1 stores the operands; the issuers do not synchronise with it */
  V_NOWAIT,      /* TMA operands; nobody waits on the mbarrier */
  V_WAR_EARLY,   /* warp 1 rewrites an A byte after the issue, before the MMA retires */
  V_WAR_LATE,    /* ... after the retirement, without waiting for the consumer's release (sm_90: after its own
                    wgmma.wait_group, which completes the warpgroup's wgmma: clean) */
  V_WAR_SIBLING, /* sm_90: warp 1 rewrites an A byte before its own wait_group; warp 0 waited, nothing orders it */
  V_WAR_TMA,     /* a TMA reload into A before the MMA retires */
  V_TOUCH,       /* sm_90: the accumulator is read before wgmma.wait_group */
  V_NOWAITG,     /* sm_90: committed, never waited for */
  V_NOCOMMIT,    /* never committed */
  V_SKIP3,       /* sm_90: warp 3 does not issue */
  V_DIFF,        /* sm_90: warp 2 issues another accumulate flag */
  V_BADDESC,     /* a reserved descriptor bit */
  V_BADIDESC,    /* a reserved instruction-descriptor bit */
  V_OOB,         /* the A descriptor's start is past the CTA's shared memory */
  V_SBO2,        /* B descriptor with a doubled SBO: no fault, a wrong answer */
  V_ARCH,        /* a twin of the other arch */
  V_LEAK,        /* sm_100: Tensor Memory not freed */
  V_UNIFORM,     /* sm_100: tcgen05.mma from warp-uniform code */
  V_LDNOWAIT,    /* sm_100: warp 1 reads D without waiting for the commit's barrier */
  V_LDNOFENCE,   /* sm_100: ... waits, but no tcgen05.fence::after_thread_sync */
  V_LDLANES,     /* sm_100: warp 1 reads lanes 0..31 */
  V_LDCOLS,      /* sm_100: a tcgen05.ld outside the allocation */
  V_REALLOC,     /* sm_100: tcgen05.alloc after relinquish_alloc_permit */
  V_BADDEALLOC,  /* sm_100: dealloc of columns not allocated */
  V_NOSYNC,      /* sm_90 (correct): issue, commit, wait with no barrier between: a warp's wait waits for the others */
  V_STUCK3,      /* sm_90: warp 3 never gets to its wgmma (it waits on an mbarrier nobody signals) */
  V_PATTERN,     /* correct; A/B hold the K-step rounding pattern (t_run fills it) */
  V_ADDR,        /* kbd_hw_smem_addr of a global pointer */
};

typedef struct tp {
  kbd_tensor_map ma, mb;
  const unsigned char *a, *b; /* A as M x K, B as N x K, row-major elements of their types */
  const uint32_t *c;          /* M x N initial accumulator (f32 or s32 bits) */
  uint32_t *d;                /* M x N result */
  kbd_smem_shape as, bs;
  int kind, m, n, accumulate, tma, variant;
  uint32_t idesc;
} tp;

static int line_addr, line_stuck, line_mma, line_war, line_touch, line_alloc, line_ld, line_alloc2, line_dealloc, line_arch, line_tma;

static void t_place(const tp *p, unsigned char *base, const unsigned char *src, const kbd_smem_shape *s, int rows) {
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < s->cols; ++k) {
      unsigned char *dst = base + kbd_smem_tile_offset(s, r, k);
      memcpy(dst, src + (size_t)(r * s->cols + k) * (size_t)s->esize, (size_t)s->esize);
      kbd_hw_smem_write(dst, (size_t)s->esize, s->esize, "t_place", r, k, KBD_SITE);
    }
  (void)p;
}

/* One box per span-wide block: K-major blocks are K slices of all rows, MN-major blocks M/N slices of all K lines. */
static void t_tma(unsigned char *base, const kbd_smem_shape *s, const kbd_tensor_map *map, uint64_t *bar) {
  const int blk = kbd_smem_block_bytes(s), stride = kbd_smem_block_stride(s), e = s->esize;
  const int nblk = (s->major == KBD_SMEM_K_MAJOR ? s->cols : s->rows) * e / blk;
  const int lines = s->major == KBD_SMEM_K_MAJOR ? s->rows : s->cols;
  for (int b = 0; b < nblk; ++b) {
    MT_MARK(line_tma); kbd_hw_tma_load(base + b * stride, (uint32_t)blk, (uint32_t)lines, s->swizzle, map, bar, 2, b * blk / e, 0, 0, 0, 0, KBD_SITE);
  }
}

/* An element of A rewritten (the WAR variants): warp 1's generic store of A's first 16 bytes. */
static void t_rewrite(unsigned char *a) {
  MT_MARK(line_war); kbd_hw_smem_write(a, 16, 1, "rewrite", -1, -1, KBD_SITE);
}

KBD_KERNEL(k_mma, 128, tp) {
  unsigned char *sm = (unsigned char *)kbd_dynamic_smem();
  unsigned char *A = sm, *B = sm + T_ABYTES;
  KBD_SHARED(kbd_mbarrier, bar, 3);
  KBD_SHARED(uint32_t, slot, 1);
  const int w = kbd_warp_id(), q = w & 3, v = p.variant;
  const int ks = kbd_mma_ksteps(&p.as);
  if (w == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&bar[0], 1);
      kbd_mbarrier_init(&bar[1], 1);
      kbd_mbarrier_init(&bar[2], 1);
    }
  }
  kbd_sync();
  if (v == V_SBO2 && w == 1) { /* every byte the doubled SBO reaches is written (zero) */
    memset(sm, 0, T_SMEM);
    kbd_hw_smem_write(sm, T_SMEM, 1, "zero", -1, -1, KBD_SITE);
  }
  if (p.tma) {
    if (w == 0) {
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&bar[0], kbd_smem_tile_bytes(&p.as) + kbd_smem_tile_bytes(&p.bs));
        t_tma(A, &p.as, &p.ma, &bar[0]);
        t_tma(B, &p.bs, &p.mb, &bar[0]);
      }
    }
    if (v != V_NOWAIT) kbd_mbarrier_wait(&bar[0], 0);
  } else if (v != V_NOBAR) {
    if (w == 1) {
      t_place(&p, A, p.a, &p.as, p.m);
      t_place(&p, B, p.b, &p.bs, p.n);
      if (v != V_NOFENCE) kbd_fence_proxy_async();
    }
    kbd_sync();
  }
  if (v == V_ADDR) {
    MT_MARK(line_addr); (void)kbd_hw_smem_addr(p.d, KBD_SITE);
  }
  const uint32_t aaddr = kbd_hw_smem_addr(A, KBD_SITE), baddr = kbd_hw_smem_addr(B, KBD_SITE);
  uint32_t idesc = p.idesc;
  if (v == V_BADIDESC) idesc |= 1u << 23;
#if KBD_CPU_ARCH == 90
  uint32_t dreg[32][256];
  (void)slot;
  const int mb = p.m / 64, h = p.n / 2;
  if (v == V_ARCH) {
    MT_MARK(line_arch); kbd_hw_tmem_relinquish(KBD_SITE);
  }
  for (int b = 0; b < mb; ++b)
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < h; ++i) {
        const kbd_coord c = kbd_layout_wgmma_acc(64, p.n, 32 * q + l, i);
        dreg[l][b * h + i] = p.c[(64 * b + c.row) * p.n + c.col];
      }
  if (v == V_NOBAR && w == 0) { /* stored and fenced, but nothing orders it before warps 1-3's issue */
    t_place(&p, A, p.a, &p.as, p.m);
    t_place(&p, B, p.b, &p.bs, p.n);
    kbd_fence_proxy_async();
  }
  if (v == V_STUCK3 && w == 3) {
    MT_MARK(line_stuck); kbd_mbarrier_wait(&bar[1], 0);
  }
  if (!(v == V_SKIP3 && w == 3)) {
    kbd_hw_wgmma_fence(KBD_SITE);
    for (int j = 0; j < ks; ++j)
      for (int b = 0; b < mb; ++b) {
        uint64_t ad = kbd_wgmma_smem_desc(&p.as, aaddr, 64 * b, j), bd = kbd_wgmma_smem_desc(&p.bs, baddr, 0, j);
        if (v == V_BADDESC) ad |= 1ull << 14;
        if (v == V_OOB) ad = kbd_mma_desc_add_bytes(ad, 200 * 1024);
        if (v == V_SBO2) bd += (uint64_t)(kbd_mma_desc_sbo(bd) >> 4) << 32;
        const int acc = (p.accumulate || j > 0) ^ (v == V_DIFF && w == 2);
        MT_MARK(line_mma); kbd_hw_wgmma(&dreg[0][b * h], 256, p.kind, idesc, ad, bd, acc, KBD_SITE);
      }
    if (v != V_NOSYNC && v != V_STUCK3) kbd_sync();
    if ((v == V_WAR_EARLY) && w == 1) t_rewrite(A);
    if (v == V_WAR_TMA && w == 0) {
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&bar[1], kbd_smem_tile_bytes(&p.as));
        t_tma(A, &p.as, &p.ma, &bar[1]);
      }
    }
    if (v != V_NOSYNC && v != V_STUCK3) kbd_sync();
    if (v != V_NOCOMMIT) kbd_hw_wgmma_commit(KBD_SITE);
    if (v == V_TOUCH) {
      MT_MARK(line_touch); kbd_hw_wgmma_acc_touch(&dreg[0][0], 256, mb * h, KBD_SITE);
    }
    if (v != V_NOCOMMIT && v != V_NOWAITG && !(v == V_WAR_SIBLING && w != 0)) kbd_hw_wgmma_wait(0, KBD_SITE);
    if ((v == V_WAR_LATE || v == V_WAR_SIBLING) && w == 1) t_rewrite(A);
    if (v == V_WAR_SIBLING && w != 0) kbd_hw_wgmma_wait(0, KBD_SITE);
    if (v != V_NOCOMMIT && v != V_NOWAITG) kbd_hw_wgmma_acc_touch(&dreg[0][0], 256, mb * h, KBD_SITE);
    for (int b = 0; b < mb; ++b)
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < h; ++i) {
          const kbd_coord c = kbd_layout_wgmma_acc(64, p.n, 32 * q + l, i);
          p.d[(64 * b + c.row) * p.n + c.col] = dreg[l][b * h + i];
        }
  }
  if (v == V_WAR_TMA) kbd_mbarrier_wait(&bar[1], 0);
#else
  uint32_t cells[32 * 32];
  if (v == V_ARCH) {
    MT_MARK(line_arch); kbd_hw_wgmma_fence(KBD_SITE);
  }
  if (w == 0) {
    MT_MARK(line_alloc); kbd_hw_tmem_alloc(slot, T_COLS, KBD_SITE);
    kbd_hw_tmem_relinquish(KBD_SITE);
    if (v == V_REALLOC) {
      MT_MARK(line_alloc2); kbd_hw_tmem_alloc(slot, 32, KBD_SITE);
    }
  }
  kbd_hw_tcgen05_fence_before(KBD_SITE);
  kbd_sync();
  kbd_hw_tcgen05_fence_after(KBD_SITE);
  kbd_hw_smem_read(slot, 4, 4, "slot", -1, -1, KBD_SITE);
  const uint32_t taddr = *slot;
  /* lane l, register j of an 8-column chunk at column c0: M = 128 32x32b.x8 (row 32q + l, column c0 + j),
   * M = 64 16x256b.x2 (row 16q + l/4 + 8h, column c0 + 8k + 2(l%4) + e for j = 4k + 2h + e) */
#define T_ROW(l, j) (p.m == 128 ? 32 * q + (l) : 16 * q + (l) / 4 + 8 * (((j) / 2) & 1))
#define T_COL(l, j, c0) (p.m == 128 ? (c0) + (j) : (c0) + 8 * ((j) / 4) + 2 * ((l) % 4) + ((j) & 1))
  const int shape = p.m == 128 ? KBD_TMEM_32X32B : KBD_TMEM_16X256B, xn = p.m == 128 ? 8 : 1;
  const int regs = p.m == 128 ? 8 : 4, step = 8, iw = v == V_NOBAR ? 1 : 0; /* iw: the issuing warp */
  const uint32_t lane0 = (uint32_t)(32 * q) << 16;
  if (p.accumulate) {
    for (int c0 = 0; c0 < p.n; c0 += step) {
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < regs; ++j)
          cells[l * 32 + j] = p.c[T_ROW(l, j) * p.n + T_COL(l, j, c0)];
      kbd_hw_tmem_st(taddr + lane0 + (uint32_t)c0, cells, 32, shape, xn, KBD_SITE);
    }
    kbd_hw_tmem_wait_st(KBD_SITE);
    kbd_hw_tcgen05_fence_before(KBD_SITE);
    kbd_sync();
    kbd_hw_tcgen05_fence_after(KBD_SITE);
  }
  if (v == V_NOBAR && w == 0) { /* stored and fenced, but nothing orders it before warp 1's issue */
    t_place(&p, A, p.a, &p.as, p.m);
    t_place(&p, B, p.b, &p.bs, p.n);
    kbd_fence_proxy_async();
  }
  if (w == iw) {
    KBD_ELECT_ONE {
      for (int j = 0; j < ks; ++j) {
        uint64_t ad = kbd_umma_smem_desc(&p.as, aaddr, 0, j), bd = kbd_umma_smem_desc(&p.bs, baddr, 0, j);
        if (v == V_BADDESC) ad |= 1ull << 14;
        if (v == V_OOB) ad = kbd_mma_desc_add_bytes(ad, 200 * 1024);
        if (v == V_SBO2) bd += (uint64_t)(kbd_mma_desc_sbo(bd) >> 4) << 32;
        MT_MARK(line_mma); kbd_hw_umma(taddr, p.kind, idesc, ad, bd, p.accumulate || j > 0, KBD_SITE);
      }
    }
    if (v == V_UNIFORM) {
      MT_MARK(line_mma); kbd_hw_umma(taddr, p.kind, idesc, kbd_umma_smem_desc(&p.as, aaddr, 0, 0), kbd_umma_smem_desc(&p.bs, baddr, 0, 0), 0, KBD_SITE);
    }
  }
  kbd_sync();
  if (v == V_WAR_EARLY && w == 1) t_rewrite(A);
  if (v == V_WAR_TMA && w == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&bar[1], kbd_smem_tile_bytes(&p.as));
      t_tma(A, &p.as, &p.ma, &bar[1]);
    }
  }
  kbd_sync();
  if (w == iw && v != V_NOCOMMIT) {
    KBD_ELECT_ONE { kbd_hw_umma_commit(&bar[2], KBD_SITE); }
  }
  if (v == V_WAR_LATE && w == 1) t_rewrite(A);
  if (v != V_NOCOMMIT) {
    if (!(v == V_LDNOWAIT && w == 1)) kbd_mbarrier_wait(&bar[2], 0);
    if (!((v == V_LDNOFENCE || v == V_LDNOWAIT) && w == 1)) kbd_hw_tcgen05_fence_after(KBD_SITE);
    if (p.m == 128 || q < 4) {
      for (int c0 = 0; c0 < p.n; c0 += step) {
        uint32_t t = taddr + lane0 + (uint32_t)c0;
        if (v == V_LDLANES && w == 1) t -= 32u << 16;
        if (v == V_LDCOLS && w == 1) t += T_COLS;
        MT_MARK(line_ld); kbd_hw_tmem_ld(cells, 32, t, shape, xn, KBD_SITE);
        kbd_hw_tmem_wait_ld(KBD_SITE);
        for (int l = 0; l < 32; ++l)
          for (int j = 0; j < regs; ++j)
            p.d[T_ROW(l, j) * p.n + T_COL(l, j, c0)] = cells[l * 32 + j];
      }
    }
  }
  if (v == V_WAR_TMA) kbd_mbarrier_wait(&bar[1], 0);
  kbd_hw_tcgen05_fence_before(KBD_SITE);
  kbd_sync();
  if (w == 0 && v != V_LEAK) {
    kbd_hw_tcgen05_fence_after(KBD_SITE);
    MT_MARK(line_dealloc); kbd_hw_tmem_dealloc(v == V_BADDEALLOC ? taddr + 32 : taddr, T_COLS, KBD_SITE);
  }
#endif
}

/* ---- host side --------------------------------------------------------------------------------------------- */

typedef struct tcase {
  int ta, tb, m, n, amaj, bmaj, aswz, bswz, accumulate, nega, negb, tma, real;
} tcase;

static uint64_t t_rng;
static uint32_t t_rand(void) {
  t_rng = t_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(t_rng >> 33);
}

static int t_tmap_dt(int t) {
  return t == KBD_MMA_F16 ? KBD_TMAP_DT_F16 : t == KBD_MMA_BF16 ? KBD_TMAP_DT_BF16 : t == KBD_MMA_TF32 ? KBD_TMAP_DT_F32 : KBD_TMAP_DT_U8;
}
static int t_tmap_swz(int s) {
  return s == KBD_SWIZZLE_32B ? KBD_TMAP_SWIZZLE_32B : s == KBD_SWIZZLE_64B ? KBD_TMAP_SWIZZLE_64B : s == KBD_SWIZZLE_128B ? KBD_TMAP_SWIZZLE_128B : KBD_TMAP_SWIZZLE_128B_ATOM_32B;
}

/* A value of type t: small exact ones (multiples of 1/4, small integers), or `real` random ones. */
static void t_value(int t, int real, unsigned char *dst) {
  const uint32_t r = t_rand();
  float f = real ? (float)((int)(r % 20001u) - 10000) / 7919.0f : (float)((int)(r % 17u) - 8) / 4.0f;
  switch (t) {
  case KBD_MMA_F16: { const kbd_f16 h = kbd_cvt_sw_f32_to_f16(f); memcpy(dst, &h.bits, 2); break; }
  case KBD_MMA_BF16: { const kbd_bf16 h = kbd_cvt_sw_f32_to_bf16(f); memcpy(dst, &h.bits, 2); break; }
  case KBD_MMA_TF32: memcpy(dst, &f, 4); break;
  case KBD_MMA_E4M3: dst[0] = kbd_cvt_sw_f32_to_e4m3((float)((int)(r % 9u) - 4)).bits; break;
  case KBD_MMA_E5M2: dst[0] = kbd_cvt_sw_f32_to_e5m2((float)((int)(r % 9u) - 4)).bits; break;
  default: dst[0] = (unsigned char)(r >> 8); break; /* s8 / u8: any byte */
  }
}
/* The reference's decoding: the contract's (tf32 drops 13 mantissa bits; fp8 through kbd's conversions). */
static double t_decode(int t, const unsigned char *p) {
  switch (t) {
  case KBD_MMA_F16: { kbd_f16 h; memcpy(&h.bits, p, 2); return kbd_cvt_sw_f16_to_f32(h); }
  case KBD_MMA_BF16: { uint16_t b; memcpy(&b, p, 2); return kbd_cvt_bits_f32((uint32_t)b << 16); }
  case KBD_MMA_TF32: { uint32_t u; memcpy(&u, p, 4); return kbd_cvt_bits_f32(u & 0xFFFFE000u); }
  case KBD_MMA_E4M3: { kbd_e4m3 e; e.bits = p[0]; return kbd_cvt_sw_e4m3_to_f32(e); }
  case KBD_MMA_E5M2: { kbd_e5m2 e; e.bits = p[0]; return kbd_cvt_sw_e5m2_to_f32(e); }
  case KBD_MMA_S8: return (double)(int8_t)p[0];
  default: return (double)p[0];
  }
}

typedef struct trun {
  kbd_status st;
  int bad;       /* elements outside the bound */
  double maxerr; /* largest |D - ref| / bound seen */
} trun;

static const char *t_type_name(int t) {
  static const char *const n[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"};
  return t >= 0 && t < 7 ? n[t] : "?";
}

/* Runs one case with one variant; fills the operands, checks every element unless the launch failed. */
static trun t_run(const tcase *tc, int variant, int tweak_tf32) {
  trun res;
  memset(&res, 0, sizeof res);
  const int arch = KBD_CPU_ARCH == 90 ? KBD_MMA_SM90 : KBD_MMA_SM100;
  const int ea = kbd_mma_type_bytes(tc->ta), eb = kbd_mma_type_bytes(tc->tb), m = tc->m, n = tc->n;
  const int k = 128 / ea; /* 128 bytes of K: 4 K-steps, one 128B span */
  const int dt = kbd_mma_kind_of(tc->ta, tc->tb) == KBD_MMA_KIND_I8 ? KBD_MMA_S32 : KBD_MMA_F32;
  tp p;
  memset(&p, 0, sizeof p);
  p.as = kbd_smem_shape_make(ea, m, k, tc->aswz, tc->amaj);
  p.bs = kbd_smem_shape_make(eb, n, k, tc->bswz, tc->bmaj);
  p.kind = kbd_mma_kind_of(tc->ta, tc->tb);
  p.m = m;
  p.n = n;
  p.accumulate = tc->accumulate;
  p.tma = tc->tma;
  p.variant = variant;
  const unsigned flags = (tc->nega ? KBD_UMMA_NEGATE_A : 0u) | (tc->negb ? KBD_UMMA_NEGATE_B : 0u);
  p.idesc = kbd_umma_instr_desc(tc->ta, tc->tb, dt, arch == KBD_MMA_SM90 ? 64 : m, n, tc->amaj, tc->bmaj, flags);
  unsigned char *ha = malloc((size_t)(m * k * ea)), *hb = malloc((size_t)(n * k * eb));
  unsigned char *ta = malloc((size_t)(m * k * ea)), *tb = malloc((size_t)(n * k * eb));
  uint32_t *hc = malloc(sizeof(uint32_t) * (size_t)(m * n)), *hd = malloc(sizeof(uint32_t) * (size_t)(m * n));
  assert_true(ha && hb && ta && tb && hc && hd);
  for (int i = 0; i < m * k; ++i) t_value(tc->ta, tc->real, ha + (size_t)i * (size_t)ea);
  for (int i = 0; i < n * k; ++i) t_value(tc->tb, tc->real, hb + (size_t)i * (size_t)eb);
  if (tweak_tf32 && variant != V_PATTERN) /* tf32: A = 1 + 2^-20 (its low 13 bits are dropped), B = 1 */
    for (int i = 0; i < m * k; ++i) {
      const float one = 1.0f + 0x1p-20f, o = 1.0f;
      memcpy(ha + (size_t)i * 4, &one, 4);
      memcpy(hb + (size_t)(i % (n * k)) * 4, &o, 4);
    }
  if (variant == V_PATTERN) { /* bf16; per row/column: products 2^24, 1, -2^24 at K = z0, z1, z2, zero elsewhere */
    const int z[3] = {tweak_tf32 & 0xff, (tweak_tf32 >> 8) & 0xff, (tweak_tf32 >> 16) & 0xff};
    const float av[3] = {4096.0f, 1.0f, -4096.0f}, bv[3] = {4096.0f, 1.0f, 4096.0f};
    memset(ha, 0, (size_t)(m * k * ea));
    memset(hb, 0, (size_t)(n * k * eb));
    for (int t = 0; t < 3; ++t) {
      const kbd_bf16 x = kbd_cvt_sw_f32_to_bf16(av[t]), y = kbd_cvt_sw_f32_to_bf16(bv[t]);
      for (int i = 0; i < m; ++i) memcpy(ha + (size_t)((i * k + z[t]) * ea), &x.bits, 2);
      for (int i = 0; i < n; ++i) memcpy(hb + (size_t)((i * k + z[t]) * eb), &y.bits, 2);
    }
    tweak_tf32 = 0;
  }
  for (int i = 0; i < m * n; ++i) {
    if (dt == KBD_MMA_S32) hc[i] = t_rand();
    else { const float f = tc->real ? (float)((int)(t_rand() % 2001u) - 1000) / 97.0f : (float)((int)(t_rand() % 33u) - 16) / 4.0f; memcpy(&hc[i], &f, 4); }
  }
  /* MN-major TMA sources are the transposes (K x M) */
  for (int r = 0; r < m; ++r) for (int c = 0; c < k; ++c) memcpy(ta + (size_t)((tc->amaj ? c * m + r : r * k + c) * ea), ha + (size_t)((r * k + c) * ea), (size_t)ea);
  for (int r = 0; r < n; ++r) for (int c = 0; c < k; ++c) memcpy(tb + (size_t)((tc->bmaj ? c * n + r : r * k + c) * eb), hb + (size_t)((r * k + c) * eb), (size_t)eb);
  void *da, *db, *dta, *dtb, *dc, *dd;
  assert_int_equal(kbd_malloc(&da, (size_t)(m * k * ea)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, (size_t)(n * k * eb)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dta, (size_t)(m * k * ea)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dtb, (size_t)(n * k * eb)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dc, sizeof(uint32_t) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dd, sizeof(uint32_t) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, (size_t)(m * k * ea)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, (size_t)(n * k * eb)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dta, ta, (size_t)(m * k * ea)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dtb, tb, (size_t)(n * k * eb)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dc, hc, sizeof(uint32_t) * (size_t)(m * n)).code, KBD_OK);
  assert_int_equal(kbd_memset_device(dd, 0xff, sizeof(uint32_t) * (size_t)(m * n)).code, KBD_OK);
  {
    const int ablk = kbd_smem_block_bytes(&p.as) / ea, bblk = kbd_smem_block_bytes(&p.bs) / eb;
    kbd_tensor_map_desc d1 = tc->amaj ? kbd_tensor_map_desc_2d((kbd_tmap_dtype)t_tmap_dt(tc->ta), dta, (uint64_t)k, (uint64_t)m, (uint64_t)(m * ea), (uint32_t)k, (uint32_t)ablk, (kbd_tmap_swizzle)t_tmap_swz(tc->aswz))
                                      : kbd_tensor_map_desc_2d((kbd_tmap_dtype)t_tmap_dt(tc->ta), dta, (uint64_t)m, (uint64_t)k, (uint64_t)(k * ea), (uint32_t)m, (uint32_t)ablk, (kbd_tmap_swizzle)t_tmap_swz(tc->aswz));
    kbd_tensor_map_desc d2 = tc->bmaj ? kbd_tensor_map_desc_2d((kbd_tmap_dtype)t_tmap_dt(tc->tb), dtb, (uint64_t)k, (uint64_t)n, (uint64_t)(n * eb), (uint32_t)k, (uint32_t)bblk, (kbd_tmap_swizzle)t_tmap_swz(tc->bswz))
                                      : kbd_tensor_map_desc_2d((kbd_tmap_dtype)t_tmap_dt(tc->tb), dtb, (uint64_t)n, (uint64_t)k, (uint64_t)(k * eb), (uint32_t)n, (uint32_t)bblk, (kbd_tmap_swizzle)t_tmap_swz(tc->bswz));
    if (tc->tma) {
      assert_int_equal(kbd_tensor_map_encode(&p.ma, &d1).code, KBD_OK);
      assert_int_equal(kbd_tensor_map_encode(&p.mb, &d2).code, KBD_OK);
    }
  }
  p.a = (const unsigned char *)da;
  p.b = (const unsigned char *)db;
  p.c = (const uint32_t *)dc;
  p.d = (uint32_t *)dd;
  res.st = k_mma(kbd_cfg(kbd_dim(1, 1, 1), T_SMEM, NULL), p);
  if (res.st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(uint32_t) * (size_t)(m * n)).code, KBD_OK);
    const int kstep = 32 / ea;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        int64_t iref = 0;
        for (int q = 0; q < k; ++q) {
          double a = t_decode(tc->ta, ha + (size_t)((i * k + q) * ea)), b = t_decode(tc->tb, hb + (size_t)((j * k + q) * eb));
          if (tc->nega) a = -a;
          if (tc->negb) b = -b;
          ref += a * b;
          mag += fabs(a * b);
          iref += (int64_t)a * (int64_t)b;
        }
        if (dt == KBD_MMA_S32) {
          const uint32_t want = (uint32_t)iref + (tc->accumulate ? hc[i * n + j] : 0u);
          if (hd[i * n + j] != want) {
            if (!res.bad) print_message("  D[%d][%d] = %d, want %d\n", i, j, (int)hd[i * n + j], (int)want);
            res.bad++;
          }
        } else {
          float c0, got;
          memcpy(&c0, &hc[i * n + j], 4);
          memcpy(&got, &hd[i * n + j], 4);
          if (tc->accumulate) ref += c0, mag += fabs(c0);
          const double bound = 2.0 * (k / kstep + 1) * 0x1p-24 * mag;
          const double err = fabs((double)got - ref);
          if (variant == V_PATTERN) { /* the contract exactly: each K-step's double sum rounded to f32, added in f32 */
            float dd = tc->accumulate ? c0 : 0.0f;
            for (int s0 = 0; s0 < k; s0 += kstep) {
              double st = 0;
              for (int qq = s0; qq < s0 + kstep; ++qq)
                st += t_decode(tc->ta, ha + (size_t)((i * k + qq) * ea)) * t_decode(tc->tb, hb + (size_t)((j * k + qq) * eb));
              dd += (float)st;
            }
            if (got != dd) {
              if (!res.bad) print_message("  D[%d][%d] = %.9g, want %.9g (the contract)\n", i, j, got, dd);
              res.bad++;
            }
          } else if (!(err <= bound)) {
            if (!res.bad) print_message("  D[%d][%d] = %.9g, want %.9g (bound %.3g)\n", i, j, got, ref, bound);
            res.bad++;
          }
          if (bound > 0 && err / bound > res.maxerr) res.maxerr = err / bound;
        }
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dta), kbd_free(dtb), kbd_free(dc), kbd_free(dd);
  free(ha), free(hb), free(ta), free(tb), free(hc), free(hd);
  return res;
}

/* Is the case legal on this arch (shape rules of both tiles, the MMA's type/shape rules)? */
static int t_legal(const tcase *tc) {
  const int arch = KBD_CPU_ARCH == 90 ? KBD_MMA_SM90 : KBD_MMA_SM100;
  const int ea = kbd_mma_type_bytes(tc->ta), eb = kbd_mma_type_bytes(tc->tb), k = 128 / ea;
  const kbd_smem_shape as = kbd_smem_shape_make(ea, tc->m, k, tc->aswz, tc->amaj), bs = kbd_smem_shape_make(eb, tc->n, k, tc->bswz, tc->bmaj);
  const int dt = kbd_mma_kind_of(tc->ta, tc->tb) == KBD_MMA_KIND_I8 ? KBD_MMA_S32 : KBD_MMA_F32;
  const unsigned flags = (tc->nega ? KBD_UMMA_NEGATE_A : 0u) | (tc->negb ? KBD_UMMA_NEGATE_B : 0u);
  if (kbd_mma_operand_check(arch, &as, 0) || kbd_mma_operand_check(arch, &bs, T_ABYTES)) return 0;
  if (arch == KBD_MMA_SM90) return !kbd_wgmma_shape_check(tc->ta, tc->tb, dt, 64, tc->n, tc->amaj, tc->bmaj) && !(flags && kbd_mma_kind_of(tc->ta, tc->tb) == KBD_MMA_KIND_I8);
  return !kbd_umma_instr_check(tc->ta, tc->tb, dt, tc->m, tc->n, tc->amaj, tc->bmaj, flags, 1);
}

static void t_expect_ok(const tcase *tc, const char *what) {
  const trun r = t_run(tc, V_OK, 0);
  if (r.st.code != KBD_OK || r.bad)
    fail_msg("%s sm_%d: %s x %s M%d N%d majors %d/%d swz %d/%d acc %d neg %d/%d tma %d: %s, %d bad elements", what, KBD_CPU_ARCH,
             t_type_name(tc->ta), t_type_name(tc->tb), tc->m, tc->n, tc->amaj, tc->bmaj, tc->aswz, tc->bswz, tc->accumulate, tc->nega, tc->negb, tc->tma,
             r.st.code == KBD_OK ? "ran" : r.st.msg, r.bad);
}

/* Every type pair x N x majors x swizzles (legal ones), with M, accumulate, negation, TMA/generic placement
 * varying over the cases; the default schedule. */
static void test_numerics_matrix(void **state) {
  (void)state;
  static const int pairs[][2] = {{KBD_MMA_BF16, KBD_MMA_BF16}, {KBD_MMA_F16, KBD_MMA_F16}, {KBD_MMA_TF32, KBD_MMA_TF32},
                                 {KBD_MMA_E4M3, KBD_MMA_E4M3}, {KBD_MMA_E4M3, KBD_MMA_E5M2}, {KBD_MMA_E5M2, KBD_MMA_E4M3},
                                 {KBD_MMA_E5M2, KBD_MMA_E5M2}, {KBD_MMA_S8, KBD_MMA_S8},     {KBD_MMA_S8, KBD_MMA_U8},
                                 {KBD_MMA_U8, KBD_MMA_S8},     {KBD_MMA_U8, KBD_MMA_U8}};
  static const int ns[] = {8, 16, 24, 40, 64, 128, 256};
  static const int swz[] = {KBD_SWIZZLE_32B, KBD_SWIZZLE_64B, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B_ATOM32};
  int ran = 0, idx = 0;
  t_rng = 1;
  for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; ++pi)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni)
      for (int maj = 0; maj < 4; ++maj)
        for (size_t si = 0; si < 4; ++si) {
          tcase tc;
          memset(&tc, 0, sizeof tc);
          tc.ta = pairs[pi][0], tc.tb = pairs[pi][1], tc.n = ns[ni], tc.amaj = maj & 1, tc.bmaj = maj >> 1;
          tc.aswz = swz[si], tc.bswz = swz[(si + ni) % 4];
          if (!t_legal(&tc)) tc.bswz = swz[si];
          ++idx;
          tc.m = (idx % 3 == 0) ? 64 : 128;
          tc.accumulate = idx % 2;
          tc.tma = (idx / 2) % 2;
          if (kbd_mma_kind_of(tc.ta, tc.tb) != KBD_MMA_KIND_I8) tc.nega = (idx % 5) == 1, tc.negb = (idx % 7) == 2;
          if (!t_legal(&tc)) continue;
          t_expect_ok(&tc, "matrix");
          ++ran;
        }
  print_message("  sm_%d: %d cases\n", KBD_CPU_ARCH, ran);
  assert_true(ran > 150);
}

/* Random real inputs (rounding at every K-step): within the documented bound, and the bound is not loose by
 * orders of magnitude (the largest error seen is a real fraction of it). */
static void test_numerics_rounding(void **state) {
  (void)state;
  const int types[] = {KBD_MMA_BF16, KBD_MMA_F16, KBD_MMA_TF32};
  double worst = 0;
  t_rng = 7;
  for (int t = 0; t < 3; ++t)
    for (int acc = 0; acc < 2; ++acc) {
      tcase tc = {types[t], types[t], 128, 64, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B, acc, 0, 0, acc, 1};
      if (KBD_CPU_ARCH == 90) tc.m = 64;
      const trun r = t_run(&tc, V_OK, 0);
      MT_ASSERT_OK(r.st);
      assert_int_equal(r.bad, 0);
      if (r.maxerr > worst) worst = r.maxerr;
    }
  print_message("  worst error / bound = %.3g\n", worst);
  assert_true(worst > 1e-4);
}

/* tf32 drops the low 13 mantissa bits of each input: (1 + 2^-20) * 1 summed over K is exactly K. */
static void test_tf32_truncation(void **state) {
  (void)state;
  tcase tc = {KBD_MMA_TF32, KBD_MMA_TF32, 64, 8, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B, 0, 0, 0, 0, 0};
  const trun r = t_run(&tc, V_OK, 1);
  MT_ASSERT_OK(r.st);
  assert_int_equal(r.bad, 0); /* the reference truncates too; an emulator that did not is 32 * 2^-20 off */
}

/* The numeric contract exactly (bf16 products 2^24, 1, -2^24): inside one K-step the sum is exact (1), across
 * K-steps each step is rounded to f32 and added in f32 (2^24 + 1 rounds to 2^24, so 0). An emulator summing in
 * f32, or all of K in double, fails one of the two. */
static void test_kstep_contract(void **state) {
  (void)state;
  tcase tc = {KBD_MMA_BF16, KBD_MMA_BF16, 64, 16, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B, 0, 0, 0, 0, 0};
  const int pats[2] = {0 | 1 << 8 | 2 << 16, 0 | 16 << 8 | 32 << 16}; /* one K-step; three K-steps */
  for (int i = 0; i < 2; ++i) {
    const trun r = t_run(&tc, V_PATTERN, pats[i]);
    MT_ASSERT_OK(r.st);
    assert_int_equal(r.bad, 0);
  }
}

/* Seeds and two host threads: the same results whatever the warp order. */
static void test_seeds(void **state) {
  (void)state;
  for (long seed = 0; seed < 4; ++seed)
    for (long th = 1; th <= 2; ++th) {
      mt_env(th, seed);
      t_rng = 11;
      tcase a = {KBD_MMA_BF16, KBD_MMA_BF16, 128, 256, 0, 1, KBD_SWIZZLE_128B, KBD_SWIZZLE_64B, 1, 0, 1, 1, 0};
      tcase b = {KBD_MMA_S8, KBD_MMA_U8, 128, 48, 0, 0, KBD_SWIZZLE_64B, KBD_SWIZZLE_32B, 0, 0, 0, 0, 0};
      if (KBD_CPU_ARCH == 90) b.m = 64;
      t_expect_ok(&a, "seed");
      t_expect_ok(&b, "seed");
    }
  mt_env(1, -1);
}

/* A doubled SBO (B, K-major, N = 64): the emulator reads through the descriptor bits, so rows 8.. come from
 * other bytes and the answer is wrong, without a fault (every byte it reaches was written). */
static void test_sbo_doubled(void **state) {
  (void)state;
  t_rng = 3;
  tcase tc = {KBD_MMA_BF16, KBD_MMA_BF16, 64, 64, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B, 0, 0, 0, 0, 0};
  const trun ok = t_run(&tc, V_OK, 0);
  MT_ASSERT_OK(ok.st);
  assert_int_equal(ok.bad, 0);
  const trun r = t_run(&tc, V_SBO2, 0);
  MT_ASSERT_OK(r.st);
  assert_true(r.bad >= 64 * 56 / 2); /* columns 8..63 read other rows of B: nearly all of them differ */
}

/* ---- broken variants ------------------------------------------------------------------------------------------- */

static kbd_status t_bad(int variant, int tma, int kind_i8) {
  tcase tc = {KBD_MMA_BF16, KBD_MMA_BF16, 64, 64, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_128B, 0, 0, 0, tma, 0};
  if (kind_i8) tc.ta = tc.tb = KBD_MMA_S8;
  t_rng = 5;
  return t_run(&tc, variant, 0).st;
}
#define T_EXPECT(variant, tma, code, line, needle)                                                                     \
  do {                                                                                                                 \
    const kbd_status s_ = t_bad((variant), (tma), 0);                                                                  \
    MT_ASSERT_CODE(s_, (code));                                                                                        \
    MT_ASSERT_AT(s_, (line));                                                                                          \
    MT_ASSERT_HAS(s_, (needle));                                                                                       \
  } while (0)

static void test_bad_operands(void **state) {
  (void)state;
  T_EXPECT(V_NOFENCE, 0, KBD_ERR_RACE, MT_LINE(line_mma), "fence.proxy.async");
  T_EXPECT(V_NOBAR, 0, KBD_ERR_RACE, MT_LINE(line_mma), "read after write");
  T_EXPECT(V_NOWAIT, 1, KBD_ERR_POISON, MT_LINE(line_mma), "asynchronous copy is still writing");
}

/* sm_90a: a warp's wgmma.wait_group completes the warpgroup's wgmma, operand reads included (PTX ISA 9.7.15.7.3: the
 * groups "committed by the executing threads are complete"), so the warp may then write the operands; a warp that
 * has not waited itself, with nothing ordering it after a sibling's wait, may not. sm_100a: the MMA's reads end at
 * the commit, which the rewriting warp does not wait for. */
#if KBD_MMA_ARCH == 90
#define T_WAR_LATE V_WAR_SIBLING
#else
#define T_WAR_LATE V_WAR_LATE
#endif
static void test_bad_war(void **state) {
  (void)state;
  T_EXPECT(V_WAR_EARLY, 0, KBD_ERR_RACE, MT_LINE(line_war), "write after read");
  T_EXPECT(V_WAR_EARLY, 1, KBD_ERR_RACE, MT_LINE(line_war), "write after read");
  T_EXPECT(T_WAR_LATE, 0, KBD_ERR_RACE, MT_LINE(line_war), "write after read");
  T_EXPECT(V_WAR_TMA, 1, KBD_ERR_RACE, MT_LINE(line_tma), "write after read");
  /* the same reports under seeds: the line of the offending write, whichever order the warps ran in */
  for (long seed = 0; seed < 6; ++seed) {
    mt_env(1, seed);
    T_EXPECT(V_WAR_EARLY, 0, KBD_ERR_RACE, MT_LINE(line_war), "write after read");
    T_EXPECT(T_WAR_LATE, 1, KBD_ERR_RACE, MT_LINE(line_war), "write after read");
#if KBD_MMA_ARCH == 90
    MT_ASSERT_OK(t_bad(V_WAR_LATE, (int)(seed & 1), 0));
#endif
  }
  mt_env(1, -1);
#if KBD_MMA_ARCH == 90
  MT_ASSERT_OK(t_bad(V_WAR_LATE, 0, 0));
#endif
}

static void test_bad_descriptors(void **state) {
  (void)state;
  T_EXPECT(V_BADDESC, 0, KBD_ERR_INVALID, MT_LINE(line_mma), "reserved");
  T_EXPECT(V_BADIDESC, 0, KBD_ERR_INVALID, MT_LINE(line_mma), "reserved bits 6, 23 and 29");
  T_EXPECT(V_OOB, 0, KBD_ERR_BOUNDS, MT_LINE(line_mma), "outside the CTA's");
  T_EXPECT(V_ADDR, 0, KBD_ERR_BOUNDS, MT_LINE(line_addr), "not in this CTA's shared memory");
  /* N = 40 is not an s8 shape */
  tcase tc = {KBD_MMA_S8, KBD_MMA_S8, 64, 40, 0, 0, KBD_SWIZZLE_128B, KBD_SWIZZLE_64B, 0, 0, 0, 0, 0};
  const kbd_status s = t_run(&tc, V_OK, 0).st;
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(line_mma));
  MT_ASSERT_HAS(s, "N must be 8..256");
}

static void test_bad_arch(void **state) {
  (void)state;
  T_EXPECT(V_ARCH, 0, KBD_ERR_INVALID, MT_LINE(line_arch), KBD_CPU_ARCH == 90 ? "sm_100a instruction" : "sm_90a instruction");
}

static void test_bad_exit(void **state) {
  (void)state;
  T_EXPECT(V_NOCOMMIT, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), KBD_CPU_ARCH == 90 ? "not committed" : "never committed");
  if (KBD_CPU_ARCH == 90) {
    T_EXPECT(V_NOWAITG, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), "not waited for");
  } else {
    T_EXPECT(V_LEAK, 0, KBD_ERR_INVALID, MT_LINE(line_alloc), "Tensor Memory");
  }
}

static void test_bad_wgmma(void **state) {
  (void)state;
  if (KBD_CPU_ARCH != 90) {
    skip();
    return;
  }
  T_EXPECT(V_TOUCH, 0, KBD_ERR_RACE, MT_LINE(line_touch), "accumulator read before wgmma.wait_group");
  T_EXPECT(V_SKIP3, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), "warpgroup");
  T_EXPECT(V_DIFF, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), "different wgmma");
  for (long seed = 0; seed < 6; ++seed) {
    mt_env(1, seed);
    T_EXPECT(V_SKIP3, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), "warpgroup");
    const kbd_status s = t_bad(V_NOSYNC, seed & 1, 0); /* a correct kernel: each wait waits for the other warps */
    MT_ASSERT_OK(s);
  }
  mt_env(1, -1);
  /* a warp that never issues: the others' wait_group cannot return (the MMA never starts): a deadlock report */
  const kbd_status s = t_bad(V_STUCK3, 0, 0);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  MT_ASSERT_HAS(s, "warp(s) 3 have not issued it");
  char buf[64];
  MT_ASSERT_HAS(s, mt_fmt(buf, sizeof buf, "test_mma_cpu.c:%d waits for mbarrier", MT_LINE(line_stuck)));
}

static void test_bad_tcgen05(void **state) {
  (void)state;
  if (KBD_CPU_ARCH != 100) {
    skip();
    return;
  }
  T_EXPECT(V_UNIFORM, 0, KBD_ERR_ISSUE, MT_LINE(line_mma), "warp-uniform");
  T_EXPECT(V_LDNOWAIT, 0, KBD_ERR_RACE, MT_LINE(line_ld), "has not waited");
  T_EXPECT(V_LDNOFENCE, 0, KBD_ERR_RACE, MT_LINE(line_ld), "fence::after_thread_sync");
  T_EXPECT(V_LDLANES, 0, KBD_ERR_INVALID, MT_LINE(line_ld), "reaches lanes 32..63 only");
  T_EXPECT(V_LDCOLS, 0, KBD_ERR_BOUNDS, MT_LINE(line_ld), "not inside one allocation");
  T_EXPECT(V_REALLOC, 0, KBD_ERR_INVALID, MT_LINE(line_alloc2), "relinquish_alloc_permit");
  T_EXPECT(V_BADDEALLOC, 0, KBD_ERR_INVALID, MT_LINE(line_dealloc), "tcgen05.dealloc");
  for (long seed = 0; seed < 6; ++seed) {
    mt_env(1, seed);
    T_EXPECT(V_LDNOFENCE, 0, KBD_ERR_RACE, MT_LINE(line_ld), "fence::after_thread_sync");
  }
  mt_env(1, -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_numerics_matrix), MT_TEST(test_numerics_rounding), MT_TEST(test_tf32_truncation),
      MT_TEST(test_seeds),           MT_TEST(test_kstep_contract),           MT_TEST(test_sbo_doubled),       MT_TEST(test_bad_operands),
      MT_TEST(test_bad_war),         MT_TEST(test_bad_descriptors),   MT_TEST(test_bad_arch),
      MT_TEST(test_bad_exit),        MT_TEST(test_bad_wgmma),         MT_TEST(test_bad_tcgen05),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
