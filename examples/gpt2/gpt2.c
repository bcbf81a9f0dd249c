/* gpt2.c - host side of the GPT-2 example: the checkpoint into device memory, the memory plan, and the forward pass
 * as a sequence of kbd launches (gemm_run, attn_run and the kernels of gpt2_kernels.cu). gpt2.h documents the calls,
 * docs/gpt2.md the model and the plan. */
#define _DEFAULT_SOURCE 1 /* clock_gettime under -std=c11 */
#include "gpt2.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention.h"
#include "gemm.h"
#include "gpt2_kernels.h"
#include "gpt2_safetensors.h"

/* The persistent GEMM grid and the split-KV decode are sized for an H100's 132 multiprocessors (gemm.h). */
#define GPT2_SMS 132

/* The ops of the forward pass, for gpt2_profile. */
enum {
  GPT2_OP_EMBED,
  GPT2_OP_LN,
  GPT2_OP_QKV,
  GPT2_OP_KV,
  GPT2_OP_ATTN,
  GPT2_OP_MERGE,
  GPT2_OP_PROJ,
  GPT2_OP_FC,
  GPT2_OP_MLP_PROJ,
  GPT2_OP_LM_HEAD,
  GPT2_OP_SAMPLE,
  GPT2_OPS
};
static const char *const gpt2_op_names[GPT2_OPS] = {
    "embedding (gpt2_embed)",          "layernorm (gpt2_layernorm)", "QKV GEMM (+bias)",
    "KV-cache write (gpt2_qkv_split)", "attention (attn_run)",       "head merge (gpt2_merge_heads)",
    "attn c_proj GEMM (+bias+res)",    "MLP c_fc GEMM (+bias+GELU)", "MLP c_proj GEMM (+bias+res)",
    "LM head GEMM (f32 logits)",       "sampling (gpt2_sample_rows)"};

typedef struct gpt2_layer {
  kbd_bf16 *w_qkv, *w_o, *w_fc, *w_proj; /* [out][in] */
  float *b_qkv, *b_o, *b_fc, *b_proj, *ln1_g, *ln1_b, *ln2_g, *ln2_b;
} gpt2_layer;

struct gpt2_model {
  gpt2_config cfg;
  int max_batch, max_ctx, hd, hdp;
  long long ldl; /* logits^T row stride: max_batch rounded up to 4 floats, the TMA's 16-byte rows */
  kbd_bf16 *wte, *wpe;
  float *lnf_g, *lnf_b;
  gpt2_layer *layers;
  /* activations, [max_batch * max_ctx] token rows each (decode uses the first batch rows) */
  kbd_bf16 *xa, *xb, *ln, *qkv, *q, *o, *h;
  kbd_bf16 *kc, *vc; /* KV cache [layer][max_batch][heads][max_ctx][hdp] */
  float *logits;     /* logits^T [vocab][ldl] */
  void *ws;          /* split-KV decode workspace */
  int *ids, *next;   /* token ids of a step [max_batch * max_ctx], sampled ids [max_batch] */
  int batch, pos, have_logits, have_next;
  int profile; /* gpt2_profile: time each op (a device sync after every launch) */
  double op_s[GPT2_OPS], op_cpu[GPT2_OPS];
  double cpu0; /* process CPU seconds at the op's start (CPU mode) */
  long long op_n[GPT2_OPS];
  void **allocs; /* every device buffer, for gpt2_free */
  int nallocs, cap_allocs;
};

static kbd_status gpt2_err(const char *fmt, ...) KBD_PRINTF(1, 2);
static kbd_status gpt2_err(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kbd_status s = kbd_status_vmake(KBD_ERR_INVALID, fmt, ap);
  va_end(ap);
  return s;
}
/* A failed step's status with where in the model it failed. */
static kbd_status gpt2_at(kbd_status s, const char *what, int layer) {
  if (kbd_ok(s)) return s;
  if (layer >= 0) return kbd_status_make(s.code, "gpt2: layer %d, %s: %s", layer, what, s.msg);
  return kbd_status_make(s.code, "gpt2: %s: %s", what, s.msg);
}

