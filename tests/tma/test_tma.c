/* test_tma.c - TMA loads, stores, reductions and bulk groups on the CPU machine (kbd/tma.h, kbd/cpu/tma.h).
 *
 * Images: for shared tiles of every swizzle mode, both major-nesses and 1/2/4-byte elements (one box and
 * several boxes per tile), a TMA load at coordinates inside, hanging over the near edge (negative) and the
 * far edge puts every element where kbd_stile_ptr (kbd_smem_tile_offset) says, with zeros - or the NaN fill
 * the map asks for - outside the tensor; the mbarrier is credited the whole box either way (else the wait
 * would deadlock). 3D boxes and element strides flatten into tile lines as ptx-reference §2.5 derives.
 * Stores write exactly the in-bounds part of the box and nothing else (guard values around stay);
 * reductions apply add/min/max with the types the PTX table allows. Everything is checked against values
 * computed here from the coordinates, under several schedules.
 * Misuse, each reported in the first run under the default schedule: a read before the wait, a load from
 * warp-uniform code, a map whose swizzle / box / rank does not fit the tile, generic writes not fenced for
 * the async proxy before a store, a write to a store's source before wait_group_read, a warp ending with a
 * store not waited for, a store at negative coordinates, a reduction the type does not have.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tma.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

/* ---- kernels ------------------------------------------------------------------------------------------- */

typedef struct {
  kbd_tensor_map map;  /* loads read through it */
  kbd_tensor_map omap; /* stores / reductions write through it */
  unsigned char *out;  /* load tests: the tile's elements in (r, c) order, as bytes */
  int32_t x, y, z;     /* box coordinates */
  int mode;
} tma_params;

enum {
  T_LOAD,             /* load, wait, every warp copies the tile to out in (r, c) order */
  T_ROUNDTRIP,        /* load, wait, store the same tile through omap */
  T_REDUCE_ADD,       /* load, wait, reduce-add through omap */
  T_REDUCE_MIN,       /* ... min */
  T_REDUCE_MAX,       /* ... max */
  T_READ_EARLY,       /* warp 1 reads the tile without waiting */
  T_UNIFORM_ISSUE,    /* the load from warp-uniform code */
  T_STORE_NO_FENCE,   /* warps write the tile with generic stores, barrier, store: no proxy fence */
  T_STORE_FENCED,     /* the same with kbd_fence_proxy_async before the barrier: clean */
  T_STORE_NO_BARRIER, /* fenced, but the issuer does not wait for the other writers */
  T_STORE_OVERWRITE,  /* the issuer overwrites the source right after the store (no wait_group_read) */
  T_STORE_NO_WAIT,    /* commit, never wait: the warp ends with the store outstanding */
  T_STORE_NEGATIVE    /* a store at a negative coordinate */
};

static int tl_line;

/* Copy the tile to p.out in (r, c) order through the checked shared accesses; one warp per row slice. */
#define TMA_DUMP(t)                                                                                                    \
  for (int r = kbd_warp_id(); r < KBD_ROWS(t); r += 4)                                                   \
    for (int c = 0; c < KBD_COLS(t); ++c) {                                                                            \
      const unsigned char *e_ = (const unsigned char *)kbd_stile_ptr(t, r, c);                                          \
      for (int b_ = 0; b_ < KBD_ESIZE(t); ++b_)                                                                        \
        p.out[((size_t)r * KBD_COLS(t) + (size_t)c) * KBD_ESIZE(t) + (size_t)b_] = kbd_ld_shared(e_ + b_);             \
    }

