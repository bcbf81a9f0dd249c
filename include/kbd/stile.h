/* kbd/stile.h - shared-memory tiles: a typed, swizzled view of a block of shared memory.
 *
 *   typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) a_tile;          // K-major (rows of C elements)
 *   typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) b_tile;       // MN-major (columns of R elements)
 *   KBD_SHARED_STILE(a_tile, a);                 // `a_tile a`: its own static shared memory, aligned
 *   a_tile s = KBD_STILE_AT(a_tile, ptr);        // a tile at ptr (dynamic shared memory, a planner offset)
 *   kbd_stile_offset(a, r, c)                    // byte offset of element (r, c) from the tile base
 *   kbd_stile_ptr(a, r, c)                       // its address (an element pointer)
 *   KBD_STILE_BYTES(a), KBD_STILE_ALIGN(a)       // bytes the tile occupies, base alignment it needs
 *
 * A tile has a STORAGE KIND in its type (kbd/tile_core.h: KBD_KIND_REG for register tiles, KBD_KIND_SMEM
 * here, KBD_KIND_TMEM with Tensor Memory): KBD_ROWS, KBD_COLS, KBD_DTYPE and KBD_ESIZE answer for every
 * kind, and an operation that needs registers (kbd_add, kbd_load2d, ...) rejects a shared tile at compile
 * time with a message naming the kind. A shared tile adds its swizzle mode (KBD_SWIZZLE_NONE, _32B, _64B,
 * _128B, _128B_ATOM32) and major-ness (KBD_SMEM_K_MAJOR / KBD_SMEM_MN_MAJOR): KBD_STILE_SWIZZLE(t),
 * KBD_STILE_MAJOR(t). The shape rules of kbd/swizzle.h are static assertions of the type, so an illegal
 * shared tile does not compile, with the rule as the message.
 *
 * Where element (r, c) lives is kbd_smem_tile_offset() (kbd/swizzle.h), the ONE function that the moves
 * between registers and shared tiles, the TMA emulation and the MMA descriptors use. A tile's base must be
 * aligned to its swizzle's repeat (1024 bytes for 128B) so that the offset function equals the hardware's
 * absolute-address swizzle: KBD_SHARED_STILE and the planner do it; KBD_STILE_AT checks it in CPU mode
 * (KBD_ERR_INVALID naming the tile type's alignment and the address), along with "inside one shared
 * allocation" (KBD_ERR_BOUNDS).
 *
 * The object itself is one pointer (the element type's, so the debugger shows elements); the shape is in
 * its type as never-dereferenced pointer-to-array members that nvcc drops.
 */
#ifndef KBD_STILE_H
#define KBD_STILE_H

#include "config.h"
#include "swizzle.h"
#include "tile_core.h"
#include "types.h"