static kbd_status gpt2_alloc(gpt2_model *m, void **p, size_t bytes) {
  *p = NULL;
  if (m->nallocs == m->cap_allocs) {
    const int cap = m->cap_allocs ? 2 * m->cap_allocs : 64;
    void **a = (void **)realloc(m->allocs, (size_t)cap * sizeof(void *));
    if (!a) return kbd_status_make(KBD_ERR_OOM, "gpt2: no host memory");
    m->allocs = a, m->cap_allocs = cap;
  }
  kbd_status s = kbd_malloc(p, bytes ? bytes : 16);
  if (!kbd_ok(s)) return gpt2_at(s, "device memory", -1);
  m->allocs[m->nallocs++] = *p;
  /* zero once: the KV cache rows past a sequence and the padded head columns are read as zeros, never as garbage */
  return kbd_memset_device(*p, 0, bytes ? bytes : 16);
}

/* ---- loading ------------------------------------------------------------------------------------------------ */

typedef struct gpt2_loader {
  gpt2_model *m;
  gpt2_st_file st;
  const char *prefix; /* "" or "transformer." */
  char path[4096];
  float *tmp;
} gpt2_loader;

static kbd_status gpt2_read(gpt2_loader *L, const char *name, int ndim, long long d0, long long d1, float *out) {
  char full[256];
  snprintf(full, sizeof full, "%s%s", L->prefix, name);
  if (!gpt2_st_find(&L->st, full))
    return gpt2_err("gpt2: %s: no tensor '%s' (a GPT-2 checkpoint of %d layers needs it)", L->path, full,
                    L->m->cfg.n_layer);
  const long long shape[2] = {d0, d1};
  return gpt2_st_read_f32(&L->st, full, ndim, shape, out); /* its message names the file, the tensor, the problem */
}

/* A vector to the device as f32. */
static kbd_status gpt2_load_vec(gpt2_loader *L, const char *name, long long n, float **dst) {
  kbd_status s = gpt2_read(L, name, 1, n, 0, L->tmp);
  if (!kbd_ok(s)) return s;
  if (!kbd_ok(s = gpt2_alloc(L->m, (void **)dst, (size_t)n * 4))) return s;
  return kbd_copy_to_device(*dst, L->tmp, (size_t)n * 4);
}

/* A matrix stored [rows][cols] to the device as bf16, transposed to [cols][rows] when `transpose` (a Conv1D weight
 * [in][out] becomes [out][in]: K contiguous, the K-major B the GEMM loads with 128-byte swizzled TMA boxes, the same
 * layout as the tied embedding the LM head reads). */
static kbd_status gpt2_load_mat(gpt2_loader *L, const char *name, long long rows, long long cols, int transpose,
                                kbd_bf16 **dst) {
  kbd_status s = gpt2_read(L, name, 2, rows, cols, L->tmp);
  if (!kbd_ok(s)) return s;
  const size_t n = (size_t)(rows * cols);
  kbd_bf16 *h = (kbd_bf16 *)malloc(n * sizeof(kbd_bf16));
  if (!h) return kbd_status_make(KBD_ERR_OOM, "gpt2: %s: no host memory for '%s'", L->path, name);
  for (long long r = 0; r < rows; ++r)
    for (long long c = 0; c < cols; ++c)
      h[transpose ? c * rows + r : r * cols + c] = kbd_f32_to_bf16(L->tmp[r * cols + c]);
  s = gpt2_alloc(L->m, (void **)dst, n * sizeof(kbd_bf16));
  if (kbd_ok(s)) s = kbd_copy_to_device(*dst, h, n * sizeof(kbd_bf16));
  free(h);
  return s;
}

