/* tests/mma/test_mma_desc.c - MMA descriptors of kbd/mma_desc.h (ptx-reference §3, §4.5-4.6, §5.4-5.6).
 *
 *   (a) agreement, exhaustive: for wgmma (sm_90) and tcgen05 (sm_100), every swizzle mode, both major-nesses,
 *       1/2/4-byte elements, M/N extents 64/128/256, K extents of 1..16 K-steps, two tile addresses (one at
 *       the top of the 256 KiB window) and several row slices: for every element of every K-step,
 *       decode(descriptor) == tile address + kbd_smem_tile_offset. The decoders never call the tile offset
 *       function, so this proves the descriptors and the tile layout agree. Every combination the rules
 *       reject is rejected with the expected rule; every supported combination is exercised. Controls: a
 *       wrong SBO, LBO (MN-major), swizzle code or major-ness must disagree somewhere.
 *   (b) decoders against the PTX ISA's own worked examples ("Canonical Layouts", §9.7.15.5.1.2.1.3): the exact
 *       CuTe layouts transcribed below, evaluated here, no-swizzle modes included.
 *   (c) bit fields: hand-computed descriptors (arithmetic in comments), each field at its table position.
 *   (d) instruction descriptor: the §5.5 examples, field positions, round trip of every accepted combination,
 *       the emulator-side check; shape rules of §4.1/§5.4.
 *   (e) rules: each rejected tile, slice and descriptor gives its rule's message.
 * Compile-time rules (KBD_MMA_OPERAND_STATIC_CHECK) are tested by mma_reject.c (CMakeLists.txt).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kbd/mma_desc.h"

#define ARCHS 2
static const int arch_of[ARCHS] = {KBD_MMA_SM90, KBD_MMA_SM100};

static uint64_t enc(int arch, const kbd_smem_shape *s, uint32_t addr, int row0, int kstep) {
  return arch == KBD_MMA_SM90 ? kbd_wgmma_smem_desc(s, addr, row0, kstep) : kbd_umma_smem_desc(s, addr, row0, kstep);
}
static uint32_t dec(int arch, uint64_t d, int major, int esize, int row, int k) {
  return arch == KBD_MMA_SM90 ? kbd_wgmma_desc_addr(d, major, esize, row, k)
                              : kbd_umma_desc_addr(d, major, esize, row, k);
}
static const char *dcheck(int arch, uint64_t d, int major, int esize) {
  return arch == KBD_MMA_SM90 ? kbd_wgmma_desc_check(d, major, esize) : kbd_umma_desc_check(d, major, esize);
}
static void assert_msg(const char *got, const char *want) {
  if (got != want && (got == NULL || want == NULL || strcmp(got, want) != 0))
    fail_msg("message\n  got:  %s\n  want: %s", got ? got : "(none)", want ? want : "(none)");
}

/* ---- (a) agreement ------------------------------------------------------------------------------------- */

/* The MMA rule a combination must break, written from the tables (ptx-reference §4.1, §4.5, §5.6, PTX Table
 * 54), NULL if supported. Shapes here are legal tiles with a whole number of K-steps. */
static const char *expected_rule(int arch, int esize, int swz, int major) {
  if (swz == KBD_SWIZZLE_NONE) return KBD_MMA_RULE_NONE;
  if (arch == KBD_MMA_SM90) {
    if (swz == KBD_SWIZZLE_128B_ATOM32) return KBD_MMA_RULE_ATOM32_SM90;
    if (major == KBD_SMEM_MN_MAJOR && esize != 2) return KBD_MMA_RULE_TRANS_SM90; /* imm-trans: f16/bf16 only */
    return NULL;
  }
  if (swz == KBD_SWIZZLE_128B_ATOM32 && esize != 4) return KBD_MMA_RULE_ATOM32_ESIZE;
  if (major == KBD_SMEM_MN_MAJOR && esize == 4 && swz != KBD_SWIZZLE_128B_ATOM32) return KBD_MMA_RULE_TF32_TRANS;
  return NULL;
}

static long tested[ARCHS][KBD_SWIZZLE_COUNT][2][5]; /* elements checked per arch, swizzle, major, esize */

/* Every element of every K-step of rows [row0, rows) through the descriptors of one slice. */
static long agree_slice(int ai, const kbd_smem_shape *s, uint32_t addr, int row0) {
  const int arch = arch_of[ai], kel = KBD_MMA_KSTEP_BYTES / s->esize, n = s->rows - row0;
  const uint64_t d0 = enc(arch, s, addr, row0, 0);
  long count = 0;
  assert_null(kbd_mma_slice_check(s, row0, n, 0));
  for (int j = 0; j < kbd_mma_ksteps(s); ++j) {
    const uint64_t d = enc(arch, s, addr, row0, j);
    assert_null(dcheck(arch, d, s->major, s->esize));
    /* the documented advance: the same descriptor, start moved by the operand offset difference */
    assert_int_equal(d, kbd_mma_desc_add_bytes(d0, (int32_t)(kbd_mma_operand_offset(s, row0, j) -
                                                             kbd_mma_operand_offset(s, row0, 0))));
    /* how kbd_mma issues: one descriptor of the tile base, every (row block, K-step) a constant added to it */
    assert_int_equal(d, kbd_mma_desc_add_bytes(enc(arch, s, addr, 0, 0), (int32_t)kbd_mma_operand_offset(s, row0, j)));
    assert_int_equal(kbd_mma_desc_base_offset(d), 0);
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < kel; ++k) {
        const uint32_t got = dec(arch, d, s->major, s->esize, r, k);
        const uint32_t want = addr + (uint32_t)kbd_smem_tile_offset(s, row0 + r, j * kel + k);
        if (got != want)
          fail_msg("sm_%d esize %d %dx%d swizzle %d major %d at 0x%x: row0 %d k-step %d element (%d, %d): descriptor "
                   "0x%016llx reads 0x%x, the tile holds it at 0x%x",
                   arch, s->esize, s->rows, s->cols, s->swizzle, s->major, addr, row0, j, r, k, (unsigned long long)d,
                   got, want);
      }
    count += (long)n * kel;
  }
  return count;
}

