/* attention.h - shared by host and kernels: flash attention forward and decode on the tensor cores.
 *
 *   O = softmax(scale * Q K^T + mask) V, per (batch, q head), with the log-sum-exp of every row
 *
 * Tensors are contiguous [batch][heads][seq][head_dim] (bf16 or f16), q heads heads_q, k/v heads heads_kv
 * (grouped-query attention: q head h reads kv head h / (heads_q / heads_kv)). The lse is f32
 * [batch][heads_q][seq_q], natural log: lse = ln sum_k exp(scale * q.k_k) over the visible keys.
 * Causal masking is bottom-right aligned (query i sees keys j <= i + seq_k - seq_q, as FlashAttention 2.1+):
 * with seq_q == seq_k the usual lower triangle, with seq_q < seq_k the last queries of a longer context. A row
 * that sees no key (causal with seq_q > seq_k) gets O = 0 and lse = -inf.
 *
 * One kernel text does the forward pass and the decode pass (docs/attention.md walks through it):
 *   - A block owns ATTN_BM rows of packed queries: the g = heads_q / heads_kv q heads that share a kv head are
 *     consecutive in memory ([seq] rows each), so for one (batch, kv head) they form g * seq_q rows that all
 *     attend to the same K and V. GQA costs no extra K/V traffic, and decode (seq_q 1..16) fills the MMA's
 *     64 rows with the group's heads instead of padding.
 *   - Warpgroup 0 is the producer: warp 0 loads the Q tiles once and the K blocks of ATTN_BN keys, warp 1 the V
 *     blocks, each into a 2-stage ring (full/empty mbarriers; K runs one block ahead of V).
 *   - Each consumer warpgroup owns 64 query rows: S = Q K^T into an accumulator, the online softmax
 *     (kbd/softmax.h) in registers, P = exp(...) rounded to the input type, O += P V (sm_90a: P from registers;
 *     sm_100a: through the warpgroup's P tile in shared memory). FlashAttention-3's schedule: the two consumers
 *     take turns on the tensor cores (named barriers), and O += P V of key block j-1 is issued with S of block j
 *     and runs under the softmax of block j, so the MMAs run while the warpgroups compute exponentials.
 *   - splits > 1 (flash-decoding): grid z splits the key range; each split writes its normalised O and lse
 *     in f32 to a workspace, and a second kernel combines them with the lse weights.
 * attention_kernel.h is the sm_90a kernel (wgmma, accumulators in registers). On sm_100a FlashAttention-4's structure
 * replaces it: attention_kernel_sm100.h (head_dim 64 and 128) gives a block of 256 rows as two Q tiles of 128 to 512
 * threads (a TMA warp, an MMA warp, a softmax warpgroup per tile, a correction warpgroup; S, P and O in Tensor
 * Memory), and attention_kernel_sm100_d256.h (head_dim 256) the same roles on one Q tile of 128 rows whose two S
 * buffers alternate by key block, 384 threads. The host asks attn_block_rows / attn_block_plan for the block of the
 * text it runs. Each text is also the CPU kernel of its arch.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

#include <kbd/tile.h>

#define ATTN_WM 64    /* query rows per consumer warpgroup (one m64 MMA block) */
#define ATTN_STAGES 2 /* K/V ring depth */
#define ATTN_SPLITS_MAX 64

typedef enum attn_dtype { ATTN_BF16 = 0, ATTN_F16 = 1 } attn_dtype;

struct kbd_tune_opts; /* kbd/tune.h */

/* What the caller passes to attn_run (attention_run.c checks every field and names the wrong one). */
typedef struct attn_args {
  attn_dtype dtype;
  int batch, heads_q, heads_kv, seq_q, seq_k, head_dim; /* head_dim: 64, 128 or 256 */
  int causal;
  float scale;           /* 0: 1 / sqrt(head_dim) */
  const void *q, *k, *v; /* device, 128-byte aligned */
  void *o;               /* device [batch][heads_q][seq_q][head_dim], the input type */
  float *lse;            /* device [batch][heads_q][seq_q], or NULL */
  int splits;            /* 1: one pass over the keys; 2..ATTN_SPLITS_MAX: flash-decoding */
  void *workspace;       /* splits > 1: attn_workspace_bytes(args) bytes of device memory */
  int kv_rows; /* rows from one k/v head to the next (a KV cache planned for a longer context): >= seq_k, or 0: seq_k
                  (k and v contiguous); only the first seq_k rows of each head are read */
  const struct kbd_tune_opts *tune; /* attn_pick_splits' picker (kbd/tune.h); NULL: kbd_tune_opts_default() */
} attn_args;

