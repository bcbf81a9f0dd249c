/* main.c - host side of examples/attention: runs one attention and checks every output against a double
 * reference computed from the same (rounded) inputs.
 *
 * Usage: attention_<mode> [batch heads_q heads_kv seq_q seq_k head_dim] [options]
 *   (default 2 4 2 129 200 128: GQA, no length a tile multiple)
 *   --f16             f16 tensors (default bf16)          --causal     bottom-right causal mask
 *   --splits N        flash-decoding with N key splits     --decode     pick the splits for 132 SMs
 *   --scale X         softmax scale (default 1/sqrt(head_dim))
 *   --save DIR        after the run, write Q, K, V, O and lse as the kernel saw them (raw little-endian files) and
 *                     DIR/manifest.txt describing them, for tools/gpu-check/torch_check.py (DIR must exist)
 * Exit status 0 when every element is within the tolerance, 1 otherwise (or when --save fails), 2 on bad arguments
 * (the message of attn_run's status names the argument), 77 without a device (GPU build).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/save_tensors.h" /* --save DIR */
#include "attention.h"

/* Inputs in [-1, 1), a few values per row larger so the row max moves between key blocks. */
static float attn_value(unsigned long long i, unsigned salt) {
  const unsigned long long h = (i * 2654435761ull + salt) * 0x9E3779B97F4A7C15ull;
  const float u = (float)((h >> 40) & 0xFFFFFFull) / 16777216.0f * 2.0f - 1.0f;
  return (h & 0xF0000ull) == 0 ? 3.0f * u : u;
}

static float round_to(float x, int f16) {
  return f16 ? kbd_f16_to_f32(kbd_f32_to_f16(x)) : kbd_bf16_to_f32(kbd_f32_to_bf16(x));
}

/* ---- --save DIR: the run's tensors for a second opinion (tools/gpu-check/torch_check.py; the file format is
 * in save_tensors.h) ---------------------------------------------------------------------------------------------- */

/* The attention's tensors: Q, K, V, O ([batch][heads][seq][head_dim], contiguous) and lse (f32
 * [batch][heads_q][seq_q]), with the parameters the kernel ran with (scale: the one it used; splits: after --decode's
 * choice). */
static int attn_save(const char *dir, const char *mode, const attn_args *a, int decode, const void *q, const void *k,
                     const void *v, const void *o, const float *lse) {
  save_ctx s;
  if (!save_begin(&s, dir)) return 1;
  const char *dt = a->dtype == ATTN_F16 ? "f16" : "bf16";
  const long long b = a->batch, hq = a->heads_q, hkv = a->heads_kv, sq = a->seq_q, sk = a->seq_k, d = a->head_dim;
  fprintf(s.man, "# O = softmax(scale * Q K^T + mask) V per (batch, q head); q head h reads kv head h / (heads_q / "
                 "heads_kv); causal: query i sees keys j <= i + seq_k - seq_q (bottom-right); a row that sees no key "
                 "has O = 0, lse = -inf; lse = ln sum exp(scale * q.k) over the visible keys\n");
  fprintf(s.man, "program=attention\nmode=%s\ndtype=%s\nbatch=%d\nheads_q=%d\nheads_kv=%d\nseq_q=%d\nseq_k=%d\n", mode,
          dt, a->batch, a->heads_q, a->heads_kv, a->seq_q, a->seq_k);
  fprintf(s.man, "head_dim=%d\ncausal=%d\ncausal_align=bottom_right\nscale=%.9g\nsplits=%d\ndecode=%d\n", a->head_dim,
          a->causal != 0, (double)(a->scale > 0.0f ? a->scale : 1.0f / sqrtf((float)a->head_dim)), a->splits, decode);
  const long long shq[4] = {b, hq, sq, d}, shk[4] = {b, hkv, sk, d}, shl[3] = {b, hq, sq};
  const long long tq[4] = {hq * sq * d, sq * d, d, 1}, tk[4] = {hkv * sk * d, sk * d, d, 1}, tl[3] = {hq * sq, sq, 1};
  save_tensor(&s, "q", dt, "contiguous", "batch,heads_q,seq_q,head_dim", q, b * hq * sq * d, 2, 4, shq, tq);
  save_tensor(&s, "k", dt, "contiguous", "batch,heads_kv,seq_k,head_dim", k, b * hkv * sk * d, 2, 4, shk, tk);
  save_tensor(&s, "v", dt, "contiguous", "batch,heads_kv,seq_k,head_dim", v, b * hkv * sk * d, 2, 4, shk, tk);
  save_tensor(&s, "o", dt, "contiguous", "batch,heads_q,seq_q,head_dim", o, b * hq * sq * d, 2, 4, shq, tq);
  save_tensor(&s, "lse", "f32", "contiguous", "batch,heads_q,seq_q", lse, b * hq * sq, 4, 3, shl, tl);
  return save_end(&s);
}

