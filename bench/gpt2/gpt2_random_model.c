/* gpt2_random_model.c - see gpt2_random_model.h */
#define _DEFAULT_SOURCE 1 /* unlink, rmdir under -std=c11 */
#include "gpt2_random_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpt2_safetensors.h"

unsigned long long gpt2_rm_mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* n bf16 values center + scale * u from a xorshift64 seeded per tensor, so a tensor's values do not depend on the
 * order the tensors are made in */
static unsigned short *gpt2_rm_fill(long long n, unsigned long long seed, int tensor, float center, float scale) {
  unsigned short *v = (unsigned short *)malloc((size_t)n * 2);
  if (!v) return NULL;
  unsigned long long r = gpt2_rm_mix(seed ^ gpt2_rm_mix((unsigned long long)tensor + 1)) | 1ull;
  for (long long i = 0; i < n; ++i) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    const float u = (float)(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
    v[i] = gpt2_st_f32_to_bf16(center + scale * u);
  }
  return v;
}

kbd_status gpt2_random_model_write(const char *dir, const gpt2_config *c, unsigned long long seed, float proj_scale) {
  const int L = c->n_layer, n = 4 + 12 * L;
  const long long C = c->n_embd;
  gpt2_st_out *t = (gpt2_st_out *)calloc((size_t)n, sizeof *t);
  char(*names)[64] = (char(*)[64])calloc((size_t)n, 64);
  kbd_status s = kbd_status_ok();
  if (!t || !names) s = kbd_status_make(KBD_ERR_OOM, "no host memory for the tensor list");
  int k = 0;
#define RM_ADD(nm, nd, d0, d1, center, scale)                                                                          \
  do {                                                                                                                 \
    if (!kbd_ok(s)) break;                                                                                             \
    snprintf(names[k], 64, "%s", nm);                                                                                  \
    t[k].name = names[k], t[k].dtype = GPT2_ST_BF16, t[k].ndim = nd, t[k].shape[0] = d0, t[k].shape[1] = d1;           \
    t[k].data = gpt2_rm_fill((d0) * ((nd) == 2 ? (d1) : 1), seed, k, center, scale);                                   \
    if (!t[k].data) s = kbd_status_make(KBD_ERR_OOM, "no host memory for %s", nm);                                     \
    ++k;                                                                                                               \
  } while (0)
  RM_ADD("wte.weight", 2, (long long)c->vocab_size, C, 0.0f, 0.1f);
  RM_ADD("wpe.weight", 2, (long long)c->n_ctx, C, 0.0f, 0.02f);
  RM_ADD("ln_f.weight", 1, C, 0, 1.0f, 0.1f);
  RM_ADD("ln_f.bias", 1, C, 0, 0.0f, 0.1f);
  for (int l = 0; l < L; ++l) {
    char nm[64];
#define RM_NM(x) (snprintf(nm, sizeof nm, "h.%d.%s", l, x), nm)
    RM_ADD(RM_NM("ln_1.weight"), 1, C, 0, 1.0f, 0.1f);
    RM_ADD(RM_NM("ln_1.bias"), 1, C, 0, 0.0f, 0.1f);
    RM_ADD(RM_NM("attn.c_attn.weight"), 2, C, 3 * C, 0.0f, 0.05f);
    RM_ADD(RM_NM("attn.c_attn.bias"), 1, 3 * C, 0, 0.0f, 0.02f);
    RM_ADD(RM_NM("attn.c_proj.weight"), 2, C, C, 0.0f, proj_scale);
    RM_ADD(RM_NM("attn.c_proj.bias"), 1, C, 0, 0.0f, 0.02f);
    RM_ADD(RM_NM("ln_2.weight"), 1, C, 0, 1.0f, 0.1f);
    RM_ADD(RM_NM("ln_2.bias"), 1, C, 0, 0.0f, 0.1f);
    RM_ADD(RM_NM("mlp.c_fc.weight"), 2, C, 4 * C, 0.0f, 0.05f);
    RM_ADD(RM_NM("mlp.c_fc.bias"), 1, 4 * C, 0, 0.0f, 0.02f);
    RM_ADD(RM_NM("mlp.c_proj.weight"), 2, 4 * C, C, 0.0f, proj_scale);
    RM_ADD(RM_NM("mlp.c_proj.bias"), 1, C, 0, 0.0f, 0.02f);
#undef RM_NM
  }
#undef RM_ADD
  char path[4200];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  if (kbd_ok(s)) s = gpt2_st_write(path, t, k);
  if (kbd_ok(s)) s = gpt2_config_write(c, dir);
  for (int i = 0; t && i < k; ++i)
    free((void *)t[i].data);
  free(t), free(names);
  return s;
}

void gpt2_random_model_remove(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/model.safetensors", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/config.json", dir);
  unlink(p);
  rmdir(dir);
}
