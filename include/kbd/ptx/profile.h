/* kbd/ptx/profile.h - the profiler's recording points (GPU twin of cpu/profile.h): nothing on the GPU. The CPU
 * machine rebuilds each warp instruction's 32 lane addresses to count bank conflicts and sectors; on the GPU the
 * hardware counters (Nsight Compute) measure the same, so the moves record nothing and these fold away
 * (forceinline, no body, no side effect left in the caller). docs/profiling.md. */
#ifndef KBD_PTX_PROFILE_H
#define KBD_PTX_PROFILE_H

#include "../config.h"

#if KBD_MODE_CUDA

/* Is the running launch profiled: never on the GPU, so a recording branch is dead code. */
KBD_DEV int kbd_hw_prof_on(void) { return 0; }

/* One warp instruction of a shared / global access (lane l at addr[l], active lanes only). */
KBD_DEV void kbd_hw_prof_smem(const char *what, int op, int bytes, char *const *addr, const unsigned char *active,
                              int lanes, KBD_SITE_PARAMS) {
  (void)what, (void)op, (void)bytes, (void)addr, (void)active, (void)lanes;
  KBD_SITE_UNUSED;
}
KBD_DEV void kbd_hw_prof_global(const char *what, int op, int bytes, char *const *addr, const unsigned char *active,
                                int lanes, KBD_SITE_PARAMS) {
  (void)what, (void)op, (void)bytes, (void)addr, (void)active, (void)lanes;
  KBD_SITE_UNUSED;
}

/* One scalar global access (kbd_ld_global / kbd_st_global). */
KBD_DEV void kbd_hw_prof_scalar_global(const void *p, int bytes, int op, const char *what, KBD_SITE_PARAMS) {
  (void)p, (void)bytes, (void)op, (void)what;
  KBD_SITE_UNUSED;
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_PROFILE_H */
