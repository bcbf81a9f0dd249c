/* kbd/ptx/cvt.h - element-type conversions, one PTX instruction each (GPU twin of cpu/cvt.h).
 *
 * The nvcc device pass only (kbd/hw.h): conversions are KBD_HD, so every host compilation - the CPU
 * machine, nvcc's host pass, a plain C host file - takes the bit-exact software twins of cpu/cvt.h.
 * kbd/convert.h builds the public conversions from these. None uses .ftz: the conversions keep
 * subnormals so that the device agrees bit for bit with the software path, and an explicit instruction
 * in inline asm is not touched by nvcc's -ftz=true / --use_fast_math. No call site parameter: a
 * conversion cannot fail, and neither twin has anything to report.
 *
 * Packed forms (x2) put operand `hi` in the upper half of the result and `lo` in the lower half, as PTX
 * defines for `cvt ... d, a, b` (a -> upper, b -> lower).
 *
 * Arch: kbd builds for sm_90a and sm_100a, which have every form here. Below sm_80 (bf16) / sm_89 (fp8)
 * the twin computes the same bits with the software conversion (kbd/convert_sw.h) instead, so that the
 * header compiles for any -arch; the result never differs, only the cost.
 */
#ifndef KBD_PTX_CVT_H
#define KBD_PTX_CVT_H

#include "../config.h"
#include "../convert_sw.h"

#if KBD_DEVICE_PASS

