/* Reductions on the CPU machine against scalar references written here, independently of kbd:
 * bit-exact models of the documented f32 order, exact i32 results, PTX max/min NaN/zero rules,
 * the documented error bound, barrier misuse, several seeds and host-thread counts. */
#include <kbd/reduce.h>
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


/* ---- reference semantics ----------------------------------------------------------------------------- */

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float fbits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
/* PTX max.f32 from its ISA pseudo-code: NaN ignored, both NaN -> canonical NaN, +0 > -0. */
static float ref_max(float a, float b) {
  if (isnan(a) && isnan(b)) return fbits(0x7fffffffu);
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return (signbit(a) && signbit(b)) ? a : (signbit(a) ? b : a);
  return a > b ? a : b;
}
static float ref_min(float a, float b) {
  if (isnan(a) && isnan(b)) return fbits(0x7fffffffu);
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return (!signbit(a) && !signbit(b)) ? a : (signbit(a) ? a : b);
  return a < b ? a : b;
}
static float ref_op(int op, float a, float b) {
  return op == KBD_RED_SUM ? a + b : op == KBD_RED_MAX ? ref_max(a, b) : ref_min(a, b);
}
/* Same float, NaN == NaN. */
static int same(float a, float b) { return (isnan(a) && isnan(b)) || bits(a) == bits(b); }

/* Model of the documented order: xor butterfly over 32 values (masks 1,2,4,8,16), lane 0's result. */
static float ref_bfly(int op, const float *v32) {
  float a[32], b[32];
  memcpy(a, v32, sizeof a);
  for (int m = 1; m < 32; m <<= 1) {
    for (int l = 0; l < 32; ++l) b[l] = ref_op(op, a[l], a[l ^ m]);
    memcpy(a, b, sizeof a);
  }
  return a[0];
}
static float ref_pad(int op) { return op == KBD_RED_SUM ? -0.0f : NAN; }

static void set_env(int seed, int threads) {
  char s[32];
  snprintf(s, sizeof s, "%d", seed);
  setenv("KBD_CPU_SEED", s, 1);
  snprintf(s, sizeof s, "%d", threads);
  setenv("KBD_CPU_THREADS", s, 1);
}

/* ---- kernels ------------------------------------------------------------------------------------------- */

typedef struct {
  const float *x;
  const int32_t *xi;
  float *out;
  int32_t *outi;
  int op;
} lanes_params;

#define WG_YES(rg, x)                                                                                    \
  switch (p.op) {                                                                                                \
  case KBD_RED_SUM: kbd_warpgroup_reduce(rg, x, KBD_RED_SUM); break;                                             \
  case KBD_RED_MAX: kbd_warpgroup_reduce(rg, x, KBD_RED_MAX); break;                                             \
  default: kbd_warpgroup_reduce(rg, x, KBD_RED_MIN); break;                                                      \
  }
