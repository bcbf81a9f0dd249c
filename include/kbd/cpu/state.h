/* kbd/cpu/state.h - the CPU machine's state: launches, groups of CTAs, CTAs, warps.
 *
 * Scheduling unit: a GROUP of CTAs that run co-resident on one host thread (one CTA today; a cluster
 * next, so that its CTAs can wait on each other's barriers without a cross-thread protocol). The group
 * owns the scheduler fiber, the warp stacks and the seeded warp order; each CTA owns its shared memory
 * (with its shadow state), its named barriers and its warps. docs/cpu-machine.md has the whole model.
 */
#ifndef KBD_CPU_STATE_H
#define KBD_CPU_STATE_H

#include "../config.h"

#if KBD_MODE_CPU

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../grid.h"
#include "../status.h"
#include "../tensormap.h"
#include "../text.h"
#include "fiber.h"

#define KBD_CPU_MAX_WARPS (KBD_MAX_BLOCK_THREADS / KBD_WARP_SIZE)
/* CTAs per scheduling group: the CTAs of one cluster (16, the non-portable maximum of sm_90/sm_100). */
#define KBD_CPU_MAX_GROUP 16
/* Vector clocks span the group: warp w of the CTA of cluster rank r is entry r * KBD_CPU_MAX_WARPS + w. */
#define KBD_CPU_MAX_GW (KBD_CPU_MAX_WARPS * KBD_CPU_MAX_GROUP)
#define KBD_CPU_MAX_STATICS 64
#define KBD_CPU_DEFAULT_STACK (256u * 1024u)

typedef void (*kbd_cpu_entry)(const void *params);

enum { KBD_CPU_W_READY = 0, KBD_CPU_W_BLOCKED = 1, KBD_CPU_W_DONE = 2, KBD_CPU_W_FAULTED = 3 };

/* What a blocked warp waits for. Every kind names the object and the state that releases it, so a
 * deadlock report can say "warp w at file:line waits for <object, state>". */
enum {
  KBD_CPU_WAIT_NONE = 0,
  KBD_CPU_WAIT_BAR = 1,  /* a named barrier instance (bar.sync / barrier.sync) */
  KBD_CPU_WAIT_SPIN = 2, /* a poll of memory another block (or nothing) must change */
  KBD_CPU_WAIT_OBJ = 3   /* any other wait object (mbarrier phase, cluster barrier, TMEM allocation) */
};

struct kbd_cpu_cta;
struct kbd_cpu_group;
struct kbd_cpu_launch;
struct kbd_cpu_warp;

/* Appends "<object, state>" of a wait object to a report. */
typedef void (*kbd_cpu_wait_describe)(const struct kbd_cpu_warp *w, kbd_text *out);

/* Read-completion knowledge (kbd/cpu/shadow.h, docs/design/read-release.md): v[u] = the latest clock of warp u whose
 * READS (shared-memory reads recorded at or below it) are known complete and ordered before the holder - handed on by
 * an arrival that releases no writes (kbd_mbarrier_arrive_cluster_reads, mbarrier.arrive without .release.cluster
 * to another CTA). Used only by the write-after-read checks: a read-after-write or write-after-write needs the full
 * vector clock. `any` == 0: nothing is known beyond the vector clock and v is stale (never read). file:line is the
 * read release it came from, for a race report. */
typedef struct kbd_cpu_rk {
  int any;
  int line;
  const char *file;
  uint32_t v[KBD_CPU_MAX_GW];
} kbd_cpu_rk;

