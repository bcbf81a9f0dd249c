/* test_mbarrier.c - mbarriers on the CPU machine (kbd/mbarrier.h, kbd/cpu/mbar.h).
 *
 * Correct kernels, clean under 8 seeds x 1 and 2 host threads with the race checker on: a two-stage
 * producer/consumer ring paced by full/empty mbarriers (per-warp and per-thread arrival counts), and
 * transaction counting (expect-tx by one warp, complete-tx by another, in either order). Misuse, each in
 * the first run under the default schedule with its own diagnostic: use before init, init of a live
 * barrier, init from warp-uniform code, over-arrival, a consumer that reads without waiting, a missing
 * arrival (deadlock report naming the barrier and its phase), use of another warp's init with nothing
 * ordering the two, and a tx-count out of range.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define MW 4 /* warps: 0 producer, 1-3 consumers */
#define ROUNDS 6
#define STAGES 2

typedef struct {
  int mode;
  float *out;       /* MW * 32 */
  const float *src; /* ROUNDS * 32: what the bulk copies bring in (value r + 1 in round r) */
} mbar_params;

enum {
  M_RING_WARPS,      /* empty barriers count one arrival per consumer warp (KBD_ELECT_ONE) */
  M_RING_THREADS,    /* empty barriers count one arrival per consumer thread (warp-uniform arrive) */
  M_TX,              /* expect-tx and complete-tx from different warps, both orders */
  M_UNINIT,          /* wait on a barrier nobody initialised */
  M_DOUBLE_INIT,     /* init twice without inval */
  M_INIT_UNIFORM,    /* init from warp-uniform code: 32 threads would initialise it */
  M_OVER_ARRIVE,     /* count 1, arrive from warp-uniform code: 32 arrivals */
  M_NO_WAIT,         /* a consumer reads the stage without waiting on full */
  M_MISSING_ARRIVAL, /* one consumer never arrives on empty: the producer waits forever */
  M_INIT_UNORDERED,  /* warp 1 waits on a barrier warp 0 initialised, no barrier in between */
  M_TX_RANGE,        /* expect-tx of 2^20 bytes */
  M_BULK_RING,       /* the ring filled by kbd_bulk_load (TMA) with arrive.expect_tx */
  M_BULK_NO_EXPECT,  /* a plain arrive instead of arrive.expect_tx: the phase completes before the data */
  M_BULK_NO_WAIT,    /* a consumer reads the copied stage without waiting */
  M_BULK_EXIT,       /* a copy nobody waits for when the block exits */
  M_BULK_MISALIGNED  /* 100 bytes: not a multiple of 16 */
};

static int mb_line_a, mb_line_b;

