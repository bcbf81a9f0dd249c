/* main.c - the gpt2 program: generate from a Hugging Face GPT-2 folder with the kbd forward pass (gpt2.h).
 *
 *   gpt2 --model DIR [--prompt "text" | --tokens 15496,11,...] [--steps N] [--temperature T] [--top-k K]
 *        [--seed S] [--batch B]
 *
 * DIR holds config.json and model.safetensors, and vocab.json + merges.txt for --prompt and for text output (with
 * --tokens and no tokenizer the ids are printed). The memory is planned for B rows of prompt + N tokens. Row 0's
 * tokens are streamed as they are drawn; every row is printed at the end, then the prefill and decode tokens/s.
 * --dump FILE writes the prefill's logits (raw f32 [batch][vocab]) for tests/gpu's CPU-vs-GPU comparison. Without
 * --model the program writes a random 2-layer checkpoint to a temporary folder and runs it (tools/run-examples.sh
 * runs every example with no arguments; the GPU test runs the same demo on both sides of the comparison).
 * Bad input is a message and exit 2 (usage) or 1 (a model or run error).
 */
#define _DEFAULT_SOURCE 1 /* clock_gettime, mkdtemp under -std=c11 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpt2.h"
#include "gpt2_safetensors.h"
#include "gpt2_tokenizer.h"

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s --model DIR [--prompt \"text\" | --tokens ID,ID,...] [--steps N (16)] [--temperature T (0: "
          "greedy)] [--top-k K (0: all)] [--seed S (1)] [--batch B (1)] [--dump FILE (the prefill's logits, raw "
          "f32)]\n       without --model: a random 2-layer demo checkpoint, --tokens 1,2,3,4 --steps 8 --batch 2\n",
          argv0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  const long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "gpt2: %s '%s': an integer in %lld .. %lld\n", opt, s, lo, hi);
    return 0;
  }
  *out = v;
  return 1;
}

/* "15496,11,..." -> ids (malloc'd). */
static int parse_tokens(const char *s, int **ids, int *n) {
  int cap = 16, k = 0;
  int *v = (int *)malloc((size_t)cap * sizeof(int));
  if (!v) return 0;
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    const long long x = strtoll(p, &end, 10);
    if (errno || end == p || x < 0 || x > INT_MAX || (*end && *end != ',')) {
      fprintf(stderr, "gpt2: --tokens '%s': a comma-separated list of ids >= 0 (bad at '%s')\n", s, p);
      free(v);
      return 0;
    }
    if (k == cap) {
      int *w = (int *)realloc(v, (size_t)(cap *= 2) * sizeof(int));
      if (!w) {
        free(v);
        return 0;
      }
      v = w;
    }
    v[k++] = (int)x;
    p = *end ? end + 1 : end;
    if (*end && !*p) {
      fprintf(stderr, "gpt2: --tokens '%s': a trailing comma\n", s);
      free(v);
      return 0;
    }
  }
  if (k == 0) {
    fprintf(stderr, "gpt2: --tokens is empty\n");
    free(v);
    return 0;
  }
  *ids = v, *n = k;
  return 1;
}

/* With no arguments (tools/run-examples.sh runs every example so): a random checkpoint of GPT-2's layout, 2 layers of
 * 128 channels, written to a temporary folder through the same safetensors writer a user's conversion would use. */