typedef struct kbd_cpu_warp {
  kbd_fiber fiber;
  struct kbd_cpu_cta *cta;
  int id;  /* warp index in its CTA */
  int gid; /* index in the group's vector clocks: rank * KBD_CPU_MAX_WARPS + id */
  int state;
  int wait_kind;
  int wait_bar;                    /* barrier id while waiting on a named barrier */
  const void *wait_obj;            /* KBD_CPU_WAIT_OBJ: the object */
  uint32_t wait_arg;               /* its awaited state (a phase parity, a column count ...) */
  kbd_cpu_wait_describe wait_desc; /* KBD_CPU_WAIT_OBJ: how to name it */
  int spinning;                    /* yielded in a poll; the scheduler prefers other warps */
  const char *wait_file;
  int wait_line;
  /* Execution model (kbd/launch.h): depth of per-lane code (KBD_FOR_LANES) and of elected-lane code
   * (KBD_ELECT_ONE) the warp is in, and where it entered, so that a collective issued from inside is
   * reported instead of being silently issued a different number of times than on the GPU. */
  int lanes_depth, elect_depth;
  /* Poll detection: a warp that reads the same word with the same result again and again (an acquire
   * load or atomic in a hand-written spin) yields as polling, so the spin is reported, not hung. */
  const void *poll_addr;
  uint64_t poll_val;
  int poll_count;
  const char *region_file;
  int region_line;
  /* Race checker: vector clock over the group's warps (every CTA of the cluster). clk[gid] is this warp's
   * own clock; clk[u] the last clock of warp u whose earlier accesses are ordered before this point. */
  uint32_t clk[KBD_CPU_MAX_GW];
  /* Interned call sites (kbd_cpu_site_id), a small direct-mapped cache by line: a loop alternates between
   * a few sites, and interning takes the process-wide lock. */
  struct {
    const char *file;
    int line;
    uint16_t id;
  } sites[16];
  uint32_t fence_clk; /* own clock at the last fence.proxy.async (generic writes up to it are visible to
                         the async proxy) */
  int bulk_groups;    /* bulk async-groups committed so far (cp.async.bulk.commit_group) */
  int nreg;           /* registers per thread (setmaxnreg moves them through the CTA's pool, kbd/cpu/regs.h) */
  int cl_arrived;     /* arrived at the cluster barrier's phase cl_phase and not yet waited (kbd/cpu/cluster.h) */
  uint32_t mbinit_fence_clk; /* own clock at the last fence.mbarrier_init: its inits up to it are cluster-visible */
  /* ... once a cluster barrier phase it arrived at after that fence completes: the fence clock it published and
   * that phase (a relaxed arrival publishes fenced inits too - the CUTLASS kernel start). */
  uint32_t pub_fence_clk, pub_phase;
  uint32_t cl_done_phase; /* cluster barrier phases completed when this warp last returned from a wait */
  uint32_t cl_phase;
  /* tcgen05 completion this warp knows of: tcseen[u] = the last tcgen05.commit of warp u (of this CTA, numbered
   * per block) whose mbarrier phase this warp has seen complete, directly or through a chain of this CTA's
   * barriers (a warp's arrival passes on what it knows: kbd_cpu_tcseen_join) - every MMA u issued before that
   * commit is done */
  uint32_t tcseen[KBD_CPU_MAX_WARPS];
  kbd_cpu_rk rk; /* reads of other warps known complete beyond clk (read releases acquired, directly or passed on) */
  void *grace;   /* global-memory race checker's state of this warp (kbd/cpu/grace.h), reset per block */
} kbd_cpu_warp;

/* One named barrier (PTX bar/barrier, ids 0..15). Counting is in threads, a warp arrives as 32. */
typedef struct kbd_cpu_barrier {
  int expected;     /* thread count of the barrier instance in flight */
  int arrived;      /* threads arrived so far */
  int whole;        /* the instance counts the whole block (no thread count given) */
  uint32_t waiters; /* warps blocked in bar.sync on it */
  uint32_t members; /* warps that arrived at the instance in flight */
  const char *file; /* where the in-flight instance was first reached */
  int line;
  uint32_t clk[KBD_CPU_MAX_GW];    /* join of the arrivals' vector clocks (release) */
  uint32_t tcq[KBD_CPU_MAX_WARPS]; /* join of the arrivals' tcgen05 completion knowledge (kbd_cpu_warp.tcseen) */
} kbd_cpu_barrier;

/* One mbarrier (PTX mbarrier, kbd/cpu/mbar.h): the state the hardware keeps in the 8-byte shared object,
 * kept here beside it, keyed by its shared-memory offset. */
