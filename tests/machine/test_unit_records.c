/* test_unit_records.c - the shadow's per-unit records (kbd/cpu/state.h kbd_cpu_shadow_unit and urmask; the CPU machine
 * emulating sm_100a) must report exactly what the per-byte shadow reports: each case below is a kernel whose race the
 * summary would hide, or misname, if it were wrong.
 *
 * One CTA of 128 threads. Warp 0 stores A and B into shared tiles (generic stores, then fence.proxy.async), issues one
 * tcgen05.mma of them and commits it on `done`; warp 1 touches the first 16-byte unit of A (bytes 0-15, the element
 * pointer a32) at a point the case picks. Where warp 1 must act after warp 0 without being ordered after it, it spins
 * on a host flag (ur_go: a raw access, invisible to the race checker, which orders nothing) that warp 0 sets.
 *
 *   UR_CLEAN: warp 1 waits on `done` (the MMA's completion), then rewrites the unit in part and whole: no report;
 *   UR_PARTIAL_UNFENCED: before the issue, warp 1 stores bytes 4-7 of the unit (ordered by a barrier, not fenced): the
 *     unit is no longer one store's, its summary is stale, and the issue's check finds byte 4 - the async proxy
 *     reads it unfenced (a summary left current would show warp 0's fenced store and pass);
 *   UR_WRITE_IN_FLIGHT: between the issue and the commit warp 1 stores bytes 0-3: the unit's change count moved, so
 *     the retirement hashes it again and reports the write (a count that did not move would skip the hash);
 *   UR_WAR_PART: after the commit, warp 1 stores bytes 4-7, not ordered after the MMA's read (a unit read record):
 *     write after read at byte 4, naming the MMA (the record expanded for a write that covers the unit in part);
 *   UR_WAR_WHOLE: the same with a 16-byte store of the whole unit: write after read at byte 0 (the record's clock
 *     tested at the unit, then expanded for the report);
 *   UR_READ_BETWEEN: after the commit, warp 0 reads bytes 0-3 again (kbd_ld_shared) before warp 1's 16-byte store:
 *     the race is with that later read, at byte 0 - the per-byte read must expand the unit record first, or the
 *     older MMA read would be reported instead;
 *   UR_WAR_REST: warp 1 waits on `done` and stores bytes 4-7 (clean: ordered), then warp 2, not ordered after the MMA,
 *     stores bytes 8-11: write after read at byte 8 - the first store must leave the MMA's read of the unit's other
 *     bytes recorded (the record expanded, not dropped, for a write that covers the unit in part).
 *
 * And the digest an MMA takes of a unit's write state: from the summary, the same value as from the bytes.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exact_host.h"
#include "machine_test.h"

enum { UR_CLEAN, UR_PARTIAL_UNFENCED, UR_WRITE_IN_FLIGHT, UR_WAR_PART, UR_WAR_WHOLE, UR_READ_BETWEEN, UR_WAR_REST };

#define UR_M 128
#define UR_N 64
#define UR_K 64
typedef KBD_STILE(bf16, UR_M, UR_K, KBD_SWIZZLE_128B) ur_a;
typedef KBD_STILE(bf16, UR_N, UR_K, KBD_SWIZZLE_128B) ur_b;
typedef struct ur_unit {
  uint32_t w[4];
} ur_unit;

typedef struct ur_params {
  const kbd_bf16 *a, *b;
  int brk;
} ur_params;

static int ur_go;
static int ur_line_issue, ur_line_w1, ur_line_w2, ur_line_r0;

/* MT_MARK and the access it marks share a line: */
/* clang-format off */
KBD_KERNEL(ur_kernel, 128, ur_params) {
  KBD_SHARED_STILE(ur_a, a);
  KBD_SHARED_STILE(ur_b, b);
  KBD_SHARED(kbd_mbarrier, done, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_ACC(f32, UR_M, UR_N) acc;
  uint32_t *a32 = (uint32_t *)(void *)kbd_stile_ptr(a, 0, 0);
  const ur_unit u4 = {{0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u}};
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(&done[0], 1); }
    kbd_tmem_alloc(tm, UR_N);
    KBD_TILE(bf16, UR_M, UR_K, KBD_WARP) ra;
    KBD_TILE(bf16, UR_N, UR_K, KBD_WARP) rb;
    kbd_load2d(ra, p.a, UR_M, UR_K, UR_K, 0, 0);
    kbd_load2d(rb, p.b, UR_N, UR_K, UR_K, 0, 0);
    kbd_stile_store(a, ra);
    kbd_stile_store(b, rb);
    kbd_fence_proxy_async();
  }
  kbd_sync();
  if (p.brk == UR_PARTIAL_UNFENCED && kbd_warp_id() == 1) {
    MT_MARK(ur_line_w1); kbd_st_shared(&a32[1], 0x3f803f80u);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) {
    kbd_acc_bind(acc, tm, 0, &done[0]);
    MT_MARK(ur_line_issue); kbd_mma_issue(acc, a, b, 0);
    if (p.brk == UR_WRITE_IN_FLIGHT) {
      __atomic_store_n(&ur_go, 1, __ATOMIC_RELAXED);
      KBD_SPIN_UNTIL(__atomic_load_n(&ur_go, __ATOMIC_RELAXED) == 2);
    }
    kbd_mma_commit(acc, &done[0]);
    if (p.brk == UR_READ_BETWEEN) {
      MT_MARK(ur_line_r0); (void)kbd_ld_shared(&a32[0]);
    }
    __atomic_store_n(&ur_go, 3, __ATOMIC_RELAXED);
  } else if (kbd_warp_id() == 1) {
    switch (p.brk) {
    case UR_CLEAN:
      kbd_mbarrier_wait(&done[0], 0);
      kbd_st_shared(&a32[1], 0x3f803f80u);
      kbd_st_shared((ur_unit *)(void *)(a32 + 4), u4);
      break;
    case UR_WRITE_IN_FLIGHT:
      KBD_SPIN_UNTIL(__atomic_load_n(&ur_go, __ATOMIC_RELAXED) == 1);
      MT_MARK(ur_line_w1); kbd_st_shared(&a32[0], 0x3f803f80u);
      kbd_fence_proxy_async();
      __atomic_store_n(&ur_go, 2, __ATOMIC_RELAXED);
      break;
    case UR_WAR_PART:
      KBD_SPIN_UNTIL(__atomic_load_n(&ur_go, __ATOMIC_RELAXED) == 3);
      MT_MARK(ur_line_w1); kbd_st_shared(&a32[1], 0x3f803f80u);
      break;
    case UR_WAR_WHOLE:
    case UR_READ_BETWEEN:
      KBD_SPIN_UNTIL(__atomic_load_n(&ur_go, __ATOMIC_RELAXED) == 3);
      MT_MARK(ur_line_w1); kbd_st_shared((ur_unit *)(void *)a32, u4);
      break;
    case UR_WAR_REST:
      kbd_mbarrier_wait(&done[0], 0);
      kbd_st_shared(&a32[1], 0x3f803f80u);
      __atomic_store_n(&ur_go, 4, __ATOMIC_RELAXED);
      break;
    default: break;
    }
  } else if (kbd_warp_id() == 2 && p.brk == UR_WAR_REST) {
    KBD_SPIN_UNTIL(__atomic_load_n(&ur_go, __ATOMIC_RELAXED) == 4);
    MT_MARK(ur_line_w2); kbd_st_shared(&a32[2], 0x3f803f80u);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, UR_N);
}

