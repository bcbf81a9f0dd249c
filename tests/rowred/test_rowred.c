/* Row and column reductions of 2D tiles (kbd/reduce_tile.h) on the CPU machine, against references written
 * here from the documentation, independently of kbd's code:
 *  - the fragment layouts (ROW, WGMMA_ACC, MMA_C) from their published formulas;
 *  - "slot k of a thread = its k-th distinct row (column) in order of first appearance in its fragment";
 *  - a bit-exact model of the documented f32 order (pairwise tree per thread, butterfly with the documented
 *    lane masks, pairwise tree over the warps in warp order), checked bit for bit in every thread;
 *  - order-free semantics (PTX max/min with NaN and signed zeros, exact i32 and/or/xor/sum) and the
 *    documented error bound for f32 sums against double;
 *  - kbd_vec_store (each index written, with the right value), kbd_bcast_rows/cols element by element;
 * over several KBD_CPU_SEED warp orders and host-thread counts. Scans: test_rowscan.c. */
#include <kbd/tile.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rowred_ref.h"

/* Buffers live in host memory, mapped for the kernels (kt_host.h). */
#include "kt_host.h"
#define malloc(n) kt_host_alloc(n)
#define free(p) kt_host_free(p)


/* ---- kernels: one per (dtype, shape, scope, layout, block size) ------------------------------------------ */

typedef struct {
  const void *x;     /* [instance][R][C], tile dtype */
  void *rraw, *craw; /* [thread][slot], vector dtype: every lane's vector as the kernel holds it */
  void *rvec, *cvec; /* [instance][R] / [instance][C]: kbd_vec_store */
  void *brow, *bcol; /* [instance][R][C], tile dtype: a - rows[r], max(a, cols[c]) */
  int *meta;         /* slots of the row and the column vector, the tile's vec */
  int op, iters;
} rp;

#define CASE_RED(OP)                                                                                                   \
  case OP:                                                                                                             \
    kbd_reduce_rows(m, t, OP);                                                                                         \
    kbd_reduce_cols(c, t, OP);                                                                                         \
    break;
#define OPS_F(X) X(KBD_RED_SUM) X(KBD_RED_MAX) X(KBD_RED_MIN)
#define OPS_I(X) OPS_F(X) X(KBD_RED_AND) X(KBD_RED_OR) X(KBD_RED_XOR)

/* Instance gi = global thread / S owns matrix gi. */
#define RED_KERNEL(name, DT, T, VT, VTY, R, C, S, L, THREADS, OPS)                                                     \
  KBD_KERNEL(name, THREADS, rp) {                                                                                      \
    const long long g0 = (long long)kbd_block_x() * (THREADS);                                                         \
    const long long gi = (g0 + kbd_warp_id() * 32) / (S);                                                              \
    KBD_TILE_L(DT, R, C, S, L) t, d;                                                                                   \
    kbd_load2d(t, (const T *)p.x + gi * (R) * (C), R, C, C, 0, 0);                                                     \
    KBD_ROWVEC(VT, t) m;                                                                                               \
    KBD_COLVEC(VT, t) c;                                                                                               \
    memset(&m, 0, sizeof m);                                                                                           \
    memset(&c, 0, sizeof c);                                                                                           \
    switch (p.op) {                                                                                                    \
      OPS(CASE_RED)                                                                                                    \
    default: break;                                                                                                    \
    }                                                                                                                  \
    KBD_FOR_LANES(l) {                                                                                                 \
      const long long g = g0 + kbd_thread_idx(l);                                                                      \
      for (int k = 0; k < KBD_VEC_SLOTS(m); ++k)                                                                       \
        ((VTY *)p.rraw)[g * KBD_VEC_SLOTS(m) + k] = KBD_VEC_AT(m, l, k);                                               \
      for (int k = 0; k < KBD_VEC_SLOTS(c); ++k)                                                                       \
        ((VTY *)p.craw)[g * KBD_VEC_SLOTS(c) + k] = KBD_VEC_AT(c, l, k);                                               \
    }                                                                                                                  \
    if (g0 == 0 && kbd_warp_id() == 0) {                                                                               \
      p.meta[0] = KBD_VEC_SLOTS(m);                                                                                    \
      p.meta[1] = KBD_VEC_SLOTS(c);                                                                                    \
      p.meta[2] = KBD_VEC(t);                                                                                          \
    }                                                                                                                  \
    kbd_vec_store((VTY *)p.rvec + gi * (R), m);                                                                        \
    kbd_vec_store((VTY *)p.cvec + gi * (C), c);                                                                        \
    kbd_bcast_rows(d, t, m, KBD_OP_SUB);                                                                               \
    kbd_store2d((T *)p.brow + gi * (R) * (C), d, R, C, C, 0, 0);                                                       \
    kbd_bcast_cols(d, t, c, KBD_OP_MAX);                                                                               \
    kbd_store2d((T *)p.bcol + gi * (R) * (C), d, R, C, C, 0, 0);                                                       \
  }