typedef struct kbd_cpu_mbar {
  size_t off;       /* byte offset of the object in the CTA's shared memory */
  int live;         /* initialised and not invalidated */
  uint32_t phase;   /* current (incomplete) phase */
  int32_t pending;  /* arrivals still missing in the current phase */
  int32_t expected; /* arrivals per phase */
  int32_t tx;       /* transaction bytes still pending in the current phase (may be negative) */
  uint32_t waiters; /* warps blocked in a wait on it */
  const char *file; /* where it was initialised */
  int line;
  int init_gid;        /* the initialising warp (group index) and its clock at the init, for the check that */
  uint32_t init_clk;   /* a fence.mbarrier_init made the init visible before a peer CTA uses the barrier */
  const char *tx_file; /* the last expect-tx, for a deadlock report */
  int tx_line;
  const char *arr_file; /* the latest arrival of the current phase, and the one that completed the latest phase */
  int arr_line;         /* of each parity: a deadlock report names who lapped a late waiter */
  const char *done_file[2];
  int done_line[2];
  /* tcgen05.commit arrivals by warps of this CTA: the latest commit number per warp in the current phase, and in
   * the last completed one (a successful wait merges it into the waiter's kbd_cpu_warp.tcseen) */
  uint32_t tcq[KBD_CPU_MAX_WARPS];
  uint32_t tcq_done[KBD_CPU_MAX_WARPS];
  uint32_t clk[KBD_CPU_MAX_GW];  /* join of the current phase's releasing arrivals */
  uint32_t done[KBD_CPU_MAX_GW]; /* the join of the last completed phase: what a successful wait acquires */
  kbd_cpu_rk rk, rk_done;        /* the same for read-completion knowledge (read releases and what arrivals knew) */
  /* Per warp of the CTA, its latest successful wait: 1 + the phase it saw complete (0: none yet), its clock then
   * and where. The next phase's arrivals must be ordered after that wait (kbd_cpu_mbar_check). */
  uint32_t obs[KBD_CPU_MAX_WARPS];
  uint32_t obs_clk[KBD_CPU_MAX_WARPS];
  const char *obs_file[KBD_CPU_MAX_WARPS];
  int obs_line[KBD_CPU_MAX_WARPS];
} kbd_cpu_mbar;
#define KBD_CPU_MAX_MBARS 64

/* An asynchronous copy into shared memory in flight (kbd/cpu/tma.h): issued, not yet delivered. */
struct kbd_cpu_copy;
struct kbd_cpu_cta;
/* How a copy's data lands (kbd/cpu/tma.h): NULL for a plain byte copy, else a tensor box gather. */
typedef void (*kbd_cpu_land_fn)(struct kbd_cpu_cta *cta, const struct kbd_cpu_copy *c);

typedef struct kbd_cpu_copy {
  size_t off;      /* destination: shared offset */
  const void *src; /* source: global memory (a plain copy) or the kbd_tensor_map (a tensor box) */
  uint32_t bytes;
  kbd_cpu_land_fn land; /* NULL: memcpy of bytes from src */
  int32_t coord[5];     /* tensor box: its start coordinates */
  /* tensor box: the map as it was at the issue. The kernel's params (where a map passed by value lives) are the
   * issuing warp's fiber stack here, gone once that warp exits, while on the GPU they are param space for the
   * whole grid: the copy must not read through the pointer when it lands later. */
  kbd_tensor_map_desc desc;
  int mbar; /* index in the CTA's mbarrier table of the barrier it completes */
  /* the CTA whose shared memory receives it when that is not the barrier's (a .cta_group::2 load completing on
   * the pair's even CTA: cpu/mma_pair.h); NULL: the barrier's CTA */
  struct kbd_cpu_cta *dst;
  int issuer; /* the issuing warp (group index), and its clock at the issue: the writes' stamp */
  uint32_t clk;
  const char *file; /* where it was issued, and the call (its name) */
  int line;
  const char *what;
} kbd_cpu_copy;
#define KBD_CPU_MAX_COPIES 256