static void test_agreement_exhaustive(void **state) {
  (void)state;
  static const int esizes[] = {1, 2, 4}, mns[] = {64, 128, 256}, kbytes[] = {32, 64, 128, 256, 384, 512};
  long total = 0, rejected = 0;
  memset(tested, 0, sizeof tested);
  for (int ai = 0; ai < ARCHS; ++ai)
    for (int swz = 0; swz < KBD_SWIZZLE_COUNT; ++swz)
      for (int major = 0; major < 2; ++major)
        for (size_t ei = 0; ei < 3; ++ei)
          for (size_t mi = 0; mi < 3; ++mi)
            for (size_t ki = 0; ki < 6; ++ki) {
              const int e = esizes[ei], arch = arch_of[ai];
              const kbd_smem_shape s = kbd_smem_shape_make(e, mns[mi], kbytes[ki] / e, swz, major);
              if (kbd_smem_shape_check(&s) != NULL) continue; /* not a shared tile at all (tests/smem) */
              const char *want = expected_rule(arch, e, swz, major);
              assert_int_equal(KBD_MMA_OPERAND_OK(arch, e, s.rows, s.cols, swz, major), want == NULL);
              assert_msg(kbd_mma_operand_check(arch, &s, 0x1400), want);
              if (want) {
                ++rejected;
                continue;
              }
              const uint32_t bytes = (uint32_t)kbd_smem_tile_bytes(&s);
              const uint32_t top = (0x40000u - bytes) / 1024u * 1024u; /* the highest 1024-aligned place */
              const uint32_t addrs[2] = {0x1400, top};
              for (int ai2 = 0; ai2 < 2; ++ai2) {
                const int g = kbd_mma_row_granule(&s);
                assert_null(kbd_mma_operand_check(arch, &s, addrs[ai2]));
                /* row slices: the whole tile, one granule in, and every 64-row instruction slice */
                for (int row0 = 0; row0 < s.rows; row0 += (row0 == 0 ? g : 64 - row0 % 64))
                  if (row0 % g == 0) {
                    const long c = agree_slice(ai, &s, addrs[ai2], row0);
                    tested[ai][swz][major][e] += c;
                    total += c;
                  }
              }
            }
  /* every supported combination ran, nothing else did (expected_rule is the table) */
  for (int ai = 0; ai < ARCHS; ++ai)
    for (int swz = 0; swz < KBD_SWIZZLE_COUNT; ++swz)
      for (int major = 0; major < 2; ++major)
        for (int e = 1; e <= 4; e *= 2) {
          const int ok = (swz != KBD_SWIZZLE_128B_ATOM32 || major == KBD_SMEM_MN_MAJOR) &&
                         expected_rule(arch_of[ai], e, swz, major) == NULL;
          if (ok != (tested[ai][swz][major][e] > 0))
            fail_msg("sm_%d swizzle %d major %d esize %d: supported %d, elements checked %ld", arch_of[ai], swz, major,
                     e, ok, tested[ai][swz][major][e]);
        }
  print_message("agreement: %ld operand elements decoded, %ld tile shapes rejected by rule\n", total, rejected);
  assert_true(total > 10000000L);
  assert_true(rejected > 0);
}

