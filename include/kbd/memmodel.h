/* kbd/memmodel.h - what one warp-wide memory instruction costs: shared-memory wavefronts and global-memory
 * sectors, as pure functions of the lanes' byte addresses (host code, tests, tools; no kernel needed).
 *
 *   kbd_smem_wavefronts(addr, active, lanes, b)        wavefronts the GPU needs for one warp-wide shared access
 *   kbd_smem_ideal_wavefronts(addr, active, lanes, b)  the conflict-free minimum for the same access
 *   kbd_global_sectors(addr, active, lanes, b, &lines, &ideal)  32-byte sectors (and 128-byte lines, and the
 *                                                      ideal sectors) one warp-wide global access touches
 *   kbd_global_unique_bytes(addr, active, lanes, b)    distinct bytes the access asks for (a broadcast: b)
 *
 * addr[l] is lane l's byte address (shared: the offset in the CTA's shared window; global: the pointer as an
 * integer), b its bytes (1, 2, 4, 8 or 16; an access never straddles its natural alignment on the GPU).
 * active[l] != 0 for a lane that takes part (NULL: all `lanes`); inactive lanes (masked, holding no element)
 * cost nothing. ldmatrix / stmatrix: lanes = 8 * matrices, b = 16 (lane 8m + j gives row j of matrix m).
 *
 * Shared memory (CUDA Programming Guide, "Shared Memory" of compute capability 5.x and later, unchanged for
 * 9.x/10.x; Nsight Compute's L1TEX wavefront model; docs/profiling.md cites both): 32 banks, successive 4-byte
 * words in successive banks (bank = (addr / 4) % 32). A warp access of b bytes per lane is served in phases of
 * 128 / b lanes (all 32 for b <= 4, half-warps for 8 bytes, quarter-warps for 16 bytes - an 8x8 matrix of
 * ldmatrix/stmatrix is one phase). Inside a phase each bank delivers one distinct word per wavefront; lanes
 * asking for the same word share it (broadcast on reads; one of them wins on writes, same cost). A phase costs
 * the largest number of distinct words any one bank is asked for; a phase with no active lane costs nothing.
 * The ideal is one wavefront per phase that has an active lane: a phase moves at most 128 bytes, which is what
 * one wavefront delivers.
 *
 * Global memory (same sources, "Device Memory Accesses"): the L1/L2 move 32-byte sectors of 128-byte lines;
 * an instruction costs the distinct sectors its active lanes' bytes fall in. The ideal is the bytes the warp
 * asked for, packed: ceil(distinct bytes / 32) (1 for a broadcast of one word).
 */
#ifndef KBD_MEMMODEL_H
#define KBD_MEMMODEL_H

#include <stdint.h>

#define KBD_SMEM_BANKS 32
#define KBD_SMEM_BANK_BYTES 4
#define KBD_SECTOR_BYTES 32
#define KBD_LINE_BYTES 128

/* Lanes served together: 128 bytes of requests per phase. */
static inline int kbd_smem_phase_lanes(int bytes_per_lane) { return bytes_per_lane <= 4 ? 32 : 128 / bytes_per_lane; }

/* Wavefronts of one warp-wide shared access of `lanes` (<= 32) lanes, bytes_per_lane bytes each. */
static inline int kbd_smem_wavefronts(const uint32_t *byte_addr, const unsigned char *active, int lanes,
                                      int bytes_per_lane) {
  const int per_phase = kbd_smem_phase_lanes(bytes_per_lane);
  int total = 0;
  for (int p0 = 0; p0 < lanes; p0 += per_phase) {
    /* Distinct words per bank in this phase: at most 32 requests x 4 words, 32 per bank. */
    uint32_t words[KBD_SMEM_BANKS][32];
    int n[KBD_SMEM_BANKS] = {0}, worst = 0;
    for (int l = p0; l < p0 + per_phase && l < lanes; ++l) {
      if (active && !active[l]) continue;
      const uint32_t w0 = byte_addr[l] / 4u, w1 = (byte_addr[l] + (uint32_t)bytes_per_lane - 1u) / 4u;
      for (uint32_t w = w0; w <= w1; ++w) {
        const int bank = (int)(w % KBD_SMEM_BANKS);
        int seen = 0;
        for (int i = 0; i < n[bank] && !seen; ++i)
          seen = words[bank][i] == w;
        if (seen) continue;
        if (n[bank] < 32) words[bank][n[bank]++] = w;
        if (n[bank] > worst) worst = n[bank];
      }
    }
    total += worst;
  }
  return total;
}

