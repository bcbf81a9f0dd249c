/* tests/tile/test_print.c - kbd_fprint / kbd_stile_fprint (kbd/print.h) on the CPU machine: the exact text.
 *
 * Each kernel fills a tile with a value that encodes (r, c) - and the scope instance, where a block holds
 * several - through KBD_MAP, prints it into a tmpfile, and the host compares the file with text built from
 * the same rule by loops. So a misplaced element (a layout's (r, c) wrong), a missing or duplicated warp's
 * part, or a tile printed once per warp instead of once per scope fails. Covered: ROW tiles of CTA,
 * warpgroup and warp scope; WGMMA_ACC, MMA_A, MMA_B, MMA_C; f32, f16, bf16, e4m3, i32; a print inside a
 * loop (warps not in step); a print some warps skip (INCOMPLETE, shown at exit, here by the flush exit runs);
 * shared tiles, swizzled K-major and MN-major, written by kbd_stile_store (the print must undo the swizzle).
 */
#include <kbd/tile.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct pr_params {
  FILE *f;
} pr_params;

/* A register tile of the given type, (r, c) of instance i holds VAL; printed once. */
#define PR_KERNEL(name, THREADS, dt, R, C, SCOPE, LAYOUT, VAL)                                                   \
  KBD_KERNEL(name, THREADS, pr_params) {                                                                         \
    KBD_TILE_L(dt, R, C, SCOPE, LAYOUT) t;                                                                       \
    const int i = kbd_warp_id() * KBD_WARP_SIZE / KBD_SCOPE(t);                                                  \
    (void)i;                                                                                                     \
    KBD_MAP(t, t, x, r, c, (VAL));                                                                               \
    kbd_fprint(p.f, t);                                                                                          \
  }
PR_KERNEL(pr_cta, 64, f32, 2, 32, KBD_CTA, KBD_LAYOUT_ROW, r * 100 + c)
PR_KERNEL(pr_wg, 256, f16, 4, 32, KBD_WARPGROUP, KBD_LAYOUT_ROW, 1000 * i + r * 32 + c)
PR_KERNEL(pr_warp, 64, bf16, 2, 16, KBD_WARP, KBD_LAYOUT_ROW, (float)c * 0.25f - (float)r - 8 * i)
PR_KERNEL(pr_wgmma, 128, f32, 64, 8, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC, r * 8 + c)
PR_KERNEL(pr_mmaa, 32, bf16, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_A, r * 16 + c)
PR_KERNEL(pr_mmab, 32, f16, 16, 8, KBD_WARP, KBD_LAYOUT_MMA_B, r * 8 + c)
PR_KERNEL(pr_mmac, 32, f32, 16, 8, KBD_WARP, KBD_LAYOUT_MMA_C, r - c * 0.5f)
PR_KERNEL(pr_e4m3, 32, e4m3, 4, 8, KBD_WARP, KBD_LAYOUT_ROW, c - r * 0.125f)
PR_KERNEL(pr_i32, 64, i32, 2, 32, KBD_CTA, KBD_LAYOUT_ROW, -(r * 32 + c))

/* Three prints of one CTA tile from a loop: the warps reach them out of step, each print must be one
 * iteration's values. */
KBD_KERNEL(pr_loop, 128, pr_params) {
  KBD_TILE(f32, 1, 128, KBD_CTA) t;
  for (int k = 0; k < 3; ++k) {
    KBD_MAP(t, t, x, r, c, k * 1000 + c);
    kbd_fprint(p.f, t);
  }
}

/* Only warp 0 of a 64-thread block prints a CTA tile: warp 1's half never arrives. */
KBD_KERNEL(pr_divergent, 64, pr_params) {
  KBD_TILE(f32, 2, 32, KBD_CTA) t;
  KBD_MAP(t, t, x, r, c, r * 100 + c);
  if (kbd_warp_id() == 0) kbd_fprint(p.f, t);
}

/* Shared tiles written from registers, printed by warp 0 after the barrier that makes the writes visible. */
typedef KBD_STILE(bf16, 8, 64, KBD_SWIZZLE_128B) pr_sk;
typedef KBD_STILE_MN(f32, 32, 8, KBD_SWIZZLE_128B) pr_smn;
KBD_KERNEL(pr_stile, 64, pr_params) {
  KBD_SHARED_STILE(pr_sk, a);
  KBD_SHARED_STILE(pr_smn, b);
  KBD_TILE(bf16, 8, 64, KBD_CTA) ta;
  KBD_TILE(f32, 32, 8, KBD_CTA) tb;
  KBD_MAP(ta, ta, x, r, c, r * 64 + c);
  KBD_MAP(tb, tb, x, r, c, r * 8 + c);
  kbd_stile_store(a, ta);
  kbd_stile_store(b, tb);
  kbd_sync();
  if (kbd_warp_id() == 0) {
    kbd_stile_fprint(p.f, a);
    kbd_stile_fprint(p.f, b);
  }
}