KBD_KERNEL(mbar_k, MW * 32, mbar_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, full, STAGES, 8);
  KBD_SHARED_ALIGNED(kbd_mbarrier, empty, STAGES, 8);
  KBD_SHARED(float, ring, STAGES * 32);
  const int w = kbd_warp_id();
  KBD_TILE(f32, 1, 32, KBD_WARP) t, sum;
  kbd_zero(sum);
  switch (p.mode) {
  case M_RING_WARPS:
  case M_RING_THREADS:
  case M_NO_WAIT:
  case M_MISSING_ARRIVAL: {
    const int per_thread = p.mode == M_RING_THREADS;
    if (w == 0) {
      KBD_ELECT_ONE {
        for (int s = 0; s < STAGES; ++s) {
          kbd_mbarrier_init(&full[s], 1);
          kbd_mbarrier_init(&empty[s], per_thread ? 3 * 32 : 3);
        }
      }
    }
    kbd_sync(); /* the initialisations before any use */
    for (int r = 0; r < ROUNDS; ++r) {
      const int s = r % STAGES;
      const uint32_t phase = (uint32_t)(r / STAGES) & 1u;
      if (w == 0) {
        MT_MARK(mb_line_b); kbd_mbarrier_wait(&empty[s], phase ^ 1u); /* a fresh barrier: parity 1 is done */
        kbd_fill(t, (float)(r + 1));
        kbd_store_smem(ring + s * 32, t, 32);
        KBD_ELECT_ONE { kbd_mbarrier_arrive(&full[s]); }
      } else {
        if (p.mode != M_NO_WAIT) kbd_mbarrier_wait(&full[s], phase);
        MT_MARK(mb_line_a); kbd_load_smem(t, ring + s * 32, 32);
        kbd_add(sum, sum, t);
        if (p.mode == M_MISSING_ARRIVAL && w == 3) continue;
        if (per_thread) {
          kbd_mbarrier_arrive(&empty[s]);
        } else {
          KBD_ELECT_ONE { kbd_mbarrier_arrive(&empty[s]); }
        }
      }
    }
    break;
  }
  case M_BULK_RING:
  case M_BULK_NO_EXPECT:
  case M_BULK_NO_WAIT:
    if (w == 0) {
      KBD_ELECT_ONE {
        for (int s = 0; s < STAGES; ++s) {
          kbd_mbarrier_init(&full[s], 1);
          kbd_mbarrier_init(&empty[s], 3);
        }
      }
    }
    kbd_sync();
    for (int r = 0; r < ROUNDS; ++r) {
      const int s = r % STAGES;
      const uint32_t phase = (uint32_t)(r / STAGES) & 1u;
      if (w == 0) {
        kbd_mbarrier_wait(&empty[s], phase ^ 1u);
        KBD_ELECT_ONE {
          if (p.mode == M_BULK_NO_EXPECT)
            kbd_mbarrier_arrive(&full[s]);
          else
            kbd_mbarrier_arrive_expect_tx(&full[s], 32 * sizeof(float));
          MT_MARK(mb_line_b); kbd_bulk_load(ring + s * 32, p.src + r * 32, 32 * sizeof(float), &full[s]);
        }
      } else {
        if (p.mode != M_BULK_NO_WAIT) kbd_mbarrier_wait(&full[s], phase);
        MT_MARK(mb_line_a); kbd_load_smem(t, ring + s * 32, 32);
        kbd_add(sum, sum, t);
        KBD_ELECT_ONE { kbd_mbarrier_arrive(&empty[s]); }
      }
    }
    break;
  case M_BULK_EXIT:
  case M_BULK_MISALIGNED:
    if (w == 0) {
      KBD_ELECT_ONE {
        kbd_mbarrier_init(&full[0], 1);
        kbd_mbarrier_arrive_expect_tx(&full[0], 128);
        MT_MARK(mb_line_a); kbd_bulk_load(ring, p.src, p.mode == M_BULK_EXIT ? 128 : 100, &full[0]);
      }
    }
    break;
  case M_TX:
    if (w == 0) {
      KBD_ELECT_ONE { kbd_mbarrier_init(&full[0], 1); }
    }
    kbd_sync();
    /* phase 0: expect first, then the bytes land in two pieces */
    if (w == 1) {
      KBD_ELECT_ONE { kbd_mbarrier_arrive_expect_tx(&full[0], 256); }
    }
    if (w == 2) {
      KBD_ELECT_ONE {
        kbd_mbarrier_complete_tx(&full[0], 100);
        kbd_mbarrier_complete_tx(&full[0], 156);
      }
    }
    kbd_mbarrier_wait(&full[0], 0);
    kbd_sync(); /* everyone saw phase 0 before phase 1 begins */
    /* phase 1: the bytes land first (tx goes negative), the expecting arrival completes the phase */
    if (w == 2) {
      KBD_ELECT_ONE { kbd_mbarrier_complete_tx(&full[0], 64); }
    }
    kbd_sync();
    if (w == 1) {
      KBD_ELECT_ONE { kbd_mbarrier_arrive_expect_tx(&full[0], 64); }
    }
    kbd_mbarrier_wait(&full[0], 1);
    kbd_fill(sum, 1.0f);
    break;
  case M_UNINIT:
    MT_MARK(mb_line_a); kbd_mbarrier_wait(&full[1], 0);
    break;
  case M_DOUBLE_INIT:
    if (w == 0) {
      KBD_ELECT_ONE {
        kbd_mbarrier_init(&full[0], 1);
        MT_MARK(mb_line_a); kbd_mbarrier_init(&full[0], 2);
      }
    }
    break;
  case M_INIT_UNIFORM:
    if (w == 0) {
      MT_MARK(mb_line_a); kbd_mbarrier_init(&full[0], 1);
    }
    break;
  case M_OVER_ARRIVE:
    if (w == 0) {
      KBD_ELECT_ONE { kbd_mbarrier_init(&full[0], 1); }
      MT_MARK(mb_line_a); kbd_mbarrier_arrive(&full[0]);
    }
    break;
  case M_INIT_UNORDERED:
    if (w == 0) {
      KBD_ELECT_ONE {
        MT_MARK(mb_line_b); kbd_mbarrier_init(&full[0], 1);
        kbd_mbarrier_arrive(&full[0]);
      }
    }
    if (w == 1) {
      MT_MARK(mb_line_a); kbd_mbarrier_wait(&full[0], 0);
    }
    break;
  case M_TX_RANGE:
    if (w == 0) {
      KBD_ELECT_ONE {
        kbd_mbarrier_init(&full[0], 1);
        MT_MARK(mb_line_a); kbd_mbarrier_expect_tx(&full[0], 1u << 20);
      }
    }
    break;
  }
  kbd_store(p.out, sum, MW * 32, w * 32);
}

