/* test_grace_units.c - the global race checker's read records per 64-byte unit (kbd/cpu/grace.h, "Read records per
 * unit"; docs/cpu-machine.md "Races on global memory") must report exactly what per-byte read records report: each
 * case below is a kernel whose race a wrong summary would hide, misplace or misname, or invent.
 *
 * One block of 128 threads, a 256-byte buffer the host wrote (units [0,64) [64,128) [128,192) [192,256)). Warps reach
 * each other's accesses in a fixed order by spinning on a host flag (gu_go: a raw access, invisible to the race
 * checker, which orders nothing), so each report names one access and one earlier access in every schedule:
 *
 *   GU_WAR_WHOLE: warp 0 reads unit 1 whole, warp 1 writes it whole: write after read at byte 64 (the summary's
 *     reader tested as one record, then expanded so that the report names its byte);
 *   GU_WAR_PART: the same with a 4-byte write at 72: byte 72 (a write in part expands the summary first);
 *   GU_PART_READ: warp 0 reads unit 1 whole, a barrier, warp 2 reads bytes 64-67, then warp 1 (ordered after warp 0's
 *     read by the barrier, not after warp 2's) writes the unit whole: byte 64, naming warp 2's read (a read in part
 *     must expand the summary, or the summary would still say warp 0 read every byte);
 *   GU_CONCURRENT: warp 0 reads unit 1 whole, warp 2 reads it whole (not ordered: warp 0 stays the recorded reader,
 *     as per byte) and then writes it whole: byte 64, naming warp 0's read (a summary replaced by warp 2's read would
 *     make the write look ordered);
 *   GU_STRADDLE: warp 0 reads bytes 96-159 (units 1 and 2 in part), warp 1 writes 160-191 and 64-95 (clean: nobody
 *     read them) and then 120-123: byte 120 (a unit covered in part must not get a summary for all its bytes);
 *   GU_READ_LATE then GU_NEXT_LAUNCH: warp 3 reads unit 2 whole after two barriers; in the next launch warp 0 reads
 *     it whole first thing and warp 1 then writes it whole: byte 128, naming warp 0's read (the earlier launch's
 *     summary reads as no access, as per-byte records do: were it taken for a live reader that warp 0 is not
 *     ordered after, warp 0's read would be dropped as a concurrent one's, and the race missed);
 *   GU_CLEAN: the reads and writes above ordered by barriers: clean.
 *
 * And across blocks, on 1, 2 and 8 host threads and four seeds: 8 blocks read unit 0 whole, the last block also
 * writes it: reported in the first run whichever host thread got there first.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "exact_host.h"
#include "machine_test.h"

enum { GU_CLEAN, GU_WAR_WHOLE, GU_WAR_PART, GU_PART_READ, GU_CONCURRENT, GU_STRADDLE, GU_READ_LATE, GU_NEXT_LAUNCH };

typedef struct gu_unit {
  uint32_t w[16]; /* 64 bytes: one unit */
} gu_unit;
typedef struct gu_half {
  uint32_t w[8];
} gu_half;

typedef struct gu_params {
  unsigned char *buf;
  int brk;
} gu_params;

static int gu_go;
static int gu_line_r0, gu_line_r2, gu_line_w1, gu_line_w2;

#define GU_AT(off, T) ((T *)(void *)(p.buf + (off)))
#define GU_LANE0(stmt)                                                                                                 \
  KBD_FOR_LANES(lane) {                                                                                                \
    if (lane == 0) stmt;                                                                                               \
  }

