/* test_mma_ts.c - tcgen05.mma with A from Tensor Memory (kbd/mma_ts.h: kbd_tmem_a_store, kbd_tmem_a_ready,
 * kbd_mma_ts_issue) on the CPU machine emulating sm_100a.
 *
 * One CTA of 256 threads: warp 1 is the MMA warp, warpgroup 1 writes A and reads D. For each of T tiles the
 * warpgroup stores A_t (M x K, bf16 or f16) from registers into the same Tensor Memory columns - in two column
 * halves, so k0 != 0 is exercised - and signals; the MMA warp waits, issues D = A_t B^T (B: N x K shared,
 * K-major or MN-major), on odd tiles D += A_t B^T once more, and commits; the warpgroup waits for the commit,
 * reads D and only then stores the next A over the cells the MMA read. Inputs are small multiples of 1/4, so
 * every result is exact and compared bit for bit with a scalar reference (default schedule, seeds 0-3).
 *
 * M = 64 (Layout F): kbd_tmem_a_store takes 128-row A only, so that kernel writes the cells itself with
 * tcgen05.st.32x32b, from the PTX ISA's layout written out here independently of kbd/mma_ts_layout.h (row
 * 16w + i at lane 32w + i, elements 2j and 2j + 1 in the low and high half of column j), and kbd_mma_ts_issue
 * reads them through the library's layout function: the two must agree for the numbers to come out.
 *
 * Broken variants, each reported in the first run under the default schedule at the line that breaks the rule:
 * the MMA warp issuing before the warpgroup signalled A (no wait on the barrier), the warpgroup signalling
 * without tcgen05.wait::st, and the next A stored over the cells after waiting for the wrong event (the MMA warp's
 * arrive after its issue, not the commit): the MMA may still read them.
 *
 * D over A (ts_d_over_a): an MMA that writes its D over cells an earlier MMA of the same thread reads as A. PTX
 * orders two MMAs of one thread only when they share the accumulator, so the writer needs the reader's
 * completion: with a wait on the reader's commit the kernel is clean, also when another warp waited and passed
 * the completion on through an mbarrier or a named barrier; without it the second MMA is reported, whether the
 * reader is still uncommitted, committed but not waited for, or "passed on" by a warp that never waited.
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

enum {
  TS_OK,
  TS_NO_READY_WAIT,
  TS_NO_WAIT_ST,
  TS_STORE_UNDER_MMA,
  TS_DA_NO_WAIT,
  TS_DA_NO_COMMIT,
  TS_DA_RELAY_MBAR,   /* warp 1 waits for X's commit and passes it on through an mbarrier: clean */
  TS_DA_RELAY_BAR,    /* ... through a named barrier with warp 0: clean */
  TS_DA_RELAY_NOWAIT, /* warp 1 arrives on the relay without waiting for X: reported */
};

typedef struct ts_params {
  const void *a, *b; /* a: T x M x K, b: N x K (bf16 or f16) */
  float *d;          /* T x M x N */
  int *bad;          /* M = 128: cells kbd_tmem_a_store wrote that differ from the PTX ISA's layout */
  int tiles, brk;
} ts_params;

static int ts_line_issue, ts_line_store, ts_line_ready, ts_line_over;

#define TS_N 64
#define TS_K 64
typedef KBD_STILE(bf16, TS_N, TS_K, KBD_SWIZZLE_128B) ts_b_bf16;
typedef KBD_STILE_MN(f16, TS_N, TS_K, KBD_SWIZZLE_64B) ts_b_f16mn;

/* One kernel per (type, B tile) for M = 128, written once. The warpgroup's A store and D read are in this body so
 * that every broken variant names a line of this file. */
