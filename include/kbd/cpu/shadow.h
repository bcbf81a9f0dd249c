/* kbd/cpu/shadow.h - shadow state of shared memory and the race checker.
 *
 * Memory state lives BESIDE the data, never in it: every shared-memory byte has a shadow entry saying
 * whether it was written in this CTA, by which warp, at which point of that warp's history (a clock),
 * by which proxy (generic stores or the async proxy of TMA/MMA), whether an asynchronous write to it is
 * still pending, which warps read it since, and where. So any value a kernel stores is just data (no
 * poison value can be mistaken for "never written"), and a read of a byte nothing wrote fails whatever
 * the bytes hold.
 *
 * Race checking is happens-before, not schedule luck. Each warp carries a vector clock over the warps of
 * its group (the CTAs of one cluster; one CTA without clusters): its own entry counts its release operations (barrier
 * arrivals, later mbarrier arrivals and commits); clk[u] is the latest clock of warp u whose earlier accesses are
 * ordered before this warp's current point. A barrier instance joins the clocks of the warps that arrive (release) and
 * hands the join to the warps that wait on it (acquire). Two accesses to one byte, at least one a write, by warps w and
 * u race when the earlier one's stamp is not covered by the later warp's clock: whatever order the scheduler happened
 * to pick, the GPU may pick the other one. The checks (FastTrack style, per byte): read by w:  last writer x != w with
 * stamp > clk_w[x]                 -> read-after-write race write by w: last writer x != w with stamp > clk_w[x] ->
 * write-after-write race a reader u != w since that write with stamp > clk_w[u]   -> write-after-read race Reads since
 * the last write are a warp bitmask plus, per warp, the clock and site of its last read of the byte, so read-shared
 * data costs nothing extra however many warps read it.
 *
 * Distributed shared memory: a warp of another CTA of the cluster reads and writes this CTA's shadow with
 * its group index, so the same checks order it; its reads are kept as "the last remote read" of a byte.
 *
 * Stamps are never reset between CTAs: a group starts its clocks past every stamp its shadows hold, so a
 * stamp below `base` is "from an earlier CTA" = never written here. Cost: no per-CTA clearing at all;
 * the shadow is one lazily-touched mapping per cached CTA. Within a warp's 32 lanes nothing is checked:
 * the lanes of one warp instruction are ordered by the instruction itself.
 */
#ifndef KBD_CPU_SHADOW_H
#define KBD_CPU_SHADOW_H

#include "report.h"

#if KBD_MODE_CPU
#if defined(__GLIBC__)
#include <execinfo.h>
#endif

/* The per-access checks are inlined into the access (the common, clean case is a few compares); reports
 * are out of line. */
#define KBD_CPU_HOT __attribute__((always_inline))

/* A stamp of base - 1 (kbd_cpu_shadow_start leaves it free: earlier CTAs' stamps are at most base - 2) marks bytes a
 * raw pointer store wrote (found when a kbd access meets never-written bytes that no longer hold the fill pattern of
 * kbd_cpu_poison): written, by nobody in particular, and ordered before everything - raw accesses carry no clock. */
#define KBD_CPU_SH_LIVE(c, base) ((c) + 1u >= (base))

/* The fill pattern's byte at shared offset b (kbd_cpu_poison: 0x7FBF words, phase = offset parity; the CTA's array
 * is 1024-aligned, so offset parity is address parity). */
static inline unsigned char kbd_cpu_fill_byte(size_t b) { return (b & 1u) ? 0x7F : 0xBF; }

/* winfo bits: the writer warp's group index (kbd_cpu_warp.gid) in bits 0-8, then */
#define KBD_CPU_SH_ASYNC 0x200u   /* written by the async proxy (TMA); generic reads need the completion */
#define KBD_CPU_SH_PENDING 0x400u /* an asynchronous write has not completed yet: reading it is a bug */
#define KBD_CPU_SH_WARP 0x1ffu

/* ---- call sites ---------------------------------------------------------------------------------------- */

/* Interned call sites: a race report names the EARLIER access's file:line, so the shadow keeps a 16-bit
 * site id per access instead of a pointer and a line. One table for the process (weak: one instance
 * across translation units); a warp's last site is cached, so a loop of accesses interns once. */
#define KBD_CPU_MAX_SITES 65535
typedef struct kbd_cpu_site {
  const char *file;
  int line;
} kbd_cpu_site;
typedef struct kbd_cpu_sites {
  pthread_mutex_t mu;
  int n;
  kbd_cpu_site v[KBD_CPU_MAX_SITES + 1];
} kbd_cpu_sites;
KBD_WEAK kbd_cpu_sites kbd_cpu_sites_g = {PTHREAD_MUTEX_INITIALIZER, 0, {{NULL, 0}}};

static inline uint16_t kbd_cpu_site_id(kbd_cpu_warp *w, const char *file, int line) {
  const unsigned slot = (unsigned)line & 15u;
  if (w->sites[slot].file == file && w->sites[slot].line == line) return w->sites[slot].id;
  kbd_cpu_sites *S = &kbd_cpu_sites_g;
  uint16_t id = 0; /* 0: "a site the table had no room for" */
  pthread_mutex_lock(&S->mu);
  for (int i = S->n; i >= 1; --i) /* newest first: a kernel's sites are usually the latest interned */
    if (S->v[i].line == line && S->v[i].file == file) {
      id = (uint16_t)i;
      break;
    }
  if (!id && S->n < KBD_CPU_MAX_SITES) {
    id = (uint16_t)++S->n;
    S->v[id].file = file;
    S->v[id].line = line;
  }
  pthread_mutex_unlock(&S->mu);
  w->sites[slot].file = file;
  w->sites[slot].line = line;
  w->sites[slot].id = id;
  return id;
}

static inline kbd_cpu_site kbd_cpu_site_of(uint16_t id) {
  kbd_cpu_site s = {"<unknown site>", 0};
  if (id) {
    pthread_mutex_lock(&kbd_cpu_sites_g.mu);
    s = kbd_cpu_sites_g.v[id];
    pthread_mutex_unlock(&kbd_cpu_sites_g.mu);
  }
  return s;
}

/* ---- the shadow mapping --------------------------------------------------------------------------------- */

/* wclk, rmask, rrclk: 4 B; wsite, winfo, rrwho, rrsite: 2 B; per warp rclk 4 B + rsite 2 B; per 16-byte unit its
 * summary 16 B and urmask 4 B, per warp urclk 4 B + ursite 2 B: 50 MB for 227 KiB. The unit records come first after
 * the 64-byte alignment, so four units' summaries share a line.
 * calloc of that size is fresh zero pages from the kernel, so only the pages a kernel's accesses touch cost
 * memory. The arrays start on a 64-byte line: glibc hands a block this large out 16 bytes into its mapping, which
 * split each 16-byte unit's 64 bytes of wclk over two cache lines (the MMA's per-unit checks and hashes are bound
 * by those loads). */
static inline int kbd_cpu_shadow_map(kbd_cpu_shadow *sh) {
  const size_t B = KBD_MAX_SMEM_BYTES;
  const size_t U = B / 16;
  const size_t bytes =
      B * (4 + 4 + 4 + 2 + 2 + 2 + 2) + (size_t)KBD_CPU_MAX_WARPS * B * (4 + 2) + U * (16 + 4 + KBD_CPU_MAX_WARPS * 6);
  void *m = calloc(1, bytes + 64);
  if (!m) return 0;
  char *p = (char *)m + (64u - (uintptr_t)m % 64u) % 64u;
  sh->map = m;
  sh->unit = (kbd_cpu_shadow_unit *)(void *)p, p += 16 * U;
  sh->wclk = (uint32_t *)(void *)p, p += 4 * B;
  sh->rmask = (uint32_t *)(void *)p, p += 4 * B;
  sh->rrclk = (uint32_t *)(void *)p, p += 4 * B;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->rclk[u] = (uint32_t *)(void *)p, p += 4 * B;
  sh->urmask = (uint32_t *)(void *)p, p += 4 * U;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->urclk[u] = (uint32_t *)(void *)p, p += 4 * U;
  sh->wsite = (uint16_t *)(void *)p, p += 2 * B;
  sh->winfo = (uint16_t *)(void *)p, p += 2 * B;
  sh->rrwho = (uint16_t *)(void *)p, p += 2 * B;
  sh->rrsite = (uint16_t *)(void *)p, p += 2 * B;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->rsite[u] = (uint16_t *)(void *)p, p += 2 * B;
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    sh->ursite[u] = (uint16_t *)(void *)p, p += 2 * U;
  return 1;
}

