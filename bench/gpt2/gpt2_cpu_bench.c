/* gpt2_cpu_bench.c - CPU-mode timing of the GPT-2 example (examples/gpt2) on a GPT-2-small-shaped model with random
 * weights: 768 channels, 12 heads, vocab 50257, context 1024, --layers of them (default 12). It writes the checkpoint
 * (bf16 safetensors + config.json) into a temporary folder, loads it, prefills --prompt tokens and decodes --steps
 * tokens greedily, and prints one BENCH line per phase (seconds, tokens/s, seconds per token).
 *
 *   gpt2_cpu_bench [--layers L] [--prompt T] [--steps N] [--batch B] [--profile]   (--profile: a table of the
 *                  time per op, each launch followed by a device sync)
 *   gpt2_cpu_bench --smoke      (1 layer of 64 channels, vocab 300: the ctest smoke run)
 */
#define _DEFAULT_SOURCE 1 /* clock_gettime, mkdtemp under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpt2.h"
#include "gpt2_config.h"
#include "gpt2_safetensors.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process (every host thread of the CPU machine): on a shared machine the wall time also counts
 * waiting for a core, this does not */
static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

static unsigned long long rng = 88172645463325252ull;
/* n bf16 values center + scale * u, u uniform in [-1, 1) */
static unsigned short *fill(long long n, float center, float scale) {
  unsigned short *v = (unsigned short *)malloc((size_t)n * 2);
  if (!v) return NULL;
  for (long long i = 0; i < n; ++i) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    const float u = (float)(rng >> 40) * (2.0f / 16777216.0f) - 1.0f;
    v[i] = gpt2_st_f32_to_bf16(center + scale * u);
  }
  return v;
}

static int write_model(const char *dir, const gpt2_config *c) {
  const int L = c->n_layer, n = 4 + 12 * L;
  const long long C = c->n_embd;
  gpt2_st_out *t = (gpt2_st_out *)calloc((size_t)n, sizeof *t);
  char(*names)[64] = (char(*)[64])calloc((size_t)n, 64);
  if (!t || !names) return 0;
  int k = 0, ok = 1;
#define ADD(nm, nd, d0, d1, center, scale)                                                                             \
  do {                                                                                                                 \
    snprintf(names[k], 64, "%s", nm);                                                                                  \
    t[k].name = names[k], t[k].dtype = GPT2_ST_BF16, t[k].ndim = nd, t[k].shape[0] = d0, t[k].shape[1] = d1;           \
    t[k].data = fill((d0) * ((nd) == 2 ? (d1) : 1), center, scale);                                                    \
    ok &= t[k].data != NULL;                                                                                           \
    ++k;                                                                                                               \
  } while (0)
  ADD("wte.weight", 2, c->vocab_size, C, 0.0f, 0.1f);
  ADD("wpe.weight", 2, c->n_ctx, C, 0.0f, 0.02f);
  ADD("ln_f.weight", 1, C, 0, 1.0f, 0.1f);
  ADD("ln_f.bias", 1, C, 0, 0.0f, 0.1f);
  for (int l = 0; l < L; ++l) {
    char nm[64];
#define NM(s) (snprintf(nm, sizeof nm, "h.%d.%s", l, s), nm)
    ADD(NM("ln_1.weight"), 1, C, 0, 1.0f, 0.1f);
    ADD(NM("ln_1.bias"), 1, C, 0, 0.0f, 0.1f);
    ADD(NM("attn.c_attn.weight"), 2, C, 3 * C, 0.0f, 0.05f);
    ADD(NM("attn.c_attn.bias"), 1, 3 * C, 0, 0.0f, 0.02f);
    ADD(NM("attn.c_proj.weight"), 2, C, C, 0.0f, 0.02f);
    ADD(NM("attn.c_proj.bias"), 1, C, 0, 0.0f, 0.02f);
    ADD(NM("ln_2.weight"), 1, C, 0, 1.0f, 0.1f);
    ADD(NM("ln_2.bias"), 1, C, 0, 0.0f, 0.1f);
    ADD(NM("mlp.c_fc.weight"), 2, C, 4 * C, 0.0f, 0.05f);
    ADD(NM("mlp.c_fc.bias"), 1, 4 * C, 0, 0.0f, 0.02f);
    ADD(NM("mlp.c_proj.weight"), 2, 4 * C, C, 0.0f, 0.02f);
    ADD(NM("mlp.c_proj.bias"), 1, C, 0, 0.0f, 0.02f);
#undef NM
  }
#undef ADD
  char path[512];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  kbd_status s = kbd_status_ok();
  if (ok) s = gpt2_st_write(path, t, k);
  if (ok && kbd_ok(s)) s = gpt2_config_write(c, dir);
  if (!kbd_ok(s)) fprintf(stderr, "gpt2_cpu_bench: %s\n", s.msg);
  for (int i = 0; i < k; ++i)
    free((void *)t[i].data);
  free(t), free(names);
  return ok && kbd_ok(s);
}

