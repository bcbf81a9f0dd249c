/* gpt2_gpu_bench.c - GPT-2 (examples/gpt2) prefill and decode throughput on the GPU, the figures that sit beside
 * PyTorch's (tools/gpt2_torch_ref.py: the same shapes, the same timing, the same JSON fields) in the GPU check's gpt2
 * stage (tools/gpu-check.sh) and docs/gpt2.md "Benchmarks". Built as gpt2_bench_sm90a / gpt2_bench_sm100a, and as
 * gpt2_bench_cpu on the CPU machine (the same program logic on a tiny model: the ctest).
 *
 *   gpt2_bench_<arch> [--model tiny|124M|355M|774M|1558M] [--layers L] [--seed S]
 *                     [--prefill BxT,...] [--decode B,...] [--context C] [--steps N] [--warmup W] [--reps R]
 *                     [--cap S] [--budget S] [--profile] [--profile-prefill BxT] [--profile-decode B]
 *                     [--greedy N] [--weights DIR] [--json FILE]
 *
 * The model: GPT-2's shapes with seeded random weights (no checkpoint needed). They reach the device through the
 * example's own loader, so what is timed is exactly what `gpt2` runs: the weights are written once as a bf16
 * safetensors file + config.json (into --weights DIR, kept for tools/gpt2_torch_ref.py --weights; else a temporary
 * folder, removed) and gpt2_load plans the memory for the largest batch and context asked for.
 *
 * Timing (the same in the torch script): CUDA events around each call on the default stream (the CPU machine: the
 * wall clock after a device sync), --warmup untimed calls first, then --reps timed calls; a figure is their median.
 *   prefill  gpt2_prefill of B rows of T tokens (embedding to the LM head's logits of each row's last token):
 *            tokens/s = B*T / median
 *   decode   after a prefill of --context tokens and --warmup steps, --steps steps each timed alone: gpt2_decode of
 *            the token just sampled + greedy gpt2_sample on the device: tokens/s = B / median step
 * --cap S stops a configuration's timed calls after S seconds of them (at least one); --budget S skips the
 * configurations that start after S seconds of the run (listed as skipped): a bounded stage on a lent GPU.
 * --profile: one prefill (--profile-prefill, default 1x1024 or the model's context) and one decode step
 * (--profile-decode B, default 1) with gpt2_profile on (a device sync after each launch: the per-op times include
 * a launch and a sync each, so they sum to more than the unprofiled median - both are in the JSON).
 * --greedy N: two rows of 8 seeded prompt tokens, N greedy tokens each, in the JSON for the torch script's check.
 *
 * Output: a readable table and BENCH lines on stdout, and with --json the figures as one JSON object. Exit 0; 1 on
 * a failed call (its message); 2 on bad arguments; 77 without a CUDA device of this program's arch.
 */
#define _DEFAULT_SOURCE 1 /* clock_gettime, mkdtemp under -std=c11 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpt2.h"
#include "gpt2_config.h"
#include "gpt2_random_model.h"
#include "gpt2_safetensors.h"

#define GB_MAX_CFG 16
#define GB_MAX_REPS 1000
#define GB_GREEDY_ROWS 2
#define GB_GREEDY_PROMPT 8
#define GB_GREEDY_MAX 64
#define GB_PROJ_SCALE 0.08f /* the c_proj weights' scale (gpt2_random_model.h) */

static double gb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int gb_fail(const char *what, kbd_status s) {
  fprintf(stderr, "gpt2_bench: %s: %s\n", what, s.msg);
  return 1;
}

/* ---- timing: CUDA events on the GPU, the wall clock between device syncs on the CPU machine ------------------- */

typedef struct gb_timer {
#if KBD_MODE_CPU
  double t0;
#else
  cudaEvent_t e0, e1;
#endif
} gb_timer;