/* Every change of the write state (wclk, winfo, wsite) of bytes [off, off + n) counts in their units' gen: an MMA
 * that finds a unit's count unchanged at its retirement knows the unit's write state is the one it checked and hashed
 * at the issue, without loading it again (kbd_cpu_mma_retire_read). A count wraps after 2^32 writes of one unit, far
 * more than can happen while one MMA is in flight. */
static inline void kbd_cpu_shadow_wrote(kbd_cpu_shadow *sh, size_t off, size_t n) {
  for (size_t u = off / 16; u <= (off + n - 1) / 16; ++u)
    ++sh->unit[u].gen;
}
/* The same for a write that gave every byte of [off, off + n) the write state (c, info, site): the units it covers
 * whole get it as their summary. */
static inline void kbd_cpu_shadow_wrote_as(kbd_cpu_shadow *sh, size_t off, size_t n, uint32_t c, uint16_t info,
                                           uint16_t site) {
  for (size_t u = off / 16; u <= (off + n - 1) / 16; ++u) {
    kbd_cpu_shadow_unit *x = &sh->unit[u];
    ++x->gen;
    if (16 * u >= off && 16 * u + 16 <= off + n) {
      x->sgen = x->gen;
      x->wclk = c;
      x->winfo = info;
      x->wsite = site;
    }
  }
}
/* An asynchronous copy's bytes [off, off + n) were delivered: their winfo became `info` (kbd/cpu/mbar.h). A unit it
 * covers whole whose summary was current keeps it current with the new info. */
static inline void kbd_cpu_shadow_delivered(kbd_cpu_shadow *sh, size_t off, size_t n, uint16_t info) {
  for (size_t u = off / 16; u <= (off + n - 1) / 16; ++u) {
    kbd_cpu_shadow_unit *x = &sh->unit[u];
    const int keep = x->sgen == x->gen && 16 * u >= off && 16 * u + 16 <= off + n;
    ++x->gen;
    if (keep) {
      x->sgen = x->gen;
      x->winfo = info;
    }
  }
}
/* The write state of unit u as one (clock, info, site) when its bytes' are all equal to it (the summary is current):
 * 1 and the three, else 0. */
static inline int kbd_cpu_shadow_unit_uniform(const kbd_cpu_shadow *sh, size_t u, uint32_t *c, uint32_t *info,
                                              uint16_t *site) {
  const kbd_cpu_shadow_unit *x = &sh->unit[u];
  if (x->sgen != x->gen) return 0;
  *c = x->wclk;
  *info = x->winfo;
  *site = x->wsite;
  return 1;
}

/* The unit read records of the warps in `bits` (a subset of urmask[U]) become per-byte records of unit U's 16 bytes, as
 * if each warp had read them byte by byte then: afterwards the per-byte state is the whole truth for them. */
static inline void kbd_cpu_shadow_unit_expand(kbd_cpu_shadow *sh, size_t U, uint32_t bits) {
  sh->urmask[U] &= ~bits;
  uint32_t *rmask = sh->rmask + 16 * U;
  for (int b = 0; b < 16; ++b)
    rmask[b] |= bits;
  while (bits) {
    const int u = __builtin_ctz(bits);
    bits &= bits - 1;
    const uint32_t c = sh->urclk[u][U];
    const uint16_t site = sh->ursite[u][U];
    uint32_t *rclk = sh->rclk[u] + 16 * U;
    uint16_t *rsite = sh->rsite[u] + 16 * U;
    for (int b = 0; b < 16; ++b) {
      rclk[b] = c;
      rsite[b] = site;
    }
  }
}

static inline int kbd_cpu_shadow_init(kbd_cpu_shadow *sh) {
  sh->base = 1;
  return kbd_cpu_shadow_map(sh);
}

/* ---- guard pages: raw pointer accesses past the dynamic region ---------------------------------------------------
 * A raw pointer store (`buf[i] = x` through kbd_dynamic_smem()) passes no kbd call, so only the MMU can see it. The
 * first whole page after the launch's dynamic bytes is made inaccessible (mprotect PROT_NONE) while the CTA runs, and
 * static arrays are placed after it; with 0 dynamic bytes that is the array's first page, so kbd_dynamic_smem()
 * points at nothing usable. A fault on a guard page by a running warp becomes a KBD_ERR_BOUNDS report at the faulting
 * instruction's file:line (kbd_cpu_code_line: needs -g). Overruns that stay inside the last partial page of the
 * region are not caught (docs/cpu-machine.md, "What the machine cannot see"). Cost: per launch, one mprotect pair
 * per CTA array it uses (set at the array's first CTA, lifted at the end of the launch: kbd_cpu_guard_launch_end)
 * and a sigaction query with it; a group start on an array already guarded for the launch looks at a per-thread
 * cache only (kbd_cpu_guard_mine); nothing per access.
 * KBD_CPU_GUARD=0 turns it off (a program with its own SIGSEGV handling).
 *
 * The registry is process-wide: the handler finds a faulting address in it without a lock. A fault on a guard
 * page by machine code outside a kernel (a fill of a larger dynamic region on a recycled array whose guard a
 * launch that did not end through kbd/cpu/launch.h left up) lifts the guard and retries the access. */
/* The guard page a CTA's dynamic size calls for (its address; 0: none): the first whole page after the dynamic
 * bytes, when it and a page after it fit in the array. With 0 dynamic bytes that is the array's first page, where
 * kbd_dynamic_smem() points: nothing usable (the GPU's pointer then names the end of the static arrays). */
static inline uintptr_t kbd_cpu_guard_want(const kbd_cpu_cta *cta) {
  const uintptr_t pg = kbd_cpu_guard_t.page, lo = (uintptr_t)cta->smem;
  if (!pg) return 0;
  const uintptr_t g = (lo + cta->dyn_bytes + pg - 1) / pg * pg;
  return g + 2 * pg <= lo + KBD_MAX_SMEM_BYTES ? g : 0;
}

/* The CTA's armed guard page (its address; 0: none). */
static inline uintptr_t kbd_cpu_guard_of(const kbd_cpu_cta *cta) {
  if (__atomic_load_n(&kbd_cpu_guard_g.state, __ATOMIC_ACQUIRE) != 1) return 0;
  const kbd_cpu_guard_seen *e = kbd_cpu_guard_cached((uintptr_t)cta->smem);
  if (e->owner == (uintptr_t)cta->smem && e->gen == __atomic_load_n(&kbd_cpu_guard_g.gen, __ATOMIC_ACQUIRE))
    return e->at;
  pthread_mutex_lock(&kbd_cpu_guard_g.mu);
  const int k = kbd_cpu_guard_slot((uintptr_t)cta->smem, 0);
  const uintptr_t at = k >= 0 ? kbd_cpu_guard_t.at[k] : 0;
  pthread_mutex_unlock(&kbd_cpu_guard_g.mu);
  return at;
}