#define WG_NO(rg, x) (void)0
#define SCALAR_KERNELS(name, threads, WG)                                                                            \
  KBD_KERNEL(name##_f32, threads, lanes_params) {                                                                \
    const int base = (int)kbd_block_x() * (threads), w = kbd_warp_id();                                          \
    kbd_lanes_f32 x;                                                                                             \
    KBD_FOR_LANES(l) KBD_LANE(x, l) = p.x[base + w * 32 + l];                                                    \
    float rw = 0, rg = 0, rc = 0;                                                                                \
    switch (p.op) {                                                                                              \
    case KBD_RED_SUM: kbd_warp_reduce(rw, x, KBD_RED_SUM); break;                                                \
    case KBD_RED_MAX: kbd_warp_reduce(rw, x, KBD_RED_MAX); break;                                                \
    default: kbd_warp_reduce(rw, x, KBD_RED_MIN); break;                                                         \
    }                                                                                                            \
    WG(rg, x);                                                                                                   \
    switch (p.op) {                                                                                              \
    case KBD_RED_SUM: kbd_cta_reduce(rc, x, KBD_RED_SUM); break;                                                 \
    case KBD_RED_MAX: kbd_cta_reduce(rc, x, KBD_RED_MAX); break;                                                 \
    default: kbd_cta_reduce(rc, x, KBD_RED_MIN); break;                                                          \
    }                                                                                                            \
    const int o = ((int)kbd_block_x() * ((threads) / 32) + w) * 3;                                               \
    p.out[o] = rw;                                                                                               \
    p.out[o + 1] = rg;                                                                                           \
    p.out[o + 2] = rc;                                                                                           \
  }                                                                                                              \
  KBD_KERNEL(name##_i32, threads, lanes_params) {                                                                \
    const int base = (int)kbd_block_x() * (threads), w = kbd_warp_id();                                          \
    kbd_lanes_i32 x;                                                                                             \
    KBD_FOR_LANES(l) KBD_LANE(x, l) = p.xi[base + w * 32 + l];                                                   \
    int32_t rw = 0, rc = 0;                                                                                      \
    switch (p.op) {                                                                                              \
    case KBD_RED_SUM: kbd_warp_reduce(rw, x, KBD_RED_SUM); kbd_cta_reduce(rc, x, KBD_RED_SUM); break;            \
    case KBD_RED_MAX: kbd_warp_reduce(rw, x, KBD_RED_MAX); kbd_cta_reduce(rc, x, KBD_RED_MAX); break;            \
    case KBD_RED_MIN: kbd_warp_reduce(rw, x, KBD_RED_MIN); kbd_cta_reduce(rc, x, KBD_RED_MIN); break;            \
    case KBD_RED_AND: kbd_warp_reduce(rw, x, KBD_RED_AND); kbd_cta_reduce(rc, x, KBD_RED_AND); break;            \
    case KBD_RED_OR: kbd_warp_reduce(rw, x, KBD_RED_OR); kbd_cta_reduce(rc, x, KBD_RED_OR); break;               \
    default: kbd_warp_reduce(rw, x, KBD_RED_XOR); kbd_cta_reduce(rc, x, KBD_RED_XOR); break;                     \
    }                                                                                                            \
    const int o = ((int)kbd_block_x() * ((threads) / 32) + w) * 2;                                               \
    p.outi[o] = rw;                                                                                              \
    p.outi[o + 1] = rc;                                                                                          \
  }

SCALAR_KERNELS(red32, 32, WG_NO)
SCALAR_KERNELS(red96, 96, WG_NO)
SCALAR_KERNELS(red256, 256, WG_YES)
SCALAR_KERNELS(red1024, 1024, WG_YES)

typedef kbd_status (*lanes_kernel)(kbd_launch_cfg, lanes_params);

/* Model of the scope result: warp butterflies, then a butterfly over the warp totals padded to 32. */
static float ref_scope(int op, const float *x, int nw) {
  float t[32];
  for (int k = 0; k < 32; ++k) t[k] = k < nw ? ref_bfly(op, x + 32 * k) : ref_pad(op);
  return ref_bfly(op, t);
}

static void fill_special(float *x, int n, unsigned seed, int kind) {
  srand(seed);
  for (int i = 0; i < n; ++i) {
    float v = (float)(rand() % 20001 - 10000) / 97.0f;
    if (kind == 1) { /* specials sprinkled */
      switch (rand() % 9) {
      case 0: v = NAN; break;
      case 1: v = INFINITY; break;
      case 2: v = -INFINITY; break;
      case 3: v = 0.0f; break;
      case 4: v = -0.0f; break;
      default: break;
      }
    } else if (kind == 2) { /* only zeros of both signs */
      v = (rand() & 1) ? 0.0f : -0.0f;
    } else if (kind == 3) { /* all NaN */
      v = NAN;
    } else if (kind == 4) { /* all -0.0 */
      v = -0.0f;
    } else if (kind == 5) { /* NaN and -inf only */
      v = (rand() & 1) ? NAN : -INFINITY;
    }
    x[i] = v;
  }
}

