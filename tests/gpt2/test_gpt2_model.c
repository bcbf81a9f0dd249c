/* test_gpt2_model.c - the GPT-2 example's forward pass (examples/gpt2/gpt2.h, CPU mode) against an independent
 * double-precision reference (ref_gpt2.c), on tiny checkpoints this test writes as real files (model.safetensors
 * through gpt2_st_write, config.json through gpt2_config_write) from seeded random weights.
 *
 * The bound on the logits (GPT2_TEST_BOUND): the weights are bf16 values, so the only differences are the forward
 * pass's own roundings - every activation (embedding sum, layernorm outputs, q/k/v, P in the attention, the attention
 * output, the GELU output, the residual stream after each add) is rounded to bf16 (relative 2^-9), accumulations are
 * f32. A logit is the dot product of the final layernorm's output with a wte row, so its error is a few of those
 * relative roundings of the largest logits: about 2^-9 x max |logit|, and the logits here reach 20 .. 62 in magnitude
 * (printed), i.e. 0.04 .. 0.12. GPT2_TEST_BOUND = 0.25 = 2^-8 x 64 allows twice that for the largest; observed
 * 0.05 .. 0.15 (printed; the 6-layer model's roundings add up to the 0.15).
 *
 * Run with --write-model DIR [--tokenizer] to only write the tiny checkpoint, and with --tokenizer a vocab.json +
 * merges.txt for its 300 ids (the CLI's ctests use them).
 */
#define _DEFAULT_SOURCE 1 /* mkdtemp under -std=c11 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "attention.h"
#include "gpt2.h"
#include "gpt2_config.h"
#include "gpt2_kernels.h"
#include "gpt2_safetensors.h"
#include "ref_gpt2.h"

#define GPT2_TEST_BOUND 0.25
/* KV-cache decode against recomputing the whole prefix: the same math in a different blocking (split-KV combine,
 * other GEMM tile rows), so only the last bf16 roundings of a few values differ */
#define GPT2_TEST_KV_BOUND 0.1

/* ---- a tiny random checkpoint ------------------------------------------------------------------------------ */

typedef struct tm_layer {
  float *ln1_g, *ln1_b, *w_qkv, *b_qkv, *w_o, *b_o, *ln2_g, *ln2_b, *w_fc, *b_fc, *w_proj, *b_proj;
} tm_layer;

typedef struct tm_model {
  gpt2_config cfg;
  float *wte, *wpe, *lnf_g, *lnf_b;
  tm_layer *layers;
  ref_gpt2_layer *rl;
  ref_gpt2 ref;
  unsigned long long rng;
} tm_model;