/* MT_MARK and the access it marks share a line: */
/* clang-format off */
KBD_KERNEL(gu_kernel, 128, gu_params) {
  const gu_unit u = {{0}};
  const int wid = kbd_warp_id();
  switch (p.brk) {
  case GU_WAR_WHOLE:
  case GU_WAR_PART:
    if (wid == 0) {
      GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(64, const gu_unit)); })
      __atomic_store_n(&gu_go, 1, __ATOMIC_RELAXED);
    } else if (wid == 1) {
      KBD_SPIN_UNTIL(__atomic_load_n(&gu_go, __ATOMIC_RELAXED) == 1);
      if (p.brk == GU_WAR_WHOLE) {
        GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(64, gu_unit), u); })
      } else {
        GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(72, uint32_t), 7u); })
      }
    }
    break;
  case GU_PART_READ:
    if (wid == 0) GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(64, const gu_unit)); })
    kbd_sync();
    if (wid == 2) {
      GU_LANE0({ MT_MARK(gu_line_r2); (void)kbd_ld_global(GU_AT(64, const uint32_t)); })
      __atomic_store_n(&gu_go, 1, __ATOMIC_RELAXED);
    } else if (wid == 1) {
      KBD_SPIN_UNTIL(__atomic_load_n(&gu_go, __ATOMIC_RELAXED) == 1);
      GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(64, gu_unit), u); })
    }
    break;
  case GU_CONCURRENT:
    if (wid == 0) {
      GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(64, const gu_unit)); })
      __atomic_store_n(&gu_go, 1, __ATOMIC_RELAXED);
    } else if (wid == 2) {
      KBD_SPIN_UNTIL(__atomic_load_n(&gu_go, __ATOMIC_RELAXED) == 1);
      GU_LANE0({ MT_MARK(gu_line_r2); (void)kbd_ld_global(GU_AT(64, const gu_unit)); })
      GU_LANE0({ MT_MARK(gu_line_w2); kbd_st_global(GU_AT(64, gu_unit), u); })
    }
    break;
  case GU_STRADDLE:
    if (wid == 0) {
      GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(96, const gu_unit)); })
      __atomic_store_n(&gu_go, 1, __ATOMIC_RELAXED);
    } else if (wid == 1) {
      const gu_half h = {{0}};
      KBD_SPIN_UNTIL(__atomic_load_n(&gu_go, __ATOMIC_RELAXED) == 1);
      GU_LANE0(kbd_st_global(GU_AT(160, gu_half), h))
      GU_LANE0(kbd_st_global(GU_AT(64, gu_half), h))
      GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(120, uint32_t), 7u); })
    }
    break;
  case GU_READ_LATE:
    kbd_sync();
    kbd_sync();
    if (wid == 3) GU_LANE0((void)kbd_ld_global(GU_AT(128, const gu_unit)))
    break;
  case GU_NEXT_LAUNCH:
    if (wid == 0) {
      GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(128, const gu_unit)); })
      __atomic_store_n(&gu_go, 1, __ATOMIC_RELAXED);
    } else if (wid == 1) {
      KBD_SPIN_UNTIL(__atomic_load_n(&gu_go, __ATOMIC_RELAXED) == 1);
      GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(128, gu_unit), u); })
    }
    break;
  default: /* GU_CLEAN */
    if (wid == 0) GU_LANE0((void)kbd_ld_global(GU_AT(64, const gu_unit)))
    if (wid == 2) GU_LANE0((void)kbd_ld_global(GU_AT(96, const gu_unit)))
    kbd_sync();
    if (wid == 1) GU_LANE0(kbd_st_global(GU_AT(64, gu_unit), u))
    if (wid == 3) GU_LANE0(kbd_st_global(GU_AT(132, uint32_t), 7u))
    kbd_sync();
    if (wid == 2) GU_LANE0((void)kbd_ld_global(GU_AT(64, const uint32_t)))
    break;
  }
}

/* Every block reads unit 0 whole; the last block then writes it whole. */
KBD_KERNEL(gu_blocks, 32, gu_params) {
  const gu_unit u = {{0}};
  GU_LANE0({ MT_MARK(gu_line_r0); (void)kbd_ld_global(GU_AT(0, const gu_unit)); })
  if (kbd_block_x() == kbd_grid_x() - 1) GU_LANE0({ MT_MARK(gu_line_w1); kbd_st_global(GU_AT(0, gu_unit), u); })
}
/* clang-format on */

static unsigned char *gu_buf(void) {
  unsigned char h[256];
  memset(h, 0x11, sizeof h);
  return (unsigned char *)xh_upload(h, sizeof h);
}

static kbd_status gu_run(int brk) {
  unsigned char *d = gu_buf();
  __atomic_store_n(&gu_go, 0, __ATOMIC_RELAXED);
  const kbd_status st = gu_kernel(kbd_cfg_1d(1), (gu_params){d, brk});
  kbd_free(d);
  return st;
}

/* A "write after read" report at line `at` of this file, at `byte`, naming the read at line `read` (the lines are
 * marked when the kernel runs: gu_run first). */
