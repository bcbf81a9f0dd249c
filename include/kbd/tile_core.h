/* kbd/tile_core.h - register tiles: declaration, compile-time shape, fragment iteration.
 *
 *   KBD_TILE(f32, 1, 1024, KBD_CTA) a, b;             // 1 x 1024 floats owned by the whole block
 *   KBD_TILE_L(f32, 64, 128, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
 *   typedef KBD_TILE(bf16, 16, 64, KBD_WARP) my_tile;  // a tile type to pass to device helpers
 *
 * A tile of R x C elements owned by S threads (a scope: KBD_WARP 32, KBD_WARPGROUP 128, KBD_CTA the
 * block) gives each thread npt = R*C/S elements, placed by a fragment layout (layout.h). Thread t of the
 * scope is block thread (t mod S), so a warpgroup tile in a 256-thread block exists once per warpgroup.
 * GPU: `v[1][npt]` - the thread's registers. CPU: `v[32][npt]` - exactly what the 32 lanes of the running
 * warp hold on the GPU, so a warp touching elements it does not own fails the same way on both.
 *
 * The shape travels in the type: `kbd_meta_` is a never-used pointer to a char array whose extents are
 * [rows][cols][scope threads][layout][dtype]; sizeof on it yields compile-time constants in C and C++
 * alike, and nvcc drops the unused member with the rest of the struct's scalar replacement.
 */
#ifndef KBD_TILE_CORE_H
#define KBD_TILE_CORE_H

#include <string.h>

#include "config.h"
#include "convert.h"
#include "launch.h"
#include "layout.h"
#include "types.h"

#include "hw.h" /* KBD_LANES_HELD: 32 on the CPU (the warp's lanes), 1 on the GPU (the thread's own) */

/* KBD_NO_UNROLL keeps a loop rolled where nvcc would unroll it: a big body compiled once costs cicc and
 * ptxas a fraction of its unrolled copies (an epilogue over accumulator chunks, docs/benchmarks.md). */
#if KBD_MODE_CPU
#define KBD_TILE_FN static inline __attribute__((always_inline))
#define KBD_UNROLL
#define KBD_NO_UNROLL
#else
#define KBD_TILE_FN static __device__ __forceinline__
#define KBD_UNROLL _Pragma("unroll")
#define KBD_NO_UNROLL _Pragma("unroll 1")
#endif

/* Vector width (elements) of a ROW tile: 4 elements per chunk when the shape allows, else 2, else 1 -
 * the SAME for every dtype, so tiles of one shape but different dtypes have the same partition and
 * mixed-precision code (load bf16, kbd_convert to f32, compute, convert back) pairs the right elements.
 * 4 f32 = one 16-byte access per chunk; bf16/f16 chunks are 8 bytes, fp8 4 bytes - still fully
 * coalesced (a warp covers whole 128-byte lines), only more instructions for narrow types. */
#define KBD__VOK(v, sz, R, C, S) ((C) % (v) == 0 && ((long long)(R) * (C)) % ((long long)(S) * (v)) == 0)
#define KBD__VEC(sz, R, C, S) (KBD__VOK(4, sz, R, C, S) ? 4 : KBD__VOK(2, sz, R, C, S) ? 2 : 1)

#define KBD__NPT(R, C, S) ((long long)(R) * (C) / (S) > 0 ? (int)((long long)(R) * (C) / (S)) : 1)
#define KBD__POS(x) ((x) > 0 ? (x) : 1)

/* A warpgroup tile spreads its elements over 128 threads; a block of 32 or 64 threads has no owner for the
 * missing warps' share, which no load, store or op would then touch. Checked where the block is known: in
 * a kernel body (KBD__CTA_THREADS is KBD__NO_KERNEL, larger than any block, elsewhere). */
#define KBD__WARPGROUP_TILE_RULE                                                                                       \
  "kbd: a KBD_WARPGROUP tile needs a block of at least 128 threads (one whole warpgroup): in a smaller block the "     \
  "elements of the missing warps would have no owner"
/* The same for any scope: a tile owned by more threads than the block has (KBD_TILE(f32, 1, 256, 256) in a
 * 128-thread kernel) leaves the missing threads' elements unowned. */
#define KBD__SCOPE_TILE_RULE                                                                                           \
  "kbd: a tile's scope must not be larger than the block (KBD_BLOCK_THREADS): the elements of the missing threads "    \
  "would have no owner"

