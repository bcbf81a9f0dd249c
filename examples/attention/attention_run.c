/* attention_run.c - host side of the attention kernels: checks the arguments, builds the tensor maps and
 * launches (attention.h documents the calls). Every wrong argument is a KBD_ERR_INVALID status naming it, and
 * nothing is launched. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

int attn_pick_splits(const attn_args *a, int sms) {
  const int bm = attn_block_rows(a->head_dim), bn = ATTN_BN(a->head_dim);
  const long long rows = (long long)(a->heads_q / (a->heads_kv > 0 ? a->heads_kv : 1)) * a->seq_q;
  const long long blocks = (rows + bm - 1) / bm * a->batch * a->heads_kv;
  const int kblocks = (a->seq_k + bn - 1) / bn;
  int s = 1;
  while (s < ATTN_SPLITS_MAX && blocks * s < sms && kblocks / (2 * s) >= 2)
    s *= 2;
  return s;
}

static kbd_status attn_map(kbd_tensor_map *m, const void *ptr, int dtype, int d, long long rows, long long heads,
                           uint32_t box_rows) {
  kbd_tensor_map_desc t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype == ATTN_F16 ? KBD_TMAP_DT_F16 : KBD_TMAP_DT_BF16;
  t.rank = 3;
  t.global_address = ptr;
  t.global_dims[0] = (uint64_t)d;
  t.global_dims[1] = (uint64_t)rows;
  t.global_dims[2] = (uint64_t)heads;
  t.global_strides[0] = (uint64_t)d * 2u;
  t.global_strides[1] = (uint64_t)rows * (uint64_t)d * 2u;
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
  if (!kbd_ok(s = attn_map(&p.q, a->q, a->dtype, d, rows, heads, ATTN_WM))) return s;
  if (!kbd_ok(s = attn_map(&p.k, a->k, a->dtype, d, a->seq_k, heads, (uint32_t)ATTN_BN(d)))) return s;
  if (!kbd_ok(s = attn_map(&p.v, a->v, a->dtype, d, a->seq_k, heads, (uint32_t)ATTN_BN(d)))) return s;
  p.seq_q = a->seq_q, p.seq_k = a->seq_k, p.group = group;
  p.causal = a->causal != 0, p.splits = a->splits;
  p.scale = a->scale > 0.0f ? a->scale : 1.0f / sqrtf((float)d);
  const long long total = heads * rows; /* = batch * heads_q * seq_q */
  if (a->splits == 1) {
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
