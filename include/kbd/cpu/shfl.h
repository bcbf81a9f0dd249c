/* kbd/cpu/shfl.h - shfl.sync on the CPU machine (twin of ptx/shfl.h).
 *
 * kbd_cpu_shfl_sync applies the PTX "Semantics" pseudo-code (ptx-reference.md 6.1) to the 32 lanes the
 * warp's fiber holds, reading all old values before writing any - exactly the GPU's lock-step exchange.
 * A lane sourcing from a lane outside membermask is undefined in PTX and is a fault here.
 */
#ifndef KBD_CPU_SHFL_H
#define KBD_CPU_SHFL_H

#include "../hwdefs.h"
#include "machine.h"

#if KBD_MODE_CPU

/* Whole-warp butterfly d[lane] = old[lane ^ bv] (d and old distinct). For the power-of-two masks the
 * reductions use, lanes move in blocks of bv: fixed-size copies the host compiler turns into a few vector
 * moves, instead of 32 dependent index computations. */
static inline void kbd_cpu_shfl_bfly_full_(uint32_t d[32], const uint32_t old[32], uint32_t bv) {
#define KBD__BFLY_BLOCKS(B)                                                                                            \
  for (int i = 0; i < 32; i += 2 * (B)) {                                                                              \
    memcpy(d + i, old + i + (B), 4 * (B));                                                                             \
    memcpy(d + i + (B), old + i, 4 * (B));                                                                             \
  }                                                                                                                    \
  return
  switch (bv) {
  case 0: memcpy(d, old, 32 * sizeof(uint32_t)); return;
  case 1: KBD__BFLY_BLOCKS(1);
  case 2: KBD__BFLY_BLOCKS(2);
  case 4: KBD__BFLY_BLOCKS(4);
  case 8: KBD__BFLY_BLOCKS(8);
  case 16: KBD__BFLY_BLOCKS(16);
  default:
    for (uint32_t lane = 0; lane < 32; ++lane)
      d[lane] = old[lane ^ bv];
    return;
  }
#undef KBD__BFLY_BLOCKS
}

/* Whole-warp up (d[l] = old[l - bv], lanes below bv keep their own) or down (d[l] = old[l + bv], lanes above
 * 31 - bv keep their own); d and old distinct. The deltas the scans use get fixed-size copies. */
static inline void kbd_cpu_shfl_shift_full_(int up, uint32_t d[32], const uint32_t old[32], uint32_t bv) {
#define KBD__SHIFT(B)                                                                                                  \
  if (up) {                                                                                                            \
    memcpy(d, old, 4 * (B));                                                                                           \
    memcpy(d + (B), old, 4 * (32 - (B)));                                                                              \
  } else {                                                                                                             \
    memcpy(d, old + (B), 4 * (32 - (B)));                                                                              \
    memcpy(d + 32 - (B), old + 32 - (B), 4 * (B));                                                                     \
  }                                                                                                                    \
  return
  switch (bv) {
  case 0: memcpy(d, old, 32 * sizeof(uint32_t)); return;
  case 1: KBD__SHIFT(1);
  case 2: KBD__SHIFT(2);
  case 4: KBD__SHIFT(4);
  case 8: KBD__SHIFT(8);
  case 16: KBD__SHIFT(16);
  default:
    for (uint32_t lane = 0; lane < 32; ++lane)
      d[lane] = up ? old[lane >= bv ? lane - bv : lane] : old[lane + bv <= 31u ? lane + bv : lane];
    return;
  }
#undef KBD__SHIFT
}

/* d[lane] = a[j(lane)] for all 32 lanes, per the PTX pseudo-code of shfl.sync.<mode>.b32 with lane
 * operand b (per lane, bs[lane], or uniform b when bs is NULL). d and a may alias. */
