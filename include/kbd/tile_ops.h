/* kbd/tile_ops.h - elementwise tile operations, destination first.
 *
 *   kbd_add(d, a, b)  kbd_sub  kbd_mul  kbd_div  kbd_min  kbd_max       d = a op b
 *   kbd_add_s(d, a, s) ... kbd_max_s                                     d = a op scalar s
 *   kbd_fma(d, a, b, c)                                                  d = a*b + c, one rounding
 *   kbd_neg kbd_abs kbd_exp kbd_exp2 kbd_log kbd_sqrt kbd_rsqrt
 *   kbd_tanh kbd_sigmoid kbd_gelu kbd_gelu_tanh (d, a)                   d = f(a)
 *   kbd_fill(d, s)  kbd_zero(d)  kbd_convert(d, a) (any dtype to any dtype)
 *
 * Operands share shape, scope and layout (checked at compile time); dtypes may differ. Float tiles
 * compute in f32 and round once into the destination dtype (f16/bf16/fp8 arithmetic is f32 arithmetic
 * plus a conversion, as on the GPU without packed-half instructions). i32 tiles compute in 32-bit
 * two's complement with wrap-around; s8 and u8 tiles compute in i32 too and saturate into the destination
 * (a clamp, as cvt.sat.s8.s32); float-only ops on an integer destination are compile-time errors.
 * Cost: one instruction (plus conversions) per element per thread; no memory traffic, no barriers.
 *
 * Math functions: CPU uses libm (expf, logf, ...), the GPU its CUDA math library equivalents; both are
 * within 2 ulp, not bit-identical (rsqrt on the GPU is rsqrt.approx.f32). gelu is the exact erf form,
 * computed as 0.5*x*erfc(-x/sqrt(2)); sigmoid is 1/(1 + exp(-x)), computed without overflow.
 * gelu_tanh is the tanh approximation 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))) (GPT-2, PyTorch's
 * approximate="tanh"), computed on both paths as x*sigmoid(2u) with expf and an IEEE division, within
 * 4*(1 + |2u|) ulp of the exact value of that formula (for x < 0, exp amplifies the rounding of u by |2u|;
 * measured on the CPU over every 7th f32: at most 3.2*(1 + |2u|) ulp); gelu_tanh(+inf) = +inf,
 * gelu_tanh(-inf) = -0, gelu_tanh(-0) = -0, no NaN from a non-NaN x. Cost: ~20 instructions per element
 * (one MUFU.EX2, one MUFU.RCP), about the erf form's; it is not built on tanh.approx.f32, see below.
 * NaN: every f32 result an op computes (all but kbd_convert and kbd_fill) that is NaN is 0x7fffffff on both
 * paths, the GPU's canonical NaN (kbd/numerics.h); i32 x / 0 is -1 on both paths.
 */
#ifndef KBD_TILE_OPS_H
#define KBD_TILE_OPS_H

#include <math.h>

#include "fminmax.h"
#include "numerics.h"
#include "tile_core.h"

enum {
  KBD_OP_ADD = 1,
  KBD_OP_SUB,
  KBD_OP_MUL,
  KBD_OP_DIV,
  KBD_OP_MIN,
  KBD_OP_MAX,
  KBD_OP_NEG,
  KBD_OP_ABS,
  KBD_OP_EXP,
  KBD_OP_EXP2,
  KBD_OP_LOG,
  KBD_OP_SQRT,
  KBD_OP_RSQRT,
  KBD_OP_TANH,
  KBD_OP_SIGMOID,
  KBD_OP_GELU,
  KBD_OP_COPY,
  KBD_OP_GELU_TANH
};

/* NaN results: the GPU's add/sub/mul/div give 0x7fffffff, the host's other bits; kbd_f32_arith_nan gives the
 * GPU's on the CPU and is nothing in the device pass (kbd/numerics.h). min/max are canonical already. */
KBD_TILE_FN float kbd_f32_binop(int op, float x, float y) {
  switch (op) {
  case KBD_OP_ADD: return kbd_f32_arith_nan(x + y);
  case KBD_OP_SUB: return kbd_f32_arith_nan(x - y);
  case KBD_OP_MUL: return kbd_f32_arith_nan(x * y);
  case KBD_OP_DIV: return kbd_f32_arith_nan(x / y);
  case KBD_OP_MIN: return kbd_fmin_ptx(x, y);
  case KBD_OP_MAX: return kbd_fmax_ptx(x, y);
  default: return x;
  }
}

