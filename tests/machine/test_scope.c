/* test_scope.c - warp ranges (kbd/scope.h) in a warp-specialized block: two consumer warpgroups and a
 * producer warp (9 warps, 288 threads).
 *
 * Correct kernels: range reductions and scans over each consumer warpgroup while the producer warp does
 * something else, with results checked against a host reference; a producer/consumer handoff through
 * two block-wide ranges (bar.arrive / bar.sync) that runs clean under the race checker under every seed
 * and 1 and 2 host threads; the barrier ids the registry hands out (skipping kbd's warpgroup-reduction
 * ids). Misuse, each caught in the first run under the default schedule with its own diagnostic: a warp
 * outside a range calling its collective (KBD_ERR_SCOPE), a CTA-wide reduction in a block whose producer
 * warp has left (KBD_ERR_BARRIER), a CTA reduction while the producer waits in kbd_sync (KBD_ERR_BARRIER),
 * and a range reduction one consumer warp skips (a deadlock naming the range's barrier).
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define SW 9 /* warps: consumers 0-3 and 4-7, producer 8 */
#define ST (SW * 32)

typedef struct {
  int mode;
  int32_t *out; /* ST words */
  int32_t *aux; /* ST words */
} scope_params;

enum {
  S_REDUCE,          /* each consumer warpgroup: sum and max over its own threads; producer: its own work */
  S_SCAN,            /* exclusive and inclusive range scans over consumer warpgroup 1 */
  S_HANDOFF,         /* producer fills shared memory 3 times; consumers read it: full/empty ranges */
  S_IDS,             /* the barrier ids of 8 ranges */
  S_NOT_MEMBER,      /* misuse: the producer calls kbd_scope_sync(consumers0) */
  S_CTA_AFTER_EXIT,  /* misuse: consumers reduce over the CTA after the producer returned */
  S_CTA_VS_SYNC,     /* misuse: consumers reduce over the CTA while the producer waits in kbd_sync */
  S_SKIPPED_WARP     /* misuse: warp 3 skips its warpgroup's range reduction */
};

static int sc_line_a, sc_line_b;

/* The value thread t contributes. */
static int32_t contrib(int t) { return (int32_t)((t * 7919) % 1000) - 500; }