#if KBD_CPU_HAVE_GUARD
/* The report of a raw access at address a, on the guard page of the CTA array `owner` with `dyn` dynamic bytes. */
KBD_NORETURN static inline void kbd_cpu_guard_report(kbd_cpu_warp *w, uintptr_t a, uintptr_t owner, uint32_t dyn,
                                                     uintptr_t pc, int write) {
  char file[4608], kobj[4096] = "", obj[4096] = "";
  int line = 0;
  uintptr_t rel;
  const int kown = kbd_cpu_code_object((uintptr_t)w->cta->L->entry, kobj, sizeof kobj, &rel);
  if (!kown || (kbd_cpu_code_object(pc, obj, sizeof obj, &rel) && strcmp(obj, kobj) == 0))
    kbd_cpu_code_line(pc, file, sizeof file, &line);
  if (!line) { /* a library function (memcpy, ...) faulted: the first caller in the kernel's own object */
    void *fr[64];
    int nfr = 0;
#if defined(__GLIBC__)
    nfr = backtrace(fr, 64);
#endif
    if (kown)
      for (int i = 0, past = 0; i < nfr && !line; ++i) {
        past = past || (uintptr_t)fr[i] == pc;
        if (past && (uintptr_t)fr[i] != pc && kbd_cpu_code_object((uintptr_t)fr[i] - 1, obj, sizeof obj, &rel) &&
            strcmp(obj, kobj) == 0)
          kbd_cpu_code_line((uintptr_t)fr[i] - 1, file, sizeof file, &line);
      }
    if (!line) kbd_cpu_code_line(pc, file, sizeof file, &line);
  }
  const char *how = write < 0 ? "accesses" : write ? "writes" : "reads";
  if (!dyn)
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                  "a raw pointer %s byte %lld of kbd_dynamic_smem(), but the launch requested 0 bytes of dynamic "
                  "shared memory (kbd_cfg.smem_bytes): the pointer points at nothing usable%s",
                  how, (long long)(a - owner),
                  line ? "" : " (the faulting code has no line information: build with -g for its file:line)");
  kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                "a raw pointer %s shared-memory byte %lld, past the %u bytes of dynamic shared memory the launch "
                "requested (kbd_cfg.smem_bytes): request enough at the launch, or keep the index below it%s",
                how, (long long)(a - owner), dyn,
                line ? "" : " (the faulting code has no line information: build with -g for its file:line)");
}

static inline void kbd_cpu_guard_segv(int sig, siginfo_t *si, void *uc) {
  kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
  const uintptr_t a = (uintptr_t)si->si_addr, pg = T->page;
  const uintptr_t p = a / pg * pg;
  const int n = __atomic_load_n(&T->n, __ATOMIC_ACQUIRE);
  int k = -1;
  for (int i = 0; i < n && k < 0; ++i)
    if (p && __atomic_load_n(&T->at[i], __ATOMIC_ACQUIRE) == p) k = i;
  if (k < 0) { /* not kbd's: hand it to the previous handler, or die as without kbd */
    struct sigaction old;
    memcpy(&old, T->old, sizeof old);
    if (old.sa_flags & SA_SIGINFO) {
      old.sa_sigaction(sig, si, uc);
    } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      old.sa_handler(sig);
    } else {
      signal(sig, SIG_DFL); /* the access faults again and ends the process as it would have */
    }
    return;
  }
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w) { /* the machine itself, between kernels: lift the guard and retry */
    mprotect((void *)p, pg, PROT_READ | PROT_WRITE);
    __atomic_store_n(&T->at[k], (uintptr_t)0, __ATOMIC_RELEASE);
    __atomic_fetch_add(&kbd_cpu_guard_g.gen, 1u, __ATOMIC_ACQ_REL);
    return;
  }
  int write = -1;
#if defined(__x86_64__)
  write = (int)((((const ucontext_t *)uc)->uc_mcontext.gregs[19] >> 1) & 1); /* REG_ERR: page-fault code, bit 1 */
#endif
  uintptr_t pc = 0;
#if defined(__x86_64__)
  pc = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[16]; /* REG_RIP */
#elif defined(__aarch64__)
  pc = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#endif
  /* SA_NODEFER: SIGSEGV stays unblocked, since the report switches to the scheduler and never returns here */
  kbd_cpu_guard_report(w, a, T->owner[k], T->dyn[k], pc, write);
}

/* Once per process: the page size and the handler. Returns 1 when guards are on. */
static inline int kbd_cpu_guard_on(void) {
  int st = __atomic_load_n(&kbd_cpu_guard_g.state, __ATOMIC_ACQUIRE);
  if (KBD_LIKELY(st)) return st == 1;
  pthread_mutex_lock(&kbd_cpu_guard_g.mu);
  if (!(st = kbd_cpu_guard_g.state)) {
    const char *e = getenv("KBD_CPU_GUARD");
    kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
    st = 2;
    T->page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (!(e && strcmp(e, "0") == 0)) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = kbd_cpu_guard_segv;
      sa.sa_flags = SA_SIGINFO | SA_NODEFER;
      sigemptyset(&sa.sa_mask);
      struct sigaction old;
      if (sigaction(SIGSEGV, &sa, &old) == 0) {
        memcpy(T->old, &old, sizeof old);
        st = 1;
      }
    }
    __atomic_store_n(&kbd_cpu_guard_g.state, st, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&kbd_cpu_guard_g.mu);
  return st == 1;
}

/* A CTA starts (kbd_cpu_shadow_start): its guard page after the dynamic region. The handler is put back first if
 * something replaced it since (a test framework's per-test handlers do): kbd's then chains to that one. Done once
 * per array and launch on each host thread (the cache); later group starts on the array return at the cache. */
static inline void kbd_cpu_guard_arm(kbd_cpu_cta *cta) {
  if (!kbd_cpu_guard_on()) return;
  kbd_cpu_guard_seen *e = kbd_cpu_guard_cached((uintptr_t)cta->smem);
  if (e->owner == (uintptr_t)cta->smem && e->params == cta->L->params && e->dyn == cta->dyn_bytes &&
      e->gen == __atomic_load_n(&kbd_cpu_guard_g.gen, __ATOMIC_ACQUIRE))
    return; /* this thread armed it for this launch, and nothing was lifted since */
  const uintptr_t want = kbd_cpu_guard_want(cta);
  pthread_mutex_lock(&kbd_cpu_guard_g.mu);
  struct sigaction cur;
  if (sigaction(SIGSEGV, NULL, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == kbd_cpu_guard_segv)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = kbd_cpu_guard_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) == 0) memcpy(kbd_cpu_guard_t.old, &cur, sizeof cur);
  }
  const int k = kbd_cpu_guard_slot((uintptr_t)cta->smem, want != 0);
  if (k >= 0) {
    kbd_cpu_guard_tab *T = &kbd_cpu_guard_t;
    if (T->at[k] != want) {
      if (T->at[k]) mprotect((void *)T->at[k], T->page, PROT_READ | PROT_WRITE);
      __atomic_store_n(&T->at[k], (uintptr_t)0, __ATOMIC_RELEASE);
      if (want && mprotect((void *)want, T->page, PROT_NONE) == 0) __atomic_store_n(&T->at[k], want, __ATOMIC_RELEASE);
      __atomic_fetch_add(&kbd_cpu_guard_g.gen, 1u, __ATOMIC_ACQ_REL);
    }
    T->dyn[k] = (uint32_t)cta->dyn_bytes;
    T->launch[k] = (uintptr_t)cta->L->params;
  }
  e->owner = (uintptr_t)cta->smem;
  e->at = k >= 0 ? kbd_cpu_guard_t.at[k] : 0;
  e->params = cta->L->params;
  e->dyn = cta->dyn_bytes;
  e->gen = __atomic_load_n(&kbd_cpu_guard_g.gen, __ATOMIC_ACQUIRE);
  pthread_mutex_unlock(&kbd_cpu_guard_g.mu);
}

#else
static inline int kbd_cpu_guard_on(void) { return 0; }
static inline void kbd_cpu_guard_arm(kbd_cpu_cta *cta) { (void)cta; }
#endif

/* Every kbd_cpu_shadow is the `sh` of a kbd_cpu_cta (kbd/cpu/state.h), and kbd/cpu/sched.h frees a CTA's shared
 * array right after its shadow: the array's guard is lifted and its registry slot freed here. */
static inline void kbd_cpu_shadow_free(kbd_cpu_shadow *sh) {
  const kbd_cpu_cta *cta = (const kbd_cpu_cta *)(const void *)((const char *)sh - offsetof(kbd_cpu_cta, sh));
  if (cta->smem) kbd_cpu_guard_lift(cta->smem, 1);
  free(sh->map);
  sh->map = NULL;
}

/* Entries of the group's vector clocks in use: every warp of every CTA but the unused tail of the last. */
static inline int kbd_cpu_nclk(const kbd_cpu_group *G) {
  return (G->nctas - 1) * KBD_CPU_MAX_WARPS + G->ctas[G->nctas - 1]->nwarps;
}

