/* gemm_run.c - host side of the GEMM kernels: checks the arguments, builds the tensor maps and launches
 * (gemm.h documents gemm_args). Every wrong argument is a KBD_ERR_INVALID status naming it, and nothing is
 * launched: a kernel given a misaligned or too short row would fault on the GPU. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <kbd/tune.h>
#include <kbd/tune_table.h>

#include "gemm.h"

/* The TMA reads and writes rows through tensor maps: the base 16-byte aligned, every row stride a multiple of
 * 16 bytes (ptx-reference 2: cuTensorMapEncodeTiled's rules), the stride at least one row. */
static kbd_status gemm_check_matrix(const char *name, const char *ldname, const void *p, long long ld, long long row,
                                    int esize) {
  if (!p) return kbd_status_make(KBD_ERR_INVALID, "gemm_run: %s is NULL", name);
  if ((uintptr_t)p % 16u != 0)
    return kbd_status_make(
        KBD_ERR_INVALID, "gemm_run: %s = %p is not 16-byte aligned (the TMA needs it; kbd_malloc memory is)", name, p);
  if (ld < row)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: %s = %lld is shorter than a row of %s (%lld elements)", ldname,
                           ld, name, row);
  if (ld * esize % 16 != 0)
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: %s = %lld elements = %lld bytes: the TMA needs a multiple of 16 bytes (pad the "
                           "rows: a multiple of %d elements)",
                           ldname, ld, ld * esize, 16 / esize);
  if (ld * esize >= (1ll << 40))
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: %s = %lld: a row stride must be below 2^40 bytes", ldname, ld);
  return kbd_status_ok();
}

static kbd_status gemm_check(const gemm_args *a) {
  if (!a) return kbd_status_make(KBD_ERR_INVALID, "gemm_run: args is NULL");
  if (a->m < 0 || a->n < 0 || a->k < 0)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: m = %lld, n = %lld, k = %lld: none may be negative", a->m, a->n,
                           a->k);
  if (a->m > (1ll << 31) || a->n > (1ll << 31) || a->k > (1ll << 31))
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: m = %lld, n = %lld, k = %lld: each must be at most 2^31", a->m,
                           a->n, a->k);
  if (a->act != GEMM_ACT_NONE && a->act != GEMM_ACT_RELU && a->act != GEMM_ACT_GELU && a->act != GEMM_ACT_GELU_TANH)
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: act = %d: GEMM_ACT_NONE, GEMM_ACT_RELU, GEMM_ACT_GELU or GEMM_ACT_GELU_TANH",
                           a->act);
  if (a->fp8 && (a->a_col || !a->b_col))
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: fp8 takes a row-major A and a column-major B (a_col = %d, b_col = %d): wgmma "
                           "reads 8-bit operands K-major only",
                           a->a_col, a->b_col);
  if (!isfinite(a->alpha) || !isfinite(a->beta) || !isfinite(a->scale_a) || !isfinite(a->scale_b))
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: alpha = %g, beta = %g, scale_a = %g, scale_b = %g: all finite",
                           (double)a->alpha, (double)a->beta, (double)a->scale_a, (double)a->scale_b);
  if (a->cluster < 0 || a->cluster > 2)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: cluster = %d: 0 (choose), 1 or 2 CTAs per cluster along M",
                           a->cluster);
  if (a->cluster_n < 0 || a->cluster_n > 2)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: cluster_n = %d: 0 (one), 1 or 2 CTAs per cluster along N",
                           a->cluster_n);
  if (a->pair < -1 || a->pair > 1)
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pair = %d: 0 or 1 (CTA pairs), or -1 (never; 0 lets the picker "
                           "choose)",
                           a->pair);
  if (a->pingpong < -1 || a->pingpong > 1)
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pingpong = %d: 1 (pingpong consumers), -1 (cooperative consumers) or 0 (the "
                           "picker chooses)",
                           a->pingpong);
  if (a->pingpong == 1 && !gemm_has_pingpong())
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pingpong = 1: pingpong consumers exist in the sm_90a kernel only (wgmma "
                           "accumulators in registers), and this build is for another arch (its MMA warp already "
                           "overlaps the epilogue with the next tile)");
  if (a->pingpong == 1 && a->pair == 1)
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pingpong = 1 with pair = 1: CTA pairs are an sm_100a kernel without consumer "
                           "warpgroups; choose one");
  if (a->sms < 0 || a->sms > 4096)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: sms = %d: 0 (the device's) or 1..4096", a->sms);
  if (a->pair == 1 && !gemm_pair_kernel())
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pair = 1: CTA pairs (tcgen05 .cta_group::2) exist on sm_100a only, and this "
                           "build is for another arch");
  if (a->pair == 1 && (a->fp8 || a->a_col || !a->b_col))
    return kbd_status_make(
        KBD_ERR_INVALID,
        "gemm_run: pair = 1 takes bf16 A row-major and B column-major (both K-major; fp8 = %d, a_col "
        "= %d, b_col = %d)",
        a->fp8, a->a_col, a->b_col);
  if (a->pair == 1 && (a->cluster > 1 || a->cluster_n > 1))
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pair = 1 with cluster = %d, cluster_n = %d: the pair is the cluster (2 CTAs); "
                           "leave both 0 or 1",
                           a->cluster, a->cluster_n);
  if (a->grid < 0 || a->grid > 65535)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: grid = %d: 0 (the default) or 1..65535 blocks", a->grid);
  if (a->m == 0 || a->n == 0 || a->k == 0) return kbd_status_ok(); /* a no-op (gemm.h); no pointer is read */
  const int esz = a->fp8 ? 1 : 2, dsz = a->d_f32 ? 4 : 2;
  kbd_status s;
  if (!kbd_ok(s = gemm_check_matrix("a", "lda", a->a, a->lda, a->a_col ? a->m : a->k, esz))) return s;
  if (!kbd_ok(s = gemm_check_matrix("b", "ldb", a->b, a->ldb, a->b_col ? a->k : a->n, esz))) return s;
  if (!kbd_ok(s = gemm_check_matrix("d", "ldd", a->d, a->ldd, a->n, dsz))) return s;
  if (a->beta != 0.0f) {
    if (!a->c) return kbd_status_make(KBD_ERR_INVALID, "gemm_run: c is NULL but beta = %g", (double)a->beta);
    if (a->ldc < a->n)
      return kbd_status_make(KBD_ERR_INVALID, "gemm_run: ldc = %lld is shorter than a row of c (%lld elements)", a->ldc,
                             a->n);
    if ((uintptr_t)a->c % (uintptr_t)dsz != 0)
      return kbd_status_make(KBD_ERR_INVALID, "gemm_run: c = %p is not aligned to its %d-byte elements", a->c, dsz);
  }
  if (a->bias && (uintptr_t)a->bias % 4u != 0)
    return kbd_status_make(KBD_ERR_INVALID, "gemm_run: bias = %p is not 4-byte aligned", (const void *)a->bias);
  return kbd_status_ok();
}