/* A bulk store or reduction out of shared memory (TMA store, kbd_bulk_store) issued and not yet waited for:
 * its source bytes must not be written until a wait_group(.read) of its group (kbd/cpu/tma.h). */
typedef struct kbd_cpu_store {
  size_t off; /* source: shared offset */
  uint32_t bytes;
  const void *dst; /* destination: global memory (a plain store) or the kbd_tensor_map (a tensor box) */
  int32_t coord[5];
  int op;     /* KBD_CPU_ST_* */
  int rank;   /* the box's rank (the call's name: kbd_tma_store2d ...); 0: kbd_bulk_store */
  int issuer; /* issuing warp, and its bulk group (0: not committed yet) */
  int group;
  const char *file; /* where it was issued */
  int line;
} kbd_cpu_store;
#define KBD_CPU_MAX_STORES 64

typedef struct kbd_cpu_static {
  const void *key; /* address of the declaration site's marker */
  size_t off, bytes;
  const char *file; /* the declaration, for reports */
  int line;
} kbd_cpu_static;

/* Shadow state of shared memory, one entry per byte, beside the data (kbd/cpu/shadow.h). */
/* The write state of a 16-byte unit of shared memory, summarised. gen counts the changes of the unit's per-byte write
 * state (wclk, winfo, wsite: kbd_cpu_shadow_wrote), so equal counts at two times mean an unchanged write state. When
 * sgen == gen, the last change was one write of the whole unit (one store, one TMA box) and wclk, winfo, wsite here
 * are every byte's: a reader of the unit's write state may take them instead of the 16 bytes' (kbd/cpu/mma_operand.h).
 * Any other change (a partial write, a raw store found) moves gen only, which leaves the summary stale, never wrong.
 * 16 bytes: the units of an MMA operand row share cache lines. */
typedef struct kbd_cpu_shadow_unit {
  uint32_t gen, sgen, wclk;
  uint16_t winfo, wsite;
} kbd_cpu_shadow_unit;

typedef struct kbd_cpu_shadow {
  uint32_t *wclk;                     /* clock of the last write (< base: never written in this CTA) */
  uint16_t *winfo;                    /* writer warp, group index (bits 0-8) | KBD_CPU_SH_* flags */
  uint32_t *rmask;                    /* warps of this CTA that read since the last write */
  uint16_t *wsite;                    /* site of the last write (kbd_cpu_site_id), for a race report */
  uint32_t *rclk[KBD_CPU_MAX_WARPS];  /* per warp of this CTA: its clock at its last read of the byte */
  uint16_t *rsite[KBD_CPU_MAX_WARPS]; /* ... and the site of that read */
  kbd_cpu_shadow_unit *unit;          /* per 16-byte unit: byte b's is unit[b / 16] */
  /* Unit read records: bit u of urmask[U] says that warp u's last read of every byte of 16-byte unit U was one read of
   * the whole unit (an MMA operand's, at its retirement) at clock urclk[u][U] from site ursite[u][U], and that it
   * stands for the per-byte rmask bit, rclk and rsite of warp u on those bytes, which may be stale. Any per-byte
   * access to u's read state of U expands the record first (kbd_cpu_shadow_unit_expand); a write of the whole unit
   * drops it. */
  uint32_t *urmask;
  uint32_t *urclk[KBD_CPU_MAX_WARPS];
  uint16_t *ursite[KBD_CPU_MAX_WARPS];
  int unit_reads; /* some unit read record was made in this shadow: per-byte read paths look for them */
  /* The last read by a warp of ANOTHER CTA of the cluster (distributed shared memory) since the last write:
   * its clock (0: none), group index and site. Only the latest remote reader is kept (docs/clusters.md). */
  uint32_t *rrclk;
  uint16_t *rrwho, *rrsite;
  int remote_reads; /* some remote read was recorded since the CTA started: writes clear and check rr* */
  void *map;        /* one allocation holds every array; pages are touched only where used */
  uint32_t base;    /* first clock of the running group: older stamps belong to earlier CTAs */
} kbd_cpu_shadow;