static kbd_status gb_timer_init(gb_timer *t) {
#if KBD_MODE_CPU
  t->t0 = 0.0;
  return kbd_status_ok();
#else
  if (cudaEventCreate(&t->e0) != cudaSuccess || cudaEventCreate(&t->e1) != cudaSuccess)
    return kbd_status_make(KBD_ERR_CUDA, "cudaEventCreate failed");
  return kbd_status_ok();
#endif
}
static void gb_timer_free(gb_timer *t) {
#if KBD_MODE_CPU
  (void)t;
#else
  cudaEventDestroy(t->e0);
  cudaEventDestroy(t->e1);
#endif
}
static kbd_status gb_timer_start(gb_timer *t) {
#if KBD_MODE_CPU
  kbd_status s = kbd_device_sync();
  t->t0 = gb_now();
  return s;
#else
  /* the default stream, where every gpt2 launch goes: the events bracket the GPU's own work, not the host's */
  if (cudaEventRecord(t->e0, 0) != cudaSuccess) return kbd_status_make(KBD_ERR_CUDA, "cudaEventRecord failed");
  return kbd_status_ok();
#endif
}
static kbd_status gb_timer_stop(gb_timer *t, double *ms) {
#if KBD_MODE_CPU
  kbd_status s = kbd_device_sync();
  *ms = 1e3 * (gb_now() - t->t0);
  return s;
#else
  float f = 0.0f;
  if (cudaEventRecord(t->e1, 0) != cudaSuccess || cudaEventSynchronize(t->e1) != cudaSuccess ||
      cudaEventElapsedTime(&f, t->e0, t->e1) != cudaSuccess)
    return kbd_status_make(KBD_ERR_CUDA, "timing with CUDA events failed: %s", cudaGetErrorString(cudaGetLastError()));
  *ms = (double)f;
  return kbd_status_ok();
#endif
}

static int gb_cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double gb_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, gb_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- the random model ----------------------------------------------------------------------------------------- */

typedef struct gb_model_shape {
  const char *name;
  gpt2_config c;
} gb_model_shape;
/* GPT-2's released sizes (Hugging Face config.json) and a tiny one for the CPU machine */
static const gb_model_shape gb_shapes[] = {
    {"tiny", {2, 4, 64, 300, 64, 1e-5f}},          {"124M", {12, 12, 768, 50257, 1024, 1e-5f}},
    {"355M", {24, 16, 1024, 50257, 1024, 1e-5f}},  {"774M", {36, 20, 1280, 50257, 1024, 1e-5f}},
    {"1558M", {48, 25, 1600, 50257, 1024, 1e-5f}},
};

/* Seeded prompt ids, the same formula as tools/gpt2_torch_ref.py's prompt_ids: row r, position i. */
static int gb_prompt_id(unsigned long long seed, int r, int i, int vocab) {
  return (int)(gpt2_rm_mix(seed * 1000003ull + (unsigned long long)r * 65537ull + (unsigned long long)i) %
               (unsigned long long)vocab);
}

/* ---- arguments ------------------------------------------------------------------------------------------------ */

typedef struct gb_args {
  const char *model, *json, *weights;
  int layers;
  unsigned long long seed;
  int nprefill, pb[GB_MAX_CFG], pt[GB_MAX_CFG];
  int ndecode, db[GB_MAX_CFG];
  int context, steps, warmup, reps;
  double cap, budget;
  int profile, prof_b, prof_t, prof_db;
  int greedy;
} gb_args;

static void gb_usage(FILE *f) {
  fprintf(f, "usage: gpt2_bench [--model tiny|124M|355M|774M|1558M] [--layers L] [--seed S]\n"
             "                  [--prefill BxT,...] [--decode B,...] [--context C] [--steps N] [--warmup W]\n"
             "                  [--reps R] [--cap S] [--budget S] [--profile] [--profile-prefill BxT]\n"
             "                  [--profile-decode B] [--greedy N] [--weights DIR] [--json FILE]\n");
}

/* a positive int from the whole of text */
static int gb_int(const char *text, int *out) {
  char *end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < 1 || v > 1000000) return 0;
  *out = (int)v;
  return 1;
}
static int gb_bxt(const char *text, int *b, int *t) {
  char buf[64];
  const char *x = strchr(text, 'x');
  if (!x || (size_t)(x - text) >= sizeof buf) return 0;
  memcpy(buf, text, (size_t)(x - text));
  buf[x - text] = 0;
  return gb_int(buf, b) && gb_int(x + 1, t);
}
/* comma list: each item through one (BxT) or the other (B) parser */
static int gb_list(const char *text, int pairs, int *n, int *a, int *b) {
  char buf[512];
  const size_t len = strlen(text);
  /* strtok_r would skip an empty item: "1x8," is a typo, not a list of one */
  if (len == 0 || len >= sizeof buf || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,")) return 0;
  snprintf(buf, sizeof buf, "%s", text);
  *n = 0;
  for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
    if (*n == GB_MAX_CFG) return 0;
    if (!(pairs ? gb_bxt(it, &a[*n], &b[*n]) : gb_int(it, &a[*n]))) return 0;
    ++*n;
  }
  return *n > 0;
}
static int gb_double(const char *text, double *out) {
  char *end = NULL;
  const double v = strtod(text, &end);
  if (end == text || *end || !(v > 0.0) || v > 1e7) return 0;
  *out = v;
  return 1;
}

