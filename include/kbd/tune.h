/* kbd/tune.h - run-time choice among compiled configurations of a kernel: a cost model, measurement on the GPU, and a
 * persistent cache per (arch, device, shape bucket, dtype, kbd version). Host code only; plain C11, also C++17.
 *
 * A tunable launch is a kbd_tune_space: its candidates (a stable name and the caller's config struct each), a
 * validity predicate per problem shape, a cost-model estimate, and optionally a launcher and a result check for
 * measuring. kbd_tune_pick returns the candidate to launch and why:
 *   forced    opts->force names one (an example's flag): it is taken if valid, else an error
 *   cached    the cache file holds the key, naming a candidate that is valid for this shape
 *   measured  tuning is on (KBD_TUNE=1 or opts->tune = 1) and a timer and a launcher exist: every valid candidate is
 *             warmed up and timed (median of opts->reps runs, within opts->budget_ms), its result checked once
 *             against the default candidate's through space->check; the fastest is stored in the cache
 *   model     otherwise: the lowest space->estimate among the valid candidates (the first on a tie): deterministic
 * KBD_TUNE_LOG=1 (or opts->log = 1) prints each decision and its reason on stderr. docs/tuning.md has the details.
 *
 * The cache is a text file ($KBD_TUNE_CACHE; else $XDG_CACHE_HOME/kbd/tune.txt; else ~/.cache/kbd/tune.txt;
 * KBD_TUNE_CACHE=off: none), one "key TAB candidate TAB milliseconds" line per entry under a version line. An update
 * takes an fcntl lock on "<file>.lock", re-reads the file, merges, writes "<file>.tmp.<pid>" and renames it over the
 * file: readers never see half a file, and two processes storing at once keep both entries. A file that does not parse
 * or has another version is ignored with one warning (and replaced on the next store).
 */
#ifndef KBD_TUNE_H
#define KBD_TUNE_H

/* first: in CPU mode it sets _DEFAULT_SOURCE, which the system headers below read */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"

