/* tests/mma/mma_ring_reject.c - the arch rules of the GEMM main loops' MMA calls (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_ring_reject_* tests. Cases 0 (KBD_CPU_ARCH=90: kbd_mma_ring,
 * kbd_mma_lanes, kbd_mma_release_lanes, kbd_mbarrier_addr_uniform) and 3 (KBD_CPU_ARCH=100, the default:
 * kbd_mma_issue_commit_by_desc and its _elected form) are the positive controls and must compile cleanly with -Werror;
 * case 1 calls kbd_mma_ring emulating sm_100a, case 2 kbd_mma_issue_commit_by_desc emulating sm_90a, case 4
 * kbd_mma_release_lanes emulating sm_100a, case 5 kbd_mma_issue_commit_by_desc_elected emulating sm_90a, and each must
 * stop the compiler with its rule.
 */
#include <kbd/tile.h>

typedef struct rr_params {
  int k;
} rr_params;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) rr_t;

KBD_KERNEL(rr_kernel, 128, rr_params) {
  KBD_SHARED_STILE(rr_t, a);
  KBD_SHARED_STILE(rr_t, b);
  KBD_SHARED(kbd_mbarrier, bar, 2);
  KBD_SHARED(kbd_tmem, tm, 1);
  const uint32_t bar0 = kbd_mbarrier_addr_uniform(bar);
  const uint64_t ad = kbd_mma_desc_of(a), bd = kbd_mma_desc_of(b);
  KBD_ACC(f32, 64, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
#if KBD_REJECT_CASE == 0
  kbd_mma_ring(acc, rr_t, rr_t, ad, 8192, bd, 8192, p.k, p.k > 0);
  kbd_mma_release_lanes(acc, bar0 + 8u, kbd_mma_lanes(1u));
  kbd_mma_wait(acc);
#elif KBD_REJECT_CASE == 1
  kbd_mma_ring(acc, rr_t, rr_t, ad, 8192, bd, 8192, p.k, p.k > 0);
#elif KBD_REJECT_CASE == 2 || KBD_REJECT_CASE == 3
  kbd_mma_issue_commit_by_desc(acc, rr_t, rr_t, kbd_mma_desc_advance(ad, p.k * 8192), bd, p.k > 0, bar0, 0u);
#if KBD_REJECT_CASE == 3
  KBD_ELECT_ONE { kbd_mma_issue_commit_by_desc_elected(acc, rr_t, rr_t, ad, bd, 1, bar0, 0u); }
#endif
#elif KBD_REJECT_CASE == 5
  KBD_ELECT_ONE { kbd_mma_issue_commit_by_desc_elected(acc, rr_t, rr_t, ad, bd, p.k > 0, bar0, 0u); }
#elif KBD_REJECT_CASE == 4
  kbd_mma_release_lanes(acc, bar0 + 8u, kbd_mma_lanes(1u));
#endif
  (void)ad, (void)bd, (void)bar0;
}
