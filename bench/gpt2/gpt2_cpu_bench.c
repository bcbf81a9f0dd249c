/* gpt2_cpu_bench.c - CPU-mode timing of the GPT-2 example (examples/gpt2) on a GPT-2-small-shaped model with random
 * weights: 768 channels, 12 heads, vocab 50257, context 1024, --layers of them (default 12). It writes the checkpoint
 * (bf16 safetensors + config.json) into a temporary folder, loads it, prefills --prompt tokens and decodes --steps
 * tokens greedily, and prints one BENCH line per phase (seconds, tokens/s, seconds per token) and row 0's tokens.
 *
 *   gpt2_cpu_bench [--layers L] [--prompt T] [--steps N] [--batch B] [--profile] [--logits FILE]
 *                  (--profile: a table of the time per op, each launch followed by a device sync; --logits: the
 *                  last step's logits, raw f32 [batch][vocab], to compare two builds of the CPU machine bit for bit)
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
#include "gpt2_random_model.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process (every host thread of the CPU machine): on a shared machine the wall time also counts
 * waiting for a core, this does not */
static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

int main(int argc, char **argv) {
  gpt2_config c = {12, 12, 768, 50257, 1024, 1e-5f};
  int prompt = 16, steps = 16, batch = 1, profile = 0;
  const char *logits_file = NULL;
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
    } else if (i + 1 < argc && !strcmp(argv[i], "--logits")) {
      logits_file = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--smoke] [--layers L] [--prompt T] [--steps N] [--batch B] [--profile] [--logits FILE]\n",
              argv[0]);
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
  /* c_proj 0.02, GPT-2's own initialisation scale: the CPU machine's time does not depend on the values, and nothing
   * here is compared with PyTorch (the GPU bench's 0.08 is tools/gpt2_torch_ref.py's) */
  kbd_status ws = gpt2_random_model_write(dir, &c, 1, 0.02f);
  const int wrote = kbd_ok(ws);
  if (!wrote) fprintf(stderr, "gpt2_cpu_bench: %s\n", ws.msg);
  const double t_write = now_s() - t0;
  gpt2_model *m = NULL;
  kbd_status s = kbd_status_ok();
  double t_load = 0, t_prefill = 0, t_decode = 0, c_prefill = 0, c_decode = 0;
  int *ids = (int *)malloc((size_t)batch * (size_t)prompt * sizeof(int)), next[64], row0[1024];
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
      if (kbd_ok(s) && batch <= 64) row0[st] = next[0];
    }
    if (kbd_ok(s)) s = kbd_device_sync();
    t_decode = now_s() - t, c_decode = cpu_s() - c;
    if (kbd_ok(s) && profile) {
      printf("decode (%d steps, sampling included), time per op:\n", steps);
      gpt2_profile_print(m, stdout);
    }
  }
  if (kbd_ok(s) && logits_file) {
    const size_t n = (size_t)batch * (size_t)c.vocab_size;
    float *l = (float *)malloc(sizeof(float) * n);
    s = l ? gpt2_logits(m, l) : kbd_status_make(KBD_ERR_OOM, "no host memory for the logits");
    FILE *f = kbd_ok(s) ? fopen(logits_file, "wb") : NULL;
    const int wrote_all = f && fwrite(l, sizeof(float), n, f) == n;
    const int closed = !f || fclose(f) == 0;
    if (kbd_ok(s) && !(wrote_all && closed))
      s = kbd_status_make(KBD_ERR_INVALID, "cannot write the logits to %s", logits_file);
    free(l);
  }
  gpt2_free(m);
  free(ids);
  gpt2_random_model_remove(dir);
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
  if (batch <= 64) {
    printf("tokens (row 0):");
    for (int i = 0; i < steps; ++i)
      printf(" %d", row0[i]);
    printf("\n");
  }
  return 0;
}
