/* test_cluster.c - thread-block clusters on the CPU machine (kbd/cluster.h): cluster ids and ranks for 1x1,
 * 2x1, 4x1, 2x2 (and the non-portable 4x4) clusters; a DSMEM exchange between neighbours; a gather into CTA 0
 * through DSMEM paced by remote mbarrier arrivals; multicast TMA loads that fill every CTA's tile from
 * slices each CTA issues - all under 8 scheduling seeds and 1 and 2 host threads. Then the broken variants,
 * each caught in the first run under the default schedule with its own diagnostic at the right line: a CTA
 * that skips the cluster barrier by exiting, one that waits elsewhere (a deadlock naming both CTAs), an
 * arrive twice, a peer's memory touched before the cluster barrier or after the peer exited, a DSMEM read
 * racing the peer's write, a remote arrival published before the data, a multicast the barrier does not
 * expect in full, a bad CTA mask or rank, a release mask of 0 at kbd_cluster_mask_assume; and the launch's
 * cluster-shape rules.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

/* ---- ids ----------------------------------------------------------------------------------------------- */

typedef struct {
  unsigned *out; /* per block: 11 words */
} ids_params;

KBD_KERNEL(cl_ids, 64, ids_params) {
  if (kbd_warp_id() != 1) return;
  const unsigned b = kbd_block_x() + kbd_grid_x() * (kbd_block_y() + kbd_grid_y() * kbd_block_z());
  KBD_FOR_LANES(lane) {
    if (lane == 0) {
      unsigned *o = p.out + b * 11;
      o[0] = kbd_cluster_ctarank();
      o[1] = kbd_cluster_size();
      o[2] = kbd_cluster_id_x();
      o[3] = kbd_cluster_id_y();
      o[4] = kbd_cluster_id_z();
      o[5] = kbd_cluster_dim_x();
      o[6] = kbd_cluster_dim_y();
      o[7] = kbd_cluster_dim_z();
      o[8] = kbd_block_x();
      o[9] = kbd_block_y();
      o[10] = kbd_block_z();
    }
  }
}

#define MAXB 64
static unsigned *dev_u;
static unsigned host_u[MAXB * 64];

static int group_setup(void **state) {
  (void)state;
  return kbd_malloc((void **)&dev_u, sizeof host_u).code == KBD_OK ? 0 : -1;
}

static kbd_launch_cfg cfg3(unsigned gx, unsigned gy, unsigned gz, unsigned cx, unsigned cy, unsigned cz) {
  return kbd_cfg_cluster(kbd_cfg(kbd_dim(gx, gy, gz), 0, NULL), cx, cy, cz);
}

/* Each block's rank is x + y*cx + z*cx*cy inside its cluster, its cluster id its block / cluster shape. */
static void check_ids(unsigned gx, unsigned gy, unsigned gz, unsigned cx, unsigned cy, unsigned cz) {
  ids_params p = {dev_u};
  assert_int_equal(kbd_memset_device(dev_u, 0xff, sizeof host_u).code, KBD_OK);
  kbd_launch_cfg c = cfg3(gx, gy, gz, cx, cy, cz);
  c.cluster_nonportable = cx * cy * cz > 8;
  MT_ASSERT_OK(cl_ids(c, p));
  assert_int_equal(kbd_copy_to_host(host_u, dev_u, sizeof host_u).code, KBD_OK);
  const unsigned dx = cx ? cx : 1, dy = cy ? cy : 1, dz = cz ? cz : 1;
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        const unsigned *o = host_u + (x + gx * (y + gy * z)) * 11;
        const unsigned want[11] = {x % dx + (y % dy) * dx + (z % dz) * dx * dy, dx * dy * dz, x / dx, y / dy, z / dz,
                                   dx, dy, dz, x, y, z};
        for (int k = 0; k < 11; ++k)
          if (o[k] != want[k])
            fail_msg("grid (%u,%u,%u) cluster (%u,%u,%u): block (%u,%u,%u) word %d is %u, want %u", gx, gy, gz, cx, cy,
                     cz, x, y, z, k, o[k], want[k]);
      }
}

