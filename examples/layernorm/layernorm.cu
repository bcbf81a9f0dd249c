/* layernorm.cu - LayerNorm forward, f32 or bf16 in and out (p.dtype), one 256-thread block per row.
 *
 * Two-pass statistics (mean, then the sum of squared deviations) rather than E[x^2] - E[x]^2: the
 * one-pass form cancels catastrophically when |mean| >> std, and the second read of the row mostly hits
 * L2. Each pass is one CTA sum (5 SHFL + 2 barriers); the write pass needs none. f32 math throughout; bf16
 * is widened on load (exact) and rounded once on store. The dtype is a run-time parameter, the same for the
 * whole launch: every thread takes the same branch, so the test costs one uniform predicate per tile.
 */
#include <math.h>

#include "layernorm.h"

/* A 1 x 1024 f32 tile of the whole block (LAYERNORM_THREADS is the block: the scope of a CTA tile). */
typedef KBD_TILE(f32, 1, LAYERNORM_TILE, LAYERNORM_THREADS) layernorm_tile;

/* t = elements c0 .. c0 + 1023 of the row x as f32. kbd_load reads the elements at or past cols as 0, so
 * the tail adds nothing to the row sum; the variance pass excludes it by position. */
KBD_DEV void layernorm_load(layernorm_tile *t, const void *x, int dtype, long long cols, long long c0) {
  if (dtype == KBD_DT_bf16) {
    KBD_TILE(bf16, 1, LAYERNORM_TILE, LAYERNORM_THREADS) h;
    kbd_load(h, (const kbd_bf16 *)x, cols, c0);
    kbd_convert(*t, h); /* bf16 -> f32 is exact */
  } else {
    kbd_load(*t, (const float *)x, cols, c0);
  }
}

/* Elements c0 .. of the row y = t (rounded once to bf16 for a bf16 y); none at or past cols is written. */
KBD_DEV void layernorm_store(void *y, int dtype, long long cols, long long c0, layernorm_tile *t) {
  if (dtype == KBD_DT_bf16) {
    KBD_TILE(bf16, 1, LAYERNORM_TILE, LAYERNORM_THREADS) h;
    kbd_convert(h, *t);
    kbd_store((kbd_bf16 *)y, h, cols, c0);
  } else {
    kbd_store((float *)y, *t, cols, c0);
  }
}

KBD_KERNEL(layernorm, LAYERNORM_THREADS, layernorm_params) {
  const long long row = kbd_block_x();
  const long long esize = p.dtype == KBD_DT_bf16 ? 2 : 4;
  const char *x = (const char *)p.x + row * p.cols * esize;
  char *y = (char *)p.y + row * p.cols * esize;
  layernorm_tile t, d, g, b;

  /* Pass 1: the mean. */
  float sum = 0.0f;
  for (long long c0 = 0; c0 < p.cols; c0 += LAYERNORM_TILE) {
    float part;
    layernorm_load(&t, x, p.dtype, p.cols, c0);
    kbd_reduce(part, t, KBD_RED_SUM);
    sum += part;
  }
  const float mean = sum / (float)p.cols;

  /* Pass 2: the variance, from the deviations (the tail's 0s would add mean^2 each: masked by position). */
  float sq = 0.0f;
  for (long long c0 = 0; c0 < p.cols; c0 += LAYERNORM_TILE) {
    float part;
    layernorm_load(&t, x, p.dtype, p.cols, c0);
    KBD_MAP(d, t, v, r, c, c0 + c < p.cols ? (v - mean) * (v - mean) : 0.0f);
    kbd_reduce(part, d, KBD_RED_SUM);
    sq += part;
  }
  /* 1/sqrtf, not rsqrt.approx: the same rounding on CPU and GPU to within 1 ulp. */
  const float rstd = 1.0f / sqrtf(sq / (float)p.cols + p.eps);

  /* Pass 3: y = (x - mean) * rstd * gamma + beta. */
  for (long long c0 = 0; c0 < p.cols; c0 += LAYERNORM_TILE) {
    layernorm_load(&t, x, p.dtype, p.cols, c0);
    kbd_load(g, p.gamma, p.cols, c0);
    kbd_load(b, p.beta, p.cols, c0);
    KBD_MAP(d, t, v, r, c, (v - mean) * rstd);
    kbd_fma(t, d, g, b);
    layernorm_store(y, p.dtype, p.cols, c0, &t);
  }
}
