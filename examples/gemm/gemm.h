/* gemm.h - shared by host and kernels: D = act(alpha * A * B + beta * C + bias) on the tensor cores.
 *
 * A is M x K, B is K x N, C and D are M x N, all row-major or column-major (A and B each); inputs bf16 (or
 * e4m3 for the fp8 kernel, whose per-tensor scales fold into alpha), accumulation f32, D and C bf16 or f32.
 * docs/gemm.md walks through the kernel (gemm_kernel.h) top to bottom.
 *
 * A block (CTA) computes a 256 x 128 tile of D with 384 threads. sm_90a (gemm_kernel.h):
 *   warpgroup 0  the producer: warp 0 loads A and B tiles with the TMA into a 4-stage shared-memory ring
 *                (full/empty mbarriers); the warpgroup gives most of its registers to the consumers
 *   warpgroups 1, 2  consumers: warpgroup g multiplies rows 128g..128g+127 of the tile into its own 128 x 128
 *                f32 accumulator (registers on sm_90a, Tensor Memory on sm_100a), then runs the epilogue and
 *                stores D with the TMA, 16 columns at a time, while the producer already loads the next tile;
 *                or (gemm_params.pingpong) each consumer its 128 rows of a tile alone, the two main loops in turn
 *                through a 6-stage ring, so one consumer's epilogue runs under the other's main loop
 * sm_100a (gemm_kernel_sm100.h): warp 0 loads, warp 1 (the MMA warp) issues every tcgen05.mma into one of two
 *                Tensor Memory buffers, warpgroups 1 and 2 run the epilogue of the other buffer's tile
 * Blocks are persistent: launch about one per SM; each walks output tiles in a grouped order (GEMM_GROUP_M
 * tile rows at a time, so the A rows and B columns a wave of blocks reads stay in L2).
 * Edges: the TMA fills out-of-range parts of A and B tiles with zeros and clips D's stores, so any M, N, K >= 1
 * works; C and the bias are read with masked loads.
 */
#ifndef GEMM_H
#define GEMM_H

#include <kbd/tile.h>

#define GEMM_BM 256  /* block tile rows: two consumer warpgroups of 128 */
#define GEMM_WM 128  /* rows per consumer warpgroup */
#define GEMM_BN 128  /* block tile columns = accumulator columns */
#define GEMM_BK 64   /* K per stage for bf16: 64 x 2 bytes = one 128-byte swizzle row */
#define GEMM_BK8 128 /* K per stage for e4m3: also 128 bytes */
#define GEMM_STAGES 4
#define GEMM_EPI_COLS 16 /* epilogue chunk: small, since on sm_90a the 128 accumulator registers stay live */
/* D staging buffers per storing warpgroup: chunk i goes through buffer i % 2, so its TMA store may still read the
 * other buffer while the next chunk is computed (kbd_bulk_wait_group_read(GEMM_EPI_BUFS - 1) before a reuse) */
#define GEMM_EPI_BUFS 2
/* sm_100a: Tensor Memory columns per kbd_acc_load in the epilogue; the 16-column chunks come from these registers */
#define GEMM_EPI_LOAD_COLS 64
#define GEMM_CONSUMERS 2
#define GEMM_THREADS (128 * (1 + GEMM_CONSUMERS))
#define GEMM_GROUP_M 8
/* Tensor Memory: two 128 x 128 f32 accumulators (sm_100a; unused on sm_90a); the sm_100a kernel keeps two such
 * buffers, so the epilogue of one tile overlaps the MMAs of the next: all 512 columns */
#define GEMM_TMEM_COLS (GEMM_CONSUMERS * KBD_ACC_TMEM_COLS(GEMM_WM, GEMM_BN))
#define GEMM_ACC_BUFS 2
#define GEMM_TMEM_COLS_MW (GEMM_ACC_BUFS * GEMM_TMEM_COLS)
/* CTA pairs (sm_100a, gemm_kernel_pair.h): a pair computes a 256 x 256 tile, each CTA 128 rows x 256 columns in
 * one 256-column Tensor Memory buffer of two (the same 512 columns); each CTA stages 128 rows of A and of B per
 * stage, 32 KiB, so the ring has 6 stages */
