/* pair_mma_main.c - runs pair_mma.cu's kernels (CTA-pair MMAs, M = 256 and 128, kbd/mma_pair.h) for 1..3 pairs
 * and several K, and checks every element of D against a double reference (small multiples of 1/4: exact). For
 * M = 128 it also checks the Tensor Memory view as stored (the fold, Layout B: on a device this is the check of
 * the layout kbd took from TVM's and CUTLASS's descriptions). The CPU program runs it on the CPU machine emulating
 * sm_100a; the GPU program needs an sm_100a device (run_gpu_example.sh skips otherwise). Exit 0 and "OK" when
 * every run matches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair_mma.h"

static float pm_value(int i, int j, int salt) { return (float)(((i * 5 + j * 3 + salt * 7) % 9) - 4) / 4.0f; }

/* m: the pair's M (256: pm_kernel, 128: pm128_kernel). Returns the number of mismatching elements, or -1 if a call
 * failed. */
static kbd_status pm_last; /* the launch's status */
static long long pm_run(int m, int pairs, int kt, int raw, int small_alloc) {
  const int M = m * pairs, K = PM_K * kt;
  kbd_bf16 *ha = malloc(sizeof(kbd_bf16) * (size_t)M * (size_t)K), *hb = malloc(sizeof(kbd_bf16) * PM_N * (size_t)K);
  float *hd = malloc(sizeof(float) * (size_t)M * PM_N);
  if (!ha || !hb || !hd) return -1;
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ha[(size_t)i * K + k] = kbd_f32_to_bf16(pm_value(i, k, 1));
  for (int j = 0; j < PM_N; ++j)
    for (int k = 0; k < K; ++k)
      hb[(size_t)j * K + k] = kbd_f32_to_bf16(pm_value(j, k, 2));
  kbd_bf16 *da = NULL, *db = NULL;
  float *dd = NULL;
  pm_params p;
  memset(&p, 0, sizeof p);
  kbd_status st = kbd_malloc((void **)&da, sizeof(kbd_bf16) * (size_t)M * K);
  if (st.code == KBD_OK) st = kbd_malloc((void **)&db, sizeof(kbd_bf16) * PM_N * (size_t)K);
  if (st.code == KBD_OK) st = kbd_malloc((void **)&dd, sizeof(float) * (size_t)M * PM_N);
  if (st.code == KBD_OK) st = kbd_copy_to_device(da, ha, sizeof(kbd_bf16) * (size_t)M * K);
  if (st.code == KBD_OK) st = kbd_copy_to_device(db, hb, sizeof(kbd_bf16) * PM_N * (size_t)K);
  kbd_tensor_map_desc ta = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, da, (uint64_t)M, (uint64_t)K, (uint64_t)K * 2u,
                                                  (uint32_t)(m / 2), PM_K, KBD_TMAP_SWIZZLE_128B);
  kbd_tensor_map_desc tb = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, db, PM_N, (uint64_t)K, (uint64_t)K * 2u, PM_N / 2,
                                                  PM_K, KBD_TMAP_SWIZZLE_128B);
  if (st.code == KBD_OK) st = kbd_tensor_map_encode(&p.a, &ta);
  if (st.code == KBD_OK) st = kbd_tensor_map_encode(&p.b, &tb);
  p.d = dd;
  p.kt = kt;
  p.raw = raw;
  p.small_alloc = small_alloc;
  const kbd_launch_cfg cfg = kbd_cfg_cluster(kbd_cfg_1d((unsigned)(2 * pairs)), 2, 1, 1);
  if (st.code == KBD_OK) st = m == 256 ? pm_kernel(cfg, p) : pm128_kernel(cfg, p);
  if (st.code == KBD_OK) st = kbd_device_sync();
  if (st.code == KBD_OK) st = kbd_copy_to_host(hd, dd, sizeof(float) * (size_t)M * PM_N);
  long long bad = -1;
  pm_last = st;
  if (st.code != KBD_OK) {
    if (!small_alloc) fprintf(stderr, "pair_mma: %s\n", st.msg);
  } else {
    bad = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < PM_N; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k)
          ref += (double)kbd_bf16_to_f32(ha[(size_t)i * K + k]) * (double)kbd_bf16_to_f32(hb[(size_t)j * K + k]);
        /* raw: D row i, column j sits in CTA i / 64 at lane i % 64 + 64 * (j / (PM_N / 2)), column j % (PM_N / 2)
         * of its Tensor Memory (Layout B), which the kernel stored at row 128 * cta + lane of a PM_N / 2 wide d */
        const size_t at =
            raw ? ((size_t)(128 * (i / 64) + i % 64 + 64 * (j / (PM_N / 2))) * (PM_N / 2) + (size_t)(j % (PM_N / 2)))
                : (size_t)i * PM_N + (size_t)j;
        if ((double)hd[at] != ref && bad++ < 5)
          fprintf(stderr, "pair_mma: M %d pairs %d K %d%s: D[%d][%d] = %.9g, want %.9g\n", m, pairs, K,
                  raw ? " (raw Tensor Memory view)" : "", i, j, (double)hd[at], ref);
      }
  }
  kbd_free(da), kbd_free(db), kbd_free(dd);
  free(ha), free(hb), free(hd);
  return bad;
}

/* --broken-alloc (CPU machine): each kernel allocates 32 Tensor Memory columns, fewer than its D takes (128, or 64
 * for the M = 128 fold): the first pair MMA must be refused with both CTAs' columns named, at the kernel's line. */
static int pm_broken_alloc(void) {
  int reported = 0;
  for (int m = 256; m >= 128; m -= 128) {
    (void)pm_run(m, 1, 1, 0, 1);
    const int ok = pm_last.code == KBD_ERR_BOUNDS && strstr(pm_last.msg, "pair_mma_kernel.h:") &&
                   strstr(pm_last.msg, "tcgen05.mma.cta_group::2 (D, this CTA's half)") &&
                   strstr(pm_last.msg, m == 256 ? "columns [0, 128)" : "columns [0, 64)");
    printf("pair_mma: M = %d with 32 columns allocated: %s (%s)\n", m, ok ? "reported" : "NOT REPORTED",
           pm_last.code == KBD_OK ? "ran" : pm_last.msg);
    reported += ok;
  }
  printf("pair_mma: broken alloc %s\n", reported == 2 ? "reported" : "FAILED");
  return reported == 2 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--broken-alloc")) return pm_broken_alloc();
  const int shapes[][2] = {{1, 1}, {1, 4}, {2, 3}, {3, 2}};
  long long bad = 0;
  /* M = 256; M = 128 unfolded by kbd_store2d_folded; M = 128 as Tensor Memory holds it (the fold itself) */
  const int runs[][2] = {{256, 0}, {128, 0}, {128, 1}};
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 4; ++i) {
      const int m = runs[r][0], raw = runs[r][1];
      const long long b = pm_run(m, shapes[i][0], shapes[i][1], raw, 0);
      if (b < 0) return 1;
      printf("pair_mma: M = %d%s, %d pair(s), K = %d: %lld mismatches\n", m, raw ? " (Tensor Memory view)" : "",
             shapes[i][0], PM_K * shapes[i][1], b);
      bad += b;
    }
  printf("pair_mma: %s\n", bad ? "FAILED" : "OK");
  return bad ? 1 : 0;
}
