/* test_tma_ranks.c - TMA loads of 1-D, 4-D and 5-D boxes on the CPU machine (kbd/tma.h, kbd/cpu/tma.h).
 *
 * test_tma.c covers 2-D and 3-D boxes; this file covers the other ranks the PTX spellings have (1d, 4d, 5d).
 * For every case (tile type x tensor map) a kernel loads one tile with kbd_tma_load<rank>d(tile, &map, &bar,
 * c{rank-1}, .., c0) (outermost first), waits, and copies out (a) the tile's shared bytes in address order and (b)
 * its elements
 * in (r, c) order read through kbd_stile_ptr. Both are compared with an image computed HERE from the
 * coordinates alone, never through the code under test:
 *   box element (i0, i1, .., i4), i0 fastest, along dimension i >= 1 ceil(box_dims[i] / element_strides[i])
 *   elements at coordinates c_i + j * element_strides[i] (DRV, ptx-reference §2.3), lands at linear byte
 *   L = line * box_dims[0] * E + i0 * E, line flattening (j1..j4) with j1 fastest (ptx-reference §2.5),
 *   box b of a multi-box tile at c0 + b * box_dims[0] and b * (box bytes) in shared memory (kbd/tma.h),
 *   physical byte = the §3 table's XOR of the (repeat-aligned) address; element value from the tensor's
 *   own coordinates -> byte address (dims, padded and permuted strides), or the fill outside (zero, or NaN
 *   for KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA: any NaN, the hardware's bits are not documented).
 * Every swizzle mode (none, 32B, 64B, 128B, and 128B with 32-byte atoms) for rank 4 and rank 5; 1/2/4-byte
 * elements; K-major and MN-major tiles; element strides > 1 on outer dimensions; starts inside, clipped
 * low and high on EACH dimension, clipped on all at once, and wholly outside; each under seed 0 and another
 * seed, 1 and 2 host threads. The mbarrier is credited the whole box even when clipped: the kernel expects
 * exactly the tile's bytes (else the wait never returns), and expecting 16 more or 16 fewer deadlocks with
 * exactly that difference named, even for a box with no element inside the tensor.
 * What the library supports, and so what is tested: a box's outer extents (over their element strides)
 * multiply to the tile's lines (rows K-major, cols MN-major); a 1-D box therefore loads a 1-line tile,
 * which must be unswizzled (a swizzled tile needs a multiple of 8 lines). A map whose outer box extents
 * do not multiply to the lines, or a call with the wrong coordinate count, is reported.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

/* ---- kernels ------------------------------------------------------------------------------------------- */

typedef struct {
  kbd_tensor_map map;
  unsigned char *out; /* [0, B): the tile's shared bytes in address order; [B, 2B): its elements in (r, c) order */
  int32_t c[5];       /* box start */
  int mode;
} rk_params;

enum { M_LOAD, M_TX_MORE, M_TX_LESS }; /* expect-tx of the tile's bytes, 16 more, 16 fewer */

/* One kernel per tile type; the coordinate list gives the rank. 128 threads; warp 0 issues. */
#define RK_KERNEL(name, type, rank, ...)                                                                                   \
  KBD_KERNEL(name, 128, rk_params) {                                                                                   \
    KBD_SHARED_STILE(type, t);                                                                                         \
    KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);                                                                       \
    const int w = kbd_warp_id();                                                                                       \
    const int nb = (int)KBD_STILE_BYTES(t);                                                                            \
    if (w == 0) {                                                                                                      \
      KBD_ELECT_ONE { kbd_mbarrier_init(&bar[0], 1); }                                                                 \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    if (w == 0) {                                                                                                      \
      KBD_ELECT_ONE {                                                                                                  \
        const uint32_t want = (uint32_t)nb + (p.mode == M_TX_MORE ? 16u : 0u) - (p.mode == M_TX_LESS ? 16u : 0u);      \
        kbd_mbarrier_arrive_expect_tx(&bar[0], want);                                                                  \
        kbd_tma_load##rank(t, &p.map, &bar[0], __VA_ARGS__);                                                           \
      }                                                                                                                \
    }                                                                                                                  \
    kbd_mbarrier_wait(&bar[0], 0);                                                                                     \
    for (int i = w; i < nb; i += 4)                                                                                    \
      p.out[i] = kbd_ld_shared((const unsigned char *)t.p + i);                                                        \
    for (int r = w; r < KBD_ROWS(t); r += 4)                                                                           \
      for (int c = 0; c < KBD_COLS(t); ++c) {                                                                          \
        const unsigned char *e_ = (const unsigned char *)kbd_stile_ptr(t, r, c);                                        \
        for (int b_ = 0; b_ < (int)KBD_ESIZE(t); ++b_)                                                                 \
          p.out[nb + ((size_t)r * KBD_COLS(t) + (size_t)c) * KBD_ESIZE(t) + (size_t)b_] = kbd_ld_shared(e_ + b_);      \
      }                                                                                                                \
  }