#define TS_KERNEL_128(name, DT, BT)                                                                                    \
  KBD_KERNEL(name, 256, ts_params) {                                                                                   \
    KBD_SHARED_STILE(BT, b);                                                                                           \
    KBD_SHARED(kbd_mbarrier, aready, 1);                                                                               \
    KBD_SHARED(kbd_mbarrier, dfull, 1);                                                                                \
    KBD_SHARED(kbd_mbarrier, issued, 1); /* TS_STORE_UNDER_MMA: the wrong event (issued, not completed) */             \
    KBD_SHARED(kbd_tmem, tm, 1);                                                                                       \
    {                                                                                                                  \
      KBD_TILE(DT, TS_N, TS_K, KBD_CTA) rb;                                                                            \
      kbd_load2d(rb, (const kbd_##DT *)p.b, TS_N, TS_K, TS_K, 0, 0);                                                   \
      kbd_stile_store(b, rb);                                                                                          \
      kbd_fence_proxy_async(); /* generic stores -> the MMA's async-proxy reads */                                     \
    }                                                                                                                  \
    if (kbd_warp_id() == 0) {                                                                                          \
      KBD_ELECT_ONE {                                                                                                  \
        kbd_mbarrier_init(aready, KBD_ACC_RELEASES(128));                                                              \
        kbd_mbarrier_init(dfull, 1);                                                                                   \
        kbd_mbarrier_init(issued, 1);                                                                                  \
      }                                                                                                                \
      kbd_tmem_alloc(tm, 128);                                                                                         \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    KBD_ACC(f32, 128, TS_N) acc;                                                                                       \
    KBD_TMEM_A(DT, 128, TS_K) ta;                                                                                      \
    kbd_acc_bind(acc, tm, 0, dfull);                                                                                   \
    kbd_tmem_a_bind(ta, tm, TS_N);                                                                                     \
    if (kbd_warp_id() == 1) {                                                                                          \
      for (int t = 0; t < p.tiles; ++t) {                                                                              \
        if (p.brk != TS_NO_READY_WAIT) kbd_acc_wait(acc, aready, (unsigned)t & 1u);                                    \
        MT_MARK(ts_line_issue); kbd_mma_ts_issue(acc, ta, b, 0);                                                       \
        if (t % 2 == 1) kbd_mma_ts_issue(acc, ta, b, 1);                                                               \
        if (p.brk == TS_STORE_UNDER_MMA) {                                                                             \
          KBD_ELECT_ONE { kbd_mbarrier_arrive(issued); }                                                               \
        }                                                                                                              \
        kbd_mma_commit(acc, dfull);                                                                                    \
      }                                                                                                                \
    } else if (kbd_warpgroup_id() == 1) {                                                                              \
      for (int t = 0; t < p.tiles; ++t) {                                                                              \
        /* the D of tile t-1 is read before A_t overwrites the cells its MMA read; TS_STORE_UNDER_MMA waits for the    \
         * issue instead, and reads D after the store */                                                              \
        if (t > 0 && p.brk != TS_STORE_UNDER_MMA) ts_read_d(acc, dfull, p, t - 1);                                     \
        if (t > 0 && p.brk == TS_STORE_UNDER_MMA) kbd_mbarrier_wait(issued, (unsigned)(t - 1) & 1u);                   \
        for (int h = 0; h < 2; ++h) {                                                                                  \
          KBD_ACC_TILE(DT, 128, TS_K / 2) ra;                                                                          \
          kbd_load2d(ra, (const kbd_##DT *)p.a + (size_t)t * 128 * TS_K, 128, TS_K, TS_K, 0, h * TS_K / 2);            \
          MT_MARK(ts_line_store); kbd_tmem_a_store(ta, ra, h * TS_K / 2);                                              \
        }                                                                                                              \
        if (t > 0 && p.brk == TS_STORE_UNDER_MMA) ts_read_d(acc, dfull, p, t - 1);                                     \
        if (p.brk == TS_NO_WAIT_ST) {                                                                                  \
          kbd_hw_tcgen05_fence_before(KBD_SITE); /* kbd_tmem_a_ready without its tcgen05.wait::st */                 \
          KBD_ELECT_ONE { kbd_mbarrier_arrive(aready); }                                                               \
        } else {                                                                                                       \
          MT_MARK(ts_line_ready); kbd_tmem_a_ready(ta, aready);                                                        \
        }                                                                                                              \
        if (p.brk == TS_OK) ts_check_cells(ta, p, t);                                                                  \
      }                                                                                                                \
      ts_read_d(acc, dfull, p, p.tiles - 1);                                                                           \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);                                                                    \
  }

/* The cells kbd_tmem_a_store wrote, read back by the warp that wrote them (its lanes 32(w%4)..): the PTX ISA's
 * layout for M = 128, written out independently of kbd/mma_ts_layout.h - row 32w + i at lane 32w + i, elements
 * 2j and 2j + 1 in the low and high half of column j. */
#define ts_check_cells(ta, p, t)                                                                                       \
  do {                                                                                                                 \
    const int w_ = kbd_warp_id() & 3;                                                                                  \
    uint32_t got_[KBD_LANES_HELD * 32];                                                                                \
    kbd_hw_tmem_ld(got_, 32, (ta).taddr + ((uint32_t)(32 * w_) << 16), KBD_TMEM_32X32B, TS_K / 2, KBD_SITE);           \
    kbd_hw_tmem_wait_ld(KBD_SITE);                                                                                     \
    const uint16_t *a_ = (const uint16_t *)(p).a + (size_t)(t)*128 * TS_K;                                             \
    KBD_FOR_LANES(i_) {                                                                                                \
      for (int j_ = 0; j_ < TS_K / 2; ++j_) {                                                                          \
        const int row_ = 32 * w_ + i_;                                                                                 \
        const uint32_t want_ = (uint32_t)a_[row_ * TS_K + 2 * j_] | (uint32_t)a_[row_ * TS_K + 2 * j_ + 1] << 16;      \
        if (got_[i_ * 32 + j_] != want_) __atomic_add_fetch((p).bad, 1, __ATOMIC_RELAXED);                             \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* The warpgroup waits for tile t's commit and stores its D. */
#define ts_read_d(acc, dfull, p, t)                                                                                    \
  do {                                                                                                                 \
    kbd_acc_wait(acc, dfull, (unsigned)(t)&1u);                                                                        \
    KBD_ACC_TILE(f32, KBD_ROWS(acc), TS_N) rd_;                                                                        \
    kbd_acc_load(rd_, acc, 0);                                                                                         \
    kbd_store2d((p).d + (size_t)(t)*KBD_ROWS(acc) * TS_N, rd_, KBD_ROWS(acc), TS_N, TS_N, 0, 0);                       \
  } while (0)

TS_KERNEL_128(ts_bf16_k, bf16, ts_b_bf16)
TS_KERNEL_128(ts_f16_mn, f16, ts_b_f16mn)

/* D over A: X = A(Tensor Memory, columns [64, 96)) B^T into D columns [0, 64), then Y = A(shared) B^T into D
 * columns [64, 128), over X's A. brk: TS_OK waits for X's commit before Y, TS_DA_NO_WAIT commits X but does not
 * wait, TS_DA_NO_COMMIT issues Y before committing X. */
typedef KBD_STILE(bf16, 128, TS_K, KBD_SWIZZLE_128B) ts_a_bf16;
KBD_KERNEL(ts_d_over_a, 128, ts_params) {
  KBD_SHARED_STILE(ts_b_bf16, b);
  KBD_SHARED_STILE(ts_a_bf16, as);
  KBD_SHARED(kbd_mbarrier, aready, 1);
  KBD_SHARED(kbd_mbarrier, xdone, 1);
  KBD_SHARED(kbd_mbarrier, ydone, 1);
  KBD_SHARED(kbd_mbarrier, relay, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_ACC_TILE(bf16, 128, TS_K) ra; /* thread t holds row t: the layout kbd_tmem_a_store takes */
  kbd_load2d(ra, (const kbd_bf16 *)p.a, 128, TS_K, TS_K, 0, 0);
  {
    KBD_TILE(bf16, TS_N, TS_K, KBD_WARPGROUP) rb;
    KBD_TILE(bf16, 128, TS_K, KBD_WARPGROUP) rs;
    kbd_load2d(rb, (const kbd_bf16 *)p.b, TS_N, TS_K, TS_K, 0, 0);
    kbd_load2d(rs, (const kbd_bf16 *)p.a, 128, TS_K, TS_K, 0, 0);
    kbd_stile_store(b, rb);
    kbd_stile_store(as, rs);
    kbd_fence_proxy_async();
  }
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(aready, KBD_ACC_RELEASES(128));
      kbd_mbarrier_init(xdone, 1);
      kbd_mbarrier_init(ydone, 1);
      kbd_mbarrier_init(relay, 1);
    }
    kbd_tmem_alloc(tm, 128);
  }
  kbd_sync();
  KBD_ACC(f32, 128, TS_N) x, y;
  KBD_TMEM_A(bf16, 128, TS_K) ta;
  kbd_acc_bind(x, tm, 0, xdone);
  kbd_acc_bind(y, tm, TS_N, ydone);
  kbd_tmem_a_bind(ta, tm, TS_N);
  kbd_tmem_a_store(ta, ra, 0);
  kbd_tmem_a_ready(ta, aready);
  if (kbd_warp_id() == 0) {
    kbd_acc_wait(x, aready, 0);
    kbd_mma_ts_issue(x, ta, b, 0);
    if (p.brk != TS_DA_NO_COMMIT) kbd_mma_commit(x, xdone);
    if (p.brk == TS_OK) kbd_acc_wait(x, xdone, 0);
    if (p.brk == TS_DA_RELAY_MBAR || p.brk == TS_DA_RELAY_NOWAIT) kbd_mbarrier_wait(relay, 0);
    if (p.brk == TS_DA_RELAY_BAR) kbd_bar_sync(1, 64);
    MT_MARK(ts_line_over); kbd_mma_issue(y, as, b, 0);
    kbd_mma_commit(y, ydone);
  } else if (kbd_warp_id() == 1) {
    if (p.brk == TS_DA_RELAY_MBAR || p.brk == TS_DA_RELAY_BAR) kbd_mbarrier_wait(xdone, 0);
    if (p.brk == TS_DA_RELAY_MBAR || p.brk == TS_DA_RELAY_NOWAIT) {
      KBD_ELECT_ONE { kbd_mbarrier_arrive(relay); }
    }
    if (p.brk == TS_DA_RELAY_BAR) kbd_bar_sync(1, 64);
  }
  kbd_acc_wait(y, ydone, 0);
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
}

/* M = 64: A written cell by cell (tcgen05.st.32x32b: thread i of warp w -> lane 32w + i, register j -> column j)
 * in the PTX ISA's Layout F, row 16w + i at lane 32w + i for i < 16; lanes 16..31 of each quarter are not A. */
KBD_KERNEL(ts_bf16_m64, 256, ts_params) {
  KBD_SHARED_STILE(ts_b_bf16, b);
  KBD_SHARED(kbd_mbarrier, aready, 1);
  KBD_SHARED(kbd_mbarrier, dfull, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  {
    KBD_TILE(bf16, TS_N, TS_K, KBD_CTA) rb;
    kbd_load2d(rb, (const kbd_bf16 *)p.b, TS_N, TS_K, TS_K, 0, 0);
    kbd_stile_store(b, rb);
    kbd_fence_proxy_async();
  }
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(aready, KBD_ACC_RELEASES(128));
      kbd_mbarrier_init(dfull, 1);
    }
    kbd_tmem_alloc(tm, 128);
  }
  kbd_sync();
  KBD_ACC(f32, 64, TS_N) acc;
  KBD_TMEM_A(bf16, 64, TS_K) ta;
  kbd_acc_bind(acc, tm, 0, dfull);
  kbd_tmem_a_bind(ta, tm, TS_N);
  if (kbd_warp_id() == 1) {
    for (int t = 0; t < p.tiles; ++t) {
      kbd_acc_wait(acc, aready, (unsigned)t & 1u);
      kbd_mma_ts_issue(acc, ta, b, 0);
      if (t % 2 == 1) kbd_mma_ts_issue(acc, ta, b, 1);
      kbd_mma_commit(acc, dfull);
    }
  } else if (kbd_warpgroup_id() == 1) {
    const int w = kbd_warp_id() & 3;
    for (int t = 0; t < p.tiles; ++t) {
      if (t > 0) ts_read_d(acc, dfull, p, t - 1);
      const uint16_t *a = (const uint16_t *)p.a + (size_t)t * 64 * TS_K;
      uint32_t cells[KBD_LANES_HELD * 32];
      KBD_FOR_LANES(i) {
        for (int j = 0; j < TS_K / 2; ++j)
          cells[i * 32 + j] =
              i < 16 ? (uint32_t)a[(16 * w + i) * TS_K + 2 * j] | (uint32_t)a[(16 * w + i) * TS_K + 2 * j + 1] << 16
                     : 0u;
      }
      kbd_hw_tmem_st(ta.taddr + ((uint32_t)(32 * w) << 16), cells, 32, KBD_TMEM_32X32B, TS_K / 2, KBD_SITE);
      kbd_tmem_a_ready(ta, aready);
    }
    ts_read_d(acc, dfull, p, p.tiles - 1);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
}

/* values: multiples of 1/4 in [-1, 1], exact in bf16 and f16, products and sums exact in f32 */
static float ts_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }
static uint16_t ts_bits(float x, int f16) { return f16 ? kbd_f32_to_f16(x).bits : kbd_f32_to_bf16(x).bits; }

typedef kbd_status (*ts_kernel_fn)(kbd_launch_cfg, ts_params);

/* Runs T tiles of an M-row kernel; returns its status and, when it ran, checks every element (exact). */
static kbd_status ts_run(ts_kernel_fn kern, int m, int f16, int tiles, int brk) {
  const size_t an = (size_t)tiles * (size_t)m * TS_K, dn = (size_t)tiles * (size_t)m * TS_N;
  uint16_t *ha = malloc(sizeof(uint16_t) * an), hb[TS_N * TS_K];
  float *hd = malloc(sizeof(float) * dn);
  assert_non_null(ha);
  assert_non_null(hd);
  for (int t = 0; t < tiles; ++t)
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < TS_K; ++k) ha[((size_t)t * m + i) * TS_K + k] = ts_bits(ts_value(i, k, 1 + t), f16);
  for (int n = 0; n < TS_N; ++n)
    for (int k = 0; k < TS_K; ++k) hb[n * TS_K + k] = ts_bits(ts_value(n, k, 5), f16);
  void *da, *db;
  float *dd;
  int *dbad, hbad = 0;
  assert_int_equal(kbd_malloc((void **)&dbad, sizeof(int)).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dbad, &hbad, sizeof(int)).code, KBD_OK);
  assert_int_equal(kbd_malloc(&da, sizeof(uint16_t) * an).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, sizeof hb).code, KBD_OK);
  assert_int_equal(kbd_malloc((void **)&dd, sizeof(float) * dn).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(uint16_t) * an).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof hb).code, KBD_OK);
  const ts_params p = {da, db, dd, dbad, tiles, brk};
  const kbd_status st = kern(kbd_cfg_1d(1), p);
  if (st.code == KBD_OK) {
    assert_int_equal(kbd_copy_to_host(hd, dd, sizeof(float) * dn).code, KBD_OK);
    assert_int_equal(kbd_copy_to_host(&hbad, dbad, sizeof(int)).code, KBD_OK);
    if (hbad) fail_msg("M %d: %d Tensor Memory cells of A differ from the PTX ISA's layout", m, hbad);
    for (int t = 0; t < tiles; ++t)
      for (int i = 0; i < m; ++i)
        for (int n = 0; n < TS_N; ++n) {
          double ref = 0;
          for (int k = 0; k < TS_K; ++k) ref += (double)ts_value(i, k, 1 + t) * (double)ts_value(n, k, 5);
          if (t % 2 == 1) ref *= 2;
          const float got = hd[((size_t)t * m + i) * TS_N + n];
          if ((double)got != ref) fail_msg("M %d tile %d: D[%d][%d] = %.9g, want %.9g", m, t, i, n, got, ref);
        }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd), kbd_free(dbad);
  free(ha), free(hd);
  return st;
}

static void ts_exact(ts_kernel_fn kern, int m, int f16) {
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = ts_run(kern, m, f16, 4, TS_OK);
    if (st.code != KBD_OK) fail_msg("M %d seed %ld: %s", m, seed, st.msg);
  }
}

