/* tests/mma/mma_api_reject.c - compile-time rules of kbd/mma.h and kbd/regs.h (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> (and KBD_CPU_ARCH=100 unless the case sets it) by the mma_api_reject_*
 * tests. Case n breaks one rule in a kernel and must stop the compiler with that rule's message; case 0 (the
 * positive control) uses every call legally and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct rj_params {
  int k;
} rj_params;
typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) rj_a;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) rj_b;
typedef KBD_STILE(f16, 64, 64, KBD_SWIZZLE_128B) rj_b16;
typedef KBD_STILE(s8, 128, 64, KBD_SWIZZLE_64B) rj_s8a;
typedef KBD_STILE(u8, 64, 64, KBD_SWIZZLE_64B) rj_u8b;
typedef KBD_STILE(e4m3, 64, 64, KBD_SWIZZLE_64B) rj_e4b;
typedef KBD_STILE(s8, 40, 64, KBD_SWIZZLE_64B) rj_s8n40;

KBD_KERNEL(rj_kernel, 128, rj_params) {
  KBD_SHARED_STILE(rj_a, a);
  KBD_SHARED_STILE(rj_b, b);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) kbd_tmem_alloc(tm, 64);
  kbd_sync();
  KBD_ACC(f32, 128, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
#if KBD_REJECT_CASE == 0
  kbd_setmaxnreg_inc(232);
  kbd_mma(acc, a, b, p.k > 0);
  kbd_mma_wait(acc);
  KBD_ACC_TILE(f32, 128, 32) r;
  kbd_acc_load(r, acc, 32);
  kbd_acc_store(acc, r, 0);
#if KBD_MMA_ARCH != 90
  kbd_acc_store_async(acc, r, 32);
  kbd_acc_release(acc, bar);
#endif
  KBD_SHARED_STILE(rj_s8a, sa);
  KBD_SHARED_STILE(rj_u8b, ub);
  KBD_ACC(i32, 128, 64) iacc;
  kbd_acc_bind(iacc, tm, 0, bar);
  kbd_mma(iacc, sa, ub, 0);
  kbd_mma_wait(iacc);
  KBD_ACC_TILE(i32, 128, 32) ir;
  kbd_acc_load(ir, iacc, 0);
  kbd_acc_store(iacc, ir, 32);
#elif KBD_REJECT_CASE == 1 /* b has 64 rows but is given as the A operand of a 128-row accumulator */
  kbd_mma(acc, b, b, 0);
#elif KBD_REJECT_CASE == 2 /* bf16 x f16 */
  KBD_SHARED_STILE(rj_b16, c);
  kbd_mma(acc, a, c, 0);
#elif KBD_REJECT_CASE == 3 /* an M the tcgen05 accumulator cannot have */
  KBD_ACC(f32, 192, 64) tall;
  (void)tall;
#elif KBD_REJECT_CASE == 4 /* not a power of two */
  if (kbd_warp_id() == 0) kbd_tmem_alloc(tm, 96);
#elif KBD_REJECT_CASE == 5 /* the view must have the accumulator's rows */
  KBD_ACC_TILE(f32, 64, 32) r;
  kbd_acc_load(r, acc, 0);
#elif KBD_REJECT_CASE == 6
  kbd_setmaxnreg_dec(20);
#elif KBD_REJECT_CASE == 7 /* f32, f16 or i32 accumulators only */
  KBD_ACC(bf16, 128, 64) h;
  (void)h;
#elif KBD_REJECT_CASE == 9 /* bf16 operands accumulate in f32 only */
  KBD_ACC(f16, 128, 64) h;
  kbd_acc_bind(h, tm, 0, bar);
  kbd_mma(h, a, b, 0);
#elif KBD_REJECT_CASE == 10 /* 8-bit integers accumulate in i32 only */
  KBD_SHARED_STILE(rj_s8a, sa);
  KBD_SHARED_STILE(rj_u8b, ub);
  kbd_mma(acc, sa, ub, 0);
#elif KBD_REJECT_CASE == 11 /* and only they do */
  KBD_ACC(i32, 128, 64) h;
  kbd_acc_bind(h, tm, 0, bar);
  kbd_mma(h, a, b, 0);
#elif KBD_REJECT_CASE == 12 /* s8 x e4m3: the two 8-bit families do not mix */
  KBD_SHARED_STILE(rj_s8a, sa);
  KBD_SHARED_STILE(rj_e4b, eb);
  KBD_ACC(i32, 128, 64) h;
  kbd_acc_bind(h, tm, 0, bar);
  kbd_mma(h, sa, eb, 0);
#elif KBD_REJECT_CASE == 13 /* N = 40 exists for fp8 but not for 8-bit integers */
  KBD_SHARED_STILE(rj_s8a, sa);
  KBD_SHARED_STILE(rj_s8n40, nb);
  KBD_ACC(i32, 128, 40) h;
  kbd_acc_bind(h, tm, 0, bar);
  kbd_mma(h, sa, nb, 0);
#elif KBD_REJECT_CASE == 14 /* an f16 accumulator with s8 operands */
  KBD_SHARED_STILE(rj_s8a, sa);
  KBD_SHARED_STILE(rj_u8b, ub);
  KBD_ACC(f16, 128, 64) h;
  kbd_acc_bind(h, tm, 0, bar);
  kbd_mma(h, sa, ub, 0);
#elif KBD_REJECT_CASE == 15 /* the store left in flight is sm_100a's: an sm_90a accumulator is registers */
  KBD_ACC_TILE(f32, 128, 32) r;
  kbd_acc_store_async(acc, r, 0);
#elif KBD_REJECT_CASE == 8 /* a register tile is not an accumulator */
  KBD_ACC_TILE(f32, 128, 64) r;
  kbd_mma_wait(r);
#endif
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 64);
}
