/* kbd/cpu/mma_dot.h - the arithmetic of an emulated MMA (docs/design/mma.md "Numeric contract"; cpu/mma.h has
 * the map): the K-step sums of decoded operands, rounded once to f32 (8-bit integers: exact, wrapped to s32),
 * and their accumulation into D.
 */
#ifndef KBD_CPU_MMA_DOT_H
#define KBD_CPU_MMA_DOT_H

#include "mma_operand.h"

#if KBD_MODE_CPU

/* res[r * n + c] = the K-step sum of A row r and B row c, rounded once (f32), or wrapped (s32). Each sum runs
 * over k in order; the loop over c inside keeps that order per element and lets the compiler vectorise across
 * columns (bt: B transposed, scratch of kel x n). */
static inline void kbd_cpu_mma_transpose(const kbd_cpu_mma_shape *s, const double *B, double *bt) {
  const int kel = s->kel, n = s->n;
  for (int c = 0; c < n; ++c)
    for (int k = 0; k < kel; ++k)
      bt[k * n + c] = B[c * kel + k];
}
/* A K-step sum (double, exact for every kind: its products are exact and it is rounded once) as D's input bits. A NaN
 * sum becomes the canonical NaN 0x7FFFFFFF: which NaN operand's payload an x86 add keeps depends on the operand order
 * the host compiler picked for that copy of the loop (two inlined copies of one loop disagreed), so the payload was
 * never part of the emulation's contract. */
static inline uint32_t kbd_cpu_mma_sum_bits(int td, double sum) {
  if (td == KBD_MMA_S32) return (uint32_t)(int64_t)sum; /* |sum| < 2^21, exact */
  return sum != sum ? 0x7FFFFFFFu : kbd_cvt_f32_bits((float)sum);
}
/* The reference: every row times every column, in full. */
static inline void kbd_cpu_mma_dot_ref(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
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
    for (int c = 0; c < n; ++c)
      res[r * n + c] = kbd_cpu_mma_sum_bits(s->td, acc[c]);
  }
}
/* Are all n values finite (exponent bits not all ones)? A bit test per value that the compiler vectorises; the sum
 * of v[i] * 0 it replaces (NaN iff a value is an infinity or NaN) was one dependent add per value. */
static inline int kbd_cpu_mma_finite(const double *v, int n) {
  const uint64_t e = 0x7FF0000000000000ull;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t u;
    memcpy(&u, v + i, sizeof u);
    bad |= (u & e) == e;
  }
  return !bad;
}
/* The same sums, computing only what can differ from +0. A sum whose products are all +-0 is exactly +0 (the sum
 * starts at +0, and +0 + -0 = +0 when rounding to nearest), which is 0 in both f32 and s32 bits. The products of an
 * all-zero row of A (of an all-zero column of B) are all +-0 unless B (A) holds an infinity or NaN (x * 0 = NaN
 * then), so those rows (columns) are skipped only when the other operand is all finite, checked once per call.
 * Zero rows and columns are what TMA's out-of-bounds fill gives a tile past the matrix's edge: a GEMM of M = 1 (a
 * decode step) reads one live row of the 128 of A, so this makes the emulation's cost follow the real work. The
 * rows and columns computed are computed as the reference does (the same products, summed in the same k order),
 * so res is bit for bit the reference's (tests/mma/test_mma_dot_fast.c). */
