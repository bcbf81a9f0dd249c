/* kbd/device.h - device-wide reduce and single-pass scan over n elements (f32, i32; sum, max, min).
 *
 * Host API (plain C, both modes):
 *   size_t kbd_device_reduce_workspace_bytes(long long n);
 *   kbd_status kbd_device_reduce_f32(const float *in, long long n, float *out, int op, void *ws, void *stream);
 *   kbd_status kbd_device_reduce_i32(const int32_t *in, long long n, int32_t *out, int op, void *ws, void *stream);
 *   size_t kbd_device_scan_workspace_bytes(long long n);
 *   kbd_status kbd_device_scan_f32(const float *in, float *out, long long n, int op, int exclusive, void *ws,
 *                                  void *stream);
 *   kbd_status kbd_device_scan_i32(...same with int32_t...);
 * in/out/ws are device memory (kbd_malloc); *out of a reduce is one element in device memory. op is
 * KBD_RED_SUM, KBD_RED_MAX or KBD_RED_MIN with the semantics of kbd/reduce.h (max/min as PTX max.f32:
 * NaN ignored, +0 > -0; i32 sums wrap). n == 0: a reduce writes the empty result (0, -inf, +inf, or
 * INT32_MIN / INT32_MAX), a scan writes nothing.
 *
 * The kernels live in exactly one kernel translation unit of the program:
 *     #define KBD_DEVICE_IMPLEMENTATION
 *     #include <kbd/device.h>
 * (a .cu file compiled by nvcc, or as C with -DKBD_CPU - see examples/prefix_sum).
 *
 * Algorithms (docs/design/device-scan.md):
 *  - reduce: min(tiles, 1024) blocks of 256 threads grid-stride over 4096-element tiles, accumulating
 *    elementwise in registers (one global read per element, 16-byte loads), one CTA reduction per block;
 *    each block stores its partial and takes a ticket (atom.acq_rel); the block that takes the last
 *    ticket reduces the partials. The grid depends only on n, so the summation order - and so the f32
 *    result - is the same on the CPU and on every GPU, run after run.
 *  - scan: single pass with decoupled look-back. A block takes its tile index from an atomic ticket (so
 *    it only ever waits for blocks that started earlier), scans its 4096-element tile, publishes the tile
 *    aggregate (flag A), then warp 0 looks back over the 32 preceding tiles at a time: it waits until all
 *    32 status words are published, combines the aggregates up to the nearest tile that has published
 *    its inclusive prefix (flag P), and moves the window further back if none has. It then publishes its
 *    own inclusive prefix (P) and the block adds the exclusive prefix to its tile. Status words are 64 bit
 *    (flag << 32 | value) written with st.release.gpu and read with ld.acquire.gpu, so flag and value
 *    are always seen together. i32 results are exact and deterministic; f32 sums associate differently
 *    depending on which predecessors had published P when a block looked back (as in CUB): every output
 *    is within the documented error bound, but the bits may differ from run to run.
 */
#ifndef KBD_DEVICE_H
#define KBD_DEVICE_H

#include "config.h"

#include <math.h>

#include "grid.h"
#include "launch.h"
#include "memory.h"
#include "ops.h"
#include "status.h"

#define KBD_DEV_THREADS 256
#define KBD_DEV_TILE 4096
#define KBD_DEV_REDUCE_MAX_BLOCKS 1024
#define KBD_DEV_HDR_WORDS 4 /* ticket, done, 2 pad words: keeps the status array 16-byte aligned */

typedef struct kbd_dev_reduce_params {
  const void *in;
  void *out;
  long long n;
  uint32_t *ws;
} kbd_dev_reduce_params;

typedef struct kbd_dev_scan_params {
  const void *in;
  void *out;
  long long n;
  int excl;
  uint32_t *ws;
} kbd_dev_scan_params;

/* (dtype token, C type, op name, op id) for every kernel instantiated. */
#define KBD_DEV_KERNELS(X)                                                                                             \
  X(f32, float, sum, KBD_RED_SUM)                                                                                      \
  X(f32, float, max, KBD_RED_MAX)                                                                                      \
  X(f32, float, min, KBD_RED_MIN)                                                                                      \
  X(i32, int32_t, sum, KBD_RED_SUM)                                                                                    \
  X(i32, int32_t, max, KBD_RED_MAX)                                                                                    \
  X(i32, int32_t, min, KBD_RED_MIN)

