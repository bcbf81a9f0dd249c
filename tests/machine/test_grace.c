/* test_grace.c - races on global memory (kbd/cpu/grace.h, docs/cpu-machine.md "Races on global memory").
 *
 * Every racy kernel here must be reported in its FIRST run, under the default schedule and every seed, on 1, 2 and 8
 * host threads, naming both sites; every correct kernel (release/acquire chains, barriers, atomics, kernel
 * boundaries) must run clean in the same configurations.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define ROW 127 /* a row per block, one element shorter than the tile: the off-by-one */
#define TL 128
#define NB 24 /* blocks */

static const long g_threads[] = {1, 2, 8};
static const long g_seeds[] = {0, 1, 7, 12345};
#define FOR_CONFIGS(t, s)                                                                                              \
  for (int t = 0; t < 3; ++t)                                                                                          \
    for (int s = 0; s < 4; ++s)

static int line_a, line_b;

/* "test_grace.c:<line>" of the earlier access, as a report names it. */
#define ASSERT_NAMES(st, line)                                                                                         \
  do {                                                                                                                 \
    char b_[256];                                                                                                      \
    MT_ASSERT_HAS(st, mt_fmt(b_, sizeof b_, "test_grace.c:%d", (line)));                                               \
  } while (0)

/* ---- the off-by-one store into the next block's row ------------------------------------------------------------ */

typedef struct {
  float *out;
  long long n;
  int fixed; /* 1: each block bounds its store by its own row */
} row_params;

/* MT_MARK and the access it marks share a line */
/* clang-format off */
KBD_KERNEL(row_k, 128, row_params) {
  const long long b = kbd_block_x();
  KBD_TILE(f32, 1, TL, KBD_CTA) t;
  kbd_fill(t, (float)b);
  /* the bug: bounded by the whole array, so the tile's last element lands on the next block's first */
  const long long bound = p.fixed ? (b + 1) * ROW : p.n;
  MT_MARK(line_a); kbd_store(p.out, t, bound, b * ROW);
}
/* clang-format on */

static void test_off_by_one_reported(void **state) {
  (void)state;
  const long long n = (long long)NB * ROW + 1;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof *out));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    const kbd_status st = row_k(kbd_cfg_1d(NB), (row_params){out, n, 0});
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    MT_ASSERT_AT(st, MT_LINE(line_a)); /* this access ... */
    ASSERT_NAMES(st, MT_LINE(line_a)); /* ... and the earlier one: the same store of the neighbour block */
    MT_ASSERT_HAS(st, "data race (write after write) on global memory: byte ");
    MT_ASSERT_HAS(st, "this access: block (");
    MT_ASSERT_HAS(st, "earlier:     block (");
    MT_ASSERT_HAS(st, "different blocks, and no release/acquire chain between them");
    if (g_threads[t] == 1) { /* blocks in order: block 1 overwrites what block 0 stored past its row */
      MT_ASSERT_HAS(st, "byte 508 of the 12196-byte allocation");
      MT_ASSERT_HAS(st, "this access: block (1,0,0) warp 0 writes it here (kbd_store)");
      MT_ASSERT_HAS(st, "earlier:     block (0,0,0) warp 3 wrote it at");
    }
  }
  MT_ASSERT_OK(kbd_free(out));
}

/* The fixed kernel, whatever it stores, and the buggy one with the checker switched off, run clean. */
static void test_rows_clean_and_switch(void **state) {
  (void)state;
  const long long n = (long long)NB * ROW + 1;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof *out));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    MT_ASSERT_OK(row_k(kbd_cfg_1d(NB), (row_params){out, n, 1}));
    for (long long i = 0; i < (long long)NB * ROW; ++i)
      assert_true(out[i] == (float)(i / ROW));
  }
  setenv("KBD_CPU_GLOBAL_RACECHECK", "0", 1);
  MT_ASSERT_OK(row_k(kbd_cfg_1d(NB), (row_params){out, n, 0}));
  unsetenv("KBD_CPU_GLOBAL_RACECHECK");
  setenv("KBD_CPU_RACECHECK", "0", 1); /* turns off both checkers */
  MT_ASSERT_OK(row_k(kbd_cfg_1d(NB), (row_params){out, n, 0}));
  unsetenv("KBD_CPU_RACECHECK");
  MT_ASSERT_CODE(row_k(kbd_cfg_1d(NB), (row_params){out, n, 0}), KBD_ERR_RACE);
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- write after read across blocks --------------------------------------------------------------------------- */

