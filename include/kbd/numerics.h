/* kbd/numerics.h - the bits the GPU's f32 arithmetic gives where IEEE 754 leaves the choice open, as pure
 * functions, so that the CPU paths can give the same bits.
 *
 *   kbd_f32_canon_nan(x)      any NaN -> 0x7fffffff (KBD_F32_CANONICAL_NAN), every other value unchanged
 *   kbd_f32_arith_nan(r)      r was just produced by f32 arithmetic: the bits the GPU instruction gives
 *   kbd_f32_ftz(x)            a subnormal -> the zero of its sign, every other value unchanged
 *   kbd_f32_add_ftz(a, b)     what atom.add.f32 stores for old value a and operand b
 *
 * Sources:
 * - NaN: "The result of a single-precision floating-point operation involving one or more input NaNs is the
 *   quiet NaN of bit pattern 0x7fffffff" (CUDA C++ Programming Guide, Floating-Point Standard). For a NaN
 *   made from non-NaN operands (inf - inf, 0 * inf, 0 / 0, sqrt(-1)) the guide names no pattern; the
 *   toolkit's own NaN constant is the same one (CUDART_NAN_F, math_constants.h), and kbd assumes the
 *   hardware's too - tests/types/test_numerics_gpu.cu checks every case on a GPU. x86 returns 0xffc00000
 *   there and keeps (quietened) a NaN operand's payload, so host arithmetic alone cannot give these bits.
 * - FTZ: "atom.add.f32 rounds to nearest even and flushes subnormal inputs and results to sign-preserving
 *   zero" (PTX ISA, atom). The CUDA guide adds that global-memory f32 atomic adds always behave as
 *   FADD.F32.FTZ.RN whatever -ftz says; kbd's atomics are global (atom.global.add.f32).
 *
 * All of these are KBD_HD: one definition for the nvcc device pass and every host compilation. The tests are
 * tests/types/test_numerics.c.
 */
#ifndef KBD_NUMERICS_H
#define KBD_NUMERICS_H

#include "config.h"
#include "convert_sw.h" /* kbd_cvt_f32_bits / kbd_cvt_bits_f32: the one bit cast */

#define KBD_F32_CANONICAL_NAN 0x7fffffffu

/* NaN test on the bits, not x != x: -ffinite-math-only (part of -ffast-math) lets a compiler fold x != x
 * to false, and the user's flags must not change what the emulation computes. */
KBD_HD int kbd_f32_bits_isnan(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/* The bits of f32 NaNs differ by path and cannot be compared otherwise: one pattern for all of them. */
KBD_HD uint32_t kbd_f32_canon_nan_bits(uint32_t u) { return kbd_f32_bits_isnan(u) ? KBD_F32_CANONICAL_NAN : u; }
KBD_HD float kbd_f32_canon_nan(float x) { return kbd_cvt_bits_f32(kbd_f32_canon_nan_bits(kbd_cvt_f32_bits(x))); }

/* For the result of one f32 add, sub, mul, div, fma, sqrt (or a math function built from them). In the nvcc
 * device pass the instruction that produced r already gave the canonical NaN, so this is r and costs
 * nothing; everywhere else (CPU emulation, host code) it canonicalises. Not for values that are only
 * moved (loads, copies, kbd_fill): those keep a NaN's payload on the GPU too. */
KBD_HD float kbd_f32_arith_nan(float r) {
#if KBD_DEVICE_PASS
  return r;
#else
  return kbd_f32_canon_nan(r);
#endif
}
KBD_HD uint32_t kbd_f32_arith_nan_bits(uint32_t u) {
#if KBD_DEVICE_PASS
  return u;
#else
  return kbd_f32_canon_nan_bits(u);
#endif
}

/* Exponent field 0 and a non-zero mantissa: keep only the sign. Zeros map to themselves. */
KBD_HD float kbd_f32_ftz(float x) {
  const uint32_t u = kbd_cvt_f32_bits(x);
  return (u & 0x7f800000u) == 0 ? kbd_cvt_bits_f32(u & 0x80000000u) : x;
}

/* atom.add.f32: flush both operands, add with round-to-nearest-even, flush the result, canonical NaN.
 * The flushed operands are zeros or normals, so they are multiples of 2^-149 and any sum below 2^-125 in
 * magnitude is exact: the result is subnormal exactly when the true sum is, and flushing after the host's
 * own rounding is flushing the GPU's result (no tininess-before/after-rounding question). The host must run
 * in round-to-nearest (the CPU machine requires it); host DAZ/FTZ modes do not change the outcome, since
 * operands and result are flushed here anyway. Zero signs follow IEEE RNE: x + (-x) = +0, -0 + -0 = -0. */
KBD_HD float kbd_f32_add_ftz(float a, float b) {
  const float s = kbd_f32_ftz(a) + kbd_f32_ftz(b);
  return kbd_f32_ftz(kbd_f32_canon_nan(s));
}

#endif /* KBD_NUMERICS_H */