KBD_KERNEL(scope_k, ST, scope_params) {
  KBD_WARP_RANGE(consumers0, 0, 4);
  KBD_WARP_RANGE(consumers1, 4, 4);
  KBD_WARP_RANGE(producer, 8, 1);
  KBD_WARP_RANGE(full, 0, 9);
  KBD_WARP_RANGE(empty, 0, 9);
  const int w = kbd_warp_id();
  kbd_lanes_i32 x;
  KBD_FOR_LANES(l) { KBD_LANE(x, l) = contrib(kbd_thread_idx(l)); }
  switch (p.mode) {
  case S_REDUCE: {
    int32_t sum = 0, mx = 0;
    if (kbd_scope_contains(producer)) {
      /* the producer's own job; it never meets the consumers' barriers */
      kbd_scope_reduce(sum, producer, x, KBD_RED_SUM);
      kbd_scope_reduce(mx, producer, x, KBD_RED_MAX);
    } else if (kbd_scope_contains(consumers0)) {
      kbd_scope_reduce(sum, consumers0, x, KBD_RED_SUM);
      kbd_scope_reduce(mx, consumers0, x, KBD_RED_MAX);
    } else {
      kbd_scope_reduce(sum, consumers1, x, KBD_RED_SUM);
      kbd_scope_reduce(mx, consumers1, x, KBD_RED_MAX);
    }
    KBD_FOR_LANES(l) {
      p.out[kbd_thread_idx(l)] = sum;
      p.aux[kbd_thread_idx(l)] = mx;
    }
    break;
  }
  case S_SCAN: {
    kbd_lanes_i32 ex, in;
    int32_t tot_ex = 0, tot_in = 0;
    if (kbd_scope_contains(consumers1)) {
      kbd_scope_scan(ex, tot_ex, consumers1, x, KBD_RED_SUM, 1);
      kbd_scope_scan(in, tot_in, consumers1, x, KBD_RED_MAX, 0);
    } else {
      KBD_FOR_LANES(l) { KBD_LANE(ex, l) = KBD_LANE(in, l) = -1; }
    }
    KBD_FOR_LANES(l) {
      /* the thread's index in the range, to check kbd_scope_thread; the scan results */
      p.out[kbd_thread_idx(l)] = kbd_scope_contains(consumers1) ? KBD_LANE(ex, l) : kbd_scope_thread(consumers1, l);
      p.aux[kbd_thread_idx(l)] = kbd_scope_contains(consumers1) ? KBD_LANE(in, l) + tot_ex - tot_in : 0;
    }
    break;
  }
  case S_HANDOFF: {
    KBD_SHARED(int32_t, buf, 32);
    kbd_lanes_i32 got;
    KBD_FOR_LANES(l) { KBD_LANE(got, l) = 0; }
    for (int round = 0; round < 3; ++round) {
      if (kbd_scope_contains(producer)) {
        if (round > 0) kbd_scope_sync(empty); /* the consumers have read the previous round */
        KBD_FOR_LANES(l) { buf[l] = round * 100 + l; }
        kbd_scope_arrive(full);
      } else {
        kbd_scope_sync(full);
        KBD_FOR_LANES(l) { KBD_LANE(got, l) += buf[l]; }
        if (round < 2) kbd_scope_arrive(empty);
      }
    }
    KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = KBD_LANE(got, l); }
    break;
  }
  case S_IDS: {
    KBD_WARP_RANGE(r6, 0, 1);
    KBD_WARP_RANGE(r7, 0, 1);
    KBD_WARP_RANGE(r8, 0, 1); /* ids 8, 9, 10 are warpgroups 0-2's reduction barriers: this one gets 11 */
    const int ids[8] = {consumers0.bar_id, consumers1.bar_id, producer.bar_id, full.bar_id,
                        empty.bar_id,      r6.bar_id,         r7.bar_id,       r8.bar_id};
    if (kbd_scope_contains(r8)) kbd_scope_sync(r8);
    KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = l < 8 ? ids[l] : 0; }
    break;
  }
  case S_NOT_MEMBER:
    if (w == 8) {
      MT_MARK(sc_line_a); kbd_scope_sync(consumers0);
    }
    break;
  case S_CTA_AFTER_EXIT: {
    if (kbd_scope_contains(producer)) return;
    int32_t s = 0;
    MT_MARK(sc_line_a); kbd_cta_reduce(s, x, KBD_RED_SUM);
    KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = s; }
    break;
  }
  case S_CTA_VS_SYNC: {
    int32_t s = 0;
    if (kbd_scope_contains(producer)) {
      MT_MARK(sc_line_b); kbd_sync();
    } else {
      MT_MARK(sc_line_a); kbd_cta_reduce(s, x, KBD_RED_SUM);
    }
    KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = s; }
    break;
  }
  case S_SKIPPED_WARP: {
    int32_t s = 0;
    if (kbd_scope_contains(consumers0) && w != 3) {
      MT_MARK(sc_line_a); kbd_scope_reduce(s, consumers0, x, KBD_RED_SUM);
    }
    KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = s; }
    break;
  }
  }
}

static int32_t host_out[ST], host_aux[ST];

static kbd_status run_scope(int mode, long threads, long seed) {
  mt_env(threads, seed);
  int32_t *out = NULL, *aux = NULL;
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_malloc((void **)&aux, sizeof host_aux);
  if (kbd_ok(s)) s = kbd_memset_device(out, 0, sizeof host_out);
  if (kbd_ok(s)) s = kbd_memset_device(aux, 0, sizeof host_aux);
  if (kbd_ok(s)) {
    scope_params p = {mode, out, aux};
    s = scope_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_copy_to_host(host_aux, aux, sizeof host_aux);
  kbd_free(out);
  kbd_free(aux);
  return s;
}

static void test_range_reductions(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      MT_ASSERT_OK(run_scope(S_REDUCE, threads, seed));
      for (int t = 0; t < ST; ++t) {
        const int lo = t < 128 ? 0 : t < 256 ? 128 : 256, hi = t < 256 ? lo + 128 : ST;
        int32_t sum = 0, mx = INT32_MIN;
        for (int u = lo; u < hi; ++u) {
          sum += contrib(u);
          mx = contrib(u) > mx ? contrib(u) : mx;
        }
        assert_int_equal(host_out[t], sum);
        assert_int_equal(host_aux[t], mx);
      }
    }
}

