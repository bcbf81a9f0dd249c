/* kbd/scope.h - warp ranges: named sets of consecutive warps for warp-specialized kernels.
 *
 *   KBD_WARP_RANGE(name, first, count)      in a kernel body: warps [first, first + count) of the block,
 *                                           with a named barrier of their own (a const kbd_scope `name`)
 *   kbd_scope_contains(s)                   is the calling warp in s? (warp-uniform)
 *   kbd_scope_warp(s)                       the calling warp's index in s (0 .. count-1)
 *   kbd_scope_thread(s, lane)               thread index of `lane` in s (0 .. 32*count-1)
 *   kbd_scope_threads(s)                    32 * count
 *   kbd_scope_sync(s)                       every warp of s waits for every other (bar.sync id, 32*count)
 *   kbd_scope_arrive(s)                     a warp of s signals without waiting (bar.arrive id, 32*count)
 *   kbd_scope_reduce(dst, s, x, op)         dst = op over the lanes x of every thread of s
 *   kbd_scope_scan(dst, total, s, x, op, excl)   scan of x over s in thread order (as kbd_warpgroup_scan)
 *
 * Why: in a warp-specialized kernel the warps of a block do different jobs - a producer warp loads, one or
 * more consumer warpgroups compute. A CTA-wide barrier (kbd_sync, bar.sync 0) or a CTA-wide reduction then
 * waits for warps that never come, and a warpgroup reduction numbers threads from thread 0. A warp range
 * names the warps of one job; its collectives count only them and meet at a barrier id no other range,
 * kbd_sync or kbd's warpgroup reductions use, so the rest of the block is free to do something else.
 *
 * Barrier ids come from a per-kernel registry: KBD_KERNEL records a __COUNTER__ value and each
 * KBD_WARP_RANGE in the body takes the next one, so the k-th range of a kernel gets the k-th free id of
 * 1..15. Id 0 is kbd_sync's and the CTA collectives'; KBD_REDUCE_WG_BARRIER + g (default 8 + g) is
 * warpgroup g's reduction barrier for each warpgroup the block has; the rest are the ranges'. A 288-thread
 * block (3 warpgroups) has ids 1-7 and 11-15: 12 ranges. A range declared in a loop body or a branch still
 * takes one id (the counter counts declarations, not executions). Declare ranges once, at the top of the body.
 *
 * Compile-time errors, each naming its rule: a range outside a kernel body, count < 1, first < 0, a range
 * that does not fit the block, more ranges than free ids. Run-time (CPU machine, KBD_ERR_SCOPE): a warp
 * that is not in the range calls one of its collectives - on the GPU it would be counted as one of the
 * range's threads and complete the barrier early, or read another warp's reduction slot.
 *
 * Cost (GPU): kbd_scope_sync/arrive are one BAR.SYNC/BAR.ARV with an immediate id and count; reduce and
 * scan cost what kbd_warpgroup_reduce/scan cost (2 warp butterflies, 1 STS, 1 LDS, 2 barriers; a one-warp
 * range: the warp butterfly only). The scope object is compile-time constants: no registers after
 * constant propagation.
 */
#ifndef KBD_SCOPE_H
#define KBD_SCOPE_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA

#include "hw.h"
#include "launch.h"
#include "reduce.h"
#include "scan.h"
#include "status.h"

typedef struct kbd_scope {
  int first_warp; /* first warp of the range */
  int nwarps;     /* warps in the range */
  int bar_id;     /* its named barrier (1..15) */
  const char *name;
} kbd_scope;

/* Named barriers a block has (PTX: bar ids 0..15). */
#define KBD_NAMED_BARRIERS 16
/* Warpgroups of the enclosing kernel's block: the reduction barriers kbd reserves for them. */
#define KBD__SCOPE_NWG ((KBD_BLOCK_THREADS + KBD_WARPGROUP - 1) / KBD_WARPGROUP)
/* The n-th range's barrier (n = 1, 2, ...): the n-th id of 1..15 outside the reserved warpgroup ids. */
#define KBD__SCOPE_BAR(n) ((n) < KBD_REDUCE_WG_BARRIER ? (n) : (n) + KBD__SCOPE_NWG)

