/* test_mma_ring.c - the main-loop forms of kbd/mma.h that the GEMM's loops use (issue 27: examples/gemm/gemm_variant.h)
 * on the CPU machine: operands named by descriptors (kbd_mma_desc_of, kbd_mma_desc_advance, kbd_mma_desc_tile_check;
 * sm_90a kbd_mma_ring, sm_100a kbd_mma_issue_commit_by_desc), the release by precomputed lanes (kbd_mma_lanes,
 * kbd_mma_release_lanes) and kbd_mbarrier_addr_uniform.
 *
 * Descriptor functions (both archs, no kernel): kbd_mma_desc_advance is kbd_mma_desc_add_bytes for every move that
 * stays in the 256 KiB window and never changes the high word; kbd_mma_desc_tile_check accepts the descriptor of a
 * tile moved by whole tiles and names the rule a wrong layout, a misaligned start or a carry out of the start field
 * breaks.
 *
 * sm_90a (KBD_CPU_ARCH=90): the GEMM's consumer loop over a 2-stage ring. Clusters of `ncta` CTAs (1 or 2), 256
 * threads each; warp 0 produces, warpgroup 1 consumes. CTA r of cluster c computes D (64 x RN) = A (rows
 * 64 (ncta c + r).., K) B^T over kt stages of RK; with 2 CTAs each loads one half of B multicast into both, so `empty`
 * counts one release from each CTA. The consumer names each stage's operands by stage 0's descriptors and the stage
 * (kbd_mma_ring), frees the previous stage with kbd_mma_release_lanes (lane r of its first warp arrives at rank r) and
 * keeps the barriers' bases from kbd_mbarrier_addr_uniform. Values are small multiples of 1/4: results exact.
 *   RG_OK        clean and exact, 1 and 2 CTAs per cluster, seeds 0-3, 1 or 2 host threads
 *   RG_LOCAL     2 CTAs, the lanes name this CTA only: the peer's release never comes - a deadlock at the producer
 *   RG_NONE      the lanes are empty (kbd_mma_lanes(0)): nothing is released - a deadlock at the producer
 *   RG_STRIDE    A's stride is a tile plus 16 bytes: the stage-1 descriptor's start is off its swizzle repeat -
 *                KBD_ERR_INVALID at the MMA naming the alignment rule
 *   RG_LAYOUT    B's stage-0 descriptor is a 64-byte-swizzle tile's: not the operand type's - KBD_ERR_INVALID at the
 *                MMA
 *   RG_ELECTED   kbd_mbarrier_addr_uniform (a warp shuffle) from elected code: KBD_ERR_ISSUE at that line
 * sm_100a (default): one CTA, warp 1 the MMA warp: kbd_mma_issue_commit_by_desc over a 2-stage ring of tiles filled
 * by the warpgroup, exact against the host product; a descriptor of the wrong layout is KBD_ERR_INVALID at the issue.
 * The same with the whole loop in one KBD_ELECT_ONE and kbd_mma_issue_commit_by_desc_elected (stages moved by
 * kbd_mma_desc_add_bytes, as the GEMM's MMA warp does): exact, the wrong layout KBD_ERR_INVALID at its line, and a call
 * from warp-uniform or per-lane code KBD_ERR_ISSUE at its line.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_test.h"

/* MT_MARK and the call it marks share a line (the reports name that line): clang-format is off around them */

#define RN 64 /* N */
#define RK 64 /* K per stage (64 bf16 = one 128-byte swizzle row) */
typedef KBD_STILE(bf16, 64, RK, KBD_SWIZZLE_128B) rg_a;
typedef KBD_STILE(bf16, RN, RK, KBD_SWIZZLE_128B) rg_b;
typedef KBD_STILE(bf16, RN / 2, RK, KBD_SWIZZLE_128B) rg_bh;
typedef KBD_STILE(bf16, RN, RK / 2, KBD_SWIZZLE_64B) rg_b64; /* another layout over B's first bytes */

