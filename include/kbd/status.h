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
#include "text.h"

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

/* A message is kept for the life of the process, immutable, so a status stays a small value that C code
 * copies, returns and compares without owning anything: no kbd_status_free to forget, and a status saved
 * from one launch still reads right after the next one fails. Its length is whatever the message needs
 * (kbd/text.h says why no message has a fixed size). Equal messages are stored once, so a loop that fails
 * the same way a million times keeps one copy; distinct failures are few in any real program. */
typedef struct kbd_status {
  kbd_code code;
  int reported;    /* the CPU machine already printed msg to stderr: KBD_CHECK does not print it again */
  const char *msg; /* never NULL: "" for KBD_OK */
} kbd_status;

static inline int kbd_ok(kbd_status s) { return s.code == KBD_OK; }

static inline kbd_status kbd_status_ok(void) {
  kbd_status s;
  s.code = KBD_OK;
  s.reported = 0;
  s.msg = "";
  return s;
}

/* The kept messages: a hash table of lock-free lists (host threads of the CPU machine record faults
 * concurrently; a GPU program's threads may fail launches concurrently). Nodes are only ever added, so a
 * reader needs no lock. Weak: one table for the whole program, whichever translation units include kbd. */
typedef struct kbd_msg_node_ {
  struct kbd_msg_node_ *next;
  size_t hash;
  /* the message follows the node */
} kbd_msg_node_;
#define KBD_MSG_BUCKETS_ 256
KBD_WEAK kbd_msg_node_ *kbd_msg_table_[KBD_MSG_BUCKETS_];

static inline const char *kbd_msg_node_text_(const kbd_msg_node_ *n) { return (const char *)(n + 1); }

/* The kept copy of `text` (len bytes): the one already kept when equal, else a new one. Out of memory: a
 * static sentence saying so, so the status still carries its code and a reason. */
static inline const char *kbd_msg_keep(const char *text, size_t len) {
  size_t h = 1469598103934665603ull & (size_t)-1; /* FNV-1a */
  for (size_t i = 0; i < len; ++i)
    h = (h ^ (unsigned char)text[i]) * (size_t)1099511628211ull;
  kbd_msg_node_ **head = &kbd_msg_table_[h % KBD_MSG_BUCKETS_];
  kbd_msg_node_ *fresh = NULL;
  for (;;) {
    kbd_msg_node_ *first = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    for (kbd_msg_node_ *n = first; n; n = n->next)
      if (n->hash == h && strncmp(kbd_msg_node_text_(n), text, len) == 0 && kbd_msg_node_text_(n)[len] == '\0') {
        free(fresh);
        return kbd_msg_node_text_(n);
      }
    if (!fresh) {
      fresh = (kbd_msg_node_ *)malloc(sizeof *fresh + len + 1);
      if (!fresh) return "kbd: out of memory while keeping this status's message";
      fresh->hash = h;
      memcpy((char *)(fresh + 1), text, len);
      ((char *)(fresh + 1))[len] = '\0';
    }
    fresh->next = first;
    if (__atomic_compare_exchange_n(head, &first, fresh, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
      return kbd_msg_node_text_(fresh);
    /* another thread added a node: look again, it may be this message */
  }
}

static inline kbd_status kbd_status_vmake(kbd_code code, const char *fmt, va_list ap) {
  kbd_text t = KBD_TEXT_INIT;
  kbd_text_vappend(&t, fmt, ap);
  kbd_status s;
  s.code = code;
  s.reported = 0;
  s.msg = kbd_msg_keep(kbd_text_str(&t), t.len);
  kbd_text_free(&t);
  return s;
}

KBD_PRINTF(2, 3) static inline kbd_status kbd_status_make(kbd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kbd_status s = kbd_status_vmake(code, fmt, ap);
  va_end(ap);
  return s;
}

/* A status whose message is a text built piecewise (kbd/text.h); the text is left to the caller. */
static inline kbd_status kbd_status_text(kbd_code code, const kbd_text *t) {
  kbd_status s;
  s.code = code;
  s.reported = 0;
  s.msg = kbd_msg_keep(kbd_text_str(t), t->len);
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
