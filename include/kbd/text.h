/* kbd/text.h - a growable string for messages (host code only).
 *
 * Every kbd message that names a source location carries a path the user's build chose: CMake passes
 * absolute paths, so `__FILE__` is as long as the checkout path, and a checkout is where the user put it.
 * Messages are therefore built in a kbd_text, which grows to what it holds, never in a fixed buffer: a
 * fixed buffer either cuts the part of the message that says where (a deadlock report's "completed by the
 * arrival at FILE:LINE") or, with -Werror and gcc's -Wformat-truncation, stops the build itself.
 *
 * A kbd_text starts zeroed (KBD_TEXT_INIT); kbd_text_str() is never NULL; kbd_text_free() releases it.
 * When memory runs out the text keeps what it has and ends with KBD_TEXT_OOM_MARK instead of growing:
 * a message about a fault must not become a second fault.
 */
#ifndef KBD_TEXT_H
#define KBD_TEXT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

typedef struct kbd_text {
  char *s;    /* NUL-terminated, or NULL while empty */
  size_t len; /* strlen(s) */
  size_t cap; /* bytes allocated at s */
  int oom;    /* an append did not fit in memory: the text ends with KBD_TEXT_OOM_MARK */
} kbd_text;

#define KBD_TEXT_INIT                                                                                                  \
  { NULL, 0, 0, 0 }
#define KBD_TEXT_OOM_MARK " [kbd: out of memory, message cut here]"

static inline const char *kbd_text_str(const kbd_text *t) { return t->s ? t->s : ""; }

static inline void kbd_text_free(kbd_text *t) {
  free(t->s);
  t->s = NULL;
  t->len = t->cap = 0;
  t->oom = 0;
}

/* Room for `more` bytes plus the NUL; 0 when memory ran out. */
static inline int kbd_text_reserve_(kbd_text *t, size_t more) {
  if (t->oom) return 0;
  if (t->len + more + 1 <= t->cap) return 1;
  size_t cap = t->cap ? t->cap : 128;
  while (cap < t->len + more + 1 + sizeof KBD_TEXT_OOM_MARK)
    cap *= 2;
  char *p = (char *)realloc(t->s, cap);
  if (!p) {
    /* Keep what fits and say the rest is missing; the mark always fits when the buffer exists. */
    t->oom = 1;
    if (t->s && t->cap >= sizeof KBD_TEXT_OOM_MARK) {
      size_t at = t->len < t->cap - sizeof KBD_TEXT_OOM_MARK ? t->len : t->cap - sizeof KBD_TEXT_OOM_MARK;
      memcpy(t->s + at, KBD_TEXT_OOM_MARK, sizeof KBD_TEXT_OOM_MARK);
      t->len = at + sizeof KBD_TEXT_OOM_MARK - 1;
    }
    return 0;
  }
  if (!t->s) p[0] = '\0';
  t->s = p;
  t->cap = cap;
  return 1;
}

static inline void kbd_text_vappend(kbd_text *t, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  const int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0) return; /* nothing to add (or an encoding error: vsnprintf cannot fail on kbd's formats) */
  if (!kbd_text_reserve_(t, (size_t)n)) return;
  vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  t->len += (size_t)n;
}

/* Append printf-formatted text. */
KBD_PRINTF(2, 3) static inline void kbd_text_append(kbd_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(t, fmt, ap);
  va_end(ap);
}

/* Append a string as it is (no format). */
static inline void kbd_text_puts(kbd_text *t, const char *s) {
  const size_t n = strlen(s);
  if (!n || !kbd_text_reserve_(t, n)) return;
  memcpy(t->s + t->len, s, n + 1);
  t->len += n;
}

/* Cut back to `len` bytes (a length the text had earlier); the buffer stays for reuse. */
static inline void kbd_text_truncate(kbd_text *t, size_t len) {
  if (t->s && len < t->len) {
    t->s[len] = '\0';
    t->len = len;
  }
}

#endif /* KBD_TEXT_H */