static kbd_status gpt2_check_config(const gpt2_config *c, const char *dir) {
  if (c->n_layer < 1 || c->n_head < 1 || c->n_embd < 1 || c->vocab_size < 1 || c->n_ctx < 1)
    return gpt2_err(
        "gpt2: %s/config.json: n_layer %d, n_head %d, n_embd %d, vocab_size %d, n_ctx %d: each must be >= 1", dir,
        c->n_layer, c->n_head, c->n_embd, c->vocab_size, c->n_ctx);
  if (c->n_embd % c->n_head != 0)
    return gpt2_err("gpt2: %s/config.json: n_embd %d is not a multiple of n_head %d", dir, c->n_embd, c->n_head);
  if (c->n_embd / c->n_head > 256)
    return gpt2_err("gpt2: %s/config.json: head size %d: the attention kernels go up to 256", dir,
                    c->n_embd / c->n_head);
  /* the GEMM reads rows of n_embd bf16 through the TMA: 16-byte strides */
  if (c->n_embd % 8 != 0)
    return gpt2_err("gpt2: %s/config.json: n_embd %d: must be a multiple of 8 (16-byte bf16 rows for the TMA)", dir,
                    c->n_embd);
  if (!(c->ln_eps > 0.0f)) return gpt2_err("gpt2: %s/config.json: layer_norm_epsilon %g must be > 0", dir, c->ln_eps);
  return kbd_status_ok();
}

static kbd_status gpt2_load_weights(gpt2_loader *L) {
  gpt2_model *m = L->m;
  const long long C = m->cfg.n_embd, V = m->cfg.vocab_size;
  kbd_status s;
  if (!kbd_ok(s = gpt2_load_mat(L, "wte.weight", V, C, 0, &m->wte))) return s;
  if (!kbd_ok(s = gpt2_load_mat(L, "wpe.weight", m->cfg.n_ctx, C, 0, &m->wpe))) return s;
  if (!kbd_ok(s = gpt2_load_vec(L, "ln_f.weight", C, &m->lnf_g))) return s;
  if (!kbd_ok(s = gpt2_load_vec(L, "ln_f.bias", C, &m->lnf_b))) return s;
  for (int i = 0; i < m->cfg.n_layer; ++i) {
    gpt2_layer *y = &m->layers[i];
    char n[128];
#define GPT2_NAME(suffix) (snprintf(n, sizeof n, "h.%d.%s", i, suffix), n)
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("ln_1.weight"), C, &y->ln1_g))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("ln_1.bias"), C, &y->ln1_b))) return s;
    if (!kbd_ok(s = gpt2_load_mat(L, GPT2_NAME("attn.c_attn.weight"), C, 3 * C, 1, &y->w_qkv))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("attn.c_attn.bias"), 3 * C, &y->b_qkv))) return s;
    if (!kbd_ok(s = gpt2_load_mat(L, GPT2_NAME("attn.c_proj.weight"), C, C, 1, &y->w_o))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("attn.c_proj.bias"), C, &y->b_o))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("ln_2.weight"), C, &y->ln2_g))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("ln_2.bias"), C, &y->ln2_b))) return s;
    if (!kbd_ok(s = gpt2_load_mat(L, GPT2_NAME("mlp.c_fc.weight"), C, 4 * C, 1, &y->w_fc))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("mlp.c_fc.bias"), 4 * C, &y->b_fc))) return s;
    if (!kbd_ok(s = gpt2_load_mat(L, GPT2_NAME("mlp.c_proj.weight"), 4 * C, C, 1, &y->w_proj))) return s;
    if (!kbd_ok(s = gpt2_load_vec(L, GPT2_NAME("mlp.c_proj.bias"), C, &y->b_proj))) return s;
#undef GPT2_NAME
  }
  return kbd_status_ok();
}

/* The memory plan: every activation for max_batch x max_ctx token rows, the KV cache of every layer, the logits of
 * max_batch rows and the split-KV workspace of the largest decode, allocated once; no call after gpt2_load
 * allocates. */
