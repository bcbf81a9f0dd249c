/* kbd/cpu/profile.h - the CPU machine's per-launch profile: bank conflicts, coalescing and counters.
 *
 * On when KBD_CPU_PROFILE is set to a nonzero value, when KBD_CPU_PROFILE_JSON names a file, or after
 * kbd_profile_enable(1) (kbd_profile_enable(0) forces it off, kbd_profile_enable(-1) goes back to the
 * environment). Off, the machine pays one thread-local pointer test per tile move and per counted event.
 *
 * What is recorded, per warp instruction (the 32 lanes' addresses of one ld/st/ldmatrix/stmatrix, rebuilt
 * from the same address functions the move uses): shared sites (file:line of the user's call, the primitive,
 * the op, bytes per lane) with instructions, wavefronts and the conflict-free ideal (kbd/memmodel.h); global
 * sites with 32-byte sectors, 128-byte lines and the ideal sectors. Per launch: bytes moved by threads and by
 * the TMA, wavefronts, sectors, barrier waits (and how many blocked), MMA FLOPs by input type.
 *
 *   const kbd_profile *kbd_profile_last(void)     the last profiled launch of the process (NULL: none; a
 *                                                 launch without profiling clears it)
 *   const kbd_profile_site *kbd_profile_site_find(prof, file, line)   a site by file (suffix match) and line
 *   void kbd_profile_enable(int on)               1 on, 0 off, -1 the environment decides (default)
 *   void kbd_profile_print(prof, FILE *)          the table KBD_CPU_PROFILE prints (top 20 sites, worst first)
 *   int kbd_profile_write_json(prof, FILE *)      one JSON object on one line (KBD_CPU_PROFILE_JSON appends it)
 *
 * Blocks run on several host threads: each worker accumulates its own table and merges it into the launch's
 * at its end (under the launch lock), so results do not depend on the thread count. docs/profiling.md.
 */
#ifndef KBD_CPU_PROFILE_H
#define KBD_CPU_PROFILE_H

#include "../memmodel.h"
#include "state.h"

#if KBD_MODE_CPU

#include <stdint.h>

enum { KBD_PROFILE_SHARED = 0, KBD_PROFILE_GLOBAL = 1 };
enum { KBD_PROFILE_LD = 0, KBD_PROFILE_ST = 1, KBD_PROFILE_LDMATRIX = 2, KBD_PROFILE_STMATRIX = 3 };
/* MMA input types, the order of kbd_profile.mma_flops (and of the JSON object's keys). */
enum {
  KBD_PROFILE_BF16 = 0,
  KBD_PROFILE_F16 = 1,
  KBD_PROFILE_TF32 = 2,
  KBD_PROFILE_E4M3 = 3,
  KBD_PROFILE_E5M2 = 4,
  KBD_PROFILE_S8 = 5,
  KBD_PROFILE_NTYPES = 6
};

/* One access site: the user's file:line, the primitive (what), shared or global, the op and bytes per lane. */
typedef struct kbd_profile_site {
  const char *file;
  int line;
  const char *what;
  int space;          /* KBD_PROFILE_SHARED / _GLOBAL */
  int op;             /* KBD_PROFILE_LD / _ST / _LDMATRIX / _STMATRIX */
  int bytes_per_lane; /* 16 for ldmatrix/stmatrix (one row of a matrix) */
  long long instructions;
  long long wavefronts, ideal; /* shared: wavefronts and the conflict-free minimum; global: ideal sectors */
  long long sectors, lines;    /* global */
} kbd_profile_site;

typedef struct kbd_profile {
  const char *kernel; /* the kernel's name, kept for the life of the process (kbd_msg_keep) */
  const char *arch;   /* "sm_100a" or "sm_90a" */
  unsigned grid[3];
  int block;                                       /* threads per block */
  int cluster;                                     /* CTAs per cluster */
  long long global_read_bytes, global_write_bytes; /* by threads and by the TMA */
  /* the compulsory part: 32-byte sectors read / written at least once in the launch, x 32 (kbd/cpu/global.h) */
  long long global_unique_read_bytes, global_unique_write_bytes;
  long long tma_load_bytes, tma_store_bytes;
  long long shared_read_bytes, shared_write_bytes; /* by threads */
  long long shared_wavefronts, shared_ideal_wavefronts;
  long long global_sectors, global_ideal_sectors;
  long long barrier_waits, barrier_blocked; /* bar.sync / named barriers / mbarrier waits; of which blocked */
  long long mma_flops[KBD_PROFILE_NTYPES];  /* 2 M N K per MMA instruction, by input type */
  int nsites;
  kbd_profile_site *sites; /* worst first: most excess wavefronts (shared) or sectors (global) */
  long long dropped;       /* instructions at sites past the table's capacity (not in sites) */
} kbd_profile;