/* A 2-D tensor map over rows x cols (cols contiguous) with the box of one shared tile. */
static kbd_status gemm_map(kbd_tensor_map *m, int dt, const void *p, long long rows, long long cols, long long ld,
                           int esize, uint32_t box_rows, uint32_t box_cols, int swizzle) {
  const kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(dt, p, (uint64_t)rows, (uint64_t)cols, (uint64_t)(ld * esize),
                                                       box_rows, box_cols, swizzle);
  return kbd_tensor_map_encode(m, &d);
}

/* The launch parameters every configuration shares: the tensor maps, the epilogue's operands, the variant. */
static kbd_status gemm_params_of(const gemm_args *a, gemm_params *pp) {
  gemm_params p;
  memset(&p, 0, sizeof p);
  const int tdt = a->fp8 ? KBD_TMAP_DT_U8 : KBD_TMAP_DT_BF16, esz = a->fp8 ? 1 : 2, dsz = a->d_f32 ? 4 : 2;
  const long long k = a->k, lda = a->lda, ldb = a->ldb;
  const void *pa = a->a, *pb = a->b;
  kbd_status s;
  /* A: rows of its contiguous dimension, the box one consumer's A slice; B likewise */
  if (a->fp8)
    s = gemm_map(&p.a, tdt, pa, a->m, k, lda, esz, kbd_tma_box_rows_for(gemm_a8), kbd_tma_box_cols_for(gemm_a8),
                 KBD_TMAP_SWIZZLE_128B);
  else if (a->a_col)
    s = gemm_map(&p.a, tdt, pa, k, a->m, lda, esz, kbd_tma_box_rows_for(gemm_a_mn), kbd_tma_box_cols_for(gemm_a_mn),
                 KBD_TMAP_SWIZZLE_128B);
  else
    s = gemm_map(&p.a, tdt, pa, a->m, k, lda, esz, kbd_tma_box_rows_for(gemm_a_k), kbd_tma_box_cols_for(gemm_a_k),
                 KBD_TMAP_SWIZZLE_128B);
  if (!kbd_ok(s)) return s;
  if (a->fp8)
    s = gemm_map(&p.b, tdt, pb, a->n, k, ldb, esz, kbd_tma_box_rows_for(gemm_bh8), kbd_tma_box_cols_for(gemm_bh8),
                 KBD_TMAP_SWIZZLE_128B);
  else if (a->b_col)
    s = gemm_map(&p.b, tdt, pb, a->n, k, ldb, esz, kbd_tma_box_rows_for(gemm_bh_k), kbd_tma_box_cols_for(gemm_bh_k),
                 KBD_TMAP_SWIZZLE_128B);
  else
    s = gemm_map(&p.b, tdt, pb, k, a->n, ldb, esz, kbd_tma_box_rows_for(gemm_bh_mn), kbd_tma_box_cols_for(gemm_bh_mn),
                 KBD_TMAP_SWIZZLE_128B);
  if (!kbd_ok(s)) return s;
  if (a->d_f32)
    s = gemm_map(&p.d, KBD_TMAP_DT_F32, a->d, a->m, a->n, a->ldd, dsz, kbd_tma_box_rows_for(gemm_out_f32),
                 kbd_tma_box_cols_for(gemm_out_f32), KBD_TMAP_SWIZZLE_64B);
  else
    s = gemm_map(&p.d, KBD_TMAP_DT_BF16, a->d, a->m, a->n, a->ldd, dsz, kbd_tma_box_rows_for(gemm_out_bf16),
                 kbd_tma_box_cols_for(gemm_out_bf16), KBD_TMAP_SWIZZLE_32B);
  if (!kbd_ok(s)) return s;
  p.c = a->beta != 0.0f ? a->c : NULL;
  p.bias = a->bias;
  p.m = a->m, p.n = a->n, p.k = a->k, p.ldc = a->ldc;
  /* fp8: the per-tensor scales fold into alpha (the MMA's f32 sum of e4m3 products is exact for them) */
  p.alpha = a->fp8 ? a->alpha * a->scale_a * a->scale_b : a->alpha;
  p.beta = a->beta, p.act = a->act, p.d_f32 = a->d_f32;
  p.variant = a->fp8 ? GEMM_E4M3_RC : a->a_col * 2 + a->b_col; /* gemm_variant */
  *pp = p;
  return kbd_status_ok();
}