/* Start a group: every clock starts past all stamps in its CTAs' shadows (one clock space for the cluster,
 * since a warp's stamps land in peer CTAs' shadows too). Near the 32-bit end the shadows are replaced by
 * fresh zero pages and stamps restart - once per 2^31 releases. Returns 0 when out of memory. */
static inline int kbd_cpu_shadow_start(kbd_cpu_group *G) {
  if (G->top > 0x7fff0000u) {
    for (int s = 0; s < G->nctas; ++s) {
      kbd_cpu_shadow_free(&G->ctas[s]->sh);
      if (!kbd_cpu_shadow_map(&G->ctas[s]->sh)) return 0;
    }
    G->top = 0;
  }
  const uint32_t base = G->top + 2;
  const int n = kbd_cpu_nclk(G);
  G->top = base;
  for (int s = 0; s < G->nctas; ++s) {
    kbd_cpu_cta *cta = G->ctas[s];
    kbd_cpu_guard_arm(cta);
    cta->sh.base = base;
    cta->sh.remote_reads = 0;
    for (int i = 0; i < cta->nwarps; ++i) {
      kbd_cpu_warp *w = &cta->warps[i];
      for (int u = 0; u < n; ++u)
        w->clk[u] = base - 1; /* nothing of warp u is known yet */
      w->clk[w->gid] = base;
      w->fence_clk = base - 1;
      w->mbinit_fence_clk = w->pub_fence_clk = base - 1;
      w->pub_phase = w->cl_done_phase = 0;
      memset(w->tcseen, 0, sizeof w->tcseen);
      w->rk.any = 0; /* its vector is stale until a read release reaches the warp (kbd_cpu_rk_join) */
    }
  }
  return 1;
}

/* A release by w (barrier arrival, ...): later accesses of w get a new stamp. */
static inline void kbd_cpu_tick(kbd_cpu_warp *w) {
  kbd_cpu_group *G = w->cta->G;
  const uint32_t c = ++w->clk[w->gid];
  if (c > G->top) G->top = c;
}

/* dst := max(dst, w's clock): a release of what w did so far into a barrier or phase. */
static inline void kbd_cpu_release_into(uint32_t *dst, const kbd_cpu_warp *w) {
  const int n = kbd_cpu_nclk(w->cta->G);
  for (int u = 0; u < n; ++u)
    if (w->clk[u] > dst[u]) dst[u] = w->clk[u];
}

/* w acquires what `src` released: clk_w := max(clk_w, src). */
static inline void kbd_cpu_acquire(kbd_cpu_warp *w, const uint32_t *src) {
  const int n = kbd_cpu_nclk(w->cta->G);
  for (int u = 0; u < n; ++u)
    if (src[u] > w->clk[u]) w->clk[u] = src[u];
}

/* ---- read-completion knowledge (kbd_cpu_rk; docs/design/read-release.md) ------------------------------------------
 * A read release (an mbarrier arrival to another CTA without .release.cluster) publishes no writes, only that the
 * arriving warp's reads - and every read it knew complete - have completed. The knowledge travels beside the
 * vector clocks through every release/acquire edge (mbarrier phases, named barriers, the cluster barrier) and is
 * consulted by the write-after-read checks only, where clk did not already order the read. Kernels that never make
 * a read release pay one flag test per release and acquire. */

/* dst := max(dst, src) (src->any == 0: nothing to add). A first join copies, so a stale vector is never read. */
static inline void kbd_cpu_rk_join(kbd_cpu_rk *dst, const kbd_cpu_rk *src, int n) {
  if (KBD_LIKELY(!src->any)) return;
  if (!dst->any) {
    memcpy(dst->v, src->v, (size_t)n * sizeof dst->v[0]);
    dst->any = 1;
  } else {
    for (int u = 0; u < n; ++u)
      if (src->v[u] > dst->v[u]) dst->v[u] = src->v[u];
  }
  dst->file = src->file;
  dst->line = src->line;
}
/* A release by w (barrier arrival, releasing mbarrier arrival) passes on what it knows of completed reads. */
static inline void kbd_cpu_rk_release(kbd_cpu_rk *dst, const kbd_cpu_warp *w) {
  kbd_cpu_rk_join(dst, &w->rk, kbd_cpu_nclk(w->cta->G));
}
/* w acquires what a barrier instance or completed phase knew of completed reads. */
static inline void kbd_cpu_rk_acquire(kbd_cpu_warp *w, const kbd_cpu_rk *src) {
  kbd_cpu_rk_join(&w->rk, src, kbd_cpu_nclk(w->cta->G));
}
/* A read release by w at file:line: everything ordered before w (its vector clock, and what it knew of completed
 * reads) counts as read and complete - but as nothing written. */
static inline void kbd_cpu_rk_release_reads(kbd_cpu_rk *dst, const kbd_cpu_warp *w, const char *file, int line) {
  const int n = kbd_cpu_nclk(w->cta->G);
  kbd_cpu_rk_join(dst, &w->rk, n);
  if (!dst->any) {
    memcpy(dst->v, w->clk, (size_t)n * sizeof dst->v[0]);
    dst->any = 1;
  } else {
    for (int u = 0; u < n; ++u)
      if (w->clk[u] > dst->v[u]) dst->v[u] = w->clk[u];
  }
  dst->file = file;
  dst->line = line;
}
/* Is a read of warp u (group index) at clock c, which w's vector clock does not order, known complete to w? */
static inline int kbd_cpu_rk_covers(const kbd_cpu_warp *w, uint32_t u, uint32_t c) {
  return w->rk.any && w->rk.v[u] >= c;
}

/* dst := max(dst, src) over a CTA's warps: tcgen05 completion knowledge (kbd_cpu_warp.tcseen) passed on by a
 * barrier, as a vector clock is. Commit numbers only grow, so the later commit of a warp covers the earlier. */
static inline void kbd_cpu_tcseen_join(uint32_t *dst, const uint32_t *src) {
  for (int u = 0; u < KBD_CPU_MAX_WARPS; ++u)
    if (src[u] > dst[u]) dst[u] = src[u];
}

/* "warp 3" in a one-CTA group, "warp 3 of cluster CTA 1" in a cluster: numbers only, so a buffer of the longest
 * such text holds every one. */
#define KBD_CPU_WHO_CAP sizeof "warp -2147483648 of cluster CTA -2147483648"
static inline const char *kbd_cpu_who(const kbd_cpu_group *G, int gid, char *buf, size_t cap) {
  if (G->nctas == 1)
    snprintf(buf, cap, "warp %d", gid % KBD_CPU_MAX_WARPS);
  else
    snprintf(buf, cap, "warp %d of cluster CTA %d", gid % KBD_CPU_MAX_WARPS, gid / KBD_CPU_MAX_WARPS);
  return buf;
}

/* ---- describing a byte ----------------------------------------------------------------------------------- */

/* "dynamic shared memory, byte 96" or "KBD_SHARED array declared at f.c:12, byte 8"; in a cluster, bytes of
 * another CTA than the running warp's say whose. */
static inline void kbd_cpu_smem_where(const kbd_cpu_cta *cta, size_t off, kbd_text *out) {
  if (cta->G && cta->G->nctas > 1 && (!kbd_cpu_cur || kbd_cpu_cur->cta != cta))
    kbd_text_append(out, "cluster CTA %d's ", cta->rank);
  if (off < cta->dyn_bytes) {
    kbd_text_append(out, "dynamic shared memory, byte %zu", off);
    return;
  }
  for (int i = 0; i < cta->nstatics; ++i) {
    const kbd_cpu_static *s = &cta->statics[i];
    if (off >= s->off && off < s->off + s->bytes) {
      kbd_text_append(out, "shared array declared at %s:%d, byte %zu", s->file, s->line, off - s->off);
      return;
    }
  }
  kbd_text_append(out, "shared-memory byte %zu", off);
}

/* The same, as a string the launch keeps (for a kbd_cpu_fault argument). */
static inline const char *kbd_cpu_smem_at(const kbd_cpu_cta *cta, size_t off) {
  kbd_text t = KBD_TEXT_INIT;
  kbd_cpu_smem_where(cta, off, &t);
  return kbd_cpu_keep(cta->L, &t);
}

