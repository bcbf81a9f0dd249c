/* tests/smem/test_swizzle.c - the shared-memory swizzles and shared tile offsets of kbd/swizzle.h.
 *
 *   (a) tables: every line (row phase) of every mode against the PTX ISA 9.2 §5.5.7 pattern tables,
 *       transcribed below as data; on offsets, on absolute addresses, and from a misaligned base;
 *   (b) tiles: kbd_smem_tile_offset == an independent TMA-box image (ptx-reference §2.5: boxes of span
 *       bytes side by side, each box's rows at pitch = span) placed through the tables, for every mode,
 *       dtype size, major-ness and many shapes; 8 rows x 16-byte chunks read out of the tables by hand;
 *   (c) exhaustive: bijection onto [0, R*C*esize), contiguous ordered chunks, alignment claims;
 *   (d) properties: involution, a permutation within each repeat, only the chunk bits change;
 *       8 consecutive rows of one 16-byte column hit 8 different bank groups (and do not without swizzle);
 *   (e) MMA descriptors: the ptx-reference §4.6 address formulas with kbd_smem_desc_sbo/lbo reproduce the
 *       tile offsets;
 *   (f) shape rules: function, constant expression and static assertion agree; each rule's message.
 * The expected values never call the formulas of kbd/swizzle.h: they come from the tables and the TMA
 * image below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kbd/swizzle.h"

/* ---- PTX ISA 9.2 §5.5.7 "Swizzling Modes", the pattern tables ---------------------------------------------
 * Row y = 128-byte line y of the pattern (the pattern repeats after the last row), entry x = the number of
 * the 16-byte chunk of the source that the destination holds at chunk position x of that line. The
 * 32-byte-atom table is written in 16-byte chunk numbers too ("0 1 | 2 3 | ..." = pairs kept intact). */
static const int tab_none[1][8] = {{0, 1, 2, 3, 4, 5, 6, 7}};
static const int tab_32b[2][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},
    {1, 0, 3, 2, 5, 4, 7, 6},
};
static const int tab_64b[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},
    {1, 0, 3, 2, 5, 4, 7, 6},
    {2, 3, 0, 1, 6, 7, 4, 5},
    {3, 2, 1, 0, 7, 6, 5, 4},
};
static const int tab_128b[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},
    {1, 0, 3, 2, 5, 4, 7, 6},
    {2, 3, 0, 1, 6, 7, 4, 5},
    {3, 2, 1, 0, 7, 6, 5, 4},
    {4, 5, 6, 7, 0, 1, 2, 3},
    {5, 4, 7, 6, 1, 0, 3, 2},
    {6, 7, 4, 5, 2, 3, 0, 1},
    {7, 6, 5, 4, 3, 2, 1, 0},
};
static const int tab_128b_atom32[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},
    {2, 3, 0, 1, 6, 7, 4, 5},
    {4, 5, 6, 7, 0, 1, 2, 3},
    {6, 7, 4, 5, 2, 3, 0, 1},
};

typedef struct mode_info {
  int mode;
  const char *name;
  int lines;             /* rows of its table */
  const int (*tab)[8];   /* the table */
  int span, repeat;      /* from ptx-reference §2.3/§3 (span: largest inner box bytes; repeat: period) */
  int align, unit;       /* kbd's base alignment, bytes kept intact */
} mode_info;

static const mode_info modes[] = {
    {KBD_SWIZZLE_NONE, "none", 1, tab_none, 0, 0, 128, 16},
    {KBD_SWIZZLE_32B, "32B", 2, tab_32b, 32, 256, 256, 16},
    {KBD_SWIZZLE_64B, "64B", 4, tab_64b, 64, 512, 512, 16},
    {KBD_SWIZZLE_128B, "128B", 8, tab_128b, 128, 1024, 1024, 16},
    {KBD_SWIZZLE_128B_ATOM32, "128B_ATOM32", 4, tab_128b_atom32, 128, 512, 512, 32},
};
#define NMODES ((int)(sizeof modes / sizeof modes[0]))

/* Table lookup of the physical address of logical (absolute) address a: the line keeps its place, the
 * logical chunk j goes to the position x whose table entry is j, the byte inside the chunk keeps its place. */