/* Launches configuration c with the shared parameters p0. */
static kbd_status gemm_launch(const gemm_args *a, const gemm_params *p0, const gemm_config *c, void *stream) {
  gemm_params p = *p0;
  gemm_smem l;
  kbd_status s;
  if (c->pair) { /* a 2-CTA cluster per pair: the pair is the cluster, so p.cluster stays 1 */
    const kbd_smem_plan plan = gemm_layout_pair(&l);
    if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
    p.cluster = 1, p.cluster_n = 1;
    const kbd_launch_cfg cfg =
        kbd_cfg(kbd_dim((unsigned)gemm_pair_blocks(a->m, a->n, c->grid), 1, 1), plan.bytes, stream);
    return gemm_pair_kernel()(kbd_cfg_cluster(cfg, 2, 1, 1), p);
  }
  const kbd_smem_plan plan = c->pingpong ? gemm_layout_pingpong(&l, a->fp8) : gemm_layout(&l, a->fp8);
  if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
  p.pingpong = c->pingpong;
  int cm, cn;
  const long long grid = gemm_launch_blocks(a->m, a->n, c->grid, c->cluster, c->cluster_n, &cm, &cn);
  p.cluster = cm, p.cluster_n = cn;
  kbd_launch_cfg cfg = kbd_cfg(kbd_dim((unsigned)grid, 1, 1), plan.bytes, stream);
  if (cm * cn > 1) cfg = kbd_cfg_cluster(cfg, (unsigned)(cm * cn), 1, 1);
  return gemm_kernel(cfg, p);
}

/* ---- the candidates, their validity and the cost model ------------------------------------------------------- */

static const char *const gemm_grid_names[3] = {"persist", "balanced", "tile"};

