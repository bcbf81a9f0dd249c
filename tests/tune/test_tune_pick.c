/* test_tune_pick.c - kbd_tune_pick on a made-up tunable launch: 8 candidates whose validity, model cost, measured
 * time and result are tables the test sets.
 *   invalid_never_chosen   over 200 drawn tables where the invalid candidates are the cheapest and the fastest, the
 *                          model, the measurement and a cache entry naming one never pick an invalid candidate
 *   forced                 opts.force is taken even when another is cheaper; an unknown or invalid name is an error
 *   model_stable           the same inputs give the same pick (50 repeats, other tables in between); a tie goes to
 *                          the first candidate; the pick is the cheapest valid one (checked against a scan)
 *   measure_fastest        a fake timer (its times per candidate, jittered per run: the median must see through it)
 *                          makes the picker measure: the fastest valid candidate wins, is stored in the cache and
 *                          the next pick is a cache hit that times nothing; KBD_TUNE=1 turns measuring on
 *   wrong_result_rejected  a candidate whose result differs from the default's is rejected with a message naming
 *                          it, even though it is the fastest
 *   budget                 past the time budget no further candidate is timed
 *   log                    KBD_TUNE_LOG=1 prints the decision and its reason
 *   cache_copy_refreshed   the picker's in-memory copy of the cache file sees a store by another (forked) process
 *                          and two same-size stores by this one
 */
#include <kbd/tune.h> /* first: kbd/config.h sets the feature macros the system headers read */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#define TP_N 8
typedef struct tp_world {
  int valid[TP_N];
  double cost[TP_N]; /* the model */
  double ms[TP_N];   /* the fake timer */
  int result[TP_N];  /* the "output" each candidate computes */
  int output, saved; /* the last launch's output, the reference */
  int launches[TP_N], timed[TP_N], checks;
} tp_world;
static tp_world tw;
static int tp_ids[TP_N];
static char tp_names[TP_N][16];
static kbd_tune_candidate tp_cand[TP_N];
static char tp_dir[64], tp_cache[128];

static int tp_valid(const void *config, const void *shape, char *why, size_t len) {
  (void)shape;
  const int i = *(const int *)config;
  if (!tw.valid[i]) snprintf(why, len, "candidate %d is invalid in this world", i);
  return tw.valid[i];
}
static double tp_estimate(const void *config, const void *shape) {
  (void)shape;
  return tw.cost[*(const int *)config];
}
static kbd_status tp_launch(const void *config, const void *shape, void *ctx) {
  (void)shape, (void)ctx;
  const int i = *(const int *)config;
  if (!tw.valid[i]) fail_msg("invalid candidate %d was launched", i);
  ++tw.launches[i];
  tw.output = tw.result[i];
  return kbd_status_ok();
}
static kbd_status tp_check(const void *shape, void *ctx, int save) {
  (void)shape, (void)ctx;
  ++tw.checks;
  if (save) {
    tw.saved = tw.output;
    return kbd_status_ok();
  }
  if (tw.output != tw.saved)
    return kbd_status_make(KBD_ERR_INVALID, "output %d, the reference %d", tw.output, tw.saved);
  return kbd_status_ok();
}
/* the fake timer: ms[i], but 40% slower on 3 runs of every 7 (a median of 7 sees through 3 outliers, a mean or the
 * last run would not) */
static kbd_status tp_time(void *ctx, const kbd_tune_space *sp, int index, double *ms) {
  (void)ctx;
  kbd_status s = sp->launch(sp->cand[index].config, sp->shape, sp->ctx);
  const int run = tw.timed[index]++ % 7;
  *ms = tw.ms[index] * (run == 0 || run == 3 || run == 6 ? 1.4 : 1.0);
  return s;
}
static const kbd_tune_timer tp_timer = {tp_time, NULL};

