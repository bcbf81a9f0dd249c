/* Scans on the CPU machine, element by element, against scalar references written here: a model of
 * the Hillis-Steele order for f32 sums (bit-exact), sequential scans for exact cases (i32, max/min,
 * integer-valued f32), several seeds and host-thread counts. */
#include <kbd/scan.h>
#include <kbd/tile.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Buffers live in host memory, mapped for the kernels (kt_host.h). */
#include "kt_host.h"
#define malloc(n) kt_host_alloc(n)
#define free(p) kt_host_free(p)


static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static int same(float a, float b) { return (isnan(a) && isnan(b)) || bits(a) == bits(b); }
static float ref_max(float a, float b) {
  if (isnan(a)) return isnan(b) ? NAN : b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static float ref_min(float a, float b) {
  if (isnan(a)) return isnan(b) ? NAN : b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static float ref_op(int op, float a, float b) {
  return op == KBD_RED_SUM ? a + b : op == KBD_RED_MAX ? ref_max(a, b) : ref_min(a, b);
}
static float empty_f(int op) { return op == KBD_RED_SUM ? 0.0f : op == KBD_RED_MAX ? -INFINITY : INFINITY; }
static void set_env(int seed, int threads) {
  char s[32];
  snprintf(s, sizeof s, "%d", seed);
  setenv("KBD_CPU_SEED", s, 1);
  snprintf(s, sizeof s, "%d", threads);
  setenv("KBD_CPU_THREADS", s, 1);
}

/* Hillis-Steele model over 32 values (in place, inclusive). */
static void ref_hs(int op, float *a) {
  for (int d = 1; d < 32; d <<= 1) {
    float b[32];
    for (int l = 0; l < 32; ++l) b[l] = l >= d ? ref_op(op, a[l - d], a[l]) : a[l];
    memcpy(a, b, sizeof b);
  }
}
static float pad_f(int op) { return op == KBD_RED_SUM ? -0.0f : NAN; }

/* Model of the CTA scan (thread order) over nw warps: out[i], total. */
static float ref_cta(int op, int excl, const float *x, int nw, float *out) {
  float tot[32], wt[32];
  for (int w = 0; w < nw; ++w) {
    float a[32];
    memcpy(a, x + 32 * w, sizeof a);
    ref_hs(op, a);
    wt[w] = a[31];
    for (int l = 0; l < 32; ++l) out[32 * w + l] = excl ? (l ? a[l - 1] : pad_f(op)) : a[l];
  }
  for (int k = 0; k < 32; ++k) tot[k] = k < nw ? wt[k] : pad_f(op);
  ref_hs(op, tot);
  for (int w = 0; w < nw; ++w)
    for (int l = 0; l < 32; ++l) out[32 * w + l] = ref_op(op, w ? tot[w - 1] : pad_f(op), out[32 * w + l]);
  if (excl) out[0] = empty_f(op);
  return tot[nw - 1];
}

typedef struct {
  const float *x;
  const int32_t *xi;
  float *out;
  int32_t *outi;
  float *tot;
  int op, excl;
} sp;

#define SCAN_CASE(op_, e_)                                                                                       \
  if (p.op == op_ && p.excl == e_) {                                                                             \
    kbd_warp_scan(yw, x, op_, e_);                                                                               \
    kbd_cta_scan(yc, tc, x, op_, e_);                                                                            \
    kbd_warp_scan(ywi, xi, op_, e_);                                                                             \
    kbd_cta_scan(yci, tci, xi, op_, e_);                                                                         \
  }

#define SCAN_KERNEL(name, threads)                                                                               \
  KBD_KERNEL(name, threads, sp) {                                                                                \
    const int base = (int)kbd_block_x() * (threads) + kbd_warp_id() * 32;                                        \
    kbd_lanes_f32 x, yw, yc;                                                                                     \
    kbd_lanes_i32 xi, ywi, yci;                                                                                  \
    float tc = 0;                                                                                                \
    int32_t tci = 0;                                                                                             \
    KBD_FOR_LANES(l) {                                                                                           \
      KBD_LANE(x, l) = p.x[base + l];                                                                            \
      KBD_LANE(xi, l) = p.xi[base + l];                                                                          \
      KBD_LANE(yw, l) = KBD_LANE(yc, l) = 0;                                                                     \
      KBD_LANE(ywi, l) = KBD_LANE(yci, l) = 0;                                                                   \
    }                                                                                                            \
    SCAN_CASE(KBD_RED_SUM, 0)                                                                                    \
    SCAN_CASE(KBD_RED_SUM, 1) SCAN_CASE(KBD_RED_MAX, 0) SCAN_CASE(KBD_RED_MAX, 1) SCAN_CASE(KBD_RED_MIN, 0)       \
        SCAN_CASE(KBD_RED_MIN, 1) KBD_FOR_LANES(l) {                                                             \
      p.out[2 * (base + l)] = KBD_LANE(yw, l);                                                                   \
      p.out[2 * (base + l) + 1] = KBD_LANE(yc, l);                                                               \
      p.outi[2 * (base + l)] = KBD_LANE(ywi, l);                                                                 \
      p.outi[2 * (base + l) + 1] = KBD_LANE(yci, l);                                                             \
    }                                                                                                            \
    p.tot[2 * (base / 32)] = tc;                                                                                 \
    memcpy(&p.tot[2 * (base / 32) + 1], &tci, 4);                                                                \
  }

SCAN_KERNEL(scan32, 32)
SCAN_KERNEL(scan96, 96)
SCAN_KERNEL(scan256, 256)
SCAN_KERNEL(scan1024, 1024)

typedef kbd_status (*scan_kernel)(kbd_launch_cfg, sp);

static void run_scan(scan_kernel k, int threads, int blocks, int kind) {
  const int n = threads * blocks, nw = threads / 32;
  float *x = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * 2 * n), *tot = malloc(sizeof(float) * n / 16);
  int32_t *xi = malloc(sizeof(int32_t) * n), *outi = malloc(sizeof(int32_t) * 2 * n);
  float *ref = malloc(sizeof(float) * threads);
  srand(77u + (unsigned)threads + (unsigned)kind);
  for (int i = 0; i < n; ++i) {
    x[i] = (float)(rand() % 2001 - 1000) / 7.0f;
    if (kind == 1 && rand() % 6 == 0) x[i] = (rand() & 1) ? NAN : ((rand() & 1) ? -0.0f : INFINITY);
    xi[i] = (int32_t)(((uint32_t)rand() << 17) ^ (uint32_t)rand());
  }
  for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op)
    for (int excl = 0; excl <= 1; ++excl) {
      sp p = {x, xi, out, outi, tot, op, excl};
      assert_int_equal(k(kbd_cfg_1d((unsigned)blocks), p).code, KBD_OK);
      for (int b = 0; b < blocks; ++b) {
        const int o = b * threads;
        const float t = ref_cta(op, excl, x + o, nw, ref);
        for (int i = 0; i < threads; ++i) {
          if (!same(out[2 * (o + i) + 1], ref[i]))
            fail_msg("cta op %d excl %d thr %d i %d: %a vs %a", op, excl, threads, i, out[2 * (o + i) + 1], ref[i]);
          /* warp scope: model with nw = 1 on this warp */
          float rw[32];
          ref_cta(op, excl, x + o + i / 32 * 32, 1, rw);
          if (!same(out[2 * (o + i)], rw[i % 32])) fail_msg("warp op %d excl %d i %d", op, excl, i);
          /* i32: exact sequential reference */
          int32_t a = excl ? (op == KBD_RED_SUM ? 0 : op == KBD_RED_MAX ? INT32_MIN : INT32_MAX) : 0, aw = a;
          const int w0 = i / 32 * 32;
          for (int j = 0; j <= i - excl; ++j) {
            const int32_t v = xi[o + j];
            const int32_t c = op == KBD_RED_SUM ? (int32_t)((uint32_t)a + (uint32_t)v) : op == KBD_RED_MAX ? (a > v ? a : v) : (a < v ? a : v);
            a = (j == 0 && !excl) ? v : c;
          }
          for (int j = w0; j <= i - excl; ++j) {
            const int32_t v = xi[o + j];
            const int32_t c = op == KBD_RED_SUM ? (int32_t)((uint32_t)aw + (uint32_t)v) : op == KBD_RED_MAX ? (aw > v ? aw : v) : (aw < v ? aw : v);
            aw = (j == w0 && !excl) ? v : c;
          }
          assert_int_equal(outi[2 * (o + i) + 1], a);
          assert_int_equal(outi[2 * (o + i)], aw);
          /* max/min f32: order-free semantics */
          if (op != KBD_RED_SUM && !(excl && i == 0)) {
            float e = x[o];
            for (int j = 1; j <= i - excl; ++j) e = ref_op(op, e, x[o + j]);
            if (!same(out[2 * (o + i) + 1], e)) fail_msg("cta max/min semantics op %d i %d", op, i);
          }
        }
        for (int w = 0; w < nw; ++w) {
          if (!same(tot[2 * (b * nw + w)], t)) fail_msg("total op %d", op);
          int32_t ti;
          memcpy(&ti, &tot[2 * (b * nw + w) + 1], 4);
          int32_t a = xi[o];
          for (int j = 1; j < threads; ++j) {
            const int32_t v = xi[o + j];
            a = op == KBD_RED_SUM ? (int32_t)((uint32_t)a + (uint32_t)v) : op == KBD_RED_MAX ? (a > v ? a : v) : (a < v ? a : v);
          }
          assert_int_equal(ti, a);
        }
      }
    }
  free(x), free(out), free(tot), free(xi), free(outi), free(ref);
}