/* One kernel per tile type: the modes above. 128 threads (4 warps); warp 0 issues. */
#define TMA_KERNEL(name, type, rank, ...)                                                                                   \
  KBD_KERNEL(name, 128, tma_params) {                                                                                  \
    KBD_SHARED_STILE(type, t);                                                                                         \
    KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);                                                                       \
    const int w = kbd_warp_id();                                                                                       \
    if (w == 0) {                                                                                                      \
      KBD_ELECT_ONE { kbd_mbarrier_init(&bar[0], 1); }                                                                 \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    if (p.mode >= T_STORE_NO_FENCE) {                                                                                  \
      tma_store_modes(p, t.p, (int)KBD_STILE_BYTES(t), w);                                                             \
      if (p.mode == T_STORE_NO_FENCE || p.mode == T_STORE_FENCED || p.mode == T_STORE_NO_BARRIER) {                    \
        if (w == 0) {                                                                                                  \
          KBD_ELECT_ONE {                                                                                              \
            MT_MARK(tl_line); kbd_tma_store2d(&p.omap, t, p.y, p.x);                                                     \
            kbd_bulk_commit_group();                                                                                   \
            kbd_bulk_wait_group(0);                                                                                    \
          }                                                                                                            \
        }                                                                                                              \
      } else if (p.mode == T_STORE_OVERWRITE || p.mode == T_STORE_NO_WAIT || p.mode == T_STORE_NEGATIVE) {             \
        if (w == 0) {                                                                                                  \
          KBD_ELECT_ONE {                                                                                              \
            MT_MARK(tl_line); kbd_tma_store2d(&p.omap, t, p.y, p.mode == T_STORE_NEGATIVE ? -1 : p.x);                   \
            kbd_bulk_commit_group();                                                                                   \
            if (p.mode == T_STORE_OVERWRITE) kbd_st_shared((unsigned char *)t.p + 5, (unsigned char)1);                \
            if (p.mode != T_STORE_NO_WAIT) kbd_bulk_wait_group(0);                                                     \
          }                                                                                                            \
        }                                                                                                              \
      }                                                                                                                \
      return;                                                                                                          \
    }                                                                                                                  \
    if (w == 0 && p.mode != T_UNIFORM_ISSUE) {                                                                         \
      KBD_ELECT_ONE {                                                                                                  \
        kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(t));                                                    \
        kbd_tma_load##rank(t, &p.map, &bar[0], __VA_ARGS__);                                                             \
      }                                                                                                                \
    }                                                                                                                  \
    if (w == 0 && p.mode == T_UNIFORM_ISSUE) {                                                                         \
      MT_MARK(tl_line); kbd_tma_load##rank(t, &p.map, &bar[0], __VA_ARGS__);                                             \
    }                                                                                                                  \
    if (p.mode == T_READ_EARLY && w == 1) {                                                                            \
      MT_MARK(tl_line); (void)kbd_ld_shared((const unsigned char *)t.p);                                               \
    }                                                                                                                  \
    kbd_mbarrier_wait(&bar[0], 0);                                                                                     \
    if (p.mode == T_LOAD) {                                                                                            \
      TMA_DUMP(t);                                                                                                     \
    } else if (w == 0 && p.mode >= T_ROUNDTRIP && p.mode <= T_REDUCE_MAX) {                                           \
      KBD_ELECT_ONE {                                                                                                  \
        if (p.mode == T_ROUNDTRIP) kbd_tma_store##rank(&p.omap, t, __VA_ARGS__);                                         \
        if (p.mode == T_REDUCE_ADD) kbd_tma_reduce_add##rank(&p.omap, t, __VA_ARGS__);                                   \
        if (p.mode == T_REDUCE_MIN) kbd_tma_reduce_min##rank(&p.omap, t, __VA_ARGS__);                                   \
        if (p.mode == T_REDUCE_MAX) kbd_tma_reduce_max##rank(&p.omap, t, __VA_ARGS__);                                   \
        kbd_bulk_commit_group();                                                                                       \
        kbd_bulk_wait_group(0);                                                                                        \
      }                                                                                                                \
    }                                                                                                                  \
  }

/* The generic-store modes: every warp writes its rows of the source tile (bytes b: (b * 7) & 0xff). */
static inline void tma_store_modes(tma_params p, void *base, int bytes, int w) {
  unsigned char *s = (unsigned char *)base;
  const int per = bytes / 4;
  for (int b = w * per; b < (w + 1) * per; ++b)
    kbd_st_shared(s + b, (unsigned char)((b * 7) & 0xff));
  if (p.mode != T_STORE_NO_FENCE) kbd_fence_proxy_async();
  if (p.mode != T_STORE_NO_BARRIER) kbd_sync();
}