/* An element description from the caller: "tile element (r, c)" or "" when the access is not a tile's. */
typedef struct kbd_cpu_elem {
  long long row, col; /* of the access's first byte; row < 0: none. A run continues along the row. */
  int esize;
} kbd_cpu_elem;
static inline kbd_cpu_elem kbd_cpu_no_elem(void) {
  kbd_cpu_elem e = {-1, -1, 1};
  return e;
}
/* ", tile element (r, c)" of byte b of an access that starts at byte off (numbers only, as above). */
#define KBD_CPU_ELEM_CAP sizeof ", tile element (-9223372036854775808, -9223372036854775808)"
static inline void kbd_cpu_elem_text(kbd_cpu_elem el, size_t off, size_t b, char *buf, size_t cap) {
  buf[0] = '\0';
  if (el.row >= 0)
    snprintf(buf, cap, ", tile element (%lld, %lld)", el.row,
             el.col + (long long)((b - off) / (size_t)(el.esize > 0 ? el.esize : 1)));
}

/* A write after an MMA's operand read (recorded at the MMA's retirement under the warp that issued it: kbd/cpu/mma.h)
 * where the writer's knowledge of that warp came from a tcgen05.commit of it made BEFORE the read's MMA was issued:
 * the commit released the stage early - it tracks only the MMAs issued before it - and the writer, waiting for it,
 * took the stage for free. The barrier w consumed most recently that such a commit completed, its site in *file,
 * *line; 0 when none (the writer simply did not wait). `u`: the reader (this CTA's warp), `rc`: its read's clock. */
static inline int kbd_cpu_early_release(const kbd_cpu_cta *cta, const kbd_cpu_warp *w, int u, uint32_t rc,
                                        const char **file, int *line, size_t *moff) {
  const int ug = cta->rank * KBD_CPU_MAX_WARPS + u;
  for (int i = 0; i < cta->nmbars; ++i) {
    const kbd_cpu_mbar *m = &cta->mbars[i];
    const uint32_t seen = m->obs[w->id] & ~KBD_CPU_OBS_STALE;
    /* w consumed the barrier's latest completed phase; a commit of u completed it; w knows u from it; u's read
     * came after it */
    if (!m->live || !seen || seen != m->phase || !m->tcq_done[u] || m->done[ug] > w->clk[ug] || rc <= m->done[ug] ||
        !m->done_file[(seen - 1u) & 1u])
      continue;
    *file = m->done_file[(seen - 1u) & 1u];
    *line = m->done_line[(seen - 1u) & 1u];
    *moff = m->off;
    return 1;
  }
  return 0;
}

/* ---- sm_90a: a stage released while a wgmma still read it ------------------------------------------------------- */

/* The first of an early-release list's arrives that writer w is ordered after: through its vector clock (a releasing
 * arrive it acquired, directly or passed on) or through read-completion knowledge (a read release to another CTA:
 * kbd_mma_release_mc's arrive). NULL: none - the writer did not wait for any of them. */
static inline const kbd_cpu_wgrel *kbd_cpu_wgrel_known(const kbd_cpu_warp *w, const kbd_cpu_wgrel *rel, int nrel) {
  for (int i = 0; i < nrel; ++i)
    if (w->clk[rel[i].gid] >= rel[i].clk || kbd_cpu_rk_covers(w, (uint32_t)rel[i].gid, rel[i].clk)) return &rel[i];
  return NULL;
}

/* The report at the arrive r: it let writer w refill byte off of cta, which the wgmma issued at ifile:iline still
 * read. The write (what, at file:line) is what the machine saw next. */
KBD_NORETURN static inline void kbd_cpu_wg_early_report(const kbd_cpu_cta *cta, const kbd_cpu_warp *w,
                                                        const kbd_cpu_wgrel *r, size_t off, const char *ifile,
                                                        int iline, const char *what, const char *file, int line) {
  char them[KBD_CPU_WHO_CAP], me[KBD_CPU_WHO_CAP], how[192];
  if (r->how == KBD_CPU_WGREL_LEFT)
    snprintf(how, sizeof how,
             "committed, and the warp's last wgmma.wait_group(%d) left its group pending (it completes all but the "
             "%d newest groups; kbd_mma_release and kbd_mma_release_at wait with N = 1)",
             r->wait_n, r->wait_n);
  else
    snprintf(how, sizeof how, "%s",
             r->how == KBD_CPU_WGREL_UNCOMMITTED ? "not even committed (wgmma.commit_group)"
                                                 : "committed, with no wgmma.wait_group in that warp since");
  const char *bar = kbd_cpu_smem_at(r->mcta, r->moff), *where = kbd_cpu_smem_at(cta, off);
  kbd_cpu_fault(KBD_ERR_RACE, r->file, r->line,
                "stage released here while the wgmma issued at %s:%d still read it: %s arrived on the mbarrier at %s "
                "while that wgmma was %s, and the arrive let %s overwrite the wgmma's operand bytes, which the "
                "tensor core may still read. Arrive on a stage's barrier only once the wgmmas that read the stage "
                "are complete: wait first (kbd_mma_wait, or wgmma.wait_group(N) with N below the number of groups "
                "committed after theirs), or use kbd_mma_release, which waits for all but the newest group and "
                "arrives for the stage the older groups read (with kbd_mma_release_at, name that older stage's "
                "barrier). If this barrier guards another stage, the producer waits on the wrong barrier.\n  What "
                "the machine saw next: %s:%d: %s writes %s (%s), which the wgmma at %s:%d reads",
                ifile, iline, kbd_cpu_who(cta->G, r->gid, them, sizeof them), bar, how,
                kbd_cpu_who(cta->G, w->gid, me, sizeof me), file, line, me, where, what, ifile, iline);
}

/* A write-after-read race of writer w on byte off, read by warp `other` (group index, of cta) at rc from site o: a
 * wgmma read that an early arrive the writer is ordered after let it overwrite? Then that arrive is reported. */
static inline void kbd_cpu_wg_early_race(const kbd_cpu_cta *cta, const kbd_cpu_warp *w, int other, uint32_t rc,
                                         kbd_cpu_site o, size_t off, const char *what, const char *file, int line) {
  const int n = cta->nwgrel_reads < KBD_CPU_WGREL_READS ? cta->nwgrel_reads : KBD_CPU_WGREL_READS;
  for (int i = 0; i < n; ++i) {
    const kbd_cpu_wgrel_read *e = &cta->wgrel_reads[i];
    if (e->reader != other || e->rclk != rc || rc < cta->sh.base || e->line != o.line || e->file != o.file) continue;
    const kbd_cpu_wgrel *r = kbd_cpu_wgrel_known(w, e->rel, e->nrel);
    if (r) kbd_cpu_wg_early_report(cta, w, r, off, e->file, e->line, what, file, line);
  }
}

