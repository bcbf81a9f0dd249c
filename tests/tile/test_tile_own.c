/* tests/tile/test_tile_own.c - who owns which tile element, on the CPU machine.
 *
 * 1. Ownership through the API: KBD_MAP(t, t, x, r, c, r*1000 + c) then kbd_store2d must put every element
 *    at its (r, c), exactly once, for CTA / warpgroup / warp ROW tiles in a 256-thread block (a warpgroup
 *    or warp tile exists once per warpgroup / warp there: each instance stores its own copy), WGMMA_ACC
 *    (64x64, 128x24) and MMA_C / MMA_A / MMA_B tiles.
 * 2. The CPU fragment is the GPU partition: inside a kernel, for every lane l and index i, t.v[l][i] after
 *    kbd_load2d is the element at kbd_layout_coord(layout, ..., (warp*32 + l) % scope, i) - what GPU thread
 *    (warp*32 + l) holds in its registers - and that coordinate also equals an independent statement of
 *    the layout (the doc formula for ROW; the PTX ISA fragment tables for mma.m16n8k16 A/B/C and the wgmma
 *    m64nN accumulator). The (r, c) visited by the scope's threads form a partition of the tile.
 * 3. KBD_MAP gives the right r, c on 2D tiles of every layout (a causal mask, and an expression in x, r, c).
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

/* ---- 1. ownership through KBD_MAP + kbd_store2d ------------------------------------------------------------ */

typedef struct own_params {
  float *out; /* one R x C block per instance of the scope in the block */
} own_params;

/* Instance of the tile's scope that the running warp belongs to (0 for a CTA tile). */
#define INSTANCE(t) (kbd_warp_id() * KBD_WARP_SIZE / KBD_SCOPE(t))

#define OWN_KERNEL(name, THREADS, R, C, SCOPE, LAYOUT)                                                           \
  KBD_KERNEL(name, THREADS, own_params) {                                                                        \
    KBD_TILE_L(f32, R, C, SCOPE, LAYOUT) t;                                                                      \
    const int inst = INSTANCE(t);                                                                                \
    kbd_zero(t);                                                                                                 \
    KBD_MAP(t, t, x, r, c, (float)(r * 1000 + c + 1000000 * inst) + x);                                          \
    kbd_store2d(p.out + (long long)inst * (R) * (C), t, R, C, C, 0, 0);                                          \
  }
OWN_KERNEL(own_cta, 256, 32, 64, KBD_CTA, KBD_LAYOUT_ROW)
OWN_KERNEL(own_wg, 256, 16, 64, KBD_WARPGROUP, KBD_LAYOUT_ROW)
OWN_KERNEL(own_warp, 256, 8, 32, KBD_WARP, KBD_LAYOUT_ROW)
OWN_KERNEL(own_wgmma_64x64, 256, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)
OWN_KERNEL(own_wgmma_128x24, 128, 128, 24, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)
OWN_KERNEL(own_mmac_16x16, 64, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_C)
OWN_KERNEL(own_mmac_32x24, 64, 32, 24, KBD_WARP, KBD_LAYOUT_MMA_C)
OWN_KERNEL(own_mmaa_32x32, 64, 32, 32, KBD_WARP, KBD_LAYOUT_MMA_A)
OWN_KERNEL(own_mmab_32x16, 64, 32, 16, KBD_WARP, KBD_LAYOUT_MMA_B)

static void check_own(const char *name, kbd_status (*launch)(kbd_launch_cfg, own_params), int threads, int R, int C,
                      int scope) {
  const int inst = threads / scope;
  const size_t n = (size_t)inst * R * C;
  float *h = malloc(n * sizeof *h), *d;
  assert_non_null(h);
  assert_true(kbd_ok(kbd_malloc((void **)&d, n * sizeof *d)));
  for (size_t k = 0; k < n; ++k) h[k] = -1.0f;
  assert_true(kbd_ok(kbd_copy_to_device(d, h, n * sizeof *d)));
  own_params p = {d};
  const kbd_status st = launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("%s: launch failed: %s", name, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h, d, n * sizeof *d)));
  long long bad = 0;
  for (int s = 0; s < inst; ++s)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        const float got = h[((size_t)s * R + r) * C + c], want = (float)(r * 1000 + c + 1000000 * s);
        if (got != want && bad++ < 5)
          print_error("%s: instance %d element (%d, %d) = %.0f, want %.0f\n", name, s, r, c, (double)got, (double)want);
      }
  assert_true(kbd_ok(kbd_free(d)));
  free(h);
  if (bad) fail_msg("%s: %lld elements not at their (r, c)", name, bad);
}