static void test_ids(void **state) {
  (void)state;
  for (long threads = 1; threads <= 2; ++threads) {
    mt_env(threads, 0);
    check_ids(4, 2, 1, 0, 0, 0);  /* no cluster: rank 0 of 1 */
    check_ids(4, 2, 1, 1, 1, 1);  /* 1x1 */
    check_ids(4, 2, 1, 2, 1, 1);  /* 2x1 */
    check_ids(8, 2, 1, 4, 1, 1);  /* 4x1 */
    check_ids(4, 4, 1, 2, 2, 1);  /* 2x2 */
    check_ids(2, 2, 4, 1, 2, 2);  /* 1x2x2 */
    check_ids(6, 2, 2, 2, 1, 2);  /* 2x1x2 */
  }
}

/* ---- DSMEM exchange ------------------------------------------------------------------------------------- */

enum { XM_OK, XM_NO_START_SYNC, XM_NO_END_SYNC, XM_SYNC_BEFORE_WRITE, XM_RELAXED };

typedef struct {
  int *out; /* per block 64 ints: the right neighbour's values */
  int mode;
} xchg_params;

static int x_read_line;

/* Every CTA fills its array, then reads its right neighbour's (rank + 1) through kbd_cluster_map. */
KBD_KERNEL(cl_xchg, 64, xchg_params) {
  KBD_SHARED(int, mine, 64);
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  const unsigned b = kbd_block_x() + kbd_grid_x() * kbd_block_y();
  const int w = kbd_warp_id();
  if (p.mode == XM_SYNC_BEFORE_WRITE) kbd_cluster_sync();
  KBD_FOR_LANES(lane) { kbd_st_shared(&mine[w * 32 + lane], (int)(rank * 1000 + b * 100000) + w * 32 + lane); }
  if (p.mode == XM_OK || p.mode == XM_NO_END_SYNC) kbd_cluster_sync();
  if (p.mode == XM_RELAXED) { /* a relaxed arrival publishes nothing: the neighbour's writes are unordered */
    kbd_cluster_arrive_relaxed();
    kbd_cluster_wait();
  }
  const int *peer = kbd_cluster_map(mine, (rank + 1) % n);
  KBD_FOR_LANES(lane) {
    MT_MARK(x_read_line); const int v = kbd_ld_shared(&peer[w * 32 + lane]);
    p.out[b * 64 + w * 32 + lane] = v;
  }
  if (p.mode != XM_NO_END_SYNC) kbd_cluster_sync(); /* the neighbour's memory stays alive until every read is done */
}

static kbd_status run_xchg(unsigned gx, unsigned gy, unsigned cx, unsigned cy, int mode) {
  xchg_params p = {(int *)(void *)dev_u, mode};
  assert_int_equal(kbd_memset_device(dev_u, 0xff, sizeof host_u).code, KBD_OK);
  kbd_launch_cfg c = cfg3(gx, gy, 1, cx, cy, 1);
  c.cluster_nonportable = cx * cy > 8;
  return cl_xchg(c, p);
}

static void check_xchg(unsigned gx, unsigned gy, unsigned cx, unsigned cy) {
  const int *o = (const int *)(void *)host_u;
  assert_int_equal(kbd_copy_to_host(host_u, dev_u, sizeof host_u).code, KBD_OK);
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x) {
      const unsigned rank = x % cx + (y % cy) * cx, n = cx * cy, nr = (rank + 1) % n;
      /* the neighbour's block: same cluster, rank nr */
      const unsigned nx = x - x % cx + nr % cx, ny = y - y % cy + nr / cx, nb = nx + gx * ny;
      for (int i = 0; i < 64; ++i) {
        const int want = (int)(nr * 1000 + nb * 100000) + i;
        if (o[(x + gx * y) * 64 + i] != want)
          fail_msg("cluster (%u,%u) block (%u,%u) value %d is %d, want %d", cx, cy, x, y, i, o[(x + gx * y) * 64 + i],
                   want);
      }
    }
}

