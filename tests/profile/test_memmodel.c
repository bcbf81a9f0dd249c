/* tests/profile/test_memmodel.c - kbd/memmodel.h on access patterns whose cost is derived by hand below.
 *
 * Shared addresses of tile elements come from kbd_smem_tile_offset (kbd/swizzle.h, the one offset function);
 * the expected wavefronts are derived in each test's comment from the bank rule (bank = word % 32, phases of
 * 128/b lanes, one distinct word per bank per wavefront) and the swizzle formulas of ptx-reference §3.
 */
#include <kbd/memmodel.h>
#include <kbd/swizzle.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

static kbd_smem_shape mm_shape(int esize, int rows, int cols, int swizzle) {
  kbd_smem_shape s = {esize, rows, cols, swizzle, KBD_SMEM_K_MAJOR};
  assert_null(kbd_smem_shape_check(&s));
  return s;
}

/* Lane l on element (r0 + l*dr, c0 + l*dc) of s. */
static void mm_walk(uint32_t *a, const kbd_smem_shape *s, int r0, int c0, int dr, int dc) {
  for (int l = 0; l < 32; ++l)
    a[l] = (uint32_t)kbd_smem_tile_offset(s, r0 + l * dr, c0 + l * dc);
}

/* Unswizzled 32 x 32 f32 tile (128-byte rows). Row: lane l reads word l: 32 banks, 1 wavefront. Column: lane l
 * reads word 32 l: all in bank 0, 32 distinct words: 32 wavefronts. Ideal 1 for both (one 32-lane phase). */
static void mm_row_vs_column(void **state) {
  (void)state;
  const kbd_smem_shape s = mm_shape(4, 32, 32, KBD_SWIZZLE_NONE);
  uint32_t a[32];
  mm_walk(a, &s, 5, 0, 0, 1);
  assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 4), 1);
  assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, 4), 1);
  mm_walk(a, &s, 0, 3, 1, 0);
  assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 4), 32);
  assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, 4), 1);
  /* only the even lanes take part: 16 distinct words in bank 3, still one phase */
  unsigned char act[32];
  for (int l = 0; l < 32; ++l)
    act[l] = (unsigned char)(l % 2 == 0);
  assert_int_equal(kbd_smem_wavefronts(a, act, 32, 4), 16);
  assert_int_equal(kbd_smem_ideal_wavefronts(a, act, 32, 4), 1);
}

/* Column walk of 32 rows, column 0, in tiles whose rows are exactly the swizzle span (f32: 8, 16, 32 columns).
 * 4-byte reads: each swizzle permutes 16-byte chunks, so lane l's word is 4 x (its chunk) + 0: 8 chunks -> 8
 * banks (0, 4, .., 28) at most, 32 distinct words -> 4 per bank:
 *   32B  (32-byte rows, 4 rows per line; chunk bit 4 ^= line bit 0): rows 4j+k at byte 32k + 16 (j%2) -> chunks
 *        {0,2,4,6} and {1,3,5,7}: 8 banks, 4 wavefronts
 *   64B  (2 rows per line; chunk bits 4-5 ^= line % 4): row 2j+k at 64k + 16 (j%4): 8 chunks: 4 wavefronts
 *   128B (chunk ^= row % 8): 8 chunks: 4 wavefronts
 *   NONE (128-byte rows): one bank: 32 wavefronts
 * 16-byte reads of chunk 0 of each row (quarter-warp phases of 8 rows): the 8 rows of a phase land on 8
 * distinct chunks under every swizzle above (the same derivation), i.e. all 32 banks once: 1 per phase, 4 in
 * all = ideal; NONE: 8 rows on one chunk -> 8 per phase, 32 in all. */
static void mm_swizzle_column(void **state) {
  (void)state;
  const int modes[4] = {KBD_SWIZZLE_32B, KBD_SWIZZLE_64B, KBD_SWIZZLE_128B, KBD_SWIZZLE_NONE};
  const int cols[4] = {8, 16, 32, 32};
  const int want4[4] = {4, 4, 4, 32}, want16[4] = {4, 4, 4, 32};
  for (int m = 0; m < 4; ++m) {
    const kbd_smem_shape s = mm_shape(4, 32, cols[m], modes[m]);
    uint32_t a[32];
    mm_walk(a, &s, 0, 0, 1, 0);
    assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 4), want4[m]);
    assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, 4), 1);
    assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 16), want16[m]);
    assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, 16), 4);
  }
}

/* ldmatrix .x4 on a 64-column bf16 tile (128-byte rows): lane 8m + j gives row j, columns 8m .. 8m+7 (16 bytes,
 * chunk m). 128B swizzle: row j's chunk m lands on chunk m ^ j: the 8 rows of a matrix cover all 8 chunks = 32
 * banks: 1 wavefront per matrix, 4 in all = ideal. NONE: the 8 rows share chunk m: 8 per matrix, 32 in all. */
static void mm_ldmatrix(void **state) {
  (void)state;
  for (int sw = 0; sw < 2; ++sw) {
    const kbd_smem_shape s = mm_shape(2, 64, 64, sw ? KBD_SWIZZLE_128B : KBD_SWIZZLE_NONE);
    uint32_t a[32];
    for (int l = 0; l < 32; ++l)
      a[l] = (uint32_t)kbd_smem_tile_offset(&s, 16 + l % 8, 8 * (l / 8));
    assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 16), sw ? 4 : 32);
    assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, 16), 4);
    assert_int_equal(kbd_smem_wavefronts(a, NULL, 8, 16), sw ? 1 : 8); /* .x1: one matrix, one phase */
  }
}