/* NaN results canonical as in kbd_f32_binop. That includes neg and abs, whose NaN the PTX ISA leaves
 * unspecified: ptxas (13.0, sm_90a and sm_100a) compiles neg.f32 / abs.f32 of a register to an FADD with
 * operand modifiers (FADD d, -a, -RZ / FADD d, |a|, -RZ), and an FADD returns the canonical NaN. The math
 * functions are built from such instructions on the GPU. kbd_convert (KBD_OP_COPY) only moves the bits,
 * which keeps a NaN's payload on both paths. */
KBD_TILE_FN float kbd_f32_unop(int op, float x) {
  float r;
  switch (op) {
  case KBD_OP_NEG: r = -x; break;
  case KBD_OP_ABS: r = fabsf(x); break;
  case KBD_OP_EXP: r = expf(x); break;
  case KBD_OP_EXP2: r = exp2f(x); break;
  case KBD_OP_LOG: r = logf(x); break;
  case KBD_OP_SQRT: r = sqrtf(x); break;
#if KBD_MODE_CUDA
  case KBD_OP_RSQRT: r = rsqrtf(x); break;
#else
  case KBD_OP_RSQRT: r = 1.0f / sqrtf(x); break;
#endif
  case KBD_OP_TANH: r = tanhf(x); break;
  /* exp of a non-positive argument only: no overflow to inf for large |x| (sigmoid(-89) is 2.2e-39). */
  case KBD_OP_SIGMOID: {
    const float e = expf(-fabsf(x));
    r = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    break;
  }
  /* erfc form: 1 + erf(z) cancels for negative z; erfc(-z) keeps full relative accuracy there. */
  case KBD_OP_GELU: r = 0.5f * x * erfcf(-x * 0.70710678118654752f); break;
  /* 0.5*(1 + tanh(u)) == sigmoid(2u) == 1/(1 + exp(-2u)), u = sqrt(2/pi)*(x + 0.044715*x^3). Not
   * tanh.approx.f32 (MUFU.TANH, sm_75+): its relative error of up to 2^-10.99 (PTX ISA, tanh) is an
   * absolute error of ~5e-4 in 1 + tanh(u), which is all of the answer once x < -3 (1 + tanh(u) = 3.5e-5
   * at x = -4); nor 1 + tanhf(u), which cancels too (15 of 24 bits lost at x = -4). The sigmoid form has
   * no cancellation and takes exp only of a non-positive argument (no overflow). |x| > 2^64: x*x is inf,
   * z = +-inf and s = 1 or 0; s == 0 gives -0, also for x = -inf (where x*s would be NaN). */
  case KBD_OP_GELU_TANH: {
    const float z = 1.5957691216057308f * x * (1.0f + 0.044715f * x * x); /* 2u; 1.5957... = 2*sqrt(2/pi) */
    const float e = expf(-fabsf(z));
    const float s = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    r = s == 0.0f ? -0.0f : x * s;
    break;
  }
  default: return x;
  }
  return kbd_f32_arith_nan(r);
}

/* 32-bit integer ops wrap (computed on uint32_t: no C undefined behaviour, same bits as PTX add/mul.lo). */
KBD_TILE_FN int32_t kbd_i32_binop(int op, int32_t x, int32_t y, const char *file, int line) {
  switch (op) {
  case KBD_OP_ADD: return (int32_t)((uint32_t)x + (uint32_t)y);
  case KBD_OP_SUB: return (int32_t)((uint32_t)x - (uint32_t)y);
  case KBD_OP_MUL: return (int32_t)((uint32_t)x * (uint32_t)y);
  case KBD_OP_DIV:
    (void)file;
    (void)line;
    /* PTX leaves div.s32 by zero unspecified, so the zero is tested here, on both paths: -1 (all ones),
     * which is also what ptxas's own division sequence gives (its last step sets the quotient to ~divisor).
     * Not a fault: the masked padding of a tile that hangs over the tensor edge loads as 0 and is
     * legitimately divided by. */
    if (y == 0) return -1;
    if (y == -1) return (int32_t)(0u - (uint32_t)x); /* INT_MIN / -1 wraps to INT_MIN, no host trap */
    return x / y;
  case KBD_OP_MIN: return x < y ? x : y;
  case KBD_OP_MAX: return x > y ? x : y;
  default: return x;
  }
}

KBD_TILE_FN int32_t kbd_i32_unop(int op, int32_t x) {
  switch (op) {
  case KBD_OP_NEG: return (int32_t)(0u - (uint32_t)x);
  case KBD_OP_ABS: return x < 0 ? (int32_t)(0u - (uint32_t)x) : x;
  default: return x;
  }
}