int main(int argc, char **argv) {
  gpt2_config c = {12, 12, 768, 50257, 1024, 1e-5f};
  int prompt = 16, steps = 16, batch = 1, profile = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--smoke")) {
      c.n_layer = 1, c.n_head = 1, c.n_embd = 64, c.vocab_size = 300, c.n_ctx = 64, prompt = 4, steps = 2;
    } else if (!strcmp(argv[i], "--profile")) {
      profile = 1;
    } else if (i + 1 < argc && !strcmp(argv[i], "--layers")) {
      c.n_layer = atoi(argv[++i]);
    } else if (i + 1 < argc && !strcmp(argv[i], "--prompt")) {
      prompt = atoi(argv[++i]);
    } else if (i + 1 < argc && !strcmp(argv[i], "--steps")) {
      steps = atoi(argv[++i]);
    } else if (i + 1 < argc && !strcmp(argv[i], "--batch")) {
      batch = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--smoke] [--layers L] [--prompt T] [--steps N] [--batch B] [--profile]\n", argv[0]);
      return 2;
    }
  }
  if (c.n_layer < 1 || prompt < 1 || steps < 1 || batch < 1 || prompt + steps > c.n_ctx) {
    fprintf(stderr, "gpt2_cpu_bench: layers, prompt, steps, batch >= 1 and prompt + steps <= %d\n", c.n_ctx);
    return 2;
  }
  char dir[] = "/tmp/gpt2_bench_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  const double t0 = now_s();
  const int wrote = write_model(dir, &c);
  const double t_write = now_s() - t0;
  gpt2_model *m = NULL;
  kbd_status s = kbd_status_ok();
  double t_load = 0, t_prefill = 0, t_decode = 0, c_prefill = 0, c_decode = 0;
  int *ids = (int *)malloc((size_t)batch * (size_t)prompt * sizeof(int)), next[64];
  if (wrote && ids) {
    for (int i = 0; i < batch * prompt; ++i)
      ids[i] = (i * 7919 + 13) % c.vocab_size;
    double t = now_s();
    s = gpt2_load(&m, dir, batch, prompt + steps);
    t_load = now_s() - t;
    const gpt2_sampler greedy = {0.0f, 0, 0};
    t = now_s();
    double c = cpu_s();
    if (kbd_ok(s) && profile) gpt2_profile(m, 1);
    if (kbd_ok(s)) s = gpt2_prefill(m, batch, prompt, ids);
    if (kbd_ok(s)) s = kbd_device_sync();
    t_prefill = now_s() - t, c_prefill = cpu_s() - c;
    if (kbd_ok(s) && profile) {
      printf("prefill, time per op (a device sync after each launch):\n");
      gpt2_profile_print(m, stdout);
      gpt2_profile(m, 1);
    }
    t = now_s(), c = cpu_s();
    for (int st = 0; kbd_ok(s) && st < steps; ++st) {
      if (st > 0) s = gpt2_decode(m, NULL);
      if (kbd_ok(s)) s = gpt2_sample(m, &greedy, st, batch <= 64 ? next : NULL);
    }
    if (kbd_ok(s)) s = kbd_device_sync();
    t_decode = now_s() - t, c_decode = cpu_s() - c;
    if (kbd_ok(s) && profile) {
      printf("decode (%d steps, sampling included), time per op:\n", steps);
      gpt2_profile_print(m, stdout);
    }
  }
  gpt2_free(m);
  free(ids);
  char p[600];
  snprintf(p, sizeof p, "%s/model.safetensors", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/config.json", dir);
  unlink(p);
  rmdir(dir);
  if (!wrote || !kbd_ok(s)) {
    if (!kbd_ok(s)) fprintf(stderr, "gpt2_cpu_bench: %s\n", s.msg);
    return 1;
  }
  printf("gpt2 CPU mode: %d layers x %d channels, %d heads, vocab %d; batch %d, %d prompt + %d generated tokens\n",
         c.n_layer, c.n_embd, c.n_head, c.vocab_size, batch, prompt, steps);
  printf("BENCH gpt2_cpu write_s=%.2f load_s=%.2f\n", t_write, t_load);
  printf("BENCH gpt2_cpu prefill_s=%.2f cpu_s=%.2f tokens_per_s=%.2f\n", t_prefill, c_prefill,
         batch * prompt / t_prefill);
  /* the first token comes from the prefill's logits: steps tokens need steps - 1 decode forwards */
  const int fwd = steps > 1 ? steps - 1 : 1;
  printf("BENCH gpt2_cpu decode_s=%.2f cpu_s=%.2f tokens_per_s=%.3f s_per_forward=%.2f cpu_s_per_forward=%.2f\n",
         t_decode, c_decode, batch * steps / t_decode, t_decode / fwd, c_decode / fwd);
  return 0;
}
