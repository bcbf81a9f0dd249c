/* kbd/tma.h - TMA: tensor boxes between global memory and shared tiles, bulk stores and their groups.
 * Every call that takes tensor coordinates exists for ranks 1d..5d (2D shown; the list below):
 *
 *   kbd_tma_load2d(tile, &p.map, &bar, row, col)   shared tile <- the box(es) whose first element is (row, col):
 *                                                one elected thread issues it; completes KBD_STILE_BYTES(tile)
 *                                                bytes on the mbarrier
 *   kbd_tma_store2d(&p.map, tile, row, col)      global box(es) <- shared tile        (bulk async-group)
 *   kbd_tma_reduce_add2d / _min2d / _max2d(&p.map, tile, row, col)   global op= shared tile  (bulk async-group)
 *   kbd_tma_prefetch2d(&p.map, tile, row, col)   warm L2 with the box(es) a load of `tile` would read
 *   kbd_tma_prefetch_map(&p.map)                warm the TMA unit's descriptor cache
 *   kbd_bulk_store(dst, src, bytes)             shared -> global, contiguous bytes   (bulk async-group)
 *   kbd_bulk_commit_group()                     close this thread's uncommitted bulk stores into one group
 *   kbd_bulk_wait_group(n) / kbd_bulk_wait_group_read(n)    all but the n newest groups done / done reading
 *                                                shared memory (n: a constant 0..7)
 * (kbd_bulk_load, the non-tensor load, is in kbd/mbarrier.h.)
 *
 * Coordinates are in elements, OUTERMOST FIRST, as C indexes an array (a[row][col]) and as kbd_load2d takes
 * them: the rank is in the name and the list is (col) for 1D, (row, col) for 2D, (d2, row, col) for 3D,
 * (d3, d2, row, col) for 4D, (d4, d3, d2, row, col) for 5D. The hardware numbers tensor dimensions the other
 * way, innermost (contiguous) first - the tensor map's global_dims[0] and the PTX operand list {c0, c1, ...}
 * start at the column - so these macros reverse the list, here and nowhere else; the twins (kbd_hw_tma_*) and
 * the raw kbd_tensor_map_desc keep the hardware's order. The old kbd_tma_load(tile, map, bar, x, y, ...) family
 * took the hardware's order: each old name now stops the compiler with a message naming the new call.
 * Coordinates may be negative or run past the edge on loads (the outside is filled with zeros, or NaN if the
 * map asks); a store's start must be non-negative and its outside part is not written.
 *
 * Shared tile and box: the tile's contiguous dimension is the box's dimension 0, and a tile is one or more
 * boxes side by side along it - each box fills one block of the tile (kbd/swizzle.h: span-wide for swizzled
 * modes, the whole line for NONE). So the map's box must be {block bytes / element size, lines} (2D; in
 * more dimensions the outer box dims multiply to the lines), the map's swizzle the tile's, and the element
 * size the tile's: kbd_tma_box_rows_for(type) and kbd_tma_box_cols_for(type) name the box. kbd issues one copy
 * per block, advancing the column by box_dims[0] each time; a 64 x 128 bf16 tile with 128B swizzle is two 64 x 64
 * boxes. The GPU cannot read the opaque map, so the CPU machine checks all of it at the call (KBD_ERR_INVALID naming
 * both sides).
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

/* Per block b of the tile: one box at column c0 + b * box_dims[0] (c0..c4 in the hardware's order). */
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

/* Outermost-first coordinate lists -> the rank, then c0..c4 innermost first (the twins' and the PTX's order). */
#define KBD__TMA_REV1(col) 1, (int32_t)(col), 0, 0, 0, 0
#define KBD__TMA_REV2(row, col) 2, (int32_t)(col), (int32_t)(row), 0, 0, 0
#define KBD__TMA_REV3(d2, row, col) 3, (int32_t)(col), (int32_t)(row), (int32_t)(d2), 0, 0
#define KBD__TMA_REV4(d3, d2, row, col) 4, (int32_t)(col), (int32_t)(row), (int32_t)(d2), (int32_t)(d3), 0
#define KBD__TMA_REV5(d4, d3, d2, row, col)                                                                            \
  5, (int32_t)(col), (int32_t)(row), (int32_t)(d2), (int32_t)(d3), (int32_t)(d4)