/* Controls: each broken field must make decode disagree with the tile somewhere (the test can fail). */
static int disagrees(int arch, uint64_t d, const kbd_smem_shape *s, uint32_t addr, int major) {
  const int kel = KBD_MMA_KSTEP_BYTES / s->esize;
  for (int r = 0; r < s->rows; ++r)
    for (int k = 0; k < kel; ++k)
      if (dec(arch, d, major, s->esize, r, k) != addr + (uint32_t)kbd_smem_tile_offset(s, r, k)) return 1;
  return 0;
}
static void test_agreement_controls(void **state) {
  (void)state;
  const uint32_t addr = 0x2000;
  for (int ai = 0; ai < ARCHS; ++ai)
    for (int swz = KBD_SWIZZLE_32B; swz < KBD_SWIZZLE_COUNT; ++swz)
      for (int major = 0; major < 2; ++major) {
        const int arch = arch_of[ai], e = swz == KBD_SWIZZLE_128B_ATOM32 ? 4 : 2;
        const kbd_smem_shape s = kbd_smem_shape_make(e, 256, 128 / e, swz, major);
        if (kbd_mma_operand_check(arch, &s, addr) != NULL) continue;
        const uint64_t d = enc(arch, &s, addr, 0, 0);
        const uint32_t lbo = kbd_mma_desc_lbo(d), sbo = kbd_mma_desc_sbo(d);
        const unsigned code = arch == KBD_MMA_SM90 ? kbd_wgmma_desc_layout(d) : kbd_umma_desc_layout(d);
        const uint64_t keep = d & ~(((uint64_t)0x3FFF << 16) | ((uint64_t)0x3FFF << 32));
        assert_false(disagrees(arch, d, &s, addr, major));
        assert_true(disagrees(arch, keep | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(2 * sbo >> 4) << 32, &s, addr, major));
        assert_true(disagrees(arch, d, &s, addr, 1 - major));
        /* another swizzle code of the same arch (32B <-> 64B, others -> 32B) */
        const int other = swz == KBD_SWIZZLE_32B ? KBD_SWIZZLE_64B : KBD_SWIZZLE_32B;
        const uint64_t recode = arch == KBD_MMA_SM90
                                    ? (d & ~((uint64_t)3 << 62)) | (uint64_t)kbd_wgmma_layout_code(other) << 62
                                    : (d & ~((uint64_t)7 << 61)) | (uint64_t)kbd_umma_layout_code(other) << 61;
        assert_int_not_equal(code, arch == KBD_MMA_SM90 ? kbd_wgmma_desc_layout(recode) : kbd_umma_desc_layout(recode));
        assert_true(disagrees(arch, recode, &s, addr, major));
        const uint64_t lbo2 = keep | (uint64_t)(2 * lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32;
        if (major == KBD_SMEM_MN_MAJOR)
          assert_true(disagrees(arch, lbo2, &s, addr, major)); /* 256 rows span several blocks */
        else /* swizzled K-major: LBO is "not used, assumed 1" (ptx-reference §4.6) */
          assert_false(disagrees(arch, lbo2, &s, addr, major));
      }
}

/* ---- (b) the PTX ISA worked examples ---------------------------------------------------------------------
 * PTX ISA 9.2 §9.7.15.5.1.2.1.3 "Canonical Layouts", Examples (repeated for tcgen05 in §9.7.16.3.3): each gives
 * the exact CuTe layout (element units) and the LBO/SBO in bytes. The byte address of (row, k) is
 * Swizzle<B,4,3>(start + E * layout(row, k)), a CuTe swizzle on byte addresses, written here independently. */
typedef struct {
  int n, shape[3], stride[3];
} cute_mode;
static int cute_eval(const cute_mode *m, int idx) {
  int off = 0;
  for (int i = 0; i < m->n; ++i) {
    off += (idx % m->shape[i]) * m->stride[i];
    idx /= m->shape[i];
  }
  return off;
}
static int cute_size(const cute_mode *m) {
  int s = 1;
  for (int i = 0; i < m->n; ++i) s *= m->shape[i];
  return s;
}
static uint32_t cute_swizzle(int b, uint32_t x) { /* Swizzle<B,4,3>: bits [7, 7+B) XORed into [4, 4+B) */
  const uint32_t yyy = ((1u << b) - 1u) << 7;
  return x ^ ((x & yyy) >> 3);
}
typedef struct {
  const char *name;
  int major, esize, swz, swz_b;
  cute_mode mn, k;
  uint32_t lbo, sbo; /* bytes, as the example's table gives them */
  int k_limit;       /* elements of K checked (the whole layout unless noted) */
} ptx_example;

static void test_ptx_worked_examples(void **state) {
  (void)state;
  const ptx_example ex[] = {
      /* "K-Major, no-swizzling and tf32 type": ((8,2),(4,4)):((4,32),(1,64)), LBO 64*4, SBO 32*4 */
      {"K none tf32", KBD_SMEM_K_MAJOR, 4, KBD_SWIZZLE_NONE, 0, {2, {8, 2}, {4, 32}}, {2, {4, 4}, {1, 64}}, 256, 128,
       16},
      /* "K-Major, 32B swizzling and tf32 type": ((8,2),(4,4)):((8,64),(1,4)), LBO assumed 1, SBO 64*4. Its K extent
       * (64 B) overlaps the 32-byte row pitch: a documentation slip (ptx-reference §4.6, §9.11). One instruction
       * reads 8 tf32 (32 B) of K, which is where it is consistent: only k < 8 is checked. */
      {"K 32B tf32", KBD_SMEM_K_MAJOR, 4, KBD_SWIZZLE_32B, 1, {2, {8, 2}, {8, 64}}, {2, {4, 4}, {1, 4}}, 16, 256, 8},
      /* "MN-Major, no-swizzling and bf16 type": ((8,1,2),(8,2)):((1,8,64),(8,128)), LBO 128*2, SBO 64*2 */
      {"MN none bf16", KBD_SMEM_MN_MAJOR, 2, KBD_SWIZZLE_NONE, 0, {3, {8, 1, 2}, {1, 8, 64}}, {2, {8, 2}, {8, 128}},
       256, 128, 16},
      /* "MN-Major, 32B swizzling and bf16 type": ((8,2,2),(8,2)):((1,8,128),(16,256)), LBO 128*2, SBO 256*2 */
      {"MN 32B bf16", KBD_SMEM_MN_MAJOR, 2, KBD_SWIZZLE_32B, 1, {3, {8, 2, 2}, {1, 8, 128}}, {2, {8, 2}, {16, 256}},
       256, 512, 16},
      /* "MN-Major, 64B swizzling and bf16 type": ((8,4,2),(8,2)):((1,8,256),(32,512)), LBO 256*2, SBO 512*2 */
      {"MN 64B bf16", KBD_SMEM_MN_MAJOR, 2, KBD_SWIZZLE_64B, 2, {3, {8, 4, 2}, {1, 8, 256}}, {2, {8, 2}, {32, 512}},
       512, 1024, 16},
  };
  const uint32_t start = 0x800;
  long checked = 0;
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; ++i)
    for (int ai = 0; ai < ARCHS; ++ai) {
      const ptx_example *x = &ex[i];
      const int arch = arch_of[ai];
      const uint64_t d =
          arch == KBD_MMA_SM90
              ? kbd_wgmma_desc_encode(start, x->lbo, x->sbo, 0, (unsigned)kbd_wgmma_layout_code(x->swz))
              : kbd_umma_desc_encode(start, x->lbo, x->sbo, 0, (unsigned)kbd_umma_layout_code(x->swz), 0);
      /* the examples' descriptor encodings: LBO >> 4 and SBO >> 4 (e.g. "(LBO) >> 4 = 16") */
      assert_int_equal((d >> 16) & 0x3FFF, x->lbo >> 4);
      assert_int_equal((d >> 32) & 0x3FFF, x->sbo >> 4);
      for (int r = 0; r < cute_size(&x->mn); ++r)
        for (int k = 0; k < x->k_limit; ++k) {
          const uint32_t want =
              cute_swizzle(x->swz_b, start + (uint32_t)(x->esize * (cute_eval(&x->mn, r) + cute_eval(&x->k, k))));
          const uint32_t got = dec(arch, d, x->major, x->esize, r, k);
          if (got != want) fail_msg("%s sm_%d (%d, %d): decoded 0x%x, PTX layout 0x%x", x->name, arch, r, k, got, want);
          ++checked;
        }
    }
  assert_int_equal(checked, 2 * (16 * 16 + 16 * 8 + 16 * 16 + 32 * 16 + 64 * 16));

  /* the slip itself: the 32B tf32 example's full layout is not one-to-one (256 coordinates, 136 offsets) */
  {
    static unsigned char seen[1024];
    int distinct = 0;
    memset(seen, 0, sizeof seen);
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k) {
        const int o = cute_eval(&ex[1].mn, r) + cute_eval(&ex[1].k, k);
        distinct += !seen[o];
        seen[o] = 1;
      }
    assert_int_equal(distinct, 136);
  }
}

/* A no-swizzle (interleaved) operand of 8 x 16-byte core matrices packed densely is a bijection onto its
 * bytes: K-major SBO = (K bytes / 16) * 128, LBO = 128; MN-major SBO = 128, LBO = (MN bytes / 16) * 128. */
static void test_interleave_bijection(void **state) {
  (void)state;
  static unsigned char hit[1 << 16];
  for (int ai = 0; ai < ARCHS; ++ai)
    for (int major = 0; major < 2; ++major)
      for (int e = 1; e <= 4; e *= 2) {
        const int arch = arch_of[ai], rows = 64, kel = KBD_MMA_KSTEP_BYTES / e;
        const uint32_t start = 0x400, bytes = (uint32_t)(rows * kel * e);
        const uint32_t lbo = major == KBD_SMEM_K_MAJOR ? 128u : (uint32_t)(rows * e / 16) * 128u;
        const uint32_t sbo = major == KBD_SMEM_K_MAJOR ? (uint32_t)(kel * e / 16) * 128u : 128u;
        const uint64_t d = arch == KBD_MMA_SM90 ? kbd_wgmma_desc_encode(start, lbo, sbo, 0, 0)
                                                : kbd_umma_desc_encode(start, lbo, sbo, 0, 0, 0);
        if (arch == KBD_MMA_SM90 && major == KBD_SMEM_MN_MAJOR && e != 2) { /* imm-trans: 16-bit only */
          assert_msg(dcheck(arch, d, major, e), KBD_MMA_RULE_TRANS_SM90);
          continue;
        }
        if (arch == KBD_MMA_SM100 && major == KBD_SMEM_MN_MAJOR && e == 4) { /* PTX Table 54 */
          assert_msg(dcheck(arch, d, major, e), KBD_MMA_RULE_TF32_TRANS);
          continue;
        }
        assert_null(dcheck(arch, d, major, e));
        memset(hit, 0, sizeof hit);
        for (int r = 0; r < rows; ++r)
          for (int k = 0; k < kel; ++k) {
            const uint32_t a = dec(arch, d, major, e, r, k);
            assert_true(a >= start && a + (uint32_t)e <= start + bytes && (a - start) % (uint32_t)e == 0);
            assert_int_equal(hit[a - start], 0);
            hit[a - start] = 1;
          }
        for (uint32_t b = 0; b < bytes; b += (uint32_t)e) assert_int_equal(hit[b], 1);
      }
}

