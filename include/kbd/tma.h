/* kbd/tma.h - TMA: tensor boxes between global memory and shared tiles, bulk stores and their groups.
 *
 *   kbd_tma_load(tile, &p.map, &bar, x, y)      shared tile <- the box(es) at coordinates (x, y, ...): one
 *                                                elected thread issues it; completes KBD_STILE_BYTES(tile)
 *                                                bytes on the mbarrier
 *   kbd_tma_store(&p.map, tile, x, y)           global box(es) <- shared tile        (bulk async-group)
 *   kbd_tma_reduce_add / _min / _max(&p.map, tile, x, y)    global op= shared tile  (bulk async-group)
 *   kbd_tma_prefetch(&p.map, tile, x, y)        warm L2 with the box(es) a load of `tile` would read
 *   kbd_tma_prefetch_map(&p.map)                warm the TMA unit's descriptor cache
 *   kbd_bulk_store(dst, src, bytes)             shared -> global, contiguous bytes   (bulk async-group)
 *   kbd_bulk_commit_group()                     close this thread's uncommitted bulk stores into one group
 *   kbd_bulk_wait_group(n) / kbd_bulk_wait_group_read(n)    all but the n newest groups done / done reading
 *                                                shared memory (n: a constant 0..7)
 * (kbd_bulk_load, the non-tensor load, is in kbd/mbarrier.h.)
 *
 * Coordinates are in elements, innermost (contiguous) dimension first, as the tensor map numbers them:
 * for a row-major R x C matrix mapped with dims {C, R}, (x, y) = (column, row) of the box's first element.
 * They may be negative or run past the edge on loads (the outside is filled with zeros, or NaN if the map
 * asks); a store's start must be non-negative and its outside part is not written.
 *
 * Shared tile and box: the tile's contiguous dimension is the box's dimension 0, and a tile is one or more
 * boxes side by side along it - each box fills one block of the tile (kbd/swizzle.h: span-wide for swizzled
 * modes, the whole line for NONE). So the map's box must be {block bytes / element size, lines} (2D; in
 * more dimensions the outer box dims multiply to the lines), the map's swizzle the tile's, and the element
 * size the tile's: kbd_tma_box_dims_for(tile) names the box. kbd issues one copy per block, advancing x by
 * box_dims[0] each time; a 64 x 128 bf16 tile with 128B swizzle is two 64 x 64 boxes. The GPU cannot read
 * the opaque map, so the CPU machine checks all of it at the call (KBD_ERR_INVALID naming both sides).
 *
 * Issue model: one thread issues a TMA operation. Write the call once per warp inside KBD_ELECT_ONE { }
 * (elect.sync on the GPU, one lane on the CPU); from warp-uniform code 32 threads would issue it, which the
 * CPU machine reports (KBD_ERR_ISSUE). The mbarrier the load completes on must expect the bytes first
 * (kbd_mbarrier_arrive_expect_tx(&bar, KBD_STILE_BYTES(tile)), same thread), and every reader waits for the
 * phase: docs/tma.md shows the pipeline.
 *
 * Stores read shared memory through the async proxy: every thread that wrote the tile with ordinary stores
 * executes kbd_fence_proxy_async() before the barrier that precedes the store. The source must stay
 * unchanged until the issuing thread's kbd_bulk_wait_group_read covers the store's group, and the issuing
 * thread must wait for its groups before it exits. The CPU machine reports each of these, whatever the
 * schedule: a missing fence (KBD_ERR_RACE naming the writer and the store), a write to a source still being
 * read (KBD_ERR_RACE naming the store), an exit with a store not waited for (KBD_ERR_MBARRIER).
 *
 * Emulation (CPU): a load's bytes stay pending until a warp waits on its mbarrier; then they land exactly
 * as the TMA places them (swizzle of the absolute shared address, OOB fill, the whole box credited to the
 * tx-count). Stores write global memory when their group is waited for. docs/design/tma.md has the details.
 */
#ifndef KBD_TMA_H
#define KBD_TMA_H

#include "config.h"
#include "mbarrier.h"
#include "stile.h"
#include "tensormap.h"

/* Geometry of the boxes that make a shared tile (constant expressions). */
#define KBD_TMA_LINE_BYTES(t)                                                                                          \
  ((uint32_t)KBD_SMEM_BLOCK_BYTES(KBD_ESIZE(t), KBD_ROWS(t), KBD_COLS(t), KBD_STILE_SWIZZLE(t), KBD_STILE_MAJOR(t)))