static void test_m128_bf16_kmajor(void **state) {
  (void)state;
  ts_exact(ts_bf16_k, 128, 0);
}
static void test_m128_f16_mnmajor(void **state) {
  (void)state;
  ts_exact(ts_f16_mn, 128, 1);
}
static void test_m64_bf16(void **state) {
  (void)state;
  ts_exact(ts_bf16_m64, 64, 0);
}

static void ts_expect(int brk, kbd_code code, int line, const char *needle) {
  mt_env(1, -1);
  const kbd_status st = ts_run(ts_bf16_k, 128, 0, 3, brk);
  MT_ASSERT_CODE(st, code);
  MT_ASSERT_AT(st, line);
  MT_ASSERT_HAS(st, needle);
}

/* The MMA warp issues without waiting for the warpgroup's signal: A is read before (or without anything ordering
 * it after) the stores. Under the default schedule the MMA warp runs first: nothing wrote the cells yet. */
static void test_no_ready_wait(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = ts_run(ts_bf16_k, 128, 0, 3, TS_NO_READY_WAIT);
  if (st.code != KBD_ERR_POISON && st.code != KBD_ERR_RACE) fail_msg("not reported: %s", st.msg);
  MT_ASSERT_AT(st, MT_LINE(ts_line_issue));
  MT_ASSERT_HAS(st, "A operand from Tensor Memory");
}