/* The tile types under test (type, dtype size, rows, cols, swizzle, major). */
typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) ty_a;     /* 2 boxes of 64 x 64 */
typedef KBD_STILE(f32, 32, 32, KBD_SWIZZLE_32B) ty_b;        /* 4 boxes of 8 x 32 lines */
typedef KBD_STILE(bf16, 16, 64, KBD_SWIZZLE_64B) ty_c;       /* 2 boxes */
typedef KBD_STILE(bf16, 24, 48, KBD_SWIZZLE_NONE) ty_d;      /* 1 box, 96-byte lines */
typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) ty_e;   /* MN-major: inner = rows */
typedef KBD_STILE_MN(f32, 64, 16, KBD_SWIZZLE_128B_ATOM32) ty_f; /* 2 boxes of 32 f32 x 16 */
typedef KBD_STILE(e4m3, 32, 256, KBD_SWIZZLE_128B) ty_g;     /* 1-byte elements, 2 boxes */
typedef KBD_STILE(f32, 8, 32, KBD_SWIZZLE_NONE) ty_h;        /* 3D / element-stride boxes */
typedef KBD_STILE(i32, 8, 32, KBD_SWIZZLE_NONE) ty_i;        /* integer reductions */

TMA_KERNEL(k_a, ty_a, 2d, p.y, p.x)
TMA_KERNEL(k_b, ty_b, 2d, p.y, p.x)
TMA_KERNEL(k_c, ty_c, 2d, p.y, p.x)
TMA_KERNEL(k_d, ty_d, 2d, p.y, p.x)
TMA_KERNEL(k_e, ty_e, 2d, p.y, p.x)
TMA_KERNEL(k_f, ty_f, 2d, p.y, p.x)
TMA_KERNEL(k_g, ty_g, 2d, p.y, p.x)
TMA_KERNEL(k_h, ty_h, 3d, p.z, p.y, p.x)
TMA_KERNEL(k_i, ty_i, 2d, p.y, p.x)

typedef kbd_status (*tma_kernel)(kbd_launch_cfg, tma_params);

typedef struct {
  const char *name;
  tma_kernel k;
  kbd_tmap_dtype dt;
  int esize, rows, cols, major; /* the tile */
  kbd_tmap_swizzle swz;
  uint32_t box_inner, box_lines; /* the 2D map's box */
} tcase;

