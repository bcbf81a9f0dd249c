/* kbd/cpu/sreg.h - where the running warp is, on the CPU machine (twin of ptx/sreg.h). */
#ifndef KBD_CPU_SREG_H
#define KBD_CPU_SREG_H

#include "machine.h"

#if KBD_MODE_CPU

static inline int kbd_hw_warp_id(void) { return kbd_cpu_self()->id; }
static inline unsigned kbd_hw_block_x(void) { return kbd_cpu_self()->cta->bx; }
static inline unsigned kbd_hw_block_y(void) { return kbd_cpu_self()->cta->by; }
static inline unsigned kbd_hw_block_z(void) { return kbd_cpu_self()->cta->bz; }
static inline unsigned kbd_hw_grid_x(void) { return kbd_cpu_self()->cta->L->cfg.grid.x; }
static inline unsigned kbd_hw_grid_y(void) { return kbd_cpu_self()->cta->L->cfg.grid.y; }
static inline unsigned kbd_hw_grid_z(void) { return kbd_cpu_self()->cta->L->cfg.grid.z; }
static inline size_t kbd_hw_dynamic_smem_bytes(void) { return kbd_cpu_self()->cta->dyn_bytes; }

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SREG_H */
