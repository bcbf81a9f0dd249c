/* exact_host.h - host data of the MMA tests that compare D bit for bit (tests/machine, tests/mma): bf16 values that
 * are small multiples of 1/4, so every product and every partial sum of a K up to thousands is exact in f32 and in
 * double, whatever the order of the additions; their upload; the reference dot product. Include after cmocka.h.
 */
#ifndef KBD_TEST_EXACT_HOST_H
#define KBD_TEST_EXACT_HOST_H

/* (i, j) of an operand: one of -1, -3/4 .. 1 */
static inline float xh_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* rows x cols row-major: h[i * cols + k] = xh_value(i, k, salt) */
static inline void xh_fill_bf16(kbd_bf16 *h, int rows, int cols, int salt) {
  for (int i = 0; i < rows; ++i)
    for (int k = 0; k < cols; ++k)
      h[(size_t)i * (size_t)cols + (size_t)k] = kbd_f32_to_bf16(xh_value(i, k, salt));
}

/* kbd_malloc of `bytes`, filled from h (NULL: left as allocated) */
static inline void *xh_upload(const void *h, size_t bytes) {
  void *d = NULL;
  assert_int_equal(kbd_malloc(&d, bytes).code, KBD_OK);
  if (h) assert_int_equal(kbd_copy_to_device(d, h, bytes).code, KBD_OK);
  return d;
}

/* sum over k < n of a[k] b[k] (exact) */
static inline double xh_dot_bf16(const kbd_bf16 *a, const kbd_bf16 *b, int n) {
  double s = 0;
  for (int k = 0; k < n; ++k)
    s += (double)kbd_bf16_to_f32(a[k]) * (double)kbd_bf16_to_f32(b[k]);
  return s;
}

#endif /* KBD_TEST_EXACT_HOST_H */