static void test_xchg_shapes(void **state) {
  (void)state;
  static const unsigned shapes[][4] = {{4, 2, 1, 1}, {4, 2, 2, 1}, {8, 2, 4, 1}, {4, 4, 2, 2}, {4, 4, 4, 4}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k)
    for (long seed = -1; seed < 8; ++seed)
      for (long threads = 1; threads <= 2; ++threads) {
        mt_env(threads, seed);
        const unsigned *s = shapes[k];
        const kbd_status st = run_xchg(s[0], s[1], s[2], s[3], XM_OK);
        if (st.code != KBD_OK)
          fail_msg("cluster (%u,%u) seed %ld threads %ld: %s", s[2], s[3], seed, threads, st.msg);
        check_xchg(s[0], s[1], s[2], s[3]);
      }
}

/* A peer's memory before any cluster barrier: the peer may not have started. */
static void test_xchg_no_start_sync(void **state) {
  (void)state;
  const kbd_status s = run_xchg(2, 1, 2, 1, XM_NO_START_SYNC);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(x_read_line));
  MT_ASSERT_HAS(s, "before anything orders this warp after that CTA started");
}

/* No barrier at the end: a CTA may exit while its neighbour still reads its memory. */
static void test_xchg_no_end_sync(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status s = run_xchg(4, 1, 4, 1, XM_NO_END_SYNC);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_AT(s, MT_LINE(x_read_line));
    if (!strstr(s.msg, "has exited") && !strstr(s.msg, "exits while nothing orders this access"))
      fail_msg("seed %ld: %s", seed, s.msg);
  }
}

/* A relaxed cluster barrier between the writes and the reads orders execution, not memory: a race. */
static void test_xchg_relaxed(void **state) {
  (void)state;
  const kbd_status s = run_xchg(2, 1, 2, 1, XM_RELAXED);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(x_read_line));
  MT_ASSERT_HAS(s, "read after write");
}

/* The barrier before the writes, none between the writes and the reads: a race (or a never-written read). */
static void test_xchg_race(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status s = run_xchg(2, 1, 2, 1, XM_SYNC_BEFORE_WRITE);
    if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_POISON) fail_msg("seed %ld: %s", seed, s.msg);
    MT_ASSERT_HAS(s, "cluster CTA");
  }
}

/* ---- gather through DSMEM with remote mbarrier arrivals --------------------------------------------------- */

enum { G_OK, G_NO_INIT_SYNC, G_ARRIVE_FIRST, G_NO_FENCE };

typedef struct {
  int *out; /* per cluster: CTA 0's sum of the slots */
  int mode;
} gather_params;

static int g_write_line, g_read_line, g_arrive_line;

KBD_KERNEL(cl_gather, 64, gather_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  KBD_SHARED(int, slot, 16);
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  if (rank == 0 && kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&bar[0], n - 1); /* one arrival per peer CTA */
      if (p.mode != G_NO_FENCE) kbd_fence_mbarrier_init();
    }
  }
  if (p.mode != G_NO_INIT_SYNC) kbd_cluster_sync();
  if (rank != 0 && kbd_warp_id() == 1) {
    int *dst = kbd_cluster_map(slot, 0);
    KBD_ELECT_ONE {
      if (p.mode == G_ARRIVE_FIRST) kbd_mbarrier_arrive_cluster(&bar[0], 0);
      MT_MARK(g_write_line); kbd_st_shared(&dst[rank], (int)(rank * rank + 7));
      MT_MARK(g_arrive_line); if (p.mode != G_ARRIVE_FIRST) kbd_mbarrier_arrive_cluster(&bar[0], 0);
    }
  }
  if (rank == 0 && kbd_warp_id() == 0) {
    kbd_mbarrier_wait(&bar[0], 0);
    KBD_FOR_LANES(lane) {
      if (lane == 0) {
        int sum = 0;
        for (unsigned r = 1; r < n; ++r) {
          MT_MARK(g_read_line); sum += kbd_ld_shared(&slot[r]);
        }
        p.out[kbd_cluster_id_x()] = sum;
      }
    }
  }
  kbd_cluster_sync();
}

static kbd_status run_gather(unsigned n, int mode) {
  gather_params p = {(int *)(void *)dev_u, mode};
  assert_int_equal(kbd_memset_device(dev_u, 0xff, sizeof host_u).code, KBD_OK);
  return cl_gather(cfg3(3 * n, 1, 1, n, 1, 1), p);
}