static uint32_t ref_swizzle(const mode_info *m, uint32_t a) {
  const uint32_t line = a / 128u, j = (a % 128u) / 16u;
  const int *row = m->tab[line % (uint32_t)m->lines];
  for (uint32_t x = 0; x < 8; ++x)
    if ((uint32_t)row[x] == j) return line * 128u + x * 16u + a % 16u;
  fail_msg("table row without chunk %u", j);
  return 0;
}

/* The TMA image of a tile (ptx-reference §2.5), written box by box: the contiguous dimension is cut into
 * boxes of `span` bytes (NONE: one box of the whole extent), each box {inner = span/esize, outer = O}
 * (O = the strided extent; a box is at most 256 tall, but stacking boxes along the outer dimension
 * continues the same pitch, so it is written as one), boxes one after another from `base`.
 * Box element (i0, i1) -> logical L = i1*P + i0*esize with pitch P = span, then the table swizzle on the
 * absolute address. Returns the offset from base. */
static int ref_tile_offset(const mode_info *m, uint32_t base, int esize, int rows, int cols, int major, int r,
                           int c) {
  const int mn = major == KBD_SMEM_MN_MAJOR;
  const int inner_n = mn ? rows : cols, outer_n = mn ? cols : rows;
  const int inner_i = mn ? r : c, outer_i = mn ? c : r;
  const int box_inner = (m->span ? m->span : inner_n * esize) / esize;
  const int box = inner_i / box_inner, i0 = inner_i % box_inner, i1 = outer_i;
  const int pitch = box_inner * esize;
  const uint32_t dst = base + (uint32_t)(box * outer_n * pitch);
  const uint32_t L = (uint32_t)(i1 * pitch + i0 * esize);
  return (int)(ref_swizzle(m, dst + L) - base);
}

/* ---- (a) tables ----------------------------------------------------------------------------------------- */

static void test_mode_facts(void **state) {
  (void)state;
  for (int i = 0; i < NMODES; ++i) {
    const mode_info *m = &modes[i];
    assert_int_equal(kbd_swizzle_span_bytes(m->mode), m->span);
    assert_int_equal(kbd_swizzle_repeat_bytes(m->mode), m->repeat);
    assert_int_equal(kbd_swizzle_align_bytes(m->mode), m->align);
    assert_int_equal(kbd_swizzle_unit_bytes(m->mode), m->unit);
    /* the repeat is the table's height in 128-byte lines */
    if (m->mode != KBD_SWIZZLE_NONE) assert_int_equal(m->repeat, 128 * m->lines);
  }
  assert_int_equal(KBD_SWIZZLE_COUNT, NMODES);
  /* unknown modes are the identity and have no span */
  assert_int_equal(kbd_swizzle_apply(9, 0x3F0u), 0x3F0u);
  assert_int_equal(kbd_swizzle_span_bytes(-1), 0);
}

/* Every byte of every line of three repeats, against the table (every row phase of every mode). */
static void test_tables_every_phase(void **state) {
  (void)state;
  for (int i = 0; i < NMODES; ++i) {
    const mode_info *m = &modes[i];
    for (uint32_t y = 0; y < (uint32_t)(3 * m->lines); ++y)
      for (uint32_t x = 0; x < 8; ++x)
        for (uint32_t b = 0; b < 16; ++b) {
          const uint32_t logical = y * 128u + (uint32_t)m->tab[y % (uint32_t)m->lines][x] * 16u + b;
          const uint32_t physical = y * 128u + x * 16u + b;
          if (kbd_swizzle_apply(m->mode, logical) != physical)
            fail_msg("%s: line %u chunk %d byte %u -> %u, table says position %u (%u)", m->name, y,
                     m->tab[y % (uint32_t)m->lines][x], b, kbd_swizzle_apply(m->mode, logical), x, physical);
        }
  }
}

/* The same on absolute shared-window addresses: from a base aligned to the repeat the pattern is the
 * table's from row 0; from a base at line p of the repeat it starts at row p (the CPG index relation
 * smem[y][x] <-> smem[y][((y + p) % lines) ^ x], ptx-reference §3) and kbd_swizzle_phase says p. */