static void test_ownership_row(void **state) {
  (void)state;
  check_own("CTA 32x64 (256 threads)", own_cta, 256, 32, 64, 256);
  check_own("warpgroup 16x64 (256 threads: 2 instances)", own_wg, 256, 16, 64, 128);
  check_own("warp 8x32 (256 threads: 8 instances)", own_warp, 256, 8, 32, 32);
}

static void test_ownership_mma(void **state) {
  (void)state;
  check_own("WGMMA_ACC 64x64 (256 threads: 2 warpgroups)", own_wgmma_64x64, 256, 64, 64, 128);
  check_own("WGMMA_ACC 128x24", own_wgmma_128x24, 128, 128, 24, 128);
  check_own("MMA_C 16x16 (2 warps)", own_mmac_16x16, 64, 16, 16, 32);
  check_own("MMA_C 32x24", own_mmac_32x24, 64, 32, 24, 32);
  check_own("MMA_A 32x32", own_mmaa_32x32, 64, 32, 32, 32);
  check_own("MMA_B 32x16", own_mmab_32x16, 64, 32, 16, 32);
}

/* ---- 2. the CPU fragment is the GPU partition --------------------------------------------------------------- */

/* The layouts restated from their sources, independently of layout.h (t: thread in scope, i: index). */
static kbd_coord indep_coord(int layout, int R, int C, int S, int vec, int t, int i) {
  kbd_coord rc = {-1, -1};
  const int l = t % 32, g = l / 4, q = l % 4;
  if (layout == KBD_LAYOUT_ROW) { /* docs: chunk j*S + t of vec elements is thread t's j-th */
    const int e = ((i / vec) * S + t) * vec + i % vec;
    rc.row = e / C;
    rc.col = e % C;
  } else if (layout == KBD_LAYOUT_MMA_C) { /* PTX mma.m16n8 C: c0,c1 (g, 2q+{0,1}); c2,c3 (g+8, 2q+{0,1}) */
    const int b = i / 4, j = i % 4, nb = C / 8;
    rc.row = 16 * (b / nb) + g + 8 * (j / 2);
    rc.col = 8 * (b % nb) + 2 * q + j % 2;
  } else if (layout == KBD_LAYOUT_MMA_A) { /* PTX m16n8k16 A: a0..a3 k 0-7, a4..a7 k 8-15, rows g / g+8 */
    const int b = i / 8, j = i % 8, kb = C / 16;
    rc.row = 16 * (b / kb) + g + 8 * ((j / 2) % 2);
    rc.col = 16 * (b % kb) + 2 * q + j % 2 + 8 * (j / 4);
  } else if (layout == KBD_LAYOUT_MMA_B) { /* PTX m16n8k16 B: b0,b1 k 2q+{0,1}; b2,b3 k 2q+8+{0,1}; n = g */
    const int b = i / 4, j = i % 4, nb = C / 8;
    rc.row = 16 * (b / nb) + 2 * q + j % 2 + 8 * (j / 2);
    rc.col = 8 * (b % nb) + g;
  } else if (layout == KBD_LAYOUT_WGMMA_ACC) { /* wgmma m64nN D: warp w owns rows 16w..16w+15 of each m64 */
    const int w = t / 32, per = C / 2, mb = i / per, ii = i % per;
    rc.row = 64 * mb + 16 * w + g + 8 * ((ii / 2) % 2);
    rc.col = 8 * (ii / 4) + 2 * q + ii % 2;
  }
  (void)R;
  return rc;
}

typedef struct part_params {
  const void *src; /* R x C, ld C: element (r, c) has distinct bits */
  int *err;        /* per block thread: bit 0 layout.h != independent, bit 1 wrong element, bit 2 outside */
  int *count;      /* per instance and (r, c): how many (thread, i) claim it */
} part_params;