#define KBD__STILE_INNER(t) (KBD_STILE_MAJOR(t) == KBD_SMEM_MN_MAJOR ? KBD_ROWS(t) : KBD_COLS(t))
#define KBD__STILE_OUTER(t) (KBD_STILE_MAJOR(t) == KBD_SMEM_MN_MAJOR ? KBD_COLS(t) : KBD_ROWS(t))
#define KBD_TMA_LINES(t) ((uint32_t)KBD__STILE_OUTER(t))
#define KBD_TMA_BOXES(t) ((int)(KBD__STILE_INNER(t) * KBD_ESIZE(t) / KBD_TMA_LINE_BYTES(t)))
/* box_dims[0] (elements) of the map a tile is loaded with; box_dims[1] (2D) is KBD_TMA_LINES(t). */
#define KBD_TMA_BOX_INNER(t) ((uint32_t)(KBD_TMA_LINE_BYTES(t) / KBD_ESIZE(t)))

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"

/* Coordinates: 1 to 5 of them after the fixed arguments; missing ones are 0 and the rank is the count. */
#define KBD__TMA_NARG(...) KBD__TMA_NARG_(__VA_ARGS__, 5, 4, 3, 2, 1, 0)
#define KBD__TMA_NARG_(a, b, c, d, e, n, ...) n
#define KBD__TMA_C(...) KBD__TMA_C_(__VA_ARGS__, 0, 0, 0, 0)
#define KBD__TMA_C_(a, b, c, d, e, ...) (int32_t)(a), (int32_t)(b), (int32_t)(c), (int32_t)(d), (int32_t)(e)

#define KBD__TMA_RANK_RULE "kbd: a TMA call takes 1 to 5 coordinates (the tensor map's rank)"

/* Per block b of the tile: one box at x + b * box_dims[0]. */
KBD_DEV void kbd_tma_load_(char *dst, uint32_t line_bytes, uint32_t lines, int swz, int boxes, uint32_t box0,
                           const kbd_tensor_map *map, uint64_t *bar, int rank, int32_t c0, int32_t c1, int32_t c2,
                           int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  for (int b = 0; b < boxes; ++b)
    kbd_hw_tma_load(dst + (size_t)b * line_bytes * lines, line_bytes, lines, swz, map, bar, rank,
                    c0 + (int32_t)(b * box0), c1, c2, c3, c4, KBD_SITE_ARGS);
}
KBD_DEV void kbd_tma_store_(const char *src, uint32_t line_bytes, uint32_t lines, int swz, int boxes, uint32_t box0,
                            const kbd_tensor_map *map, int op, int rank, int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                            int32_t c4, KBD_SITE_PARAMS) {
  for (int b = 0; b < boxes; ++b)
    kbd_hw_tma_store(src + (size_t)b * line_bytes * lines, line_bytes, lines, swz, map, op, rank,
                     c0 + (int32_t)(b * box0), c1, c2, c3, c4, KBD_SITE_ARGS);
}
KBD_DEV void kbd_tma_prefetch_(uint32_t line_bytes, uint32_t lines, int swz, int boxes, uint32_t box0,
                               const kbd_tensor_map *map, int rank, int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                               int32_t c4, KBD_SITE_PARAMS) {
  for (int b = 0; b < boxes; ++b)
    kbd_hw_tma_prefetch(line_bytes, lines, swz, map, rank, c0 + (int32_t)(b * box0), c1, c2, c3, c4, KBD_SITE_ARGS);
}

#define KBD__TMA_GEOM(t)                                                                                               \
  KBD_TMA_LINE_BYTES(t), KBD_TMA_LINES(t), KBD_STILE_SWIZZLE(t), KBD_TMA_BOXES(t), KBD_TMA_BOX_INNER(t)

#define kbd_tma_load(tile, map, bar, ...)                                                                              \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    KBD_STATIC_ASSERT(KBD__TMA_NARG(__VA_ARGS__) >= 1 && KBD__TMA_NARG(__VA_ARGS__) <= 5, KBD__TMA_RANK_RULE);         \
    kbd_tma_load_((char *)(tile).p, KBD__TMA_GEOM(tile), (map), (bar), KBD__TMA_NARG(__VA_ARGS__),                     \
                  KBD__TMA_C(__VA_ARGS__), KBD_SITE);                                                                  \
  } while (0)

#define KBD__TMA_STORE(op, map, tile, ...)                                                                             \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    KBD_STATIC_ASSERT(KBD__TMA_NARG(__VA_ARGS__) >= 1 && KBD__TMA_NARG(__VA_ARGS__) <= 5, KBD__TMA_RANK_RULE);         \
    kbd_tma_store_((const char *)(tile).p, KBD__TMA_GEOM(tile), (map), (op), KBD__TMA_NARG(__VA_ARGS__),               \
                   KBD__TMA_C(__VA_ARGS__), KBD_SITE);                                                                 \
  } while (0)
