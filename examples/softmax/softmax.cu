/* softmax.cu - row softmax, f32 and bf16 in/out, one 256-thread block per row, any row length.
 *
 * Three sweeps over the row in 1 x 1024 tiles (4 elements per thread, 16-byte f32 / 8-byte bf16
 * loads): max, sum of exp(x - max), write. All math is f32; bf16 is widened on load (exact) and
 * rounded once on store. Each sweep ends in one CTA reduction (5 SHFL + REDUX/5 SHFL, 2 barriers).
 * For rows up to a few thousand elements the 2nd and 3rd reads hit L2; a row that fits one tile
 * could keep it in registers - the sweeps are kept general so the template works for any length.
 */
#include <math.h>

#include "softmax.h"

/* x - m where x == m counts as 0: equal logits (all -inf, or the +inf ones) get exp(0) = 1. */
#define SOFTMAX_SHIFT(x, m) ((x) == (m) ? 0.0f : (x) - (m))

#define SOFTMAX_BODY(DT, T)                                                                                            \
  const T *x = (const T *)p.x + (long long)kbd_block_x() * p.cols;                                                     \
  T *y = (T *)p.y + (long long)kbd_block_x() * p.cols;                                                                 \
  KBD_TILE(DT, 1, SOFTMAX_TILE, KBD_CTA) t;                                                                            \
  KBD_TILE(f32, 1, SOFTMAX_TILE, KBD_CTA) e;                                                                           \
  /* sweep 1: row max (PTX max.f32: NaN ignored; the masked tail is padded with -inf) */                               \
  float m = -INFINITY;                                                                                                 \
  for (long long s = 0; s < p.cols; s += SOFTMAX_TILE) {                                                               \
    float r;                                                                                                           \
    kbd_load(t, x, p.cols, s);                                                                                         \
    kbd_pad_1d(t, p.cols, s, KBD_RED_MAX);                                                                             \
    kbd_reduce(r, t, KBD_RED_MAX);                                                                                     \
    m = kbd_fmax_ptx(m, r);                                                                                            \
  }                                                                                                                    \
  /* sweep 2: sum of exp(x - m); the tail is masked to 0 by position, not by value */                                  \
  float sum = 0.0f;                                                                                                    \
  for (long long s = 0; s < p.cols; s += SOFTMAX_TILE) {                                                               \
    float r;                                                                                                           \
    kbd_load(t, x, p.cols, s);                                                                                         \
    KBD_MAP(e, t, v, row, c, s + c < p.cols ? expf(SOFTMAX_SHIFT(v, m)) : 0.0f);                                       \
    kbd_reduce(r, e, KBD_RED_SUM);                                                                                     \
    sum += r;                                                                                                          \
  }                                                                                                                    \
  /* sweep 3: normalise; sum >= 1 always (the max element contributes exp(0)), unless the row has a NaN */             \
  const float inv = 1.0f / sum;                                                                                        \
  for (long long s = 0; s < p.cols; s += SOFTMAX_TILE) {                                                               \
    kbd_load(t, x, p.cols, s);                                                                                         \
    KBD_MAP(t, t, v, row, c, expf(SOFTMAX_SHIFT(v, m)) * inv);                                                         \
    kbd_store(t, y, p.cols, s);                                                                                        \
  }

KBD_KERNEL(softmax_f32, SOFTMAX_THREADS,
           softmax_params){SOFTMAX_BODY(f32, float)} KBD_KERNEL(softmax_bf16, SOFTMAX_THREADS, softmax_params) {
  SOFTMAX_BODY(bf16, kbd_bf16)
}
