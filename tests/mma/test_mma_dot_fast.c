/* test_mma_dot_fast.c - the CPU machine's fast MMA sums (kbd_cpu_mma_dot_fast, kbd_cpu_mma_dot_rows,
 * include/kbd/cpu/mma_dot.h) are bit for bit the reference's (kbd_cpu_mma_dot_ref: every row times every column).
 *
 * The fast path skips rows of A and columns of B that are all +-0 (TMA's out-of-bounds fill) when the other operand
 * holds no infinity or NaN. Both paths run on the same decoded operands, for the row counts the machine passes (16:
 * one warp's part of a wgmma m64; 64, 128: tcgen05; 256: a CTA pair), every N of the wgmma / tcgen05 lists up to
 * 256, every operand type (f16, bf16, tf32, e4m3, e5m2, s8, u8: K-steps of 16, 8 and 32 elements) and each D type,
 * and these operand patterns, each from a seeded generator:
 *   - random bit patterns of the type (so fp8 / f16 / bf16 / tf32 NaN and infinity encodings occur);
 *   - finite values with zero rows of A (mixing +0 and -0), then the same with one infinity or NaN in B;
 *   - finite values with zero columns of B (mixing +0 and -0), then the same with one infinity or NaN in A;
 *   - zero rows and columns together, -0 times negative values, and all-zero operands.
 * Each case compares the whole result with memcmp. The test also counts that the patterns reach each path: rows
 * and columns skipped, and zero rows whose reference sum is NaN (where a skip without the finiteness check would
 * give +0: the mistake the check is for).
 * dot_rows: the row-sparse record of a pending tcgen05.mma (kbd_cpu_mma_dot_rows) on random shapes (64, 128, 256
 * rows, N a multiple of 8 up to 256), types and the same patterns (zero rows, infinities, NaN): each row looked up as
 * the landing looks it up is the reference's, header-0 rows are all +0, and the headers number the stored rows in
 * order. */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rng_state;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 32);
}

/* A finite value of type t, decoded by the machine's own reader (so it lies on the type's grid). */
static double finite_of(int t) {
  for (;;) {
    uint32_t u = rnd();
    unsigned char b[4];
    memcpy(b, &u, 4);
    const double v = kbd_cpu_mma_elem(t, b);
    if (isfinite(v)) return v;
  }
}
static double raw_of(int t) {
  uint32_t u = rnd();
  unsigned char b[4];
  memcpy(b, &u, 4);
  return kbd_cpu_mma_elem(t, b);
}
static int is_int(int t) { return t == KBD_MMA_S8 || t == KBD_MMA_U8; }
static double special_of(int t) {
  if (is_int(t)) return finite_of(t);
  switch (rnd() % 3) {
  case 0: return INFINITY;
  case 1: return -INFINITY;
  default: return NAN;
  }
}

enum { P_RAW, P_ZROWS, P_ZROWS_NANB, P_ZCOLS, P_ZCOLS_NANA, P_BOTH, P_NEGZERO, P_ALLZERO, P_COUNT };

static long skipped_rows, skipped_cols, guarded_nan; /* how often the patterns reached each path */

/* A: rows x kel, row-major; bt: kel x n (B transposed, as the machine keeps it). */
static void fill(int pat, int ta, int tb, int rows, int kel, int n, double *A, double *bt) {
  for (int i = 0; i < rows * kel; ++i)
    A[i] = pat == P_RAW ? raw_of(ta) : finite_of(ta);
  for (int i = 0; i < kel * n; ++i)
    bt[i] = pat == P_RAW ? raw_of(tb) : finite_of(tb);
  const int zrows = pat == P_ZROWS || pat == P_ZROWS_NANB || pat == P_BOTH || pat == P_NEGZERO;
  const int zcols = pat == P_ZCOLS || pat == P_ZCOLS_NANA || pat == P_BOTH || pat == P_NEGZERO;
  for (int r = 0; r < rows; ++r)
    if (zrows && (r == rows - 1 || rnd() % 2))
      for (int k = 0; k < kel; ++k)
        A[r * kel + k] = rnd() % 2 ? -0.0 : 0.0;
  for (int c = 0; c < n; ++c)
    if (zcols && (c == n - 1 || rnd() % 2))
      for (int k = 0; k < kel; ++k)
        bt[k * n + c] = rnd() % 2 ? -0.0 : 0.0;
  if (pat == P_NEGZERO) /* negative live values: -0 products in the zero rows and columns */
    for (int i = 0; i < rows * kel; ++i)
      if (A[i] > 0 && !is_int(ta)) A[i] = -A[i];
  if (pat == P_ZROWS_NANB) bt[rnd() % (unsigned)(kel * n)] = special_of(tb);
  if (pat == P_ZCOLS_NANA) {
    int r = (int)(rnd() % (unsigned)rows);
    A[r * kel + (int)(rnd() % (unsigned)kel)] = special_of(ta);
  }
  if (pat == P_ALLZERO) {
    for (int i = 0; i < rows * kel; ++i)
      A[i] = rnd() % 2 ? -0.0 : 0.0;
    for (int i = 0; i < kel * n; ++i)
      bt[i] = rnd() % 2 ? -0.0 : 0.0;
  }
}

