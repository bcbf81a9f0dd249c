/* attention_run.c - host side of the attention kernels: checks the arguments, builds the tensor maps and
 * launches (attention.h documents the calls). Every wrong argument is a KBD_ERR_INVALID status naming it, and
 * nothing is launched. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <kbd/tune.h>
#include <kbd/tune_table.h>

#include "attention.h"

typedef kbd_status (*attn_kernel_fn)(kbd_launch_cfg, attn_params);

static kbd_status attn_bad(const char *fmt, ...) KBD_PRINTF(1, 2);
static kbd_status attn_bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kbd_status s = kbd_status_vmake(KBD_ERR_INVALID, fmt, ap);
  va_end(ap);
  return s;
}

static kbd_status attn_check(const attn_args *a) {
  if (!a) return attn_bad("attn_run: args is NULL");
  if (a->dtype != ATTN_BF16 && a->dtype != ATTN_F16)
    return attn_bad("attn_run: dtype = %d: ATTN_BF16 or ATTN_F16", (int)a->dtype);
  if (a->head_dim != 64 && a->head_dim != 128 && a->head_dim != 256)
    return attn_bad("attn_run: head_dim = %d: the kernels exist for 64, 128 and 256", a->head_dim);
  if (a->batch < 1) return attn_bad("attn_run: batch = %d: must be >= 1", a->batch);
  if (a->heads_q < 1 || a->heads_kv < 1)
    return attn_bad("attn_run: heads_q = %d, heads_kv = %d: both must be >= 1", a->heads_q, a->heads_kv);
  if (a->heads_q % a->heads_kv != 0)
    return attn_bad("attn_run: heads_q = %d is not a multiple of heads_kv = %d (grouped-query attention "
                    "shares each kv head among heads_q / heads_kv q heads)",
                    a->heads_q, a->heads_kv);
  if (a->seq_q < 1 || a->seq_k < 1)
    return attn_bad("attn_run: seq_q = %d, seq_k = %d: both must be >= 1", a->seq_q, a->seq_k);
  if ((long long)a->heads_q * a->seq_q > (1ll << 30) || a->seq_k > (1 << 30))
    return attn_bad("attn_run: heads_q x seq_q = %lld or seq_k = %d is past 2^30", (long long)a->heads_q * a->seq_q,
                    a->seq_k);
  if ((long long)a->batch * a->heads_kv > 65535)
    return attn_bad("attn_run: batch x heads_kv = %lld: at most 65535 (the grid's y dimension)",
                    (long long)a->batch * a->heads_kv);
  const void *need[4] = {a->q, a->k, a->v, a->o};
  const char *need_names[4] = {"q", "k", "v", "o"};
  for (int i = 0; i < 4; ++i)
    if (!need[i]) return attn_bad("attn_run: %s is NULL", need_names[i]);
  if (!(a->scale >= 0.0f) || isinf(a->scale))
    return attn_bad("attn_run: scale = %g: must be finite and >= 0 (0 picks 1/sqrt(head_dim))", (double)a->scale);
  if (a->splits < 1 || a->splits > ATTN_SPLITS_MAX)
    return attn_bad("attn_run: splits = %d: must be in 1..%d", a->splits, ATTN_SPLITS_MAX);
  if (a->kv_rows != 0 && a->kv_rows < a->seq_k)
    return attn_bad("attn_run: kv_rows = %d is below seq_k = %d: each k/v head must hold seq_k rows (0: seq_k)",
                    a->kv_rows, a->seq_k);
  if (a->splits > 1 && !a->workspace)
    return attn_bad("attn_run: splits = %d needs a workspace of attn_workspace_bytes() = %zu bytes", a->splits,
                    attn_workspace_bytes(a));
  const void *ptrs[5] = {a->q, a->k, a->v, a->o, a->workspace};
  const char *names[5] = {"q", "k", "v", "o", "workspace"};
  for (int i = 0; i < 5; ++i)
    if (ptrs[i] && (uintptr_t)ptrs[i] % 128u != 0)
      return attn_bad("attn_run: %s = %p is not 128-byte aligned (the TMA reads swizzled boxes from it; kbd_malloc "
                      "memory is)",
                      names[i], ptrs[i]);
  return kbd_status_ok();
}

size_t attn_workspace_bytes(const attn_args *a) {
  if (!a || a->splits <= 1) return 0;
  const size_t rows = (size_t)a->batch * (size_t)a->heads_q * (size_t)a->seq_q;
  return (size_t)a->splits * rows * ((size_t)a->head_dim + 1) * sizeof(float) + 128;
}

/* ---- the split count: kbd_tune_pick over 1, 2, 4 .. ATTN_SPLITS_MAX ------------------------------------------ */

typedef struct attn_tune_shape {
  const attn_args *a;
  int arch, sms;
} attn_tune_shape;

static int attn_split_key_blocks(const attn_args *a) {
  return (a->seq_k + ATTN_BN(a->head_dim) - 1) / ATTN_BN(a->head_dim);
}