/* Storage kinds: part of every tile type (kbd_kind_), so the shape queries below work on all of them and an
 * operation that needs one kind rejects another at compile time. Shared tiles: kbd/stile.h. */
#define KBD_KIND_REG 1  /* registers: v[lanes][npt] */
#define KBD_KIND_SMEM 2 /* shared memory: a pointer + swizzle + major-ness */
#define KBD_KIND_TMEM 3 /* Tensor Memory (sm_100a), with the MMA layer */
#define KBD_KIND(t) ((int)sizeof(*(t).kbd_kind_))
#define KBD__REG_RULE                                                                                                  \
  "kbd: this operation needs a register tile (KBD_TILE); a shared tile (KBD_STILE) moves to registers with "           \
  "kbd_stile_load first"
#define KBD__IS_REG(t) KBD_STATIC_ASSERT(KBD_KIND(t) == KBD_KIND_REG, KBD__REG_RULE)

/* ---- one message per mistake ------------------------------------------------------------------------------------
 * A rule check only helps when its message is the first error and, as far as the compiler allows, the only one. A
 * static assertion does not stop the compiler: the expression after it still reads `.v`, `.kbd_meta_`, ... of an
 * argument that is no tile (a scalar, a pointer in the old argument order) or the wrong kind of tile, and each
 * of those reads is another error (27 to 99 lines of them after one clear line). So the call macros test their
 * arguments first, with tests that compile for ANY expression, and then work on a stand-in of the right type
 * where a test failed:
 *   KBD__KIND_OF(x)        x's storage kind (KBD_KIND_REG, _SMEM, _TMEM) or KBD__KIND_NONE when x is no tile
 *   KBD__IS_SCALAR(x)      x is an arithmetic value (what a scalar operand or a reduction's result needs)
 *   KBD__OR(ok, x, T)      x where ok, else an object of type T (never evaluated: ok false is a compile error)
 *   KBD__PICK(c, a, b)     a where c, else b (both valid expressions: a swapped argument pair)
 *   KBD__BIND(n, e) / KBD__AT(n)   e bound once to n (KBD__BIND_VAL: a copy, for shared-tile handles): the stand-in selection is spelled out once per call, not
 *                          at each of the tens of uses of the argument in the body (C binds a pointer, so there a
 *                          tile argument must be an lvalue - a variable, not a function's result; C++ binds
 *                          either)
 * C has no way to ask a type for a member, but gcc and clang classify an expression's type
 * (__builtin_classify_type, 12 = struct) and select between expressions of different types without evaluating
 * or converting the other (__builtin_choose_expr); member accesses then only ever apply to a struct with
 * kbd_kind_ (kbd's structs without it, the lanes values of kbd/reduce.h, are told apart by type). C++ (g++ and
 * nvcc) asks the type through a partial specialisation and selects through a template. */
#define KBD__KIND_NONE 8 /* no tile: a scalar, a pointer, another struct */
#ifdef __cplusplus
#include <type_traits>
template <class T> using kbd__bare = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
template <class T, class = void> struct kbd__kind_of_ {
  enum { value = KBD__KIND_NONE };
};
template <class T> struct kbd__kind_of_<T, decltype((void)sizeof(*((T *)0)->kbd_kind_))> {
  enum { value = sizeof(*((T *)0)->kbd_kind_) };
};
#if KBD_MODE_CUDA
#define KBD__SEL_FN static __host__ __device__ __forceinline__
#else
#define KBD__SEL_FN static inline
#endif
/* get() returns X itself: a reference for an lvalue argument (a tile variable, the usual case: no copy), the value
 * for an rvalue (a tile a function returned), which KBD__BIND's auto && then keeps alive to the end of the call. */
template <bool OK, class D> struct kbd__or_ {
  template <class X> KBD__SEL_FN X get(X &&x) { return static_cast<X &&>(x); }
};
template <class D> struct kbd__or_<false, D> { /* only on a failed check, which stops the compile: never runs */
  template <class X> KBD__SEL_FN D &get(X &&x) { return *(D *)(void *)&x; }
};
template <bool C> struct kbd__pick_ {
  template <class A, class B> KBD__SEL_FN A get(A &&a, B &&) { return static_cast<A &&>(a); }
};
template <> struct kbd__pick_<false> {
  template <class A, class B> KBD__SEL_FN B get(A &&, B &&b) { return static_cast<B &&>(b); }
};
#define KBD__KIND_OF(x) ((int)kbd__kind_of_<kbd__bare<decltype(x)>>::value)
#define KBD__IS_SCALAR(x)                                                                                              \
  (std::is_arithmetic<kbd__bare<decltype(x)>>::value || std::is_enum<kbd__bare<decltype(x)>>::value)
