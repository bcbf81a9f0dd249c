/* test_messages.c - messages are never cut, whatever the length of the paths in them (issue 30).
 *
 * kbd_text grows to what it holds; a status's message is kept whole, shared between equal messages and safe to
 * make from many threads; and the CPU machine's reports stay complete and keep their shape when every path in
 * them is thousands of characters long. The long paths come from `#line` with MSG_LONG_FILE, a file name of
 * MSG_LONG_LEN (4000) characters that CMake defines, so this test needs no deep checkout (tests/deep_path has
 * one): the old fixed buffers (4 KiB per status, 384 bytes per waiting warp, 192 per shared-memory site, 1 KiB
 * per global-memory report) could not hold even one of these paths. */
#include <kbd/tile.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "machine_test.h"

#ifndef MSG_LONG_FILE
#error "tests/machine/CMakeLists.txt defines MSG_LONG_FILE and MSG_LONG_LEN"
#endif

/* ---- kbd_text --------------------------------------------------------------------------------------------- */

static void test_text_grows_to_what_it_holds(void **state) {
  (void)state;
  kbd_text t = KBD_TEXT_INIT;
  assert_string_equal(kbd_text_str(&t), ""); /* never NULL, even before the first append */
  for (int i = 0; i < 20000; ++i)
    kbd_text_append(&t, "%05d,", i);
  assert_int_equal(t.len, 20000 * 6);
  assert_int_equal(strlen(kbd_text_str(&t)), t.len);
  for (int i = 0; i < 20000; i += 997) {
    char want[8];
    snprintf(want, sizeof want, "%05d,", i);
    assert_memory_equal(t.s + (size_t)i * 6, want, 6);
  }
  kbd_text_truncate(&t, 12);
  assert_string_equal(kbd_text_str(&t), "00000,00001,");
  kbd_text_puts(&t, "end");
  assert_string_equal(kbd_text_str(&t), "00000,00001,end");
  assert_int_equal(t.oom, 0);
  kbd_text_free(&t);
  assert_null(t.s);
  assert_int_equal(t.len, 0);
  assert_string_equal(kbd_text_str(&t), "");
  kbd_text_append(&t, "%s", ""); /* nothing to add: still empty, no allocation needed */
  assert_string_equal(kbd_text_str(&t), "");
  kbd_text_free(&t);
}

/* ---- statuses: whole, kept, shared between equal messages -------------------------------------------------- */

static void test_status_message_is_whole_and_kept(void **state) {
  (void)state;
  const kbd_status ok = kbd_status_ok();
  assert_non_null(ok.msg);
  assert_string_equal(ok.msg, "");
  /* 100 000 characters: 24 times the old 4 KiB limit */
  char *big = (char *)malloc(100001);
  assert_non_null(big);
  for (int i = 0; i < 100000; ++i)
    big[i] = (char)('a' + i % 26);
  big[100000] = '\0';
  const kbd_status a = kbd_status_make(KBD_ERR_INVALID, "start %s end", big);
  assert_int_equal(a.code, KBD_ERR_INVALID);
  assert_int_equal(strlen(a.msg), 100000 + 10);
  assert_memory_equal(a.msg, "start ", 6);
  assert_memory_equal(a.msg + 6, big, 100000);
  assert_string_equal(a.msg + 100006, " end");
  /* equal messages share one copy; another message has its own, and the first is unchanged */
  const kbd_status b = kbd_status_make(KBD_ERR_CUDA, "start %s end", big);
  assert_ptr_equal(a.msg, b.msg);
  big[50000] = '_';
  const kbd_status c = kbd_status_make(KBD_ERR_INVALID, "start %s end", big);
  assert_ptr_not_equal(a.msg, c.msg);
  assert_int_equal(a.msg[6 + 50000], 'a' + 50000 % 26);
  assert_int_equal(c.msg[6 + 50000], '_');
  free(big);
  /* a prefix of a kept message is a message of its own */
  const kbd_status p = kbd_status_make(KBD_ERR_INVALID, "start abc");
  assert_string_equal(p.msg, "start abc");
  assert_ptr_not_equal(p.msg, a.msg);
  /* built piecewise */
  kbd_text t = KBD_TEXT_INIT;
  kbd_text_append(&t, "x=%d", 7);
  kbd_text_puts(&t, " [rule r]");
  const kbd_status d = kbd_status_text(KBD_ERR_INVALID, &t);
  kbd_text_free(&t);
  assert_string_equal(d.msg, "x=7 [rule r]");
}