#if !KBD_MODE_CPU
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The kbd version a cache entry was measured with (CMakeLists.txt's project VERSION): another version's entries are
 * not trusted, since its kernels may differ. */
#define KBD_TUNE_KBD_VERSION "0.1.0"
/* The cache file's format: the first line is "kbd-tune-cache <format>". */
#define KBD_TUNE_CACHE_FORMAT 1
#define KBD_TUNE_KEY_MAX 256
#define KBD_TUNE_NAME_MAX 64
#define KBD_TUNE_PATH_MAX 1024
#define KBD_TUNE_WHY_MAX 512

typedef enum kbd_tune_reason {
  KBD_TUNE_FORCED = 0,
  KBD_TUNE_CACHED = 1,
  KBD_TUNE_MEASURED = 2,
  KBD_TUNE_MODEL = 3
} kbd_tune_reason;

static inline const char *kbd_tune_reason_name(kbd_tune_reason r) {
  return r == KBD_TUNE_FORCED     ? "forced"
         : r == KBD_TUNE_CACHED   ? "cached"
         : r == KBD_TUNE_MEASURED ? "measured"
                                  : "model";
}

typedef struct kbd_tune_candidate {
  const char *name;   /* stable across builds (stored in the cache): letters, digits and . _ - = only */
  const void *config; /* the caller's configuration struct, handed back to the callbacks */
} kbd_tune_candidate;

/* A tunable launch for one problem. Callbacks get the candidate's config and the space's shape and ctx. */
typedef struct kbd_tune_space {
  const char *op; /* what is tuned, for the log: "gemm", "attn_splits" */
  const kbd_tune_candidate *cand;
  int count;
  int default_index; /* the reference whose result every measured candidate must reproduce */
  const void *shape; /* the caller's problem description */
  void *ctx;         /* the caller's launch state (arguments, stream) */
  /* 1 when the candidate can run this shape; else 0 with the reason in why (shared memory, Tensor Memory, tiles) */
  int (*valid)(const void *config, const void *shape, char *why, size_t why_len);
  /* the model's time in seconds (any consistent unit): lower is better */
  double (*estimate)(const void *config, const void *shape);
  /* measuring: launch the candidate once (asynchronously on the GPU); NULL: this space cannot be measured */
  kbd_status (*launch)(const void *config, const void *shape, void *ctx);
  /* measuring: after the default candidate's run (save_reference 1) keep its result; after another candidate's first
   * run (0) compare with it: a status naming the difference when it does not match */
  kbd_status (*check)(const void *shape, void *ctx, int save_reference);
} kbd_tune_space;

/* Times one launch of candidate `index` of `space` (calls space->launch itself); *ms its duration. */
typedef struct kbd_tune_timer {
  kbd_status (*time)(void *timer_ctx, const kbd_tune_space *space, int index, double *ms);
  void *ctx;
} kbd_tune_timer;

typedef struct kbd_tune_opts {
  int tune;                    /* 1: measure on a cache miss; 0: never; -1: from KBD_TUNE (the default when zeroed:
                                  see kbd_tune_opts_default) */
  int log;                     /* 1: print each decision; 0: quiet; -1: from KBD_TUNE_LOG */
  const char *cache_path;      /* NULL: $KBD_TUNE_CACHE or the user's cache directory; "off": no cache */
  const char *force;           /* a candidate name to take, or NULL */
  const kbd_tune_timer *timer; /* NULL: CUDA events on the GPU build (kbd_tune_timer_cuda), none in CPU mode */
  int warmup, reps;            /* untimed runs before, and timed runs of each candidate (median) */
  double budget_ms;            /* measuring stops starting new candidates past this much measured time */
} kbd_tune_opts;

static inline kbd_tune_opts kbd_tune_opts_default(void) {
  kbd_tune_opts o;
  memset(&o, 0, sizeof o);
  o.tune = -1, o.log = -1, o.warmup = 2, o.reps = 7, o.budget_ms = 2000.0;
  return o;
}

typedef struct kbd_tune_result {
  int index; /* into space->cand */
  kbd_tune_reason reason;
  double model_s;             /* the model's estimate of the pick */
  double measured_ms;         /* measured: the pick's median; cached: the stored figure; else 0 */
  int model_index;            /* the model's pick (for the GPU check's comparison) */
  int rejected;               /* candidates whose result differed from the default's */
  kbd_status store;           /* the cache update after a measurement (OK when none was needed) */
  char key[KBD_TUNE_KEY_MAX]; /* the key looked up */
  char why[KBD_TUNE_WHY_MAX]; /* the reason in words (what the log prints) */
} kbd_tune_result;

/* ---- keys ---------------------------------------------------------------------------------------------------- */

/* The shape bucket of one dimension: the next power of two at or above n (n >= 1), so 4000 and 4096 share an entry
 * while 4096 and 8192, whose tile counts and waves differ, do not. */
static inline long long kbd_tune_bucket(long long n) {
  long long b = 1;
  while (b < n && b < (1ll << 62))
    b <<= 1;
  return n <= 0 ? 0 : b;
}

/* "op=<op> arch=sm_<arch>a dev=<device> dtype=<dtype> shape=<b0>x<b1>... kbd=<version>"; spaces and tabs of the
 * device name become '_' (a key is one field of a cache line). */
static inline kbd_status kbd_tune_key_make(char *key, size_t key_len, const char *op, int arch, const char *device,
                                           const char *dtype, const long long *dims, int ndims) {
  if (!key || key_len < 16 || !op || !device || !dtype || (ndims > 0 && !dims) || ndims < 0 || ndims > 8)
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_key_make: NULL or bad argument (key_len %zu, ndims %d)", key_len,
                           ndims);
  char dev[96], shape[200];
  size_t i = 0;
  for (; device[i] && i + 1 < sizeof dev; ++i)
    dev[i] = (device[i] == ' ' || device[i] == '\t' || device[i] == '\n') ? '_' : device[i];
  dev[i] = '\0';
  size_t at = 0;
  shape[0] = '\0';
  for (int d = 0; d < ndims; ++d)
    at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%lld", d ? "x" : "", kbd_tune_bucket(dims[d]));
  const int n = snprintf(key, key_len, "op=%s arch=sm_%da dev=%s dtype=%s shape=%s kbd=%s", op, arch, dev, dtype, shape,
                         KBD_TUNE_KBD_VERSION);
  if (n < 0 || (size_t)n >= key_len)
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_key_make: the key of op %s is longer than %zu bytes", op,
                           key_len - 1);
  return kbd_status_ok();
}

/* ---- the cache file ------------------------------------------------------------------------------------------- */

typedef struct kbd_tune_entry {
  char key[KBD_TUNE_KEY_MAX];
  char name[KBD_TUNE_NAME_MAX];
  double ms;
} kbd_tune_entry;

typedef struct kbd_tune_table {
  kbd_tune_entry *e;
  int n, cap;
} kbd_tune_table;

static inline void kbd_tune_table_free(kbd_tune_table *t) {
  free(t->e);
  t->e = NULL, t->n = t->cap = 0;
}