/* ---- (c) bit fields --------------------------------------------------------------------------------------- */

static void test_hand_computed_descriptors(void **state) {
  (void)state;
  /* 64 x 64 bf16, K-major, 128B swizzle, at shared address 0x400 (on the 1024-byte repeat). ptx-reference §4.5:
   *   start  = 0x400 >> 4                        = 0x40  -> bits  0-13: 0x0000000000000040
   *   LBO    = 16 >> 4 (unused, "assumed 1")     = 0x1   -> bits 16-29: 0x0000000000010000
   *   SBO    = 8 rows x 128 B = 1024, >> 4       = 0x40  -> bits 32-45: 0x0000004000000000
   *   base offset 0                                      -> bits 49-51: 0
   *   sm_90 layout: 128B = 1                             -> bits 62-63: 0x4000000000000000
   *   wgmma descriptor                                   = 0x4000004000010040  (ptx-reference §4.5's example)
   *   sm_100 (§5.6): version 1 at bit 46 = 0x0000400000000000; layout 128B = 2 at bits 61-63 = 0x4000000000000000
   *   tcgen05 descriptor                                 = 0x4000404000010040  (§5.6's example)
   * K-step j reads K bytes 32j..32j+31 of the 128-byte rows: start + 32j, field 0x40 + 2j. */
  const kbd_smem_shape a = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  assert_null(kbd_mma_operand_check(KBD_MMA_SM90, &a, 0x400));
  assert_int_equal(kbd_mma_ksteps(&a), 4);
  assert_int_equal(kbd_wgmma_smem_desc(&a, 0x400, 0, 0), 0x4000004000010040ull);
  assert_int_equal(kbd_umma_smem_desc(&a, 0x400, 0, 0), 0x4000404000010040ull);
  assert_int_equal(kbd_wgmma_smem_desc(&a, 0x400, 0, 1), 0x4000004000010042ull);
  assert_int_equal(kbd_wgmma_smem_desc(&a, 0x400, 0, 3), 0x4000004000010046ull);
  /* a slice from row 32 (the fifth 8-row atom): start + 32 rows x 128 B = 0x400 + 0x1000 = 0x1400, field 0x140 */
  assert_int_equal(kbd_wgmma_smem_desc(&a, 0x400, 32, 0), 0x4000004000010140ull);
  /* the same raw encoding */
  assert_int_equal(kbd_wgmma_desc_encode(0x400, 16, 1024, 0, 1), 0x4000004000010040ull);
  assert_int_equal(kbd_umma_desc_encode(0x400, 16, 1024, 0, 2, 0), 0x4000404000010040ull);

  /* 64 (M) x 64 (K) bf16, MN-major, 128B, at 0x2000: one 128-byte block holds all 64 M values of a K line.
   *   start = 0x2000 >> 4 = 0x200; LBO = block stride = 64 K lines x 128 B = 8192, >> 4 = 0x200 (bits 16-29:
   *   0x0000000002000000); SBO = 8 K lines x 128 B = 1024, >> 4 = 0x40 (0x0000004000000000); 128B = 1 at 62.
   *   = 0x4000004002000200. K-step 1 = K lines 16..31: start + 16 x 128 = 0x2800, field 0x280. */
  const kbd_smem_shape b = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR);
  assert_null(kbd_mma_operand_check(KBD_MMA_SM90, &b, 0x2000));
  assert_int_equal(kbd_wgmma_smem_desc(&b, 0x2000, 0, 0), 0x4000004002000200ull);
  assert_int_equal(kbd_wgmma_smem_desc(&b, 0x2000, 0, 1), 0x4000004002000280ull);

  /* 64 (N) x 8 (K) tf32, MN-major, 128B with 32-byte atoms (tcgen05 only), at 0x1000: two 128-byte blocks
   * (32 tf32 each) of 8 K lines. start 0x100; LBO = block stride 8 x 128 = 1024 -> 0x40 (0x0000000000400000);
   * SBO = 4 K lines x 128 = 512 -> 0x20 (0x0000002000000000; CUTLASS-only, ptx-reference §5.6); version 1 at 46
   * (0x0000400000000000); code 1 at 61 (0x2000000000000000). = 0x2000402000400100. */
  const kbd_smem_shape c = kbd_smem_shape_make(4, 64, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
  assert_null(kbd_mma_operand_check(KBD_MMA_SM100, &c, 0x1000));
  assert_int_equal(kbd_umma_smem_desc(&c, 0x1000, 0, 0), 0x2000402000400100ull);
  assert_int_equal(kbd_umma_smem_desc(&c, 0x1000, 32, 0), 0x2000402000400140ull); /* second block: +1024 */

  /* K-major 64B (span 64) and 32B (span 32), bf16 128 x 64: SBO = 8 x span; the 64B tile has 2 blocks of
   * 128 rows x 64 B = 8192: K-step 2 (K bytes 64..95) is block 1 (+8192), offset 0 -> start 0x2000. */
  const kbd_smem_shape d = kbd_smem_shape_make(2, 128, 64, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR);
  assert_int_equal(kbd_wgmma_smem_desc(&d, 0, 0, 2), 0x8000002000010200ull); /* 64B = 2 at 62: 0x8000... */
  assert_int_equal(kbd_umma_smem_desc(&d, 0, 0, 1), 0x8000402000010002ull);  /* 64B = 4 at 61: same bit 63 */
  const kbd_smem_shape e = kbd_smem_shape_make(2, 64, 16, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR);
  assert_int_equal(kbd_wgmma_smem_desc(&e, 0x100, 0, 0), 0xC000001000010010ull); /* 32B = 3 at 62 */
  assert_int_equal(kbd_umma_smem_desc(&e, 0x100, 0, 0), 0xC000401000010010ull);  /* 32B = 6 at 61 */
}