#define KBD__TMA_LOAD(tile, map, bar, ...)                                                                             \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    kbd_tma_load_((char *)(tile).p, KBD__TMA_GEOM(tile), (map), (bar), __VA_ARGS__, KBD_SITE);                         \
  } while (0)
#define kbd_tma_load1d(tile, map, bar, col) KBD__TMA_LOAD(tile, map, bar, KBD__TMA_REV1(col))
#define kbd_tma_load2d(tile, map, bar, row, col) KBD__TMA_LOAD(tile, map, bar, KBD__TMA_REV2(row, col))
#define kbd_tma_load3d(tile, map, bar, d2, row, col) KBD__TMA_LOAD(tile, map, bar, KBD__TMA_REV3(d2, row, col))
#define kbd_tma_load4d(tile, map, bar, d3, d2, row, col) KBD__TMA_LOAD(tile, map, bar, KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_load5d(tile, map, bar, d4, d3, d2, row, col)                                                           \
  KBD__TMA_LOAD(tile, map, bar, KBD__TMA_REV5(d4, d3, d2, row, col))

/* op: 0 store, 1 add, 2 min, 3 max. */
#define KBD__TMA_STORE(op, map, tile, ...)                                                                             \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    kbd_tma_store_((const char *)(tile).p, KBD__TMA_GEOM(tile), (map), (op), __VA_ARGS__, KBD_SITE);                   \
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
#define kbd_tma_store1d(map, tile, col) \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store1d(map, tile, col)", KBD__TMA_REV1(col))
#define kbd_tma_store2d(map, tile, row, col) \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store2d(map, tile, row, col)", KBD__TMA_REV2(row, col))
#define kbd_tma_store3d(map, tile, d2, row, col) \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store3d(map, tile, d2, row, col)", KBD__TMA_REV3(d2, row, col))
#define kbd_tma_store4d(map, tile, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store4d(map, tile, d3, d2, row, col)", KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_store5d(map, tile, d4, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(0, map, tile, "kbd_tma_store5d(map, tile, d4, d3, d2, row, col)", KBD__TMA_REV5(d4, d3, d2, row, col))
#define kbd_tma_reduce_add1d(map, tile, col) \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add1d(map, tile, col)", KBD__TMA_REV1(col))
#define kbd_tma_reduce_add2d(map, tile, row, col) \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add2d(map, tile, row, col)", KBD__TMA_REV2(row, col))
#define kbd_tma_reduce_add3d(map, tile, d2, row, col) \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add3d(map, tile, d2, row, col)", KBD__TMA_REV3(d2, row, col))
#define kbd_tma_reduce_add4d(map, tile, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add4d(map, tile, d3, d2, row, col)", KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_reduce_add5d(map, tile, d4, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(1, map, tile, "kbd_tma_reduce_add5d(map, tile, d4, d3, d2, row, col)", KBD__TMA_REV5(d4, d3, d2, row, col))
#define kbd_tma_reduce_min1d(map, tile, col) \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min1d(map, tile, col)", KBD__TMA_REV1(col))
#define kbd_tma_reduce_min2d(map, tile, row, col) \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min2d(map, tile, row, col)", KBD__TMA_REV2(row, col))
#define kbd_tma_reduce_min3d(map, tile, d2, row, col) \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min3d(map, tile, d2, row, col)", KBD__TMA_REV3(d2, row, col))
#define kbd_tma_reduce_min4d(map, tile, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min4d(map, tile, d3, d2, row, col)", KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_reduce_min5d(map, tile, d4, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(2, map, tile, "kbd_tma_reduce_min5d(map, tile, d4, d3, d2, row, col)", KBD__TMA_REV5(d4, d3, d2, row, col))
#define kbd_tma_reduce_max1d(map, tile, col) \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max1d(map, tile, col)", KBD__TMA_REV1(col))
#define kbd_tma_reduce_max2d(map, tile, row, col) \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max2d(map, tile, row, col)", KBD__TMA_REV2(row, col))
#define kbd_tma_reduce_max3d(map, tile, d2, row, col) \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max3d(map, tile, d2, row, col)", KBD__TMA_REV3(d2, row, col))
#define kbd_tma_reduce_max4d(map, tile, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max4d(map, tile, d3, d2, row, col)", KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_reduce_max5d(map, tile, d4, d3, d2, row, col) \
  KBD__TMA_STORE_FRONT(3, map, tile, "kbd_tma_reduce_max5d(map, tile, d4, d3, d2, row, col)", KBD__TMA_REV5(d4, d3, d2, row, col))

