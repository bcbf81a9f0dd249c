/* layernorm.cu - LayerNorm forward, f32 and bf16 in/out, one 256-thread block per row.
 *
 * Two-pass statistics (mean, then the sum of squared deviations) rather than E[x^2] - E[x]^2: the
 * one-pass form cancels catastrophically when |mean| >> std, and the second read of the row mostly hits
 * L2. Each pass is one CTA sum (2 barriers); the write pass needs none. f32 math throughout; bf16 is
 * widened on load and rounded once on store. The masked tail reads 0 and is excluded by position.
 */
#include <math.h>

#include "layernorm.h"

#define LAYERNORM_BODY(DT, T)                                                                                          \
  const T *x = (const T *)p.x + (long long)kbd_block_x() * p.cols;                                                     \
  T *y = (T *)p.y + (long long)kbd_block_x() * p.cols;                                                                 \
  KBD_TILE(DT, 1, LAYERNORM_TILE, KBD_CTA) t;                                                                          \
  KBD_TILE(f32, 1, LAYERNORM_TILE, KBD_CTA) d, g, b;                                                                   \
  float sum = 0.0f, sq = 0.0f;                                                                                         \
  for (long long s = 0; s < p.cols; s += LAYERNORM_TILE) {                                                             \
    float r;                                                                                                           \
    kbd_load(t, x, p.cols, s);                                                                                         \
    kbd_reduce(r, t, KBD_RED_SUM);                                                                                     \
    sum += r;                                                                                                          \
  }                                                                                                                    \
  const float mean = sum / (float)p.cols;                                                                              \
  for (long long s = 0; s < p.cols; s += LAYERNORM_TILE) {                                                             \
    float r;                                                                                                           \
    kbd_load(t, x, p.cols, s);                                                                                         \
    KBD_MAP(d, t, v, row, c, s + c < p.cols ? (v - mean) * (v - mean) : 0.0f);                                         \
    kbd_reduce(r, d, KBD_RED_SUM);                                                                                     \
    sq += r;                                                                                                           \
  }                                                                                                                    \
  /* 1/sqrtf, not rsqrt.approx: the same rounding on CPU and GPU to within 1 ulp */                                    \
  const float rstd = 1.0f / sqrtf(sq / (float)p.cols + p.eps);                                                         \
  for (long long s = 0; s < p.cols; s += LAYERNORM_TILE) {                                                             \
    kbd_load(t, x, p.cols, s);                                                                                         \
    kbd_load(g, p.gamma, p.cols, s);                                                                                   \
    kbd_load(b, p.beta, p.cols, s);                                                                                    \
    KBD_MAP(d, t, v, row, c, (v - mean) * rstd);                                                                       \
    kbd_fma(t, d, g, b);                                                                                               \
    kbd_store(t, y, p.cols, s);                                                                                        \
  }

KBD_KERNEL(layernorm_f32, LAYERNORM_THREADS, layernorm_params){
    LAYERNORM_BODY(f32, float)} KBD_KERNEL(layernorm_bf16, LAYERNORM_THREADS, layernorm_params) {
  LAYERNORM_BODY(bf16, kbd_bf16)
}
