/* gpt2_random_model.h - the GPT-2 benchmarks' random checkpoint (gpt2_cpu_bench.c, gpt2_gpu_bench.c): seeded
 * uniform weights of a given config written as a real bf16 safetensors file + config.json, so the benchmarks time the
 * example's own loader and forward pass without a downloaded checkpoint.
 */
#ifndef GPT2_RANDOM_MODEL_H
#define GPT2_RANDOM_MODEL_H

#include "gpt2_config.h"

/* splitmix64 (also the GPU bench's prompt ids, mirrored by tools/gpt2_torch_ref.py) */
unsigned long long gpt2_rm_mix(unsigned long long x);

/* Writes dir/model.safetensors (bf16, the Hugging Face names, Conv1D weights [in][out]) and dir/config.json. Each
 * tensor is center + scale * u with u uniform in [-1, 1) from (seed, the tensor's index): wte 0.1, wpe 0.02,
 * c_attn and c_fc 0.05, both c_proj weights proj_scale, biases 0.02, layernorm weights 1 +- 0.1 and biases 0 +- 0.1.
 * proj_scale is a parameter because the two benchmarks want different ones (docs/gpt2.md "Benchmarks"). */
kbd_status gpt2_random_model_write(const char *dir, const gpt2_config *c, unsigned long long seed, float proj_scale);

/* Removes what gpt2_random_model_write wrote, and dir itself when it is then empty. */
void gpt2_random_model_remove(const char *dir);

#endif