/* 1-D: one line, unswizzled */
typedef KBD_STILE(f32, 1, 64, KBD_SWIZZLE_NONE) ty_1f;
typedef KBD_STILE(bf16, 1, 256, KBD_SWIZZLE_NONE) ty_1h;
typedef KBD_STILE_MN(bf16, 40, 1, KBD_SWIZZLE_NONE) ty_1m; /* MN-major: the 40 rows are the line */
/* 4-D */
typedef KBD_STILE(bf16, 12, 48, KBD_SWIZZLE_NONE) ty_4n;
typedef KBD_STILE(f32, 8, 16, KBD_SWIZZLE_32B) ty_4a;        /* 2 boxes of 8 f32 */
typedef KBD_STILE(bf16, 16, 64, KBD_SWIZZLE_64B) ty_4b;      /* 2 boxes of 32 bf16 */
typedef KBD_STILE(bf16, 16, 64, KBD_SWIZZLE_128B) ty_4c;     /* 1 box */
typedef KBD_STILE_MN(f32, 32, 8, KBD_SWIZZLE_128B_ATOM32) ty_4d;
typedef KBD_STILE(e4m3, 8, 256, KBD_SWIZZLE_128B) ty_4e;     /* 1-byte elements, 2 boxes */
/* 5-D */
typedef KBD_STILE(f32, 24, 16, KBD_SWIZZLE_NONE) ty_5n;
typedef KBD_STILE(bf16, 8, 32, KBD_SWIZZLE_32B) ty_5a;       /* 2 boxes */
typedef KBD_STILE(f32, 16, 32, KBD_SWIZZLE_64B) ty_5b;       /* 2 boxes */
typedef KBD_STILE(bf16, 32, 64, KBD_SWIZZLE_128B) ty_5c;
typedef KBD_STILE_MN(bf16, 64, 16, KBD_SWIZZLE_128B) ty_5d;

/* p.c[] is in the tensor map's order (c[0] the innermost dimension); the calls take the outermost first */
#define C1 p.c[0]
#define C4 p.c[3], p.c[2], p.c[1], p.c[0]
#define C5 p.c[4], p.c[3], p.c[2], p.c[1], p.c[0]
RK_KERNEL(k_1f, ty_1f, 1d, C1)
RK_KERNEL(k_1h, ty_1h, 1d, C1)
RK_KERNEL(k_1m, ty_1m, 1d, C1)
RK_KERNEL(k_4n, ty_4n, 4d, C4)
RK_KERNEL(k_4a, ty_4a, 4d, C4)
RK_KERNEL(k_4b, ty_4b, 4d, C4)
RK_KERNEL(k_4c, ty_4c, 4d, C4)
RK_KERNEL(k_4d, ty_4d, 4d, C4)
RK_KERNEL(k_4e, ty_4e, 4d, C4)
RK_KERNEL(k_5n, ty_5n, 5d, C5)
RK_KERNEL(k_5a, ty_5a, 5d, C5)
RK_KERNEL(k_5b, ty_5b, 5d, C5)
RK_KERNEL(k_5c, ty_5c, 5d, C5)
RK_KERNEL(k_5d, ty_5d, 5d, C5)
/* the 5-D tile with only 4 coordinates: a rank mismatch the machine must report */
RK_KERNEL(k_5c_4, ty_5c, 4d, C4)

