/* kbd/cpu/vote.h - warp votes on the CPU machine (twin of ptx/vote.h). pred: the 32 lanes' predicates. */
#ifndef KBD_CPU_VOTE_H
#define KBD_CPU_VOTE_H

#include "machine.h"

#if KBD_MODE_CPU

static inline int kbd_hw_vote_all(const int *pred, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "vote.sync.all", KBD_SITE_ARGS);
  for (int l = 0; l < KBD_WARP_SIZE; ++l)
    if (!pred[l]) return 0;
  return 1;
}

static inline uint32_t kbd_hw_ballot(const int *pred, KBD_SITE_PARAMS) {
  kbd_cpu_check_collective(kbd_cpu_self(), "vote.sync.ballot", KBD_SITE_ARGS);
  uint32_t m = 0;
  for (int l = 0; l < KBD_WARP_SIZE; ++l)
    m |= (uint32_t)(pred[l] != 0) << l;
  return m;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_VOTE_H */
