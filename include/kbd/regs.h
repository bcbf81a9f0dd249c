/* kbd/regs.h - moving registers between the warpgroups of a warp-specialized kernel (setmaxnreg).
 *
 *   kbd_setmaxnreg_dec(40)     every warp of the calling warpgroup: shrink to 40 registers per thread
 *   kbd_setmaxnreg_inc(232)    grow to 232 (waits until the CTA's pool has them)
 *
 * Why: a producer warpgroup that only issues TMA copies needs few registers, the consumer warpgroups that
 * hold wgmma accumulators need many. ptxas gives every thread the same budget (65536 / block threads,
 * rounded down to a multiple of 8, from __launch_bounds__, which KBD_KERNEL sets); setmaxnreg hands the
 * producer's share to the consumers at run time (ptx-reference 6.6). The budget is fixed at launch:
 * KBD_REGS_PER_THREAD(threads) x threads (kbd/hwdefs.h), and .inc only takes what a .dec gave back, so the
 * warpgroups' counts x 128 must sum to no more (384 threads: 40 + 2 x 232 per warpgroup thread fits 168 x 3;
 * 56 with 232 hangs the GPU, and the CPU machine reports it as a deadlock at the .inc). The count is a constant in 24..256, a
 * multiple of 8 (a compile-time error otherwise); .dec needs the current count >= n, .inc <= n. All 4 warps
 * of a warpgroup must execute the same call (.sync.aligned), so call it from warpgroup-uniform code.
 * sm_90a and sm_100a only (a build error on other GPU targets). The CPU machine has no register file: the
 * call checks it is not made from per-lane or elected-lane code and otherwise does nothing.
 */
#ifndef KBD_REGS_H
#define KBD_REGS_H

#include "config.h"
#include "hwdefs.h"

#define KBD_SETMAXNREG_OK(n) ((n) >= 24 && (n) <= 256 && (n) % 8 == 0)
#define KBD__SETMAXNREG_RULE "kbd: setmaxnreg: the register count must be a constant in 24..256, a multiple of 8"
#define KBD__SETMAXNREG_TARGET                                                                                         \
  "kbd: setmaxnreg exists only on sm_90a and sm_100a (build with -gencode arch=compute_90a,code=sm_90a or "            \
  "compute_100a)"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#define KBD__SETMAXNREG(n, inc)                                                                                        \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_SETMAXNREG_OK(n), KBD__SETMAXNREG_RULE);                                                     \
    KBD_STATIC_ASSERT(!KBD_DEVICE_PASS || KBD_SM90A || KBD_SM100A, KBD__SETMAXNREG_TARGET);                            \
    kbd_hw_setmaxnreg((n), (inc), KBD_SITE);                                                                           \
  } while (0)
#define kbd_setmaxnreg_inc(n) KBD__SETMAXNREG(n, 1)
#define kbd_setmaxnreg_dec(n) KBD__SETMAXNREG(n, 0)
#endif

#endif /* KBD_REGS_H */
