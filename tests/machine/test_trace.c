/* test_trace.c - KBD_CPU_TRACE (kbd/cpu/trace.h): the scheduling points of one block, logged to
 * KBD_CPU_TRACE_FILE. A 2-warp kernel meets a whole-block barrier, a named barrier and two mbarriers; under 8
 * seeds x 1 and 2 host threads the log of the traced block must show, whatever the interleaving:
 *   - only the traced block, events numbered 0, 1, 2, ... in order;
 *   - each warp's own sequence of stops (and of barriers it completed) is exactly its program's, at the lines
 *     of the kbd calls, and ends with its exit;
 *   - every stop is followed, before that warp runs again, by the completion that releases it (the barrier
 *     instance naming it among its released warps, the mbarrier phase naming it among its woken warps);
 *   - the stop lines name what is waited for (barrier id and counts, mbarrier phase and parity).
 * With KBD_CPU_TRACE unset, or naming a block outside the grid, nothing is logged. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

typedef struct {
  int *out;
} trace_params;

static int l_sync, l_bar1, l_wait0, l_wait1;

/* Warp 1 arrives on mb[1] and then waits on mb[0]; warp 0 waits on mb[1] and then arrives on mb[0]. So warp 1
 * always stops at its wait (warp 0 cannot have arrived yet), warp 0 only if it gets there first. */
KBD_KERNEL(trace_k, 64, trace_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, mb, 2, 8);
  const int w = kbd_warp_id();
  if (w == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&mb[0], 1);
      kbd_mbarrier_init(&mb[1], 1);
    }
  }
  MT_MARK(l_sync); kbd_sync();
  MT_MARK(l_bar1); kbd_bar_sync(1, 64);
  if (w == 0) {
    MT_MARK(l_wait0); kbd_mbarrier_wait(&mb[1], 0);
    KBD_ELECT_ONE { kbd_mbarrier_arrive(&mb[0]); }
  } else {
    KBD_ELECT_ONE { kbd_mbarrier_arrive(&mb[1]); }
    MT_MARK(l_wait1); kbd_mbarrier_wait(&mb[0], 0);
  }
  kbd_st_global(&p.out[kbd_block_x() * 2 + (unsigned)w], 1 + w);
}

static char g_path[256];
static int *g_out; /* device memory (kbd_malloc): 2 ints per block */

#define MAXL 256
static char g_lines[MAXL][1024];
static int g_n;

/* The log lines written since byte `from` of the trace file. */
static void read_log(long from) {
  FILE *f = fopen(g_path, "r");
  g_n = 0;
  if (!f) return; /* no traced launch yet: nothing written */
  fseek(f, from, SEEK_SET);
  while (g_n < MAXL && fgets(g_lines[g_n], sizeof g_lines[0], f)) {
    g_lines[g_n][strcspn(g_lines[g_n], "\n")] = '\0';
    ++g_n;
  }
  assert_true(g_n < MAXL);
  fclose(f);
}

static long log_size(void) {
  FILE *f = fopen(g_path, "r");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fclose(f);
  return n;
}

static int launch(const char *trace, int blocks) {
  if (trace)
    setenv("KBD_CPU_TRACE", trace, 1);
  else
    unsetenv("KBD_CPU_TRACE");
  const long from = log_size();
  memset(g_out, 0, 8 * sizeof *g_out);
  trace_params p = {g_out};
  MT_ASSERT_OK(trace_k(kbd_cfg(kbd_dim((unsigned)blocks, 1, 1), 0, NULL), p));
  for (int i = 0; i < blocks * 2; ++i)
    assert_int_equal(g_out[i], 1 + i % 2);
  read_log(from);
  return g_n;
}

/* "... warp W <rest>": W, and rest in *rest; -1 if the line is not a warp event. */
static int event_warp(const char *line, const char **rest) {
  const char *s = strstr(line, ": warp ");
  if (!s) return -1;
  char *end = NULL;
  const long w = strtol(s + 7, &end, 10);
  *rest = end;
  return (int)w;
}

/* The line of the last "test_trace.c:N" of the line: a stop ends with "at <file>:<line>" (an mbarrier's
 * description names its declaration and initialisation sites before that), or 0. */