static inline kbd_status kbd_tune_table_put(kbd_tune_table *t, const char *key, const char *name, double ms) {
  for (int i = 0; i < t->n; ++i)
    if (!strcmp(t->e[i].key, key)) {
      snprintf(t->e[i].name, sizeof t->e[i].name, "%s", name);
      t->e[i].ms = ms;
      return kbd_status_ok();
    }
  if (t->n == t->cap) {
    const int cap = t->cap ? 2 * t->cap : 16;
    kbd_tune_entry *e = (kbd_tune_entry *)realloc(t->e, (size_t)cap * sizeof *e);
    if (!e) return kbd_status_make(KBD_ERR_OOM, "kbd_tune: out of memory for %d cache entries", cap);
    t->e = e, t->cap = cap;
  }
  snprintf(t->e[t->n].key, sizeof t->e[t->n].key, "%s", key);
  snprintf(t->e[t->n].name, sizeof t->e[t->n].name, "%s", name);
  t->e[t->n].ms = ms;
  ++t->n;
  return kbd_status_ok();
}

static inline int kbd_tune_name_ok(const char *s) {
  if (!s || !*s || strlen(s) >= KBD_TUNE_NAME_MAX) return 0;
  for (; *s; ++s)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
          *s == '-' || *s == '='))
      return 0;
  return 1;
}

/* One warning per process about an unusable cache file (weak: one flag whichever translation units include kbd). */
KBD_WEAK int kbd_tune_warned_;
static inline void kbd_tune_warn_once_(const char *path, const char *problem) {
  if (__atomic_exchange_n(&kbd_tune_warned_, 1, __ATOMIC_ACQ_REL)) return;
  fprintf(stderr, "kbd_tune: warning: cache file %s ignored: %s\n", path, problem);
}

/* The cache file's path: `path` when given, else $KBD_TUNE_CACHE, else $XDG_CACHE_HOME/kbd/tune.txt, else
 * $HOME/.cache/kbd/tune.txt. *off = 1 when the cache is switched off ("off"). */
static inline kbd_status kbd_tune_cache_path(char *out, size_t len, const char *path, int *off) {
  *off = 0;
  const char *env = path ? path : getenv("KBD_TUNE_CACHE");
  int n;
  if (env && *env) {
    if (!strcmp(env, "off")) {
      *off = 1;
      out[0] = '\0';
      return kbd_status_ok();
    }
    n = snprintf(out, len, "%s", env);
  } else if ((env = getenv("XDG_CACHE_HOME")) && *env)
    n = snprintf(out, len, "%s/kbd/tune.txt", env);
  else if ((env = getenv("HOME")) && *env)
    n = snprintf(out, len, "%s/.cache/kbd/tune.txt", env);
  else
    return kbd_status_make(KBD_ERR_INVALID,
                           "kbd_tune: no cache path: set KBD_TUNE_CACHE (or XDG_CACHE_HOME or HOME), or "
                           "KBD_TUNE_CACHE=off");
  if (n < 0 || (size_t)n >= len) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cache path longer than %zu", len);
  return kbd_status_ok();
}

/* Reads the cache file into t. A missing file is an empty table; a file that does not parse or has another format
 * version is an empty table and one warning (*ignored = 1); an unreadable one (permissions, a directory) an error. */
static inline kbd_status kbd_tune_cache_read(const char *path, kbd_tune_table *t, int *ignored) {
  *ignored = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return kbd_status_ok();
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot read the cache file %s: %s", path, strerror(errno));
  }
  char line[KBD_TUNE_KEY_MAX + KBD_TUNE_NAME_MAX + 64];
  int lineno = 0, have_header = 0;
  char problem[200] = "";
  while (fgets(line, sizeof line, f)) {
    ++lineno;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n') {
      snprintf(problem, sizeof problem, "line %d is longer than %zu bytes", lineno, sizeof line - 2);
      break;
    }
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    if (!have_header) {
      int version = 0, used = 0;
      if (sscanf(line, "kbd-tune-cache %d%n", &version, &used) != 1 || line[used] != '\0') {
        snprintf(problem, sizeof problem, "line 1 is not the header 'kbd-tune-cache %d'", KBD_TUNE_CACHE_FORMAT);
        break;
      }
      if (version != KBD_TUNE_CACHE_FORMAT) {
        snprintf(problem, sizeof problem, "format version %d, this kbd reads version %d", version,
                 KBD_TUNE_CACHE_FORMAT);
        break;
      }
      have_header = 1;
      continue;
    }
    if (len == 0 || line[0] == '#') continue;
    char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    char *end = NULL;
    if (!tab1 || !tab2 || strchr(tab2 + 1, '\t') || tab1 == line || (size_t)(tab1 - line) >= KBD_TUNE_KEY_MAX) {
      snprintf(problem, sizeof problem, "line %d is not 'key<TAB>candidate<TAB>ms'", lineno);
      break;
    }
    *tab1 = *tab2 = '\0';
    const double ms = strtod(tab2 + 1, &end);
    if (!kbd_tune_name_ok(tab1 + 1) || end == tab2 + 1 || *end != '\0' || !(ms >= 0.0)) {
      snprintf(problem, sizeof problem, "line %d: bad candidate name or time", lineno);
      break;
    }
    const kbd_status s = kbd_tune_table_put(t, line, tab1 + 1, ms);
    if (!kbd_ok(s)) {
      fclose(f);
      return s;
    }
  }
  const int read_error = ferror(f);
  fclose(f);
  if (read_error) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: error reading the cache file %s", path);
  if (!problem[0] && !have_header && lineno > 0) snprintf(problem, sizeof problem, "no header line");
  if (problem[0]) {
    kbd_tune_table_free(t);
    *ignored = 1;
    kbd_tune_warn_once_(path, problem);
  }
  return kbd_status_ok();
}