#define KBD_DEV_DECLARE(tok, ctype, opn, op)                                                                           \
  KBD_KERNEL_DECL(kbd_dev_reduce_##tok##_##opn, kbd_dev_reduce_params);                                                \
  KBD_KERNEL_DECL(kbd_dev_scan_##tok##_##opn, kbd_dev_scan_params);
KBD_DEV_KERNELS(KBD_DEV_DECLARE)
#undef KBD_DEV_DECLARE

/* ---- host side -------------------------------------------------------------------------------------------- */

/* Tiles covering n elements (a macro: used by host code and by kernels). */
#define KBD_DEV_TILES(n) (((n) + KBD_DEV_TILE - 1) / KBD_DEV_TILE)

static inline size_t kbd_device_reduce_workspace_bytes(long long n) {
  (void)n;
  return (KBD_DEV_HDR_WORDS + KBD_DEV_REDUCE_MAX_BLOCKS) * sizeof(uint32_t);
}

static inline size_t kbd_device_scan_workspace_bytes(long long n) {
  return KBD_DEV_HDR_WORDS * sizeof(uint32_t) + (size_t)(n > 0 ? KBD_DEV_TILES(n) : 0) * sizeof(uint64_t);
}

static inline kbd_status kbd_dev_check_(const char *what, const void *in, const void *out, long long n, int op,
                                        const void *ws) {
  if (n < 0) return kbd_status_make(KBD_ERR_INVALID, "%s: n = %lld is negative", what, n);
  if (op != KBD_RED_SUM && op != KBD_RED_MAX && op != KBD_RED_MIN)
    return kbd_status_make(KBD_ERR_INVALID, "%s: op %d is not KBD_RED_SUM, KBD_RED_MAX or KBD_RED_MIN", what, op);
  if (n > 0 && (!in || !out || !ws))
    return kbd_status_make(KBD_ERR_INVALID, "%s: NULL input, output or workspace", what);
  if (!out) return kbd_status_make(KBD_ERR_INVALID, "%s: NULL output", what);
  if (n > (long long)KBD_DEV_TILE * 0x7fffffffLL)
    return kbd_status_make(KBD_ERR_INVALID, "%s: n = %lld needs more than 2^31-1 tiles", what, n);
  return kbd_status_ok();
}

/* Reset the ticket and done counters the kernels count with - on the caller's stream, so that the reset is
 * ordered after earlier work and before the launch even on a non-blocking stream. */
static inline kbd_status kbd_dev_reset_(void *ws, size_t bytes, void *stream) {
  return kbd_memset_device_async(ws, 0, bytes, stream);
}

#define KBD_DEV_DISPATCH(tok, kind, params, cfg)                                                                       \
  (op == KBD_RED_SUM   ? kbd_dev_##kind##_##tok##_sum(cfg, params)                                                     \
   : op == KBD_RED_MAX ? kbd_dev_##kind##_##tok##_max(cfg, params)                                                     \
                       : kbd_dev_##kind##_##tok##_min(cfg, params))

#define KBD_DEV_HOST_API(tok, ctype, empty_sum, empty_max, empty_min)                                                  \
  static inline kbd_status kbd_device_reduce_##tok(const ctype *in, long long n, ctype *out, int op, void *ws,         \
                                                   void *stream) {                                                     \
    KBD_TRY(kbd_dev_check_("kbd_device_reduce_" #tok, in, out, n, op, ws));                                            \
    if (n == 0) {                                                                                                      \
      const ctype e = op == KBD_RED_SUM ? (empty_sum) : op == KBD_RED_MAX ? (empty_max) : (empty_min);                 \
      return kbd_copy_to_device_async(out, &e, sizeof e, stream);                                                      \
    }                                                                                                                  \
    const long long tiles = KBD_DEV_TILES(n);                                                                          \
    const unsigned blocks = (unsigned)(tiles < KBD_DEV_REDUCE_MAX_BLOCKS ? tiles : KBD_DEV_REDUCE_MAX_BLOCKS);         \
    KBD_TRY(kbd_dev_reset_(ws, KBD_DEV_HDR_WORDS * sizeof(uint32_t), stream));                                         \
    kbd_dev_reduce_params p;                                                                                           \
    p.in = in;                                                                                                         \
    p.out = out;                                                                                                       \
    p.n = n;                                                                                                           \
    p.ws = (uint32_t *)ws;                                                                                             \
    const kbd_launch_cfg cfg = kbd_cfg(kbd_dim(blocks, 1, 1), 0, stream);                                              \
    return KBD_DEV_DISPATCH(tok, reduce, p, cfg);                                                                      \
  }                                                                                                                    \
  static inline kbd_status kbd_device_scan_##tok(const ctype *in, ctype *out, long long n, int op, int exclusive,      \
                                                 void *ws, void *stream) {                                             \
    KBD_TRY(kbd_dev_check_("kbd_device_scan_" #tok, in, out, n, op, ws));                                              \
    if (n == 0) return kbd_status_ok();                                                                                \
    KBD_TRY(kbd_dev_reset_(ws, kbd_device_scan_workspace_bytes(n), stream));                                           \
    kbd_dev_scan_params p;                                                                                             \
    p.in = in;                                                                                                         \
    p.out = out;                                                                                                       \
    p.n = n;                                                                                                           \
    p.excl = exclusive != 0;                                                                                           \
    p.ws = (uint32_t *)ws;                                                                                             \
    const kbd_launch_cfg cfg = kbd_cfg(kbd_dim((unsigned)KBD_DEV_TILES(n), 1, 1), 0, stream);                          \
    return KBD_DEV_DISPATCH(tok, scan, p, cfg);                                                                        \
  }

KBD_DEV_HOST_API(f32, float, 0.0f, -INFINITY, INFINITY)
KBD_DEV_HOST_API(i32, int32_t, 0, INT32_MIN, INT32_MAX)

/* ---- kernels (one translation unit) ---------------------------------------------------------------------- */

#if defined(KBD_DEVICE_IMPLEMENTATION) && (KBD_MODE_CPU || KBD_MODE_CUDA)

#include "atomic.h"
#include "reduce.h"
#include "scan.h"
#include "smem.h"
#include "sync.h"
#include "tile_core.h"
#include "tile_io.h"
#include "tile_ops.h" /* KBD__N */

/* Fragment elements outside [0, n) := the op's exact identity (bits), so they cannot change a result. */
KBD_TILE_FN void kbd_dev_pad_(kbd_tile_shape s, void *frag, long long start, long long n, uint32_t pad) {
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    const int tid = KBD_SCOPE_TID(s.scope, l);
    KBD_UNROLL for (int i = 0; i < s.npt; ++i) {
      const long long g = start + kbd_tile_coord(s, tid, i).col;
      if (g >= n) memcpy((char *)frag + ((size_t)l * s.npt + i) * 4, &pad, 4);
    }
  }
}

/* acc[k] = acc[k] op x[k] over the fragments (32-bit elements). Raw ops: the accumulator is only ever
 * reduced by kbd_reduce, whose chain ends give a NaN the GPU's bits. */
KBD_TILE_FN void kbd_dev_fold_(void *acc, const void *x, int n, int op, int fl) {
  KBD_UNROLL for (int k = 0; k < n; ++k) {
    uint32_t a, b;
    memcpy(&a, (char *)acc + (size_t)k * 4, 4);
    memcpy(&b, (const char *)x + (size_t)k * 4, 4);
    a = kbd_red_op_raw_b32(op, fl, a, b);
    memcpy((char *)acc + (size_t)k * 4, &a, 4);
  }
}

/* x[k] = c op x[k] (a prefix from earlier tiles in front of each element). */
KBD_TILE_FN void kbd_dev_prefix_(void *x, int n, uint32_t c, int op, int fl) {
  KBD_UNROLL for (int k = 0; k < n; ++k) {
    uint32_t b;
    memcpy(&b, (char *)x + (size_t)k * 4, 4);
    b = kbd_red_op_b32(op, fl, c, b);
    memcpy((char *)x + (size_t)k * 4, &b, 4);
  }
}

/* 1 if every lane's value is nonzero: vote.sync.all.pred. */
KBD_TILE_FN int kbd_dev_all_nonzero_(kbd_lanes_b32 x, const char *file, int line) {
  int pred[KBD_LANES_HELD];
  for (int l = 0; l < KBD_LANES_HELD; ++l)
    pred[l] = x.v[l] != 0;
  return kbd_hw_vote_all(pred, file, line);
}

/* Lowest lane whose value equals v, 32 if none: vote.sync.ballot.b32, then the lowest set bit. */
KBD_TILE_FN int kbd_dev_first_lane_eq_(kbd_lanes_b32 x, uint32_t v, const char *file, int line) {
  int pred[KBD_LANES_HELD];
  for (int l = 0; l < KBD_LANES_HELD; ++l)
    pred[l] = x.v[l] == v;
  const uint32_t m = kbd_hw_ballot(pred, file, line);
#if KBD_MODE_CUDA
  return m ? __ffs((int)m) - 1 : 32;
#else
  return m ? __builtin_ctz(m) : 32;
#endif
}

#define KBD_DEV_FLAG_A 1u
#define KBD_DEV_FLAG_P 2u

KBD_TILE_FN void kbd_dev_publish_(uint64_t *status, uint32_t flag, uint32_t value) {
  KBD_FOR_LANES(lane) {
    if (lane == 0) kbd_st_release_u64(status, (uint64_t)flag << 32 | value);
  }
}

/* Warp-uniform (run by warp 0 of the block): the exclusive prefix of tile `tile`, after publishing the
 * tile's aggregate and then its inclusive prefix. */
KBD_TILE_FN uint32_t kbd_dev_lookback_(uint64_t *status, long long tile, uint32_t total, int op, int fl,
                                       const char *file, int line) {
  const uint32_t pad = kbd_red_pad_b32(op, fl);
  if (tile == 0) {
    kbd_dev_publish_(&status[0], KBD_DEV_FLAG_P, total);
    return pad;
  }
  kbd_dev_publish_(&status[tile], KBD_DEV_FLAG_A, total);
  uint32_t prefix = pad;
  for (long long base = tile - 1;; base -= 32) {
    kbd_lanes_b32 flag, val;
    for (;;) {
      KBD_FOR_LANES(lane) {
        const long long idx = base - lane;
        /* Before tile 0 there is nothing: an inclusive prefix equal to the identity. */
        const uint64_t s = idx >= 0 ? kbd_ld_acquire_u64(&status[idx]) : ((uint64_t)KBD_DEV_FLAG_P << 32 | pad);
        KBD_LANE(flag, lane) = (uint32_t)(s >> 32);
        KBD_LANE(val, lane) = (uint32_t)s;
      }
      if (kbd_dev_all_nonzero_(flag, file, line)) break;
      kbd_hw_poll_wait(file, line); /* GPU: nanosleep, leaving the memory system to the blocks we wait for */
    }
    const int first_p = kbd_dev_first_lane_eq_(flag, KBD_DEV_FLAG_P, file, line);
    KBD_FOR_LANES(lane) {
      if (lane > first_p) KBD_LANE(val, lane) = pad;
    }
    /* Lane 0 is the nearest predecessor; the window's combined value precedes what was gathered so far. */
    prefix = kbd_red_op_b32(op, fl, kbd_warp_reduce_b32_(val, op, fl, file, line), prefix);
    if (first_p < 32) break;
  }
  kbd_dev_publish_(&status[tile], KBD_DEV_FLAG_P, kbd_red_op_b32(op, fl, prefix, total));
  return prefix;
}

#define KBD_DEV_DEFINE(tok, ctype, opn, op)                                                                            \
  KBD_KERNEL(kbd_dev_reduce_##tok##_##opn, KBD_DEV_THREADS, kbd_dev_reduce_params) {                                   \
    const int fl = KBD_DT_IS_FLOAT(KBD_DT_##tok);                                                                      \
    const uint32_t pad = kbd_red_pad_b32(op, fl);                                                                      \
    KBD_TILE(tok, 1, KBD_DEV_TILE, KBD_CTA) t, acc;                                                                    \
    KBD__FOR_FRAG(acc, l_, i_) memcpy(&acc.v[l_][i_], &pad, 4);                                                        \
    const long long tiles = KBD_DEV_TILES(p.n);                                                                        \
    for (long long tile = kbd_block_x(); tile < tiles; tile += kbd_grid_x()) {                                         \
      const long long start = tile * KBD_DEV_TILE;                                                                     \
      kbd_load(t, (const ctype *)p.in, p.n, start);                                                                    \
      if (start + KBD_DEV_TILE > p.n) kbd_dev_pad_(KBD__SHAPE(t), t.v, start, p.n, pad);                               \
      kbd_dev_fold_(acc.v, t.v, KBD__N(acc), op, fl);                                                                  \
    }                                                                                                                  \
    ctype part;                                                                                                        \
    kbd_reduce(part, acc, op);                                                                                         \
    KBD_SHARED(uint32_t, last, 1);                                                                                     \
    if (kbd_warp_id() == 0) {                                                                                          \
      ctype *partials = (ctype *)(p.ws + KBD_DEV_HDR_WORDS);                                                           \
      KBD_FOR_LANES(lane) {                                                                                            \
        if (lane == 0) kbd_st_global(&partials[kbd_block_x()], part);                                                  \
      }                                                                                                                \
      /* acq_rel: our partial is visible before the ticket; the last block sees all partials. */                       \
      KBD_ELECT_ONE_VALUE(uint32_t, done, kbd_atomic_add_acq_rel_u32(&p.ws[1], 1u));                                   \
      KBD_FOR_LANES(lane) {                                                                                            \
        if (lane == 0) last[0] = done == kbd_grid_x() - 1;                                                             \
      }                                                                                                                \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    if (last[0]) {                                                                                                     \
      KBD_TILE(tok, 1, KBD_DEV_REDUCE_MAX_BLOCKS, KBD_CTA) parts;                                                      \
      kbd_load(parts, (const ctype *)(p.ws + KBD_DEV_HDR_WORDS), (long long)kbd_grid_x(), 0);                          \
      kbd_dev_pad_(KBD__SHAPE(parts), parts.v, 0, (long long)kbd_grid_x(), pad);                                       \
      ctype r;                                                                                                         \
      kbd_reduce(r, parts, op);                                                                                        \
      if (kbd_warp_id() == 0) {                                                                                        \
        KBD_FOR_LANES(lane) {                                                                                          \
          if (lane == 0) kbd_st_global((ctype *)p.out, r);                                                             \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  KBD_KERNEL(kbd_dev_scan_##tok##_##opn, KBD_DEV_THREADS, kbd_dev_scan_params) {                                       \
    const int fl = KBD_DT_IS_FLOAT(KBD_DT_##tok);                                                                      \
    KBD_SHARED(uint32_t, sh, 2);                                                                                       \
    if (kbd_warp_id() == 0) {                                                                                          \
      KBD_ELECT_ONE_VALUE(uint32_t, ticket, kbd_atomic_add_u32(&p.ws[0], 1u));                                         \
      KBD_FOR_LANES(lane) {                                                                                            \
        if (lane == 0) sh[0] = ticket;                                                                                 \
      }                                                                                                                \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    const long long tile = sh[0], start = tile * KBD_DEV_TILE;                                                         \
    KBD_TILE(tok, 1, KBD_DEV_TILE, KBD_CTA) t, o;                                                                      \
    kbd_load(t, (const ctype *)p.in, p.n, start);                                                                      \
    if (start + KBD_DEV_TILE > p.n) kbd_dev_pad_(KBD__SHAPE(t), t.v, start, p.n, kbd_red_pad_b32(op, fl));             \
    ctype total;                                                                                                       \
    kbd_scan(o, total, t, op, p.excl);                                                                                 \
    if (kbd_warp_id() == 0) {                                                                                          \
      uint32_t bits;                                                                                                   \
      memcpy(&bits, &total, 4);                                                                                        \
      uint64_t *status = (uint64_t *)(void *)(p.ws + KBD_DEV_HDR_WORDS);                                               \
      const uint32_t pre = kbd_dev_lookback_(status, tile, bits, op, fl, __FILE__, __LINE__);                          \
      KBD_FOR_LANES(lane) {                                                                                            \
        if (lane == 0) sh[1] = pre;                                                                                    \
      }                                                                                                                \
    }                                                                                                                  \
    kbd_sync();                                                                                                        \
    if (tile > 0) kbd_dev_prefix_(o.v, KBD__N(o), sh[1], op, fl);                                                      \
    kbd_store((ctype *)p.out, o, p.n, start);                                                                          \
  }

KBD_DEV_KERNELS(KBD_DEV_DEFINE)
#undef KBD_DEV_DEFINE

#endif /* KBD_DEVICE_IMPLEMENTATION */

#endif /* KBD_DEVICE_H */
