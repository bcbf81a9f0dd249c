/* main.c - host side of examples/gemm: runs one GEMM and checks every element against a double reference.
 *
 * Usage: gemm_<mode> [M N K] [options]            (default 300 x 200 x 150: no dimension a tile multiple)
 *   --a-col / --b-col   A / B column-major (default row-major)
 *   --f32               D and C in f32 (default bf16)
 *   --fp8               e4m3 A and B (A row-major, B column-major), per-tensor scales 0.5 and 0.25
 *   --alpha X --beta X  (default 1, 0)      --bias     add a per-column bias
 *   --act relu|gelu|gelu_tanh  --grid G   blocks of the persistent grid (default: the picker's)
 *   --cluster 1|2       CTAs per cluster along M sharing B by multicast (default: the picker's)
 *   --cluster-n 1|2     CTAs per cluster along N sharing A by multicast (default: the picker's)
 *   --pair              CTA pairs (sm_100a): 2 CTAs compute each 256 x 256 tile with tcgen05 .cta_group::2 (bf16,
 *                       --b-col, no --a-col; the pair is the cluster)
 *   --no-pair           never CTA pairs
 *   --pingpong          pingpong consumers (sm_90a): each consumer warpgroup computes its own 128 x 128 tile, the two
 *                       main loops in turn, so one's epilogue runs under the other's main loop (not with --pair)
 *   --cooperative       both consumer warpgroups on every 256 x 128 tile (sm_90a's other schedule)
 *   Without --grid, --cluster, --cluster-n, --pair/--no-pair and --pingpong/--cooperative gemm_run's picker chooses
 * them (kbd/tune.h: the cache, else the cost model; KBD_TUNE=1 measures on a GPU, KBD_TUNE_LOG=1 says why):
 *   --config NAME       take the picker's candidate NAME (c2x1.persist, pair.tile, ...: KBD_TUNE_LOG=1 lists them)
 *   --tune              measure the candidates (as KBD_TUNE=1; a GPU build only: CUDA events)
 *   --sms S             multiprocessors the model and the grid candidates assume (default: the device's)
 *   --no-check          skip the double reference (its M N K host loop is minutes at 8192^3): for tools/gpu-check.sh's
 *                       tuning stage, which only wants the pick
 *   --save DIR          after the run, write A, B, C, bias and D as the kernel saw them (raw little-endian files) and
 *                       DIR/manifest.txt describing them, for tools/gpu-check/torch_check.py (DIR must exist)
 * The GEMM itself is one gemm_run call (gemm_run.c: argument checks, tensor maps, launch).
 * Exit status 0 when every element is within the tolerance, 1 otherwise (or when --save fails), 77 without a device
 * (GPU build).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/save_tensors.h" /* --save DIR */
#include <kbd/tune.h>

#include "gemm.h"

static long long round_up(long long x, long long m) { return (x + m - 1) / m * m; }

/* Small integers over powers of two: every product of two inputs is exact in f32, so the check measures the
 * summation only. */
static float gemm_value(unsigned long long i, unsigned salt) {
  const unsigned long long h = (i + salt) * 0x9E3779B97F4A7C15ull;
  return (float)((int)((h >> 40) % 17u) - 8) / 8.0f;
}

