/* Scans along the rows of ROW tiles (kbd_scan_rows) on the CPU machine, element by element, against
 * references written here from docs/scan.md: a bit-exact model of the documented order (sequential run,
 * Hillis-Steele over the row's lanes, sequential over the row's warps, carry over the row's stripes), and
 * order-free sequential scans (i32; max/min with NaN and signed zeros; integer-valued f32 sums). Row totals
 * in every thread and through kbd_vec_store. R = 1 at warp scope must equal kbd_scan bit for bit. */
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


typedef struct {
  const void *x; /* [instance][R][C], input dtype */
  void *y;       /* [instance][R][C], output dtype */
  void *traw;    /* [thread][slot]: the totals vector in every thread */
  void *tvec;    /* [instance][R]: kbd_vec_store of the totals */
  int *meta;     /* slots, vec */
  int op, excl;
} sp;

#define CASE_SCAN(OP, E)                                                                                               \
  if (p.op == OP && p.excl == E) kbd_scan_rows(d, tot, t, OP, E);
#define SCAN_KERNEL(name, DT, T, DO, TO, VT, VTY, R, C, S, THREADS)                                                    \
  KBD_KERNEL(name, THREADS, sp) {                                                                                      \
    const long long g0 = (long long)kbd_block_x() * (THREADS);                                                         \
    const long long gi = (g0 + kbd_warp_id() * 32) / (S);                                                              \
    KBD_TILE(DT, R, C, S) t;                                                                                           \
    KBD_TILE(DO, R, C, S) d;                                                                                           \
    kbd_load2d(t, (const T *)p.x + gi * (R) * (C), R, C, C, 0, 0);                                                     \
    KBD_ROWVEC(VT, t) tot;                                                                                             \
    memset(&tot, 0, sizeof tot);                                                                                       \
    kbd_zero(d);                                                                                                       \
    CASE_SCAN(KBD_RED_SUM, 0)                                                                                          \
    CASE_SCAN(KBD_RED_SUM, 1)                                                                                          \
    CASE_SCAN(KBD_RED_MAX, 0)                                                                                          \
    CASE_SCAN(KBD_RED_MAX, 1)                                                                                          \
    CASE_SCAN(KBD_RED_MIN, 0)                                                                                          \
    CASE_SCAN(KBD_RED_MIN, 1)                                                                                          \
    kbd_store2d((TO *)p.y + gi * (R) * (C), d, R, C, C, 0, 0);                                                         \
    KBD_FOR_LANES(l) {                                                                                                 \
      const long long g = g0 + kbd_thread_idx(l);                                                                      \
      for (int k = 0; k < KBD_VEC_SLOTS(tot); ++k)                                                                     \
        ((VTY *)p.traw)[g * KBD_VEC_SLOTS(tot) + k] = KBD_VEC_AT(tot, l, k);                                           \
    }                                                                                                                  \
    if (g0 == 0 && kbd_warp_id() == 0) {                                                                               \
      p.meta[0] = KBD_VEC_SLOTS(tot);                                                                                  \
      p.meta[1] = KBD_VEC(t);                                                                                          \
    }                                                                                                                  \
    kbd_vec_store((VTY *)p.tvec + gi * (R), tot);                                                                      \
  }

SCAN_KERNEL(s8x64_warp, f32, float, f32, float, f32, float, 8, 64, KBD_WARP, 64)         /* CPR 16 */
SCAN_KERNEL(s4x32_warp, f32, float, f32, float, f32, float, 4, 32, KBD_WARP, 32)         /* CPR 8 */
SCAN_KERNEL(s1x512_warp, f32, float, f32, float, f32, float, 1, 512, KBD_WARP, 64)       /* CPR 128: K 4 */
SCAN_KERNEL(s4x256_cta, f32, float, f32, float, f32, float, 4, 256, KBD_CTA, 256)        /* CPR 64: 2 warps */
SCAN_KERNEL(s2x1024_wg, f32, float, f32, float, f32, float, 2, 1024, KBD_WARPGROUP, 256) /* K 2, 4 warps */
SCAN_KERNEL(s32x4_cta, f32, float, f32, float, f32, float, 32, 4, KBD_CTA, 128)          /* CPR 1 */
SCAN_KERNEL(s1x1024_cta, f32, float, f32, float, f32, float, 1, 1024, KBD_CTA, 256)      /* 8 warps */
SCAN_KERNEL(s12x64_bf16, bf16, kbd_bf16, f32, float, f32, float, 12, 64, KBD_CTA, 96)    /* bf16 in, f32 out */
SCAN_KERNEL(s16x32_i32, i32, int32_t, i32, int32_t, i32, int32_t, 16, 32, KBD_WARP, 32)  /* CPR 8 */
SCAN_KERNEL(s8x128_i32, i32, int32_t, i32, int32_t, i32, int32_t, 8, 128, KBD_CTA, 128)  /* CPR 32 */
SCAN_KERNEL(s4x512_i32, i32, int32_t, i32, int32_t, i32, int32_t, 4, 512, KBD_CTA, 256)  /* CPR 128: 4 warps */

