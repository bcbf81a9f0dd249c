/* examples/transpose: y = x^T for an M x N row-major matrix x (bf16, or f32 in the transpose_f32_* programs).
 *
 *   transpose_cpu [rows cols [blocks]]      (default 1000 x 1000 on min(tiles, 132) blocks; CPU machine)
 *   transpose_sm90a / _sm100a               (the same on the GPU)
 *   transpose_f32_cpu / _sm90a / _sm100a    (f32 elements)
 *   transpose_noswz_cpu / _sm90a / _sm100a  (bf16 on unswizzled shared tiles: correct, but 8-way bank conflicts;
 *                                           KBD_CPU_PROFILE=1 shows them, docs/profiling.md)
 *
 * Any rows, cols >= 1: x and y rows are padded to a multiple of 16 bytes (the tensor maps' row pitch rule).
 * x holds arbitrary bit patterns (NaNs and subnormals included), y starts as their complement and its padding
 * as a fill pattern: every element of y must come back bit for bit equal to its element of x, and the padding
 * must be untouched (the TMA store drops what lies outside y). `blocks` sets the grid, e.g. a few blocks so
 * that each one wraps the load ring many times.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transpose.h"

#define ES sizeof(tr_elem)

static uint32_t tr_bits(size_t i) { return (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 11) * 40503u; }

int main(int argc, char **argv) {
  const long long rows = argc > 2 ? atoll(argv[1]) : 1000, cols = argc > 2 ? atoll(argv[2]) : 1000;
  if (rows < 1 || cols < 1 || rows > INT32_MAX || cols > INT32_MAX) {
    fprintf(stderr, "transpose: rows and cols from 1 to 2^31-1 (TMA coordinates are 32-bit)\n");
    return 2;
  }
  const long long blocks_arg = argc > 3 ? atoll(argv[3]) : 0;
  if (argc > 3 && (blocks_arg < 1 || blocks_arg > INT32_MAX)) {
    fprintf(stderr, "transpose: blocks must be from 1 to 2^31-1\n");
    return 2;
  }
  const long long tiles = tr_tiles(rows, cols);
  /* persistent: about one block per SM (132 on an H100 SXM), never more blocks than tiles */
  const unsigned grid = (unsigned)(blocks_arg ? blocks_arg : tiles < 132 ? tiles : 132);

  const long long ldx = tr_ld(cols), ldy = tr_ld(rows); /* row pitches in elements */
  const size_t xbytes = (size_t)(rows * ldx) * ES, ybytes = (size_t)(cols * ldy) * ES;
  unsigned char *hx = (unsigned char *)malloc(xbytes), *hy = (unsigned char *)malloc(ybytes);
  if (!hx || !hy) {
    fprintf(stderr, "transpose: out of host memory for %zu bytes\n", xbytes + ybytes);
    return 1;
  }
  for (size_t i = 0; i < xbytes / ES; ++i) {
    const uint32_t h = tr_bits(i);
    memcpy(hx + i * ES, &h, ES); /* any bit pattern: a transpose moves bits */
  }
  memset(hy, 0x5a, ybytes); /* the padding's fill: it must survive */
  for (long long i = 0; i < rows; ++i)
    for (long long j = 0; j < cols; ++j)
      for (size_t b = 0; b < ES; ++b) /* y starts unequal to x^T everywhere: an element never written fails */
        hy[(size_t)(j * ldy + i) * ES + b] = (unsigned char)~hx[(size_t)(i * ldx + j) * ES + b];

  tr_elem *dx, *dy;
  KBD_CHECK(kbd_malloc((void **)&dx, xbytes));
  KBD_CHECK(kbd_malloc((void **)&dy, ybytes));
  KBD_CHECK(kbd_copy_to_device(dx, hx, xbytes));
  KBD_CHECK(kbd_copy_to_device(dy, hy, ybytes));

  tr_params p;
  kbd_tensor_map_desc d =
      tr_map_desc(dx, rows, cols, ldx, kbd_tma_box_rows_for(tr_in_tile), kbd_tma_box_cols_for(tr_in_tile));
  KBD_CHECK(kbd_tensor_map_encode(&p.x, &d));
  d = tr_map_desc(dy, cols, rows, ldy, kbd_tma_box_rows_for(tr_out_tile), kbd_tma_box_cols_for(tr_out_tile));
  KBD_CHECK(kbd_tensor_map_encode(&p.y, &d));
  p.rows = rows;
  p.cols = cols;

  tr_smem l;
  const kbd_smem_plan plan = tr_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  KBD_CHECK(tr_transpose(kbd_cfg(kbd_dim(grid, 1, 1), plan.bytes, NULL), p));
  KBD_CHECK(kbd_device_sync());
  unsigned char *got = (unsigned char *)malloc(ybytes);
  if (!got) {
    fprintf(stderr, "transpose: out of host memory for %zu bytes\n", ybytes);
    return 1;
  }
  KBD_CHECK(kbd_copy_to_host(got, dy, ybytes));

  long long bad = 0;
  for (long long j = 0; j < cols; ++j)
    for (long long i = 0; i < ldy; ++i) {
      const size_t at = (size_t)(j * ldy + i) * ES;
      /* y[j][i] = x[i][j]; past column rows - 1 the padding keeps its fill */
      const unsigned char *want = i < rows ? hx + (size_t)(i * ldx + j) * ES : hy + at;
      if (!memcmp(got + at, want, ES)) continue;
      if (bad++ < 5) {
        uint32_t w = 0, g = 0;
        memcpy(&w, want, ES);
        memcpy(&g, got + at, ES);
        fprintf(stderr, "y[%lld][%lld]%s = 0x%0*x, want 0x%0*x\n", j, i, i < rows ? "" : " (padding)", (int)(2 * ES),
                (unsigned)g, (int)(2 * ES), (unsigned)w);
      }
    }
  printf("transpose %s: %lld x %lld -> %lld x %lld, %lld tiles of %d x %d on %u blocks, %d-stage ring, %zu bytes "
         "of shared memory: %lld mismatches: %s\n",
         TR_NAME, rows, cols, cols, rows, tiles, TR_TM, TR_TN, grid, TR_STAGES, plan.bytes, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  free(hx);
  free(hy);
  free(got);
  return bad != 0;
}