/* The blocks of grid kind `kind` for units (cluster tiles, or pair tiles) of `c` CTAs each on `sms` SMs. */
static int gemm_grid_blocks(int kind, long long units, int c, int sms) {
  const long long slots = sms / c > 0 ? sms / c : 1; /* clusters resident at once: one CTA per SM (shared memory) */
  long long clusters = slots;
  if (kind == GEMM_GRID_BALANCED) {
    const long long waves = (units + slots - 1) / slots;
    clusters = (units + waves - 1) / waves;
  } else if (kind == GEMM_GRID_TILE)
    clusters = units;
  long long blocks = clusters * c;
  if (blocks > 65535) blocks = 65535 / c * c;
  return (int)blocks;
}

int gemm_configs(const gemm_args *a, int sms, gemm_config *out) {
  const long long tiles_m = (a->m + GEMM_BM - 1) / GEMM_BM, tiles_n = (a->n + GEMM_BN - 1) / GEMM_BN;
  const long long ptiles = (a->m + GEMM_PAIR_BM - 1) / GEMM_PAIR_BM * ((a->n + GEMM_PAIR_BN - 1) / GEMM_PAIR_BN);
  int n = 0;
  /* cluster 2 x 1 first: on a tie of the model the B-sharing pair along M, gemm_run's choice before the picker; the
   * cooperative consumers before the pingpong ones (`pp2x1.persist`: the same cluster shapes and grids) */
  static const int shapes[4][2] = {{2, 1}, {1, 1}, {2, 2}, {1, 2}};
  for (int g = 0; g < 3; ++g) {
    for (int s = 0; s < 8; ++s) {
      gemm_config *c = &out[n++];
      memset(c, 0, sizeof *c);
      c->cluster = shapes[s % 4][0], c->cluster_n = shapes[s % 4][1], c->grid_kind = a->grid ? -1 : g;
      c->pingpong = s >= 4;
      const long long units = (tiles_m + c->cluster - 1) / c->cluster * ((tiles_n + c->cluster_n - 1) / c->cluster_n);
      c->grid = a->grid ? a->grid : gemm_grid_blocks(g, units, c->cluster * c->cluster_n, sms);
      snprintf(c->name, sizeof c->name, "%s%dx%d.%s", c->pingpong ? "pp" : "c", c->cluster, c->cluster_n,
               a->grid ? "grid" : gemm_grid_names[g]);
    }
    gemm_config *c = &out[n++];
    memset(c, 0, sizeof *c);
    c->cluster = c->cluster_n = 1, c->pair = 1, c->grid_kind = a->grid ? -1 : g;
    c->grid = a->grid ? a->grid : gemm_grid_blocks(g, ptiles, 2, sms);
    snprintf(c->name, sizeof c->name, "pair.%s", a->grid ? "grid" : gemm_grid_names[g]);
  }
  return n; /* 27 <= GEMM_CONFIGS_MAX */
}

/* The blocks configuration c launches for a. */
static long long gemm_config_blocks(const gemm_args *a, const gemm_config *c) {
  int cm, cn;
  return c->pair ? gemm_pair_blocks(a->m, a->n, c->grid)
                 : gemm_launch_blocks(a->m, a->n, c->grid, c->cluster, c->cluster_n, &cm, &cn);
}

