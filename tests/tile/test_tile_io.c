/* tests/tile/test_tile_io.c - tile <-> memory moves (tile_io.h) on the CPU machine.
 *
 * Masked global I/O. Each kernel does two moves with the same (n | nrows, ncols, ld, start | r0, c0):
 *   load:  the tile from the tensor (masked), then dumped unmasked to `out`: in-range elements must be the
 *          tensor's, out-of-range ones 0; the tensor's gap columns (ld > ncols) and the memory around it
 *          hold distinctive non-zero values, so a load that reads outside the tensor shows up.
 *   store: a pattern tile loaded unmasked, stored (masked) into the tensor: in-range elements must be the
 *          pattern, every other byte of the one kbd_malloc allocation that holds the tensor (pads before
 *          and after, gap columns) must keep its sentinel.
 * Dtypes and vector widths: f32, bf16, e4m3 ROW tiles, all vec 4 (16-, 8- and 4-byte chunks), an
 * MMA_C tile (per-element path), and misaligned tensors (base + 1 element, odd ld, starts that are not a
 * multiple of vec), which must take the per-element path and still be right. Values are bit patterns:
 * moves copy bits, nothing is converted.
 * Shared memory: kbd_store_smem / kbd_load_smem round trips with ld > cols, the smem image checked too.
 */
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- kernels ------------------------------------------------------------------------------------------- */

typedef struct io_params {
  const void *src; /* tensor to load from */
  void *out;       /* unmasked dump of the loaded tile: R x C, ld C */
  const void *pat; /* R x C pattern, ld C */
  void *dst;       /* tensor to store into */
  long long nrows, ncols, ld, r0, c0;
} io_params;