#define GEMM_PAIR_BM 256
#define GEMM_PAIR_BN 256
#define GEMM_PAIR_STAGES 6
/* Pingpong consumers (sm_90a, gemm_params.pingpong; docs/gemm.md "Pingpong consumers"): the block still walks 256 x
 * 128 tiles, but consumer g computes its 128 rows of a tile alone, after the other consumer's: the producer loads
 * the stages of the top half and then those of the bottom half, and a stage holds one consumer's A tile and the B
 * tile (32 KiB), so the same 192 KiB of ring hold 6 stages. */
#define GEMM_PP_STAGES 6
#define GEMM_RING_BARS 6 /* full and empty barriers: the larger ring's stages */
#if GEMM_RING_BARS < GEMM_STAGES || GEMM_RING_BARS < GEMM_PP_STAGES
#error "examples/gemm: GEMM_RING_BARS must cover both rings' stages (gemm_layout_of)"
#endif

/* The kernel text of the arch being compiled (gemm.cu includes it once, after the per-variant text
 * gemm_variant.h once per operand variant): the consumer-warpgroup kernel on sm_90a, the MMA-warp kernel on sm_100a.
 * nvcc's host pass (KBD_MMA_ARCH 0) declares the kernels too and must see the device pass's text, or the two passes
 * disagree on the kernels' types and the link fails: it learns the target from __CUDA_ARCH_LIST__ (900 or 1000), so one
 * nvcc call builds one arch. */
#define GEMM__LIST_N(...) GEMM__LIST_N_(__VA_ARGS__, 3, 2, 1, 0)
#define GEMM__LIST_N_(a, b, c, n, ...) n
#define GEMM__LIST_FIRST(...) GEMM__LIST_FIRST_(__VA_ARGS__, 0)
#define GEMM__LIST_FIRST_(a, ...) a
#if KBD_MMA_ARCH == 0 && defined(__CUDA_ARCH_LIST__)
#if GEMM__LIST_N(__CUDA_ARCH_LIST__) != 1
#error "examples/gemm: compile gemm.cu for one GPU arch per nvcc call (sm_90a and sm_100a have different kernel texts)"
#endif
#define GEMM__TEXT_ARCH (GEMM__LIST_FIRST(__CUDA_ARCH_LIST__) / 10)
#else
#define GEMM__TEXT_ARCH KBD_MMA_ARCH
#endif
#if GEMM__TEXT_ARCH == 90
#define GEMM_KERNEL_TEXT "gemm_kernel.h"
#else
#define GEMM_KERNEL_TEXT "gemm_kernel_sm100.h"
#endif
/* The A slot (a tile of the plan's A ring) of consumer g's A tile in stage s when a stage holds both: on sm_90a each
 * consumer has a ring of its own (slots g GEMM_STAGES ..), so its stages lie one A tile apart, as in the pingpong
 * ring, and one main loop with a constant stride serves both schedules (a stride chosen at run time was 6 more
 * instructions per k-block: rebuilt in the loop, and the descriptor's division by 16 then a signed one); on sm_100a
 * the two tiles of a stage are adjacent, one 256-row operand of the MMA warp (gemm_a2_k). */
#if GEMM__TEXT_ARCH == 90
#define GEMM_A_SLOT(s, g) ((g)*GEMM_STAGES + (s))
#else
#define GEMM_A_SLOT(s, g) ((s)*GEMM_CONSUMERS + (g))
#endif

/* The activation of the default epilogue (gemm_epilogue.h): GELU is the exact erf form, GELU_TANH the tanh
 * approximation GPT-2 uses (PyTorch's approximate="tanh"; kbd_gelu_tanh in kbd/tile_ops.h). */
