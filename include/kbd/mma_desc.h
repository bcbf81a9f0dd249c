/* kbd/mma_desc.h - MMA descriptors: the 64-bit shared-memory matrix descriptors of wgmma (sm_90a) and
 * tcgen05.mma (sm_100a), the 32-bit tcgen05 instruction descriptor, and their decoders.
 *
 * The tensor cores do not take pointers: an operand in shared memory is named by a 64-bit descriptor
 * (start address, two strides LBO/SBO, a swizzle code), and tcgen05 takes its types and shape as a 32-bit
 * instruction descriptor. These are pure functions (KBD_HD), ONE definition for the PTX path and for the
 * CPU machine:
 *   - ENCODERS build the descriptor of an operand from the shared tile alone (kbd_smem_shape + its shared
 *     address + a row offset + a K-step), with kbd_smem_tile_offset()'s block geometry;
 *   - DECODERS (kbd_wgmma_desc_addr / kbd_umma_desc_addr) give the shared byte address the hardware reads
 *     for operand element (row, k), computed ONLY from the descriptor bits and the canonical layouts of
 *     ptx-reference §4.6 (never from kbd_smem_tile_offset). The emulator reads operands through them, so a
 *     wrong start, LBO, SBO or swizzle code reads the same wrong bytes on the CPU as on the GPU.
 * tests/mma/test_mma_desc.c proves decode(encode(tile)) == tile base + kbd_smem_tile_offset for every
 * element, k-step, swizzle, major-ness and element size, and checks the decoders against the PTX ISA's
 * worked examples. Design note: docs/design/mma-descriptors.md. Facts: ptx-reference §3, §4.5-4.6, §5.4-5.6.
 *
 * Units: one MMA instruction consumes 32 bytes of K (k16 f16/bf16, k8 tf32, k32 8-bit: §4.1, §5.4), a
 * "K-step". Operand (row, k): row is the M index (A) or N index (B), k the K index, in elements.
 * Costs: with a constant shape every encoder folds to a 64-bit constant plus the shared address >> 4.
 */
#ifndef KBD_MMA_DESC_H
#define KBD_MMA_DESC_H

#include "config.h"
#include "swizzle.h"

#define KBD_MMA_SM90 90   /* wgmma.mma_async (sm_90a): 2-bit swizzle code at bits 62-63             */
#define KBD_MMA_SM100 100 /* tcgen05.mma (sm_100a): version 1 at bits 46-48, 3-bit code at 61-63 */
#define KBD_MMA_KSTEP_BYTES 32

/* tcgen05.ld / tcgen05.st data-movement shapes (ptx-reference §5.3) the twins take. */
#define KBD_TMEM_32X32B 0  /* .32x32b.xn: thread l reads lane base+l, register j = column base+j       */
#define KBD_TMEM_16X256B 1 /* .16x256b.xn: 4n registers, the mma.sync C fragment of 16 lanes x 8n columns */
/* Tensor Memory per CTA (sm_100a): 128 lanes x 512 columns of 32 bit; allocation in powers of two >= 32. */
#define KBD_TMEM_LANES 128
#define KBD_TMEM_COLS 512
#define KBD_TMEM_MIN_COLS 32
#define KBD_TMEM_ADDR(lane, col) (((uint32_t)(lane) << 16) | (uint32_t)(col))

/* ---- operand rules (a shared tile that an MMA can read through a descriptor) ----------------------------
 * Constant expressions, each with its message. Each rule holds vacuously when an earlier one fails, so
 * KBD_MMA_OPERAND_STATIC_CHECK reports only the first broken rule. The tile's own shape rules (swizzle.h)
 * come first at run time; KBD_STILE types already assert them at compile time. */
#define KBD_MMA_RULE_ARCH "kbd: MMA operand: arch must be KBD_MMA_SM90 (wgmma) or KBD_MMA_SM100 (tcgen05)"
#define KBD_MMA_ARCH_OK(arch) ((arch) == KBD_MMA_SM90 || (arch) == KBD_MMA_SM100)

#define KBD_MMA_RULE_NONE                                                                                              \
  "kbd: MMA operand: a KBD_SWIZZLE_NONE tile is a plain row-major box image, but the MMA's no-swizzle layout is "      \
  "interleaved 8-row x 16-byte core matrices (ptx-reference 4.6); use a 32B, 64B or 128B swizzled tile"
#define KBD_MMA_NONE_OK(swz) ((swz) != KBD_SWIZZLE_NONE)

#define KBD_MMA_RULE_ATOM32_SM90                                                                                       \
  "kbd: MMA operand: KBD_SWIZZLE_128B_ATOM32 is a tcgen05 (sm_100a) layout; the wgmma descriptor has no code for it "  \
  "(ptx-reference 4.5)"
#define KBD_MMA_ATOM32_SM90_OK(arch, swz) ((arch) != KBD_MMA_SM90 || (swz) != KBD_SWIZZLE_128B_ATOM32)

#define KBD_MMA_RULE_TRANS_SM90                                                                                        \
  "kbd: MMA operand: wgmma reads MN-major (transposed) operands only for 16-bit types (f16, bf16: imm-trans); a tf32 " \
  "or 8-bit operand tile must be K-major (ptx-reference 4.1)"
#define KBD_MMA_TRANS_SM90_OK(arch, esize, major)                                                                      \
  ((arch) != KBD_MMA_SM90 || (major) != KBD_SMEM_MN_MAJOR || (esize) == 2)

#define KBD_MMA_RULE_ATOM32_ESIZE                                                                                      \
  "kbd: MMA operand: KBD_SWIZZLE_128B_ATOM32 is for 32-bit (tf32) operands only; 8- and 16-bit MN-major operands "     \
  "use 32B, 64B or 128B (PTX Table 54, ptx-reference 5.6)"
#define KBD_MMA_ATOM32_ESIZE_OK(esize, swz) ((swz) != KBD_SWIZZLE_128B_ATOM32 || (esize) == 4)

#define KBD_MMA_RULE_TF32_TRANS                                                                                        \
  "kbd: MMA operand: tcgen05 reads a 32-bit (tf32) MN-major operand only with KBD_SWIZZLE_128B_ATOM32 (PTX Table 54, " \
  "ptx-reference 5.6)"