/* An mbarrier arrive made while a wgmma its warp had issued was still pending in that warp (sm_90a,
 * kbd/cpu/mma_wgmma.h): if a write into that wgmma's operand bytes is then ordered after this arrive and not after the
 * wgmma's completion, the arrive released the stage early and the race report names it (kbd_cpu_wg_early_report,
 * kbd/cpu/shadow.h). */
typedef struct kbd_cpu_wgrel {
  const char *file; /* the arrive */
  int line;
  int gid;                        /* the arriving warp (group index) */
  uint32_t clk;                   /* its clock at the arrive: what the arrive released (or, to a peer, told complete) */
  const struct kbd_cpu_cta *mcta; /* the barrier's CTA and shared offset */
  size_t moff;
  int how;    /* KBD_CPU_WGREL_*: the wgmma's state in the arriving warp then */
  int wait_n; /* KBD_CPU_WGREL_LEFT: the N of the wgmma.wait_group that left its group pending */
} kbd_cpu_wgrel;
enum { KBD_CPU_WGREL_UNCOMMITTED = 0, KBD_CPU_WGREL_LEFT = 1, KBD_CPU_WGREL_COMMITTED = 2 };
#define KBD_CPU_WGRELS 4 /* early arrives remembered per wgmma (the first ones) */

/* A wgmma that such an arrive released early, retired since: its operand reads are in the shadow under `reader`
 * (group index) at clock rclk with the wgmma's site, so a later write-after-read race on them can name the arrive. */
typedef struct kbd_cpu_wgrel_read {
  uint32_t rclk;
  int reader;
  const char *file; /* the wgmma's issue */
  int line;
  int nrel;
  kbd_cpu_wgrel rel[KBD_CPU_WGRELS];
} kbd_cpu_wgrel_read;
#define KBD_CPU_WGREL_READS 16 /* the last ones, per CTA */

typedef struct kbd_cpu_cta {
  struct kbd_cpu_group *G;
  struct kbd_cpu_launch *L;
  int rank; /* %cluster_ctarank: the CTA's slot in its group */
  unsigned bx, by, bz;
  unsigned long long linear;
  int nwarps;
  unsigned char *smem; /* KBD_MAX_SMEM_BYTES, 1024-byte aligned */
  size_t dyn_bytes;    /* dynamic shared memory sits at offset 0 */
  size_t smem_top;     /* end of dynamic + static allocations */
  size_t smem_need;    /* the bytes the GPU would give the block: smem_top less the guard page's gap (residency) */
  int nstatics;
  kbd_cpu_static statics[KBD_CPU_MAX_STATICS];
  kbd_cpu_shadow sh;
  kbd_cpu_barrier bars[KBD_NUM_NAMED_BARRIERS];
  /* each named barrier's instance in flight: the join of its arrivals' read-completion knowledge (beside bars, which
   * a CTA start clears whole: only `any` is reset there, the vectors are rewritten when an instance first gets one) */
  kbd_cpu_rk bar_rk[KBD_NUM_NAMED_BARRIERS];
  int nmbars; /* mbarriers ever initialised in this CTA (live or not) */
  kbd_cpu_mbar mbars[KBD_CPU_MAX_MBARS];
  int reg_base; /* registers per thread at launch (kbd/cpu/regs.h) */
  int reg_pool; /* registers released by setmaxnreg.dec, not yet taken by .inc (thread registers) */
  int ncopies;  /* asynchronous copies in flight */
  kbd_cpu_copy copies[KBD_CPU_MAX_COPIES];
  int nstores; /* bulk stores / reductions not yet waited for */
  kbd_cpu_store stores[KBD_CPU_MAX_STORES];
  /* kbd/cpu/mma.h: the CTA's wgmma / tcgen05 / Tensor Memory state, allocated at its first use and kept with
   * the cached CTA (it resets itself when it sees a new CTA); its exit check and its destructor. */
  void *mma;
  void (*mma_exit)(struct kbd_cpu_warp *w);
  void (*mma_free)(void *mma);
  /* sm_90a early stage releases (kbd/cpu/mma_wgmma.h): called at every mbarrier arrive of a warp of this CTA, and,
   * while wg_early (pending wgmmas such an arrive released) is not 0, at every write into this CTA's shared memory;
   * the retired ones' reads, for the write-after-read report (kbd_cpu_race) */
  void (*mma_arrive)(struct kbd_cpu_warp *w, const struct kbd_cpu_mbar *m, const char *file, int line);
  void (*mma_early_write)(struct kbd_cpu_cta *cta, struct kbd_cpu_warp *w, size_t off, size_t n, const char *what,
                          const char *file, int line);
  int wg_early;
  int nwgrel_reads; /* entries written so far (the ring holds the last ones) */
  kbd_cpu_wgrel_read wgrel_reads[KBD_CPU_WGREL_READS];
  kbd_cpu_warp warps[KBD_CPU_MAX_WARPS];
} kbd_cpu_cta;

