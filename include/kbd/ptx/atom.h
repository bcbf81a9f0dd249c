/* kbd/ptx/atom.h - global-memory flags and atomics between blocks, polls, one-lane values (GPU twin of
 * cpu/atom.h). Acquire/release at .gpu scope (PTX memory model): a block that publishes data then a flag
 * with st.release, and a block that sees the flag with ld.acquire, sees the data. */
#ifndef KBD_PTX_ATOM_H
#define KBD_PTX_ATOM_H

#include "../config.h"

#if KBD_MODE_CUDA

/* ld.acquire.gpu.global.u32 d, [a];     PTX ISA 6.0, sm_70 */
KBD_DEV uint32_t kbd_hw_ld_acquire_u32(const uint32_t *p, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
/* ld.acquire.gpu.global.u64 d, [a];     PTX ISA 6.0, sm_70 */
KBD_DEV uint64_t kbd_hw_ld_acquire_u64(const uint64_t *p, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return (uint64_t)v;
}
/* st.release.gpu.global.u32 [a], b;     PTX ISA 6.0, sm_70 */
KBD_DEV void kbd_hw_st_release_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* st.release.gpu.global.u64 [a], b;     PTX ISA 6.0, sm_70 */
KBD_DEV void kbd_hw_st_release_u64(uint64_t *p, uint64_t v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"((unsigned long long)v) : "memory");
}
/* atom.global.add.u32 d, [a], b;     PTX ISA 1.1, sm_11 (relaxed) */
KBD_DEV uint32_t kbd_hw_atomic_add_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t old;
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
/* atom.acq_rel.gpu.global.add.u32 d, [a], b;     PTX ISA 6.0, sm_70 - orders this thread's earlier writes
 * before, and later reads after, the atomic (the "last block done" pattern). */
KBD_DEV uint32_t kbd_hw_atomic_add_acq_rel_u32(uint32_t *p, uint32_t v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
/* atom.global.add.u64 d, [a], b;     PTX ISA 1.2, sm_12 */
KBD_DEV uint64_t kbd_hw_atomic_add_u64(uint64_t *p, uint64_t v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  unsigned long long old;
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"((unsigned long long)v) : "memory");
  return (uint64_t)old;
}
/* atom.global.add.f32 d, [a], b;     PTX ISA 2.0, sm_20 - round to nearest, subnormal inputs and result
 * flushed to sign-preserving zero */
KBD_DEV float kbd_hw_atomic_add_f32(float *p, float v, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  float old;
  asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(p), "f"(v) : "memory");
  return old;
}

/* One iteration of a poll loop: nanosleep.u32 (PTX ISA 6.3, sm_70) backs off so polling warps leave issue
 * slots and L2 bandwidth to the block they wait for. */
KBD_DEV void kbd_hw_poll_wait(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("nanosleep.u32 32;" ::: "memory");
}

/* `type var = expr` evaluated by lane 0 only and broadcast (shfl.sync.idx) to the warp. */
#define KBD_HW_ONE_LANE(type, var, expr)                                                                               \
  type var;                                                                                                            \
  do {                                                                                                                 \
    type kbd_one_ = (type)0;                                                                                           \
    if ((threadIdx.x & 31u) == 0) kbd_one_ = (expr);                                                                   \
    var = __shfl_sync(0xffffffffu, kbd_one_, 0);                                                                       \
  } while (0)

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_ATOM_H */
