/* gpt2_kernels.cu - the GPT-2 kernels that are not a GEMM or the attention (gpt2_kernels.h lists them).
 *
 * All of them are memory-bound and small next to the GEMMs: one block per row, a row read once (layernorm: twice,
 * the second read mostly from L1/L2) and written once. The residual adds are not here: they are fused into the
 * epilogues of the GEMMs that produce the residual stream (beta = 1, C = the stream), so the layernorm reads the
 * finished sum once instead of a kernel reading two rows and writing one.
 */
#include <math.h>

#include "gpt2_kernels.h"

typedef KBD_TILE(f32, 1, GPT2_LN_TILE, GPT2_ROW_THREADS) gpt2_row_f32;
typedef KBD_TILE(bf16, 1, GPT2_LN_TILE, GPT2_ROW_THREADS) gpt2_row_bf16;

#if KBD_KERNEL_CODE
/* t = elements c0 .. c0 + 1023 of the bf16 row x widened to f32 (exact); elements at or past n read as 0. */
KBD_DEV void gpt2_row_load(gpt2_row_f32 *t, const kbd_bf16 *x, long long n, long long c0) {
  gpt2_row_bf16 h;
  kbd_load(h, x, n, c0);
  kbd_convert(*t, h);
}
KBD_DEV void gpt2_row_store(kbd_bf16 *y, long long n, long long c0, gpt2_row_f32 *t) {
  gpt2_row_bf16 h;
  kbd_convert(h, *t); /* the one rounding of the row */
  kbd_store(y, h, n, c0);
}
#endif

/* Token and position embedding in one pass: both rows are added in f32 and rounded once. */
KBD_KERNEL(gpt2_embed, GPT2_ROW_THREADS, gpt2_embed_params) {
#if KBD_KERNEL_CODE
  const long long r = kbd_block_x();
  int id = p.ids[r];
  /* the host checks every id it is given and the sampler returns ids below vocab: an id outside reads row 0
   * rather than memory past the table */
  if (id < 0 || id >= p.vocab) id = 0;
  const kbd_bf16 *te = p.wte + (long long)id * p.c, *pe = p.wpe + (long long)(p.pos0 + (int)(r % p.t)) * p.c;
  gpt2_row_f32 a, b;
  for (long long c0 = 0; c0 < p.c; c0 += GPT2_LN_TILE) {
    gpt2_row_load(&a, te, p.c, c0);
    gpt2_row_load(&b, pe, p.c, c0);
    kbd_add(a, a, b);
    gpt2_row_store(p.x + r * p.c, p.c, c0, &a);
  }
#endif
}

/* LayerNorm as examples/layernorm: two-pass statistics in f32 (the mean, then the squared deviations: no
 * cancellation when |mean| >> std), each pass one CTA sum, then the normalised row rounded once to bf16. */
KBD_KERNEL(gpt2_layernorm, GPT2_ROW_THREADS, gpt2_layernorm_params) {
#if KBD_KERNEL_CODE
  const long long r = kbd_block_x();
  const kbd_bf16 *x = p.x + (r * p.in_stride + p.in_offset) * p.c;
  gpt2_row_f32 t, d, g, b;
  float sum = 0.0f;
  for (long long c0 = 0; c0 < p.c; c0 += GPT2_LN_TILE) {
    float part;
    gpt2_row_load(&t, x, p.c, c0);
    kbd_reduce(part, t, KBD_RED_SUM);
    sum += part;
  }
  const float mean = sum / (float)p.c;
  float sq = 0.0f;
  for (long long c0 = 0; c0 < p.c; c0 += GPT2_LN_TILE) {
    float part;
    gpt2_row_load(&t, x, p.c, c0);
    KBD_MAP(d, t, v, rr, cc, c0 + cc < p.c ? (v - mean) * (v - mean) : 0.0f);
    kbd_reduce(part, d, KBD_RED_SUM);
    sq += part;
  }
  const float rstd = 1.0f / sqrtf(sq / (float)p.c + p.eps);
  for (long long c0 = 0; c0 < p.c; c0 += GPT2_LN_TILE) {
    gpt2_row_load(&t, x, p.c, c0);
    kbd_load(g, p.gamma, p.c, c0);
    kbd_load(b, p.beta, p.c, c0);
    KBD_MAP(d, t, v, rr, cc, (v - mean) * rstd);
    kbd_fma(t, d, g, b);
    gpt2_row_store(p.y + r * p.c, p.c, c0, &t);
  }
#endif
}