/* 0 on success; 2 with a message on bad arguments */
static int gb_parse(int argc, char **argv, gb_args *a) {
  memset(a, 0, sizeof *a);
  a->model = "124M", a->seed = 1234, a->cap = 10.0, a->budget = 1e7;
  int have_prefill = 0, have_decode = 0, have_ctx = 0, have_steps = 0, have_warm = 0, have_reps = 0, have_pp = 0;
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1, takes = 1;
    if (!strcmp(o, "--profile")) {
      a->profile = 1, takes = 0;
    } else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
      gb_usage(stdout);
      exit(0);
    } else if (!v) {
      fprintf(stderr, "gpt2_bench: %s needs a value (or is unknown)\n", o);
      return 2;
    } else if (!strcmp(o, "--model")) {
      a->model = v;
    } else if (!strcmp(o, "--json")) {
      a->json = v;
    } else if (!strcmp(o, "--weights")) {
      a->weights = v;
    } else if (!strcmp(o, "--layers")) {
      ok = gb_int(v, &a->layers);
    } else if (!strcmp(o, "--seed")) {
      char *end = NULL;
      errno = 0;
      a->seed = strtoull(v, &end, 10);
      ok = !errno && end != v && !*end && v[0] != '-';
    } else if (!strcmp(o, "--prefill")) {
      ok = gb_list(v, 1, &a->nprefill, a->pb, a->pt), have_prefill = 1;
    } else if (!strcmp(o, "--decode")) {
      ok = gb_list(v, 0, &a->ndecode, a->db, NULL), have_decode = 1;
    } else if (!strcmp(o, "--context")) {
      ok = gb_int(v, &a->context), have_ctx = 1;
    } else if (!strcmp(o, "--steps")) {
      ok = gb_int(v, &a->steps) && a->steps <= GB_MAX_REPS, have_steps = 1;
    } else if (!strcmp(o, "--warmup")) {
      ok = gb_int(v, &a->warmup), have_warm = 1;
    } else if (!strcmp(o, "--reps")) {
      ok = gb_int(v, &a->reps) && a->reps <= GB_MAX_REPS, have_reps = 1;
    } else if (!strcmp(o, "--cap")) {
      ok = gb_double(v, &a->cap);
    } else if (!strcmp(o, "--budget")) {
      ok = gb_double(v, &a->budget);
    } else if (!strcmp(o, "--profile-prefill")) {
      ok = gb_bxt(v, &a->prof_b, &a->prof_t), have_pp = 1;
    } else if (!strcmp(o, "--profile-decode")) {
      ok = gb_int(v, &a->prof_db);
    } else if (!strcmp(o, "--greedy")) {
      ok = gb_int(v, &a->greedy) && a->greedy <= GB_GREEDY_MAX;
    } else {
      fprintf(stderr, "gpt2_bench: unknown option '%s'\n", o);
      gb_usage(stderr);
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "gpt2_bench: %s '%s': not a valid value (sizes are positive integers, lists comma-separated%s)\n",
              o, v, !strcmp(o, "--greedy") ? ", at most 64 tokens" : "");
      return 2;
    }
    i += takes;
  }
  const int tiny = !strcmp(a->model, "tiny");
  /* GPT-2's decode figures are quoted at a short prompt; the tiny model's defaults fit its 64-token context */
  static const int pb_big[] = {1, 4, 8, 1, 4, 8}, pt_big[] = {128, 128, 128, 1024, 1024, 1024};
  static const int pb_tiny[] = {1, 2}, pt_tiny[] = {8, 16}, db_big[] = {1, 8, 32}, db_tiny[] = {1, 2};
  if (!have_prefill) {
    a->nprefill = tiny ? 2 : 6;
    memcpy(a->pb, tiny ? pb_tiny : pb_big, sizeof(int) * (size_t)a->nprefill);
    memcpy(a->pt, tiny ? pt_tiny : pt_big, sizeof(int) * (size_t)a->nprefill);
  }
  if (!have_decode) {
    a->ndecode = tiny ? 2 : 3;
    memcpy(a->db, tiny ? db_tiny : db_big, sizeof(int) * (size_t)a->ndecode);
  }
  if (!have_ctx) a->context = tiny ? 8 : 128;
  if (!have_steps) a->steps = tiny ? 4 : 32;
  if (!have_warm) a->warmup = tiny ? 1 : 3;
  if (!have_reps) a->reps = tiny ? 3 : 10;
  if (!have_pp) a->prof_b = 1, a->prof_t = tiny ? 16 : 1024;
  if (!a->prof_db) a->prof_db = 1;
  return 0;
}

/* ---- JSON ----------------------------------------------------------------------------------------------------- */

static void gb_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    const unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

typedef struct gb_fig {
  int batch, len; /* prefill: T; decode: the context */
  double ms, ms_min, tokens_per_s;
  int reps, skipped;
} gb_fig;