static void test_gather(void **state) {
  (void)state;
  for (unsigned n = 2; n <= 8; n *= 2)
    for (long seed = -1; seed < 8; ++seed)
      for (long threads = 1; threads <= 2; ++threads) {
        mt_env(threads, seed);
        const kbd_status s = run_gather(n, G_OK);
        if (s.code != KBD_OK) fail_msg("%u CTAs seed %ld threads %ld: %s", n, seed, threads, s.msg);
        assert_int_equal(kbd_copy_to_host(host_u, dev_u, sizeof host_u).code, KBD_OK);
        int want = 0;
        for (unsigned r = 1; r < n; ++r)
          want += (int)(r * r + 7);
        for (int c = 0; c < 3; ++c)
          assert_int_equal(((int *)(void *)host_u)[c], want);
      }
}

/* Peers write CTA 0's memory and arrive on its barrier with nothing ordering them after its start and init. */
static void test_gather_no_init_sync(void **state) {
  (void)state;
  const kbd_status s = run_gather(2, G_NO_INIT_SYNC);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(g_write_line));
  MT_ASSERT_HAS(s, "before anything orders this warp after that CTA started");
}

/* The barrier's init was never fenced for the cluster (fence.mbarrier_init) before a peer arrives on it. */
static void test_gather_no_fence(void **state) {
  (void)state;
  const kbd_status s = run_gather(2, G_NO_FENCE);
  MT_ASSERT_CODE(s, KBD_ERR_MBARRIER);
  MT_ASSERT_AT(s, MT_LINE(g_arrive_line));
  MT_ASSERT_HAS(s, "executed no kbd_fence_mbarrier_init() after the init");
}

/* The arrival released before the data: CTA 0's read races with the peer's write, in either order. */
static void test_gather_arrive_first(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status s = run_gather(2, G_ARRIVE_FIRST);
    MT_ASSERT_CODE(s, KBD_ERR_RACE);
    if (!strstr(s.msg, "read after write") && !strstr(s.msg, "write after read")) fail_msg("%s", s.msg);
    char a[64], b[64];
    snprintf(a, sizeof a, ":%d", MT_LINE(g_write_line));
    snprintf(b, sizeof b, ":%d", MT_LINE(g_read_line));
    MT_ASSERT_HAS(s, a);
    MT_ASSERT_HAS(s, b);
  }
}

/* ---- the multicast mask promise (kbd_cluster_mask_assume) ------------------------------------------------- */

/* Each CTA frees a stage in the CTAs of its release mask, as the sm_100a GEMM's MMA warp does (one arrive per CTA of
 * the mask; each CTA's barrier expects one from every CTA of the cluster), after promising the compiler the mask is
 * not 0. The broken mask leaves out the CTA's own bit: in a cluster of one CTA it is 0. */
enum { RM_OK, RM_NO_OWN_BIT, RM_NO_OWN_BIT_UNCHECKED };

typedef struct {
  int mode;
} release_params;

static int r_assume_line;

KBD_KERNEL(cl_release, 64, release_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, empty, 1, 8);
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&empty[0], n);
      kbd_fence_mbarrier_init();
    }
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 1) {
    const uint32_t all = (1u << n) - 1u;
    const uint32_t mask = p.mode == RM_OK ? all : all & ~(1u << rank);
    // clang-format off
    MT_MARK(r_assume_line); if (p.mode != RM_NO_OWN_BIT_UNCHECKED) kbd_cluster_mask_assume(mask);
    // clang-format on
    KBD_ELECT_ONE {
      for (unsigned r = 0; r < n; ++r)
        if ((mask >> r) & 1u) kbd_mbarrier_arrive_cluster(&empty[0], r);
    }
  }
  if (kbd_warp_id() == 0) kbd_mbarrier_wait(&empty[0], 0);
  kbd_cluster_sync();
}

static kbd_status run_release(unsigned n, int mode) {
  release_params p = {mode};
  return cl_release(cfg3(2 * n, 1, 1, n, 1, 1), p);
}

