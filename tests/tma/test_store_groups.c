/* test_store_groups.c - bulk async-groups of shared -> global stores on the CPU machine (kbd/tma.h, kbd/cpu/tma.h):
 * kbd_bulk_wait_group_read(n) and kbd_bulk_wait_group(n) wait for all but the n NEWEST committed groups of the
 * issuing thread, and only those groups' sources may be written again (issue 31: a mutant whose wait completed
 * every group survived, because no test committed more than one group).
 *
 * Warp 0 fills three shared tiles, stores each to global memory (kbd_bulk_store, or kbd_tma_store through a tensor
 * map) and commits each as its own group (groups 1, 2, 3, oldest first), waits with n = 0, 1 or 2, then one tile's
 * first bytes are overwritten - by the issuing thread right after the wait, or by warp 1 after a kbd_sync - and,
 * after another kbd_sync, warp 0 waits for everything (n = 0). For every n, overwritten group, writer, store kind
 * and wait form:
 *   - a group among the n newest is still being read: the overwrite is KBD_ERR_RACE at the overwrite's file:line,
 *     naming the store's issue site, in the first run under the default schedule (and under seeds);
 *   - a group older than those (n = 1: groups 1 and 2; n = 0: all three) is free: the run is clean, and global
 *     memory holds every tile as it was before the overwrite.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define GROUPS 3
#define ELEMS 256 /* per tile: 8 x 32 f32, 1 KiB */

typedef KBD_STILE(f32, 8, 32, KBD_SWIZZLE_NONE) sg_tile; /* one box of 8 lines x 128 bytes */

typedef struct {
  kbd_tensor_map map; /* the 24 x 32 f32 output for kbd_tma_store: tile g at rows 8(g - 1) .. */
  float *dst;         /* the same memory: tile g at dst + (g - 1) * ELEMS */
  int tma;            /* 0: kbd_bulk_store, 1: kbd_tma_store */
  int n;              /* the wait's n: 0, 1 or 2 */
  int plain;          /* 0: kbd_bulk_wait_group_read(n), 1: kbd_bulk_wait_group(n) */
  int target;         /* the group whose source is overwritten: 1..3 (0: none) */
  int other_warp;     /* 0: the issuing thread overwrites right after its wait; 1: warp 1, after a kbd_sync */
} sg_params;

static int sg_issue_line[GROUPS + 1], sg_write_line;

/* The value of element i of tile g (1..3). */
static float sg_value(int g, int i) { return (float)(g * 1000 + i); }

/* Store tile t as group g's data (a macro: the store's file:line is the line that uses it). */
#define SG_ISSUE(t, g)                                                                                                 \
  do {                                                                                                                 \
    if (p.tma)                                                                                                         \
      kbd_tma_store2d(&p.map, t, 8 * ((g)-1), 0);                                                                        \
    else                                                                                                               \
      kbd_bulk_store(p.dst + (size_t)((g)-1) * ELEMS, (t).p, ELEMS * sizeof(float));                                   \
  } while (0)

KBD_KERNEL(store_groups_k, 64, sg_params) {
  KBD_SHARED_STILE(sg_tile, t1);
  KBD_SHARED_STILE(sg_tile, t2);
  KBD_SHARED_STILE(sg_tile, t3);
  const int w = kbd_warp_id();
  float *const tp = p.target == 1 ? t1.p : p.target == 2 ? t2.p : t3.p;
  if (w == 0) {
    KBD_FOR_LANES(l) {
      for (int i = l; i < ELEMS; i += 32) {
        kbd_st_shared(t1.p + i, sg_value(1, i));
        kbd_st_shared(t2.p + i, sg_value(2, i));
        kbd_st_shared(t3.p + i, sg_value(3, i));
      }
    }
    kbd_fence_proxy_async(); /* generic writes -> visible to the async proxy that reads the sources */
    KBD_ELECT_ONE {
      MT_MARK(sg_issue_line[1]); SG_ISSUE(t1, 1);
      kbd_bulk_commit_group();
      MT_MARK(sg_issue_line[2]); SG_ISSUE(t2, 2);
      kbd_bulk_commit_group();
      MT_MARK(sg_issue_line[3]); SG_ISSUE(t3, 3);
      kbd_bulk_commit_group();
      if (p.plain) {
        switch (p.n) {
        case 0: kbd_bulk_wait_group(0); break;
        case 1: kbd_bulk_wait_group(1); break;
        default: kbd_bulk_wait_group(2); break;
        }
      } else {
        switch (p.n) {
        case 0: kbd_bulk_wait_group_read(0); break;
        case 1: kbd_bulk_wait_group_read(1); break;
        default: kbd_bulk_wait_group_read(2); break;
        }
      }
      if (p.target && !p.other_warp) {
        MT_MARK(sg_write_line); kbd_st_shared(tp, -1.0f);
      }
    }
  }
  kbd_sync(); /* warp 0's wait before warp 1's overwrite */
  if (w == 1 && p.target && p.other_warp) {
    KBD_ELECT_ONE {
      MT_MARK(sg_write_line); kbd_st_shared(tp, -1.0f);
    }
  }
  kbd_sync(); /* warp 1's overwrite before warp 0's last wait (which would end the stores warp 1 races with) */
  if (w == 0) {
    KBD_ELECT_ONE { kbd_bulk_wait_group(0); } /* the rest, before the warp (and the block) ends */
  }
}