static void test_field_positions(void **state) {
  (void)state;
  /* each field alone, at the positions of the tables (ptx-reference §4.5, §5.6) */
  assert_int_equal(kbd_wgmma_desc_encode(0x3FFF0, 0, 0, 0, 0), 0x0000000000003FFFull);     /* bits 0-13  */
  assert_int_equal(kbd_wgmma_desc_encode(0, 0x3FFF0, 0, 0, 0), 0x000000003FFF0000ull);     /* bits 16-29 */
  assert_int_equal(kbd_wgmma_desc_encode(0, 0, 0x3FFF0, 0, 0), 0x00003FFF00000000ull);     /* bits 32-45 */
  assert_int_equal(kbd_wgmma_desc_encode(0, 0, 0, 7, 0), 0x000E000000000000ull);           /* bits 49-51 */
  assert_int_equal(kbd_wgmma_desc_encode(0, 0, 0, 0, 3), 0xC000000000000000ull);           /* bits 62-63 */
  assert_int_equal(kbd_umma_desc_encode(0, 0, 0, 0, 0, 0), 0x0000400000000000ull);         /* version 1 at 46 */
  assert_int_equal(kbd_umma_desc_encode(0, 0, 0, 0, 0, 1), 0x0010400000000000ull);         /* LBO mode at 52 */
  assert_int_equal(kbd_umma_desc_encode(0, 0, 0, 0, 7, 0), 0xE000400000000000ull);         /* bits 61-63 */
  assert_int_equal(kbd_umma_desc_encode(0x3FFF0, 0x3FFF0, 0x3FFF0, 7, 0, 0), 0x000E7FFF3FFF3FFFull);
  /* the 4 low bits are dropped, bits above 17 do not reach other fields */
  assert_int_equal(kbd_wgmma_desc_encode(0x4000F, 0x4000F, 0x4000F, 8, 4), 0);
  /* layout codes (sm_90 2-bit, sm_100 3-bit) and back */
  assert_int_equal(kbd_wgmma_layout_code(KBD_SWIZZLE_NONE), 0);
  assert_int_equal(kbd_wgmma_layout_code(KBD_SWIZZLE_128B), 1);
  assert_int_equal(kbd_wgmma_layout_code(KBD_SWIZZLE_64B), 2);
  assert_int_equal(kbd_wgmma_layout_code(KBD_SWIZZLE_32B), 3);
  assert_int_equal(kbd_wgmma_layout_code(KBD_SWIZZLE_128B_ATOM32), -1);
  assert_int_equal(kbd_umma_layout_code(KBD_SWIZZLE_NONE), 0);
  assert_int_equal(kbd_umma_layout_code(KBD_SWIZZLE_128B_ATOM32), 1);
  assert_int_equal(kbd_umma_layout_code(KBD_SWIZZLE_128B), 2);
  assert_int_equal(kbd_umma_layout_code(KBD_SWIZZLE_64B), 4);
  assert_int_equal(kbd_umma_layout_code(KBD_SWIZZLE_32B), 6);
  for (int swz = 0; swz < KBD_SWIZZLE_COUNT; ++swz) {
    if (swz != KBD_SWIZZLE_128B_ATOM32) assert_int_equal(kbd_wgmma_layout_swizzle(kbd_wgmma_layout_code(swz)), swz);
    assert_int_equal(kbd_umma_layout_swizzle(kbd_umma_layout_code(swz)), swz);
    /* Hopper's codes sit on the same bits 62-63 as Blackwell's 3-bit code (§5.6 note) */
    if (swz != KBD_SWIZZLE_128B_ATOM32)
      assert_int_equal((uint64_t)kbd_wgmma_layout_code(swz) << 62, (uint64_t)kbd_umma_layout_code(swz) << 61);
  }
  assert_int_equal(kbd_umma_layout_swizzle(3), -1);
  assert_int_equal(kbd_umma_layout_swizzle(5), -1);
  assert_int_equal(kbd_umma_layout_swizzle(7), -1);
  /* extractors round-trip */
  for (uint32_t v = 0; v < 0x40000u; v += 0x1230u) {
    const uint32_t a = v & ~15u, l = (0x3FFF0u - v) & ~15u, s = (v * 7u) & 0x3FFF0u;
    const uint64_t w = kbd_wgmma_desc_encode(a, l, s, v % 8u, v % 4u);
    const uint64_t u = kbd_umma_desc_encode(a, l, s, v % 8u, v % 8u, v % 2u);
    assert_int_equal(kbd_mma_desc_start(w), a);
    assert_int_equal(kbd_mma_desc_lbo(w), l);
    assert_int_equal(kbd_mma_desc_sbo(w), s);
    assert_int_equal(kbd_mma_desc_base_offset(w), v % 8u);
    assert_int_equal(kbd_wgmma_desc_layout(w), v % 4u);
    assert_int_equal(kbd_mma_desc_start(u), a);
    assert_int_equal(kbd_mma_desc_lbo(u), l);
    assert_int_equal(kbd_mma_desc_sbo(u), s);
    assert_int_equal(kbd_umma_desc_layout(u), v % 8u);
    assert_int_equal(kbd_umma_desc_version(u), 1);
    assert_int_equal(kbd_umma_desc_lbo_mode(u), v % 2u);
  }
}

/* ---- (d) instruction descriptor --------------------------------------------------------------------------- */

static const int all_types[] = {KBD_MMA_F16, KBD_MMA_BF16, KBD_MMA_TF32, KBD_MMA_E4M3, KBD_MMA_E5M2,
                                KBD_MMA_S8,  KBD_MMA_U8,   KBD_MMA_F32,  KBD_MMA_S32};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])

static void test_idesc_examples_and_fields(void **state) {
  (void)state;
  /* ptx-reference §5.5 examples. bf16 x bf16 -> f32, K-major, M=128, N=256:
   *   D F32 = 1 << 4 = 0x10; A BF16 = 1 << 7 = 0x80; B BF16 = 1 << 10 = 0x400; N >> 3 = 32 << 17 = 0x400000;
   *   M >> 4 = 8 << 24 = 0x08000000  => 0x08400490 */
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 128, 256, 0, 0, 0), 0x08400490u);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 128, 128, 0, 0, 0), 0x08200490u);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F32, 64, 64, 0, 0, 0), 0x04100010u);
  /* each field at its Table 42 position: one input changed from a zero-code base (f16 x f16 -> f16, M 0, N 0) */
  const uint32_t z = kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 0, 0);
  assert_int_equal(z, 0);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 0, KBD_UMMA_SATURATE), 1u << 3);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_S32, 0, 0, 0, 0, 0), 2u << 4);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_TF32, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 0, 0), 2u << 7);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_TF32, KBD_MMA_F16, 0, 0, 0, 0, 0), 2u << 10);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_E5M2, KBD_MMA_S8, KBD_MMA_F16, 0, 0, 0, 0, 0), (1u << 7) | (1u << 10));
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 0, KBD_UMMA_NEGATE_A), 1u << 13);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 0, KBD_UMMA_NEGATE_B), 1u << 14);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 1, 0, 0), 1u << 15);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 0, 0, 1, 0), 1u << 16);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 0, 504, 0, 0, 0), 0x3Fu << 17);
  assert_int_equal(kbd_umma_instr_desc(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 496, 0, 0, 0, 0), 0x1Fu << 24);
  /* bits 6, 23, 29-31 are never written */
  for (int ai = 0; ai < NTYPES; ++ai)
    for (int bi = 0; bi < NTYPES; ++bi)
      assert_int_equal(kbd_umma_instr_desc(all_types[ai], all_types[bi], all_types[(ai + bi) % NTYPES], 496, 504, 1, 1,
                                           7) &
                           0xE0800040u,
                       0);
}