#define WG KBD_LAYOUT_WGMMA_ACC
#define MC KBD_LAYOUT_MMA_C
#define RW KBD_LAYOUT_ROW
/* WGMMA accumulators: 64 x 8 .. 64 x 256 and 128 x N (mb = 2), 192 x 16 (mb = 3: a 6-element column tree);
 * 256-thread blocks (two warpgroups: named barriers 8 and 9) and 128-thread blocks (bar.sync 0). */
RED_KERNEL(wg64x8_f32, f32, float, f32, float, 64, 8, 128, WG, 256, OPS_F)
RED_KERNEL(wg64x16_f32, f32, float, f32, float, 64, 16, 128, WG, 128, OPS_F)
RED_KERNEL(wg64x64_f32, f32, float, f32, float, 64, 64, 128, WG, 256, OPS_F)
RED_KERNEL(wg64x256_f32, f32, float, f32, float, 64, 256, 128, WG, 256, OPS_F)
RED_KERNEL(wg128x8_f32, f32, float, f32, float, 128, 8, 128, WG, 128, OPS_F)
RED_KERNEL(wg128x256_f32, f32, float, f32, float, 128, 256, 128, WG, 256, OPS_F)
RED_KERNEL(wg192x16_f32, f32, float, f32, float, 192, 16, 128, WG, 256, OPS_F)
RED_KERNEL(wg64x32_bf16, bf16, kbd_bf16, f32, float, 64, 32, 128, WG, 256, OPS_F)
RED_KERNEL(wg128x64_bf16, bf16, kbd_bf16, f32, float, 128, 64, 128, WG, 128, OPS_F)
RED_KERNEL(wg64x24_i32, i32, int32_t, i32, int32_t, 64, 24, 128, WG, 256, OPS_I)
RED_KERNEL(wg128x128_i32, i32, int32_t, i32, int32_t, 128, 128, 128, WG, 128, OPS_I)
/* mma.sync accumulators (warp scope, two warps per block). */
RED_KERNEL(mc16x8_f32, f32, float, f32, float, 16, 8, 32, MC, 64, OPS_F)
RED_KERNEL(mc32x24_f32, f32, float, f32, float, 32, 24, 32, MC, 64, OPS_F)
RED_KERNEL(mc16x32_bf16, bf16, kbd_bf16, f32, float, 16, 32, 32, MC, 64, OPS_F)
RED_KERNEL(mc48x16_i32, i32, int32_t, i32, int32_t, 48, 16, 32, MC, 64, OPS_I)
/* ROW tiles; CPR = C / vec vectors per row picks the case (see the design note). */
RED_KERNEL(rw8x64_f32_warp, f32, float, f32, float, 8, 64, KBD_WARP, RW, 64, OPS_F)         /* CPR 16 */
RED_KERNEL(rw4x32_f32_warp, f32, float, f32, float, 4, 32, KBD_WARP, RW, 32, OPS_F)         /* CPR 8 */
RED_KERNEL(rw1x512_f32_warp, f32, float, f32, float, 1, 512, KBD_WARP, RW, 64, OPS_F)       /* CPR 128, K 4 */
RED_KERNEL(rw4x256_f32_cta, f32, float, f32, float, 4, 256, KBD_CTA, RW, 256, OPS_F)        /* CPR 64: 2 warps/row */
RED_KERNEL(rw2x1024_f32_wg, f32, float, f32, float, 2, 1024, KBD_WARPGROUP, RW, 256, OPS_F) /* CPR 256, K 2 */
RED_KERNEL(rw32x4_f32_cta, f32, float, f32, float, 32, 4, KBD_CTA, RW, 128, OPS_F)          /* CPR 1 */
RED_KERNEL(rw12x64_bf16_cta, bf16, kbd_bf16, f32, float, 12, 64, KBD_CTA, RW, 96, OPS_F)    /* CPR 8, 3 warps */
RED_KERNEL(rw16x128_bf16_wg, bf16, kbd_bf16, f32, float, 16, 128, KBD_WARPGROUP, RW, 128, OPS_F) /* CPR 16 */
RED_KERNEL(rw16x32_i32_warp, i32, int32_t, i32, int32_t, 16, 32, KBD_WARP, RW, 32, OPS_I)        /* CPR 8 */
RED_KERNEL(rw8x128_i32_cta, i32, int32_t, i32, int32_t, 8, 128, KBD_CTA, RW, 128, OPS_I)         /* CPR 32 */
RED_KERNEL(rw16x64_f32_cta, f32, float, f32, float, 16, 64, KBD_CTA, RW, 256, OPS_F)             /* cols: 8 warps */
RED_KERNEL(rw1x1024_f32_cta, f32, float, f32, float, 1, 1024, KBD_CTA, RW, 256, OPS_F)           /* rows: 8 warps */

