/* examples/tma_pipeline: y = max(x * scale + shift, 0) over an M x N bf16 matrix through a TMA ring.
 *
 *   tma_pipeline_cpu [rows cols]     (default 1000 x 1000; CPU machine)
 *   tma_pipeline_sm90a / _sm100a     (the same on the GPU)
 *
 * Checks every element against the same computation on the host (bf16 in, f32 math, bf16 out: exact).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tma_pipeline.h"

int main(int argc, char **argv) {
  const long long rows = argc > 2 ? atoll(argv[1]) : 1000, cols = argc > 2 ? atoll(argv[2]) : 1000;
  if (rows < 1 || cols < 1 || cols % 8) {
    fprintf(stderr, "tma_pipeline: rows >= 1 and cols a positive multiple of 8 (TMA row pitch: 16 bytes)\n");
    return 2;
  }
  const size_t n = (size_t)(rows * cols);
  kbd_bf16 *hx = (kbd_bf16 *)malloc(n * sizeof *hx), *hy = (kbd_bf16 *)malloc(n * sizeof *hy);
  if (!hx || !hy) return 1;
  for (size_t i = 0; i < n; ++i)
    hx[i] = kbd_f32_to_bf16((float)((long long)(i * 2654435761u % 2001) - 1000) / 64.0f);

  kbd_bf16 *dx, *dy;
  KBD_CHECK(kbd_malloc((void **)&dx, n * sizeof *dx));
  KBD_CHECK(kbd_malloc((void **)&dy, n * sizeof *dy));
  KBD_CHECK(kbd_copy_to_device(dx, hx, n * sizeof *dx));

  tp_params p;
  kbd_tensor_map_desc d = tp_map_desc(dx, rows, cols);
  KBD_CHECK(kbd_tensor_map_encode(&p.x, &d));
  d = tp_map_desc(dy, rows, cols);
  KBD_CHECK(kbd_tensor_map_encode(&p.y, &d));
  p.rows = rows;
  p.cols = cols;
  p.scale = 0.75f;
  p.shift = -2.0f;

  tp_smem l;
  const kbd_smem_plan plan = tp_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  const long long tiles = (rows + TP_ROWS - 1) / TP_ROWS * ((cols + TP_COLS - 1) / TP_COLS);
  const unsigned grid = (unsigned)(tiles < 132 ? tiles : 132); /* persistent: about one block per SM */
  KBD_CHECK(tp_scale_relu(kbd_cfg(kbd_dim(grid, 1, 1), plan.bytes, NULL), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hy, dy, n * sizeof *hy));

  long long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float v = kbd_bf16_to_f32(hx[i]) * p.scale + p.shift;
    v = v > 0.0f ? v : 0.0f;
    const float want = kbd_bf16_to_f32(kbd_f32_to_bf16(v)), got = kbd_bf16_to_f32(hy[i]);
    if (got != want && bad++ < 5)
      fprintf(stderr, "y[%lld][%lld] = %g, want %g\n", (long long)(i / (size_t)cols), (long long)(i % (size_t)cols),
              got, want);
  }
  printf("tma_pipeline: %lld x %lld, %lld tiles on %u blocks, %zu bytes of shared memory: %s\n", rows, cols, tiles,
         grid, plan.bytes, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  free(hx);
  free(hy);
  return bad != 0;
}