/* `other` is the earlier access's warp (group index). */
KBD_NORETURN static inline void kbd_cpu_race(const kbd_cpu_cta *cta, kbd_cpu_warp *w, const char *kind,
                                             const char *what, int w_is_write, size_t off, int other, int other_write,
                                             uint16_t other_site, kbd_cpu_elem el, size_t el_off, const char *file,
                                             int line) {
  char elem[KBD_CPU_ELEM_CAP] = "", me[KBD_CPU_WHO_CAP], them[KBD_CPU_WHO_CAP];
  const char *where = kbd_cpu_smem_at(cta, off);
  kbd_cpu_elem_text(el, el_off, off, elem, sizeof elem);
  const kbd_cpu_site o = kbd_cpu_site_of(other_site);
  /* An asynchronous copy's bytes carry its issuer and issue site: the reader lacks the mbarrier wait. */
  const int async = other_write && (cta->sh.winfo[off] & KBD_CPU_SH_ASYNC);
  /* The earlier write is covered only by a read release (kbd_cpu_rk): say which arrive that was and why it does not
   * order a write. */
  kbd_text rr = KBD_TEXT_INIT;
  if (other_write && kbd_cpu_rk_covers(w, (uint32_t)other, cta->sh.wclk[off]))
    kbd_text_append(&rr,
                    "\n  the only thing between them is the read release at %s:%d (mbarrier.arrive to another CTA "
                    "without .release.cluster, e.g. kbd_mma_release_mc's stage release): it hands back a buffer "
                    "whose readers waited for their reads, and orders no write. A warp that wrote into the buffer "
                    "must publish it with a releasing arrive (kbd_mbarrier_arrive_cluster)",
                    w->rk.file ? w->rk.file : "?", w->rk.line);
  const char *rrnote = rr.len ? kbd_cpu_keep(cta->L, &rr) : "";
  const char *efile = NULL;
  int eline = 0;
  size_t eoff = 0;
  if (w_is_write && !other_write && other / KBD_CPU_MAX_WARPS == cta->rank && cta->nwgrel_reads)
    kbd_cpu_wg_early_race(cta, w, other, cta->sh.rclk[other % KBD_CPU_MAX_WARPS][off], o, off, what, file, line);
  if (w_is_write && !other_write && other / KBD_CPU_MAX_WARPS == cta->rank &&
      kbd_cpu_early_release(cta, w, other % KBD_CPU_MAX_WARPS, cta->sh.rclk[other % KBD_CPU_MAX_WARPS][off], &efile,
                            &eline, &eoff)) {
    const char *ewhere = kbd_cpu_smem_at(cta, eoff);
    kbd_cpu_fault(KBD_ERR_RACE, efile, eline,
                  "%s released the stage here (a tcgen05.commit on the mbarrier at %s) before issuing the MMA at "
                  "%s:%d that reads it: a commit tracks only the MMAs issued before it, so this release let the "
                  "producer refill the stage while that MMA could still read it. Issue the stage's MMAs first, then "
                  "release it (kbd_mma_issue ... kbd_mma_commit(acc, &empty[s])).\n  What the machine saw next: "
                  "%s:%d: data race (%s) on %s%s: %s %s it (%s); the MMA issued by %s at %s:%d reads it",
                  kbd_cpu_who(cta->G, other, them, sizeof them), ewhere, o.file, o.line, file, line, kind, where, elem,
                  kbd_cpu_who(w->cta->G, w->gid, me, sizeof me), w_is_write ? "writes" : "reads", what, them, o.file,
                  o.line);
  }
  kbd_cpu_fault(KBD_ERR_RACE, file, line,
                "data race (%s) on %s%s:\n  this access: %s %s it here (%s)\n  earlier:     %s%s %s it at "
                "%s:%d\n  nothing orders the two (%s): the GPU may run them in either order%s",
                kind, where, elem, kbd_cpu_who(w->cta->G, w->gid, me, sizeof me), w_is_write ? "writes" : "reads", what,
                async ? "an asynchronous copy (TMA) issued by " : "", kbd_cpu_who(w->cta->G, other, them, sizeof them),
                other_write ? "wrote" : "read", o.file, o.line,
                async               ? "the reader did not wait on the copy's mbarrier phase"
                : cta->G->nctas > 1 ? "no barrier, or one the two warps do not both take part in; between CTAs "
                                      "of a cluster: kbd_cluster_sync, or an mbarrier the writer signals"
                                    : "no barrier, or one the two warps do not both take part in",
                rrnote);
}

/* ---- the checks ------------------------------------------------------------------------------------------- */

/* Byte b is never-written in the shadow: if it no longer holds the fill pattern, a raw pointer store changed it in
 * this CTA (the CTA's bytes are filled when it starts, static arrays when placed): record it as raw-written (stamp
 * base - 1, see KBD_CPU_SH_LIVE) and return 1. */
static inline int kbd_cpu_shadow_raw_written(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t b) {
  kbd_cpu_shadow *sh = &cta->sh;
  /* an MMA descriptor may name bytes up to smem_top, the guard's too */
  const uintptr_t g = kbd_cpu_guard_of(cta), a = (uintptr_t)cta->smem + b;
  if (g && a >= g && a < g + kbd_cpu_guard_t.page) return 0;
  /* The aligned 4-byte word, not the byte: a stored value may well have single bytes equal to the pattern's (the
   * float 6112.0f is 00 00 BF 45), but a stored word equal to all of it is the NaN 0x7FBF7FBF. */
  const size_t w0 = b & ~(size_t)3;
  uint32_t word, fill;
  memcpy(&word, cta->smem + w0, 4);
  const unsigned char f[4] = {kbd_cpu_fill_byte(w0), kbd_cpu_fill_byte(w0 + 1), kbd_cpu_fill_byte(w0 + 2),
                              kbd_cpu_fill_byte(w0 + 3)};
  memcpy(&fill, f, 4);
  if (word == fill) return 0;
  if (KBD_UNLIKELY(sh->unit_reads) && sh->urmask[b / 16]) kbd_cpu_shadow_unit_expand(sh, b / 16, sh->urmask[b / 16]);
  sh->wclk[b] = sh->base - 1u;
  sh->winfo[b] = (uint16_t)w->gid;
  sh->wsite[b] = 0;
  sh->rmask[b] = 0;
  kbd_cpu_shadow_wrote(sh, b, 1);
  return 1;
}

/* The slow half of a read check: find the first bad byte of [off, off + n) and report it. Returns (after recording
 * them) when the only bad bytes were changed by raw pointer stores. */
static inline void kbd_cpu_shadow_read_fault(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n, const char *what,
                                             kbd_cpu_elem el, const char *file, int line) {
  const kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t me = (uint32_t)w->gid;
  char elem[KBD_CPU_ELEM_CAP];
  for (size_t b = off; b < off + n; ++b) {
    if (!KBD_CPU_SH_LIVE(sh->wclk[b], sh->base) && kbd_cpu_shadow_raw_written(cta, w, b)) continue;
    const uint32_t c = sh->wclk[b], info = sh->winfo[b], x = info & KBD_CPU_SH_WARP;
    kbd_cpu_elem_text(el, off, b, elem, sizeof elem);
    const char *where = !KBD_CPU_SH_LIVE(c, sh->base) || (info & KBD_CPU_SH_PENDING) ? kbd_cpu_smem_at(cta, b) : "";
    if (!KBD_CPU_SH_LIVE(c, sh->base))
      kbd_cpu_fault(KBD_ERR_POISON, file, line,
                    "%s reads never-written shared memory (%s%s); likely cause: the write that should fill these "
                    "bytes is missing or addresses other bytes, or it belongs to another warp and no barrier "
                    "(kbd_sync, or the mbarrier its copy completes) orders it before this read",
                    what, where, elem);
    if (info & KBD_CPU_SH_PENDING)
      kbd_cpu_fault(KBD_ERR_POISON, file, line,
                    "%s reads %s%s, which an asynchronous copy is still writing: wait for its completion first", what,
                    where, elem);
    if (cta->L->race_check && x != me && c > w->clk[x])
      kbd_cpu_race(cta, w, "read after write", what, 0, b, (int)x, 1, sh->wsite[b], el, off, file, line);
  }
}

/* Do the n entries from p all equal v? Accesses are nearly always to bytes one store wrote (same clock,
 * writer and flags), so the checks below run once per access, not once per byte. */
/* p[0..n) is uniform iff p[0..n-1) equals p[1..n): one overlapping memcmp, which libc does 16-32 bytes
 * at a time, instead of a compare per entry. */
static inline int kbd_cpu_uniform(const void *p, size_t n, size_t esize) {
  return n <= 1 || memcmp(p, (const char *)p + esize, (n - 1) * esize) == 0;
}

/* The race checker's record of a read by warp w of bytes [off, off + n) of cta's shared memory, whose checks passed:
 * the reading warp's clock and site per byte (a peer CTA's warp: the byte's last remote read). */
KBD_CPU_HOT static inline void kbd_cpu_shadow_read_record(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                          const char *file, int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t me = (uint32_t)w->gid;
  const uint32_t now = w->clk[me];
  const uint16_t site = kbd_cpu_site_id(w, file, line);
  if (KBD_UNLIKELY(w->cta != cta)) { /* a peer CTA's warp: the byte's last remote read */
    sh->remote_reads = 1;
    for (size_t b = off; b < off + n; ++b) {
      sh->rrclk[b] = now;
      sh->rrwho[b] = (uint16_t)me;
      sh->rrsite[b] = site;
    }
    return;
  }
  const uint32_t bit = 1u << w->id;
  if (KBD_UNLIKELY(sh->unit_reads))
    for (size_t U = off / 16; U <= (off + n - 1) / 16; ++U)
      if (sh->urmask[U] & bit) kbd_cpu_shadow_unit_expand(sh, U, bit);
  uint32_t *rmask = sh->rmask + off, *rclk = sh->rclk[w->id] + off;
  uint16_t *rsite = sh->rsite[w->id] + off;
  for (size_t b = 0; b < n; ++b) {
    rmask[b] |= bit;
    rclk[b] = now;
    rsite[b] = site;
  }
}