static float rg_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* ---- descriptor functions ----------------------------------------------------------------------------------- */

static void check_advance(int arch, kbd_smem_shape s) {
  const int tile = kbd_smem_tile_bytes(&s), align = kbd_smem_align_bytes(&s);
  for (uint32_t addr = 0; addr + (uint32_t)tile <= 0x40000u; addr += (uint32_t)align * 7u) {
    const uint64_t d = arch == KBD_MMA_SM90 ? kbd_wgmma_smem_desc(&s, addr, 0, 0) : kbd_umma_smem_desc(&s, addr, 0, 0);
    assert_null(kbd_mma_desc_tile_check(arch, &s, d));
    for (int n = -3; n <= 3; ++n) {
      const long long to = (long long)addr + (long long)n * tile;
      if (to < 0 || to + tile > 0x40000) continue;
      const uint64_t moved = kbd_mma_desc_advance(d, n * tile);
      assert_true(moved == kbd_mma_desc_add_bytes(d, n * tile));
      assert_true((moved >> 32) == (d >> 32)); /* LBO, SBO, layout: the constant high word */
      assert_int_equal(kbd_mma_desc_start(moved), (uint32_t)to);
      assert_null(kbd_mma_desc_tile_check(arch, &s, moved));
    }
  }
}

static void test_desc_advance(void **state) {
  (void)state;
  const kbd_smem_shape s1 = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape s2 = kbd_smem_shape_make(2, 64, 128, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR);
  const kbd_smem_shape s3 = kbd_smem_shape_make(1, 128, 128, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape s4 = kbd_smem_shape_make(2, 32, 32, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR);
  for (int arch = KBD_MMA_SM90; arch <= KBD_MMA_SM100; arch += KBD_MMA_SM100 - KBD_MMA_SM90) {
    check_advance(arch, s1), check_advance(arch, s2), check_advance(arch, s3), check_advance(arch, s4);
  }
}

static void test_desc_tile_check(void **state) {
  (void)state;
  const kbd_smem_shape s = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape s64 = kbd_smem_shape_make(2, 64, 32, KBD_SWIZZLE_64B, KBD_SMEM_K_MAJOR);
  for (int arch = KBD_MMA_SM90; arch <= KBD_MMA_SM100; arch += KBD_MMA_SM100 - KBD_MMA_SM90) {
    const int w = arch == KBD_MMA_SM90;
    const uint64_t d = w ? kbd_wgmma_smem_desc(&s, 0x8000u, 0, 0) : kbd_umma_smem_desc(&s, 0x8000u, 0, 0);
    const uint64_t other = w ? kbd_wgmma_smem_desc(&s64, 0x8000u, 0, 0) : kbd_umma_smem_desc(&s64, 0x8000u, 0, 0);
    assert_null(kbd_mma_desc_tile_check(arch, &s, d));
    /* the other arch's descriptor, another layout, a carry out of the start field, a K-step's slice */
    const uint64_t cross = w ? kbd_umma_smem_desc(&s, 0x8000u, 0, 0) : kbd_wgmma_smem_desc(&s, 0x8000u, 0, 0);
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, cross), KBD_MMA_RULE_DESC_TILE);
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, other), KBD_MMA_RULE_DESC_TILE);
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, kbd_mma_desc_advance(d, 0x40000 - 0x8000)),
                        KBD_MMA_RULE_DESC_TILE);
    /* a K-step's slice or 16 bytes on: not a tile's start (off the 1024-byte swizzle repeat) */
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, kbd_mma_desc_advance(d, 32)), KBD_MMA_RULE_ALIGN);
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, kbd_mma_desc_advance(d, 16)), KBD_MMA_RULE_ALIGN);
    /* the last whole tile below 256 KiB passes, one more tile runs past the window */
    const uint64_t top = kbd_mma_desc_advance(d, 0x40000 - 0x8000 - 8192);
    assert_null(kbd_mma_desc_tile_check(arch, &s, top));
    assert_string_equal(kbd_mma_desc_tile_check(arch, &s, kbd_mma_desc_advance(d, 0x40000 - 0x8000 - 1024)),
                        KBD_MMA_RULE_WINDOW);
  }
}

