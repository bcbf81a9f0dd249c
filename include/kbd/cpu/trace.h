/* kbd/cpu/trace.h - KBD_CPU_TRACE: the scheduling points of one block, as a log (docs/debugging.md).
 *
 *   KBD_CPU_TRACE=<x>[,<y>[,<z>]]   trace block (x, y, z) of every launch (missing coordinates are 0)
 *   KBD_CPU_TRACE_FILE=<path>       write the log there (opened once, at the first traced launch, truncated)
 *                                   instead of stderr
 *
 * One line per event, in the order the machine ran them:
 *
 *   kbd-trace k block (0,0,0) #3: warp 1 stop bar.sync 1 (32 of 64 threads) at k.cu:20
 *   kbd-trace k block (0,0,0) #4: warp 0 completes bar 1 (64 threads) at k.cu:20, releases warps 1
 *   kbd-trace k block (0,0,0) #5: warp 0 yield
 *   kbd-trace k block (0,0,0) #6: warp 1 run
 *
 * Events: `run` (the warp gets the host thread), `stop <what> at file:line` (it blocks on a
 * barrier, an mbarrier phase or another wait object - named as a deadlock report names it - or polls
 * memory), `yield` (a scheduling point where it stays ready, e.g. right after completing a barrier),
 * `exit`, `fault`, and the completions that release waiting warps: `completes bar ...` by the arriving warp,
 * `mbarrier ... phase n complete` (by an arrival or a transaction's bytes) and `cluster barrier phase n
 * complete` (kbd/cpu/cluster.h; the arrival that completes it may come from another CTA of the cluster). A warp's own
 * sequence of stops is its program's; the interleaving between warps is the schedule (KBD_CPU_SEED).
 *
 * Cost when off: the launch reads the variable once; each scheduling point compares its block with the
 * traced one (one predictable branch).
 */
#ifndef KBD_CPU_TRACE_H
#define KBD_CPU_TRACE_H

#include "shadow.h" /* kbd_cpu_smem_where */

#if KBD_MODE_CPU

/* The log file, shared by every launch of the process. */
typedef struct kbd_cpu_trace_out {
  pthread_mutex_t mu;
  FILE *f;
  int opened;
} kbd_cpu_trace_out;
KBD_WEAK kbd_cpu_trace_out kbd_cpu_trace_log = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/* Is the CTA the traced block of its launch? The launch's `trace_block1` is 1 + the traced linear block, 0
 * when tracing is off (kbd_cpu_trace_setup, at the launch's first group). */
#define KBD_CPU_TRACED(cta) KBD_UNLIKELY((cta)->L->trace_block1 == (cta)->linear + 1ull)

/* Read KBD_CPU_TRACE for the launch; called by every group start, does the work once per launch. */
static inline void kbd_cpu_trace_setup(kbd_cpu_launch *L) {
  if (__atomic_load_n(&L->trace_read, __ATOMIC_ACQUIRE)) return;
  pthread_mutex_lock(&L->mu);
  if (!L->trace_read) {
    const char *s = getenv("KBD_CPU_TRACE");
    unsigned long long c[3] = {0, 0, 0};
    int n = 0, ok = s && *s;
    while (ok && n < 3) {
      char *end = NULL;
      c[n++] = strtoull(s, &end, 10);
      ok = end != s && (*end == '\0' || *end == ',');
      if (!ok || *end == '\0') break;
      s = end + 1;
    }
    L->trace_block1 = 0;
    if (ok && c[0] < L->cfg.grid.x && c[1] < L->cfg.grid.y && c[2] < L->cfg.grid.z)
      L->trace_block1 =
          1ull + c[0] + (unsigned long long)L->cfg.grid.x * (c[1] + (unsigned long long)L->cfg.grid.y * c[2]);
    L->trace_seq = 0;
    __atomic_store_n(&L->trace_read, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&L->mu);
}

/* One event line of the running block (only the traced block's host thread logs, one line at a time). */
KBD_PRINTF(2, 3) static inline void kbd_cpu_trace_emit(kbd_cpu_cta *cta, const char *fmt, ...) {
  kbd_text text = KBD_TEXT_INIT;
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(&text, fmt, ap);
  va_end(ap);
  kbd_cpu_trace_out *o = &kbd_cpu_trace_log;
  pthread_mutex_lock(&o->mu);
  if (!o->opened) {
    const char *path = getenv("KBD_CPU_TRACE_FILE");
    o->f = path && *path ? fopen(path, "w") : NULL;
    if (path && *path && !o->f)
      fprintf(stderr, "kbd: KBD_CPU_TRACE_FILE=%s cannot be opened: tracing to stderr\n", path);
    o->opened = 1;
  }
  FILE *f = o->f ? o->f : stderr;
  fprintf(f, "kbd-trace %s block (%u,%u,%u) #%lu: %s\n", cta->L->name, cta->bx, cta->by, cta->bz, cta->L->trace_seq++,
          kbd_text_str(&text));
  fflush(f); /* a crash or an abort must not lose the events that led to it */
  pthread_mutex_unlock(&o->mu);
  kbd_text_free(&text);
}

/* " a b c": the warps of a mask; room for all 32. */
#define KBD_CPU_WARP_LIST_CAP                                                                                          \
  sizeof " 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31"
static inline const char *kbd_cpu_trace_warps(uint32_t mask, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < 32 && n < cap; ++i)
    if (mask & (1u << i)) n += (size_t)snprintf(buf + n, cap - n, " %d", i);
  if (!mask) snprintf(buf, cap, " none");
  return buf;
}

