/* kbd/cpu/atom.h - global-memory flags and atomics between blocks, polls, one-lane values on the CPU
 * machine (twin of ptx/atom.h). Blocks run on several host threads, so these are real C11-style atomics
 * between host threads; each write also tells the machine that a polling block may proceed.
 *
 * Issue counts: atomics are per-thread operations. On the GPU each lane that executes one issues it, so
 * an atomic in warp-uniform code runs 32 times; here warp-uniform code runs once. An atomic must
 * therefore sit in per-lane code (KBD_FOR_LANES: 32 issues on both) or elected-lane code (KBD_ELECT_ONE
 * / KBD_ELECT_ONE_VALUE: 1 issue on both); anywhere else it is a KBD_ERR_ISSUE fault.
 * Races on global memory (kbd/cpu/grace.h): these accesses are atomics, never part of a race; the release forms
 * publish what the warp knows on the flag and the acquire forms take it, under one lock with the memory operation.
 * Relaxed atomics order nothing.
 * Polls: an acquire load or atomic that returns the same value from the same address 64 times in a row
 * yields as a poll, so a hand-written spin lets other warps and blocks run, and one that can never end
 * is reported as a deadlock instead of hanging.
 */
#ifndef KBD_CPU_ATOM_H
#define KBD_CPU_ATOM_H

#include <string.h>

#include "lanes.h"
#include "machine.h"

#if KBD_MODE_CPU

#define KBD_CPU_POLL_REPEATS 64

/* atom.add.f32 flushes subnormal inputs and results to sign-preserving zero (PTX ISA, atom). */
static inline float kbd_cpu_ftz_(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
  memcpy(&x, &u, 4);
  return x;
}
static inline float kbd_cpu_atom_add_f32_value(float a, float b) {
  return kbd_cpu_ftz_(kbd_cpu_ftz_(a) + kbd_cpu_ftz_(b));
}

static inline void kbd_cpu_per_thread(const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  if (KBD_UNLIKELY(!w->lanes_depth && !w->elect_depth))
    kbd_cpu_fault(KBD_ERR_ISSUE, KBD_SITE_ARGS,
                  "%s in warp-uniform code: on the GPU every lane issues it (32 per warp), here the warp issues it "
                  "once. Put it in KBD_FOR_LANES (one per lane) or KBD_ELECT_ONE / KBD_ELECT_ONE_VALUE (one per warp)",
                  what);
}

static inline void kbd_cpu_polled(const void *p, uint64_t v, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  if (w->poll_addr == p && w->poll_val == v) {
    if (++w->poll_count >= KBD_CPU_POLL_REPEATS) {
      w->poll_count = 0;
      kbd_cpu_spin(KBD_SITE_ARGS);
    }
  } else {
    w->poll_addr = p;
    w->poll_val = v;
    w->poll_count = 1;
  }
}

static inline uint32_t kbd_hw_ld_acquire_u32(const uint32_t *p, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_READ | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_ld_acquire_u32");
  kbd_cpu_gr_warp *g = kbd_cpu_gr_sync_begin();
  const uint32_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
  if (g) kbd_cpu_gr_acquire(g, p);
  kbd_cpu_gr_sync_end(g);
  kbd_cpu_polled(p, v, KBD_SITE_ARGS);
  return v;
}
static inline uint64_t kbd_hw_ld_acquire_u64(const uint64_t *p, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_READ | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_ld_acquire_u64");
  kbd_cpu_gr_warp *g = kbd_cpu_gr_sync_begin();
  const uint64_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
  if (g) kbd_cpu_gr_acquire(g, p);
  kbd_cpu_gr_sync_end(g);
  kbd_cpu_polled(p, v, KBD_SITE_ARGS);
  return v;
}
static inline void kbd_hw_st_release_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_WRITE | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_st_release_u32");
  kbd_cpu_gr_warp *g = kbd_cpu_gr_sync_begin();
  if (g) kbd_cpu_gr_release(g, p, 0);
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
  kbd_cpu_gr_sync_end(g);
  kbd_cpu_note_progress();
}
static inline void kbd_hw_st_release_u64(uint64_t *p, uint64_t v, KBD_SITE_PARAMS) {
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_WRITE | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_st_release_u64");
  kbd_cpu_gr_warp *g = kbd_cpu_gr_sync_begin();
  if (g) kbd_cpu_gr_release(g, p, 0);
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
  kbd_cpu_gr_sync_end(g);
  kbd_cpu_note_progress();
}
static inline uint32_t kbd_hw_atomic_add_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  kbd_cpu_per_thread("kbd_atomic_add_u32", KBD_SITE_ARGS);
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_RMW | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_atomic_add_u32");
  const uint32_t old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  kbd_cpu_note_progress();
  kbd_cpu_polled(p, old, KBD_SITE_ARGS);
  return old;
}
static inline uint32_t kbd_hw_atomic_add_acq_rel_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  kbd_cpu_per_thread("kbd_atomic_add_acq_rel_u32", KBD_SITE_ARGS);
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_RMW | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_atomic_add_acq_rel_u32");
  /* acquire what the release sequence so far published, then continue it with what this warp knows */
  kbd_cpu_gr_warp *g = kbd_cpu_gr_sync_begin();
  if (g) kbd_cpu_gr_acquire(g, p);
  if (g) kbd_cpu_gr_release(g, p, 1);
  const uint32_t old = __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
  kbd_cpu_gr_sync_end(g);
  kbd_cpu_note_progress();
  kbd_cpu_polled(p, old, KBD_SITE_ARGS);
  return old;
}
static inline uint64_t kbd_hw_atomic_add_u64(uint64_t *p, uint64_t v, KBD_SITE_PARAMS) {
  kbd_cpu_per_thread("kbd_atomic_add_u64", KBD_SITE_ARGS);
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_RMW | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_atomic_add_u64");
  const uint64_t old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  kbd_cpu_note_progress();
  kbd_cpu_polled(p, old, KBD_SITE_ARGS);
  return old;
}
static inline float kbd_hw_atomic_add_f32(float *p, float v, KBD_SITE_PARAMS) {
  kbd_cpu_per_thread("kbd_atomic_add_f32", KBD_SITE_ARGS);
  kbd_cpu_global_access(p, sizeof *p, KBD_CPU_G_RMW | KBD_CPU_G_ATOMIC, KBD_SITE_ARGS, "kbd_atomic_add_f32");
  uint32_t *u = (uint32_t *)(void *)p, old = __atomic_load_n(u, __ATOMIC_RELAXED), nu;
  do {
    float f, g;
    memcpy(&f, &old, 4);
    g = kbd_cpu_atom_add_f32_value(f, v);
    memcpy(&nu, &g, 4);
  } while (!__atomic_compare_exchange_n(u, &old, nu, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  kbd_cpu_note_progress();
  float r;
  memcpy(&r, &old, 4);
  return r;
}

static inline void kbd_hw_poll_wait(KBD_SITE_PARAMS) { kbd_cpu_spin(KBD_SITE_ARGS); }

/* Warp-uniform code already runs once per warp: evaluate once, inside an elected-lane region so that
 * per-thread operations in expr count once, as lane 0's do on the GPU. */
#define KBD_HW_ONE_LANE(type, var, expr)                                                                               \
  type var = (kbd_cpu_elect_enter(__FILE__, __LINE__), (type)(expr));                                                  \
  kbd_cpu_elect_leave()

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_ATOM_H */
