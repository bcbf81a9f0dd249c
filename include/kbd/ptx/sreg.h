/* kbd/ptx/sreg.h - where the running thread is: warp, block, grid, dynamic shared-memory size (GPU twin
 * of cpu/sreg.h). Read from PTX special registers through CUDA's built-in variables, which nvcc turns
 * into the same `mov.u32 %r, %tid.x` etc. and can hoist and fold (a volatile asm could not be). */
#ifndef KBD_PTX_SREG_H
#define KBD_PTX_SREG_H

#include "../config.h"

#if KBD_MODE_CUDA

/* %tid.x / 32 */
KBD_DEV int kbd_hw_warp_id(void) { return (int)(threadIdx.x >> 5); }
/* %ctaid.{x,y,z}, %nctaid.{x,y,z} */
KBD_DEV unsigned kbd_hw_block_x(void) { return blockIdx.x; }
KBD_DEV unsigned kbd_hw_block_y(void) { return blockIdx.y; }
KBD_DEV unsigned kbd_hw_block_z(void) { return blockIdx.z; }
KBD_DEV unsigned kbd_hw_grid_x(void) { return gridDim.x; }
KBD_DEV unsigned kbd_hw_grid_y(void) { return gridDim.y; }
KBD_DEV unsigned kbd_hw_grid_z(void) { return gridDim.z; }
/* mov.u32 d, %dynamic_smem_size;     PTX ISA 4.1, sm_20 */
KBD_DEV size_t kbd_hw_dynamic_smem_bytes(void) {
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_SREG_H */