static int at_line(const char *s) {
  const char *a = NULL;
  for (const char *p = strstr(s, "test_trace.c:"); p; p = strstr(p + 1, "test_trace.c:"))
    a = p;
  return a ? atoi(a + 13) : 0;
}

/* Does the list of warps ending the line (" releases warps 0 1" / " wakes warps 1") name warp w? */
static int names_warp(const char *line, const char *key, int w) {
  const char *s = strstr(line, key);
  if (!s) return 0;
  s += strlen(key);
  while (*s) {
    char *end = NULL;
    const long v = strtol(s, &end, 10);
    if (end == s) break;
    if (v == w) return 1;
    s = end;
  }
  return 0;
}

static void check_log(const char *block) {
  char prefix[96];
  snprintf(prefix, sizeof prefix, "kbd-trace trace_k block %s #", block);
  int points[2][8], np[2] = {0, 0}, exited[2] = {0, 0};
  int pending[2] = {0, 0}; /* 1: stopped at a barrier, 2: at an mbarrier wait, not yet released */
  assert_true(g_n > 0);
  for (int i = 0; i < g_n; ++i) {
    const char *l = g_lines[i];
    if (strncmp(l, prefix, strlen(prefix)) != 0) fail_msg("line %d is not of block %s: %s", i, block, l);
    assert_int_equal(atoi(l + strlen(prefix)), i); /* numbered in order from 0 */
    const char *rest = NULL;
    const int w = event_warp(l, &rest);
    if (w < 0 || w > 1) fail_msg("no warp 0/1 event: %s", l);
    if (strncmp(rest, " stop ", 6) == 0 || strncmp(rest, " completes bar ", 15) == 0) {
      assert_false(exited[w]);
      assert_true(np[w] < 8);
      points[w][np[w]++] = at_line(rest);
    }
    if (strncmp(rest, " stop bar.sync ", 15) == 0) {
      pending[w] = 1;
      const int id = atoi(rest + 15);
      if (at_line(rest) == MT_LINE(l_sync)) assert_non_null(strstr(rest, "bar.sync 0 (32 of 64 threads)"));
      if (at_line(rest) == MT_LINE(l_bar1)) assert_int_equal(id, 1);
      assert_non_null(strstr(rest, "(32 of 64 threads)"));
    } else if (strncmp(rest, " stop wait for mbarrier", 23) == 0) {
      pending[w] = 2;
      assert_non_null(strstr(rest, "to complete phase 0 (parity 0): 1 of 1 arrivals missing"));
    } else if (strncmp(rest, " stop", 5) == 0) {
      fail_msg("unexpected stop: %s", l);
    } else if (strncmp(rest, " completes bar ", 15) == 0) {
      assert_non_null(strstr(rest, "(64 threads)"));
      for (int u = 0; u < 2; ++u)
        if (names_warp(rest, "releases warps", u)) {
          assert_int_equal(pending[u], 1);
          pending[u] = 0;
        }
    } else if (strncmp(rest, ": mbarrier at ", 14) == 0) {
      assert_non_null(strstr(rest, "phase 0 (parity 0) complete"));
      for (int u = 0; u < 2; ++u)
        if (names_warp(rest, "wakes warps", u)) {
          assert_int_equal(pending[u], 2);
          pending[u] = 0;
        }
    } else if (strcmp(rest, " run") == 0) {
      if (pending[w]) fail_msg("warp %d runs before the completion that releases it (line %d: %s)", w, i, l);
      assert_false(exited[w]);
    } else if (strcmp(rest, " exit") == 0) {
      exited[w] = 1;
    } else if (strcmp(rest, " yield") != 0) {
      fail_msg("unknown event: %s", l);
    }
  }
  assert_true(exited[0] && exited[1]);
  /* Each warp's stops are its program's, in order. */
  assert_int_equal(np[1], 3);
  assert_int_equal(points[1][0], MT_LINE(l_sync));
  assert_int_equal(points[1][1], MT_LINE(l_bar1));
  assert_int_equal(points[1][2], MT_LINE(l_wait1));
  assert_true(np[0] == 2 || np[0] == 3);
  assert_int_equal(points[0][0], MT_LINE(l_sync));
  assert_int_equal(points[0][1], MT_LINE(l_bar1));
  if (np[0] == 3) assert_int_equal(points[0][2], MT_LINE(l_wait0));
}

