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
  case v: KBD_CAT(name, _load_stage)(smem, l, s, p, cl, m0, n0, kt, &full[s], ga); break;
/* The pingpong consumers (sm_90a, p->pingpong) take a tile's halves in turn, consumer 0 the top 128 rows, then
 * consumer 1 the bottom ones: the producer loads the k-tiles of the top half (A tile 0 and B per stage) and then those
 * of the bottom half (A tile 1 and B again) into a ring of GEMM_PP_STAGES. The ring is in order, so the stages
 * arrive in the order the consumers' turns take them. `pp` is a constant at each call (gemm_kernel.h calls it once
 * per schedule, the sm_100a text with 0): the producer runs on 40 registers, and a run-time schedule's ring size and
 * half counter spilled there. */
KBD_DEV void gemm_produce(unsigned char *smem, const gemm_smem *l, const gemm_params *p, const gemm_cluster *cl,
                          kbd_mbarrier *full, kbd_mbarrier *empty, long long first, long long step, long long ctiles,
                          const int pp) {
  /* the ring's offsets again for the constant pp: the caller's come from a run-time choice, and on 40 registers the
   * B ring's offset in a register of its own cost the division routine of gemm_cluster_tile a stack frame */
  gemm_smem lc;
  (void)gemm_layout_of(&lc, p->variant == GEMM_E4M3_RC, pp);
  l = &lc;
  const long long tiles_m = (p->m + GEMM_BM - 1) / GEMM_BM, tiles_n = (p->n + GEMM_BN - 1) / GEMM_BN;
  int ktiles = 0;
  switch (p->variant) { GEMM_VARIANTS(GEMM__KTILES_CASE) }
  kbd_pipe ps = kbd_pipe_start(pp ? GEMM_PP_STAGES : GEMM_STAGES); /* the ring position, one step per k-tile */
  for (long long t = first; t < ctiles; t += step) {
    long long tm, tn;
    gemm_cluster_tile(t, tiles_m, tiles_n, cl, &tm, &tn);
    const int m0 = (int)(tm * GEMM_BM), n0 = (int)(tn * GEMM_BN);
    KBD_NO_UNROLL
    for (int h = 0; h < (pp ? GEMM_CONSUMERS : 1); ++h) {
      const int ga = pp ? h : -1; /* the consumer whose A tile the stages hold, -1: both */
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
}
#endif
#undef GEMM__KTILES_CASE
#undef GEMM__LOAD_CASE
