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
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* ---- the guard-page registry (the guards themselves: kbd/cpu/shadow.h) ---------------------------------------- */
#define KBD_CPU_GUARDS 4096
typedef struct kbd_cpu_guard_reg {
  pthread_mutex_t mu;
  int state;    /* 0: not set up, 1: on, 2: off (KBD_CPU_GUARD=0 or no handler) */
  unsigned gen; /* bumped whenever a guard is lifted or moved: the per-thread caches below are stale then */
} kbd_cpu_guard_reg;
KBD_WEAK kbd_cpu_guard_reg kbd_cpu_guard_g = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
/* Per host thread, what it last armed for a CTA array (direct-mapped by address): a group start whose array is
 * already guarded for this launch, and the static placement's look-up, take no lock (transpose_cpu starts tens of
 * thousands of small CTAs). */
#define KBD_CPU_GUARD_CACHE 64
typedef struct kbd_cpu_guard_seen {
  uintptr_t owner, at;
  const void *params;
  size_t dyn;
  unsigned gen;
} kbd_cpu_guard_seen;
KBD_WEAK __thread kbd_cpu_guard_seen kbd_cpu_guard_mine[KBD_CPU_GUARD_CACHE];
static inline kbd_cpu_guard_seen *kbd_cpu_guard_cached(uintptr_t owner) {
  return &kbd_cpu_guard_mine[(owner >> 12) % KBD_CPU_GUARD_CACHE];
}
typedef struct kbd_cpu_guard_tab {
  uintptr_t page;                   /* the page size */
  int n;                            /* slots in use (only grows) */
  uintptr_t owner[KBD_CPU_GUARDS];  /* a CTA's shared array; 0: a free slot */
  uintptr_t at[KBD_CPU_GUARDS];     /* its guard page; 0: none armed */
  uint32_t dyn[KBD_CPU_GUARDS];     /* the dynamic bytes it guards */
  uintptr_t launch[KBD_CPU_GUARDS]; /* the launch that armed it (its kbd_cpu_launch.params) */
  /* the handler before kbd's, for faults that are not kbd's: a struct sigaction, kept as bytes so that the table
   * has one layout in every translation unit (one that included a system header before kbd's lacks the type) */
  uint64_t old[32];
} kbd_cpu_guard_tab;
/* Guards need sigaction and MAP_ANONYMOUS: a translation unit whose first system header came before kbd's, without
 * _DEFAULT_SOURCE (kbd/config.h), does without them, as fiber.h does without its stack guards. */
#if defined(SA_SIGINFO) && defined(SA_NODEFER) && defined(MAP_ANONYMOUS)
#define KBD_CPU_HAVE_GUARD 1
KBD_STATIC_ASSERT(sizeof(struct sigaction) <= sizeof(((kbd_cpu_guard_tab *)0)->old), "struct sigaction fits");
#else
#define KBD_CPU_HAVE_GUARD 0
#endif
KBD_WEAK kbd_cpu_guard_tab kbd_cpu_guard_t;

/* The slot of a CTA array (creating it when `make`); -1 when none. Under the registry's lock. */
static inline int kbd_cpu_guard_slot(uintptr_t owner, int make) {
  kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
  int freeslot = -1;
  for (int i = 0; i < T->n; ++i) {
    if (T->owner[i] == owner) return i;
    if (!T->owner[i] && freeslot < 0) freeslot = i;
  }
  if (!make) return -1;
  if (freeslot < 0 && T->n < KBD_CPU_GUARDS) freeslot = T->n, __atomic_store_n(&T->n, T->n + 1, __ATOMIC_RELEASE);
  if (freeslot >= 0) T->owner[freeslot] = owner;
  return freeslot;
}

/* A launch ends (kbd/cpu/launch.h): the guards it armed go. Within a launch every CTA of a buffer has the same
 * dynamic size, so a guard stays up from the buffer's first CTA to the end of the launch; the next launch's first
 * fill of the buffer (kbd/cpu/sched.h) may be larger and must not run into it. */