#define MSG_THREADS 8
#define MSG_DISTINCT 37
#define MSG_ROUNDS 2000

static const char *msg_seen[MSG_THREADS][MSG_DISTINCT];

static void *msg_worker(void *arg) {
  const int id = (int)(intptr_t)arg;
  for (int r = 0; r < MSG_ROUNDS; ++r) {
    const int k = (r * 7 + id) % MSG_DISTINCT;
    const kbd_status s = kbd_status_make(KBD_ERR_KERNEL, "concurrent message %d of a long tail %0*d", k, 300, k);
    if (msg_seen[id][k] && msg_seen[id][k] != s.msg) return (void *)1; /* one copy per message, every time */
    msg_seen[id][k] = s.msg;
  }
  return NULL;
}

/* Host threads of the CPU machine record faults concurrently: every message is kept once and read back whole. */
static void test_status_messages_from_many_threads(void **state) {
  (void)state;
  pthread_t th[MSG_THREADS];
  for (int i = 0; i < MSG_THREADS; ++i)
    assert_int_equal(pthread_create(&th[i], NULL, msg_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < MSG_THREADS; ++i) {
    void *r = NULL;
    assert_int_equal(pthread_join(th[i], &r), 0);
    assert_null(r);
  }
  for (int k = 0; k < MSG_DISTINCT; ++k) {
    const kbd_status s = kbd_status_make(KBD_ERR_KERNEL, "concurrent message %d of a long tail %0*d", k, 300, k);
    for (int i = 0; i < MSG_THREADS; ++i)
      assert_ptr_equal(msg_seen[i][k], s.msg);
    char want[512];
    snprintf(want, sizeof want, "concurrent message %d of a long tail %0*d", k, 300, k);
    assert_string_equal(s.msg, want);
  }
}

/* ---- the CPU machine's reports from a 4000-character file name ------------------------------------------- */

typedef struct {
  int skip;    /* the warp that never arrives */
  float *g;    /* MSG_G floats from kbd_malloc */
  int mode;    /* MSG_BAR, MSG_POISON, MSG_GLOBAL */
} msg_params;

enum { MSG_BAR, MSG_POISON, MSG_GLOBAL };
#define MSG_G 64

static int msg_bar_line, msg_decl_line, msg_read_line, msg_global_line, msg_alloc_line;

/* Everything from here to the reset below is "in" MSG_LONG_FILE: __FILE__ is 4000 characters long. */
#line 1000 MSG_LONG_FILE
KBD_KERNEL(msg_k32, 1024, msg_params) {
  if (p.mode == MSG_BAR) {
    if (kbd_warp_id() != p.skip) {
      MT_MARK(msg_bar_line); kbd_bar_sync(1, 1024);
    }
  } else if (p.mode == MSG_POISON) {
    MT_MARK(msg_decl_line); KBD_SHARED(float, s, 64);
    KBD_TILE(f32, 1, 64, KBD_WARP) t;
    if (kbd_warp_id() == 0) {
      MT_MARK(msg_read_line); kbd_load_smem(t, s, 64);
    }
  } else {
    KBD_TILE(f32, 1, 64, KBD_WARP) t;
    kbd_fill(t, 1.0f);
    if (kbd_warp_id() == 0) {
      MT_MARK(msg_global_line); kbd_store(p.g + 32, t, MSG_G + 32, 0); /* 32 floats past the allocation */
    }
  }
}

KBD_KERNEL(msg_k4, 128, msg_params) {
  if (kbd_warp_id() != p.skip) {
    MT_MARK(msg_bar_line); kbd_bar_sync(1, 128);
  }
}

static float *msg_alloc(void) {
  float *g = NULL;
  MT_MARK(msg_alloc_line); MT_ASSERT_OK(kbd_malloc((void **)&g, MSG_G * sizeof(float)));
  return g;
}
#line 179 "test_messages.c"
/* (the line number above is this line's own, so the rest of the file reports its real lines) */

/* "<MSG_LONG_FILE>:<line>" checked character for character in the message, and at the place a report puts it. */
static void msg_expect(const kbd_status s, const char *fmt, int line) {
  const size_t n = strlen(fmt) + MSG_LONG_LEN + 64;
  char *want = (char *)malloc(n);
  assert_non_null(want);
  mt_fmt(want, n, fmt, MSG_LONG_FILE, line);
  MT_ASSERT_HAS(s, want);
  free(want);
}

static void test_report_shape_does_not_depend_on_path_length(void **state) {
  (void)state;
  assert_int_equal(strlen(MSG_LONG_FILE), MSG_LONG_LEN);
  /* 31 of 32 warps wait at one barrier: past 8 waiting warps, one merged line; the suffix is still there */
  msg_params p = {31, NULL, MSG_BAR};
  kbd_status s = msg_k32(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  msg_expect(s,
             "\n  warp 31 has exited\n  warps 0-30 each at %s:%d waits for named barrier 1 to complete (992 of 1024 "
             "threads arrived)\n  [kernel msg_k32, block (0,0,0)]",
             MT_LINE(msg_bar_line));
  /* 3 of 4: one line per warp, each whole */
  p.skip = 3;
  s = msg_k4(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_DEADLOCK);
  for (int w = 0; w < 3; ++w) {
    char fmt[128];
    snprintf(fmt, sizeof fmt, "\n  warp %d at %%s:%%d waits for named barrier 1 to complete (96 of 128 threads arrived)",
             w);
    msg_expect(s, fmt, MT_LINE(msg_bar_line));
  }
  MT_ASSERT_HAS(s, "\n  [kernel msg_k4, block (0,0,0)]");
  MT_ASSERT_LACKS(s, "warps 0-2");
}

static void test_shared_and_global_reports_keep_the_path(void **state) {
  (void)state;
  msg_params p = {0, NULL, MSG_POISON};
  kbd_status s = msg_k32(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  msg_expect(s, "%s:%d: kbd_load_smem reads never-written shared memory (shared array declared at ",
             MT_LINE(msg_read_line));
  msg_expect(s, "shared array declared at %s:%d, byte 0", MT_LINE(msg_decl_line));
  MT_ASSERT_HAS(s, "(warp 0)\n  [kernel msg_k32, block (0,0,0)]");

  p.mode = MSG_GLOBAL;
  p.g = msg_alloc();
  s = msg_k32(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  msg_expect(s, "%s:%d: kbd_store", MT_LINE(msg_global_line));
  msg_expect(s, "allocated at %s:%d", MT_LINE(msg_alloc_line));
  MT_ASSERT_HAS(s, "(warp 0)\n  [kernel msg_k32, block (0,0,0)]");
  MT_ASSERT_OK(kbd_free(p.g));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_grows_to_what_it_holds),
      cmocka_unit_test(test_status_message_is_whole_and_kept),
      cmocka_unit_test(test_status_messages_from_many_threads),
      cmocka_unit_test(test_report_shape_does_not_depend_on_path_length),
      cmocka_unit_test(test_shared_and_global_reports_keep_the_path),
  };
  return cmocka_run_group_tests(tests, mt_group_setup, NULL);
}