int gemm_config_valid(const gemm_args *a, const gemm_config *c, char *why, size_t why_len) {
  const long long tiles_m = (a->m + GEMM_BM - 1) / GEMM_BM, tiles_n = (a->n + GEMM_BN - 1) / GEMM_BN;
  if (a->cluster && c->cluster != a->cluster && !c->pair)
    return snprintf(why, why_len, "cluster forced to %d", a->cluster), 0;
  if (a->cluster_n && c->cluster_n != a->cluster_n && !c->pair)
    return snprintf(why, why_len, "cluster_n forced to %d", a->cluster_n), 0;
  if (a->pair == 1 && !c->pair) return snprintf(why, why_len, "pair forced on"), 0;
  if (a->pair == -1 && c->pair) return snprintf(why, why_len, "pair forced off"), 0;
  if (a->grid && c->grid != a->grid) return snprintf(why, why_len, "grid forced to %d", a->grid), 0;
  if (a->pingpong == 1 && !c->pingpong) return snprintf(why, why_len, "pingpong forced on"), 0;
  if (a->pingpong == -1 && c->pingpong) return snprintf(why, why_len, "pingpong forced off"), 0;
  if (c->pingpong && !gemm_has_pingpong())
    return snprintf(why, why_len, "no pingpong consumers in this build (sm_90a only)"), 0;
  gemm_smem l;
  kbd_smem_plan plan;
  if (c->pair) {
    if (!gemm_pair_kernel()) return snprintf(why, why_len, "no CTA-pair kernel in this build (sm_100a only)"), 0;
    if (a->fp8 || a->a_col || !a->b_col)
      return snprintf(why, why_len, "the pair kernel takes bf16, A row-major, B column-major"), 0;
    if (a->cluster > 1 || a->cluster_n > 1) return snprintf(why, why_len, "cluster options exclude pairs"), 0;
    if (a->pair != 1 && (a->cluster || a->cluster_n))
      return snprintf(why, why_len, "a forced cluster shape selects the 1-SM kernel"), 0;
    plan = gemm_layout_pair(&l);
  } else {
    /* a cluster along a dimension of one tile only loads zeros for the CTA past the edge: valid, never useful, so
     * a candidate only when the caller asked for it */
    if (c->cluster == 2 && tiles_m < 2 && a->cluster != 2)
      return snprintf(why, why_len, "cluster 2 along M with one tile row"), 0;
    if (c->cluster_n == 2 && tiles_n < 2 && a->cluster_n != 2)
      return snprintf(why, why_len, "cluster 2 along N with one tile column"), 0;
    plan = c->pingpong ? gemm_layout_pingpong(&l, a->fp8) : gemm_layout(&l, a->fp8);
  }
  if (!kbd_ok(kbd_smem_plan_status(&plan))) return snprintf(why, why_len, "shared memory plan over the limit"), 0;
  return 1;
}

/* Per-arch figures of the roofline: dense bf16 tensor FLOP per SM-cycle, the clock, HBM and per-SM L2 bandwidth.
 * H100 SXM: 989 TFLOP/s over 132 SMs at 1.83 GHz is 4096 per SM-cycle, 3.35 TB/s; B200: 8192, 1.85 GHz, 8 TB/s. The
 * L2-to-SM figure (bytes per SM-cycle) is where the TMA's reads of the operand tiles are bounded. */
typedef struct gemm_machine {
  double flop_clk, clk, hbm, l2_clk;
} gemm_machine;
static gemm_machine gemm_machine_of(int arch) {
  gemm_machine m;
  if (arch == 90)
    m.flop_clk = 4096, m.clk = 1.83e9, m.hbm = 3.35e12, m.l2_clk = 64;
  else
    m.flop_clk = 8192, m.clk = 1.85e9, m.hbm = 8.0e12, m.l2_clk = 96;
  return m;
}

/* The default epilogue hook's instructions per 16-column chunk and warp on sm_90a (the chunk loop of gemm_kernel,
 * kbd-inspect --loops, nvcc 13.0: docs/gemm.md "Overlap with the tensor cores"): 218 with alpha only (the loop's
 * shortest path), 291 with the bias, 920 with the bias and the tanh GELU, 1313 on the longest path (beta C, bias, erf
 * GELU). beta C is not measured alone: 120 of the longest path's rest is given to it (the masked load, its
 * conversion, a multiply-add per element), the erf GELU the remainder. A hook of another gemm.cu is not seen here. */
static double gemm_epi_chunk_instr(const gemm_args *a) {
  double n = 218.0 + (a->bias ? 73.0 : 0.0) + (a->beta != 0.0f ? 120.0 : 0.0);
  if (a->act == GEMM_ACT_GELU_TANH) n += 629.0;
  if (a->act == GEMM_ACT_GELU) n += 1313.0 - 218.0 - 73.0 - 120.0;
  if (a->act == GEMM_ACT_RELU) n += 8.0;
  return n;
}