static void test_lanes_scan(void **st) {
  (void)st;
  static const int seeds[] = {0, 2, 9}, thr[] = {1, 2, 2};
  for (int s = 0; s < 3; ++s)
    for (int kind = 0; kind <= 1; ++kind) {
      set_env(seeds[s], thr[s]);
      run_scan(scan32, 32, 3, kind);
      run_scan(scan96, 96, 2, kind);
      run_scan(scan256, 256, 2, kind);
      run_scan(scan1024, 1024, 1, kind);
    }
}

/* ---- 1 x C tiles: chained scan of n elements with a 256-thread CTA, 1 x 2048 tile (2 stripes) ----------- */

typedef struct {
  const float *x;
  float *y;
  const int32_t *xi;
  int32_t *yi;
  long long n;
  int op, excl;
} tp;

#define TILE_SCAN(op_, e_)                                                                                       \
  if (p.op == op_ && p.excl == e_) {                                                                             \
    float carry = kbd_red_empty_f32(op_);                                                                        \
    int32_t carryi = kbd_red_empty_i32(op_);                                                                     \
    for (long long s = 0; s < p.n; s += 2048) {                                                                  \
      KBD_TILE(f32, 1, 2048, KBD_CTA) t, d;                                                                      \
      KBD_TILE(i32, 1, 2048, KBD_CTA) ti, di;                                                                    \
      kbd_load(t, p.x, p.n, s);                                                                                  \
      kbd_load(ti, p.xi, p.n, s);                                                                                \
      float tot;                                                                                                 \
      int32_t toti;                                                                                              \
      kbd_scan(d, tot, t, op_, e_);                                                                              \
      kbd_scan(di, toti, ti, op_, e_);                                                                           \
      const float c = carry;                                                                                     \
      const int32_t ci = carryi;                                                                                 \
      KBD_MAP(d, d, v, r, col, kbd_cvt_bits_f32(kbd_red_op_b32(op_, 1, kbd_cvt_f32_bits(c), kbd_cvt_f32_bits(v)))); \
      for (int l = 0; l < KBD_LANES_HELD; ++l)                                                                   \
        for (int i = 0; i < KBD_NPT(di); ++i) di.v[l][i] = (int32_t)kbd_red_op_b32(op_, 0, (uint32_t)ci, (uint32_t)di.v[l][i]); \
      kbd_store(p.y, d, p.n, s);                                                                                 \
      kbd_store(p.yi, di, p.n, s);                                                                               \
      carry = kbd_cvt_bits_f32(kbd_red_op_b32(op_, 1, kbd_cvt_f32_bits(carry), kbd_cvt_f32_bits(tot)));         \
      carryi = (int32_t)kbd_red_op_b32(op_, 0, (uint32_t)carryi, (uint32_t)toti);                                \
    }                                                                                                            \
  }