static const tcase cases[] = {
    {"bf16 64x128 128B", k_a, KBD_TMAP_DT_BF16, 2, 64, 128, 0, KBD_TMAP_SWIZZLE_128B, 64, 64},
    {"f32 32x32 32B", k_b, KBD_TMAP_DT_F32, 4, 32, 32, 0, KBD_TMAP_SWIZZLE_32B, 8, 32},
    {"bf16 16x64 64B", k_c, KBD_TMAP_DT_BF16, 2, 16, 64, 0, KBD_TMAP_SWIZZLE_64B, 32, 16},
    {"bf16 24x48 none", k_d, KBD_TMAP_DT_BF16, 2, 24, 48, 0, KBD_TMAP_SWIZZLE_NONE, 48, 24},
    {"bf16 64x64 128B MN", k_e, KBD_TMAP_DT_BF16, 2, 64, 64, 1, KBD_TMAP_SWIZZLE_128B, 64, 64},
    {"f32 64x16 128B/32B-atom MN", k_f, KBD_TMAP_DT_F32, 4, 64, 16, 1, KBD_TMAP_SWIZZLE_128B_ATOM_32B, 32, 16},
    {"e4m3 32x256 128B", k_g, KBD_TMAP_DT_U8, 1, 32, 256, 0, KBD_TMAP_SWIZZLE_128B, 128, 32},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* The global tensor of a case: inner extent GI, outer GO (K-major: GO rows x GI cols; MN-major: the tile's
 * rows run along the inner dimension). Element bytes = a hash of (outer, inner, byte), never the fill. */
#define GI 160
#define GO 90
static unsigned char gbyte(int o, int i, int b) { return (unsigned char)(((o * 131 + i * 29 + b * 7) % 251) + 1); }

static unsigned char *dev_in, *dev_out, *host_buf;
static int group_setup(void **state) {
  (void)state;
  if (kbd_malloc((void **)&dev_in, GI * GO * 4).code != KBD_OK) return -1;
  if (kbd_malloc((void **)&dev_out, 1 << 20).code != KBD_OK) return -1;
  host_buf = malloc(1 << 20);
  return host_buf ? 0 : -1;
}

/* Fill the input tensor for element size E (row pitch GI * E bytes). */
static void fill_input(int E) {
  for (int o = 0; o < GO; ++o)
    for (int i = 0; i < GI; ++i)
      for (int b = 0; b < E; ++b)
        host_buf[((size_t)o * GI + i) * E + b] = gbyte(o, i, b);
  assert_int_equal(kbd_copy_to_device(dev_in, host_buf, (size_t)GI * GO * E).code, KBD_OK);
}

static kbd_tensor_map_desc desc2d(const tcase *c, const void *base) {
  kbd_tensor_map_desc d =
      kbd_tensor_map_desc_2d(c->dt, base, GO, GI, (uint64_t)GI * c->esize, c->box_lines, c->box_inner, c->swz);
  return d;
}

static kbd_status launch(tma_kernel k, tma_params p) { return k(kbd_cfg_1d(1), p); }

/* Load case c at (x, y) and compare every tile element with the tensor (or 0 outside). */
static void check_load(const tcase *c, int x, int y, long seed) {
  fill_input(c->esize);
  tma_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = desc2d(c, dev_in);
  assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
  p.out = dev_out;
  p.x = x;
  p.y = y;
  p.mode = T_LOAD;
  mt_env(1, seed);
  const kbd_status s = launch(c->k, p);
  if (s.code != KBD_OK) fail_msg("%s at (%d, %d): %s", c->name, x, y, s.msg);
  const size_t n = (size_t)c->rows * c->cols * c->esize;
  assert_int_equal(kbd_copy_to_host(host_buf, dev_out, n).code, KBD_OK);
  for (int r = 0; r < c->rows; ++r)
    for (int col = 0; col < c->cols; ++col) {
      const int inner = x + (c->major ? r : col), outer = y + (c->major ? col : r);
      const int in = inner >= 0 && inner < GI && outer >= 0 && outer < GO;
      for (int b = 0; b < c->esize; ++b) {
        const unsigned char got = host_buf[((size_t)r * c->cols + col) * c->esize + b];
        const unsigned char want = in ? gbyte(outer, inner, b) : 0;
        if (got != want)
          fail_msg("%s at (%d, %d): element (%d, %d) byte %d is %u, want %u", c->name, x, y, r, col, b, got, want);
      }
    }
}

static void test_load_images(void **state) {
  (void)state;
  const int at[][2] = {{0, 0}, {16, 8}, {-5, -3}, {GI - 20, GO - 7}, {-200, 0}, {GI + 4, GO + 1}};
  for (int i = 0; i < NCASES; ++i)
    for (int j = 0; j < 6; ++j)
      check_load(&cases[i], at[j][0], at[j][1], j == 0 ? -1 : j);
}

/* Loads under several schedules and 2 host threads (the data must not depend on them). */
static void test_load_schedules(void **state) {
  (void)state;
  for (long seed = 1; seed < 6; ++seed) {
    check_load(&cases[0], 3, -2, seed);
    check_load(&cases[4], -7, 11, seed);
  }
}

/* OOB fill with the NaN request: f32 elements outside read back as NaN, inside as data. */
static void test_oob_nan_fill(void **state) {
  (void)state;
  const tcase *c = &cases[1];
  fill_input(4);
  tma_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = desc2d(c, dev_in);
  d.oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA;
  assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
  p.out = dev_out;
  p.x = GI - 10;
  p.y = -4;
  MT_ASSERT_OK(launch(c->k, p));
  assert_int_equal(kbd_copy_to_host(host_buf, dev_out, 32 * 32 * 4).code, KBD_OK);
  int nans = 0;
  for (int r = 0; r < 32; ++r)
    for (int col = 0; col < 32; ++col) {
      float f;
      memcpy(&f, host_buf + ((size_t)r * 32 + col) * 4, 4);
      const int out = p.x + col >= GI || p.y + r < 0;
      assert_true(out ? isnan(f) : !isnan(f));
      nans += out;
    }
  assert_int_equal(nans, 32 * 32 - 10 * 28);
}

/* 3D: dims {GI, 10, 9} f32, box {32, 4, 2}: tile line l = i1 + 4 * i2. Then element strides {1, 2, 1}
 * over box {32, 8, 1}: ceil(8 / 2) = 4 lines... times box 2 in dim 2 = 8 lines, line j from coordinate y + 2j. */
static void check_3d(int estride) {
  fill_input(4); /* viewed as [9][10][GI] f32: outer index o = y + 10 * z */
  tma_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = KBD_TMAP_DT_F32;
  d.rank = 3;
  d.global_address = dev_in;
  d.global_dims[0] = GI;
  d.global_dims[1] = 10;
  d.global_dims[2] = 9;
  d.global_strides[0] = GI * 4;
  d.global_strides[1] = GI * 4 * 10;
  d.box_dims[0] = 32;
  d.box_dims[1] = estride == 1 ? 4 : 8;
  d.box_dims[2] = 2;
  d.element_strides[0] = d.element_strides[2] = 1;
  d.element_strides[1] = (uint32_t)estride;
  d.l2_promotion = KBD_TMAP_L2_128B;
  assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
  p.out = dev_out;
  p.x = 5;
  p.y = 7; /* dimension 1 runs past 10 for some lines */
  p.z = 3;
  MT_ASSERT_OK(launch(k_h, p));
  assert_int_equal(kbd_copy_to_host(host_buf, dev_out, 8 * 32 * 4).code, KBD_OK);
  for (int l = 0; l < 8; ++l)
    for (int col = 0; col < 32; ++col) {
      const int i1 = l % 4, i2 = l / 4;
      const int y = p.y + i1 * estride, z = p.z + i2, x = p.x + col;
      const int in = y < 10 && z < 9 && x < GI;
      for (int b = 0; b < 4; ++b)
        assert_int_equal(host_buf[((size_t)l * 32 + col) * 4 + b], in ? gbyte(y + 10 * z, x, b) : 0);
    }
}
static void test_load_3d(void **state) {
  (void)state;
  check_3d(1);
  check_3d(2);
}

/* Stores: load at (x, y), store the tile through a map of the output tensor at the same place; the output
 * equals the input inside the box and the tensor, and keeps its guard bytes everywhere else. */
static void check_roundtrip(const tcase *c, int x, int y) {
  fill_input(c->esize);
  const size_t n = (size_t)GI * GO * c->esize;
  memset(host_buf + n, 0xee, n);
  assert_int_equal(kbd_copy_to_device(dev_out, host_buf + n, n).code, KBD_OK);
  tma_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = desc2d(c, dev_in);
  assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
  d.global_address = dev_out;
  assert_int_equal(kbd_tensor_map_encode(&p.omap, &d).code, KBD_OK);
  p.x = x;
  p.y = y;
  p.mode = T_ROUNDTRIP;
  const kbd_status s = launch(c->k, p);
  if (s.code != KBD_OK) fail_msg("%s store at (%d, %d): %s", c->name, x, y, s.msg);
  assert_int_equal(kbd_copy_to_host(host_buf, dev_out, n).code, KBD_OK);
  const int ni = c->major ? c->rows : c->cols, no = c->major ? c->cols : c->rows;
  for (int o = 0; o < GO; ++o)
    for (int i = 0; i < GI; ++i) {
      const int in = i >= x && i < x + ni && o >= y && o < y + no;
      for (int b = 0; b < c->esize; ++b) {
        const unsigned char got = host_buf[((size_t)o * GI + i) * c->esize + b];
        const unsigned char want = in ? gbyte(o, i, b) : 0xee;
        if (got != want)
          fail_msg("%s store at (%d, %d): tensor (%d, %d) byte %d is %u, want %u", c->name, x, y, o, i, b, got, want);
      }
    }
}
static void test_store_roundtrip(void **state) {
  (void)state;
  for (int i = 0; i < NCASES; ++i) {
    check_roundtrip(&cases[i], 0, 0);
    check_roundtrip(&cases[i], GI - 33, GO - 5); /* clipped at the far edges */
  }
}

/* Reductions: out starts at a known tensor; out op= tile over the box. */
static void test_reduce_f32_bf16_i32(void **state) {
  (void)state;
  /* f32 add: tile of case b (f32 32x32 32B) loaded from in, added into out = 0.5 everywhere */
  {
    const tcase *c = &cases[1];
    fill_input(4);
    float *o = (float *)(host_buf + (1 << 19));
    for (int i = 0; i < GI * GO; ++i)
      o[i] = 0.5f;
    assert_int_equal(kbd_copy_to_device(dev_out, o, (size_t)GI * GO * 4).code, KBD_OK);
    tma_params p;
    memset(&p, 0, sizeof p);
    kbd_tensor_map_desc d = desc2d(c, dev_in);
    assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
    d.global_address = dev_out;
    assert_int_equal(kbd_tensor_map_encode(&p.omap, &d).code, KBD_OK);
    p.x = 4;
    p.y = 2;
    p.mode = T_REDUCE_ADD;
    MT_ASSERT_OK(launch(c->k, p));
    assert_int_equal(kbd_copy_to_host(o, dev_out, (size_t)GI * GO * 4).code, KBD_OK);
    for (int r = 0; r < GO; ++r)
      for (int i = 0; i < GI; ++i) {
        float want = 0.5f;
        if (i >= 4 && i < 36 && r >= 2 && r < 34) {
          float v;
          const unsigned char b[4] = {gbyte(r, i, 0), gbyte(r, i, 1), gbyte(r, i, 2), gbyte(r, i, 3)};
          memcpy(&v, b, 4);
          want = kbd_f32_add_ftz(0.5f, v);
        }
        const float got = o[(size_t)r * GI + i];
        assert_memory_equal(&got, &want, 4);
      }
    /* f32 has no .min in the PTX table: a clear error */
    p.mode = T_REDUCE_MIN;
    const kbd_status s = launch(c->k, p);
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    MT_ASSERT_HAS(s, "has no such reduction");
  }
  /* bf16 add / min / max over case a's geometry, with small integer values (exact in bf16) */
  {
    const tcase *c = &cases[0];
    kbd_bf16 *in = (kbd_bf16 *)host_buf, *o = (kbd_bf16 *)(host_buf + (1 << 19));
    for (int i = 0; i < GI * GO; ++i) {
      in[i] = kbd_f32_to_bf16((float)(i % 13) - 6.0f);
      o[i] = kbd_f32_to_bf16((float)(i % 7) - 3.0f);
    }
    assert_int_equal(kbd_copy_to_device(dev_in, in, (size_t)GI * GO * 2).code, KBD_OK);
    for (int mode = T_REDUCE_ADD; mode <= T_REDUCE_MAX; ++mode) {
      assert_int_equal(kbd_copy_to_device(dev_out, o, (size_t)GI * GO * 2).code, KBD_OK);
      tma_params p;
      memset(&p, 0, sizeof p);
      kbd_tensor_map_desc d = desc2d(c, dev_in);
      assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
      d.global_address = dev_out;
      assert_int_equal(kbd_tensor_map_encode(&p.omap, &d).code, KBD_OK);
      p.x = 30;
      p.y = 40; /* rows 40..89 of 90: the box's last 14 rows are outside */
      p.mode = mode;
      MT_ASSERT_OK(launch(c->k, p));
      kbd_bf16 *res = (kbd_bf16 *)(host_buf + (1 << 18));
      assert_int_equal(kbd_copy_to_host(res, dev_out, (size_t)GI * GO * 2).code, KBD_OK);
      for (int r = 0; r < GO; ++r)
        for (int i = 0; i < GI; ++i) {
          const int k = r * GI + i;
          const float a = (float)(k % 7) - 3.0f, b = (float)(k % 13) - 6.0f;
          const int inb = i >= 30 && i < 30 + 128 && r >= 40;
          const float want = !inb ? a : mode == T_REDUCE_ADD ? a + b : mode == T_REDUCE_MIN ? fminf(a, b) : fmaxf(a, b);
          if (kbd_bf16_to_f32(res[k]) != want)
            fail_msg("bf16 reduce mode %d at (%d, %d): %g, want %g", mode, r, i, kbd_bf16_to_f32(res[k]), want);
        }
    }
  }
  /* i32 max through a NONE tile */
  {
    int32_t *in = (int32_t *)host_buf, *o = (int32_t *)(host_buf + (1 << 19));
    for (int i = 0; i < GI * GO; ++i) {
      in[i] = (i * 37) % 101 - 50;
      o[i] = (i * 11) % 61 - 30;
    }
    assert_int_equal(kbd_copy_to_device(dev_in, in, (size_t)GI * GO * 4).code, KBD_OK);
    assert_int_equal(kbd_copy_to_device(dev_out, o, (size_t)GI * GO * 4).code, KBD_OK);
    tma_params p;
    memset(&p, 0, sizeof p);
    kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_I32, dev_in, GO, GI, GI * 4, 8, 32, KBD_TMAP_SWIZZLE_NONE);
    assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
    d.global_address = dev_out;
    assert_int_equal(kbd_tensor_map_encode(&p.omap, &d).code, KBD_OK);
    p.x = 100;
    p.y = 50;
    p.mode = T_REDUCE_MAX;
    MT_ASSERT_OK(launch(k_i, p));
    int32_t *res = (int32_t *)(host_buf + (1 << 18));
    assert_int_equal(kbd_copy_to_host(res, dev_out, (size_t)GI * GO * 4).code, KBD_OK);
    for (int r = 0; r < GO; ++r)
      for (int i = 0; i < GI; ++i) {
        const int k = r * GI + i, inb = i >= 100 && i < 132 && r >= 50 && r < 58;
        const int32_t want = inb && in[k] > o[k] ? in[k] : o[k];
        assert_int_equal(res[k], want);
      }
  }
}

