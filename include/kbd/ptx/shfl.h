/* kbd/ptx/shfl.h - shfl.sync, one wrapper per PTX form (GPU twin of cpu/shfl.h).
 *
 * Device pass: each kbd_ptx_shfl_sync_* is the single instruction spelled above it. The c operand
 * packs the segment mask (bits 8..12) and the clamp lane (bits 0..4); kbd always shuffles over the
 * whole warp, so c = 0x1f for bfly/idx/down (clamp at lane 31) and c = 0 for up (clamp at lane 0).
 * Cost: one SHFL per call, ~the latency of a shared-memory access, no memory traffic.
 *
 * CPU mode: kbd_cpu_shfl_sync applies the PTX "Semantics" pseudo-code (ptx-reference.md 6.1) to the
 * 32 lanes the warp's fiber holds, reading all old values before writing any - exactly the GPU's
 * lock-step exchange. A lane sourcing from a lane outside membermask is undefined in PTX and is a
 * fault here.
 */
#ifndef KBD_PTX_SHFL_H
#define KBD_PTX_SHFL_H

#include "../config.h"
#include "../hwdefs.h"

#if KBD_DEVICE_PASS

/* shfl.sync.bfly.b32 d, a, b, c, membermask;   d = a of lane (lane ^ b) */
KBD_DEV uint32_t kbd_ptx_shfl_sync_bfly_b32(uint32_t a, uint32_t b, uint32_t c, uint32_t membermask) {
  uint32_t d;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "r"(membermask));
  return d;
}

/* shfl.sync.up.b32 d, a, b, c, membermask;   d = a of lane (lane - b), own a below the clamp */
KBD_DEV uint32_t kbd_ptx_shfl_sync_up_b32(uint32_t a, uint32_t b, uint32_t c, uint32_t membermask) {
  uint32_t d;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "r"(membermask));
  return d;
}

/* shfl.sync.down.b32 d, a, b, c, membermask;   d = a of lane (lane + b), own a past the clamp */
KBD_DEV uint32_t kbd_ptx_shfl_sync_down_b32(uint32_t a, uint32_t b, uint32_t c, uint32_t membermask) {
  uint32_t d;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "r"(membermask));
  return d;
}

/* shfl.sync.idx.b32 d, a, b, c, membermask;   d = a of lane b (a broadcast when b is uniform) */
KBD_DEV uint32_t kbd_ptx_shfl_sync_idx_b32(uint32_t a, uint32_t b, uint32_t c, uint32_t membermask) {
  uint32_t d;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "r"(membermask));
  return d;
}

#endif /* KBD_DEVICE_PASS */

#if KBD_MODE_CUDA
/* x of lane 0: every lane holds the same value, but ptxas now KNOWS it is warp-uniform (the result of an idx shuffle
 * from a constant lane), so what is computed from it may live in uniform registers. Only where the warp is
 * converged (a .sync.aligned instruction follows anyway). */
KBD_DEV uint32_t kbd_hw_warp_uniform_u32(uint32_t x) {
#if KBD_DEVICE_PASS
  return kbd_ptx_shfl_sync_idx_b32(x, 0u, 0x1fu, 0xffffffffu);
#else
  return x;
#endif
}
/* y = shfl.sync.<mode>.b32 of x over the whole warp, lane operand b, c operand c (twin of cpu/shfl.h). x and
 * y hold the thread's own value; y may be x. */
KBD_DEV void kbd_hw_shfl_b32(int mode, uint32_t *y, const uint32_t *x, uint32_t b, uint32_t c, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_DEVICE_PASS
  if (mode == KBD_SHFL_UP)
    y[0] = kbd_ptx_shfl_sync_up_b32(x[0], b, c, KBD_SHFL_FULL);
  else if (mode == KBD_SHFL_DOWN)
    y[0] = kbd_ptx_shfl_sync_down_b32(x[0], b, c, KBD_SHFL_FULL);
  else if (mode == KBD_SHFL_IDX)
    y[0] = kbd_ptx_shfl_sync_idx_b32(x[0], b, c, KBD_SHFL_FULL);
  else
    y[0] = kbd_ptx_shfl_sync_bfly_b32(x[0], b, c, KBD_SHFL_FULL);
#else
  (void)mode, (void)b, (void)c; /* nvcc host pass: never executed */
  y[0] = x[0];
#endif
}
#endif

#endif /* KBD_PTX_SHFL_H */