static void test_idesc_round_trip(void **state) {
  (void)state;
  static const int ms[] = {0, 16, 32, 64, 96, 128, 192, 256, 512};
  static const int ds[] = {KBD_MMA_F16, KBD_MMA_F32, KBD_MMA_S32, KBD_MMA_BF16};
  long accepted = 0, refused = 0;
  for (int ai = 0; ai < NTYPES; ++ai)
    for (int bi = 0; bi < NTYPES; ++bi)
      for (int di = 0; di < 4; ++di)
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; ++mi)
          for (int n = 0; n <= 264; n += 4)
            for (int maj = 0; maj < 4; ++maj)
              for (unsigned fl = 0; fl < 8; ++fl)
                for (int cg = 1; cg <= 2; ++cg) {
                  const int a = all_types[ai], b = all_types[bi], d = ds[di], m = ms[mi];
                  const char *why = kbd_umma_instr_check(a, b, d, m, n, maj & 1, maj >> 1, fl, cg);
                  if (why) {
                    ++refused;
                    continue;
                  }
                  const uint32_t i = kbd_umma_instr_desc(a, b, d, m, n, maj & 1, maj >> 1, fl);
                  const int kind = kbd_mma_kind_of(a, b);
                  assert_int_equal(kbd_umma_idesc_m(i), m);
                  assert_int_equal(kbd_umma_idesc_n(i), n);
                  assert_int_equal(kbd_umma_idesc_type(kind, kbd_umma_idesc_a_code(i)), a);
                  assert_int_equal(kbd_umma_idesc_type(kind, kbd_umma_idesc_b_code(i)), b);
                  assert_int_equal(kbd_umma_idesc_dtype(i), d);
                  assert_int_equal(kbd_umma_idesc_a_major(i), maj & 1);
                  assert_int_equal(kbd_umma_idesc_b_major(i), maj >> 1);
                  assert_int_equal(kbd_umma_idesc_negate_a(i), (fl & KBD_UMMA_NEGATE_A) != 0);
                  assert_int_equal(kbd_umma_idesc_negate_b(i), (fl & KBD_UMMA_NEGATE_B) != 0);
                  assert_int_equal(kbd_umma_idesc_saturate(i), (fl & KBD_UMMA_SATURATE) != 0);
                  assert_int_equal(kbd_umma_idesc_sparse(i) | kbd_umma_idesc_sparse_sel(i), 0);
                  assert_int_equal(kbd_umma_idesc_max_shift(i), 0);
                  assert_null(kbd_umma_idesc_check(i, kind, cg));
                  ++accepted;
                }
  print_message("instruction descriptors: %ld accepted and round-tripped, %ld refused\n", accepted, refused);
  assert_true(accepted > 10000 && refused > accepted);
}