typedef enum gemm_act { GEMM_ACT_NONE = 0, GEMM_ACT_RELU = 1, GEMM_ACT_GELU = 2, GEMM_ACT_GELU_TANH = 3 } gemm_act;

/* Operand tiles in shared memory. A row-major A (K contiguous) is a K-major tile, a column-major A an MN-major
 * one; for B (K x N) row-major means N contiguous, i.e. an MN-major N x K tile. */
typedef KBD_STILE(bf16, GEMM_WM, GEMM_BK, KBD_SWIZZLE_128B) gemm_a_k;
typedef KBD_STILE_MN(bf16, GEMM_WM, GEMM_BK, KBD_SWIZZLE_128B) gemm_a_mn;
typedef KBD_STILE(bf16, GEMM_BN, GEMM_BK, KBD_SWIZZLE_128B) gemm_b_k;
typedef KBD_STILE_MN(bf16, GEMM_BN, GEMM_BK, KBD_SWIZZLE_128B) gemm_b_mn;
typedef KBD_STILE(e4m3, GEMM_WM, GEMM_BK8, KBD_SWIZZLE_128B) gemm_a8;
typedef KBD_STILE(e4m3, GEMM_BN, GEMM_BK8, KBD_SWIZZLE_128B) gemm_b8;
/* The two consumers' A tiles of a stage as one 256-row tile (the sm_100a MMA warp's operand, gemm_variant.h): the ring
 * holds them next to each other, and for either major a tile of twice the rows is the two tiles back to back (K-major:
 * rows of 128 bytes; MN-major: 64-row boxes of 8 KiB, each holding the whole K). */
typedef KBD_STILE(bf16, GEMM_BM, GEMM_BK, KBD_SWIZZLE_128B) gemm_a2_k;
typedef KBD_STILE_MN(bf16, GEMM_BM, GEMM_BK, KBD_SWIZZLE_128B) gemm_a2_mn;
typedef KBD_STILE(e4m3, GEMM_BM, GEMM_BK8, KBD_SWIZZLE_128B) gemm_a28;
/* B is loaded as two halves of 64 rows (N): with a 2-CTA cluster each CTA loads one half and multicasts it to both,
 * alone it loads both. A half is the first or second 8 KiB of the B tile for either major (a K-major tile's rows
 * are contiguous; an MN-major one is stored as 64-column boxes), so a half is a 64-row tile of the same kind at
 * byte offset h * 8 KiB, and the B tensor map's box is one half. */
#define GEMM_BH (GEMM_BN / 2)
typedef KBD_STILE(bf16, GEMM_BH, GEMM_BK, KBD_SWIZZLE_128B) gemm_bh_k;
typedef KBD_STILE_MN(bf16, GEMM_BH, GEMM_BK, KBD_SWIZZLE_128B) gemm_bh_mn;
typedef KBD_STILE(e4m3, GEMM_BH, GEMM_BK8, KBD_SWIZZLE_128B) gemm_bh8;
/* Epilogue staging: 128 rows x 16 columns of D, f32 (64-byte rows) or bf16 (32-byte rows). A warpgroup has
 * GEMM_EPI_BUFS buffers of the f32 size (8 KiB); a bf16 chunk uses the first half of its buffer. */
typedef KBD_STILE(f32, GEMM_WM, GEMM_EPI_COLS, KBD_SWIZZLE_64B) gemm_out_f32;
typedef KBD_STILE(bf16, GEMM_WM, GEMM_EPI_COLS, KBD_SWIZZLE_32B) gemm_out_bf16;
#define GEMM_OUT_BYTES (GEMM_WM * GEMM_EPI_COLS * 4) /* one staging buffer: an f32 chunk, 8 KiB */

