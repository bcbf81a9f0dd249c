/* kbd/cpu/mma.h - the MMA twins on the CPU machine (twin of ptx/mma.h): wgmma (emulating sm_90a,
 * KBD_CPU_ARCH == 90) and tcgen05 with Tensor Memory (sm_100a, KBD_CPU_ARCH == 100). docs/design/mma.md.
 *
 * Operands. Every operand element is read through its descriptor with kbd_wgmma_desc_addr /
 * kbd_umma_desc_addr, from the descriptor bits alone, so a wrong start, LBO, SBO or swizzle reads the same
 * wrong bytes as the GPU. A descriptor address is an offset in the CTA's shared window: the CPU CTA's shared
 * memory is one 1024-byte aligned array (kbd/cpu/sched.h: aligned_alloc(1024)), so kbd_hw_smem_addr (pointer
 * - window base) has the same low 10 bits as the address and the descriptor's absolute-address XOR (§3,
 * §4.6) lands on the bytes kbd_smem_tile_offset names. Each element's address is decoded once per MMA (A:
 * M x K-step, B: N x K-step), never once per product.
 *
 * Numbers (docs/design/mma.md "Numeric contract"). Products are exact (tf32 inputs first lose their low 13
 * mantissa bits, fp8 inputs decode through kbd's conversions); a K-step's sum is taken in double and rounded
 * once to f32 (8-bit integers: exact, wrapped to s32); that is added to D in f32 (D = it when accumulate is 0).
 *
 * Time. The MMA reads its operands and computes at the issue into a pending record; D is written when the
 * MMA retires: sm_90a at the wgmma.wait_group that covers its group (in each warp, for that warp's 16 rows
 * of the m64 block), sm_100a at the issuing thread's tcgen05.commit, which then arrives once on the
 * mbarrier (release: a warp that waits for the phase acquires the MMA's Tensor Memory writes).
 *
 * Races on the operands. The issue only CHECKS the operand bytes (delivered, fenced if generic, ordered
 * before the issuing warp) and hashes their shadow state; the async proxy's read is recorded once, when the
 * operation retires: for a wgmma at its first retirement by any warp of the warpgroup, under that warp at its
 * clock then, which every warp that retires the group later acquires (kbd_mma_release arrives on the stage's
 * `empty` barrier from warp 0 only, after its own wait_group, so a producer ordered after that arrive is ordered
 * after this read; an arrive made before the arriving warp's own wait is an early release: cpu/mma_wgmma.h); for
 * tcgen05 at the commit, under the committing warp, before its arrive. A producer that rewrote operand bytes
 * between the issue and the retirement changes their shadow hash (reported at the retirement, naming the
 * write's file:line); one that writes them after the retirement without waiting is a write-after-read race
 * of the shadow (reported at the write). So the report does not depend on the schedule.
 *
 * Tensor Memory: per CTA 128 lanes x 512 columns of 32 bit, with per cell the writer (warp, and whether an
 * MMA commit wrote it) and its clock, for the tcgen05.ld check "the reader acquired the commit's barrier and
 * ran tcgen05.fence::after_thread_sync after that" (ptx-reference §5.8).
 *
 * The files, each including only the ones above it (no file includes this one):
 *   mma_state.h     the per-CTA records: pending wgmma / tcgen05.mma, Tensor Memory cells, unwaited
 *                   tcgen05.st / tcgen05.ld; reset at a new CTA; the checks at a warp's exit
 *   mma_operand.h   the instruction's shape and types; operands read through their descriptors, their 16-byte
 *                   units checked at the issue and their read recorded at the retirement
 *   mma_dot.h       the K-step sums and the accumulation into D (the numeric contract)
 *   mma_wgmma.h     sm_90a: wgmma issue, commit_group, wait_group
 *   mma_rs.h        sm_90a: wgmma with A from registers
 *   tmem_alloc.h    sm_100a: Tensor Memory cells, tcgen05.alloc / dealloc / relinquish, tcgen05.ld/st reach
 *   tmem_pending.h  sm_100a: tcgen05.st in flight and MMAs' A reads of Tensor Memory (the hazard records)
 *   tmem_ldst.h     sm_100a: tcgen05.ld / tcgen05.st / wait::ld / wait::st, the tcgen05 fences
 *   mma_umma.h      sm_100a: tcgen05.mma issue and tcgen05.commit (completion, also of pair MMAs)
 *   mma_ts.h        sm_100a: tcgen05.mma with A from Tensor Memory
 *   mma_pair.h      sm_100a: CTA-pair (.cta_group::2) alloc, MMA, commit, TMA
 */
#ifndef KBD_CPU_MMA_H
#define KBD_CPU_MMA_H

/* in the dependency order of the map above (each file also includes the one it needs) */
/* clang-format off */
#include "mma_state.h"
#include "mma_operand.h"
#include "mma_dot.h"
#include "mma_wgmma.h"
#include "mma_rs.h"
#include "tmem_alloc.h"
#include "tmem_pending.h"
#include "tmem_ldst.h"
#include "mma_umma.h"
#include "mma_ts.h"
#include "mma_pair.h"
/* clang-format on */

#endif /* KBD_CPU_MMA_H */