static void gu_expect(kbd_status st, int at, int byte, int read) {
  MT_ASSERT_CODE(st, KBD_ERR_RACE);
  char w[512];
  MT_ASSERT_HAS(st, mt_fmt(w, sizeof w, "%s:%d: ", __FILE__, at));
  MT_ASSERT_HAS(st, "data race (write after read) on global memory");
  MT_ASSERT_HAS(st, mt_fmt(w, sizeof w, "byte %d of the 256-byte allocation", byte));
  MT_ASSERT_HAS(st, mt_fmt(w, sizeof w, "read it at %s:%d\n", __FILE__, read));
}

static void test_war_whole(void **state) {
  (void)state;
  const kbd_status st = gu_run(GU_WAR_WHOLE);
  gu_expect(st, MT_LINE(gu_line_w1), 64, MT_LINE(gu_line_r0));
}
static void test_war_part(void **state) {
  (void)state;
  const kbd_status st = gu_run(GU_WAR_PART);
  gu_expect(st, MT_LINE(gu_line_w1), 72, MT_LINE(gu_line_r0));
}
static void test_part_read(void **state) {
  (void)state;
  const kbd_status st = gu_run(GU_PART_READ);
  gu_expect(st, MT_LINE(gu_line_w1), 64, MT_LINE(gu_line_r2));
}
static void test_concurrent(void **state) {
  (void)state;
  const kbd_status st = gu_run(GU_CONCURRENT);
  gu_expect(st, MT_LINE(gu_line_w2), 64, MT_LINE(gu_line_r0));
}
static void test_next_launch(void **state) {
  (void)state;
  unsigned char *d = gu_buf();
  MT_ASSERT_OK(gu_kernel(kbd_cfg_1d(1), (gu_params){d, GU_READ_LATE}));
  __atomic_store_n(&gu_go, 0, __ATOMIC_RELAXED);
  const kbd_status st = gu_kernel(kbd_cfg_1d(1), (gu_params){d, GU_NEXT_LAUNCH});
  kbd_free(d);
  gu_expect(st, MT_LINE(gu_line_w1), 128, MT_LINE(gu_line_r0));
}
static void test_straddle(void **state) {
  (void)state;
  const kbd_status st = gu_run(GU_STRADDLE);
  gu_expect(st, MT_LINE(gu_line_w1), 120, MT_LINE(gu_line_r0));
}

/* Ordered versions clean under seeds; and a second launch on the same buffer, whose first launch's summaries read as
 * no access (the racy kernel's records left behind). */
static void test_clean(void **state) {
  (void)state;
  for (long seed = -1; seed < 4; ++seed) {
    mt_env(1, seed);
    const kbd_status st = gu_run(GU_CLEAN);
    if (st.code != KBD_OK) fail_msg("seed %ld: %s", seed, st.msg);
  }
  unsigned char *d = gu_buf();
  MT_ASSERT_CODE(gu_kernel(kbd_cfg_1d(1), (gu_params){d, GU_CONCURRENT}), KBD_ERR_RACE);
  MT_ASSERT_OK(gu_kernel(kbd_cfg_1d(1), (gu_params){d, GU_CLEAN}));
  kbd_free(d);
}

static void test_blocks(void **state) {
  (void)state;
  static const long threads[] = {1, 2, 8}, seeds[] = {0, 1, 7, 12345};
  for (int t = 0; t < 3; ++t)
    for (int s = 0; s < 4; ++s) {
      mt_env(threads[t], seeds[s]);
      unsigned char *d = gu_buf();
      const kbd_status st = gu_blocks(kbd_cfg_1d(8), (gu_params){d, 0});
      kbd_free(d);
      MT_ASSERT_CODE(st, KBD_ERR_RACE);
      MT_ASSERT_HAS(st, "different blocks, and no release/acquire chain between them");
      char w[512];
      MT_ASSERT_HAS(st, mt_fmt(w, sizeof w, "%s:%d", __FILE__, MT_LINE(gu_line_r0)));
      MT_ASSERT_HAS(st, mt_fmt(w, sizeof w, "%s:%d", __FILE__, MT_LINE(gu_line_w1)));
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_war_whole), MT_TEST(test_war_part),    MT_TEST(test_part_read), MT_TEST(test_concurrent),
      MT_TEST(test_straddle),  MT_TEST(test_next_launch), MT_TEST(test_clean),     MT_TEST(test_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