typedef struct kbd_cpu_group {
  struct kbd_cpu_launch *L;
  unsigned long long first; /* linear index of the first CTA */
  int nctas;
  int nwarps; /* over all CTAs */
  int last;   /* last warp run (round robin), group-linear */
  int failed;
  int spins; /* consecutive spin yields without useful work */
  uint64_t rng;
  uint32_t top;        /* highest clock handed out in the group's CTAs' shadows */
  unsigned cx, cy, cz; /* %clusterid of the running cluster */
  /* The cluster barrier (barrier.cluster, kbd/cpu/cluster.h): warps arrived in the current phase, the join of
   * their releasing arrivals, and the join of the last completed phase (what a wait acquires). */
  uint32_t cl_phase;
  int cl_arrived;
  const char *cl_file; /* where the phase in flight was first arrived at */
  int cl_line;
  uint32_t cl_clk[KBD_CPU_MAX_GW];
  uint32_t cl_done[KBD_CPU_MAX_GW];
  kbd_cpu_rk cl_rk, cl_rk_done; /* the same for read-completion knowledge (kbd_cpu_rk) */
  kbd_fiber sched;
  kbd_stack_pool stacks;
  struct kbd_cpu_group *next; /* free list of recycled groups */
  kbd_cpu_cta *ctas[KBD_CPU_MAX_GROUP];
} kbd_cpu_group;

typedef struct kbd_cpu_launch {
  kbd_launch_cfg cfg;
  int threads;
  kbd_cpu_entry entry;
  const void *params;
  const char *name;
  unsigned long long nblocks;
  unsigned long long nclusters;  /* groups: nblocks / cluster size */
  unsigned ccx, ccy, ccz;        /* cluster shape (1, 1, 1 without clusters) */
  int csize;                     /* CTAs per cluster */
  unsigned long long next;       /* next block to start (atomic) */
  unsigned long long fail_block; /* lowest failed block, ~0 if none (atomic, guarded by mu) */
  pthread_mutex_t mu;
  kbd_status status;
  uint64_t seed;
  int race_check;       /* KBD_CPU_RACECHECK (default 1) */
  unsigned grace_epoch; /* global-memory race checker (kbd/cpu/grace.h): the launch's epoch, 0 until first used */
  int grace_on;         /* ... and whether it checks (KBD_CPU_GLOBAL_RACECHECK, default 1) */
  size_t stack_bytes;
  unsigned long long progress; /* bumped by flag writes and finished blocks (atomic) */
  int live_workers;            /* host threads still running blocks (atomic) */
  int stalled_workers;         /* of which only hold blocks waiting on other blocks (atomic) */
  long spin_timeout_ms;
  /* residency (kbd/cpu/pool.h, docs/cpu-machine.md "Residency"): groups hold a slot from their start to their end,
   * at most `cap` at once, however many host threads run them */
  int sms;                     /* SMs of the emulated GPU: the arch's, or KBD_CPU_SMS */
  int sms_set;                 /* ... set by KBD_CPU_SMS */
  int regs;                    /* registers per thread known (KBD_CPU_REGS, a setmaxnreg budget); 0: unknown */
  int regs_from;               /* where regs came from: KBD_CPU_REGS_* (kbd/cpu/pool.h) */
  size_t foot;                 /* shared bytes per block known so far: dynamic + static declarations reached */
  int per_sm;                  /* blocks per SM under the tightest limit */
  int limit;                   /* which limit that is: KBD_CPU_LIM_* (kbd/cpu/pool.h) */
  unsigned long long cap;      /* groups that may be resident at once (atomic: shrinks as statics are learned) */
  unsigned long long resident; /* groups holding a slot (atomic) */
  unsigned long long stuck;    /* 1 + the groups taken when a cross-block deadlock was first seen; 0: none (atomic) */
  /* trace */
  int trace_read;                  /* KBD_CPU_TRACE was read for this launch (kbd/cpu/trace.h) */
  unsigned long long trace_block1; /* 1 + the linear index of the traced block; 0: tracing off */
  unsigned long trace_seq;         /* events logged so far */
  /* profile */
  void *prof; /* the merged per-launch profile while the launch runs, NULL when off (kbd/cpu/profile.h) */
  /* message pieces kept until the launch ends (kbd_cpu_keep) */
  struct kbd_cpu_kept *kept;
} kbd_cpu_launch;