static void test_tables_absolute_and_base_offset(void **state) {
  (void)state;
  for (int i = 0; i < NMODES; ++i) {
    const mode_info *m = &modes[i];
    for (uint32_t p = 0; p < 16; ++p) {
      const uint32_t base = 0x8000u + 128u * p; /* 0x8000 is a multiple of every repeat */
      assert_int_equal(kbd_swizzle_phase(m->mode, base), m->mode == KBD_SWIZZLE_NONE ? 0 : (int)(p % (uint32_t)m->lines));
      for (uint32_t y = 0; y < (uint32_t)m->lines; ++y)
        for (uint32_t x = 0; x < 8; ++x) {
          const int j = m->tab[(y + p) % (uint32_t)m->lines][x];
          assert_int_equal(kbd_swizzle_apply(m->mode, base + y * 128u + (uint32_t)j * 16u), base + y * 128u + x * 16u);
        }
    }
  }
}

/* Tile level, read straight out of the tables: a K-major tile with rows of exactly one span holds 128/span
 * rows per 128-byte line, so row r lies in line r/(128/span) at chunk (r % (128/span))*(span/16) + j of
 * that line (64B: rows 2y and 2y+1 share line y). Every dtype, rows 0..2*lines*(128/span)-1. */
static void test_tile_rows_from_tables(void **state) {
  (void)state;
  const int esizes[] = {1, 2, 4};
  for (int i = 1; i < NMODES; ++i) {
    const mode_info *m = &modes[i];
    if (m->mode == KBD_SWIZZLE_128B_ATOM32) continue; /* MN-major only: below */
    const int rows_per_line = 128 / m->span, chunks = m->span / 16;
    for (int e = 0; e < 3; ++e) {
      const int es = esizes[e], rows = 2 * m->lines * rows_per_line, cols = m->span / es;
      const kbd_smem_shape s = kbd_smem_shape_make(es, rows, cols, m->mode, KBD_SMEM_K_MAJOR);
      assert_null(kbd_smem_shape_check(&s));
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < chunks; ++j) {
          const int line = r / rows_per_line, lj = (r % rows_per_line) * chunks + j;
          int x = 0;
          while (m->tab[line % m->lines][x] != lj) ++x;
          for (int k = 0; k < 16 / es; ++k) /* elements of the chunk keep their order */
            assert_int_equal(kbd_smem_tile_offset(&s, r, j * (16 / es) + k), line * 128 + x * 16 + k * es);
        }
    }
  }
  /* 128B_ATOM32, MN-major f32 (tf32): column c (a K line of 128 bytes = 32 M values) is line c, the
   * 32-byte atom of M values 8a..8a+7 moves as a whole. */
  const kbd_smem_shape s = kbd_smem_shape_make(4, 32, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
  assert_null(kbd_smem_shape_check(&s));
  for (int c = 0; c < 8; ++c)
    for (int r = 0; r < 32; ++r) {
      const int j = (r * 4) / 16;
      int x = 0;
      while (tab_128b_atom32[c % 4][x] != j) ++x;
      assert_int_equal(kbd_smem_tile_offset(&s, r, c), c * 128 + x * 16 + (r * 4) % 16);
    }
}