/* KBD_STILE_MJ(dtype token, rows, cols, swizzle, major): the type of a shared tile. */
#define KBD_STILE_MJ(dt, R, C, swz, major)                                                                             \
  struct {                                                                                                             \
    KBD_SMEM_STATIC_CHECK(sizeof(kbd_##dt), R, C, swz, major);                                                         \
    kbd_##dt *p;                                                                                                       \
    char (*kbd_meta_)[KBD__POS(R)][KBD__POS(C)][1][1][KBD_DT_##dt];                                                    \
    char (*kbd_kind_)[KBD_KIND_SMEM];                                                                                  \
    char (*kbd_smem_)[KBD__POS((swz) + 1)][KBD__POS((major) + 1)];                                                     \
    char (*kbd_sbytes_)[KBD__POS((R) * (C) * (int)KBD_DT_SIZE(KBD_DT_##dt))];                                          \
    char (*kbd_salign_)[KBD__POS(KBD_SWIZZLE_ALIGN(swz))];                                                             \
  }
#define KBD_STILE(dt, R, C, swz) KBD_STILE_MJ(dt, R, C, swz, KBD_SMEM_K_MAJOR)
#define KBD_STILE_MN(dt, R, C, swz) KBD_STILE_MJ(dt, R, C, swz, KBD_SMEM_MN_MAJOR)

/* Compile-time properties of a shared tile expression t. */
#define KBD_STILE_SWIZZLE(t) ((int)(sizeof(*(t).kbd_smem_) / sizeof((*(t).kbd_smem_)[0])) - 1)
#define KBD_STILE_MAJOR(t) ((int)sizeof((*(t).kbd_smem_)[0]) - 1)
/* bytes and alignment are computed once, where the type is spelled, and read back with one sizeof: spelled out
 * from the shape and swizzle at each use they were 10 KB of preprocessed text per shared-memory plan lookup, which
 * every nvcc pass reads (docs/benchmarks.md, compile time) */
#define KBD_STILE_BYTES(t) ((int)sizeof(*(t).kbd_sbytes_))
#define KBD_STILE_ALIGN(t) ((int)sizeof(*(t).kbd_salign_))
/* The same from a type name (for planners and static declarations): no object needed. */
#define KBD__STILE_OBJ(type) (*(type *)0)
#define KBD_STILE_TYPE_BYTES(type) KBD_STILE_BYTES(KBD__STILE_OBJ(type))
#define KBD_STILE_TYPE_ALIGN(type) KBD_STILE_ALIGN(KBD__STILE_OBJ(type))

#define KBD__STILE_RULE "kbd: this operation needs a shared tile (KBD_STILE); the operand is a register tile"
#define KBD__IS_STILE(t) KBD_STATIC_ASSERT(KBD_KIND(t) == KBD_KIND_SMEM, KBD__STILE_RULE)
/* The shared-tile twin of KBD__NEED_REG (kbd/tile_core.h): `what` names the call and the operand. */
#define KBD__NEED_SMEM(x, what, fix)                                                                                   \
  KBD_STATIC_ASSERT(KBD__KIND_OF(x) != KBD_KIND_REG, "kbd: " what ": this operation needs a shared tile (KBD_STILE); " \
                                                     "the operand is a register tile: " fix);                          \
  KBD_STATIC_ASSERT(KBD__KIND_OF(x) == KBD_KIND_SMEM || KBD__KIND_OF(x) == KBD_KIND_REG,                               \
                    "kbd: " what ": this operation needs a shared tile (KBD_STILE), not a scalar, a pointer or a "     \
                    "Tensor Memory tile: " fix)
#if KBD_MODE_CPU || KBD_MODE_CUDA
/* What a call works on after a failed kind check: a square pair, so that the shape rules of every move between
 * registers and shared tiles (plain, window, transposed) hold for the stand-ins. */
typedef KBD_STILE(f32, 32, 32, KBD_SWIZZLE_NONE) kbd__smem_standin;
typedef KBD_TILE(f32, 32, 32, KBD_WARP) kbd__reg_standin32;
#endif

/* The shape as a runtime value (all fields constant at the call site, so everything folds). */
#define KBD_STILE_SHAPE(t)                                                                                             \
  kbd_smem_shape_make(KBD_ESIZE(t), KBD_ROWS(t), KBD_COLS(t), KBD_STILE_SWIZZLE(t), KBD_STILE_MAJOR(t))

/* Byte offset of element (r, c) from the tile base, and its address. */
#define kbd_stile_offset(t, r, c) kbd_stile_offset_((t), KBD_STILE_SHAPE(t), (r), (c))
#define kbd_stile_ptr(t, r, c) ((t).p + kbd_stile_offset(t, r, c) / KBD_ESIZE(t))
#define kbd_stile_offset_(t, shape, r, c) (KBD__IS_STILE_E(t), kbd_stile_off_(shape, r, c))
#define KBD__IS_STILE_E(t) ((void)sizeof(char[KBD_KIND(t) == KBD_KIND_SMEM ? 1 : -1]))
KBD_HD int kbd_stile_off_(kbd_smem_shape s, int r, int c) { return kbd_smem_tile_offset(&s, r, c); }

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#include "smem.h"

/* A tile of type `type` at shared address ptr (checked on the CPU: one allocation, the alignment). */
#define KBD_STILE_AT(type, ptr)                                                                                        \
  __extension__({                                                                                                      \
    type kbd_st_;                                                                                                      \
    kbd_hw_stile_bind((ptr), (size_t)KBD_STILE_BYTES(kbd_st_), KBD_STILE_ALIGN(kbd_st_), #type, KBD_SITE);             \
    kbd_st_.p = (KBD__STILE_ELEM(kbd_st_) *)(void *)(ptr);                                                             \
    kbd_st_;                                                                                                           \
  })
#define KBD__STILE_ELEM(t) __typeof__(*(t).p)

/* `type name`: a shared tile with its own static shared memory, aligned as its swizzle needs. */
#define KBD_SHARED_STILE(type, name)                                                                                   \
  KBD_SHARED_ALIGNED(unsigned char, name##_kbd_mem_, KBD_STILE_TYPE_BYTES(type), KBD_STILE_TYPE_ALIGN(type));          \
  type name = KBD_STILE_AT(type, name##_kbd_mem_)
#endif

#endif /* KBD_STILE_H */
