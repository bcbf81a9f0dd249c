/* test_async_bounds.c - every emulated asynchronous write checks its own destination (issue 31, item 5).
 *
 * The CPU machine writes the data of an asynchronous copy later than its issue: a TMA or bulk load lands in shared
 * memory when a warp waits on its mbarrier (kbd_cpu_tma_land, kbd_cpu_bulk_land), a TMA or bulk store writes global
 * memory at its bulk wait (kbd_cpu_store_finish). The issue checks the request; the landing code computes addresses
 * of its own (the tensor's edges, the swizzle, a peer CTA's memory), and with the store's edge clip removed the
 * machine wrote past the kbd_malloc buffer - heap corruption - instead of reporting. These tests call the write
 * paths themselves, as a mutant of their callers would, with a destination range past the end of its allocation:
 * each must be a KBD_ERR_BOUNDS report naming the issuing call's file:line (the copy record's site), never a crash;
 * the same calls with the range inside land their bytes and run clean.
 *
 *   - a TMA box landing across the end of the dynamic shared memory, and across the end of the machine's whole
 *     shared-memory buffer (the write that corrupted the heap);
 *   - a bulk copy landing across the end of the dynamic shared memory;
 *   - a TMA store whose tensor map claims more rows than the kbd_malloc allocation holds (the edge clip then lets
 *     the rows past the allocation through: exactly the removed-clip mutant);
 *   - a bulk store running past the end of its kbd_malloc allocation.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define AB_ROWS 16 /* the global tensor: 16 x 32 f32 (2 KiB), boxes of 8 x 32 (1 KiB) */
#define AB_COLS 32
#define AB_BOX 1024u
#define AB_DYN 2048u /* the launch's dynamic shared memory */

enum { AB_TMA_LOAD, AB_BULK_LOAD, AB_TMA_STORE, AB_BULK_STORE };
enum { AB_INSIDE, AB_PAST_DYN, AB_PAST_SMEM };

typedef struct {
  kbd_tensor_map map; /* over buf */
  float *buf;
  int which, where;
} ab_params;

static int ab_line;        /* the line the copy record names as its issue */
static int ab_landed = -1; /* 1: the bytes arrived where they belong (clean runs) */

KBD_KERNEL(ab_kernel, 32, ab_params) {
  kbd_cpu_cta *const cta = kbd_cpu_self()->cta;
  const size_t off = p.where == AB_PAST_DYN    ? AB_DYN - AB_BOX / 2 /* half inside, half past the region */
                     : p.where == AB_PAST_SMEM ? KBD_MAX_SMEM_BYTES - AB_BOX / 2
                                               : 0;
  if (p.which == AB_TMA_LOAD || p.which == AB_BULK_LOAD) {
    kbd_cpu_copy c;
    memset(&c, 0, sizeof c);
    c.off = off;
    c.bytes = AB_BOX;
    c.src = p.buf;
    c.desc = p.map.desc;
    c.file = __FILE__;
    MT_MARK(ab_line); c.line = __LINE__;
    if (p.which == AB_TMA_LOAD)
      kbd_cpu_tma_land(cta, &c);
    else
      kbd_cpu_bulk_land(cta, &c);
    /* box rows 0..7 of the tensor; the 128B swizzle moves 16-byte units within each 128-byte line */
    int ok = 1;
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t u = 0; u < 8; ++u) {
        const uint32_t lin = (uint32_t)off + r * 128u + u * 16u;
        const uint32_t at = p.which == AB_TMA_LOAD ? kbd_swizzle_apply(KBD_SWIZZLE_128B, lin) : lin;
        ok &= memcmp(cta->smem + at, p.buf + r * AB_COLS + u * 4, 16) == 0;
      }
    __atomic_store_n(&ab_landed, ok, __ATOMIC_RELAXED);
  } else {
    /* the source: shared bytes [0, 1 KiB) holding 1000 + i */
    for (uint32_t i = 0; i < AB_BOX / 4; ++i) {
      const float v = 1000.0f + (float)i;
      memcpy(cta->smem + 4 * i, &v, 4);
    }
    kbd_tensor_map lie = p.map; /* the store's own copy of the map (the machine reads the map at the wait) */
    kbd_cpu_store st;
    memset(&st, 0, sizeof st);
    st.off = 0;
    st.bytes = AB_BOX;
    st.file = __FILE__;
    if (p.which == AB_TMA_STORE) {
      st.op = KBD_CPU_ST_STORE;
      st.dst = &lie;
      st.coord[1] = p.where == AB_INSIDE ? 8 : 16; /* rows 8..15 (the allocation's last) or 16..23 (past it) */
      if (p.where != AB_INSIDE) lie.desc.global_dims[1] = 4 * AB_ROWS; /* the clip no longer stops at row 16 */
    } else {
      st.op = KBD_CPU_ST_BULK;
      st.dst = p.where == AB_INSIDE ? (void *)(p.buf + AB_ROWS * AB_COLS / 2)        /* the second half: fits */
                                    : (void *)(p.buf + AB_ROWS * AB_COLS - AB_COLS); /* the last row, then past */
    }
    MT_MARK(ab_line); st.line = __LINE__;
    kbd_cpu_store_finish(cta, &st);
    const float *g = p.buf + AB_ROWS * AB_COLS / 2; /* where both in-bounds stores went */
    int ok = 1;
    for (uint32_t i = 0; i < AB_BOX / 4; ++i) { /* a tensor store reads its source through the map's swizzle */
      const uint32_t at = p.which == AB_TMA_STORE ? kbd_swizzle_apply(KBD_SWIZZLE_128B, 4 * i) : 4 * i;
      ok &= g[i] == 1000.0f + (float)(at / 4);
    }
    __atomic_store_n(&ab_landed, ok, __ATOMIC_RELAXED);
  }
}