static int all_zero(const double *v, int n, int stride) {
  for (int i = 0; i < n; ++i)
    if (v[i * stride] != 0) return 0;
  return 1;
}

/* One case's operands: the shape, A and B^T filled by pattern `pat`, and the reference sums (kbd_cpu_mma_dot_ref). */
typedef struct dot_case {
  kbd_cpu_mma_shape s;
  double *A, *bt;
  uint32_t *ref;
} dot_case;

static void case_open(dot_case *c, int ta, int tb, int td, int rows, int n, int pat) {
  memset(&c->s, 0, sizeof c->s);
  c->s.ta = ta, c->s.tb = tb, c->s.td = td, c->s.m = rows, c->s.n = n;
  c->s.kel = KBD_MMA_KSTEP_BYTES / kbd_mma_type_bytes(ta);
  const int kel = c->s.kel;
  c->A = (double *)malloc(sizeof(double) * (size_t)(rows * kel));
  c->bt = (double *)malloc(sizeof(double) * (size_t)(kel * n));
  c->ref = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(rows * n));
  assert_non_null(c->A);
  assert_non_null(c->bt);
  assert_non_null(c->ref);
  fill(pat, ta, tb, rows, kel, n, c->A, c->bt);
  memset(c->ref, 0xA5, sizeof(uint32_t) * (size_t)(rows * n));
  kbd_cpu_mma_dot_ref(&c->s, c->A, rows, c->bt, c->ref);
}

static void case_close(dot_case *c) {
  free(c->A);
  free(c->bt);
  free(c->ref);
}

static void run_case(int ta, int tb, int td, int rows, int n, int pat) {
  dot_case dc;
  case_open(&dc, ta, tb, td, rows, n, pat);
  const int kel = dc.s.kel;
  uint32_t *fast = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(rows * n));
  assert_non_null(fast);
  memset(fast, 0x5A, sizeof(uint32_t) * (size_t)(rows * n)); /* every element must be written */
  kbd_cpu_mma_dot_fast(&dc.s, dc.A, rows, dc.bt, fast);
  for (int i = 0; i < rows * n; ++i)
    if (dc.ref[i] != fast[i])
      fail_msg("type %d x %d -> %d, rows %d, N %d, pattern %d: element (%d, %d) is 0x%08x, the reference 0x%08x", ta,
               tb, td, rows, n, pat, i / n, i % n, fast[i], dc.ref[i]);
  int afin = 1, bfin = 1;
  for (int i = 0; i < rows * kel; ++i)
    afin &= isfinite(dc.A[i]) != 0;
  for (int i = 0; i < kel * n; ++i)
    bfin &= isfinite(dc.bt[i]) != 0;
  for (int r = 0; r < rows; ++r)
    if (all_zero(dc.A + r * kel, kel, 1)) {
      if (bfin) ++skipped_rows;
      for (int c = 0; c < n && td != KBD_MMA_S32; ++c)
        if (isnan(kbd_cvt_bits_f32(dc.ref[r * n + c]))) ++guarded_nan;
    }
  for (int c = 0; c < n; ++c)
    if (afin && all_zero(dc.bt + c, kel, n)) ++skipped_cols;
  case_close(&dc);
  free(fast);
}

static long stored_rows, zero_rows; /* rows kbd_cpu_mma_dot_rows stored, and rows it left to header 0 */

/* The row-sparse record (kbd_cpu_mma_dot_rows, what a pending tcgen05.mma keeps) read back as the landing reads it
 * (cpu/mma_umma.h: header 0 a row of +0 sums, else 1 + the row's index among the stored rows that follow the
 * headers) is the reference, element for element; the headers number the stored rows 1, 2, ... in row order (so
 * each lookup stays inside the block), and the scratch holds B transposed. */
