/* attention_store_o.h - the sm_100a attention kernels' O store (docs/attention.md, "How O is stored"):
 * attention_kernel_sm100.h (head_dim 64 and 128, two Q tiles) and attention_kernel_sm100_d256.h (head_dim 256, one)
 * both include it and call attn_fa4_store_o once a Q tile's O is staged in that tile's Q.
 *
 * One function where the two texts had the same block twice: the store does not depend on anything that makes the
 * texts differ (the number of tiles, the roles' warps, Tensor Memory's layout), only on the tile's bytes, its first
 * row, the head's rows and head_dim. KBD_DEV inlines it, so head_dim, a constant of each text, still fixes the box
 * loop at compile time. Copy it with the text it serves.
 */
#ifndef ATTENTION_STORE_O_H
#define ATTENTION_STORE_O_H

#include "attention.h"

/* One 64 x 64 box of a 16-bit O (the map's box, as of Q's): the TMA copies bytes, 64 rows of 128, whatever the
 * element type (bf16 or f16: the map's). */
typedef KBD_STILE(bf16, ATTN_WM, 64, KBD_SWIZZLE_128B) attn_obox;

/* The Q tile at q (128 rows, head_dim d, box-major: attention.h, attn_q128_*) holds O in the input type, written by
 * the threads of `me`, thread i row r0 + i of (batch, kv head) bh. Each thread fences its own stores for the TMA's
 * async-proxy reads; after the scope's barrier one elected thread stores the tile's boxes that start before the end of
 * the head's `rows` packed rows (the map's extent clips the rest of the last one) and commits them as one bulk group.
 * The caller waits for that group's reads (kbd_bulk_wait_group_read) before the tile's shared memory is released. */
KBD_DEV void attn_fa4_store_o(const attn_params *p, kbd_scope me, unsigned char *q, int d, int bh, int r0, int rows) {
  kbd_fence_proxy_async(); /* this thread's stores, before the TMA's async-proxy reads */
  kbd_scope_sync(me);
  if (kbd_scope_warp(me) == 0) {
    KBD_ELECT_ONE {
      for (int c = 0; c < d / 64; ++c)
        for (int h = 0; h < ATTN_FA4_TM / ATTN_WM && r0 + ATTN_WM * h < rows; ++h) {
          const size_t at = (size_t)(ATTN_FA4_TM * c + ATTN_WM * h) * 128u; /* box (c, h) of the tile */
          attn_obox box = KBD_SMEM_PLAN_STILE(attn_obox, q, at, 0);
          kbd_tma_store3d(&p->om, box, bh, r0 + ATTN_WM * h, 64 * c);
        }
      kbd_bulk_commit_group();
    }
  }
}

#endif /* ATTENTION_STORE_O_H */
