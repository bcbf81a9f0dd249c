/* kbd/convert.h - exact conversions between the element types of kbd/types.h.
 *
 * Every conversion has ONE definition (KBD_HD) used by GPU kernels and by the CPU emulator, built from
 * the kbd_hw_cvt_* twins of kbd/hw.h:
 *   nvcc device pass   one inline-PTX instruction per step (kbd/ptx/cvt.h)
 *   everything else    integer bit manipulation (kbd/cpu/cvt.h over kbd/convert_sw.h), bit-identical to
 *                      the CUDA toolkit's host code (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h), which follows
 *                      the PTX rounding and saturation rules (the GPU's NaN bit patterns are an open
 *                      point: docs/types.md).
 * The software path is also callable directly as kbd_cvt_sw_* (kbd/convert_sw.h, included here) so that
 * a GPU test can compare the two on the device. Semantics, NaN patterns and the proof (exhaustive
 * tests against the toolkit headers) are in docs/types.md.
 *
 * Summary (x is an f32):
 *   f16/bf16 <- x    RNE, overflow -> +-inf, NaN -> 0x7fff (sign and payload dropped)
 *   e4m3 <- x        RNE, satfinite: |x| > 448 (inf included) -> +-448, NaN -> 0x7f
 *   e5m2 <- x        RNE, satfinite: |x| >= 61440 (inf included) -> +-57344, NaN -> 0x7f
 *   x <- f16/e4m3/e5m2   exact, NaN -> 0x7fffffff
 *   x <- bf16        exact, NaN keeps sign and payload (it is a bit move)
 *   i32 <- x         RNE to integer, saturating, NaN -> 0 (__float2int_rn)
 *   x <- i32         RNE (__int2float_rn)
 *   s8/u8 <- x       RNE to integer, saturating to -128..127 / 0..255, NaN -> 0 (cvt.rni.sat.s8/u8.f32)
 *   x <- s8/u8       exact
 * Between the integer types: widening is exact, narrowing saturates (cvt.sat.s8.s32), never wraps.
 * Subnormals are kept everywhere (no flush to zero) in both directions.
 */
#ifndef KBD_CONVERT_H
#define KBD_CONVERT_H

#include "convert_sw.h"
#include "hw.h"
#include "types.h"

/* ---- public conversions ----------------------------------------------------------------------
 * Built from the conversion instructions kbd/hw.h provides (ptx/cvt.h in the nvcc device pass, the
 * software twins of cpu/cvt.h everywhere else), the same composition on both sides. */

KBD_HD float kbd_f16_to_f32(kbd_f16 h) { return kbd_hw_cvt_f32_f16(h.bits); }

KBD_HD kbd_f16 kbd_f32_to_f16(float x) {
  kbd_f16 r;
  r.bits = kbd_hw_cvt_rn_f16_f32(x);
  return r;
}

KBD_HD float kbd_bf16_to_f32(kbd_bf16 b) { return kbd_hw_cvt_f32_bf16(b.bits); }

KBD_HD kbd_bf16 kbd_f32_to_bf16(float x) {
  kbd_bf16 r;
  r.bits = kbd_hw_cvt_rn_bf16_f32(x);
  return r;
}

/* Two f32 -> two adjacent bf16 / f16 (d[0] from lo, d[1] from hi), each exactly the bits kbd_f32_to_bf16 /
 * kbd_f32_to_f16 give it: ONE packed cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32 (SASS F2FP.PACK_AB), where two scalar
 * conversions are two F2F and a PRMT to put the halves into the 32-bit register an MMA fragment or a store takes.
 * The packed cvt rounds each half on its own, to nearest even, as the scalar cvt.rn does (PTX ISA, cvt: "for .f16x2
 * and .bf16x2 ... each of the inputs is converted to the destination format"): same bits, one instruction. The
 * 32-bit result is copied to d whole (kbd's targets are little-endian: d[0] gets the low half), so a register tile
 * holds the pair as one 32-bit value and a loop that carries P to the next iteration's MMA keeps it in that one
 * register. Written as two 16-bit halves, the pair crossed the back edge as two values and was packed again (two
 * LOP3 per pair: the compiler does not fold the split across the loop's phi); the copy is a constant-offset
 * memcpy inside an array that is kept in registers (no local memory, 0 spill bytes). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define KBD__CVT2_STORE(d, w) ((d)[0].bits = (uint16_t)(w), (d)[1].bits = (uint16_t)((w) >> 16))
#else
#define KBD__CVT2_STORE(d, w) __builtin_memcpy((d), &(w), 4)
#endif
KBD_HD void kbd_f32x2_to_bf16x2(kbd_bf16 *d, float lo, float hi) {
  const uint32_t w = kbd_hw_cvt_rn_bf16x2_f32(hi, lo);
  KBD__CVT2_STORE(d, w);
}

KBD_HD void kbd_f32x2_to_f16x2(kbd_f16 *d, float lo, float hi) {
  const uint32_t w = kbd_hw_cvt_rn_f16x2_f32(hi, lo);
  KBD__CVT2_STORE(d, w);
}

/* fp8 -> f32: the packed fp8 -> f16x2 conversion (low half), then f16 -> f32 (no direct fp8 -> f32 cvt). */
KBD_HD float kbd_e4m3_to_f32(kbd_e4m3 v) { return kbd_hw_cvt_f32_f16((uint16_t)kbd_hw_cvt_rn_f16x2_e4m3x2(v.bits)); }