typedef kbd_status (*red_kernel)(kbd_launch_cfg, rp);

typedef struct {
  const char *name;
  red_kernel k;
  int dt, R, C, S, layout, threads;
} red_case;

static const red_case red_cases[] = {
    {"wg64x8_f32", wg64x8_f32, KBD_DT_f32, 64, 8, 128, WG, 256},
    {"wg64x16_f32", wg64x16_f32, KBD_DT_f32, 64, 16, 128, WG, 128},
    {"wg64x64_f32", wg64x64_f32, KBD_DT_f32, 64, 64, 128, WG, 256},
    {"wg64x256_f32", wg64x256_f32, KBD_DT_f32, 64, 256, 128, WG, 256},
    {"wg128x8_f32", wg128x8_f32, KBD_DT_f32, 128, 8, 128, WG, 128},
    {"wg128x256_f32", wg128x256_f32, KBD_DT_f32, 128, 256, 128, WG, 256},
    {"wg192x16_f32", wg192x16_f32, KBD_DT_f32, 192, 16, 128, WG, 256},
    {"wg64x32_bf16", wg64x32_bf16, KBD_DT_bf16, 64, 32, 128, WG, 256},
    {"wg128x64_bf16", wg128x64_bf16, KBD_DT_bf16, 128, 64, 128, WG, 128},
    {"wg64x24_i32", wg64x24_i32, KBD_DT_i32, 64, 24, 128, WG, 256},
    {"wg128x128_i32", wg128x128_i32, KBD_DT_i32, 128, 128, 128, WG, 128},
    {"mc16x8_f32", mc16x8_f32, KBD_DT_f32, 16, 8, 32, MC, 64},
    {"mc32x24_f32", mc32x24_f32, KBD_DT_f32, 32, 24, 32, MC, 64},
    {"mc16x32_bf16", mc16x32_bf16, KBD_DT_bf16, 16, 32, 32, MC, 64},
    {"mc48x16_i32", mc48x16_i32, KBD_DT_i32, 48, 16, 32, MC, 64},
    {"rw8x64_f32_warp", rw8x64_f32_warp, KBD_DT_f32, 8, 64, 32, RW, 64},
    {"rw4x32_f32_warp", rw4x32_f32_warp, KBD_DT_f32, 4, 32, 32, RW, 32},
    {"rw1x512_f32_warp", rw1x512_f32_warp, KBD_DT_f32, 1, 512, 32, RW, 64},
    {"rw4x256_f32_cta", rw4x256_f32_cta, KBD_DT_f32, 4, 256, 256, RW, 256},
    {"rw2x1024_f32_wg", rw2x1024_f32_wg, KBD_DT_f32, 2, 1024, 128, RW, 256},
    {"rw32x4_f32_cta", rw32x4_f32_cta, KBD_DT_f32, 32, 4, 128, RW, 128},
    {"rw12x64_bf16_cta", rw12x64_bf16_cta, KBD_DT_bf16, 12, 64, 96, RW, 96},
    {"rw16x128_bf16_wg", rw16x128_bf16_wg, KBD_DT_bf16, 16, 128, 128, RW, 128},
    {"rw16x32_i32_warp", rw16x32_i32_warp, KBD_DT_i32, 16, 32, 32, RW, 32},
    {"rw8x128_i32_cta", rw8x128_i32_cta, KBD_DT_i32, 8, 128, 128, RW, 128},
    {"rw16x64_f32_cta", rw16x64_f32_cta, KBD_DT_f32, 16, 64, 256, RW, 256},
    {"rw1x1024_f32_cta", rw1x1024_f32_cta, KBD_DT_f32, 1, 1024, 256, RW, 256},
};
#define NCASES ((int)(sizeof red_cases / sizeof red_cases[0]))