#define KBD__TYPE(x) kbd__bare<decltype(x)>
#define KBD__IS_PTR(x) (std::is_pointer<kbd__bare<decltype(x)>>::value || std::is_array<kbd__bare<decltype(x)>>::value)
#define KBD__OR(ok, x, T) (kbd__or_<(bool)(ok), T>::get(x))
#define KBD__PICK(c, a, b) (kbd__pick_<(bool)(c)>::get(a, b))
#define KBD__BIND(n, e) auto &&n = e
#define KBD__BIND_VAL(n, e) auto &&n = e
#define KBD__AT(n) (n)
#else
struct kbd__kinded {
  char (*kbd_kind_)[KBD__KIND_NONE];
};
#define KBD__CLASS(x) __builtin_classify_type(x)
#define KBD__IS_OBJ_(x)                                                                                                \
  (KBD__CLASS(x) == 12 && !__builtin_types_compatible_p(__typeof__(x), struct kbd_lanes_f32) &&                        \
   !__builtin_types_compatible_p(__typeof__(x), struct kbd_lanes_i32))
#define KBD__KIND_OF(x) KBD_KIND(__builtin_choose_expr(KBD__IS_OBJ_(x), (x), (*(struct kbd__kinded *)0)))
#define KBD__IS_SCALAR(x) ((KBD__CLASS(x) >= 1 && KBD__CLASS(x) <= 4) || KBD__CLASS(x) == 8)
#define KBD__TYPE(x) __typeof__(x)
#define KBD__IS_PTR(x) (KBD__CLASS(x) == 5 || KBD__CLASS(x) == 14) /* arrays decay: 5 (pointer) */
#define KBD__OR(ok, x, T) __builtin_choose_expr((ok), (x), (*(T *)0))
#define KBD__PICK(c, a, b) __builtin_choose_expr((c), (a), (b))
#define KBD__BIND(n, e) __typeof__(e) *const n = &(e)
/* a shared tile is a handle (one pointer and type-only members): bound by value, so that any expression names
 * one - a stage picked with ?:, a function's result - as before the kind checks */
#define KBD__BIND_VAL(n, e) __typeof__(e) n##v_ = (e), *const n = &n##v_
#define KBD__AT(n) (*(n))
#endif
/* `what` names the call and the operand, e.g. "kbd_add(d, a, b), operand b"; `not_tile` is the fix for a value
 * that is no tile at all. Exactly one of the three fires for an operand of the wrong kind. The _K forms take the
 * kind (KBD__KIND_OF, computed once per operand into an enum: in C each KBD__KIND_OF is a few hundred characters
 * of preprocessed text, which every use would repeat). */
#define KBD__NEED_REG_K(k, what, not_tile)                                                                             \
  KBD_STATIC_ASSERT((k) != KBD_KIND_SMEM, "kbd: " what ": this operation needs a register tile (KBD_TILE); a shared "  \
                                          "tile (KBD_STILE) moves to registers with kbd_stile_load(t, s) first");      \
  KBD_STATIC_ASSERT((k) < KBD_KIND_TMEM || (k) == KBD__KIND_NONE,                                                      \
                    "kbd: " what ": this operation needs a register tile (KBD_TILE); a Tensor Memory accumulator "     \
                    "moves to registers with kbd_acc_load(r, acc, col0) first");                                       \
  KBD_STATIC_ASSERT((k) != KBD__KIND_NONE, "kbd: " what ": this operation needs a register tile "                      \
                                           "(KBD_TILE), " not_tile)
#define KBD__NEED_REG(x, what, not_tile) KBD__NEED_REG_K(KBD__KIND_OF(x), what, not_tile)
#define KBD__REG_OR(x, T) KBD__OR(KBD__KIND_OF(x) == KBD_KIND_REG, x, T)

/* The tile type: KBD_TILE_L(dtype token, rows, cols, scope threads, layout id). Shape rules are checked
 * here, at compile time, each with a message naming the rule. */