typedef struct gb_op {
  const char *name;
  long long launches;
  double ms;
} gb_op;
typedef struct gb_prof {
  int done, batch, len, nops;
  gb_op ops[32];
  double total_ms, unprofiled_ms;
} gb_prof;

static void gb_json_figs(FILE *f, const char *key, const char *len_key, const gb_fig *v, int n) {
  fprintf(f, "  \"%s\": [", key);
  for (int i = 0; i < n; ++i) {
    fprintf(f, "%s\n    {\"batch\": %d, \"%s\": %d", i ? "," : "", v[i].batch, len_key, v[i].len);
    if (v[i].skipped)
      fprintf(f, ", \"skipped\": true}");
    else
      fprintf(f, ", \"ms\": %.6f, \"ms_min\": %.6f, \"tokens_per_s\": %.3f, \"reps\": %d}", v[i].ms, v[i].ms_min,
              v[i].tokens_per_s, v[i].reps);
  }
  fprintf(f, "%s]", n ? "\n  " : "");
}
static void gb_json_prof(FILE *f, const char *key, const char *len_key, const gb_prof *p) {
  fprintf(f, "    \"%s\": {\"batch\": %d, \"%s\": %d, \"total_ms\": %.6f, \"unprofiled_ms\": %.6f, \"ops\": [", key,
          p->batch, len_key, p->len, p->total_ms, p->unprofiled_ms);
  for (int i = 0; i < p->nops; ++i) {
    fprintf(f, "%s\n      {\"op\": ", i ? "," : "");
    gb_json_str(f, p->ops[i].name);
    fprintf(f, ", \"launches\": %lld, \"ms\": %.6f, \"share\": %.4f}", p->ops[i].launches, p->ops[i].ms,
            p->total_ms > 0 ? p->ops[i].ms / p->total_ms : 0.0);
  }
  fprintf(f, "\n    ]}");
}

/* ---- the runs ------------------------------------------------------------------------------------------------- */

typedef struct gb_run {
  gpt2_model *m;
  const gpt2_config *c;
  gb_timer tm;
  int *ids;
  double *samples;
} gb_run;

/* One prefill configuration: warm-up, then reps timed calls (fewer past the cap). */
static kbd_status gb_prefill(gb_run *r, const gb_args *a, int b, int t, gb_fig *out) {
  for (int i = 0; i < b * t; ++i)
    r->ids[i] = gb_prompt_id(a->seed, i / t, i % t, r->c->vocab_size);
  kbd_status s = kbd_status_ok();
  for (int w = 0; kbd_ok(s) && w < a->warmup; ++w)
    s = gpt2_prefill(r->m, b, t, r->ids);
  if (kbd_ok(s)) s = kbd_device_sync();
  double spent = 0.0;
  int n = 0;
  while (kbd_ok(s) && n < a->reps && (n == 0 || spent < 1e3 * a->cap)) {
    double ms = 0.0;
    s = gb_timer_start(&r->tm);
    if (kbd_ok(s)) s = gpt2_prefill(r->m, b, t, r->ids);
    if (kbd_ok(s)) s = gb_timer_stop(&r->tm, &ms);
    r->samples[n++] = ms, spent += ms;
  }
  if (!kbd_ok(s)) return s;
  out->batch = b, out->len = t, out->reps = n;
  out->ms = gb_median(r->samples, n), out->ms_min = r->samples[0];
  out->tokens_per_s = (double)b * t / (out->ms * 1e-3);
  return s;
}

/* A prefill of the context, then warm-up steps, then timed steps (decode of the token just sampled + greedy sampling
 * on the device, no round trip through the host). */
static kbd_status gb_decode(gb_run *r, const gb_args *a, int b, gb_fig *out) {
  const gpt2_sampler greedy = {0.0f, 0, 0};
  for (int i = 0; i < b * a->context; ++i)
    r->ids[i] = gb_prompt_id(a->seed, i / a->context, i % a->context, r->c->vocab_size);
  kbd_status s = gpt2_prefill(r->m, b, a->context, r->ids);
  if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, 0, NULL);
  long long step = 1;
  for (int w = 0; kbd_ok(s) && w < a->warmup; ++w, ++step) {
    s = gpt2_decode(r->m, NULL);
    if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, step, NULL);
  }
  if (kbd_ok(s)) s = kbd_device_sync();
  double spent = 0.0;
  int n = 0;
  while (kbd_ok(s) && n < a->steps && (n == 0 || spent < 1e3 * a->cap)) {
    double ms = 0.0;
    s = gb_timer_start(&r->tm);
    if (kbd_ok(s)) s = gpt2_decode(r->m, NULL);
    if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, step++, NULL);
    if (kbd_ok(s)) s = gb_timer_stop(&r->tm, &ms);
    r->samples[n++] = ms, spent += ms;
  }
  if (!kbd_ok(s)) return s;
  out->batch = b, out->len = a->context, out->reps = n;
  out->ms = gb_median(r->samples, n), out->ms_min = r->samples[0];
  out->tokens_per_s = (double)b / (out->ms * 1e-3);
  return s;
}