/* A mask with the own bit: every barrier completes, in clusters of 1, 2 and 4 CTAs. */
static void test_mask_assume(void **state) {
  (void)state;
  for (unsigned n = 1; n <= 4; n *= 2)
    for (long seed = -1; seed < 4; ++seed) {
      mt_env(1, seed);
      const kbd_status s = run_release(n, RM_OK);
      if (s.code != KBD_OK) fail_msg("%u CTAs seed %ld: %s", n, seed, s.msg);
    }
}

/* A mask of 0 reaching the promise: reported at its line, naming the mask, not later as a producer that waits
 * forever. */
static void test_mask_assume_zero(void **state) {
  (void)state;
  const kbd_status s = run_release(1, RM_NO_OWN_BIT);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(r_assume_line));
  MT_ASSERT_HAS(s, "kbd_cluster_mask_assume(mask): the multicast mask is 0");
}

/* The same mask without the promise: what the machine reported before it, a deadlock (so the check is what names
 * the line). */
static void test_mask_zero_unchecked(void **state) {
  (void)state;
  const kbd_status s = run_release(1, RM_NO_OWN_BIT_UNCHECKED);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  MT_ASSERT_LACKS(s, "kbd_cluster_mask_assume");
}

/* ---- multicast TMA ------------------------------------------------------------------------------------------ */

#define MR 16 /* tile rows */
#define MC 32 /* tile cols (f32): 128-byte lines */
typedef KBD_STILE(f32, MR, MC, KBD_SWIZZLE_NONE) mc_tile;
typedef KBD_STILE(f32, MR / 2, MC, KBD_SWIZZLE_NONE) mc_half;
typedef KBD_STILE(f32, MR / 4, MC, KBD_SWIZZLE_NONE) mc_quarter;

enum { M_OK, M_EXPECT_SLICE, M_BAD_MASK, M_NO_INIT_SYNC, M_RELAXED_START, M_RELAXED_NO_FENCE };

typedef struct {
  kbd_tensor_map x; /* (clusters * MR) x MC f32, box MR/n x MC */
  float *out;       /* per block: its whole tile */
  int mode;
} mc_params;

static int m_issue_line, m_read_line;

/* CTA r loads rows [r*MR/n, (r+1)*MR/n) of its cluster's tile and multicasts them to every CTA: each CTA's
 * tile fills from n slices, one from each CTA, and its barrier expects the whole tile. */
KBD_KERNEL(cl_multicast, 64, mc_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, full, 1, 8);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  const int rows = MR / (int)n, y = (int)(kbd_cluster_id_x() * MR + rank * (unsigned)rows);
  unsigned char *slice = smem + (size_t)rank * (size_t)rows * MC * 4;
  const uint16_t mask = p.mode == M_BAD_MASK ? (uint16_t)(1u << n) : (uint16_t)((1u << n) - 1u);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&full[0], 1);
      if (p.mode != M_RELAXED_NO_FENCE) kbd_fence_mbarrier_init();
    }
  }
  if (p.mode == M_RELAXED_START || p.mode == M_RELAXED_NO_FENCE) {
    /* The CUTLASS kernel start: the fence publishes the inits, a relaxed cluster barrier orders the rest */
    kbd_cluster_arrive_relaxed();
    kbd_cluster_wait();
  } else if (p.mode != M_NO_INIT_SYNC) {
    kbd_cluster_sync();
  }
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&full[0], p.mode == M_EXPECT_SLICE ? (unsigned)rows * MC * 4 : MR * MC * 4);
      if (n == 1) {
        mc_tile t = KBD_STILE_AT(mc_tile, slice);
        MT_MARK(m_issue_line); kbd_tma_load_multicast2d(t, &p.x, &full[0], mask, y, 0);
      } else if (n == 2) {
        mc_half t = KBD_STILE_AT(mc_half, slice);
        MT_MARK(m_issue_line); kbd_tma_load_multicast2d(t, &p.x, &full[0], mask, y, 0);
      } else {
        mc_quarter t = KBD_STILE_AT(mc_quarter, slice);
        MT_MARK(m_issue_line); kbd_tma_load_multicast2d(t, &p.x, &full[0], mask, y, 0);
      }
    }
  }
  kbd_mbarrier_wait(&full[0], 0);
  const float *f = (const float *)(void *)smem;
  const unsigned b = kbd_block_x();
  KBD_FOR_LANES(lane) {
    for (int i = kbd_warp_id() * 32 + lane; i < MR * MC; i += 64) {
      MT_MARK(m_read_line); p.out[b * MR * MC + (unsigned)i] = kbd_ld_shared(&f[i]);
    }
  }
  kbd_cluster_sync();
}

