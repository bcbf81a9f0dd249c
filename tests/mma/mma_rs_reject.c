/* tests/mma/mma_rs_reject.c - compile-time rules of kbd_mma_rs (kbd/mma_rs.h; never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> and KBD_CPU_ARCH=90 (case 1: 100) by the mma_rs_reject_* tests, also
 * by nvcc for sm_90a (case 0) and sm_100a (case 1). Case n breaks one rule and must stop the compiler with
 * that rule's message; case 0 (the positive control) uses kbd_mma_rs legally, bf16 and f16, B K-major and
 * MN-major, and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct rr_params {
  int k;
} rr_params;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) rr_b;
typedef KBD_STILE_MN(f16, 128, 32, KBD_SWIZZLE_64B) rr_bmn;
typedef KBD_STILE(f16, 64, 64, KBD_SWIZZLE_128B) rr_b16;
typedef KBD_STILE(f32, 64, 32, KBD_SWIZZLE_128B) rr_b32;
typedef KBD_STILE(e4m3, 64, 64, KBD_SWIZZLE_64B) rr_b8;
typedef KBD_STILE(bf16, 64, 32, KBD_SWIZZLE_64B) rr_bk32;

KBD_KERNEL(rr_kernel, 128, rr_params) {
  KBD_SHARED_STILE(rr_b, b);
  KBD_SHARED_STILE(rr_bmn, bmn);
  (void)bmn;
  KBD_ACC(f32, 128, 64) acc;
  kbd_acc_bind(acc, (kbd_tmem *)0, 0, (uint64_t *)0);
  KBD_ACC_TILE(bf16, 128, 64) a;
  kbd_fill(a, 1.0f);
#if KBD_REJECT_CASE == 0
  kbd_mma_rs(acc, a, b, p.k > 0);
  KBD_ACC(f32, 64, 128) acc2;
  kbd_acc_bind(acc2, (kbd_tmem *)0, 0, (uint64_t *)0);
  KBD_ACC_TILE(f16, 64, 32) a16;
  kbd_fill(a16, 2.0f);
  kbd_mma_rs(acc2, a16, bmn, 0);
  kbd_mma_wait(acc2);
#elif KBD_REJECT_CASE == 1 /* sm_100a: no register A */
  kbd_mma_rs(acc, a, b, 0);
#elif KBD_REJECT_CASE == 2 /* a ROW-layout register tile is not the A fragment */
  KBD_TILE(bf16, 128, 64, KBD_WARPGROUP) r;
  kbd_fill(r, 1.0f);
  kbd_mma_rs(acc, r, b, 0);
#elif KBD_REJECT_CASE == 3 /* tf32 A from registers: another fragment layout */
  KBD_SHARED_STILE(rr_b32, b32);
  KBD_ACC_TILE(f32, 128, 32) t;
  kbd_fill(t, 1.0f);
  kbd_mma_rs(acc, t, b32, 0);
#elif KBD_REJECT_CASE == 4 /* 8-bit A from registers: another fragment layout */
  KBD_SHARED_STILE(rr_b8, b8);
  KBD_ACC_TILE(e4m3, 128, 64) e;
  kbd_mma_rs(acc, e, b8, 0);
#elif KBD_REJECT_CASE == 5 /* B of another type */
  KBD_SHARED_STILE(rr_b16, c);
  kbd_mma_rs(acc, a, c, 0);
#elif KBD_REJECT_CASE == 6 /* M of a differs from the accumulator's */
  KBD_ACC_TILE(bf16, 64, 64) a64;
  kbd_fill(a64, 1.0f);
  kbd_mma_rs(acc, a64, b, 0);
#elif KBD_REJECT_CASE == 7 /* K of a differs from b's */
  KBD_SHARED_STILE(rr_bk32, bk);
  kbd_mma_rs(acc, a, bk, 0);
#elif KBD_REJECT_CASE == 8 /* K not a multiple of 16 */
  KBD_ACC_TILE(bf16, 128, 24) a24;
  kbd_fill(a24, 1.0f);
  kbd_mma_rs(acc, a24, b, 0);
#elif KBD_REJECT_CASE == 9 /* B in registers */
  KBD_TILE(bf16, 64, 64, KBD_WARPGROUP) rb;
  kbd_fill(rb, 1.0f);
  kbd_mma_rs(acc, a, rb, 0);
#elif KBD_REJECT_CASE == 10 /* a register A given to kbd_mma */
  kbd_mma(acc, a, b, 0);
#endif
  kbd_mma_wait(acc);
}
