/* test_multicast_mask.c - the CTA mask of kbd_tma_load_multicast (kbd/cluster.h, kbd/cpu/cluster.h): bit r names
 * cluster rank r, and exactly the CTAs whose bits are set receive the box (issue 31: a mutant with the mask's bit
 * order reversed was killed only weakly - every other multicast test sends to the whole cluster, where any bit order
 * gives the same CTAs).
 *
 * Every CTA fills its tile with a sentinel (generic stores, fenced for the async proxy) and, after a cluster
 * barrier, the CTAs that issue multicast box `rank` of a tensor (rows rank * 8 ..) to their mask; each receiving CTA
 * expects the box's bytes on its own mbarrier and waits for them. Each CTA then copies its tile to global memory,
 * at its block's position, and the host checks that the CTA at cluster position (x, y) - rank x + y * cx - holds the
 * box of the CTA that sent to it, and the sentinel when no mask named it. Cases: 2 CTAs, CTA 0 sends to mask 0b10
 * only (rank 1 receives, rank 0 not); 4 CTAs, CTA 0 to 0b1010; 4 CTAs, each CTA r to rank (r + 1) % 4 and to
 * (r + 3) % 4 (one bit each: a ring); a 2 x 2 cluster, CTA 0 to 0b0100 (rank 2: block (0, 1)) and CTA 3 to 0b0010
 * (rank 1: block (1, 0)). Default schedule, seeds 0-3, 1 and 2 host threads.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/cluster.h>
#include <kbd/tma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define MROWS 8
#define MCOLS 32 /* f32: 128-byte lines */
#define MELEMS (MROWS * MCOLS)
#define MAXCTAS 4
#define SENTINEL (-5.0f)

typedef KBD_STILE(f32, MROWS, MCOLS, KBD_SWIZZLE_NONE) mm_tile;

typedef struct {
  kbd_tensor_map x;       /* (MAXCTAS * MROWS) x MCOLS f32, one box = one tile */
  float *out;             /* per block (x + y * grid x): its tile after the multicasts */
  unsigned mask[MAXCTAS]; /* the CTA mask rank r multicasts its box to (0: it sends nothing) */
  int receives[MAXCTAS];  /* 1: rank r is named by some mask (the host derives it from mask[], bit r = rank r) */
} mm_params;

KBD_KERNEL(mm_multicast_k, 64, mm_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, full, 1, 8);
  mm_tile t = KBD_STILE_AT(mm_tile, kbd_dynamic_smem()); /* the same offset in every CTA */
  const unsigned rank = kbd_cluster_ctarank();
  const unsigned block = kbd_block_x() + kbd_block_y() * 2u; /* grids here are 2 wide or 1 high */
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&full[0], 1);
      kbd_fence_mbarrier_init(); /* the peers signal it */
    }
  }
  KBD_FOR_LANES(lane) {
    for (int i = kbd_warp_id() * 32 + lane; i < MELEMS; i += 64)
      kbd_st_shared(t.p + i, SENTINEL);
  }
  kbd_fence_proxy_async(); /* the sentinel stores before the copies that may overwrite them */
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      if (p.receives[rank]) kbd_mbarrier_arrive_expect_tx(&full[0], MELEMS * 4);
      if (p.mask[rank]) kbd_tma_load_multicast2d(t, &p.x, &full[0], p.mask[rank], (int)rank * MROWS, 0);
    }
  }
  if (p.receives[rank]) kbd_mbarrier_wait(&full[0], 0);
  KBD_FOR_LANES(lane) {
    for (int i = kbd_warp_id() * 32 + lane; i < MELEMS; i += 64)
      kbd_st_global(&p.out[block * MELEMS + (unsigned)i], kbd_ld_shared(t.p + i));
  }
  kbd_cluster_sync(); /* no CTA exits while a peer may still write into it */
}

static float host_x[MAXCTAS * MELEMS], host_o[MAXCTAS * MELEMS];
static float *dev_x, *dev_o;

