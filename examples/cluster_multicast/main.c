/* examples/cluster_multicast: out = x * w (w, CM_TR rows, repeating down the rows) and colsum = the column sums
 * of out, on clusters of n CTAs that share one multicast load of w and add their partial sums through DSMEM.
 *
 *   cluster_multicast_cpu [ctas [rows cols]]   (default 2 CTAs per cluster, 1000 x 128: 4 clusters; CPU machine)
 *   cluster_multicast_sm90a / _sm100a          (the same on the GPU)
 *
 * ctas: 1, 2, 4 or 8 CTAs per cluster; one cluster per CM_TC columns, so the grid is ceil(cols / CM_TC) * ctas.
 * Any rows from 1 to CM_MAX_ROWS and cols >= 1.
 *
 * The check is exact, bit for bit, for out AND colsum. f32 sums depend on the order of the additions (and on
 * whether nvcc fuses a multiply into an add, FFMA), which the kernel does not promise to match on the host.
 * So x and w hold small integers (|x|, |w| <= 4): every product and every partial sum is an integer of
 * magnitude at most 16 * rows <= 2^24, exact in f32, and any order gives the same sum - the reference below
 * is an exact integer sum. With real data compare colsum with a tolerance of about rows * 2^-24 * sum|out|.
 * out and colsum start as NaN patterns, so an element never written fails too, and the row padding of out
 * (columns cols .. ld-1) must keep that pattern.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_multicast.h"

static float cm_small_int(uint32_t i, uint32_t salt) {
  const uint32_t h = (i * 2654435761u) ^ (salt * 40503u) ^ (i >> 7);
  return (float)((int)(h % 9u) - 4); /* -4 .. 4 */
}

