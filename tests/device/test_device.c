/* Device-wide reduce and single-pass scan (kbd/device.h) on the CPU machine, against scalar references,
 * over sizes around the tile and warp boundaries, several host-thread counts and scheduling seeds. */
#include <kbd/tile.h>
#define KBD_DEVICE_IMPLEMENTATION
#include <kbd/device.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const long long sizes[] = {0, 1, 31, 32, 33, 1023, 1024, 1025, 4095, 4096, 4097, 70001};

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  assert_true(kbd_ok(kbd_malloc(&p, bytes)));
  return p;
}

static float ref_op_f(int op, float a, float b) {
  if (op == KBD_RED_SUM) return a + b;
  return op == KBD_RED_MAX ? kbd_fmax_ptx(a, b) : kbd_fmin_ptx(a, b);
}
static int32_t ref_op_i(int op, int32_t a, int32_t b) {
  if (op == KBD_RED_SUM) return (int32_t)((uint32_t)a + (uint32_t)b);
  return op == KBD_RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* i32: exact, every size, every op, inclusive and exclusive, wrap-around included. */
static void check_i32(long long n) {
  int32_t *h = (int32_t *)malloc((size_t)(n ? n : 1) * 4), *got = (int32_t *)malloc((size_t)(n ? n : 1) * 4);
  for (long long i = 0; i < n; ++i) h[i] = (int32_t)(rnd() * 2654435761u); /* large values: sums wrap */
  int32_t *in = (int32_t *)dev_alloc((size_t)n * 4), *out = (int32_t *)dev_alloc((size_t)n * 4 + 4);
  void *wsr = dev_alloc(kbd_device_reduce_workspace_bytes(n)), *wss = dev_alloc(kbd_device_scan_workspace_bytes(n));
  assert_true(kbd_ok(kbd_copy_to_device(in, h, (size_t)n * 4)));
  for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op) {
    int32_t r = 0, ref = op == KBD_RED_SUM ? 0 : op == KBD_RED_MAX ? INT32_MIN : INT32_MAX;
    for (long long i = 0; i < n; ++i) ref = ref_op_i(op, ref, h[i]);
    kbd_status s = kbd_device_reduce_i32(in, n, out, op, wsr, NULL);
    assert_int_equal(s.code, KBD_OK);
    assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
    if (r != ref) fail_msg("i32 reduce op %d n %lld: %d, expected %d", op, n, r, ref);
    for (int excl = 0; excl < 2; ++excl) {
      assert_int_equal(kbd_device_scan_i32(in, out, n, op, excl, wss, NULL).code, KBD_OK);
      assert_true(kbd_ok(kbd_copy_to_host(got, out, (size_t)n * 4)));
      int32_t acc = op == KBD_RED_SUM ? 0 : op == KBD_RED_MAX ? INT32_MIN : INT32_MAX;
      for (long long i = 0; i < n; ++i) {
        if (!excl) acc = ref_op_i(op, acc, h[i]);
        if (got[i] != acc) fail_msg("i32 scan op %d excl %d n %lld: element %lld is %d, expected %d", op, excl, n, i,
                                    got[i], acc);
        if (excl) acc = ref_op_i(op, acc, h[i]);
      }
    }
  }
  kbd_free(in);
  kbd_free(out);
  kbd_free(wsr);
  kbd_free(wss);
  free(h);
  free(got);
}

static void test_i32_sizes(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) check_i32(sizes[k]);
}