KBD_KERNEL(tile_scan, 256, tp) {
  TILE_SCAN(KBD_RED_SUM, 0)
  TILE_SCAN(KBD_RED_SUM, 1)
  TILE_SCAN(KBD_RED_MAX, 0)
  TILE_SCAN(KBD_RED_MAX, 1)
  TILE_SCAN(KBD_RED_MIN, 0)
  TILE_SCAN(KBD_RED_MIN, 1)
}

static void test_tile_scan(void **st) {
  (void)st;
  static const long long ns[] = {0, 1, 31, 32, 33, 1023, 1024, 1025, 4097};
  float *x = malloc(sizeof(float) * 4097), *y = malloc(sizeof(float) * 4097);
  int32_t *xi = malloc(sizeof(int32_t) * 4097), *yi = malloc(sizeof(int32_t) * 4097);
  for (int c = 0; c < 9; ++c) {
    const long long n = ns[c];
    set_env(c, 1 + c % 2);
    srand(5u + (unsigned)c);
    for (long long i = 0; i < n; ++i) {
      x[i] = (float)(rand() % 201 - 100); /* integer-valued: every partial sum exact, so order-free */
      xi[i] = (int32_t)(((uint32_t)rand() << 18) ^ (uint32_t)rand());
    }
    for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op)
      for (int excl = 0; excl <= 1; ++excl) {
        for (long long i = 0; i < n; ++i) y[i] = NAN, yi[i] = 12345;
        tp p = {x, y, xi, yi, n, op, excl};
        assert_int_equal(tile_scan(kbd_cfg_1d(1), p).code, KBD_OK);
        float a = empty_f(op);
        int32_t ai = op == KBD_RED_SUM ? 0 : op == KBD_RED_MAX ? INT32_MIN : INT32_MAX;
        for (long long i = 0; i < n; ++i) {
          if (!excl) a = ref_op(op, a, x[i]), ai = op == KBD_RED_SUM ? (int32_t)((uint32_t)ai + (uint32_t)xi[i]) : op == KBD_RED_MAX ? (ai > xi[i] ? ai : xi[i]) : (ai < xi[i] ? ai : xi[i]);
          if (!same(y[i], a) && !(y[i] == a)) fail_msg("n %lld op %d excl %d i %lld: %g vs %g", n, op, excl, i, y[i], a);
          if (yi[i] != ai) fail_msg("i32 n %lld op %d excl %d i %lld: %d vs %d", n, op, excl, i, yi[i], ai);
          if (excl) a = ref_op(op, a, x[i]), ai = op == KBD_RED_SUM ? (int32_t)((uint32_t)ai + (uint32_t)xi[i]) : op == KBD_RED_MAX ? (ai > xi[i] ? ai : xi[i]) : (ai < xi[i] ? ai : xi[i]);
        }
      }
  }
  free(x), free(y), free(xi), free(yi);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_lanes_scan), cmocka_unit_test(test_tile_scan)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
