/* test_tune_cache.c - kbd/tune.h's cache file: a round trip of entries (overwrite of a key, many keys), the path
 * rules ($KBD_TUNE_CACHE, XDG_CACHE_HOME, HOME, "off"), a corrupt file or another format version ignored with one
 * warning and replaced by the next store, an entry of another kbd version never found, every I/O failure a status
 * naming the file, and two processes (fork) storing 60 keys each at once: all 120 are in the file afterwards.
 */
#include <kbd/tune.h> /* first: kbd/config.h sets the feature macros the system headers read */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

static char tc_dir[64];

static void tc_path(char *out, size_t len, const char *name) { snprintf(out, len, "%s/%s", tc_dir, name); }

static void tc_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* stderr of the calls between tc_capture_begin and tc_capture_end, into buf */
static int tc_saved_err = -1;
static char tc_err_path[128];
static void tc_capture_begin(void) {
  fflush(stderr);
  snprintf(tc_err_path, sizeof tc_err_path, "%s/stderr.txt", tc_dir);
  tc_saved_err = dup(2);
  const int fd = open(tc_err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  dup2(fd, 2);
  close(fd);
}
static void tc_capture_end(char *buf, size_t len) {
  fflush(stderr);
  dup2(tc_saved_err, 2);
  close(tc_saved_err);
  FILE *f = fopen(tc_err_path, "r");
  assert_non_null(f);
  const size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static int tc_find(const char *path, const char *key, char *name, double *ms) {
  int found = 0;
  const kbd_status s = kbd_tune_cache_lookup(path, key, name, KBD_TUNE_NAME_MAX, ms, &found);
  if (!kbd_ok(s)) fail_msg("lookup in %s: %s", path, s.msg);
  return found;
}

static void test_round_trip(void **state) {
  (void)state;
  char p[128], name[KBD_TUNE_NAME_MAX];
  double ms = 0;
  tc_path(p, sizeof p, "sub/dir/rt.txt");    /* the directories are created */
  assert_false(tc_find(p, "k1", name, &ms)); /* no file: nothing found, no error */
  assert_int_equal(kbd_tune_cache_store(p, "op=x shape=1 kbd=0.1.0", "c2x1.persist", 1.5).code, KBD_OK);
  assert_int_equal(kbd_tune_cache_store(p, "op=y shape=2", "pair.tile", 0.25).code, KBD_OK);
  assert_true(tc_find(p, "op=x shape=1 kbd=0.1.0", name, &ms));
  assert_string_equal(name, "c2x1.persist");
  assert_true(ms == 1.5);
  assert_true(tc_find(p, "op=y shape=2", name, &ms));
  assert_string_equal(name, "pair.tile");
  /* a key stored again replaces its entry, the others stay */
  assert_int_equal(kbd_tune_cache_store(p, "op=x shape=1 kbd=0.1.0", "c1x1.tile", 2.0).code, KBD_OK);
  assert_true(tc_find(p, "op=x shape=1 kbd=0.1.0", name, &ms));
  assert_string_equal(name, "c1x1.tile");
  assert_true(ms == 2.0);
  kbd_tune_table t = {NULL, 0, 0};
  int ignored = 1;
  assert_int_equal(kbd_tune_cache_read(p, &t, &ignored).code, KBD_OK);
  assert_int_equal(ignored, 0);
  assert_int_equal(t.n, 2);
  kbd_tune_table_free(&t);
  /* many keys */
  for (int i = 0; i < 300; ++i) {
    char key[64], nm[32];
    snprintf(key, sizeof key, "op=many i=%d", i), snprintf(nm, sizeof nm, "cand%d", i % 7);
    assert_int_equal(kbd_tune_cache_store(p, key, nm, i).code, KBD_OK);
  }
  for (int i = 0; i < 300; i += 37) {
    char key[64], nm[32];
    snprintf(key, sizeof key, "op=many i=%d", i), snprintf(nm, sizeof nm, "cand%d", i % 7);
    assert_true(tc_find(p, key, name, &ms));
    assert_string_equal(name, nm);
    assert_true(ms == i);
  }
  /* bad keys and names are refused, not written */
  assert_int_equal(kbd_tune_cache_store(p, "a\tb", "x", 1).code, KBD_ERR_INVALID);
  assert_int_equal(kbd_tune_cache_store(p, "ok", "has space", 1).code, KBD_ERR_INVALID);
  assert_int_equal(kbd_tune_cache_store(p, "", "x", 1).code, KBD_ERR_INVALID);
}

static void test_paths(void **state) {
  (void)state;
  char out[KBD_TUNE_PATH_MAX];
  int off = 0;
  setenv("KBD_TUNE_CACHE", "/x/explicit.txt", 1);
  assert_int_equal(kbd_tune_cache_path(out, sizeof out, NULL, &off).code, KBD_OK);
  assert_string_equal(out, "/x/explicit.txt");
  assert_int_equal(kbd_tune_cache_path(out, sizeof out, "/y/arg.txt", &off).code, KBD_OK); /* the argument first */
  assert_string_equal(out, "/y/arg.txt");
  setenv("KBD_TUNE_CACHE", "off", 1);
  assert_int_equal(kbd_tune_cache_path(out, sizeof out, NULL, &off).code, KBD_OK);
  assert_int_equal(off, 1);
  unsetenv("KBD_TUNE_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  assert_int_equal(kbd_tune_cache_path(out, sizeof out, NULL, &off).code, KBD_OK);
  assert_int_equal(off, 0);
  assert_string_equal(out, "/xdg/kbd/tune.txt");
  unsetenv("XDG_CACHE_HOME");
  assert_int_equal(kbd_tune_cache_path(out, sizeof out, NULL, &off).code, KBD_OK);
  assert_string_equal(out, "/home/u/.cache/kbd/tune.txt");
  unsetenv("HOME");
  const kbd_status s = kbd_tune_cache_path(out, sizeof out, NULL, &off);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "KBD_TUNE_CACHE"));
}

/* Each bad file: nothing found, ignored = 1, exactly one warning in the process naming the file; the next store
 * writes a good file holding only the new entry. */
static void test_corrupt_and_version(void **state) {
  (void)state;
  static const char *const bad[] = {
      "garbage\n",
      "kbd-tune-cache 1\nkey-without-tabs\n",
      "kbd-tune-cache 1\nk\tname\tnot-a-number\n",
      "kbd-tune-cache 1\nk\tbad name\t1\n",
      "kbd-tune-cache 1\nk\tc\t1\textra\n",
      "kbd-tune-cache 2\nk\tc\t1\n", /* another format version */
      "kbd-tune-cache 1x\n",
      "\x01\x02\xff\xfe binary",
  };
  char p[128], err[4096], name[KBD_TUNE_NAME_MAX];
  double ms;
  tc_path(p, sizeof p, "bad.txt");
  __atomic_store_n(&kbd_tune_warned_, 0, __ATOMIC_RELAXED);
  tc_capture_begin();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    tc_write(p, bad[i]);
    kbd_tune_table t = {NULL, 0, 0};
    int ignored = 0;
    const kbd_status s = kbd_tune_cache_read(p, &t, &ignored);
    if (!kbd_ok(s) || ignored != 1 || t.n != 0) {
      tc_capture_end(err, sizeof err);
      fail_msg("bad file %zu: status %s, ignored %d, %d entries", i, s.msg, ignored, t.n);
    }
    assert_false(tc_find(p, "k", name, &ms));
    /* the next store replaces the file */
    assert_int_equal(kbd_tune_cache_store(p, "k2", "good", 3.0).code, KBD_OK);
    ignored = 1;
    assert_int_equal(kbd_tune_cache_read(p, &t, &ignored).code, KBD_OK);
    assert_int_equal(ignored, 0);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.e[0].name, "good");
    kbd_tune_table_free(&t);
  }
  tc_capture_end(err, sizeof err);
  const char *w = strstr(err, "kbd_tune: warning: cache file");
  assert_non_null(w);
  assert_non_null(strstr(err, p));
  assert_null(strstr(w + 1, "kbd_tune: warning: cache file")); /* once per process */
  /* another kbd version's entry is another key: never found by this version's key */
  char key[KBD_TUNE_KEY_MAX];
  const long long dims[3] = {4096, 4096, 4096};
  assert_int_equal(kbd_tune_key_make(key, sizeof key, "gemm", 90, "NVIDIA H100 80GB HBM3", "bf16.rc", dims, 3).code,
                   KBD_OK);
  assert_non_null(strstr(key, "kbd=" KBD_TUNE_KBD_VERSION));
  assert_non_null(strstr(key, "dev=NVIDIA_H100_80GB_HBM3"));
  char old[KBD_TUNE_KEY_MAX];
  snprintf(old, sizeof old, "%.*skbd=0.0.1", (int)(strstr(key, "kbd=") - key), key);
  assert_int_equal(kbd_tune_cache_store(p, old, "stale", 1.0).code, KBD_OK);
  assert_false(tc_find(p, key, name, &ms));
  assert_true(tc_find(p, old, name, &ms));
}