static void gb_prof_take(gpt2_model *m, gb_prof *p) {
  const char *name;
  long long n;
  double sec;
  p->nops = 0, p->total_ms = 0.0;
  for (int i = 0; p->nops < 32 && gpt2_profile_op(m, i, &name, &n, &sec, NULL); ++i)
    if (n) {
      p->ops[p->nops].name = name, p->ops[p->nops].launches = n, p->ops[p->nops].ms = 1e3 * sec;
      p->total_ms += 1e3 * sec, p->nops++;
    }
  p->done = 1;
}

/* One profiled prefill and one profiled decode step (with its sampling), each beside an unprofiled timing of the
 * same call. */
static kbd_status gb_profile(gb_run *r, const gb_args *a, gb_prof *pp, gb_prof *pd) {
  const gpt2_sampler greedy = {0.0f, 0, 0};
  const int b = a->prof_b, t = a->prof_t;
  for (int i = 0; i < b * t; ++i)
    r->ids[i] = gb_prompt_id(a->seed, i / t, i % t, r->c->vocab_size);
  double ms = 0.0;
  kbd_status s = gpt2_prefill(r->m, b, t, r->ids); /* warm */
  if (kbd_ok(s)) s = gb_timer_start(&r->tm);
  if (kbd_ok(s)) s = gpt2_prefill(r->m, b, t, r->ids);
  if (kbd_ok(s)) s = gb_timer_stop(&r->tm, &ms);
  if (!kbd_ok(s)) return s;
  pp->batch = b, pp->len = t, pp->unprofiled_ms = ms;
  gpt2_profile(r->m, 1);
  s = gpt2_prefill(r->m, b, t, r->ids);
  if (kbd_ok(s)) gb_prof_take(r->m, pp);
  gpt2_profile(r->m, 0);
  if (!kbd_ok(s)) return s;

  const int db = a->prof_db, ctx = a->context;
  for (int i = 0; i < db * ctx; ++i)
    r->ids[i] = gb_prompt_id(a->seed, i / ctx, i % ctx, r->c->vocab_size);
  s = gpt2_prefill(r->m, db, ctx, r->ids);
  if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, 0, NULL);
  if (kbd_ok(s)) s = gpt2_decode(r->m, NULL); /* warm */
  if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, 1, NULL);
  if (kbd_ok(s)) s = gb_timer_start(&r->tm);
  if (kbd_ok(s)) s = gpt2_decode(r->m, NULL);
  if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, 2, NULL);
  if (kbd_ok(s)) s = gb_timer_stop(&r->tm, &ms);
  if (!kbd_ok(s)) return s;
  pd->batch = db, pd->len = ctx, pd->unprofiled_ms = ms;
  gpt2_profile(r->m, 1);
  s = gpt2_decode(r->m, NULL);
  if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, 3, NULL);
  if (kbd_ok(s)) s = kbd_device_sync();
  if (kbd_ok(s)) gb_prof_take(r->m, pd);
  gpt2_profile(r->m, 0);
  return s;
}

/* --greedy N: GB_GREEDY_ROWS rows of GB_GREEDY_PROMPT seeded tokens, N greedy tokens each, and each step's GB_TOP
 * largest logits (id and value): the torch script compares those values, which checks the whole forward pass even
 * where a random model's greedy tokens only repeat a prompt token */
#define GB_TOP 5
typedef struct gb_greedy_out {
  int tokens[GB_GREEDY_ROWS][GB_GREEDY_MAX];
  int top_id[GB_GREEDY_ROWS][GB_GREEDY_MAX][GB_TOP];
  float top_val[GB_GREEDY_ROWS][GB_GREEDY_MAX][GB_TOP];
} gb_greedy_out;