#define KBD_MMA_TF32_TRANS_OK(arch, esize, swz, major)                                                                 \
  ((arch) != KBD_MMA_SM100 || (major) != KBD_SMEM_MN_MAJOR || (esize) != 4 || (swz) == KBD_SWIZZLE_128B_ATOM32)

#define KBD_MMA_RULE_KSTEP                                                                                             \
  "kbd: MMA operand: the tile's K extent (cols) must be a whole number of MMA K-steps of 32 bytes (16 f16/bf16, 8 "    \
  "tf32, 32 8-bit elements: ptx-reference 4.1, 5.4)"
#define KBD_MMA_KSTEP_OK(esize, cols) (((long long)(cols) * (long long)(esize)) % KBD_MMA_KSTEP_BYTES == 0)

#define KBD__MMA_OK1(arch, e, c, w, j) (KBD_MMA_ARCH_OK(arch) && KBD_MMA_NONE_OK(w))
#define KBD__MMA_OK2(arch, e, c, w, j) (KBD__MMA_OK1(arch, e, c, w, j) && KBD_MMA_ATOM32_SM90_OK(arch, w))
#define KBD__MMA_OK3(arch, e, c, w, j) (KBD__MMA_OK2(arch, e, c, w, j) && KBD_MMA_TRANS_SM90_OK(arch, e, j))
#define KBD__MMA_OK4(arch, e, c, w, j) (KBD__MMA_OK3(arch, e, c, w, j) && KBD_MMA_ATOM32_ESIZE_OK(e, w))
#define KBD__MMA_OK5(arch, e, c, w, j) (KBD__MMA_OK4(arch, e, c, w, j) && KBD_MMA_TF32_TRANS_OK(arch, e, w, j))
/* 1 if a legal shared tile (esize, rows, cols, swz, major) can be an MMA operand on arch (rows: no rule
 * beyond the tile's own, which makes the M/N extent a multiple of 8). */
#define KBD_MMA_OPERAND_OK(arch, esize, rows, cols, swz, major)                                                        \
  (KBD__MMA_OK5(arch, esize, cols, swz, major) && KBD_MMA_KSTEP_OK(esize, cols))

/* One static assertion per rule (file scope, block scope or inside a struct). */
#define KBD_MMA_OPERAND_STATIC_CHECK(arch, esize, rows, cols, swz, major)                                              \
  KBD_STATIC_ASSERT(KBD_MMA_ARCH_OK(arch), KBD_MMA_RULE_ARCH);                                                         \
  KBD_STATIC_ASSERT(!KBD_MMA_ARCH_OK(arch) || KBD_MMA_NONE_OK(swz), KBD_MMA_RULE_NONE);                                \
  KBD_STATIC_ASSERT(!KBD__MMA_OK1(arch, esize, cols, swz, major) || KBD_MMA_ATOM32_SM90_OK(arch, swz),                 \
                    KBD_MMA_RULE_ATOM32_SM90);                                                                         \
  KBD_STATIC_ASSERT(!KBD__MMA_OK2(arch, esize, cols, swz, major) || KBD_MMA_TRANS_SM90_OK(arch, esize, major),         \
                    KBD_MMA_RULE_TRANS_SM90);                                                                          \
  KBD_STATIC_ASSERT(!KBD__MMA_OK3(arch, esize, cols, swz, major) || KBD_MMA_ATOM32_ESIZE_OK(esize, swz),               \
                    KBD_MMA_RULE_ATOM32_ESIZE);                                                                        \
  KBD_STATIC_ASSERT(!KBD__MMA_OK4(arch, esize, cols, swz, major) || KBD_MMA_TF32_TRANS_OK(arch, esize, swz, major),    \
                    KBD_MMA_RULE_TF32_TRANS);                                                                          \
  KBD_STATIC_ASSERT(!KBD__MMA_OK5(arch, esize, cols, swz, major) || KBD_MMA_KSTEP_OK(esize, cols), KBD_MMA_RULE_KSTEP)
/* The same for a KBD_STILE expression t (needs kbd/stile.h, which the user of a tile includes anyway). */
#define KBD_MMA_STILE_STATIC_CHECK(arch, t)                                                                            \
  KBD_MMA_OPERAND_STATIC_CHECK(arch, KBD_ESIZE(t), KBD_ROWS(t), KBD_COLS(t), KBD_STILE_SWIZZLE(t), KBD_STILE_MAJOR(t))

/* Run-time only (the shared address is not a constant). */
#define KBD_MMA_RULE_ALIGN                                                                                             \
  "kbd: MMA operand: the tile's shared address must be a multiple of its swizzle repeat (1024 B for 128B, 512 B for "  \
  "64B and 128B_ATOM32, 256 B for 32B) so that the descriptor's matrix base offset is 0 (ptx-reference 4.5, 9.3)"
#define KBD_MMA_RULE_WINDOW                                                                                            \
  "kbd: MMA operand: the tile must end within the first 256 KiB of the shared window: the descriptor's start-address " \
  "field holds address bits 4-17 (ptx-reference 4.5)"

/* NULL if the tile at shared address `addr` can be an operand of arch's MMA, else the first broken rule's
 * message (the tile's own shape rules first). Host or CPU-machine check; not for the GPU hot path. */
KBD_HD const char *kbd_mma_operand_check(int arch, const kbd_smem_shape *s, uint32_t addr) {
  const char *why = kbd_smem_shape_check(s);
  const int e = s->esize, c = s->cols, w = s->swizzle, j = s->major;
  if (why) return why;
  if (!KBD_MMA_ARCH_OK(arch)) return KBD_MMA_RULE_ARCH;
  if (!KBD_MMA_NONE_OK(w)) return KBD_MMA_RULE_NONE;
  if (!KBD_MMA_ATOM32_SM90_OK(arch, w)) return KBD_MMA_RULE_ATOM32_SM90;
  if (!KBD_MMA_TRANS_SM90_OK(arch, e, j)) return KBD_MMA_RULE_TRANS_SM90;
  if (!KBD_MMA_ATOM32_ESIZE_OK(e, w)) return KBD_MMA_RULE_ATOM32_ESIZE;
  if (!KBD_MMA_TF32_TRANS_OK(arch, e, w, j)) return KBD_MMA_RULE_TF32_TRANS;
  if (!KBD_MMA_KSTEP_OK(e, c)) return KBD_MMA_RULE_KSTEP;
  if (addr % (uint32_t)kbd_smem_align_bytes(s) != 0) return KBD_MMA_RULE_ALIGN;
  if ((uint64_t)addr + (uint64_t)kbd_smem_tile_bytes(s) > 0x40000u) return KBD_MMA_RULE_WINDOW;
  return (const char *)0;
}