/* cvt.rn.f16.f32 d, a;     PTX ISA 1.0, all targets - f32 -> f16, RNE, overflow -> inf */
KBD_DEV uint16_t kbd_hw_cvt_rn_f16_f32(float a) {
  uint16_t d;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

/* cvt.f32.f16 d, a;     PTX ISA 1.0, all targets - f16 -> f32, exact (a widening cvt takes no rounding
 * modifier) */
KBD_DEV float kbd_hw_cvt_f32_f16(uint16_t a) {
  float d;
  asm("cvt.f32.f16 %0, %1;" : "=f"(d) : "h"(a));
  return d;
}

/* cvt.rn.bf16.f32 d, a;     PTX ISA 7.0, sm_80 - f32 -> bf16, RNE, overflow -> inf */
KBD_DEV uint16_t kbd_hw_cvt_rn_bf16_f32(float a) {
#if __CUDA_ARCH__ >= 800
  uint16_t d;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
#else
  return kbd_cvt_sw_f32_to_bf16(a).bits;
#endif
}

/* cvt.rn.bf16x2.f32 d, a, b;     PTX ISA 7.0, sm_80 - two f32 -> packed bf16 (hi upper, lo lower), RNE, overflow
 * -> inf: one instruction (F2FP) where two cvt.rn.bf16.f32 and a pack are three, and one 32-bit result register
 * where those hold two 16-bit values until the pack (a softmax packing 128 probabilities into P keeps 64 registers
 * fewer live). The halves are the bits kbd_hw_cvt_rn_bf16_f32 gives each. */
KBD_DEV uint32_t kbd_hw_cvt_rn_bf16x2_f32(float hi, float lo) {
#if __CUDA_ARCH__ >= 800
  uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return (uint32_t)kbd_cvt_sw_f32_to_bf16(hi).bits << 16 | kbd_cvt_sw_f32_to_bf16(lo).bits;
#endif
}

/* cvt.rn.f16x2.f32 d, a, b;     PTX ISA 7.0, sm_80 - two f32 -> packed f16 (hi upper, lo lower), RNE, overflow ->
 * inf; the halves are the bits kbd_hw_cvt_rn_f16_f32 gives each */
KBD_DEV uint32_t kbd_hw_cvt_rn_f16x2_f32(float hi, float lo) {
#if __CUDA_ARCH__ >= 800
  uint32_t d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return (uint32_t)kbd_cvt_sw_f32_to_f16(hi).bits << 16 | kbd_cvt_sw_f32_to_f16(lo).bits;
#endif
}

/* mov.b32 d, {0, a};     PTX ISA 1.0, all targets - bf16 -> f32: the bf16 bits become the upper half.
 * bf16 is the top half of an f32, so the widening is a move, not an arithmetic conversion. It is used
 * instead of cvt.f32.bf16 (sm_90) because a move provably keeps NaN sign and payload exactly as the
 * software path (and the CUDA host code) does, whereas the NaN output of the cvt form is not specified
 * by the PTX ISA. */
KBD_DEV float kbd_hw_cvt_f32_bf16(uint16_t a) {
  float d;
  asm("mov.b32 %0, {0, %1};" : "=f"(d) : "h"(a));
  return d;
}

/* cvt.rn.satfinite.e4m3x2.f32 d, a, b;     PTX ISA 7.8, sm_89 - two f32 -> packed e4m3, RNE; |x| > 448
 * and +-inf give +-448; NaN gives NaN (PTX requires .satfinite for this destination) */
KBD_DEV uint16_t kbd_hw_cvt_rn_satfinite_e4m3x2_f32(float hi, float lo) {
#if __CUDA_ARCH__ >= 890
  uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return (uint16_t)((uint32_t)kbd_cvt_sw_f32_to_e4m3(hi).bits << 8 | kbd_cvt_sw_f32_to_e4m3(lo).bits);
#endif
}

/* cvt.rn.satfinite.e5m2x2.f32 d, a, b;     PTX ISA 7.8, sm_89 - two f32 -> packed e5m2, RNE;
 * |x| >= 61440 and +-inf give +-57344; NaN gives NaN */
KBD_DEV uint16_t kbd_hw_cvt_rn_satfinite_e5m2x2_f32(float hi, float lo) {
#if __CUDA_ARCH__ >= 890
  uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return (uint16_t)((uint32_t)kbd_cvt_sw_f32_to_e5m2(hi).bits << 8 | kbd_cvt_sw_f32_to_e5m2(lo).bits);
#endif
}

/* cvt.rn.f16x2.e4m3x2 d, a;     PTX ISA 7.8, sm_89 - packed e4m3 -> packed f16, exact: every e4m3 value
 * is an f16 normal. There is no direct fp8 -> f32 cvt, hence the f16 step. */
KBD_DEV uint32_t kbd_hw_cvt_rn_f16x2_e4m3x2(uint16_t a) {
#if __CUDA_ARCH__ >= 890
  uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
#else
  kbd_e4m3 h, l;
  h.bits = (uint8_t)(a >> 8);
  l.bits = (uint8_t)a;
  return (uint32_t)kbd_cvt_sw_e4m3_to_f16(h).bits << 16 | kbd_cvt_sw_e4m3_to_f16(l).bits;
#endif
}

/* cvt.rn.f16x2.e5m2x2 d, a;     PTX ISA 7.8, sm_89 - packed e5m2 -> packed f16, exact: e5m2 is the top
 * byte of an f16 */
KBD_DEV uint32_t kbd_hw_cvt_rn_f16x2_e5m2x2(uint16_t a) {
#if __CUDA_ARCH__ >= 890
  uint32_t d;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
#else
  kbd_e5m2 h, l;
  h.bits = (uint8_t)(a >> 8);
  l.bits = (uint8_t)a;
  return (uint32_t)kbd_cvt_sw_e5m2_to_f16(h).bits << 16 | kbd_cvt_sw_e5m2_to_f16(l).bits;
#endif
}

/* cvt.rni.sat.s32.f32 d, a;     PTX ISA 1.0, all targets - f32 -> s32, RNE to an integer, clamped to
 * [INT32_MIN, INT32_MAX], NaN -> 0 (the semantics of __float2int_rn) */
KBD_DEV int32_t kbd_hw_cvt_rni_sat_s32_f32(float a) {
  int32_t d;
  asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(d) : "f"(a));
  return d;
}

/* cvt.rn.f32.s32 d, a;     PTX ISA 1.0, all targets - s32 -> f32, RNE: |a| > 2^24 may be inexact */
KBD_DEV float kbd_hw_cvt_rn_f32_s32(int32_t a) {
  float d;
  asm("cvt.rn.f32.s32 %0, %1;" : "=f"(d) : "r"(a));
  return d;
}

#endif /* KBD_DEVICE_PASS */
#endif /* KBD_PTX_CVT_H */
