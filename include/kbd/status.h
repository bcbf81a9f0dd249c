/* kbd/status.h - the status every kbd host call returns.
 *
 * A status is a small value (code + message) returned by value, so host code in C needs no error
 * globals and a failed launch can say *why* (deadlock at file:line, shared memory over the limit...).
 */
#ifndef KBD_STATUS_H
#define KBD_STATUS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

typedef enum kbd_code {
  KBD_OK = 0,
  KBD_ERR_INVALID = 1,   /* bad argument: empty grid, too much shared memory, NULL pointer ... */
  KBD_ERR_NO_DEVICE = 2, /* GPU build but no CUDA device present */
  KBD_ERR_CUDA = 3,      /* the CUDA runtime reported an error */
  KBD_ERR_OOM = 4,       /* allocation failed */
  KBD_ERR_DEADLOCK = 5,  /* CPU machine: every live warp is blocked */
  KBD_ERR_BOUNDS = 6,    /* CPU machine: access outside an allocation / shared memory */
  KBD_ERR_POISON = 7,    /* CPU machine: read of never-written shared memory */
  KBD_ERR_BARRIER = 8,   /* CPU machine: barrier misuse (bad id, mismatched counts, exited warp) */
  KBD_ERR_KERNEL = 9,    /* CPU machine: other fault raised inside a kernel (kbd_trap) */
  KBD_ERR_RACE = 10,     /* CPU machine: two warps touch the same bytes, one writes, nothing orders them */
  KBD_ERR_ISSUE = 11,    /* CPU machine: an operation issued a different number of times than on the GPU
                          * (a collective inside per-lane code, a per-thread atomic in warp-uniform code) */
  KBD_ERR_SCOPE = 12,    /* CPU machine: a warp used a collective of a warp range it is not in (kbd/scope.h) */
  KBD_ERR_MBARRIER = 13  /* CPU machine: mbarrier misuse (uninitialised, re-initialised, over-arrival, tx range) */
} kbd_code;

/* Room for a multi-line deadlock report of a full 32-warp block (one line per waiting warp; runs of warps
 * waiting at the same place are merged when it would not fit). */
#define KBD_STATUS_MSG_LEN 4096

typedef struct kbd_status {
  kbd_code code;
  int reported; /* the CPU machine already printed msg to stderr: KBD_CHECK does not print it again */
  char msg[KBD_STATUS_MSG_LEN];
} kbd_status;

static inline int kbd_ok(kbd_status s) { return s.code == KBD_OK; }

static inline kbd_status kbd_status_ok(void) {
  kbd_status s;
  s.code = KBD_OK;
  s.reported = 0;
  s.msg[0] = '\0';
  return s;
}

KBD_PRINTF(2, 3) static inline kbd_status kbd_status_make(kbd_code code, const char *fmt, ...) {
  kbd_status s;
  va_list ap;
  s.code = code;
  s.reported = 0;
  va_start(ap, fmt);
  vsnprintf(s.msg, sizeof s.msg, fmt, ap);
  va_end(ap);
  return s;
}

static inline const char *kbd_code_name(kbd_code c) {
  switch (c) {
  case KBD_OK: return "ok";
  case KBD_ERR_INVALID: return "invalid argument";
  case KBD_ERR_NO_DEVICE: return "no CUDA device";
  case KBD_ERR_CUDA: return "CUDA error";
  case KBD_ERR_OOM: return "out of memory";
  case KBD_ERR_DEADLOCK: return "deadlock";
  case KBD_ERR_BOUNDS: return "out-of-bounds access";
  case KBD_ERR_POISON: return "read of never-written memory";
  case KBD_ERR_BARRIER: return "barrier misuse";
  case KBD_ERR_KERNEL: return "kernel fault";
  case KBD_ERR_RACE: return "data race";
  case KBD_ERR_ISSUE: return "issue-count mismatch";
  case KBD_ERR_SCOPE: return "warp-range misuse";
  case KBD_ERR_MBARRIER: return "mbarrier misuse";
  }
  return "unknown";
}

/* Evaluate a kbd call; on failure print "file:line: expr: message" and return the status from the
 * enclosing function (which must return kbd_status). */
#define KBD_TRY(expr)                                                                                                  \
  do {                                                                                                                 \
    kbd_status kbd_try_s_ = (expr);                                                                                    \
    if (!kbd_ok(kbd_try_s_)) return kbd_try_s_;                                                                        \
  } while (0)

/* For main(): print the failure and exit(1). */
#define KBD_CHECK(expr)                                                                                                \
  do {                                                                                                                 \
    kbd_status kbd_chk_s_ = (expr);                                                                                    \
    if (!kbd_ok(kbd_chk_s_)) {                                                                                         \
      if (kbd_chk_s_.reported)                                                                                         \
        fprintf(stderr, "%s:%d: %s failed: %s (report above)\n", __FILE__, __LINE__, #expr,                            \
                kbd_code_name(kbd_chk_s_.code));                                                                       \
      else                                                                                                             \
        fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr, kbd_code_name(kbd_chk_s_.code),       \
                kbd_chk_s_.msg);                                                                                       \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

#endif /* KBD_STATUS_H */