double gemm_config_estimate(const gemm_args *a, const gemm_config *c, int arch, int sms) {
  const gemm_machine mc = gemm_machine_of(arch);
  const int esz = a->fp8 ? 1 : 2, dsz = a->d_f32 ? 4 : 2;
  const double rate = mc.flop_clk * (a->fp8 ? 2.0 : 1.0);
  /* roofline: the whole device's FLOP and the compulsory HBM bytes */
  const double flops = 2.0 * (double)a->m * (double)a->n * (double)a->k;
  const double bytes =
      (double)(a->m * a->k + a->k * a->n) * esz + (double)a->m * (double)a->n * dsz * (a->beta != 0.0f ? 2.0 : 1.0);
  const double roof = fmax(flops / (rate * mc.clk * sms), bytes / mc.hbm);
  /* the main loop per k-block of one work unit (a CTA's 256 x 128 tile, or a pair's 256 x 256): the tensor cycles and
   * the issue cycles of the SASS loop report (kbd/tune_table.h), and the operand bytes each SM reads from L2 */
  const kbd_tune_loop *lp = kbd_tune_loop_find(c->pair ? "gemm_pair_bf16_rc" : "gemm_kernel", arch, "main");
  const double tc = lp ? lp->tc : 512, issue = lp ? lp->iter + lp->mma : 100;
  const double kblocks = (double)((a->k + (a->fp8 ? GEMM_BK8 : GEMM_BK) - 1) / (a->fp8 ? GEMM_BK8 : GEMM_BK));
  /* sm_90a: each consumer warpgroup's loop is one table row, and the two share the SM's tensor core and schedulers */
  const double per_sm = arch == 90 && !c->pair ? GEMM_CONSUMERS : 1;
  /* rows of 128 bytes (BK elements) per k-block per SM: the pair's CTA loads 128 A and 128 B rows; a 1-SM CTA its 256
   * A rows (half each with a cluster along N) and 128 B rows (half each with a cluster along M); with pingpong
   * consumers each half of the tile has its own stages, so B is loaded twice: 2 x (128 A + 128 B), the cluster
   * shares as before */
  const double rows = c->pair       ? 256.0
                      : c->pingpong ? 2.0 * (128.0 / c->cluster_n + 128.0 / c->cluster)
                                    : 256.0 / c->cluster_n + 128.0 / c->cluster;
  const double l2 = rows * 128.0 / mc.l2_clk;
  const double mma = tc * per_sm / (a->fp8 ? 2.0 : 1.0), iss = issue * per_sm;
  /* the slowest of the three sets the pace; the others overlap it only partly (a tenth stays exposed), and each
   * cluster peer adds its stage-release round trip */
  const double worst = fmax(mma, fmax(iss, l2));
  const double peers = c->pair ? 1 : c->cluster + c->cluster_n - 2;
  const double kb = worst + 0.1 * (mma + iss + l2 - worst) + 0.005 * peers * worst;
  /* the waves: units of work over the clusters resident at once */
  const long long tiles_m = (a->m + (c->pair ? GEMM_PAIR_BM : GEMM_BM) - 1) / (c->pair ? GEMM_PAIR_BM : GEMM_BM);
  const long long tiles_n = (a->n + (c->pair ? GEMM_PAIR_BN : GEMM_BN) - 1) / (c->pair ? GEMM_PAIR_BN : GEMM_BN);
  const int csize = c->pair ? 2 : c->cluster * c->cluster_n;
  const long long units = c->pair
                              ? tiles_m * tiles_n
                              : (tiles_m + c->cluster - 1) / c->cluster * ((tiles_n + c->cluster_n - 1) / c->cluster_n);
  const long long blocks = gemm_config_blocks(a, c);
  long long clusters = blocks / csize, slots = sms / csize;
  if (clusters > slots) clusters = slots;
  if (clusters < 1) clusters = 1;
  const double waves = (double)((units + clusters - 1) / clusters);
  /* the epilogue of a tile (D and C through the SM at about 64 bytes a cycle, plus draining the accumulator), and the
   * pipeline fill of a block's first tile (a TMA round trip, about 1 us): a persistent block pays the fill once and,
   * on sm_100a, hides each epilogue but the last behind the next tile's MMAs (two accumulator buffers) */
  const double tile_elems = c->pair ? 128.0 * 256.0 : 256.0 * 128.0;
  const double epi_bytes = tile_elems * dsz * (a->beta != 0.0f ? 2.0 : 1.0) / 64.0, fill = 1800.0;
  const int one_tile_per_block = blocks / csize >= units;
  const double fills = one_tile_per_block ? waves : 1.0;
  const double main_loop = kblocks * kb; /* a tile's, both consumers' k-blocks */
  double t;
  if (arch == 90) {
    /* sm_90a: the epilogue is also the issue time of the chunk loop, 8 chunks of gemm_epi_chunk_instr() per warp, the
     * warps of both consumers sharing the 4 schedulers (docs/gemm.md, "Pingpong consumers"). Cooperative: both
     * consumers' epilogues after the tile's main loop, the tensor cores idle. Pingpong: one consumer's epilogue (half
     * the bytes, half the scheduler slots) under the other's main loop, so a tile takes max(M, M / 2 + E1) and only
     * the block's last epilogue is exposed (every tile's, with one tile per block) */
    const double n = gemm_epi_chunk_instr(a);
    if (c->pingpong) {
      const double e1 = fmax(epi_bytes / 2.0, 8.0 * n) + 2000.0;
      t = (waves * fmax(main_loop, main_loop / 2.0 + e1) + fills * e1 + fills * fill) / mc.clk;
    } else {
      const double e2 = fmax(epi_bytes, 16.0 * n) + 2000.0;
      t = (waves * (main_loop + e2) + fills * fill) / mc.clk;
    }
  } else {
    const double epi = epi_bytes + 2000.0;
    const double epi_waves = !one_tile_per_block ? 1.0 : waves;
    t = (waves * main_loop + epi_waves * epi + fills * fill) / mc.clk;
  }
  return fmax(roof, t) + 3e-6; /* 3 us: a launch */
}