/* The stored candidate name of key (*found 0 when absent; an ignored file finds nothing). */
static inline kbd_status kbd_tune_cache_lookup(const char *path, const char *key, char *name, size_t name_len,
                                               double *ms, int *found) {
  kbd_tune_table t = {NULL, 0, 0};
  int ignored;
  *found = 0;
  const kbd_status s = kbd_tune_cache_read(path, &t, &ignored);
  if (!kbd_ok(s)) return s;
  for (int i = t.n - 1; i >= 0; --i)
    if (!strcmp(t.e[i].key, key)) {
      snprintf(name, name_len, "%s", t.e[i].name);
      if (ms) *ms = t.e[i].ms;
      *found = 1;
      break;
    }
  kbd_tune_table_free(&t);
  return kbd_status_ok();
}

/* The picker's copy of the cache file, so a launch that is picked on every call (gemm_run) does not read and parse
 * the file each time: it is re-read only when the file's inode, size or mtime changed (every store renames a new file
 * over it, so a store by any process is seen at the next pick). One per program (weak), under a spin lock. */
typedef struct kbd_tune_memo_ {
  char lock;
  int loaded;
  char path[KBD_TUNE_PATH_MAX];
  long long ino, size, mtime;
  unsigned gen;
  kbd_tune_table t;
} kbd_tune_memo_;
KBD_WEAK kbd_tune_memo_ kbd_tune_memo_g_;
/* Stores by this process (a freed inode number can come back within the same second and size: a store of our own
 * always invalidates the memo; another process's such store is seen once the file changes again). */
KBD_WEAK unsigned kbd_tune_gen_;

/* kbd_tune_cache_lookup through the memo. */
static inline kbd_status kbd_tune_memo_lookup_(const char *path, const char *key, char *name, size_t name_len,
                                               double *ms, int *found) {
  kbd_tune_memo_ *m = &kbd_tune_memo_g_;
  struct stat st;
  *found = 0;
  const int exists = stat(path, &st) == 0;
  while (__atomic_test_and_set(&m->lock, __ATOMIC_ACQUIRE)) {
  }
  kbd_status s = kbd_status_ok();
  const unsigned gen = __atomic_load_n(&kbd_tune_gen_, __ATOMIC_ACQUIRE);
  if (!m->loaded || m->gen != gen || strcmp(m->path, path) != 0 || !exists || m->ino != (long long)st.st_ino ||
      m->size != (long long)st.st_size || m->mtime != (long long)st.st_mtime) {
    kbd_tune_table_free(&m->t);
    m->loaded = 0;
    int ignored;
    s = exists ? kbd_tune_cache_read(path, &m->t, &ignored) : kbd_status_ok();
    if (kbd_ok(s) && exists) {
      snprintf(m->path, sizeof m->path, "%s", path);
      m->ino = (long long)st.st_ino, m->size = (long long)st.st_size, m->mtime = (long long)st.st_mtime;
      m->gen = gen, m->loaded = 1;
    }
  }
  for (int i = m->t.n - 1; kbd_ok(s) && i >= 0; --i)
    if (!strcmp(m->t.e[i].key, key)) {
      snprintf(name, name_len, "%s", m->t.e[i].name);
      if (ms) *ms = m->t.e[i].ms;
      *found = 1;
      break;
    }
  __atomic_clear(&m->lock, __ATOMIC_RELEASE);
  return s;
}