/* Vector accesses (plain byte offsets).
 *   8 bytes, lane l at 8l: half-warp phases of 128 contiguous bytes: 1 each, 2 = ideal.
 *   8 bytes, lane l at 16l: a half-warp spans 256 bytes; lanes l and l+8 hit the same banks (16l/4 mod 32):
 *     2 words per bank: 2 per phase, 4 in all; ideal 2.
 *   16 bytes, lane l at 16l: quarter-warp phases of 128 contiguous bytes: 4 = ideal.
 *   16 bytes, lane l at 32l: lanes l and l+4 of a phase collide: 2 per phase, 8 in all; ideal 4. */
static void mm_vectors(void **state) {
  (void)state;
  uint32_t a[32];
  const int cases[4][4] = {{8, 8, 2, 2}, {8, 16, 4, 2}, {16, 16, 4, 4}, {16, 32, 8, 4}}; /* b, stride, wf, ideal */
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l)
      a[l] = (uint32_t)(1024 + cases[c][1] * l);
    assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, cases[c][0]), cases[c][2]);
    assert_int_equal(kbd_smem_ideal_wavefronts(a, NULL, 32, cases[c][0]), cases[c][3]);
  }
}

/* Broadcast: all 32 lanes on one word: 1 wavefront (shared), 1 sector / 1 line / ideal 1 (global). Two words
 * of one bank (lanes split between byte 0 and byte 128): 2 wavefronts. */
static void mm_broadcast(void **state) {
  (void)state;
  uint32_t a[32];
  uint64_t g[32];
  int lines = -1, ideal = -1;
  for (int l = 0; l < 32; ++l) {
    a[l] = 256;
    g[l] = 4096;
  }
  assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 4), 1);
  assert_int_equal(kbd_global_sectors(g, NULL, 32, 4, &lines, &ideal), 1);
  assert_int_equal(lines, 1);
  assert_int_equal(ideal, 1);
  assert_int_equal(kbd_global_unique_bytes(g, NULL, 32, 4), 4); /* the bytes asked for: one word */
  for (int l = 0; l < 32; ++l)
    a[l] = (uint32_t)(l % 2 ? 128 : 0);
  assert_int_equal(kbd_smem_wavefronts(a, NULL, 32, 4), 2);
}

/* Strided f32 global loads from a 128-byte-aligned base, lane l at base + 4 s l:
 *   s = 1: 128 contiguous bytes: 4 sectors, 1 line, ideal 4
 *   s = 2: 256 bytes, every sector holds 4 lanes' words: 8 sectors, 2 lines, ideal 4
 *   s = 32: one word per 128-byte line: 32 sectors, 32 lines, ideal 4
 * and s = 1 from base + 16 (not sector-aligned): 5 sectors over 2 lines, ideal 4; 16 inactive lanes (s = 1):
 * 64 bytes, 2 sectors, ideal 2. */
static void mm_global_strides(void **state) {
  (void)state;
  const int stride[3] = {1, 2, 32}, want[3][3] = {{4, 1, 4}, {8, 2, 4}, {32, 32, 4}};
  uint64_t g[32];
  int lines, ideal;
  for (int c = 0; c < 3; ++c) {
    for (int l = 0; l < 32; ++l)
      g[l] = 1u << 20 | (uint64_t)(4 * stride[c] * l);
    assert_int_equal(kbd_global_sectors(g, NULL, 32, 4, &lines, &ideal), want[c][0]);
    assert_int_equal(lines, want[c][1]);
    assert_int_equal(ideal, want[c][2]);
    assert_int_equal(kbd_global_unique_bytes(g, NULL, 32, 4), 128);
  }
  /* 8-byte accesses at a 4-byte stride overlap: bytes 0 .. 4 x 31 + 8 = 132 distinct, 5 sectors, ideal 5 */
  for (int l = 0; l < 32; ++l)
    g[l] = (1u << 20) + 4 * (uint64_t)l;
  assert_int_equal(kbd_global_unique_bytes(g, NULL, 32, 8), 132);
  assert_int_equal(kbd_global_sectors(g, NULL, 32, 8, &lines, &ideal), 5);
  assert_int_equal(ideal, 5);
  for (int l = 0; l < 32; ++l)
    g[l] = (1u << 20) + 16 + 4 * (uint64_t)l;
  assert_int_equal(kbd_global_sectors(g, NULL, 32, 4, &lines, &ideal), 5);
  assert_int_equal(lines, 2);
  assert_int_equal(ideal, 4);
  unsigned char act[32];
  for (int l = 0; l < 32; ++l) {
    act[l] = (unsigned char)(l < 16);
    g[l] = (1u << 20) + 4 * (uint64_t)l;
  }
  assert_int_equal(kbd_global_sectors(g, act, 32, 4, &lines, &ideal), 2);
  assert_int_equal(ideal, 2);
  /* 16-byte vectors, lane l at 16 l, read in reverse lane order: 512 bytes = 16 sectors, 4 lines */
  for (int l = 0; l < 32; ++l)
    g[l] = (1u << 20) + 16 * (uint64_t)(31 - l);
  assert_int_equal(kbd_global_sectors(g, NULL, 32, 16, &lines, &ideal), 16);
  assert_int_equal(lines, 4);
  assert_int_equal(ideal, 16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mm_row_vs_column), cmocka_unit_test(mm_swizzle_column), cmocka_unit_test(mm_ldmatrix),
      cmocka_unit_test(mm_vectors),       cmocka_unit_test(mm_broadcast),      cmocka_unit_test(mm_global_strides),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