/* ---- per-worker accumulation -------------------------------------------------------------------------- */

#define KBD_CPU_PROF_SITES 1024 /* a power of two */

typedef struct kbd_cpu_prof {
  kbd_profile c;      /* counters (sites unused) */
  long long touch[2]; /* kbd_cpu_touch_ctr of this worker: unique sectors read / written, in bytes */
  kbd_profile_site site[KBD_CPU_PROF_SITES];
  int used[KBD_CPU_PROF_SITES];
} kbd_cpu_prof;

/* The running worker's accumulator; NULL when the launch is not profiled (the one test on the hot path). */
KBD_WEAK __thread kbd_cpu_prof *kbd_cpu_prof_cur = NULL;
/* kbd_profile_enable's setting (-1: the environment decides) and the last profiled launch. */
KBD_WEAK int kbd_cpu_prof_force = -1;
KBD_WEAK kbd_profile *kbd_cpu_prof_last = NULL;
KBD_WEAK pthread_mutex_t kbd_cpu_prof_mu = PTHREAD_MUTEX_INITIALIZER;

static inline void kbd_profile_enable(int on) { kbd_cpu_prof_force = on < 0 ? -1 : on != 0; }
static inline const kbd_profile *kbd_profile_last(void) { return kbd_cpu_prof_last; }

static inline int kbd_cpu_prof_wanted(void) {
  if (kbd_cpu_prof_force >= 0) return kbd_cpu_prof_force;
  const char *j = getenv("KBD_CPU_PROFILE_JSON");
  return kbd_cpu_env_long("KBD_CPU_PROFILE", 0) != 0 || (j && *j);
}

static inline kbd_profile_site *kbd_cpu_prof_site(kbd_cpu_prof *P, const char *file, int line, const char *what,
                                                  int space, int op, int bytes) {
  uintptr_t h = (uintptr_t)file * 31u + (uintptr_t)what * 7u + (uintptr_t)line * 131u +
                (uintptr_t)(op * 4 + space) * 1031u + (uintptr_t)bytes;
  h ^= h >> 17;
  for (int probe = 0; probe < KBD_CPU_PROF_SITES; ++probe) {
    const int i = (int)((h + (uintptr_t)probe) & (KBD_CPU_PROF_SITES - 1));
    kbd_profile_site *s = &P->site[i];
    if (!P->used[i]) {
      P->used[i] = 1;
      s->file = file;
      s->line = line;
      s->what = what;
      s->space = space;
      s->op = op;
      s->bytes_per_lane = bytes;
      return s;
    }
    if (s->file == file && s->line == line && s->what == what && s->space == space && s->op == op &&
        s->bytes_per_lane == bytes)
      return s;
  }
  return NULL;
}

/* The recording twins of ptx/profile.h (kbd/hw.h), called by the API headers' moves: is the running launch
 * profiled? One thread-local load; the record calls below fetch the accumulator again. */
static inline int kbd_hw_prof_on(void) { return kbd_cpu_prof_cur != NULL; }

/* One warp-wide shared access: lane l at shared pointer addr[l] (host pointers into the CTA's 1024-byte-aligned
 * window: the low bits are the shared address's), active lanes only. */
