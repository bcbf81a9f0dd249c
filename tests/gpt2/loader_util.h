/* loader_util.h - helpers of the GPT-2 loader and tokenizer tests: a scratch folder, files, a seeded RNG, and the
 * check that a status failed with a message holding given words. Include after <cmocka.h>. */
#ifndef LOADER_UTIL_H
#define LOADER_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kbd/status.h>

/* splitmix64: the fuzz loops are reproducible from their seed. */
static inline uint64_t lu_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline size_t lu_below(uint64_t *s, size_t n) { return n ? (size_t)(lu_rand(s) % n) : 0; }

/* A fresh folder under $TMPDIR (or /tmp); lu_rmdir removes it with the files in it. */
static inline char *lu_mkdtemp(const char *tag) {
  const char *base = getenv("TMPDIR");
  char *p = (char *)malloc(4096);
  snprintf(p, 4096, "%s/kbd_%s_XXXXXX", base && *base ? base : "/tmp", tag);
  if (!mkdtemp(p)) {
    perror(p);
    abort();
  }
  return p;
}

static inline void lu_rmdir(char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[4200];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      if (unlink(p) != 0) rmdir(p); /* a folder a test made inside */
    }
    closedir(d);
  }
  rmdir(dir);
  free(dir);
}

/* dir/name in a static buffer (one at a time). */
static inline const char *lu_path(const char *dir, const char *name) {
  static char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

/* Removed first, not truncated: ext4 (auto_da_alloc) flushes a file truncated and rewritten when it is closed,
 * 5 ms a file here, 15 s for the header fuzz; a new file is not flushed. */
static inline void lu_write(const char *path, const void *data, size_t n) {
  unlink(path);
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}
static inline void lu_write_str(const char *path, const char *s) { lu_write(path, s, strlen(s)); }

/* The status failed (KBD_ERR_INVALID) and its message holds every one of the NULL-terminated words. */
#define LU_FAILS_WITH(status, ...) lu_fails_with_((status), __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)
static inline void lu_fails_with_(kbd_status s, const char *file, int line, ...) {
  if (kbd_ok(s)) {
    print_error("%s:%d: expected a failure, got success\n", file, line);
    _fail(file, line);
  }
  if (s.code != KBD_ERR_INVALID) {
    print_error("%s:%d: code %d (%s), expected KBD_ERR_INVALID: %s\n", file, line, (int)s.code, kbd_code_name(s.code),
                s.msg);
    _fail(file, line);
  }
  va_list ap;
  va_start(ap, line);
  for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *)) {
    if (!strstr(s.msg, w)) {
      print_error("%s:%d: message \"%s\" lacks \"%s\"\n", file, line, s.msg, w);
      va_end(ap);
      _fail(file, line);
    }
  }
  va_end(ap);
}

#define LU_OK(expr)                                                                                                    \
  do {                                                                                                                 \
    kbd_status lu_s_ = (expr);                                                                                         \
    if (!kbd_ok(lu_s_)) {                                                                                              \
      print_error("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, lu_s_.msg);                                     \
      _fail(__FILE__, __LINE__);                                                                                       \
    }                                                                                                                  \
  } while (0)

#endif /* LOADER_UTIL_H */
