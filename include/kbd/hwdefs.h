/* kbd/hwdefs.h - constants shared by the two twins of a primitive (ptx/ and cpu/) and their callers. */
#ifndef KBD_HWDEFS_H
#define KBD_HWDEFS_H

/* shfl.sync modes and the c operand: segment mask in bits 8..12, clamp lane in bits 0..4. kbd always
 * shuffles over the whole warp: c = 0x1f for bfly/idx/down (clamp at lane 31), 0 for up (clamp at 0). */
enum { KBD_SHFL_UP = 0, KBD_SHFL_DOWN = 1, KBD_SHFL_BFLY = 2, KBD_SHFL_IDX = 3 };
#define KBD_SHFL_FULL 0xffffffffu
#define KBD_SHFL_C_UP 0x0 /* segmask 0, clamp lane 0: whole warp */
#define KBD_SHFL_C 0x1f   /* segmask 0, clamp lane 31: whole warp */

/* The register file: 64K 32-bit registers per SM, at most 255 per thread, allocated in steps of 8 per thread.
 * KBD_KERNEL declares __launch_bounds__(threads, 1); ptxas then gives a kernel that uses setmaxnreg the whole
 * budget, 65536 / threads rounded down to 8 (the GEMM's 384 threads: 168, in its ptxas report), and that is
 * the CTA's pool: setmaxnreg.inc can only take what .dec gave back (ptx-reference 6.6). */
#define KBD_REGFILE_REGS 65536
#define KBD_REGS_PER_THREAD(threads)                                                                                   \
  ((KBD_REGFILE_REGS / (threads)) / 8 * 8 > 256 ? 256 : (KBD_REGFILE_REGS / (threads)) / 8 * 8)

#endif /* KBD_HWDEFS_H */
