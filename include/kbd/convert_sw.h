/* kbd/convert_sw.h - the bit-exact software conversions between the element types of kbd/types.h.
 *
 * Integer bit manipulation, bit-identical to the CUDA toolkit's host code (cuda_fp16.h, cuda_bf16.h,
 * cuda_fp8.h), which follows the PTX rounding and saturation rules. Pure KBD_HD math, no hardware: the CPU
 * twins of the conversion instructions (kbd/cpu/cvt.h) are built from these, every host compilation uses
 * them through kbd/convert.h, and a GPU test calls them on the device (kbd_cvt_sw_*) to compare with the
 * PTX path. Include kbd/convert.h rather than this file; it lives apart only so that cpu/cvt.h can reach it
 * through kbd/hw.h whichever kbd header comes first. Semantics and proofs: docs/types.md.
 */
#ifndef KBD_CONVERT_SW_H
#define KBD_CONVERT_SW_H

#include "types.h"

/* ---- bit casts -------------------------------------------------------------------------------- */

KBD_HD uint32_t kbd_cvt_f32_bits(float x) {
#if KBD_DEVICE_PASS
  return __float_as_uint(x);
#else
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
#endif
}

KBD_HD float kbd_cvt_bits_f32(uint32_t u) {
#if KBD_DEVICE_PASS
  return __uint_as_float(u);
#else
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/* Leading zeros of a non-zero 32-bit value. */
KBD_HD int kbd_cvt_clz32_(uint32_t u) {
#if KBD_DEVICE_PASS
  return __clz((int)u);
#else
  return __builtin_clz(u);
#endif
}

/* Round-to-nearest-even of `m >> s` for 1 <= s <= 31: the discarded bits are compared with half of
 * the kept LSB; an exact tie goes to the even quotient. A carry out of the mantissa correctly bumps
 * the exponent when the caller adds the result to a biased exponent field. */
KBD_HD uint32_t kbd_cvt_rne_shift_(uint32_t m, int s) {
  uint32_t q = m >> s;
  uint32_t rem = m & ((1u << s) - 1u);
  uint32_t half = 1u << (s - 1);
  return q + (uint32_t)(rem > half || (rem == half && (q & 1u)));
}

/* ---- software path (bit-exact reference, also the host implementation) ------------------------- */

KBD_HD kbd_f16 kbd_cvt_sw_f32_to_f16(float x) {
  uint32_t u = kbd_cvt_f32_bits(x);
  uint32_t a = u & 0x7fffffffu;
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  kbd_f16 r;
  if (a > 0x7f800000u) {
    /* The GPU returns the canonical NaN for every NaN input; cuda_fp16.h's host code does too. */
    r.bits = 0x7fffu;
  } else if (a >= 0x477ff000u) {
    /* 65520 = 65504 + half an ulp is the RNE tie between 65504 (odd mantissa) and 2^16; it and
     * everything above (inf included) rounds to inf. */
    r.bits = (uint16_t)(sign | 0x7c00u);
  } else if (a >= 0x38800000u) {
    /* Normal f16: rebias the exponent (127 -> 15) and drop 13 mantissa bits with RNE. */
    r.bits = (uint16_t)(sign | kbd_cvt_rne_shift_(a - 0x38000000u, 13));
  } else if (a > 0x33000000u) {
    /* Subnormal f16 (unit 2^-24): the integer significand (with its hidden bit) times 2^(e-150)
     * shifted to that unit; shift is 14..24. A round-up from the largest subnormal carries into
     * the smallest normal encoding, which is the correct result. */
    uint32_t e = a >> 23;
    r.bits = (uint16_t)(sign | kbd_cvt_rne_shift_((a & 0x7fffffu) | 0x800000u, (int)(126u - e)));
  } else {
    /* |x| <= 2^-25 = half the smallest subnormal: the tie rounds to even, i.e. to zero. */
    r.bits = sign;
  }
  return r;
}

KBD_HD float kbd_cvt_sw_f16_to_f32(kbd_f16 h) {
  uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
  uint32_t e = (h.bits >> 10) & 0x1fu;
  uint32_t m = h.bits & 0x3ffu;
  uint32_t u;
  if (e == 0x1fu) {
    u = m ? 0x7fffffffu : (sign | 0x7f800000u);
  } else if (e != 0) {
    u = sign | ((e + 112u) << 23) | (m << 13);
  } else if (m != 0) {
    /* Subnormal f16 m * 2^-24 is a normal f32: move the leading one to bit 10 (the hidden bit). */
    int lz = kbd_cvt_clz32_(m) - 21; /* 1..10 */
    u = sign | ((uint32_t)(113 - lz) << 23) | (((m << lz) & 0x3ffu) << 13);
  } else {
    u = sign;
  }
  return kbd_cvt_bits_f32(u);
}

KBD_HD kbd_bf16 kbd_cvt_sw_f32_to_bf16(float x) {
  uint32_t u = kbd_cvt_f32_bits(x);
  kbd_bf16 r;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    r.bits = 0x7fffu;
  } else {
    /* bf16 has the f32 exponent range, so RNE on the low 16 bits is the whole conversion:
     * subnormals stay subnormal, and a carry out of the largest finite value gives inf. */
    r.bits = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  return r;
}

KBD_HD float kbd_cvt_sw_bf16_to_f32(kbd_bf16 b) { return kbd_cvt_bits_f32((uint32_t)b.bits << 16); }

/* f32 -> fp8 with RNE and satfinite. mb: stored mantissa bits, bias: exponent bias,
 * maxcode: largest finite magnitude code (0x7e for e4m3, 0x7b for e5m2).
 * The rounding is done as if the format had unbounded exponent and no special codes, then the
 * magnitude is clamped to maxcode: RNE is monotonic, so this is exactly "round, and saturate what
 * rounds past the largest finite value" - what cvt.rn.satfinite and __NV_SATFINITE specify. */
KBD_HD uint8_t kbd_cvt_sw_f32_to_fp8_(float x, int mb, int bias, uint32_t maxcode) {
  uint32_t u = kbd_cvt_f32_bits(x);
  uint32_t a = u & 0x7fffffffu;
  uint32_t sign = (u >> 24) & 0x80u;
  uint32_t e = a >> 23;
  uint32_t mag;
  /* Biased f32 exponent of the fp8 minimum normal 2^(1-bias). */
  uint32_t emin = (uint32_t)(127 + 1 - bias);
  if (a > 0x7f800000u) {
    /* cuda_fp8.h canonicalises every NaN to 0x7f for both formats (sign dropped). */
    return 0x7fu;
  }
  if (e >= emin) {
    /* Normal range: rebias (the subtraction cannot underflow) and drop 23-mb bits; inf and huge
     * values give codes far above maxcode and are clamped below. */
    mag = kbd_cvt_rne_shift_(a - ((uint32_t)(127 - bias) << 23), 23 - mb);
  } else {
    /* Subnormal range, unit 2^(1-bias-mb): significand * 2^(e-150) in that unit is a right shift
     * by 151-bias-mb-e. From shift 25 on the value is below half the unit and rounds to zero
     * (f32 subnormals included); at shift 24 a tie at half the unit also goes to even zero. */
    uint32_t s = (uint32_t)(151 - bias - mb) - e;
    mag = s >= 25u ? 0u : kbd_cvt_rne_shift_((a & 0x7fffffu) | 0x800000u, (int)s);
  }
  if (mag > maxcode) {
    mag = maxcode;
  }
  return (uint8_t)(sign | mag);
}

KBD_HD kbd_e4m3 kbd_cvt_sw_f32_to_e4m3(float x) {
  kbd_e4m3 r;
  r.bits = kbd_cvt_sw_f32_to_fp8_(x, 3, 7, 0x7eu);
  return r;
}

KBD_HD kbd_e5m2 kbd_cvt_sw_f32_to_e5m2(float x) {
  kbd_e5m2 r;
  r.bits = kbd_cvt_sw_f32_to_fp8_(x, 2, 15, 0x7bu);
  return r;
}

/* e4m3 -> f16 (exact). The GPU has no fp8 -> f32 instruction; mirroring its f16 step keeps the NaN
 * result the same by construction. */
KBD_HD kbd_f16 kbd_cvt_sw_e4m3_to_f16(kbd_e4m3 v) {
  uint32_t sign = (uint32_t)(v.bits & 0x80u) << 8;
  int e = (v.bits >> 3) & 0xf;
  uint32_t m = v.bits & 0x7u;
  kbd_f16 r;
  if ((v.bits & 0x7fu) == 0x7fu) {
    /* e4m3 has no inf; S.1111.111 is its only NaN, and the conversion returns the f16 canonical NaN */
    r.bits = 0x7fffu;
  } else if (e == 0 && m == 0) {
    r.bits = (uint16_t)sign;
  } else {
    if (e == 0) {
      /* Subnormal m * 2^-9 is an f16 normal: normalise the 3-bit significand. */
      e = 1;
      while (!(m & 0x8u)) {
        m <<= 1;
        --e;
      }
      m &= 0x7u;
    }
    r.bits = (uint16_t)(sign | ((uint32_t)(e + 8) << 10) | (m << 7));
  }
  return r;
}

/* e5m2 -> f16 is the byte placed on top of an f16 (same exponent field), except that NaNs become
 * the canonical f16 NaN as on the GPU and in cuda_fp8.h. */
KBD_HD kbd_f16 kbd_cvt_sw_e5m2_to_f16(kbd_e5m2 v) {
  kbd_f16 r;
  r.bits = (uint16_t)((v.bits & 0x7fu) > 0x7cu ? 0x7fffu : (uint32_t)v.bits << 8);
  return r;
}

KBD_HD float kbd_cvt_sw_e4m3_to_f32(kbd_e4m3 v) { return kbd_cvt_sw_f16_to_f32(kbd_cvt_sw_e4m3_to_f16(v)); }
KBD_HD float kbd_cvt_sw_e5m2_to_f32(kbd_e5m2 v) { return kbd_cvt_sw_f16_to_f32(kbd_cvt_sw_e5m2_to_f16(v)); }

KBD_HD int32_t kbd_cvt_sw_f32_to_i32(float x) {
  uint32_t u = kbd_cvt_f32_bits(x);
  uint32_t a = u & 0x7fffffffu;
  uint32_t e = a >> 23;
  uint32_t q;
  if (a > 0x7f800000u) {
    return 0;
  }
  if (e >= 127u + 31u) {
    /* |x| >= 2^31 (inf included). -2^31 itself is representable and is INT32_MIN either way. */
    return (u >> 31) ? INT32_MIN : INT32_MAX;
  }
  if (e < 126u) {
    /* |x| < 0.5 */
    return 0;
  }
  if (e >= 150u) {
    q = ((a & 0x7fffffu) | 0x800000u) << (e - 150u); /* an integer already; < 2^31 */
  } else {
    q = kbd_cvt_rne_shift_((a & 0x7fffffu) | 0x800000u, (int)(150u - e)); /* shift 1..24 */
  }
  /* q <= 2^31 - 128, so the negation cannot overflow. */
  return (u >> 31) ? -(int32_t)q : (int32_t)q;
}

KBD_HD float kbd_cvt_sw_i32_to_f32(int32_t i) {
  uint32_t sign = i < 0 ? 0x80000000u : 0u;
  /* Magnitude in unsigned arithmetic so that INT32_MIN (2^31) needs no special case. */
  uint32_t m = i < 0 ? 0u - (uint32_t)i : (uint32_t)i;
  int p;
  uint32_t sig;
  if (m == 0) {
    return kbd_cvt_bits_f32(0);
  }
  p = 31 - kbd_cvt_clz32_(m); /* position of the leading one: the unbiased exponent */
  sig = p <= 23 ? m << (23 - p) : kbd_cvt_rne_shift_(m, p - 23);
  /* sig carries the hidden bit (2^23), which adds 1 to the exponent field: hence 126 + p. A round-up
   * to 2^24 likewise carries into the exponent and stays correct. */
  return kbd_cvt_bits_f32(sign | (((uint32_t)(126 + p) << 23) + sig));
}

#endif /* KBD_CONVERT_SW_H */