static unsigned long long demo_rng = 0x2545f4914f6cdd1dull;
static unsigned short *demo_fill(long long n, float center, float scale) {
  unsigned short *v = (unsigned short *)malloc((size_t)n * 2);
  for (long long i = 0; v && i < n; ++i) {
    demo_rng ^= demo_rng << 13, demo_rng ^= demo_rng >> 7, demo_rng ^= demo_rng << 17;
    v[i] = gpt2_st_f32_to_bf16(center + scale * ((float)(demo_rng >> 40) * (2.0f / 16777216.0f) - 1.0f));
  }
  return v;
}
static kbd_status demo_write(const char *dir) {
  const gpt2_config c = {2, 2, 128, 512, 64, 1e-5f};
  const long long C = c.n_embd;
  gpt2_st_out t[4 + 12 * 2];
  char names[4 + 12 * 2][48];
  int k = 0, ok = 1;
  memset(t, 0, sizeof t);
#define DEMO_ADD(nd, d0, d1, center, scale)                                                                            \
  do {                                                                                                                 \
    t[k].name = names[k], t[k].dtype = GPT2_ST_BF16, t[k].ndim = nd, t[k].shape[0] = d0, t[k].shape[1] = d1;           \
    ok &= (t[k].data = demo_fill((d0) * ((nd) == 2 ? (d1) : 1), center, scale)) != NULL;                               \
    ++k;                                                                                                               \
  } while (0)
  snprintf(names[k], 48, "wte.weight");
  DEMO_ADD(2, c.vocab_size, C, 0.0f, 0.5f);
  snprintf(names[k], 48, "wpe.weight");
  DEMO_ADD(2, c.n_ctx, C, 0.0f, 0.1f);
  snprintf(names[k], 48, "ln_f.weight");
  DEMO_ADD(1, C, 0, 1.0f, 0.1f);
  snprintf(names[k], 48, "ln_f.bias");
  DEMO_ADD(1, C, 0, 0.0f, 0.1f);
  for (int l = 0; l < c.n_layer; ++l) {
    static const char *const w[12] = {
        "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
        "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight",    "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias"};
    static const int rows[12] = {1, 1, 1, 3, 1, 1, 1, 1, 1, 4, 4, 1}, cols[12] = {0, 0, 3, 0, 1, 0, 0, 0, 4, 0, 1, 0};
    for (int i = 0; i < 12; ++i) {
      snprintf(names[k], 48, "h.%d.%s", l, w[i]);
      const float center = i == 0 || i == 6 ? 1.0f : 0.0f, scale = cols[i] ? 0.15f : 0.1f;
      if (cols[i])
        DEMO_ADD(2, rows[i] * C, cols[i] * C, center, scale);
      else
        DEMO_ADD(1, rows[i] * C, 0, center, scale);
    }
  }
#undef DEMO_ADD
  char path[600];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  kbd_status s = ok ? gpt2_st_write(path, t, k) : kbd_status_make(KBD_ERR_OOM, "gpt2: no host memory for the demo");
  if (kbd_ok(s)) s = gpt2_config_write(&c, dir);
  for (int i = 0; i < k; ++i)
    free((void *)t[i].data);
  return s;
}
static void demo_remove(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/config.json", dir);
  remove(path);
  rmdir(dir);
}

static void print_token(const gpt2_tokenizer *tok, int id) {
  size_t len = 0;
  const char *b = tok ? gpt2_tok_bytes(tok, id, &len) : NULL;
  if (b)
    fwrite(b, 1, len, stdout);
  else
    printf("[%d]", id);
}

static int run(int argc, char **argv);

int main(int argc, char **argv) {
  int has_model = 0;
  for (int i = 1; i < argc; ++i)
    has_model |= !strcmp(argv[i], "--model") || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
  if (has_model) return run(argc, argv);
  /* no --model: the demo checkpoint, with the caller's other options after the demo's (a later option wins) */
  char dir[] = "/tmp/gpt2_demo_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("gpt2: mkdtemp");
    return 1;
  }
  const kbd_status s = demo_write(dir);
  char **args = (char **)malloc((size_t)(argc + 10) * sizeof(char *));
  if (!kbd_ok(s) || !args) {
    fprintf(stderr, "gpt2: %s\n", kbd_ok(s) ? "no host memory" : s.msg);
    demo_remove(dir);
    free(args);
    return 1;
  }
  printf("gpt2: no --model: a random 2-layer checkpoint in %s (--model DIR runs a real one; --help)\n", dir);
  char *demo[] = {argv[0], "--model", dir, "--tokens", "1,2,3,4", "--steps", "8", "--batch", "2"};
  int n = 0;
  for (int i = 0; i < 9; ++i)
    args[n++] = demo[i];
  for (int i = 1; i < argc; ++i)
    args[n++] = argv[i];
  args[n] = NULL;
  const int rc = run(n, args);
  demo_remove(dir);
  free(args);
  return rc;
}

