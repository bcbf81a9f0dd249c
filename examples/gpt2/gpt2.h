/* gpt2.h - a GPT-2 forward pass built from kbd kernels: load a Hugging Face checkpoint, prefill a prompt, decode
 * one token at a time, sample on the device. docs/gpt2.md maps every op to its kernel.
 *
 *   gpt2_model *m;
 *   gpt2_load(&m, "models/gpt2", max_batch, max_ctx);        all device memory, once
 *   gpt2_prefill(m, batch, t, ids);                           ids [batch][t] (host); logits of each row's last token
 *   gpt2_sample(m, &sampler, step, next);                     next [batch] (host), also kept on the device
 *   gpt2_decode(m, NULL);                                     feeds the tokens just sampled (or ids [batch] from the
 * host) gpt2_free(m);
 *
 * Every call returns a kbd_status; bad input (a missing file, shapes that disagree with config.json, a prompt
 * longer than the planned context, a batch beyond the plan, a token id outside the vocabulary) is an error naming
 * it, and nothing is launched. All rows of a batch have the same length (one prompt length per prefill).
 */
#ifndef GPT2_H
#define GPT2_H

#include <stdio.h>

#include <kbd/tile.h>

#include "gpt2_config.h"

typedef struct gpt2_model gpt2_model;

/* Reads dir/config.json and dir/model.safetensors (HF names, with or without the "transformer." prefix; f32, f16 or
 * bf16), converts the weights once to bf16 in the GEMM's layout (every weight [out][in], K-major, so the tied
 * embedding serves as the LM head's B unchanged) and plans the activations and the KV cache for max_batch rows of
 * max_ctx tokens (max_ctx 0: the config's n_ctx). */
kbd_status gpt2_load(gpt2_model **m, const char *dir, int max_batch, int max_ctx);
void gpt2_free(gpt2_model *m);

const gpt2_config *gpt2_model_config(const gpt2_model *m);
int gpt2_max_batch(const gpt2_model *m);
int gpt2_max_ctx(const gpt2_model *m);
int gpt2_position(const gpt2_model *m); /* tokens in the KV cache per row */
int gpt2_batch(const gpt2_model *m);    /* rows of the current sequence (set by gpt2_prefill) */

/* Starts a new sequence: the KV cache is overwritten from position 0 with ids [batch][t] (host memory), and the
 * logits of each row's last token are computed. */
kbd_status gpt2_prefill(gpt2_model *m, int batch, int t, const int *ids);
/* Appends one token per row (ids [batch] on the host, or NULL: the tokens the last gpt2_sample drew, without a
 * round trip through the host) and computes their logits. */
kbd_status gpt2_decode(gpt2_model *m, const int *ids);

/* The f32 logits of the last step, [batch][vocab] into host memory. */
kbd_status gpt2_logits(const gpt2_model *m, float *out);

typedef struct gpt2_sampler {
  float temperature;       /* 0: greedy */
  int top_k;               /* 0: the whole vocabulary; 1: greedy; up to GPT2_TOPK_MAX (gpt2_kernels.h) */
  unsigned long long seed; /* with the step and the row, the draw: a run is reproducible */
} gpt2_sampler;
/* Draws each row's next token from the last logits on the device; out [batch] (host), or NULL. */
kbd_status gpt2_sample(gpt2_model *m, const gpt2_sampler *s, long long step, int *out);

/* Per-op timing: with on, every launch is followed by a device sync and its time is added to its op (embedding,
 * layernorm, each GEMM, KV-cache write, attention, sampling...), wall and process CPU seconds (the CPU machine's
 * cost on a shared machine); gpt2_profile resets the sums, gpt2_profile_print writes them as a markdown table. Off by
 * default: the syncs serialise the GPU's queue. */
void gpt2_profile(gpt2_model *m, int on);
void gpt2_profile_print(const gpt2_model *m, FILE *f);
/* The same sums one op at a time, for a program's own report (bench/gpt2/gpt2_gpu_bench.c: JSON with microsecond
 * resolution, which the table's seconds lack for a GPU kernel): op i's name, launches, wall and process CPU seconds
 * since the last gpt2_profile. Returns 0 when i is past the last op, 1 otherwise; NULL outputs are skipped. */
int gpt2_profile_op(const gpt2_model *m, int i, const char **name, long long *launches, double *seconds,
                    double *cpu_seconds);

#endif
