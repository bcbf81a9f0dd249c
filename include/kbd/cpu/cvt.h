/* kbd/cpu/cvt.h - element-type conversions in software (twin of ptx/cvt.h).
 *
 * Each twin gives the bits the PTX instruction of the same name gives, from the bit-exact software
 * conversions of kbd/convert_sw.h. Conversions are KBD_HD and pure, so this twin serves every host
 * compilation, not only the CPU machine: -DKBD_CPU, nvcc's host pass and a plain C host file of a GPU
 * program (kbd/hw.h); the nvcc device pass takes ptx/cvt.h. Packed forms: `hi` in the upper half.
 */
#ifndef KBD_CPU_CVT_H
#define KBD_CPU_CVT_H

#include "../config.h"
#include "../convert_sw.h"

#if !KBD_DEVICE_PASS

KBD_HD uint16_t kbd_hw_cvt_rn_f16_f32(float a) { return kbd_cvt_sw_f32_to_f16(a).bits; }

KBD_HD float kbd_hw_cvt_f32_f16(uint16_t a) {
  kbd_f16 h;
  h.bits = a;
  return kbd_cvt_sw_f16_to_f32(h);
}

KBD_HD uint16_t kbd_hw_cvt_rn_bf16_f32(float a) { return kbd_cvt_sw_f32_to_bf16(a).bits; }

/* The packed forms are two scalar conversions: cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32 convert each input on its own
 * with the same .rn (round to nearest, ties to even, overflow to inf, subnormals kept) as the scalar cvt.rn, so the
 * device's one F2FP.PACK_AB gives exactly the bits of two cvt.rn.bf16.f32 packed hi:lo (tests/types/
 * test_cvt_packed.c holds kbd_f32x2_to_bf16x2 / _f16x2 to the scalar path over special values and random pairs). */
KBD_HD uint32_t kbd_hw_cvt_rn_bf16x2_f32(float hi, float lo) {
  return (uint32_t)kbd_cvt_sw_f32_to_bf16(hi).bits << 16 | kbd_cvt_sw_f32_to_bf16(lo).bits;
}

KBD_HD uint32_t kbd_hw_cvt_rn_f16x2_f32(float hi, float lo) {
  return (uint32_t)kbd_cvt_sw_f32_to_f16(hi).bits << 16 | kbd_cvt_sw_f32_to_f16(lo).bits;
}

KBD_HD float kbd_hw_cvt_f32_bf16(uint16_t a) {
  kbd_bf16 b;
  b.bits = a;
  return kbd_cvt_sw_bf16_to_f32(b);
}

KBD_HD uint16_t kbd_hw_cvt_rn_satfinite_e4m3x2_f32(float hi, float lo) {
  return (uint16_t)((uint32_t)kbd_cvt_sw_f32_to_e4m3(hi).bits << 8 | kbd_cvt_sw_f32_to_e4m3(lo).bits);
}

KBD_HD uint16_t kbd_hw_cvt_rn_satfinite_e5m2x2_f32(float hi, float lo) {
  return (uint16_t)((uint32_t)kbd_cvt_sw_f32_to_e5m2(hi).bits << 8 | kbd_cvt_sw_f32_to_e5m2(lo).bits);
}

KBD_HD uint32_t kbd_hw_cvt_rn_f16x2_e4m3x2(uint16_t a) {
  kbd_e4m3 h, l;
  h.bits = (uint8_t)(a >> 8);
  l.bits = (uint8_t)a;
  return (uint32_t)kbd_cvt_sw_e4m3_to_f16(h).bits << 16 | kbd_cvt_sw_e4m3_to_f16(l).bits;
}

KBD_HD uint32_t kbd_hw_cvt_rn_f16x2_e5m2x2(uint16_t a) {
  kbd_e5m2 h, l;
  h.bits = (uint8_t)(a >> 8);
  l.bits = (uint8_t)a;
  return (uint32_t)kbd_cvt_sw_e5m2_to_f16(h).bits << 16 | kbd_cvt_sw_e5m2_to_f16(l).bits;
}

KBD_HD int32_t kbd_hw_cvt_rni_sat_s32_f32(float a) { return kbd_cvt_sw_f32_to_i32(a); }

KBD_HD float kbd_hw_cvt_rn_f32_s32(int32_t a) { return kbd_cvt_sw_i32_to_f32(a); }

#endif /* !KBD_DEVICE_PASS */
#endif /* KBD_CPU_CVT_H */