#define KBD_TILE_L(dt, R, C, S, L)                                                                                     \
  struct {                                                                                                             \
    KBD_STATIC_ASSERT((R) > 0 && (C) > 0, "kbd: tile rows and cols must be positive" KBD__SHAPE_IS(R, C));             \
    KBD_STATIC_ASSERT((S) >= 32 && (S) <= 1024 && (S) % 32 == 0,                                                       \
                      "kbd: a tile's scope must be whole warps: KBD_WARP, KBD_WARPGROUP or KBD_CTA");                  \
    KBD_STATIC_ASSERT(((long long)(R) * (C)) % (S) == 0,                                                               \
                      "kbd: tile rows*cols must be a multiple of the owning scope's thread count" KBD__SHAPE_IS(R,     \
                                                                                                                C));   \
    KBD_STATIC_ASSERT((S) != KBD_WARPGROUP || KBD__CTA_THREADS >= KBD_WARPGROUP, KBD__WARPGROUP_TILE_RULE);            \
    KBD_STATIC_ASSERT((S) == KBD_WARPGROUP || (S) <= KBD__CTA_THREADS, KBD__SCOPE_TILE_RULE);                          \
    KBD_LAYOUT_STATIC_CHECK((L), R, C, (S), KBD__VEC(sizeof(kbd_##dt), R, C, S));                                      \
    kbd_##dt v[KBD_LANES_HELD][KBD__NPT(R, C, S)];                                                                     \
    char (*kbd_meta_)[KBD__POS(R)][KBD__POS(C)][KBD__POS(S)][KBD__POS(L)][KBD_DT_##dt];                                \
    /* the vector width, computed once here: KBD_VEC(t) is then one sizeof, where recomputing it from the shape        \
     * at every use made each reduction's rule checks tens of kilobytes of preprocessed text */                        \
    char (*kbd_vec_)[KBD__VEC(sizeof(kbd_##dt), R, C, S)];                                                             \
    char (*kbd_kind_)[KBD_KIND_REG];                                                                                   \
  }

#define KBD_TILE(dt, R, C, S) KBD_TILE_L(dt, R, C, S, KBD_LAYOUT_ROW)

#if KBD_MODE_CPU || KBD_MODE_CUDA
/* What a call works on after a failed kind check where no other operand has the right type (KBD__OR). */
typedef KBD_TILE(f32, 1, 32, KBD_WARP) kbd__reg_standin;
#endif

/* Compile-time properties of a tile expression t. */
#define KBD__META(t) (*(t).kbd_meta_)
#define KBD_ROWS(t) ((int)(sizeof(KBD__META(t)) / sizeof(KBD__META(t)[0])))
#define KBD_COLS(t) ((int)(sizeof(KBD__META(t)[0]) / sizeof(KBD__META(t)[0][0])))
#define KBD_SCOPE(t) ((int)(sizeof(KBD__META(t)[0][0]) / sizeof(KBD__META(t)[0][0][0])))
#define KBD_LAYOUT(t) ((int)(sizeof(KBD__META(t)[0][0][0]) / sizeof(KBD__META(t)[0][0][0][0])))
#define KBD_DTYPE(t) ((int)sizeof(KBD__META(t)[0][0][0][0]))
#define KBD_NPT(t) ((int)(sizeof((t).v[0]) / sizeof((t).v[0][0])))
#define KBD_ESIZE(t) ((int)KBD_DT_SIZE(KBD_DTYPE(t)))
#define KBD_VEC(t) ((int)sizeof(*(t).kbd_vec_))

#define KBD__SAME_SHAPE(a, b)                                                                                          \
  KBD__IS_REG(a);                                                                                                      \
  KBD__IS_REG(b);                                                                                                      \
  KBD__SAME_SHAPE_P(a, b, "kbd: ")
/* The shape rule alone, naming the call (the operands are register tiles, or stand-ins of one shape). */
#define KBD__SAME_SHAPE_IN(a, b, name) KBD__SAME_SHAPE_P(a, b, "kbd: " name ": ")
#define KBD__SAME_SHAPE_P(a, b, prefix)                                                                                \
  KBD_STATIC_ASSERT(KBD_ROWS(a) == KBD_ROWS(b) && KBD_COLS(a) == KBD_COLS(b) && KBD_SCOPE(a) == KBD_SCOPE(b) &&        \
                        KBD_LAYOUT(a) == KBD_LAYOUT(b) && KBD_VEC(a) == KBD_VEC(b),                                    \
                    prefix "tile operands must have the same rows, cols, scope and layout (dtypes may differ): "       \
                           "declare them with one KBD_TILE(dtype, R, C, scope) shape")

/* Thread index within a scope of `scope` threads of `lane` of the running warp: block thread mod scope.
 * The one definition used by every fragment walk (the GPU uses its own %tid.x, the CPU the lane). */
#if KBD_MODE_CPU
#define KBD_SCOPE_TID(scope, lane) ((int)((unsigned)(kbd_warp_id() * KBD_WARP_SIZE + (lane)) % (unsigned)(scope)))
#else
#define KBD_SCOPE_TID(scope, lane) ((int)(threadIdx.x % (unsigned)(scope)) + 0 * (lane))
#endif
#define KBD__TID(t, lane) KBD_SCOPE_TID(KBD_SCOPE(t), lane)

/* Static shape of a tile, passed by value to the generic helpers (all fields compile-time constants at
 * the call site, so the always-inlined helpers fold to straight-line code). */
typedef struct kbd_tile_shape {
  int rows, cols, scope, layout, dtype, npt, vec, esize;
} kbd_tile_shape;

#define KBD__SHAPE(t)                                                                                                  \
  kbd_tile_shape_of(KBD_ROWS(t), KBD_COLS(t), KBD_SCOPE(t), KBD_LAYOUT(t), KBD_DTYPE(t), KBD_NPT(t), KBD_VEC(t),       \
                    KBD_ESIZE(t))

KBD_TILE_FN kbd_tile_shape kbd_tile_shape_of(int rows, int cols, int scope, int layout, int dtype, int npt, int vec,
                                             int esize) {
  kbd_tile_shape s;
  s.rows = rows;
  s.cols = cols;
  s.scope = scope;
  s.layout = layout;
  s.dtype = dtype;
  s.npt = npt;
  s.vec = vec;
  s.esize = esize;
  return s;
}

/* (row, col) of element i of thread `tid` (scope-relative). */
KBD_TILE_FN kbd_coord kbd_tile_coord(kbd_tile_shape s, int tid, int i) {
  return kbd_layout_coord(s.layout, s.rows, s.cols, s.scope, s.vec, tid, i);
}

#define KBD__FOR_FRAG(t, l, i)                                                                                         \
  for (int l = 0; l < KBD_LANES_HELD; ++l)                                                                             \
  KBD_UNROLL for (int i = 0; i < KBD_NPT(t); ++i)

/* ---- user elementwise map ---------------------------------------------------------------------------
 * KBD_MAP(dst, src, x, r, c, expr): dst[r][c] = expr for every element, where x is src's element as float
 * and r, c are its tile row and column (ints). dst and src have the same shape; they may be the same tile.
 *   KBD_MAP(y, y, x, r, c, (c <= r) ? x : -INFINITY);   // causal mask
 */
#define KBD_MAP(dst, src, x, r, c, expr)                                                                               \
  do {                                                                                                                 \
    KBD__SAME_SHAPE(dst, src);                                                                                         \
    const kbd_tile_shape kbd_ms_ = KBD__SHAPE(dst);                                                                    \
    for (int kbd_ml_ = 0; kbd_ml_ < KBD_LANES_HELD; ++kbd_ml_) {                                                       \
      const int kbd_mt_ = KBD__TID(dst, kbd_ml_);                                                                      \
      KBD_UNROLL for (int kbd_mi_ = 0; kbd_mi_ < KBD_NPT(dst); ++kbd_mi_) {                                            \
        const kbd_coord kbd_mc_ = kbd_tile_coord(kbd_ms_, kbd_mt_, kbd_mi_);                                           \
        const int r = kbd_mc_.row, c = kbd_mc_.col;                                                                    \
        const float x = kbd_dt_load_f32(&(src).v[kbd_ml_][kbd_mi_], KBD_DTYPE(src));                                   \
        (void)r;                                                                                                       \
        (void)c;                                                                                                       \
        (void)x;                                                                                                       \
        kbd_dt_store_f32(&(dst).v[kbd_ml_][kbd_mi_], KBD_DTYPE(dst), (float)(expr));                                   \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

#endif /* KBD_TILE_CORE_H */