static inline void kbd__prof_smem(const char *what, int op, int bytes, char *const *addr, const unsigned char *active,
                                  int lanes, const char *file, int line) {
  kbd_cpu_prof *P = kbd_cpu_prof_cur;
  if (!P) return;
  uint32_t a[32];
  int n = 0;
  for (int l = 0; l < lanes; ++l) {
    a[l] = (uint32_t)(uintptr_t)addr[l];
    n += !active || active[l];
  }
  if (n == 0) return;
  const int wf = kbd_smem_wavefronts(a, active, lanes, bytes),
            ideal = kbd_smem_ideal_wavefronts(a, active, lanes, bytes);
  uint64_t a64[32];
  for (int l = 0; l < lanes; ++l)
    a64[l] = a[l];
  const long long asked = (long long)kbd_global_unique_bytes(a64, active, lanes, bytes);
  if (op == KBD_PROFILE_ST || op == KBD_PROFILE_STMATRIX)
    P->c.shared_write_bytes += asked;
  else
    P->c.shared_read_bytes += asked;
  P->c.shared_wavefronts += wf;
  P->c.shared_ideal_wavefronts += ideal;
  kbd_profile_site *s = kbd_cpu_prof_site(P, file, line, what, KBD_PROFILE_SHARED, op, bytes);
  if (!s) {
    P->c.dropped++;
    return;
  }
  s->instructions++;
  s->wavefronts += wf;
  s->ideal += ideal;
}

/* One warp-wide global access by threads. */
static inline void kbd__prof_global(const char *what, int op, int bytes, char *const *addr, const unsigned char *active,
                                    int lanes, const char *file, int line) {
  kbd_cpu_prof *P = kbd_cpu_prof_cur;
  if (!P) return;
  uint64_t a[32];
  int n = 0, nlines = 0, ideal = 0;
  for (int l = 0; l < lanes; ++l) {
    a[l] = (uint64_t)(uintptr_t)addr[l];
    n += !active || active[l];
  }
  if (n == 0) return;
  const int sec = kbd_global_sectors(a, active, lanes, bytes, &nlines, &ideal);
  const long long asked = (long long)kbd_global_unique_bytes(a, active, lanes, bytes);
  if (op == KBD_PROFILE_ST)
    P->c.global_write_bytes += asked;
  else
    P->c.global_read_bytes += asked;
  P->c.global_sectors += sec;
  P->c.global_ideal_sectors += ideal;
  kbd_profile_site *s = kbd_cpu_prof_site(P, file, line, what, KBD_PROFILE_GLOBAL, op, bytes);
  if (!s) {
    P->c.dropped++;
    return;
  }
  s->instructions++;
  s->sectors += sec;
  s->lines += nlines;
  s->ideal += ideal;
}

/* One scalar global access of the running warp (kbd_ld_global / kbd_st_global): in warp-uniform code the 32
 * lanes access the same address (1 sector); in per-lane or elected-lane code the call is one lane's, recorded
 * as a one-lane instruction (the machine runs the lanes one after another there and does not see them
 * together: docs/profiling.md, "Limits"). */
static inline void kbd_hw_prof_scalar_global(const void *p, int bytes, int op, const char *what, KBD_SITE_PARAMS) {
  if (KBD_LIKELY(!kbd_cpu_prof_cur)) return;
  const kbd_cpu_warp *w = kbd_cpu_cur;
  const int lanes = w && (w->lanes_depth || w->elect_depth) ? 1 : KBD_WARP_SIZE;
  char *a[KBD_WARP_SIZE];
  for (int l = 0; l < lanes; ++l)
    a[l] = (char *)(uintptr_t)p;
  kbd__prof_global(what, op, bytes, a, NULL, lanes, KBD_SITE_ARGS);
}

/* The API headers' twins of the two records above (the machine's own callers, cpu/smatrix.h, use those): one
 * warp instruction, lane l at addr[l], the active lanes only (NULL: all). */
static inline void kbd_hw_prof_smem(const char *what, int op, int bytes, char *const *addr, const unsigned char *active,
                                    int lanes, KBD_SITE_PARAMS) {
  kbd__prof_smem(what, op, bytes, addr, active, lanes, KBD_SITE_ARGS);
}
static inline void kbd_hw_prof_global(const char *what, int op, int bytes, char *const *addr,
                                      const unsigned char *active, int lanes, KBD_SITE_PARAMS) {
  kbd__prof_global(what, op, bytes, addr, active, lanes, KBD_SITE_ARGS);
}