typedef kbd_status (*rk_kernel)(kbd_launch_cfg, rk_params);

/* ---- cases --------------------------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  rk_kernel k;
  kbd_tmap_dtype dt;
  int E, rows, cols, major; /* the tile */
  kbd_tmap_swizzle swz;
  int rank;
  uint64_t dims[5];
  uint64_t strides[4]; /* bytes; padded (> the dense extent) and in two cases permuted (not increasing) */
  uint32_t box[5], es[5];
  int32_t in[5]; /* a start whose box lies wholly inside the tensor */
} rcase;

static const rcase cases[] = {
    /* 1-D: dims not a multiple of the 16-byte unit, so the far edge cuts a unit */
    {"1-D f32 1x64", k_1f, KBD_TMAP_DT_F32, 4, 1, 64, 0, KBD_TMAP_SWIZZLE_NONE, 1,
     {101}, {0}, {64}, {1}, {20}},
    {"1-D bf16 1x256", k_1h, KBD_TMAP_DT_BF16, 2, 1, 256, 0, KBD_TMAP_SWIZZLE_NONE, 1,
     {300}, {0}, {256}, {1}, {17}},
    {"1-D bf16 40x1 MN", k_1m, KBD_TMAP_DT_BF16, 2, 40, 1, 1, KBD_TMAP_SWIZZLE_NONE, 1,
     {77}, {0}, {40}, {1}, {9}},
    /* 4-D */
    {"4-D bf16 12x48 none, permuted strides", k_4n, KBD_TMAP_DT_BF16, 2, 12, 48, 0, KBD_TMAP_SWIZZLE_NONE, 4,
     {60, 5, 4, 3}, {128, 1968, 656}, {48, 3, 2, 2}, {1, 1, 1, 1}, {5, 1, 1, 0}},
    {"4-D f32 8x16 32B", k_4a, KBD_TMAP_DT_F32, 4, 8, 16, 0, KBD_TMAP_SWIZZLE_32B, 4,
     {37, 3, 5, 4}, {160, 512, 2576}, {8, 2, 2, 2}, {1, 1, 1, 1}, {10, 0, 2, 1}},
    {"4-D bf16 16x64 64B, estride 2 on dim 1", k_4b, KBD_TMAP_DT_BF16, 2, 16, 64, 0, KBD_TMAP_SWIZZLE_64B, 4,
     {90, 11, 3, 6}, {192, 2160, 6496}, {32, 7, 2, 2}, {1, 2, 1, 1}, {13, 2, 1, 3}},
    {"4-D bf16 16x64 128B, estride 2 on dim 2", k_4c, KBD_TMAP_DT_BF16, 2, 16, 64, 0, KBD_TMAP_SWIZZLE_128B, 4,
     {70, 4, 9, 3}, {144, 576, 5248}, {64, 2, 7, 2}, {1, 1, 2, 1}, {3, 1, 1, 1}},
    {"4-D f32 32x8 MN 128B/32B-atom", k_4d, KBD_TMAP_DT_F32, 4, 32, 8, 1, KBD_TMAP_SWIZZLE_128B_ATOM_32B, 4,
     {40, 3, 3, 3}, {160, 496, 1488}, {32, 2, 2, 2}, {1, 1, 1, 1}, {4, 1, 1, 0}},
    {"4-D u8 8x256 128B", k_4e, KBD_TMAP_DT_U8, 1, 8, 256, 0, KBD_TMAP_SWIZZLE_128B, 4,
     {300, 3, 4, 2}, {304, 928, 3712}, {128, 2, 2, 2}, {1, 1, 1, 1}, {20, 1, 2, 0}},
    /* 5-D */
    {"5-D f32 24x16 none, permuted strides", k_5n, KBD_TMAP_DT_F32, 4, 24, 16, 0, KBD_TMAP_SWIZZLE_NONE, 5,
     {20, 3, 5, 2, 4}, {80, 256, 5120, 1280}, {16, 2, 3, 2, 2}, {1, 1, 1, 1, 1}, {2, 0, 1, 0, 1}},
    {"5-D bf16 8x32 32B", k_5a, KBD_TMAP_DT_BF16, 2, 8, 32, 0, KBD_TMAP_SWIZZLE_32B, 5,
     {50, 4, 3, 5, 3}, {112, 448, 1360, 6800}, {16, 2, 2, 1, 2}, {1, 1, 1, 1, 1}, {9, 1, 0, 2, 1}},
    {"5-D f32 16x32 64B, estride 3 on dim 4", k_5b, KBD_TMAP_DT_F32, 4, 16, 32, 0, KBD_TMAP_SWIZZLE_64B, 5,
     {45, 3, 3, 4, 8}, {192, 592, 1776, 7104}, {16, 2, 2, 2, 5}, {1, 1, 1, 1, 3}, {6, 1, 0, 1, 2}},
    {"5-D bf16 32x64 128B, estrides 2 and 3", k_5c, KBD_TMAP_DT_BF16, 2, 32, 64, 0, KBD_TMAP_SWIZZLE_128B, 5,
     {66, 5, 3, 12, 3}, {144, 720, 2176, 26112}, {64, 3, 2, 10, 2}, {1, 2, 1, 3, 1}, {1, 1, 0, 1, 1}},
    {"5-D bf16 64x16 MN 128B", k_5d, KBD_TMAP_DT_BF16, 2, 64, 16, 1, KBD_TMAP_SWIZZLE_128B, 5,
     {72, 3, 3, 3, 2}, {160, 480, 1472, 4416}, {64, 2, 2, 2, 2}, {1, 1, 1, 1, 1}, {4, 1, 0, 1, 0}},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

#define DEV_BYTES (1 << 17)
#define OUT_BYTES (1 << 15)
static unsigned char *dev_in, *dev_out, *tensor, *got, *img, *filled;
static int group_setup(void **state) {
  (void)state;
  if (kbd_malloc((void **)&dev_in, DEV_BYTES).code != KBD_OK) return -1;
  if (kbd_malloc((void **)&dev_out, OUT_BYTES).code != KBD_OK) return -1;
  tensor = malloc(DEV_BYTES);
  got = malloc(OUT_BYTES);
  img = malloc(OUT_BYTES);
  filled = malloc(DEV_BYTES); /* marks the tensor's bytes, then the image's */
  return tensor && got && img && filled ? 0 : -1;
}

/* ---- the scalar reference ------------------------------------------------------------------------------ */

/* Elements of the box along dimension i (DRV: ceil(boxDim / elementStride) for i >= 1; elementStrides[0]
 * has no effect without interleave, and every case here keeps it 1). */
static uint32_t ref_n(const rcase *c, int i) { return i == 0 ? c->box[0] : (c->box[i] + c->es[i] - 1) / c->es[i]; }
static int ref_inner(const rcase *c) { return c->major ? c->rows : c->cols; }
static int ref_lines(const rcase *c) { return c->major ? c->cols : c->rows; }

/* ptx-reference §3, on a byte address inside a tile aligned to the mode's repeat (keyed by the MAP's mode). */
static uint32_t ref_swizzle(kbd_tmap_swizzle m, uint32_t a) {
  switch (m) {
  case KBD_TMAP_SWIZZLE_32B: return a ^ (((a >> 7) & 1u) << 4);
  case KBD_TMAP_SWIZZLE_64B: return a ^ (((a >> 7) & 3u) << 4);
  case KBD_TMAP_SWIZZLE_128B: return a ^ (((a >> 7) & 7u) << 4);
  case KBD_TMAP_SWIZZLE_128B_ATOM_32B: return a ^ (((a >> 7) & 3u) << 5);
  default: return a;
  }
}

/* Tensor byte k of the element at coordinates g: never 0 (the zero fill), depends on every coordinate. */
static unsigned char ref_val(const int64_t *g, int k) {
  return (unsigned char)((g[0] * 131 + g[1] * 29 + g[2] * 71 + g[3] * 13 + g[4] * 97 + k * 7) % 251 + 1);
}
static size_t ref_goff(const rcase *c, const int64_t *g) {
  size_t off = (size_t)g[0] * (size_t)c->E;
  for (int i = 1; i < c->rank; ++i)
    off += (size_t)g[i] * (size_t)c->strides[i - 1];
  return off;
}

/* The host tensor: every element by its coordinates, 0xee in the padding; copied whole to the device.
 * Checks the case table: the strides never make two elements share a byte, and the tensor fits. */
static size_t ref_tensor(const rcase *c) {
  size_t bytes = (size_t)c->dims[0] * (size_t)c->E;
  for (int i = 1; i < c->rank; ++i)
    bytes += (size_t)(c->dims[i] - 1) * (size_t)c->strides[i - 1];
  bytes = (bytes + 15) & ~(size_t)15;
  assert_true(bytes <= DEV_BYTES);
  memset(tensor, 0xee, bytes);
  memset(filled, 0, bytes);
  int64_t g[5] = {0, 0, 0, 0, 0};
  for (;;) {
    const size_t off = ref_goff(c, g);
    for (int k = 0; k < c->E; ++k) {
      assert_int_equal(filled[off + (size_t)k], 0);
      filled[off + (size_t)k] = 1;
      tensor[off + (size_t)k] = ref_val(g, k);
    }
    int i = 0;
    while (i < c->rank && ++g[i] == (int64_t)c->dims[i])
      g[i++] = 0;
    if (i == c->rank) break;
  }
  assert_int_equal(kbd_copy_to_device(dev_in, tensor, bytes).code, KBD_OK);
  return bytes;
}

enum { F_DATA = 1, F_ZERO = 2, F_NAN = 3 }; /* what `filled` says of a byte of the expected image */

/* The expected shared image of a load at coordinates at[] (img, and `filled` per byte); returns the number
 * of box elements outside the tensor. Every byte of the tile must be produced exactly once. */
static int ref_image(const rcase *c, const int32_t *at, int nan_fill) {
  const int E = c->E, lines = ref_lines(c), boxes = ref_inner(c) / (int)c->box[0];
  const uint32_t line_bytes = c->box[0] * (uint32_t)E, nb = (uint32_t)(c->rows * c->cols * E);
  uint32_t nlines = 1;
  for (int i = 1; i < c->rank; ++i)
    nlines *= ref_n(c, i);
  assert_int_equal(nlines, lines);                        /* the case table's box fits its tile */
  assert_int_equal((uint32_t)boxes * c->box[0], ref_inner(c));
  memset(filled, 0, nb);
  int outside = 0;
  for (int b = 0; b < boxes; ++b)
    for (int line = 0; line < lines; ++line)
      for (uint32_t i0 = 0; i0 < c->box[0]; ++i0) {
        int64_t g[5] = {(int64_t)at[0] + (int64_t)b * c->box[0] + i0, 0, 0, 0, 0};
        int rest = line, in = g[0] >= 0 && g[0] < (int64_t)c->dims[0];
        for (int i = 1; i < c->rank; ++i) {
          const int j = rest % (int)ref_n(c, i);
          rest /= (int)ref_n(c, i);
          g[i] = (int64_t)at[i] + (int64_t)j * c->es[i];
          in = in && g[i] >= 0 && g[i] < (int64_t)c->dims[i];
        }
        outside += !in;
        const uint32_t L = ((uint32_t)b * (uint32_t)lines + (uint32_t)line) * line_bytes + i0 * (uint32_t)E;
        const uint32_t phys = ref_swizzle(c->swz, L);
        assert_true(phys + (uint32_t)E <= nb);
        const size_t goff = in ? ref_goff(c, g) : 0;
        for (int k = 0; k < E; ++k) {
          assert_int_equal(filled[phys + (uint32_t)k], 0);
          filled[phys + (uint32_t)k] = (unsigned char)(in ? F_DATA : nan_fill ? F_NAN : F_ZERO);
          img[phys + (uint32_t)k] = in ? tensor[goff + (size_t)k] : 0;
        }
      }
  for (uint32_t i = 0; i < nb; ++i)
    assert_int_not_equal(filled[i], 0);
  return outside;
}

/* A NaN of the element type (any payload, either sign). */
static int is_nan_bits(kbd_tmap_dtype dt, const unsigned char *e) {
  if (dt == KBD_TMAP_DT_F32) {
    uint32_t u;
    memcpy(&u, e, 4);
    return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0;
  }
  uint16_t h;
  memcpy(&h, e, 2);
  return dt == KBD_TMAP_DT_BF16 && (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
}

/* Byte k (of element e) of the expected image at phys matches g[]? Elements start at multiples of E. */
static int ref_match(const rcase *c, const unsigned char *gotp, uint32_t phys) {
  const uint32_t e = phys - phys % (uint32_t)c->E;
  if (filled[phys] == F_NAN) return is_nan_bits(c->dt, gotp - (phys - e));
  return *gotp == img[phys];
}

static kbd_tensor_map_desc rk_desc(const rcase *c, int nan_fill) {
  kbd_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = c->dt;
  d.rank = (uint32_t)c->rank;
  d.global_address = dev_in;
  for (int i = 0; i < c->rank; ++i) {
    d.global_dims[i] = c->dims[i];
    d.box_dims[i] = c->box[i];
    d.element_strides[i] = c->es[i];
    if (i > 0) d.global_strides[i - 1] = c->strides[i - 1];
  }
  d.interleave = KBD_TMAP_INTERLEAVE_NONE;
  d.swizzle = c->swz;
  d.l2_promotion = KBD_TMAP_L2_128B;
  d.oob_fill = nan_fill ? KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA : KBD_TMAP_OOB_ZERO;
  return d;
}

static kbd_status rk_launch(const rcase *c, const int32_t *at, int nan_fill, int mode) {
  rk_params p;
  memset(&p, 0, sizeof p);
  const kbd_tensor_map_desc d = rk_desc(c, nan_fill);
  const kbd_status e = kbd_tensor_map_encode(&p.map, &d);
  if (e.code != KBD_OK) fail_msg("%s: encode: %s", c->name, e.msg);
  p.out = dev_out;
  for (int i = 0; i < 5; ++i)
    p.c[i] = at[i];
  p.mode = mode;
  return c->k(kbd_cfg_1d(1), p);
}

/* Load case c at at[] and compare the shared bytes and the (r, c) elements with the reference. */
static int check_at(const rcase *c, const int32_t *at, int nan_fill, long threads, long seed) {
  const int outside = ref_image(c, at, nan_fill);
  mt_env(threads, seed);
  const kbd_status s = rk_launch(c, at, nan_fill, M_LOAD);
  if (s.code != KBD_OK)
    fail_msg("%s at (%d,%d,%d,%d,%d) fill %s seed %ld: %s", c->name, at[0], at[1], at[2], at[3], at[4],
             nan_fill ? "NaN" : "zero", seed, s.msg);
  const uint32_t nb = (uint32_t)(c->rows * c->cols * c->E);
  assert_int_equal(kbd_copy_to_host(got, dev_out, 2 * (size_t)nb).code, KBD_OK);
  for (uint32_t i = 0; i < nb; ++i)
    if (!ref_match(c, got + i, i))
      fail_msg("%s at (%d,%d,%d,%d,%d) fill %s seed %ld threads %ld: shared byte %u is 0x%02x, want %s0x%02x",
               c->name, at[0], at[1], at[2], at[3], at[4], nan_fill ? "NaN" : "zero", seed, threads, i, got[i],
               filled[i] == F_NAN ? "a NaN, not " : "", img[i]);
  /* the tile's view: element (r, c) is box element (inner % box0, line outer) of box inner / box0 */
  for (int r = 0; r < c->rows; ++r)
    for (int col = 0; col < c->cols; ++col) {
      const int inner = c->major ? r : col, outer = c->major ? col : r;
      const uint32_t L = ((uint32_t)(inner / (int)c->box[0]) * (uint32_t)ref_lines(c) + (uint32_t)outer) *
                             c->box[0] * (uint32_t)c->E +
                         (uint32_t)(inner % (int)c->box[0]) * (uint32_t)c->E;
      const uint32_t phys = ref_swizzle(c->swz, L);
      for (int k = 0; k < c->E; ++k) {
        const unsigned char *gp = got + nb + ((size_t)r * (size_t)c->cols + (size_t)col) * (size_t)c->E + (size_t)k;
        if (!ref_match(c, gp, phys + (uint32_t)k))
          fail_msg("%s at (%d,%d,%d,%d,%d): tile element (%d, %d) byte %d is 0x%02x, want 0x%02x", c->name, at[0],
                   at[1], at[2], at[3], at[4], r, col, k, *gp, img[phys + (uint32_t)k]);
      }
    }
  return outside;
}

/* Every start for case c: inside; clipped low and high on each dimension alone (some elements in, some
 * out, where the box has two or more along it); clipped on all dimensions at once, low and high; wholly
 * outside past the far end of the last dimension and far before the start of dimension 0. Each under
 * seed 0 on one host thread and another seed on 1 or 2 threads, with the zero fill and (float types) the
 * NaN fill. */
static void run_case(const rcase *c) {
  ref_tensor(c);
  int32_t at[5];
  const int total = c->rows * c->cols;
  int run = 0;
  const int nfills = c->dt == KBD_TMAP_DT_U8 ? 1 : 2;
  for (int v = 0; v < 2 * c->rank + 5; ++v) {
    memcpy(at, c->in, sizeof at);
    for (int i = c->rank; i < 5; ++i)
      at[i] = 0;
    const int dim = v >= 1 && v <= 2 * c->rank ? (v - 1) / 2 : -1, low = v % 2;
    /* dimension 0 starts 3 elements before 0 or ends 3 past the end, so the tensor's edge cuts a 16-byte
     * unit (3 elements of 1, 2 or 4 bytes are never a whole unit); an outer dimension moves by one element
     * stride, leaving its first (low) or last (high) box element outside */
    const int span0 = ref_inner(c);
    int32_t lo[5], hi[5];
    lo[0] = -3;
    hi[0] = (int32_t)c->dims[0] - span0 + 3;
    for (int i = 1; i < c->rank; ++i) {
      lo[i] = -(int32_t)c->es[i];
      hi[i] = (int32_t)c->dims[i] - (int32_t)(c->es[i] * (ref_n(c, i) - 1));
      if (ref_n(c, i) == 1) hi[i] = (int32_t)c->dims[i]; /* a 1-element extent can only be wholly outside */
    }
    if (dim >= 0) at[dim] = low ? lo[dim] : hi[dim];
    if (v == 2 * c->rank + 1 || v == 2 * c->rank + 2)
      for (int i = 0; i < c->rank; ++i)
        at[i] = v == 2 * c->rank + 1 ? lo[i] : hi[i];
    if (v == 2 * c->rank + 3) at[c->rank - 1] = (int32_t)c->dims[c->rank - 1] + 2;
    if (v == 2 * c->rank + 4) at[0] = -300;
    for (int f = 0; f < nfills; ++f)
      for (int pass = 0; pass < 2; ++pass) {
        const long threads = pass == 0 ? 1 : 1 + ((run >> 1) & 1), seed = pass == 0 ? 0 : 1 + (run >> 1) % 7;
        const int outside = check_at(c, at, f, threads, seed);
        ++run;
        /* each start is what it claims to be */
        if (v == 0) assert_int_equal(outside, 0);
        if (v >= 1) assert_true(outside > 0);
        if (v >= 2 * c->rank + 3) assert_int_equal(outside, total);
        if (dim >= 0 && (dim == 0 || ref_n(c, dim) > 1) && outside == total)
          fail_msg("%s: the start clipped on dimension %d has no element inside", c->name, dim);
      }
  }
}

static void run_rank(int rank) {
  int swz_seen = 0, n = 0;
  for (int i = 0; i < NCASES; ++i)
    if (cases[i].rank == rank) {
      run_case(&cases[i]);
      swz_seen |= 1 << (int)cases[i].swz;
      ++n;
    }
  assert_true(n > 0);
  if (rank >= 4) /* every emulated mode: none, 32B, 64B, 128B (128B with 32-byte atoms: rank 4) */
    assert_true((swz_seen & 0xf) == 0xf);
}

static void test_rank1_images(void **state) {
  (void)state;
  run_rank(1);
}
static void test_rank4_images(void **state) {
  (void)state;
  run_rank(4);
}
static void test_rank5_images(void **state) {
  (void)state;
  run_rank(5);
}

/* The mbarrier gets the whole box however little of it is inside the tensor: expecting 16 bytes more
 * leaves exactly 16 outstanding, 16 fewer leaves exactly 16 landed unannounced - both a deadlock. */
static void test_tx_full_box(void **state) {
  (void)state;
  const struct {
    int ci;
    int32_t at[5];
  } tx[] = {
      {0, {-64, 0, 0, 0, 0}},      /* 1-D: no element inside */
      {0, {90, 0, 0, 0, 0}},       /* 1-D: 11 of 64 inside */
      {6, {-3, 3, 8, 2, 0}},       /* 4-D 128B: clipped on every dimension */
      {12, {40, -1, 2, 10, 2}},    /* 5-D with element strides: clipped on every dimension */
      {12, {0, 0, 0, 0, 5}},       /* 5-D: wholly outside */
  };
  for (int i = 0; i < (int)(sizeof tx / sizeof tx[0]); ++i) {
    const rcase *c = &cases[tx[i].ci];
    ref_tensor(c);
    const int outside = check_at(c, tx[i].at, 0, 1, 0); /* the exact expect-tx: completes, right image */
    assert_true(outside > 0);
    mt_env(1, 0);
    kbd_status s = rk_launch(c, tx[i].at, 0, M_TX_MORE);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    MT_ASSERT_HAS(s, ", 16 transaction bytes outstanding");
    s = rk_launch(c, tx[i].at, 0, M_TX_LESS);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    MT_ASSERT_HAS(s, ", 16 bytes landed that no expect-tx announced");
  }
}

/* The limits: outer box extents (over their element strides) that do not multiply to the tile's lines,
 * and a coordinate count other than the map's rank, are reported at the call. */
static void test_rank_limits(void **state) {
  (void)state;
  const rcase *c = &cases[12]; /* 5-D bf16 32x64 128B: 2 * 2 * 4 * 2 = 32 lines */
  ref_tensor(c);
  rcase bad = *c;
  bad.box[3] = 9; /* ceil(9 / 3) = 3: 24 lines */
  const int32_t at[5] = {0, 0, 0, 0, 0};
  kbd_status s = rk_launch(&bad, at, 0, M_LOAD);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "box is 128 x 24 bytes");
  MT_ASSERT_HAS(s, "multiplying to 32");
  bad = *c;
  bad.k = k_5c_4;
  s = rk_launch(&bad, at, 0, M_LOAD);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "with 4 coordinate(s), but the tensor map has rank 5");
  MT_ASSERT_OK(rk_launch(c, at, 0, M_LOAD)); /* the control */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_rank1_images), MT_TEST(test_rank4_images), MT_TEST(test_rank5_images),
      MT_TEST(test_tx_full_box),  MT_TEST(test_rank_limits),
  };
  return cmocka_run_group_tests(tests, group_setup, NULL);
}