static float host_out[MW * 32], host_src[ROUNDS * 32];

static kbd_status run_mbar(int mode, long threads, long seed) {
  mt_env(threads, seed);
  float *out = NULL, *src = NULL;
  for (int i = 0; i < ROUNDS * 32; ++i)
    host_src[i] = (float)(i / 32 + 1);
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_malloc((void **)&src, sizeof host_src);
  if (kbd_ok(s)) s = kbd_copy_to_device(src, host_src, sizeof host_src);
  if (kbd_ok(s)) {
    mbar_params p = {mode, out, src};
    s = mbar_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  kbd_free(out);
  kbd_free(src);
  return s;
}

static void test_rings_run_clean(void **state) {
  (void)state;
  const float want = ROUNDS * (ROUNDS + 1) / 2; /* each consumer sums rounds 1..ROUNDS */
  for (int mode = M_RING_WARPS; mode <= M_RING_THREADS; ++mode)
    for (long seed = -1; seed < 8; ++seed)
      for (long threads = 1; threads <= 2; ++threads) {
        MT_ASSERT_OK(run_mbar(mode, threads, seed));
        for (int i = 0; i < MW * 32; ++i)
          assert_true(host_out[i] == (i < 32 ? 0.0f : want));
      }
}

static void expect_fault(int mode, kbd_code code, const char *needle);

static void test_bulk_ring_runs_clean(void **state) {
  (void)state;
  const float want = ROUNDS * (ROUNDS + 1) / 2;
  for (long seed = -1; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      MT_ASSERT_OK(run_mbar(M_BULK_RING, threads, seed));
      for (int i = 0; i < MW * 32; ++i)
        assert_true(host_out[i] == (i < 32 ? 0.0f : want));
    }
}

static void test_bulk_without_expect_tx(void **state) {
  (void)state;
  /* default schedule: the plain arrive completes the phase at once; the consumer reads pending bytes */
  kbd_status s = run_mbar(M_BULK_NO_EXPECT, 1, -1);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  MT_ASSERT_HAS(s, "which an asynchronous copy is still writing");
  for (long seed = 0; seed < 8; ++seed) { /* or the copy lands first and the phase never completes */
    s = run_mbar(M_BULK_NO_EXPECT, 1, seed);
    if (s.code == KBD_ERR_DEADLOCK)
      MT_ASSERT_HAS(s, "bytes landed that no expect-tx announced");
    else
      MT_ASSERT_CODE(s, KBD_ERR_POISON);
  }
}

static void test_bulk_read_without_wait(void **state) {
  (void)state;
  kbd_status s = run_mbar(M_BULK_NO_WAIT, 1, -1);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  MT_ASSERT_HAS(s, "which an asynchronous copy is still writing: wait for its completion first");
  for (long seed = 0; seed < 8; ++seed) {
    s = run_mbar(M_BULK_NO_WAIT, 1, seed);
    if (s.code != KBD_ERR_POISON) MT_ASSERT_CODE(s, KBD_ERR_RACE);
    MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  }
}

static void test_bulk_in_flight_at_exit(void **state) {
  (void)state;
  expect_fault(M_BULK_EXIT, KBD_ERR_MBARRIER, "still in flight: no warp waited on its mbarrier");
}

static void test_bulk_misaligned(void **state) {
  (void)state;
  expect_fault(M_BULK_MISALIGNED, KBD_ERR_INVALID, "must all be multiples of 16");
}

static void test_transaction_bytes(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    MT_ASSERT_OK(run_mbar(M_TX, 1, seed));
    for (int i = 0; i < MW * 32; ++i)
      assert_true(host_out[i] == 1.0f);
  }
}