#define PART_KERNEL(name, THREADS, dt, R, C, SCOPE, LAYOUT)                                                      \
  KBD_KERNEL(name, THREADS, part_params) {                                                                       \
    KBD_TILE_L(dt, R, C, SCOPE, LAYOUT) t;                                                                       \
    const kbd_##dt *src = (const kbd_##dt *)p.src;                                                               \
    const int inst = INSTANCE(t);                                                                                \
    kbd_load2d(t, src, R, C, C, 0, 0);                                                                           \
    KBD_FOR_LANES(l) {                                                                                           \
      const int tid = (kbd_warp_id() * KBD_WARP_SIZE + l) % KBD_SCOPE(t);                                        \
      int err = 0;                                                                                               \
      for (int i = 0; i < KBD_NPT(t); ++i) {                                                                     \
        const kbd_coord lc = kbd_layout_coord(KBD_LAYOUT(t), R, C, KBD_SCOPE(t), KBD_VEC(t), tid, i);            \
        const kbd_coord ic = indep_coord(LAYOUT, R, C, KBD_SCOPE(t), KBD_VEC(t), tid, i);                        \
        if (lc.row != ic.row || lc.col != ic.col) err |= 1;                                                      \
        if (lc.row < 0 || lc.row >= (R) || lc.col < 0 || lc.col >= (C)) {                                        \
          err |= 4;                                                                                              \
          continue;                                                                                              \
        }                                                                                                        \
        if (memcmp(&t.v[l][i], &src[lc.row * (C) + lc.col], sizeof t.v[l][i]) != 0) err |= 2;                   \
        p.count[(inst * (R) + lc.row) * (C) + lc.col] += 1;                                                      \
      }                                                                                                          \
      p.err[kbd_thread_idx(l)] = err;                                                                            \
    }                                                                                                            \
  }
PART_KERNEL(part_row_cta_f32, 256, f32, 32, 64, KBD_CTA, KBD_LAYOUT_ROW)        /* vec 4, npt 8 */
PART_KERNEL(part_row_cta_bf16, 256, bf16, 16, 128, KBD_CTA, KBD_LAYOUT_ROW)     /* vec 8, npt 8 */
PART_KERNEL(part_row_cta_e4m3, 256, e4m3, 32, 128, KBD_CTA, KBD_LAYOUT_ROW)     /* vec 16, npt 16 */
PART_KERNEL(part_row_cta_f32_v1, 96, f32, 3, 32, KBD_CTA, KBD_LAYOUT_ROW)       /* vec 1, 3 warps */
PART_KERNEL(part_row_wg_f32, 256, f32, 16, 64, KBD_WARPGROUP, KBD_LAYOUT_ROW)
PART_KERNEL(part_row_warp_f32, 256, f32, 8, 32, KBD_WARP, KBD_LAYOUT_ROW)
PART_KERNEL(part_wgmma_64x64, 256, f32, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)
PART_KERNEL(part_wgmma_128x24, 128, f32, 128, 24, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)
PART_KERNEL(part_wgmma_bf16_64x256, 128, bf16, 64, 256, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)
PART_KERNEL(part_mmac_32x24, 64, f32, 32, 24, KBD_WARP, KBD_LAYOUT_MMA_C)
PART_KERNEL(part_mmaa_bf16_32x32, 64, bf16, 32, 32, KBD_WARP, KBD_LAYOUT_MMA_A)
PART_KERNEL(part_mmab_bf16_32x16, 64, bf16, 32, 16, KBD_WARP, KBD_LAYOUT_MMA_B)

