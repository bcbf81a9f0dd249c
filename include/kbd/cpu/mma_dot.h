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
/* Are all n values finite? (x * 0 is +-0 for a finite x and NaN for an infinity or NaN, and a NaN stays in the sum.) */
static inline int kbd_cpu_mma_finite(const double *v, int n) {
  double z = 0;
  for (int i = 0; i < n; ++i)
    z += v[i] * 0.0;
  return z == 0;
}
/* The same sums, computing only what can differ from +0. A sum whose products are all +-0 is exactly +0 (the sum
 * starts at +0, and +0 + -0 = +0 when rounding to nearest), which is 0 in both f32 and s32 bits. The products of an
 * all-zero row of A (of an all-zero column of B) are all +-0 unless B (A) holds an infinity or NaN (x * 0 = NaN
 * then), so those rows (columns) are skipped only when the other operand is all finite, checked once per call.
 * Zero rows and columns are what TMA's out-of-bounds fill gives a tile past the matrix's edge: a GEMM of M = 1 (a
 * decode step) reads one live row of the 128 of A, so this makes the emulation's cost follow the real work. The
 * rows and columns computed are computed as the reference does (the same products, summed in the same k order),
 * so res is bit for bit the reference's (tests/mma/test_mma_dot_fast.c). */
static inline void kbd_cpu_mma_dot_fast(const kbd_cpu_mma_shape *s, const double *A, int rows, const double *bt,
                                        uint32_t *res) {
  const int kel = s->kel, n = s->n;
  const int skip_rows = kbd_cpu_mma_finite(bt, kel * n), skip_cols = kbd_cpu_mma_finite(A, rows * kel);
  int cols[256], nc = 0; /* the columns of B with a nonzero element (all of them when A is not all finite) */
  for (int c = 0; c < n; ++c) {
    int live = !skip_cols;
    for (int k = 0; k < kel && !live; ++k)
      live = bt[k * n + c] != 0;
    if (live) cols[nc++] = c;
  }
  double acc[256];
  for (int r = 0; r < rows; ++r) {
    const double *a = A + r * kel;
    uint32_t *out = res + r * n;
    int live = !skip_rows;
    for (int k = 0; k < kel && !live; ++k)
      live = a[k] != 0;
    if (!live || nc == 0) {
      memset(out, 0, sizeof(uint32_t) * (size_t)n);
      continue;
    }
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
      continue;
    }
    for (int j = 0; j < nc; ++j)
      acc[j] = 0;
    for (int k = 0; k < kel; ++k) {
      const double av = a[k], *b = bt + k * n;
      for (int j = 0; j < nc; ++j)
        acc[j] += av * b[cols[j]];
    }
    memset(out, 0, sizeof(uint32_t) * (size_t)n);
    for (int j = 0; j < nc; ++j)
      out[cols[j]] = kbd_cpu_mma_sum_bits(s->td, acc[j]);
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