/* Every I/O failure is a status naming the path. */
static void test_io_errors(void **state) {
  (void)state;
  char file[128], p[160];
  tc_path(file, sizeof file, "plain-file");
  tc_write(file, "x");
  snprintf(p, sizeof p, "%s/under-a-file.txt", file); /* its directory is a file */
  kbd_status s = kbd_tune_cache_store(p, "k", "c", 1);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, file));
  char dir[128];
  tc_path(dir, sizeof dir, "a-directory");
  assert_int_equal(mkdir(dir, 0755), 0);
  kbd_tune_table t = {NULL, 0, 0};
  int ignored;
  s = kbd_tune_cache_read(dir, &t, &ignored); /* fopen of a directory for reading works on Linux, reading fails */
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, dir));
  s = kbd_tune_cache_store(dir, "k", "c", 1); /* cannot replace a directory with the file */
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, dir));
  if (geteuid() != 0) { /* root reads and writes anything */
    char ro[128], rp[160];
    tc_path(ro, sizeof ro, "read-only");
    assert_int_equal(mkdir(ro, 0555), 0);
    snprintf(rp, sizeof rp, "%s/tune.txt", ro);
    s = kbd_tune_cache_store(rp, "k", "c", 1);
    assert_int_equal(s.code, KBD_ERR_INVALID);
    assert_non_null(strstr(s.msg, ro));
  }
}

