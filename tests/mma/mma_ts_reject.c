/* tests/mma/mma_ts_reject.c - compile-time rules of kbd/mma_ts.h (A from Tensor Memory; never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_ts_reject_* tests (KBD_CPU_ARCH 100, or 90 for the sm_90a
 * cases), also by nvcc for sm_100a (case 0) and sm_90a (case 1). Case n breaks one rule and must stop the
 * compiler with that rule's message, naming the call; case 0 (the positive control) uses every call legally
 * (bf16 and f16, B K-major and MN-major, M = 128 and 64) and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct tr_params {
  int k;
} tr_params;
typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) tr_b;
typedef KBD_STILE_MN(f16, 64, 128, KBD_SWIZZLE_64B) tr_bmn;
typedef KBD_STILE(f16, 64, 128, KBD_SWIZZLE_128B) tr_b16;

KBD_KERNEL(tr_kernel, 256, tr_params) {
  KBD_SHARED_STILE(tr_b, b);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_SHARED(kbd_mbarrier, bar, 2);
  KBD_ACC(f32, 128, 64) acc;
  kbd_acc_bind(acc, tm, 0, &bar[0]);
#if KBD_REJECT_CASE == 0
  KBD_SHARED_STILE(tr_bmn, bmn);
  KBD_TMEM_A(bf16, 128, 128) a;
  KBD_TMEM_A(f16, 64, 128) a64;
  kbd_tmem_a_bind(a, tm, 64);
  kbd_tmem_a_bind(a64, tm, 128);
  KBD_ACC_TILE(bf16, 128, 64) r;
  kbd_fill(r, 1.0f);
  kbd_tmem_a_store(a, r, 64);
  kbd_tmem_a_ready(a, &bar[1]);
  kbd_mma_ts_issue(acc, a, b, p.k);
  KBD_ACC(f16, 64, 64) acc16;
  kbd_acc_bind(acc16, tm, 256, &bar[0]);
  kbd_mma_ts_issue(acc16, a64, bmn, 0);
  kbd_mma_commit(acc, &bar[0]);
#elif KBD_REJECT_CASE == 1 /* sm_90a: no A in Tensor Memory */
  KBD_TMEM_A(bf16, 128, 128) a;
  kbd_mma_ts_issue(acc, a, b, 0);
#elif KBD_REJECT_CASE == 2 /* sm_90a: the store names itself */
  KBD_TMEM_A(bf16, 128, 128) a;
  KBD_ACC_TILE(bf16, 128, 64) r;
  kbd_fill(r, 1.0f);
  kbd_tmem_a_store(a, r, 0);
#elif KBD_REJECT_CASE == 3 /* f32 A: tf32 from Tensor Memory is not offered */
  KBD_TMEM_A(f32, 128, 128) a;
  (void)a;
#elif KBD_REJECT_CASE == 4 /* B of another type */
  KBD_SHARED_STILE(tr_b16, c);
  KBD_TMEM_A(bf16, 128, 128) a;
  kbd_mma_ts_issue(acc, a, c, 0);
#elif KBD_REJECT_CASE == 5 /* A a shared tile: that is kbd_mma_issue */
  KBD_SHARED_STILE(tr_b, a);
  kbd_mma_ts_issue(acc, a, b, 0);
#elif KBD_REJECT_CASE == 6 /* rows of A differ from the accumulator's */
  KBD_TMEM_A(bf16, 64, 128) a;
  kbd_mma_ts_issue(acc, a, b, 0);
#elif KBD_REJECT_CASE == 7 /* the store's view of another type */
  KBD_TMEM_A(bf16, 128, 128) a;
  KBD_ACC_TILE(f16, 128, 64) r;
  kbd_fill(r, 1.0f);
  kbd_tmem_a_store(a, r, 0);
#elif KBD_REJECT_CASE == 8 /* a 64-row store: not offered yet */
  KBD_TMEM_A(bf16, 64, 128) a;
  KBD_ACC_TILE(bf16, 64, 64) r;
  kbd_fill(r, 1.0f);
  kbd_tmem_a_store(a, r, 0);
#elif KBD_REJECT_CASE == 9 /* K not a multiple of 16 */
  KBD_TMEM_A(bf16, 128, 24) a;
  (void)a;
#elif KBD_REJECT_CASE == 10 /* bf16 A into an f16 accumulator */
  KBD_ACC(f16, 128, 64) acc16;
  KBD_TMEM_A(bf16, 128, 128) a;
  kbd_mma_ts_issue(acc16, a, b, 0);
#endif
}
