/* sum_reduce.cu - a 1024-element tile to one value: the template for any block-level reduction.
 *
 * 256 threads x 4 floats: each thread loads one 16-byte chunk (coalesced), folds its 4 values in
 * registers (3 FADD), the warp butterflies (5 SHFL + 5 FADD), warp totals meet in 32 words of shared
 * memory behind one barrier (plus one trailing barrier). Same source for sm_90a, sm_100a and the CPU.
 */
#include "sum_reduce.h"

KBD_KERNEL(sum_reduce, SUM_REDUCE_THREADS, sum_reduce_params) {
  KBD_TILE(f32, 1, SUM_REDUCE_TILE, KBD_CTA) t;
  const long long start = (long long)kbd_block_x() * SUM_REDUCE_TILE;
  kbd_load(t, p.x, p.n, start); /* the tail reads 0: the identity of a sum, no padding needed */
  float s;
  kbd_reduce(s, t, KBD_RED_SUM);
  /* s is uniform over the block; one thread writes it (on the CPU: warp 0, lane 0). */
  if (kbd_warp_id() == 0) {
    KBD_FOR_LANES(lane) {
      if (lane == 0) p.out[kbd_block_x()] = s;
    }
  }
}