/* The operand variants of the one kernel (gemm_params.variant): bf16 with A and B each row-major (r) or
 * column-major (c), and e4m3 (A row-major, B column-major: fp8 operands must be K-major on sm_90a). Only a stage's
 * TMA loads and MMAs depend on the variant (its shared tile types), and each is compiled once per variant inside the
 * kernel, picked by a switch on this uniform parameter per stage; the epilogue, the tile walk, the barrier waits
 * and the setup - most of a kernel's compile time - are compiled once instead of once per variant
 * (docs/benchmarks.md, compile time). GEMM_VARIANTS(X) lists them as X(enum, name prefix of the per-variant
 * functions); a translation unit that defines fewer variants (bench/compile_examples.sh's one-variant case) defines
 * it before including gemm.h. */
typedef enum gemm_variant {
  GEMM_BF16_RR = 0, /* index a_col * 2 + b_col */
  GEMM_BF16_RC = 1,
  GEMM_BF16_CR = 2,
  GEMM_BF16_CC = 3,
  GEMM_E4M3_RC = 4
} gemm_variant;
#ifndef GEMM_VARIANTS
#define GEMM_VARIANTS(X)                                                                                               \
  X(GEMM_BF16_RR, gemm_bf16_rr)                                                                                        \
  X(GEMM_BF16_RC, gemm_bf16_rc)                                                                                        \
  X(GEMM_BF16_CR, gemm_bf16_cr) X(GEMM_BF16_CC, gemm_bf16_cc) X(GEMM_E4M3_RC, gemm_e4m3_rc)
#endif

typedef struct gemm_params {
  kbd_tensor_map a, b; /* boxes of one operand tile */
  kbd_tensor_map d;    /* boxes of one staging tile */
  const void *c;       /* M x N, D's type and layout (row-major, ldc); NULL when beta == 0 */
  const float *bias;   /* N values added to every row, or NULL */
  long long m, n, k, ldc;
  float alpha, beta; /* fp8: alpha already holds scale_a * scale_b * alpha */
  int act;           /* gemm_act */
  int d_f32;         /* 1: D and C are f32, 0: bf16 */
  int cluster;       /* CTAs per cluster along M: 1, or 2 (a column pair shares B: each loads half, multicast) */
  int cluster_n;     /* CTAs per cluster along N: 1, or 2 (a row pair shares A: each loads one 128-row tile; in
                        pingpong, the A tile of every other stage) */
  int variant;       /* gemm_variant: the operand types and majors */
  int pingpong;      /* sm_90a: 1 = each consumer computes its 128 rows of a tile alone, in turn with the other, so
                        one's epilogue runs under the other's main loop (gemm_layout_pingpong); 0 = both together */
} gemm_params;

/* One consumer warpgroup's 128 x 128 f32 accumulator (registers on sm_90a, Tensor Memory on sm_100a): a named type,
 * since the per-variant MMA functions (gemm_variant.h) take it by pointer. */
typedef KBD_ACC(f32, GEMM_WM, GEMM_BN) gemm_acc;
/* Both consumers' accumulators as one 256 x 128 accumulator: the sm_100a MMA warp's (gemm_variant.h), in Tensor Memory
 * the two 128-row blocks side by side, consumer g's at column g * GEMM_BN. */
typedef KBD_ACC(f32, GEMM_BM, GEMM_BN) gemm_acc2;
/* One epilogue chunk of it as registers (the WGMMA_ACC fragment on sm_90a, a row per thread on sm_100a): what the
 * epilogue hook works on (gemm_epilogue.h; docs/gemm.md, "Changing the epilogue"). Here rather than beside the hook,
 * so a file can define its own hook before including gemm.cu (tests/gemm/gemm_hook_kernels.c). Kernel code only: a
 * register tile's type needs the per-thread fragment of a device or CPU-machine pass, which plain host C lacks. */
#if KBD_KERNEL_CODE
typedef KBD_ACC_TILE(f32, GEMM_WM, GEMM_EPI_COLS) gemm_chunk;
#endif

/* Dynamic shared memory of one block: the ring (A tiles of both warpgroups and the B tile per stage), two
 * staging tiles per consumer warpgroup (warpgroup g's buffer b is staging tile g * GEMM_EPI_BUFS + b), the barriers
 * and the Tensor Memory slot (224 KiB and 164 bytes of the 227 KiB for bf16 and for e4m3: the second f32 staging
 * buffer of each warpgroup takes 16 KiB of the 19 KiB the single-buffered plan left free). */