#define MCLUSTERS 3
static float host_x[MCLUSTERS * MR * MC], host_o[4 * MCLUSTERS * MR * MC];
static float *dev_x, *dev_o;

static int mc_setup(void **state) {
  (void)state;
  for (int i = 0; i < MCLUSTERS * MR * MC; ++i)
    host_x[i] = (float)((i * 53) % 97) - 40.0f;
  if (kbd_malloc((void **)&dev_x, sizeof host_x).code != KBD_OK) return -1;
  if (kbd_malloc((void **)&dev_o, sizeof host_o).code != KBD_OK) return -1;
  return kbd_copy_to_device(dev_x, host_x, sizeof host_x).code == KBD_OK ? 0 : -1;
}

static kbd_status run_mc(unsigned n, int mode) {
  mc_params p;
  memset(&p, 0, sizeof p);
  kbd_tensor_map_desc d =
      kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, dev_x, MCLUSTERS * MR, MC, MC * 4, MR / n, MC, KBD_TMAP_SWIZZLE_NONE);
  assert_int_equal(kbd_tensor_map_encode(&p.x, &d).code, KBD_OK);
  p.out = dev_o;
  p.mode = mode;
  assert_int_equal(kbd_memset_device(dev_o, 0xff, sizeof host_o).code, KBD_OK);
  kbd_launch_cfg c = cfg3(MCLUSTERS * n, 1, 1, n, 1, 1);
  c.smem_bytes = MR * MC * 4;
  return cl_multicast(c, p);
}

static void test_multicast(void **state) {
  (void)state;
  for (int mode = M_OK; mode <= M_RELAXED_START; mode += M_RELAXED_START - M_OK)
  for (unsigned n = 1; n <= 4; n *= 2)
    for (long seed = -1; seed < 8; ++seed)
      for (long threads = 1; threads <= 2; ++threads) {
        mt_env(threads, seed);
        const kbd_status s = run_mc(n, mode);
        if (s.code != KBD_OK) fail_msg("%u CTAs seed %ld threads %ld: %s", n, seed, threads, s.msg);
        assert_int_equal(kbd_copy_to_host(host_o, dev_o, sizeof host_o).code, KBD_OK);
        for (unsigned b = 0; b < MCLUSTERS * n; ++b)
          for (int i = 0; i < MR * MC; ++i)
            if (host_o[b * MR * MC + (unsigned)i] != host_x[(b / n) * MR * MC + (unsigned)i])
              fail_msg("%u CTAs: block %u element %d is %g, want %g", n, b, i, (double)host_o[b * MR * MC + (unsigned)i],
                       (double)host_x[(b / n) * MR * MC + (unsigned)i]);
      }
}

/* The barrier expects only this CTA's own slice: the phase completes before the peers' slices land. */
static void test_multicast_expect_slice(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status s = run_mc(2, M_EXPECT_SLICE);
    MT_ASSERT_CODE(s, KBD_ERR_POISON);
    MT_ASSERT_AT(s, MT_LINE(m_read_line));
    /* the peer's slice is either not issued yet or issued and still in flight */
    if (!strstr(s.msg, "never-written") && !strstr(s.msg, "asynchronous copy is still writing")) fail_msg("%s", s.msg);
  }
}

static void test_multicast_bad_mask(void **state) {
  (void)state;
  const kbd_status s = run_mc(2, M_BAD_MASK);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(m_issue_line));
  MT_ASSERT_HAS(s, "CTA mask 0x0004");
}

/* The relaxed kernel start without the fence: nothing publishes the barrier inits, to peers or to the CTA's own
 * other warps. */
static void test_multicast_relaxed_no_fence(void **state) {
  (void)state;
  const kbd_status s = run_mc(2, M_RELAXED_NO_FENCE);
  if (s.code != KBD_ERR_RACE && s.code != KBD_ERR_MBARRIER) fail_msg("%s", s.msg);
  MT_ASSERT_HAS(s, "mbarrier");
}