/* The front end of the stores: the destination (the tensor map) comes first. An old source-first call, the shared
 * tile first, is caught before anything reads either argument and then stored with the two swapped back; a tile of
 * another kind or a map that is no pointer is its own one message, and the store works on stand-ins
 * (kbd/tile_core.h, "one message per mistake"). */
#define KBD__TMA_STORE_FRONT(op, map, tile, sig, ...)                                                                  \
  do {                                                                                                                 \
    enum { kbd_tsw_ = KBD__KIND_OF(map) == KBD_KIND_SMEM && KBD__KIND_OF(tile) != KBD_KIND_SMEM };                     \
    KBD_STATIC_ASSERT(!kbd_tsw_, "kbd: the destination comes first: " sig "; the first argument is the tensor map "    \
                                 "(&map), the second the shared tile");                                                \
    KBD__NEED_SMEM(KBD__PICK(kbd_tsw_, map, tile), sig ", operand tile",                                               \
                   "stage it in a shared tile with kbd_stile_store(s, t), then kbd_fence_proxy_async()");              \
    enum { kbd_tok_ = KBD__KIND_OF(KBD__PICK(kbd_tsw_, map, tile)) == KBD_KIND_SMEM };                                 \
    KBD_STATIC_ASSERT(!kbd_tok_ || KBD__IS_PTR(KBD__PICK(kbd_tsw_, tile, map)),                                        \
                      "kbd: " sig ", operand map: must be a pointer to the kbd_tensor_map (&map)");                    \
    KBD__BIND_VAL(kbd_tst_, KBD__OR(kbd_tok_, KBD__PICK(kbd_tsw_, map, tile), kbd__smem_standin));                         \
    KBD__TMA_STORE(op,                                                                                                 \
                   KBD__OR(kbd_tok_ &&KBD__IS_PTR(KBD__PICK(kbd_tsw_, tile, map)), KBD__PICK(kbd_tsw_, tile, map),     \
                           const kbd_tensor_map *),                                                                    \
                   KBD__AT(kbd_tst_), __VA_ARGS__);                                                                    \
  } while (0)
#define kbd_tma_store(map, tile, ...)                                                                                  \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store(map, tile, c0, ...)", __VA_ARGS__)
#define kbd_tma_reduce_add(map, tile, ...)                                                                             \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add(map, tile, c0, ...)", __VA_ARGS__)
#define kbd_tma_reduce_min(map, tile, ...)                                                                             \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min(map, tile, c0, ...)", __VA_ARGS__)
#define kbd_tma_reduce_max(map, tile, ...)                                                                             \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max(map, tile, c0, ...)", __VA_ARGS__)

#define kbd_tma_prefetch(map, tile, ...)                                                                               \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    KBD_STATIC_ASSERT(KBD__TMA_NARG(__VA_ARGS__) >= 1 && KBD__TMA_NARG(__VA_ARGS__) <= 5, KBD__TMA_RANK_RULE);         \
    kbd_tma_prefetch_(KBD__TMA_GEOM(tile), (map), KBD__TMA_NARG(__VA_ARGS__), KBD__TMA_C(__VA_ARGS__), KBD_SITE);      \
  } while (0)
#define kbd_tma_prefetch_map(map) kbd_hw_tma_prefetch_map((map), KBD_SITE)

#define kbd_bulk_store(dst, src, bytes) kbd_hw_bulk_store((dst), (src), (uint32_t)(bytes), KBD_SITE)
#define kbd_bulk_commit_group() kbd_hw_bulk_commit(KBD_SITE)
#define KBD__BULK_N_RULE "kbd: kbd_bulk_wait_group(n): n must be a constant 0..7 (PTX takes an immediate)"
#define kbd_bulk_wait_group(n)                                                                                         \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__IS_CONST(n) && KBD__IF_CONST(n, 0) >= 0 && KBD__IF_CONST(n, 0) <= 7, KBD__BULK_N_RULE);     \
    kbd_hw_bulk_wait((int)(n), 0, KBD_SITE);                                                                           \
  } while (0)
#define kbd_bulk_wait_group_read(n)                                                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD__IS_CONST(n) && KBD__IF_CONST(n, 0) >= 0 && KBD__IF_CONST(n, 0) <= 7, KBD__BULK_N_RULE);     \
    kbd_hw_bulk_wait((int)(n), 1, KBD_SITE);                                                                           \
  } while (0)

#endif /* KBD_MODE_CPU || KBD_MODE_CUDA */

/* Host: the box dims of the tensor map for loading a tile type (2D maps: {inner, lines}). */
#define kbd_tma_box_inner_for(type) KBD_TMA_BOX_INNER(KBD__STILE_OBJ(type))
#define kbd_tma_box_lines_for(type) KBD_TMA_LINES(KBD__STILE_OBJ(type))

#endif /* KBD_TMA_H */