static kbd_status gpt2_plan(gpt2_model *m) {
  const size_t C = (size_t)m->cfg.n_embd, rows = (size_t)m->max_batch * (size_t)m->max_ctx, b2 = sizeof(kbd_bf16);
  const size_t H = (size_t)m->cfg.n_head, hdp = (size_t)m->hdp;
  const size_t heads_rows = (size_t)m->max_batch * H * (size_t)m->max_ctx * hdp;
  kbd_status s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->xa, rows * C * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->xb, rows * C * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->ln, rows * C * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->qkv, rows * 3 * C * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->h, rows * 4 * C * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->q, heads_rows * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->o, heads_rows * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->kc, (size_t)m->cfg.n_layer * heads_rows * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->vc, (size_t)m->cfg.n_layer * heads_rows * b2))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->logits, (size_t)m->cfg.vocab_size * (size_t)m->ldl * 4))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->ids, rows * sizeof(int)))) return s;
  if (!kbd_ok(s = gpt2_alloc(m, (void **)&m->next, (size_t)m->max_batch * sizeof(int)))) return s;
  attn_args a;
  memset(&a, 0, sizeof a);
  a.batch = m->max_batch, a.heads_q = a.heads_kv = m->cfg.n_head, a.seq_q = 1, a.head_dim = m->hdp;
  a.splits = ATTN_SPLITS_MAX;
  return gpt2_alloc(m, &m->ws, attn_workspace_bytes(&a));
}

kbd_status gpt2_load(gpt2_model **out, const char *dir, int max_batch, int max_ctx) {
  if (!out || !dir) return gpt2_err("gpt2_load: model or dir is NULL");
  *out = NULL;
  gpt2_model *m = (gpt2_model *)calloc(1, sizeof *m);
  if (!m) return kbd_status_make(KBD_ERR_OOM, "gpt2_load: no host memory");
  kbd_status s = gpt2_config_load(&m->cfg, dir);
  if (kbd_ok(s)) s = gpt2_check_config(&m->cfg, dir);
  if (!kbd_ok(s)) {
    free(m);
    return s;
  }
  if (max_ctx == 0) max_ctx = m->cfg.n_ctx;
  if (max_batch < 1 || max_ctx < 1 || max_ctx > m->cfg.n_ctx) {
    s = gpt2_err("gpt2_load: max_batch %d, max_ctx %d: need max_batch >= 1 and 1 <= max_ctx <= n_ctx = %d", max_batch,
                 max_ctx, m->cfg.n_ctx);
    free(m);
    return s;
  }
  if ((long long)max_batch * m->cfg.n_head > 65535) { /* the attention grid's y dimension (attention.h) */
    s = gpt2_err("gpt2_load: max_batch %d x n_head %d is past 65535", max_batch, m->cfg.n_head);
    free(m);
    return s;
  }
  m->max_batch = max_batch, m->max_ctx = max_ctx;
  m->hd = m->cfg.n_embd / m->cfg.n_head;
  m->hdp = m->hd <= 64 ? 64 : m->hd <= 128 ? 128 : 256;
  m->ldl = ((long long)max_batch + 3) / 4 * 4;
  m->layers = (gpt2_layer *)calloc((size_t)m->cfg.n_layer, sizeof(gpt2_layer));
  if (!m->layers) {
    free(m);
    return kbd_status_make(KBD_ERR_OOM, "gpt2_load: no host memory");
  }
  gpt2_loader L;
  memset(&L, 0, sizeof L);
  L.m = m;
  snprintf(L.path, sizeof L.path, "%s/model.safetensors", dir);
  const long long C = m->cfg.n_embd, big = (long long)m->cfg.vocab_size > 4 * C ? m->cfg.vocab_size : 4 * C;
  const long long tmpn = (big > m->cfg.n_ctx ? big : m->cfg.n_ctx) * C;
  L.tmp = (float *)malloc((size_t)tmpn * sizeof(float));
  if (!L.tmp) s = kbd_status_make(KBD_ERR_OOM, "gpt2_load: no host memory for one weight (%lld floats)", tmpn);
  if (kbd_ok(s)) s = gpt2_st_open(&L.st, L.path);
  if (kbd_ok(s)) {
    L.prefix = gpt2_st_find(&L.st, "wte.weight")               ? ""
               : gpt2_st_find(&L.st, "transformer.wte.weight") ? "transformer."
                                                               : NULL;
    if (!L.prefix) s = gpt2_err("gpt2: %s: no tensor 'wte.weight' (nor 'transformer.wte.weight'): not GPT-2", L.path);
    if (kbd_ok(s)) s = gpt2_load_weights(&L);
    gpt2_st_close(&L.st);
  }
  free(L.tmp);
  if (kbd_ok(s)) s = gpt2_plan(m);
  if (kbd_ok(s)) s = kbd_device_sync();
  if (!kbd_ok(s)) {
    gpt2_free(m);
    return s;
  }
  *out = m;
  return s;
}