#if KBD_CPU_ARCH == 90
/* ---- sm_90a: kbd_mma_ring + kbd_mma_release_lanes ---------------------------------------------------------- */
enum { RG_OK, RG_LOCAL, RG_NONE, RG_STRIDE, RG_LAYOUT, RG_ELECTED };

typedef struct rg_params {
  kbd_tensor_map ma, mb;
  float *d;
  int kt, brk, ncta;
} rg_params;

static int rg_line_wait, rg_line_mma, rg_line_uniform;

KBD_KERNEL(rg_kernel, 256, rg_params) {
  KBD_SHARED_STILE(rg_a, a0);
  KBD_SHARED_STILE(rg_a, a1);
  KBD_SHARED_STILE(rg_b, b0);
  KBD_SHARED_STILE(rg_b, b1);
  KBD_SHARED(kbd_mbarrier, full, 2);
  KBD_SHARED(kbd_mbarrier, empty, 2);
  const unsigned rank = p.ncta > 1 ? kbd_cluster_ctarank() : 0u, cta = kbd_block_x();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < 2; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], (unsigned)p.ncta); /* one release from each CTA's consumer warpgroup */
      }
      kbd_fence_mbarrier_init(); /* the peer arrives on `empty` and multicasts against `full` */
    }
  }
  if (p.ncta > 1)
    kbd_cluster_sync();
  else
    kbd_sync();
  const uint32_t full0 = kbd_mbarrier_addr_uniform(full), empty0 = kbd_mbarrier_addr_uniform(empty);

  if (kbd_warp_id() == 0) {
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      /* clang-format off */
      MT_MARK(rg_line_wait); kbd_mbarrier_wait_at(empty0 + 8u * (uint32_t)s, ((unsigned)(i / 2) & 1u) ^ 1u);
      /* clang-format on */
      rg_a a = s ? a1 : a0;
      rg_b b = s ? b1 : b0;
      KBD_ELECT_ONE {
        kbd_mbarrier_arrive_expect_tx(&full[s], KBD_STILE_BYTES(a) + KBD_STILE_BYTES(b)); /* both B halves land */
        kbd_tma_load2d(a, &p.ma, &full[s], (int)cta * 64, i * RK);
        for (int h = 0; h < 2; ++h) {
          rg_bh bh = KBD_STILE_AT(rg_bh, (unsigned char *)b.p + (unsigned)h * KBD_STILE_BYTES(b) / 2u);
          if (p.ncta == 1)
            kbd_tma_load2d(bh, &p.mb, &full[s], h * (RN / 2), i * RK);
          else if ((unsigned)h == rank)
            kbd_tma_load_multicast2d(bh, &p.mb, &full[s], 3u, h * (RN / 2), i * RK);
        }
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC(f32, 64, RN) acc;
    const uint32_t all = p.ncta > 1 ? 3u : 1u;
    const uint32_t mask = p.brk == RG_LOCAL ? 1u << rank : p.brk == RG_NONE ? 0u : all;
    const uint32_t lanes = kbd_mma_lanes((kbd_warp_id() & 3) == 0 ? mask : 0u);
    const uint64_t ad = kbd_mma_desc_of(a0);
    const uint64_t bd =
        p.brk == RG_LAYOUT ? kbd_mma_desc_of(KBD_STILE_AT(rg_b64, (unsigned char *)b0.p)) : kbd_mma_desc_of(b0);
    const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p) + (p.brk == RG_STRIDE ? 16 : 0);
    const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
    if (p.brk == RG_ELECTED) {
      KBD_ELECT_ONE {
        /* clang-format off */
        MT_MARK(rg_line_uniform); (void)kbd_mbarrier_addr_uniform(full);
        /* clang-format on */
      }
    }
    int prev = 0;
    for (int i = 0; i < p.kt; ++i) {
      const int s = i % 2;
      kbd_mbarrier_wait_at(full0 + 8u * (uint32_t)s, (unsigned)(i / 2) & 1u);
      /* clang-format off */
      MT_MARK(rg_line_mma); kbd_mma_ring(acc, rg_a, rg_b, ad, astride, bd, bstride, s, i > 0);
      /* clang-format on */
      kbd_mma_release_lanes(acc, empty0 + 8u * (uint32_t)prev, i > 0 ? lanes : 0u);
      prev = s;
    }
    kbd_mma_wait_at(acc, empty0 + 8u * (uint32_t)prev, mask == 0u ? 0u : mask);
    kbd_mma_wait(acc);
    KBD_ACC_TILE(f32, 64, RN) r;
    kbd_acc_load(r, acc, 0);
    kbd_store2d(p.d + (size_t)cta * 64u * RN, r, 64, RN, RN, 0, 0);
  }
  if (p.ncta > 1)
    kbd_cluster_sync(); /* no peer arrives on or multicasts into a CTA that has exited */
  else
    kbd_sync();
}

