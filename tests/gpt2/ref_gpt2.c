/* ref_gpt2.c - see ref_gpt2.h. Everything in double; weights are the test's f32 values widened exactly. */
#include "ref_gpt2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void ref_layernorm(const double *x, double *y, int c, const float *g, const float *b, double eps) {
  double mean = 0.0, var = 0.0;
  for (int i = 0; i < c; ++i)
    mean += x[i];
  mean /= c;
  for (int i = 0; i < c; ++i)
    var += (x[i] - mean) * (x[i] - mean);
  var /= c;
  const double r = 1.0 / sqrt(var + eps);
  for (int i = 0; i < c; ++i)
    y[i] = (x[i] - mean) * r * g[i] + b[i];
}

/* y[out] = x[in] W[in][out] + bias */
static void ref_linear(const double *x, const float *w, const float *bias, int in, int out, double *y) {
  for (int o = 0; o < out; ++o)
    y[o] = bias ? bias[o] : 0.0;
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o)
      y[o] += x[i] * (double)w[(long)i * out + o];
}

static double ref_gelu_tanh(double x) {
  const double k = sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

int ref_gpt2_forward(const ref_gpt2 *m, const int *ids, int t, double *logits) {
  const int C = m->n_embd, H = m->n_head, hd = C / H, V = m->vocab;
  double *x = (double *)calloc((size_t)t * C, sizeof(double));
  double *ln = (double *)calloc((size_t)t * C, sizeof(double));
  double *qkv = (double *)calloc((size_t)t * 3 * C, sizeof(double));
  double *att = (double *)calloc((size_t)t * C, sizeof(double));
  double *hid = (double *)calloc((size_t)4 * C, sizeof(double));
  double *tmp = (double *)calloc((size_t)4 * C, sizeof(double));
  double *p = (double *)calloc((size_t)t, sizeof(double));
  int rc = -1;
  if (!x || !ln || !qkv || !att || !hid || !tmp || !p) goto done;
  for (int i = 0; i < t; ++i)
    for (int c = 0; c < C; ++c)
      x[(long)i * C + c] = (double)m->wte[(long)ids[i] * C + c] + (double)m->wpe[(long)i * C + c];
  for (int l = 0; l < m->n_layer; ++l) {
    const ref_gpt2_layer *L = &m->layers[l];
    for (int i = 0; i < t; ++i) {
      ref_layernorm(x + (long)i * C, ln + (long)i * C, C, L->ln1_g, L->ln1_b, m->eps);
      ref_linear(ln + (long)i * C, L->w_qkv, L->b_qkv, C, 3 * C, qkv + (long)i * 3 * C);
    }
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < t; ++i) {
        const double *q = qkv + (long)i * 3 * C + h * hd;
        double mx = -INFINITY, sum = 0.0;
        for (int j = 0; j <= i; ++j) { /* causal: position i sees 0 .. i */
          const double *k = qkv + (long)j * 3 * C + C + h * hd;
          double s = 0.0;
          for (int d = 0; d < hd; ++d)
            s += q[d] * k[d];
          p[j] = s / sqrt((double)hd);
          if (p[j] > mx) mx = p[j];
        }
        for (int j = 0; j <= i; ++j)
          sum += (p[j] = exp(p[j] - mx));
        for (int d = 0; d < hd; ++d) {
          double o = 0.0;
          for (int j = 0; j <= i; ++j)
            o += p[j] * qkv[(long)j * 3 * C + 2 * C + h * hd + d];
          att[(long)i * C + h * hd + d] = o / sum;
        }
      }
    for (int i = 0; i < t; ++i) {
      ref_linear(att + (long)i * C, L->w_o, L->b_o, C, C, tmp);
      for (int c = 0; c < C; ++c)
        x[(long)i * C + c] += tmp[c];
      ref_layernorm(x + (long)i * C, ln + (long)i * C, C, L->ln2_g, L->ln2_b, m->eps);
      ref_linear(ln + (long)i * C, L->w_fc, L->b_fc, C, 4 * C, hid);
      for (int c = 0; c < 4 * C; ++c)
        hid[c] = ref_gelu_tanh(hid[c]);
      ref_linear(hid, L->w_proj, L->b_proj, 4 * C, C, tmp);
      for (int c = 0; c < C; ++c)
        x[(long)i * C + c] += tmp[c];
    }
  }
  for (int i = 0; i < t; ++i) {
    ref_layernorm(x + (long)i * C, ln + (long)i * C, C, m->lnf_g, m->lnf_b, m->eps);
    for (int v = 0; v < V; ++v) {
      double s = 0.0;
      for (int c = 0; c < C; ++c)
        s += ln[(long)i * C + c] * (double)m->wte[(long)v * C + c];
      logits[(long)i * V + v] = s;
    }
  }
  rc = 0;
done:
  free(x), free(ln), free(qkv), free(att), free(hid), free(tmp), free(p);
  return rc;
}

int ref_gpt2_argmax(const double *row, int n, double *gap) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  double second = -INFINITY;
  for (int i = 0; i < n; ++i)
    if (i != best && row[i] > second) second = row[i];
  if (gap) *gap = row[best] - second;
  return best;
}
