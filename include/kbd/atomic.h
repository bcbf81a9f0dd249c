/* kbd/atomic.h - global-memory flags and atomics for communication between blocks.
 *
 *   kbd_ld_acquire_u32(p) / _u64     ld.acquire.gpu.global.u32 / .u64
 *   kbd_st_release_u32(p, v) / _u64  st.release.gpu.global.u32 / .u64
 *   kbd_atomic_add_u32(p, v)         atom.global.add.u32       (relaxed, returns the old value)
 *   kbd_atomic_add_acq_rel_u32(p, v) atom.acq_rel.gpu.global.add.u32
 *   kbd_atomic_add_u64(p, v)         atom.global.add.u64
 *   kbd_atomic_add_f32(p, v)         atom.global.add.f32
 *   KBD_SPIN_UNTIL(cond)             poll until cond holds (a block waiting for another block)
 *   KBD_ONE_LANE(type, var, expr)    evaluate expr once per warp (lane 0) and give every lane the result
 *
 * Acquire/release at .gpu scope: a block that publishes data then a flag with st.release, and a block
 * that sees the flag with ld.acquire, sees the data (PTX memory model). Use these for every flag another
 * block polls: in CPU mode they are C11-style atomics between host threads, and each write also tells
 * the CPU machine that a waiting block may now proceed.
 *
 * Per-thread vs per-warp: loads and stores are idempotent, so warp-uniform code may call them (32 lanes
 * load the same word on the GPU, the warp once on the CPU). Atomics are not: an atomic in plain kernel
 * code would run 32 times on the GPU and once per warp on the CPU. Wrap them in KBD_ONE_LANE.
 *
 * Progress between blocks: the GPU does not promise that a block waiting for a later block is ever
 * co-resident with it; take block order from an atomic ticket (KBD_ONE_LANE + kbd_atomic_add_u32) so a
 * block only ever waits for blocks that started before it. The CPU machine keeps up to 64 blocks per host
 * thread in flight, switching away from a block whose warps all spin, and reports a cross-block deadlock
 * (every running block spins and no flag changes for KBD_CPU_SPIN_TIMEOUT_MS, default 200 ms).
 */
#ifndef KBD_ATOMIC_H
#define KBD_ATOMIC_H

#include "config.h"

#if KBD_MODE_CPU
#include <string.h>

#include "cpu/machine.h"

KBD_DEV uint32_t kbd_ld_acquire_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
KBD_DEV uint64_t kbd_ld_acquire_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
KBD_DEV void kbd_st_release_u32(uint32_t *p, uint32_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
  kbd_cpu_note_progress();
}
KBD_DEV void kbd_st_release_u64(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
  kbd_cpu_note_progress();
}
KBD_DEV uint32_t kbd_atomic_add_u32(uint32_t *p, uint32_t v) {
  uint32_t old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  kbd_cpu_note_progress();
  return old;
}
KBD_DEV uint32_t kbd_atomic_add_acq_rel_u32(uint32_t *p, uint32_t v) {
  uint32_t old = __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
  kbd_cpu_note_progress();
  return old;
}
KBD_DEV uint64_t kbd_atomic_add_u64(uint64_t *p, uint64_t v) {
  uint64_t old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  kbd_cpu_note_progress();
  return old;
}
KBD_DEV float kbd_atomic_add_f32(float *p, float v) {
  uint32_t *u = (uint32_t *)(void *)p, old = __atomic_load_n(u, __ATOMIC_RELAXED), nu;
  do {
    float f, g;
    memcpy(&f, &old, 4);
    g = f + v;
    memcpy(&nu, &g, 4);
  } while (!__atomic_compare_exchange_n(u, &old, nu, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  kbd_cpu_note_progress();
  float r;
  memcpy(&r, &old, 4);
  return r;
}
#define KBD_SPIN_UNTIL(cond)                                                                                           \
  do {                                                                                                                 \
    while (!(cond))                                                                                                    \
      kbd_cpu_spin(__FILE__, __LINE__);                                                                                \
  } while (0)
#define KBD_ONE_LANE(type, var, expr) type var = (expr)

#elif KBD_MODE_CUDA

/* ld.acquire.gpu.global.u32 d, [a]; */
KBD_DEV uint32_t kbd_ld_acquire_u32(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
/* ld.acquire.gpu.global.u64 d, [a]; */
KBD_DEV uint64_t kbd_ld_acquire_u64(const uint64_t *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return (uint64_t)v;
}
/* st.release.gpu.global.u32 [a], b; */
KBD_DEV void kbd_st_release_u32(uint32_t *p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* st.release.gpu.global.u64 [a], b; */
KBD_DEV void kbd_st_release_u64(uint64_t *p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"((unsigned long long)v) : "memory");
}
/* atom.global.add.u32 d, [a], b; */
KBD_DEV uint32_t kbd_atomic_add_u32(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
/* atom.acq_rel.gpu.global.add.u32 d, [a], b; - orders this thread's earlier writes before, and later
 * reads after, the atomic (the "last block done" pattern). */
KBD_DEV uint32_t kbd_atomic_add_acq_rel_u32(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
/* atom.global.add.u64 d, [a], b; */
KBD_DEV uint64_t kbd_atomic_add_u64(uint64_t *p, uint64_t v) {
  unsigned long long old;
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"((unsigned long long)v) : "memory");
  return (uint64_t)old;
}
/* atom.global.add.f32 d, [a], b; */
KBD_DEV float kbd_atomic_add_f32(float *p, float v) {
  float old;
  asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(p), "f"(v) : "memory");
  return old;
}
/* nanosleep.u32 backs the poll off so spinning warps leave issue slots and L2 bandwidth to the block
 * they wait for. */
#define KBD_SPIN_UNTIL(cond)                                                                                           \
  do {                                                                                                                 \
    while (!(cond))                                                                                                    \
      __nanosleep(32);                                                                                                 \
  } while (0)
#define KBD_ONE_LANE(type, var, expr)                                                                                  \
  type var;                                                                                                            \
  do {                                                                                                                 \
    type kbd_one_ = (type)0;                                                                                           \
    if ((threadIdx.x & 31u) == 0) kbd_one_ = (expr);                                                                   \
    var = __shfl_sync(0xffffffffu, kbd_one_, 0);                                                                       \
  } while (0)
#endif

#endif /* KBD_ATOMIC_H */
