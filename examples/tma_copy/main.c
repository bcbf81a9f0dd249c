/* examples/tma_copy: y = x over an M x N matrix (bf16, or f32 in the tma_copy_f32_* programs), moved by the
 * TMA through a shared-memory ring.
 *
 *   tma_copy_cpu [rows cols [blocks]]     (default 1000 x 1000 on min(tiles, 132) blocks; CPU machine)
 *   tma_copy_sm90a / _sm100a              (the same on the GPU)
 *   tma_copy_f32_cpu / _sm90a / _sm100a   (f32 elements)
 *
 * x holds arbitrary bit patterns (NaNs and subnormals included), y starts as their complement, and every
 * element of y must come back bit for bit equal to x. `blocks` sets the grid, e.g. a few blocks so that each
 * one wraps the ring many times.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tma_copy.h"

int main(int argc, char **argv) {
  const long long rows = argc > 2 ? atoll(argv[1]) : 1000, cols = argc > 2 ? atoll(argv[2]) : 1000;
  const long long esize = (long long)sizeof(tc_elem);
  if (rows < 1 || cols < 1 || rows > INT32_MAX || cols > INT32_MAX || cols * esize % 16) {
    fprintf(stderr,
            "tma_copy: rows and cols from 1 to 2^31-1 (TMA coordinates are 32-bit), and a row of cols %s "
            "elements (%lld bytes each) a multiple of 16 bytes (the tensor map's row pitch rule): cols a "
            "multiple of %lld\n",
            TC_NAME, esize, 16 / esize);
    return 2;
  }
  const long long tiles = tc_tiles(rows, cols);
  const long long blocks_arg = argc > 3 ? atoll(argv[3]) : 0;
  if (argc > 3 && (blocks_arg < 1 || blocks_arg > INT32_MAX)) {
    fprintf(stderr, "tma_copy: blocks must be from 1 to 2^31-1\n");
    return 2;
  }
  /* persistent: about one block per SM (132 on an H100 SXM), never more blocks than tiles */
  const unsigned grid = (unsigned)(blocks_arg ? blocks_arg : tiles < 132 ? tiles : 132);

  const size_t n = (size_t)(rows * cols), bytes = n * sizeof(tc_elem);
  unsigned char *hx = (unsigned char *)malloc(bytes), *hy = (unsigned char *)malloc(bytes);
  if (!hx || !hy) {
    fprintf(stderr, "tma_copy: out of host memory for %zu bytes\n", 2 * bytes);
    return 1;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 11) * 40503u;
    memcpy(hx + i * sizeof(tc_elem), &h, sizeof(tc_elem)); /* any bit pattern: a copy moves bits */
  }
  for (size_t i = 0; i < bytes; ++i)
    hy[i] = (unsigned char)~hx[i]; /* y starts unequal to x everywhere: an element never written fails */

  tc_elem *dx, *dy;
  KBD_CHECK(kbd_malloc((void **)&dx, bytes));
  KBD_CHECK(kbd_malloc((void **)&dy, bytes));
  KBD_CHECK(kbd_copy_to_device(dx, hx, bytes));
  KBD_CHECK(kbd_copy_to_device(dy, hy, bytes));

  tc_params p;
  kbd_tensor_map_desc d = tc_map_desc(dx, rows, cols);
  KBD_CHECK(kbd_tensor_map_encode(&p.x, &d));
  d = tc_map_desc(dy, rows, cols);
  KBD_CHECK(kbd_tensor_map_encode(&p.y, &d));
  p.rows = rows;
  p.cols = cols;

  tc_smem l;
  const kbd_smem_plan plan = tc_layout(&l);
  KBD_CHECK(kbd_smem_plan_status(&plan));
  KBD_CHECK(tc_copy(kbd_cfg(kbd_dim(grid, 1, 1), plan.bytes, NULL), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hy, dy, bytes));

  long long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!memcmp(hx + i * sizeof(tc_elem), hy + i * sizeof(tc_elem), sizeof(tc_elem))) continue;
    if (bad++ < 5) {
      uint32_t want = 0, got = 0;
      memcpy(&want, hx + i * sizeof(tc_elem), sizeof(tc_elem));
      memcpy(&got, hy + i * sizeof(tc_elem), sizeof(tc_elem));
      fprintf(stderr, "y[%lld][%lld] = 0x%0*x, want 0x%0*x\n", (long long)(i / (size_t)cols),
              (long long)(i % (size_t)cols), (int)(2 * sizeof(tc_elem)), (unsigned)got, (int)(2 * sizeof(tc_elem)),
              (unsigned)want);
    }
  }
  printf("tma_copy %s: %lld x %lld, %lld tiles of %d x %d on %u blocks, %d-stage ring, %zu bytes of shared "
         "memory: %lld mismatches: %s\n",
         TC_NAME, rows, cols, tiles, TC_ROWS, TC_COLS, grid, TC_STAGES, plan.bytes, bad, bad ? "FAILED" : "OK");
  KBD_CHECK(kbd_free(dx));
  KBD_CHECK(kbd_free(dy));
  free(hx);
  free(hy);
  return bad != 0;
}