#define KBD_WARP_RANGE(name, first, count) KBD__WARP_RANGE(name, first, count, __COUNTER__)
/* `n` is the expanded __COUNTER__ value: one literal, used by every check and the initializer. */
#define KBD__WARP_RANGE(name, first, count, n)                                                                         \
  KBD_STATIC_ASSERT(KBD__CTA_THREADS <= KBD_MAX_BLOCK_THREADS,                                                         \
                    "kbd: KBD_WARP_RANGE belongs in a kernel body: its barrier id comes from the kernel's registry "   \
                    "(pass the kbd_scope to helper functions)");                                                       \
  KBD_STATIC_ASSERT((count) >= 1, "kbd: KBD_WARP_RANGE(name, first, count): count must be at least 1 warp");           \
  KBD_STATIC_ASSERT((first) >= 0, "kbd: KBD_WARP_RANGE(name, first, count): first must be >= 0");                      \
  KBD_STATIC_ASSERT(((first) + (count)) * KBD_WARP_SIZE <= KBD__CTA_THREADS,                                           \
                    "kbd: KBD_WARP_RANGE(name, first, count) does not fit the block: first + count must be <= the "    \
                    "kernel's warps (KBD_BLOCK_THREADS / 32)");                                                        \
  KBD_STATIC_ASSERT(KBD__SCOPE_BAR((n)-KBD__CTA_COUNTER) < KBD_NAMED_BARRIERS,                                         \
                    "kbd: too many KBD_WARP_RANGEs in this kernel: a block has 16 named barriers; 0 is kbd_sync's "    \
                    "and one per warpgroup is kbd's warpgroup reductions' (KBD_REDUCE_WG_BARRIER), the rest are the "  \
                    "ranges'");                                                                                        \
  const kbd_scope name = {(first), (count), KBD__SCOPE_BAR((n)-KBD__CTA_COUNTER), #name}

KBD_DEV int kbd_scope_contains(kbd_scope s) { return (unsigned)(kbd_warp_id() - s.first_warp) < (unsigned)s.nwarps; }
KBD_DEV int kbd_scope_warp(kbd_scope s) { return kbd_warp_id() - s.first_warp; }
KBD_DEV int kbd_scope_thread(kbd_scope s, int lane) { return kbd_scope_warp(s) * KBD_WARP_SIZE + lane; }
#define kbd_scope_threads(s) ((s).nwarps * KBD_WARP_SIZE)

/* The CPU machine's membership check before a range collective; nothing on the GPU. */
KBD_DEV void kbd_scope_member_(kbd_scope s, const char *what, const char *file, int line) {
  if (!kbd_scope_contains(s))
    KBD_HW_FAULT(KBD_ERR_SCOPE, file, line,
                 "%s(%s) called by warp %d, which is not in warp range '%s' (warps %d..%d): on the GPU it would "
                 "count as one of the range's %d threads",
                 what, s.name, kbd_warp_id(), s.name, s.first_warp, s.first_warp + s.nwarps - 1,
                 s.nwarps * KBD_WARP_SIZE);
}

KBD_DEV void kbd_scope_sync_at(kbd_scope s, KBD_SITE_PARAMS) {
  kbd_scope_member_(s, "kbd_scope_sync", KBD_SITE_ARGS);
  kbd_hw_bar_sync_named(s.bar_id, s.nwarps * KBD_WARP_SIZE, KBD_SITE_ARGS);
}
KBD_DEV void kbd_scope_arrive_at(kbd_scope s, KBD_SITE_PARAMS) {
  kbd_scope_member_(s, "kbd_scope_arrive", KBD_SITE_ARGS);
  kbd_hw_bar_arrive(s.bar_id, s.nwarps * KBD_WARP_SIZE, KBD_SITE_ARGS);
}
#define kbd_scope_sync(s) kbd_scope_sync_at((s), KBD_SITE)
#define kbd_scope_arrive(s) kbd_scope_arrive_at((s), KBD_SITE)

KBD_TILE_FN kbd_span_ kbd_scope_span_(kbd_scope s) {
  kbd_span_ r;
  r.first = s.first_warp;
  r.nw = s.nwarps;
  r.bar = s.bar_id;
  r.cta = 0; /* a literal, so a range chosen at run time still compiles to one named barrier */
  return r;
}

KBD_TILE_FN uint32_t kbd_scope_reduce_at_(kbd_lanes_b32 x, int op, int fl, kbd_scope s, const char *file, int line) {
  kbd_scope_member_(s, "kbd_scope_reduce", file, line);
  return kbd_span_reduce_b32_(x, op, fl, kbd_scope_span_(s), file, line);
}

KBD_TILE_FN kbd_lanes_b32 kbd_scope_scan_at_(kbd_lanes_b32 x, int op, int fl, int excl, kbd_scope s, uint32_t *total,
                                             const char *file, int line) {
  kbd_scope_member_(s, "kbd_scope_scan", file, line);
  const kbd_span_ sp = kbd_scope_span_(s);
  kbd_lanes_b32 r = kbd_span_scan_b32_(x, op, fl, excl, sp, total, file, line);
  if (excl) kbd_scan_fix_first_(&r, op, fl, sp);
  return r;
}

/* dst (float or int32_t) = op over x (kbd_lanes_f32 / kbd_lanes_i32) of every thread of range s. */
#define kbd_scope_reduce(dst, s, x, op)                                                                                \
  do {                                                                                                                 \
    KBD__RED_DT_OK(KBD__LANES_DT(x), op);                                                                              \
    kbd_lanes_b32 kbd_srx_;                                                                                            \
    KBD__TO_B32(kbd_srx_, x);                                                                                          \
    KBD__RED_STORE(dst, kbd_scope_reduce_at_(kbd_srx_, (op), KBD__LANES_FLOAT(x), (s), __FILE__, __LINE__),            \
                   KBD__LANES_FLOAT(x));                                                                               \
  } while (0)

/* dst = inclusive (excl 0) or exclusive (excl 1) scan of x over range s in thread order; total = op over all. */
#define kbd_scope_scan(dst, total, s, x, op, excl)                                                                     \
  do {                                                                                                                 \
    KBD__SCAN_OP_OK(op);                                                                                               \
    KBD_STATIC_ASSERT(KBD__LANES_FLOAT(dst) == KBD__LANES_FLOAT(x),                                                    \
                      "kbd: scan source and destination must both be kbd_lanes_f32 or both kbd_lanes_i32");            \
    kbd_lanes_b32 kbd_ssx_;                                                                                            \
    uint32_t kbd_sst_;                                                                                                 \
    KBD__TO_B32(kbd_ssx_, x);                                                                                          \
    kbd_ssx_ = kbd_scope_scan_at_(kbd_ssx_, (op), KBD__LANES_FLOAT(x), (excl), (s), &kbd_sst_, __FILE__, __LINE__);    \
    KBD__FROM_B32(dst, kbd_ssx_);                                                                                      \
    KBD__RED_STORE(total, kbd_sst_, KBD__LANES_FLOAT(x));                                                              \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */
#endif /* KBD_SCOPE_H */
