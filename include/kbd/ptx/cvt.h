/* kbd/ptx/cvt.h - one-instruction inline-PTX wrappers for the element-type conversions.
 *
 * Only the nvcc device pass sees these (the host pass and the CPU build get an empty header); the
 * bit-exact software twins live in kbd/convert.h, which picks between the two. Each wrapper is one
 * PTX instruction, spelled in the comment above it. None uses .ftz: the conversions must keep
 * subnormals so that the device agrees bit for bit with the software path, and an explicit
 * instruction in inline asm is not touched by nvcc's -ftz=true / --use_fast_math.
 *
 * Packed forms (x2) put operand `hi` in the upper half of the result and `lo` in the lower half,
 * as PTX defines for `cvt ... d, a, b` (a -> upper, b -> lower).
 *
 * Minimum targets: cvt.rn.bf16.f32 sm_80 (PTX 7.0); the e4m3/e5m2 forms sm_89 (PTX 7.8). kbd builds
 * for sm_90a and sm_100a, so all of them are available; convert.h still falls back to software
 * below sm_89 so that the header compiles for any -arch.
 */
#ifndef KBD_PTX_CVT_H
#define KBD_PTX_CVT_H

#include "../config.h"

#if KBD_DEVICE_PASS

/* cvt.rn.f16.f32 d, a;   (f32 -> f16, round to nearest even, overflow -> inf) */
KBD_DEV uint16_t kbd_ptx_cvt_rn_f16_f32(float a) {
  uint16_t d;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

/* cvt.f32.f16 d, a;   (f16 -> f32, exact; no rounding modifier is allowed for a widening cvt) */
KBD_DEV float kbd_ptx_cvt_f32_f16(uint16_t a) {
  float d;
  asm("cvt.f32.f16 %0, %1;" : "=f"(d) : "h"(a));
  return d;
}

/* cvt.rn.bf16.f32 d, a;   (f32 -> bf16, round to nearest even, overflow -> inf; sm_80+) */
KBD_DEV uint16_t kbd_ptx_cvt_rn_bf16_f32(float a) {
  uint16_t d;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

/* mov.b32 d, {0, a};   (bf16 -> f32: the bf16 bits become the upper half of the f32.)
 * bf16 is the top half of an f32, so the widening is a move, not an arithmetic conversion. It is
 * used instead of cvt.f32.bf16 (sm_90+) because a move provably keeps NaN sign and payload exactly
 * as the software path (and the CUDA host code) does, whereas the NaN output of the cvt form is
 * not specified by the PTX ISA. */
KBD_DEV float kbd_ptx_mov_f32_bf16(uint16_t a) {
  float d;
  asm("mov.b32 %0, {0, %1};" : "=f"(d) : "h"(a));
  return d;
}

/* cvt.rn.satfinite.e4m3x2.f32 d, a, b;   (two f32 -> packed e4m3, RNE; |x| > 448 and +-inf give
 * +-448; NaN gives NaN. PTX requires .satfinite for this destination; sm_89+) */
KBD_DEV uint16_t kbd_ptx_cvt_rn_satfinite_e4m3x2_f32(float hi, float lo) {
  uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

/* cvt.rn.satfinite.e5m2x2.f32 d, a, b;   (two f32 -> packed e5m2, RNE; |x| >= 61440 and +-inf give
 * +-57344; NaN gives NaN; sm_89+) */
KBD_DEV uint16_t kbd_ptx_cvt_rn_satfinite_e5m2x2_f32(float hi, float lo) {
  uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

/* cvt.rn.f16x2.e4m3x2 d, a;   (packed e4m3 -> packed f16, exact: every e4m3 value is an f16 normal;
 * sm_89+. There is no direct fp8 -> f32 cvt, hence the f16 step.) */
KBD_DEV uint32_t kbd_ptx_cvt_rn_f16x2_e4m3x2(uint16_t a) {
  uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
}

/* cvt.rn.f16x2.e5m2x2 d, a;   (packed e5m2 -> packed f16, exact: e5m2 is the top byte of an f16;
 * sm_89+) */
KBD_DEV uint32_t kbd_ptx_cvt_rn_f16x2_e5m2x2(uint16_t a) {
  uint32_t d;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
}

/* cvt.rni.sat.s32.f32 d, a;   (f32 -> s32, round to nearest even integer, clamp to
 * [INT32_MIN, INT32_MAX], NaN -> 0; the semantics of __float2int_rn) */
KBD_DEV int32_t kbd_ptx_cvt_rni_sat_s32_f32(float a) {
  int32_t d;
  asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(d) : "f"(a));
  return d;
}

/* cvt.rn.f32.s32 d, a;   (s32 -> f32, round to nearest even: |a| > 2^24 may be inexact) */
KBD_DEV float kbd_ptx_cvt_rn_f32_s32(int32_t a) {
  float d;
  asm("cvt.rn.f32.s32 %0, %1;" : "=f"(d) : "r"(a));
  return d;
}

#endif /* KBD_DEVICE_PASS */

#endif /* KBD_PTX_CVT_H */