/* The same record for one read of the whole 16-byte unit at off (16-aligned) by a warp of this CTA: a unit read record
 * (kbd_cpu_shadow.urmask), 6 bytes stored instead of 160. An MMA's operand reads are such reads of whole units. */
static inline void kbd_cpu_shadow_read_record_unit(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, const char *file,
                                                   int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const size_t U = off / 16;
  sh->unit_reads = 1;
  sh->urmask[U] |= 1u << w->id;
  sh->urclk[w->id][U] = w->clk[w->gid];
  sh->ursite[w->id][U] = kbd_cpu_site_id(w, file, line);
}

/* A read by warp w of bytes [off, off + n) of cta's shared memory (w's own CTA, or a peer of its cluster)
 * through a kbd primitive. The report is built only on failure. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_read_at(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                      const char *what, kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid;
  const uint32_t *wclk = sh->wclk + off;
  const uint16_t *winfo = sh->winfo + off;
  const int race = cta->L->race_check;
  const uint32_t c0 = wclk[0], i0 = winfo[0], x0 = i0 & KBD_CPU_SH_WARP;
  if (KBD_LIKELY(kbd_cpu_uniform(wclk, n, 4) && kbd_cpu_uniform(winfo, n, 2))) {
    if (KBD_UNLIKELY(!KBD_CPU_SH_LIVE(c0, base) || (i0 & KBD_CPU_SH_PENDING) || (race && x0 != me && c0 > w->clk[x0])))
      kbd_cpu_shadow_read_fault(cta, w, off, n, what, el, file, line);
  } else {
    uint32_t bad = 0;
    for (size_t b = 0; b < n; ++b) {
      const uint32_t c = wclk[b], info = winfo[b], x = info & KBD_CPU_SH_WARP;
      bad |= (uint32_t)!KBD_CPU_SH_LIVE(c, base) | (info & KBD_CPU_SH_PENDING) |
             ((uint32_t)race & (uint32_t)(x != me) & (uint32_t)(c > w->clk[x]));
    }
    if (KBD_UNLIKELY(bad)) kbd_cpu_shadow_read_fault(cta, w, off, n, what, el, file, line);
  }
  if (race) kbd_cpu_shadow_read_record(cta, w, off, n, file, line);
}

/* A read by the running warp of its own CTA's shared bytes. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_read(kbd_cpu_warp *w, size_t off, size_t n, const char *what,
                                                   kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow_read_at(w->cta, w, off, n, what, el, file, line);
}

/* ---- bulk stores still reading shared memory (kbd/cpu/tma.h) ---------------------------------------------- */
enum { KBD_CPU_ST_STORE = 0, KBD_CPU_ST_ADD = 1, KBD_CPU_ST_MIN = 2, KBD_CPU_ST_MAX = 3, KBD_CPU_ST_BULK = 4 };

/* The public calls of the TMA family by rank (kbd_tma_load2d, ...): a report names the call the user wrote. kind:
 * KBD_CPU_TN_*; role 0: the call, 1: "<call> destination", 2: "<call> source". Literals, so an issue builds no
 * string; a rank outside 1..5 (refused by the map check, which needs a name first) is named as rank 1. */
enum {
  KBD_CPU_TN_STORE = 0, /* = KBD_CPU_ST_STORE .. _MAX */
  KBD_CPU_TN_REDUCE_ADD = 1,
  KBD_CPU_TN_REDUCE_MIN = 2,
  KBD_CPU_TN_REDUCE_MAX = 3,
  KBD_CPU_TN_LOAD = 4,
  KBD_CPU_TN_LOAD_MULTICAST = 5,
  KBD_CPU_TN_LOAD_PAIR = 6,
  KBD_CPU_TN_PREFETCH = 7
};
#define KBD_CPU_TN_RANK_(b, r)                                                                                         \
  { b r, b r " destination", b r " source" }
#define KBD_CPU_TN_(b)                                                                                                 \
  {                                                                                                                    \
    KBD_CPU_TN_RANK_(b, "1d"), KBD_CPU_TN_RANK_(b, "2d"), KBD_CPU_TN_RANK_(b, "3d"), KBD_CPU_TN_RANK_(b, "4d"),        \
        KBD_CPU_TN_RANK_(b, "5d")                                                                                      \
  }
static inline const char *const *kbd_cpu_tma_names(void) {
  static const char *const names[8][5][3] = {KBD_CPU_TN_("kbd_tma_store"),      KBD_CPU_TN_("kbd_tma_reduce_add"),
                                             KBD_CPU_TN_("kbd_tma_reduce_min"), KBD_CPU_TN_("kbd_tma_reduce_max"),
                                             KBD_CPU_TN_("kbd_tma_load"),       KBD_CPU_TN_("kbd_tma_load_multicast"),
                                             KBD_CPU_TN_("kbd_tma_load_pair"),  KBD_CPU_TN_("kbd_tma_prefetch")};
  return &names[0][0][0];
}
static inline const char *kbd_cpu_tma_name(int kind, int rank, int role) {
  return kbd_cpu_tma_names()[(kind * 5 + (rank >= 1 && rank <= 5 ? rank - 1 : 0)) * 3 + role];
}
/* The role `role` of the call whose name (role 0, from kbd_cpu_tma_name) is `what`; what itself if it is none. */
static inline const char *kbd_cpu_tma_role(const char *what, int role) {
  const char *const *t = kbd_cpu_tma_names();
  for (int i = 0; i < 8 * 5; ++i)
    if (t[3 * i] == what) return t[3 * i + role];
  return what;
}

/* A bulk store's or TMA store's call (rank: the box's, 0 for kbd_bulk_store). */
static inline const char *kbd_cpu_store_name(int op, int rank) {
  return op == KBD_CPU_ST_BULK ? "kbd_bulk_store" : kbd_cpu_tma_name(op, rank, 0);
}

/* A shared write (generic or async) of [off, off + n) while a store still reads some of it. */
static inline void kbd_cpu_store_overlap(const kbd_cpu_cta *cta, size_t off, size_t n, const char *what,
                                         const char *file, int line) {
  for (int i = 0; i < cta->nstores; ++i) {
    const kbd_cpu_store *st = &cta->stores[i];
    if (off < st->off + st->bytes && st->off < off + n)
      kbd_cpu_fault(KBD_ERR_RACE, file, line,
                    "%s writes shared bytes [%zu, %zu) that the %s issued at %s:%d (warp %d) may still be reading: "
                    "wait for it first (kbd_bulk_wait_group_read after kbd_bulk_commit_group, in the issuing "
                    "thread, then a barrier)",
                    what, off > st->off ? off : st->off, off + n < st->off + st->bytes ? off + n : st->off + st->bytes,
                    kbd_cpu_store_name(st->op, st->rank), st->file, st->line, st->issuer);
  }
}