typedef struct kbd_cpu_mma_live {
  int skip_rows; /* B is all finite: a zero row of A gives zero sums */
  int nc;        /* the columns of B with a nonzero element (all of them when A is not all finite) */
  int cols[256];
} kbd_cpu_mma_live;
static inline void kbd_cpu_mma_live_of(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
                                       kbd_cpu_mma_live *L) {
  const int kel = s->kel, n = s->n;
  const int skip_cols = kbd_cpu_mma_finite(A, rows * kel);
  L->skip_rows = kbd_cpu_mma_finite(bt, kel * n);
  L->nc = 0;
  for (int c = 0; c < n; ++c) {
    int live = !skip_cols;
    for (int k = 0; k < kel && !live; ++k)
      live = bt[k * n + c] != 0;
    if (live) L->cols[L->nc++] = c;
  }
}
/* Can row a of A have a sum other than +0? */
static inline int kbd_cpu_mma_row_live(const kbd_cpu_mma_shape *s, const double *a, const kbd_cpu_mma_live *L) {
  int live = !L->skip_rows;
  for (int k = 0; k < s->kel && !live; ++k)
    live = a[k] != 0;
  return live && L->nc > 0;
}
/* Row a's n sums into out (a live row). */
static inline void kbd_cpu_mma_dot_row(const kbd_cpu_mma_shape *s, const double *a, const double *bt,
                                       const kbd_cpu_mma_live *L, uint32_t *out) {
  const int kel = s->kel, n = s->n, nc = L->nc;
  double acc[256];
  if (nc == n) { /* the contiguous loop, as the reference */
    for (int c = 0; c < n; ++c)
      acc[c] = 0;
    for (int k = 0; k < kel; ++k) {
      const double av = a[k], *b = bt + k * n;
      for (int c = 0; c < n; ++c)
        acc[c] += av * b[c];
    }
    for (int c = 0; c < n; ++c)
      out[c] = kbd_cpu_mma_sum_bits(s->td, acc[c]);
    return;
  }
  for (int j = 0; j < nc; ++j)
    acc[j] = 0;
  for (int k = 0; k < kel; ++k) {
    const double av = a[k], *b = bt + k * n;
    for (int j = 0; j < nc; ++j)
      acc[j] += av * b[L->cols[j]];
  }
  memset(out, 0, sizeof(uint32_t) * (size_t)n);
  for (int j = 0; j < nc; ++j)
    out[L->cols[j]] = kbd_cpu_mma_sum_bits(s->td, acc[j]);
}
static inline void kbd_cpu_mma_dot_fast(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
                                        uint32_t *res) {
  kbd_cpu_mma_live L;
  kbd_cpu_mma_live_of(s, A, rows, bt, &L);
  for (int r = 0; r < rows; ++r) {
    const double *a = A + r * s->kel;
    uint32_t *out = res + r * s->n;
    if (kbd_cpu_mma_row_live(s, a, &L))
      kbd_cpu_mma_dot_row(s, a, bt, &L, out);
    else
      memset(out, 0, sizeof(uint32_t) * (size_t)s->n);
  }
}
/* The machine's K-step sums: the fast path, or with KBD_CPU_MMA_REFERENCE defined the reference (for comparisons). */
static inline void kbd_cpu_mma_dot_t(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
                                     uint32_t *res) {
#ifdef KBD_CPU_MMA_REFERENCE
  kbd_cpu_mma_dot_ref(s, A, rows, bt, res);
#else
  kbd_cpu_mma_dot_fast(s, A, rows, bt, res);
#endif
}
static inline void kbd_cpu_mma_dot(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *B, double *bt,
                                   uint32_t *res) {
  kbd_cpu_mma_transpose(s, B, bt);
  kbd_cpu_mma_dot_t(s, A, rows, bt, res);
}
/* The same sums in a row-sparse block (a tcgen05.mma's pending record, cpu/mma_umma.h): rows words of headers, 0
 * for a row whose sums are all +0 (a row kbd_cpu_mma_dot_fast skips) or 1 + the row's index among the stored rows,
 * whose n sums follow the headers. A decode step's 256 x 256 MMA stores the headers and 1 row (2 KiB instead of
 * 256 KiB, written here and read again when D lands: the fill of the zero rows and that traffic go). With
 * KBD_CPU_MMA_REFERENCE every row is stored, computed by the reference. Returns the malloc'd block (free()). */
static inline uint32_t *kbd_cpu_mma_dot_rows(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *B,
                                             double *bt) {
  const int kel = s->kel, n = s->n;
  kbd_cpu_mma_transpose(s, B, bt);
  int live = rows;
#ifndef KBD_CPU_MMA_REFERENCE
  kbd_cpu_mma_live L;
  kbd_cpu_mma_live_of(s, A, rows, bt, &L);
  live = 0;
  for (int r = 0; r < rows; ++r)
    live += kbd_cpu_mma_row_live(s, A + r * kel, &L);
#endif
  uint32_t *blk = (uint32_t *)malloc(sizeof(uint32_t) * ((size_t)rows + (size_t)live * (size_t)n));
  if (!blk) {
    fprintf(stderr, "kbd: out of host memory (MMA emulation)\n");
    abort();
  }
  uint32_t *out = blk + rows;
  uint32_t stored = 0;
  for (int r = 0; r < rows; ++r) {
    const double *a = A + r * kel;
#ifdef KBD_CPU_MMA_REFERENCE
    kbd_cpu_mma_dot_ref(s, a, 1, bt, out);
#else
    if (!kbd_cpu_mma_row_live(s, a, &L)) {
      blk[r] = 0;
      continue;
    }
    kbd_cpu_mma_dot_row(s, a, bt, &L, out);
#endif
    blk[r] = ++stored;
    out += n;
  }
  return blk;
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

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_MMA_DOT_H */