typedef kbd_status (*scan_kernel)(kbd_launch_cfg, sp);
typedef struct {
  const char *name;
  scan_kernel k;
  int dt, R, C, S, threads;
} scan_case;
static const scan_case cases[] = {
    {"s8x64_warp", s8x64_warp, KBD_DT_f32, 8, 64, 32, 64},
    {"s4x32_warp", s4x32_warp, KBD_DT_f32, 4, 32, 32, 32},
    {"s1x512_warp", s1x512_warp, KBD_DT_f32, 1, 512, 32, 64},
    {"s4x256_cta", s4x256_cta, KBD_DT_f32, 4, 256, 256, 256},
    {"s2x1024_wg", s2x1024_wg, KBD_DT_f32, 2, 1024, 128, 256},
    {"s32x4_cta", s32x4_cta, KBD_DT_f32, 32, 4, 128, 128},
    {"s1x1024_cta", s1x1024_cta, KBD_DT_f32, 1, 1024, 256, 256},
    {"s12x64_bf16", s12x64_bf16, KBD_DT_bf16, 12, 64, 96, 96},
    {"s16x32_i32", s16x32_i32, KBD_DT_i32, 16, 32, 32, 32},
    {"s8x128_i32", s8x128_i32, KBD_DT_i32, 8, 128, 128, 128},
    {"s4x512_i32", s4x512_i32, KBD_DT_i32, 4, 512, 256, 256},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- the documented order, as a model ------------------------------------------------------------------------ */

/* Y (R x C) and TOT (R) of one instance; X: input bits. */
static void ref_scan(ref_shape s, int fl, int op, int excl, const uint32_t *X, uint32_t *Y, uint32_t *TOT,
                     uint32_t *TOTT /* [S][nslot] */) {
  const int cpr = s.C / s.V, G = cpr < s.S ? cpr : s.S, gw = G < 32 ? G : 32, K = cpr > s.S ? cpr / s.S : 1;
  const int nst = s.npt / s.V, xn = G > 32 ? G / 32 : 1, nw = s.S / 32, nslot = nst / K;
  const uint32_t pad = ref_pad(fl, op);
  uint32_t *ex = malloc(sizeof(uint32_t) * s.S * nst), *gt = malloc(sizeof(uint32_t) * s.S * nst);
  for (int j = 0; j < nst; ++j) {
    uint32_t rt[1024], in[1024];
    for (int t = 0; t < s.S; ++t) { /* run total: sequential over the thread's vec elements */
      int r, c;
      ref_coord(s, t, j * s.V, &r, &c);
      uint32_t a = X[r * s.C + c];
      for (int k = 1; k < s.V; ++k)
        a = ref_op(fl, op, a, X[r * s.C + c + k]);
      rt[t] = a;
    }
    for (int w = 0; w < nw; ++w) { /* Hillis-Steele inside each group of gw lanes */
      uint32_t *v = rt + 32 * w, nv[32];
      for (int d = 1; d < gw; d *= 2) {
        for (int l = 0; l < 32; ++l)
          nv[l] = l % gw >= d ? ref_op(fl, op, v[l - d], v[l]) : v[l];
        memcpy(v, nv, sizeof nv);
      }
    }
    memcpy(in, rt, sizeof(uint32_t) * s.S);
    for (int t = 0; t < s.S; ++t) {
      const int l = t % 32;
      ex[t * nst + j] = l % gw == 0 ? pad : in[t - 1];
      gt[t * nst + j] = in[t - l + (l | (gw - 1))];
    }
    if (xn > 1) /* a row over xn warps: sequential over the warp totals of the group, in warp order */
      for (int t = 0; t < s.S; ++t) {
        const int ws = t / 32, wi = ws % xn, f = ws - wi;
        uint32_t a = gt[(f * 32) * nst + j], pre = a;
        for (int m = 1; m < xn; ++m) {
          if (m == wi) pre = a;
          a = ref_op(fl, op, a, gt[((f + m) * 32) * nst + j]);
        }
        (void)pre;
        ex[t * nst + j] = wi > 0 ? ref_op(fl, op, pre, ex[t * nst + j]) : ex[t * nst + j];
        in[t] = a;
      }
    if (xn > 1)
      for (int t = 0; t < s.S; ++t)
        gt[t * nst + j] = in[t];
  }
  for (int t = 0; t < s.S; ++t)
    for (int rs = 0; rs < nslot; ++rs) {
      uint32_t carry = 0;
      int row = 0;
      for (int sg = 0; sg < K; ++sg) {
        const int j = rs * K + sg;
        const uint32_t b = sg == 0 ? ex[t * nst + j] : ref_op(fl, op, carry, ex[t * nst + j]);
        carry = sg == 0 ? gt[t * nst + j] : ref_op(fl, op, carry, gt[t * nst + j]);
        uint32_t run = 0;
        for (int k = 0; k < s.V; ++k) {
          int r, c;
          ref_coord(s, t, j * s.V + k, &r, &c);
          row = r;
          const uint32_t x = X[r * s.C + c];
          uint32_t o = excl ? (k == 0 ? b : ref_op(fl, op, b, run)) : 0;
          run = k == 0 ? x : ref_op(fl, op, run, x);
          if (!excl) o = ref_op(fl, op, b, run);
          if (excl && c == 0) o = ref_empty(fl, op); /* the row's first element */
          Y[r * s.C + c] = o;
        }
      }
      TOT[row] = carry;
      TOTT[t * nslot + rs] = carry;
    }
  free(ex);
  free(gt);
}

/* ---- one launch ----------------------------------------------------------------------------------------------- */

/* kinds: 0 random, 1 specials (NaN, +-inf, +-0), 2 integer-valued (every f32 partial sum exact) */
static void run_case(const scan_case *sc, int blocks, int kind, unsigned seed) {
  const int fl = sc->dt != KBD_DT_i32, RC = sc->R * sc->C, ninst = sc->threads / sc->S * blocks;
  const int nthreads = sc->threads * blocks;
  const ref_shape s = ref_shape_make(KBD_LAYOUT_ROW, sc->R, sc->C, sc->S);
  const int nslot = s.npt / s.V / (s.C / s.V > s.S ? s.C / s.V / s.S : 1);
  void *x = malloc((size_t)ninst * RC * 4);
  uint32_t *bits = malloc(4u * ninst * RC), *y = malloc(4u * ninst * RC), *traw = malloc(4u * nthreads * nslot);
  uint32_t *tvec = malloc(4u * ninst * sc->R), *Y = malloc(4u * RC), *T = malloc(4u * sc->R);
  uint32_t *TT = malloc(4u * sc->S * nslot);
  srand(seed);
  for (int i = 0; i < ninst * RC; ++i) {
    if (!fl) {
      const int32_t v = (int32_t)(((uint32_t)rand() << 17) ^ (uint32_t)rand());
      ((int32_t *)x)[i] = v;
      bits[i] = (uint32_t)v;
      continue;
    }
    float v = kind == 2 ? (float)(rand() % 201 - 100) : (float)(rand() % 20001 - 10000) / 97.0f;
    if (kind == 1) {
      const int r = rand() % 9;
      v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? 0.0f : r == 4 ? -0.0f : v;
    }
    if (sc->dt == KBD_DT_bf16) {
      const kbd_bf16 b = kbd_f32_to_bf16(v);
      ((kbd_bf16 *)x)[i] = b;
      bits[i] = (uint32_t)b.bits << 16;
    } else {
      ((float *)x)[i] = v;
      bits[i] = ref_bits(v);
    }
  }
  for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op)
    for (int excl = 0; excl <= 1; ++excl) {
      int meta[2] = {-1, -1};
      memset(tvec, 0xA5, 4u * ninst * sc->R);
      sp p = {x, y, traw, tvec, meta, op, excl};
      const kbd_status st = sc->k(kbd_cfg_1d((unsigned)blocks), p);
      if (st.code != KBD_OK) fail_msg("%s: %s", sc->name, st.msg);
      if (meta[1] != s.V) fail_msg("%s: vec %d, documented %d", sc->name, meta[1], s.V);
      if (meta[0] != nslot) fail_msg("%s: %d row slots, documented %d", sc->name, meta[0], nslot);
      for (int gi = 0; gi < ninst; ++gi) {
        const uint32_t *X = bits + (size_t)gi * RC;
        ref_scan(s, fl, op, excl, X, Y, T, TT);
        for (int r = 0; r < sc->R; ++r) {
          uint32_t seq = ref_empty(fl, op);
          for (int c = 0; c < sc->C; ++c) {
            const uint32_t got = y[(size_t)gi * RC + r * sc->C + c], want = Y[r * sc->C + c];
            if (!ref_same(fl, got, want))
              fail_msg("%s op %d excl %d kind %d inst %d (%d,%d): 0x%08x vs model 0x%08x", sc->name, op, excl, kind, gi,
                       r, c, got, want);
            /* order-free: a sequential scan (exact for i32, max/min, integer-valued sums) */
            const uint32_t xv = X[r * sc->C + c];
            if (!excl) seq = c == 0 ? xv : ref_op(fl, op, seq, xv);
            if ((!fl || op != KBD_RED_SUM || kind == 2) && !ref_same(fl, got, seq))
              fail_msg("%s op %d excl %d (%d,%d): 0x%08x vs sequential 0x%08x", sc->name, op, excl, r, c, got, seq);
            if (excl) seq = c == 0 ? xv : ref_op(fl, op, seq, xv);
          }
          if (!excl && (!fl || op != KBD_RED_SUM || kind == 2) && !ref_same(fl, T[r], seq))
            fail_msg("%s op %d: model total of row %d is not the sequential one", sc->name, op, r);
          if (!ref_same(fl, tvec[(size_t)gi * sc->R + r], T[r]))
            fail_msg("%s op %d excl %d: vec_store total row %d: 0x%08x vs 0x%08x", sc->name, op, excl, r,
                     tvec[(size_t)gi * sc->R + r], T[r]);
        }
        for (int t = 0; t < sc->S; ++t)
          for (int k = 0; k < nslot; ++k) {
            const uint32_t got = traw[((size_t)gi * sc->S + t) * nslot + k];
            if (!ref_same(fl, got, TT[t * nslot + k]))
              fail_msg("%s op %d excl %d: thread %d total slot %d: 0x%08x vs 0x%08x", sc->name, op, excl, t, k, got,
                       TT[t * nslot + k]);
          }
      }
    }
  free(x), free(bits), free(y), free(traw), free(tvec), free(Y), free(T), free(TT);
}

