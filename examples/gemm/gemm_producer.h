/* gemm_producer.h - the producer warp of both kernel texts (gemm_kernel.h for sm_90a, gemm_kernel_sm100.h for
 * sm_100a), included once after the variants (gemm_variant.h): the ring walk over this CTA's tiles is the same for
 * every operand variant, only the stage's TMA loads are the variant's (a switch on the uniform p->variant per stage,
 * a few instructions of the one elected thread next to a wait for a free stage). Keeping the walk out of the
 * variants compiles its tile arithmetic and barrier waits once instead of five times. `it` counts stages the same way
 * as the consumers (sm_90a) or the MMA warp (sm_100a).
 */
#if KBD_KERNEL_CODE /* device code: nvcc's host pass skips it (docs/kernels.md) */
#define GEMM__KTILES_CASE(v, name)                                                                                     \
  case v:                                                                                                              \
    ktiles = KBD_CAT(name, _ktiles)(p->k);                                                                             \
    break;
#define GEMM__LOAD_CASE(v, name)                                                                                       \
  case v: KBD_CAT(name, _load_stage)(smem, l, s, p, cl, m0, n0, kt, &full[s]); break;
KBD_DEV void gemm_produce(unsigned char *smem, const gemm_smem *l, const gemm_params *p, const gemm_cluster *cl,
                          kbd_mbarrier *full, kbd_mbarrier *empty, long long first, long long step, long long ctiles) {
  const long long tiles_m = (p->m + GEMM_BM - 1) / GEMM_BM, tiles_n = (p->n + GEMM_BN - 1) / GEMM_BN;
  int ktiles = 0;
  switch (p->variant) { GEMM_VARIANTS(GEMM__KTILES_CASE) }
  kbd_pipe ps = kbd_pipe_start(GEMM_STAGES); /* the ring position, one step per k-tile */
  for (long long t = first; t < ctiles; t += step) {
    long long tm, tn;
    gemm_cluster_tile(t, tiles_m, tiles_n, cl, &tm, &tn);
    const int m0 = (int)(tm * GEMM_BM), n0 = (int)(tn * GEMM_BN);
    for (int kt = 0; kt < ktiles; ++kt, kbd_pipe_advance(&ps)) {
      const int s = ps.stage;
      /* every consumer (MMA warp) of this CTA and its peers released the stage's last fill: its shares go into all
       * of them (a fresh barrier's parity 1 counts as released) */
      kbd_mbarrier_wait(&empty[s], ps.parity ^ 1u);
      KBD_ELECT_ONE {
        switch (p->variant) { GEMM_VARIANTS(GEMM__LOAD_CASE) }
      }
    }
  }
}
#endif
#undef GEMM__KTILES_CASE
#undef GEMM__LOAD_CASE