/* A few values worked by hand (bf16, 128B, 64 x 128: two 64-column blocks of 64 rows x 128 bytes). */
static void test_tile_hand_values(void **state) {
  (void)state;
  const kbd_smem_shape s = kbd_smem_shape_make(2, 64, 128, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  assert_int_equal(kbd_smem_tile_offset(&s, 0, 0), 0);
  assert_int_equal(kbd_smem_tile_offset(&s, 1, 0), 128 + 16);   /* line 1: chunk 0 at position 1 */
  assert_int_equal(kbd_smem_tile_offset(&s, 1, 8), 128);        /* line 1: chunk 1 at position 0 */
  assert_int_equal(kbd_smem_tile_offset(&s, 7, 3), 7 * 128 + 7 * 16 + 6);
  assert_int_equal(kbd_smem_tile_offset(&s, 9, 63), 9 * 128 + 6 * 16 + 14); /* line 9 = phase 1: 7 -> 6 */
  assert_int_equal(kbd_smem_tile_offset(&s, 0, 64), 64 * 128);  /* second block after 64 rows x 128 B */
  assert_int_equal(kbd_smem_tile_offset(&s, 2, 64 + 17), 64 * 128 + 2 * 128 + 0 * 16 + 2); /* chunk 2 ^ 2 */
  assert_int_equal(kbd_smem_tile_bytes(&s), 64 * 128 * 2);
  assert_int_equal(kbd_smem_block_bytes(&s), 128);
  assert_int_equal(kbd_smem_block_stride(&s), 64 * 128);
  assert_int_equal(kbd_smem_align_bytes(&s), 1024);
  /* NONE is the plain row-major (or column-major) box image */
  const kbd_smem_shape n = kbd_smem_shape_make(4, 3, 12, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
  assert_int_equal(kbd_smem_tile_offset(&n, 2, 5), (2 * 12 + 5) * 4);
  const kbd_smem_shape t = kbd_smem_shape_make(4, 12, 3, KBD_SWIZZLE_NONE, KBD_SMEM_MN_MAJOR);
  assert_int_equal(kbd_smem_tile_offset(&t, 5, 2), (2 * 12 + 5) * 4);
}

/* ---- (b, c) every element of many shapes ---------------------------------------------------------------- */

static unsigned char seen[KBD_MAX_SMEM_BYTES];

typedef struct shape_case {
  int outer, inner_spans; /* strided extent; contiguous extent in spans (NONE: in 16-byte units) */
} shape_case;

static const shape_case shape_cases[] = {{8, 1}, {16, 1}, {8, 2}, {24, 3}, {64, 1}, {64, 2}, {128, 4},
                                         {256, 1}, {40, 2}, {512, 1}};
static const shape_case none_cases[] = {{1, 1}, {3, 1}, {1, 16}, {5, 3}, {8, 8}, {64, 8}, {7, 16}, {256, 2}};

static void check_one_shape(const mode_info *m, int es, int major, int outer, int inner_bytes, long *count) {
  const int mn = major == KBD_SMEM_MN_MAJOR;
  const int inner_n = inner_bytes / es;
  const int rows = mn ? inner_n : outer, cols = mn ? outer : inner_n;
  const kbd_smem_shape s = kbd_smem_shape_make(es, rows, cols, m->mode, major);
  const char *why = kbd_smem_shape_check(&s);
  if (why) fail_msg("%s es=%d %dx%d major=%d rejected: %s", m->name, es, rows, cols, major, why);
  assert_true(KBD_SMEM_SHAPE_OK(es, rows, cols, m->mode, major));
  const int bytes = rows * cols * es;
  assert_int_equal(kbd_smem_tile_bytes(&s), bytes);
  memset(seen, 0, (size_t)bytes);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int off = kbd_smem_tile_offset(&s, r, c);
      /* the TMA image, from base 0 and from bases that are multiples of the alignment */
      const int want = ref_tile_offset(m, 0, es, rows, cols, major, r, c);
      if (off != want)
        fail_msg("%s es=%d %dx%d major=%d (%d,%d): %d, TMA image %d", m->name, es, rows, cols, major, r, c, off,
                 want);
      if (((r + c) & 15) == 0) {
        const uint32_t bases[] = {(uint32_t)m->align, 3u * (uint32_t)m->align, 0x20000u};
        for (int b = 0; b < 3; ++b) assert_int_equal(ref_tile_offset(m, bases[b], es, rows, cols, major, r, c), off);
      }
      /* bijection onto [0, bytes): in range, element-aligned, every byte hit once */
      assert_true(off >= 0 && off + es <= bytes);
      assert_int_equal(off % es, 0);
      for (int k = 0; k < es; ++k) {
        if (seen[off + k]) fail_msg("%s es=%d %dx%d major=%d: byte %d hit twice", m->name, es, rows, cols, major, off + k);
        seen[off + k] = 1;
      }
      /* units (16 B; 32 B for the 32-byte-atom mode) stay whole and in order along the contiguous dim */
      const int ib = (mn ? r : c) * es;
      if (ib % m->unit == 0) {
        assert_int_equal(off % m->unit, 0);
      } else {
        const int prev = mn ? kbd_smem_tile_offset(&s, r - 1, c) : kbd_smem_tile_offset(&s, r, c - 1);
        assert_int_equal(off, prev + es);
      }
      ++*count;
    }
  for (int k = 0; k < bytes; ++k)
    if (!seen[k]) fail_msg("%s es=%d %dx%d major=%d: byte %d never hit", m->name, es, rows, cols, major, k);
  /* alignment claims: the alignment is a multiple of the repeat; every block starts at phase 0 */
  if (m->repeat) {
    assert_int_equal(kbd_smem_align_bytes(&s) % m->repeat, 0);
    assert_int_equal(kbd_smem_block_stride(&s) % m->repeat, 0);
  }
  assert_int_equal(kbd_smem_align_bytes(&s) % 128, 0); /* TMA destination (ptx-reference §2.4) */
}

static void test_exhaustive_shapes(void **state) {
  (void)state;
  const int esizes[] = {1, 2, 4};
  long count = 0;
  for (int i = 0; i < NMODES; ++i)
    for (int e = 0; e < 3; ++e)
      for (int major = 0; major < 2; ++major) {
        if (modes[i].mode == KBD_SWIZZLE_128B_ATOM32 && major == KBD_SMEM_K_MAJOR) continue;
        if (modes[i].mode == KBD_SWIZZLE_NONE) {
          for (size_t k = 0; k < sizeof none_cases / sizeof none_cases[0]; ++k)
            check_one_shape(&modes[i], esizes[e], major, none_cases[k].outer, 16 * none_cases[k].inner_spans, &count);
        } else {
          for (size_t k = 0; k < sizeof shape_cases / sizeof shape_cases[0]; ++k) {
            const int bytes = shape_cases[k].outer * shape_cases[k].inner_spans * modes[i].span;
            if (bytes > (int)KBD_MAX_SMEM_BYTES) continue;
            check_one_shape(&modes[i], esizes[e], major, shape_cases[k].outer,
                            shape_cases[k].inner_spans * modes[i].span, &count);
          }
        }
      }
  /* nearly all of shared memory: 128B, bf16, 904 x 128 (226 KiB, two 64-wide blocks) */
  check_one_shape(&modes[3], 2, KBD_SMEM_K_MAJOR, 904, 256, &count);
  assert_true(count > 1000000); /* the loops really ran */
}

/* A misaligned base really changes the placement (so the alignment rule is not decorative). */
static void test_misaligned_base_differs(void **state) {
  (void)state;
  for (int i = 1; i < NMODES; ++i) {
    const mode_info *m = &modes[i];
    const int major = m->mode == KBD_SWIZZLE_128B_ATOM32 ? KBD_SMEM_MN_MAJOR : KBD_SMEM_K_MAJOR;
    const kbd_smem_shape t = major == KBD_SMEM_MN_MAJOR ? kbd_smem_shape_make(2, m->span / 2, 16, m->mode, major)
                                                        : kbd_smem_shape_make(2, 16, m->span / 2, m->mode, major);
    assert_null(kbd_smem_shape_check(&t));
    int differ = 0;
    const uint32_t base = 0x4000u + 128u; /* line 1 of a repeat */
    for (int r = 0; r < t.rows; ++r)
      for (int c = 0; c < t.cols; ++c)
        differ += ref_tile_offset(m, base, 2, t.rows, t.cols, major, r, c) != kbd_smem_tile_offset(&t, r, c);
    assert_true(differ > 0);
    assert_int_not_equal(kbd_swizzle_phase(m->mode, base), 0);
  }
}

/* ---- (d) properties ----------------------------------------------------------------------------------- */

static void test_involution_and_permutation(void **state) {
  (void)state;
  static unsigned char hit[1024];
  for (int i = 0; i < NMODES; ++i) {
    const int mode = modes[i].mode;
    const uint32_t rep = modes[i].repeat ? (uint32_t)modes[i].repeat : 128u;
    for (uint32_t x = 0; x < (1u << 18); ++x) { /* the whole 256 KiB shared window */
      const uint32_t y = kbd_swizzle_apply(mode, x);
      assert_int_equal(kbd_swizzle_apply(mode, y), x);            /* involution */
      assert_int_equal(y / rep, x / rep);                           /* stays in its repeat */
      assert_int_equal(y / 128u, x / 128u);                         /* stays in its line */
      assert_int_equal(y % (uint32_t)modes[i].unit, x % (uint32_t)modes[i].unit); /* unit kept intact */
      /* only chunk bits 4..6 change, and XOR form: apply(x) ^ x depends on the line bits only */
      assert_int_equal((y ^ x) & ~0x70u, 0);
      assert_int_equal(y ^ x, kbd_swizzle_apply(mode, x & ~0x7Fu) ^ (x & ~0x7Fu));
    }
    /* a permutation of each repeat */
    for (uint32_t r0 = 0; r0 < 4u * rep; r0 += rep) {
      memset(hit, 0, sizeof hit);
      for (uint32_t x = r0; x < r0 + rep; ++x) {
        const uint32_t y = kbd_swizzle_apply(mode, x) - r0;
        assert_true(y < rep);
        assert_int_equal(hit[y], 0);
        hit[y] = 1;
      }
    }
  }
}

/* Bank groups: 32 banks x 4 bytes = 128 bytes; a 16-byte access uses the 4 banks of group (addr/16) % 8.
 * An ldmatrix 8x8 b16 matrix, or 8 threads storing one 16-byte chunk of 8 consecutive rows each, is served
 * in one wavefront only if the 8 chunks hit 8 different groups. */
static int wavefronts8(const uint32_t addr[8], uint32_t unit) {
  int n[8] = {0}, worst = 0;
  const uint32_t groups = 128u / unit;
  for (int i = 0; i < 8; ++i) {
    const int g = (int)((addr[i] / unit) % groups);
    if (++n[g] > worst) worst = n[g];
  }
  return worst;
}

static void test_bank_conflicts(void **state) {
  (void)state;
  const int esizes[] = {1, 2, 4};
  for (int i = 1; i <= 3; ++i) { /* 32B, 64B, 128B */
    const mode_info *m = &modes[i];
    for (int e = 0; e < 3; ++e)
      for (int major = 0; major < 2; ++major) {
        const int es = esizes[e], inner = 2 * m->span / es, outer = 32;
        const kbd_smem_shape s = kbd_smem_shape_make(es, major ? inner : outer, major ? outer : inner, m->mode, major);
        assert_null(kbd_smem_shape_check(&s));
        /* every start line (any 8 consecutive rows, not only aligned groups) and every 16-byte column */
        for (int l0 = 0; l0 + 8 <= outer; ++l0)
          for (int ch = 0; ch < inner * es / 16; ++ch) {
            uint32_t a[8];
            for (int k = 0; k < 8; ++k) {
              const int idx = ch * 16 / es;
              a[k] = (uint32_t)(major ? kbd_smem_tile_offset(&s, idx, l0 + k) : kbd_smem_tile_offset(&s, l0 + k, idx));
            }
            if (wavefronts8(a, 16) != 1)
              fail_msg("%s es=%d major=%d lines %d..%d chunk %d: %d-way bank conflict", m->name, es, major, l0, l0 + 7,
                       ch, wavefronts8(a, 16));
          }
      }
  }
  /* Without a swizzle, 8 rows of 128 bytes put a column in one bank group: 8 wavefronts. */
  {
    const kbd_smem_shape s = kbd_smem_shape_make(2, 8, 64, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
    for (int ch = 0; ch < 8; ++ch) {
      uint32_t a[8];
      for (int k = 0; k < 8; ++k) a[k] = (uint32_t)kbd_smem_tile_offset(&s, k, ch * 8);
      assert_int_equal(wavefronts8(a, 16), 8);
    }
  }
  /* 128B with 32-byte atoms: 4 consecutive K lines of one 32-byte atom hit the 4 different 32-byte bank
   * groups (the unit its tf32 consumer reads); 8 lines wrap around the 4-line repeat. */
  {
    const kbd_smem_shape s = kbd_smem_shape_make(4, 32, 16, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
    for (int l0 = 0; l0 + 4 <= 16; ++l0)
      for (int atom = 0; atom < 4; ++atom) {
        int n[4] = {0};
        for (int k = 0; k < 4; ++k) ++n[(kbd_smem_tile_offset(&s, atom * 8, l0 + k) / 32) % 4];
        for (int g = 0; g < 4; ++g) assert_int_equal(n[g], 1);
      }
  }
}

/* ---- (e) MMA descriptor address formulas (ptx-reference §4.6) --------------------------------------------- */

static void test_descriptor_formulas(void **state) {
  (void)state;
  const int esizes[] = {1, 2, 4};
  for (int i = 1; i <= 3; ++i) {
    const mode_info *m = &modes[i];
    const uint32_t S = (uint32_t)m->span;
    for (int e = 0; e < 3; ++e)
      for (int major = 0; major < 2; ++major)
        for (int wide = 1; wide <= 3; ++wide) {
          const int es = esizes[e], inner = wide * m->span / es, outer = 8 * wide + 8;
          const kbd_smem_shape s = kbd_smem_shape_make(es, major ? inner : outer, major ? outer : inner, m->mode, major);
          assert_null(kbd_smem_shape_check(&s));
          const uint32_t sbo = (uint32_t)kbd_smem_desc_sbo(&s), lbo = (uint32_t)kbd_smem_desc_lbo(&s);
          for (int r = 0; r < s.rows; ++r)
            for (int c = 0; c < s.cols; ++c) {
              uint32_t lin;
              if (major == KBD_SMEM_K_MAJOR) {
                /* one descriptor per span-wide block: start = the block, K offset inside it < S */
                const uint32_t kb = (uint32_t)(c * es), start = (kb / S) * (uint32_t)(s.rows) * S;
                lin = start + ((uint32_t)r % 8u) * S + ((uint32_t)r / 8u) * sbo + kb % S;
              } else {
                const uint32_t rb = (uint32_t)(r * es), k = (uint32_t)c;
                lin = rb % S + (rb / S) * lbo + (k % 8u) * S + (k / 8u) * sbo;
              }
              assert_int_equal(ref_swizzle(m, lin), (uint32_t)kbd_smem_tile_offset(&s, r, c));
            }
          if (major == KBD_SMEM_K_MAJOR) assert_int_equal(lbo, 16); /* "assumed 1" (encoded), CUTLASS */
        }
  }
  /* ptx-reference §4.5 example: K-major SWIZZLE_128B bf16 rows of 64: LBO 16 B, SBO 1024 B */
  const kbd_smem_shape b = kbd_smem_shape_make(2, 128, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  assert_int_equal(kbd_smem_desc_sbo(&b), 1024);
  assert_int_equal(kbd_smem_desc_lbo(&b), 16);
  /* no claim for NONE and for the 32-byte-atom mode (the MMA issue) */
  const kbd_smem_shape n = kbd_smem_shape_make(2, 8, 8, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape a = kbd_smem_shape_make(4, 32, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
  assert_int_equal(kbd_smem_desc_sbo(&n) | kbd_smem_desc_lbo(&n), 0);
  assert_int_equal(kbd_smem_desc_sbo(&a) | kbd_smem_desc_lbo(&a), 0);
}

/* ---- (f) shape rules ------------------------------------------------------------------------------------ */

KBD_SMEM_STATIC_CHECK(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
KBD_SMEM_STATIC_CHECK(4, 32, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
KBD_SMEM_STATIC_CHECK(1, 3, 48, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
KBD_STATIC_ASSERT(!KBD_SMEM_SHAPE_OK(2, 64, 48, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR), "96-byte rows under 128B");
KBD_STATIC_ASSERT(!KBD_SMEM_SHAPE_OK(2, 0, 0, 0, 0), "empty tile");
KBD_STATIC_ASSERT(!KBD_SMEM_SHAPE_OK(0, 8, 8, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR), "esize 0, no division by zero");
KBD_STATIC_ASSERT(KBD_SWIZZLE_SPAN(KBD_SWIZZLE_64B) == 64 && KBD_SWIZZLE_REPEAT(KBD_SWIZZLE_128B) == 1024 &&
                      KBD_SWIZZLE_ALIGN(KBD_SWIZZLE_128B_ATOM32) == 512,
                  "constant-expression facts");
typedef struct probe_smem {
  KBD_SMEM_STATIC_CHECK(2, 128, 128, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR);
  char bytes[128 * 128 * 2];
} probe_smem;

typedef struct rule_case {
  int esize, rows, cols, swz, major;
  const char *rule; /* NULL: legal */
} rule_case;

static const rule_case rule_cases[] = {
    {2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, NULL},
    {3, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_ESIZE},
    {8, 64, 64, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_ESIZE},
    {2, 64, 64, 5, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_SWIZZLE},
    {2, 64, 64, -1, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_SWIZZLE},
    {2, 64, 64, KBD_SWIZZLE_128B, 2, KBD_SMEM_RULE_MAJOR},
    {2, 0, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_DIMS},
    {2, 64, -8, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_DIMS},
    {4, 512, 128, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_DIMS}, /* 256 KiB */
    {2, 8, 1 << 30, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_DIMS},
    {4, 454, 128, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, NULL},               /* 227 KiB exactly */
    {4, 455, 128, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_DIMS},
    {2, 5, 8, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, NULL},
    {2, 5, 4, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_CHUNK},
    {2, 4, 5, KBD_SWIZZLE_NONE, KBD_SMEM_MN_MAJOR, KBD_SMEM_RULE_CHUNK},
    {2, 8, 5, KBD_SWIZZLE_NONE, KBD_SMEM_MN_MAJOR, NULL},
    {2, 8, 48, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_SPAN},
    {2, 8, 16, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR, NULL},
    {1, 8, 16, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_SPAN},
    {4, 8, 24, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_SPAN},
    {2, 96, 8, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR, KBD_SMEM_RULE_SPAN},
    {2, 4, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_ROWS8},
    {2, 12, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_ROWS8},
    {2, 64, 12, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR, KBD_SMEM_RULE_ROWS8},
    {2, 12, 64, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR, NULL},
    {4, 8, 32, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_K_MAJOR, KBD_SMEM_RULE_ATOM32},
    {4, 32, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR, NULL},
};

static void test_shape_rules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rule_cases / sizeof rule_cases[0]; ++i) {
    const rule_case *k = &rule_cases[i];
    const kbd_smem_shape s = kbd_smem_shape_make(k->esize, k->rows, k->cols, k->swz, k->major);
    const char *got = kbd_smem_shape_check(&s);
    if (k->rule == NULL) {
      if (got) fail_msg("case %zu: legal shape rejected: %s", i, got);
    } else {
      if (!got || strcmp(got, k->rule) != 0)
        fail_msg("case %zu: expected \"%s\", got \"%s\"", i, k->rule, got ? got : "(accepted)");
    }
    assert_int_equal(KBD_SMEM_SHAPE_OK(k->esize, k->rows, k->cols, k->swz, k->major) ? 1 : 0, k->rule == NULL);
  }
  /* the function and the constant expression agree on a grid of shapes */
  long legal = 0, total = 0;
  for (int es = 0; es <= 5; ++es)
    for (int swz = -1; swz <= KBD_SWIZZLE_COUNT; ++swz)
      for (int major = 0; major <= 2; ++major)
        for (int rows = 0; rows <= 40; rows += 4)
          for (int cols = 0; cols <= 160; cols += 8) {
            const kbd_smem_shape s = kbd_smem_shape_make(es, rows, cols, swz, major);
            const int ok = kbd_smem_shape_check(&s) == NULL;
            assert_int_equal(ok, KBD_SMEM_SHAPE_OK(es, rows, cols, swz, major) ? 1 : 0);
            legal += ok;
            ++total;
          }
  assert_true(legal > 100 && legal < total);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mode_facts),
      cmocka_unit_test(test_tables_every_phase),
      cmocka_unit_test(test_tables_absolute_and_base_offset),
      cmocka_unit_test(test_tile_rows_from_tables),
      cmocka_unit_test(test_tile_hand_values),
      cmocka_unit_test(test_exhaustive_shapes),
      cmocka_unit_test(test_misaligned_base_differs),
      cmocka_unit_test(test_involution_and_permutation),
      cmocka_unit_test(test_bank_conflicts),
      cmocka_unit_test(test_descriptor_formulas),
      cmocka_unit_test(test_shape_rules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