/* `ctas` CTAs in clusters of ncta over kt stages; checks every element (exact) when it ran */
static kbd_status rg_run(int ctas, int ncta, int kt, int brk) {
  const int M = ctas * 64, K = kt * RK;
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * (size_t)M * (size_t)K), *hb = malloc(sizeof(kbd_bf16) * RN * (size_t)K);
  float *hd = malloc(sizeof(float) * (size_t)M * RN);
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hd);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ha[(size_t)i * K + k] = kbd_f32_to_bf16(rg_value(i, k, 1));
  for (int j = 0; j < RN; ++j)
    for (int k = 0; k < K; ++k)
      hb[(size_t)j * K + k] = kbd_f32_to_bf16(rg_value(j, k, 2));
  kbd_bf16 *da, *db;
  float *dd;
  assert_int_equal(kbd_malloc((void **)&da, sizeof(kbd_bf16) * (size_t)M * K).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&db, sizeof(kbd_bf16) * RN * (size_t)K).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * (size_t)M * RN).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * (size_t)M * K).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * RN * (size_t)K).code, KBD_OK);
  rg_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc ta = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, da, (uint64_t)M, (uint64_t)K, (uint64_t)K * 2u, 64,
                                                  RK, KBD_TMAP_SWIZZLE_128B);
  kbd_tensor_map_desc tb = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, db, RN, (uint64_t)K, (uint64_t)K * 2u, RN / 2, RK,
                                                  KBD_TMAP_SWIZZLE_128B);
  assert_int_equal(kbd_tensor_map_encode(&p.ma, &ta).code, KBD_OK);
  assert_int_equal(kbd_tensor_map_encode(&p.mb, &tb).code, KBD_OK);
  p.d = dd;
  p.kt = kt;
  p.brk = brk;
  p.ncta = ncta;
  const kbd_launch_cfg cfg = kbd_cfg_1d((unsigned)ctas);
  const kbd_status st = rg_kernel(ncta > 1 ? kbd_cfg_cluster(cfg, (unsigned)ncta, 1, 1) : cfg, p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)M * RN).code, KBD_OK);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < RN; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k)
          ref += (double)kbd_bf16_to_f32(ha[(size_t)i * K + k]) * (double)kbd_bf16_to_f32(hb[(size_t)j * K + k]);
        const float got = hd[(size_t)i * RN + (size_t)j];
        if ((double)got != ref) fail_msg("D[%d][%d] = %.9g, want %.9g", i, j, got, ref);
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
  return st;
}

static void test_ring_clean(void **state) {
  (void)state;
  for (int ncta = 1; ncta <= 2; ++ncta)
    for (long threads = 1; threads <= 2; ++threads)
      for (long seed = -1; seed <= 3; ++seed) {
        mt_env(threads, seed);
        const kbd_status st = rg_run(2, ncta, 6, RG_OK);
        if (st.code != KBD_OK) fail_msg("ring, %d CTA(s), threads %ld seed %ld: %s", ncta, threads, seed, st.msg);
      }
}