/* Counters from the machine's own operations (TMA, MMA, barriers). */
static inline void kbd_cpu_prof_tma(int store, long long bytes) {
  kbd_cpu_prof *P = kbd_cpu_prof_cur;
  if (KBD_LIKELY(!P)) return;
  if (store) {
    P->c.tma_store_bytes += bytes;
    P->c.global_write_bytes += bytes;
  } else {
    P->c.tma_load_bytes += bytes;
    P->c.global_read_bytes += bytes;
  }
}
/* kbd_mma_type (kbd/mma_desc.h: f16 0, bf16 1, tf32 2, e4m3 3, e5m2 4, s8 5, u8 6) -> KBD_PROFILE_*; u8 counts as s8
 * (the 8-bit integer kind). */
static inline int kbd_cpu_prof_type(int mma_type) {
  static const int map[7] = {KBD_PROFILE_F16,  KBD_PROFILE_BF16, KBD_PROFILE_TF32, KBD_PROFILE_E4M3,
                             KBD_PROFILE_E5M2, KBD_PROFILE_S8,   KBD_PROFILE_S8};
  return mma_type >= 0 && mma_type < 7 ? map[mma_type] : -1;
}
static inline void kbd_cpu_prof_mma(int type, long long m, long long n, long long k) {
  kbd_cpu_prof *P = kbd_cpu_prof_cur;
  if (KBD_LIKELY(!P) || type < 0 || type >= KBD_PROFILE_NTYPES) return;
  P->c.mma_flops[type] += 2 * m * n * k;
}
static inline void kbd_cpu_prof_wait(int blocked) {
  kbd_cpu_prof *P = kbd_cpu_prof_cur;
  if (KBD_LIKELY(!P)) return;
  P->c.barrier_waits++;
  P->c.barrier_blocked += blocked != 0;
}

/* ---- per launch --------------------------------------------------------------------------------------- */

/* Launch state: the merged table (a kbd_cpu_prof) behind L->prof. */
static inline void kbd_cpu_prof_begin(kbd_cpu_launch *L) {
  L->prof = NULL;
  if (!kbd_cpu_prof_wanted()) {
    pthread_mutex_lock(&kbd_cpu_prof_mu);
    if (kbd_cpu_prof_last) {
      free(kbd_cpu_prof_last->sites);
      free(kbd_cpu_prof_last);
      kbd_cpu_prof_last = NULL;
    }
    pthread_mutex_unlock(&kbd_cpu_prof_mu);
    return;
  }
  L->prof = calloc(1, sizeof(kbd_cpu_prof));
  if (L->prof) kbd_cpu_touch_reset();
}

/* A worker's start and end: its own table, merged into the launch's. */
static inline void kbd_cpu_prof_worker_begin(kbd_cpu_launch *L) {
  kbd_cpu_prof_cur = L->prof ? (kbd_cpu_prof *)calloc(1, sizeof(kbd_cpu_prof)) : NULL;
  kbd_cpu_touch_ctr = kbd_cpu_prof_cur ? kbd_cpu_prof_cur->touch : NULL;
}
static inline void kbd_cpu_prof_worker_end(kbd_cpu_launch *L) {
  kbd_cpu_prof *W = kbd_cpu_prof_cur, *M = (kbd_cpu_prof *)L->prof;
  kbd_cpu_prof_cur = NULL;
  kbd_cpu_touch_ctr = NULL;
  if (!W) return;
  if (M) {
    pthread_mutex_lock(&L->mu);
#define KBD__PROF_ADD(f) M->c.f += W->c.f
    KBD__PROF_ADD(global_read_bytes);
    KBD__PROF_ADD(global_write_bytes);
    M->c.global_unique_read_bytes += W->touch[0];
    M->c.global_unique_write_bytes += W->touch[1];
    KBD__PROF_ADD(tma_load_bytes);
    KBD__PROF_ADD(tma_store_bytes);
    KBD__PROF_ADD(shared_read_bytes);
    KBD__PROF_ADD(shared_write_bytes);
    KBD__PROF_ADD(shared_wavefronts);
    KBD__PROF_ADD(shared_ideal_wavefronts);
    KBD__PROF_ADD(global_sectors);
    KBD__PROF_ADD(global_ideal_sectors);
    KBD__PROF_ADD(barrier_waits);
    KBD__PROF_ADD(barrier_blocked);
    KBD__PROF_ADD(dropped);
#undef KBD__PROF_ADD
    for (int t = 0; t < KBD_PROFILE_NTYPES; ++t)
      M->c.mma_flops[t] += W->c.mma_flops[t];
    for (int i = 0; i < KBD_CPU_PROF_SITES; ++i) {
      if (!W->used[i]) continue;
      const kbd_profile_site *w = &W->site[i];
      kbd_profile_site *m = NULL;
      for (int j = 0; j < KBD_CPU_PROF_SITES && !m; ++j) /* by name: a file's string differs between TUs */
        if (M->used[j] && M->site[j].line == w->line && M->site[j].space == w->space && M->site[j].op == w->op &&
            M->site[j].bytes_per_lane == w->bytes_per_lane && strcmp(M->site[j].file, w->file) == 0 &&
            strcmp(M->site[j].what, w->what) == 0)
          m = &M->site[j];
      if (!m) {
        m = kbd_cpu_prof_site(M, w->file, w->line, w->what, w->space, w->op, w->bytes_per_lane);
        if (!m) {
          M->c.dropped += w->instructions;
          continue;
        }
      }
      m->instructions += w->instructions;
      m->wavefronts += w->wavefronts;
      m->ideal += w->ideal;
      m->sectors += w->sectors;
      m->lines += w->lines;
    }
    pthread_mutex_unlock(&L->mu);
  }
  free(W);
}