/* ---- checking one launch ------------------------------------------------------------------------------------ */

/* Value sets: 0 random, 1 specials sprinkled (NaN, +-inf, +-0), 2 signed zeros only, 3 NaN and -inf only. */
static void fill(const red_case *rc, void *x, uint32_t *bits, int n, unsigned seed, int kind) {
  srand(seed);
  for (int i = 0; i < n; ++i) {
    if (rc->dt == KBD_DT_i32) {
      int32_t v = (int32_t)(((uint32_t)rand() << 16) ^ (uint32_t)rand()) | (i % 7 == 0 ? (int32_t)0x40000000 : 0);
      if (i == 3) v = INT32_MAX;
      if (i == 5) v = INT32_MIN;
      ((int32_t *)x)[i] = v;
      bits[i] = (uint32_t)v;
      continue;
    }
    float v = (float)(rand() % 20001 - 10000) / 97.0f;
    const int r = rand() % 11;
    if (kind == 1) v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? 0.0f : r == 4 ? -0.0f : v;
    if (kind == 2) v = (r & 1) ? 0.0f : -0.0f;
    if (kind == 3) v = (r & 1) ? NAN : -INFINITY;
    if (rc->dt == KBD_DT_bf16) {
      const kbd_bf16 b = kbd_f32_to_bf16(v);
      ((kbd_bf16 *)x)[i] = b;
      bits[i] = (uint32_t)b.bits << 16; /* exact widening, independent of kbd */
    } else {
      ((float *)x)[i] = v;
      memcpy(&bits[i], &v, 4);
    }
  }
}

