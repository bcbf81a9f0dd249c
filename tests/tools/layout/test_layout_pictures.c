/* tests/tools/layout/test_layout_pictures.c - kbd-layout draws what the library computes, and what the PTX ISA
 * specifies.
 *
 * The tool (its path in argv[1]) draws two pictures as SVG; every cell's labels (data-thread/data-value for a
 * fragment, data-bank/data-chunk for a shared tile) are parsed and checked against
 *   (1) direct calls of the library: kbd_tile_coord over every (thread, value), kbd_smem_tile_offset of every
 *       element - so a picture can only come from the code the kernels run;
 *   (2) formulas written here from the PTX ISA, independently of kbd's code:
 *       wgmma m64nNk16 f32 accumulator ("Matrix fragments for wgmma .m64nNk16", register fragment D): thread t,
 *       value i holds row 16*(t/32) + (t%32)/4 + 8*((i/2)%2), column 2*(t%4) + (i%2) + 8*(i/4);
 *       128B swizzle of a K-major bf16 tile with 128-byte rows (ptx-reference §3): element (r, c) at byte
 *       r*128 + ((c*2/16) ^ (r%8))*16 + (c*2)%16.
 * The --text form is checked on the same tile (the same numbers as the SVG's).
 */
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *tool;

/* Runs the tool, returns its whole stdout (malloc'd). */
static char *run(const char *args) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "\"%s\" %s", tool, args);
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap);
  assert_non_null(buf);
  size_t got;
  while ((got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
    n += got;
    if (n + 1 >= cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
  }
  buf[n] = '\0';
  assert_int_equal(pclose(f), 0);
  return buf;
}

/* Every <g data-row=.. data-col=.. data-K1=.. data-K2=..> of an SVG into a[r][c], b[r][c]; returns the count. */
static int cells(const char *svg, const char *k1, const char *k2, int rows, int cols, int *a, int *b) {
  char pat[128];
  snprintf(pat, sizeof pat, "<g data-row=\"%%d\" data-col=\"%%d\" data-%s=\"%%d\" data-%s=\"%%d\">", k1, k2);
  int n = 0;
  for (const char *p = strstr(svg, "<g data-row="); p; p = strstr(p + 1, "<g data-row=")) {
    int r, c, x, y;
    assert_int_equal(sscanf(p, pat, &r, &c, &x, &y), 4);
    assert_true(r >= 0 && r < rows && c >= 0 && c < cols);
    assert_int_equal(a[r * cols + c], -1); /* each cell once */
    a[r * cols + c] = x;
    b[r * cols + c] = y;
    ++n;
  }
  return n;
}

static void wgmma_acc_picture(void **state) {
  (void)state;
  enum { R = 64, C = 32, T = 128 };
  static int th[R * C], va[R * C];
  memset(th, -1, sizeof th);
  memset(va, -1, sizeof va);
  char *svg = run("frag --layout WGMMA_ACC --dtype f32 --rows 64 --cols 32");
  assert_int_equal(cells(svg, "thread", "value", R, C, th, va), R * C);
  free(svg);
  const int npt = R * C / T;
  const kbd_tile_shape s = kbd_tile_shape_of(R, C, T, KBD_LAYOUT_WGMMA_ACC, KBD_DT_f32, npt, 1, 4);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < npt; ++i) {
      const kbd_coord k = kbd_tile_coord(s, t, i); /* (1) the library */
      assert_int_equal(th[k.row * C + k.col], t);
      assert_int_equal(va[k.row * C + k.col], i);
      const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), col = 2 * (t % 4) + (i % 2) + 8 * (i / 4);
      assert_int_equal(k.row, row); /* (2) the PTX ISA's fragment table */
      assert_int_equal(k.col, col);
    }
  /* --text: the same numbers, row 9 of the grid: "T4 V2" at column 0 (thread 4 holds row 1 + 8, value 2) */
  char *txt = run("frag --layout WGMMA_ACC --dtype f32 --rows 64 --cols 32 --text");
  const char *row9 = strstr(txt, "\n     9 ");
  assert_non_null(row9);
  int t0, v0;
  assert_int_equal(sscanf(row9 + 8, " T%d V%d", &t0, &v0), 2);
  assert_int_equal(t0, th[9 * C]);
  assert_int_equal(v0, va[9 * C]);
  assert_int_equal(t0, 4);
  assert_int_equal(v0, 2);
  free(txt);
}

static void swizzle_128b_picture(void **state) {
  (void)state;
  enum { R = 16, C = 64 };
  static int bank[R * C], chunk[R * C];
  memset(bank, -1, sizeof bank);
  memset(chunk, -1, sizeof chunk);
  char *svg = run("smem --dtype bf16 --rows 16 --cols 64 --swizzle 128B");
  assert_int_equal(cells(svg, "bank", "chunk", R, C, bank, chunk), R * C);
  free(svg);
  const kbd_smem_shape s = kbd_smem_shape_make(2, R, C, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const int off = kbd_smem_tile_offset(&s, r, c); /* (1) the library */
      assert_int_equal(bank[r * C + c], (off / 4) % 32);
      assert_int_equal(chunk[r * C + c], off / 16);
      const int ptx = r * 128 + (((c * 2) / 16) ^ (r % 8)) * 16 + (c * 2) % 16; /* (2) the swizzle formula */
      assert_int_equal(off, ptx);
    }
  /* the picture shows why 128B is conflict-free for a column walk: the 8 rows of column 0 are 8 distinct chunks
   * of 4 banks each */
  int seen = 0;
  for (int r = 0; r < 8; ++r)
    seen |= 1 << (bank[r * C] / 4);
  assert_int_equal(seen, 0xff);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <kbd-layout>\n", argv[0]);
    return 2;
  }
  tool = argv[1];
  const struct CMUnitTest tests[] = {cmocka_unit_test(wgmma_acc_picture), cmocka_unit_test(swizzle_128b_picture)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