static kbd_tune_space tp_space(int measurable) {
  kbd_tune_space sp;
  memset(&sp, 0, sizeof sp);
  sp.op = "made_up", sp.cand = tp_cand, sp.count = TP_N, sp.default_index = 0, sp.shape = &tw;
  sp.valid = tp_valid, sp.estimate = tp_estimate;
  if (measurable) sp.launch = tp_launch, sp.check = tp_check;
  return sp;
}
static kbd_tune_opts tp_opts(int tune, const char *cache) {
  kbd_tune_opts o = kbd_tune_opts_default();
  o.tune = tune, o.log = 0, o.timer = &tp_timer, o.cache_path = cache;
  return o;
}
static void tp_reset(void) {
  memset(&tw, 0, sizeof tw);
  for (int i = 0; i < TP_N; ++i)
    tw.valid[i] = 1, tw.cost[i] = 10 + i, tw.ms[i] = 1 + i, tw.result[i] = 42;
}
static unsigned tp_rand(unsigned *s) { return (*s = *s * 1664525u + 1013904223u) >> 8; }

static void test_invalid_never_chosen(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int round = 0; round < 200; ++round) {
    tp_reset();
    int any = 0;
    for (int i = 0; i < TP_N; ++i) {
      tw.valid[i] = tp_rand(&seed) % 3 != 0;
      any |= tw.valid[i];
      /* the invalid ones are the cheapest and the fastest */
      tw.cost[i] = tw.valid[i] ? 100 + tp_rand(&seed) % 100 : tp_rand(&seed) % 50;
      tw.ms[i] = tw.valid[i] ? 10 + tp_rand(&seed) % 10 : 0.5;
    }
    if (!any) tw.valid[TP_N - 1] = 1, tw.cost[TP_N - 1] = 500, tw.ms[TP_N - 1] = 50;
    char key[32];
    snprintf(key, sizeof key, "k%d", round);
    kbd_tune_space sp = tp_space(1);
    kbd_tune_result r;
    kbd_tune_opts o = tp_opts(0, "off");
    assert_int_equal(kbd_tune_pick(&sp, key, &o, &r).code, KBD_OK);
    assert_true(tw.valid[r.index]);
    assert_int_equal(r.reason, KBD_TUNE_MODEL);
    o = tp_opts(1, tp_cache);
    assert_int_equal(kbd_tune_pick(&sp, key, &o, &r).code, KBD_OK);
    assert_true(tw.valid[r.index]);
    assert_int_equal(r.reason, KBD_TUNE_MEASURED);
    for (int i = 0; i < TP_N; ++i)
      if (!tw.valid[i] && (tw.launches[i] || tw.timed[i])) fail_msg("invalid candidate %d was run", i);
  }
  /* a cache entry naming a candidate that is invalid here is not taken */
  tp_reset();
  tw.valid[3] = 0;
  assert_int_equal(kbd_tune_cache_store(tp_cache, "stale-entry", "c3", 0.1).code, KBD_OK);
  kbd_tune_space sp = tp_space(0);
  kbd_tune_result r;
  kbd_tune_opts o = tp_opts(0, tp_cache);
  assert_int_equal(kbd_tune_pick(&sp, "stale-entry", &o, &r).code, KBD_OK);
  assert_int_not_equal(r.index, 3);
  assert_int_equal(r.reason, KBD_TUNE_MODEL);
  /* none valid: an error naming the op */
  for (int i = 0; i < TP_N; ++i)
    tw.valid[i] = 0;
  const kbd_status s = kbd_tune_pick(&sp, "none", &o, &r);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "no valid candidate"));
}