typedef struct gemm_smem {
  size_t a, b, out, full, empty, accbar, accfull, accempty, tmem;
  size_t turn; /* pingpong: the two consumers' turn barriers (gemm_layout_pingpong; 0 in the CTA-pair plan) */
} gemm_smem;

/* The sm_90a and sm_100a kernels' plan, for `pp` 0, and the pingpong consumers' plan (sm_90a, gemm_params.pingpong)
 * for 1: a stage holds both consumers' A tiles and the B tile (48 KiB, GEMM_STAGES of them), or in pingpong one
 * consumer's A tile and the B tile (32 KiB, GEMM_PP_STAGES). Both rings are 192 KiB, and everything after them has
 * the same offset in both plans (the barrier arrays sized for the larger ring, 32 bytes unused in the first plan,
 * the turn barriers in both): the sm_90a kernel picks its plan from a run-time parameter, and a second set of
 * offsets live in registers made ptxas spill in the producer, which runs on 40. Only the B ring's offset differs. */
KBD_HD kbd_smem_plan gemm_layout_of(gemm_smem *l, int fp8, int pp) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  const int na = pp ? GEMM_PP_STAGES : GEMM_STAGES * GEMM_CONSUMERS, nb = pp ? GEMM_PP_STAGES : GEMM_STAGES;
  if (fp8) {
    l->a = kbd_smem_plan_stile(&p, "A ring", gemm_a8, na);
    l->b = kbd_smem_plan_stile(&p, "B ring", gemm_b8, nb);
  } else {
    l->a = kbd_smem_plan_stile(&p, "A ring", gemm_a_k, na);
    l->b = kbd_smem_plan_stile(&p, "B ring", gemm_b_k, nb);
  }
  l->out = kbd_smem_plan_stile(&p, "D staging", gemm_out_f32, GEMM_CONSUMERS * GEMM_EPI_BUFS);
  l->full = kbd_smem_plan_mbarriers(&p, "full", GEMM_RING_BARS);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", GEMM_RING_BARS);
  l->accbar = kbd_smem_plan_mbarriers(&p, "accumulator done", GEMM_CONSUMERS);
  l->turn = kbd_smem_plan_mbarriers(&p, "consumer turn", GEMM_CONSUMERS);              /* pingpong */
  l->accfull = kbd_smem_plan_mbarriers(&p, "accumulator buffer full", GEMM_ACC_BUFS);  /* sm_100a kernel */
  l->accempty = kbd_smem_plan_mbarriers(&p, "accumulator buffer free", GEMM_ACC_BUFS); /* sm_100a kernel */
  l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);
  return p;
}
KBD_HD kbd_smem_plan gemm_layout(gemm_smem *l, int fp8) { return gemm_layout_of(l, fp8, 0); }
KBD_HD kbd_smem_plan gemm_layout_pingpong(gemm_smem *l, int fp8) { return gemm_layout_of(l, fp8, 1); }
/* The CTA-pair kernel's (bf16, both operands K-major): per stage one 128-row A tile and one 128-row B tile; the
 * staging as in gemm_layout (6 x 32 KiB + 32 KiB: also 224 KiB). */
KBD_HD kbd_smem_plan gemm_layout_pair(gemm_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->a = kbd_smem_plan_stile(&p, "A ring", gemm_a_k, GEMM_PAIR_STAGES);
  l->b = kbd_smem_plan_stile(&p, "B ring", gemm_b_k, GEMM_PAIR_STAGES);
  l->out = kbd_smem_plan_stile(&p, "D staging", gemm_out_f32, GEMM_CONSUMERS * GEMM_EPI_BUFS);
  l->full = kbd_smem_plan_mbarriers(&p, "full", GEMM_PAIR_STAGES);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", GEMM_PAIR_STAGES);
  l->accbar = 0;
  l->accfull = kbd_smem_plan_mbarriers(&p, "accumulator buffer full", GEMM_ACC_BUFS);
  l->accempty = kbd_smem_plan_mbarriers(&p, "accumulator buffer free", GEMM_ACC_BUFS);
  l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);
  l->turn = 0;
  return p;
}

