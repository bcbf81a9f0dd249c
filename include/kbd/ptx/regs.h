/* kbd/ptx/regs.h - setmaxnreg (twin of cpu/regs.h; ptx-reference 6.6). */
#ifndef KBD_PTX_REGS_H
#define KBD_PTX_REGS_H

#include "../config.h"

#if KBD_MODE_CUDA
/* The count is an immediate of the instruction: one case per legal value, folded to one asm statement
 * when n is a constant (kbd_setmaxnreg_* insist on that). */
#define KBD__PTX_SMR(n)                                                                                                \
  case n:                                                                                                              \
    if (inc)                                                                                                           \
      asm volatile("setmaxnreg.inc.sync.aligned.u32 " #n ";\n" ::: "memory");                                          \
    else                                                                                                               \
      asm volatile("setmaxnreg.dec.sync.aligned.u32 " #n ";\n" ::: "memory");                                          \
    break;
KBD_DEV void kbd_hw_setmaxnreg(int n, int inc, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
#if KBD_SM90A || KBD_SM100A
  switch (n) {
    KBD__PTX_SMR(24)
    KBD__PTX_SMR(32) KBD__PTX_SMR(40) KBD__PTX_SMR(48) KBD__PTX_SMR(56) KBD__PTX_SMR(64) KBD__PTX_SMR(72)
        KBD__PTX_SMR(80) KBD__PTX_SMR(88) KBD__PTX_SMR(96) KBD__PTX_SMR(104) KBD__PTX_SMR(112) KBD__PTX_SMR(120)
            KBD__PTX_SMR(128) KBD__PTX_SMR(136) KBD__PTX_SMR(144) KBD__PTX_SMR(152) KBD__PTX_SMR(160) KBD__PTX_SMR(168)
                KBD__PTX_SMR(176) KBD__PTX_SMR(184) KBD__PTX_SMR(192) KBD__PTX_SMR(200) KBD__PTX_SMR(208)
                    KBD__PTX_SMR(216) KBD__PTX_SMR(224) KBD__PTX_SMR(232) KBD__PTX_SMR(240) KBD__PTX_SMR(248)
                        KBD__PTX_SMR(256) default : break;
  }
#else
  (void)n, (void)inc;
#endif
}
#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_REGS_H */