static inline void kbd_cpu_shfl_sync(int mode, uint32_t d[32], const uint32_t a[32], const uint32_t *bs, uint32_t b,
                                     uint32_t c, uint32_t membermask, const char *file, int line) {
  /* The fast path needs CUDA's whole-warp encoding for THIS mode: c = 0 for up, 0x1f for the others (up with
   * c = 0x1f, say, is legal PTX with another meaning and takes the pseudo-code below). */
  if (membermask == KBD_SHFL_FULL && !bs && c == (mode == KBD_SHFL_UP ? KBD_SHFL_C_UP : KBD_SHFL_C)) {
    /* Whole-warp fast path (what kbd itself issues). With membermask full, segmask 0 and the clamp at lane
     * 31 (0 for up), the pseudo-code below reduces to: up d[l] = a[l - b] for l >= b (own value below),
     * down d[l] = a[l + b] for l + b <= 31 (own value above), bfly d[l] = a[l ^ b], idx d[l] = a[b].
     * Every read sees the old values (memmove / a copy when d aliases a), as in the lock-step exchange. */
    const uint32_t bv = b & 31u;
    uint32_t tmp[32];
    if (d != a && d < a + 32 && a < d + 32) { /* partial overlap (kbd never does this): read a copy */
      memcpy(tmp, a, sizeof tmp);
      a = tmp;
    }
    switch (mode) {
    case KBD_SHFL_UP:
    case KBD_SHFL_DOWN:
      if (d == a) { /* in place: read the old values from a copy */
        memcpy(tmp, a, sizeof tmp);
        a = tmp;
      }
      kbd_cpu_shfl_shift_full_(mode == KBD_SHFL_UP, d, a, bv);
      return;
    case KBD_SHFL_BFLY:
      if (d == a) {
        memcpy(tmp, a, sizeof tmp);
        kbd_cpu_shfl_bfly_full_(d, tmp, bv);
      } else {
        kbd_cpu_shfl_bfly_full_(d, a, bv);
      }
      return;
    default: {
      const uint32_t v = a[bv];
      for (int lane = 0; lane < 32; ++lane)
        d[lane] = v;
      return;
    }
    }
  }
  uint32_t old[32];
  memcpy(old, a, sizeof old);
  const uint32_t cval = c & 31u, segmask = (c >> 8) & 31u;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t bval = (bs ? bs[lane] : b) & 31u;
    const uint32_t maxlane = (lane & segmask) | (cval & ~segmask), minlane = lane & segmask;
    int32_t j;
    int pval;
    switch (mode) {
    case KBD_SHFL_UP:
      j = (int32_t)lane - (int32_t)bval;
      pval = j >= (int32_t)maxlane;
      break;
    case KBD_SHFL_DOWN:
      j = (int32_t)(lane + bval);
      pval = j <= (int32_t)maxlane;
      break;
    case KBD_SHFL_BFLY:
      j = (int32_t)(lane ^ bval);
      pval = j <= (int32_t)maxlane;
      break;
    default:
      j = (int32_t)(minlane | (bval & ~segmask));
      pval = j <= (int32_t)maxlane;
      break;
    }
    if (!pval) j = (int32_t)lane;
    if (!(membermask >> lane & 1u)) continue; /* a lane outside the mask does not execute */
    if (!(membermask >> j & 1u))
      kbd_cpu_fault(KBD_ERR_KERNEL, file, line, "shfl.sync: lane %u reads lane %d, which is not in membermask 0x%08x",
                    lane, j, membermask);
    d[lane] = old[j];
  }
}

/* The GPU twin broadcasts lane 0 so that ptxas knows the value is warp-uniform; here a warp's scalar code holds one
 * value per warp already. */
static inline uint32_t kbd_hw_warp_uniform_u32(uint32_t x) { return x; }

/* y = shfl.sync.<mode>.b32 of x over the whole warp: the 32 lanes' values (twin of ptx/shfl.h). */
static inline void kbd_hw_shfl_b32(int mode, uint32_t *y, const uint32_t *x, uint32_t b, uint32_t c, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "shfl.sync", KBD_SITE_ARGS);
  kbd_cpu_shfl_sync(mode, y, x, NULL, b, c, KBD_SHFL_FULL, KBD_SITE_ARGS);
}
#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SHFL_H */