static void test_forced(void **state) {
  (void)state;
  tp_reset();
  kbd_tune_space sp = tp_space(1);
  kbd_tune_result r;
  kbd_tune_opts o = tp_opts(1, tp_cache);
  o.force = "c5"; /* neither the cheapest (c0) nor the fastest (c0) */
  assert_int_equal(kbd_tune_pick(&sp, "forced", &o, &r).code, KBD_OK);
  assert_int_equal(r.index, 5);
  assert_int_equal(r.reason, KBD_TUNE_FORCED);
  assert_int_equal(tw.timed[0] + tw.timed[5], 0); /* forcing measures nothing */
  o.force = "nope";
  kbd_status s = kbd_tune_pick(&sp, "forced", &o, &r);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "'nope'"));
  tw.valid[5] = 0;
  o.force = "c5";
  s = kbd_tune_pick(&sp, "forced", &o, &r);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "candidate 5 is invalid")); /* the predicate's reason */
}

static void test_model_stable(void **state) {
  (void)state;
  unsigned seed = 99;
  for (int round = 0; round < 50; ++round) {
    tp_reset();
    for (int i = 0; i < TP_N; ++i)
      tw.valid[i] = tp_rand(&seed) % 4 != 0, tw.cost[i] = tp_rand(&seed) % 20;
    tw.valid[round % TP_N] = 1;
    tp_world saved = tw;
    kbd_tune_space sp = tp_space(0);
    kbd_tune_opts o = tp_opts(0, "off");
    kbd_tune_result r1, r2;
    assert_int_equal(kbd_tune_pick(&sp, "m", &o, &r1).code, KBD_OK);
    int best = -1; /* the first of the cheapest valid */
    for (int i = 0; i < TP_N; ++i)
      if (tw.valid[i] && (best < 0 || tw.cost[i] < tw.cost[best])) best = i;
    assert_int_equal(r1.index, best);
    assert_int_equal(r1.model_index, best);
    /* another world in between, then the same one again */
    for (int i = 0; i < TP_N; ++i)
      tw.cost[i] = TP_N - i;
    assert_int_equal(kbd_tune_pick(&sp, "m", &o, &r2).code, KBD_OK);
    tw = saved;
    assert_int_equal(kbd_tune_pick(&sp, "m", &o, &r2).code, KBD_OK);
    assert_int_equal(r1.index, r2.index);
    assert_int_equal(r2.reason, KBD_TUNE_MODEL);
  }
  tp_reset();
  for (int i = 0; i < TP_N; ++i)
    tw.cost[i] = 1.0; /* a tie: the first */
  tw.valid[0] = 0;
  kbd_tune_space sp = tp_space(0);
  kbd_tune_opts o = tp_opts(0, "off");
  kbd_tune_result r;
  assert_int_equal(kbd_tune_pick(&sp, "tie", &o, &r).code, KBD_OK);
  assert_int_equal(r.index, 1);
}