/* f32 sum: every output within the bound of a sum of at most ~log2-depth trees; max/min exact. */
static void check_f32(long long n) {
  float *h = (float *)malloc((size_t)(n ? n : 1) * 4), *got = (float *)malloc((size_t)(n ? n : 1) * 4);
  for (long long i = 0; i < n; ++i) h[i] = (float)((int)(rnd() % 2001) - 1000) / 64.0f;
  float *in = (float *)dev_alloc((size_t)n * 4), *out = (float *)dev_alloc((size_t)n * 4 + 4);
  void *wsr = dev_alloc(kbd_device_reduce_workspace_bytes(n)), *wss = dev_alloc(kbd_device_scan_workspace_bytes(n));
  assert_true(kbd_ok(kbd_copy_to_device(in, h, (size_t)n * 4)));
  for (int op = KBD_RED_SUM; op <= KBD_RED_MIN; ++op) {
    float r;
    assert_int_equal(kbd_device_reduce_f32(in, n, out, op, wsr, NULL).code, KBD_OK);
    assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
    if (op == KBD_RED_SUM) {
      /* Inputs are multiples of 1/64 below 2^4 and n < 2^17: every partial sum is exact in f32. */
      double ref = 0;
      for (long long i = 0; i < n; ++i) ref += h[i];
      assert_true((double)r == ref);
    } else {
      float ref = op == KBD_RED_MAX ? -INFINITY : INFINITY;
      for (long long i = 0; i < n; ++i) ref = ref_op_f(op, ref, h[i]);
      assert_true(r == ref);
    }
    for (int excl = 0; excl < 2; ++excl) {
      assert_int_equal(kbd_device_scan_f32(in, out, n, op, excl, wss, NULL).code, KBD_OK);
      assert_true(kbd_ok(kbd_copy_to_host(got, out, (size_t)n * 4)));
      float acc = op == KBD_RED_SUM ? 0.0f : op == KBD_RED_MAX ? -INFINITY : INFINITY;
      for (long long i = 0; i < n; ++i) {
        if (!excl) acc = ref_op_f(op, acc, h[i]);
        if (got[i] != acc) fail_msg("f32 scan op %d excl %d n %lld: element %lld is %a, expected %a", op, excl, n, i,
                                    (double)got[i], (double)acc);
        if (excl) acc = ref_op_f(op, acc, h[i]);
      }
    }
  }
  kbd_free(in);
  kbd_free(out);
  kbd_free(wsr);
  kbd_free(wss);
  free(h);
  free(got);
}

static void test_f32_sizes(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) check_f32(sizes[k]);
}

/* Many blocks under several host-thread counts and seeds: look-back waits really wait. */
static void test_threads_and_seeds(void **state) {
  (void)state;
  const char *threads[] = {"1", "2", "3"}, *seeds[] = {"0", "5", "77"};
  for (int t = 0; t < 3; ++t)
    for (int s = 0; s < 3; ++s) {
      setenv("KBD_CPU_THREADS", threads[t], 1);
      setenv("KBD_CPU_SEED", seeds[s], 1);
      check_i32(200003);
    }
  unsetenv("KBD_CPU_THREADS");
  unsetenv("KBD_CPU_SEED");
}

/* NaN and infinities: max/min ignore NaN (PTX max.f32), a sum with +inf and -inf is NaN. */
static void test_specials(void **state) {
  (void)state;
  enum { N = 9000 };
  static float h[N];
  for (int i = 0; i < N; ++i) h[i] = (float)(i % 100);
  h[17] = NAN;
  h[5000] = INFINITY;
  h[8999] = -INFINITY;
  float *in = (float *)dev_alloc(sizeof h), *out = (float *)dev_alloc(4);
  void *ws = dev_alloc(kbd_device_reduce_workspace_bytes(N));
  assert_true(kbd_ok(kbd_copy_to_device(in, h, sizeof h)));
  float r = 0.0f;
  assert_int_equal(kbd_device_reduce_f32(in, N, out, KBD_RED_MAX, ws, NULL).code, KBD_OK);
  assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
  assert_true(r == INFINITY);
  assert_int_equal(kbd_device_reduce_f32(in, N, out, KBD_RED_MIN, ws, NULL).code, KBD_OK);
  assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
  assert_true(r == -INFINITY);
  assert_int_equal(kbd_device_reduce_f32(in, N, out, KBD_RED_SUM, ws, NULL).code, KBD_OK);
  assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
  assert_true(r != r);
  kbd_free(in);
  kbd_free(out);
  kbd_free(ws);
}

static void test_bad_input(void **state) {
  (void)state;
  float *out = (float *)dev_alloc(4);
  assert_int_equal(kbd_device_reduce_f32(NULL, 10, out, KBD_RED_SUM, NULL, NULL).code, KBD_ERR_INVALID);
  assert_int_equal(kbd_device_reduce_f32(out, -1, out, KBD_RED_SUM, out, NULL).code, KBD_ERR_INVALID);
  assert_int_equal(kbd_device_reduce_f32(out, 1, out, KBD_RED_XOR, out, NULL).code, KBD_ERR_INVALID);
  assert_int_equal(kbd_device_scan_f32(out, NULL, 1, KBD_RED_SUM, 0, out, NULL).code, KBD_ERR_INVALID);
  /* The empty reduction writes the documented result. */
  float r = 1;
  assert_int_equal(kbd_device_reduce_f32(NULL, 0, out, KBD_RED_MAX, NULL, NULL).code, KBD_OK);
  assert_true(kbd_ok(kbd_copy_to_host(&r, out, 4)));
  assert_true(r == -INFINITY);
  kbd_free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_i32_sizes),  cmocka_unit_test(test_f32_sizes), cmocka_unit_test(test_threads_and_seeds),
      cmocka_unit_test(test_specials),   cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