void gpt2_free(gpt2_model *m) {
  if (!m) return;
  for (int i = 0; i < m->nallocs; ++i)
    (void)kbd_free(m->allocs[i]);
  free(m->allocs);
  free(m->layers);
  free(m);
}

const gpt2_config *gpt2_model_config(const gpt2_model *m) { return &m->cfg; }
int gpt2_max_batch(const gpt2_model *m) { return m->max_batch; }
int gpt2_max_ctx(const gpt2_model *m) { return m->max_ctx; }
int gpt2_position(const gpt2_model *m) { return m->pos; }
int gpt2_batch(const gpt2_model *m) { return m->batch; }

/* ---- the forward pass ------------------------------------------------------------------------------------------ */

static double gpt2_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* An op's start: the wall clock, and (when profiling) the process CPU time, which in CPU mode is the op's own cost
 * even on a machine whose other processes take the cores. */
static double gpt2_start(gpt2_model *m) {
  if (m->profile) m->cpu0 = (double)clock() / CLOCKS_PER_SEC;
  return gpt2_now();
}
/* Profiling: the op's launch status, and when profiling, its time up to a device sync (t0 from gpt2_now before the
 * launch). */
static kbd_status gpt2_op(gpt2_model *m, int op, double t0, kbd_status s) {
  if (!m->profile || !kbd_ok(s)) return s;
  s = kbd_device_sync();
  m->op_s[op] += gpt2_now() - t0;
  m->op_cpu[op] += (double)clock() / CLOCKS_PER_SEC - m->cpu0;
  m->op_n[op] += 1;
  return s;
}

void gpt2_profile(gpt2_model *m, int on) {
  m->profile = on;
  memset(m->op_s, 0, sizeof m->op_s);
  memset(m->op_cpu, 0, sizeof m->op_cpu);
  memset(m->op_n, 0, sizeof m->op_n);
}

