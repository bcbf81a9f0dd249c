/* pipe_case.h - the host side of the TMA stage-pipeline MMA tests (test_stage_release.c, test_release_at.c,
 * test_early_release_sm90.c, and through pair_case.h test_mma_pair.c and test_mma_pair_desc.c): bf16 operands A (M x K)
 * and B (N x K), small multiples of 1/4, so every product and every partial sum is exact in f32 and D = A B^T is
 * compared bit for bit (exact_host.h, in tests/machine); their tensor maps (128-byte swizzle, one box per stage); D in
 * f32. Include after cmocka.h.
 */
#ifndef KBD_TEST_PIPE_CASE_H
#define KBD_TEST_PIPE_CASE_H

#include "exact_host.h"

typedef struct pc_gemm {
  int M, N, K;
  kbd_bf16 *ha, *hb, *da, *db;
  float *hd, *dd;
} pc_gemm;

/* A and B on the host and the device, D on the device, and the maps: A in boxes of arows x kbox, B of brows x kbox. */
static inline void pc_setup(pc_gemm *g, int M, int N, int K, kbd_tensor_map *ma, uint32_t arows, kbd_tensor_map *mb,
                            uint32_t brows, uint32_t kbox) {
  g->M = M, g->N = N, g->K = K;
  g->ha = malloc(sizeof(kbd_bf16) * (size_t)M * (size_t)K);
  g->hb = malloc(sizeof(kbd_bf16) * (size_t)N * (size_t)K);
  g->hd = malloc(sizeof(float) * (size_t)M * (size_t)N);
  assert_non_null(g->ha), assert_non_null(g->hb), assert_non_null(g->hd);
  xh_fill_bf16(g->ha, M, K, 1);
  xh_fill_bf16(g->hb, N, K, 2);
  g->da = (kbd_bf16 *)xh_upload(g->ha, sizeof(kbd_bf16) * (size_t)M * (size_t)K);
  g->db = (kbd_bf16 *)xh_upload(g->hb, sizeof(kbd_bf16) * (size_t)N * (size_t)K);
  g->dd = (float *)xh_upload(NULL, sizeof(float) * (size_t)M * (size_t)N);
  const kbd_tensor_map_desc ta = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, g->da, (uint64_t)M, (uint64_t)K,
                                                        (uint64_t)K * 2u, arows, kbox, KBD_TMAP_SWIZZLE_128B);
  const kbd_tensor_map_desc tb = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, g->db, (uint64_t)N, (uint64_t)K,
                                                        (uint64_t)K * 2u, brows, kbox, KBD_TMAP_SWIZZLE_128B);
  assert_int_equal(kbd_tensor_map_encode(ma, &ta).code, KBD_OK);
  assert_int_equal(kbd_tensor_map_encode(mb, &tb).code, KBD_OK);
}

/* After a run that returned KBD_OK: every element of D exact. */
static inline void pc_check(const pc_gemm *g) {
  const int M = g->M, N = g->N, K = g->K;
  assert_int_equal(kbd_copy_to_host(g->hd, g->dd, sizeof(float) * (size_t)M * (size_t)N).code, KBD_OK);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const double ref = xh_dot_bf16(g->ha + (size_t)i * (size_t)K, g->hb + (size_t)j * (size_t)K, K);
      const float got = g->hd[(size_t)i * N + (size_t)j];
      if ((double)got != ref) fail_msg("D[%d][%d] = %.9g, want %.9g", i, j, got, ref);
    }
}

static inline void pc_free(pc_gemm *g) {
  kbd_free(g->da), kbd_free(g->db), kbd_free(g->dd);
  free(g->ha), free(g->hb), free(g->hd);
}

/* The end of a run: D checked when the kernel returned KBD_OK (st), the buffers freed; returns st. */
static inline kbd_status pc_finish(pc_gemm *g, kbd_status st) {
  if (st.code == KBD_OK) pc_check(g);
  pc_free(g);
  return st;
}

#endif /* KBD_TEST_PIPE_CASE_H */
