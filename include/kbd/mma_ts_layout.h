/* kbd/mma_ts_layout.h - where an MMA's A operand in Tensor Memory keeps element (m, k) (sm_100a; kbd/mma_ts.h,
 * docs/design/mma-ts.md).
 *
 *   kbd_tmem_a_pos p = kbd_tmem_a_pos_of(M, esize, m, k);   lane, column and byte of A[m][k], relative to the
 *                                                           lane and column of the A address
 *
 * The PTX ISA (9.2, §9.7.16.10) says three things about an A in Tensor Memory:
 *   - Table 51: A in Tensor Memory is row-major, like D: one row of A per lane, K along the columns;
 *   - §9.7.16.10.4: D's sub-word elements are NOT packed (one per 32-bit cell), while A's are packed into the
 *     32-bit cells contiguously (§9.7.16.10.4.3 spells it out for the 8-bit containers of kind::mxf8f6f4: "4
 *     consecutive A elements in one 32-bit word"); so a 16-bit A holds two consecutive K elements per cell, the
 *     lower k in the low half, the order tcgen05.ld/st's .pack::16b uses for two adjacent columns;
 *   - §9.7.16.10.5: the lanes follow the MMA's data-path layout, and the half-datapath layouts (M = 64: Layout F)
 *     "must use the same Tensor Memory lane alignment across matrices A, D": M = 128 (Layout D) row m at lane
 *     m, M = 64 (Layout F) row m at lane (m % 16) + 32 (m / 16), both plus the address's lane (0, or 16 for F).
 * So one K-step of a 16-bit A (K = 16, 32 bytes) is 8 columns, and K-step j starts at column 8j.
 *
 * This is the only place that arithmetic lives: kbd_tmem_a_store (which cell a register goes to), kbd_mma_ts_issue
 * (the A address of each K-step) and the CPU machine's tcgen05.mma (the cell of every element it reads) all call
 * it, so the store and the MMA cannot disagree about the layout without a test seeing wrong numbers.
 */
#ifndef KBD_MMA_TS_LAYOUT_H
#define KBD_MMA_TS_LAYOUT_H

#include "config.h"

typedef struct kbd_tmem_a_pos {
  uint32_t lane; /* added to the lane of the A address */
  uint32_t col;  /* added to its column */
  uint32_t byte; /* the element's first byte inside the 32-bit cell */
} kbd_tmem_a_pos;

/* A[m][k] of an m_total-row A (64 or 128) of esize-byte elements (2: f16/bf16). */
KBD_HD kbd_tmem_a_pos kbd_tmem_a_pos_of(int m_total, int esize, int m, int k) {
  kbd_tmem_a_pos p;
  p.lane = m_total == 64 ? (uint32_t)(m % 16 + 32 * (m / 16)) : (uint32_t)m;
  p.col = (uint32_t)(k * esize / 4);
  p.byte = (uint32_t)(k * esize % 4);
  return p;
}

#endif /* KBD_MMA_TS_LAYOUT_H */
