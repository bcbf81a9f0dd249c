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
    L->status = kbd_status_make(code, "%s\n  [kernel %s, block (%u,%u,%u)]", text, L->name, cta->bx, cta->by, cta->bz);
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

/* Report a fault in the running warp and stop it; the launch returns `code`. Never returns. Strings among the
 * arguments that the caller built for this message are kept by the launch (kbd_cpu_keep): this function does
 * not return to free them. */
KBD_NORETURN KBD_PRINTF(4, 5) static inline void kbd_cpu_fault(kbd_code code, const char *file, int line,
                                                               const char *fmt, ...) {
  kbd_text text = KBD_TEXT_INIT;
  kbd_cpu_warp *w = kbd_cpu_cur;
  kbd_text_append(&text, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(&text, fmt, ap);
  va_end(ap);
  if (!w) { /* not inside a kernel: a programming error in host code */
    fprintf(stderr, "kbd: %s\n", kbd_text_str(&text));
    abort();
  }
  kbd_text_append(&text, " (warp %d)", w->id);
  kbd_cpu_record(w->cta, code, kbd_text_str(&text));
  kbd_text_free(&text); /* before the switch: this fiber's frame is abandoned there */
  kbd_cpu_stop_warp(w);
}

/* kbd_trap: an explicit kernel-side failure with a message (GPU: `trap`). */
#define kbd_trap(msg) kbd_cpu_fault(KBD_ERR_KERNEL, __FILE__, __LINE__, "kbd_trap: %s", msg)

/* Appends what one warp waits for; 0 (nothing appended) for a running, exited or faulted warp. */
static inline int kbd_cpu_warp_wait(const kbd_cpu_warp *w, kbd_text *out) {
  if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_BAR) {
    const kbd_cpu_barrier *b = &w->cta->bars[w->wait_bar];
    kbd_text_append(out, "at %s:%d waits for named barrier %d to complete (%d of %d threads arrived)", w->wait_file,
                    w->wait_line, w->wait_bar, b->arrived, b->expected);
    return 1;
  }
  if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_OBJ) {
    kbd_text_append(out, "at %s:%d waits for ", w->wait_file, w->wait_line);
    w->wait_desc(w, out);
    return 1;
  }
  if (w->state == KBD_CPU_W_READY && w->spinning) {
    kbd_text_append(out, "at %s:%d polls memory that no running warp changes (a spin on a flag)", w->wait_file,
                    w->wait_line);
    return 1;
  }
  return 0;
}

/* Past this many waiting warps in a CTA, runs of neighbouring warps that wait at the same place for the same
 * thing share one line ("warps 4-7 each ..."): a 32-warp block's report stays readable. */
#define KBD_CPU_REPORT_WARP_LINES 8

/* Describe every unfinished warp of `cta`: exited warps first (often the culprit), then each waiting warp,
 * one line each, or merged as above. The form depends only on what the warps wait for, never on how long the
 * paths in it are (a report's shape must not change with the checkout's path). */
static inline void kbd_cpu_describe(const kbd_cpu_cta *cta, kbd_text *out) {
  int waiting = 0;
  for (int i = 0; i < cta->nwarps; ++i) {
    const kbd_cpu_warp *w = &cta->warps[i];
    if (w->state == KBD_CPU_W_DONE) kbd_text_append(out, "\n  warp %d has exited", i);
    waiting += w->state == KBD_CPU_W_BLOCKED || (w->state == KBD_CPU_W_READY && w->spinning);
  }
  const int merge = waiting > KBD_CPU_REPORT_WARP_LINES;
  kbd_text what = KBD_TEXT_INIT, next = KBD_TEXT_INIT;
  for (int i = 0; i < cta->nwarps;) {
    kbd_text_truncate(&what, 0);
    if (!kbd_cpu_warp_wait(&cta->warps[i], &what)) {
      ++i;
      continue;
    }
    int j = i + 1;
    for (; merge && j < cta->nwarps; ++j) {
      kbd_text_truncate(&next, 0);
      if (!kbd_cpu_warp_wait(&cta->warps[j], &next) || strcmp(kbd_text_str(&what), kbd_text_str(&next)) != 0) break;
    }
    if (j == i + 1)
      kbd_text_append(out, "\n  warp %d %s", i, kbd_text_str(&what));
    else
      kbd_text_append(out, "\n  warps %d-%d each %s", i, j - 1, kbd_text_str(&what));
    i = j;
  }
  kbd_text_free(&what);
  kbd_text_free(&next);
}

/* A deadlock of group G: every CTA's unfinished warps; in a cluster, CTA by CTA. Recorded at the group's
 * lowest block. */
static inline void kbd_cpu_deadlock(kbd_cpu_group *G, const char *why) {
  kbd_text text = KBD_TEXT_INIT;
  kbd_text_append(&text, "deadlock: %s", why);
  for (int s = 0; s < G->nctas; ++s) {
    const kbd_cpu_cta *cta = G->ctas[s];
    if (G->nctas > 1) kbd_text_append(&text, "\n  cluster CTA %d (block %u,%u,%u):", s, cta->bx, cta->by, cta->bz);
    kbd_cpu_describe(cta, &text);
  }
  kbd_cpu_record(G->ctas[0], KBD_ERR_DEADLOCK, kbd_text_str(&text));
  kbd_text_free(&text);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_REPORT_H */