/* clang-format on */

static kbd_status ur_run(int brk) {
  static kbd_bf16 ha[UR_M * UR_K], hb[UR_N * UR_K];
  xh_fill_bf16(ha, UR_M, UR_K, 1);
  xh_fill_bf16(hb, UR_N, UR_K, 2);
  kbd_bf16 *da = (kbd_bf16 *)xh_upload(ha, sizeof ha), *db = (kbd_bf16 *)xh_upload(hb, sizeof hb);
  __atomic_store_n(&ur_go, 0, __ATOMIC_RELAXED);
  const ur_params p = {da, db, brk};
  const kbd_status st = ur_kernel(kbd_cfg_1d(1), p);
  kbd_free(da), kbd_free(db);
  return st;
}

/* A race report at `line` of this file that contains every string of `has` (NULL-terminated). */
static void ur_expect(kbd_status st, int line, const char *const *has) {
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  char want[4096];
  MT_ASSERT_HAS(st, mt_fmt(want, sizeof want, "%s:%d: ", __FILE__, line));
  for (; *has; ++has)
    MT_ASSERT_HAS(st, *has);
}

static void test_clean(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = ur_run(UR_CLEAN);
    if (st.code != KBD_OK) fail_msg("seed %ld: %s", seed, st.msg);
  }
}