void gpt2_profile_print(const gpt2_model *m, FILE *f) {
  double total = 0.0, total_cpu = 0.0;
  for (int i = 0; i < GPT2_OPS; ++i)
    total += m->op_s[i], total_cpu += m->op_cpu[i];
  fprintf(f, "| op | launches | seconds | share | CPU seconds | share |\n|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < GPT2_OPS; ++i)
    if (m->op_n[i])
      fprintf(f, "| %s | %lld | %.3f | %.1f %% | %.3f | %.1f %% |\n", gpt2_op_names[i], m->op_n[i], m->op_s[i],
              total > 0 ? 100.0 * m->op_s[i] / total : 0.0, m->op_cpu[i],
              total_cpu > 0 ? 100.0 * m->op_cpu[i] / total_cpu : 0.0);
}

int gpt2_profile_op(const gpt2_model *m, int i, const char **name, long long *launches, double *seconds,
                    double *cpu_seconds) {
  if (!m || i < 0 || i >= GPT2_OPS) return 0;
  if (name) *name = gpt2_op_names[i];
  if (launches) *launches = m->op_n[i];
  if (seconds) *seconds = m->op_s[i];
  if (cpu_seconds) *cpu_seconds = m->op_cpu[i];
  return 1;
}

/* d = act(a w^T + bias (+ c)): a [m][k] row-major, w [n][k] (K-major B), c and d [m][ldd]. */
static kbd_status gpt2_gemm(long long m, long long n, long long k, const kbd_bf16 *a, long long lda, const kbd_bf16 *w,
                            const float *bias, const kbd_bf16 *c, void *d, long long ldd, int d_f32, int act) {
  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = lda;
  g.b = w, g.ldb = k, g.b_col = 1;
  g.d = d, g.ldd = ldd, g.d_f32 = d_f32;
  g.c = c, g.ldc = ldd, g.beta = c ? 1.0f : 0.0f; /* the residual add, in the epilogue */
  g.bias = bias;
  g.alpha = 1.0f, g.scale_a = g.scale_b = 1.0f;
  g.act = act;
  return gemm_run(&g, NULL);
}

static kbd_status gpt2_layernorm_rows(const kbd_bf16 *x, kbd_bf16 *y, const float *g, const float *b, long long rows,
                                      long long c, long long in_stride, long long in_offset, float eps) {
  gpt2_layernorm_params p;
  p.x = x, p.y = y, p.gamma = g, p.beta = b, p.rows = rows, p.c = c, p.in_stride = in_stride, p.in_offset = in_offset;
  p.eps = eps;
  return gpt2_layernorm(kbd_cfg_1d((unsigned)rows), p);
}

/* t new tokens per row (their ids already in m->ids), at positions pos0 .. pos0 + t - 1: every layer, then the
 * final layernorm and the LM head on each row's last token. */
static kbd_status gpt2_forward(gpt2_model *m, int batch, int t, int pos0) {
  const gpt2_config *cf = &m->cfg;
  const long long C = cf->n_embd, M = (long long)batch * t, V = cf->vocab_size;
  const int H = cf->n_head;
  const size_t cache_layer = (size_t)m->max_batch * (size_t)H * (size_t)m->max_ctx * (size_t)m->hdp;
  kbd_status s;
  gpt2_embed_params e;
  e.ids = m->ids, e.wte = m->wte, e.wpe = m->wpe, e.x = m->xa, e.rows = M, e.c = C, e.t = t, e.pos0 = pos0;
  e.vocab = cf->vocab_size;
  double ts = gpt2_start(m);
  if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_EMBED, ts, gpt2_embed(kbd_cfg_1d((unsigned)M), e)), "embedding", -1)))
    return s;
  for (int l = 0; l < cf->n_layer; ++l) {
    const gpt2_layer *y = &m->layers[l];
    kbd_bf16 *kc = m->kc + (size_t)l * cache_layer, *vc = m->vc + (size_t)l * cache_layer;
    ts = gpt2_start(m);
    s = gpt2_op(m, GPT2_OP_LN, ts, gpt2_layernorm_rows(m->xa, m->ln, y->ln1_g, y->ln1_b, M, C, 1, 0, cf->ln_eps));
    if (!kbd_ok(s = gpt2_at(s, "ln_1", l))) return s;
    ts = gpt2_start(m);
    s = gpt2_gemm(M, 3 * C, C, m->ln, C, y->w_qkv, y->b_qkv, NULL, m->qkv, 3 * C, 0, GEMM_ACT_NONE);
    if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_QKV, ts, s), "QKV projection", l))) return s;
    gpt2_qkv_params qp;
    qp.qkv = m->qkv, qp.q = m->q, qp.k = kc, qp.v = vc, qp.t = t, qp.heads = H, qp.hd = m->hd, qp.hdp = m->hdp;
    qp.ctx = m->max_ctx, qp.pos0 = pos0, qp.rows = M;
    ts = gpt2_start(m);
    s = gpt2_op(m, GPT2_OP_KV, ts, gpt2_qkv_split(kbd_cfg_1d((unsigned)M), qp));
    if (!kbd_ok(s = gpt2_at(s, "KV-cache write", l))) return s;
    attn_args a;
    memset(&a, 0, sizeof a);
    a.dtype = ATTN_BF16, a.batch = batch, a.heads_q = a.heads_kv = H, a.seq_q = t, a.seq_k = pos0 + t;
    a.head_dim = m->hdp, a.causal = t > 1, a.scale = 1.0f / sqrtf((float)m->hd);
    a.q = m->q, a.k = kc, a.v = vc, a.o = m->o, a.kv_rows = m->max_ctx, a.splits = 1;
    if (t == 1) { /* decode: one query row per head, so split the keys to fill the machine (flash-decoding) */
      a.splits = attn_pick_splits(&a, GPT2_SMS);
      a.workspace = m->ws;
    }
    ts = gpt2_start(m);
    if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_ATTN, ts, attn_run(&a)), "attention", l))) return s;
    const kbd_bf16 *ao = m->ln; /* the merged heads reuse the ln buffer: its rows were consumed by the QKV GEMM */
    if (t == 1 && m->hdp == m->hd) {
      ao = m->o; /* [b][h][1][hd] is already [b][C] */
    } else {
      gpt2_merge_params mp;
      mp.o = m->o, mp.y = m->ln, mp.t = t, mp.heads = H, mp.hd = m->hd, mp.hdp = m->hdp, mp.rows = M;
      ts = gpt2_start(m);
      s = gpt2_op(m, GPT2_OP_MERGE, ts, gpt2_merge_heads(kbd_cfg_1d((unsigned)M), mp));
      if (!kbd_ok(s = gpt2_at(s, "head merge", l))) return s;
    }
    ts = gpt2_start(m);
    s = gpt2_gemm(M, C, C, ao, C, y->w_o, y->b_o, m->xa, m->xb, C, 0, GEMM_ACT_NONE);
    if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_PROJ, ts, s), "attention output projection", l))) return s;
    ts = gpt2_start(m);
    s = gpt2_op(m, GPT2_OP_LN, ts, gpt2_layernorm_rows(m->xb, m->ln, y->ln2_g, y->ln2_b, M, C, 1, 0, cf->ln_eps));
    if (!kbd_ok(s = gpt2_at(s, "ln_2", l))) return s;
    ts = gpt2_start(m);
    s = gpt2_gemm(M, 4 * C, C, m->ln, C, y->w_fc, y->b_fc, NULL, m->h, 4 * C, 0, GEMM_ACT_GELU_TANH);
    if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_FC, ts, s), "MLP c_fc", l))) return s;
    ts = gpt2_start(m);
    s = gpt2_gemm(M, C, 4 * C, m->h, 4 * C, y->w_proj, y->b_proj, m->xb, m->xa, C, 0, GEMM_ACT_NONE);
    if (!kbd_ok(s = gpt2_at(gpt2_op(m, GPT2_OP_MLP_PROJ, ts, s), "MLP c_proj", l))) return s;
  }
  /* only each row's last token needs logits: the final layernorm gathers those rows */
  double t0 = gpt2_start(m);
  s = gpt2_op(m, GPT2_OP_LN, t0, gpt2_layernorm_rows(m->xa, m->ln, m->lnf_g, m->lnf_b, batch, C, t, t - 1, cf->ln_eps));
  if (!kbd_ok(s = gpt2_at(s, "ln_f", -1))) return s;
  t0 = gpt2_start(m);
  /* logits^T = wte ln^T: the vocabulary is the GEMM's M, so its odd size needs no padded row stride, and the batch
   * (at most a few dozen rows) is N: ceil(V / 256) tiles of one 128-column tile row, half the tiles of ln wte^T's
   * ceil(V / 128) 256-row tiles of which all but B rows are padding */
  s = gpt2_gemm(V, batch, C, m->wte, C, m->ln, NULL, NULL, m->logits, m->ldl, 1, GEMM_ACT_NONE);
  return gpt2_at(gpt2_op(m, GPT2_OP_LM_HEAD, t0, s), "LM head", -1);
}

