/* machine_test.h - helpers shared by the CPU-machine tests (tests/machine/test_*.c).
 *
 * Include after <kbd/tile.h> and cmocka's headers. Everything is static: each test is one translation
 * unit.
 */
#ifndef KBD_MACHINE_TEST_H
#define KBD_MACHINE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MT_MARK(var); stmt;  - written on ONE source line: stores that line in `var` when the kernel reaches
 * it, so a test can demand the exact file:line the machine reports for `stmt`. Atomic because several
 * host threads may run blocks at once (they all store the same value). */
#define MT_MARK(var) __atomic_store_n(&(var), __LINE__, __ATOMIC_RELAXED)
#define MT_LINE(var) __atomic_load_n(&(var), __ATOMIC_RELAXED)

/* Set KBD_CPU_THREADS / KBD_CPU_SEED for the next launches; a negative value unsets the variable
 * (machine default: all cores / round robin). */
static inline void mt_setenv_long(const char *name, long v) {
  if (v < 0) {
    unsetenv(name);
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
  }
}
static inline void mt_env(long threads, long seed) {
  mt_setenv_long("KBD_CPU_THREADS", threads);
  mt_setenv_long("KBD_CPU_SEED", seed);
}
static inline void mt_quiet(int on) {
  if (on)
    setenv("KBD_CPU_QUIET", "1", 1);
  else
    unsetenv("KBD_CPU_QUIET");
}

/* cmocka group setup/teardown: a known environment (one host thread, round robin, quiet failures). */
static inline int mt_group_setup(void **state) {
  (void)state;
  mt_env(1, 0);
  mt_quiet(1);
  unsetenv("KBD_CPU_STACK_KB");
  return 0;
}

/* A cmocka test that starts from that environment. */
#define MT_TEST(f) cmocka_unit_test_setup(f, mt_group_setup)

#define MT_ASSERT_CODE(s, want)                                                                              \
  do {                                                                                                       \
    const kbd_status mt_s_ = (s);                                                                            \
    if (mt_s_.code != (want))                                                                                \
      fail_msg("expected status %s (%d), got %s (%d): %s", kbd_code_name(want), (int)(want),                 \
               kbd_code_name(mt_s_.code), (int)mt_s_.code, mt_s_.msg);                                       \
  } while (0)
#define MT_ASSERT_OK(s) MT_ASSERT_CODE(s, KBD_OK)

/* The status message contains `needle`. */
#define MT_ASSERT_HAS(s, needle)                                                                             \
  do {                                                                                                       \
    const char *mt_n_ = (needle);                                                                            \
    if (!strstr((s).msg, mt_n_)) fail_msg("status message \"%s\"\n  lacks \"%s\"", (s).msg, mt_n_);          \
  } while (0)
#define MT_ASSERT_LACKS(s, needle)                                                                           \
  do {                                                                                                       \
    const char *mt_n_ = (needle);                                                                            \
    if (strstr((s).msg, mt_n_)) fail_msg("status message \"%s\"\n  contains \"%s\"", (s).msg, mt_n_);        \
  } while (0)

/* The message starts a fault report at file:line ("<file>:<line>: "). */
#define MT_ASSERT_AT(s, line)                                                                                \
  do {                                                                                                       \
    char mt_b_[4096];                                                                                        \
    MT_ASSERT_HAS(s, mt_fmt(mt_b_, sizeof mt_b_, "%s:%d: ", __FILE__, (line)));                              \
  } while (0)

/* printf into the caller's buffer. Needles often hold __FILE__, which is as long as the checkout's path: a cut
 * needle would still be found (a prefix of the right text) and the check would silently weaken, so a needle that
 * does not fit fails the test instead. */
static inline const char *mt_fmt(char *buf, size_t n, const char *fmt, ...) KBD_PRINTF(3, 4);
static inline const char *mt_fmt(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int len = vsnprintf(buf, n, fmt, ap);
  va_end(ap);
  if (len < 0 || (size_t)len >= n)
    fail_msg("mt_fmt: a %zu-byte buffer is too small for the %d-byte needle \"%s...\" (a long checkout path?)", n,
             len, buf);
  return buf;
}

#endif /* KBD_MACHINE_TEST_H */
