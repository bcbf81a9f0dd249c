/* mma_case.h - one kbd_mma test kernel; test_mma_api.c includes it once per case after defining
 *   MC_NAME (kernel), MC_DTA / MC_DTB (operand dtype tokens), MC_TA / MC_TB (their C types), MC_A / MC_B (shared tile types, M x K and N x K),
 *   MC_M, MC_N, MC_K, and MC_DTD (the accumulator type; f32 unless the case defines it: f16 cases store their
 *   results converted to f32).
 * One warpgroup: the operands go global -> registers -> shared tiles with generic stores (so the kernel must
 * fence them for the MMA's async-proxy reads), then kbd_mma (twice when p.twice: the second accumulates),
 * kbd_mma_wait, kbd_acc_load and a masked global store of the whole accumulator (p.chunks: 8 columns at a time
 * in a rolled loop, each col0 shifted by p.bad_col). */
#ifndef MC_DTD
#define MC_DTD f32
#define MC_DTD_DEFAULT 1
#endif
/* one more expansion level, so that MC_DTD becomes its token before KBD_ACC pastes it */
#define MC__ACC(dt, m, n) KBD_ACC(dt, m, n)
#define MC__ACC_TILE(dt, m, c) KBD_ACC_TILE(dt, m, c)
KBD_KERNEL(MC_NAME, 128, mc_params) {
  KBD_SHARED_STILE(MC_A, a);
  KBD_SHARED_STILE(MC_B, b);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_TILE(MC_DTA, MC_M, MC_K, KBD_WARPGROUP) ra;
  KBD_TILE(MC_DTB, MC_N, MC_K, KBD_WARPGROUP) rb;
  kbd_load2d(ra, (const MC_TA *)p.a, MC_M, MC_K, MC_K, 0, 0);
  kbd_load2d(rb, (const MC_TB *)p.b, MC_N, MC_K, MC_K, 0, 0);
  kbd_stile_store(a, ra);
  kbd_stile_store(b, rb);
  if (!p.skip_fence) kbd_fence_proxy_async();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(bar, 1); }
    kbd_tmem_alloc(tm, 256);
  }
  kbd_sync();
  MC__ACC(MC_DTD, MC_M, MC_N) acc;
  kbd_acc_bind(acc, tm, 0, bar);
  kbd_mma(acc, a, b, 0);
  if (p.twice) kbd_mma(acc, a, b, 1);
  kbd_mma_wait(acc);
  if (p.chunks) {
    /* a rolled loop over 8-column chunks: col0 is a run-time value (sm_90a: one branch per possible chunk) */
    KBD_NO_UNROLL
    for (int c = 0; c < MC_N; c += 8) {
      MC__ACC_TILE(MC_DTD, MC_M, 8) rc;
      KBD_ACC_TILE(f32, MC_M, 8) rf;
      kbd_acc_load(rc, acc, c + p.bad_col);
      kbd_convert(rf, rc);
      kbd_store2d(p.d, rf, MC_M, MC_N, MC_N, 0, c);
    }
  } else {
    MC__ACC_TILE(MC_DTD, MC_M, MC_N) r;
    KBD_ACC_TILE(f32, MC_M, MC_N) rf;
    kbd_acc_load(r, acc, 0);
    kbd_convert(rf, r);
    kbd_store2d(p.d, rf, MC_M, MC_N, MC_N, 0, 0);
  }
  kbd_sync();
  if (kbd_warp_id() == 0 && !p.leak) kbd_tmem_free(tm, 256);
}
#undef MC__ACC
#undef MC__ACC_TILE
#ifdef MC_DTD_DEFAULT
#undef MC_DTD
#undef MC_DTD_DEFAULT
#endif
