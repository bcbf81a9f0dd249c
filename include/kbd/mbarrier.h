/* kbd/mbarrier.h - mbarriers: phase-counting barriers in shared memory, the pacing of TMA pipelines.
 *
 *   KBD_SHARED_ALIGNED(kbd_mbarrier, bars, n, 8)    n barrier objects (8 bytes each) in shared memory
 *   kbd_mbarrier_init(bar, count)                 phase 0; each phase completes after `count` arrivals
 *   kbd_mbarrier_inval(bar)                       before the memory is reused (or re-initialised)
 *   kbd_mbarrier_arrive(bar)                      one arrival per executing thread (release)
 *   kbd_mbarrier_arrive_n(bar, n)                 n arrivals per executing thread
 *   kbd_mbarrier_arrive_expect_tx(bar, bytes)     expect `bytes` of asynchronous copies, then arrive once
 *   kbd_mbarrier_expect_tx(bar, bytes)            expect bytes without arriving
 *   kbd_mbarrier_complete_tx(bar, bytes)          what a finished copy of `bytes` signals (tests, emulation)
 *   kbd_mbarrier_wait(bar, parity)                wait until the phase of parity `parity` completes (acquire)
 *   kbd_mbarrier_try_wait(bar, parity)            1 if it has (acquire), 0 if not yet: loop on it
 *   kbd_mbarrier_test_wait(bar, parity)           the same without the hardware's suspend (a pure poll)
 *   kbd_mbarrier_addr(bar)                        its 32-bit shared address (cvta.to.shared; CPU: the offset in
 *                                                 the block's shared window), for the _at forms
 *   kbd_mbarrier_addr_uniform(bar)                the same, lane 0's, broadcast to the warp (converged warp-uniform
 *                                                 code): ptxas keeps it in a register (it rematerialises the plain
 *                                                 form in a hot loop) and knows it warp-uniform
 *   kbd_mbarrier_wait_at(addr, parity)            kbd_mbarrier_wait of the barrier at shared address addr
 *   kbd_mbarrier_arrive_at(addr)                  kbd_mbarrier_arrive of it (a hot loop keeps one 32-bit base and
 *                                                 adds 8 x the stage, where a pointer is a 64-bit generic address)
 *   kbd_pipe ps = kbd_pipe_start(stages)          ring position: ps.stage, ps.parity (the parity to wait for
 *   kbd_pipe_advance(&ps)                         on "full"; producers wait on "empty" with ps.parity ^ 1)
 *   kbd_fence_mbarrier_init()                     initialisations visible to the cluster (before its barrier)
 *   kbd_bulk_load(dst, src, bytes, bar)           asynchronous copy of `bytes` from global to shared memory
 *                                                 (cp.async.bulk, TMA): completes `bytes` of bar's tx-count
 *
 * A phase completes when all of its arrivals have happened AND all expected transaction bytes have
 * landed; then the next phase begins with the same arrival count. Waits name a phase by its parity: a
 * consumer of stage s waits with the ring's parity (ps.parity), flipping it each time the ring wraps; a producer
 * waiting for a fresh "empty" barrier starts with parity 1, which counts as already complete (the phase before phase
 * 0). docs/mbarrier.md has the pipeline pattern.
 *
 * Who issues what (the GPU counts per thread; the CPU machine counts the same way and checks):
 *   - init, inval, expect_tx, arrive_expect_tx, complete_tx: ONE thread - inside KBD_ELECT_ONE { } (or one
 *     lane of KBD_FOR_LANES). From warp-uniform code all 32 threads would issue it: KBD_ERR_ISSUE.
 *   - arrive: counted per executing thread: from warp-uniform code a warp arrives 32 times (init the
 *     barrier with a count in threads), from KBD_ELECT_ONE once (a count in warps).
 *   - wait / try_wait: any thread; every thread that reads the protected data must have waited.
 * CPU-mode diagnostics (KBD_ERR_MBARRIER unless noted), at the caller's file:line: use before init or
 * after inval, init of a live barrier, init count outside 1..2^20-1, more arrivals than pending, tx-count
 * outside +-(2^20-1), an object outside shared memory or misaligned; a missing init ordering (another
 * warp's init not followed by a barrier before the use: KBD_ERR_RACE); a wait nothing will complete
 * (KBD_ERR_DEADLOCK, naming the barrier, its phase, the missing arrivals and outstanding bytes); data
 * read before the consumer waited (KBD_ERR_RACE).
 *
 * GPU cost: each call is one instruction (a wait is a try_wait loop: the hardware suspends the thread
 * until the phase completes or a time limit passes).
 */
#ifndef KBD_MBARRIER_H
#define KBD_MBARRIER_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"