static void run_scalar_f32(lanes_kernel k, int threads, int blocks) {
  const int n = threads * blocks, nw = threads / 32;
  float *x = (float *)malloc(sizeof(float) * n), *out = (float *)malloc(sizeof(float) * 3 * n / 32);
  for (int kind = 0; kind <= 5; ++kind)
    for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op) {
      fill_special(x, n, 17u + (unsigned)kind * 5u + (unsigned)op, kind);
      lanes_params p = {x, NULL, out, NULL, op};
      assert_int_equal(k(kbd_cfg_1d((unsigned)blocks), p).code, KBD_OK);
      for (int b = 0; b < blocks; ++b) {
        const float *xb = x + b * threads;
        const float cta = ref_scope(op, xb, nw);
        for (int w = 0; w < nw; ++w) {
          const float *o = out + (b * nw + w) * 3;
          const float warp = ref_bfly(op, xb + 32 * w);
          if (!same(o[0], warp)) fail_msg("warp op %d kind %d block %d warp %d: %a vs %a", op, kind, b, w, o[0], warp);
          if (threads % 128 == 0) {
            const float wg = ref_scope(op, xb + 128 * (w / 4), 4);
            if (!same(o[1], wg)) fail_msg("wg op %d kind %d: %a vs %a", op, kind, o[1], wg);
          }
          if (!same(o[2], cta)) fail_msg("cta op %d kind %d block %d warp %d: %a vs %a", op, kind, b, w, o[2], cta);
          /* Semantics independent of order for max/min: the NaN-ignoring extreme. */
          if (op != KBD_RED_SUM) {
            float e = xb[0];
            for (int i = 1; i < threads; ++i) e = ref_op(op, e, xb[i]);
            if (!same(o[2], e)) fail_msg("cta max/min semantics op %d kind %d: %a vs %a", op, kind, o[2], e);
          }
        }
      }
    }
  free(x);
  free(out);
}

static void test_scalar_f32(void **st) {
  (void)st;
  static const int seeds[] = {0, 1, 7}, thr[] = {1, 2, 3};
  for (int s = 0; s < 3; ++s) {
    set_env(seeds[s], thr[s]);
    run_scalar_f32(red32_f32, 32, 3);
    run_scalar_f32(red96_f32, 96, 2);
    run_scalar_f32(red256_f32, 256, 3);
    run_scalar_f32(red1024_f32, 1024, 2);
  }
}