static void test_shape_rules(void **state) {
  (void)state;
  /* tcgen05 (§5.4, Table 39), cta_group::1: M 64/128, N 8..256 step 8; i8: 8, 16, 24, 32..256 step 16 */
  const int bf = KBD_MMA_BF16, f32 = KBD_MMA_F32;
  assert_null(kbd_umma_instr_check(bf, bf, f32, 128, 8, 0, 0, 0, 1));
  assert_null(kbd_umma_instr_check(bf, bf, f32, 64, 256, 1, 1, KBD_UMMA_NEGATE_A | KBD_UMMA_NEGATE_B, 1));
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 4, 0, 0, 0, 1), KBD_MMA_RULE_N);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 12, 0, 0, 0, 1), KBD_MMA_RULE_N);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 264, 0, 0, 0, 1), KBD_MMA_RULE_N);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 32, 64, 0, 0, 0, 1), KBD_MMA_RULE_UMMA_M1);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 256, 64, 0, 0, 0, 1), KBD_MMA_RULE_UMMA_M1);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 192, 64, 0, 0, 0, 1), KBD_MMA_RULE_UMMA_M1);
  const int s8 = KBD_MMA_S8, u8 = KBD_MMA_U8, s32 = KBD_MMA_S32;
  assert_null(kbd_umma_instr_check(s8, u8, s32, 128, 24, 0, 0, KBD_UMMA_SATURATE, 1));
  assert_null(kbd_umma_instr_check(s8, s8, s32, 128, 48, 0, 0, 0, 1));
  assert_msg(kbd_umma_instr_check(s8, s8, s32, 128, 40, 0, 0, 0, 1), KBD_MMA_RULE_N);
  assert_msg(kbd_umma_instr_check(s8, s8, s32, 128, 56, 0, 0, 0, 1), KBD_MMA_RULE_N);
  /* cta_group::2: M 128/256, N 16..256 step 16; i8 32..256 step 32 */
  assert_null(kbd_umma_instr_check(bf, bf, f32, 256, 256, 0, 0, 0, 2));
  assert_null(kbd_umma_instr_check(bf, bf, f32, 128, 16, 0, 0, 0, 2));
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 64, 64, 0, 0, 0, 2), KBD_MMA_RULE_UMMA_M2);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 256, 24, 0, 0, 0, 2), KBD_MMA_RULE_UMMA_N2);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 256, 8, 0, 0, 0, 2), KBD_MMA_RULE_UMMA_N2);
  assert_null(kbd_umma_instr_check(s8, s8, s32, 256, 64, 0, 0, 0, 2));
  assert_msg(kbd_umma_instr_check(s8, s8, s32, 256, 48, 0, 0, 0, 2), KBD_MMA_RULE_UMMA_N2);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 64, 0, 0, 0, 3), KBD_MMA_RULE_CTA_GROUP);
  /* types and accumulators */
  assert_msg(kbd_umma_instr_check(KBD_MMA_F16, bf, f32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_TYPES);
  assert_msg(kbd_umma_instr_check(KBD_MMA_TF32, bf, f32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_TYPES);
  assert_msg(kbd_umma_instr_check(KBD_MMA_E4M3, s8, f32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_TYPES);
  assert_msg(kbd_umma_instr_check(f32, f32, f32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_TYPES);
  assert_null(kbd_umma_instr_check(KBD_MMA_E4M3, KBD_MMA_E5M2, KBD_MMA_F16, 128, 64, 0, 0, 0, 1));
  assert_msg(kbd_umma_instr_check(bf, bf, KBD_MMA_F16, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_DTYPE);
  assert_null(kbd_umma_instr_check(KBD_MMA_F16, KBD_MMA_F16, KBD_MMA_F16, 128, 64, 0, 0, 0, 1));
  assert_msg(kbd_umma_instr_check(KBD_MMA_TF32, KBD_MMA_TF32, KBD_MMA_F16, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_DTYPE);
  assert_msg(kbd_umma_instr_check(s8, s8, f32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_DTYPE);
  assert_msg(kbd_umma_instr_check(bf, bf, s32, 128, 64, 0, 0, 0, 1), KBD_MMA_RULE_DTYPE);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 64, 2, 0, 0, 1), KBD_MMA_RULE_MAJOR);
  assert_msg(kbd_umma_instr_check(s8, s8, s32, 128, 64, 0, 0, KBD_UMMA_NEGATE_B, 1), KBD_MMA_RULE_NEGATE);
  assert_msg(kbd_umma_instr_check(bf, bf, f32, 128, 64, 0, 0, KBD_UMMA_SATURATE, 1), KBD_MMA_RULE_SATURATE);
  /* wgmma (§4.1): M 64, N as above, transposition for 16-bit only; n240/n256 accepted for s8 (§9.8) */
  assert_null(kbd_wgmma_shape_check(bf, bf, f32, 64, 256, 1, 1));
  assert_null(kbd_wgmma_shape_check(KBD_MMA_TF32, KBD_MMA_TF32, f32, 64, 8, 0, 0));
  assert_null(kbd_wgmma_shape_check(s8, u8, s32, 64, 240, 0, 0));
  assert_msg(kbd_wgmma_shape_check(bf, bf, f32, 128, 64, 0, 0), KBD_MMA_RULE_WGMMA_M);
  assert_msg(kbd_wgmma_shape_check(bf, bf, f32, 64, 260, 0, 0), KBD_MMA_RULE_N);
  assert_msg(kbd_wgmma_shape_check(s8, s8, s32, 64, 40, 0, 0), KBD_MMA_RULE_N);
  assert_msg(kbd_wgmma_shape_check(KBD_MMA_TF32, KBD_MMA_TF32, f32, 64, 64, 0, 1), KBD_MMA_RULE_TRANS_SM90);
  assert_msg(kbd_wgmma_shape_check(KBD_MMA_E4M3, KBD_MMA_E4M3, f32, 64, 64, 1, 0), KBD_MMA_RULE_TRANS_SM90);
  assert_msg(kbd_wgmma_shape_check(bf, bf, KBD_MMA_F16, 64, 64, 0, 0), KBD_MMA_RULE_DTYPE);
  /* the emulator-side check of raw instruction descriptors */
  const uint32_t ok = kbd_umma_instr_desc(bf, bf, f32, 128, 256, 0, 0, 0);
  assert_null(kbd_umma_idesc_check(ok, KBD_MMA_KIND_F16, 1));
  assert_msg(kbd_umma_idesc_check(ok | 1u << 6, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_RSVD);
  assert_msg(kbd_umma_idesc_check(ok | 1u << 23, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_RSVD);
  assert_msg(kbd_umma_idesc_check(ok | 1u << 29, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_RSVD);
  assert_msg(kbd_umma_idesc_check(ok | 1u << 2, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_SPARSE);
  assert_msg(kbd_umma_idesc_check(ok | 1u, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_SPARSE);
  assert_msg(kbd_umma_idesc_check(ok | 1u << 30, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_SHIFT);
  assert_msg(kbd_umma_idesc_check(ok, KBD_MMA_KIND_TF32, 1), KBD_MMA_RULE_IDESC_TYPE); /* code 1 is not tf32 */
  assert_msg(kbd_umma_idesc_check(ok | 3u << 4, KBD_MMA_KIND_F16, 1), KBD_MMA_RULE_IDESC_TYPE);
  assert_msg(kbd_umma_idesc_check(ok, KBD_MMA_KIND_F16, 2), NULL);
  assert_msg(kbd_umma_idesc_check(kbd_umma_instr_desc(bf, bf, f32, 64, 256, 0, 0, 0), KBD_MMA_KIND_F16, 2),
             KBD_MMA_RULE_UMMA_M2);
}

/* ---- (e) operand, slice and descriptor rules --------------------------------------------------------------- */

static void test_operand_rules(void **state) {
  (void)state;
  const int K = KBD_SMEM_K_MAJOR, MN = KBD_SMEM_MN_MAJOR, S90 = KBD_MMA_SM90, S100 = KBD_MMA_SM100;
  kbd_smem_shape s;
#define CHECK(arch, e, r, c, swz, maj, addr, want)                                                                     \
  do {                                                                                                                 \
    s = kbd_smem_shape_make(e, r, c, swz, maj);                                                                        \
    assert_msg(kbd_mma_operand_check(arch, &s, addr), want);                                                           \
    if (kbd_smem_shape_check(&s) == NULL)                                                                              \
      assert_int_equal(KBD_MMA_OPERAND_OK(arch, e, r, c, swz, maj),                                                    \
                       (want) == NULL || !strcmp((want) ? (want) : "", KBD_MMA_RULE_ALIGN) ||                          \
                           !strcmp((want) ? (want) : "", KBD_MMA_RULE_WINDOW));                                        \
  } while (0)
  CHECK(S90, 2, 64, 64, KBD_SWIZZLE_128B, K, 0x400, NULL);
  CHECK(S90, 3, 64, 64, KBD_SWIZZLE_128B, K, 0x400, KBD_SMEM_RULE_ESIZE); /* the tile's own rules first */
  CHECK(S90, 2, 64, 48, KBD_SWIZZLE_128B, K, 0x400, KBD_SMEM_RULE_SPAN);
  CHECK(80, 2, 64, 64, KBD_SWIZZLE_128B, K, 0x400, KBD_MMA_RULE_ARCH);
  CHECK(S90, 2, 64, 64, KBD_SWIZZLE_NONE, K, 0x400, KBD_MMA_RULE_NONE);
  CHECK(S100, 2, 64, 8, KBD_SWIZZLE_NONE, K, 0x400, KBD_MMA_RULE_NONE); /* even with 16-byte rows */
  CHECK(S90, 4, 64, 8, KBD_SWIZZLE_128B_ATOM32, MN, 0x400, KBD_MMA_RULE_ATOM32_SM90);
  CHECK(S90, 4, 64, 64, KBD_SWIZZLE_128B, MN, 0x400, KBD_MMA_RULE_TRANS_SM90);
  CHECK(S90, 1, 128, 64, KBD_SWIZZLE_128B, MN, 0x400, KBD_MMA_RULE_TRANS_SM90);
  CHECK(S100, 1, 128, 64, KBD_SWIZZLE_128B, MN, 0x400, NULL); /* tcgen05 transposes 8-bit operands */
  CHECK(S100, 2, 64, 16, KBD_SWIZZLE_128B_ATOM32, MN, 0x400, KBD_MMA_RULE_ATOM32_ESIZE);
  CHECK(S100, 4, 64, 8, KBD_SWIZZLE_128B, MN, 0x400, KBD_MMA_RULE_TF32_TRANS);
  CHECK(S100, 4, 64, 8, KBD_SWIZZLE_128B_ATOM32, MN, 0x400, NULL);
  CHECK(S100, 2, 64, 8, KBD_SWIZZLE_128B, MN, 0x400, KBD_MMA_RULE_KSTEP); /* 8 bf16 of K = 16 bytes */
  CHECK(S90, 2, 64, 24, KBD_SWIZZLE_64B, MN, 0x400, KBD_MMA_RULE_KSTEP);
  CHECK(S90, 2, 64, 64, KBD_SWIZZLE_128B, K, 0x200, KBD_MMA_RULE_ALIGN);
  CHECK(S90, 2, 64, 32, KBD_SWIZZLE_64B, K, 0x100, KBD_MMA_RULE_ALIGN);
  CHECK(S90, 2, 64, 16, KBD_SWIZZLE_32B, K, 0x80, KBD_MMA_RULE_ALIGN);
  CHECK(S90, 2, 64, 16, KBD_SWIZZLE_32B, K, 0x100, NULL);
  CHECK(S100, 4, 64, 8, KBD_SWIZZLE_128B_ATOM32, MN, 0x300, KBD_MMA_RULE_ALIGN);
  CHECK(S90, 2, 64, 64, KBD_SWIZZLE_128B, K, 0x3E000, NULL); /* ends exactly at 256 KiB */
  CHECK(S90, 2, 64, 64, KBD_SWIZZLE_128B, K, 0x3E400, KBD_MMA_RULE_WINDOW);
#undef CHECK
  /* slices */
  const kbd_smem_shape k128 = kbd_smem_shape_make(2, 128, 128, KBD_SWIZZLE_128B, K);
  const kbd_smem_shape m128 = kbd_smem_shape_make(2, 128, 64, KBD_SWIZZLE_128B, MN);
  assert_int_equal(kbd_mma_row_granule(&k128), 8);
  assert_int_equal(kbd_mma_row_granule(&m128), 64);
  assert_int_equal(kbd_mma_ksteps(&k128), 8);
  assert_int_equal(kbd_mma_ksteps(&m128), 4);
  assert_null(kbd_mma_slice_check(&k128, 64, 64, 7));
  assert_null(kbd_mma_slice_check(&k128, 8, 120, 0));
  assert_msg(kbd_mma_slice_check(&k128, 4, 64, 0), KBD_MMA_RULE_ROW0);
  assert_msg(kbd_mma_slice_check(&k128, -8, 64, 0), KBD_MMA_RULE_ROW0);
  assert_msg(kbd_mma_slice_check(&m128, 8, 64, 0), KBD_MMA_RULE_ROW0);
  assert_null(kbd_mma_slice_check(&m128, 64, 64, 3));
  assert_msg(kbd_mma_slice_check(&k128, 64, 128, 0), KBD_MMA_RULE_ROWS);
  assert_msg(kbd_mma_slice_check(&k128, 0, 0, 0), KBD_MMA_RULE_ROWS);
  assert_msg(kbd_mma_slice_check(&k128, 0, 64, 8), KBD_MMA_RULE_KSTEP_RANGE);
  assert_msg(kbd_mma_slice_check(&m128, 0, 64, -1), KBD_MMA_RULE_KSTEP_RANGE);
}

static void test_descriptor_rules(void **state) {
  (void)state;
  const int K = KBD_SMEM_K_MAJOR, MN = KBD_SMEM_MN_MAJOR;
  const uint64_t w = kbd_wgmma_desc_encode(0x400, 16, 1024, 0, 1), u = kbd_umma_desc_encode(0x400, 16, 1024, 0, 2, 0);
  assert_null(kbd_wgmma_desc_check(w, K, 2));
  assert_null(kbd_umma_desc_check(u, K, 2));
  assert_msg(kbd_wgmma_desc_check(w, K, 3), KBD_MMA_RULE_DESC_ESIZE);
  assert_msg(kbd_umma_desc_check(u, 2, 2), KBD_MMA_RULE_DESC_MAJOR);
  assert_msg(kbd_wgmma_desc_check(w | 1ull << 49, K, 2), KBD_MMA_RULE_DESC_BASE);
  assert_msg(kbd_umma_desc_check(u | 5ull << 49, K, 2), KBD_MMA_RULE_DESC_BASE);
  for (int bit = 0; bit < 64; ++bit) { /* every reserved bit, alone */
    const int rsvd90 = bit == 14 || bit == 15 || bit == 30 || bit == 31 || (bit >= 46 && bit <= 48) ||
                       (bit >= 52 && bit <= 61);
    const int rsvd100 = bit == 14 || bit == 15 || bit == 30 || bit == 31 || (bit >= 53 && bit <= 60);
    if (rsvd90) assert_msg(kbd_wgmma_desc_check(w ^ 1ull << bit, K, 2), KBD_MMA_RULE_DESC_RSVD90);
    if (rsvd100) assert_msg(kbd_umma_desc_check(u ^ 1ull << bit, K, 2), KBD_MMA_RULE_DESC_RSVD100);
  }
  assert_msg(kbd_wgmma_desc_check(u, K, 2), KBD_MMA_RULE_DESC_RSVD90); /* a tcgen05 descriptor given to wgmma */
  assert_msg(kbd_umma_desc_check(w & ~(3ull << 62), K, 2), KBD_MMA_RULE_DESC_VERSION);
  assert_msg(kbd_umma_desc_check(u | 1ull << 47, K, 2), KBD_MMA_RULE_DESC_VERSION);
  assert_msg(kbd_umma_desc_check(u | 1ull << 52, K, 2), KBD_MMA_RULE_DESC_LBO_MODE);
  for (unsigned code = 3; code <= 7; code += 2)
    assert_msg(kbd_umma_desc_check((u & ~(7ull << 61)) | (uint64_t)code << 61, K, 2), KBD_MMA_RULE_DESC_LAYOUT);
  const uint64_t atom = kbd_umma_desc_encode(0x400, 1024, 512, 0, 1, 0), sw128 = u;
  assert_null(kbd_umma_desc_check(atom, MN, 4));
  assert_msg(kbd_umma_desc_check(atom, K, 4), KBD_MMA_RULE_DESC_ATOM32_K);
  assert_msg(kbd_umma_desc_check(atom, MN, 2), KBD_MMA_RULE_ATOM32_ESIZE);
  assert_msg(kbd_umma_desc_check(sw128, MN, 4), KBD_MMA_RULE_TF32_TRANS);
  assert_null(kbd_umma_desc_check(sw128, MN, 1));
  assert_null(kbd_umma_desc_check(sw128, K, 4));
  assert_msg(kbd_wgmma_desc_check(w, MN, 4), KBD_MMA_RULE_TRANS_SM90);
  assert_msg(kbd_wgmma_desc_check(w, MN, 1), KBD_MMA_RULE_TRANS_SM90);
  assert_null(kbd_wgmma_desc_check(w, MN, 2));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_agreement_exhaustive),
      cmocka_unit_test(test_agreement_controls),
      cmocka_unit_test(test_ptx_worked_examples),
      cmocka_unit_test(test_interleave_bijection),
      cmocka_unit_test(test_hand_computed_descriptors),
      cmocka_unit_test(test_field_positions),
      cmocka_unit_test(test_idesc_examples_and_fields),
      cmocka_unit_test(test_idesc_round_trip),
      cmocka_unit_test(test_shape_rules),
      cmocka_unit_test(test_operand_rules),
      cmocka_unit_test(test_descriptor_rules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
