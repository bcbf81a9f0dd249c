/* PTX probe for kbd_mma_rs (kbd/mma_rs.h, twin ptx/mma_rs.h) on sm_90a: wgmma with A from registers
 * (tests/ptx/mma_rs.check). Both kernels are the shape attention gives it: S = Q K^T from shared tiles, S's
 * register view converted to a 16-bit P, and P fed straight back as the A of O += P V, with V as an MN-major
 * B (a row-major kv x d tile):
 *   ptx_rs_bf16_loop   bf16, M = 64, d = 64, kv = 64, in a loop over p.n tiles: the conversion of each
 *                      iteration must stay before its wgmma.fence (kbd_hw_wgmma_a_touch), and the wait for S
 *                      retires the previous P's MMA before P is rewritten
 *   ptx_rs_f16_m128    f16, M = 128 (two m64 blocks), d = 128, kv = 32: 2 K-steps x 2 blocks
 * Each K-step must be ONE register-A wgmma (the variant selector folded by ptxas), with no serialization
 * advisory from ptxas (kbd-ptx-check.sh fails on C7510 ... C7520), no spills, no local memory. */
#include <kbd/tile.h>

typedef struct {
  float *out;
  int n;
} ptx_rs_params;

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) rs_q64;
typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) rs_v64;

KBD_KERNEL(ptx_rs_bf16_loop, 128, ptx_rs_params) {
  KBD_SHARED_STILE(rs_q64, q);
  KBD_SHARED_STILE(rs_q64, k);
  KBD_SHARED_STILE(rs_v64, v);
  kbd_sync();
  KBD_ACC(f32, 64, 64) s;
  KBD_ACC(f32, 64, 64) o;
  kbd_acc_bind(s, (kbd_tmem *)0, 0, (uint64_t *)0);
  kbd_acc_bind(o, (kbd_tmem *)0, 0, (uint64_t *)0);
  for (int it = 0; it < p.n; ++it) {
    kbd_mma(s, q, k, 0);
    kbd_mma_wait(s); /* wait_group 0: also retires the previous iteration's O += P V */
    KBD_ACC_TILE(f32, 64, 64) sv;
    kbd_acc_load(sv, s, 0);
    KBD_ACC_TILE(bf16, 64, 64) pt;
    kbd_convert(pt, sv);
    kbd_mma_rs(o, pt, v, it > 0);
  }
  kbd_mma_wait(o);
  KBD_ACC_TILE(f32, 64, 64) ov;
  kbd_acc_load(ov, o, 0);
  kbd_store2d(p.out, ov, 64, 64, 64, 0, 0);
}

typedef KBD_STILE(f16, 128, 128, KBD_SWIZZLE_128B) rs_q128;
typedef KBD_STILE(f16, 32, 128, KBD_SWIZZLE_128B) rs_k32;
typedef KBD_STILE_MN(f16, 128, 32, KBD_SWIZZLE_64B) rs_v32;

KBD_KERNEL(ptx_rs_f16_m128, 128, ptx_rs_params) {
  KBD_SHARED_STILE(rs_q128, q);
  KBD_SHARED_STILE(rs_k32, k);
  KBD_SHARED_STILE(rs_v32, v);
  kbd_sync();
  KBD_ACC(f32, 128, 32) s;
  KBD_ACC(f32, 128, 128) o;
  kbd_acc_bind(s, (kbd_tmem *)0, 0, (uint64_t *)0);
  kbd_acc_bind(o, (kbd_tmem *)0, 0, (uint64_t *)0);
  kbd_mma(s, q, k, 0);
  kbd_mma_wait(s);
  KBD_ACC_TILE(f32, 128, 32) sv;
  kbd_acc_load(sv, s, 0);
  KBD_ACC_TILE(f16, 128, 32) pt;
  kbd_convert(pt, sv);
  kbd_mma_rs(o, pt, v, 0);
  kbd_mma_wait(o);
  KBD_ACC_TILE(f32, 128, 128) ov;
  kbd_acc_load(ov, o, 0);
  kbd_store2d(p.out, ov, 128, 128, 128, 0, 0);
}