static int attn_splits_valid(const void *config, const void *shape, char *why, size_t why_len) {
  const int s = *(const int *)config, kb = attn_split_key_blocks(((const attn_tune_shape *)shape)->a);
  /* a split of fewer than 2 key blocks never fills the K/V double buffer: its CTA is all prologue and epilogue */
  if (s > 1 && kb < 2 * s) return snprintf(why, why_len, "%d key blocks: fewer than 2 per split", kb), 0;
  return 1;
}

/* Per-arch figures (as the GEMM's model: the clock, HBM bandwidth) and the kernels' per-key-block cycles from the SASS
 * loop report (kbd/tune_table.h): the MMA loop's tensor cycles and issue slots, and on sm_100a the softmax warps'
 * loop (MUFU), which runs beside it. */
double attn_splits_estimate(const attn_args *a, int splits, int arch, int sms) {
  const double clk = arch == 90 ? 1.83e9 : 1.85e9, hbm = arch == 90 ? 3.35e12 : 8.0e12;
  const int d = a->head_dim, bn = ATTN_BN(d), bm = attn_block_rows(d) > 0 ? attn_block_rows(d) : 128;
  char name[32];
  snprintf(name, sizeof name, "attn_%s_%d", a->dtype == ATTN_F16 ? "f16" : "bf16", d);
  const kbd_tune_loop *mma = kbd_tune_loop_find(name, arch, "main");
  double kb = mma ? fmax((double)mma->tc, (double)(mma->iter + mma->mma)) : 1000.0;
  /* the softmax warps' loop of sm_100a runs beside the MMA warp's: the slower sets the pace */
  for (int i = 0; i < KBD_TUNE_LOOPS; ++i)
    if (kbd_tune_loops[i].arch == arch && !strcmp(kbd_tune_loops[i].kernel, name) &&
        strcmp(kbd_tune_loops[i].loop, "main"))
      kb = fmax(kb, (double)(kbd_tune_loops[i].iter + kbd_tune_loops[i].mma));
  const int group = a->heads_q / (a->heads_kv > 0 ? a->heads_kv : 1);
  const long long rows = (long long)group * a->seq_q, heads = (long long)a->batch * a->heads_kv;
  const long long blocks = (rows + bm - 1) / bm * heads, ctas = blocks * splits;
  const long long kblocks = attn_split_key_blocks(a), per_split = (kblocks + splits - 1) / splits;
  const double waves = (double)((ctas + sms - 1) / sms);
  /* every CTA loads its Q tile and sets up (about 1 us) before its first key block */
  const double compute = waves * ((double)per_split * kb + 1800.0) / clk;
  const double kv_bytes = (double)blocks * (double)kblocks * bn * d * 2.0 * 2.0;
  const double total = (double)a->batch * a->heads_q * a->seq_q;
  double t = fmax(compute, kv_bytes / hbm) + 3e-6;
  /* splits > 1: the partial outputs go out in f32 and come back for the combine kernel, a second launch */
  if (splits > 1) t += (double)splits * total * (d + 1) * 4.0 * 2.0 / hbm + 3e-6;
  return t;
}

static double attn_tune_estimate(const void *config, const void *shape) {
  const attn_tune_shape *x = (const attn_tune_shape *)shape;
  return attn_splits_estimate(x->a, *(const int *)config, x->arch, x->sms);
}

int attn_pick_splits(const attn_args *a, int sms) {
  if (!a || a->head_dim <= 0 || a->seq_k < 1 || a->batch < 1 || a->heads_kv < 1) return 1;
  static const int counts[7] = {1, 2, 4, 8, 16, 32, 64};
  static const char *const names[7] = {"s1", "s2", "s4", "s8", "s16", "s32", "s64"};
  KBD_STATIC_ASSERT(ATTN_SPLITS_MAX == 64, "the candidates are the powers of two up to ATTN_SPLITS_MAX");
  kbd_tune_candidate cand[7];
  for (int i = 0; i < 7; ++i)
    cand[i].name = names[i], cand[i].config = &counts[i];
  kbd_tune_device dev;
  if (!kbd_ok(kbd_tune_device_get(&dev))) return 1;
  attn_tune_shape x;
  x.a = a, x.arch = dev.arch >= 100 ? 100 : 90, x.sms = sms > 0 ? sms : dev.sms;
  kbd_tune_space sp;
  memset(&sp, 0, sizeof sp);
  sp.op = "attn_splits", sp.cand = cand, sp.count = 7, sp.default_index = 0, sp.shape = &x;
  sp.valid = attn_splits_valid, sp.estimate = attn_tune_estimate; /* no launcher: the model or the cache decides */
  const int group = a->heads_q / a->heads_kv;
  const long long dims[3] = {(long long)a->batch * a->heads_kv, (long long)group * a->seq_q, a->seq_k};
  char dtype[32], key[KBD_TUNE_KEY_MAX];
  snprintf(dtype, sizeof dtype, "%s.d%d.sms%d", a->dtype == ATTN_F16 ? "f16" : "bf16", a->head_dim, x.sms);
  kbd_tune_result r;
  kbd_status s = kbd_tune_key_make(key, sizeof key, "attn_splits", x.arch, dev.name, dtype, dims, 3);
  if (kbd_ok(s)) s = kbd_tune_pick(&sp, key, a->tune, &r);
  if (!kbd_ok(s)) {
    fprintf(stderr, "attn_pick_splits: %s: one split\n", s.msg);
    return 1;
  }
  return counts[r.index];
}

