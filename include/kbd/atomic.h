/* kbd/atomic.h - global-memory flags and atomics for communication between blocks.
 *
 *   kbd_ld_acquire_u32(p) / _u64     ld.acquire.gpu.global.u32 / .u64
 *   kbd_st_release_u32(p, v) / _u64  st.release.gpu.global.u32 / .u64
 *   kbd_atomic_add_u32(p, v)         atom.global.add.u32       (relaxed, returns the old value)
 *   kbd_atomic_add_acq_rel_u32(p, v) atom.acq_rel.gpu.global.add.u32
 *   kbd_atomic_add_u64(p, v)         atom.global.add.u64
 *   kbd_atomic_add_f32(p, v)         atom.global.add.f32
 *   KBD_SPIN_UNTIL(cond)             poll until cond holds (a block waiting for another block)
 *   KBD_ELECT_ONE_VALUE(type, var, expr)   declare `type var`: expr evaluated once per warp (lane 0), the
 *                                    result in every lane - the value form of KBD_ELECT_ONE { }
 *
 * Acquire/release at .gpu scope: a block that publishes data then a flag with st.release, and a block
 * that sees the flag with ld.acquire, sees the data (PTX memory model). Use these for every flag another
 * block polls: in CPU mode they are C11-style atomics between host threads, and each write also tells
 * the CPU machine that a waiting block may now proceed.
 *
 * Per-thread vs per-warp: loads and stores are idempotent, so warp-uniform code may call them (32 lanes
 * load the same word on the GPU, the warp once on the CPU). Atomics are not: an atomic in plain kernel
 * code would run 32 times on the GPU and once per warp on the CPU, so the CPU machine rejects it
 * (KBD_ERR_ISSUE). Put atomics in KBD_FOR_LANES (one per lane), KBD_ELECT_ONE or KBD_ELECT_ONE_VALUE (one
 * per warp). Polls: an acquire load or atomic that keeps returning the same value is a scheduling point on
 * the CPU machine, so a hand-written spin is reported as a deadlock when nothing can end it.
 *
 * Progress between blocks: the GPU does not promise that a block waiting for a later block is ever
 * co-resident with it; take block order from an atomic ticket (KBD_ELECT_ONE_VALUE + kbd_atomic_add_u32) so a
 * block only ever waits for blocks that started before it. The CPU machine keeps as many blocks in flight as
 * the emulated GPU holds resident (SMs x blocks per SM, docs/cpu-machine.md "Residency"), switching away from a
 * block whose warps all spin, and reports a cross-block deadlock (every running block spins and no flag changes
 * for KBD_CPU_SPIN_TIMEOUT_MS, default 200 ms), naming residency when the block waited for cannot start.
 */
#ifndef KBD_ATOMIC_H
#define KBD_ATOMIC_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"

#define kbd_ld_acquire_u32(p) kbd_hw_ld_acquire_u32((p), KBD_SITE)
#define kbd_ld_acquire_u64(p) kbd_hw_ld_acquire_u64((p), KBD_SITE)
#define kbd_st_release_u32(p, v) kbd_hw_st_release_u32((p), (v), KBD_SITE)
#define kbd_st_release_u64(p, v) kbd_hw_st_release_u64((p), (v), KBD_SITE)
#define kbd_atomic_add_u32(p, v) kbd_hw_atomic_add_u32((p), (v), KBD_SITE)
#define kbd_atomic_add_acq_rel_u32(p, v) kbd_hw_atomic_add_acq_rel_u32((p), (v), KBD_SITE)
#define kbd_atomic_add_u64(p, v) kbd_hw_atomic_add_u64((p), (v), KBD_SITE)
#define kbd_atomic_add_f32(p, v) kbd_hw_atomic_add_f32((p), (v), KBD_SITE)
#define KBD_SPIN_UNTIL(cond)                                                                                           \
  do {                                                                                                                 \
    while (!(cond))                                                                                                    \
      kbd_hw_poll_wait(KBD_SITE);                                                                                      \
  } while (0)
#define KBD_ELECT_ONE_VALUE(type, var, expr) KBD_HW_ONE_LANE(type, var, expr)
/* Renamed (one elected-lane vocabulary: KBD_ELECT_ONE { } the block, KBD_ELECT_ONE_VALUE the value). The old
 * name still declares var, so that its later uses add no errors after the one that names the new macro. */
#define KBD_ONE_LANE(type, var, expr)                                                                                  \
  KBD_STATIC_ASSERT(0, "kbd: KBD_ONE_LANE(type, var, expr) is gone: call KBD_ELECT_ONE_VALUE(type, var, expr) "        \
                       "(the value form of KBD_ELECT_ONE { })");                                                       \
  type var = (type)(0 * sizeof(kbd__renamed_args_(0, expr)))
/* Plain scalar global accesses that the CPU machine checks (bounds, never-written bytes) and records
 * (written state): *p = v / *p. A raw `p[i] = v` works the same on the GPU but is invisible to the
 * machine, so a later kbd load of those bytes is reported as never written. Per-thread: like any store,
 * 32 lanes storing the same value to the same address are one value. */
#define kbd_st_global(p, v)                                                                                            \
  (kbd_hw_global_write((p), sizeof *(p), "kbd_st_global", KBD_SITE), KBD__SCALAR_PROF(p, 1, "kbd_st_global"),          \
   (void)(*(p) = (v)))
#define kbd_ld_global(p)                                                                                               \
  (kbd_hw_global_read((p), sizeof *(p), "kbd_ld_global", KBD_SITE), KBD__SCALAR_PROF(p, 0, "kbd_ld_global"), *(p))
/* KBD_CPU_PROFILE records the access as a global site (the kbd_hw_prof_* twins: cpu/profile.h records, ptx/profile.h
 * is nothing on the GPU). op: 0 ld, 1 st. */
#define KBD__SCALAR_PROF(p, op, what) kbd_hw_prof_scalar_global((p), (int)sizeof *(p), (op), (what), KBD_SITE)
#endif

#endif /* KBD_ATOMIC_H */
