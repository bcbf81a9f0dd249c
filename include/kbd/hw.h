/* kbd/hw.h - the ONE switch between the GPU and the CPU implementation of every primitive.
 *
 * Each primitive that differs between the GPU and the CPU is a function (or macro) `kbd_hw_<name>` with
 * the same signature in two files of the same name: ptx/<family>.h (inline PTX, the PTX spelling and the
 * "PTX ISA x.y, sm_NN" requirement above it) and cpu/<family>.h (its emulation on the CPU machine). Every
 * twin takes the call site last (KBD_SITE_PARAMS) so the CPU side can report the user's file:line.
 * API headers include this file and call only kbd_hw_*: no inline asm and no kbd_cpu_* call outside
 * ptx/ and cpu/ (tests/headers checks both, and that every ptx twin has a cpu twin).
 *
 * Values that differ per lane are passed as arrays of KBD_LANES_HELD: the thread's own value on the GPU,
 * the 32 lanes of the running warp on the CPU (where a warp's fiber holds all its lanes).
 * docs/adding-a-primitive.md says how to add one.
 */
#ifndef KBD_HW_H
#define KBD_HW_H

#include "config.h"

#if KBD_MODE_CPU
#define KBD_LANES_HELD 32 /* lanes a fragment array holds: the warp's 32 on the CPU */
#include "cpu/atom.h"
#include "cpu/bar.h"
#include "cpu/cluster.h"
#include "cpu/lanes.h"
#include "cpu/launch.h"
#include "cpu/mbar.h"
#include "cpu/mem.h"
#include "cpu/mma.h" /* first: it includes the family below in dependency order */
#include "cpu/mma_operand.h"
#include "cpu/mma_pair.h"
#include "cpu/mma_rs.h"
#include "cpu/mma_ts.h"
#include "cpu/mma_umma.h"
#include "cpu/mma_wgmma.h"
#include "cpu/profile.h"
#include "cpu/redux.h"
#include "cpu/regs.h"
#include "cpu/shfl.h"
#include "cpu/smatrix.h"
#include "cpu/sreg.h"
#include "cpu/tma.h"
#include "cpu/tmem_alloc.h"
#include "cpu/tmem_ldst.h"
#include "cpu/vote.h"
#elif KBD_MODE_CUDA
#define KBD_LANES_HELD 1 /* the thread's own */
#include "ptx/atom.h"
#include "ptx/bar.h"
#include "ptx/cluster.h"
#include "ptx/lanes.h"
#include "ptx/launch.h"
#include "ptx/mbar.h"
#include "ptx/mem.h"
#include "ptx/mma.h" /* first: it includes the family below in dependency order */
#include "ptx/mma_operand.h"
#include "ptx/mma_pair.h"
#include "ptx/mma_rs.h"
#include "ptx/mma_ts.h"
#include "ptx/mma_umma.h"
#include "ptx/mma_wgmma.h"
#include "ptx/profile.h"
#include "ptx/redux.h"
#include "ptx/regs.h"
#include "ptx/shfl.h"
#include "ptx/smatrix.h"
#include "ptx/sreg.h"
#include "ptx/tma.h"
#include "ptx/tmem_alloc.h"
#include "ptx/tmem_ldst.h"
#include "ptx/vote.h"
#endif

/* Host-side device memory (kbd/memory.h) in every build: the CPU machine's registry with -DKBD_CPU, the
 * CUDA runtime in nvcc builds and in the plain C host files of a GPU program. */
#if KBD_MODE_CPU
#include "cpu/alloc.h"
#include "cpu/tmap.h"
#else
#include "ptx/alloc.h"
#include "ptx/tmap.h"
#endif

/* Pure value primitives (conversions, f32 max/min, the softmax's exp2, packed f32x2 math) are also called from host
 * code of a GPU program: the KBD_HD functions of convert.h, fminmax.h, softmax.h and f32x2.h. Their CPU twin is plain
 * C math, so it serves every host compilation (-DKBD_CPU, nvcc's host pass, a plain C host file) and the PTX twin the
 * nvcc device pass. */
#if KBD_DEVICE_PASS
#include "ptx/cvt.h"
#include "ptx/ex2.h"
#include "ptx/f32x2.h"
#include "ptx/minmax.h"
#else
#include "cpu/cvt.h"
#include "cpu/ex2.h"
#include "cpu/f32x2.h"
#include "cpu/minmax.h"
#endif

#endif /* KBD_HW_H */