/* ---- slices: which rows and which K-step one descriptor names ------------------------------------------- */

/* K-steps in the tile: cols*esize / 32. */
KBD_HD int kbd_mma_ksteps(const kbd_smem_shape *s) { return s->cols * s->esize / KBD_MMA_KSTEP_BYTES; }
/* Granule of a slice's first row: 8 for K-major (a group of 8 rows starts a swizzle atom, so the start stays
 * at swizzle phase 0), span/esize for MN-major (the start must be a span-wide block's first byte). */
KBD_HD int kbd_mma_row_granule(const kbd_smem_shape *s) {
  return s->major == KBD_SMEM_MN_MAJOR ? kbd_smem_block_bytes(s) / s->esize : 8;
}

#define KBD_MMA_RULE_ROW0                                                                                              \
  "kbd: MMA operand slice: row0 must be a multiple of kbd_mma_row_granule(): 8 rows for a K-major tile (a swizzle "    \
  "atom starts there), span/esize rows for an MN-major tile (a span-wide block starts there)"
#define KBD_MMA_RULE_ROWS                                                                                              \
  "kbd: MMA operand slice: rows row0 .. row0+nrows-1 (nrows = the instruction's M for A, N for B) must lie inside "    \
  "the tile"
#define KBD_MMA_RULE_KSTEP_RANGE                                                                                       \
  "kbd: MMA operand slice: kstep must be in 0 .. kbd_mma_ksteps()-1 (one K-step = 32 bytes of K)"

/* NULL if rows [row0, row0+nrows) and K-step kstep of a legal operand tile can be named by one descriptor. */
KBD_HD const char *kbd_mma_slice_check(const kbd_smem_shape *s, int row0, int nrows, int kstep) {
  if (row0 < 0 || row0 % kbd_mma_row_granule(s) != 0) return KBD_MMA_RULE_ROW0;
  if (nrows < 1 || nrows > s->rows - row0) return KBD_MMA_RULE_ROWS;
  if (kstep < 0 || kstep >= kbd_mma_ksteps(s)) return KBD_MMA_RULE_KSTEP_RANGE;
  return (const char *)0;
}

/* ---- encoding ------------------------------------------------------------------------------------------
 * Both descriptors (ptx-reference §4.5, §5.6; PTX "Matrix Descriptor Format", tcgen05 Table 40/41):
 *   bits  0-13  start address >> 4   (the field holds address bits 4-17: 16-byte granules, 256 KiB window)
 *   bits 16-29  LBO >> 4             (leading-dimension byte offset)
 *   bits 32-45  SBO >> 4             (stride-dimension byte offset)
 *   bits 46-48  0 on sm_90; 0b001 on sm_100 ("version" 1, must be set)
 *   bits 49-51  matrix base offset   (kbd: always 0, tiles sit on their swizzle repeat: §9.3)
 *   bit  52     sm_100 LBO mode      (0 = relative; 1 = absolute, sm_103a only: kbd writes 0)
 *   bits 62-63  sm_90 layout:  0 none (interleave), 1 128B, 2 64B, 3 32B
 *   bits 61-63  sm_100 layout: 0 none, 1 128B with 32-byte atoms, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid)
 * The sm_100 codes put 128B/64B/32B on the same bits as sm_90 (62, 63, 62+63); bit 61 is new. */

/* Layout codes of a kbd_swizzle (-1: no code on that arch) and back (-1: invalid code). */
KBD_HD int kbd_wgmma_layout_code(int swz) {
  return swz == KBD_SWIZZLE_NONE   ? 0
         : swz == KBD_SWIZZLE_128B ? 1
         : swz == KBD_SWIZZLE_64B  ? 2
         : swz == KBD_SWIZZLE_32B  ? 3
                                   : -1;
}
KBD_HD int kbd_umma_layout_code(int swz) {
  return swz == KBD_SWIZZLE_NONE          ? 0
         : swz == KBD_SWIZZLE_128B_ATOM32 ? 1
         : swz == KBD_SWIZZLE_128B        ? 2
         : swz == KBD_SWIZZLE_64B         ? 4
         : swz == KBD_SWIZZLE_32B         ? 6
                                          : -1;
}
KBD_HD int kbd_wgmma_layout_swizzle(int code) {
  return code == 0   ? (int)KBD_SWIZZLE_NONE
         : code == 1 ? (int)KBD_SWIZZLE_128B
         : code == 2 ? (int)KBD_SWIZZLE_64B
         : code == 3 ? (int)KBD_SWIZZLE_32B
                     : -1;
}
KBD_HD int kbd_umma_layout_swizzle(int code) {
  return code == 0   ? (int)KBD_SWIZZLE_NONE
         : code == 1 ? (int)KBD_SWIZZLE_128B_ATOM32
         : code == 2 ? (int)KBD_SWIZZLE_128B
         : code == 4 ? (int)KBD_SWIZZLE_64B
         : code == 6 ? (int)KBD_SWIZZLE_32B
                     : -1;
}

