/* Scalar references for the row/column reduction and row scan tests, written from the documentation
 * (docs/reduce.md, docs/scan.md, docs/design/tile-reductions.md, the layout formulas of docs/layouts.md and
 * ptx-reference 4.3), not from kbd's code. Values travel as 32-bit patterns: f32 bits (fl = 1) or i32. */
#ifndef ROWRED_REF_H
#define ROWRED_REF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kbd/ops.h>

static inline void set_env(int seed, int threads) {
  char s[32];
  snprintf(s, sizeof s, "%d", seed);
  setenv("KBD_CPU_SEED", s, 1);
  snprintf(s, sizeof s, "%d", threads);
  setenv("KBD_CPU_THREADS", s, 1);
}

static inline uint32_t ref_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static inline float ref_f(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
/* PTX max.f32 / min.f32 from the ISA text: NaN operands ignored, two NaNs -> canonical NaN, +0 > -0. */
static inline float ref_max(float a, float b) {
  if (isnan(a) && isnan(b)) return ref_f(0x7fffffffu);
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline float ref_min(float a, float b) {
  if (isnan(a) && isnan(b)) return ref_f(0x7fffffffu);
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == 0 && b == 0) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline uint32_t ref_op(int fl, int op, uint32_t a, uint32_t b) {
  if (fl) {
    const float x = ref_f(a), y = ref_f(b);
    return ref_bits(op == KBD_RED_SUM ? x + y : op == KBD_RED_MAX ? ref_max(x, y) : ref_min(x, y));
  }
  const int32_t x = (int32_t)a, y = (int32_t)b;
  switch (op) {
  case KBD_RED_SUM: return a + b;
  case KBD_RED_MAX: return (uint32_t)(x > y ? x : y);
  case KBD_RED_MIN: return (uint32_t)(x < y ? x : y);
  case KBD_RED_AND: return a & b;
  case KBD_RED_OR: return a | b;
  default: return a ^ b;
  }
}
/* Same value: identical bits, or both NaN (x86 keeps NaN payloads, the GPU canonicalises them). */
static inline int ref_same(int fl, uint32_t a, uint32_t b) {
  if (fl && isnan(ref_f(a)) && isnan(ref_f(b))) return 1;
  return a == b;
}
static inline double ref_gamma(int k) {
  const double u = 0x1p-24;
  return k * u / (1 - k * u);
}
/* Documented empty results and the exact identities used inside the algorithms. */
static inline uint32_t ref_empty(int fl, int op) {
  if (fl) return ref_bits(op == KBD_RED_SUM ? 0.0f : op == KBD_RED_MAX ? -INFINITY : INFINITY);
  return op == KBD_RED_SUM ? 0u : op == KBD_RED_MAX ? 0x80000000u : 0x7fffffffu;
}
static inline uint32_t ref_pad(int fl, int op) {
  if (fl) return op == KBD_RED_SUM ? 0x80000000u : 0x7fffffffu;
  return ref_empty(0, op);
}

/* ---- layouts (docs/layouts.md; WGMMA: ptx-reference 4.3) ------------------------------------------------- */

enum { REF_ROWS = 0, REF_COLS = 1 };
typedef struct {
  int layout, R, C, S, V, npt;
} ref_shape;

/* ROW vec: the widest of 4, 2, 1 elements that divides C and makes R*C a multiple of S*vec, for every dtype
 * (tile_core.h). The fixed layouts ignore it. The kernels report KBD_VEC too, and the tests compare. */
static inline ref_shape ref_shape_make(int layout, int R, int C, int S) {
  ref_shape s = {layout, R, C, S, 1, R * C / S};
  if (layout == KBD_LAYOUT_ROW)
    for (int v = 4; v >= 1; v /= 2)
      if (C % v == 0 && (R * C) % (S * v) == 0) {
        s.V = v;
        break;
      }
  return s;
}
static inline void ref_coord(ref_shape s, int t, int i, int *r, int *c) {
  if (s.layout == KBD_LAYOUT_ROW) { /* chunk j*S + t of vec elements, row-major */
    const int e = ((i / s.V) * s.S + t) * s.V + i % s.V;
    *r = e / s.C;
    *c = e % s.C;
  } else if (s.layout == KBD_LAYOUT_WGMMA_ACC) { /* row 64(i/(N/2)) + 16w + g + 8((ii/2)%2), col 8(ii/4) + 2q + ii%2 */
    const int half = s.C / 2, ii = i % half, w = t / 32, l = t % 32;
    *r = 64 * (i / half) + 16 * w + l / 4 + 8 * ((ii / 2) % 2);
    *c = 8 * (ii / 4) + 2 * (l % 4) + ii % 2;
  } else { /* MMA_C: 16x8 blocks row-major, c0..c3: row g + 8(j/2), col 2q + j%2 */
    const int nb = s.C / 8, b = i / 4, j = i % 4;
    *r = 16 * (b / nb) + t / 4 + 8 * (j / 2);
    *c = 8 * (b % nb) + 2 * (t % 4) + j % 2;
  }
}

/* ---- the reduction model ---------------------------------------------------------------------------------- */

typedef struct {
  ref_shape s;
  int axis, nslot, nkeys, nmask, masks[5], depth;
  int *key;  /* [S][nslot]: slot k of thread t = its k-th distinct key in order of first appearance */
  int *cnt;  /* [S][nslot] */
  int *list; /* [S][nslot][npt]: fragment indices of the slot, in element order */
  uint32_t *part, *final, *seq;
  double *dsum, *dabs;
} ref_axis;

static inline void ref_axis_init(ref_axis *a, ref_shape s, int axis) {
  memset(a, 0, sizeof *a);
  a->s = s;
  a->axis = axis;
  a->nkeys = axis == REF_ROWS ? s.R : s.C;
  a->key = calloc((size_t)s.S * s.npt, sizeof(int));
  a->cnt = calloc((size_t)s.S * s.npt, sizeof(int));
  a->list = calloc((size_t)s.S * s.npt * s.npt, sizeof(int));
  a->part = calloc((size_t)s.S * s.npt, sizeof(uint32_t));
  a->final = calloc((size_t)a->nkeys, sizeof(uint32_t));
  a->seq = calloc((size_t)a->nkeys, sizeof(uint32_t));
  a->dsum = calloc((size_t)a->nkeys, sizeof(double));
  a->dabs = calloc((size_t)a->nkeys, sizeof(double));
  a->nslot = -1;
  int *k = calloc((size_t)s.npt, sizeof(int)), *c = calloc((size_t)s.npt, sizeof(int));
  for (int t = 0; t < s.S; ++t) {
    int ns = 0;
    for (int i = 0; i < s.npt; ++i) {
      int r, cc, j;
      ref_coord(s, t, i, &r, &cc);
      const int key = axis == REF_ROWS ? r : cc;
      for (j = 0; j < ns && k[j] != key; ++j) {
      }
      if (j == ns) k[ns] = key, c[ns] = 0, ++ns;
      a->list[((size_t)t * s.npt + j) * s.npt + c[j]++] = i;
    }
    if (a->nslot < 0) a->nslot = ns;
    if (ns != a->nslot) {
      fprintf(stderr, "ref: thread %d holds %d keys, thread 0 %d\n", t, ns, a->nslot);
      abort();
    }
    for (int j = 0; j < ns; ++j)
      a->key[t * ns + j] = k[j], a->cnt[t * ns + j] = c[j];
  }
  free(k);
  free(c);
  /* documented butterfly masks */
  if (s.layout != KBD_LAYOUT_ROW) {
    static const int mr[] = {1, 2}, mcl[] = {4, 8, 16};
    a->nmask = axis == REF_ROWS ? 2 : 3;
    memcpy(a->masks, axis == REF_ROWS ? mr : mcl, sizeof(int) * a->nmask);
  } else {
    const int cpr = s.C / s.V;
    if (axis == REF_ROWS) {
      int gw = cpr < s.S ? cpr : s.S;
      gw = gw < 32 ? gw : 32;
      for (int m = 1; m < gw; m *= 2)
        a->masks[a->nmask++] = m;
    } else if (cpr < 32) {
      for (int m = cpr; m < 32; m *= 2)
        a->masks[a->nmask++] = m;
    }
  }
  /* error-bound depth: per-thread tree + butterfly + tree over the warps holding a key */
  int n = s.npt / a->nslot, d = 0, w = 0;
  while ((1 << d) < n)
    ++d;
  for (int ws = 0; ws < s.S / 32; ++ws)
    for (int l = 0; l < 32; ++l)
      if (a->key[(ws * 32 + l) * a->nslot] == a->key[0]) {
        ++w;
        break;
      }
  int dw = 0;
  while ((1 << dw) < w)
    ++dw;
  a->depth = d + a->nmask + dw;
}

static inline void ref_axis_free(ref_axis *a) {
  free(a->key), free(a->cnt), free(a->list), free(a->part), free(a->final), free(a->seq), free(a->dsum), free(a->dabs);
}

/* In place pairwise tree, stride 1, 2, 4, ...: x[e] = x[e] op x[e + s]. */
static inline uint32_t ref_tree(int fl, int op, uint32_t *x, int n) {
  for (int s = 1; s < n; s *= 2)
    for (int e = 0; e + s < n; e += 2 * s)
      x[e] = ref_op(fl, op, x[e], x[e + s]);
  return x[0];
}

/* Model of the documented order for matrix X (R x C bits): final[key] as every thread must hold it. */
static inline void ref_axis_run(ref_axis *a, int fl, int op, const uint32_t *X) {
  const ref_shape s = a->s;
  const int ns = a->nslot, nw = s.S / 32;
  uint32_t *tmp = malloc(sizeof(uint32_t) * (size_t)(s.npt > 32 ? s.npt : 32));
  for (int t = 0; t < s.S; ++t) /* (1) per thread: pairwise tree over the slot's elements in element order */
    for (int k = 0; k < ns; ++k) {
      const int n = a->cnt[t * ns + k];
      for (int e = 0; e < n; ++e) {
        int r, c;
        ref_coord(s, t, a->list[((size_t)t * s.npt + k) * s.npt + e], &r, &c);
        tmp[e] = X[(size_t)r * s.C + c];
      }
      a->part[t * ns + k] = ref_tree(fl, op, tmp, n);
    }
  for (int w = 0; w < nw; ++w) /* (2) butterfly, masks ascending; partners must hold the same key */
    for (int k = 0; k < ns; ++k) {
      uint32_t v[32], y[32];
      for (int l = 0; l < 32; ++l)
        v[l] = a->part[(w * 32 + l) * ns + k];
      for (int m = 0; m < a->nmask; ++m) {
        for (int l = 0; l < 32; ++l) {
          const int pl = l ^ a->masks[m];
          if (a->key[(w * 32 + l) * ns + k] != a->key[(w * 32 + pl) * ns + k]) {
            fprintf(stderr, "ref: mask %d pairs lanes holding different keys\n", a->masks[m]);
            abort();
          }
          y[l] = ref_op(fl, op, v[l], v[pl]);
        }
        memcpy(v, y, sizeof v);
      }
      for (int l = 0; l < 32; ++l)
        a->part[(w * 32 + l) * ns + k] = v[l];
    }
  for (int key = 0; key < a->nkeys; ++key) { /* (3) pairwise tree over the warps holding the key, warp order */
    int n = 0;
    for (int w = 0; w < nw; ++w)
      for (int t = w * 32; t < w * 32 + 32; ++t) {
        int k;
        for (k = 0; k < ns && a->key[t * ns + k] != key; ++k) {
        }
        if (k < ns) {
          tmp[n++] = a->part[t * ns + k];
          break;
        }
      }
    a->final[key] = ref_tree(fl, op, tmp, n);
    /* order-free references: sequential fold in row-major order, and double sums */
    const int len = a->axis == REF_ROWS ? s.C : s.R;
    a->dsum[key] = a->dabs[key] = 0;
    for (int j = 0; j < len; ++j) {
      const uint32_t x = a->axis == REF_ROWS ? X[(size_t)key * s.C + j] : X[(size_t)j * s.C + key];
      a->seq[key] = j == 0 ? x : ref_op(fl, op, a->seq[key], x);
      if (fl) a->dsum[key] += ref_f(x), a->dabs[key] += fabs(ref_f(x));
    }
  }
  free(tmp);
}

#endif /* ROWRED_REF_H */
