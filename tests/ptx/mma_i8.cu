/* PTX probe for kbd_mma with 8-bit integer operands (kbd/mma.h) on both archs (tests/ptx/mma_i8.check): s8 x u8 ->
 * i32, M = 64, N = 64, K = 64 (two K-steps; sm_90a: wgmma .s32.s8.u8 into the WGMMA_ACC registers; sm_100a:
 * tcgen05.mma kind::i8 with the idesc's D format s32). The accumulator is read back 16 columns at a time in a
 * rolled loop (a run-time column), requantized to s8 (saturating) and stored. No spills, no local memory, no
 * wgmma serialization advisory. */
#include <kbd/tile.h>

typedef struct {
  kbd_s8 *out;
} ptx_i8_params;

typedef KBD_STILE(s8, 64, 64, KBD_SWIZZLE_64B) i8_a;
typedef KBD_STILE(u8, 64, 64, KBD_SWIZZLE_64B) i8_b;

KBD_KERNEL(ptx_mma_i8, 128, ptx_i8_params) {
  KBD_SHARED_STILE(i8_a, a);
  KBD_SHARED_STILE(i8_b, b);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(bar, 1); }
    kbd_tmem_alloc(tm, 64);
  }
  kbd_sync();
  KBD_ACC(i32, 64, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
  kbd_mma(acc, a, b, 0);
  kbd_mma_wait(acc);
  KBD_NO_UNROLL
  for (int c = 0; c < 64; c += 16) {
    KBD_ACC_TILE(i32, 64, 16) r;
    KBD_ACC_TILE(s8, 64, 16) q;
    kbd_acc_load(r, acc, c);
    kbd_convert(q, r);
    kbd_store2d(p.out, q, 64, 64, 64, 0, c);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 64);
}