/* d[k] = a[k] op b[k] over the n = lanes*npt fragment elements (b == NULL: scalar s instead). */
KBD_TILE_FN void kbd_tile_binop(void *d, int dd, const void *a, int da, const void *b, int db, float s, int n, int op,
                                const char *file, int line) {
  const int ed = KBD_DT_SIZE(dd), ea = KBD_DT_SIZE(da), eb = KBD_DT_SIZE(db);
  if (dd == KBD_DT_f32 && da == KBD_DT_f32 && (!b || db == KBD_DT_f32)) {
    /* All-f32 (the common case): plain float loops, which the host compiler vectorises in CPU mode
     * (the 32 lanes' fragments are one contiguous array there); on the GPU the same unrolled FADDs. */
    float *fd = (float *)d;
    const float *fa = (const float *)a, *fb = (const float *)b;
    if (fb) {
      KBD_UNROLL for (int k = 0; k < n; ++k) fd[k] = kbd_f32_binop(op, fa[k], fb[k]);
    } else {
      KBD_UNROLL for (int k = 0; k < n; ++k) fd[k] = kbd_f32_binop(op, fa[k], s);
    }
    (void)file;
    (void)line;
    return;
  }
  KBD_UNROLL for (int k = 0; k < n; ++k) {
    void *pd = (char *)d + (size_t)k * ed;
    const void *pa = (const char *)a + (size_t)k * ea;
    if (KBD_DT_IS_FLOAT(dd)) {
      const float y = b ? kbd_dt_load_f32((const char *)b + (size_t)k * eb, db) : s;
      kbd_dt_store_f32(pd, dd, kbd_f32_binop(op, kbd_dt_load_f32(pa, da), y));
    } else {
      const int32_t y = b ? kbd_dt_load_i32((const char *)b + (size_t)k * eb, db) : kbd_f32_to_i32(s);
      kbd_dt_store_i32(pd, dd, kbd_i32_binop(op, kbd_dt_load_i32(pa, da), y, file, line));
    }
  }
}

KBD_TILE_FN void kbd_tile_unop(void *d, int dd, const void *a, int da, int n, int op) {
  const int ed = KBD_DT_SIZE(dd), ea = KBD_DT_SIZE(da);
  KBD_UNROLL for (int k = 0; k < n; ++k) {
    void *pd = (char *)d + (size_t)k * ed;
    const void *pa = (const char *)a + (size_t)k * ea;
    if (KBD_DT_IS_FLOAT(dd))
      kbd_dt_store_f32(pd, dd, kbd_f32_unop(op, kbd_dt_load_f32(pa, da)));
    else
      kbd_dt_store_i32(pd, dd, kbd_i32_unop(op, kbd_dt_load_i32(pa, da)));
  }
}

KBD_TILE_FN void kbd_tile_fma(void *d, int dd, const void *a, int da, const void *b, int db, const void *c, int dc,
                              int n) {
  KBD_UNROLL for (int k = 0; k < n; ++k)
      kbd_dt_store_f32((char *)d + (size_t)k * KBD_DT_SIZE(dd), dd,
                       kbd_f32_arith_nan(fmaf(kbd_dt_load_f32((const char *)a + (size_t)k * KBD_DT_SIZE(da), da),
                                              kbd_dt_load_f32((const char *)b + (size_t)k * KBD_DT_SIZE(db), db),
                                              kbd_dt_load_f32((const char *)c + (size_t)k * KBD_DT_SIZE(dc), dc))));
}

#define KBD__N(t) (KBD_LANES_HELD * KBD_NPT(t))
#define KBD__FLOAT_ONLY(d, opname)                                                                                     \
  KBD_STATIC_ASSERT(KBD_DT_IS_FLOAT(KBD_DTYPE(d)), "kbd: " opname " needs a floating-point destination tile "          \
                                                   "(f32, f16, bf16, e4m3, e5m2), not i32, s8 or u8")

/* Front end of every elementwise op (the destination d and up to three tile operands): one kind check per
 * operand, then kbd_od_/kbd_oA_/... bound to the operands or, once any check failed, to stand-ins of d's type,
 * so that a wrong operand is the call's only error (kbd/tile_core.h, "one message per mistake"). */
#define KBD__OP_D(d, name, sig)                                                                                        \
  enum { kbd_okd_ = KBD__KIND_OF(d) };                                                                                 \
  KBD__NEED_REG_K(kbd_okd_, name sig ", operand d", "not a scalar or a pointer");                                      \
  enum { kbd_ook_ = kbd_okd_ == KBD_KIND_REG };                                                                        \
  KBD__BIND(kbd_od_, KBD__OR(kbd_ook_, d, kbd__reg_standin))
