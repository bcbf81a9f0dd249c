/* kbd/hwdefs.h - constants shared by the two twins of a primitive (ptx/ and cpu/) and their callers. */
#ifndef KBD_HWDEFS_H
#define KBD_HWDEFS_H

/* shfl.sync modes and the c operand: segment mask in bits 8..12, clamp lane in bits 0..4. kbd always
 * shuffles over the whole warp: c = 0x1f for bfly/idx/down (clamp at lane 31), 0 for up (clamp at 0). */
enum { KBD_SHFL_UP = 0, KBD_SHFL_DOWN = 1, KBD_SHFL_BFLY = 2, KBD_SHFL_IDX = 3 };
#define KBD_SHFL_FULL 0xffffffffu
#define KBD_SHFL_C_UP 0x0 /* segmask 0, clamp lane 0: whole warp */
#define KBD_SHFL_C 0x1f   /* segmask 0, clamp lane 31: whole warp */

#endif /* KBD_HWDEFS_H */