static void check_part(const char *name, kbd_status (*launch)(kbd_launch_cfg, part_params), int threads, int es, int R,
                       int C, int scope) {
  const int inst = threads / scope;
  unsigned char *h_src = malloc((size_t)R * C * es);
  int *h_err = malloc((size_t)threads * sizeof(int)), *h_cnt = calloc((size_t)inst * R * C, sizeof(int));
  assert_non_null(h_src);
  assert_non_null(h_err);
  assert_non_null(h_cnt);
  for (int k = 0; k < R * C; ++k) { /* distinct bits (1-byte elements: 251 values, repeating every 251) */
    const uint32_t v = es == 1 ? (uint32_t)(1 + k % 251) : es == 2 ? (uint32_t)(1 + k) : 0x3f000000u + (uint32_t)k;
    memcpy(h_src + (size_t)k * es, &v, (size_t)es);
  }
  unsigned char *d_src;
  int *d_err, *d_cnt;
  assert_true(kbd_ok(kbd_malloc((void **)&d_src, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_malloc((void **)&d_err, (size_t)threads * sizeof(int))));
  assert_true(kbd_ok(kbd_malloc((void **)&d_cnt, (size_t)inst * R * C * sizeof(int))));
  assert_true(kbd_ok(kbd_copy_to_device(d_src, h_src, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_memset_device(d_err, 0xFF, (size_t)threads * sizeof(int))));
  assert_true(kbd_ok(kbd_memset_device(d_cnt, 0, (size_t)inst * R * C * sizeof(int))));
  part_params p = {d_src, d_err, d_cnt};
  /* one block: its warps are fibers of one host thread, so the counters need no atomics */
  const kbd_status st = launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("%s: launch failed: %s", name, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h_err, d_err, (size_t)threads * sizeof(int))));
  assert_true(kbd_ok(kbd_copy_to_host(h_cnt, d_cnt, (size_t)inst * R * C * sizeof(int))));
  long long bad = 0;
  for (int th = 0; th < threads; ++th)
    if (h_err[th] != 0 && bad++ < 5)
      print_error("%s: thread %d: %s%s%s\n", name, th, (h_err[th] & 1) ? "layout.h differs from the layout's definition; " : "",
                  (h_err[th] & 2) ? "v[lane][i] is not the element at kbd_layout_coord; " : "",
                  (h_err[th] & 4) ? "coordinate outside the tile" : "");
  for (int k = 0; k < inst * R * C; ++k)
    if (h_cnt[k] != 1 && bad++ < 10)
      print_error("%s: instance %d element (%d, %d) held %d times\n", name, k / (R * C), k % (R * C) / C, k % C,
                  h_cnt[k]);
  assert_true(kbd_ok(kbd_free(d_src)));
  assert_true(kbd_ok(kbd_free(d_err)));
  assert_true(kbd_ok(kbd_free(d_cnt)));
  free(h_src);
  free(h_err);
  free(h_cnt);
  if (bad) fail_msg("%s: %lld problems", name, bad);
}

static void test_fragment_is_gpu_partition(void **state) {
  (void)state;
  check_part("ROW CTA f32 32x64 vec 4", part_row_cta_f32, 256, 4, 32, 64, 256);
  check_part("ROW CTA bf16 16x128 vec 8", part_row_cta_bf16, 256, 2, 16, 128, 256);
  check_part("ROW CTA e4m3 32x128 vec 16", part_row_cta_e4m3, 256, 1, 32, 128, 256);
  check_part("ROW CTA f32 3x32 vec 1, 96 threads", part_row_cta_f32_v1, 96, 4, 3, 32, 96);
  check_part("ROW warpgroup f32 16x64 in 256 threads", part_row_wg_f32, 256, 4, 16, 64, 128);
  check_part("ROW warp f32 8x32 in 256 threads", part_row_warp_f32, 256, 4, 8, 32, 32);
  check_part("WGMMA_ACC f32 64x64 in 256 threads", part_wgmma_64x64, 256, 4, 64, 64, 128);
  check_part("WGMMA_ACC f32 128x24", part_wgmma_128x24, 128, 4, 128, 24, 128);
  check_part("WGMMA_ACC bf16 64x256", part_wgmma_bf16_64x256, 128, 2, 64, 256, 128);
  check_part("MMA_C f32 32x24", part_mmac_32x24, 64, 4, 32, 24, 32);
  check_part("MMA_A bf16 32x32", part_mmaa_bf16_32x32, 64, 2, 32, 32, 32);
  check_part("MMA_B bf16 32x16", part_mmab_bf16_32x16, 64, 2, 32, 16, 32);
}

/* ---- 3. KBD_MAP r, c on 2D tiles ----------------------------------------------------------------------------- */

typedef struct map_params {
  const float *src; /* R x C */
  float *causal;    /* R x C: c <= r ? x : -inf */
  float *expr;      /* R x C: 2x - r + 3c */
} map_params;