/* ---- misuse ---------------------------------------------------------------------------------------------- */

static kbd_status run_mode(const tcase *c, int mode, kbd_tensor_map_desc *override) {
  fill_input(c->esize);
  tma_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = override ? *override : desc2d(c, dev_in);
  assert_int_equal(kbd_tensor_map_encode(&p.map, &d).code, KBD_OK);
  d.global_address = dev_out;
  assert_int_equal(kbd_tensor_map_encode(&p.omap, &d).code, KBD_OK);
  p.out = dev_out;
  p.mode = mode;
  return launch(c->k, p);
}

static void test_read_before_wait(void **state) {
  (void)state;
  /* Default schedule: warp 0 issues and waits (the data lands), then warp 1 reads without waiting. */
  kbd_status s = run_mode(&cases[0], T_READ_EARLY, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(tl_line));
  MT_ASSERT_HAS(s, "an asynchronous copy (TMA) issued by warp 0");
  MT_ASSERT_HAS(s, "the reader did not wait on the copy's mbarrier phase");
  /* Other schedules: before the issue (never written) or while the copy is in flight (pending); never clean. */
  for (long seed = 1; seed < 8; ++seed) {
    mt_env(1, seed);
    s = run_mode(&cases[0], T_READ_EARLY, NULL);
    if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("seed %ld: %s", seed, s.msg);
    MT_ASSERT_AT(s, MT_LINE(tl_line));
  }
}