int main(int argc, char **argv) {
  const long long ctas = argc > 1 ? atoll(argv[1]) : 2;
  const long long rows = argc > 3 ? atoll(argv[2]) : 1000, cols = argc > 3 ? atoll(argv[3]) : 128;
  if (ctas < 1 || ctas > CM_WSLICES || CM_WSLICES % ctas) {
    fprintf(stderr,
            "cluster_multicast: ctas per cluster must be 1, 2, 4 or 8 (each CTA multicasts %d / ctas "
            "slices of w)\n",
            CM_WSLICES);
    return 2;
  }
  if (rows < 1 || cols < 1 || rows > CM_MAX_ROWS || cols > INT32_MAX) {
    fprintf(stderr,
            "cluster_multicast: rows from 1 to %lld (the exact check's bound: |colsum| <= 16 * rows <= 2^24), "
            "cols from 1 to 2^31-1\n",
            CM_MAX_ROWS);
    return 2;
  }
  const long long bands = cm_bands(cols);
  if (bands * ctas > INT32_MAX) {
    fprintf(stderr, "cluster_multicast: %lld clusters of %lld CTAs exceed the grid's 2^31-1 blocks\n", bands, ctas);
    return 2;
  }

  const long long ld = cm_ld(cols);
  const size_t xn = (size_t)(rows * ld), wn = (size_t)(CM_TR * ld);
  float *hx = (float *)calloc(xn, sizeof(float)), *hw = (float *)calloc(wn, sizeof(float));
  float *hout = (float *)malloc(xn * sizeof(float)), *hsum = (float *)malloc((size_t)cols * sizeof(float));
  if (!hx || !hw || !hout || !hsum) {
    fprintf(stderr, "cluster_multicast: out of host memory\n");
    return 1;
  }
  for (long long r = 0; r < rows; ++r)
    for (long long c = 0; c < cols; ++c)
      hx[r * ld + c] = cm_small_int((uint32_t)(r * cols + c), 1u);
  for (long long r = 0; r < CM_TR; ++r)
    for (long long c = 0; c < cols; ++c)
      hw[r * ld + c] = cm_small_int((uint32_t)(r * cols + c), 2u);
  memset(hout, 0xff, xn * sizeof(float)); /* NaN: an element never written fails */
  memset(hsum, 0xff, (size_t)cols * sizeof(float));

  float *dx, *dw, *dout, *dsum;
  KBD_CHECK(kbd_malloc((void **)&dx, xn * sizeof(float)));
  KBD_CHECK(kbd_malloc((void **)&dw, wn * sizeof(float)));
  KBD_CHECK(kbd_malloc((void **)&dout, xn * sizeof(float)));
  KBD_CHECK(kbd_malloc((void **)&dsum, (size_t)cols * sizeof(float)));
  KBD_CHECK(kbd_copy_to_device(dx, hx, xn * sizeof(float)));
  KBD_CHECK(kbd_copy_to_device(dw, hw, wn * sizeof(float)));
  KBD_CHECK(kbd_copy_to_device(dout, hout, xn * sizeof(float)));
  KBD_CHECK(kbd_copy_to_device(dsum, hsum, (size_t)cols * sizeof(float)));

  cm_params p;
  kbd_tensor_map_desc d = cm_map_desc(dx, rows, cols, ld, kbd_tma_box_rows_for(cm_tile));
  KBD_CHECK(kbd_tensor_map_encode(&p.x, &d));
  d = cm_map_desc(dw, CM_TR, cols, ld, kbd_tma_box_rows_for(cm_wslice));
  KBD_CHECK(kbd_tensor_map_encode(&p.w, &d));
  p.out = dout;
  p.colsum = dsum;
  p.rows = rows;
  p.cols = cols;
  p.ld = ld;

  cm_smem l;
  const kbd_smem_plan plan = cm_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  kbd_launch_cfg cfg = kbd_cfg(kbd_dim((unsigned)(bands * ctas), 1, 1), plan.bytes, NULL);
  cfg = kbd_cfg_cluster(cfg, (unsigned)ctas, 1, 1); /* clusters of ctas x 1 x 1: rank = block x % ctas */
  KBD_CHECK(cm_scale_colsum(cfg, p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hout, dout, xn * sizeof(float)));
  KBD_CHECK(kbd_copy_to_host(hsum, dsum, (size_t)cols * sizeof(float)));

  long long bad = 0;
  for (long long c = 0; c < cols; ++c) {
    long long want_sum = 0; /* exact: integers (see the top of this file) */
    for (long long r = 0; r < rows; ++r) {
      const float want = hx[r * ld + c] * hw[(r % CM_TR) * ld + c], got = hout[r * ld + c];
      want_sum += (long long)want;
      if (!memcmp(&want, &got, sizeof want)) continue;
      if (bad++ < 5) fprintf(stderr, "out[%lld][%lld] = %g, want %g\n", r, c, (double)got, (double)want);
    }
    const float want = (float)want_sum;
    if (memcmp(&want, &hsum[c], sizeof want) && bad++ < 5)
      fprintf(stderr, "colsum[%lld] = %g, want %g\n", c, (double)hsum[c], (double)want);
  }
  for (long long r = 0; r < rows; ++r) /* the row padding of out keeps its fill: kbd_store2d masks at cols */
    for (long long c = cols; c < ld; ++c) {
      uint32_t bits;
      memcpy(&bits, &hout[r * ld + c], sizeof bits);
      if (bits != 0xffffffffu && bad++ < 5) fprintf(stderr, "out[%lld][%lld] (padding) was written\n", r, c);
    }
  printf("cluster_multicast: %lld x %lld f32, %lld clusters of %lld CTAs (w multicast in %d slices, %lld each), "
         "%zu bytes of shared memory per CTA: %lld mismatches: %s\n",
         rows, cols, bands, ctas, CM_WSLICES, CM_WSLICES / ctas, plan.bytes, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dw));
  KBD_CHECK(kbd_free(dout));
  KBD_CHECK(kbd_free(dsum));
  free(hx);
  free(hw);
  free(hout);
  free(hsum);
  return bad != 0;
}