static void test_scan_rows(void **st) {
  (void)st;
  static const int seeds[] = {0, 1, 7}, thr[] = {1, 2, 2};
  for (int c = 0; c < NCASES; ++c)
    for (int sd = 0; sd < 3; ++sd) {
      set_env(seeds[sd], thr[sd]);
      run_case(&cases[c], 2, cases[c].dt == KBD_DT_i32 ? 0 : sd, 300u + 13u * (unsigned)c + (unsigned)sd);
    }
}

/* ---- R = 1 at warp scope is kbd_scan, bit for bit -------------------------------------------------------------- */

typedef struct {
  const float *x;
  float *a, *b, *ta, *tb;
} eq_params;
KBD_KERNEL(eq_scan, 32, eq_params) {
  KBD_TILE(f32, 1, 512, KBD_WARP) t, d1, d2;
  kbd_load(t, p.x, 512, 0);
  float t1;
  KBD_ROWVEC(f32, t) t2;
  kbd_scan(d1, t1, t, KBD_RED_SUM, 1);
  kbd_scan_rows(d2, t2, t, KBD_RED_SUM, 1);
  kbd_store(p.a, d1, 512, 0);
  kbd_store(p.b, d2, 512, 0);
  p.ta[0] = t1;
  kbd_vec_store(p.tb, t2);
}