static void test_partial_unfenced(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_PARTIAL_UNFENCED);
  char w[4096];
  const char *has[] = {"through the async proxy", ", byte 4", "warp 1",
                       mt_fmt(w, sizeof w, "generic stores at %s:%d", __FILE__, MT_LINE(ur_line_w1)), NULL};
  ur_expect(st, MT_LINE(ur_line_issue), has);
}

static void test_write_in_flight(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_WRITE_IN_FLIGHT);
  char w[4096];
  const char *has[] = {"still reads", ", byte 0", "warp 1",
                       mt_fmt(w, sizeof w, "tcgen05.mma issued at %s:%d", __FILE__, MT_LINE(ur_line_issue)), NULL};
  ur_expect(st, MT_LINE(ur_line_w1), has);
}

static void test_war_part(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_WAR_PART);
  char w[4096];
  const char *has[] = {"write after read", ", byte 4",
                       mt_fmt(w, sizeof w, "read it at %s:%d", __FILE__, MT_LINE(ur_line_issue)), NULL};
  ur_expect(st, MT_LINE(ur_line_w1), has);
}

static void test_war_whole(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_WAR_WHOLE);
  char w[4096];
  const char *has[] = {"write after read", ", byte 0",
                       mt_fmt(w, sizeof w, "read it at %s:%d", __FILE__, MT_LINE(ur_line_issue)), NULL};
  ur_expect(st, MT_LINE(ur_line_w1), has);
}

static void test_read_between(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_READ_BETWEEN);
  char w[4096];
  const char *has[] = {"write after read", ", byte 0",
                       mt_fmt(w, sizeof w, "read it at %s:%d", __FILE__, MT_LINE(ur_line_r0)), NULL};
  ur_expect(st, MT_LINE(ur_line_w1), has);
}

static void test_war_rest(void **state) {
  (void)state;
  const kbd_status st = ur_run(UR_WAR_REST);
  char w[4096];
  const char *has[] = {"write after read", ", byte 8", "warp 2",
                       mt_fmt(w, sizeof w, "read it at %s:%d", __FILE__, MT_LINE(ur_line_issue)), NULL};
  ur_expect(st, MT_LINE(ur_line_w2), has);
}

/* kbd_cpu_mma_hash from a current summary equals the hash of the bytes' state it summarises, and any one byte that
 * differs changes the bytes' hash. */
static void test_hash_summary(void **state) {
  (void)state;
  uint32_t wclk[32];
  uint16_t winfo[32], wsite[32];
  kbd_cpu_shadow_unit unit[2];
  kbd_cpu_shadow sh;
  memset(&sh, 0, sizeof sh);
  sh.wclk = wclk, sh.winfo = winfo, sh.wsite = wsite, sh.unit = unit;
  for (uint32_t c = 1; c < 200; c += 37) {
    for (int b = 0; b < 32; ++b) {
      wclk[b] = c;
      winfo[b] = (uint16_t)(3u | KBD_CPU_SH_ASYNC);
      wsite[b] = (uint16_t)(c + 9u);
    }
    const kbd_cpu_shadow_unit cur = {5u, 5u, c, (uint16_t)(3u | KBD_CPU_SH_ASYNC), (uint16_t)(c + 9u)};
    unit[0] = unit[1] = cur;
    const uint64_t from_summary = kbd_cpu_mma_hash(&sh, 16);
    unit[1].sgen = 4u; /* stale: the bytes */
    const uint64_t from_bytes = kbd_cpu_mma_hash(&sh, 16);
    if (from_summary != from_bytes)
      fail_msg("clock %u: summary hash %016llx, bytes hash %016llx", c, (unsigned long long)from_summary,
               (unsigned long long)from_bytes);
    for (int b = 16; b < 32; ++b) {
      wsite[b] ^= 1u;
      if (kbd_cpu_mma_hash(&sh, 16) == from_bytes) fail_msg("clock %u: byte %d's site changed, the hash did not", c, b);
      wsite[b] ^= 1u;
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_clean),    MT_TEST(test_partial_unfenced), MT_TEST(test_write_in_flight),
      MT_TEST(test_war_part), MT_TEST(test_war_whole),        MT_TEST(test_read_between),
      MT_TEST(test_war_rest), MT_TEST(test_hash_summary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
