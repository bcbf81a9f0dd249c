/* main.c - host side of examples/gemm_simple: D = gelu_tanh(A B + bias) on bf16, checked against a double reference.
 *
 *   gemm_simple_cpu [M N K [grid]]    (default 300 x 200 x 150; the CPU machine emulating sm_100a; gemm_simple90_cpu
 *                                      emulates sm_90a; gemm_simple_sm90a / _sm100a run on the GPU)
 * grid: blocks of the persistent grid (default one per tile, at most 132). Exit status 0 when every element is within
 * the tolerance, 1 on a mismatch, 2 on bad arguments, 77 without a device (GPU build).
 */
#include "gemm_simple.h" /* first: kbd/tile.h sets the feature macros the system headers read */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small integers over 8: every product is exact in f32, so the check measures the summation and the epilogue. */
static float gs_value(long long i, unsigned salt) {
  const unsigned long long h = ((unsigned long long)i + salt) * 0x9E3779B97F4A7C15ull;
  return (float)((int)((h >> 40) % 17u) - 8) / 8.0f;
}

/* The tensor map of a rows x cols row-major bf16 matrix (cols contiguous, rows ld elements apart) in boxes of one
 * shared tile of box_rows x box_cols. */
static kbd_status gs_map(kbd_tensor_map *map, const kbd_bf16 *dev, long long rows, long long cols, long long ld,
                         uint32_t box_rows, uint32_t box_cols, int swizzle) {
  const kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, dev, (uint64_t)rows, (uint64_t)cols,
                                                       (uint64_t)ld * 2, box_rows, box_cols, swizzle);
  return kbd_tensor_map_encode(map, &d);
}

/* A device copy of `bytes` bytes at h (KBD_CHECK prints the error and exits). */
static void *gs_upload(const void *h, size_t bytes) {
  void *d;
  KBD_CHECK(kbd_malloc(&d, bytes));
  KBD_CHECK(kbd_copy_to_device(d, h, bytes));
  return d;
}

int main(int argc, char **argv) {
  const long long m = argc > 3 ? atoll(argv[1]) : 300, n = argc > 3 ? atoll(argv[2]) : 200;
  const long long k = argc > 3 ? atoll(argv[3]) : 150, grid_arg = argc > 4 ? atoll(argv[4]) : 0;
  if (m < 1 || n < 1 || k < 1 || m > 1ll << 31 || n > 1ll << 31 || k > 1ll << 31 || grid_arg < 0 || grid_arg > 65535) {
    fprintf(stderr, "usage: %s [M N K [grid]]: M, N, K in 1..2^31, grid 0 (automatic) or 1..65535\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("gemm_simple: no CUDA device present; nothing to run\n");
    return 77;
  }
  /* rows padded to 8 elements: the TMA needs 16-byte row strides; the padding is outside the maps, never read */
  const long long ldk = (k + 7) / 8 * 8, ldd = (n + 7) / 8 * 8;
  const size_t na = (size_t)(m * ldk), nb = (size_t)(n * ldk), nd = (size_t)(m * ldd);
  kbd_bf16 *ha = calloc(na, sizeof(kbd_bf16)), *hb = calloc(nb, sizeof(kbd_bf16)), *hd = malloc(nd * sizeof(kbd_bf16));
  float *hbias = malloc(sizeof(float) * (size_t)n);
  if (!ha || !hb || !hd || !hbias) return 1;
  for (long long i = 0; i < m * k; ++i) /* A[i][q] at i * ldk + q */
    ha[i / k * ldk + i % k] = kbd_f32_to_bf16(gs_value(i, 1u));
  for (long long i = 0; i < n * k; ++i) /* B[q][j] at j * ldk + q: column-major */
    hb[i / k * ldk + i % k] = kbd_f32_to_bf16(gs_value(i, 2u));
  for (long long j = 0; j < n; ++j)
    hbias[j] = gs_value(j, 3u);
  memset(hd, 0xff, nd * sizeof(kbd_bf16)); /* NaN: an element the kernel does not write fails the check */
  kbd_bf16 *da = gs_upload(ha, na * 2), *db = gs_upload(hb, nb * 2), *dd = gs_upload(hd, nd * 2);
  float *dbias = gs_upload(hbias, sizeof(float) * (size_t)n);

  gs_params p;
  KBD_CHECK(gs_map(&p.a, da, m, k, ldk, kbd_tma_box_rows_for(gs_a_tile), kbd_tma_box_cols_for(gs_a_tile),
                   KBD_TMAP_SWIZZLE_128B));
  KBD_CHECK(gs_map(&p.b, db, n, k, ldk, kbd_tma_box_rows_for(gs_b_tile), kbd_tma_box_cols_for(gs_b_tile),
                   KBD_TMAP_SWIZZLE_128B));
  KBD_CHECK(gs_map(&p.d, dd, m, n, ldd, kbd_tma_box_rows_for(gs_out_tile), kbd_tma_box_cols_for(gs_out_tile),
                   KBD_TMAP_SWIZZLE_32B));
  p.bias = dbias, p.m = m, p.n = n, p.k = k;
  gs_smem l;
  const kbd_smem_plan plan = gs_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  const long long tiles = (m + GS_BM - 1) / GS_BM * ((n + GS_BN - 1) / GS_BN);
  const long long grid = grid_arg ? grid_arg : tiles < 132 ? tiles : 132; /* persistent: about one block per SM */
  KBD_CHECK(gemm_simple(kbd_cfg(kbd_dim((unsigned)grid, 1, 1), plan.bytes, NULL), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hd, dd, sizeof(kbd_bf16) * nd));

  /* Tolerance: an f32 sum of K exact products in any order is within (K + 2) 2^-24 sum|terms|; gelu_tanh's few
   * ulp and the bf16 rounding of D (2^-8 relative) come on top. */
  long long bad = 0;
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      double y = hbias[j], mag = fabs(hbias[j]);
      for (long long q = 0; q < k; ++q) {
        const double t = (double)kbd_bf16_to_f32(ha[i * ldk + q]) * kbd_bf16_to_f32(hb[j * ldk + q]);
        y += t, mag += fabs(t);
      }
      const double ref = 0.5 * y * (1.0 + tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)));
      const double got = kbd_bf16_to_f32(hd[i * ldd + j]);
      const double tol = (double)(k + 8) * 0x1p-24 * mag + 0x1p-8 * fabs(ref) + 1e-6;
      if (!(fabs(got - ref) <= tol) && bad++ < 5)
        fprintf(stderr, "D[%lld][%lld] = %.8g, expected %.8g (tolerance %.3g)\n", i, j, got, ref, tol);
    }
  printf("%s: %lld x %lld x %lld, grid %lld: mismatches = %lld -> %s\n", argv[0], m, n, k, grid, bad,
         bad ? "FAILED" : "OK");
  kbd_free(da), kbd_free(db), kbd_free(dd), kbd_free(dbias);
  free(ha), free(hb), free(hd), free(hbias);
  return bad != 0;
}