/* The barrier object: opaque, 8 bytes, 8-byte aligned, in shared memory. */
typedef uint64_t kbd_mbarrier;

#define kbd_mbarrier_init(bar, count) kbd_hw_mbar_init((bar), (uint32_t)(count), KBD_SITE)
#define kbd_mbarrier_inval(bar) kbd_hw_mbar_inval((bar), KBD_SITE)
#define kbd_mbarrier_arrive(bar) kbd_hw_mbar_arrive((bar), 1u, KBD_SITE)
#define kbd_mbarrier_arrive_n(bar, n) kbd_hw_mbar_arrive((bar), (uint32_t)(n), KBD_SITE)
#define kbd_mbarrier_arrive_expect_tx(bar, bytes) kbd_hw_mbar_arrive_expect_tx((bar), (uint32_t)(bytes), KBD_SITE)
#define kbd_mbarrier_expect_tx(bar, bytes) kbd_hw_mbar_expect_tx((bar), (uint32_t)(bytes), KBD_SITE)
#define kbd_mbarrier_complete_tx(bar, bytes) kbd_hw_mbar_complete_tx((bar), (uint32_t)(bytes), KBD_SITE)
/* The old field (ps.phase, a struct kbd_phase_is_now_parity) must fail naming its type on the error line:
 * gcc's C cast of a struct says only "aggregate value used", so C adds 0u ("invalid operands to binary +");
 * nvcc's C++ front end names the type only for the cast ("no suitable conversion function from ..."). */
#ifdef __cplusplus
#define KBD__PARITY(x) ((uint32_t)(x))
#else
#define KBD__PARITY(x) ((uint32_t)((x) + 0u))
#endif
#define kbd_mbarrier_wait(bar, parity) kbd_hw_mbar_wait((bar), KBD__PARITY(parity), KBD_SITE)
#define kbd_mbarrier_try_wait(bar, parity) kbd_hw_mbar_try_wait((bar), KBD__PARITY(parity), KBD_SITE)
#define kbd_mbarrier_test_wait(bar, parity) kbd_hw_mbar_test_wait((bar), KBD__PARITY(parity), KBD_SITE)
#define kbd_fence_mbarrier_init() kbd_hw_fence_mbar_init(KBD_SITE)
#define kbd_mbarrier_addr(bar) kbd_hw_mbar_addr((bar), KBD_SITE)
#define kbd_mbarrier_addr_uniform(bar) kbd_hw_mbar_addr_uniform((bar), KBD_SITE)
#define kbd_mbarrier_wait_at(addr, parity) kbd_hw_mbar_wait_at((uint32_t)(addr), KBD__PARITY(parity), KBD_SITE)
#define kbd_mbarrier_arrive_at(addr) kbd_hw_mbar_arrive_at((uint32_t)(addr), 1u, KBD_SITE)
/* One thread issues it (KBD_ELECT_ONE), after the barrier expects the bytes (kbd_mbarrier_arrive_expect_tx);
 * size, dst and src multiples of 16. Consumers read dst only after waiting for the phase. */
#define kbd_bulk_load(dst, src, bytes, bar) kbd_hw_bulk_load((dst), (src), (uint32_t)(bytes), (bar), KBD_SITE)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */

/* Position in a ring of `stages` buffers: the stage to use next and the parity of its current round (the
 * round number's low bit). Both sides of a pipeline keep one and advance it once per buffer:
 *   consumer: kbd_mbarrier_wait(&full[ps.stage], ps.parity);        read; arrive on empty[ps.stage]
 *   producer: kbd_mbarrier_wait(&empty[ps.stage], ps.parity ^ 1u);  (a fresh barrier's parity 1 is done) fill
 * Plain integers: with a constant stage count nvcc keeps both in registers (no division per step).
 * The field was called `phase` before 2026-11, but it is the parity a wait takes, not the phase number. The
 * old name stays in a union as a struct whose type names the new one (no extra byte):
 * `ps.phase` fails to compile with kbd_phase_is_now_parity in the message. */
struct kbd_phase_is_now_parity {
  uint32_t use_parity_not_phase;
};
typedef struct kbd_pipe {
  int stage, stages;
  union {
    uint32_t parity;
    struct kbd_phase_is_now_parity phase;
  };
} kbd_pipe;
KBD_HD kbd_pipe kbd_pipe_start(int stages) {
  kbd_pipe p;
  p.stage = 0;
  p.stages = stages;
  p.parity = 0;
  return p;
}
KBD_HD void kbd_pipe_advance(kbd_pipe *p) {
  if (++p->stage == p->stages) {
    p->stage = 0;
    p->parity ^= 1u;
  }
}

#endif /* KBD_MBARRIER_H */