int main(int argc, char **argv) {
  attn_args a;
  memset(&a, 0, sizeof a);
  long long dims[6] = {2, 4, 2, 129, 200, 128};
  int npos = 0, decode = 0, bad = 0;
  const char *save_dir = NULL;
  a.splits = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--f16"))
      a.dtype = ATTN_F16;
    else if (!strcmp(argv[i], "--causal"))
      a.causal = 1;
    else if (!strcmp(argv[i], "--decode"))
      decode = 1;
    else if (!strcmp(argv[i], "--splits") && i + 1 < argc)
      a.splits = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
      a.scale = (float)atof(argv[++i]);
    else if (!strcmp(argv[i], "--save") && i + 1 < argc)
      save_dir = argv[++i];
    else if (argv[i][0] != '-' && npos < 6)
      dims[npos++] = atoll(argv[i]);
    else
      bad = 1;
  }
  a.batch = (int)dims[0], a.heads_q = (int)dims[1], a.heads_kv = (int)dims[2];
  a.seq_q = (int)dims[3], a.seq_k = (int)dims[4], a.head_dim = (int)dims[5];
  if (bad) {
    fprintf(stderr,
            "usage: %s [batch heads_q heads_kv seq_q seq_k head_dim] [--f16] [--causal] [--splits N] [--decode] "
            "[--scale X] [--save DIR]\n"
            "--save DIR: write Q, K, V, O and lse as raw little-endian files and DIR/manifest.txt describing them, "
            "for tools/gpu-check/torch_check.py (DIR must exist)\n",
            argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("attention: no CUDA device present; nothing to run\n");
    return 77;
  }
  if (decode) a.splits = attn_pick_splits(&a, 132);
  const int f16 = a.dtype == ATTN_F16, d = a.head_dim;
  const long long nq = (long long)a.batch * a.heads_q * a.seq_q * d, nk = (long long)a.batch * a.heads_kv * a.seq_k * d;
  const long long nrows = (long long)a.batch * a.heads_q * a.seq_q;
  if (nq <= 0 || nk <= 0 || d <= 0) { /* attn_run names the argument */
    const kbd_status s = attn_run(&a);
    fprintf(stderr, "%s\n", s.msg);
    return 2;
  }
  float *fq = (float *)malloc(sizeof(float) * (size_t)nq), *fk = (float *)malloc(sizeof(float) * (size_t)nk);
  float *fv = (float *)malloc(sizeof(float) * (size_t)nk), *lse = (float *)malloc(sizeof(float) * (size_t)nrows);
  unsigned short *hq = (unsigned short *)malloc(2 * (size_t)nq), *hk = (unsigned short *)malloc(2 * (size_t)nk);
  unsigned short *hv = (unsigned short *)malloc(2 * (size_t)nk), *ho = (unsigned short *)malloc(2 * (size_t)nq);
  if (!fq || !fk || !fv || !lse || !hq || !hk || !hv || !ho) return 1;
  for (long long i = 0; i < nq; ++i) {
    fq[i] = round_to(attn_value((unsigned long long)i, 1u), f16);
    hq[i] = f16 ? kbd_f32_to_f16(fq[i]).bits : kbd_f32_to_bf16(fq[i]).bits;
  }
  for (long long i = 0; i < nk; ++i) {
    fk[i] = round_to(attn_value((unsigned long long)i, 2u), f16);
    fv[i] = round_to(attn_value((unsigned long long)i, 3u), f16);
    hk[i] = f16 ? kbd_f32_to_f16(fk[i]).bits : kbd_f32_to_bf16(fk[i]).bits;
    hv[i] = f16 ? kbd_f32_to_f16(fv[i]).bits : kbd_f32_to_bf16(fv[i]).bits;
  }

  void *dq, *dk, *dv, *dout, *work = NULL;
  float *dlse;
  KBD_CHECK(kbd_malloc(&dq, 2 * (size_t)nq));
  KBD_CHECK(kbd_malloc(&dk, 2 * (size_t)nk));
  KBD_CHECK(kbd_malloc(&dv, 2 * (size_t)nk));
  KBD_CHECK(kbd_malloc(&dout, 2 * (size_t)nq));
  KBD_CHECK(kbd_malloc((void **)&dlse, sizeof(float) * (size_t)nrows));
  KBD_CHECK(kbd_copy_to_device(dq, hq, 2 * (size_t)nq));
  KBD_CHECK(kbd_copy_to_device(dk, hk, 2 * (size_t)nk));
  KBD_CHECK(kbd_copy_to_device(dv, hv, 2 * (size_t)nk));
  KBD_CHECK(kbd_memset_device(dout, 0xff, 2 * (size_t)nq)); /* NaN: an unwritten element fails */
  KBD_CHECK(kbd_memset_device(dlse, 0xff, sizeof(float) * (size_t)nrows));
  a.q = dq, a.k = dk, a.v = dv, a.o = dout, a.lse = dlse;
  if (a.splits > 1 && a.splits <= ATTN_SPLITS_MAX) KBD_CHECK(kbd_malloc(&work, attn_workspace_bytes(&a)));
  a.workspace = work;
  const kbd_status st = attn_run(&a);
  if (st.code == KBD_ERR_INVALID) {
    fprintf(stderr, "%s\n", st.msg);
    return 2;
  }
  KBD_CHECK(st);
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(ho, dout, 2 * (size_t)nq));
  KBD_CHECK(kbd_copy_to_host(lse, dlse, sizeof(float) * (size_t)nrows));

  /* Tolerance: S = Q K^T has exact products summed in f32. P is rounded to the input type for the second MMA
   * (relative error <= u, the unit roundoff: u = 2^-8 bf16, 2^-11 f16) while the row sum uses the unrounded values,
   * so O is off by <= u max|v|; O's own rounding adds u |O| <= u max|v|. With |v| <= 3: 6u, plus 1e-4 for the f32
   * sums and the ex2 approximation. The sm_100a text's lazy softmax reaches that bound on peaked rows (--scale 4):
   * its row max's P is 2^x rounded like the others, where an exact max makes it exactly 1. lse: f32 sums and logs,
   * 1e-4 absolute + 1e-5 relative. */
  const double u = f16 ? 1.0 / 2048.0 : 1.0 / 256.0, tol = 6.0 * u + 1e-4;
  const double scale = a.scale > 0.0f ? a.scale : 1.0 / sqrt((double)d);
  const int group = a.heads_q / a.heads_kv;
  long long badn = 0, masked_rows = 0;
  double worst = 0.0;
  double *srow = (double *)malloc(sizeof(double) * (size_t)a.seq_k);
  if (!srow) return 1;
  for (int b = 0; b < a.batch; ++b)
    for (int h = 0; h < a.heads_q; ++h)
      for (int i = 0; i < a.seq_q; ++i) {
        const long long row = ((long long)b * a.heads_q + h) * a.seq_q + i;
        const float *q = fq + row * d;
        const long long kv0 = ((long long)b * a.heads_kv + h / group) * a.seq_k;
        double m = -INFINITY, sum = 0.0;
        for (int j = 0; j < a.seq_k; ++j) {
          const int visible = !a.causal || j <= i + a.seq_k - a.seq_q;
          double s = 0.0;
          for (int c = 0; c < d; ++c)
            s += (double)q[c] * fk[(kv0 + j) * d + c];
          srow[j] = visible ? scale * s : -INFINITY;
          if (srow[j] > m) m = srow[j];
        }
        if (m == -INFINITY) ++masked_rows;
        for (int j = 0; j < a.seq_k; ++j)
          sum += m == -INFINITY ? 0.0 : exp(srow[j] - m);
        for (int c = 0; c < d; ++c) {
          double o = 0.0;
          if (sum > 0.0)
            for (int j = 0; j < a.seq_k; ++j)
              o += exp(srow[j] - m) * fv[(kv0 + j) * d + c];
          const double want = sum > 0.0 ? o / sum : 0.0;
          const kbd_bf16 gb = {ho[row * d + c]};
          const kbd_f16 gf = {ho[row * d + c]};
          const double got = f16 ? kbd_f16_to_f32(gf) : kbd_bf16_to_f32(gb);
          const double err = fabs(got - want);
          if (!(err <= tol)) {
            if (badn < 5) fprintf(stderr, "O[b%d h%d q%d][%d] = %.6g, want %.6g\n", b, h, i, c, got, want);
            ++badn;
          } else if (err > worst) {
            worst = err;
          }
        }
        const double want_lse = sum > 0.0 ? m + log(sum) : -INFINITY;
        const double got_lse = lse[row];
        const int lse_ok =
            want_lse == -INFINITY ? got_lse == -INFINITY : fabs(got_lse - want_lse) <= 1e-4 + 1e-5 * fabs(want_lse);
        if (!lse_ok) {
          if (badn < 5) fprintf(stderr, "lse[b%d h%d q%d] = %.9g, want %.9g\n", b, h, i, got_lse, want_lse);
          ++badn;
        }
      }
#if KBD_MODE_CPU
  const char *mode = KBD_CPU_ARCH == 90 ? "CPU emulation of sm_90a" : "CPU emulation of sm_100a";
#else
  const char *mode = "GPU";
#endif
  printf("attention (%s): batch %d, heads %d/%d, seq %d x %d, head_dim %d, %s%s, splits %d: worst |err| %.3g "
         "(tolerance %.3g), %lld fully masked rows, mismatches = %lld -> %s\n",
         mode, a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_k, d, f16 ? "f16" : "bf16", a.causal ? ", causal" : "",
         a.splits, worst, tol, masked_rows, badn, badn ? "FAIL" : "OK");
  const int save_failed = save_dir ? attn_save(save_dir, mode, &a, decode, hq, hk, hv, ho, lse) : 0;
  KBD_CHECK(kbd_free(dq));
  KBD_CHECK(kbd_free(dk));
  KBD_CHECK(kbd_free(dv));
  KBD_CHECK(kbd_free(dout));
  KBD_CHECK(kbd_free(dlse));
  if (work) KBD_CHECK(kbd_free(work));
  free(fq), free(fk), free(fv), free(lse), free(hq), free(hk), free(hv), free(ho), free(srow);
  return badn || save_failed ? 1 : 0;
}