#define KBD__TMA_PREFETCH(map, tile, ...)                                                                              \
  do {                                                                                                                 \
    KBD__IS_STILE(tile);                                                                                               \
    kbd_tma_prefetch_(KBD__TMA_GEOM(tile), (map), __VA_ARGS__, KBD_SITE);                                              \
  } while (0)
#define kbd_tma_prefetch1d(map, tile, col) KBD__TMA_PREFETCH(map, tile, KBD__TMA_REV1(col))
#define kbd_tma_prefetch2d(map, tile, row, col) KBD__TMA_PREFETCH(map, tile, KBD__TMA_REV2(row, col))
#define kbd_tma_prefetch3d(map, tile, d2, row, col) KBD__TMA_PREFETCH(map, tile, KBD__TMA_REV3(d2, row, col))
#define kbd_tma_prefetch4d(map, tile, d3, d2, row, col) KBD__TMA_PREFETCH(map, tile, KBD__TMA_REV4(d3, d2, row, col))
#define kbd_tma_prefetch5d(map, tile, d4, d3, d2, row, col)                                                            \
  KBD__TMA_PREFETCH(map, tile, KBD__TMA_REV5(d4, d3, d2, row, col))

/* The names before 2026-11 took the hardware's order (x = column first). A call that kept its name with the
 * list reversed would compile and move the wrong box, so the rank went into the name and the old names only
 * stop the compiler. */
#define KBD__TMA_RENAMED(old, args)                                                                                    \
  "kbd: " old "(" args "x, y, ...) is gone: call " old "2d(" args "row, col) - the rank in the name (1d..5d), "        \
  "coordinates outermost first as C indexes an array: reverse the old list (3D: d2, row, col)"
#define kbd_tma_load(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_load", "tile, map, bar, "), __VA_ARGS__)
#define kbd_tma_store(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_store", "map, tile, "), __VA_ARGS__)
#define kbd_tma_reduce_add(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_reduce_add", "map, tile, "), __VA_ARGS__)
#define kbd_tma_reduce_min(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_reduce_min", "map, tile, "), __VA_ARGS__)
#define kbd_tma_reduce_max(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_reduce_max", "map, tile, "), __VA_ARGS__)
#define kbd_tma_prefetch(...) KBD__RENAMED_STMT(KBD__TMA_RENAMED("kbd_tma_prefetch", "map, tile, "), __VA_ARGS__)
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

/* Host: the box of the tensor map a tile type is loaded with, in the map's rows and columns (2D maps:
 * kbd_tensor_map_desc_2d(..., box_rows, box_cols, ...); in more dimensions the outer box dims multiply to the
 * rows). */
#define kbd_tma_box_rows_for(type) KBD_TMA_LINES(KBD__STILE_OBJ(type))
#define kbd_tma_box_cols_for(type) KBD_TMA_BOX_INNER(KBD__STILE_OBJ(type))
#define kbd_tma_box_inner_for(type)                                                                                    \
  KBD__RENAMED_EXPR("kbd: kbd_tma_box_inner_for(type) is gone: call kbd_tma_box_cols_for(type) (the box's columns)")
#define kbd_tma_box_lines_for(type)                                                                                    \
  KBD__RENAMED_EXPR("kbd: kbd_tma_box_lines_for(type) is gone: call kbd_tma_box_rows_for(type) (the box's rows)")

#endif /* KBD_TMA_H */