/* Two processes store 60 distinct keys each, interleaved: every one of the 120 is in the file afterwards. Without
 * the lock each would merge into the copy it read and the later rename would drop the other's entries. */
static void test_concurrent_writers(void **state) {
  (void)state;
  char p[128];
  tc_path(p, sizeof p, "concurrent.txt");
  enum { PER = 60 };
  pid_t kid[2];
  for (int w = 0; w < 2; ++w) {
    kid[w] = fork();
    assert_true(kid[w] >= 0);
    if (kid[w] == 0) {
      for (int i = 0; i < PER; ++i) {
        char key[64];
        snprintf(key, sizeof key, "op=w%d i=%d", w, i);
        if (!kbd_ok(kbd_tune_cache_store(p, key, w ? "one" : "zero", i))) _exit(1);
      }
      _exit(0);
    }
  }
  for (int w = 0; w < 2; ++w) {
    int st = 0;
    assert_int_equal(waitpid(kid[w], &st, 0), kid[w]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  kbd_tune_table t = {NULL, 0, 0};
  int ignored = 1;
  assert_int_equal(kbd_tune_cache_read(p, &t, &ignored).code, KBD_OK);
  assert_int_equal(ignored, 0);
  int have[2][PER];
  memset(have, 0, sizeof have);
  for (int i = 0; i < t.n; ++i) {
    int w, k;
    if (sscanf(t.e[i].key, "op=w%d i=%d", &w, &k) == 2 && w >= 0 && w < 2 && k >= 0 && k < PER) have[w][k] = 1;
  }
  kbd_tune_table_free(&t);
  for (int w = 0; w < 2; ++w)
    for (int k = 0; k < PER; ++k)
      if (!have[w][k]) fail_msg("writer %d's key %d was lost", w, k);
}

static int tc_setup(void **state) {
  (void)state;
  snprintf(tc_dir, sizeof tc_dir, "/tmp/kbd_tune_cache_XXXXXX");
  return mkdtemp(tc_dir) ? 0 : -1;
}

/* the mkdtemp directory (letters, digits, '/', '_' only) and everything the tests left in it */
static int tc_teardown(void **state) {
  (void)state;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", tc_dir, tc_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_paths),
      cmocka_unit_test(test_corrupt_and_version), cmocka_unit_test(test_io_errors),
      cmocka_unit_test(test_concurrent_writers),
  };
  return cmocka_run_group_tests(tests, tc_setup, tc_teardown);
}
