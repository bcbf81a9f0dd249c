/* kbd/exp2_poly.h - 2^x on the FMA pipe: FlashAttention-4's exponential (docs/attention.md, "FA4's exponential").
 *
 *   kbd_exp2_poly_ftz(x)          2^x for x <= 127 (the softmax feeds x <= its slack, at most 15): relative error
 *                                 <= KBD_EXP2_POLY_REL_ERR against exp2 in double; a result below 2^-126 is +0 (like
 *                                 ex2.approx.ftz: x < -126 gives 0), -inf gives 0, NaN gives NaN, 0 and -0 give 1
 *                                 exactly. x > 127 is outside the domain (the result is not 2^x there)
 *   kbd_exp2_poly_ftz_x2(y, x)    y[k] = kbd_exp2_poly_ftz(x[k]), k = 0, 1, bit for bit, in packed f32x2 math where
 *                                 the target has it (kbd/f32x2.h: half the f32 instructions on sm_100a)
 *   KBD_EXP2_POLY_REL_ERR         2^-22: the bound, ex2.approx.f32's (PTX ISA: ex2); measured 2^-22.47 over every
 *                                 float of [-1, -2^-6] and [2^-6, 1], the flush boundary and a sweep of [-127, 16]
 *                                 (tests/softmax/test_exp2_poly.c)
 *
 * Why: an attention softmax evaluates one exponential per score, and sm_100a's MUFU unit does 16 per clock per SM
 * (8 cycles per warp instruction per scheduler), as slow as the tensor cores' S = QK^T and O += PV of the same block
 * at head_dim 128. The FMA pipe does 128 lanes per clock: evaluating a share of the exponentials there takes MUFU
 * time below MMA time. The method (Cody-Waite style, the magic-constant rounding): x = j + f with j = rn(x) an integer
 * and f in [-1/2, 1/2] from one add of 1.5 * 2^23 + 127 (the sum's last bits are then j + 127: no float-to-int
 * conversion, a quarter-rate instruction like MUFU's), 2^f by a degree-5 polynomial (Horner, 5 FFMA; its
 * constant term is exactly 1, so 2^0 = 1 exactly and 2^f >= 1 for f >= 0), and 2^j as the float whose exponent field
 * is j + 127: the sum's bits shifted left by 23, one multiply. Degree 5 is ex2.approx's accuracy (2^-22): degree 4
 * (2^-18.4) would be enough next to a 16-bit P, but the row sums are f32 and one FFMA per element is cheap, so a
 * polynomial element is as exact as a MUFU element and the two can be mixed in one row freely.
 * Flush: x < -126 is replaced by -127, whose 2^j field is 0, so the result is +0 (a j = -126 with f < 0 would give a
 * subnormal). The same C code on the GPU and the CPU: fmaf is one correctly rounded FFMA on both and every other step
 * is exact or one rounded add or multiply, so the CPU machine computes the GPU's bits (no twin needed).
 * Coefficients: a relative-error minimax fit of (2^f - 1) / f on [-1/2, 1/2] (iteratively reweighted least squares),
 * rounded to f32 and checked with the f32 evaluation, not the fit, by the test.
 */
#ifndef KBD_EXP2_POLY_H
#define KBD_EXP2_POLY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "config.h"

#define KBD_EXP2_POLY_REL_ERR 2.384185791015625e-07 /* 2^-22 */

/* the rounding constant: 1.5 * 2^23 (x + it lands in [2^23, 2^24), where the float spacing is 1) plus the exponent
 * bias 127, so the low bits of x + it are j + 127 */
#define KBD_EXP2_POLY_ROUND_ 12583039.0f

KBD_HD uint32_t kbd_exp2_poly_bits_(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
KBD_HD float kbd_exp2_poly_float_(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
/* 2^f for f in [-1/2, 1/2], relative error < 2^-22.4 in f32 evaluation */
KBD_HD float kbd_exp2_poly_horner_(float f) {
  float p = fmaf(0.00132647343f, f, 0.00967151579f);
  p = fmaf(p, f, 0.0555073358f);
  p = fmaf(p, f, 0.240222424f);
  p = fmaf(p, f, 0.693147004f);
  return fmaf(p, f, 1.0f);
}

KBD_HD float kbd_exp2_poly_ftz(float x) {
  const float xc = x < -126.0f ? -127.0f : x; /* NaN compares false and stays NaN */
  const float t = xc + KBD_EXP2_POLY_ROUND_;
  const float j = t - KBD_EXP2_POLY_ROUND_;
  const float f = fmaf(j, -1.0f, xc); /* xc - j, exact; written as the packed form computes it */
  const float p = kbd_exp2_poly_horner_(f);
  return p * kbd_exp2_poly_float_(kbd_exp2_poly_bits_(t) << 23);
}

#if KBD_MODE_CPU || KBD_MODE_CUDA

#include "f32x2.h"

KBD_HD void kbd_exp2_poly_ftz_x2(float y[2], const float x[2]) {
  const float round2[2] = {KBD_EXP2_POLY_ROUND_, KBD_EXP2_POLY_ROUND_};
  const float nround2[2] = {-KBD_EXP2_POLY_ROUND_, -KBD_EXP2_POLY_ROUND_};
  const float neg1[2] = {-1.0f, -1.0f};
  const float xc[2] = {x[0] < -126.0f ? -127.0f : x[0], x[1] < -126.0f ? -127.0f : x[1]};
  float t[2], j[2], f[2], p[2], s[2];
  kbd_f32x2_add_any_(t, xc, round2);
  kbd_f32x2_add_any_(j, t, nround2);
  kbd_f32x2_fma_any_(f, j, neg1, xc);
  {
    const float c5[2] = {0.00132647343f, 0.00132647343f}, c4[2] = {0.00967151579f, 0.00967151579f};
    const float c3[2] = {0.0555073358f, 0.0555073358f}, c2[2] = {0.240222424f, 0.240222424f};
    const float c1[2] = {0.693147004f, 0.693147004f}, c0[2] = {1.0f, 1.0f};
    kbd_f32x2_fma_any_(p, c5, f, c4);
    kbd_f32x2_fma_any_(p, p, f, c3);
    kbd_f32x2_fma_any_(p, p, f, c2);
    kbd_f32x2_fma_any_(p, p, f, c1);
    kbd_f32x2_fma_any_(p, p, f, c0);
  }
  s[0] = kbd_exp2_poly_float_(kbd_exp2_poly_bits_(t[0]) << 23);
  s[1] = kbd_exp2_poly_float_(kbd_exp2_poly_bits_(t[1]) << 23);
  kbd_f32x2_mul_any_(y, p, s);
}

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_EXP2_POLY_H */