/* A multicast into peers whose barriers nothing orders after their initialisation. */
static void test_multicast_no_init_sync(void **state) {
  (void)state;
  const kbd_status s = run_mc(2, M_NO_INIT_SYNC);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(m_issue_line));
}

/* ---- the cluster barrier's rules ----------------------------------------------------------------------------- */

enum { B_EXIT, B_ELSEWHERE, B_TWICE, B_WAIT_ONLY, B_MAP_RANK, B_COLLECTIVE_IN_LANES };

typedef struct {
  int mode;
} bar_params;

static int b_line;

KBD_KERNEL(cl_bar, 64, bar_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, never, 1, 8);
  KBD_SHARED(int, buf, 4);
  const unsigned rank = kbd_cluster_ctarank();
  switch (p.mode) {
  case B_EXIT:
    if (rank == 1) return; /* CTA 1 skips the barrier */
    MT_MARK(b_line); kbd_cluster_sync();
    break;
  case B_ELSEWHERE:
    if (rank == 1 && kbd_warp_id() == 0) {
      KBD_ELECT_ONE { kbd_mbarrier_init(&never[0], 1); }
      MT_MARK(b_line); kbd_mbarrier_wait(&never[0], 0); /* nothing ever arrives */
    }
    kbd_cluster_sync();
    break;
  case B_TWICE:
    kbd_cluster_arrive();
    MT_MARK(b_line); kbd_cluster_arrive();
    kbd_cluster_wait();
    break;
  case B_WAIT_ONLY:
    MT_MARK(b_line); kbd_cluster_wait();
    break;
  case B_MAP_RANK: {
    MT_MARK(b_line); int *q = kbd_cluster_map(buf, kbd_cluster_size());
    (void)q;
    break;
  }
  default:
    KBD_FOR_LANES(lane) {
      (void)lane;
      MT_MARK(b_line); kbd_cluster_arrive();
    }
  }
}

static kbd_status run_bar(int mode) {
  bar_params p = {mode};
  return cl_bar(cfg3(4, 1, 1, 2, 1, 1), p);
}

static void test_barrier_skipped_by_exit(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status s = run_bar(B_EXIT);
    MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
    MT_ASSERT_AT(s, MT_LINE(b_line));
    MT_ASSERT_HAS(s, "the cluster barrier is reached while warp(s) ");
    MT_ASSERT_HAS(s, "(CTA 1) have exited");
  }
}

static void test_barrier_skipped_waiting_elsewhere(void **state) {
  (void)state;
  const kbd_status s = run_bar(B_ELSEWHERE);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  MT_ASSERT_HAS(s, "every live warp of the cluster waits");
  MT_ASSERT_HAS(s, "cluster CTA 0 (block 0,0,0):");
  MT_ASSERT_HAS(s, "cluster CTA 1 (block 1,0,0):");
  MT_ASSERT_HAS(s, "waits for the cluster barrier to complete phase 0 (3 of 4 warps of the cluster arrived");
  char want[4096];
  MT_ASSERT_HAS(s, mt_fmt(want, sizeof want, "warp 0 at %s:%d waits for mbarrier", __FILE__, MT_LINE(b_line)));
}

