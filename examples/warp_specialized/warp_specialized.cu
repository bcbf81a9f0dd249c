/* warp_specialized.cu - y = A x with a producer warp and two consumer warpgroups (see warp_specialized.h).
 *
 * The template for kernels whose warps do different jobs. Roles are warp ranges; every barrier the
 * kernel uses belongs to a range, so no warp ever waits for one that is busy elsewhere:
 *   - full0/1:  the producer arrives when stage 0/1 holds new rows; the consumers wait on it.
 *   - empty0/1: the consumers arrive when they are done with stage s; the producer waits on it before
 *               refilling s. Each barrier counts all 9 warps (288 threads): arrivals plus waiters.
 *   - consumers0 / consumers1: a warpgroup's own reduction at the end of its row.
 * One barrier per stage and direction: a named barrier instance completes when its count is reached, so
 * the producer running one stage ahead must not arrive twice at the same one.
 *
 * On the GPU the producer's copy is plain loads and stores (the TMA version comes with kbd_tma_load and
 * mbarriers, which replace the named barriers below). CPU mode checks the pacing: drop the empty wait and
 * the race checker reports the producer overwriting a stage a consumer still reads.
 */
#include "warp_specialized.h"

KBD_KERNEL(ws_gemv, WS_THREADS, ws_params) {
  KBD_WARP_RANGE(consumers0, 0, 4);
  KBD_WARP_RANGE(consumers1, 4, 4);
  KBD_WARP_RANGE(producer, 8, 1);
  KBD_WARP_RANGE(full0, 0, 9);
  KBD_WARP_RANGE(full1, 0, 9);
  KBD_WARP_RANGE(empty0, 0, 9);
  KBD_WARP_RANGE(empty1, 0, 9);

  /* the ring as one shared tile: row 2s + j is stage s's row for consumer warpgroup j (WS_CHUNK floats) */
  KBD_SHARED_STILE(ws_ring, ring);

  const long long pairs = (p.rows + 1) / 2, chunks = (p.cols + WS_CHUNK - 1) / WS_CHUNK;
  const long long my_pairs = kbd_block_x() < pairs ? (pairs - 1 - kbd_block_x()) / kbd_grid_x() + 1 : 0;
  const long long steps = my_pairs * chunks; /* ring steps of this block, the same count in every role */

  if (kbd_scope_contains(producer)) {
    KBD_TILE(f32, 1, WS_CHUNK, KBD_WARP) t;
    for (long long it = 0; it < steps; ++it) {
      const int s = (int)(it % WS_STAGES);
      const long long pair = kbd_block_x() + (it / chunks) * kbd_grid_x(), c0 = (it % chunks) * WS_CHUNK;
      /* a select, not an array of scopes: an array indexed at run time would live in local memory */
      const kbd_scope full = s == 0 ? full0 : full1, empty = s == 0 ? empty0 : empty1;
      if (it >= WS_STAGES) kbd_scope_sync(empty); /* the consumers are done with this stage's last fill */
      for (int j = 0; j < 2; ++j) {
        const long long row = 2 * pair + j;
        /* a missing second row (odd rows) or the tail past cols loads as zeros */
        const float *src = p.a + (row < p.rows ? row : 0) * p.cols;
        kbd_load(t, src, row < p.rows ? p.cols : 0, c0);
        kbd_stile_store_at(ring, t, s * 2 + j, 0);
      }
      kbd_scope_arrive(full);
    }
    return;
  }

  /* consumers: warpgroup g multiplies row slot g of every stage by x */
  const int g = kbd_scope_contains(consumers0) ? 0 : 1;
  const kbd_scope mine = g == 0 ? consumers0 : consumers1;
  KBD_TILE(f32, 1, WS_CHUNK, KBD_WARPGROUP) a, x, acc;
  kbd_zero(acc);
  for (long long it = 0; it < steps; ++it) {
    const int s = (int)(it % WS_STAGES);
    const long long pair = kbd_block_x() + (it / chunks) * kbd_grid_x(), c0 = (it % chunks) * WS_CHUNK;
    const kbd_scope full = s == 0 ? full0 : full1, empty = s == 0 ? empty0 : empty1;
    kbd_load(x, p.x, p.cols, c0); /* global, no ring: x is shared by every row */
    kbd_scope_sync(full);
    kbd_stile_load_at(a, ring, s * 2 + g, 0);
    /* the producer's next wait on this stage is for step it + WS_STAGES; none after the last ones */
    if (it + WS_STAGES < steps) kbd_scope_arrive(empty);
    kbd_fma(acc, a, x, acc);
    if (c0 + WS_CHUNK >= p.cols) { /* the row's last chunk: reduce it over the warpgroup */
      kbd_lanes_f32 part;
      float dot;
      kbd_thread_reduce(part, acc, KBD_RED_SUM);
      kbd_scope_reduce(dot, mine, part, KBD_RED_SUM);
      const long long row = 2 * pair + g;
      if (row < p.rows && kbd_scope_warp(mine) == 0) {
        KBD_ELECT_ONE { p.y[row] = dot; }
      }
      kbd_zero(acc);
    }
  }
}