static inline long long kbd_cpu_prof_excess(const kbd_profile_site *s) {
  return s->space == KBD_PROFILE_SHARED ? s->wavefronts - s->ideal : s->sectors - s->ideal;
}
static inline long long kbd_cpu_prof_cost(const kbd_profile_site *s) {
  return s->space == KBD_PROFILE_SHARED ? s->wavefronts : s->sectors;
}
static inline int kbd_cpu_prof_cmp(const void *a_, const void *b_) {
  const kbd_profile_site *a = (const kbd_profile_site *)a_, *b = (const kbd_profile_site *)b_;
  const long long ea = kbd_cpu_prof_excess(a), eb = kbd_cpu_prof_excess(b);
  if (ea != eb) return ea > eb ? -1 : 1;
  const long long ca = kbd_cpu_prof_cost(a), cb = kbd_cpu_prof_cost(b);
  if (ca != cb) return ca > cb ? -1 : 1;
  const int f = strcmp(a->file, b->file);
  if (f) return f;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  return a->op - b->op;
}

static inline const char *kbd_profile_op_name(int op) {
  static const char *const n[4] = {"ld", "st", "ldmatrix", "stmatrix"};
  return op >= 0 && op < 4 ? n[op] : "?";
}
static inline const char *kbd_profile_type_name(int t) {
  static const char *const n[KBD_PROFILE_NTYPES] = {"bf16", "f16", "tf32", "e4m3", "e5m2", "s8"};
  return t >= 0 && t < KBD_PROFILE_NTYPES ? n[t] : "?";
}

/* A site by file and line: file matches when it is the site's file or a suffix of it after a '/'. */
static inline const kbd_profile_site *kbd_profile_site_find(const kbd_profile *p, const char *file, int line) {
  if (!p || !file) return NULL;
  const size_t n = strlen(file);
  for (int i = 0; i < p->nsites; ++i) {
    const kbd_profile_site *s = &p->sites[i];
    const size_t m = strlen(s->file);
    if (s->line != line || m < n || strcmp(s->file + (m - n), file) != 0) continue;
    if (m == n || s->file[m - n - 1] == '/') return s;
  }
  return NULL;
}

/* The table names a site by its file name without the directory: a table row, not a diagnostic (diagnostics
 * give the path as the compiler knows it, to be clickable); the JSON output keeps the full path. */
static inline const char *kbd_cpu_prof_base(const char *file) {
  const char *base = strrchr(file, '/');
  return base ? base + 1 : file;
}