static void test_uniform_issue(void **state) {
  (void)state;
  const kbd_status s = run_mode(&cases[0], T_UNIFORM_ISSUE, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_ISSUE);
  MT_ASSERT_AT(s, MT_LINE(tl_line));
  MT_ASSERT_HAS(s, "kbd_tma_load2d in warp-uniform code");
}

static void test_map_mismatch(void **state) {
  (void)state;
  const tcase *c = &cases[0];
  kbd_tensor_map_desc d = desc2d(c, dev_in);
  d.swizzle = KBD_TMAP_SWIZZLE_64B;
  d.box_dims[0] = 32; /* a valid map for 64B, not for this tile */
  kbd_status s = run_mode(c, T_LOAD, &d);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "the tensor map's swizzle is 64B but the shared tile's is 128B");
  d = desc2d(c, dev_in);
  d.box_dims[1] = 32;
  s = run_mode(c, T_LOAD, &d);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "box is 128 x 32 bytes");
  MT_ASSERT_HAS(s, "takes boxes of 128-byte lines x 64 lines");
  s = run_mode(&cases[1], T_LOAD, NULL); /* the baseline of case b runs */
  MT_ASSERT_OK(s);
  d = desc2d(&cases[1], dev_in);
  d.rank = 1;
  s = run_mode(&cases[1], T_LOAD, &d);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "with 2 coordinate(s), but the tensor map has rank 1");
}