static void test_barrier_misuse(void **state) {
  (void)state;
  static const struct {
    int mode;
    kbd_code code;
    const char *msg;
  } cases[] = {
      {B_TWICE, KBD_ERR_BARRIER, "kbd_cluster_arrive twice without a kbd_cluster_wait between"},
      {B_WAIT_ONLY, KBD_ERR_BARRIER, "kbd_cluster_wait without a kbd_cluster_arrive before it"},
      {B_MAP_RANK, KBD_ERR_INVALID, "kbd_cluster_map: cluster rank 2, but the cluster has 2 CTA(s)"},
      {B_COLLECTIVE_IN_LANES, KBD_ERR_ISSUE, "kbd_cluster_arrive inside per-lane code"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const kbd_status s = run_bar(cases[k].mode);
    MT_ASSERT_CODE(s, cases[k].code);
    MT_ASSERT_AT(s, MT_LINE(b_line));
    MT_ASSERT_HAS(s, cases[k].msg);
  }
}

/* ---- launch rules --------------------------------------------------------------------------------------------- */

static void test_launch_rules(void **state) {
  (void)state;
  static const struct {
    unsigned g[3], c[3];
    int nonportable;
    const char *msg; /* NULL: accepted */
  } cases[] = {
      {{4, 1, 1}, {3, 1, 1}, 0, "is not a whole number of clusters (3, 1, 1)"},
      {{4, 2, 1}, {2, 3, 1}, 0, "is not a whole number of clusters"},
      {{4, 2, 2}, {1, 1, 4}, 0, "is not a whole number of clusters"},
      {{4, 1, 1}, {0, 1, 1}, 0, "has a zero dimension"},
      {{4, 1, 1}, {2, 0, 1}, 0, "has a zero dimension"},
      {{9, 1, 1}, {9, 1, 1}, 0, "has 9 CTAs, over the portable 8; set cfg.cluster_nonportable = 1"},
      {{4, 4, 1}, {4, 4, 1}, 0, "over the portable 8"},
      {{32, 1, 1}, {32, 1, 1}, 1, "has 32 CTAs; sm_90/sm_100 allow at most 16"},
      {{8, 4, 1}, {4, 2, 2}, 1, "is not a whole number of clusters"},
      {{8, 4, 2}, {4, 4, 2}, 1, "has 32 CTAs; sm_90/sm_100 allow at most 16"},
      {{8, 1, 1}, {8, 1, 1}, 0, NULL},
      {{9, 1, 1}, {9, 1, 1}, 1, NULL},
      {{16, 2, 1}, {16, 1, 1}, 1, NULL},
      {{4, 4, 1}, {2, 2, 1}, 0, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    ids_params p = {dev_u};
    assert_int_equal(kbd_memset_device(dev_u, 0xab, sizeof host_u).code, KBD_OK);
    kbd_launch_cfg c = cfg3(cases[k].g[0], cases[k].g[1], cases[k].g[2], cases[k].c[0], cases[k].c[1], cases[k].c[2]);
    c.cluster_nonportable = cases[k].nonportable;
    const kbd_status s = cl_ids(c, p);
    assert_int_equal(kbd_copy_to_host(host_u, dev_u, sizeof host_u).code, KBD_OK);
    if (!cases[k].msg) {
      if (s.code != KBD_OK) fail_msg("case %zu: %s", k, s.msg);
      check_ids(cases[k].g[0], cases[k].g[1], cases[k].g[2], cases[k].c[0], cases[k].c[1], cases[k].c[2]);
      continue;
    }
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    MT_ASSERT_HAS(s, "launch of cl_ids: ");
    MT_ASSERT_HAS(s, cases[k].msg);
    for (size_t i = 0; i < sizeof host_u / sizeof host_u[0]; ++i) /* nothing ran */
      if (host_u[i] != 0xababababu) fail_msg("case %zu: output word %zu was written by a rejected launch", k, i);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_ids),
      MT_TEST(test_xchg_shapes),
      MT_TEST(test_xchg_no_start_sync),
      MT_TEST(test_xchg_no_end_sync),
      MT_TEST(test_xchg_race),
      MT_TEST(test_xchg_relaxed),
      MT_TEST(test_gather),
      MT_TEST(test_gather_no_init_sync),
      MT_TEST(test_gather_arrive_first),
      MT_TEST(test_gather_no_fence),
      MT_TEST(test_mask_assume),
      MT_TEST(test_mask_assume_zero),
      MT_TEST(test_mask_zero_unchecked),
      MT_TEST(test_multicast),
      MT_TEST(test_multicast_expect_slice),
      MT_TEST(test_multicast_bad_mask),
      MT_TEST(test_multicast_no_init_sync),
      MT_TEST(test_multicast_relaxed_no_fence),
      MT_TEST(test_barrier_skipped_by_exit),
      MT_TEST(test_barrier_skipped_waiting_elsewhere),
      MT_TEST(test_barrier_misuse),
      MT_TEST(test_launch_rules),
  };
  if (group_setup(NULL) || mc_setup(NULL)) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