static void test_matches_kbd_scan(void **st) {
  (void)st;
  float x[512], a[512], b[512], ta[1], tb[1];
  KT_HOST_SCOPE(x);
  KT_HOST_SCOPE(a);
  KT_HOST_SCOPE(b);
  KT_HOST_SCOPE(ta);
  KT_HOST_SCOPE(tb); /* kbd_vec_store's destination: kernel-visible memory */
  srand(11);
  for (int i = 0; i < 512; ++i)
    x[i] = (float)(rand() % 20001 - 10000) / 97.0f;
  set_env(0, 1);
  eq_params p = {x, a, b, ta, tb};
  assert_int_equal(eq_scan(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_memory_equal(a, b, sizeof a);
  assert_true(ref_bits(ta[0]) == ref_bits(tb[0]));
}

/* ---- misuse: a row scan across warps that warp 2 skips ------------------------------------------------------------
 */

KBD_KERNEL(scan_misuse, 128, sp) {
  KBD_TILE(f32, 1, 512, KBD_CTA) t, d;
  kbd_fill(t, 1.0f);
  KBD_ROWVEC(f32, t) tot;
  kbd_zero(d);
  if (kbd_warp_id() != 2) kbd_scan_rows(d, tot, t, KBD_RED_SUM, 0);
  kbd_store((float *)p.y, d, 512, 0);
}

static void test_misuse(void **st) {
  (void)st;
  set_env(0, 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  float y[512];
  KT_HOST_SCOPE(y);
  sp p = {NULL, y, NULL, NULL, NULL, KBD_RED_SUM, 0};
  const kbd_status s = scan_misuse(kbd_cfg_1d(1), p);
  unsetenv("KBD_CPU_QUIET");
  assert_int_equal(s.code, KBD_ERR_BARRIER); /* bar.sync 0 after warp 2 exited: completes on the GPU */
  assert_non_null(strstr(s.msg, "test_rowscan.c"));
  assert_non_null(strstr(s.msg, "warp(s) 2 have exited"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scan_rows),
      cmocka_unit_test(test_matches_kbd_scan),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
