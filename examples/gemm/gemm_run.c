/* gemm_run.c - host side of the GEMM kernels: checks the arguments, builds the tensor maps and launches
 * (gemm.h documents gemm_args). Every wrong argument is a KBD_ERR_INVALID status naming it, and nothing is
 * launched: a kernel given a misaligned or too short row would fault on the GPU. */
#include <math.h>
#include <stdint.h>
#include <string.h>

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
  if (a->pair != 0 && a->pair != 1) return kbd_status_make(KBD_ERR_INVALID, "gemm_run: pair = %d: 0 or 1", a->pair);
  if (a->pair && !gemm_pair_kernel())
    return kbd_status_make(KBD_ERR_INVALID,
                           "gemm_run: pair = 1: CTA pairs (tcgen05 .cta_group::2) exist on sm_100a only, and this "
                           "build is for another arch");
  if (a->pair && (a->fp8 || a->a_col || !a->b_col))
    return kbd_status_make(
        KBD_ERR_INVALID,
        "gemm_run: pair = 1 takes bf16 A row-major and B column-major (both K-major; fp8 = %d, a_col "
        "= %d, b_col = %d)",
        a->fp8, a->a_col, a->b_col);
  if (a->pair && (a->cluster > 1 || a->cluster_n > 1))
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
                           int esize, uint32_t box_rows, uint32_t box_inner, int swizzle) {
  const kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(dt, p, (uint64_t)rows, (uint64_t)cols, (uint64_t)(ld * esize),
                                                       box_rows, box_inner, swizzle);
  return kbd_tensor_map_encode(m, &d);
}

kbd_status gemm_run(const gemm_args *a, void *stream) {
  kbd_status s = gemm_check(a);
  if (!kbd_ok(s) || a->m == 0 || a->n == 0 || a->k == 0) return s;
  gemm_params p;
  memset(&p, 0, sizeof p);
  const int tdt = a->fp8 ? KBD_TMAP_DT_U8 : KBD_TMAP_DT_BF16, esz = a->fp8 ? 1 : 2, dsz = a->d_f32 ? 4 : 2;
  const long long k = a->k, lda = a->lda, ldb = a->ldb;
  const void *pa = a->a, *pb = a->b;
  /* A: rows of its contiguous dimension, the box one consumer's A slice; B likewise */
  if (a->fp8)
    s = gemm_map(&p.a, tdt, pa, a->m, k, lda, esz, kbd_tma_box_lines_for(gemm_a8), kbd_tma_box_inner_for(gemm_a8),
                 KBD_TMAP_SWIZZLE_128B);
  else if (a->a_col)
    s = gemm_map(&p.a, tdt, pa, k, a->m, lda, esz, kbd_tma_box_lines_for(gemm_a_mn), kbd_tma_box_inner_for(gemm_a_mn),
                 KBD_TMAP_SWIZZLE_128B);
  else
    s = gemm_map(&p.a, tdt, pa, a->m, k, lda, esz, kbd_tma_box_lines_for(gemm_a_k), kbd_tma_box_inner_for(gemm_a_k),
                 KBD_TMAP_SWIZZLE_128B);
  if (!kbd_ok(s)) return s;
  if (a->fp8)
    s = gemm_map(&p.b, tdt, pb, a->n, k, ldb, esz, kbd_tma_box_lines_for(gemm_bh8), kbd_tma_box_inner_for(gemm_bh8),
                 KBD_TMAP_SWIZZLE_128B);
  else if (a->b_col)
    s = gemm_map(&p.b, tdt, pb, a->n, k, ldb, esz, kbd_tma_box_lines_for(gemm_bh_k), kbd_tma_box_inner_for(gemm_bh_k),
                 KBD_TMAP_SWIZZLE_128B);
  else
    s = gemm_map(&p.b, tdt, pb, k, a->n, ldb, esz, kbd_tma_box_lines_for(gemm_bh_mn), kbd_tma_box_inner_for(gemm_bh_mn),
                 KBD_TMAP_SWIZZLE_128B);
  if (!kbd_ok(s)) return s;
  if (a->d_f32)
    s = gemm_map(&p.d, KBD_TMAP_DT_F32, a->d, a->m, a->n, a->ldd, dsz, kbd_tma_box_lines_for(gemm_out_f32),
                 kbd_tma_box_inner_for(gemm_out_f32), KBD_TMAP_SWIZZLE_64B);
  else
    s = gemm_map(&p.d, KBD_TMAP_DT_BF16, a->d, a->m, a->n, a->ldd, dsz, kbd_tma_box_lines_for(gemm_out_bf16),
                 kbd_tma_box_inner_for(gemm_out_bf16), KBD_TMAP_SWIZZLE_32B);
  if (!kbd_ok(s)) return s;
  p.c = a->beta != 0.0f ? a->c : NULL;
  p.bias = a->bias;
  p.m = a->m, p.n = a->n, p.k = a->k, p.ldc = a->ldc;
  /* fp8: the per-tensor scales fold into alpha (the MMA's f32 sum of e4m3 products is exact for them) */
  p.alpha = a->fp8 ? a->alpha * a->scale_a * a->scale_b : a->alpha;
  p.beta = a->beta, p.act = a->act, p.d_f32 = a->d_f32;

  gemm_smem l;
  if (a->pair) { /* a 2-CTA cluster per pair: the pair is the cluster, so p.cluster stays 1 */
    const kbd_smem_plan plan = gemm_layout_pair(&l);
    if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
    p.cluster = 1, p.cluster_n = 1;
    const kbd_launch_cfg cfg =
        kbd_cfg(kbd_dim((unsigned)gemm_pair_blocks(a->m, a->n, a->grid), 1, 1), plan.bytes, stream);
    return gemm_pair_kernel()(kbd_cfg_cluster(cfg, 2, 1, 1), p);
  }
  const kbd_smem_plan plan = gemm_layout(&l, a->fp8);
  if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
  /* a pair of CTAs along M shares B (each loads half and multicasts it) when there are two tile rows to pair; a
   * pair along N shares A when asked */
  int cm, cn;
  const long long grid = gemm_launch_blocks(a->m, a->n, a->grid, a->cluster, a->cluster_n, &cm, &cn);
  p.cluster = cm, p.cluster_n = cn;
  p.variant = a->fp8 ? GEMM_E4M3_RC : a->a_col * 2 + a->b_col; /* gemm_variant */
  kbd_launch_cfg cfg = kbd_cfg(kbd_dim((unsigned)grid, 1, 1), plan.bytes, stream);
  if (cm * cn > 1) cfg = kbd_cfg_cluster(cfg, (unsigned)(cm * cn), 1, 1);
  return gemm_kernel(cfg, p);
}