static double gelu_ref(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
/* GPT-2's tanh approximation (GEMM_ACT_GELU_TANH) */
static double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static const char *act_name(int act) {
  return act == GEMM_ACT_RELU        ? "relu"
         : act == GEMM_ACT_GELU      ? "gelu"
         : act == GEMM_ACT_GELU_TANH ? "gelu_tanh"
                                     : "none";
}

/* ---- --save DIR: the run's tensors for a second opinion (tools/gpu-check/torch_check.py; the file format is
 * in save_tensors.h) ---------------------------------------------------------------------------------------------- */

/* The GEMM's tensors: A, B (bf16 or e4m3, in their layouts), C (when beta != 0), the bias (f32, when given), D. */
static int gemm_save(const char *dir, const char *mode, const gemm_args *g, const void *ha, const void *hb,
                     const void *hc, const float *hbias, const void *hd) {
  save_ctx s;
  if (!save_begin(&s, dir)) return 1;
  const char *in = g->fp8 ? "e4m3" : "bf16", *out = g->d_f32 ? "f32" : "bf16";
  const int esz = g->fp8 ? 1 : 2, dsz = g->d_f32 ? 4 : 2;
  fprintf(s.man, "# D = act(alpha * scale_a * scale_b * (A B) + beta * C + bias[column]), A B summed in f32\n");
  fprintf(s.man, "program=gemm\nmode=%s\nm=%lld\nn=%lld\nk=%lld\n", mode, g->m, g->n, g->k);
  fprintf(s.man, "alpha=%.9g\nbeta=%.9g\nscale_a=%.9g\nscale_b=%.9g\nbias=%d\nact=%s\n", (double)g->alpha,
          (double)g->beta, (double)g->scale_a, (double)g->scale_b, g->bias != NULL, act_name(g->act));
  const long long sa[2] = {g->m, g->k}, sb[2] = {g->k, g->n}, sd[2] = {g->m, g->n}, sn[1] = {g->n}, one[1] = {1};
  const long long ta[2] = {g->a_col ? 1 : g->lda, g->a_col ? g->lda : 1};
  const long long tb[2] = {g->b_col ? 1 : g->ldb, g->b_col ? g->ldb : 1};
  const long long tc[2] = {g->ldc, 1}, td[2] = {g->ldd, 1};
  save_tensor(&s, "a", in, g->a_col ? "col" : "row", "m,k", ha, (g->a_col ? g->k : g->m) * g->lda, esz, 2, sa, ta);
  save_tensor(&s, "b", in, g->b_col ? "col" : "row", "k,n", hb, (g->b_col ? g->n : g->k) * g->ldb, esz, 2, sb, tb);
  if (g->beta != 0.0f) save_tensor(&s, "c", out, "row", "m,n", hc, g->m * g->ldc, dsz, 2, sd, tc);
  if (g->bias) save_tensor(&s, "bias", "f32", "contiguous", "n", hbias, g->n, 4, 1, sn, one);
  save_tensor(&s, "d", out, "row", "m,n", hd, g->m * g->ldd, dsz, 2, sd, td);
  return save_end(&s);
}

int main(int argc, char **argv) {
  long long m = 300, n = 200, k = 150;
  int a_col = 0, b_col = 0, d_f32 = 0, fp8 = 0, bias = 0, act = GEMM_ACT_NONE, npos = 0, cluster = 0, cluster_n = 0,
      pair = 0, tune = 0, sms = 0, check = 1, pingpong = 0, schedules = 0;
  long long grid = 0;
  const char *config = NULL;
  float alpha = 1.0f, beta = 0.0f;
  const char *save_dir = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--a-col"))
      a_col = 1;
    else if (!strcmp(argv[i], "--b-col"))
      b_col = 1;
    else if (!strcmp(argv[i], "--f32"))
      d_f32 = 1;
    else if (!strcmp(argv[i], "--fp8"))
      fp8 = 1;
    else if (!strcmp(argv[i], "--bias"))
      bias = 1;
    else if (!strcmp(argv[i], "--alpha") && i + 1 < argc)
      alpha = (float)atof(argv[++i]);
    else if (!strcmp(argv[i], "--beta") && i + 1 < argc)
      beta = (float)atof(argv[++i]);
    else if (!strcmp(argv[i], "--grid") && i + 1 < argc)
      grid = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
      cluster = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cluster-n") && i + 1 < argc)
      cluster_n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--pair"))
      pair = 1;
    else if (!strcmp(argv[i], "--no-pair"))
      pair = -1;
    else if (!strcmp(argv[i], "--pingpong"))
      pingpong = 1, ++schedules;
    else if (!strcmp(argv[i], "--cooperative"))
      pingpong = -1, ++schedules;
    else if (!strcmp(argv[i], "--tune"))
      tune = 1;
    else if (!strcmp(argv[i], "--no-check"))
      check = 0;
    else if (!strcmp(argv[i], "--config") && i + 1 < argc)
      config = argv[++i];
    else if (!strcmp(argv[i], "--sms") && i + 1 < argc)
      sms = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--save") && i + 1 < argc)
      save_dir = argv[++i];
    else if (!strcmp(argv[i], "--act") && i + 1 < argc) {
      ++i;
      act = !strcmp(argv[i], "relu")        ? GEMM_ACT_RELU
            : !strcmp(argv[i], "gelu")      ? GEMM_ACT_GELU
            : !strcmp(argv[i], "gelu_tanh") ? GEMM_ACT_GELU_TANH
                                            : -1;
    } else if (argv[i][0] != '-' && npos < 3) {
      const long long v = atoll(argv[i]);
      if (npos == 0)
        m = v;
      else if (npos == 1)
        n = v;
      else
        k = v;
      ++npos;
    } else {
      act = -1;
    }
  }
  if (m < 1 || n < 1 || k < 1 || act < 0 || grid < 0 || grid > 65535 || cluster < 0 || cluster > 2 || cluster_n < 0 ||
      cluster_n > 2 || sms < 0 || (fp8 && (a_col || !b_col) && (a_col || b_col)) || schedules > 1 ||
      (pingpong == 1 && pair == 1)) {
    fprintf(
        stderr,
        "usage: %s [M N K] [--a-col] [--b-col] [--f32] [--fp8] [--alpha X] [--beta X] [--bias] "
        "[--act relu|gelu|gelu_tanh] [--grid G] [--cluster 1|2] [--cluster-n 1|2] [--pair|--no-pair] [--config NAME] "
        "[--pingpong|--cooperative] [--tune] [--sms S] "
        "[--no-check] [--save DIR]\n"
        "(--fp8 takes row-major A and column-major B: give no layout flag, or --b-col)\n"
        "(--pingpong and --cooperative are sm_90a's two consumer schedules: give at most one, and not with --pair, "
        "an sm_100a kernel without consumer warpgroups)\n"
        "--save DIR: write A, B, C, bias and D as raw little-endian files and DIR/manifest.txt describing them, "
        "for tools/gpu-check/torch_check.py (DIR must exist)\n",
        argv[0]);
    return 2;
  }
  if (fp8) b_col = 1;
  if (!kbd_device_available()) {
    printf("gemm: no CUDA device present; nothing to run\n");
    return 77;
  }

  /* Leading dimensions rounded up so every row starts 16-byte aligned, as the TMA requires; the padding is
   * outside the tensor map's extent and is never read. */
  const int esz = fp8 ? 1 : 2, dsz = d_f32 ? 4 : 2;
  const long long lda = round_up(a_col ? m : k, 16), ldb = round_up(b_col ? k : n, 16), ldd = round_up(n, 16);
  const long long a_rows = a_col ? k : m, b_rows = b_col ? n : k;
  const float scale_a = fp8 ? 0.5f : 1.0f, scale_b = fp8 ? 0.25f : 1.0f;
  float *fa = (float *)calloc((size_t)(m * k), sizeof(float)), *fb = (float *)calloc((size_t)(k * n), sizeof(float));
  float *fc = (float *)calloc((size_t)(m * n), sizeof(float)), *fbias = (float *)calloc((size_t)n, sizeof(float));
  unsigned char *ha = (unsigned char *)calloc((size_t)(a_rows * lda), (size_t)esz);
  unsigned char *hb = (unsigned char *)calloc((size_t)(b_rows * ldb), (size_t)esz);
  unsigned char *hc = (unsigned char *)calloc((size_t)(m * ldd), (size_t)dsz);
  unsigned char *hd = (unsigned char *)calloc((size_t)(m * ldd), (size_t)dsz);
  if (!fa || !fb || !fc || !fbias || !ha || !hb || !hc || !hd) return 1;

  /* A[i][j] (M x K) and B[i][j] (K x N) as floats, and their device images in the chosen layouts */
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < k; ++j) {
      const float v = gemm_value((unsigned long long)(i * k + j), 1u);
      const long long at = a_col ? j * lda + i : i * lda + j;
      fa[i * k + j] = v;
      if (fp8)
        ((kbd_e4m3 *)ha)[at] = kbd_f32_to_e4m3(v);
      else
        ((kbd_bf16 *)ha)[at] = kbd_f32_to_bf16(v);
    }
  for (long long i = 0; i < k; ++i)
    for (long long j = 0; j < n; ++j) {
      const float v = gemm_value((unsigned long long)(i * n + j), 2u);
      const long long at = b_col ? j * ldb + i : i * ldb + j;
      fb[i * n + j] = v;
      if (fp8)
        ((kbd_e4m3 *)hb)[at] = kbd_f32_to_e4m3(v);
      else
        ((kbd_bf16 *)hb)[at] = kbd_f32_to_bf16(v);
    }
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      const float v = gemm_value((unsigned long long)(i * n + j), 3u);
      fc[i * n + j] = v;
      if (d_f32)
        ((float *)hc)[i * ldd + j] = v;
      else
        ((kbd_bf16 *)hc)[i * ldd + j] = kbd_f32_to_bf16(v);
    }
  for (long long j = 0; j < n; ++j)
    fbias[j] = gemm_value((unsigned long long)j, 4u);

  void *da, *db, *dc, *dd;
  float *dbias;
  KBD_CHECK(kbd_malloc(&da, (size_t)(a_rows * lda * esz)));
  KBD_CHECK(kbd_malloc(&db, (size_t)(b_rows * ldb * esz)));
  KBD_CHECK(kbd_malloc(&dc, (size_t)(m * ldd * dsz)));
  KBD_CHECK(kbd_malloc(&dd, (size_t)(m * ldd * dsz)));
  KBD_CHECK(kbd_malloc((void **)&dbias, sizeof(float) * (size_t)n));
  KBD_CHECK(kbd_copy_to_device(da, ha, (size_t)(a_rows * lda * esz)));
  KBD_CHECK(kbd_copy_to_device(db, hb, (size_t)(b_rows * ldb * esz)));
  KBD_CHECK(kbd_copy_to_device(dc, hc, (size_t)(m * ldd * dsz)));
  KBD_CHECK(kbd_copy_to_device(dbias, fbias, sizeof(float) * (size_t)n));
  KBD_CHECK(kbd_memset_device(dd, 0xff, (size_t)(m * ldd * dsz))); /* NaN: an unwritten element fails */

  gemm_args g;
  memset(&g, 0, sizeof g);
  g.m = m, g.n = n, g.k = k;
  g.a = da, g.b = db, g.lda = lda, g.ldb = ldb, g.a_col = a_col, g.b_col = b_col;
  g.fp8 = fp8, g.scale_a = scale_a, g.scale_b = scale_b;
  g.d = dd, g.ldd = ldd, g.d_f32 = d_f32;
  g.c = dc, g.ldc = ldd;
  g.bias = bias ? dbias : NULL;
  g.alpha = alpha, g.beta = beta, g.act = act, g.grid = (int)grid, g.cluster = cluster;
  g.cluster_n = cluster_n, g.pair = pair, g.sms = sms, g.pingpong = pingpong;
  kbd_tune_opts topt = kbd_tune_opts_default();
  if (tune) topt.tune = 1;
  topt.force = config;
  gemm_config chosen;
  g.tune = &topt, g.chosen = &chosen;
  KBD_CHECK(gemm_run(&g, NULL));
  int cm = chosen.cluster, cn = chosen.cluster_n; /* the launch gemm_run made */
  pair = chosen.pair;
  grid = pair ? gemm_pair_blocks(m, n, chosen.grid)
              : gemm_launch_blocks(m, n, chosen.grid, chosen.cluster, chosen.cluster_n, &cm, &cn);
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hd, dd, (size_t)(m * ldd * dsz)));

  /* Tolerance per element: the MMA sums exact products in f32 (any order): |err| <= (K + 2) * 2^-24 *
   * sum|a*b| * |alpha| (first order), plus the f32 epilogue's few roundings and the bf16 output rounding
   * (2^-8 relative). fp8 inputs are the same small integers over 8, exact in e4m3. */
  long long bad = 0;
  double worst = 0;
  for (long long i = 0; i < m && check; ++i)
    for (long long j = 0; j < n; ++j) {
      double dot = 0, mag = 0;
      for (long long q = 0; q < k; ++q) {
        const double pr = (double)fa[i * k + q] * fb[q * n + j];
        dot += pr;
        mag += fabs(pr);
      }
      const double al = (double)alpha * scale_a * scale_b;
      double ref = al * dot + (double)beta * fc[i * n + j] + (bias ? fbias[j] : 0.0);
      double bound = fabs(al) * mag + fabs((double)beta * fc[i * n + j]) + (bias ? fabs(fbias[j]) : 0.0);
      if (act == GEMM_ACT_RELU) ref = ref > 0 ? ref : 0;
      if (act == GEMM_ACT_GELU) ref = gelu_ref(ref);
      if (act == GEMM_ACT_GELU_TANH) ref = gelu_tanh_ref(ref);
      const double got =
          d_f32 ? (double)((float *)hd)[i * ldd + j] : (double)kbd_bf16_to_f32(((kbd_bf16 *)hd)[i * ldd + j]);
      const double tol = (double)(k + 8) * 0x1p-24 * bound + (d_f32 ? 0x1p-22 : 0x1p-8) * fabs(ref) + 1e-6;
      const double err = fabs(got - ref);
      if (!(err <= tol)) {
        if (bad < 5) fprintf(stderr, "D[%lld][%lld] = %.8g, expected %.8g (tolerance %.3g)\n", i, j, got, ref, tol);
        ++bad;
      }
      if (err / (bound > 1 ? bound : 1) > worst) worst = err / (bound > 1 ? bound : 1);
    }