/* The warpgroup signals without tcgen05.wait::st: the MMA reads cells whose store has not completed. */
static void test_no_wait_st(void **state) {
  (void)state;
  ts_expect(TS_NO_WAIT_ST, KBD_ERR_RACE, MT_LINE(ts_line_issue), "tcgen05.wait::st");
}

/* The next A is stored before the commit of the MMA that reads the cells was waited for. */
static void test_store_under_mma(void **state) {
  (void)state;
  mt_env(1, -1);
  const kbd_status st = ts_run(ts_bf16_k, 128, 0, 3, TS_STORE_UNDER_MMA);
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  MT_ASSERT_AT(st, MT_LINE(ts_line_store));
  MT_ASSERT_HAS(st, "as its A operand");
}

static kbd_status ts_run_da(int brk) {
  enum { AN = 128 * TS_K, BN = TS_N * TS_K };
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * AN), *hb = malloc(sizeof(kbd_bf16) * BN);
  assert_non_null(ha), assert_non_null(hb);
  for (int i = 0; i < AN; ++i) ha[i] = kbd_f32_to_bf16((float)(i % 7 - 3) / 4.0f);
  for (int i = 0; i < BN; ++i) hb[i] = kbd_f32_to_bf16((float)(i % 5 - 2) / 4.0f);
  void *da, *db;
  assert_int_equal(kbd_malloc(&da, sizeof(kbd_bf16) * AN).code, KBD_OK);
  assert_int_equal(kbd_malloc(&db, sizeof(kbd_bf16) * BN).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * AN).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * BN).code, KBD_OK);
  ts_params p;
  memset(&p, 0, sizeof p);
  p.a = da, p.b = db, p.tiles = 1, p.brk = brk;
  const kbd_status st = ts_d_over_a(kbd_cfg_1d(1), p);
  kbd_free(da), kbd_free(db);
  free(ha), free(hb);
  return st;
}