/* ---- measuring (kbd_tune_pick's callbacks) ------------------------------------------------------------------- */

typedef struct gemm_tune_ctx {
  const gemm_args *a;
  const gemm_params *p;
  void *stream;
  void *ref;    /* device copy of the default configuration's D */
  size_t bytes; /* of D: m rows of ldd */
  int arch, sms;
  const gemm_config *cfg;       /* the candidates */
  int dup_of[GEMM_CONFIGS_MAX]; /* an earlier candidate making the same launch, or -1 */
} gemm_tune_ctx;

static int gemm_tune_valid(const void *config, const void *shape, char *why, size_t why_len) {
  const gemm_tune_ctx *x = (const gemm_tune_ctx *)shape;
  const gemm_config *c = (const gemm_config *)config;
  const int d = x->dup_of[c - x->cfg];
  /* two grid kinds that launch the same blocks are one candidate, so the picker never times one launch twice */
  if (d >= 0) return snprintf(why, why_len, "the same launch as %s", x->cfg[d].name), 0;
  return gemm_config_valid(x->a, c, why, why_len);
}
static double gemm_tune_estimate(const void *config, const void *shape) {
  const gemm_tune_ctx *x = (const gemm_tune_ctx *)shape;
  return gemm_config_estimate(x->a, (const gemm_config *)config, x->arch, x->sms);
}
static kbd_status gemm_tune_launch(const void *config, const void *shape, void *ctx) {
  const gemm_tune_ctx *x = (const gemm_tune_ctx *)shape;
  (void)ctx;
  return gemm_launch(x->a, x->p, (const gemm_config *)config, x->stream);
}
/* Every configuration computes the same sums of exact products in f32, in an order that may differ (the pair's MMA
 * splits N where the 1-SM kernel splits M): D's elements agree to the accumulation's rounding, a few f32 ulps before
 * the conversion, so one bf16 ulp of D (2^-8 relative) or 2^-16 relative for f32 D, and a wrong tile is far off. */
static kbd_status gemm_tune_check(const void *shape, void *ctx, int save_reference) {
  gemm_tune_ctx *x = (gemm_tune_ctx *)ctx;
  const gemm_args *a = x->a;
  (void)shape;
  kbd_status s = kbd_device_sync();
  if (!kbd_ok(s)) return s;
  /* allocated only when a pick measures: a cache hit, the common call, allocates nothing */
  if (save_reference && !x->ref && !kbd_ok(s = kbd_malloc(&x->ref, x->bytes))) return s;
  if (save_reference) return kbd_copy_on_device(x->ref, a->d, x->bytes);
  unsigned char *h = (unsigned char *)malloc(2 * x->bytes);
  if (!h) return kbd_status_make(KBD_ERR_OOM, "gemm_run: tuning: no host memory to compare D (%zu bytes)", x->bytes);
  s = kbd_copy_to_host(h, a->d, x->bytes);
  if (kbd_ok(s)) s = kbd_copy_to_host(h + x->bytes, x->ref, x->bytes);
  for (long long i = 0; kbd_ok(s) && i < a->m; ++i)
    for (long long j = 0; j < a->n; ++j) {
      const size_t at = (size_t)(i * a->ldd + j);
      float got, want;
      if (a->d_f32) {
        memcpy(&got, h + at * 4, 4), memcpy(&want, h + x->bytes + at * 4, 4);
      } else {
        kbd_bf16 g, w;
        memcpy(&g, h + at * 2, 2), memcpy(&w, h + x->bytes + at * 2, 2);
        got = kbd_bf16_to_f32(g), want = kbd_bf16_to_f32(w);
      }
      const double tol = (a->d_f32 ? 0x1p-16 : 0x1p-7) * fmax(1.0, fabs((double)want));
      if (!(fabs((double)got - (double)want) <= tol)) {
        s = kbd_status_make(KBD_ERR_INVALID, "D[%lld][%lld] = %g where the default configuration gives %g", i, j,
                            (double)got, (double)want);
        break;
      }
    }
  free(h);
  return s;
}