/* The warp gets the host thread (sched.h, before the switch). */
static inline void kbd_cpu_trace_run(kbd_cpu_warp *w) { kbd_cpu_trace_emit(w->cta, "warp %d run", w->id); }

/* The warp gave the host thread back (sched.h, after the switch): what it stopped at. */
static inline void kbd_cpu_trace_stop(kbd_cpu_warp *w) {
  kbd_cpu_cta *cta = w->cta;
  if (w->state == KBD_CPU_W_DONE) {
    kbd_cpu_trace_emit(cta, "warp %d exit", w->id);
  } else if (w->state == KBD_CPU_W_FAULTED) {
    kbd_cpu_trace_emit(cta, "warp %d fault", w->id);
  } else if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_BAR) {
    const kbd_cpu_barrier *b = &cta->bars[w->wait_bar];
    kbd_cpu_trace_emit(cta, "warp %d stop bar.sync %d (%d of %d threads) at %s:%d", w->id, w->wait_bar, b->arrived,
                       b->expected, w->wait_file, w->wait_line);
  } else if (w->state == KBD_CPU_W_BLOCKED && w->wait_kind == KBD_CPU_WAIT_OBJ) {
    kbd_text what = KBD_TEXT_INIT;
    if (w->wait_desc)
      w->wait_desc(w, &what);
    else
      kbd_text_puts(&what, "a wait object");
    kbd_cpu_trace_emit(cta, "warp %d stop wait for %s at %s:%d", w->id, kbd_text_str(&what), w->wait_file,
                       w->wait_line);
    kbd_text_free(&what);
  } else if (w->spinning) {
    kbd_cpu_trace_emit(cta, "warp %d stop poll at %s:%d", w->id, w->wait_file, w->wait_line);
  } else {
    kbd_cpu_trace_emit(cta, "warp %d yield", w->id);
  }
}

/* A named barrier instance completes at the running warp's arrival (wait.h), before it releases `waiters`. */
static inline void kbd_cpu_trace_bar_done(kbd_cpu_warp *w, int id, int threads, uint32_t waiters, const char *file,
                                          int line) {
  char ws[KBD_CPU_WARP_LIST_CAP];
  kbd_cpu_trace_emit(w->cta, "warp %d completes bar %d (%d threads) at %s:%d, releases warps%s", w->id, id, threads,
                     file, line, kbd_cpu_trace_warps(waiters, ws, sizeof ws));
}

/* An mbarrier phase completes (mbar.h), before its waiters are woken; the running warp caused it. */
static inline void kbd_cpu_trace_mbar_done(kbd_cpu_cta *cta, size_t off, uint32_t phase, uint32_t waiters) {
  char ws[KBD_CPU_WARP_LIST_CAP];
  kbd_text where = KBD_TEXT_INIT;
  kbd_cpu_smem_where(cta, off, &where);
  kbd_cpu_trace_emit(cta, "warp %d: mbarrier at %s phase %u (parity %u) complete, wakes warps%s",
                     kbd_cpu_cur ? kbd_cpu_cur->id : -1, kbd_text_str(&where), phase, phase & 1u,
                     kbd_cpu_trace_warps(waiters, ws, sizeof ws));
  kbd_text_free(&where);
}

/* The one-line hooks of wait.h and mbar.h. */
#define KBD_CPU_TRACE_BAR_DONE(w, id, b, file, line)                                                                   \
  do {                                                                                                                 \
    if (KBD_CPU_TRACED((w)->cta)) kbd_cpu_trace_bar_done(w, id, (b)->expected, (b)->waiters, file, line);              \
  } while (0)
#define KBD_CPU_TRACE_MBAR_DONE(cta, m)                                                                                \
  do {                                                                                                                 \
    if (KBD_CPU_TRACED(cta)) kbd_cpu_trace_mbar_done(cta, (m)->off, (m)->phase - 1u, (m)->waiters);                    \
  } while (0)

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TRACE_H */
