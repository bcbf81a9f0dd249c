/* attention.cu - the bf16 attention kernels (one text per head_dim: attention_kernels.h) and the combine step of
 * flash-decoding; attention_f16.cu holds the f16 kernels (two files: a parallel build compiles them at once). See
 * attention.h for the structure and docs/attention.md for the walkthrough. */
#include <math.h>

#include "attention.h"

#define ATTN_DT bf16
#define ATTN_T kbd_bf16
#include "attention_kernels.h"
#undef ATTN_DT
#undef ATTN_T

/* The block of the texts this file was built with (attention.h: ATTN_TEXT_*): on sm_100a FA4's 256 rows for head_dim
 * 64 and 128 and one 128-row tile for 256; on sm_90a the FA3 text's 64 per consumer warpgroup. */
#define ATTN__FA4 (ATTN__TEXT_ARCH == 100)
KBD_EXTERN_C int attn_block_rows(int head_dim) {
  if (ATTN__FA4) return head_dim == 256 ? ATTN_FA4_D256_BM : ATTN_FA4_BM;
  return ATTN_BM(head_dim);
}
KBD_EXTERN_C kbd_smem_plan attn_block_plan(int head_dim, attn_smem *l) {
  if (ATTN__FA4)
    return head_dim == 64 ? attn_layout_fa4_64(l) : head_dim == 128 ? attn_layout_fa4_128(l) : attn_layout_fa4_256(l);
  return head_dim == 64 ? attn_layout_64(l) : head_dim == 128 ? attn_layout_128(l) : attn_layout_256(l);
}
#undef ATTN__FA4

/* Flash-decoding's second step: one warp per query row merges the splits' normalised outputs O_s with weights
 * exp(lse_s - m) / sum_s exp(lse_s - m), m = max_s lse_s; lse = m + ln(sum). A split that saw no key has
 * lse_s = -inf and weight 0; a row no split saw stays O = 0, lse = -inf. */
KBD_KERNEL(attn_combine, ATTN_COMBINE_THREADS, attn_combine_params) {
  const long long row = (long long)kbd_block_x() * (ATTN_COMBINE_THREADS / 32) + kbd_warp_id();
  if (row >= p.rows) return; /* the whole warp */
  float m = -INFINITY;
  for (int s = 0; s < p.splits; ++s)
    m = kbd_fmax_ptx(m, kbd_ld_global(&p.lse_part[s * p.rows + row]));
  KBD_TILE(f32, 1, 256, KBD_WARP) acc, part;
  kbd_zero(acc);
  float sum = 0.0f;
  if (m != -INFINITY) {
    for (int s = 0; s < p.splits; ++s) {
      const float w = expf(kbd_ld_global(&p.lse_part[s * p.rows + row]) - m);
      kbd_load(part, p.o_part + (s * p.rows + row) * p.head_dim, p.head_dim, 0);
      kbd_mul_s(part, part, w);
      kbd_add(acc, acc, part);
      sum += w;
    }
    kbd_mul_s(acc, acc, 1.0f / sum);
  }
  if (p.f16) {
    KBD_TILE(f16, 1, 256, KBD_WARP) out;
    kbd_convert(out, acc);
    kbd_store((kbd_f16 *)p.o + row * p.head_dim, out, p.head_dim, 0);
  } else {
    KBD_TILE(bf16, 1, 256, KBD_WARP) out;
    kbd_convert(out, acc);
    kbd_store((kbd_bf16 *)p.o + row * p.head_dim, out, p.head_dim, 0);
  }
  if (p.lse) {
    KBD_ELECT_ONE { kbd_st_global(&p.lse[row], m == -INFINITY ? -INFINITY : m + logf(sum)); }
  }
}
