/* PTX probe for kbd_mma into an f16 accumulator (KBD_ACC(f16, ...), kbd/mma.h) on both archs
 * (tests/ptx/mma_f16acc.check): f16 x f16 -> f16, M = 64 (sm_90a: wgmma with an .f16 D, the 64 x 64 accumulator
 * packed two per register; sm_100a: kind::f16 with the idesc's D format f16, one value per Tensor Memory cell), the
 * accumulator read back 16 columns at a time in a rolled loop (a run-time column) and stored as f16. No spills,
 * no local memory, no wgmma serialization advisory. */
#include <kbd/tile.h>

typedef struct {
  kbd_f16 *out;
} ptx_f16acc_params;

typedef KBD_STILE(f16, 64, 64, KBD_SWIZZLE_128B) f16acc_a;

KBD_KERNEL(ptx_f16acc, 128, ptx_f16acc_params) {
  KBD_SHARED_STILE(f16acc_a, a);
  KBD_SHARED_STILE(f16acc_a, b);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(bar, 1); }
    kbd_tmem_alloc(tm, 64);
  }
  kbd_sync();
  KBD_ACC(f16, 64, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
  kbd_mma(acc, a, b, 0);
  kbd_mma_wait(acc);
  KBD_NO_UNROLL
  for (int c = 0; c < 64; c += 16) {
    KBD_ACC_TILE(f16, 64, 16) r;
    kbd_acc_load(r, acc, c);
    kbd_store2d(p.out, r, 64, 64, 64, 0, c);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 64);
}