/* Bits 0-51 common to both: addresses and offsets must be multiples of 16 (their low 4 bits are dropped). */
KBD_HD uint64_t kbd__mma_desc_common(uint32_t start, uint32_t lbo, uint32_t sbo, unsigned base_offset) {
  return (uint64_t)((start & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
         ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | ((uint64_t)(base_offset & 7u) << 49);
}
/* Raw encoders: byte values in, descriptor out. `layout` is the arch's code (kbd_*_layout_code). */
KBD_HD uint64_t kbd_wgmma_desc_encode(uint32_t start, uint32_t lbo, uint32_t sbo, unsigned base_offset,
                                      unsigned layout) {
  return kbd__mma_desc_common(start, lbo, sbo, base_offset) | ((uint64_t)(layout & 3u) << 62);
}
KBD_HD uint64_t kbd_umma_desc_encode(uint32_t start, uint32_t lbo, uint32_t sbo, unsigned base_offset, unsigned layout,
                                     unsigned lbo_mode) {
  return kbd__mma_desc_common(start, lbo, sbo, base_offset) | ((uint64_t)1 << 46) | ((uint64_t)(lbo_mode & 1u) << 52) |
         ((uint64_t)(layout & 7u) << 61);
}

/* Field extractors (byte values for addresses and offsets). */
KBD_HD uint32_t kbd_mma_desc_start(uint64_t d) { return (uint32_t)(d & 0x3FFFu) << 4; }
KBD_HD uint32_t kbd_mma_desc_lbo(uint64_t d) { return (uint32_t)((d >> 16) & 0x3FFFu) << 4; }
KBD_HD uint32_t kbd_mma_desc_sbo(uint64_t d) { return (uint32_t)((d >> 32) & 0x3FFFu) << 4; }
KBD_HD unsigned kbd_mma_desc_base_offset(uint64_t d) { return (unsigned)(d >> 49) & 7u; }
KBD_HD unsigned kbd_wgmma_desc_layout(uint64_t d) { return (unsigned)(d >> 62); }
KBD_HD unsigned kbd_umma_desc_layout(uint64_t d) { return (unsigned)(d >> 61); }
KBD_HD unsigned kbd_umma_desc_version(uint64_t d) { return (unsigned)(d >> 46) & 7u; }
KBD_HD unsigned kbd_umma_desc_lbo_mode(uint64_t d) { return (unsigned)(d >> 52) & 1u; }

/* Moves the start address by `bytes` (a multiple of 16; the result stays below 256 KiB): how CUTLASS steps
 * K inside a swizzle atom. Correct because the hardware XORs the ABSOLUTE address bits (§3, §4.6). */
KBD_HD uint64_t kbd_mma_desc_add_bytes(uint64_t d, int32_t bytes) { return d + (uint64_t)(int64_t)(bytes / 16); }

/* ---- the descriptor of a shared tile ----------------------------------------------------------------------
 * kbd's swizzled tile is blocks of span bytes along the contiguous dimension, each holding the whole
 * strided extent in lines of span bytes (kbd/swizzle.h). Against the canonical layouts (§4.6):
 *   K-major:  a group of 8 rows is one atom of 8 x span bytes; SBO = 8*span (next 8 rows); LBO unused by
 *             the hardware for swizzled K-major ("assumed 1"), written as 16 like CUTLASS. One K-step's 32
 *             bytes lie inside one block: start = block (32*kstep / span) + row0*span + (32*kstep % span).
 *   MN-major: LBO = block stride (next span of M/N), SBO = 8 K-lines * span; for 128B_ATOM32 the K group is
 *             4 lines, SBO = 4*128 = 512 (CUTLASS-only detail, ptx-reference §5.6). start = block of row0 +
 *             (32*kstep/esize) K-lines * span.
 * Every start is a repeat boundary (8*span), plus 32*j inside the first row of a K-major atom, so with the
 * tile on its repeat the base offset is 0 and the hardware's absolute-address XOR lands on the tile's bytes. */
KBD_HD uint32_t kbd_mma_operand_lbo(const kbd_smem_shape *s) {
  if (s->swizzle == KBD_SWIZZLE_128B_ATOM32) return (uint32_t)kbd_smem_block_stride(s);
  return (uint32_t)kbd_smem_desc_lbo(s);
}
KBD_HD uint32_t kbd_mma_operand_sbo(const kbd_smem_shape *s) {
  if (s->swizzle == KBD_SWIZZLE_128B_ATOM32) return 4u * 128u;
  return (uint32_t)kbd_smem_desc_sbo(s);
}
/* Byte offset from the tile base of the descriptor's start address for rows row0.. and K-step kstep. It is
 * the LINEAR offset (the hardware swizzles start + layout offset), so a slice must pass kbd_mma_slice_check. */
KBD_HD uint32_t kbd_mma_operand_offset(const kbd_smem_shape *s, int row0, int kstep) {
  const uint32_t blk = (uint32_t)kbd_smem_block_bytes(s), stride = (uint32_t)kbd_smem_block_stride(s);
  const uint32_t kb = (uint32_t)kstep * KBD_MMA_KSTEP_BYTES, e = (uint32_t)s->esize;
  if (s->major == KBD_SMEM_MN_MAJOR) return ((uint32_t)row0 * e / blk) * stride + (kb / e) * blk;
  return (kb / blk) * stride + (uint32_t)row0 * blk + kb % blk;
}

/* The wgmma / tcgen05 descriptor of rows row0.. and K-step kstep of the tile at shared address `addr`. For
 * tiles that kbd_mma_operand_check accepts, slices that kbd_mma_slice_check accepts; no checks here. The
 * instruction's imm-trans (wgmma) or transpose bit (tcgen05 idesc) must say the tile's major-ness. */
KBD_HD uint64_t kbd_wgmma_smem_desc(const kbd_smem_shape *s, uint32_t addr, int row0, int kstep) {
  return kbd_wgmma_desc_encode(addr + kbd_mma_operand_offset(s, row0, kstep), kbd_mma_operand_lbo(s),
                               kbd_mma_operand_sbo(s), 0u, (unsigned)kbd_wgmma_layout_code(s->swizzle));
}
KBD_HD uint64_t kbd_umma_smem_desc(const kbd_smem_shape *s, uint32_t addr, int row0, int kstep) {
  return kbd_umma_desc_encode(addr + kbd_mma_operand_offset(s, row0, kstep), kbd_mma_operand_lbo(s),
                              kbd_mma_operand_sbo(s), 0u, (unsigned)kbd_umma_layout_code(s->swizzle), 0u);
}

/* ---- decoding: the address the hardware reads ----------------------------------------------------------
 * From the canonical layouts of ptx-reference §4.6 (PTX "Canonical Layouts", the same for tcgen05), with
 * E = element bytes, S = swizzle span (bytes of one swizzled row), G = K lines per atom (8; 4 for 128B
 * with 32-byte atoms, §5.6):
 *   K-major,  swizzled:  lin = start + (r%8)*S + (r/8)*SBO + k*E                  (LBO unused)
 *   K-major,  none:      lin = start + (r%8)*16 + (r/8)*SBO + (k*E/16)*LBO + (k*E)%16
 *   MN-major, swizzled:  lin = start + (r*E)%S + (r*E/S)*LBO + (k%G)*S + (k/G)*SBO
 *   MN-major, none:      lin = start + (r*E)%16 + (r*E/16)*SBO + (k%8)*16 + (k/8)*LBO
 *   address = the mode's XOR on lin, an ABSOLUTE shared-window address (§3 table, written out here).
 * Valid for descriptors that kbd_*_desc_check accepts; k within one K-step (k*E < 32). */
KBD_HD uint32_t kbd__mma_xor(int swz, uint32_t a) {
  switch (swz) {
  case KBD_SWIZZLE_32B: return a ^ ((a >> 3) & 0x10u);         /* bit 4 ^= bit 7        */
  case KBD_SWIZZLE_64B: return a ^ ((a >> 3) & 0x30u);         /* bits 4-5 ^= bits 7-8  */
  case KBD_SWIZZLE_128B: return a ^ ((a >> 3) & 0x70u);        /* bits 4-6 ^= bits 7-9  */
  case KBD_SWIZZLE_128B_ATOM32: return a ^ ((a >> 2) & 0x60u); /* bits 5-6 ^= bits 7-8  */
  default: return a;
  }
}
KBD_HD uint32_t kbd__mma_desc_addr(uint64_t d, int swz, int major, int esize, int row, int k) {
  const uint32_t start = kbd_mma_desc_start(d), lbo = kbd_mma_desc_lbo(d), sbo = kbd_mma_desc_sbo(d);
  const uint32_t r = (uint32_t)row, kk = (uint32_t)k, e = (uint32_t)esize;
  const uint32_t span = swz == KBD_SWIZZLE_32B ? 32u : swz == KBD_SWIZZLE_64B ? 64u : 128u;
  const uint32_t g = swz == KBD_SWIZZLE_128B_ATOM32 ? 4u : 8u;
  uint32_t lin;
  if (major == KBD_SMEM_K_MAJOR) {
    lin = swz == KBD_SWIZZLE_NONE ? start + (r % 8u) * 16u + (r / 8u) * sbo + (kk * e / 16u) * lbo + (kk * e) % 16u
                                  : start + (r % 8u) * span + (r / 8u) * sbo + kk * e;
  } else {
    lin = swz == KBD_SWIZZLE_NONE ? start + (r * e) % 16u + (r * e / 16u) * sbo + (kk % 8u) * 16u + (kk / 8u) * lbo
                                  : start + (r * e) % span + (r * e / span) * lbo + (kk % g) * span + (kk / g) * sbo;
  }
  return kbd__mma_xor(swz, lin);
}
/* Shared byte address of operand element (row, k) read through a descriptor; major = the instruction's
 * transpose choice (KBD_SMEM_K_MAJOR / KBD_SMEM_MN_MAJOR), esize = the operand type's bytes. */
KBD_HD uint32_t kbd_wgmma_desc_addr(uint64_t d, int major, int esize, int row, int k) {
  return kbd__mma_desc_addr(d, kbd_wgmma_layout_swizzle((int)kbd_wgmma_desc_layout(d)), major, esize, row, k);
}
KBD_HD uint32_t kbd_umma_desc_addr(uint64_t d, int major, int esize, int row, int k) {
  return kbd__mma_desc_addr(d, kbd_umma_layout_swizzle((int)kbd_umma_desc_layout(d)), major, esize, row, k);
}

/* Descriptor checks for the emulator: NULL if the decoder reads what the hardware reads. */
#define KBD_MMA_RULE_DESC_ESIZE "kbd: MMA descriptor: operand element size must be 1, 2 or 4 bytes"
#define KBD_MMA_RULE_DESC_MAJOR "kbd: MMA descriptor: major-ness must be KBD_SMEM_K_MAJOR or KBD_SMEM_MN_MAJOR"
#define KBD_MMA_RULE_DESC_RSVD90                                                                                       \
  "kbd: wgmma descriptor: bits 14-15, 30-31, 46-48 and 52-61 are reserved and must be 0 (ptx-reference 4.5)"
#define KBD_MMA_RULE_DESC_RSVD100                                                                                      \
  "kbd: tcgen05 descriptor: bits 14-15, 30-31 and 53-60 are reserved and must be 0 (ptx-reference 5.6)"
#define KBD_MMA_RULE_DESC_VERSION "kbd: tcgen05 descriptor: bits 46-48 must be 0b001 (version 1, ptx-reference 5.6)"
#define KBD_MMA_RULE_DESC_LBO_MODE                                                                                     \
  "kbd: tcgen05 descriptor: LBO mode 1 (bit 52, absolute next-chunk address) exists on sm_103a only (ptx-reference "   \
  "5.6)"
#define KBD_MMA_RULE_DESC_LAYOUT "kbd: tcgen05 descriptor: layout codes 3, 5 and 7 (bits 61-63) are invalid (5.6)"
#define KBD_MMA_RULE_DESC_BASE                                                                                         \
  "kbd: MMA descriptor: nonzero matrix base offset (bits 49-51): only its formula is documented, not its effect on "   \
  "the swizzle phase (ptx-reference 4.6, 9.3); kbd keeps tiles on their swizzle repeat and writes 0"
#define KBD_MMA_RULE_DESC_ATOM32_K                                                                                     \
  "kbd: tcgen05 descriptor: 128B swizzling with 32-byte atoms (code 1) is invalid for K-major operands (5.6)"

KBD_HD const char *kbd__mma_desc_check_common(uint64_t d, int major, int esize) {
  if (!(esize == 1 || esize == 2 || esize == 4)) return KBD_MMA_RULE_DESC_ESIZE;
  if (major != KBD_SMEM_K_MAJOR && major != KBD_SMEM_MN_MAJOR) return KBD_MMA_RULE_DESC_MAJOR;
  if (kbd_mma_desc_base_offset(d) != 0) return KBD_MMA_RULE_DESC_BASE;
  return (const char *)0;
}
/* wgmma: also imm-trans only for 16-bit types (§4.1). */
KBD_HD const char *kbd_wgmma_desc_check(uint64_t d, int major, int esize) {
  const char *why = kbd__mma_desc_check_common(d, major, esize);
  if (why) return why;
  if (d & 0x3FF1C000C000C000ull) return KBD_MMA_RULE_DESC_RSVD90;
  if (major == KBD_SMEM_MN_MAJOR && esize != 2) return KBD_MMA_RULE_TRANS_SM90;
  return (const char *)0;
}
/* tcgen05: also version, LBO mode, layout code and PTX Table 54 (type size x major-ness x swizzle). */
KBD_HD const char *kbd_umma_desc_check(uint64_t d, int major, int esize) {
  const char *why = kbd__mma_desc_check_common(d, major, esize);
  const int swz = kbd_umma_layout_swizzle((int)kbd_umma_desc_layout(d));
  if (why) return why;
  if (d & 0x1FE00000C000C000ull) return KBD_MMA_RULE_DESC_RSVD100;
  if (kbd_umma_desc_version(d) != 1u) return KBD_MMA_RULE_DESC_VERSION;
  if (kbd_umma_desc_lbo_mode(d) != 0u) return KBD_MMA_RULE_DESC_LBO_MODE;
  if (swz < 0) return KBD_MMA_RULE_DESC_LAYOUT;
  if (major == KBD_SMEM_K_MAJOR && swz == KBD_SWIZZLE_128B_ATOM32) return KBD_MMA_RULE_DESC_ATOM32_K;
  if (major == KBD_SMEM_MN_MAJOR && esize == 4 && swz != KBD_SWIZZLE_128B_ATOM32) return KBD_MMA_RULE_TF32_TRANS;
  if (major == KBD_SMEM_MN_MAJOR && esize != 4 && swz == KBD_SWIZZLE_128B_ATOM32) return KBD_MMA_RULE_ATOM32_ESIZE;
  return (const char *)0;
}

/* ---- operand types, kinds and shapes ------------------------------------------------------------------- */

typedef enum kbd_mma_type {
  KBD_MMA_F16 = 0,
  KBD_MMA_BF16 = 1,
  KBD_MMA_TF32 = 2, /* f32 in memory; the MMA ignores the low 13 mantissa bits (§4.1) */
  KBD_MMA_E4M3 = 3,
  KBD_MMA_E5M2 = 4,
  KBD_MMA_S8 = 5,
  KBD_MMA_U8 = 6,
  KBD_MMA_F32 = 7, /* accumulator only */
  KBD_MMA_S32 = 8, /* accumulator only */
} kbd_mma_type;
/* tcgen05 .kind (and the wgmma input families): K-step is 32 bytes in every kind. */
typedef enum kbd_mma_kind {
  KBD_MMA_KIND_NONE = -1,
  KBD_MMA_KIND_F16 = 0,    /* f16 x f16, bf16 x bf16; K = 16 */
  KBD_MMA_KIND_TF32 = 1,   /* K = 8                           */
  KBD_MMA_KIND_F8F6F4 = 2, /* e4m3/e5m2 in any mix; K = 32    */
  KBD_MMA_KIND_I8 = 3,     /* s8/u8 in any mix; K = 32        */
} kbd_mma_kind;

KBD_HD int kbd_mma_type_bytes(int t) {
  return t == KBD_MMA_F16 || t == KBD_MMA_BF16 ? 2 : t == KBD_MMA_TF32 || t == KBD_MMA_F32 || t == KBD_MMA_S32 ? 4 : 1;
}
/* The kind an (A, B) type pair belongs to, KBD_MMA_KIND_NONE if the pair cannot be multiplied (§4.1, §5.4:
 * f16 and bf16 do not mix, fp8 and 8-bit integer types mix within their family). */
KBD_HD int kbd_mma_kind_of(int a, int b) {
  if ((a == KBD_MMA_F16 || a == KBD_MMA_BF16) && b == a) return KBD_MMA_KIND_F16;
  if (a == KBD_MMA_TF32 && b == KBD_MMA_TF32) return KBD_MMA_KIND_TF32;
  if ((a == KBD_MMA_E4M3 || a == KBD_MMA_E5M2) && (b == KBD_MMA_E4M3 || b == KBD_MMA_E5M2)) return KBD_MMA_KIND_F8F6F4;
  if ((a == KBD_MMA_S8 || a == KBD_MMA_U8) && (b == KBD_MMA_S8 || b == KBD_MMA_U8)) return KBD_MMA_KIND_I8;
  return KBD_MMA_KIND_NONE;
}
/* D types per (A type): f16 -> f16/f32, bf16 -> f32, tf32 -> f32, fp8 -> f16/f32, 8-bit int -> s32. */
KBD_HD int kbd__mma_dtype_ok(int a, int d) {
  if (a == KBD_MMA_S8 || a == KBD_MMA_U8) return d == KBD_MMA_S32;
  if (a == KBD_MMA_F16 || a == KBD_MMA_E4M3 || a == KBD_MMA_E5M2) return d == KBD_MMA_F16 || d == KBD_MMA_F32;
  if (a == KBD_MMA_BF16 || a == KBD_MMA_TF32) return d == KBD_MMA_F32;
  return 0;
}
/* N rules shared by wgmma and tcgen05 cta_group::1: 8..256 step 8; 8-bit integers: 8, 16, 24, then 32..256
 * step 16 (§4.1, §5.4; ptxas rejects m64n40k32 for s8; for tcgen05.mma kind::i8 exactly PTX ISA 9.2 Table 39's
 * list, N = 24 included although CuTe's SM100_MMA_S8 leaves it out: ptx-reference §9 item 13). */
KBD_HD int kbd__mma_n_ok(int kind, int n) {
  if (n < 8 || n > 256 || n % 8 != 0) return 0;
  return kind != KBD_MMA_KIND_I8 || n <= 24 || n % 16 == 0;
}

#define KBD_MMA_RULE_TYPES                                                                                             \
  "kbd: MMA: A and B types must form one kind: f16 x f16, bf16 x bf16, tf32 x tf32, e4m3/e5m2 x e4m3/e5m2, s8/u8 x "   \
  "s8/u8 (ptx-reference 4.1, 5.4)"
#define KBD_MMA_RULE_DTYPE                                                                                             \
  "kbd: MMA: accumulator type: f16 inputs give f16 or f32, bf16 and tf32 give f32, fp8 gives f16 or f32, 8-bit "       \
  "integers give s32 (ptx-reference 4.1, 5.4)"
#define KBD_MMA_RULE_MAJOR "kbd: MMA: a_major and b_major must be KBD_SMEM_K_MAJOR or KBD_SMEM_MN_MAJOR"
#define KBD_MMA_RULE_WGMMA_M "kbd: wgmma: M must be 64 (ptx-reference 4.1)"
#define KBD_MMA_RULE_N                                                                                                 \
  "kbd: MMA: N must be 8..256 in steps of 8; for 8-bit integer inputs 8, 16, 24, then 32..256 in steps of 16 "         \
  "(ptx-reference 4.1, 5.4)"
#define KBD_MMA_RULE_UMMA_M1 "kbd: tcgen05.mma cta_group::1: M must be 64 or 128 (ptx-reference 5.4)"
#define KBD_MMA_RULE_UMMA_M2 "kbd: tcgen05.mma cta_group::2: M must be 128 or 256 (ptx-reference 5.4)"
#define KBD_MMA_RULE_UMMA_N2                                                                                           \
  "kbd: tcgen05.mma cta_group::2: N must be 16..256 in steps of 16 (8-bit integers: 32..256 in steps of 32; "          \
  "ptx-reference 5.4)"
#define KBD_MMA_RULE_CTA_GROUP "kbd: tcgen05.mma: cta_group must be 1 or 2"
#define KBD_MMA_RULE_NEGATE "kbd: MMA: negating A or B is not available for 8-bit integer inputs (ptx-reference 5.5)"
#define KBD_MMA_RULE_SATURATE "kbd: tcgen05.mma: saturate exists only for 8-bit integer inputs (ptx-reference 5.5)"

KBD_HD const char *kbd__mma_types_check(int a, int b, int d, int a_major, int b_major) {
  if (kbd_mma_kind_of(a, b) == KBD_MMA_KIND_NONE) return KBD_MMA_RULE_TYPES;
  if (!kbd__mma_dtype_ok(a, d)) return KBD_MMA_RULE_DTYPE;
  if ((a_major != KBD_SMEM_K_MAJOR && a_major != KBD_SMEM_MN_MAJOR) ||
      (b_major != KBD_SMEM_K_MAJOR && b_major != KBD_SMEM_MN_MAJOR))
    return KBD_MMA_RULE_MAJOR;
  return (const char *)0;
}
/* wgmma.mma_async m64nNk*: types, shape, and transposition only for 16-bit operands (§4.1). */
KBD_HD const char *kbd_wgmma_shape_check(int a, int b, int d, int m, int n, int a_major, int b_major) {
  const char *why = kbd__mma_types_check(a, b, d, a_major, b_major);
  if (why) return why;
  if (m != 64) return KBD_MMA_RULE_WGMMA_M;
  if (!kbd__mma_n_ok(kbd_mma_kind_of(a, b), n)) return KBD_MMA_RULE_N;
  if ((a_major == KBD_SMEM_MN_MAJOR || b_major == KBD_SMEM_MN_MAJOR) && kbd_mma_type_bytes(a) != 2)
    return KBD_MMA_RULE_TRANS_SM90;
  return (const char *)0;
}

/* ---- tcgen05 instruction descriptor (32 bit; ptx-reference §5.5, PTX Table 42) ---------------------------
 *   bits  0-1  sparsity selector (0)        bit  2  sparse (0: dense)      bit 3  saturate (i8 only)
 *   bits  4-5  D type: F16 0, F32 1, S32 2  bit  6  reserved
 *   bits  7-9  A type, 10-12 B type: kind::f16 F16 0 BF16 1; tf32 2; f8f6f4 E4M3 0 E5M2 1; i8 U8 0 S8 1
 *   bit  13/14 negate A/B (not i8)          bit 15/16 transpose A/B (0 K-major, 1 MN-major)
 *   bits 17-22 N >> 3                       bit 23  reserved               bits 24-28 M >> 4
 *   bit  29    reserved                     bits 30-31 .ws max B-reuse shift (0) */
#define KBD_UMMA_NEGATE_A 1u
#define KBD_UMMA_NEGATE_B 2u
#define KBD_UMMA_SATURATE 4u

KBD_HD int kbd_umma_type_code(int t) {
  switch (t) {
  case KBD_MMA_F16: return 0;
  case KBD_MMA_BF16: return 1;
  case KBD_MMA_TF32: return 2;
  case KBD_MMA_E4M3: return 0;
  case KBD_MMA_E5M2: return 1;
  case KBD_MMA_U8: return 0;
  case KBD_MMA_S8: return 1;
  default: return -1;
  }
}
KBD_HD int kbd_umma_dtype_code(int d) {
  return d == KBD_MMA_F16 ? 0 : d == KBD_MMA_F32 ? 1 : d == KBD_MMA_S32 ? 2 : -1;
}
/* The descriptor; valid for arguments kbd_umma_instr_check accepts (no checks: a constant on the GPU). */
KBD_HD uint32_t kbd_umma_instr_desc(int a, int b, int d, int m, int n, int a_major, int b_major, unsigned flags) {
  return ((flags & KBD_UMMA_SATURATE) ? 1u << 3 : 0u) | ((uint32_t)kbd_umma_dtype_code(d) & 3u) << 4 |
         ((uint32_t)kbd_umma_type_code(a) & 7u) << 7 | ((uint32_t)kbd_umma_type_code(b) & 7u) << 10 |
         ((flags & KBD_UMMA_NEGATE_A) ? 1u << 13 : 0u) | ((flags & KBD_UMMA_NEGATE_B) ? 1u << 14 : 0u) |
         (uint32_t)(a_major == KBD_SMEM_MN_MAJOR) << 15 | (uint32_t)(b_major == KBD_SMEM_MN_MAJOR) << 16 |
         ((uint32_t)n >> 3 & 0x3Fu) << 17 | ((uint32_t)m >> 4 & 0x1Fu) << 24;
}
KBD_HD const char *kbd__umma_shape_check(int kind, int m, int n, int cta_group) {
  if (cta_group == 1) {
    if (m != 64 && m != 128) return KBD_MMA_RULE_UMMA_M1;
    if (!kbd__mma_n_ok(kind, n)) return KBD_MMA_RULE_N;
  } else if (cta_group == 2) {
    const int step = kind == KBD_MMA_KIND_I8 ? 32 : 16;
    if (m != 128 && m != 256) return KBD_MMA_RULE_UMMA_M2;
    if (n < step || n > 256 || n % step != 0) return KBD_MMA_RULE_UMMA_N2;
  } else {
    return KBD_MMA_RULE_CTA_GROUP;
  }
  return (const char *)0;
}
/* NULL if tcgen05.mma (dense, no .ws) accepts these types, shape, majors and flags, else the rule. */
KBD_HD const char *kbd_umma_instr_check(int a, int b, int d, int m, int n, int a_major, int b_major, unsigned flags,
                                        int cta_group) {
  const char *why = kbd__mma_types_check(a, b, d, a_major, b_major);
  const int kind = kbd_mma_kind_of(a, b);
  if (why) return why;
  why = kbd__umma_shape_check(kind, m, n, cta_group);
  if (why) return why;
  if ((flags & (KBD_UMMA_NEGATE_A | KBD_UMMA_NEGATE_B)) && kind == KBD_MMA_KIND_I8) return KBD_MMA_RULE_NEGATE;
  if ((flags & KBD_UMMA_SATURATE) && kind != KBD_MMA_KIND_I8) return KBD_MMA_RULE_SATURATE;
  return (const char *)0;
}

/* Field extractors (what the emulator reads back). */
KBD_HD unsigned kbd_umma_idesc_sparse_sel(uint32_t i) { return i & 3u; }
KBD_HD unsigned kbd_umma_idesc_sparse(uint32_t i) { return (i >> 2) & 1u; }
KBD_HD unsigned kbd_umma_idesc_saturate(uint32_t i) { return (i >> 3) & 1u; }
KBD_HD unsigned kbd_umma_idesc_d_code(uint32_t i) { return (i >> 4) & 3u; }
KBD_HD unsigned kbd_umma_idesc_a_code(uint32_t i) { return (i >> 7) & 7u; }
KBD_HD unsigned kbd_umma_idesc_b_code(uint32_t i) { return (i >> 10) & 7u; }
KBD_HD unsigned kbd_umma_idesc_negate_a(uint32_t i) { return (i >> 13) & 1u; }
KBD_HD unsigned kbd_umma_idesc_negate_b(uint32_t i) { return (i >> 14) & 1u; }
KBD_HD int kbd_umma_idesc_a_major(uint32_t i) { return (int)((i >> 15) & 1u); }
KBD_HD int kbd_umma_idesc_b_major(uint32_t i) { return (int)((i >> 16) & 1u); }
KBD_HD int kbd_umma_idesc_n(uint32_t i) { return (int)((i >> 17) & 0x3Fu) << 3; }
KBD_HD int kbd_umma_idesc_m(uint32_t i) { return (int)((i >> 24) & 0x1Fu) << 4; }
KBD_HD unsigned kbd_umma_idesc_max_shift(uint32_t i) { return i >> 30; }
/* Operand / accumulator types back from their codes; the code's meaning depends on the instruction's .kind.
 * -1 for a code that kind does not define. */
KBD_HD int kbd_umma_idesc_type(int kind, unsigned code) {
  switch (kind) {
  case KBD_MMA_KIND_F16: return code == 0 ? (int)KBD_MMA_F16 : code == 1 ? (int)KBD_MMA_BF16 : -1;
  case KBD_MMA_KIND_TF32: return code == 2 ? (int)KBD_MMA_TF32 : -1;
  case KBD_MMA_KIND_F8F6F4: return code == 0 ? (int)KBD_MMA_E4M3 : code == 1 ? (int)KBD_MMA_E5M2 : -1; /* no f6/f4 */
  case KBD_MMA_KIND_I8: return code == 0 ? (int)KBD_MMA_U8 : code == 1 ? (int)KBD_MMA_S8 : -1;
  default: return -1;
  }
}
KBD_HD int kbd_umma_idesc_dtype(uint32_t i) {
  const unsigned c = kbd_umma_idesc_d_code(i);
  return c == 0 ? (int)KBD_MMA_F16 : c == 1 ? (int)KBD_MMA_F32 : c == 2 ? (int)KBD_MMA_S32 : -1;
}

#define KBD_MMA_RULE_IDESC_RSVD                                                                                        \
  "kbd: tcgen05 instruction descriptor: reserved bits 6, 23 and 29 must be 0 (ptx-reference 5.5)"
#define KBD_MMA_RULE_IDESC_SPARSE                                                                                      \
  "kbd: tcgen05 instruction descriptor: sparsity (bits 0-2) is not emulated; dense MMAs write 0"
#define KBD_MMA_RULE_IDESC_SHIFT                                                                                       \
  "kbd: tcgen05 instruction descriptor: the .ws B-reuse shift (bits 30-31) must be 0 for non-.ws MMAs"
#define KBD_MMA_RULE_IDESC_TYPE                                                                                        \
  "kbd: tcgen05 instruction descriptor: an A, B or D type code is not defined for this .kind (ptx-reference 5.5)"

/* Emulator side: NULL if `idesc` is a valid dense descriptor for an instruction of this .kind and cta_group,
 * i.e. one that kbd_umma_instr_desc can produce and kbd_umma_instr_check accepts. */
KBD_HD const char *kbd_umma_idesc_check(uint32_t i, int kind, int cta_group) {
  const int a = kbd_umma_idesc_type(kind, kbd_umma_idesc_a_code(i));
  const int b = kbd_umma_idesc_type(kind, kbd_umma_idesc_b_code(i));
  const int d = kbd_umma_idesc_dtype(i);
  unsigned flags = 0;
  if (i & ((1u << 6) | (1u << 23) | (1u << 29))) return KBD_MMA_RULE_IDESC_RSVD;
  if (kbd_umma_idesc_sparse(i) || kbd_umma_idesc_sparse_sel(i)) return KBD_MMA_RULE_IDESC_SPARSE;
  if (kbd_umma_idesc_max_shift(i)) return KBD_MMA_RULE_IDESC_SHIFT;
  if (a < 0 || b < 0 || d < 0) return KBD_MMA_RULE_IDESC_TYPE;
  flags |= kbd_umma_idesc_negate_a(i) ? KBD_UMMA_NEGATE_A : 0u;
  flags |= kbd_umma_idesc_negate_b(i) ? KBD_UMMA_NEGATE_B : 0u;
  flags |= kbd_umma_idesc_saturate(i) ? KBD_UMMA_SATURATE : 0u;
  return kbd_umma_instr_check(a, b, d, kbd_umma_idesc_m(i), kbd_umma_idesc_n(i), kbd_umma_idesc_a_major(i),
                              kbd_umma_idesc_b_major(i), flags, cta_group);
}

#endif /* KBD_MMA_DESC_H */