static inline void kbd_profile_print(const kbd_profile *p, FILE *f) {
  if (!p) return;
  fprintf(f, "kbd profile: kernel %s (%s), grid %u x %u x %u, %d threads, cluster %d\n", p->kernel, p->arch, p->grid[0],
          p->grid[1], p->grid[2], p->block, p->cluster);
  fprintf(f, "  global: %lld B read, %lld B written (TMA %lld loaded, %lld stored); sectors %lld (ideal %lld)\n",
          p->global_read_bytes, p->global_write_bytes, p->tma_load_bytes, p->tma_store_bytes, p->global_sectors,
          p->global_ideal_sectors);
  fprintf(f, "  compulsory: %lld B read, %lld B written (distinct 32-byte sectors: the traffic if re-reads hit L2)\n",
          p->global_unique_read_bytes, p->global_unique_write_bytes);
  fprintf(f, "  shared: %lld B read, %lld B written by threads; wavefronts %lld (ideal %lld)\n", p->shared_read_bytes,
          p->shared_write_bytes, p->shared_wavefronts, p->shared_ideal_wavefronts);
  fprintf(f, "  barrier waits %lld (blocked %lld); MMA FLOPs:", p->barrier_waits, p->barrier_blocked);
  int any = 0;
  for (int t = 0; t < KBD_PROFILE_NTYPES; ++t)
    if (p->mma_flops[t]) {
      fprintf(f, " %s %lld", kbd_profile_type_name(t), p->mma_flops[t]);
      any = 1;
    }
  fprintf(f, "%s\n", any ? "" : " none");
  if (p->nsites == 0) return;
  const int top = p->nsites < 20 ? p->nsites : 20;
  int width = 18; /* the column is as wide as its longest site: no site is cut */
  for (int i = 0; i < top; ++i) {
    const kbd_profile_site *s = &p->sites[i];
    const int n = snprintf(NULL, 0, "%s:%d %s", kbd_cpu_prof_base(s->file), s->line, s->what);
    if (n > width) width = n;
  }
  fprintf(f, "  %-*s %-6s %-8s %5s %10s %10s %10s %6s %8s\n", width, "site (worst first)", "space", "op", "B/ln",
          "instr", "cost", "ideal", "ratio", "lines");
  for (int i = 0; i < top; ++i) {
    const kbd_profile_site *s = &p->sites[i];
    const long long cost = kbd_cpu_prof_cost(s);
    char lines[sizeof "-9223372036854775808"] = "-";
    if (s->space == KBD_PROFILE_GLOBAL) snprintf(lines, sizeof lines, "%lld", s->lines);
    kbd_text where = KBD_TEXT_INIT;
    kbd_text_append(&where, "%s:%d %s", kbd_cpu_prof_base(s->file), s->line, s->what);
    fprintf(f, "  %-*s %-6s %-8s %5d %10lld %10lld %10lld %6.2f %8s\n", width, kbd_text_str(&where),
            s->space == KBD_PROFILE_SHARED ? "shared" : "global", kbd_profile_op_name(s->op), s->bytes_per_lane,
            s->instructions, cost, s->ideal, s->ideal ? (double)cost / (double)s->ideal : 0.0, lines);
    kbd_text_free(&where);
  }
  if (p->nsites > top) fprintf(f, "  ... and %d more sites\n", p->nsites - top);
  if (p->dropped) fprintf(f, "  (%lld instructions at sites past the table's capacity not listed)\n", p->dropped);
}