static void expect_deadlock(int ncta, int brk) {
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rg_run(ncta, ncta, 4, brk);
  MT_ASSERT_CODE(st, KBD_ERR_DEADLOCK);
  char want[4096];
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "%s:%d", __FILE__, MT_LINE(rg_line_wait)));
}
/* the peer's lane missing: its producer waits for a release that never comes */
static void test_ring_local_lanes(void **state) {
  (void)state;
  expect_deadlock(2, RG_LOCAL);
}
/* no lane at all, also on one CTA */
static void test_ring_no_lanes(void **state) {
  (void)state;
  expect_deadlock(1, RG_NONE);
  expect_deadlock(2, RG_NONE);
}

static void expect_invalid(int brk, const char *why) {
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rg_run(1, 1, 4, brk);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(rg_line_mma));
  MT_ASSERT_HAS(st, why);
}
static void test_ring_bad_stride(void **state) {
  (void)state;
  expect_invalid(RG_STRIDE, KBD_MMA_RULE_ALIGN);
}
static void test_ring_bad_layout(void **state) {
  (void)state;
  expect_invalid(RG_LAYOUT, KBD_MMA_RULE_DESC_TILE);
}

static void test_addr_uniform_elected(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rg_run(1, 1, 2, RG_ELECTED);
  MT_ASSERT_CODE(st, KBD_ERR_ISSUE);
  MT_ASSERT_AT(st, MT_LINE(rg_line_uniform));
  MT_ASSERT_HAS(st, "kbd_mbarrier_addr_uniform");
}
#define RG_ARCH_TESTS                                                                                                  \
  MT_TEST(test_ring_clean), MT_TEST(test_ring_local_lanes), MT_TEST(test_ring_no_lanes),                               \
      MT_TEST(test_ring_bad_stride), MT_TEST(test_ring_bad_layout), MT_TEST(test_addr_uniform_elected),

#else
/* ---- sm_100a: kbd_mma_issue_commit_by_desc --------------------------------------------------------------- */
/* RC_ELECTED*: the k-loop as the GEMM's MMA warp writes it, one KBD_ELECT_ONE around the stages' waits and
 * kbd_mma_issue_commit_by_desc_elected; RC_EL_UNIFORM / RC_EL_LANES call that form from warp-uniform / per-lane code */
enum { RC_OK, RC_LAYOUT, RC_ELECTED, RC_EL_LAYOUT, RC_EL_UNIFORM, RC_EL_LANES };
#define RC_M 128
typedef KBD_STILE(bf16, RC_M, RK, KBD_SWIZZLE_128B) rc_a;

typedef struct rc_params {
  const kbd_bf16 *a, *b; /* 2 stages of A (RC_M x RK) and B (RN x RK), row-major */
  float *d;
  int brk;
} rc_params;

static int rc_line_issue, rc_line_elected, rc_line_uniform, rc_line_lanes;