static void expect_fault(int mode, kbd_code code, const char *needle) {
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_mbar(mode, 1, seed);
    MT_ASSERT_CODE(s, code);
    MT_ASSERT_AT(s, MT_LINE(mb_line_a));
    MT_ASSERT_HAS(s, needle);
  }
}

static void test_use_before_init(void **state) {
  (void)state;
  expect_fault(M_UNINIT, KBD_ERR_MBARRIER, "was never initialised");
}

static void test_double_init(void **state) {
  (void)state;
  char b[4096];
  expect_fault(M_DOUBLE_INIT, KBD_ERR_MBARRIER, "kbd_mbarrier_init of a live mbarrier");
  kbd_status s = run_mbar(M_DOUBLE_INIT, 1, -1);
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "initialised at %s:%d", __FILE__, MT_LINE(mb_line_a) - 1));
}

static void test_init_from_uniform_code(void **state) {
  (void)state;
  expect_fault(M_INIT_UNIFORM, KBD_ERR_ISSUE, "kbd_mbarrier_init in warp-uniform code");
}

static void test_over_arrival(void **state) {
  (void)state;
  expect_fault(M_OVER_ARRIVE, KBD_ERR_MBARRIER, "32 arrival(s) at the mbarrier");
  kbd_status s = run_mbar(M_OVER_ARRIVE, 1, -1);
  MT_ASSERT_HAS(s, "has only 1 pending (called from warp-uniform code");
}

static void test_read_without_wait(void **state) {
  (void)state;
  /* default schedule: the producer's store comes first, the consumer's unordered read is the race */
  kbd_status s = run_mbar(M_NO_WAIT, 1, -1);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  MT_ASSERT_HAS(s, "read after write");
  for (long seed = 0; seed < 8; ++seed) { /* other orders may read before any write: never-written */
    s = run_mbar(M_NO_WAIT, 1, seed);
    if (s.code != KBD_ERR_RACE) MT_ASSERT_CODE(s, KBD_ERR_POISON);
    MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  }
}

static void test_missing_arrival_deadlocks(void **state) {
  (void)state;
  char b[4096];
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_mbar(M_MISSING_ARRIVAL, 1, seed);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "warp 0 at %s:%d waits for mbarrier", __FILE__, MT_LINE(mb_line_b)));
    MT_ASSERT_HAS(s, "1 of 3 arrivals missing");
  }
}

static void test_init_unordered(void **state) {
  (void)state;
  char b[4096];
  kbd_status s = run_mbar(M_INIT_UNORDERED, 1, -1);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "warp 0 wrote it at %s:%d", __FILE__, MT_LINE(mb_line_b)));
  for (long seed = 0; seed < 8; ++seed) { /* warp 1 first: nothing initialised it yet */
    s = run_mbar(M_INIT_UNORDERED, 1, seed);
    if (s.code != KBD_ERR_RACE) MT_ASSERT_CODE(s, KBD_ERR_MBARRIER);
    MT_ASSERT_AT(s, MT_LINE(mb_line_a));
  }
}

static void test_tx_range(void **state) {
  (void)state;
  expect_fault(M_TX_RANGE, KBD_ERR_MBARRIER, "would be 1048576 bytes in phase 0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_rings_run_clean),   MT_TEST(test_transaction_bytes),
      MT_TEST(test_use_before_init),   MT_TEST(test_double_init),
      MT_TEST(test_init_from_uniform_code), MT_TEST(test_over_arrival),
      MT_TEST(test_read_without_wait), MT_TEST(test_missing_arrival_deadlocks),
      MT_TEST(test_init_unordered),    MT_TEST(test_tx_range),
      MT_TEST(test_bulk_ring_runs_clean), MT_TEST(test_bulk_without_expect_tx),
      MT_TEST(test_bulk_read_without_wait), MT_TEST(test_bulk_in_flight_at_exit),
      MT_TEST(test_bulk_misaligned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
