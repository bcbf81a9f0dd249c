/* tests/mma/mma_rs_ring_reject.c - compile-time rules of kbd_mma_rs_ring (kbd/mma_rs.h; never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_rs_ring_reject_* tests: case 0 (KBD_CPU_ARCH=90) is the positive
 * control and must compile cleanly with -Werror; case 1 (KBD_CPU_ARCH=100) calls it emulating sm_100a, case 2 names B
 * by a tile type of another element type, case 3 by a tile type whose K differs from A's, and each must stop the
 * compiler with kbd_mma_rs's rule for it (the same static checks on the ring's tile type TB).
 */
#include <kbd/tile.h>

typedef struct rr_params {
  int k;
} rr_params;
typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) rr_v;
typedef KBD_STILE_MN(f16, 64, 64, KBD_SWIZZLE_128B) rr_v16;
typedef KBD_STILE_MN(bf16, 64, 128, KBD_SWIZZLE_128B) rr_vk128;

KBD_KERNEL(rr_kernel, 128, rr_params) {
  KBD_SHARED_STILE(rr_v, v);
  const uint64_t vd = kbd_mma_desc_of(v);
  KBD_ACC(f32, 64, 64) acc;
  kbd_acc_bind(acc, (kbd_tmem *)0, 0, (uint64_t *)0);
  KBD_ACC_TILE(bf16, 64, 64) a;
  kbd_fill(a, 1.0f);
#if KBD_REJECT_CASE == 0 || KBD_REJECT_CASE == 1
  kbd_mma_rs_ring(acc, a, rr_v, vd, 8192, p.k, p.k > 0);
#elif KBD_REJECT_CASE == 2
  kbd_mma_rs_ring(acc, a, rr_v16, vd, 8192, p.k, 0);
#elif KBD_REJECT_CASE == 3
  kbd_mma_rs_ring(acc, a, rr_vk128, vd, 16384, p.k, 0);
#endif
  kbd_mma_wait(acc);
  (void)vd;
}
