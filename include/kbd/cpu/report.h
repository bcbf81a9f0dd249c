/* kbd/cpu/report.h - faults and reports of the CPU machine.
 *
 * A fault stops the faulting warp's group; the launch returns the fault of the LOWEST failing block, so
 * the report is the same for any number of host threads. Reports are multi-line: a first line saying
 * what happened at the user's file:line, then one line per object or warp involved.
 */
#ifndef KBD_CPU_REPORT_H
#define KBD_CPU_REPORT_H

#include "state.h"

#if KBD_MODE_CPU

static inline void kbd_cpu_record(kbd_cpu_cta *cta, kbd_code code, const char *text) {
  kbd_cpu_launch *L = cta->L;
  pthread_mutex_lock(&L->mu);
  /* Keep the fault of the lowest block: every block below it runs to completion, so the reported
   * failure is the same for any host-thread count. */
  if (cta->linear < L->fail_block) {
    __atomic_store_n(&L->fail_block, cta->linear, __ATOMIC_RELEASE);
    char suffix[160];
    const int ns =
        snprintf(suffix, sizeof suffix, "\n  [kernel %s, block (%u,%u,%u)]", L->name, cta->bx, cta->by, cta->bz);
    /* The text is cut, never the suffix that says where it happened. */
    L->status = kbd_status_make(code, "%.*s%s", (int)(KBD_STATUS_MSG_LEN - 1 - ns), text, suffix);
  }
  pthread_mutex_unlock(&L->mu);
  cta->G->failed = 1;
}

/* Stop the running warp after its fault was recorded. Never returns. */
KBD_NORETURN static inline void kbd_cpu_stop_warp(kbd_cpu_warp *w) {
  w->state = KBD_CPU_W_FAULTED;
  kbd_fiber_switch(&w->fiber, &w->cta->G->sched);
  abort(); /* a faulted fiber is never resumed */
}

/* Report a fault in the running warp and stop it; the launch returns `code`. Never returns. */
KBD_NORETURN KBD_PRINTF(4, 5) static inline void kbd_cpu_fault(kbd_code code, const char *file, int line,
                                                               const char *fmt, ...) {
  char text[KBD_STATUS_MSG_LEN];
  kbd_cpu_warp *w = kbd_cpu_cur;
  int n = snprintf(text, sizeof text, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  if (!w) { /* not inside a kernel: a programming error in host code */
    fprintf(stderr, "kbd: %s\n", text);
    abort();
  }
  size_t len = strlen(text);
  snprintf(text + len, sizeof text - len, " (warp %d)", w->id);
  kbd_cpu_record(w->cta, code, text);
  kbd_cpu_stop_warp(w);
}

/* kbd_trap: an explicit kernel-side failure with a message (GPU: `trap`). */
#define kbd_trap(msg) kbd_cpu_fault(KBD_ERR_KERNEL, __FILE__, __LINE__, "kbd_trap: %s", msg)

/* What one warp waits for, "" (0) for a running, exited or faulted warp. */
static inline int kbd_cpu_warp_wait(const kbd_cpu_warp *w, char *buf, size_t cap) {
  buf[0] = '\0';
  if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_BAR) {
    const kbd_cpu_barrier *b = &w->cta->bars[w->wait_bar];
    return snprintf(buf, cap, "at %s:%d waits for named barrier %d to complete (%d of %d threads arrived)",
                    w->wait_file, w->wait_line, w->wait_bar, b->arrived, b->expected);
  }
  if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_OBJ) {
    int n = snprintf(buf, cap, "at %s:%d waits for ", w->wait_file, w->wait_line);
    if (n < 0 || (size_t)n >= cap) return (int)strlen(buf);
    return n + w->wait_desc(w, buf + n, cap - (size_t)n);
  }
  if (w->state == KBD_CPU_W_READY && w->spinning)
    return snprintf(buf, cap, "at %s:%d polls memory that no running warp changes (a spin on a flag)", w->wait_file,
                    w->wait_line);
  return 0;
}

/* Describe every unfinished warp of `cta` into text, one line each: exited warps first (often the
 * culprit), then each waiting warp. When that would not fit, runs of warps waiting at the same place
 * are merged into one line. */
static inline size_t kbd_cpu_describe(const kbd_cpu_cta *cta, char *text, size_t n, size_t cap) {
  for (int i = 0; i < cta->nwarps && n < cap; ++i)
    if (cta->warps[i].state == KBD_CPU_W_DONE) n += (size_t)snprintf(text + n, cap - n, "\n  warp %d has exited", i);
  const size_t start = n < cap ? n : cap;
  for (int pass = 0; pass < 2; ++pass) {
    n = start;
    for (int i = 0; i < cta->nwarps && n < cap;) {
      char what[384], next[384];
      if (!kbd_cpu_warp_wait(&cta->warps[i], what, sizeof what)) {
        ++i;
        continue;
      }
      int j = i + 1;
      if (pass == 1)
        while (j < cta->nwarps && kbd_cpu_warp_wait(&cta->warps[j], next, sizeof next) && strcmp(what, next) == 0)
          ++j;
      if (j == i + 1)
        n += (size_t)snprintf(text + n, cap - n, "\n  warp %d %s", i, what);
      else
        n += (size_t)snprintf(text + n, cap - n, "\n  warps %d-%d each %s", i, j - 1, what);
      i = j;
    }
    if (n + 96 < cap) break; /* fits with room for the kernel/block suffix */
  }
  return n < cap ? n : cap;
}

/* A deadlock of group G: every CTA's unfinished warps; in a cluster, CTA by CTA. Recorded at the group's
 * lowest block. */
static inline void kbd_cpu_deadlock(kbd_cpu_group *G, const char *why) {
  char text[KBD_STATUS_MSG_LEN];
  size_t n = (size_t)snprintf(text, sizeof text, "deadlock: %s", why);
  for (int s = 0; s < G->nctas && n < sizeof text; ++s) {
    const kbd_cpu_cta *cta = G->ctas[s];
    if (G->nctas > 1)
      n += (size_t)snprintf(text + n, sizeof text - n, "\n  cluster CTA %d (block %u,%u,%u):", s, cta->bx, cta->by,
                            cta->bz);
    if (n < sizeof text) n = kbd_cpu_describe(cta, text, n, sizeof text);
  }
  kbd_cpu_record(G->ctas[0], KBD_ERR_DEADLOCK, text);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_REPORT_H */
