/* gemm_producer.h - the TMA loads of one ring stage, shared by both kernel texts (gemm_kernel.h for sm_90a,
 * gemm_kernel_sm100.h for sm_100a). Each text includes it once per kernel, so the function takes its name from
 * GEMM_KERNEL and its operand types from GEMM_A_TILE / GEMM_B_TILE / GEMM_BH_TILE (gemm.cu defines them).
 *
 * The elected producer thread announces the stage's bytes on this CTA's `full` barrier (every byte lands here,
 * whoever issues the load) and loads its share: alone, the two A tiles and both B halves; in a cluster (gemm.h,
 * gemm_cluster) the CTAs of a cluster row split the A tiles and multicast them along the row, and the CTAs of a
 * cluster column split the B halves and multicast them along the column. A multicast load completes bytes on the
 * barrier at the same offset in every destination CTA, so each peer's `full` barrier counts this CTA's share too.
 */
#define GEMM_LOAD_STAGE KBD_CAT(GEMM_KERNEL, _load_stage)
KBD_DEV void GEMM_LOAD_STAGE(unsigned char *smem, const gemm_smem *l, int s, const gemm_params *p,
                             const gemm_cluster *cl, int m0, int n0, int k0, kbd_mbarrier *full) {
  /* coordinates: innermost (contiguous) dimension first */
  const int a_mn = KBD_STILE_MAJOR(KBD__STILE_OBJ(GEMM_A_TILE)) == KBD_SMEM_MN_MAJOR;
  const int b_mn = KBD_STILE_MAJOR(KBD__STILE_OBJ(GEMM_B_TILE)) == KBD_SMEM_MN_MAJOR;
  GEMM_A_TILE a0 = KBD_SMEM_PLAN_STILE(GEMM_A_TILE, smem, l->a, GEMM_CONSUMERS * s);
  GEMM_B_TILE b = KBD_SMEM_PLAN_STILE(GEMM_B_TILE, smem, l->b, s);
  kbd_mbarrier_arrive_expect_tx(full, GEMM_CONSUMERS * KBD_STILE_BYTES(a0) + KBD_STILE_BYTES(b));
  /* A: tile g holds rows m0 + g * GEMM_WM (consumer / accumulator g) */
  for (int g = cl->rn; g < GEMM_CONSUMERS; g += cl->cn) {
    GEMM_A_TILE a = KBD_SMEM_PLAN_STILE(GEMM_A_TILE, smem, l->a, GEMM_CONSUMERS * s + g);
    const int mg = m0 + g * GEMM_WM;
    if (cl->cn > 1)
      kbd_tma_load_multicast(a, &p->a, full, cl->row, a_mn ? mg : k0, a_mn ? k0 : mg);
    else
      kbd_tma_load(a, &p->a, full, a_mn ? mg : k0, a_mn ? k0 : mg);
  }
  /* B: half h holds columns n0 + h * GEMM_BH, the first or second half of the B tile's bytes */
  for (int h = cl->rm; h < 2; h += cl->cm) {
    GEMM_BH_TILE bh = KBD_STILE_AT(GEMM_BH_TILE, (unsigned char *)b.p + h * KBD_STILE_BYTES(b) / 2);
    const int nh = n0 + h * GEMM_BH;
    if (cl->cm > 1)
      kbd_tma_load_multicast(bh, &p->b, full, cl->col, b_mn ? nh : k0, b_mn ? k0 : nh);
    else
      kbd_tma_load(bh, &p->b, full, b_mn ? nh : k0, b_mn ? k0 : nh);
  }
}