static void run_case(const red_case *rc, int blocks, int kind, unsigned seed) {
  const int fl = rc->dt != KBD_DT_i32, es = rc->dt == KBD_DT_bf16 ? 2 : 4;
  const int inst_per_block = rc->threads / rc->S, ninst = inst_per_block * blocks, RC = rc->R * rc->C;
  const int nthreads = rc->threads * blocks;
  const ref_shape s = ref_shape_make(rc->layout, rc->R, rc->C, rc->S);
  void *x = malloc((size_t)ninst * RC * es), *brow = malloc((size_t)ninst * RC * es),
       *bcol = malloc((size_t)ninst * RC * es);
  uint32_t *bits = malloc(sizeof(uint32_t) * ninst * RC);
  uint32_t *rraw = malloc(4u * nthreads * s.npt), *craw = malloc(4u * nthreads * s.npt);
  uint32_t *rvec = malloc(4u * ninst * rc->R), *cvec = malloc(4u * ninst * rc->C);
  ref_axis ra, ca;
  ref_axis_init(&ra, s, REF_ROWS);
  ref_axis_init(&ca, s, REF_COLS);
  fill(rc, x, bits, ninst * RC, seed, kind);
  const int nops = fl ? 3 : 6;
  for (int op = KBD_RED_SUM; op < KBD_RED_SUM + nops; ++op) {
    int meta[3] = {-1, -1, -1};
    memset(rvec, 0xA5, 4u * ninst * rc->R); /* a sentinel no reduction here produces */
    memset(cvec, 0xA5, 4u * ninst * rc->C);
    rp p = {x, rraw, craw, rvec, cvec, brow, bcol, meta, op, 1};
    const kbd_status st = rc->k(kbd_cfg_1d((unsigned)blocks), p);
    if (st.code != KBD_OK) fail_msg("%s: launch failed: %s", rc->name, st.msg);
    if (rc->layout == RW && meta[2] != s.V) fail_msg("%s: tile vec %d, documented %d", rc->name, meta[2], s.V);
    if (meta[0] != ra.nslot || meta[1] != ca.nslot)
      fail_msg("%s: slots %d/%d, documented %d/%d", rc->name, meta[0], meta[1], ra.nslot, ca.nslot);
    for (int gi = 0; gi < ninst; ++gi) {
      const uint32_t *xm = bits + (size_t)gi * RC;
      ref_axis_run(&ra, fl, op, xm);
      ref_axis_run(&ca, fl, op, xm);
      for (int ax = 0; ax < 2; ++ax) {
        const ref_axis *a = ax ? &ca : &ra;
        const uint32_t *raw = ax ? craw : rraw, *vec = (ax ? cvec : rvec) + (size_t)gi * a->nkeys;
        const char *an = ax ? "cols" : "rows";
        /* every thread of the instance, every slot: the model's value for that slot's key, bit for bit */
        for (int t = 0; t < rc->S; ++t)
          for (int k = 0; k < a->nslot; ++k) {
            const uint32_t got = raw[((size_t)gi * rc->S + t) * a->nslot + k],
                           want = a->final[a->key[t * a->nslot + k]];
            if (!ref_same(fl, got, want))
              fail_msg("%s op %d kind %d %s: instance %d thread %d slot %d (key %d): 0x%08x vs model 0x%08x", rc->name,
                       op, kind, an, gi, t, k, a->key[t * a->nslot + k], got, want);
          }
        for (int key = 0; key < a->nkeys; ++key) {
          if (!ref_same(fl, vec[key], a->final[key]))
            fail_msg("%s op %d %s: kbd_vec_store index %d: 0x%08x vs 0x%08x", rc->name, op, an, key, vec[key],
                     a->final[key]);
          /* order-free semantics: max/min/i32 equal a sequential fold; f32 sums within the bound */
          const uint32_t seq = a->seq[key];
          if (!fl || op != KBD_RED_SUM) {
            if (!ref_same(fl, a->final[key], seq))
              fail_msg("%s op %d %s key %d: 0x%08x vs sequential 0x%08x", rc->name, op, an, key, a->final[key], seq);
          } else if (kind == 0) {
            const double err = fabs((double)ref_f(a->final[key]) - a->dsum[key]);
            if (err > ref_gamma(a->depth) * a->dabs[key])
              fail_msg("%s %s key %d: sum error %g > bound %g (k = %d)", rc->name, an, key, err,
                       ref_gamma(a->depth) * a->dabs[key], a->depth);
          }
        }
      }
      /* broadcasts, element by element: brow = a - rows[r], bcol = max(a, cols[c]) */
      for (int r = 0; r < rc->R; ++r)
        for (int cc = 0; cc < rc->C; ++cc) {
          const size_t e = (size_t)gi * RC + (size_t)r * rc->C + cc;
          const uint32_t av = xm[(size_t)r * rc->C + cc];
          uint32_t wr, wc, gr, gc;
          if (fl) {
            wr = ref_bits(ref_f(av) - ref_f(ra.final[r]));
            wc = ref_bits(ref_max(ref_f(av), ref_f(ca.final[cc])));
            if (rc->dt == KBD_DT_bf16) {
              wr = (uint32_t)kbd_f32_to_bf16(ref_f(wr)).bits << 16;
              wc = (uint32_t)kbd_f32_to_bf16(ref_f(wc)).bits << 16;
              gr = (uint32_t)((kbd_bf16 *)brow)[e].bits << 16;
              gc = (uint32_t)((kbd_bf16 *)bcol)[e].bits << 16;
            } else {
              memcpy(&gr, (float *)brow + e, 4);
              memcpy(&gc, (float *)bcol + e, 4);
            }
          } else {
            wr = av - ra.final[r];
            wc = (int32_t)av > (int32_t)ca.final[cc] ? av : ca.final[cc];
            gr = (uint32_t)((int32_t *)brow)[e];
            gc = (uint32_t)((int32_t *)bcol)[e];
          }
          if (!ref_same(fl, gr, wr))
            fail_msg("%s op %d bcast_rows (%d,%d): 0x%08x vs 0x%08x", rc->name, op, r, cc, gr, wr);
          if (!ref_same(fl, gc, wc))
            fail_msg("%s op %d bcast_cols (%d,%d): 0x%08x vs 0x%08x", rc->name, op, r, cc, gc, wc);
        }
    }
  }
  ref_axis_free(&ra);
  ref_axis_free(&ca);
  free(x), free(brow), free(bcol), free(bits), free(rraw), free(craw), free(rvec), free(cvec);
}

