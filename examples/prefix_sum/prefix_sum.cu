/* prefix_sum.cu - the CTA part of a scan: a 1 x 1024 f32 tile scanned by 256 threads.
 *
 * Thread t holds elements 4t..4t+3 (one 16-byte load): it scans them in registers (3 FADD), the warp
 * does Hillis-Steele on the thread totals (5 shfl.sync.up), warp totals meet in shared memory behind
 * one barrier and every warp scans them itself (5 more shfl.sync.up), one trailing barrier. Copy this
 * for any block-local scan; swap KBD_RED_SUM for KBD_RED_MAX / KBD_RED_MIN, 0 for 1 for exclusive.
 */
#include "prefix_sum.h"

KBD_KERNEL(prefix_sum, PREFIX_SUM_THREADS, prefix_sum_params) {
  KBD_TILE(f32, 1, PREFIX_SUM_TILE, KBD_CTA) t, y;
  const long long start = (long long)kbd_block_x() * PREFIX_SUM_TILE;
  kbd_load(t, p.x, p.n, start); /* the masked tail reads 0 and is not stored */
  float total;
  kbd_scan(y, total, t, KBD_RED_SUM, 0);
  kbd_store(p.y, y, p.n, start);
  if (kbd_warp_id() == 0) {
    KBD_FOR_LANES(lane) {
      if (lane == 0) p.block_total[kbd_block_x()] = total;
    }
  }
}
