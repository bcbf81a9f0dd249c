/* gpt2_kernels.h - shared by gpt2.c and gpt2_kernels.cu: the kbd kernels of the GPT-2 forward pass that are not the
 * GEMM (examples/gemm) or the attention (examples/attention). docs/gpt2.md places each in the model.
 *
 *   gpt2_embed      x[r] = wte[id[r]] + wpe[pos0 + r % t]                 one block per token row
 *   gpt2_layernorm  y[r] = LayerNorm(x[r * in_stride + in_offset])        one block per output row
 *   gpt2_qkv_split  qkv[b, t] -> q [b][h][t][hdp] and the KV cache's row pos0 + t of k, v [b][h][ctx][hdp]
 *   gpt2_merge_heads o [b][h][t][hdp] -> y [b * t][c]                      (the attention output, for c_proj)
 *   gpt2_sample_rows next token of each batch row from f32 logits: greedy, temperature, top-k, seeded
 *
 * Activations are bf16 with f32 arithmetic inside every kernel; head_dim is padded to hdp (64, 128 or 256, what the
 * attention kernels exist for) with zeros, which changes no dot product and leaves the padded O columns zero.
 */
#ifndef GPT2_KERNELS_H
#define GPT2_KERNELS_H

#include <kbd/reduce.h>
#include <kbd/scan.h>
#include <kbd/tile.h>

#define GPT2_LN_TILE 1024    /* layernorm / embedding row tile: 4 elements per thread */
#define GPT2_ROW_THREADS 256 /* one block per row */
#define GPT2_SAMPLE_THREADS 256
#define GPT2_TOPK_MAX 256 /* top-k runs k selection passes over the vocabulary: bounded so a step stays cheap */

typedef struct gpt2_embed_params {
  const int *ids;      /* rows token ids, [batch][t] */
  const kbd_bf16 *wte; /* [vocab][c] */
  const kbd_bf16 *wpe; /* [n_ctx][c] */
  kbd_bf16 *x;         /* [rows][c] */
  long long rows, c;
  int t, pos0, vocab;
} gpt2_embed_params;

typedef struct gpt2_layernorm_params {
  const kbd_bf16 *x; /* input row r is x row r * in_stride + in_offset (the last token of each sequence: t, t - 1) */
  kbd_bf16 *y;       /* [rows][c] */
  const float *gamma, *beta;
  long long rows, c, in_stride, in_offset;
  float eps;
} gpt2_layernorm_params;

typedef struct gpt2_qkv_params {
  const kbd_bf16 *qkv; /* [batch * t][3c]: q | k | v, head h at columns h * hd .. */
  kbd_bf16 *q;         /* [batch][heads][t][hdp] */
  kbd_bf16 *k, *v;     /* [batch][heads][ctx][hdp]: rows pos0 .. pos0 + t - 1 written */
  int t, heads, hd, hdp, ctx, pos0;
  long long rows; /* batch * t */
} gpt2_qkv_params;

typedef struct gpt2_merge_params {
  const kbd_bf16 *o; /* [batch][heads][t][hdp] */
  kbd_bf16 *y;       /* [batch * t][heads * hd] */
  int t, heads, hd, hdp;
  long long rows;
} gpt2_merge_params;

typedef struct gpt2_sample_params {
  const float *logits; /* [vocab][ld]: the LM head computes logits^T (gpt2.c), so row b's id i is logits[i * ld + b] */
  long long ld;
  int vocab;
  int top_k;         /* 0: the whole vocabulary; else 1..GPT2_TOPK_MAX */
  float temperature; /* 0: greedy (argmax, lowest id on a tie) */
  unsigned long long seed;
  long long step; /* with the seed and the row: the random draw, so a run is reproducible */
  int *out;       /* [batch] the sampled ids */
} gpt2_sample_params;

/* The sampler's uniform draw in [0, 1) for (seed, step, row): splitmix64 of a counter, top 24 bits. The same integer
 * arithmetic on the CPU and the GPU, so a seed reproduces a run on either. */
KBD_HD float gpt2_uniform(unsigned long long seed, long long step, int row) {
  unsigned long long z = seed + 0x9e3779b97f4a7c15ull * (unsigned long long)(step * 1024 + row + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)(z >> 40) * (1.0f / 16777216.0f);
}

KBD_KERNEL_DECL(gpt2_embed, gpt2_embed_params);
KBD_KERNEL_DECL(gpt2_layernorm, gpt2_layernorm_params);
KBD_KERNEL_DECL(gpt2_qkv_split, gpt2_qkv_params);
KBD_KERNEL_DECL(gpt2_merge_heads, gpt2_merge_params);
KBD_KERNEL_DECL(gpt2_sample_rows, gpt2_sample_params);

#endif