static void test_reductions(void **st) {
  (void)st;
  static const int seeds[] = {0, 1, 7}, thr[] = {1, 2, 2};
  for (int c = 0; c < NCASES; ++c)
    for (int sd = 0; sd < 3; ++sd) {
      set_env(seeds[sd], thr[sd]);
      const int kind = red_cases[c].dt == KBD_DT_i32 ? 0 : sd; /* random, specials, signed zeros */
      run_case(&red_cases[c], 2, kind, 1000u + 17u * (unsigned)c + (unsigned)sd);
    }
  /* NaN and -inf only (max ignores NaN; min is -inf; all-NaN keys give the canonical NaN) */
  set_env(3, 1);
  run_case(&red_cases[1], 1, 3, 5u);
  run_case(&red_cases[15], 1, 3, 6u);
  run_case(&red_cases[18], 1, 3, 7u);
}

/* The slot rule in one picture, spelled out for WGMMA_ACC 64 x 16 (ptx-reference 4.3): thread 37 (warp 1,
 * lane 5: g = 1, q = 1) holds rows 17 and 25 and columns 2, 3, 10, 11. */
static void test_slot_picture(void **st) {
  (void)st;
  const ref_shape s = ref_shape_make(WG, 64, 16, 128);
  ref_axis ra, ca;
  ref_axis_init(&ra, s, REF_ROWS);
  ref_axis_init(&ca, s, REF_COLS);
  assert_int_equal(ra.nslot, 2);
  assert_int_equal(ca.nslot, 4);
  assert_int_equal(ra.key[37 * 2 + 0], 17);
  assert_int_equal(ra.key[37 * 2 + 1], 25);
  assert_int_equal(ca.key[37 * 4 + 0], 2);
  assert_int_equal(ca.key[37 * 4 + 1], 3);
  assert_int_equal(ca.key[37 * 4 + 2], 10);
  assert_int_equal(ca.key[37 * 4 + 3], 11);
  ref_axis_free(&ra);
  ref_axis_free(&ca);
}

/* ---- the same call site in a loop: the trailing barrier protects the shared slots (WAR) ------------------ */

KBD_KERNEL(loop_wg, 256, rp) {
  const int inst = kbd_warp_id() / 4;
  for (int it = 0; it < p.iters; ++it) {
    KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) t;
    kbd_load2d(t, (const float *)p.x + (size_t)(it * 2 + inst) * 64 * 16, 64, 16, 16, 0, 0);
    KBD_COLVEC(f32, t) c;
    kbd_reduce_cols(c, t, KBD_RED_SUM);
    kbd_vec_store((float *)p.cvec + (size_t)(it * 2 + inst) * 16, c);
  }
}
KBD_KERNEL(loop_row, 256, rp) {
  for (int it = 0; it < p.iters; ++it) {
    KBD_TILE(f32, 4, 256, KBD_CTA) t;
    kbd_load2d(t, (const float *)p.x + (size_t)it * 4 * 256, 4, 256, 256, 0, 0);
    KBD_ROWVEC(f32, t) m;
    kbd_reduce_rows(m, t, KBD_RED_SUM);
    kbd_vec_store((float *)p.rvec + (size_t)it * 4, m);
  }
}