/* Output tile t (0 .. tiles_m * tiles_n - 1) in grouped order: GEMM_GROUP_M tile rows form a group that is
 * walked column by column, so consecutive tiles (the blocks of one wave) share A rows and B columns. */
KBD_HD void gemm_tile_coords(long long t, long long tiles_m, long long tiles_n, long long *tm, long long *tn) {
  const long long per_group = (long long)GEMM_GROUP_M * tiles_n, first = t / per_group * GEMM_GROUP_M;
  const long long rows = tiles_m - first < GEMM_GROUP_M ? tiles_m - first : GEMM_GROUP_M;
  *tm = first + t % per_group % rows;
  *tn = t % per_group / rows;
}
/* Blocks of the persistent grid when gemm_args.grid is 0: one per SM of an H100 SXM (pass a B200's 148). */
#define GEMM_DEFAULT_GRID 132

/* The persistent grid gemm_run launches for an M x N product: clusters of *cm x *cn CTAs (`cluster` along M, or
 * 0: a pair when M spans two tile rows; `cluster_n` along N, or 0: one) and the returned number of blocks (`grid`,
 * or 0: GEMM_DEFAULT_GRID), at most one per cluster tile's CTA and a whole number of clusters. */
KBD_HD long long gemm_launch_blocks(long long m, long long n, int grid, int cluster, int cluster_n, int *cm, int *cn) {
  const long long tiles_m = (m + GEMM_BM - 1) / GEMM_BM, tiles_n = (n + GEMM_BN - 1) / GEMM_BN;
  *cm = cluster ? cluster : tiles_m >= 2 ? 2 : 1;
  *cn = cluster_n ? cluster_n : 1;
  const int c = *cm * *cn;
  const long long ctiles = (tiles_m + *cm - 1) / *cm * ((tiles_n + *cn - 1) / *cn);
  long long blocks = grid > 0 ? grid : GEMM_DEFAULT_GRID;
  if (blocks > ctiles * c) blocks = ctiles * c; /* a persistent block without a tile would only wait */
  blocks = blocks / c * c;
  return blocks < c ? c : blocks;
}

/* A CTA's place in a cluster of cm x cn CTAs (cm, cn: 1 or 2), rank = rm + cm * rn. The CTAs of one cluster column
 * (same rn: the same output columns) share B: each loads B half rm and multicasts it to the column (mask `col`). The
 * CTAs of one cluster row (same rm) share A: each loads the A tile of consumer rn and multicasts it to the row
 * (mask `row`). Every CTA of `peers` = col | row writes into this CTA's stages and is written into by it, so a
 * stage is free again once all of them have read it: the empty barriers count their releases. */
typedef struct gemm_cluster {
  int cm, cn, rm, rn, size;
  uint16_t col, row, peers;
  int npeers; /* CTAs in peers, this one included: cm + cn - 1 */
} gemm_cluster;
KBD_HD gemm_cluster gemm_cluster_of(int cm, int cn, int rank) {
  gemm_cluster c;
  c.cm = cm, c.cn = cn, c.size = cm * cn, c.rm = rank % cm, c.rn = rank / cm;
  c.col = c.row = 0;
  for (int i = 0; i < cm; ++i)
    c.col = (uint16_t)(c.col | 1u << (i + cm * c.rn));
  for (int j = 0; j < cn; ++j)
    c.row = (uint16_t)(c.row | 1u << (c.rm + cm * j));
  c.peers = (uint16_t)(c.col | c.row);
  c.npeers = cm + cn - 1;
  return c;
}