#define KBD__OP_T(x, n, oname, name, sig, not_tile)                                                                    \
  enum { kbd_ok##n = KBD__KIND_OF(x) };                                                                                \
  KBD__NEED_REG_K(kbd_ok##n, name sig ", operand " oname, not_tile);                                                   \
  enum { kbd_ook##n = kbd_ook_ && kbd_ok##n == KBD_KIND_REG };                                                         \
  KBD__BIND(kbd_o##n##_, KBD__OR(kbd_ook##n, x, KBD__TYPE(KBD__AT(kbd_od_))))
#define KBD__OP_S(s, name, sig, fix)                                                                                   \
  KBD_STATIC_ASSERT(KBD__IS_SCALAR(s), "kbd: " name sig ", operand s: must be a scalar (a number), not a tile or a "   \
                                       "pointer; " fix)
#define KBD__OP_SV(s) KBD__OR(KBD__IS_SCALAR(s), s, float)

#define KBD__BIN(d, a, b, op, name)                                                                                    \
  do {                                                                                                                 \
    KBD__OP_D(d, name, "(d, a, b)");                                                                                   \
    KBD__OP_T(a, A, "a", name, "(d, a, b)",                                                                            \
              "not a scalar or a pointer; for a scalar operand use " name "_s(d, a, s)");                              \
    KBD__OP_T(b, B, "b", name, "(d, a, b)",                                                                            \
              "not a scalar or a pointer; for a scalar operand use " name "_s(d, a, s)");                              \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oA_), name);                                                      \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oB_), name);                                                      \
    kbd_tile_binop(KBD__AT(kbd_od_).v, KBD_DTYPE(KBD__AT(kbd_od_)), KBD__AT(kbd_oA_).v, KBD_DTYPE(KBD__AT(kbd_oA_)),   \
                   KBD__AT(kbd_oB_).v, KBD_DTYPE(KBD__AT(kbd_oB_)), 0.0f, KBD__N(KBD__AT(kbd_od_)), op, __FILE__,      \
                   __LINE__);                                                                                          \
  } while (0)
#define KBD__BIN_S(d, a, s, op, name)                                                                                  \
  do {                                                                                                                 \
    KBD__OP_D(d, name, "(d, a, s)");                                                                                   \
    KBD__OP_T(a, A, "a", name, "(d, a, s)", "not a scalar or a pointer");                                              \
    KBD__OP_S(s, name, "(d, a, s)", "for a tile operand use the call without _s");                                     \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oA_), name);                                                      \
    kbd_tile_binop(KBD__AT(kbd_od_).v, KBD_DTYPE(KBD__AT(kbd_od_)), KBD__AT(kbd_oA_).v, KBD_DTYPE(KBD__AT(kbd_oA_)),   \
                   NULL, KBD_DTYPE(KBD__AT(kbd_oA_)), (float)(KBD__OP_SV(s)), KBD__N(KBD__AT(kbd_od_)), op, __FILE__,  \
                   __LINE__);                                                                                          \
  } while (0)
#define KBD__UN(d, a, op, name)                                                                                        \
  do {                                                                                                                 \
    KBD__OP_D(d, name, "(d, a)");                                                                                      \
    KBD__OP_T(a, A, "a", name, "(d, a)", "not a scalar or a pointer");                                                 \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oA_), name);                                                      \
    kbd_tile_unop(KBD__AT(kbd_od_).v, KBD_DTYPE(KBD__AT(kbd_od_)), KBD__AT(kbd_oA_).v, KBD_DTYPE(KBD__AT(kbd_oA_)),    \
                  KBD__N(KBD__AT(kbd_od_)), op);                                                                       \
  } while (0)
#define KBD__UNF(d, a, op, name)                                                                                       \
  do {                                                                                                                 \
    KBD__FLOAT_ONLY(KBD__REG_OR(d, kbd__reg_standin), name);                                                           \
    KBD__UN(d, a, op, name);                                                                                           \
  } while (0)