static inline void kbd_cpu_prof_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* One JSON object, one line (the schema of docs/profiling.md). Returns 0, or -1 on a write error. */
static inline int kbd_profile_write_json(const kbd_profile *p, FILE *f) {
  if (!p) return -1;
  fputs("{\"kernel\": ", f);
  kbd_cpu_prof_json_str(f, p->kernel);
  fprintf(f, ", \"arch\": \"%s\", \"grid\": [%u, %u, %u], \"block\": %d, \"cluster\": %d", p->arch, p->grid[0],
          p->grid[1], p->grid[2], p->block, p->cluster);
  fprintf(f,
          ", \"global_read_bytes\": %lld, \"global_write_bytes\": %lld, \"global_unique_read_bytes\": %lld, "
          "\"global_unique_write_bytes\": %lld, \"tma_load_bytes\": %lld, "
          "\"tma_store_bytes\": %lld, \"shared_read_bytes\": %lld, \"shared_write_bytes\": %lld, "
          "\"shared_wavefronts\": %lld, \"shared_ideal_wavefronts\": %lld, \"global_sectors\": %lld, "
          "\"global_ideal_sectors\": %lld, \"barrier_waits\": %lld, \"barrier_blocked\": %lld",
          p->global_read_bytes, p->global_write_bytes, p->global_unique_read_bytes, p->global_unique_write_bytes,
          p->tma_load_bytes, p->tma_store_bytes, p->shared_read_bytes, p->shared_write_bytes, p->shared_wavefronts,
          p->shared_ideal_wavefronts, p->global_sectors, p->global_ideal_sectors, p->barrier_waits, p->barrier_blocked);
  fputs(", \"mma_flops\": {", f);
  for (int t = 0; t < KBD_PROFILE_NTYPES; ++t)
    fprintf(f, "%s\"%s\": %lld", t ? ", " : "", kbd_profile_type_name(t), p->mma_flops[t]);
  fputs("}, \"sites\": [", f);
  for (int i = 0; i < p->nsites; ++i) {
    const kbd_profile_site *s = &p->sites[i];
    fputs(i ? ", {\"file\": " : "{\"file\": ", f);
    kbd_cpu_prof_json_str(f, s->file);
    fprintf(f, ", \"line\": %d, \"what\": ", s->line);
    kbd_cpu_prof_json_str(f, s->what);
    fprintf(f, ", \"space\": \"%s\", \"op\": \"%s\", \"bytes_per_lane\": %d, \"instructions\": %lld",
            s->space == KBD_PROFILE_SHARED ? "shared" : "global", kbd_profile_op_name(s->op), s->bytes_per_lane,
            s->instructions);
    if (s->space == KBD_PROFILE_SHARED)
      fprintf(f, ", \"wavefronts\": %lld, \"ideal\": %lld}", s->wavefronts, s->ideal);
    else
      fprintf(f, ", \"sectors\": %lld, \"lines\": %lld, \"ideal\": %lld}", s->sectors, s->lines, s->ideal);
  }
  fputs("]}\n", f);
  return ferror(f) ? -1 : 0;
}

/* The launch's end: the merged table becomes kbd_profile_last(), printed (KBD_CPU_PROFILE) and appended as a
 * JSON line (KBD_CPU_PROFILE_JSON). */
static inline void kbd_cpu_prof_end(kbd_cpu_launch *L) {
  kbd_cpu_prof *M = (kbd_cpu_prof *)L->prof;
  if (!M) return;
  L->prof = NULL;
  kbd_profile *p = (kbd_profile *)calloc(1, sizeof *p);
  if (!p) {
    free(M);
    return;
  }
  *p = M->c;
  p->kernel = L->name ? kbd_msg_keep(L->name, strlen(L->name)) : "?";
  p->arch = KBD_CPU_ARCH == 90 ? "sm_90a" : "sm_100a";
  p->grid[0] = L->cfg.grid.x;
  p->grid[1] = L->cfg.grid.y;
  p->grid[2] = L->cfg.grid.z;
  p->block = L->threads;
  p->cluster = L->csize;
  int n = 0;
  for (int i = 0; i < KBD_CPU_PROF_SITES; ++i)
    n += M->used[i];
  p->sites = (kbd_profile_site *)calloc((size_t)(n ? n : 1), sizeof *p->sites);
  if (p->sites)
    for (int i = 0; i < KBD_CPU_PROF_SITES; ++i)
      if (M->used[i]) p->sites[p->nsites++] = M->site[i];
  free(M);
  qsort(p->sites, (size_t)p->nsites, sizeof *p->sites, kbd_cpu_prof_cmp);
  if (kbd_cpu_env_long("KBD_CPU_PROFILE", 0) != 0) kbd_profile_print(p, stderr);
  const char *json = getenv("KBD_CPU_PROFILE_JSON");
  if (json && *json) {
    FILE *f = fopen(json, "a");
    if (!f || kbd_profile_write_json(p, f) != 0)
      fprintf(stderr, "kbd: KBD_CPU_PROFILE_JSON: cannot append to %s\n", json);
    if (f) fclose(f);
  }
  pthread_mutex_lock(&kbd_cpu_prof_mu);
  if (kbd_cpu_prof_last) {
    free(kbd_cpu_prof_last->sites);
    free(kbd_cpu_prof_last);
  }
  kbd_cpu_prof_last = p;
  pthread_mutex_unlock(&kbd_cpu_prof_mu);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_PROFILE_H */