static kbd_status gb_greedy(gb_run *r, const gb_args *a, gb_greedy_out *g) {
  const gpt2_sampler greedy = {0.0f, 0, 0};
  const int V = r->c->vocab_size;
  int next[GB_GREEDY_ROWS];
  float *lg = (float *)malloc((size_t)GB_GREEDY_ROWS * (size_t)V * sizeof(float));
  if (!lg) return kbd_status_make(KBD_ERR_OOM, "no host memory for the logits");
  for (int i = 0; i < GB_GREEDY_ROWS * GB_GREEDY_PROMPT; ++i)
    r->ids[i] = gb_prompt_id(a->seed, i / GB_GREEDY_PROMPT, i % GB_GREEDY_PROMPT, V);
  kbd_status s = gpt2_prefill(r->m, GB_GREEDY_ROWS, GB_GREEDY_PROMPT, r->ids);
  for (int st = 0; kbd_ok(s) && st < a->greedy; ++st) {
    if (st > 0) s = gpt2_decode(r->m, NULL);
    if (kbd_ok(s)) s = gpt2_logits(r->m, lg);
    if (kbd_ok(s)) s = gpt2_sample(r->m, &greedy, st, next);
    for (int row = 0; kbd_ok(s) && row < GB_GREEDY_ROWS; ++row) {
      g->tokens[row][st] = next[row];
      const float *l = lg + (size_t)row * (size_t)V;
      for (int k = 0; k < GB_TOP; ++k) { /* the k-th largest: a selection pass per k (V is at most 50257) */
        int best = -1;
        for (int v = 0; v < V; ++v) {
          int taken = 0;
          for (int j = 0; j < k; ++j)
            taken |= g->top_id[row][st][j] == v;
          if (!taken && (best < 0 || l[v] > l[best])) best = v;
        }
        g->top_id[row][st][k] = best, g->top_val[row][st][k] = l[best];
      }
    }
  }
  free(lg);
  return s;
}

static void gb_device(char *name, size_t n, char *arch, size_t na) {
#if KBD_MODE_CPU
  snprintf(name, n, "kbd CPU machine");
  snprintf(arch, na, "sm_%da (emulated)", KBD_CPU_ARCH);
#else
  struct cudaDeviceProp p;
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
    snprintf(name, n, "%s", p.name);
    snprintf(arch, na, "sm_%d%da", p.major, p.minor);
  } else {
    snprintf(name, n, "?"), snprintf(arch, na, "?");
  }
#endif
}

int main(int argc, char **argv) {
  gb_args a;
  int rc = gb_parse(argc, argv, &a);
  if (rc) return rc;
  const gb_model_shape *shape = NULL;
  for (size_t i = 0; i < sizeof gb_shapes / sizeof gb_shapes[0]; ++i)
    if (!strcmp(a.model, gb_shapes[i].name)) shape = &gb_shapes[i];
  if (!shape) {
    fprintf(stderr, "gpt2_bench: --model '%s': one of tiny, 124M, 355M, 774M, 1558M\n", a.model);
    return 2;
  }
  gpt2_config c = shape->c;
  if (a.layers) c.n_layer = a.layers;
  /* the plan: the largest batch and context any run asks for */
  int max_b = a.profile ? (a.prof_b > a.prof_db ? a.prof_b : a.prof_db) : 1;
  int max_t = a.profile ? (a.prof_t > a.context + 3 ? a.prof_t : a.context + 3) : 1;
  for (int i = 0; i < a.nprefill; ++i) {
    if (a.pb[i] > max_b) max_b = a.pb[i];
    if (a.pt[i] > max_t) max_t = a.pt[i];
  }
  for (int i = 0; i < a.ndecode; ++i)
    if (a.db[i] > max_b) max_b = a.db[i];
  if (a.ndecode && a.context + a.warmup + a.steps + 1 > max_t) max_t = a.context + a.warmup + a.steps + 1;
  if (a.greedy) {
    if (GB_GREEDY_ROWS > max_b) max_b = GB_GREEDY_ROWS;
    if (GB_GREEDY_PROMPT + a.greedy > max_t) max_t = GB_GREEDY_PROMPT + a.greedy;
  }
  if (max_t > c.n_ctx) {
    fprintf(stderr,
            "gpt2_bench: a run needs %d tokens of context (prefill T, or context + warmup + steps + 1, or 8 + "
            "greedy): model %s has %d\n",
            max_t, a.model, c.n_ctx);
    return 2;
  }
#if !KBD_MODE_CPU
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("gpt2_bench: no CUDA device: skipped\n");
    return 77;
  }
#ifdef BENCH_GPU_ARCH
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (major * 10 + minor != BENCH_GPU_ARCH) {
    printf("gpt2_bench: built for sm_%da, the device is sm_%d%d: skipped\n", BENCH_GPU_ARCH, major, minor);
    return 77;
  }