#ifdef KBD_CPU
  const char *mode = "CPU emulation of sm_" KBD_STR(KBD_CPU_ARCH) "a";
#else
  const char *mode = "GPU";
#endif
  printf("gemm (%s): %lld x %lld x %lld, A %s, B %s, %s%s, D %s, alpha %g beta %g%s, act %s, grid %lld, cluster %d x "
         "%d%s%s, config %s (%s): "
         "worst |err| / sum|terms| %.2e, mismatches = %lld -> %s\n",
         mode, m, n, k, a_col ? "col" : "row", b_col ? "col" : "row", fp8 ? "e4m3" : "bf16",
         fp8 ? " (scales 0.5, 0.25)" : "", d_f32 ? "f32" : "bf16", alpha, beta, bias ? ", bias" : "", act_name(act),
         grid, cm, cn, pair ? " (CTA pairs)" : "", chosen.pingpong ? ", pingpong consumers" : "", chosen.name,
         chosen.reason, worst, bad,
         bad     ? "FAILED"
         : check ? "OK"
                 : "OK (not checked: --no-check)");
  const int save_failed = save_dir ? gemm_save(save_dir, mode, &g, ha, hb, hc, fbias, hd) : 0;
  KBD_CHECK(kbd_free(da));
  KBD_CHECK(kbd_free(db));
  KBD_CHECK(kbd_free(dc));
  KBD_CHECK(kbd_free(dd));
  KBD_CHECK(kbd_free(dbias));
  free(fa), free(fb), free(fc), free(fbias), free(ha), free(hb), free(hc), free(hd);
  return bad || save_failed ? 1 : 0;
}