static inline void kbd_cpu_guard_launch_end(const void *params) {
  if (__atomic_load_n(&kbd_cpu_guard_g.state, __ATOMIC_ACQUIRE) != 1) return;
  kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
  pthread_mutex_lock(&kbd_cpu_guard_g.mu);
  for (int k = 0; k < T->n; ++k)
    if (T->launch[k] == (uintptr_t)params) {
      if (T->at[k]) mprotect((void *)T->at[k], T->page, PROT_READ | PROT_WRITE);
      __atomic_store_n(&T->at[k], (uintptr_t)0, __ATOMIC_RELEASE);
      T->launch[k] = 0;
    }
  __atomic_fetch_add(&kbd_cpu_guard_g.gen, 1u, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&kbd_cpu_guard_g.mu);
}

/* Lift a CTA's guard (static arrays need its page, or the array is about to be freed); `drop` frees the slot. */
static inline void kbd_cpu_guard_lift(const unsigned char *smem, int drop) {
  if (kbd_cpu_guard_g.state != 1) return;
  pthread_mutex_lock(&kbd_cpu_guard_g.mu);
  const int k = kbd_cpu_guard_slot((uintptr_t)smem, 0);
  if (k >= 0) {
    kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
    if (T->at[k]) mprotect((void *)T->at[k], T->page, PROT_READ | PROT_WRITE);
    __atomic_store_n(&T->at[k], (uintptr_t)0, __ATOMIC_RELEASE);
    if (drop) T->owner[k] = 0;
  }
  __atomic_fetch_add(&kbd_cpu_guard_g.gen, 1u, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&kbd_cpu_guard_g.mu);
}

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

/* ---- a wait whose parity never flipped (issue 31 item 4) ------------------------------------------------------
 * kbd_cpu_mbar_observe (kbd/cpu/mbar.h) flags a successful wait that found, at the same call site, the same phase
 * completion the warp had already consumed there (bit KBD_CPU_OBS_STALE of kbd_cpu_mbar.obs). On a barrier that is
 * re-armed - one a tcgen05.commit completed (an accumulator's), or one past its second phase - that wait returned
 * at once where it was meant to wait for the next phase, and what the machine reports next (a data race on what the
 * warp read, a phase-order or deadlock report naming the warps downstream) is its consequence: the report names
 * the wait first. A one-shot barrier waited for in a loop never qualifies. Appends the explanation and returns 1
 * (with the wait's site) when there is such a wait in the CTA. */
#define KBD_CPU_OBS_STALE 0x80000000u
static inline int kbd_cpu_stale_wait(const kbd_cpu_cta *cta, kbd_text *out, const char **file, int *line) {
  for (int i = 0; i < cta->nmbars; ++i) {
    const kbd_cpu_mbar *m = &cta->mbars[i];
    int committed = 0;
    for (int u = 0; u < KBD_CPU_MAX_WARPS && !committed; ++u)
      committed = m->tcq_done[u] != 0;
    if (!m->live || !(committed || m->phase >= 2u)) continue;
    for (int u = 0; u < cta->nwarps; ++u) {
      if (!(m->obs[u] & KBD_CPU_OBS_STALE)) continue;
      const uint32_t n = (m->obs[u] & ~KBD_CPU_OBS_STALE) - 1u; /* the phase it consumed twice */
      kbd_text_append(out,
                      "warp %d's wait here for parity %u of the mbarrier at shared byte %zu (initialised at %s:%d) "
                      "returned at once: it had already consumed phase %u of that barrier at this same wait, and the "
                      "barrier has not moved on since, so the parity did not flip and the wait did not wait for "
                      "phase %u (%s). The warp went on with stale data. Flip the parity each time the phase is "
                      "consumed (e.g. (t / buffers) & 1 for a ring of buffers).\n  What the machine saw next: ",
                      u, n & 1u, m->off, m->file, m->line, n, n + 1u,
                      committed ? "the next tcgen05.commit" : "the next arrivals");
      *file = m->obs_file[u];
      *line = m->obs_line[u];
      return 1;
    }
  }
  return 0;
}

/* Report a fault in the running warp and stop it; the launch returns `code`. Never returns. Strings among the
 * arguments that the caller built for this message are kept by the launch (kbd_cpu_keep): this function does
 * not return to free them. */