kbd_status gemm_run(const gemm_args *a, void *stream) {
  kbd_status s = gemm_check(a);
  if (!kbd_ok(s) || a->m == 0 || a->n == 0 || a->k == 0) return s;
  gemm_params p;
  if (!kbd_ok(s = gemm_params_of(a, &p))) return s;
  kbd_tune_device dev;
  if (!kbd_ok(s = kbd_tune_device_get(&dev))) return s;
  if (!gemm_pair_kernel() && dev.arch >= 100) dev.arch = 90; /* an sm_90a build on a newer GPU runs the sm_90a text */
  const int sms = a->sms ? a->sms : dev.sms;
  gemm_config cfg[GEMM_CONFIGS_MAX];
  kbd_tune_candidate cand[GEMM_CONFIGS_MAX];
  const int n = gemm_configs(a, sms, cfg);
  gemm_tune_ctx x;
  memset(&x, 0, sizeof x);
  x.a = a, x.p = &p, x.stream = stream, x.arch = dev.arch, x.sms = sms, x.cfg = cfg;
  x.bytes = (size_t)(a->m * a->ldd) * (size_t)(a->d_f32 ? 4 : 2);
  kbd_tune_opts o = a->tune ? *a->tune : kbd_tune_opts_default();
  for (int i = 0; i < n; ++i) {
    cand[i].name = cfg[i].name, cand[i].config = &cfg[i];
    x.dup_of[i] = -1;
    for (int j = 0; j < i && x.dup_of[i] < 0; ++j)
      if (x.dup_of[j] < 0 && cfg[j].pair == cfg[i].pair && cfg[j].pingpong == cfg[i].pingpong &&
          cfg[j].cluster == cfg[i].cluster && cfg[j].cluster_n == cfg[i].cluster_n &&
          gemm_config_blocks(a, &cfg[j]) == gemm_config_blocks(a, &cfg[i]))
        x.dup_of[i] = j;
    /* a forced name that launches what an earlier one does is that one */
    if (o.force && x.dup_of[i] >= 0 && !strcmp(o.force, cfg[i].name)) o.force = cfg[x.dup_of[i]].name;
  }
  kbd_tune_space sp;
  memset(&sp, 0, sizeof sp);
  sp.op = "gemm", sp.cand = cand, sp.count = n, sp.default_index = 0, sp.shape = &x, sp.ctx = &x;
  sp.valid = gemm_tune_valid, sp.estimate = gemm_tune_estimate;
  /* measuring overwrites D: not when D is also the C that beta reads */
  const int in_place = a->beta != 0.0f && a->c == a->d;
  if (!in_place) sp.launch = gemm_tune_launch, sp.check = gemm_tune_check;
  const long long dims[3] = {a->m, a->n, a->k};
  static const char *const dt[5] = {"bf16.rr", "bf16.rc", "bf16.cr", "bf16.cc", "e4m3.rc"};
  char dtype[32], key[KBD_TUNE_KEY_MAX];
  snprintf(dtype, sizeof dtype, "%s.d%s%s.sms%d", dt[p.variant], a->d_f32 ? "f32" : "bf16", a->beta != 0.0f ? ".c" : "",
           sms);
  if (!kbd_ok(s = kbd_tune_key_make(key, sizeof key, "gemm", dev.arch, dev.name, dtype, dims, 3))) return s;
#if !KBD_MODE_CPU
  /* the events go on the launch's stream: on another stream they would not bracket the kernel */
  const kbd_tune_timer timer = kbd_tune_timer_cuda(stream);
  if (!o.timer) o.timer = &timer;
#endif
  kbd_tune_result r;
  s = kbd_tune_pick(&sp, key, &o, &r);
  if (x.ref) {
    const kbd_status f = kbd_free(x.ref);
    if (kbd_ok(s)) s = f;
  }
  if (!kbd_ok(s)) return s;
  const gemm_config *c = (const gemm_config *)cand[r.index].config;
  if (a->chosen) {
    *a->chosen = *c;
    a->chosen->reason = kbd_tune_reason_name(r.reason);
  }
  return gemm_launch(a, &p, c, stream);
}
