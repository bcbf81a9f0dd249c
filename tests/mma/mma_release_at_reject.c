/* tests/mma/mma_release_at_reject.c - the arch rules of the 32-bit shared-address MMA calls (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_release_at_reject_* tests. Cases 0 (KBD_CPU_ARCH=90:
 * kbd_mma_release_at, kbd_mma_wait_at, the mbarrier _at forms) and 3 (KBD_CPU_ARCH=100, the default:
 * kbd_mma_issue_commit_at) are the positive controls and must compile cleanly with -Werror; case 1 calls
 * kbd_mma_release_at emulating sm_100a, case 2 kbd_mma_issue_commit_at emulating sm_90a, and each must stop the
 * compiler with its rule.
 */
#include <kbd/tile.h>

typedef struct rl_params {
  int k;
} rl_params;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) rl_t;

KBD_KERNEL(rl_kernel, 128, rl_params) {
  KBD_SHARED_STILE(rl_t, a);
  KBD_SHARED_STILE(rl_t, b);
  KBD_SHARED(kbd_mbarrier, bar, 2);
  KBD_SHARED(kbd_tmem, tm, 1);
  const uint32_t bar0 = kbd_mbarrier_addr(bar);
  KBD_ACC(f32, 64, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
#if KBD_REJECT_CASE == 0
  kbd_mbarrier_wait_at(bar0, 0u);
  kbd_mma(acc, a, b, p.k > 0);
  kbd_mma_release_at(acc, bar0 + 8u, 0u);
  kbd_mma_wait_at(acc, bar0 + 8u, 3u);
  KBD_ELECT_ONE { kbd_mbarrier_arrive_at(bar0); }
#elif KBD_REJECT_CASE == 1
  kbd_mma(acc, a, b, p.k > 0);
  kbd_mma_release_at(acc, bar0 + 8u, 0u);
#elif KBD_REJECT_CASE == 2 || KBD_REJECT_CASE == 3
  kbd_mma_issue_commit_at(acc, a, b, p.k > 0, bar0, 0u);
  kbd_mma_issue_commit_at(acc, a, b, 1, bar0 + 8u, 3u);
#endif
}
