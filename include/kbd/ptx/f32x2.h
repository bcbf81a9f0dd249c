/* kbd/ptx/f32x2.h - packed f32 arithmetic, two lanes per instruction (GPU twin of cpu/f32x2.h; kbd/f32x2.h).
 *
 *   fma.rn.f32x2 d, a, b, c;   mul.rn.f32x2 d, a, b;   add.rn.f32x2 d, a, b;
 *       PTX ISA 8.6, sm_100a (FFMA2 / FMUL2 / FADD2 in SASS): a, b, c, d are .b64 pairs, lane 0 in bits 0..31; each
 *       lane is the .f32 instruction of the same rounding, so a pair is bit for bit two fmaf / two products / two
 *       sums. No .ftz: like the scalar forms nvcc emits by default, subnormals are kept.
 *
 * One instruction issues two lanes' work, which halves the issue slots of f32 math on sm_100a, where one warp
 * scheduler feeds the tensor cores' MMA, the MUFU and the FMA pipe of a softmax warp; the FMA pipe still does one
 * lane pair per lane, so the packed forms save issue slots, not FMA-pipe cycles.
 * The mov.b64 {lo, hi} packs are register pairing for ptxas, no instruction when the two floats sit in an aligned
 * register pair. sm_90a has no f32x2 form: kbd/f32x2.h rejects it at compile time with a message; a direct call here
 * on another target stops ptxas with "Unresolved extern function 'kbd_ptx_f32x2_requires_sm_100a'". The nvcc device
 * pass only (kbd/hw.h); every host compilation takes cpu/f32x2.h.
 */
#ifndef KBD_PTX_F32X2_H
#define KBD_PTX_F32X2_H

#include "../config.h"

#if KBD_DEVICE_PASS

#if !KBD_SM100A
/* Never defined: reaching a packed twin on a target without f32x2 is a build error naming the requirement. */
KBD_EXTERN_C __device__ void kbd_ptx_f32x2_requires_sm_100a(void);
#endif

/* d[k] = a[k] * b[k] + c[k], one rounding each (k = 0, 1) */
KBD_DEV void kbd_hw_fma_rn_f32x2(float d[2], const float a[2], const float b[2], const float c[2]) {
#if KBD_SM100A
  asm("{\n\t.reg .b64 ra, rb, rc, rd;\n\t"
      "mov.b64 ra, {%2, %3};\n\tmov.b64 rb, {%4, %5};\n\tmov.b64 rc, {%6, %7};\n\t"
      "fma.rn.f32x2 rd, ra, rb, rc;\n\tmov.b64 {%0, %1}, rd;\n\t}"
      : "=f"(d[0]), "=f"(d[1])
      : "f"(a[0]), "f"(a[1]), "f"(b[0]), "f"(b[1]), "f"(c[0]), "f"(c[1]));
#else
  (void)a, (void)b, (void)c;
  d[0] = d[1] = 0.0f;
  kbd_ptx_f32x2_requires_sm_100a();
#endif
}

/* d[k] = a[k] * b[k], rounded to nearest */
KBD_DEV void kbd_hw_mul_rn_f32x2(float d[2], const float a[2], const float b[2]) {
#if KBD_SM100A
  asm("{\n\t.reg .b64 ra, rb, rd;\n\t"
      "mov.b64 ra, {%2, %3};\n\tmov.b64 rb, {%4, %5};\n\t"
      "mul.rn.f32x2 rd, ra, rb;\n\tmov.b64 {%0, %1}, rd;\n\t}"
      : "=f"(d[0]), "=f"(d[1])
      : "f"(a[0]), "f"(a[1]), "f"(b[0]), "f"(b[1]));
#else
  (void)a, (void)b;
  d[0] = d[1] = 0.0f;
  kbd_ptx_f32x2_requires_sm_100a();
#endif
}

/* d[k] = a[k] + b[k], rounded to nearest */
KBD_DEV void kbd_hw_add_rn_f32x2(float d[2], const float a[2], const float b[2]) {
#if KBD_SM100A
  asm("{\n\t.reg .b64 ra, rb, rd;\n\t"
      "mov.b64 ra, {%2, %3};\n\tmov.b64 rb, {%4, %5};\n\t"
      "add.rn.f32x2 rd, ra, rb;\n\tmov.b64 {%0, %1}, rd;\n\t}"
      : "=f"(d[0]), "=f"(d[1])
      : "f"(a[0]), "f"(a[1]), "f"(b[0]), "f"(b[1]));
#else
  (void)a, (void)b;
  d[0] = d[1] = 0.0f;
  kbd_ptx_f32x2_requires_sm_100a();
#endif
}

#endif /* KBD_DEVICE_PASS */
#endif /* KBD_PTX_F32X2_H */