/* rows of each head are read; heads are `stride` rows apart (a KV cache's head holds its whole planned context, of
 * which the TMA reads the first rows: the box past `rows` is zero-filled, never the next positions' stale keys). */
static kbd_status attn_map(kbd_tensor_map *m, const void *ptr, int dtype, int d, long long rows, long long stride,
                           long long heads, uint32_t box_rows) {
  kbd_tensor_map_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype == ATTN_F16 ? KBD_TMAP_DT_F16 : KBD_TMAP_DT_BF16;
  t.rank = 3;
  t.global_address = ptr;
  t.global_dims[0] = (uint64_t)d;
  t.global_dims[1] = (uint64_t)rows;
  t.global_dims[2] = (uint64_t)heads;
  t.global_strides[0] = (uint64_t)d * 2u;
  t.global_strides[1] = (uint64_t)stride * (uint64_t)d * 2u;
  t.box_dims[0] = 64; /* 128 bytes: one 128B-swizzle span; a tile is head_dim / 64 boxes side by side */
  t.box_dims[1] = box_rows;
  t.box_dims[2] = 1;
  for (int i = 0; i < 3; ++i)
    t.element_strides[i] = 1;
  t.interleave = KBD_TMAP_INTERLEAVE_NONE;
  t.swizzle = KBD_TMAP_SWIZZLE_128B;
  t.l2_promotion = KBD_TMAP_L2_256B;
  t.oob_fill = KBD_TMAP_OOB_ZERO;
  return kbd_tensor_map_encode(m, &t);
}

kbd_status attn_run(const attn_args *a) {
  kbd_status s = attn_check(a);
  if (!kbd_ok(s)) return s;
  const int d = a->head_dim, group = a->heads_q / a->heads_kv;
  const long long heads = (long long)a->batch * a->heads_kv, rows = (long long)group * a->seq_q;
  attn_params p;
  memset(&p, 0, sizeof p);
  const long long kv_rows = a->kv_rows ? a->kv_rows : a->seq_k;
  if (!kbd_ok(s = attn_map(&p.q, a->q, a->dtype, d, rows, rows, heads, ATTN_WM))) return s;
  if (!kbd_ok(s = attn_map(&p.k, a->k, a->dtype, d, a->seq_k, kv_rows, heads, (uint32_t)ATTN_BN(d)))) return s;
  if (!kbd_ok(s = attn_map(&p.v, a->v, a->dtype, d, a->seq_k, kv_rows, heads, (uint32_t)ATTN_BN(d)))) return s;
  p.seq_q = a->seq_q, p.seq_k = a->seq_k, p.group = group;
  p.causal = a->causal != 0, p.splits = a->splits;
  p.scale = a->scale > 0.0f ? a->scale : 1.0f / sqrtf((float)d);
  const long long total = heads * rows; /* = batch * heads_q * seq_q */
  if (a->splits == 1) {
    /* the kernels store O through the TMA: the map's rows extent is where the last query block's rows are clipped */
    if (!kbd_ok(s = attn_map(&p.om, a->o, a->dtype, d, rows, rows, heads, ATTN_WM))) return s;
    p.o = a->o;
    p.lse = a->lse;
  } else {
    p.o_part = (float *)a->workspace;
    p.lse_part = p.o_part + (size_t)a->splits * (size_t)total * (size_t)d;
  }

  attn_smem l;
  const kbd_smem_plan plan = attn_block_plan(d, &l);
  if (!kbd_ok(s = kbd_smem_plan_status(&plan))) return s;
  const attn_kernel_fn kernels[2][3] = {{attn_bf16_64, attn_bf16_128, attn_bf16_256},
                                        {attn_f16_64, attn_f16_128, attn_f16_256}};
  const attn_kernel_fn kernel = kernels[a->dtype][d == 64 ? 0 : d == 128 ? 1 : 2];
  const int bm = attn_block_rows(d);
  const long long qblocks = (rows + bm - 1) / bm;
  if (qblocks > 0x7fffffffll) return attn_bad("attn_run: %lld query blocks: too many", qblocks);
  s = kernel(kbd_cfg(kbd_dim((unsigned)qblocks, (unsigned)heads, (unsigned)a->splits), plan.bytes, NULL), p);
  if (!kbd_ok(s) || a->splits == 1) return s;

  attn_combine_params c;
  c.o_part = p.o_part, c.lse_part = p.lse_part, c.o = a->o, c.lse = a->lse;
  c.rows = total, c.head_dim = d, c.splits = a->splits, c.f16 = a->dtype == ATTN_F16;
  const long long per = ATTN_COMBINE_THREADS / 32;
  return attn_combine(kbd_cfg(kbd_dim((unsigned)((total + per - 1) / per), 1, 1), 0, NULL), c);
}