/* With the wait for X's commit the kernel is clean (default schedule and seeds); without it Y is reported. */
static void test_d_over_a(void **state) {
  (void)state;
  const int clean[] = {TS_OK, TS_DA_RELAY_MBAR, TS_DA_RELAY_BAR};
  for (int i = 0; i < 3; ++i)
    for (long seed = -1; seed < 4; ++seed) {
      mt_env(1, seed);
      const kbd_status st = ts_run_da(clean[i]);
      if (st.code != KBD_OK) fail_msg("variant %d seed %ld: %s", clean[i], seed, st.msg);
    }
  const int broken[] = {TS_DA_NO_WAIT, TS_DA_NO_COMMIT, TS_DA_RELAY_NOWAIT};
  for (int i = 0; i < 3; ++i) {
    mt_env(1, -1);
    const kbd_status st = ts_run_da(broken[i]);
    MT_ASSERT_CODE(st, KBD_ERR_RACE);
    MT_ASSERT_AT(st, MT_LINE(ts_line_over));
    MT_ASSERT_HAS(st, "writes its D over Tensor Memory columns 64..");
    MT_ASSERT_HAS(st, broken[i] == TS_DA_NO_COMMIT ? "not even committed" : "has not seen that MMA complete");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_m128_bf16_kmajor), MT_TEST(test_m128_f16_mnmajor), MT_TEST(test_m64_bf16),
      MT_TEST(test_no_ready_wait),    MT_TEST(test_no_wait_st),       MT_TEST(test_store_under_mma),
      MT_TEST(test_d_over_a),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
