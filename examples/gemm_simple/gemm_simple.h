/* gemm_simple.h - shared by host and kernel: D = epilogue(A B), the GEMM to copy (docs/gemm.md, "Start from
 * gemm_simple"). One variant: A is M x K row-major, B is K x N column-major (each row of A and each column of B is
 * contiguous in K: the "TN" GEMM, both operands K-major as the tensor cores read them without a transpose), bf16
 * inputs, f32 accumulation, D M x N row-major bf16. Any M, N, K >= 1: the TMA zero-fills loads past the edges and
 * clips stores; rows must start 16 bytes apart (main.c pads them). examples/gemm is the full version (other layouts,
 * fp8, C, clusters, CTA pairs).
 *
 * A block computes 256 x 128 tiles of D with 384 threads, persistent (about one block per SM, tiles t, t + grid, ...):
 *   sm_90a   warp 0 (producer) loads A and B with the TMA into a 4-stage ring; warpgroups 1 and 2 (consumers) each
 *            multiply 128 rows into their register accumulator with wgmma, then run the epilogue
 *   sm_100a  warp 0 loads as above; warp 1 (the MMA warp) issues every tcgen05.mma into one of two Tensor Memory
 *            buffers; warpgroups 1 and 2 run the epilogue of the other buffer's tile meanwhile
 * The epilogue hook, gs_epilogue in gemm_simple.cu, is the function to change (bias + GELU as shipped).
 */
#ifndef GEMM_SIMPLE_H
#define GEMM_SIMPLE_H

#include <kbd/tile.h>

#define GS_BM 256      /* block tile rows: two accumulators of 128 rows */
#define GS_WM 128      /* rows per accumulator (one epilogue warpgroup) */
#define GS_BN 128      /* block tile columns */
#define GS_BK 64       /* K per stage: 64 bf16 = 128 bytes, one 128-byte swizzle row */
#define GS_STAGES 4    /* 4 x 48 KiB: the ring fills most of the 227 KiB a block may have */
#define GS_EPI_COLS 16 /* epilogue chunk: narrow, since on sm_90a the 128 accumulator registers stay live */
#define GS_ACC_BUFS 2  /* sm_100a: Tensor Memory buffers, 2 x 256 columns = all 512 */
#define GS_THREADS 384 /* warpgroup 0: producer (and MMA warp); warpgroups 1, 2: consumers / epilogue */

typedef KBD_STILE(bf16, GS_WM, GS_BK, KBD_SWIZZLE_128B) gs_a_tile;        /* 128 rows of A, K-major */
typedef KBD_STILE(bf16, GS_BM, GS_BK, KBD_SWIZZLE_128B) gs_a2_tile;       /* both A tiles of a stage (sm_100a) */
typedef KBD_STILE(bf16, GS_BN, GS_BK, KBD_SWIZZLE_128B) gs_b_tile;        /* 128 columns of B, K-major */
typedef KBD_STILE(bf16, GS_WM, GS_EPI_COLS, KBD_SWIZZLE_32B) gs_out_tile; /* D staging: 128 x 16 bf16 */
typedef KBD_ACC(f32, GS_WM, GS_BN) gs_acc;                                /* registers / Tensor Memory */
typedef KBD_ACC(f32, GS_BM, GS_BN) gs_acc2; /* sm_100a MMA warp: both gs_acc side by side in columns */

typedef struct gs_params {
  kbd_tensor_map a, b, d; /* boxes of gs_a_tile, gs_b_tile, gs_out_tile */
  const float *bias;      /* N values: read by the epilogue hook (add what your hook needs here) */
  long long m, n, k;
} gs_params;

/* Dynamic shared memory (about 208 KiB): the ring, a staging tile per epilogue warpgroup, the barriers. */
typedef struct gs_smem {
  size_t a, b, out, full, empty, accfull, accempty, tmem;
} gs_smem;
KBD_HD kbd_smem_plan gs_layout(gs_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->a = kbd_smem_plan_stile(&p, "A ring", gs_a_tile, 2 * GS_STAGES); /* two 128-row tiles per stage */
  l->b = kbd_smem_plan_stile(&p, "B ring", gs_b_tile, GS_STAGES);
  l->out = kbd_smem_plan_stile(&p, "D staging", gs_out_tile, 2);
  l->full = kbd_smem_plan_mbarriers(&p, "full", GS_STAGES);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", GS_STAGES);
  l->accfull = kbd_smem_plan_mbarriers(&p, "accumulator full", GS_ACC_BUFS);  /* sm_100a */
  l->accempty = kbd_smem_plan_mbarriers(&p, "accumulator free", GS_ACC_BUFS); /* sm_100a */
  l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);
  return p;
}

KBD_KERNEL_DECL(gemm_simple, gs_params);

#endif