typedef struct {
  float *x, *y;
} war_params;

/* MT_MARK and the access it marks share a line */
/* clang-format off */
KBD_KERNEL(war_k, 64, war_params) {
  KBD_TILE(f32, 1, TL, KBD_CTA) t;
  if (kbd_block_x() == 0) {
    MT_MARK(line_a); kbd_load(t, p.x, TL, 0);
    kbd_store(p.y, t, TL, 0);
  } else {
    kbd_fill(t, 2.0f);
    MT_MARK(line_b); kbd_store(p.x, t, TL, 0);
  }
}
/* clang-format on */

static void test_write_after_read_blocks(void **state) {
  (void)state;
  float *x = NULL, *y = NULL, h[TL] = {0};
  MT_ASSERT_OK(kbd_malloc((void **)&x, sizeof h));
  MT_ASSERT_OK(kbd_malloc((void **)&y, sizeof h));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    MT_ASSERT_OK(kbd_copy_to_device(x, h, sizeof h));
    const kbd_status st = war_k(kbd_cfg_1d(2), (war_params){x, y});
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    if (g_threads[t] == 1) { /* block 0 read first: block 1's store is the write after read */
      MT_ASSERT_AT(st, MT_LINE(line_b));
      ASSERT_NAMES(st, MT_LINE(line_a));
      MT_ASSERT_HAS(st, "data race (write after read) on global memory");
      MT_ASSERT_HAS(st, "earlier:     block (0,0,0) warp");
    } else { /* either order: both sites named, one as this access, the other as the earlier one */
      ASSERT_NAMES(st, MT_LINE(line_a));
      ASSERT_NAMES(st, MT_LINE(line_b));
    }
  }
  MT_ASSERT_OK(kbd_free(x));
  MT_ASSERT_OK(kbd_free(y));
}

/* ---- two warps of one block ----------------------------------------------------------------------------------- */

typedef struct {
  float *out;
  int barrier;
} warps_params;

/* MT_MARK and the access it marks share a line */
/* clang-format off */
KBD_KERNEL(warps_k, 64, warps_params) {
  const int w = kbd_warp_id();
  KBD_TILE(f32, 1, 32, KBD_WARP) t;
  kbd_fill(t, (float)w);
  if (w == 0) {
    MT_MARK(line_a); kbd_store(p.out, t, 32, 0);
  }
  if (p.barrier) kbd_sync();
  if (w == 1) {
    MT_MARK(line_b); kbd_store(p.out, t, 32, 0);
  }
}
/* clang-format on */

static void test_two_warps(void **state) {
  (void)state;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, 32 * sizeof *out));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    const kbd_status st = warps_k(kbd_cfg_1d(1), (warps_params){out, 0});
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    MT_ASSERT_HAS(st, "data race (write after write) on global memory");
    MT_ASSERT_HAS(st, "two warps of one block, and no barrier that both take part in");
    ASSERT_NAMES(st, MT_LINE(line_a));
    ASSERT_NAMES(st, MT_LINE(line_b));
    MT_ASSERT_OK(warps_k(kbd_cfg_1d(1), (warps_params){out, 1}));
    assert_true(out[0] == 1.0f && out[31] == 1.0f);
  }
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- a release/acquire chain between blocks --------------------------------------------------------------------- */

enum { CH_RELEASE, CH_RELAXED, CH_NO_BARRIER, CH_LATE_WRITE };
static int line_c;
typedef struct {
  float *data; /* NB rows of TL */
  uint32_t *flag;
  int mode;
} chain_params;

/* Block b waits for block b - 1 (warp 0 acquires its flag), reads its row (all warps, after a barrier), stores the
 * row + 1, and publishes (warp 3, after a barrier: what warp 0 acquired travels through the barriers). Broken forms:
 * a relaxed flag, a reader that did not wait (warp 1 without the barrier), the releasing warp storing again after its
 * release. */