static int mm_setup(void **state) {
  (void)state;
  for (int i = 0; i < MAXCTAS * MELEMS; ++i)
    host_x[i] = (float)(i % 1000) + 0.5f * (float)(i / MELEMS); /* box r: rows r * MROWS .., all distinct */
  if (kbd_malloc((void **)&dev_x, sizeof host_x).code != KBD_OK) return -1;
  if (kbd_malloc((void **)&dev_o, sizeof host_o).code != KBD_OK) return -1;
  return kbd_copy_to_device(dev_x, host_x, sizeof host_x).code == KBD_OK ? 0 : -1;
}

typedef struct {
  const char *name;
  unsigned cx, cy;        /* the cluster (= the grid: one cluster) */
  unsigned mask[MAXCTAS]; /* per rank */
} mm_case;

static const mm_case mm_cases[] = {
    {"2 CTAs, rank 0 -> 0b10", 2, 1, {0x2, 0, 0, 0}},
    {"4 CTAs, rank 0 -> 0b1010", 4, 1, {0xa, 0, 0, 0}},
    {"4 CTAs, rank r -> rank r + 1 (ring)", 4, 1, {0x2, 0x4, 0x8, 0x1}},
    {"4 CTAs, rank r -> rank r - 1 (ring)", 4, 1, {0x8, 0x1, 0x2, 0x4}},
    {"2 x 2 cluster, rank 0 -> 0b0100, rank 3 -> 0b0010", 2, 2, {0x4, 0, 0, 0x2}},
};
#define MM_NCASES ((int)(sizeof mm_cases / sizeof mm_cases[0]))

static void run_case(const mm_case *c, long threads, long seed) {
  mt_env(threads, seed);
  const unsigned n = c->cx * c->cy;
  mm_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, dev_x, MAXCTAS * MROWS, MCOLS, MCOLS * 4, MROWS,
                                                 MCOLS, KBD_TMAP_SWIZZLE_NONE);
  assert_int_equal(kbd_tensor_map_encode(&p.x, &d).code, KBD_OK);
  p.out = dev_o;
  int src[MAXCTAS] = {-1, -1, -1, -1}; /* the rank that sends to rank r */
  for (unsigned r = 0; r < n; ++r) {
    p.mask[r] = c->mask[r];
    for (unsigned q = 0; q < n; ++q)
      if (c->mask[r] >> q & 1u) {
        assert_true(src[q] < 0); /* a case sends to each CTA at most once */
        src[q] = (int)r;
        p.receives[q] = 1;
      }
  }
  assert_int_equal(kbd_memset_device(dev_o, 0xff, sizeof host_o).code, KBD_OK);
  kbd_launch_cfg cfg = kbd_cfg_cluster(kbd_cfg(kbd_dim(c->cx, c->cy, 1), 0, NULL), c->cx, c->cy, 1);
  cfg.smem_bytes = MELEMS * 4;
  const kbd_status s = mm_multicast_k(cfg, p);
  if (s.code != KBD_OK) fail_msg("%s (seed %ld, %ld host threads): %s", c->name, seed, threads, s.msg);
  assert_int_equal(kbd_copy_to_host(host_o, dev_o, sizeof host_o).code, KBD_OK);
  for (unsigned y = 0; y < c->cy; ++y)
    for (unsigned x = 0; x < c->cx; ++x) {
      const unsigned block = x + y * 2u, rank = x + y * c->cx; /* rank x + y * cx: the cluster's rank order */
      for (int i = 0; i < MELEMS; ++i) {
        const float got = host_o[block * MELEMS + (unsigned)i];
        const float want = src[rank] < 0 ? SENTINEL : host_x[(unsigned)src[rank] * MELEMS + (unsigned)i];
        if (got != want)
          fail_msg("%s (seed %ld): the CTA at (%u, %u), rank %u, element %d is %g, want %g (%s)", c->name, seed, x, y,
                   rank, i, (double)got, (double)want,
                   src[rank] < 0 ? "no mask names this rank: the sentinel" : "the box of the rank that sent to it");
      }
    }
}

static void test_mask_bits_are_ranks(void **state) {
  (void)state;
  for (int k = 0; k < MM_NCASES; ++k)
    for (long seed = -1; seed < 4; ++seed)
      for (long threads = 1; threads <= 2; ++threads)
        run_case(&mm_cases[k], threads, seed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_mask_bits_are_ranks),
  };
  return cmocka_run_group_tests(tests, mm_setup, NULL);
}