static void test_range_scans(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    MT_ASSERT_OK(run_scope(S_SCAN, 1, seed));
    int32_t run = 0, mx = INT32_MIN, tot = 0;
    for (int u = 128; u < 256; ++u)
      tot += contrib(u);
    int32_t tmax = INT32_MIN;
    for (int u = 128; u < 256; ++u)
      tmax = contrib(u) > tmax ? contrib(u) : tmax;
    for (int t = 0; t < ST; ++t) {
      if (t < 128 || t >= 256) {
        /* kbd_scope_thread counts from the range's first thread, whichever warp asks */
        assert_int_equal(host_out[t], t - 128);
        continue;
      }
      mx = contrib(t) > mx ? contrib(t) : mx;
      assert_int_equal(host_out[t], run); /* exclusive: the first thread of the range gets 0 */
      assert_int_equal(host_aux[t], mx + tot - tmax);
      run += contrib(t);
    }
  }
}

static void test_handoff_runs_clean(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed)
    for (long threads = 1; threads <= 2; ++threads) {
      MT_ASSERT_OK(run_scope(S_HANDOFF, threads, seed));
      for (int t = 0; t < 256; ++t) /* rounds 0, 1, 2 of lane t % 32 */
        assert_int_equal(host_out[t], 300 + 3 * (t % 32));
    }
}

static void test_barrier_ids(void **state) {
  (void)state;
  MT_ASSERT_OK(run_scope(S_IDS, 1, -1));
  const int want[8] = {1, 2, 3, 4, 5, 6, 7, 11};
  for (int l = 0; l < 8; ++l)
    assert_int_equal(host_out[l], want[l]);
}

static void test_not_member(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_scope(S_NOT_MEMBER, 1, seed);
    MT_ASSERT_CODE(s, KBD_ERR_SCOPE);
    MT_ASSERT_AT(s, MT_LINE(sc_line_a));
    MT_ASSERT_HAS(s, "kbd_scope_sync(consumers0) called by warp 8, which is not in warp range 'consumers0' (warps 0..3)");
  }
}

static void test_cta_reduce_after_producer_exit(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_scope(S_CTA_AFTER_EXIT, 1, seed);
    MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
    MT_ASSERT_AT(s, MT_LINE(sc_line_a));
  }
}

static void test_cta_reduce_meets_kbd_sync(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_scope(S_CTA_VS_SYNC, 1, seed);
    MT_ASSERT_CODE(s, KBD_ERR_BARRIER);
    MT_ASSERT_HAS(s, "CTA-wide collective");
    char b[4096];
    /* whichever side reached barrier 0 first, the report names both sites */
    const int at_a = strstr(s.msg, mt_fmt(b, sizeof b, "%s:%d: ", __FILE__, MT_LINE(sc_line_a))) != NULL;
    const int at_b = strstr(s.msg, mt_fmt(b, sizeof b, "%s:%d: ", __FILE__, MT_LINE(sc_line_b))) != NULL;
    assert_true(at_a || at_b);
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "%s:%d", __FILE__, at_a ? MT_LINE(sc_line_b) : MT_LINE(sc_line_a)));
  }
}

static void test_skipped_warp_deadlocks(void **state) {
  (void)state;
  for (long seed = -1; seed < 8; ++seed) {
    kbd_status s = run_scope(S_SKIPPED_WARP, 1, seed);
    MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
    char b[4096];
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "%s:%d", __FILE__, MT_LINE(sc_line_a)));
    MT_ASSERT_HAS(s, "barrier 1");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_range_reductions),
      MT_TEST(test_range_scans),
      MT_TEST(test_handoff_runs_clean),
      MT_TEST(test_barrier_ids),
      MT_TEST(test_not_member),
      MT_TEST(test_cta_reduce_after_producer_exit),
      MT_TEST(test_cta_reduce_meets_kbd_sync),
      MT_TEST(test_skipped_warp_deadlocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