KBD_KERNEL(rc_kernel, 256, rc_params) {
  KBD_SHARED_STILE(rc_a, a0);
  KBD_SHARED_STILE(rc_a, a1);
  KBD_SHARED_STILE(rg_b, b0);
  KBD_SHARED_STILE(rg_b, b1);
  KBD_SHARED(kbd_mbarrier, done, 2);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_TILE(bf16, RC_M, RK, KBD_CTA) ra;
  KBD_TILE(bf16, RN, RK, KBD_CTA) rb;
  for (int s = 0; s < 2; ++s) { /* the CTA fills both stages */
    kbd_load2d(ra, p.a + (size_t)s * RC_M * RK, RC_M, RK, RK, 0, 0);
    kbd_load2d(rb, p.b + (size_t)s * RN * RK, RN, RK, RK, 0, 0);
    kbd_stile_store(s ? a1 : a0, ra);
    kbd_stile_store(s ? b1 : b0, rb);
  }
  kbd_fence_proxy_async(); /* generic stores -> the MMA's async-proxy reads */
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&done[0], 1);
      kbd_mbarrier_init(&done[1], 1);
    }
    kbd_tmem_alloc(tm, 64);
  }
  kbd_sync();
  KBD_ACC(f32, RC_M, RN) acc;
  if (kbd_warp_id() == 1) {
    kbd_acc_bind(acc, tm, 0, &done[1]);
    const uint64_t ad = kbd_mma_desc_of(a0);
    const uint64_t bd = p.brk == RC_LAYOUT || p.brk == RC_EL_LAYOUT
                            ? kbd_mma_desc_of(KBD_STILE_AT(rg_b64, (unsigned char *)b0.p))
                            : kbd_mma_desc_of(b0);
    const int astride = (int)((unsigned char *)a1.p - (unsigned char *)a0.p);
    const int bstride = (int)((unsigned char *)b1.p - (unsigned char *)b0.p);
    const uint32_t bar = kbd_mbarrier_addr(&done[0]);
    if (p.brk == RC_ELECTED || p.brk == RC_EL_LAYOUT) {
      KBD_ELECT_ONE {
        for (int s = 0; s < 2; ++s) {
          /* clang-format off */
          MT_MARK(rc_line_elected); kbd_mma_issue_commit_by_desc_elected(acc, rc_a, rg_b, kbd_mma_desc_add_bytes(ad, s * astride), kbd_mma_desc_add_bytes(bd, s * bstride), s > 0, bar, 0u);
          /* clang-format on */
        }
      }
    } else if (p.brk == RC_EL_UNIFORM) {
      /* clang-format off */
      MT_MARK(rc_line_uniform); kbd_mma_issue_commit_by_desc_elected(acc, rc_a, rg_b, ad, bd, 0, bar, 0u);
      /* clang-format on */
    } else if (p.brk == RC_EL_LANES) {
      KBD_FOR_LANES(l) {
        (void)l;
        /* clang-format off */
        MT_MARK(rc_line_lanes); kbd_mma_issue_commit_by_desc_elected(acc, rc_a, rg_b, ad, bd, 0, bar, 0u);
        /* clang-format on */
      }
    } else {
      for (int s = 0; s < 2; ++s) {
        /* clang-format off */
        MT_MARK(rc_line_issue); kbd_mma_issue_commit_by_desc(acc, rc_a, rg_b, kbd_mma_desc_advance(ad, s * astride), kbd_mma_desc_advance(bd, s * bstride), s > 0, bar, 0u);
        /* clang-format on */
      }
    }
    kbd_mma_commit(acc, &done[1]);
  }
  if (kbd_warpgroup_id() == 1) {
    kbd_acc_bind(acc, tm, 0, &done[1]);
    kbd_acc_wait(acc, &done[1], 0u);
    KBD_ACC_TILE(f32, RC_M, RN) r;
    kbd_acc_load(r, acc, 0);
    kbd_store2d(p.d, r, RC_M, RN, RN, 0, 0);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 64);
}