/* Checks args (a status naming the first wrong field, nothing launched) and runs the attention. */
kbd_status attn_run(const attn_args *a);
size_t attn_workspace_bytes(const attn_args *a);
/* A split count for decode, through kbd_tune_pick (docs/attention.md, "Choosing the configuration"): the cache, else
 * the cost model's fastest of 1, 2, 4 .. ATTN_SPLITS_MAX with at least 2 key blocks per split, on `sms`
 * multiprocessors (0: the device's). a->tune's force ("s8") takes one. Never fails: 1 when a is unusable. */
int attn_pick_splits(const attn_args *a, int sms);
/* The cost model's time in seconds of `splits` splits for a on `arch` (90, 100) with `sms` multiprocessors. */
double attn_splits_estimate(const attn_args *a, int splits, int arch, int sms);

/* ---- what the kernels see ---------------------------------------------------------------------------------- */

typedef struct attn_params {
  kbd_tensor_map q, k, v;   /* 3D {head_dim, rows, batch * heads_kv}, boxes of one tile */
  void *o;                  /* splits == 1: packed [batch * heads_kv][group * seq_q][head_dim], input type */
  float *lse;               /* splits == 1: packed [batch * heads_kv][group * seq_q], or NULL */
  float *o_part, *lse_part; /* splits > 1: [split][batch * heads_kv * group * seq_q][head_dim] and [..][rows] */
  int seq_q, seq_k, group;  /* group = heads_q / heads_kv */
  int causal, splits;
  float scale;
  kbd_tensor_map om; /* splits == 1: o as q's map (64 x 64 boxes): the epilogue's TMA store, clipped at the
                        group * seq_q rows of each (batch, kv head) */
} attn_params;

typedef struct attn_combine_params {
  const float *o_part, *lse_part;
  void *o;
  float *lse;
  long long rows; /* batch * heads_q * seq_q */
  int head_dim, splits, f16;
} attn_combine_params;

/* Per head_dim: keys per block, consumer warpgroups (Tensor Memory holds consumers x (BN + D) columns of
 * S and O, at most 512), threads. */
#define ATTN_BN(D) ((D) == 256 ? 64 : 128)
#define ATTN_CONSUMERS(D) ((D) == 256 ? 1 : 2)
#define ATTN_THREADS(D) (128 * (1 + ATTN_CONSUMERS(D)))
#define ATTN_BM(D) (ATTN_WM * ATTN_CONSUMERS(D))
/* 2 x (128 + 64), 2 x (128 + 128) and 1 x (64 + 256) columns, allocated as one power of two */
#define ATTN_TMEM_COLS 512
KBD_STATIC_ASSERT(2 * (ATTN_BN(128) + 128) <= ATTN_TMEM_COLS && ATTN_BN(256) + 256 <= ATTN_TMEM_COLS,
                  "attention: S and O of every consumer must fit the Tensor Memory allocation");

/* attn_q128_*: the block's Q as one 128-row tile and attn_qbox_*: one 64 x 64 TMA box of it (the sm_100a text: the
 * plan's two Q tiles are exactly its bytes; its layout is box-major - columns 64c.. of all 128 rows, then the next
 * 64 columns - so box (c, h) starts at (128 c + 64 h) rows of 128 bytes). */
/* Shared memory of one block: Q tiles, the K and V rings, a P tile per consumer (sm_100a's MMA reads P there;
 * unused on sm_90a, where the plan is the same so the host needs no arch), the barriers, the Tensor Memory slot. Sizes
 * depend on head_dim and the element type's size only (bf16 and f16 are both 2 bytes). */