#define MAP_KERNEL(name, THREADS, R, C, SCOPE, LAYOUT)                                                           \
  KBD_KERNEL(name, THREADS, map_params) {                                                                        \
    KBD_TILE_L(f32, R, C, SCOPE, LAYOUT) y, z;                                                                   \
    kbd_load2d(y, p.src, R, C, C, 0, 0);                                                                         \
    KBD_MAP(z, y, x, r, c, 2.0f * x - (float)r + 3.0f * (float)c);                                               \
    KBD_MAP(y, y, x, r, c, (c <= r) ? x : -INFINITY);                                                            \
    kbd_store2d(p.causal, y, R, C, C, 0, 0);                                                                     \
    kbd_store2d(p.expr, z, R, C, C, 0, 0);                                                                       \
  }
MAP_KERNEL(map_row_cta, 128, 32, 32, KBD_CTA, KBD_LAYOUT_ROW)
MAP_KERNEL(map_row_warp_rect, 32, 16, 48, KBD_WARP, KBD_LAYOUT_ROW)
MAP_KERNEL(map_mmac, 32, 32, 32, KBD_WARP, KBD_LAYOUT_MMA_C)
MAP_KERNEL(map_mmaa, 32, 32, 32, KBD_WARP, KBD_LAYOUT_MMA_A)
MAP_KERNEL(map_mmab, 32, 32, 32, KBD_WARP, KBD_LAYOUT_MMA_B)
MAP_KERNEL(map_wgmma, 128, 128, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC)

static void check_map(const char *name, kbd_status (*launch)(kbd_launch_cfg, map_params), int R, int C) {
  const size_t n = (size_t)R * C;
  float *h_src = malloc(n * sizeof(float)), *h_c = malloc(n * sizeof(float)), *h_e = malloc(n * sizeof(float));
  assert_non_null(h_src);
  assert_non_null(h_c);
  assert_non_null(h_e);
  for (size_t k = 0; k < n; ++k) h_src[k] = (float)(k % 97) * 0.25f + 1.0f;
  float *d_src, *d_c, *d_e;
  assert_true(kbd_ok(kbd_malloc((void **)&d_src, n * sizeof(float))));
  assert_true(kbd_ok(kbd_malloc((void **)&d_c, n * sizeof(float))));
  assert_true(kbd_ok(kbd_malloc((void **)&d_e, n * sizeof(float))));
  assert_true(kbd_ok(kbd_copy_to_device(d_src, h_src, n * sizeof(float))));
  assert_true(kbd_ok(kbd_memset_device(d_c, 0, n * sizeof(float))));
  assert_true(kbd_ok(kbd_memset_device(d_e, 0, n * sizeof(float))));
  map_params p = {d_src, d_c, d_e};
  const kbd_status st = launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("%s: launch failed: %s", name, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h_c, d_c, n * sizeof(float))));
  assert_true(kbd_ok(kbd_copy_to_host(h_e, d_e, n * sizeof(float))));
  long long bad = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const float x = h_src[r * C + c];
      const float want_c = c <= r ? x : -INFINITY, want_e = 2.0f * x - (float)r + 3.0f * (float)c;
      if (h_c[r * C + c] != want_c && bad++ < 5)
        print_error("%s: causal (%d, %d) = %g, want %g\n", name, r, c, (double)h_c[r * C + c], (double)want_c);
      if (h_e[r * C + c] != want_e && bad++ < 5)
        print_error("%s: 2x - r + 3c at (%d, %d) = %g, want %g\n", name, r, c, (double)h_e[r * C + c], (double)want_e);
    }
  assert_true(kbd_ok(kbd_free(d_src)));
  assert_true(kbd_ok(kbd_free(d_c)));
  assert_true(kbd_ok(kbd_free(d_e)));
  free(h_src);
  free(h_c);
  free(h_e);
  if (bad) fail_msg("%s: %lld wrong elements", name, bad);
}

static void test_map_row_col(void **state) {
  (void)state;
  check_map("ROW CTA 32x32", map_row_cta, 32, 32);
  check_map("ROW warp 16x48", map_row_warp_rect, 16, 48);
  check_map("MMA_C 32x32", map_mmac, 32, 32);
  check_map("MMA_A 32x32", map_mmaa, 32, 32);
  check_map("MMA_B 32x32", map_mmab, 32, 32);
  check_map("WGMMA_ACC 128x64", map_wgmma, 128, 64);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ownership_row),
      cmocka_unit_test(test_ownership_mma),
      cmocka_unit_test(test_fragment_is_gpu_partition),
      cmocka_unit_test(test_map_row_col),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