/* One token row of the QKV projection into the attention's layouts: q head-major for this step, k and v into the
 * KV cache at the token's position (the cache is what the next decode steps read). head_dim hd is padded to hdp
 * with zeros. */
KBD_KERNEL(gpt2_qkv_split, GPT2_ROW_THREADS, gpt2_qkv_params) {
#if KBD_KERNEL_CODE
  const long long r = kbd_block_x();
  const int b = (int)(r / p.t), tt = (int)(r % p.t), c = p.heads * p.hd, per = p.heads * p.hdp;
  const kbd_bf16 *src = p.qkv + r * 3 * c;
  const kbd_bf16 zero = kbd_f32_to_bf16(0.0f);
  KBD_FOR_LANES(lane) {
    for (int i = kbd_thread_idx(lane); i < 3 * per; i += GPT2_ROW_THREADS) {
      const int part = i / per, h = i % per / p.hdp, d = i % p.hdp;
      const kbd_bf16 val = d < p.hd ? src[part * c + h * p.hd + d] : zero;
      const long long bh = (long long)b * p.heads + h;
      if (part == 0)
        p.q[(bh * p.t + tt) * p.hdp + d] = val;
      else
        (part == 1 ? p.k : p.v)[(bh * p.ctx + p.pos0 + tt) * p.hdp + d] = val;
    }
  }
#endif
}

/* The attention output [b][h][t][hdp] back to token rows [b * t][h * hd], the c_proj GEMM's A. */
KBD_KERNEL(gpt2_merge_heads, GPT2_ROW_THREADS, gpt2_merge_params) {
#if KBD_KERNEL_CODE
  const long long r = kbd_block_x();
  const int b = (int)(r / p.t), tt = (int)(r % p.t), c = p.heads * p.hd;
  KBD_FOR_LANES(lane) {
    for (int i = kbd_thread_idx(lane); i < c; i += GPT2_ROW_THREADS) {
      const int h = i / p.hd, d = i % p.hd;
      p.y[r * c + i] = p.o[(((long long)b * p.heads + h) * p.t + tt) * p.hdp + d];
    }
  }
#endif
}

#if KBD_KERNEL_CODE
/* Is (v, i) after (tv, ti) in the order "larger logit first, lower id first on a tie"? */
KBD_DEV int gpt2_after(float v, int i, float tv, int ti) { return v < tv || (v == tv && i > ti); }

/* g, gi = the largest (value, lowest id) element of row l strictly after (tv, ti) (tv = +inf: no bound), over the
 * block (id i at (l)[i * ld]): a per-thread scan of a strided share, a CTA max, then a CTA min of the ids that hold it;
 * gi = INT32_MAX when nothing is left. A macro, not a function: the CTA reductions take the block size from the kernel
 * body. */
#define GPT2_NEXT_BEST(g, gi, l, ld, n, tv, ti)                                                                        \
  do {                                                                                                                 \
    kbd_lanes_f32 nb_m_;                                                                                               \
    kbd_lanes_i32 nb_i_;                                                                                               \
    KBD_FOR_LANES(lane) {                                                                                              \
      float best = -INFINITY;                                                                                          \
      int bi = INT32_MAX;                                                                                              \
      for (int i = kbd_thread_idx(lane); i < (n); i += GPT2_SAMPLE_THREADS) {                                          \
        const float v = (l)[(long long)i * ld];                                                                        \
        if (v == v && gpt2_after(v, i, (tv), (ti)) && (v > best || bi == INT32_MAX)) best = v, bi = i;                 \
      }                                                                                                                \
      KBD_LANE(nb_m_, lane) = best;                                                                                    \
      KBD_LANE(nb_i_, lane) = bi;                                                                                      \
    }                                                                                                                  \
    kbd_cta_reduce(g, nb_m_, KBD_RED_MAX);                                                                             \
    KBD_FOR_LANES(lane) KBD_LANE(nb_i_, lane) = KBD_LANE(nb_m_, lane) == (g) ? KBD_LANE(nb_i_, lane) : INT32_MAX;      \
    kbd_cta_reduce(gi, nb_i_, KBD_RED_MIN);                                                                            \
  } while (0)