typedef struct attn_smem {
  size_t q, k, v, pt, qfull, kfull, kempty, vfull, vempty, sdone, odone, sfull, pready, ocorr, ofull, tmem;
} attn_smem;

#define ATTN_TILES(dt, D)                                                                                              \
  typedef KBD_STILE(dt, ATTN_WM, D, KBD_SWIZZLE_128B) attn_q_##dt##_##D;                                               \
  typedef KBD_STILE(dt, ATTN_BN(D), D, KBD_SWIZZLE_128B) attn_k_##dt##_##D;                                            \
  typedef KBD_STILE_MN(dt, D, ATTN_BN(D), KBD_SWIZZLE_128B) attn_v_##dt##_##D;                                         \
  typedef KBD_STILE(dt, ATTN_WM, ATTN_BN(D), KBD_SWIZZLE_128B) attn_p_##dt##_##D;                                      \
  typedef KBD_STILE(dt, 2 * ATTN_WM, D, KBD_SWIZZLE_128B) attn_q128_##dt##_##D;                                        \
  typedef KBD_STILE(dt, ATTN_WM, 64, KBD_SWIZZLE_128B) attn_qbox_##dt##_##D;
ATTN_TILES(bf16, 64)
ATTN_TILES(bf16, 128)
ATTN_TILES(bf16, 256)
ATTN_TILES(f16, 64)
ATTN_TILES(f16, 128)
ATTN_TILES(f16, 256)