/* A write by warp w of bytes [off, off + n) of cta's shared memory (its own CTA's, or a peer's of its cluster);
 * flags: KBD_CPU_SH_ASYNC / _PENDING. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_write_at(kbd_cpu_cta *cta, kbd_cpu_warp *w, size_t off, size_t n,
                                                       unsigned flags, const char *what, kbd_cpu_elem el,
                                                       const char *file, int line) {
  kbd_cpu_shadow *sh = &cta->sh;
  const uint32_t base = sh->base, me = (uint32_t)w->gid, now = w->clk[me];
  uint32_t *wclk = sh->wclk, *rmask = sh->rmask;
  uint16_t *winfo = sh->winfo;
  uint16_t *wsite = sh->wsite;
  const int race = cta->L->race_check;
  const uint16_t site = race ? kbd_cpu_site_id(w, file, line) : 0;
  /* Readers of this CTA are rmask bits; their clock entries sit at this CTA's rank in the group's clocks. */
  const int rbase = cta->rank * KBD_CPU_MAX_WARPS;
  if (KBD_UNLIKELY(cta->nstores)) kbd_cpu_store_overlap(cta, off, n, what, file, line);
  if (KBD_UNLIKELY(cta->wg_early) && cta->mma_early_write) cta->mma_early_write(cta, w, off, n, what, file, line);
  /* Unit read records: a unit the write covers in part is expanded (the per-byte path below sees its reads); one it
   * covers whole keeps its record while the checks run. Its readers' records are tested as one clock each: when every
   * one is ordered before w (or its completion is known to w), none of the unit's bytes can race with this write
   * through it (a stale per-byte record of such a reader is older than its unit record, so it is ordered too). Any
   * that is not: every record in the range is expanded and the per-byte path below finds and reports the race
   * exactly as without unit records. */
  if (KBD_UNLIKELY(sh->unit_reads) && n) {
    const size_t U0 = off / 16, U1 = (off + n - 1) / 16;
    uint32_t ureaders = 0;
    for (size_t U = U0; U <= U1; ++U) {
      const uint32_t m = sh->urmask[U];
      if (!m) continue;
      if (16 * U < off || 16 * U + 16 > off + n)
        kbd_cpu_shadow_unit_expand(sh, U, m);
      else
        ureaders |= m;
    }
    if (w->cta == cta) ureaders &= ~(1u << w->id);
    if (race && ureaders) {
      int bad = 0;
      for (uint32_t r = ureaders; r && !bad; r &= r - 1) {
        const int u = __builtin_ctz(r);
        const uint32_t seen = w->clk[rbase + u], *urclk = sh->urclk[u];
        for (size_t U = U0; U <= U1 && !bad; ++U)
          if ((sh->urmask[U] >> u & 1u) && urclk[U] > seen && !kbd_cpu_rk_covers(w, (uint32_t)(rbase + u), urclk[U]))
            bad = 1;
      }
      if (bad)
        for (size_t U = U0; U <= U1; ++U)
          if (sh->urmask[U]) kbd_cpu_shadow_unit_expand(sh, U, sh->urmask[U]);
    }
    /* the write ends every read of the bytes it covers: the records left are of whole units it covers */
    for (size_t U = U0; U <= U1; ++U)
      sh->urmask[U] = 0;
  }
  if (race) {
    const uint32_t c0 = wclk[off], x0 = winfo[off] & KBD_CPU_SH_WARP;
    uint32_t readers = 0;
    if (KBD_LIKELY(kbd_cpu_uniform(wclk + off, n, 4) && kbd_cpu_uniform(winfo + off, n, 2))) {
      if (KBD_CPU_SH_LIVE(c0, base)) {
        if (KBD_UNLIKELY(x0 != me && c0 > w->clk[x0]))
          kbd_cpu_race(cta, w, "write after write", what, 1, off, (int)x0, 1, wsite[off], el, off, file, line);
        readers = rmask[off];
        if (!kbd_cpu_uniform(rmask + off, n, 4))
          for (size_t b = off + 1; b < off + n; ++b)
            readers |= rmask[b];
      }
    } else {
      for (size_t b = off; b < off + n; ++b) {
        const uint32_t c = wclk[b], x = winfo[b] & KBD_CPU_SH_WARP;
        if (!KBD_CPU_SH_LIVE(c, base)) continue;
        if (KBD_UNLIKELY(x != me && c > w->clk[x]))
          kbd_cpu_race(cta, w, "write after write", what, 1, b, (int)x, 1, wsite[b], el, off, file, line);
        readers |= rmask[b];
      }
    }
    if (w->cta == cta) readers &= ~(1u << w->id);
    while (readers) { /* other warps read these bytes since their last write: was each read ordered before? */
      const int u = __builtin_ctz(readers);
      readers &= readers - 1;
      const uint32_t *rclk = sh->rclk[u], seen = w->clk[rbase + u];
      if (kbd_cpu_uniform(rmask + off, n, 4) && kbd_cpu_uniform(rclk + off, n, 4) &&
          kbd_cpu_uniform(wclk + off, n, 4)) {
        if (KBD_UNLIKELY(KBD_CPU_SH_LIVE(wclk[off], base) && rclk[off] > seen) &&
            !kbd_cpu_rk_covers(w, (uint32_t)(rbase + u), rclk[off]))
          kbd_cpu_race(cta, w, "write after read", what, 1, off, rbase + u, 0, sh->rsite[u][off], el, off, file, line);
        continue;
      }
      for (size_t b = off; b < off + n; ++b)
        if (KBD_UNLIKELY(KBD_CPU_SH_LIVE(wclk[b], base) && (rmask[b] >> u & 1u) && rclk[b] > seen) &&
            !kbd_cpu_rk_covers(w, (uint32_t)(rbase + u), rclk[b]))
          kbd_cpu_race(cta, w, "write after read", what, 1, b, rbase + u, 0, sh->rsite[u][b], el, off, file, line);
    }
    if (KBD_UNLIKELY(sh->remote_reads))
      for (size_t b = off; b < off + n; ++b) {
        const uint32_t rc = sh->rrclk[b], who = sh->rrwho[b];
        if (rc >= base && who != me && rc > w->clk[who] && !kbd_cpu_rk_covers(w, who, rc))
          kbd_cpu_race(cta, w, "write after read", what, 1, b, (int)who, 0, sh->rrsite[b], el, off, file, line);
        sh->rrclk[b] = 0;
      }
  } else if (KBD_UNLIKELY(sh->remote_reads)) {
    memset(sh->rrclk + off, 0, n * sizeof *sh->rrclk);
  }
  const uint16_t info = (uint16_t)(me | flags);
  for (size_t b = off; b < off + n; ++b) {
    wclk[b] = now;
    wsite[b] = site;
    winfo[b] = info;
  }
  memset(rmask + off, 0, n * sizeof *rmask);
  if (n) kbd_cpu_shadow_wrote_as(sh, off, n, now, info, site);
}

/* A write by the running warp of its own CTA's shared bytes. */
KBD_CPU_HOT static inline void kbd_cpu_shadow_write(kbd_cpu_warp *w, size_t off, size_t n, unsigned flags,
                                                    const char *what, kbd_cpu_elem el, const char *file, int line) {
  kbd_cpu_shadow_write_at(w->cta, w, off, n, flags, what, el, file, line);
}

/* The async proxy reads [off, off + n) (a TMA store, an MMA operand): generic writes must have been
 * fenced by their writer (fence.proxy.async) and be ordered before this point. */
static inline void kbd_cpu_shadow_async_read(kbd_cpu_warp *w, size_t off, size_t n, const char *what, const char *file,
                                             int line) {
  kbd_cpu_cta *cta = w->cta;
  kbd_cpu_shadow *sh = &cta->sh;
  kbd_cpu_shadow_read(w, off, n, what, kbd_cpu_no_elem(), file, line);
  for (size_t b = off; b < off + n; ++b) {
    const uint32_t info = sh->winfo[b], x = info & KBD_CPU_SH_WARP;
    if (info & KBD_CPU_SH_ASYNC) continue;
    const kbd_cpu_warp *xw = &cta->G->ctas[x / KBD_CPU_MAX_WARPS]->warps[x % KBD_CPU_MAX_WARPS];
    if (sh->wclk[b] > xw->fence_clk) {
      char who[KBD_CPU_WHO_CAP];
      const char *where = kbd_cpu_smem_at(cta, b);
      const kbd_cpu_site s = kbd_cpu_site_of(sh->wsite[b]);
      kbd_cpu_fault(KBD_ERR_RACE, file, line,
                    "%s reads %s through the async proxy, but %s wrote it with generic stores at %s:%d and has "
                    "not executed fence.proxy.async since (kbd_fence_proxy_async)",
                    what, where, kbd_cpu_who(cta->G, (int)x, who, sizeof who), s.file, s.line);
    }
  }
}

/* fence.proxy.async by w: its generic writes so far become visible to the async proxy. */
static inline void kbd_cpu_shadow_fence_async(kbd_cpu_warp *w) {
  w->fence_clk = w->clk[w->gid];
  kbd_cpu_tick(w);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SHADOW_H */