/* MT_MARK and the access it marks share a line */
/* clang-format off */
KBD_KERNEL(chain_k, 128, chain_params) {
  const long long b = kbd_block_x();
  const int w = kbd_warp_id();
  KBD_TILE(f32, 1, TL, KBD_CTA) t;
  kbd_fill(t, 0.0f);
  if (b > 0) {
    if (p.mode == CH_NO_BARRIER) { /* warp 1 reads what only warp 0 waited for */
      if (w == 0) KBD_SPIN_UNTIL(kbd_ld_acquire_u32(&p.flag[b - 1]) != 0);
      if (w == 1) {
        KBD_TILE(f32, 1, TL, KBD_WARP) u;
        MT_MARK(line_b); kbd_load(u, p.data + (b - 1) * TL, TL, 0);
      }
      return;
    }
    if (w == 0) KBD_SPIN_UNTIL(kbd_ld_acquire_u32(&p.flag[b - 1]) != 0);
    kbd_sync();
    MT_MARK(line_b); kbd_load(t, p.data + (b - 1) * TL, TL, 0);
    kbd_add_s(t, t, 1.0f);
  }
  MT_MARK(line_a); kbd_store(p.data + b * TL, t, TL, 0);
  kbd_sync();
  if (w == 3) {
    KBD_ELECT_ONE {
      if (p.mode == CH_RELAXED)
        (void)kbd_atomic_add_u32(&p.flag[b], 1u); /* orders nothing */
      else
        kbd_st_release_u32(&p.flag[b], 1u);
    }
    if (p.mode == CH_LATE_WRITE) { /* after its release: not published by it */
      KBD_TILE(f32, 1, TL, KBD_WARP) u;
      kbd_fill(u, 0.5f);
      MT_MARK(line_c); kbd_store(p.data + b * TL, u, TL, 0);
    }
  }
}
/* clang-format on */

static kbd_status run_chain(float *data, uint32_t *flag, int mode) {
  MT_ASSERT_OK(kbd_memset_device(flag, 0, NB * sizeof *flag));
  return chain_k(kbd_cfg_1d(NB), (chain_params){data, flag, mode});
}

static void test_chain(void **state) {
  (void)state;
  float *data = NULL;
  uint32_t *flag = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&data, NB * TL * sizeof *data));
  MT_ASSERT_OK(kbd_malloc((void **)&flag, NB * sizeof *flag));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    MT_ASSERT_OK(run_chain(data, flag, CH_RELEASE));
    for (int i = 0; i < NB * TL; ++i)
      assert_true(data[i] == (float)(i / TL));
    kbd_status st = run_chain(data, flag, CH_RELAXED);
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    MT_ASSERT_AT(st, MT_LINE(line_b));
    ASSERT_NAMES(st, MT_LINE(line_a));
    MT_ASSERT_HAS(st, "data race (read after write) on global memory");
    MT_ASSERT_HAS(st, "a relaxed atomic or a plain store orders nothing");
    st = run_chain(data, flag, CH_NO_BARRIER);
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    ASSERT_NAMES(st, MT_LINE(line_a));
    ASSERT_NAMES(st, MT_LINE(line_b));
    if (g_threads[t] == 1) MT_ASSERT_AT(st, MT_LINE(line_b)); /* in parallel warp 1 may also read before the store */
    st = run_chain(data, flag, CH_LATE_WRITE);
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    ASSERT_NAMES(st, MT_LINE(line_c));
    ASSERT_NAMES(st, MT_LINE(line_b));
    if (g_threads[t] == 1) {
      MT_ASSERT_AT(st, MT_LINE(line_b));
      MT_ASSERT_HAS(st, "data race (read after write) on global memory");
    }
  }
  MT_ASSERT_OK(kbd_free(data));
  MT_ASSERT_OK(kbd_free(flag));
}

/* ---- atomics, an acq_rel ticket, kernel boundaries -------------------------------------------------------------- */

typedef struct {
  uint32_t *ctr; /* [0] relaxed count, [1] acq_rel ticket */
  float *fsum;
  float *part; /* one per block */
  float *total;
} atom_params;

/* Every lane of every warp adds to the same words; the last block (by the acq_rel ticket) reads every block's
 * partial with all its warps after a barrier: ordered through the ticket's release sequence. */