/* ---- host side ------------------------------------------------------------------------------------------ */

typedef kbd_status (*pr_launcher)(kbd_launch_cfg, pr_params);

/* Runs the kernel with one block, printing into a tmpfile; returns the text (malloc'd). */
static char *run_capture(pr_launcher launch, int flush_leftovers) {
  FILE *f = tmpfile();
  assert_non_null(f);
  pr_params p = {f};
  assert_true(kbd_ok(launch(kbd_cfg_1d(1), p)));
  assert_true(kbd_ok(kbd_device_sync()));
  if (flush_leftovers) kbd__print_flush(); /* what exit() does */
  const long n = ftell(f);
  assert_true(n >= 0);
  char *s = (char *)malloc((size_t)n + 1);
  assert_non_null(s);
  rewind(f);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

typedef double (*val_fn)(int i, int r, int c);

/* Appends the expected text of one tile print: header tail `what`, then rows of %g (or %d) values. */
static void expect_tile(char *buf, size_t cap, int line, const char *name, const char *what, int R, int C, int i,
                        val_fn val, int is_int) {
  size_t n = strlen(buf);
  n += (size_t)snprintf(buf + n, cap - n, "kbd_print %s at test_print.c:%d, block (0,0,0): %s\n", name, line, what);
  for (int r = 0; r < R; ++r) {
    n += (size_t)snprintf(buf + n, cap - n, "  row %d:", r);
    for (int c = 0; c < C; ++c) {
      const double v = val(i, r, c);
      if (v != v)
        n += (size_t)snprintf(buf + n, cap - n, " ?");
      else if (is_int)
        n += (size_t)snprintf(buf + n, cap - n, " %d", (int)v);
      else
        n += (size_t)snprintf(buf + n, cap - n, " %g", v);
    }
    n += (size_t)snprintf(buf + n, cap - n, "\n");
  }
  assert_true(n < cap);
}

/* The line of the PR_KERNEL / kbd_fprint in this file: found in the output itself, then checked to be one of
 * the lines of this file that print (the header must name the user's line). */
static int line_of(const char *out) {
  const char *p = strstr(out, "test_print.c:");
  assert_non_null(p);
  const int line = atoi(p + strlen("test_print.c:"));
  assert_true(line > 20 && line < 90);
  return line;
}

#define CAP (1 << 16)

static double v_cta(int i, int r, int c) { return (void)i, r * 100 + c; }
static double v_wg(int i, int r, int c) { return 1000 * i + r * 32 + c; }
static double v_warp(int i, int r, int c) { return c * 0.25 - r - 8 * i; }
static double v_wgmma(int i, int r, int c) { return (void)i, r * 8 + c; }
static double v_mmaa(int i, int r, int c) { return (void)i, r * 16 + c; }
static double v_mmab(int i, int r, int c) { return (void)i, r * 8 + c; }
static double v_mmac(int i, int r, int c) { return (void)i, r - c * 0.5; }
/* Values the narrow dtypes cannot hold are printed as stored: the expectation rounds the same way. */
static double e4m3_of(double v) { return kbd_e4m3_to_f32(kbd_f32_to_e4m3((float)v)); }
static double bf16_of(double v) { return kbd_bf16_to_f32(kbd_f32_to_bf16((float)v)); }
static double v_e4m3(int i, int r, int c) { return (void)i, e4m3_of(c - r * 0.125); }
static double v_i32(int i, int r, int c) { return (void)i, -(r * 32 + c); }

/* One tile per print: the output is exactly the expected text. */
static void check_single(pr_launcher launch, const char *what, int R, int C, val_fn val, int is_int) {
  char *out = run_capture(launch, 0);
  char *want = (char *)calloc(CAP, 1);
  assert_non_null(want);
  expect_tile(want, CAP, line_of(out), "t", what, R, C, 0, val, is_int);
  assert_string_equal(out, want);
  free(out);
  free(want);
}

static void test_row_cta(void **state) {
  (void)state;
  check_single(pr_cta, "f32 2 x 32, layout ROW, scope CTA (64 threads)", 2, 32, v_cta, 0);
}
static void test_wgmma_acc(void **state) {
  (void)state;
  check_single(pr_wgmma, "f32 64 x 8, layout WGMMA_ACC, scope CTA (128 threads)", 64, 8, v_wgmma, 0);
}
static void test_mma_layouts(void **state) {
  (void)state;
  check_single(pr_mmaa, "bf16 16 x 16, layout MMA_A, scope warp 0", 16, 16, v_mmaa, 0);
  check_single(pr_mmab, "f16 16 x 8, layout MMA_B, scope warp 0", 16, 8, v_mmab, 0);
  check_single(pr_mmac, "f32 16 x 8, layout MMA_C, scope warp 0", 16, 8, v_mmac, 0);
}
static void test_e4m3_i32(void **state) {
  (void)state;
  check_single(pr_e4m3, "e4m3 4 x 8, layout ROW, scope warp 0", 4, 8, v_e4m3, 0);
  check_single(pr_i32, "i32 2 x 32, layout ROW, scope CTA (64 threads)", 2, 32, v_i32, 1);
}

/* Several scope instances in a block: each printed exactly once, in an order the schedule picks. */
static void check_instances(pr_launcher launch, int ninst, const char *const *whats, int R, int C, val_fn val) {
  char *out = run_capture(launch, 0);
  const int line = line_of(out);
  size_t total = 0;
  for (int i = 0; i < ninst; ++i) {
    char want[CAP / 4] = {0};
    expect_tile(want, sizeof want, line, "t", whats[i], R, C, i, val, 0);
    const char *at = strstr(out, want);
    if (!at) fail_msg("instance %d's print is missing; output:\n%s", i, out);
    assert_null(strstr(at + 1, want)); /* once */
    total += strlen(want);
  }
  assert_int_equal(strlen(out), total); /* nothing else */
  free(out);
}

static void test_row_warpgroup(void **state) {
  (void)state;
  static const char *const whats[] = {"f16 4 x 32, layout ROW, scope warpgroup 0 (threads 0-127)",
                                      "f16 4 x 32, layout ROW, scope warpgroup 1 (threads 128-255)"};
  check_instances(pr_wg, 2, whats, 4, 32, v_wg);
}
static void test_row_warp(void **state) {
  (void)state;
  static const char *const whats[] = {"bf16 2 x 16, layout ROW, scope warp 0", "bf16 2 x 16, layout ROW, scope warp 1"};
  check_instances(pr_warp, 2, whats, 2, 16, v_warp);
}

static double v_loop0(int i, int r, int c) { return (void)i, (void)r, c; }
static double v_loop1(int i, int r, int c) { return (void)i, (void)r, 1000 + c; }
static double v_loop2(int i, int r, int c) { return (void)i, (void)r, 2000 + c; }

static void test_loop_out_of_step(void **state) {
  (void)state;
  char *out = run_capture(pr_loop, 0);
  char *want = (char *)calloc(CAP, 1);
  assert_non_null(want);
  const int line = line_of(out);
  const val_fn v[3] = {v_loop0, v_loop1, v_loop2};
  for (int k = 0; k < 3; ++k)
    expect_tile(want, CAP, line, "t", "f32 1 x 128, layout ROW, scope CTA (128 threads)", 1, 128, 0, v[k], 0);
  assert_string_equal(out, want);
  free(out);
  free(want);
}

static double v_half(int i, int r, int c) {
  (void)i;
  return r == 0 ? r * 100 + c : NAN; /* warp 0 holds row 0 of this ROW tile; NaN: '?' */
}
static void test_divergent_incomplete(void **state) {
  (void)state;
  char *out = run_capture(pr_divergent, 1); /* nothing until the flush that exit() runs, then marked */
  char *want = (char *)calloc(CAP, 1);
  assert_non_null(want);
  expect_tile(want, CAP, line_of(out), "t",
              "f32 2 x 32, layout ROW, scope CTA (64 threads) - INCOMPLETE: not every warp of the scope reached "
              "this kbd_print",
              2, 32, 0, v_half, 0);
  assert_string_equal(out, want);
  free(out);
  free(want);
}

static double v_sk(int i, int r, int c) { return (void)i, bf16_of(r * 64 + c); }
static double v_smn(int i, int r, int c) { return (void)i, r * 8 + c; }
static void test_stile(void **state) {
  (void)state;
  char *out = run_capture(pr_stile, 0);
  char *want = (char *)calloc(CAP, 1);
  assert_non_null(want);
  const char *p = strstr(out, "test_print.c:");
  assert_non_null(p);
  const int line = atoi(p + strlen("test_print.c:"));
  expect_tile(want, CAP, line, "a", "shared bf16 8 x 64, swizzle 128B, K-major, by warp 0", 8, 64, 0, v_sk, 0);
  expect_tile(want, CAP, line + 1, "b", "shared f32 32 x 8, swizzle 128B, MN-major, by warp 0", 32, 8, 0, v_smn, 0);
  assert_string_equal(out, want);
  free(out);
  free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_row_cta),       cmocka_unit_test(test_row_warpgroup),
      cmocka_unit_test(test_row_warp),      cmocka_unit_test(test_wgmma_acc),
      cmocka_unit_test(test_mma_layouts),   cmocka_unit_test(test_e4m3_i32),
      cmocka_unit_test(test_loop_out_of_step), cmocka_unit_test(test_divergent_incomplete),
      cmocka_unit_test(test_stile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