/* Cluster tile t of a grid of ceil(tiles_m / cm) x ceil(tiles_n / cn), in grouped order: the CTA takes tile row
 * tp * cm + rm and column tq * cn + rn (past tiles_m or tiles_n on an odd edge: its loads are zeros and its stores
 * are clipped, but it still loads and multicasts its share for its peers). */
KBD_HD void gemm_cluster_tile(long long t, long long tiles_m, long long tiles_n, const gemm_cluster *c, long long *tm,
                              long long *tn) {
  long long tp, tq;
  gemm_tile_coords(t, (tiles_m + c->cm - 1) / c->cm, (tiles_n + c->cn - 1) / c->cn, &tp, &tq);
  *tm = tp * c->cm + c->rm;
  *tn = tq * c->cn + c->rn;
}
/* The cluster tiles of an M x N product. */
KBD_HD long long gemm_cluster_tiles(long long tiles_m, long long tiles_n, const gemm_cluster *c) {
  return (tiles_m + c->cm - 1) / c->cm * ((tiles_n + c->cn - 1) / c->cn);
}

/* ---- the host call (gemm_run.c) ------------------------------------------------------------------------------ */

/* One launch configuration of gemm_run, a candidate of its picker (kbd/tune.h; docs/gemm.md, "Choosing the
 * configuration"): the 1-SM kernel with a cm x cn cluster, or the CTA-pair kernel; and the persistent grid's size. */
typedef enum gemm_grid_kind {
  GEMM_GRID_PERSIST = 0,  /* one block per SM: each walks several tiles, the next tile's loads overlap the epilogue */
  GEMM_GRID_BALANCED = 1, /* as few blocks as give the same number of waves: every block walks the same tile count */
  GEMM_GRID_TILE = 2      /* one block per (cluster) tile: the hardware schedules them, nothing persists */
} gemm_grid_kind;
typedef struct gemm_config {
  int cluster, cluster_n; /* CTAs per cluster along M and N (1 or 2); 1, 1 with pair */
  int pair;               /* 1: the CTA-pair kernel (sm_100a) */
  int pingpong;           /* 1: pingpong consumers (sm_90a; gemm_params.pingpong) */
  int grid_kind;          /* gemm_grid_kind, or -1: grid is the caller's */
  int grid;               /* the blocks asked of gemm_launch_blocks / gemm_pair_blocks */
  char name[32];          /* stable across shapes (the tuning cache stores it): "c2x1.persist", "pair.tile" */
  const char *reason;     /* gemm_args.chosen only: "forced", "cached", "measured" or "model" */
} gemm_config;
#define GEMM_CONFIGS_MAX 32
struct kbd_tune_opts; /* kbd/tune.h */

/* D = act(alpha * A * B + beta * C + bias), D and C M x N row-major. gemm_run checks every field and returns
 * KBD_ERR_INVALID naming the wrong one without launching anything. M, N or K of zero is a no-op (D is not
 * written). Matrices go through the TMA: bases 16-byte aligned, row strides (in elements) at least one row and a
 * multiple of 16 bytes. */