#endif

/* One block per batch row. Greedy: the argmax (lowest id on a tie). Otherwise the top-k threshold by k passes of
 * "next best" (exact with ties, no sort), weights exp((l - max) / T) over the candidates, and the first id whose
 * running weight passes u * total for the seeded draw u: each thread owns a contiguous share of ids, a CTA scan of
 * the share totals gives every share its start, and each thread walks its share in id order. */
KBD_KERNEL(gpt2_sample_rows, GPT2_SAMPLE_THREADS, gpt2_sample_params) {
#if KBD_KERNEL_CODE
  const int row = (int)kbd_block_x(), n = p.vocab;
  const float *l = p.logits + row; /* id i of this row at l[i * ld] (gpt2_kernels.h) */
  const long long ld = p.ld;
  float gmax;
  int32_t arg;
  GPT2_NEXT_BEST(gmax, arg, l, ld, n, INFINITY, -1);
  int32_t pick = arg;
  if (p.temperature > 0.0f && p.top_k != 1 && arg != INT32_MAX) {
    float tv = gmax;
    int32_t ti = arg;
    for (int j = 1; j < p.top_k; ++j) { /* top_k 0: no threshold, every id is a candidate */
      float nv;
      int32_t ni;
      GPT2_NEXT_BEST(nv, ni, l, ld, n, tv, ti);
      if (ni == INT32_MAX) break; /* fewer ids than k */
      tv = nv, ti = ni;
    }
    const int all = p.top_k == 0, per = (n + GPT2_SAMPLE_THREADS - 1) / GPT2_SAMPLE_THREADS;
    const float inv_t = 1.0f / p.temperature;
    kbd_lanes_f32 share, start;
    KBD_FOR_LANES(lane) {
      const int i0 = kbd_thread_idx(lane) * per, i1 = i0 + per < n ? i0 + per : n;
      float s = 0.0f;
      for (int i = i0; i < i1; ++i)
        if (all || !gpt2_after(l[i * ld], i, tv, ti)) s += expf((l[i * ld] - gmax) * inv_t);
      KBD_LANE(share, lane) = s;
    }
    float total;
    kbd_cta_scan(start, total, share, KBD_RED_SUM, 1);
    const float target = gpt2_uniform(p.seed, p.step, row) * total;
    kbd_lanes_i32 found, last;
    KBD_FOR_LANES(lane) {
      const int i0 = kbd_thread_idx(lane) * per, i1 = i0 + per < n ? i0 + per : n;
      float acc = KBD_LANE(start, lane);
      int f = INT32_MAX, lc = -1;
      for (int i = i0; i < i1; ++i) {
        if (!(all || !gpt2_after(l[i * ld], i, tv, ti))) continue;
        lc = i;
        acc += expf((l[i * ld] - gmax) * inv_t);
        if (acc > target && f == INT32_MAX) f = i;
      }
      KBD_LANE(found, lane) = f;
      KBD_LANE(last, lane) = lc;
    }
    int32_t first, lastc;
    kbd_cta_reduce(first, found, KBD_RED_MIN);
    kbd_cta_reduce(lastc, last, KBD_RED_MAX);
    /* u * total can round to the total itself: then the last candidate is the draw */
    pick = first != INT32_MAX ? first : lastc;
  }
  if (pick == INT32_MAX || pick < 0) pick = 0; /* only for a row of NaN logits */
  if (kbd_warp_id() == 0) p.out[row] = pick;
#endif
}