KBD_NORETURN KBD_PRINTF(4, 5) static inline void kbd_cpu_fault(kbd_code code, const char *file, int line,
                                                               const char *fmt, ...) {
  kbd_text text = KBD_TEXT_INIT;
  kbd_cpu_warp *w = kbd_cpu_cur;
  const char *sfile = NULL;
  int sline = 0;
  kbd_text stale = KBD_TEXT_INIT;
  if (w && (code == KBD_ERR_RACE || code == KBD_ERR_MBARRIER) && kbd_cpu_stale_wait(w->cta, &stale, &sfile, &sline))
    kbd_text_append(&text, "%s:%d: %s", sfile, sline, kbd_text_str(&stale));
  kbd_text_free(&stale);
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

/* ---- code address -> file:line (raw shared-memory faults: kbd/cpu/shadow.h) -------------------------------------
 * A raw pointer access passes no kbd call, so the only record of where it is in the kernel is the faulting
 * instruction's address. Its object and load base come from /proc/self/maps (the first mapping of the file at
 * offset 0; a position-independent object, ELF e_type ET_DYN, is looked up relative to it), and its line from the
 * object's debug information through addr2line (binutils). Without -g (or without addr2line) there is no line:
 * *line stays 0 and `file` names the object and the offset. Runs in the fault handler, but synchronously in the
 * faulting fiber: the kernel code it interrupted holds no lock of the C library. */
static inline int kbd_cpu_code_object(uintptr_t pc, char *path, size_t cap, uintptr_t *rel) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return 0;
  char ln[4352];
  int found = 0;
  path[0] = '\0';
  while (!found && fgets(ln, sizeof ln, f)) {
    unsigned long lo, hi;
    char *p = NULL;
    if (sscanf(ln, "%lx-%lx", &lo, &hi) != 2 || pc < lo || pc >= hi) continue;
    if (!(p = strchr(ln, '/'))) break;
    p[strcspn(p, "\n")] = '\0';
    snprintf(path, cap, "%s", p);
    found = 1;
  }
  uintptr_t base = 0;
  rewind(f);
  while (found && fgets(ln, sizeof ln, f)) {
    unsigned long lo, hi, off;
    char perms[8], *p = strchr(ln, '/');
    if (!p || sscanf(ln, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) != 4 || off != 0) continue;
    p[strcspn(p, "\n")] = '\0';
    if (strcmp(p, path) == 0) {
      base = lo;
      break;
    }
  }
  fclose(f);
  if (!found || !base) return 0;
  uint16_t type = 0; /* e_type: the mapping at offset 0 starts with the ELF header */
  memcpy(&type, (const void *)(base + 16), sizeof type);
  *rel = type == 3 /* ET_DYN */ ? pc - base : pc;
  return 1;
}

static inline int kbd_cpu_code_line(uintptr_t pc, char *file, size_t cap, int *line) {
  char obj[4096], arg[32], out[4608];
  uintptr_t rel = 0;
  *line = 0;
  if (!kbd_cpu_code_object(pc, obj, sizeof obj, &rel)) return 0;
  snprintf(file, cap, "%s+0x%lx", obj, (unsigned long)rel);
  snprintf(arg, sizeof arg, "0x%lx", (unsigned long)rel);
  int fd[2];
  if (pipe(fd) != 0) return 0;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    execlp("addr2line", "addr2line", "-e", obj, arg, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while (pid > 0 && n + 1 < sizeof out && (r = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
    n += (size_t)r;
  close(fd[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  out[n] = '\0';
  char *colon = strrchr(out, ':');
  if (!n || !colon || out[0] == '?' || colon[1] < '1' || colon[1] > '9') return 0;
  *colon = '\0';
  *line = atoi(colon + 1);
  snprintf(file, cap, "%s", out);
  return 1;
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
  const char *sfile = NULL;
  int sline = 0;
  kbd_text stale = KBD_TEXT_INIT;
  for (int s = 0; s < G->nctas && !sfile; ++s)
    if (kbd_cpu_stale_wait(G->ctas[s], &stale, &sfile, &sline))
      kbd_text_append(&text, "%s:%d: %s", sfile, sline, kbd_text_str(&stale));
  kbd_text_free(&stale);
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