static kbd_status rc_run(int brk) {
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * 2u * RC_M * RK), *hb = malloc(sizeof(kbd_bf16) * 2u * RN * RK);
  float *hd = malloc(sizeof(float) * RC_M * RN);
  assert_non_null(ha), assert_non_null(hb), assert_non_null(hd);
  for (int i = 0; i < 2 * RC_M; ++i)
    for (int k = 0; k < RK; ++k)
      ha[(size_t)i * RK + k] = kbd_f32_to_bf16(rg_value(i, k, 3));
  for (int j = 0; j < 2 * RN; ++j)
    for (int k = 0; k < RK; ++k)
      hb[(size_t)j * RK + k] = kbd_f32_to_bf16(rg_value(j, k, 4));
  kbd_bf16 *da, *db;
  float *dd;
  assert_int_equal(kbd_malloc((void **)&da, sizeof(kbd_bf16) * 2u * RC_M * RK).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&db, sizeof(kbd_bf16) * 2u * RN * RK).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * RC_M * RN).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * 2u * RC_M * RK).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * 2u * RN * RK).code, KBD_OK);
  rc_params p = {da, db, dd, brk};
  const kbd_status st = rc_kernel(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    /* D = A0 B0^T + A1 B1^T: the second stage's descriptors name the second tiles */
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * RC_M * RN).code, KBD_OK);
    for (int i = 0; i < RC_M; ++i)
      for (int j = 0; j < RN; ++j) {
        double ref = 0;
        for (int s = 0; s < 2; ++s)
          for (int k = 0; k < RK; ++k)
            ref += (double)kbd_bf16_to_f32(ha[((size_t)s * RC_M + (size_t)i) * RK + k]) *
                   (double)kbd_bf16_to_f32(hb[((size_t)s * RN + (size_t)j) * RK + k]);
        const float got = hd[(size_t)i * RN + (size_t)j];
        if ((double)got != ref) fail_msg("D[%d][%d] = %.9g, want %.9g", i, j, got, ref);
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
  return st;
}

static void test_issue_commit_by_desc(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 1; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = rc_run(RC_OK);
      if (st.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}
static void test_issue_commit_bad_layout(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rc_run(RC_LAYOUT);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(rc_line_issue));
  MT_ASSERT_HAS(st, KBD_MMA_RULE_DESC_TILE);
}
/* the whole k-loop in one elected section: the same exact product */
static void test_issue_commit_elected(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads)
    for (long seed = -1; seed <= 1; ++seed) {
      mt_env(threads, seed);
      const kbd_status st = rc_run(RC_ELECTED);
      if (st.code != KBD_OK) fail_msg("threads %ld seed %ld: %s", threads, seed, st.msg);
    }
}
/* the elected form checks the descriptors as strictly: the wrong layout at its line */
static void test_issue_commit_elected_bad_layout(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rc_run(RC_EL_LAYOUT);
  MT_ASSERT_CODE(st, KBD_ERR_INVALID);
  MT_ASSERT_AT(st, MT_LINE(rc_line_elected));
  MT_ASSERT_HAS(st, KBD_MMA_RULE_DESC_TILE);
}
/* from warp-uniform code all 32 threads would issue: named at the call, with the form's name */
static void test_issue_commit_elected_uniform(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rc_run(RC_EL_UNIFORM);
  MT_ASSERT_CODE(st, KBD_ERR_ISSUE);
  MT_ASSERT_AT(st, MT_LINE(rc_line_uniform));
  MT_ASSERT_HAS(st, "kbd_mma_issue_commit_by_desc_elected in warp-uniform code");
}
/* from per-lane code each of the 32 lanes would issue the MMAs and the commit */
static void test_issue_commit_elected_lanes(void **state) {
  (void)state;
  mt_env(1, -1);
  mt_quiet(1);
  const kbd_status st = rc_run(RC_EL_LANES);
  MT_ASSERT_CODE(st, KBD_ERR_ISSUE);
  MT_ASSERT_AT(st, MT_LINE(rc_line_lanes));
  MT_ASSERT_HAS(st, "kbd_mma_issue_commit_by_desc_elected in per-lane (KBD_FOR_LANES) code");
}
#define RG_ARCH_TESTS                                                                                                  \
  MT_TEST(test_issue_commit_by_desc), MT_TEST(test_issue_commit_bad_layout), MT_TEST(test_issue_commit_elected),       \
      MT_TEST(test_issue_commit_elected_bad_layout), MT_TEST(test_issue_commit_elected_uniform),                       \
      MT_TEST(test_issue_commit_elected_lanes),
#endif

int main(void) {
  const struct CMUnitTest tests[] = {MT_TEST(test_desc_advance), MT_TEST(test_desc_tile_check), RG_ARCH_TESTS};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