static float host_dst[GROUPS * ELEMS];

static kbd_status run_sg(sg_params p, long seed) {
  mt_env(1, seed);
  float *dst = NULL;
  for (int i = 0; i < GROUPS * ELEMS; ++i)
    host_dst[i] = -7.0f;
  kbd_status s = kbd_malloc((void **)&dst, sizeof host_dst);
  if (kbd_ok(s)) s = kbd_copy_to_device(dst, host_dst, sizeof host_dst);
  if (kbd_ok(s)) {
    kbd_tensor_map_desc d =
        kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, dst, 8 * GROUPS, 32, 32 * sizeof(float), 8, 32, KBD_TMAP_SWIZZLE_NONE);
    s = kbd_tensor_map_encode(&p.map, &d);
  }
  if (kbd_ok(s)) {
    p.dst = dst;
    s = store_groups_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_dst, dst, sizeof host_dst);
  kbd_free(dst);
  return s;
}

static const char *sg_what(const sg_params *p, char *buf, size_t n) {
  return mt_fmt(buf, n, "%s, %s(%d), overwrite group %d of 3 by %s", p->tma ? "kbd_tma_store2d" : "kbd_bulk_store",
                p->plain ? "kbd_bulk_wait_group" : "kbd_bulk_wait_group_read", p->n, p->target,
                p->other_warp ? "warp 1 after kbd_sync" : "the issuing thread");
}

/* Every combination: a race exactly when the overwritten group is one of the n newest. */
static void test_wait_keeps_the_n_newest(void **state) {
  (void)state;
  char what[256], b[4096];
  int races = 0, clean = 0;
  for (int tma = 0; tma <= 1; ++tma)
    for (int plain = 0; plain <= 1; ++plain)
      for (int n = 0; n <= 2; ++n)
        for (int target = 1; target <= GROUPS; ++target)
          for (int other = 0; other <= 1; ++other) {
            sg_params p;
            memset(&p, 0, sizeof p);
            p.tma = tma;
            p.plain = plain;
            p.n = n;
            p.target = target;
            p.other_warp = other;
            sg_what(&p, what, sizeof what);
            const int pending = target > GROUPS - n; /* one of the n newest groups */
            for (long seed = -1; seed < 3; ++seed) {
              const kbd_status s = run_sg(p, seed);
              if (pending) {
                if (s.code != KBD_ERR_RACE)
                  fail_msg("%s (seed %ld): expected a race at the overwrite, got %s: %s", what, seed,
                           kbd_code_name(s.code), s.msg);
                MT_ASSERT_AT(s, MT_LINE(sg_write_line));
                MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "that the %s issued at %s:%d (warp 0) may still be reading",
                                        tma ? "kbd_tma_store2d" : "kbd_bulk_store", __FILE__,
                                        MT_LINE(sg_issue_line[target])));
                ++races;
              } else {
                if (s.code != KBD_OK) fail_msg("%s (seed %ld): expected a clean run, got: %s", what, seed, s.msg);
                for (int g = 1; g <= GROUPS; ++g)
                  for (int i = 0; i < ELEMS; ++i)
                    if (host_dst[(g - 1) * ELEMS + i] != sg_value(g, i))
                      fail_msg("%s: global element %d of tile %d is %g, want %g", what, i, g,
                               (double)host_dst[(g - 1) * ELEMS + i], (double)sg_value(g, i));
                ++clean;
              }
            }
          }
  /* per store kind and wait form: n = 0 none pending, n = 1 one, n = 2 two; x 2 writers x 4 schedules */
  assert_int_equal(races, 2 * 2 * 3 * 2 * 4);
  assert_int_equal(clean, 2 * 2 * 6 * 2 * 4);
}

/* The case the mutant passed, spelled out: two groups in flight, read(1), the newest group's source overwritten by
 * the issuing thread - and its twins, the older group's source after read(1) and the newest's after read(0). */
static void test_read1_newest_is_a_race(void **state) {
  (void)state;
  char b[4096];
  sg_params p;
  memset(&p, 0, sizeof p);
  p.n = 1;
  p.target = 3;
  kbd_status s = run_sg(p, -1);
  MT_ASSERT_CODE(s, KBD_ERR_RACE);
  MT_ASSERT_AT(s, MT_LINE(sg_write_line));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "kbd_st_shared writes shared bytes"));
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "that the kbd_bulk_store issued at %s:%d (warp 0) may still be reading",
                          __FILE__, MT_LINE(sg_issue_line[3])));
  p.target = 2; /* the older group after read(1): free */
  MT_ASSERT_OK(run_sg(p, -1));
  p.n = 0; /* the newest after read(0): free */
  p.target = 3;
  MT_ASSERT_OK(run_sg(p, -1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_read1_newest_is_a_race),
      MT_TEST(test_wait_keeps_the_n_newest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