/* f32 -> fp8: the low byte of the packed conversion of (0, x). */
KBD_HD kbd_e4m3 kbd_f32_to_e4m3(float x) {
  kbd_e4m3 r;
  r.bits = (uint8_t)kbd_hw_cvt_rn_satfinite_e4m3x2_f32(0.0f, x);
  return r;
}

KBD_HD float kbd_e5m2_to_f32(kbd_e5m2 v) { return kbd_hw_cvt_f32_f16((uint16_t)kbd_hw_cvt_rn_f16x2_e5m2x2(v.bits)); }

KBD_HD kbd_e5m2 kbd_f32_to_e5m2(float x) {
  kbd_e5m2 r;
  r.bits = (uint8_t)kbd_hw_cvt_rn_satfinite_e5m2x2_f32(0.0f, x);
  return r;
}

KBD_HD int32_t kbd_f32_to_i32(float x) { return kbd_hw_cvt_rni_sat_s32_f32(x); }

KBD_HD float kbd_i32_to_f32(int32_t i) { return kbd_hw_cvt_rn_f32_s32(i); }

/* 8-bit integers: the saturating narrowing of an i32 (f32 -> i32 rounds first: clamping an integer to an
 * integer range after RNE is the same as cvt.rni.sat.s8.f32, which rounds then saturates). */
KBD_HD kbd_s8 kbd_i32_to_s8(int32_t i) { return (kbd_s8)(i < -128 ? -128 : i > 127 ? 127 : i); }
KBD_HD kbd_u8 kbd_i32_to_u8(int32_t i) { return (kbd_u8)(i < 0 ? 0 : i > 255 ? 255 : i); }
KBD_HD kbd_s8 kbd_f32_to_s8(float x) { return kbd_i32_to_s8(kbd_f32_to_i32(x)); }
KBD_HD kbd_u8 kbd_f32_to_u8(float x) { return kbd_i32_to_u8(kbd_f32_to_i32(x)); }

/* ---- generic access by dtype id ----------------------------------------------------------------
 * `dt` is meant to be a compile-time constant (a KBD_DT_* id from a tile macro): after inlining the
 * switch folds to one typed load/store plus one conversion. `p` must point to an object of the
 * storage type kbd_<dt>, so the access is through that type (no aliasing or memcpy tricks).
 * Float <-> integer crossings go through f32, so an i32 stored to bf16/f16/fp8 is rounded twice
 * (i32 -> f32 -> narrow) when |x| > 2^24; that is what the GPU does with the same two cvts.
 * An id that is not KBD_DT_VALID is treated as f32. */

KBD_HD float kbd_dt_load_f32(const void *p, int dt) {
  switch (dt) {
  case KBD_DT_f16: return kbd_f16_to_f32(*(const kbd_f16 *)p);
  case KBD_DT_bf16: return kbd_bf16_to_f32(*(const kbd_bf16 *)p);
  case KBD_DT_e4m3: return kbd_e4m3_to_f32(*(const kbd_e4m3 *)p);
  case KBD_DT_e5m2: return kbd_e5m2_to_f32(*(const kbd_e5m2 *)p);
  case KBD_DT_i32: return kbd_i32_to_f32(*(const kbd_i32 *)p);
  case KBD_DT_s8: return (float)*(const kbd_s8 *)p; /* exact */
  case KBD_DT_u8: return (float)*(const kbd_u8 *)p;
  default: return *(const kbd_f32 *)p;
  }
}

KBD_HD void kbd_dt_store_f32(void *p, int dt, float x) {
  switch (dt) {
  case KBD_DT_f16: *(kbd_f16 *)p = kbd_f32_to_f16(x); break;
  case KBD_DT_bf16: *(kbd_bf16 *)p = kbd_f32_to_bf16(x); break;
  case KBD_DT_e4m3: *(kbd_e4m3 *)p = kbd_f32_to_e4m3(x); break;
  case KBD_DT_e5m2: *(kbd_e5m2 *)p = kbd_f32_to_e5m2(x); break;
  case KBD_DT_i32: *(kbd_i32 *)p = kbd_f32_to_i32(x); break;
  case KBD_DT_s8: *(kbd_s8 *)p = kbd_f32_to_s8(x); break;
  case KBD_DT_u8: *(kbd_u8 *)p = kbd_f32_to_u8(x); break;
  default: *(kbd_f32 *)p = x; break;
  }
}

KBD_HD int32_t kbd_dt_load_i32(const void *p, int dt) {
  switch (dt) {
  case KBD_DT_i32: return *(const kbd_i32 *)p;
  case KBD_DT_s8: return *(const kbd_s8 *)p;
  case KBD_DT_u8: return *(const kbd_u8 *)p;
  default: return kbd_f32_to_i32(kbd_dt_load_f32(p, dt));
  }
}

KBD_HD void kbd_dt_store_i32(void *p, int dt, int32_t x) {
  switch (dt) {
  case KBD_DT_i32: *(kbd_i32 *)p = x; break;
  case KBD_DT_s8: *(kbd_s8 *)p = kbd_i32_to_s8(x); break;
  case KBD_DT_u8: *(kbd_u8 *)p = kbd_i32_to_u8(x); break;
  default: kbd_dt_store_f32(p, dt, kbd_i32_to_f32(x)); break;
  }
}

#endif /* KBD_CONVERT_H */