static double tm_uniform(tm_model *m) { /* [-1, 1) */
  m->rng = m->rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(m->rng >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
/* n values center + scale * (sum of 3 uniforms), rounded to bf16: the weights the example converts exactly */
static float *tm_fill(tm_model *m, long long n, double center, double scale) {
  float *v = (float *)malloc((size_t)n * sizeof(float));
  assert_non_null(v);
  for (long long i = 0; i < n; ++i) {
    const double x = center + scale * (tm_uniform(m) + tm_uniform(m) + tm_uniform(m));
    v[i] = gpt2_st_bf16_to_f32(gpt2_st_f32_to_bf16((float)x));
  }
  return v;
}

static void tm_make(tm_model *m, unsigned long long seed, int n_layer, int n_embd, int n_head, int vocab, int n_ctx) {
  memset(m, 0, sizeof *m);
  m->rng = seed;
  m->cfg.n_layer = n_layer, m->cfg.n_head = n_head, m->cfg.n_embd = n_embd, m->cfg.vocab_size = vocab;
  m->cfg.n_ctx = n_ctx, m->cfg.ln_eps = 1e-5f;
  const long long C = n_embd;
  m->wte = tm_fill(m, (long long)vocab * C, 0.0, 0.6);
  m->wpe = tm_fill(m, (long long)n_ctx * C, 0.0, 0.3);
  m->lnf_g = tm_fill(m, C, 1.0, 0.1);
  m->lnf_b = tm_fill(m, C, 0.0, 0.05);
  m->layers = (tm_layer *)calloc((size_t)n_layer, sizeof(tm_layer));
  m->rl = (ref_gpt2_layer *)calloc((size_t)n_layer, sizeof(ref_gpt2_layer));
  assert_non_null(m->layers);
  assert_non_null(m->rl);
  const double sc = 1.0 / sqrt((double)C);
  for (int l = 0; l < n_layer; ++l) {
    tm_layer *y = &m->layers[l];
    y->ln1_g = tm_fill(m, C, 1.0, 0.1), y->ln1_b = tm_fill(m, C, 0.0, 0.05);
    y->w_qkv = tm_fill(m, C * 3 * C, 0.0, 1.2 * sc), y->b_qkv = tm_fill(m, 3 * C, 0.0, 0.05);
    y->w_o = tm_fill(m, C * C, 0.0, 0.4 * sc), y->b_o = tm_fill(m, C, 0.0, 0.05);
    y->ln2_g = tm_fill(m, C, 1.0, 0.1), y->ln2_b = tm_fill(m, C, 0.0, 0.05);
    y->w_fc = tm_fill(m, C * 4 * C, 0.0, 0.8 * sc), y->b_fc = tm_fill(m, 4 * C, 0.0, 0.05);
    y->w_proj = tm_fill(m, 4 * C * C, 0.0, 0.2 * sc), y->b_proj = tm_fill(m, C, 0.0, 0.05);
    ref_gpt2_layer r = {y->ln1_g, y->ln1_b, y->w_qkv, y->b_qkv, y->w_o,    y->b_o,
                        y->ln2_g, y->ln2_b, y->w_fc,  y->b_fc,  y->w_proj, y->b_proj};
    m->rl[l] = r;
  }
  m->ref.n_layer = n_layer, m->ref.n_head = n_head, m->ref.n_embd = n_embd, m->ref.vocab = vocab;
  m->ref.n_ctx = n_ctx, m->ref.eps = 1e-5, m->ref.wte = m->wte, m->ref.wpe = m->wpe, m->ref.lnf_g = m->lnf_g;
  m->ref.lnf_b = m->lnf_b, m->ref.layers = m->rl;
}

static void tm_free(tm_model *m) {
  for (int l = 0; l < m->cfg.n_layer; ++l) {
    tm_layer *y = &m->layers[l];
    float *v[12] = {y->ln1_g, y->ln1_b, y->w_qkv, y->b_qkv, y->w_o,    y->b_o,
                    y->ln2_g, y->ln2_b, y->w_fc,  y->b_fc,  y->w_proj, y->b_proj};
    for (int i = 0; i < 12; ++i)
      free(v[i]);
  }
  free(m->layers), free(m->rl), free(m->wte), free(m->wpe), free(m->lnf_g), free(m->lnf_b);
}

/* What tm_write may get wrong on purpose (the bad-input tests). */
enum { TM_OK = 0, TM_MISSING_TENSOR = 1, TM_WRONG_SHAPE = 2 };

/* dir/model.safetensors + dir/config.json; names with `prefix` ("" or "transformer."), matrices in `dt` (the values
 * are bf16, so F32 and BF16 files hold the same numbers) */
static kbd_status tm_write(const tm_model *m, const char *dir, const char *prefix, gpt2_st_dtype dt, int flaw) {
  const int L = m->cfg.n_layer, C = m->cfg.n_embd, n = 4 + 12 * L;
  gpt2_st_out *t = (gpt2_st_out *)calloc((size_t)n, sizeof(gpt2_st_out));
  char(*names)[96] = (char(*)[96])calloc((size_t)n, 96);
  unsigned short **conv = (unsigned short **)calloc((size_t)n, sizeof(void *));
  assert_non_null(t);
  assert_non_null(names);
  assert_non_null(conv);
  int k = 0;
#define TM_ADD(nm, ptr, nd, d0, d1)                                                                                    \
  do {                                                                                                                 \
    snprintf(names[k], 96, "%s%s", prefix, nm);                                                                        \
    t[k].name = names[k], t[k].ndim = nd, t[k].shape[0] = d0, t[k].shape[1] = d1, t[k].data = ptr;                     \
    t[k].dtype = GPT2_ST_F32;                                                                                          \
    if (nd == 2 && dt == GPT2_ST_BF16) {                                                                               \
      const long long ne = (long long)(d0) * (d1);                                                                     \
      conv[k] = (unsigned short *)malloc((size_t)ne * 2);                                                              \
      for (long long e = 0; e < ne; ++e)                                                                               \
        conv[k][e] = gpt2_st_f32_to_bf16((ptr)[e]);                                                                    \
      t[k].data = conv[k], t[k].dtype = GPT2_ST_BF16;                                                                  \
    }                                                                                                                  \
    ++k;                                                                                                               \
  } while (0)
  TM_ADD("wte.weight", m->wte, 2, m->cfg.vocab_size, C);
  TM_ADD("wpe.weight", m->wpe, 2, m->cfg.n_ctx, C);
  TM_ADD("ln_f.weight", m->lnf_g, 1, C, 0);
  if (flaw != TM_MISSING_TENSOR) TM_ADD("ln_f.bias", m->lnf_b, 1, C, 0);
  for (int l = 0; l < L; ++l) {
    const tm_layer *y = &m->layers[l];
    char nm[64];
#define TM_L(s) (snprintf(nm, sizeof nm, "h.%d.%s", l, s), nm)
    TM_ADD(TM_L("ln_1.weight"), y->ln1_g, 1, C, 0);
    TM_ADD(TM_L("ln_1.bias"), y->ln1_b, 1, C, 0);
    if (flaw == TM_WRONG_SHAPE && l == L - 1)
      TM_ADD(TM_L("attn.c_attn.weight"), y->w_qkv, 2, 3 * C, C); /* transposed: [out][in] */
    else
      TM_ADD(TM_L("attn.c_attn.weight"), y->w_qkv, 2, C, 3 * C);
    TM_ADD(TM_L("attn.c_attn.bias"), y->b_qkv, 1, 3 * C, 0);
    TM_ADD(TM_L("attn.c_proj.weight"), y->w_o, 2, C, C);
    TM_ADD(TM_L("attn.c_proj.bias"), y->b_o, 1, C, 0);
    TM_ADD(TM_L("ln_2.weight"), y->ln2_g, 1, C, 0);
    TM_ADD(TM_L("ln_2.bias"), y->ln2_b, 1, C, 0);
    TM_ADD(TM_L("mlp.c_fc.weight"), y->w_fc, 2, C, 4 * C);
    TM_ADD(TM_L("mlp.c_fc.bias"), y->b_fc, 1, 4 * C, 0);
    TM_ADD(TM_L("mlp.c_proj.weight"), y->w_proj, 2, 4 * C, C);
    TM_ADD(TM_L("mlp.c_proj.bias"), y->b_proj, 1, C, 0);
#undef TM_L
  }
#undef TM_ADD
  char path[512];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  kbd_status s = gpt2_st_write(path, t, k);
  if (kbd_ok(s)) s = gpt2_config_write(&m->cfg, dir);
  for (int i = 0; i < n; ++i)
    free(conv[i]);
  free(conv), free(names), free(t);
  return s;
}

/* ---- fixtures ----------------------------------------------------------------------------------------------- */

typedef struct tm_fixture {
  tm_model tiny;   /* 2 layers, 64 channels, 4 heads (head size 16, padded to 64), vocab 300, context 64 */
  tm_model tiny64; /* 2 layers, 128 channels, 2 heads (head size 64, GPT-2's own), vocab 300, context 64 */
  char dir[64], dir64[64];
} tm_fixture;
static tm_fixture fx;

static void tm_rmdir(const char *dir) {
  char p[512];
  snprintf(p, sizeof p, "%s/model.safetensors", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/config.json", dir);
  unlink(p);
  rmdir(dir);
}

static int group_setup(void **state) {
  (void)state;
  tm_make(&fx.tiny, 1234, 2, 64, 4, 300, 64);
  tm_make(&fx.tiny64, 99, 2, 128, 2, 300, 64);
  strcpy(fx.dir, "/tmp/gpt2_tiny_XXXXXX");
  strcpy(fx.dir64, "/tmp/gpt2_tiny64_XXXXXX");
  if (!mkdtemp(fx.dir) || !mkdtemp(fx.dir64)) return -1;
  if (!kbd_ok(tm_write(&fx.tiny, fx.dir, "", GPT2_ST_F32, TM_OK))) return -1;
  if (!kbd_ok(tm_write(&fx.tiny64, fx.dir64, "transformer.", GPT2_ST_BF16, TM_OK))) return -1;
  return 0;
}
static int group_teardown(void **state) {
  (void)state;
  tm_rmdir(fx.dir), tm_rmdir(fx.dir64);
  tm_free(&fx.tiny), tm_free(&fx.tiny64);
  return 0;
}

#define CHECK(expr)                                                                                                    \
  do {                                                                                                                 \
    const kbd_status s_ = (expr);                                                                                      \
    if (!kbd_ok(s_)) fail_msg("%s: %s", #expr, s_.msg);                                                                \
  } while (0)
#define CHECK_FAILS(expr, needle)                                                                                      \
  do {                                                                                                                 \
    const kbd_status s_ = (expr);                                                                                      \
    if (kbd_ok(s_)) fail_msg("%s succeeded; expected an error naming '%s'", #expr, needle);                            \
    if (!strstr(s_.msg, needle)) fail_msg("%s: message '%s' does not name '%s'", #expr, s_.msg, needle);               \
    printf("  expected error: %s\n", s_.msg);                                                                          \
  } while (0)

static void tm_prompt(tm_model *m, int *ids, int n, unsigned salt) {
  for (int i = 0; i < n; ++i)
    ids[i] = (int)((i * 37u + salt * 101u + 7u) % (unsigned)m->cfg.vocab_size);
}

/* |kbd - ref| over one row of logits; returns the worst */
static double tm_row_err(const float *got, const double *want, int n) {
  double w = 0.0;
  for (int i = 0; i < n; ++i) {
    const double e = fabs((double)got[i] - want[i]);
    if (!(e <= w)) w = e; /* NaN propagates as the worst */
  }
  return w;
}

/* prefill of `batch` rows of length t against the reference's last-position logits */
static double tm_prefill_check(tm_model *m, const char *dir, int batch, int t) {
  const int V = m->cfg.vocab_size;
  gpt2_model *g;
  CHECK(gpt2_load(&g, dir, batch, 0));
  int *ids = (int *)malloc((size_t)batch * t * sizeof(int));
  float *lg = (float *)malloc((size_t)batch * V * sizeof(float));
  double *ref = (double *)malloc((size_t)t * V * sizeof(double));
  assert_true(ids && lg && ref);
  for (int b = 0; b < batch; ++b)
    tm_prompt(m, ids + b * t, t, (unsigned)b);
  CHECK(gpt2_prefill(g, batch, t, ids));
  CHECK(gpt2_logits(g, lg));
  double worst = 0.0, big = 0.0;
  for (int b = 0; b < batch; ++b) {
    assert_int_equal(ref_gpt2_forward(&m->ref, ids + b * t, t, ref), 0);
    const double e = tm_row_err(lg + (size_t)b * V, ref + (size_t)(t - 1) * V, V);
    if (!(e <= worst)) worst = e;
    for (int i = 0; i < V; ++i)
      big = fabs(ref[(size_t)(t - 1) * V + i]) > big ? fabs(ref[(size_t)(t - 1) * V + i]) : big;
  }
  printf("  prefill batch %d, %d tokens (C %d, heads %d): worst |logit - ref| = %.4f (bound %.2f), max |ref| %.1f\n",
         batch, t, m->cfg.n_embd, m->cfg.n_head, worst, GPT2_TEST_BOUND, big);
  assert_true(worst <= GPT2_TEST_BOUND);
  gpt2_free(g);
  free(ids), free(lg), free(ref);
  return worst;
}

/* ---- tests ------------------------------------------------------------------------------------------------- */

static void prefill_lengths(void **state) {
  (void)state;
  tm_prefill_check(&fx.tiny, fx.dir, 1, 1);
  tm_prefill_check(&fx.tiny, fx.dir, 1, 7);
  tm_prefill_check(&fx.tiny, fx.dir, 1, 64);
}

static void prefill_batch3(void **state) {
  (void)state;
  tm_prefill_check(&fx.tiny, fx.dir, 3, 7);
  /* head size 64 (GPT-2's), "transformer." names, bf16 storage */
  tm_prefill_check(&fx.tiny64, fx.dir64, 3, 7);
  tm_prefill_check(&fx.tiny64, fx.dir64, 1, 64);
}

/* A deeper model: 6 layers hold 90 device buffers (every weight its own), past the fixed table of 64 an earlier
 * gpt2.c had; the logits still within the bound. */
static void many_layers(void **state) {
  (void)state;
  tm_model m;
  tm_make(&m, 4321, 6, 64, 4, 300, 64);
  char dir[64];
  strcpy(dir, "/tmp/gpt2_deep_XXXXXX");
  assert_non_null(mkdtemp(dir));
  CHECK(tm_write(&m, dir, "", GPT2_ST_F32, TM_OK));
  tm_prefill_check(&m, dir, 2, 5);
  tm_rmdir(dir);
  tm_free(&m);
}

/* Greedy generation, 16 steps, batch rows each with its own prompt: every token equal to the reference's argmax,
 * whose margin over the runner-up is checked to exceed twice the bound (else the comparison would prove nothing
 * about a tie-break: then pick another weight seed). The logits of every step are within the bound too. */
static void greedy_tokens(tm_model *m, const char *dir, int batch) {
  const int V = m->cfg.vocab_size, t0 = 7, steps = 16, T = t0 + steps;
  gpt2_model *g;
  CHECK(gpt2_load(&g, dir, batch, 32));
  int *seq = (int *)malloc((size_t)batch * T * sizeof(int)), *prompt = (int *)malloc((size_t)batch * t0 * sizeof(int));
  int *next = (int *)malloc((size_t)batch * sizeof(int));
  float *lg = (float *)malloc((size_t)batch * V * sizeof(float));
  double *ref = (double *)malloc((size_t)T * V * sizeof(double));
  assert_true(seq && prompt && next && lg && ref);
  for (int b = 0; b < batch; ++b) {
    tm_prompt(m, seq + b * T, t0, (unsigned)(b + 5));
    memcpy(prompt + b * t0, seq + b * T, (size_t)t0 * sizeof(int));
  }
  const gpt2_sampler greedy = {0.0f, 0, 0};
  CHECK(gpt2_prefill(g, batch, t0, prompt));
  double worst = 0.0, min_gap = 1e9;
  for (int st = 0; st < steps; ++st) {
    if (st > 0) CHECK(gpt2_decode(g, NULL));
    CHECK(gpt2_logits(g, lg));
    CHECK(gpt2_sample(g, &greedy, st, next));
    for (int b = 0; b < batch; ++b) {
      const int len = t0 + st;
      assert_int_equal(ref_gpt2_forward(&m->ref, seq + b * T, len, ref), 0);
      const double *row = ref + (size_t)(len - 1) * V;
      double gap;
      const int want = ref_gpt2_argmax(row, V, &gap);
      const double e = tm_row_err(lg + (size_t)b * V, row, V);
      worst = e > worst ? e : worst;
      min_gap = gap < min_gap ? gap : min_gap;
      if (next[b] != want)
        fail_msg("row %d step %d: kbd token %d, reference %d (reference gap %.4f, logit error %.4f)", b, st, next[b],
                 want, gap, e);
      seq[b * T + len] = want;
    }
  }
  printf("  greedy batch %d, 16 steps: tokens equal; worst |logit - ref| = %.4f, smallest reference margin %.3f\n",
         batch, worst, min_gap);
  assert_true(worst <= GPT2_TEST_BOUND);
  assert_true(min_gap > 2 * GPT2_TEST_BOUND);
  assert_int_equal(gpt2_position(g), T - 1);
  gpt2_free(g);
  free(seq), free(prompt), free(next), free(lg), free(ref);
}
static void greedy_batch1(void **state) {
  (void)state;
  greedy_tokens(&fx.tiny, fx.dir, 1);
}
static void greedy_batch3(void **state) {
  (void)state;
  greedy_tokens(&fx.tiny64, fx.dir64, 3);
}

/* Decode through the KV cache equals recomputing the prefix: after a prefill of 5 tokens and j decode steps, the
 * logits equal those of a prefill of all 5 + j tokens (another model instance, so no cache is shared). */
static void kv_decode_vs_recompute(tm_model *m, const char *dir, int batch) {
  const int V = m->cfg.vocab_size, t0 = 5, steps = 6, T = t0 + steps;
  gpt2_model *g, *full;
  CHECK(gpt2_load(&g, dir, batch, 16));
  CHECK(gpt2_load(&full, dir, batch, 16));
  int *seq = (int *)malloc((size_t)batch * T * sizeof(int)), *tmp = (int *)malloc((size_t)batch * T * sizeof(int));
  int *col = (int *)malloc((size_t)batch * sizeof(int));
  float *a = (float *)malloc((size_t)batch * V * sizeof(float)),
        *b = (float *)malloc((size_t)batch * V * sizeof(float));
  assert_true(seq && tmp && col && a && b);
  for (int r = 0; r < batch; ++r)
    tm_prompt(m, seq + r * T, T, (unsigned)(r + 11));
  for (int r = 0; r < batch; ++r)
    memcpy(tmp + r * t0, seq + r * T, (size_t)t0 * sizeof(int));
  CHECK(gpt2_prefill(g, batch, t0, tmp));
  double worst = 0.0;
  for (int j = 1; j < steps; ++j) {
    for (int r = 0; r < batch; ++r)
      col[r] = seq[r * T + t0 + j - 1];
    CHECK(gpt2_decode(g, col));
    CHECK(gpt2_logits(g, a));
    const int len = t0 + j;
    for (int r = 0; r < batch; ++r)
      memcpy(tmp + r * len, seq + r * T, (size_t)len * sizeof(int));
    CHECK(gpt2_prefill(full, batch, len, tmp));
    CHECK(gpt2_logits(full, b));
    for (long long i = 0; i < (long long)batch * V; ++i) {
      const double e = fabs((double)a[i] - (double)b[i]);
      if (!(e <= worst)) worst = e;
    }
  }
  printf("  KV-cache decode vs recompute (batch %d, C %d): worst |difference| = %.5f (bound %.2f)\n", batch,
         m->cfg.n_embd, worst, GPT2_TEST_KV_BOUND);
  assert_true(worst <= GPT2_TEST_KV_BOUND);
  gpt2_free(g), gpt2_free(full);
  free(seq), free(tmp), free(col), free(a), free(b);
}
static void kv_decode(void **state) {
  (void)state;
  kv_decode_vs_recompute(&fx.tiny, fx.dir, 1);
  kv_decode_vs_recompute(&fx.tiny64, fx.dir64, 3);
}

/* Sampling on the device: top_k 1 is greedy at any temperature; a seed reproduces a run and another seed gives
 * another; every top-k draw is among the k largest logits (from the logits read back). */
static void sampling(void **state) {
  (void)state;
  tm_model *m = &fx.tiny;
  const int V = m->cfg.vocab_size, batch = 3, t0 = 4, n = 12;
  gpt2_model *g;
  CHECK(gpt2_load(&g, fx.dir, batch, 8));
  int ids[3 * 4], out[3], greedy_out[3];
  for (int b = 0; b < batch; ++b)
    tm_prompt(m, ids + b * t0, t0, (unsigned)b);
  CHECK(gpt2_prefill(g, batch, t0, ids));
  float *lg = (float *)malloc((size_t)batch * V * sizeof(float));
  assert_non_null(lg);
  CHECK(gpt2_logits(g, lg));
  const gpt2_sampler greedy = {0.0f, 0, 0}, k1 = {5.0f, 1, 77};
  CHECK(gpt2_sample(g, &greedy, 0, greedy_out));
  CHECK(gpt2_sample(g, &k1, 0, out));
  for (int b = 0; b < batch; ++b) {
    int best = 0;
    for (int i = 1; i < V; ++i)
      if (lg[b * V + i] > lg[b * V + best]) best = i;
    assert_int_equal(greedy_out[b], best);
    assert_int_equal(out[b], best);
  }
  const int ks[2] = {5, 0};
  for (int kk = 0; kk < 2; ++kk) {
    const int k = ks[kk];
    int first[12][3], again[3], distinct = 0;
    for (int st = 0; st < n; ++st) {
      const gpt2_sampler sm = {2.0f, k, 42};
      CHECK(gpt2_sample(g, &sm, st, first[st]));
      CHECK(gpt2_sample(g, &sm, st, again));
      for (int b = 0; b < batch; ++b) {
        assert_int_equal(first[st][b], again[b]); /* reproducible */
        assert_true(first[st][b] >= 0 && first[st][b] < V);
        if (k) { /* among the k largest: fewer than k logits are larger than the draw's */
          int larger = 0;
          for (int i = 0; i < V; ++i)
            larger += lg[b * V + i] > lg[b * V + first[st][b]];
          assert_true(larger < k);
        }
        distinct += first[st][b] != first[0][b];
      }
    }
    printf("  top-k %d, temperature 2: %d of %d draws differ from step 0's\n", k, distinct, n * batch);
    assert_true(distinct > 0); /* the draw depends on the step: not greedy in disguise */
    const gpt2_sampler other = {2.0f, k, 43};
    int diff = 0;
    for (int st = 0; st < n; ++st) {
      CHECK(gpt2_sample(g, &other, st, again));
      for (int b = 0; b < batch; ++b)
        diff += again[b] != first[st][b];
    }
    assert_true(diff > 0); /* another seed, another run */
  }
  /* The draws follow softmax(logits / T) over the candidates: 400 draws of row 0 at a temperature where the top id
   * has 25 .. 80 % of the mass, each of the 3 most likely ids within 5 sigma of its expected count (a sampler that
   * ignores the temperature or draws uniformly among the candidates is far outside). */
  for (int kk = 0; kk < 2; ++kk) {
    const int k = ks[kk], N = 400;
    int order[3] = {-1, -1, -1};
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < V; ++i) {
        if (i == order[0] || i == order[1]) continue;
        if (order[j] < 0 || lg[i] > lg[order[j]]) order[j] = i;
      }
    double T = 0.5, prob[3] = {0, 0, 0};
    for (; T < 1e4; T *= 1.25) {
      double z = 0.0;
      for (int i = 0; i < V; ++i) {
        int larger = 0;
        for (int j = 0; k && j < V; ++j)
          larger += lg[j] > lg[i];
        if (!k || larger < k) z += exp(((double)lg[i] - lg[order[0]]) / T);
      }
      for (int j = 0; j < 3; ++j)
        prob[j] = exp(((double)lg[order[j]] - lg[order[0]]) / T) / z;
      if (prob[0] < 0.8) break;
    }
    assert_true(prob[0] >= 0.25);
    int count[3] = {0, 0, 0};
    const gpt2_sampler sm = {(float)T, k, 2024};
    for (int st = 0; st < N; ++st) {
      CHECK(gpt2_sample(g, &sm, st, out));
      for (int j = 0; j < 3; ++j)
        count[j] += out[0] == order[j];
    }
    for (int j = 0; j < 3; ++j) {
      const double want = N * prob[j], sigma = sqrt(N * prob[j] * (1.0 - prob[j]));
      printf("  top-k %d, T %.2f: id %d drawn %d of %d times, expected %.1f +- %.1f\n", k, T, order[j], count[j], N,
             want, sigma);
      assert_true(fabs(count[j] - want) <= 5.0 * sigma + 1.0);
    }
  }
  /* top-k keeps exactly k ids: at a temperature that makes the candidates nearly equally likely, 200 draws of each
   * row reach every one of its k largest logits and nothing else */
  for (int k = 2; k <= 7; k += 5) {
    const gpt2_sampler hot = {1e5f, k, 7};
    for (int b = 0; b < batch; ++b) {
      int seen[300] = {0}, distinct = 0;
      for (int st = 0; st < 200; ++st) {
        CHECK(gpt2_sample(g, &hot, st, out));
        int larger = 0;
        for (int i = 0; i < V; ++i)
          larger += lg[b * V + i] > lg[b * V + out[b]];
        assert_true(larger < k);
        distinct += !seen[out[b]]++;
      }
      assert_int_equal(distinct, k);
    }
  }
  const gpt2_sampler bad_k = {1.0f, GPT2_TOPK_MAX + 1, 1}, bad_t = {-1.0f, 0, 1};
  CHECK_FAILS(gpt2_sample(g, &bad_k, 0, out), "top_k");
  CHECK_FAILS(gpt2_sample(g, &bad_t, 0, out), "temperature");
  gpt2_free(g);
  free(lg);
}

/* Bad input: a message naming the problem, nothing run, the model still usable. */
static void bad_input(void **state) {
  (void)state;
  tm_model *m = &fx.tiny;
  gpt2_model *g = NULL;
  CHECK_FAILS(gpt2_load(&g, "/nonexistent/gpt2", 1, 0), "/nonexistent/gpt2");
  assert_null(g);
  CHECK_FAILS(gpt2_load(&g, fx.dir, 1, 65), "max_ctx");
  CHECK_FAILS(gpt2_load(&g, fx.dir, 0, 8), "max_batch");
  CHECK(gpt2_load(&g, fx.dir, 2, 8));
  int ids[16];
  tm_prompt(m, ids, 16, 0);
  CHECK_FAILS(gpt2_decode(g, NULL), "prefill");
  CHECK_FAILS(gpt2_prefill(g, 1, 9, ids), "context");
  CHECK_FAILS(gpt2_prefill(g, 3, 2, ids), "batch 3");
  ids[3] = 300;
  CHECK_FAILS(gpt2_prefill(g, 1, 5, ids), "id 300");
  ids[3] = -1;
  CHECK_FAILS(gpt2_prefill(g, 1, 5, ids), "id -1");
  ids[3] = 3;
  CHECK(gpt2_prefill(g, 2, 4, ids));
  CHECK_FAILS(gpt2_decode(g, NULL), "no token was sampled");
  int bad[2] = {1, 1000};
  CHECK_FAILS(gpt2_decode(g, bad), "id 1000");
  for (int i = 0; i < 4; ++i)
    CHECK(gpt2_decode(g, ids));
  CHECK_FAILS(gpt2_decode(g, ids), "context is full");
  gpt2_free(g);

  /* checkpoints that disagree with their config */
  char dir[64];
  strcpy(dir, "/tmp/gpt2_bad_XXXXXX");
  assert_non_null(mkdtemp(dir));
  CHECK(tm_write(m, dir, "", GPT2_ST_F32, TM_MISSING_TENSOR));
  CHECK_FAILS(gpt2_load(&g, dir, 1, 8), "ln_f.bias");
  CHECK(tm_write(m, dir, "", GPT2_ST_F32, TM_WRONG_SHAPE));
  CHECK_FAILS(gpt2_load(&g, dir, 1, 8), "h.1.attn.c_attn.weight");
  gpt2_config c = m->cfg;
  c.n_embd = 60; /* a head size the TMA rows cannot take */
  CHECK(tm_write(m, dir, "", GPT2_ST_F32, TM_OK));
  CHECK(gpt2_config_write(&c, dir));
  CHECK_FAILS(gpt2_load(&g, dir, 1, 8), "n_embd");
  c = m->cfg;
  c.n_layer = 3; /* one layer more than the file has */
  CHECK(gpt2_config_write(&c, dir));
  CHECK_FAILS(gpt2_load(&g, dir, 1, 8), "h.2.");
  assert_null(g);
  tm_rmdir(dir);
}

/* attn_args.kv_rows (added for the KV cache): heads kv_rows rows apart give the same output as contiguous heads of
 * seq_k rows, the rows past seq_k holding garbage that must not be read; kv_rows below seq_k is refused. */
static void attention_kv_rows(void **state) {
  (void)state;
  const int B = 2, H = 3, D = 64, SQ = 5, SK = 37, R = 64;
  const size_t nq = (size_t)B * H * SQ * D, nk = (size_t)B * H * SK * D, nc = (size_t)B * H * R * D;
  kbd_bf16 *hq = (kbd_bf16 *)malloc(nq * 2), *hk = (kbd_bf16 *)malloc(nk * 2), *hv = (kbd_bf16 *)malloc(nk * 2);
  kbd_bf16 *ck = (kbd_bf16 *)malloc(nc * 2), *cv = (kbd_bf16 *)malloc(nc * 2);
  kbd_bf16 *o1 = (kbd_bf16 *)malloc(nq * 2), *o2 = (kbd_bf16 *)malloc(nq * 2);
  assert_true(hq && hk && hv && ck && cv && o1 && o2);
  unsigned r = 1;
  for (size_t i = 0; i < nq; ++i)
    hq[i] = kbd_f32_to_bf16((float)((r = r * 1103515245u + 12345u) >> 20) / 4096.0f - 0.5f);
  for (size_t i = 0; i < nk; ++i) {
    hk[i] = kbd_f32_to_bf16((float)((r = r * 1103515245u + 12345u) >> 20) / 4096.0f - 0.5f);
    hv[i] = kbd_f32_to_bf16((float)((r = r * 1103515245u + 12345u) >> 20) / 4096.0f - 0.5f);
  }
  for (size_t i = 0; i < nc; ++i)
    ck[i] = cv[i] = kbd_f32_to_bf16(1000.0f); /* what a wrong read would bring in */
  for (int bh = 0; bh < B * H; ++bh)
    for (int s = 0; s < SK; ++s)
      for (int d = 0; d < D; ++d) {
        ck[((size_t)bh * R + s) * D + d] = hk[((size_t)bh * SK + s) * D + d];
        cv[((size_t)bh * R + s) * D + d] = hv[((size_t)bh * SK + s) * D + d];
      }
  void *dq, *dk, *dv, *dck, *dcv, *do1, *do2, *ws;
  CHECK(kbd_malloc(&dq, nq * 2));
  CHECK(kbd_malloc(&dk, nk * 2));
  CHECK(kbd_malloc(&dv, nk * 2));
  CHECK(kbd_malloc(&dck, nc * 2));
  CHECK(kbd_malloc(&dcv, nc * 2));
  CHECK(kbd_malloc(&do1, nq * 2));
  CHECK(kbd_malloc(&do2, nq * 2));
  CHECK(kbd_copy_to_device(dq, hq, nq * 2));
  CHECK(kbd_copy_to_device(dk, hk, nk * 2));
  CHECK(kbd_copy_to_device(dv, hv, nk * 2));
  CHECK(kbd_copy_to_device(dck, ck, nc * 2));
  CHECK(kbd_copy_to_device(dcv, cv, nc * 2));
  for (int splits = 1; splits <= 2; ++splits) {
    attn_args a;
    memset(&a, 0, sizeof a);
    a.dtype = ATTN_BF16, a.batch = B, a.heads_q = a.heads_kv = H, a.seq_q = SQ, a.seq_k = SK, a.head_dim = D;
    a.causal = 1, a.q = dq, a.k = dk, a.v = dv, a.o = do1, a.splits = splits;
    CHECK(kbd_malloc(&ws, attn_workspace_bytes(&a) + 128));
    a.workspace = splits > 1 ? ws : NULL;
    CHECK(attn_run(&a));
    a.k = dck, a.v = dcv, a.o = do2, a.kv_rows = R;
    CHECK(attn_run(&a));
    CHECK(kbd_device_sync());
    CHECK(kbd_copy_to_host(o1, do1, nq * 2));
    CHECK(kbd_copy_to_host(o2, do2, nq * 2));
    assert_memory_equal(o1, o2, nq * 2);
    a.kv_rows = SK - 1;
    CHECK_FAILS(attn_run(&a), "kv_rows");
    CHECK(kbd_free(ws));
  }
  void *bufs[7] = {dq, dk, dv, dck, dcv, do1, do2};
  for (int i = 0; i < 7; ++i)
    CHECK(kbd_free(bufs[i]));
  free(hq), free(hk), free(hv), free(ck), free(cv), free(o1), free(o2);
}

/* A tokenizer for the tiny model's 300 ids (the CLI's --prompt test): ids 0..255 the byte tokens (in byte order, not
 * GPT-2's), spelled in GPT-2's byte-to-unicode alphabet (printable Latin-1 bytes stand for themselves, the other 68
 * bytes for U+0100 onwards, space for U+0120), then 4 merges: "h e", "l l", "he ll", "Ġ w" -> ids 256 .. 259. */
static void tm_utf8(FILE *f, unsigned cp) {
  if (cp < 0x80) {
    if (cp == '"' || cp == '\\') fputc('\\', f);
    fputc((int)cp, f);
  } else {
    fputc((int)(0xc0 | cp >> 6), f);
    fputc((int)(0x80 | (cp & 0x3f)), f);
  }
}
static int tm_write_tokenizer(const char *dir) {
  unsigned cp[256];
  unsigned next = 256;
  for (unsigned b = 0; b < 256; ++b)
    cp[b] = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae) ? b : next++;
  char path[512];
  snprintf(path, sizeof path, "%s/vocab.json", dir);
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputc('{', f);
  for (unsigned b = 0; b < 256; ++b) {
    fputc('"', f);
    tm_utf8(f, cp[b]);
    fprintf(f, "\": %u, ", b);
  }
  fprintf(f, "\"he\": 256, \"ll\": 257, \"hell\": 258, \"");
  tm_utf8(f, cp[' ']);
  fprintf(f, "w\": 259}\n");
  if (fclose(f) != 0) return 0;
  snprintf(path, sizeof path, "%s/merges.txt", dir);
  if (!(f = fopen(path, "w"))) return 0;
  fprintf(f, "#version: 0.2\nh e\nl l\nhe ll\n");
  tm_utf8(f, cp[' ']);
  fprintf(f, " w\n");
  return fclose(f) == 0;
}

int main(int argc, char **argv) {
  if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--write-model")) { /* the CLI tests' checkpoint */
    tm_model m;
    tm_make(&m, 1234, 2, 64, 4, 300, 64);
    const kbd_status s = tm_write(&m, argv[2], "", GPT2_ST_F32, TM_OK);
    tm_free(&m);
    if (!kbd_ok(s)) fprintf(stderr, "%s\n", s.msg);
    if (kbd_ok(s) && argc == 4 && (strcmp(argv[3], "--tokenizer") || !tm_write_tokenizer(argv[2]))) {
      fprintf(stderr, "test_gpt2_model: --write-model DIR [--tokenizer]: cannot write %s's tokenizer\n", argv[2]);
      return 1;
    }
    return kbd_ok(s) ? 0 : 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(attention_kv_rows), cmocka_unit_test(prefill_lengths), cmocka_unit_test(prefill_batch3),
      cmocka_unit_test(greedy_batch1),     cmocka_unit_test(greedy_batch3),   cmocka_unit_test(kv_decode),
      cmocka_unit_test(sampling),          cmocka_unit_test(bad_input),       cmocka_unit_test(many_layers),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