static void test_store_without_fence(void **state) {
  (void)state;
  kbd_status s = run_mode(&cases[0], T_STORE_NO_FENCE, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(tl_line));
  MT_ASSERT_HAS(s, "through the async proxy");
  MT_ASSERT_HAS(s, "has not executed fence.proxy.async since");
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    MT_ASSERT_OK(run_mode(&cases[0], T_STORE_FENCED, NULL));
  }
  mt_env(1, 0);
  /* Without the barrier the issuer (warp 0, first to run) stores bytes the other warps have not written yet;
   * under other schedules they may have, unordered: a race. Never clean. */
  s = run_mode(&cases[0], T_STORE_NO_BARRIER, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_HAS(s, "kbd_tma_store2d reads never-written shared memory");
  for (long seed = 1; seed < 8; ++seed) {
    mt_env(1, seed);
    s = run_mode(&cases[0], T_STORE_NO_BARRIER, NULL);
    if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("seed %ld: %s", seed, s.msg);
  }
}

static void test_store_source_overwritten(void **state) {
  (void)state;
  const kbd_status s = run_mode(&cases[0], T_STORE_OVERWRITE, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_HAS(s, "may still be reading");
  MT_ASSERT_HAS(s, "kbd_tma_store2d issued at");
}

static void test_store_not_waited(void **state) {
  (void)state;
  const kbd_status s = run_mode(&cases[0], T_STORE_NO_WAIT, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_MBARRIER);
  MT_ASSERT_AT(s, MT_LINE(tl_line));
  MT_ASSERT_HAS(s, "was not waited for");
}

static void test_store_negative(void **state) {
  (void)state;
  const kbd_status s = run_mode(&cases[0], T_STORE_NEGATIVE, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(tl_line));
  MT_ASSERT_HAS(s, "kbd_tma_store2d: col is -1; a TMA store's box must start at non-negative coordinates");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_load_images),        MT_TEST(test_load_schedules),      MT_TEST(test_oob_nan_fill),
      MT_TEST(test_load_3d),            MT_TEST(test_store_roundtrip),     MT_TEST(test_reduce_f32_bf16_i32),
      MT_TEST(test_read_before_wait),   MT_TEST(test_uniform_issue),       MT_TEST(test_map_mismatch),
      MT_TEST(test_store_without_fence), MT_TEST(test_store_source_overwritten), MT_TEST(test_store_not_waited),
      MT_TEST(test_store_negative),
  };
  return cmocka_run_group_tests(tests, group_setup, NULL);
}
