/* mma_rs_case.h - one kbd_mma_rs test kernel; test_mma_rs.c includes it once per case after defining
 *   RC_NAME (kernel), RC_DT (bf16 / f16), RC_T (its C type), RC_B (the N x K shared tile type of B), RC_M, RC_N,
 *   RC_K.
 * One warpgroup: B goes global -> registers -> shared tile (generic stores, fenced), A global -> a
 * KBD_ACC_TILE(RC_DT, M, K) register tile; with p.accumulate the accumulator first receives C (kbd_acc_store),
 * then kbd_mma_rs(acc, a, b, p.accumulate), kbd_mma_wait, kbd_acc_load and a store of the whole M x N result. */
KBD_KERNEL(RC_NAME, 128, rc_params) {
  KBD_SHARED_STILE(RC_B, b);
  {
    KBD_TILE(RC_DT, RC_N, RC_K, KBD_WARPGROUP) rb;
    kbd_load2d(rb, (const RC_T *)p.b, RC_N, RC_K, RC_K, 0, 0);
    kbd_stile_store(b, rb);
  }
  kbd_fence_proxy_async();
  kbd_sync();
  KBD_ACC_TILE(RC_DT, RC_M, RC_K) a;
  kbd_load2d(a, (const RC_T *)p.a, RC_M, RC_K, RC_K, 0, 0);
  KBD_ACC(f32, RC_M, RC_N) acc;
  kbd_acc_bind(acc, (kbd_tmem *)0, 0, (uint64_t *)0);
  if (p.accumulate) {
    KBD_ACC_TILE(f32, RC_M, RC_N) c;
    kbd_load2d(c, p.c, RC_M, RC_N, RC_N, 0, 0);
    kbd_acc_store(acc, c, 0);
  }
  kbd_mma_rs(acc, a, b, p.accumulate);
  kbd_mma_wait(acc);
  KBD_ACC_TILE(f32, RC_M, RC_N) r;
  kbd_acc_load(r, acc, 0);
  kbd_store2d(p.d, r, RC_M, RC_N, RC_N, 0, 0);
}