static kbd_status run_ab(int which, int where) {
  float host[AB_ROWS * AB_COLS];
  for (int i = 0; i < AB_ROWS * AB_COLS; ++i)
    host[i] = (float)i;
  float *buf = NULL;
  ab_params p;
  memset(&p, 0, sizeof p);
  p.which = which;
  p.where = where;
  kbd_status s = kbd_malloc((void **)&buf, sizeof host);
  if (kbd_ok(s)) s = kbd_copy_to_device(buf, host, sizeof host);
  if (kbd_ok(s)) {
    const kbd_tensor_map_desc d =
        kbd_tensor_map_desc_2d(KBD_TMAP_DT_F32, buf, AB_ROWS, AB_COLS, AB_COLS * 4, 8, AB_COLS, KBD_TMAP_SWIZZLE_128B);
    s = kbd_tensor_map_encode(&p.map, &d);
  }
  if (kbd_ok(s)) {
    p.buf = buf;
    kbd_launch_cfg cfg = kbd_cfg_1d(1);
    cfg.smem_bytes = AB_DYN;
    __atomic_store_n(&ab_landed, -1, __ATOMIC_RELAXED);
    s = ab_kernel(cfg, p);
  }
  kbd_free(buf);
  return s;
}

static const char *const ab_names[] = {"TMA load (box landing)", "bulk load (landing)", "TMA store (at its wait)",
                                       "bulk store (at its wait)"};

/* Inside the allocation: clean, and the bytes are where they belong (the check rejects nothing legal). */
static void test_inside_lands(void **state) {
  (void)state;
  for (int which = AB_TMA_LOAD; which <= AB_BULK_STORE; ++which) {
    const kbd_status s = run_ab(which, AB_INSIDE);
    if (s.code != KBD_OK) fail_msg("%s inside its allocation: expected a clean run, got: %s", ab_names[which], s.msg);
    if (__atomic_load_n(&ab_landed, __ATOMIC_RELAXED) != 1)
      fail_msg("%s inside its allocation: the bytes did not arrive where they belong", ab_names[which]);
  }
}

/* Across the end of the allocation: a bounds report at the issuing call, naming the destination. */
static void test_past_the_end_is_reported(void **state) {
  (void)state;
  static const char *const role[] = {"kbd_tma_load2d destination", "kbd_bulk_load destination",
                                     "kbd_tma_store2d destination", "kbd_bulk_store destination"};
  int reports = 0;
  for (int which = AB_TMA_LOAD; which <= AB_BULK_STORE; ++which) {
    const kbd_status s = run_ab(which, AB_PAST_DYN);
    if (s.code != KBD_ERR_BOUNDS)
      fail_msg("%s past the end: expected KBD_ERR_BOUNDS, got %s: %s", ab_names[which], kbd_code_name(s.code), s.msg);
    MT_ASSERT_AT(s, MT_LINE(ab_line));
    MT_ASSERT_HAS(s, role[which]);
    if (__atomic_load_n(&ab_landed, __ATOMIC_RELAXED) != -1)
      fail_msg("%s past the end: the write went ahead after the report", ab_names[which]);
    ++reports;
  }
  /* the loads: the exact shared range named */
  kbd_status s = run_ab(AB_TMA_LOAD, AB_PAST_DYN);
  MT_ASSERT_HAS(s, "touches shared-memory bytes [1536, 2560)");
  /* the stores: the allocation named (its size and the kbd_malloc line inside kbd's report) */
  s = run_ab(AB_TMA_STORE, AB_PAST_DYN);
  MT_ASSERT_HAS(s, "2048-byte allocation");
  assert_int_equal(reports, 4);
}

/* A box landing across the end of the machine's shared-memory buffer itself: without the check this memcpy
 * wrote into the host heap. */
static void test_past_the_smem_buffer_is_reported(void **state) {
  (void)state;
  char b[256];
  for (int which = AB_TMA_LOAD; which <= AB_BULK_LOAD; ++which) {
    const kbd_status s = run_ab(which, AB_PAST_SMEM);
    if (s.code != KBD_ERR_BOUNDS)
      fail_msg("%s past the shared buffer: expected KBD_ERR_BOUNDS, got %s: %s", ab_names[which], kbd_code_name(s.code),
               s.msg);
    MT_ASSERT_AT(s, MT_LINE(ab_line));
    MT_ASSERT_HAS(
        s, mt_fmt(b, sizeof b, "past the %u bytes a CTA's shared memory can hold", (unsigned)KBD_MAX_SMEM_BYTES));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_inside_lands),
      MT_TEST(test_past_the_end_is_reported),
      MT_TEST(test_past_the_smem_buffer_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