KBD_KERNEL(atom_k, 128, atom_params) {
  KBD_FOR_LANES(lane) {
    (void)lane;
    (void)kbd_atomic_add_u32(&p.ctr[0], 1u);
    (void)kbd_atomic_add_f32(p.fsum, 1.0f);
  }
  KBD_SHARED(uint32_t, last, 1);
  if (kbd_warp_id() == 0) {
    KBD_FOR_LANES(lane) {
      if (lane == 0) kbd_st_global(&p.part[kbd_block_x()], (float)kbd_block_x());
    }
    KBD_ELECT_ONE_VALUE(uint32_t, done, kbd_atomic_add_acq_rel_u32(&p.ctr[1], 1u));
    KBD_FOR_LANES(lane) {
      if (lane == 0) last[0] = done == kbd_grid_x() - 1;
    }
  }
  kbd_sync();
  if (last[0]) {
    KBD_TILE(f32, 1, TL, KBD_CTA) t;
    kbd_load(t, p.part, (long long)kbd_grid_x(), 0);
    float sum;
    kbd_reduce(sum, t, KBD_RED_SUM);
    if (kbd_warp_id() == 0) {
      KBD_FOR_LANES(lane) {
        if (lane == 0) kbd_st_global(p.total, sum);
      }
    }
  }
}

static void test_atomics_clean(void **state) {
  (void)state;
  uint32_t *ctr = NULL;
  float *f = NULL; /* [0] fsum, [1] total, [2..] partials */
  MT_ASSERT_OK(kbd_malloc((void **)&ctr, 2 * sizeof *ctr));
  MT_ASSERT_OK(kbd_malloc((void **)&f, (2 + TL) * sizeof *f));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    MT_ASSERT_OK(kbd_memset_device(ctr, 0, 2 * sizeof *ctr));
    MT_ASSERT_OK(kbd_memset_device(f, 0, (2 + TL) * sizeof *f));
    MT_ASSERT_OK(atom_k(kbd_cfg_1d(40), (atom_params){ctr, f, f + 2, f + 1}));
    assert_int_equal(ctr[0], 40 * 128);
    assert_int_equal(ctr[1], 40);
    assert_true(f[0] == 40.0f * 128.0f);
    assert_true(f[1] == 40.0f * 39.0f / 2.0f);
  }
  MT_ASSERT_OK(kbd_free(ctr));
  MT_ASSERT_OK(kbd_free(f));
}

/* Launch 1: block b writes row b. Host copy over row 0. Launch 2: block b reads row (b + 1) % NB (written by another
 * block, in the earlier launch or by the host) and writes row b of another array: ordered by the kernel boundary. */
typedef struct {
  float *a, *c;
  int phase;
} bound_params;

KBD_KERNEL(bound_k, 64, bound_params) {
  const long long b = kbd_block_x();
  KBD_TILE(f32, 1, TL, KBD_CTA) t;
  if (p.phase == 0) {
    kbd_fill(t, (float)b);
    kbd_store(p.a + b * TL, t, TL, 0);
  } else {
    kbd_load(t, p.a + ((b + 1) % NB) * TL, TL, 0);
    kbd_store(p.c + b * TL, t, TL, 0);
  }
}

static void test_kernel_boundary_clean(void **state) {
  (void)state;
  float *a = NULL, *c = NULL, h[TL];
  for (int i = 0; i < TL; ++i)
    h[i] = -1.0f;
  MT_ASSERT_OK(kbd_malloc((void **)&a, NB * TL * sizeof *a));
  MT_ASSERT_OK(kbd_malloc((void **)&c, NB * TL * sizeof *c));
  FOR_CONFIGS(t, s) {
    mt_env(g_threads[t], g_seeds[s]);
    MT_ASSERT_OK(bound_k(kbd_cfg_1d(NB), (bound_params){a, c, 0}));
    MT_ASSERT_OK(kbd_copy_to_device(a, h, sizeof h));
    MT_ASSERT_OK(bound_k(kbd_cfg_1d(NB), (bound_params){a, c, 1}));
    MT_ASSERT_OK(bound_k(kbd_cfg_1d(NB), (bound_params){a, c, 0})); /* rewrites what launch 2 read */
    assert_true(c[(NB - 1) * TL] == -1.0f && c[0] == 1.0f);
  }
  MT_ASSERT_OK(kbd_free(a));
  MT_ASSERT_OK(kbd_free(c));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_off_by_one_reported),
      MT_TEST(test_rows_clean_and_switch),
      MT_TEST(test_write_after_read_blocks),
      MT_TEST(test_two_warps),
      MT_TEST(test_chain),
      MT_TEST(test_atomics_clean),
      MT_TEST(test_kernel_boundary_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