#endif
#endif
  char device[256], arch[64];
  gb_device(device, sizeof device, arch, sizeof arch);

  /* the checkpoint: DIR kept for the torch script, or a temporary folder */
  char dir[4096];
  int keep = a.weights != NULL;
  if (keep) {
    if (mkdir(a.weights, 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "gpt2_bench: --weights %s: cannot create the folder: %s\n", a.weights, strerror(errno));
      return 1;
    }
    snprintf(dir, sizeof dir, "%s", a.weights);
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gpt2_bench_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
      fprintf(stderr, "gpt2_bench: cannot make a temporary folder %s: %s\n", dir, strerror(errno));
      return 1;
    }
  }
  const double t0 = gb_now();
  /* c_proj 0.08, as tools/gpt2_torch_ref.py's random_weights (its own weights when it runs without --weights): both
   * sides of the comparison then see the same distributions, and at 48 layers the residual stream still moves */
  kbd_status s = gpt2_random_model_write(dir, &c, a.seed, GB_PROJ_SCALE);
  const double write_s = gb_now() - t0;
  gb_run r;
  memset(&r, 0, sizeof r);
  r.c = &c;
  double load_s = 0.0;
  if (kbd_ok(s)) {
    const double t1 = gb_now();
    s = gpt2_load(&r.m, dir, max_b, max_t);
    load_s = gb_now() - t1;
  }
  if (!keep) gpt2_random_model_remove(dir);
  if (!kbd_ok(s)) return gb_fail("the random model", s);
  r.ids = (int *)malloc((size_t)max_b * (size_t)max_t * sizeof(int));
  r.samples = (double *)malloc(GB_MAX_REPS * sizeof(double));
  if (!r.ids || !r.samples) s = kbd_status_make(KBD_ERR_OOM, "no host memory");
  int timer = 0;
  if (kbd_ok(s)) s = gb_timer_init(&r.tm), timer = kbd_ok(s);

  gb_fig pre[GB_MAX_CFG], dec[GB_MAX_CFG];
  gb_prof pp, pd;
  memset(pre, 0, sizeof pre), memset(dec, 0, sizeof dec), memset(&pp, 0, sizeof pp), memset(&pd, 0, sizeof pd);
  static gb_greedy_out greedy_out;
  const double run0 = gb_now();
  /* the correctness figures first: a budget cut never loses them */
  if (kbd_ok(s) && a.greedy) s = gb_greedy(&r, &a, &greedy_out);
  for (int i = 0; kbd_ok(s) && i < a.nprefill; ++i) {
    pre[i].batch = a.pb[i], pre[i].len = a.pt[i];
    if (gb_now() - run0 > a.budget) {
      pre[i].skipped = 1;
      continue;
    }
    s = gb_prefill(&r, &a, a.pb[i], a.pt[i], &pre[i]);
  }
  for (int i = 0; kbd_ok(s) && i < a.ndecode; ++i) {
    dec[i].batch = a.db[i], dec[i].len = a.context;
    if (gb_now() - run0 > a.budget) {
      dec[i].skipped = 1;
      continue;
    }
    s = gb_decode(&r, &a, a.db[i], &dec[i]);
  }
  if (kbd_ok(s) && a.profile && gb_now() - run0 <= a.budget) s = gb_profile(&r, &a, &pp, &pd);
  if (timer) gb_timer_free(&r.tm);
  gpt2_free(r.m);
  free(r.ids), free(r.samples);
  if (!kbd_ok(s)) return gb_fail("a timed run", s);

  /* the readable table */
  printf("gpt2_bench (kbd) on %s (%s): model %s, %d layers x %d channels, %d heads, vocab %d; seed %llu\n", device,
         arch, a.model, c.n_layer, c.n_embd, c.n_head, c.vocab_size, a.seed);
  printf("random weights written in %.2f s, loaded (bf16, memory for batch %d x %d tokens) in %.2f s\n", write_s, max_b,
         max_t, load_s);
  printf("| phase | batch | T / context | ms (median) | ms (min) | tokens/s | reps "
         "|\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < a.nprefill + a.ndecode; ++i) {
    const int isp = i < a.nprefill;
    const gb_fig *f = isp ? &pre[i] : &dec[i - a.nprefill];
    if (f->skipped)
      printf("| %s | %d | %d | skipped (--budget) | | | |\n", isp ? "prefill" : "decode", f->batch, f->len);
    else
      printf("| %s | %d | %d | %.3f | %.3f | %.1f | %d |\n", isp ? "prefill" : "decode", f->batch, f->len, f->ms,
             f->ms_min, f->tokens_per_s, f->reps);
  }
  for (int i = 0; i < a.nprefill + a.ndecode; ++i) {
    const int isp = i < a.nprefill;
    const gb_fig *f = isp ? &pre[i] : &dec[i - a.nprefill];
    if (!f->skipped)
      printf("BENCH gpt2 impl=kbd model=%s phase=%s batch=%d %s=%d ms=%.4f tokens_per_s=%.1f\n", a.model,
             isp ? "prefill" : "decode", f->batch, isp ? "t" : "context", f->len, f->ms, f->tokens_per_s);
  }
  for (int k = 0; k < 2; ++k) {
    const gb_prof *p = k ? &pd : &pp;
    if (!p->done) continue;
    printf("\n%s (batch %d, %s %d), time per op (gpt2_profile: a device sync after each launch; %.3f ms profiled, "
           "%.3f ms unprofiled):\n| op | launches | ms | share |\n|---|---:|---:|---:|\n",
           k ? "one decode step + sampling" : "one prefill", p->batch, k ? "context" : "T", p->len, p->total_ms,
           p->unprofiled_ms);
    for (int i = 0; i < p->nops; ++i)
      printf("| %s | %lld | %.4f | %.1f %% |\n", p->ops[i].name, p->ops[i].launches, p->ops[i].ms,
             p->total_ms > 0 ? 100.0 * p->ops[i].ms / p->total_ms : 0.0);
  }
  if (a.greedy)
    for (int row = 0; row < GB_GREEDY_ROWS; ++row) {
      printf("%sgreedy row %d:", row ? "" : "\n", row);
      for (int st = 0; st < a.greedy; ++st)
        printf(" %d", greedy_out.tokens[row][st]);
      printf("\n");
    }

  if (a.json) {
    FILE *f = fopen(a.json, "w");
    if (!f) {
      fprintf(stderr, "gpt2_bench: --json %s: %s\n", a.json, strerror(errno));
      return 1;
    }
    fprintf(f, "{\n  \"impl\": \"kbd\",\n  \"device\": ");
    gb_json_str(f, device);
    fprintf(f, ",\n  \"arch\": ");
    gb_json_str(f, arch);
    fprintf(f, ",\n  \"model\": ");
    gb_json_str(f, a.model);
    fprintf(
        f,
        ",\n  \"config\": {\"n_layer\": %d, \"n_head\": %d, \"n_embd\": %d, \"vocab_size\": %d, \"n_ctx\": %d},\n"
        "  \"seed\": %llu,\n  \"dtype\": \"bf16\",\n"
        "  \"timing\": {\"method\": \"%s\", \"statistic\": \"median\", \"warmup\": %d, \"reps\": %d, \"steps\": %d, "
        "\"cap_s\": %g},\n  \"setup_s\": {\"weights\": %.3f, \"load\": %.3f},\n",
        c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_ctx, a.seed,
        KBD_MODE_CPU ? "wall clock between device syncs" : "CUDA events", a.warmup, a.reps, a.steps, a.cap, write_s,
        load_s);
    gb_json_figs(f, "prefill", "t", pre, a.nprefill);
    fprintf(f, ",\n");
    gb_json_figs(f, "decode", "context", dec, a.ndecode);
    if (pp.done) {
      fprintf(f,
              ",\n  \"profile\": {\n    \"method\": \"gpt2_profile: wall clock, a device sync after each launch\",\n");
      gb_json_prof(f, "prefill", "t", &pp);
      fprintf(f, ",\n");
      gb_json_prof(f, "decode", "context", &pd);
      fprintf(f, "\n  }");
    }
    if (a.greedy) {
      fprintf(f, ",\n  \"greedy\": {\"prompt\": [");
      for (int row = 0; row < GB_GREEDY_ROWS; ++row) {
        fprintf(f, "%s[", row ? ", " : "");
        for (int i = 0; i < GB_GREEDY_PROMPT; ++i)
          fprintf(f, "%s%d", i ? ", " : "", gb_prompt_id(a.seed, row, i, c.vocab_size));
        fprintf(f, "]");
      }
      fprintf(f, "], \"tokens\": [");
      for (int row = 0; row < GB_GREEDY_ROWS; ++row) {
        fprintf(f, "%s[", row ? ", " : "");
        for (int st = 0; st < a.greedy; ++st)
          fprintf(f, "%s%d", st ? ", " : "", greedy_out.tokens[row][st]);
        fprintf(f, "]");
      }
      fprintf(f, "],\n    \"top\": [");
      for (int row = 0; row < GB_GREEDY_ROWS; ++row) {
        fprintf(f, "%s[", row ? ",\n      " : "");
        for (int st = 0; st < a.greedy; ++st) {
          fprintf(f, "%s[", st ? ", " : "");
          for (int k = 0; k < GB_TOP; ++k)
            fprintf(f, "%s[%d, %.6g]", k ? ", " : "", greedy_out.top_id[row][st][k],
                    (double)greedy_out.top_val[row][st][k]);
          fprintf(f, "]");
        }
        fprintf(f, "]");
      }
      fprintf(f, "]}");
    }
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) {
      fprintf(stderr, "gpt2_bench: --json %s: write failed\n", a.json);
      return 1;
    }
  }
  return 0;
}
