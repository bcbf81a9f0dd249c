/* kbd/cpu/machine.h - the CPU machine behind KBD_CPU, one job a file:
 *
 *   state.h    launches, groups of CTAs, CTAs, warps (the data)
 *   report.h   faults and multi-line reports
 *   shadow.h   shadow state of shared memory and the happens-before race checker
 *   wait.h     wait objects, named barriers, polls
 *   sched.h    the warp scheduler of a group of CTAs; recycled group state
 *   pool.h     host threads and a launch
 *   smem.h     a CTA's shared memory: static declarations, bounds, checked accesses
 *   global.h   device allocations (kbd_malloc) and checked global accesses
 *   profile.h  KBD_CPU_PROFILE: bank conflicts, coalescing and counters per launch (docs/profiling.md)
 *
 * docs/cpu-machine.md describes the model. Only kbd/cpu/ twins (the CPU side of kbd/hw.h) call into it.
 */
#ifndef KBD_CPU_MACHINE_H
#define KBD_CPU_MACHINE_H

#include "global.h"
#include "pool.h"
#include "profile.h"
#include "report.h"
#include "sched.h"
#include "shadow.h"
#include "smem.h"
#include "state.h"
#include "wait.h"

#endif /* KBD_CPU_MACHINE_H */
