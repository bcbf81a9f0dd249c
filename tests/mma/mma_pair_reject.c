/* tests/mma/mma_pair_reject.c - compile-time rules of kbd/mma_pair.h (CTA-pair MMAs; never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_pair_reject_* tests (KBD_CPU_ARCH 100, or 90 for the sm_90a
 * cases), also by nvcc for sm_100a (case 0) and sm_90a (case 1). Case n breaks one rule and must stop the
 * compiler with that rule's message; case 0 (the positive control) uses every call legally (bf16 with N 256,
 * s8 x u8 into i32 with N 64, and M = 128 across the pair: 64 rows of A, the folded KBD_ACC(f32, 128, N/2)) and
 * must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct pj_params {
  kbd_tensor_map m;
  float *d;
  int k;
} pj_params;
typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) pj_a;
typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) pj_b; /* N/2 = 128 rows: N = 256 */
typedef KBD_STILE(s8, 128, 64, KBD_SWIZZLE_64B) pj_a8;
typedef KBD_STILE(u8, 32, 64, KBD_SWIZZLE_64B) pj_b8;
typedef KBD_STILE(u8, 24, 64, KBD_SWIZZLE_64B) pj_b8n48;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) pj_a64;

KBD_KERNEL(pj_kernel, 128, pj_params) {
  KBD_SHARED_STILE(pj_a, a);
  KBD_SHARED_STILE(pj_b, b);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_ACC(f32, 128, 256) acc;
  kbd_acc_bind(acc, tm, 0, bar);
#if KBD_REJECT_CASE == 0
  KBD_SHARED_STILE(pj_a8, a8);
  KBD_SHARED_STILE(pj_b8, b8);
  KBD_ACC(i32, 128, 64) acc8;
  kbd_acc_bind(acc8, tm, 256, bar);
  KBD_SHARED_STILE(pj_a64, a64);
  KBD_ACC(f32, 128, 128) fold; /* M = 128, N = 256: this CTA's 64 x 256 in 128 lanes x 128 columns */
  kbd_acc_bind(fold, tm, 384, bar);
  kbd_tmem_alloc_pair(tm, 512);
  KBD_ELECT_ONE { kbd_tma_load_pair2d(a, &p.m, bar, 0, 0); }
  if (kbd_cta_pair_leader()) {
    kbd_mma_pair_issue(acc, a, b, p.k);
    kbd_mma_pair_issue(acc8, a8, b8, 0);
    kbd_mma_pair_issue(fold, a64, b, 0);
    kbd_mma_pair_commit(acc, bar);
  }
  kbd_acc_release_pair(acc, bar);
  {
    KBD_ACC_TILE(f32, 128, 32) r;
    kbd_acc_load(r, fold, 0);
    kbd_store2d_folded(p.d, r, 128, 64, 256, 256, 0, 0);
  }
  kbd_tmem_free_pair(tm, 512);
#elif KBD_REJECT_CASE == 1  /* sm_90a: no CTA pairs */
  kbd_mma_pair_issue(acc, a, b, 0);
#elif KBD_REJECT_CASE == 2  /* sm_90a: the collective alloc names itself too */
  kbd_tmem_alloc_pair(tm, 256);
#elif KBD_REJECT_CASE == 3  /* b holds all N rows, not this CTA's N/2 */
  KBD_ACC(f32, 128, 128) acc128;
  kbd_acc_bind(acc128, tm, 0, bar);
  kbd_mma_pair_issue(acc128, a, b, 0);
#elif KBD_REJECT_CASE == 4  /* a of 64 rows (M = 128) with the M = 256 accumulator of N = 256 columns */
  KBD_SHARED_STILE(pj_a64, a64);
  kbd_mma_pair_issue(acc, a64, b, 0);
#elif KBD_REJECT_CASE == 5  /* 8-bit integers: N in steps of 32 */
  KBD_SHARED_STILE(pj_a8, a8);
  KBD_SHARED_STILE(pj_b8n48, b8);
  KBD_ACC(i32, 128, 48) acc8;
  kbd_acc_bind(acc8, tm, 256, bar);
  kbd_mma_pair_issue(acc8, a8, b8, 0);
#elif KBD_REJECT_CASE == 6  /* a column count that tcgen05.alloc refuses */
  kbd_tmem_alloc_pair(tm, 96);
#elif KBD_REJECT_CASE == 7  /* M = 128: the folded accumulator has N/2 columns, as many as b has rows (128 here) */
  KBD_SHARED_STILE(pj_a64, a64);
  KBD_ACC(f32, 128, 64) fold;
  kbd_acc_bind(fold, tm, 0, bar);
  kbd_mma_pair_issue(fold, a64, b, 0);
#elif KBD_REJECT_CASE == 8  /* kbd_store2d_folded takes a 128-row TMEM_ACC view of a folded accumulator */
  KBD_TILE(f32, 128, 32, KBD_WARPGROUP) r;
  kbd_zero(r);
  kbd_store2d_folded(p.d, r, 128, 64, 256, 256, 0, 0);
#elif KBD_REJECT_CASE == 9  /* the old spelling (hardware order, x first): renamed with the rank, issue 31 item 8 */
  KBD_ELECT_ONE { kbd_tma_load_pair(a, &p.m, bar, 0, p.k); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 10 /* the accumulator's barrier parity was called .phase */
  if (acc.phase ^ 1u) kbd_sync(); /* kbd-coords: keep */
#endif
}
