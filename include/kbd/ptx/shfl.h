/* kbd/ptx/shfl.h - shfl.sync, one wrapper per PTX form, and its CPU emulation.
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

enum { KBD_SHFL_UP = 0, KBD_SHFL_DOWN = 1, KBD_SHFL_BFLY = 2, KBD_SHFL_IDX = 3 };
#define KBD_SHFL_FULL 0xffffffffu
#define KBD_SHFL_C_UP 0x0 /* segmask 0, clamp lane 0: whole warp */
#define KBD_SHFL_C 0x1f   /* segmask 0, clamp lane 31: whole warp */

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

#if KBD_MODE_CPU
#include "../cpu/machine.h"

/* d[lane] = a[j(lane)] for all 32 lanes, per the PTX pseudo-code of shfl.sync.<mode>.b32 with lane
 * operand b (per lane, bs[lane], or uniform b when bs is NULL). d and a may alias. */
static inline void kbd_cpu_shfl_sync(int mode, uint32_t d[32], const uint32_t a[32], const uint32_t *bs, uint32_t b,
                                     uint32_t c, uint32_t membermask, const char *file, int line) {
  uint32_t old[32];
  memcpy(old, a, sizeof old);
  if (membermask == KBD_SHFL_FULL && !bs && (c == KBD_SHFL_C || (mode == KBD_SHFL_UP && c == KBD_SHFL_C_UP))) {
    /* Whole-warp fast path (what kbd itself issues): the pseudo-code below reduces to this. */
    const uint32_t bv = b & 31u;
    for (uint32_t lane = 0; lane < 32; ++lane)
      d[lane] = mode == KBD_SHFL_BFLY ? old[lane ^ bv]
                : mode == KBD_SHFL_UP ? old[lane >= bv ? lane - bv : lane]
                : mode == KBD_SHFL_DOWN ? old[lane + bv <= 31u ? lane + bv : lane]
                                        : old[bv];
    return;
  }
  const uint32_t cval = c & 31u, segmask = (c >> 8) & 31u;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t bval = (bs ? bs[lane] : b) & 31u;
    const uint32_t maxlane = (lane & segmask) | (cval & ~segmask), minlane = lane & segmask;
    int32_t j;
    int pval;
    switch (mode) {
    case KBD_SHFL_UP: j = (int32_t)lane - (int32_t)bval; pval = j >= (int32_t)maxlane; break;
    case KBD_SHFL_DOWN: j = (int32_t)(lane + bval); pval = j <= (int32_t)maxlane; break;
    case KBD_SHFL_BFLY: j = (int32_t)(lane ^ bval); pval = j <= (int32_t)maxlane; break;
    default: j = (int32_t)(minlane | (bval & ~segmask)); pval = j <= (int32_t)maxlane; break;
    }
    if (!pval) j = (int32_t)lane;
    if (!(membermask >> lane & 1u)) continue; /* a lane outside the mask does not execute */
    if (!(membermask >> j & 1u))
      kbd_cpu_fault(KBD_ERR_KERNEL, file, line, "shfl.sync: lane %u reads lane %d, which is not in membermask 0x%08x",
                    lane, j, membermask);
    d[lane] = old[j];
  }
}
#endif /* KBD_MODE_CPU */

#endif /* KBD_PTX_SHFL_H */