static void test_trace_block_all_seeds(void **state) {
  (void)state;
  for (int t = 1; t <= 2; ++t)
    for (int s = 0; s < 8; ++s) {
      mt_env(t, s);
      assert_true(launch("1", 3) > 0);
      check_log("(1,0,0)");
      assert_true(launch("2,0,0", 3) > 0);
      check_log("(2,0,0)");
    }
}

static void test_trace_off(void **state) {
  (void)state;
  assert_int_equal(launch(NULL, 3), 0);
  assert_int_equal(launch("", 3), 0);
  assert_int_equal(launch("3", 3), 0);     /* outside the grid */
  assert_int_equal(launch("0,1", 3), 0);   /* y outside the grid */
  assert_int_equal(launch("zero", 3), 0);  /* not a block */
  assert_true(launch("0", 3) > 0);         /* and on again */
  check_log("(0,0,0)");
}

/* Cluster barriers: 2 CTAs of 2 warps pass kbd_cluster_sync twice. The traced CTA's log must show each phase
 * completing exactly once ("cluster barrier phase p complete, wakes warps ..."), and every warp that stopped at a
 * cluster sync must be named by the next completion before it runs again. */
static int l_csync0, l_csync1;
KBD_KERNEL(trace_cluster_k, 64, trace_params) {
  MT_MARK(l_csync0); kbd_cluster_sync();
  MT_MARK(l_csync1); kbd_cluster_sync();
  kbd_st_global(&p.out[kbd_block_x() * 2 + (unsigned)kbd_warp_id()], 1 + (int)kbd_warp_id());
}

static void test_trace_cluster(void **state) {
  (void)state;
  for (int t = 1; t <= 2; ++t)
    for (int sd = 0; sd < 8; ++sd) {
      mt_env(t, sd);
      setenv("KBD_CPU_TRACE", "1", 1);
      const long from = log_size();
      trace_params p = {g_out};
      MT_ASSERT_OK(trace_cluster_k(kbd_cfg_cluster(kbd_cfg(kbd_dim(2, 1, 1), 0, NULL), 2, 1, 1), p));
      read_log(from);
      int phases[2] = {0, 0}, waiting[2] = {-1, -1}; /* waiting[w]: the phase warp w stopped in, or -1 */
      int done = 0;
      for (int i = 0; i < g_n; ++i) {
        assert_non_null(strstr(g_lines[i], "block (1,0,0)"));
        const char *ph = strstr(g_lines[i], "cluster barrier phase ");
        if (ph) {
          const int k = atoi(ph + 22);
          assert_true(k == 0 || k == 1);
          assert_int_equal(k, done); /* in order, each once */
          phases[k]++;
          done++;
          for (int w = 0; w < 2; ++w)
            if (waiting[w] == k) {
              assert_true(names_warp(g_lines[i], " wakes warps", w));
              waiting[w] = -1;
            }
          continue;
        }
        const char *rest;
        const int w = event_warp(g_lines[i], &rest);
        if (w < 0) continue;
        assert_true(w == 0 || w == 1);
        if (strncmp(rest, " run", 4) == 0) assert_int_equal(waiting[w], -1); /* released before it runs */
        if (strncmp(rest, " stop wait for", 14) == 0) {
          const int at = at_line(rest);
          assert_true(at == l_csync0 || at == l_csync1);
          waiting[w] = at == l_csync0 ? 0 : 1;
        }
      }
      assert_int_equal(phases[0], 1);
      assert_int_equal(phases[1], 1);
    }
  unsetenv("KBD_CPU_TRACE");
}

int main(void) {
  snprintf(g_path, sizeof g_path, "kbd_trace_test_%ld.log", (long)getpid());
  remove(g_path);
  setenv("KBD_CPU_TRACE_FILE", g_path, 1);
  if (!kbd_ok(kbd_malloc((void **)&g_out, 8 * sizeof *g_out))) return 1;
  const struct CMUnitTest tests[] = {MT_TEST(test_trace_off), MT_TEST(test_trace_block_all_seeds),
                                     MT_TEST(test_trace_cluster)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  remove(g_path);
  kbd_free(g_out);
  return rc;
}