typedef struct gemm_args {
  long long m, n, k;
  const void *a; /* M x K: bf16 (e4m3 when fp8); row-major (lda >= K) or, with a_col, column-major (lda >= M) */
  const void *b; /* K x N: row-major (ldb >= N) or, with b_col, column-major (ldb >= K) */
  long long lda, ldb;
  int a_col, b_col;
  int fp8;                /* e4m3 A (row-major) and B (column-major), scaled by scale_a * scale_b */
  float scale_a, scale_b; /* fp8 only */
  void *d;                /* M x N, ldd >= N: bf16, or f32 with d_f32 */
  long long ldd;
  int d_f32;
  const void *c; /* M x N in D's type, ldc >= N; read only when beta != 0 */
  long long ldc;
  const float *bias; /* N values or NULL */
  float alpha, beta;
  int act;       /* gemm_act */
  int grid;      /* persistent blocks; 0: GEMM_DEFAULT_GRID (at most one per output tile; rounded to whole clusters) */
  int cluster;   /* CTAs per cluster along M sharing B through multicast: 1, 2, or 0 (2 when M spans two tiles) */
  int cluster_n; /* CTAs per cluster along N sharing A through multicast: 1, 2, or 0 (1) */
  int pair;      /* 1: CTA pairs (tcgen05 .cta_group::2, sm_100a only; bf16, a_col 0, b_col 1; no cluster options):
                    a pair of CTAs computes each 256 x 256 tile; grid then counts CTAs, rounded to pairs. -1: never
                    pairs. 0: the picker may choose them where they are valid */
  int pingpong;  /* sm_90a: 1 forces pingpong consumers (each consumer warpgroup its own 128 x 128 tile, the two main
                    loops in turn: one's epilogue under the other's main loop), -1 the cooperative consumers (both on
                    each 256 x 128 tile), 0 lets the picker choose; 1 is an error on sm_100a and with pair = 1 */
  /* grid, cluster, cluster_n, pair and pingpong left 0 are chosen by kbd_tune_pick among the valid gemm_configs (the
   * cache, measurement with KBD_TUNE=1 on a GPU, else the cost model); a nonzero one is honoured and narrows it */
  const struct kbd_tune_opts *tune; /* NULL: kbd_tune_opts_default() (KBD_TUNE, KBD_TUNE_CACHE, KBD_TUNE_LOG) */
  gemm_config *chosen;              /* not NULL: receives the configuration launched and the reason */
  int sms; /* multiprocessors the model and the grid candidates assume; 0: the device's (CPU mode: 132 on sm_90a,
              148 on sm_100a) */
} gemm_args;
/* The candidate configurations of gemm_run for a's shape (valid or not: gemm_run's picker asks gemm_config_valid) on
 * a device of `sms` multiprocessors: at most GEMM_CONFIGS_MAX, their number returned. */
int gemm_configs(const gemm_args *a, int sms, gemm_config *out);
/* 1 when configuration c can run a (the arch's kernels, operand layouts, the caller's forced fields, tile counts),
 * else 0 and the reason in why. */
int gemm_config_valid(const gemm_args *a, const gemm_config *c, char *why, size_t why_len);
/* The cost model's time of c for a, in seconds (docs/tuning.md), on `arch` (90, 100) with `sms` multiprocessors. */
double gemm_config_estimate(const gemm_args *a, const gemm_config *c, int arch, int sms);
kbd_status gemm_run(const gemm_args *a, void *stream);

/* The kernel: every operand variant (gemm_params.variant, gemm_variant). */
KBD_KERNEL_DECL(gemm_kernel, gemm_params);
/* The CTA-pair kernel (gemm_kernel_pair.h; bf16, A row-major, B column-major: p.variant is not read), or NULL where
 * the build has none (sm_90a): gemm.cu defines it. A separate kernel, not a variant: ptxas rejects a function that
 * mixes .cta_group::1 and ::2 tcgen05 instructions. */
typedef kbd_status (*gemm_kernel_fn)(kbd_launch_cfg, gemm_params);
KBD_EXTERN_C gemm_kernel_fn gemm_pair_kernel(void);
/* 1 when this build's gemm_kernel has the pingpong mode (the sm_90a text: wgmma into registers), else 0: gemm.cu
 * defines it. */
KBD_EXTERN_C int gemm_has_pingpong(void);
/* The persistent grid of the pair kernel: 2 CTAs per pair, at most one pair per 256 x 256 tile. */
KBD_HD long long gemm_pair_blocks(long long m, long long n, int grid) {
  const long long tiles = (m + GEMM_PAIR_BM - 1) / GEMM_PAIR_BM * ((n + GEMM_PAIR_BN - 1) / GEMM_PAIR_BN);
  long long pairs = (grid > 0 ? grid : GEMM_DEFAULT_GRID) / 2;
  if (pairs > tiles) pairs = tiles;
  return 2 * (pairs < 1 ? 1 : pairs);
}

#endif