static void run_rows_case(int ta, int tb, int td, int rows, int n, int pat) {
  dot_case dc;
  case_open(&dc, ta, tb, td, rows, n, pat);
  const int kel = dc.s.kel;
  double *B = (double *)malloc(sizeof(double) * (size_t)(kel * n));
  double *scratch = (double *)malloc(sizeof(double) * (size_t)(kel * n));
  assert_non_null(B);
  assert_non_null(scratch);
  for (int c = 0; c < n; ++c) /* B as the machine decodes it: row c of B is column c of bt */
    for (int k = 0; k < kel; ++k)
      B[c * kel + k] = dc.bt[k * n + c];
  memset(scratch, 0xA5, sizeof(double) * (size_t)(kel * n));
  uint32_t *blk = kbd_cpu_mma_dot_rows(&dc.s, dc.A, rows, B, scratch);
  assert_non_null(blk);
  assert_memory_equal(scratch, dc.bt, sizeof(double) * (size_t)(kel * n));
  uint32_t next = 1;
  for (int r = 0; r < rows; ++r) {
    if (!blk[r]) {
      ++zero_rows;
      for (int c = 0; c < n; ++c)
        if (dc.ref[r * n + c] != 0)
          fail_msg("type %d x %d -> %d, rows %d, N %d, pattern %d: row %d has header 0, but its sum in column %d is "
                   "0x%08x",
                   ta, tb, td, rows, n, pat, r, c, dc.ref[r * n + c]);
      continue;
    }
    if (blk[r] != next)
      fail_msg("type %d x %d -> %d, rows %d, N %d, pattern %d: row %d has header %u, expected %u", ta, tb, td, rows, n,
               pat, r, blk[r], next);
    ++next, ++stored_rows;
    const uint32_t *row = blk + rows + (size_t)(blk[r] - 1u) * (size_t)n;
    for (int c = 0; c < n; ++c)
      if (row[c] != dc.ref[r * n + c])
        fail_msg("type %d x %d -> %d, rows %d, N %d, pattern %d: stored row %d, column %d is 0x%08x, the reference "
                 "0x%08x",
                 ta, tb, td, rows, n, pat, r, c, row[c], dc.ref[r * n + c]);
  }
  free(blk);
  free(B);
  free(scratch);
  case_close(&dc);
}

static const int t_ns[] = {8, 16, 24, 32, 40, 48, 64, 80, 96, 120, 128, 136, 192, 248, 256};
static const int t_rows[] = {16, 64, 128, 256};

static void t_types(int ta, int tb, int td) {
  for (size_t ri = 0; ri < sizeof t_rows / sizeof t_rows[0]; ++ri)
    for (size_t ni = 0; ni < sizeof t_ns / sizeof t_ns[0]; ++ni)
      for (int pat = 0; pat < P_COUNT; ++pat)
        for (int rep = 0; rep < 2; ++rep)
          run_case(ta, tb, td, t_rows[ri], t_ns[ni], pat);
}

static void test_f16(void **state) {
  (void)state;
  rng_state = 0x9E3779B97F4A7C15ull;
  t_types(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32);
  t_types(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16);
}
static void test_bf16(void **state) {
  (void)state;
  rng_state = 0xD1B54A32D192ED03ull;
  t_types(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32);
}
static void test_tf32(void **state) {
  (void)state;
  rng_state = 0x8CB92BA72F3D8DD7ull;
  t_types(KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F32);
}
static void test_fp8(void **state) {
  (void)state;
  rng_state = 0xABCDEF0123456789ull;
  t_types(KBD_MMA_E4M3, KBD_MMA_E4M3, KBD_MMA_F32);
  t_types(KBD_MMA_E5M2, KBD_MMA_E4M3, KBD_MMA_F32);
  t_types(KBD_MMA_E4M3, KBD_MMA_E5M2, KBD_MMA_F16);
}
static void test_i8(void **state) {
  (void)state;
  rng_state = 0x0123456789ABCDEFull;
  t_types(KBD_MMA_S8, KBD_MMA_S8, KBD_MMA_S32);
  t_types(KBD_MMA_U8, KBD_MMA_S8, KBD_MMA_S32);
  t_types(KBD_MMA_U8, KBD_MMA_U8, KBD_MMA_S32);
}
/* The row-sparse record on the tcgen05 row counts (64, 128, 256; random N and operand types, every pattern). */
static void test_dot_rows(void **state) {
  (void)state;
  rng_state = 0x5851F42D4C957F2Dull;
  static const int types[][3] = {
      {KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32},   {KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16},
      {KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32}, {KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F32},
      {KBD_MMA_E4M3, KBD_MMA_E5M2, KBD_MMA_F32}, {KBD_MMA_S8, KBD_MMA_U8, KBD_MMA_S32},
  };
  static const int rows[] = {64, 128, 256};
  for (int i = 0; i < 240; ++i) {
    const int *t = types[rnd() % (sizeof types / sizeof types[0])];
    const int m = rows[rnd() % (sizeof rows / sizeof rows[0])];
    const int n = 8 * (1 + (int)(rnd() % 32)); /* the tcgen05 N: multiples of 8 up to 256 */
    run_rows_case(t[0], t[1], t[2], m, n, i % P_COUNT);
  }
  /* both kinds of row, or the comparisons could pass without the lookup being tested */
  assert_true(stored_rows > 1000);
  assert_true(zero_rows > 1000);
}
/* Run last: the patterns reached every path (else the comparisons above could pass without testing the skips). */
static void test_paths_reached(void **state) {
  (void)state;
  assert_true(skipped_rows > 1000);
  assert_true(skipped_cols > 1000);
  assert_true(guarded_nan > 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16),           cmocka_unit_test(test_bf16), cmocka_unit_test(test_tf32),
      cmocka_unit_test(test_fp8),           cmocka_unit_test(test_i8),   cmocka_unit_test(test_dot_rows),
      cmocka_unit_test(test_paths_reached),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