/* 1 x TW tiles through kbd_load / kbd_store (n = ncols, start = c0). */
#define IO1_KERNEL(name, dt, TW, THREADS, SCOPE, VEC)                                                            \
  KBD_KERNEL(name, THREADS, io_params) {                                                                         \
    KBD_TILE(dt, 1, TW, SCOPE) t, u;                                                                             \
    KBD_STATIC_ASSERT(KBD_VEC(t) == (VEC), "test: vector width");                                                \
    kbd_load(t, (const kbd_##dt *)p.src, p.ncols, p.c0);                                                         \
    /* a warp tile is the same in every warp: warp 0 stores it (equal stores of one global byte by two warps with  \
     * no barrier between them race; the machine's global-memory race check reports them) */                     \
    const int kbd_io_store_ = (SCOPE) != KBD_WARP || kbd_warp_id() == 0;                                          \
    if (kbd_io_store_) kbd_store((kbd_##dt *)p.out, t, TW, 0);                                                    \
    kbd_load(u, (const kbd_##dt *)p.pat, TW, 0);                                                                 \
    if (kbd_io_store_) kbd_store((kbd_##dt *)p.dst, u, p.ncols, p.c0);                                            \
  }
IO1_KERNEL(io1_f32, f32, 1024, 256, KBD_CTA, 4)
IO1_KERNEL(io1_bf16, bf16, 2048, 256, KBD_CTA, 4)
IO1_KERNEL(io1_e4m3, e4m3, 4096, 256, KBD_CTA, 4)
IO1_KERNEL(io1_f32_warp, f32, 128, 64, KBD_WARP, 4) /* a warp tile: each warp moves the same 128 elements */

/* R x C tiles through kbd_load2d / kbd_store2d. */
#define IO2_KERNEL(name, dt, R, C, THREADS, SCOPE, LAYOUT, VEC)                                                  \
  KBD_KERNEL(name, THREADS, io_params) {                                                                         \
    KBD_TILE_L(dt, R, C, SCOPE, LAYOUT) t, u;                                                                    \
    KBD_STATIC_ASSERT(KBD_VEC(t) == (VEC), "test: vector width");                                                \
    kbd_load2d(t, (const kbd_##dt *)p.src, p.nrows, p.ncols, p.ld, p.r0, p.c0);                                  \
    kbd_store2d((kbd_##dt *)p.out, t, R, C, C, 0, 0);                                                            \
    kbd_load2d(u, (const kbd_##dt *)p.pat, R, C, C, 0, 0);                                                       \
    kbd_store2d((kbd_##dt *)p.dst, u, p.nrows, p.ncols, p.ld, p.r0, p.c0);                                       \
  }
IO2_KERNEL(io2_f32, f32, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 4)
IO2_KERNEL(io2_bf16, bf16, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 4)
IO2_KERNEL(io2_e4m3, e4m3, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 4)
IO2_KERNEL(io2_f32_mmac, f32, 16, 16, 32, KBD_WARP, KBD_LAYOUT_MMA_C, 4) /* vec: unused by MMA_C */

/* ---- host side -------------------------------------------------------------------------------------------- */

typedef kbd_status (*io_launcher)(kbd_launch_cfg, io_params);

typedef struct io_kind {
  const char *name;
  io_launcher launch;
  int es;          /* element bytes */
  int rows, cols;  /* tile shape */
} io_kind;

static const io_kind k1_f32 = {"1D f32 vec4", io1_f32, 4, 1, 1024};
static const io_kind k1_bf16 = {"1D bf16 vec4 (8 B)", io1_bf16, 2, 1, 2048};
static const io_kind k1_e4m3 = {"1D e4m3 vec4 (4 B)", io1_e4m3, 1, 1, 4096};
static const io_kind k1_f32_warp = {"1D f32 warp tile", io1_f32_warp, 4, 1, 128};
static const io_kind k2_f32 = {"2D f32 vec4", io2_f32, 4, 16, 64};
static const io_kind k2_bf16 = {"2D bf16 vec4 (8 B)", io2_bf16, 2, 16, 64};
static const io_kind k2_e4m3 = {"2D e4m3 vec4 (4 B)", io2_e4m3, 1, 16, 64};
static const io_kind k2_mmac = {"2D f32 MMA_C", io2_f32_mmac, 4, 16, 16};

/* Element values. Tensor element (r, c): a non-zero pattern; memory that is not a tensor element ("gap"):
 * another non-zero pattern; store sentinel; pattern tile element. All distinct where it matters; for
 * 1-byte elements they are drawn from disjoint ranges. */
static uint32_t val_tensor(int es, long long r, long long c) {
  if (es == 1) return (uint32_t)(1 + (r * 131 + c) % 100); /* 1..100 */
  if (es == 2) return (uint32_t)(0x1000 + ((r * 4099 + c) & 0x7fff));
  return 0x10000000u + (uint32_t)(r * 100000 + c);
}
static uint32_t val_gap(int es, long long k) {
  if (es == 1) return (uint32_t)(101 + k % 50); /* 101..150 */
  if (es == 2) return 0xA000u + (uint32_t)(k & 0xfff);
  return 0xC0000000u + (uint32_t)k;
}
static uint32_t val_sentinel(int es) { return es == 1 ? 0xFFu : es == 2 ? 0xDEADu : 0xDEADBEEFu; }
static uint32_t val_pat(int es, long long r, long long c) {
  if (es == 1) return (uint32_t)(151 + (r * 64 + c) % 100); /* 151..250 */
  if (es == 2) return 0x8000u + (uint32_t)((r * 64 + c) & 0x1fff);
  return 0x50000000u + (uint32_t)(r * 1000 + c);
}

static uint32_t rd(const unsigned char *b, int es, long long k) {
  uint32_t v = 0;
  memcpy(&v, b + k * es, (size_t)es);
  return v;
}
static void wr(unsigned char *b, int es, long long k, uint32_t v) { memcpy(b + k * es, &v, (size_t)es); }

static long long floordiv(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

#define PAD 96 /* elements of allocation before and after the tensor's memory (a multiple of 16 bytes) */

/* One case: the tensor lives at element offset PAD + mis of its allocation, nrows x ld elements. */
static long long run_case(const io_kind *K, long long nrows, long long ncols, long long ld, long long r0, long long c0,
                          int mis) {
  const int es = K->es, R = K->rows, C = K->cols;
  const long long span = nrows * ld, total = PAD + mis + span + PAD, off = PAD + mis;
  const long long L = ld > 0 ? ld : 1; /* host bookkeeping only: n = 0 gives ld = 0 */
  unsigned char *h_src = malloc((size_t)(total * es)), *h_dst = malloc((size_t)(total * es));
  unsigned char *h_out = malloc((size_t)R * C * es), *h_pat = malloc((size_t)R * C * es);
  assert_non_null(h_src);
  assert_non_null(h_dst);
  assert_non_null(h_out);
  assert_non_null(h_pat);
  for (long long k = 0; k < total; ++k) {
    const long long rel = k - off, row = floordiv(rel, L), col = rel - row * L;
    const int is_elem = row >= 0 && row < nrows && col < ncols;
    wr(h_src, es, k, is_elem ? val_tensor(es, row, col) : val_gap(es, k));
    wr(h_dst, es, k, val_sentinel(es));
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) wr(h_pat, es, (long long)r * C + c, val_pat(es, r, c));

  unsigned char *d_src, *d_dst, *d_out, *d_pat;
  assert_true(kbd_ok(kbd_malloc((void **)&d_src, (size_t)(total * es))));
  assert_true(kbd_ok(kbd_malloc((void **)&d_dst, (size_t)(total * es))));
  assert_true(kbd_ok(kbd_malloc((void **)&d_out, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_malloc((void **)&d_pat, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_copy_to_device(d_src, h_src, (size_t)(total * es))));
  assert_true(kbd_ok(kbd_copy_to_device(d_dst, h_dst, (size_t)(total * es))));
  assert_true(kbd_ok(kbd_copy_to_device(d_pat, h_pat, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_memset_device(d_out, 0x5A, (size_t)R * C * es)));

  io_params p;
  p.src = d_src + off * es;
  p.dst = d_dst + off * es;
  p.out = d_out;
  p.pat = d_pat;
  p.nrows = nrows;
  p.ncols = ncols;
  p.ld = ld;
  p.r0 = r0;
  p.c0 = c0;
  const kbd_status st = K->launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st))
    fail_msg("%s nrows=%lld ncols=%lld ld=%lld r0=%lld c0=%lld mis=%d: launch failed: %s", K->name, nrows, ncols, ld,
             r0, c0, mis, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h_out, d_out, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_copy_to_host(h_dst, d_dst, (size_t)(total * es))));

  long long bad = 0;
#define REPORT(...)                                                                                              \
  do {                                                                                                           \
    if (bad++ < 4) {                                                                                             \
      print_error("%s nrows=%lld ncols=%lld ld=%lld r0=%lld c0=%lld mis=%d: ", K->name, nrows, ncols, ld, r0, c0,  \
                  mis);                                                                                          \
      print_error(__VA_ARGS__);                                                                                  \
    }                                                                                                            \
  } while (0)
  /* the loaded tile */
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const long long gr = r0 + r, gc = c0 + c;
      const int in = gr >= 0 && gr < nrows && gc >= 0 && gc < ncols;
      const uint32_t want = in ? val_tensor(es, gr, gc) : 0u, got = rd(h_out, es, (long long)r * C + c);
      if (got != want) REPORT("load: tile (%d, %d) = 0x%x, want 0x%x\n", r, c, got, want);
    }
  /* the whole destination allocation after the store */
  for (long long k = 0; k < total; ++k) {
    const long long rel = k - off, row = floordiv(rel, L), col = rel - row * L;
    const int is_elem = row >= 0 && row < nrows && col < ncols;
    const long long tr = row - r0, tc = col - c0;
    const int covered = is_elem && tr >= 0 && tr < R && tc >= 0 && tc < C;
    const uint32_t want = covered ? val_pat(es, tr, tc) : val_sentinel(es), got = rd(h_dst, es, k);
    if (got != want)
      REPORT("store: allocation element %lld (tensor offset %lld%s) = 0x%x, want 0x%x\n", k, rel,
             is_elem ? "" : ", outside the tensor", got, want);
  }
#undef REPORT
  assert_true(kbd_ok(kbd_free(d_src)));
  assert_true(kbd_ok(kbd_free(d_dst)));
  assert_true(kbd_ok(kbd_free(d_out)));
  assert_true(kbd_ok(kbd_free(d_pat)));
  free(h_src);
  free(h_dst);
  free(h_out);
  free(h_pat);
  return bad;
}

/* 1D: n in {0, 1, 31, 1023, 1024, 1025, TW-1, TW, TW+1} and starts before, inside, straddling and after the
 * end, vector-aligned or not, with the tensor aligned or at base + 1 element. */
static void check_1d(const io_kind *K) {
  const long long TW = K->cols;
  const long long ns[] = {0, 1, 31, 1023, 1024, 1025, TW - 1, TW, TW + 1};
  long long bad = 0, cases = 0;
  for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
    const long long n = ns[ni];
    const long long starts[] = {0,      1,      3,          16,         -1,     -16,    -17,   -TW + 1, -TW,
                                -TW - 5, n - TW, n - TW + 1, n - TW - 3, n - 1,  n - 16, n,     n + 7,   n / 2,
                                n / 2 + 5};
    for (size_t si = 0; si < sizeof starts / sizeof starts[0]; ++si)
      for (int mis = 0; mis < 2; ++mis) {
        bad += run_case(K, 1, n, n, 0, starts[si], mis);
        ++cases;
      }
  }
  if (bad) fail_msg("%s: %lld wrong elements over %lld cases", K->name, bad, cases);
}

static void test_1d_f32(void **state) {
  (void)state;
  check_1d(&k1_f32);
}
static void test_1d_bf16(void **state) {
  (void)state;
  check_1d(&k1_bf16);
}
static void test_1d_e4m3(void **state) {
  (void)state;
  check_1d(&k1_e4m3);
}
static void test_1d_warp_tile(void **state) {
  (void)state;
  check_1d(&k1_f32_warp);
}

/* 2D: a 40 x 100 tensor, ld 112 (vector-aligned rows), 101 (not) or 100, the tile inside, over the right,
 * bottom, both, top, left and negative corners, a single element in, entirely outside, with c0 a multiple of
 * 16 so that a 16-element chunk straddles column 100; aligned and misaligned. */
static void check_2d(const io_kind *K) {
  const long long nrows = 40, ncols = 100, R = K->rows, C = K->cols;
  const long long pos[][2] = {
      {0, 0},       {4, 32},         {4, 50},           {30, 16},         {30, 50},        {-5, -7},
      {-3, 16},     {8, -20},        {nrows - R, ncols - C}, {nrows - 1, ncols - 1}, {-R + 1, -C + 1}, {nrows, 0},
      {0, ncols},   {-R, 0},         {0, -C},           {-100, -100},     {5, 3},          {33, 97},
      {-R + 1, 40}, {nrows - R, -C + 3}, {8, 48},         {-4, -16},        {20, 48},        {30, 96}};
  const long long lds[] = {112, 101, ncols};
  long long bad = 0, cases = 0;
  for (size_t li = 0; li < sizeof lds / sizeof lds[0]; ++li)
    for (size_t pi = 0; pi < sizeof pos / sizeof pos[0]; ++pi)
      for (int mis = 0; mis < 2; ++mis) {
        bad += run_case(K, nrows, ncols, lds[li], pos[pi][0], pos[pi][1], mis);
        ++cases;
      }
  /* a tensor smaller than the tile in both directions */
  for (int mis = 0; mis < 2; ++mis) {
    bad += run_case(K, 3, 5, 9, -1, -2, mis);
    bad += run_case(K, 3, 5, 9, 0, 0, mis);
    cases += 2;
  }
  if (bad) fail_msg("%s: %lld wrong elements over %lld cases", K->name, bad, cases);
}

static void test_2d_f32(void **state) {
  (void)state;
  check_2d(&k2_f32);
}
static void test_2d_bf16(void **state) {
  (void)state;
  check_2d(&k2_bf16);
}
static void test_2d_e4m3(void **state) {
  (void)state;
  check_2d(&k2_e4m3);
}
static void test_2d_mma_c(void **state) {
  (void)state;
  check_2d(&k2_mmac);
}

/* ---- shared memory ------------------------------------------------------------------------------------------ */

typedef struct smem_params {
  const void *src; /* R x C, ld C */
  void *out;       /* R x C, ld C: the tile after the round trip */
  void *image;     /* R x LD: the shared-memory image after kbd_store_smem */
  const void *fill;/* one element: the value the shared buffer is pre-filled with */
} smem_params;

/* global -> tile t -> smem (ld LD) -> tile u -> global, for a ROW tile and, with LAYOUT, a second layout:
 * t is stored from layout LAYOUT and u reloaded as a ROW tile, so the two layouts must agree on (r, c). */
#define SMEM_KERNEL(name, dt, R, C, THREADS, SCOPE, LAYOUT, LD)                                                  \
  KBD_KERNEL(name, THREADS, smem_params) {                                                                       \
    KBD_TILE_L(dt, R, C, SCOPE, LAYOUT) t;                                                                       \
    KBD_TILE(dt, R, C, SCOPE) u;                                                                                 \
    KBD_SHARED(kbd_##dt, s, (R) * (LD));                                                                         \
    const kbd_##dt fill = *(const kbd_##dt *)p.fill;                                                             \
    KBD_FOR_LANES(l) {                                                                                           \
      for (int k = kbd_thread_idx(l); k < (R) * (LD); k += KBD_BLOCK_THREADS) s[k] = fill;                       \
    }                                                                                                            \
    kbd_sync();                                                                                                  \
    kbd_load2d(t, (const kbd_##dt *)p.src, R, C, C, 0, 0);                                                       \
    kbd_store_smem(s, t, LD);                                                                                    \
    kbd_sync();                                                                                                  \
    kbd_load_smem(u, s, LD);                                                                                     \
    kbd_store2d((kbd_##dt *)p.out, u, R, C, C, 0, 0);                                                            \
    KBD_FOR_LANES(l) {                                                                                           \
      for (int k = kbd_thread_idx(l); k < (R) * (LD); k += KBD_BLOCK_THREADS) ((kbd_##dt *)p.image)[k] = s[k];   \
    }                                                                                                            \
  }
SMEM_KERNEL(smem_f32_72, f32, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 72)   /* vector path: 288-byte rows */
SMEM_KERNEL(smem_f32_67, f32, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 67)   /* per-element path */
SMEM_KERNEL(smem_bf16_72, bf16, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 72) /* vec 4: 8-byte chunks */
SMEM_KERNEL(smem_bf16_65, bf16, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 65)
SMEM_KERNEL(smem_e4m3_80, e4m3, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 80) /* vec 4: 4-byte chunks */
SMEM_KERNEL(smem_e4m3_65, e4m3, 16, 64, 64, KBD_CTA, KBD_LAYOUT_ROW, 65)
SMEM_KERNEL(smem_f32_mmac, f32, 32, 16, 32, KBD_WARP, KBD_LAYOUT_MMA_C, 20)
SMEM_KERNEL(smem_f32_wgmma, f32, 64, 32, 128, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC, 40)

static void check_smem(const char *name, kbd_status (*launch)(kbd_launch_cfg, smem_params), int es, int R, int C,
                       int LD) {
  unsigned char *h_src = malloc((size_t)R * C * es), *h_out = malloc((size_t)R * C * es);
  unsigned char *h_img = malloc((size_t)R * LD * es);
  assert_non_null(h_src);
  assert_non_null(h_out);
  assert_non_null(h_img);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) wr(h_src, es, (long long)r * C + c, val_tensor(es, r, c));
  const uint32_t fillv = val_sentinel(es);
  unsigned char *d_src, *d_out, *d_img, *d_fill;
  assert_true(kbd_ok(kbd_malloc((void **)&d_src, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_malloc((void **)&d_out, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_malloc((void **)&d_img, (size_t)R * LD * es)));
  assert_true(kbd_ok(kbd_malloc((void **)&d_fill, 4)));
  assert_true(kbd_ok(kbd_copy_to_device(d_src, h_src, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_copy_to_device(d_fill, &fillv, 4)));
  assert_true(kbd_ok(kbd_memset_device(d_out, 0, (size_t)R * C * es)));
  smem_params p = {d_src, d_out, d_img, d_fill};
  const kbd_status st = launch(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  if (!kbd_ok(st)) fail_msg("%s: launch failed: %s", name, st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(h_out, d_out, (size_t)R * C * es)));
  assert_true(kbd_ok(kbd_copy_to_host(h_img, d_img, (size_t)R * LD * es)));
  long long bad = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < LD; ++c) {
      const uint32_t want_img = c < C ? val_tensor(es, r, c) : fillv, got_img = rd(h_img, es, (long long)r * LD + c);
      if (got_img != want_img && bad++ < 4)
        print_error("%s: smem[%d * %d + %d] = 0x%x, want 0x%x\n", name, r, LD, c, got_img, want_img);
      if (c < C) {
        const uint32_t got = rd(h_out, es, (long long)r * C + c);
        if (got != val_tensor(es, r, c) && bad++ < 4)
          print_error("%s: round trip (%d, %d) = 0x%x, want 0x%x\n", name, r, c, got, val_tensor(es, r, c));
      }
    }
  assert_true(kbd_ok(kbd_free(d_src)));
  assert_true(kbd_ok(kbd_free(d_out)));
  assert_true(kbd_ok(kbd_free(d_img)));
  assert_true(kbd_ok(kbd_free(d_fill)));
  free(h_src);
  free(h_out);
  free(h_img);
  if (bad) fail_msg("%s: %lld wrong elements", name, bad);
}

static void test_smem_round_trip(void **state) {
  (void)state;
  check_smem("f32 ld 72", smem_f32_72, 4, 16, 64, 72);
  check_smem("f32 ld 67", smem_f32_67, 4, 16, 64, 67);
  check_smem("bf16 ld 72", smem_bf16_72, 2, 16, 64, 72);
  check_smem("bf16 ld 65", smem_bf16_65, 2, 16, 64, 65);
  check_smem("e4m3 ld 80", smem_e4m3_80, 1, 16, 64, 80);
  check_smem("e4m3 ld 65", smem_e4m3_65, 1, 16, 64, 65);
}

static void test_smem_across_layouts(void **state) {
  (void)state;
  check_smem("MMA_C 32x16 -> ROW, ld 20", smem_f32_mmac, 4, 32, 16, 20);
  check_smem("WGMMA_ACC 64x32 -> ROW, ld 40", smem_f32_wgmma, 4, 64, 32, 40);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_1d_f32),          cmocka_unit_test(test_1d_bf16),
      cmocka_unit_test(test_1d_e4m3),         cmocka_unit_test(test_1d_warp_tile),
      cmocka_unit_test(test_2d_f32),          cmocka_unit_test(test_2d_bf16),
      cmocka_unit_test(test_2d_e4m3),         cmocka_unit_test(test_2d_mma_c),
      cmocka_unit_test(test_smem_round_trip), cmocka_unit_test(test_smem_across_layouts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