static int run(int argc, char **argv) {
  const char *dir = NULL, *prompt = NULL, *tokens = NULL, *dump = NULL;
  long long steps = 16, top_k = 0, seed = 1, batch = 1;
  double temperature = 0.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(argv[0]);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "gpt2: %s needs a value\n", a);
      usage(argv[0]);
      return 2;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--model"))
      dir = v;
    else if (!strcmp(a, "--prompt"))
      prompt = v;
    else if (!strcmp(a, "--tokens"))
      tokens = v;
    else if (!strcmp(a, "--dump"))
      dump = v;
    else if (!strcmp(a, "--steps")) {
      if (!parse_ll(a, v, 0, 1 << 20, &steps)) return 2;
    } else if (!strcmp(a, "--top-k")) {
      if (!parse_ll(a, v, 0, 1 << 20, &top_k)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!parse_ll(a, v, 0, LLONG_MAX, &seed)) return 2;
    } else if (!strcmp(a, "--batch")) {
      if (!parse_ll(a, v, 1, 1 << 16, &batch)) return 2;
    } else if (!strcmp(a, "--temperature")) {
      char *end;
      temperature = strtod(v, &end);
      if (end == v || *end || !(temperature >= 0.0) || temperature > 1e6) {
        fprintf(stderr, "gpt2: --temperature '%s': a number >= 0 (0: greedy)\n", v);
        return 2;
      }
    } else {
      fprintf(stderr, "gpt2: unknown option '%s'\n", a);
      usage(argv[0]);
      return 2;
    }
  }
  if (!dir || (!prompt) == (!tokens)) {
    fprintf(stderr, "gpt2: give --model and one of --prompt or --tokens\n");
    usage(argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("gpt2: no CUDA device present; nothing to run\n");
    return 77;
  }

  gpt2_tokenizer *tok = NULL;
  kbd_status s = gpt2_tok_load(&tok, dir);
  if (!kbd_ok(s)) {
    tok = NULL;
    if (prompt) {
      fprintf(stderr, "gpt2: --prompt needs the tokenizer: %s\n", s.msg);
      return 1;
    }
  }
  int *ids = NULL, n = 0;
  if (prompt) {
    s = gpt2_tok_encode(tok, prompt, strlen(prompt), &ids, &n);
    if (!kbd_ok(s)) {
      fprintf(stderr, "gpt2: %s\n", s.msg);
      gpt2_tok_free(tok);
      return 1;
    }
    if (n == 0) {
      fprintf(stderr, "gpt2: --prompt encodes to no tokens\n");
      gpt2_tok_free(tok);
      return 2;
    }
  } else if (!parse_tokens(tokens, &ids, &n)) {
    gpt2_tok_free(tok);
    return 2;
  }

  gpt2_config cfg;
  if (!kbd_ok(s = gpt2_config_load(&cfg, dir))) {
    fprintf(stderr, "gpt2: %s\n", s.msg);
    return 1;
  }
  if ((long long)n + steps > cfg.n_ctx) {
    fprintf(stderr, "gpt2: %d prompt tokens + %lld steps = %lld: past the model's context of %d tokens\n", n, steps,
            (long long)n + steps, cfg.n_ctx);
    return 1;
  }
  for (int i = 0; i < n; ++i)
    if (ids[i] >= cfg.vocab_size) {
      fprintf(stderr, "gpt2: prompt token %d is id %d: outside the vocabulary 0 .. %d\n", i, ids[i],
              cfg.vocab_size - 1);
      return 1;
    }
  gpt2_model *m = NULL;
  const double t0 = now_s();
  /* the plan: the prompt and the steps, no more (max_ctx 0 would plan n_ctx) */
  if (!kbd_ok(s = gpt2_load(&m, dir, (int)batch, n + (int)steps > 0 ? n + (int)steps : 1))) {
    fprintf(stderr, "%s\n", s.msg);
    free(ids);
    gpt2_tok_free(tok);
    return 1;
  }
  const double t_load = now_s() - t0;
  int *all = (int *)malloc((size_t)batch * (size_t)n * sizeof(int));
  int *gen = (int *)malloc((size_t)batch * (size_t)(steps + 1) * sizeof(int));
  int *next = (int *)malloc((size_t)batch * sizeof(int));
  if (!all || !gen || !next) {
    fprintf(stderr, "gpt2: no host memory\n");
    return 1;
  }
  for (long long b = 0; b < batch; ++b)
    memcpy(all + b * n, ids, (size_t)n * sizeof(int));
  gpt2_sampler smp;
  smp.temperature = (float)temperature, smp.top_k = (int)top_k, smp.seed = (unsigned long long)seed;

  for (int i = 0; i < n; ++i)
    print_token(tok, ids[i]);
  fflush(stdout);
  double t_prefill = 0.0, t_decode = 0.0;
  const double tp = now_s();
  s = gpt2_prefill(m, (int)batch, n, all);
  if (kbd_ok(s)) s = kbd_device_sync();
  t_prefill = now_s() - tp;
  if (kbd_ok(s) && dump) { /* the prefill's logits, raw f32 [batch][vocab]: tests/gpu compares CPU and GPU runs */
    float *lg = (float *)malloc((size_t)batch * (size_t)cfg.vocab_size * sizeof(float));
    FILE *f = lg ? fopen(dump, "wb") : NULL;
    if (lg) s = gpt2_logits(m, lg);
    if (!f || !kbd_ok(s) ||
        fwrite(lg, sizeof(float), (size_t)batch * (size_t)cfg.vocab_size, f) != (size_t)batch * (size_t)cfg.vocab_size)
      s = kbd_ok(s) ? kbd_status_make(KBD_ERR_INVALID, "gpt2: --dump %s: cannot write it", dump) : s;
    if (f && fclose(f) != 0 && kbd_ok(s))
      s = kbd_status_make(KBD_ERR_INVALID, "gpt2: --dump %s: cannot write it", dump);
    free(lg);
  }
  const double td = now_s();
  for (long long st = 0; kbd_ok(s) && st < steps; ++st) {
    if (st > 0) s = gpt2_decode(m, NULL); /* the tokens gpt2_sample just drew, still on the device */
    if (kbd_ok(s)) s = gpt2_sample(m, &smp, st, next);
    if (!kbd_ok(s)) break;
    for (long long b = 0; b < batch; ++b)
      gen[b * steps + st] = next[b];
    print_token(tok, next[0]);
    fflush(stdout);
  }
  t_decode = now_s() - td;
  printf("\n");
  if (!kbd_ok(s)) {
    fprintf(stderr, "%s\n", s.msg);
    gpt2_free(m);
    return 1;
  }
  printf("prompt:");
  for (int i = 0; i < n; ++i)
    printf("%s%d", i ? "," : " ", ids[i]);
  printf("\n");
  for (long long b = 0; batch > 1 && b < batch; ++b) {
    printf("row %lld:", b);
    for (long long st = 0; st < steps; ++st)
      printf(" %d", gen[b * steps + st]);
    printf("\n");
  }
  printf("tokens:");
  for (long long st = 0; st < steps; ++st)
    printf("%s%d", st ? "," : " ", gen[st]);
  printf("\n");
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("gpt2 (%s): load %.2f s; prefill %lld x %d tokens %.3f s = %.1f tokens/s; decode %lld x %lld tokens %.3f s "
         "= %.1f tokens/s\n",
         mode, t_load, batch, n, t_prefill, (double)(batch * n) / t_prefill, batch, steps, t_decode,
         steps ? (double)(batch * steps) / t_decode : 0.0);
  gpt2_free(m);
  free(all), free(gen), free(next), free(ids);
  gpt2_tok_free(tok);
  return 0;
}