/* mkdir -p of path's directory part. */
static inline kbd_status kbd_tune_make_dirs_(const char *path) {
  char dir[KBD_TUNE_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return kbd_status_ok();
  *slash = '\0';
  for (char *p = dir + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot create the cache directory %s: %s", dir,
                               strerror(errno));
      *p = '/';
    }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot create the cache directory %s: %s", dir, strerror(errno));
  return kbd_status_ok();
}

static inline kbd_status kbd_tune_write_all_(int fd, const char *buf, size_t n, const char *tmp) {
  while (n) {
    const ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot write %s: %s", tmp, w < 0 ? strerror(errno) : "short");
    buf += w, n -= (size_t)w;
  }
  return kbd_status_ok();
}

/* Stores key -> name (ms measured) in the cache file: under an fcntl lock on "<path>.lock" the file is re-read, the
 * entry merged in and the whole written to "<path>.tmp.<pid>", then renamed over path. The lock is what keeps two
 * processes from each merging into the copy the other is about to replace; the rename is what keeps a reader without
 * the lock from seeing a half-written file. */
static inline kbd_status kbd_tune_cache_store(const char *path, const char *key, const char *name, double ms) {
  if (!path || !key || !*key || strlen(key) >= KBD_TUNE_KEY_MAX || strpbrk(key, "\t\n\r") || !kbd_tune_name_ok(name))
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_cache_store: bad key or candidate name ('%s', '%s')",
                           key ? key : "(null)", name ? name : "(null)");
  kbd_status s = kbd_tune_make_dirs_(path);
  if (!kbd_ok(s)) return s;
  char lock[KBD_TUNE_PATH_MAX + 16], tmp[KBD_TUNE_PATH_MAX + 32];
  snprintf(lock, sizeof lock, "%s.lock", path);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  const int lfd = open(lock, O_RDWR | O_CREAT, 0644);
  if (lfd < 0)
    return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot open the lock file %s: %s", lock, strerror(errno));
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK, fl.l_whence = SEEK_SET;
  int r;
  while ((r = fcntl(lfd, F_SETLKW, &fl)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    s = kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot lock %s: %s", lock, strerror(errno));
    close(lfd);
    return s;
  }
  kbd_tune_table t = {NULL, 0, 0};
  int ignored, fd = -1;
  char *buf = NULL;
  s = kbd_tune_cache_read(path, &t, &ignored);
  if (kbd_ok(s)) s = kbd_tune_table_put(&t, key, name, ms);
  if (kbd_ok(s)) {
    const size_t cap = (size_t)(t.n + 1) * (KBD_TUNE_KEY_MAX + KBD_TUNE_NAME_MAX + 40) + 64;
    buf = (char *)malloc(cap);
    if (!buf) s = kbd_status_make(KBD_ERR_OOM, "kbd_tune: out of memory writing %s", path);
    size_t at = 0;
    if (buf) at += (size_t)snprintf(buf, cap, "kbd-tune-cache %d\n", KBD_TUNE_CACHE_FORMAT);
    for (int i = 0; buf && i < t.n; ++i)
      at += (size_t)snprintf(buf + at, cap - at, "%s\t%s\t%.6g\n", t.e[i].key, t.e[i].name, t.e[i].ms);
    if (kbd_ok(s) && (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
      s = kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot create %s: %s", tmp, strerror(errno));
    if (kbd_ok(s)) s = kbd_tune_write_all_(fd, buf, at, tmp);
    /* the data must be on disk before the rename makes it the cache, or a crash could leave an empty file there */
    if (kbd_ok(s) && fsync(fd) != 0)
      s = kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot sync %s: %s", tmp, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && kbd_ok(s))
      s = kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot close %s: %s", tmp, strerror(errno));
    if (kbd_ok(s) && rename(tmp, path) != 0)
      s = kbd_status_make(KBD_ERR_INVALID, "kbd_tune: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (!kbd_ok(s) && fd >= 0) remove(tmp);
    if (kbd_ok(s)) __atomic_add_fetch(&kbd_tune_gen_, 1u, __ATOMIC_RELEASE);
  }
  free(buf);
  kbd_tune_table_free(&t);
  close(lfd); /* releases the lock */
  return s;
}

/* ---- timers --------------------------------------------------------------------------------------------------- */

#if !KBD_MODE_CPU
/* CUDA events around one launch on the stream in timer_ctx (a cudaStream_t; NULL: the legacy stream): the GPU's own
 * clock, so host-side launch latency is not counted. */
static inline kbd_status kbd_tune_cuda_time_(void *stream, const kbd_tune_space *sp, int index, double *ms) {
  cudaEvent_t e0, e1;
  if (cudaEventCreate(&e0) != cudaSuccess) return kbd_status_make(KBD_ERR_CUDA, "kbd_tune: cudaEventCreate failed");
  if (cudaEventCreate(&e1) != cudaSuccess) {
    cudaEventDestroy(e0);
    return kbd_status_make(KBD_ERR_CUDA, "kbd_tune: cudaEventCreate failed");
  }
  kbd_status s = kbd_status_ok();
  float f = 0.0f;
  if (cudaEventRecord(e0, (cudaStream_t)stream) != cudaSuccess)
    s = kbd_status_make(KBD_ERR_CUDA, "kbd_tune: cudaEventRecord failed");
  if (kbd_ok(s)) s = sp->launch(sp->cand[index].config, sp->shape, sp->ctx);
  if (kbd_ok(s) && (cudaEventRecord(e1, (cudaStream_t)stream) != cudaSuccess ||
                    cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&f, e0, e1) != cudaSuccess))
    s = kbd_status_make(KBD_ERR_CUDA, "kbd_tune: timing candidate %s failed", sp->cand[index].name);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  *ms = f;
  return s;
}
static inline kbd_tune_timer kbd_tune_timer_cuda(void *stream) {
  kbd_tune_timer t;
  t.time = kbd_tune_cuda_time_, t.ctx = stream;
  return t;
}
#endif

/* ---- the device ----------------------------------------------------------------------------------------------- */

/* What the key and the model need of the device: its arch (90, 100), name and multiprocessor count. CPU mode: the
 * emulated arch (KBD_CPU_ARCH), "kbd-cpu-machine", and the SMs of an H100 SXM (132) or a B200 (148), so a model's
 * pick there is the pick it makes on that GPU. */
typedef struct kbd_tune_device {
  int arch, sms;
  char name[96];
} kbd_tune_device;

#if !KBD_MODE_CPU
#define KBD_TUNE_DEVICES_ 16
typedef struct kbd_tune_devcache_ {
  int state; /* 0 empty, 1 being filled, 2 ready */
  kbd_tune_device d;
} kbd_tune_devcache_;
KBD_WEAK kbd_tune_devcache_ kbd_tune_devs_[KBD_TUNE_DEVICES_];
#endif

static inline kbd_status kbd_tune_device_get(kbd_tune_device *d) {
  memset(d, 0, sizeof *d);
#if KBD_MODE_CPU
  d->arch = KBD_CPU_ARCH, d->sms = KBD_CPU_ARCH == 90 ? 132 : 148;
  snprintf(d->name, sizeof d->name, "kbd-cpu-machine");
  return kbd_status_ok();
#else
  int dev = 0, major = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return kbd_status_make(KBD_ERR_NO_DEVICE, "kbd_tune: no current CUDA device");
  /* cudaGetDeviceProperties fills a large struct from the driver: a pick on every launch asks it once per device */
  kbd_tune_devcache_ *c = dev >= 0 && dev < KBD_TUNE_DEVICES_ ? &kbd_tune_devs_[dev] : NULL;
  if (c && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 2) {
    *d = c->d;
    return kbd_status_ok();
  }
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return kbd_status_make(KBD_ERR_NO_DEVICE, "kbd_tune: cannot query the CUDA device");
  d->arch = major * 10, d->sms = sms;
  snprintf(d->name, sizeof d->name, "%.95s", prop.name);
  int empty = 0; /* the thread that claims the slot fills it; the others query again until it is ready */
  if (c && __atomic_compare_exchange_n(&c->state, &empty, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    c->d = *d;
    __atomic_store_n(&c->state, 2, __ATOMIC_RELEASE);
  }
  return kbd_status_ok();
#endif
}

/* ---- the picker ---------------------------------------------------------------------------------------------- */

static inline int kbd_tune_env_flag_(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* 1 when a pick with opts o may measure: o->tune, or KBD_TUNE set (and not "0") when o->tune is -1. */
static inline int kbd_tune_on(const kbd_tune_opts *o) {
  return o && o->tune >= 0 ? o->tune != 0 : kbd_tune_env_flag_("KBD_TUNE");
}

static inline void kbd_tune_sort_(double *v, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      const double x = v[j];
      v[j] = v[j - 1], v[j - 1] = x;
    }
}

#define KBD_TUNE_MAX_CANDIDATES 64
#define KBD_TUNE_MAX_REPS 64

static inline kbd_status kbd_tune_measure_(const kbd_tune_space *sp, const kbd_tune_opts *o, const kbd_tune_timer *tm,
                                           const int *ok, int ref, int log, kbd_tune_result *res) {
  double med[KBD_TUNE_MAX_CANDIDATES], runs[KBD_TUNE_MAX_REPS], spent = 0.0;
  const int reps = o->reps < 1 ? 1 : o->reps > KBD_TUNE_MAX_REPS ? KBD_TUNE_MAX_REPS : o->reps;
  int best = -1, measured = 0;
  kbd_status s;
  /* the reference first: every other candidate's result is compared with its output */
  if (!kbd_ok(s = sp->launch(sp->cand[ref].config, sp->shape, sp->ctx))) return s;
  if (!kbd_ok(s = sp->check(sp->shape, sp->ctx, 1))) return s;
  for (int step = 0; step < sp->count; ++step) {
    const int i = step == 0 ? ref : step <= ref ? step - 1 : step; /* the reference, then the others in order */
    med[i] = -1.0;
    if (!ok[i]) continue;
    if (spent > o->budget_ms && best >= 0) {
      if (log)
        fprintf(stderr, "kbd_tune: %s: %s not measured: the budget of %g ms is spent\n", sp->op, sp->cand[i].name,
                o->budget_ms);
      continue;
    }
    if (i != ref) {
      /* a candidate that cannot launch here (a cluster the GPU cannot schedule) is refused, not fatal: the
       * reference ran, so the launch can go ahead without it */
      kbd_status c = sp->launch(sp->cand[i].config, sp->shape, sp->ctx);
      if (kbd_ok(c)) c = sp->check(sp->shape, sp->ctx, 0);
      if (!kbd_ok(c)) {
        ++res->rejected;
        fprintf(stderr, "kbd_tune: %s: candidate %s rejected: it failed or its result differs from %s's: %s\n", sp->op,
                sp->cand[i].name, sp->cand[ref].name, c.msg);
        continue;
      }
    }
    for (int w = 0; w < o->warmup; ++w)
      if (!kbd_ok(s = sp->launch(sp->cand[i].config, sp->shape, sp->ctx))) return s;
    for (int r = 0; r < reps; ++r) {
      if (!kbd_ok(s = tm->time(tm->ctx, sp, i, &runs[r]))) return s;
      spent += runs[r];
    }
    kbd_tune_sort_(runs, reps);
    med[i] = runs[reps / 2];
    ++measured;
    if (log) fprintf(stderr, "kbd_tune: %s: %s median %.4g ms of %d\n", sp->op, sp->cand[i].name, med[i], reps);
    if (best < 0 || med[i] < med[best]) best = i;
  }
  if (best < 0) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune: %s: no candidate could be measured", sp->op);
  res->index = best, res->reason = KBD_TUNE_MEASURED, res->measured_ms = med[best];
  snprintf(res->why, sizeof res->why, "measured: %s fastest of %d (median %.4g ms; model's pick %s)",
           sp->cand[best].name, measured, med[best], sp->cand[res->model_index].name);
  return kbd_status_ok();
}

/* Picks the candidate of `space` to launch for the problem of key (see the top of this file). opts may be NULL
 * (kbd_tune_opts_default). The status is an error only when nothing can be picked (no valid candidate, a forced one
 * unknown or invalid, a bad space, a launch failing while measuring); a failed cache update is res->store, logged. */
static inline kbd_status kbd_tune_pick(const kbd_tune_space *sp, const char *key, const kbd_tune_opts *opts,
                                       kbd_tune_result *res) {
  const kbd_tune_opts def = kbd_tune_opts_default();
  const kbd_tune_opts *o = opts ? opts : &def;
  if (!res) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_pick: res is NULL");
  memset(res, 0, sizeof *res);
  res->store = kbd_status_ok();
  if (!sp || !key || !sp->cand || !sp->valid || !sp->estimate || sp->count < 1 || sp->count > KBD_TUNE_MAX_CANDIDATES ||
      sp->default_index < 0 || sp->default_index >= sp->count)
    return kbd_status_make(KBD_ERR_INVALID,
                           "kbd_tune_pick: bad space (NULL key, candidates, valid or estimate; count %d not in 1..%d; "
                           "or default_index %d out of range)",
                           sp ? sp->count : 0, KBD_TUNE_MAX_CANDIDATES, sp ? sp->default_index : -1);
  snprintf(res->key, sizeof res->key, "%s", key);
  const int log = o->log >= 0 ? o->log : kbd_tune_env_flag_("KBD_TUNE_LOG");
  int ok[KBD_TUNE_MAX_CANDIDATES], nvalid = 0, model = -1;
  double cost[KBD_TUNE_MAX_CANDIDATES];
  char why[KBD_TUNE_WHY_MAX];
  for (int i = 0; i < sp->count; ++i) {
    if (!kbd_tune_name_ok(sp->cand[i].name))
      return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_pick: %s: candidate %d has a bad name '%s'", sp->op, i,
                             sp->cand[i].name ? sp->cand[i].name : "(null)");
    why[0] = '\0';
    ok[i] = sp->valid(sp->cand[i].config, sp->shape, why, sizeof why) != 0;
    cost[i] = ok[i] ? sp->estimate(sp->cand[i].config, sp->shape) : 0.0;
    if (log && !ok[i]) fprintf(stderr, "kbd_tune: %s: %s invalid: %s\n", sp->op, sp->cand[i].name, why);
    if (ok[i]) ++nvalid;
    if (ok[i] && (model < 0 || cost[i] < cost[model])) model = i;
  }
  if (!nvalid) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_pick: %s: no valid candidate for %s", sp->op, key);
  res->model_index = model;
  if (o->force) {
    int f = -1;
    for (int i = 0; i < sp->count; ++i)
      if (!strcmp(sp->cand[i].name, o->force)) f = i;
    if (f < 0) return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_pick: %s: no candidate named '%s'", sp->op, o->force);
    if (!ok[f]) {
      sp->valid(sp->cand[f].config, sp->shape, why, sizeof why);
      return kbd_status_make(KBD_ERR_INVALID, "kbd_tune_pick: %s: forced candidate %s is invalid here: %s", sp->op,
                             o->force, why);
    }
    res->index = f, res->reason = KBD_TUNE_FORCED, res->model_s = cost[f];
    snprintf(res->why, sizeof res->why, "forced: %s", o->force);
  } else {
    char path[KBD_TUNE_PATH_MAX], name[KBD_TUNE_NAME_MAX];
    int off = 0, found = 0;
    double ms = 0.0;
    kbd_status s = kbd_tune_cache_path(path, sizeof path, o->cache_path, &off);
    if (kbd_ok(s) && !off) s = kbd_tune_memo_lookup_(path, key, name, sizeof name, &ms, &found);
    if (!kbd_ok(s)) { /* an unusable cache costs the remembered pick, never the launch */
      fprintf(stderr, "kbd_tune: warning: %s\n", s.msg);
      off = 1;
    }
    int hit = -1;
    for (int i = 0; found && i < sp->count; ++i)
      if (!strcmp(sp->cand[i].name, name) && ok[i]) hit = i;
    if (found && hit < 0 && log)
      fprintf(stderr, "kbd_tune: %s: cached %s is not a valid candidate here: ignored\n", sp->op, name);
    const int tune = kbd_tune_on(o);
#if !KBD_MODE_CPU
    const kbd_tune_timer cuda_timer = kbd_tune_timer_cuda(NULL);
    const kbd_tune_timer *tm = o->timer ? o->timer : &cuda_timer;
#else
    const kbd_tune_timer *tm = o->timer;
#endif
    if (hit >= 0) {
      res->index = hit, res->reason = KBD_TUNE_CACHED, res->measured_ms = ms;
      snprintf(res->why, sizeof res->why, "cached: %s (%.4g ms) in %s", name, ms, path);
    } else if (tune && tm && tm->time && sp->launch && sp->check) {
      const int ref = ok[sp->default_index] ? sp->default_index : model;
      if (!kbd_ok(s = kbd_tune_measure_(sp, o, tm, ok, ref, log, res))) return s;
      if (!off) res->store = kbd_tune_cache_store(path, key, sp->cand[res->index].name, res->measured_ms);
      if (!kbd_ok(res->store)) fprintf(stderr, "kbd_tune: warning: the pick is not remembered: %s\n", res->store.msg);
    } else {
      res->index = model, res->reason = KBD_TUNE_MODEL;
      snprintf(res->why, sizeof res->why, "model: %s, %.4g us (lowest estimate of %d valid)%s", sp->cand[model].name,
               cost[model] * 1e6, nvalid,
               !tune               ? ""
               : !(tm && tm->time) ? "; tuning on but no timer here"
                                   : "; tuning on but not measurable");
    }
  }
  res->model_s = cost[res->index];
  if (log) fprintf(stderr, "kbd_tune: %s [%s]: %s\n", sp->op, key, res->why);
  return kbd_status_ok();
}

#ifdef __cplusplus
}
#endif

#endif /* KBD_TUNE_H */