/* Signed zeros and NaN, spelled out (the model above could share a mistake with the code). */
static void test_minmax_rules(void **st) {
  (void)st;
  assert_true(bits(kbd_fmax_ptx(0.0f, -0.0f)) == 0u && bits(kbd_fmax_ptx(-0.0f, 0.0f)) == 0u);
  assert_true(bits(kbd_fmin_ptx(0.0f, -0.0f)) == 0x80000000u && bits(kbd_fmin_ptx(-0.0f, 0.0f)) == 0x80000000u);
  assert_true(kbd_fmax_ptx(NAN, 1.0f) == 1.0f && kbd_fmax_ptx(1.0f, NAN) == 1.0f);
  assert_true(kbd_fmin_ptx(NAN, -INFINITY) == -INFINITY);
  assert_true(bits(kbd_fmax_ptx(NAN, -NAN)) == 0x7fffffffu);
  assert_true(kbd_fmax_ptx(-INFINITY, INFINITY) == INFINITY && kbd_fmin_ptx(-INFINITY, INFINITY) == -INFINITY);
  set_env(0, 1);
  float x[32], out[3];
  KT_HOST_SCOPE(x);
  KT_HOST_SCOPE(out);
  for (int i = 0; i < 32; ++i) x[i] = (i % 3) ? -0.0f : NAN;
  x[17] = 0.0f;
  lanes_params p = {x, NULL, out, NULL, KBD_RED_MAX};
  assert_int_equal(red32_f32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(bits(out[0]) == 0u && bits(out[2]) == 0u); /* +0 beats -0, NaN ignored */
  p.op = KBD_RED_MIN;
  assert_int_equal(red32_f32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(bits(out[0]) == 0x80000000u);
  for (int i = 0; i < 32; ++i) x[i] = NAN;
  assert_int_equal(red32_f32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(isnan(out[0]) && isnan(out[2]));
  for (int i = 0; i < 32; ++i) x[i] = -0.0f;
  p.op = KBD_RED_SUM;
  assert_int_equal(red32_f32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(bits(out[0]) == 0x80000000u && bits(out[2]) == 0x80000000u); /* -0 + -0 stays -0 */
  x[3] = INFINITY;
  x[9] = -INFINITY;
  assert_int_equal(red32_f32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true(isnan(out[0]));
}

static int32_t ref_i32(int op, int32_t a, int32_t b) {
  switch (op) {
  case KBD_RED_SUM: return (int32_t)((uint32_t)a + (uint32_t)b);
  case KBD_RED_MAX: return a > b ? a : b;
  case KBD_RED_MIN: return a < b ? a : b;
  case KBD_RED_AND: return a & b;
  case KBD_RED_OR: return a | b;
  default: return a ^ b;
  }
}

static void run_scalar_i32(lanes_kernel k, int threads, int blocks) {
  const int n = threads * blocks, nw = threads / 32;
  int32_t *x = (int32_t *)malloc(sizeof(int32_t) * n), *out = (int32_t *)malloc(sizeof(int32_t) * 2 * n / 32);
  for (int op = KBD_RED_SUM; op <= KBD_RED_XOR; ++op) {
    srand(100u + (unsigned)op);
    for (int i = 0; i < n; ++i) /* large values: sums wrap */
      x[i] = (int32_t)(((uint32_t)rand() << 16) ^ (uint32_t)rand()) | (i % 5 == 0 ? (int32_t)0x40000000 : 0);
    x[0] = INT32_MAX;
    x[1] = INT32_MIN;
    lanes_params p = {NULL, x, NULL, out, op};
    assert_int_equal(k(kbd_cfg_1d((unsigned)blocks), p).code, KBD_OK);
    for (int b = 0; b < blocks; ++b) {
      int32_t cta = x[b * threads];
      for (int i = 1; i < threads; ++i) cta = ref_i32(op, cta, x[b * threads + i]);
      for (int w = 0; w < nw; ++w) {
        int32_t warp = x[b * threads + 32 * w];
        for (int i = 1; i < 32; ++i) warp = ref_i32(op, warp, x[b * threads + 32 * w + i]);
        assert_int_equal(out[(b * nw + w) * 2], warp);
        assert_int_equal(out[(b * nw + w) * 2 + 1], cta);
      }
    }
  }
  free(x);
  free(out);
}

static void test_scalar_i32(void **st) {
  (void)st;
  set_env(3, 2);
  run_scalar_i32(red32_i32, 32, 3);
  run_scalar_i32(red96_i32, 96, 2);
  run_scalar_i32(red256_i32, 256, 2);
  run_scalar_i32(red1024_i32, 1024, 1);
  /* The wrap is real: 32 x INT32_MAX. */
  int32_t x[32], out[2];
  KT_HOST_SCOPE(x);
  KT_HOST_SCOPE(out);
  for (int i = 0; i < 32; ++i) x[i] = INT32_MAX;
  lanes_params p = {NULL, x, NULL, out, KBD_RED_SUM};
  assert_int_equal(red32_i32(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_int_equal(out[0], (int32_t)(32u * 0x7fffffffu));
}

/* ---- whole tiles over n elements, chunked: 1 x 1024 tile owned by a 256-thread CTA ------------------------- */

typedef struct {
  const void *x;
  long long n;
  float *out;
  int32_t *outi;
  int op;
} tile_params;

#define TILE_RED(op_)                                                                                            \
  do {                                                                                                           \
    KBD_TILE(f32, 1, 1024, KBD_CTA) t;                                                                           \
    acc = kbd_red_empty_f32(op_);                                                                                \
    for (long long s = 0; s < p.n || s == 0; s += 1024) {                                                        \
      kbd_load(t, (const float *)p.x, p.n, s);                                                                   \
      kbd_pad_1d(t, p.n, s, op_);                                                                                \
      float r;                                                                                                   \
      kbd_reduce(r, t, op_);                                                                                     \
      acc = kbd_cvt_bits_f32(kbd_red_op_b32(op_, 1, kbd_cvt_f32_bits(acc), kbd_cvt_f32_bits(r)));               \
    }                                                                                                            \
  } while (0)

KBD_KERNEL(tile_f32, 256, tile_params) {
  float acc = 0;
  if (p.op == KBD_RED_SUM) TILE_RED(KBD_RED_SUM);
  else if (p.op == KBD_RED_MAX) TILE_RED(KBD_RED_MAX);
  else TILE_RED(KBD_RED_MIN);
  p.out[kbd_warp_id()] = acc;
}

KBD_KERNEL(tile_bf16_warp, 32, tile_params) {
  KBD_TILE(bf16, 1, 256, KBD_WARP) t;
  float acc = 0.0f;
  for (long long s = 0; s < p.n; s += 256) {
    kbd_load(t, (const kbd_bf16 *)p.x, p.n, s);
    float r;
    kbd_reduce(r, t, KBD_RED_SUM);
    acc += r;
  }
  p.out[0] = acc;
}

KBD_KERNEL(tile_i32_wg, 256, tile_params) {
  KBD_TILE(i32, 1, 512, KBD_WARPGROUP) t;
  kbd_load(t, (const int32_t *)p.x, p.n, 512 * kbd_warpgroup_id());
  kbd_pad_1d(t, p.n, 512 * kbd_warpgroup_id(), KBD_RED_MIN);
  int32_t r;
  kbd_reduce(r, t, KBD_RED_MIN);
  int32_t s;
  kbd_reduce(s, t, KBD_RED_XOR);
  p.outi[2 * kbd_warp_id()] = r;
  p.outi[2 * kbd_warp_id() + 1] = s;
}

/* 8-bit integer tiles reduce in i32 (widened exactly); kbd_pad_1d writes the op's empty result saturated into
 * the type, which is still its identity there (max: -128 / 0, min: 127 / 255, sum: 0). p.op: 0 s8, 1 u8. */
#define TILE_I8(DT)                                                                                              \
  do {                                                                                                           \
    KBD_TILE(DT, 1, 512, KBD_WARPGROUP) t, tmax, tmin;                                                           \
    const long long s0 = 512 * kbd_warpgroup_id();                                                               \
    kbd_load(t, (const kbd_##DT *)p.x, p.n, s0);                                                                 \
    kbd_convert(tmax, t);                                                                                        \
    kbd_convert(tmin, t);                                                                                        \
    kbd_pad_1d(tmax, p.n, s0, KBD_RED_MAX);                                                                      \
    kbd_pad_1d(tmin, p.n, s0, KBD_RED_MIN);                                                                      \
    kbd_reduce(r[0], t, KBD_RED_SUM);                                                                            \
    kbd_reduce(r[1], tmax, KBD_RED_MAX);                                                                         \
    kbd_reduce(r[2], tmin, KBD_RED_MIN);                                                                         \
  } while (0)
KBD_KERNEL(tile_i8_wg, 256, tile_params) {
  int32_t r[3];
  if (p.op == 0)
    TILE_I8(s8);
  else
    TILE_I8(u8);
  for (int k = 0; k < 3; ++k) p.outi[3 * kbd_warp_id() + k] = r[k];
}

/* Model of one chunk: thread t folds elements 4t..4t+3 sequentially, then ref_scope over 8 warps. */
static float ref_chunk(int op, const float *x, long long n, long long s) {
  float th[256];
  for (int t = 0; t < 256; ++t) {
    float a = 0;
    for (int k = 0; k < 4; ++k) {
      const long long g = s + 4 * t + k;
      const float v = g < n ? x[g] : kbd_red_empty_f32(op);
      a = k == 0 ? v : ref_op(op, a, v);
    }
    th[t] = a;
  }
  return ref_scope(op, th, 8);
}

static void test_tile_f32(void **st) {
  (void)st;
  static const long long ns[] = {0, 1, 31, 32, 33, 1023, 1024, 1025, 5000};
  float *x = (float *)malloc(sizeof(float) * 5000);
  float out[8];
  KT_HOST_SCOPE(out);
  for (int c = 0; c < 9; ++c)
    for (int kind = 0; kind <= 1; ++kind)
      for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op) {
        const long long n = ns[c];
        set_env(c % 3, 1 + c % 2);
        fill_special(x, 5000, 900u + (unsigned)c, kind);
        tile_params p = {x, n, out, NULL, op};
        assert_int_equal(tile_f32(kbd_cfg_1d(1), p).code, KBD_OK);
        float want = kbd_red_empty_f32(op);
        double dsum = 0, dabs = 0;
        for (long long s = 0; s < n || s == 0; s += 1024) want = ref_op(op, want, ref_chunk(op, x, n, s));
        for (long long i = 0; i < n; ++i) dsum += x[i], dabs += fabs(x[i]);
        for (int w = 0; w < 8; ++w)
          if (!same(out[w], want)) fail_msg("n %lld op %d kind %d warp %d: %a vs %a", n, op, kind, w, out[w], want);
        if (n == 0) assert_true(same(out[0], kbd_red_empty_f32(op))); /* documented empty results */
        if (op == KBD_RED_SUM && kind == 0) {
          /* Documented bound: k = npt-1 + 5 + 5 per chunk, plus one add per chunk. */
          const double u = 0x1p-24, k = 3 + 10 + (double)(n / 1024 + 1), g = k * u / (1 - k * u);
          if (fabs((double)out[0] - dsum) > g * dabs) fail_msg("n %lld: sum %.9g vs %.9g exceeds bound", n, out[0], dsum);
        }
      }
  free(x);
}

static void test_tile_bf16_i32(void **st) {
  (void)st;
  set_env(5, 2);
  kbd_bf16 xb[1000];
  KT_HOST_SCOPE(xb);
  double dsum = 0;
  for (int i = 0; i < 1000; ++i) {
    const float v = (float)(i % 37) * 0.25f - 3.0f; /* exact in bf16; all partial sums exact in f32 */
    xb[i] = kbd_f32_to_bf16(v);
    dsum += v;
  }
  float out[1];
  KT_HOST_SCOPE(out);
  tile_params p = {xb, 1000, out, NULL, KBD_RED_SUM};
  assert_int_equal(tile_bf16_warp(kbd_cfg_1d(1), p).code, KBD_OK);
  assert_true((double)out[0] == dsum);

  int32_t xi[1000], oi[16];
  KT_HOST_SCOPE(xi);
  KT_HOST_SCOPE(oi);
  for (int i = 0; i < 1000; ++i) xi[i] = (int32_t)((uint32_t)i * 2654435761u);
  tile_params q = {xi, 1000, NULL, oi, KBD_RED_MIN};
  assert_int_equal(tile_i32_wg(kbd_cfg_1d(1), q).code, KBD_OK);
  for (int g = 0; g < 2; ++g) {
    int32_t mn = INT32_MAX, xr = 0;
    for (int i = 512 * g; i < 512 * (g + 1); ++i) {
      const int32_t v = i < 1000 ? xi[i] : INT32_MAX; /* padded with min's identity */
      mn = v < mn ? v : mn;
      xr ^= v;
    }
    for (int w = 4 * g; w < 4 * g + 4; ++w) {
      assert_int_equal(oi[2 * w], mn);
      assert_int_equal(oi[2 * w + 1], xr);
    }
  }
}

static void test_tile_i8(void **st) {
  (void)st;
  static const long long ns[] = {1000, 700, 512}; /* warpgroup 1 padded, warpgroup 1 mostly padded, no padding */
  for (int dt = 0; dt < 2; ++dt)
    for (int c = 0; c < 3; ++c) {
      set_env(c, 1 + c % 2);
      uint8_t x[1024];
      int32_t oi[24];
      KT_HOST_SCOPE(x);
      KT_HOST_SCOPE(oi);
      /* the whole 8-bit range with both extremes, but no value of the padded positions' saturated identity in
       * warpgroup 1's real elements, so a wrong pad changes max or min */
      for (int i = 0; i < 1024; ++i) {
        x[i] = (uint8_t)(i * 89 + 7);
        if (i >= 512 && (dt == 0 ? (x[i] == 0x80u || x[i] == 0x7fu) : (x[i] == 0u || x[i] == 255u))) x[i] = 0x40u;
      }
      tile_params p = {x, ns[c], NULL, oi, dt};
      assert_int_equal(tile_i8_wg(kbd_cfg_1d(1), p).code, KBD_OK);
      for (int g = 0; g < 2; ++g) {
        /* an all-padded warpgroup (n 512) gives the documented empty results: the type's limits */
        int32_t sum = 0, mx = dt == 0 ? -128 : 0, mn = dt == 0 ? 127 : 255;
        for (long long i = 512 * g; i < 512 * (g + 1) && i < ns[c]; ++i) {
          const int32_t v = dt == 0 ? (int32_t)(int8_t)x[i] : (int32_t)x[i];
          sum += v, mx = v > mx ? v : mx, mn = v < mn ? v : mn;
        }
        for (int w = 4 * g; w < 4 * g + 4; ++w) {
          if (oi[3 * w] != sum || oi[3 * w + 1] != mx || oi[3 * w + 2] != mn)
            fail_msg("%s n %lld warp %d: sum/max/min %d %d %d, want %d %d %d", dt ? "u8" : "s8", ns[c], w, oi[3 * w],
                     oi[3 * w + 1], oi[3 * w + 2], sum, mx, mn);
        }
      }
    }
}

/* ---- misuse: a CTA reduction that warp 1 never reaches -------------------------------------------------- */

KBD_KERNEL(misuse, 128, lanes_params) {
  kbd_lanes_f32 x;
  KBD_FOR_LANES(l) KBD_LANE(x, l) = 1.0f;
  float r = 0;
  if (kbd_warp_id() != 1) kbd_cta_reduce(r, x, KBD_RED_SUM); /* the bug: not every warp of the scope */
  p.out[kbd_warp_id()] = r;
}

static void test_misuse(void **st) {
  (void)st;
  set_env(0, 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  float out[4];
  KT_HOST_SCOPE(out);
  lanes_params p = {NULL, NULL, out, NULL, KBD_RED_SUM};
  kbd_status s = misuse(kbd_cfg_1d(1), p);
  unsetenv("KBD_CPU_QUIET");
  assert_int_equal(s.code, KBD_ERR_BARRIER); /* bar.sync 0 after warp 1 exited: completes on the GPU */
  assert_non_null(strstr(s.msg, "test_reduce.c"));
  assert_non_null(strstr(s.msg, "warp(s) 1 have exited"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_minmax_rules), cmocka_unit_test(test_scalar_f32), cmocka_unit_test(test_scalar_i32),
      cmocka_unit_test(test_tile_f32),     cmocka_unit_test(test_tile_bf16_i32), cmocka_unit_test(test_tile_i8),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