static kbd_status gpt2_check_ids(const gpt2_model *m, const int *ids, long long n) {
  for (long long i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= m->cfg.vocab_size)
      return gpt2_err("gpt2: token %lld is id %d: outside the vocabulary 0 .. %d", i, ids[i], m->cfg.vocab_size - 1);
  return kbd_status_ok();
}

kbd_status gpt2_prefill(gpt2_model *m, int batch, int t, const int *ids) {
  if (!m || !ids) return gpt2_err("gpt2_prefill: model or ids is NULL");
  if (batch < 1 || batch > m->max_batch)
    return gpt2_err("gpt2_prefill: batch %d: the model was planned for 1 .. %d rows", batch, m->max_batch);
  if (t < 1 || t > m->max_ctx)
    return gpt2_err("gpt2_prefill: a prompt of %d tokens: the context planned is 1 .. %d", t, m->max_ctx);
  kbd_status s = gpt2_check_ids(m, ids, (long long)batch * t);
  if (!kbd_ok(s)) return s;
  m->have_logits = m->have_next = 0, m->pos = 0, m->batch = batch;
  if (!kbd_ok(s = kbd_copy_to_device(m->ids, ids, (size_t)batch * (size_t)t * sizeof(int)))) return s;
  if (!kbd_ok(s = gpt2_forward(m, batch, t, 0))) return s;
  m->pos = t, m->have_logits = 1;
  return kbd_status_ok();
}