static void test_loop_war(void **st) {
  (void)st;
  enum { IT = 6 };
  float *x = malloc(sizeof(float) * IT * 2 * 64 * 16), out[IT * 2 * 16];
  KT_HOST_SCOPE(out); /* kbd_vec_store's destination: kernel-visible memory */
  uint32_t *bits = malloc(sizeof(uint32_t) * IT * 2 * 64 * 16);
  const red_case wg = {"loop_wg", NULL, KBD_DT_f32, 64, 16, 128, WG, 256};
  const red_case rw = {"loop_row", NULL, KBD_DT_f32, 4, 256, 256, RW, 256};
  ref_axis ca, ra;
  ref_axis_init(&ca, ref_shape_make(WG, 64, 16, 128), REF_COLS);
  ref_axis_init(&ra, ref_shape_make(RW, 4, 256, 256), REF_ROWS);
  for (int sd = 0; sd < 6; ++sd) {
    set_env(sd, 1 + sd % 2);
    fill(&wg, x, bits, IT * 2 * 64 * 16, 40u + (unsigned)sd, 0);
    rp p = {x, NULL, NULL, NULL, out, NULL, NULL, NULL, KBD_RED_SUM, IT};
    assert_int_equal(loop_wg(kbd_cfg_1d(1), p).code, KBD_OK);
    for (int i = 0; i < IT * 2; ++i) {
      ref_axis_run(&ca, 1, KBD_RED_SUM, bits + (size_t)i * 64 * 16);
      for (int k = 0; k < 16; ++k)
        if (!ref_same(1, ref_bits(out[i * 16 + k]), ca.final[k])) fail_msg("loop_wg seed %d tile %d col %d", sd, i, k);
    }
    fill(&rw, x, bits, IT * 4 * 256, 80u + (unsigned)sd, 0);
    rp q = {x, NULL, NULL, out, NULL, NULL, NULL, NULL, KBD_RED_SUM, IT};
    assert_int_equal(loop_row(kbd_cfg_1d(1), q).code, KBD_OK);
    for (int i = 0; i < IT; ++i) {
      ref_axis_run(&ra, 1, KBD_RED_SUM, bits + (size_t)i * 4 * 256);
      for (int k = 0; k < 4; ++k)
        if (!ref_same(1, ref_bits(out[i * 4 + k]), ra.final[k])) fail_msg("loop_row seed %d tile %d row %d", sd, i, k);
    }
  }
  ref_axis_free(&ca);
  ref_axis_free(&ra);
  free(x), free(bits);
}

/* ---- misuse: a column reduction (shared memory + barrier) that warp 1 skips --------------------------------- */

KBD_KERNEL(misuse_cols, 256, rp) {
  KBD_TILE_L(f32, 64, 8, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) t;
  kbd_fill(t, 1.0f);
  KBD_COLVEC(f32, t) c;
  memset(&c, 0, sizeof c);
  if (kbd_warp_id() != 1) kbd_reduce_cols(c, t, KBD_RED_SUM); /* the bug: not every warp of the warpgroup */
  kbd_vec_store((float *)p.cvec + (kbd_warp_id() / 4) * 8, c);
}
KBD_KERNEL(misuse_rows, 128, rp) {
  KBD_TILE(f32, 2, 256, KBD_CTA) t; /* CPR 64: a row spans 2 warps */
  kbd_fill(t, 1.0f);
  KBD_ROWVEC(f32, t) m;
  memset(&m, 0, sizeof m);
  if (kbd_warp_id() != 3) kbd_reduce_rows(m, t, KBD_RED_MAX);
  kbd_vec_store((float *)p.rvec, m);
}

static void test_misuse(void **st) {
  (void)st;
  set_env(0, 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  float out[64];
  KT_HOST_SCOPE(out);
  rp p = {NULL, NULL, NULL, out, out, NULL, NULL, NULL, KBD_RED_SUM, 1};
  kbd_status s = misuse_cols(kbd_cfg_1d(1), p);
  assert_int_equal(s.code, KBD_ERR_DEADLOCK); /* warpgroup barrier (counted): the GPU hangs too */
  assert_non_null(strstr(s.msg, "test_rowred.c"));
  assert_non_null(strstr(s.msg, "warp 1 has exited"));
  s = misuse_rows(kbd_cfg_1d(1), p);
  unsetenv("KBD_CPU_QUIET");
  assert_int_equal(s.code, KBD_ERR_BARRIER); /* bar.sync 0 after warp 3 exited: completes on the GPU */
  assert_non_null(strstr(s.msg, "test_rowred.c"));
  assert_non_null(strstr(s.msg, "warp(s) 3 have exited"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slot_picture),
      cmocka_unit_test(test_reductions),
      cmocka_unit_test(test_loop_war),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