/* The conflict-free cost of the same access: one wavefront per phase with an active lane. */
static inline int kbd_smem_ideal_wavefronts(const uint32_t *byte_addr, const unsigned char *active, int lanes,
                                            int bytes_per_lane) {
  const int per_phase = kbd_smem_phase_lanes(bytes_per_lane);
  int total = 0;
  (void)byte_addr;
  for (int p0 = 0; p0 < lanes; p0 += per_phase) {
    int any = 0;
    for (int l = p0; l < p0 + per_phase && l < lanes; ++l)
      any |= !active || active[l];
    total += any;
  }
  return total;
}

/* The active lanes' start addresses, sorted ascending into lo[0..n); returns n. */
static inline int kbd__mm_sorted_starts(const uint64_t *byte_addr, const unsigned char *active, int lanes,
                                        uint64_t *lo) {
  int n = 0;
  for (int l = 0; l < lanes && l < 32; ++l)
    if (!active || active[l]) {
      int i = n++;
      for (; i > 0 && lo[i - 1] > byte_addr[l]; --i)
        lo[i] = lo[i - 1];
      lo[i] = byte_addr[l];
    }
  return n;
}

/* Sectors of one warp-wide global access; *lines (may be NULL): distinct 128-byte lines; *ideal (may be NULL):
 * ceil(distinct bytes / 32). */
static inline int kbd_global_sectors(const uint64_t *byte_addr, const unsigned char *active, int lanes,
                                     int bytes_per_lane, int *lines, int *ideal) {
  uint64_t lo[32];
  const int n = kbd__mm_sorted_starts(byte_addr, active, lanes, lo);
  const uint64_t b = (uint64_t)(bytes_per_lane > 0 ? bytes_per_lane : 1);
  int sectors = 0, nlines = 0;
  uint64_t bytes = 0, end = 0, last_sector = ~0ull, last_line = ~0ull;
  for (int i = 0; i < n; ++i) {
    const uint64_t a = lo[i], e = a + b;
    bytes += e <= end ? 0 : e - (a > end ? a : end); /* union of [a, a+b) intervals, sorted by start */
    if (e > end) end = e;
    for (uint64_t s = a / KBD_SECTOR_BYTES; s <= (e - 1) / KBD_SECTOR_BYTES; ++s)
      if (last_sector == ~0ull || s > last_sector) {
        sectors++;
        last_sector = s;
      }
    for (uint64_t s = a / KBD_LINE_BYTES; s <= (e - 1) / KBD_LINE_BYTES; ++s)
      if (last_line == ~0ull || s > last_line) {
        nlines++;
        last_line = s;
      }
  }
  if (lines) *lines = nlines;
  if (ideal) *ideal = (int)((bytes + KBD_SECTOR_BYTES - 1) / KBD_SECTOR_BYTES);
  return sectors;
}

/* Distinct bytes one warp-wide access asks for: the union of the active lanes' [addr, addr + b). */
static inline uint64_t kbd_global_unique_bytes(const uint64_t *byte_addr, const unsigned char *active, int lanes,
                                               int bytes_per_lane) {
  uint64_t lo[32];
  const int n = kbd__mm_sorted_starts(byte_addr, active, lanes, lo);
  const uint64_t b = (uint64_t)(bytes_per_lane > 0 ? bytes_per_lane : 1);
  uint64_t total = 0, end = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t a = lo[i], e = a + b;
    if (e > end) total += e - (a > end ? a : end);
    if (e > end) end = e;
  }
  return total;
}

#endif /* KBD_MEMMODEL_H */
