/* prof_transpose_run.h - host side of one transpose build (transpose.h as configured by the including file):
 * PROF_TR_RUN(rows, cols, grid) runs the kernel PROF_TR_KERNEL on a rows x cols bf16 matrix and returns the
 * number of wrong elements of y (-1 if a kbd call failed). examples/transpose/main.c does the same with more
 * reporting; this copy only exists so that two builds of the kernel can live in one test program. */
#include <stdlib.h>
#include <string.h>

long long PROF_TR_RUN(long long rows, long long cols, unsigned grid);
long long PROF_TR_RUN(long long rows, long long cols, unsigned grid) {
  const size_t es = sizeof(tr_elem);
  const long long ldx = tr_ld(cols), ldy = tr_ld(rows);
  const size_t xbytes = (size_t)(rows * ldx) * es, ybytes = (size_t)(cols * ldy) * es;
  unsigned char *hx = (unsigned char *)malloc(xbytes), *hy = (unsigned char *)calloc(1, ybytes);
  if (!hx || !hy) return -1;
  for (size_t i = 0; i < xbytes; ++i)
    hx[i] = (unsigned char)(i * 131u + 7u);
  tr_elem *dx, *dy;
  long long bad = -1;
  if (!kbd_ok(kbd_malloc((void **)&dx, xbytes))) return -1;
  if (!kbd_ok(kbd_malloc((void **)&dy, ybytes))) return -1;
  tr_params p;
  kbd_tensor_map_desc d =
      tr_map_desc(dx, rows, cols, ldx, kbd_tma_box_rows_for(tr_in_tile), kbd_tma_box_cols_for(tr_in_tile));
  kbd_status s = kbd_copy_to_device(dx, hx, xbytes);
  if (kbd_ok(s)) s = kbd_copy_to_device(dy, hy, ybytes);
  if (kbd_ok(s)) s = kbd_tensor_map_encode(&p.x, &d);
  d = tr_map_desc(dy, cols, rows, ldy, kbd_tma_box_rows_for(tr_out_tile), kbd_tma_box_cols_for(tr_out_tile));
  if (kbd_ok(s)) s = kbd_tensor_map_encode(&p.y, &d);
  p.rows = rows;
  p.cols = cols;
  tr_smem l;
  const kbd_smem_plan plan = tr_layout(&l);
  if (kbd_ok(s)) s = PROF_TR_KERNEL(kbd_cfg(kbd_dim(grid, 1, 1), plan.bytes, NULL), p);
  if (kbd_ok(s)) s = kbd_copy_to_host(hy, dy, ybytes);
  if (kbd_ok(s)) {
    bad = 0;
    for (long long j = 0; j < cols; ++j)
      for (long long i = 0; i < rows; ++i)
        bad += memcmp(hy + (size_t)(j * ldy + i) * es, hx + (size_t)(i * ldx + j) * es, es) != 0;
  }
  kbd_free(dx);
  kbd_free(dy);
  free(hx);
  free(hy);
  return bad;
}