static void test_measure_fastest(void **state) {
  (void)state;
  tp_reset();
  static const double ms[TP_N] = {5, 4, 3.5, 6, 2.0, 2.2, 9, 1.0}; /* c7 fastest but invalid: c4 */
  for (int i = 0; i < TP_N; ++i)
    tw.ms[i] = ms[i];
  tw.valid[7] = 0;
  char cache[160];
  snprintf(cache, sizeof cache, "%s/measure.txt", tp_dir);
  kbd_tune_space sp = tp_space(1);
  kbd_tune_opts o = tp_opts(1, cache);
  kbd_tune_result r;
  assert_int_equal(kbd_tune_pick(&sp, "op=made_up shape=1", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MEASURED);
  assert_int_equal(r.index, 4);
  assert_true(r.measured_ms == 2.0); /* the median, not a jittered run */
  assert_int_equal(r.model_index, 0);
  assert_int_equal(r.store.code, KBD_OK);
  for (int i = 0; i < 7; ++i)
    if (tw.timed[i] != o.reps) fail_msg("candidate %d timed %d times, want %d", i, tw.timed[i], o.reps);
  char name[KBD_TUNE_NAME_MAX];
  double got = 0;
  int found = 0;
  assert_int_equal(kbd_tune_cache_lookup(cache, "op=made_up shape=1", name, sizeof name, &got, &found).code, KBD_OK);
  assert_true(found);
  assert_string_equal(name, "c4");
  /* the next pick is the cache's: nothing is timed or launched */
  memset(tw.timed, 0, sizeof tw.timed), memset(tw.launches, 0, sizeof tw.launches);
  assert_int_equal(kbd_tune_pick(&sp, "op=made_up shape=1", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_CACHED);
  assert_int_equal(r.index, 4);
  for (int i = 0; i < TP_N; ++i)
    assert_int_equal(tw.timed[i] + tw.launches[i], 0);
  /* KBD_TUNE=1 with opts.tune -1 measures; without a timer (CPU mode's default) the model decides */
  o.tune = -1;
  setenv("KBD_TUNE", "1", 1);
  assert_int_equal(kbd_tune_pick(&sp, "op=made_up shape=2", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MEASURED);
  o.timer = NULL;
  assert_int_equal(kbd_tune_pick(&sp, "op=made_up shape=3", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MODEL);
  assert_non_null(strstr(r.why, "no timer"));
  setenv("KBD_TUNE", "0", 1);
  o.timer = &tp_timer;
  assert_int_equal(kbd_tune_pick(&sp, "op=made_up shape=4", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MODEL);
  unsetenv("KBD_TUNE");
  /* a space without a launcher is never measured */
  kbd_tune_space sp0 = tp_space(0);
  o.tune = 1;
  assert_int_equal(kbd_tune_pick(&sp0, "op=made_up shape=5", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MODEL);
}

static void test_wrong_result_rejected(void **state) {
  (void)state;
  tp_reset();
  tw.ms[6] = 0.1, tw.result[6] = 41; /* the fastest, but wrong */
  tw.ms[2] = 0.5;
  char err[4096], errp[160];
  snprintf(errp, sizeof errp, "%s/stderr.txt", tp_dir);
  fflush(stderr);
  const int saved = dup(2), fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  dup2(fd, 2), close(fd);
  kbd_tune_space sp = tp_space(1);
  kbd_tune_opts o = tp_opts(1, "off");
  kbd_tune_result r;
  const kbd_status s = kbd_tune_pick(&sp, "wrong", &o, &r);
  fflush(stderr);
  dup2(saved, 2), close(saved);
  FILE *f = fopen(errp, "r");
  assert_non_null(f);
  err[fread(err, 1, sizeof err - 1, f)] = '\0';
  fclose(f);
  assert_int_equal(s.code, KBD_OK);
  assert_int_equal(r.index, 2);
  assert_int_equal(r.rejected, 1);
  assert_int_equal(tw.timed[6], 0);
  const char *m = strstr(err, "candidate c6 rejected");
  if (!m) fail_msg("no rejection message; stderr: %s", err);
  assert_non_null(strstr(m, "output 41, the reference 42"));
}

static void test_budget(void **state) {
  (void)state;
  tp_reset();
  for (int i = 0; i < TP_N; ++i)
    tw.ms[i] = 10;
  kbd_tune_space sp = tp_space(1);
  kbd_tune_opts o = tp_opts(1, "off");
  o.budget_ms = 100, o.reps = 5; /* two candidates spend 100 ms, the third starts past it */
  kbd_tune_result r;
  assert_int_equal(kbd_tune_pick(&sp, "budget", &o, &r).code, KBD_OK);
  int measured = 0;
  for (int i = 0; i < TP_N; ++i)
    measured += tw.timed[i] > 0;
  if (measured < 2 || measured > 3) fail_msg("%d candidates measured within a budget of 2 to 3", measured);
}

static void test_log(void **state) {
  (void)state;
  tp_reset();
  char err[4096], errp[160];
  snprintf(errp, sizeof errp, "%s/log.txt", tp_dir);
  fflush(stderr);
  const int saved = dup(2), fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2), close(fd);
  setenv("KBD_TUNE_LOG", "1", 1);
  tw.valid[1] = 0;
  kbd_tune_space sp = tp_space(0);
  kbd_tune_opts o = tp_opts(0, "off");
  o.log = -1;
  kbd_tune_result r;
  const kbd_status s = kbd_tune_pick(&sp, "logged-key", &o, &r);
  unsetenv("KBD_TUNE_LOG");
  o.log = -1;
  kbd_tune_pick(&sp, "quiet-key", &o, &r);
  fflush(stderr);
  dup2(saved, 2), close(saved);
  FILE *f = fopen(errp, "r");
  err[fread(err, 1, sizeof err - 1, f)] = '\0';
  fclose(f);
  assert_int_equal(s.code, KBD_OK);
  assert_non_null(strstr(err, "made_up [logged-key]: model: c0"));
  assert_non_null(strstr(err, "c1 invalid: candidate 1 is invalid"));
  assert_null(strstr(err, "quiet-key"));
}

/* The picker keeps a copy of the cache file: a store by another process (a new file renamed over it) and two stores
 * of the same size by this one are both seen by the next pick. */
static void test_cache_copy_refreshed(void **state) {
  (void)state;
  tp_reset();
  char cache[160];
  snprintf(cache, sizeof cache, "%s/memo.txt", tp_dir);
  kbd_tune_space sp = tp_space(0);
  kbd_tune_opts o = tp_opts(0, cache);
  kbd_tune_result r;
  assert_int_equal(kbd_tune_cache_store(cache, "other", "c1", 1.0).code, KBD_OK);
  assert_int_equal(kbd_tune_pick(&sp, "memo", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_MODEL);
  const pid_t kid = fork();
  assert_true(kid >= 0);
  if (kid == 0) _exit(kbd_ok(kbd_tune_cache_store(cache, "memo", "c5", 1.0)) ? 0 : 1);
  int st = 0;
  assert_int_equal(waitpid(kid, &st, 0), kid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(kbd_tune_pick(&sp, "memo", &o, &r).code, KBD_OK);
  assert_int_equal(r.reason, KBD_TUNE_CACHED);
  assert_int_equal(r.index, 5);
  /* two stores of the same size between picks: the second file may get the first one's freed inode number back,
   * within the same second */
  assert_int_equal(kbd_tune_cache_store(cache, "memo", "c6", 1.0).code, KBD_OK);
  assert_int_equal(kbd_tune_cache_store(cache, "memo", "c7", 1.0).code, KBD_OK);
  assert_int_equal(kbd_tune_pick(&sp, "memo", &o, &r).code, KBD_OK);
  assert_int_equal(r.index, 7);
}

static int tp_setup(void **state) {
  (void)state;
  for (int i = 0; i < TP_N; ++i) {
    tp_ids[i] = i;
    snprintf(tp_names[i], sizeof tp_names[i], "c%d", i);
    tp_cand[i].name = tp_names[i], tp_cand[i].config = &tp_ids[i];
  }
  snprintf(tp_dir, sizeof tp_dir, "/tmp/kbd_tune_pick_XXXXXX");
  if (!mkdtemp(tp_dir)) return -1;
  snprintf(tp_cache, sizeof tp_cache, "%s/cache.txt", tp_dir);
  unsetenv("KBD_TUNE"), unsetenv("KBD_TUNE_LOG"), unsetenv("KBD_TUNE_CACHE");
  return 0;
}

/* the mkdtemp directory (letters, digits, '/', '_' only) and everything the tests left in it */
static int tp_teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tp_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_never_chosen),
      cmocka_unit_test(test_forced),
      cmocka_unit_test(test_model_stable),
      cmocka_unit_test(test_measure_fastest),
      cmocka_unit_test(test_wrong_result_rejected),
      cmocka_unit_test(test_budget),
      cmocka_unit_test(test_log),
      cmocka_unit_test(test_cache_copy_refreshed),
  };
  return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
