/* kbd/ptx/vote.h - warp votes (GPU twin of cpu/vote.h). pred: the thread's own predicate. */
#ifndef KBD_PTX_VOTE_H
#define KBD_PTX_VOTE_H

#include "../config.h"

#if KBD_MODE_CUDA

/* vote.sync.all.pred d, a, 0xffffffff;     PTX ISA 6.0, sm_30 - 1 if every lane's predicate is true */
KBD_DEV int kbd_hw_vote_all(const int *pred, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  unsigned d;
  asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.all.pred q, p, 0xffffffff;\n\t"
               "selp.u32 %0, 1, 0, q;\n\t}"
               : "=r"(d)
               : "r"(pred[0]));
  return (int)d;
}

/* vote.sync.ballot.b32 d, a, 0xffffffff;     PTX ISA 6.0, sm_30 - bit l set if lane l's predicate is true */
KBD_DEV uint32_t kbd_hw_ballot(const int *pred, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  uint32_t d;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.ballot.b32 %0, p, 0xffffffff;\n\t}"
               : "=r"(d)
               : "r"(pred[0]));
  return d;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_VOTE_H */