/* A fault's message is built from pieces that name places ("shared array declared at FILE:LINE"), each as long
 * as its path; kbd_cpu_fault never returns to the code that built them, so the launch owns them and frees them
 * when it ends. Only fault and report paths keep anything. */
typedef struct kbd_cpu_kept {
  struct kbd_cpu_kept *next;
  char *s;
} kbd_cpu_kept;

/* The text's string, kept by launch L; t is left empty. */
static inline const char *kbd_cpu_keep(kbd_cpu_launch *L, kbd_text *t) {
  if (!t->s) return "";
  kbd_cpu_kept *k = (kbd_cpu_kept *)malloc(sizeof *k);
  if (!k) {
    kbd_text_free(t);
    return "(a description lost: out of memory)";
  }
  k->s = t->s;
  t->s = NULL;
  kbd_text_free(t);
  pthread_mutex_lock(&L->mu);
  k->next = L->kept;
  L->kept = k;
  pthread_mutex_unlock(&L->mu);
  return k->s;
}

static inline void kbd_cpu_kept_free(kbd_cpu_launch *L) {
  for (kbd_cpu_kept *k = L->kept, *next; k; k = next) {
    next = k->next;
    free(k->s);
    free(k);
  }
  L->kept = NULL;
}

/* The warp whose fiber is running on this host thread. Weak: one instance for the whole program, no
 * matter how many translation units include kbd (a `static` would be one copy per TU). */
KBD_WEAK __thread kbd_cpu_warp *kbd_cpu_cur = NULL;

/* The running warp; kernel-only functions called from host code stop here with a message instead of
 * dereferencing NULL. */
static inline kbd_cpu_warp *kbd_cpu_self(void) {
  kbd_cpu_warp *w = kbd_cpu_cur;
  if (KBD_UNLIKELY(!w)) {
    fprintf(stderr, "kbd: a kernel-only function (index, barrier, shared memory) was called outside a kernel\n");
    abort();
  }
  return w;
}

static inline long kbd_cpu_env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  char *end = NULL;
  long v = strtol(s, &end, 0);
  return (end && *end == '\0') ? v : dflt;
}

static inline int kbd_cpu_host_threads(void) {
  long n = kbd_cpu_env_long("KBD_CPU_THREADS", 0);
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n <= 0) n = 1;
  return n > 256 ? 256 : (int)n;
}

static inline uint64_t kbd_cpu_rand(uint64_t *s) { /* splitmix64: cheap, good enough to permute warps */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* C11 timespec_get: available under -std=c11 whatever feature macros the includer set. */
static inline void kbd_cpu_now(struct timespec *t) { timespec_get(t, TIME_UTC); }
static inline double kbd_cpu_ms_since(const struct timespec *t0) {
  struct timespec t;
  kbd_cpu_now(&t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) * 1e-6;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_STATE_H */