#define kbd_add(d, a, b) KBD__BIN(d, a, b, KBD_OP_ADD, "kbd_add")
#define kbd_sub(d, a, b) KBD__BIN(d, a, b, KBD_OP_SUB, "kbd_sub")
#define kbd_mul(d, a, b) KBD__BIN(d, a, b, KBD_OP_MUL, "kbd_mul")
#define kbd_div(d, a, b) KBD__BIN(d, a, b, KBD_OP_DIV, "kbd_div")
#define kbd_min(d, a, b) KBD__BIN(d, a, b, KBD_OP_MIN, "kbd_min")
#define kbd_max(d, a, b) KBD__BIN(d, a, b, KBD_OP_MAX, "kbd_max")
#define kbd_add_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_ADD, "kbd_add_s")
#define kbd_sub_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_SUB, "kbd_sub_s")
#define kbd_mul_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_MUL, "kbd_mul_s")
#define kbd_div_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_DIV, "kbd_div_s")
#define kbd_min_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_MIN, "kbd_min_s")
#define kbd_max_s(d, a, s) KBD__BIN_S(d, a, s, KBD_OP_MAX, "kbd_max_s")
#define kbd_neg(d, a) KBD__UN(d, a, KBD_OP_NEG, "kbd_neg")
#define kbd_abs(d, a) KBD__UN(d, a, KBD_OP_ABS, "kbd_abs")
#define kbd_exp(d, a) KBD__UNF(d, a, KBD_OP_EXP, "kbd_exp")
#define kbd_exp2(d, a) KBD__UNF(d, a, KBD_OP_EXP2, "kbd_exp2")
#define kbd_log(d, a) KBD__UNF(d, a, KBD_OP_LOG, "kbd_log")
#define kbd_sqrt(d, a) KBD__UNF(d, a, KBD_OP_SQRT, "kbd_sqrt")
#define kbd_rsqrt(d, a) KBD__UNF(d, a, KBD_OP_RSQRT, "kbd_rsqrt")
#define kbd_tanh(d, a) KBD__UNF(d, a, KBD_OP_TANH, "kbd_tanh")
#define kbd_sigmoid(d, a) KBD__UNF(d, a, KBD_OP_SIGMOID, "kbd_sigmoid")
#define kbd_gelu(d, a) KBD__UNF(d, a, KBD_OP_GELU, "kbd_gelu")
#define kbd_gelu_tanh(d, a) KBD__UNF(d, a, KBD_OP_GELU_TANH, "kbd_gelu_tanh")
#define kbd_convert(d, a) KBD__UN(d, a, KBD_OP_COPY, "kbd_convert")

#define kbd_fma(d, a, b, c)                                                                                            \
  do {                                                                                                                 \
    KBD__FLOAT_ONLY(KBD__REG_OR(d, kbd__reg_standin), "kbd_fma");                                                      \
    KBD__OP_D(d, "kbd_fma", "(d, a, b, c)");                                                                           \
    KBD__OP_T(a, A, "a", "kbd_fma", "(d, a, b, c)", "not a scalar or a pointer");                                      \
    KBD__OP_T(b, B, "b", "kbd_fma", "(d, a, b, c)", "not a scalar or a pointer");                                      \
    KBD__OP_T(c, C, "c", "kbd_fma", "(d, a, b, c)", "not a scalar or a pointer");                                      \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oA_), "kbd_fma");                                                 \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oB_), "kbd_fma");                                                 \
    KBD__SAME_SHAPE_IN(KBD__AT(kbd_od_), KBD__AT(kbd_oC_), "kbd_fma");                                                 \
    kbd_tile_fma(KBD__AT(kbd_od_).v, KBD_DTYPE(KBD__AT(kbd_od_)), KBD__AT(kbd_oA_).v, KBD_DTYPE(KBD__AT(kbd_oA_)),     \
                 KBD__AT(kbd_oB_).v, KBD_DTYPE(KBD__AT(kbd_oB_)), KBD__AT(kbd_oC_).v, KBD_DTYPE(KBD__AT(kbd_oC_)),     \
                 KBD__N(KBD__AT(kbd_od_)));                                                                            \
  } while (0)

/* d = s everywhere (s converted to d's dtype: RNE for floats, saturating RNE for i32). */
#define kbd_fill(d, s)                                                                                                 \
  do {                                                                                                                 \
    KBD__OP_D(d, "kbd_fill", "(d, s)");                                                                                \
    KBD__OP_S(s, "kbd_fill", "(d, s)", "to copy a tile use kbd_convert(d, a)");                                        \
    const float kbd_fs_ = (float)(KBD__OP_SV(s));                                                                      \
    KBD__FOR_FRAG(KBD__AT(kbd_od_), kbd_fl_, kbd_fi_)                                                                  \
    kbd_dt_store_f32(&KBD__AT(kbd_od_).v[kbd_fl_][kbd_fi_], KBD_DTYPE(KBD__AT(kbd_od_)), kbd_fs_);                     \
  } while (0)
#define kbd_zero(d)                                                                                                    \
  do {                                                                                                                 \
    KBD__OP_D(d, "kbd_zero", "(d)");                                                                                   \
    memset(KBD__AT(kbd_od_).v, 0, sizeof(KBD__AT(kbd_od_).v));                                                         \
  } while (0)

#endif /* KBD_TILE_OPS_H */