#define ATTN_LAYOUT_FN(D)                                                                                              \
  KBD_HD kbd_smem_plan attn_layout_##D(attn_smem *l) {                                                                 \
    kbd_smem_plan p;                                                                                                   \
    kbd_smem_plan_init(&p);                                                                                            \
    l->q = kbd_smem_plan_stile(&p, "Q tiles", attn_q_bf16_##D, ATTN_CONSUMERS(D));                                     \
    l->k = kbd_smem_plan_stile(&p, "K ring", attn_k_bf16_##D, ATTN_STAGES);                                            \
    l->v = kbd_smem_plan_stile(&p, "V ring", attn_v_bf16_##D, ATTN_STAGES);                                            \
    l->pt = kbd_smem_plan_stile(&p, "P tiles", attn_p_bf16_##D, ATTN_CONSUMERS(D));                                    \
    l->qfull = kbd_smem_plan_mbarriers(&p, "Q full", 1);                                                               \
    l->kfull = kbd_smem_plan_mbarriers(&p, "K full", ATTN_STAGES);                                                     \
    l->kempty = kbd_smem_plan_mbarriers(&p, "K empty", ATTN_STAGES);                                                   \
    l->vfull = kbd_smem_plan_mbarriers(&p, "V full", ATTN_STAGES);                                                     \
    l->vempty = kbd_smem_plan_mbarriers(&p, "V empty", ATTN_STAGES);                                                   \
    l->sdone = kbd_smem_plan_mbarriers(&p, "S done", ATTN_CONSUMERS(D));                                               \
    l->odone = kbd_smem_plan_mbarriers(&p, "O done", ATTN_CONSUMERS(D));                                               \
    l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);                                                       \
    l->sfull = l->pready = l->ocorr = l->ofull = 0; /* the FA4 text's */                                               \
    return p;                                                                                                          \
  }
ATTN_LAYOUT_FN(64)
ATTN_LAYOUT_FN(128)
ATTN_LAYOUT_FN(256)

/* The sm_100a block of head_dim 64 and 128 (attention_kernel_sm100.h, FlashAttention-4's structure): two Q tiles of
 * 128 rows, 512 threads (the TMA and MMA warps, two softmax warpgroups, a correction warpgroup), and the registers
 * setmaxnreg gives each role: 48 + 2 x 200 + 64 = 512 = 4 x 128, the launch budget of 512 threads (FA4 splits
 * 48 / 192 / 80; kbd's softmax spilled a few values at 192). */
#define ATTN_FA4_TM 128
#define ATTN_FA4_BM (2 * ATTN_FA4_TM)
#define ATTN_FA4_THREADS 512
#define ATTN_FA4_REGS_LOAD 48
#define ATTN_FA4_REGS_SOFTMAX 200
#define ATTN_FA4_REGS_CORRECTION 64
KBD_STATIC_ASSERT(ATTN_FA4_REGS_LOAD + 2 * ATTN_FA4_REGS_SOFTMAX + ATTN_FA4_REGS_CORRECTION ==
                      4 * (65536 / ATTN_FA4_THREADS),
                  "attention: the FA4 roles' registers must add up to the 64K of the launch");
/* Its shared memory: both Q tiles, the K and V rings; per tile: Q full, S full (the MMA's commit), P ready (the
 * softmax: P and the row factors stored), O corrected (the correction), O full (the commit of P V). */
#define ATTN_LAYOUT_FA4_FN(D)                                                                                          \
  KBD_HD kbd_smem_plan attn_layout_fa4_##D(attn_smem *l) {                                                             \
    kbd_smem_plan p;                                                                                                   \
    kbd_smem_plan_init(&p);                                                                                            \
    l->q = kbd_smem_plan_stile(&p, "Q tiles", attn_q128_bf16_##D, 2);                                                  \
    l->k = kbd_smem_plan_stile(&p, "K ring", attn_k_bf16_##D, ATTN_STAGES);                                            \
    l->v = kbd_smem_plan_stile(&p, "V ring", attn_v_bf16_##D, ATTN_STAGES);                                            \
    l->qfull = kbd_smem_plan_mbarriers(&p, "Q full", 2);                                                               \
    l->kfull = kbd_smem_plan_mbarriers(&p, "K full", ATTN_STAGES);                                                     \
    l->kempty = kbd_smem_plan_mbarriers(&p, "K empty", ATTN_STAGES);                                                   \
    l->vfull = kbd_smem_plan_mbarriers(&p, "V full", ATTN_STAGES);                                                     \
    l->vempty = kbd_smem_plan_mbarriers(&p, "V empty", ATTN_STAGES);                                                   \
    l->sfull = kbd_smem_plan_mbarriers(&p, "S full", 2);                                                               \
    l->pready = kbd_smem_plan_mbarriers(&p, "P ready", 2);                                                             \
    l->ocorr = kbd_smem_plan_mbarriers(&p, "O corrected", 2);                                                          \
    l->ofull = kbd_smem_plan_mbarriers(&p, "O full", 2);                                                               \
    l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);                                                       \
    l->pt = l->sdone = l->odone = 0; /* the FA3 text's */                                                              \
    return p;                                                                                                          \
  }
ATTN_LAYOUT_FA4_FN(64)
ATTN_LAYOUT_FA4_FN(128)

/* The sm_100a block of head_dim 256 (attention_kernel_sm100_d256.h): one Q tile of 128 rows, 384 threads (the TMA
 * and MMA warps, a softmax warpgroup, a correction warpgroup), two S buffers that alternate by key block. Its shared
 * memory: Q (64 KB), the K and V rings (2 x 32 KB each); per S buffer: S full and P ready; once: Q full, O corrected,
 * O full, O done (the last P V: the softmax runs up to two blocks ahead of O full, too far for a parity wait). */
#define ATTN_FA4_D256_BM ATTN_FA4_TM
#define ATTN_FA4_D256_THREADS 384
KBD_HD kbd_smem_plan attn_layout_fa4_256(attn_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->q = kbd_smem_plan_stile(&p, "Q tile", attn_q128_bf16_256, 1);
  l->k = kbd_smem_plan_stile(&p, "K ring", attn_k_bf16_256, ATTN_STAGES);
  l->v = kbd_smem_plan_stile(&p, "V ring", attn_v_bf16_256, ATTN_STAGES);
  l->qfull = kbd_smem_plan_mbarriers(&p, "Q full", 1);
  l->kfull = kbd_smem_plan_mbarriers(&p, "K full", ATTN_STAGES);
  l->kempty = kbd_smem_plan_mbarriers(&p, "K empty", ATTN_STAGES);
  l->vfull = kbd_smem_plan_mbarriers(&p, "V full", ATTN_STAGES);
  l->vempty = kbd_smem_plan_mbarriers(&p, "V empty", ATTN_STAGES);
  l->sfull = kbd_smem_plan_mbarriers(&p, "S full", 2);
  l->pready = kbd_smem_plan_mbarriers(&p, "P ready", 2);
  l->ocorr = kbd_smem_plan_mbarriers(&p, "O corrected", 1);
  l->ofull = kbd_smem_plan_mbarriers(&p, "O full", 1);
  l->odone = kbd_smem_plan_mbarriers(&p, "O done", 1);
  l->tmem = kbd_smem_plan_array(&p, "tmem slot", kbd_tmem, 1);
  l->pt = l->sdone = 0; /* the FA3 text's */
  return p;
}

/* The kernel text of (arch, head_dim) (attention_kernels.h includes it once per kernel). sm_90a: attention_kernel.h,
 * the FA3 schedule. sm_100a: attention_kernel_sm100.h, FA4's structure (two 128-row Q tiles, a TMA warp, an MMA warp,
 * two softmax warpgroups and a correction warpgroup, S, P and O in Tensor Memory) for head_dim 64 and 128; for
 * head_dim 256 two tiles' S and O do not fit Tensor Memory (2 x (64 + 256) > 512 columns), so
 * attention_kernel_sm100_d256.h runs the same roles on one 128-row tile whose two S buffers alternate by key block:
 * the MMA warp computes S of block j + 1 while the softmax works on block j. The block differs per text (rows,
 * threads, shared-memory plan): attention.cu, compiled for one arch,
 * tells the host which (attn_block_rows, attn_block_plan). nvcc's host pass (KBD_MMA_ARCH 0)
 * must declare the same kernels as the device pass: it learns the target from
 * __CUDA_ARCH_LIST__, so one nvcc call builds one arch (as examples/gemm). */
#define ATTN__LIST_N(...) ATTN__LIST_N_(__VA_ARGS__, 3, 2, 1, 0)
#define ATTN__LIST_N_(a, b, c, n, ...) n
#define ATTN__LIST_FIRST(...) ATTN__LIST_FIRST_(__VA_ARGS__, 0)
#define ATTN__LIST_FIRST_(a, ...) a
#if KBD_MMA_ARCH == 0 && defined(__CUDA_ARCH_LIST__)
#if ATTN__LIST_N(__CUDA_ARCH_LIST__) != 1
#error                                                                                                                 \
    "examples/attention: compile attention.cu / attention_f16.cu for one GPU arch per nvcc call (sm_90a and sm_100a have different kernel texts)"
#endif
#define ATTN__TEXT_ARCH (ATTN__LIST_FIRST(__CUDA_ARCH_LIST__) / 10)
#else
#define ATTN__TEXT_ARCH KBD_MMA_ARCH
#endif
#if ATTN__TEXT_ARCH == 100
#define ATTN_TEXT_64 "attention_kernel_sm100.h"
#define ATTN_TEXT_128 "attention_kernel_sm100.h"
#define ATTN_TEXT_256 "attention_kernel_sm100_d256.h"
#else
#define ATTN_TEXT_64 "attention_kernel.h"
#define ATTN_TEXT_128 "attention_kernel.h"
#define ATTN_TEXT_256 "attention_kernel.h"
#endif

/* P = the probabilities of sc rounded to the input type: pr = kbd_convert(pr, sc) two elements at a time, with one
 * packed cvt (F2FP.PACK_AB) per pair where the element-wise conversion is an F2F each plus a PRMT per pair to pack
 * them into the wgmma A fragment's 32-bit registers (issue 27: 96 of the 128-key block's instructions, now 32).
 * Elements 2i and 2i + 1 of a thread are adjacent columns of one row in every accumulator layout (WGMMA_ACC pairs
 * them in one A-fragment register), so pairs never straddle rows; the rounding is the element-wise one either way
 * (kbd/convert.h). Constant indices on the thread's own registers: after unrolling every element is a scalar. */
#define ATTN__CVT2_(dt) kbd_f32x2_to_##dt##x2
#define ATTN__CVT2(dt) ATTN__CVT2_(dt)
#define ATTN_CONVERT_P(pr, sc, dt)                                                                                     \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_NPT(pr) == KBD_NPT(sc) && KBD_NPT(sc) % 2 == 0 && KBD_LAYOUT(pr) == KBD_LAYOUT(sc),          \
                      "attention: P must be sc's shape, an even number of elements per thread");                       \
    for (int attn_cl_ = 0; attn_cl_ < KBD_LANES_HELD; ++attn_cl_) {                                                    \
      KBD_UNROLL for (int attn_ci_ = KBD_NPT(sc) - 2; attn_ci_ >= 0; attn_ci_ -= 2)                                    \
          ATTN__CVT2(dt)(&(pr).v[attn_cl_][attn_ci_], (sc).v[attn_cl_][attn_ci_], (sc).v[attn_cl_][attn_ci_ + 1]);     \
    }                                                                                                                  \
  } while (0)

/* Key blocks [*kb0, *kb1) that packed rows [r0, r0 + n) of one (batch, kv head) need: all keys, or under the
 * causal mask those up to the last visible one of the last query (a block of rows that wraps to the next head
 * starts over at query 0, so it needs the keys of query seq_q - 1). Split s of `splits` takes its share. */
KBD_HD void attn_key_blocks(int r0, int n, int seq_q, int seq_k, int causal, int bn, int split, int splits, int *kb0,
                            int *kb1) {
  int end = seq_k;
  if (causal) {
    const int last = r0 + n - 1, qmax = last / seq_q != r0 / seq_q ? seq_q - 1 : last % seq_q;
    end = qmax + seq_k - seq_q + 1;
    if (end > seq_k) end = seq_k;
    if (end < 0) end = 0;
  }
  const int nb = (end + bn - 1) / bn, all = (seq_k + bn - 1) / bn, per = (all + splits - 1) / splits;
  *kb0 = split * per < nb ? split * per : nb;
  *kb1 = (split + 1) * per < nb ? (split + 1) * per : nb;
}

/* Does key block [k0, k0 + bn) need the mask for packed rows [r0, r0 + n)? Only at the end of the keys and on
 * the causal diagonal: every other block is fully visible and skips the per-element test. */
KBD_HD int attn_block_masked(int r0, int n, int k0, int bn, int seq_q, int seq_k, int causal) {
  if (k0 + bn > seq_k) return 1;
  if (!causal) return 0;
  const int qmin = (r0 + n - 1) / seq_q != r0 / seq_q ? 0 : r0 % seq_q;
  return k0 + bn - 1 > qmin + seq_k - seq_q;
}
/* The same decision split for a loop: the end of the keys every row of [r0, r0 + n) sees (computed once, with its
 * divides), and then a block needs the mask exactly when k0 + bn > attn_mask_from(...), one compare per block. */
KBD_HD int attn_mask_from(int r0, int n, int seq_q, int seq_k, int causal) {
  if (!causal) return seq_k;
  const int qmin = (r0 + n - 1) / seq_q != r0 / seq_q ? 0 : r0 % seq_q, last = qmin + seq_k - seq_q + 1;
  return last < seq_k ? last : seq_k;
}

/* How many columns of key block [k0, k0 + bn) packed row `row` sees: the keys before seq_k, and under the causal mask
 * those up to its last visible key (its query index is row % seq_q). One compare per element against this bound
 * (a value per row) is what a mask by position costs in the loop. */
KBD_HD int attn_visible_cols(int row, int k0, int seq_q, int seq_k, int causal) {
  int end = seq_k;
  if (causal) {
    const int last = row % seq_q + seq_k - seq_q + 1; /* keys [0, last) */
    end = last < end ? last : end;
  }
  return end - k0;
}

/* The same bound for the sm_90a text's mask without a divide in the loop: t = q0 + r, the packed row's offset from
 * the warpgroup's first query index q0 = mr0 % seq_q (r < ATTN_WM), and qinv = 1 / seq_q rounded up
 * (nextafterf(1.0f / seq_q, INFINITY)). Its query index t % seq_q is t - seq_q when seq_q >= ATTN_WM (t < 2 seq_q:
 * it wraps at most once), else t - floor(t * qinv) seq_q: t < 2 ATTN_WM, and there the quotient from a reciprocal
 * rounded up is exact (the product's error is far below 1 / seq_q, and an exact quotient is never rounded below
 * itself). Returns the end of the keys the row sees (the column bound plus k0): the mask's element test is
 * c < bound - k0, one compare and one select per element with the bound computed once per row (the thread's
 * rows are two per 8 columns of the accumulator, so the compiler shares the row terms across a row's elements).
 * The form is branch-free: a branch per element (a short-circuit && or a ?: on the row) made the masked block
 * 2000 instructions. */
KBD_HD int attn_row_visible(int t, int seq_q, float qinv, int seq_k, int causal) {
  const int wrap = t >= seq_q ? t - seq_q : t, small = t - (int)((float)t * qinv) * seq_q;
  const int qi = seq_q >= ATTN_WM ? wrap : small, last = qi + seq_k - seq_q + 1;
  return causal && last < seq_k ? last : seq_k;
}

/* The FA4 block's range (attention_kernel_sm100.h): its first packed row r0 of rows, how many of its two Q tiles hold
 * rows (1 when rows - r0 <= 128: decode and short sequences run one tile), and the key blocks of split `split`
 * (blocks of bn keys) each tile needs: [kb0, kb0 + nt[t]) (nt[t] = 0 for a tile without rows or without a visible
 * key). The tiles' ranges start together; under the causal mask the later rows usually need more blocks, but not
 * always (a tile whose rows wrap into the next head needs the keys of the head's last query). n = the larger: the
 * blocks the TMA warp loads. */
typedef struct attn_range {
  int rows, r0, tiles, kb0, n, nt[2];
} attn_range;
KBD_HD attn_range attn_fa4_range(const attn_params *p, int bn, int block, int split) {
  attn_range b;
  b.rows = p->group * p->seq_q;
  b.r0 = block * ATTN_FA4_BM;
  b.tiles = b.rows - b.r0 > ATTN_FA4_TM ? 2 : 1;
  b.kb0 = 0;
  b.n = 0;
  for (int t = 0; t < 2; ++t) {
    const int rt = b.r0 + ATTN_FA4_TM * t, m = b.rows - rt < ATTN_FA4_TM ? b.rows - rt : ATTN_FA4_TM;
    int kb0 = 0, kb1 = 0;
    if (t < b.tiles) attn_key_blocks(rt, m, p->seq_q, p->seq_k, p->causal, bn, split, p->splits, &kb0, &kb1);
    b.nt[t] = kb1 - kb0;
    if (b.nt[t] > 0) b.kb0 = kb0; /* the same for both tiles when both have blocks */
    if (b.nt[t] > b.n) b.n = b.nt[t];
  }
  return b;
}

/* The block of this build's kernel text for head_dim d: packed query rows per block and the shared-memory plan (its
 * bytes are the launch's dynamic shared memory). attention.cu defines them: it is compiled for one arch (or the CPU
 * machine's), which picks the text; attention_run.c, host code built once for every arch, asks. */
KBD_EXTERN_C int attn_block_rows(int head_dim);
KBD_EXTERN_C kbd_smem_plan attn_block_plan(int head_dim, attn_smem *l);

/* The kernels: one per (type, head_dim); causal and splits are run-time parameters. */
KBD_KERNEL_DECL(attn_bf16_64, attn_params);
KBD_KERNEL_DECL(attn_bf16_128, attn_params);
KBD_KERNEL_DECL(attn_bf16_256, attn_params);
KBD_KERNEL_DECL(attn_f16_64, attn_params);
KBD_KERNEL_DECL(attn_f16_128, attn_params);
KBD_KERNEL_DECL(attn_f16_256, attn_params);
KBD_KERNEL_DECL(attn_combine, attn_combine_params);

#define ATTN_COMBINE_THREADS 128

#endif