kbd_status gpt2_decode(gpt2_model *m, const int *ids) {
  if (!m) return gpt2_err("gpt2_decode: model is NULL");
  if (m->batch == 0) return gpt2_err("gpt2_decode: no sequence: call gpt2_prefill first");
  if (m->pos >= m->max_ctx)
    return gpt2_err("gpt2_decode: the context is full (%d tokens planned): no room for another token", m->max_ctx);
  kbd_status s;
  if (ids) {
    if (!kbd_ok(s = gpt2_check_ids(m, ids, m->batch))) return s;
    if (!kbd_ok(s = kbd_copy_to_device(m->ids, ids, (size_t)m->batch * sizeof(int)))) return s;
  } else {
    if (!m->have_next) return gpt2_err("gpt2_decode: ids is NULL but no token was sampled since the last step");
    if (!kbd_ok(s = kbd_copy_on_device(m->ids, m->next, (size_t)m->batch * sizeof(int)))) return s;
  }
  m->have_logits = m->have_next = 0;
  if (!kbd_ok(s = gpt2_forward(m, m->batch, 1, m->pos))) return s;
  m->pos += 1, m->have_logits = 1;
  return kbd_status_ok();
}

kbd_status gpt2_logits(const gpt2_model *m, float *out) {
  if (!m || !out) return gpt2_err("gpt2_logits: model or out is NULL");
  if (!m->have_logits) return gpt2_err("gpt2_logits: no logits: call gpt2_prefill or gpt2_decode first");
  const size_t V = (size_t)m->cfg.vocab_size, ld = (size_t)m->ldl;
  float *t = (float *)malloc(V * ld * sizeof(float));
  if (!t) return kbd_status_make(KBD_ERR_OOM, "gpt2_logits: no host memory");
  kbd_status s = kbd_copy_to_host(t, m->logits, V * ld * sizeof(float));
  for (size_t i = 0; kbd_ok(s) && i < V; ++i)
    for (int b = 0; b < m->batch; ++b)
      out[(size_t)b * V + i] = t[i * ld + (size_t)b];
  free(t);
  return s;
}

kbd_status gpt2_sample(gpt2_model *m, const gpt2_sampler *sm, long long step, int *out) {
  if (!m || !sm) return gpt2_err("gpt2_sample: model or sampler is NULL");
  if (!m->have_logits) return gpt2_err("gpt2_sample: no logits: call gpt2_prefill or gpt2_decode first");
  if (!(sm->temperature >= 0.0f) || sm->temperature > 1e6f)
    return gpt2_err("gpt2_sample: temperature %g: 0 (greedy) or a positive finite value", (double)sm->temperature);
  if (sm->top_k < 0 || sm->top_k > GPT2_TOPK_MAX)
    return gpt2_err("gpt2_sample: top_k %d: 0 (all) or 1 .. %d", sm->top_k, GPT2_TOPK_MAX);
  gpt2_sample_params p;
  p.logits = m->logits, p.ld = m->ldl, p.vocab = m->cfg.vocab_size, p.top_k = sm->top_k;
  p.temperature = sm->temperature, p.seed = sm->seed, p.step = step, p.out = m->next;
  const double t = gpt2_start(m);
  kbd_status s =
      gpt2_at(gpt2_op(m, GPT2_OP_SAMPLE, t, gpt2_sample_rows(kbd_cfg_1d((unsigned)m->batch), p)), "sampling", -1);
  if (!kbd_ok(s)) return s;
  m->have_next = 1;
  if (out) return kbd_copy_to_host(out, m->next, (size_t)m->batch * sizeof(int));
  return kbd_status_ok();
}
