/* kbd/tile_io.h - moving tiles between registers and global / shared memory.
 *
 *   kbd_load(t, p, n, start)                      1 x C tile  <- p[start .. start+C), masked to [0, n)
 *   kbd_store(p, t, n, start)                     likewise, elements outside [0, n) are not written
 *   kbd_load2d(t, p, nrows, ncols, ld, r0, c0)    R x C tile  <- rows r0.., cols c0.. of a row-major
 *   kbd_store2d(p, t, nrows, ncols, ld, r0, c0)      nrows x ncols tensor with leading dimension ld
 *   kbd_load_smem(t, s, ld) / kbd_store_smem(s, t, ld)   whole tile, row-major in shared memory
 *
 * Masking: elements outside the tensor are read as 0 and never written - a tile may hang over any edge,
 * and nothing outside [0,nrows) x [0,ncols) is touched on either path.
 * Cost (ROW layout): when the tensor address and ld are 16-byte multiples, each thread moves its
 * elements in 16-byte chunks (ld.global.v4 / st.global.v4: consecutive threads hit consecutive chunks,
 * so a warp moves full 128-byte lines); a chunk straddling the edge falls back to per-element masked
 * accesses. TMEM_ACC (a thread holds whole rows, kbd/layout.h) moves 16-byte pieces of the thread's row under
 * the same alignment test: 32 rows per warp instruction, so 32 sectors of which 16 bytes each are used - the
 * register view of an accumulator is not a coalesced layout; stage through a shared tile and a TMA store for
 * a fast epilogue. Other layouts move one element at a time.
 * CPU mode checks, each failing the launch with file:line: every access against kbd_malloc's allocations
 * (global) or the block's allocations (shared); shared reads of never-written bytes and unordered
 * accesses between warps (races) through the shadow state (docs/cpu-machine.md).
 */
#ifndef KBD_TILE_IO_H
#define KBD_TILE_IO_H

#include "tile_core.h"

#if KBD_MODE_CUDA
/* One aligned chunk of 1..16 bytes through a single vector instruction. The register side goes through
 * memcpy so that nvcc keeps the fragment in registers (no alignment assumption on the array). */
KBD_TILE_FN void kbd_chunk_copy_in(void *frag, const void *mem, int bytes) {
  if (bytes == 16) {
    const uint4 x = *(const uint4 *)mem;
    memcpy(frag, &x, 16);
  } else if (bytes == 8) {
    const uint2 x = *(const uint2 *)mem;
    memcpy(frag, &x, 8);
  } else if (bytes == 4) {
    const unsigned x = *(const unsigned *)mem;
    memcpy(frag, &x, 4);
  } else if (bytes == 2) {
    const unsigned short x = *(const unsigned short *)mem;
    memcpy(frag, &x, 2);
  } else {
    *(unsigned char *)frag = *(const unsigned char *)mem;
  }
}
KBD_TILE_FN void kbd_chunk_copy_out(void *mem, const void *frag, int bytes) {
  if (bytes == 16) {
    uint4 x;
    memcpy(&x, frag, 16);
    *(uint4 *)mem = x;
  } else if (bytes == 8) {
    uint2 x;
    memcpy(&x, frag, 8);
    *(uint2 *)mem = x;
  } else if (bytes == 4) {
    unsigned x;
    memcpy(&x, frag, 4);
    *(unsigned *)mem = x;
  } else if (bytes == 2) {
    unsigned short x;
    memcpy(&x, frag, 2);
    *(unsigned short *)mem = x;
  } else {
    *(unsigned char *)mem = *(const unsigned char *)frag;
  }
}
#else
KBD_TILE_FN void kbd_chunk_copy_in(void *frag, const void *mem, int bytes) { memcpy(frag, mem, (size_t)bytes); }
KBD_TILE_FN void kbd_chunk_copy_out(void *mem, const void *frag, int bytes) { memcpy(mem, frag, (size_t)bytes); }
#endif

/* One access of a tile move, for the CPU machine's checks (empty on the GPU): `bytes` bytes at m holding tile
 * element (row, col) onwards. Shared memory: bounds of one allocation, never-written bytes, races; global
 * memory: bounds and state of kbd_malloc allocations. */
KBD_TILE_FN void kbd_tile_access(char *m, size_t bytes, int esize, int store, int is_smem, const char *what,
                                 long long row, long long col, KBD_SITE_PARAMS) {
  if (is_smem) {
    if (store)
      kbd_hw_smem_write(m, bytes, esize, what, row, col, KBD_SITE_ARGS);
    else
      kbd_hw_smem_read(m, bytes, esize, what, row, col, KBD_SITE_ARGS);
  } else {
    if (store)
      kbd_hw_global_write(m, bytes, what, KBD_SITE_ARGS);
    else
      kbd_hw_global_read(m, bytes, what, KBD_SITE_ARGS);
  }
}

/* Elements per vector access: ROW its vec; TMEM_ACC 16 bytes of the thread's row (elements b*C .. b*C+C-1
 * are row 128b + t in column order, C a multiple of 8: only fp8 rows that are not a multiple of 16 elements
 * take 8-byte pieces); other layouts 1 (their consecutive elements are not consecutive in memory). */
KBD_TILE_FN int kbd_tile_run_(kbd_tile_shape s) {
  if (s.layout == KBD_LAYOUT_TMEM_ACC) return 16 / s.esize > 8 && s.cols % 16 != 0 ? 8 : 16 / s.esize;
  return s.layout == KBD_LAYOUT_ROW ? s.vec : 1;
}

#if KBD_MODE_CPU
/* KBD_CPU_PROFILE (kbd/cpu/profile.h): the warp instructions the GPU issues for kbd_tile_move's vector path
 * (the CPU-only fast path below moves the same bytes), one record each with the 32 lanes' addresses: a vector
 * access for the lanes whose chunk is whole inside the tensor, then per element the other lanes' elements that
 * are inside; masked lanes take no part. */
static __attribute__((noinline, unused)) void kbd__tile_prof(kbd_tile_shape s, char *mem, long long nrows,
                                                             long long ncols, long long ld, long long r0, long long c0,
                                                             int store, int is_smem, const char *what, const char *file,
                                                             int line) {
  const int es = s.esize, run = kbd_tile_run_(s), vb = run * es, op = store ? KBD_PROFILE_ST : KBD_PROFILE_LD;
  const int vec_ok = run > 1 &&
                     ((unsigned long long)(size_t)(mem + (r0 * ld + c0) * es) % (unsigned long long)vb) == 0 &&
                     (s.rows == 1 || ((unsigned long long)(ld * es) % (unsigned long long)vb) == 0);
  char *a[KBD_LANES_HELD];
  unsigned char vec[KBD_LANES_HELD], act[KBD_LANES_HELD];
  for (int i = 0; i < s.npt; i += run) {
    int any = 0;
    for (int l = 0; l < KBD_LANES_HELD; ++l) {
      const kbd_coord c = kbd_tile_coord(s, KBD_SCOPE_TID(s.scope, l), i);
      const long long gr = r0 + c.row, gc = c0 + c.col;
      vec[l] = (unsigned char)(vec_ok && gr >= 0 && gr < nrows && gc >= 0 && gc + run <= ncols);
      a[l] = mem + (gr * ld + gc) * es;
      any |= vec[l];
    }
    if (any) {
      if (is_smem)
        kbd_hw_prof_smem(what, op, vb, a, vec, KBD_LANES_HELD, file, line);
      else
        kbd_hw_prof_global(what, op, vb, a, vec, KBD_LANES_HELD, file, line);
    }
    for (int k = 0; k < run; ++k) {
      any = 0;
      for (int l = 0; l < KBD_LANES_HELD; ++l) {
        const kbd_coord c = kbd_tile_coord(s, KBD_SCOPE_TID(s.scope, l), i + k);
        const long long er = r0 + c.row, ec = c0 + c.col;
        act[l] = (unsigned char)(!vec[l] && er >= 0 && er < nrows && ec >= 0 && ec < ncols);
        a[l] = mem + (er * ld + ec) * es;
        any |= act[l];
      }
      if (!any) continue;
      if (is_smem)
        kbd_hw_prof_smem(what, op, es, a, act, KBD_LANES_HELD, file, line);
      else
        kbd_hw_prof_global(what, op, es, a, act, KBD_LANES_HELD, file, line);
    }
  }
}
#endif

/* The one routine behind every tile <-> memory move. frag: the tile's v array; mem: element (0,0) of the
 * tensor; the tile's (0,0) lands at tensor (r0, c0). is_smem: shared memory (no masking). */
KBD_TILE_FN void kbd_tile_move(kbd_tile_shape s, void *frag, char *mem, long long nrows, long long ncols, long long ld,
                               long long r0, long long c0, int store, int is_smem, const char *file, int line) {
  const int es = s.esize;
  const char *what = store ? (is_smem ? "kbd_store_smem" : "kbd_store") : (is_smem ? "kbd_load_smem" : "kbd_load");
  (void)what;
  if (nrows > 1 && ld < ncols)
    KBD_HW_FAULT(KBD_ERR_INVALID, file, line, "%s: leading dimension %lld is smaller than the %lld columns", what, ld,
                 ncols);
  if (!is_smem) { /* the span the tile touches (clipped to the tensor), for a report of its full extent */
    const long long rlo = r0 > 0 ? r0 : 0, rhi = r0 + s.rows < nrows ? r0 + s.rows : nrows;
    const long long clo = c0 > 0 ? c0 : 0, chi = c0 + s.cols < ncols ? c0 + s.cols : ncols;
    if (rlo < rhi && clo < chi) {
      char *lo = mem + (rlo * ld + clo) * es, *hi = mem + ((rhi - 1) * ld + chi) * es;
      kbd_hw_global_range(lo, (size_t)(hi - lo), what, file, line);
    }
  }
#if KBD_MODE_CPU
  if (KBD_UNLIKELY(kbd_hw_prof_on()))
    kbd__tile_prof(s, mem, nrows, ncols, ld, r0, c0, store, is_smem, what, file, line);
  /* Emulator fast path (no GPU counterpart needed: it moves the same bytes). In a ROW tile whose rows hold
   * whole warp runs (cols a multiple of 32*vec), the 32 lanes' chunk j of a warp is one contiguous run of
   * 32*vec elements in one row, so an interior tile is one check and a few memcpys per run instead of
   * per-element coordinate math. Edge tiles (any run not wholly inside the tensor) take the general path. */
  if (s.layout == KBD_LAYOUT_ROW && s.cols % (KBD_WARP_SIZE * s.vec) == 0) {
    const long long tid0 = KBD_SCOPE_TID(s.scope, 0);
    const int runs = s.npt / s.vec;
    int inside = 1;
    for (int j = 0; j < runs && inside; ++j) {
      const long long e0 = ((long long)j * s.scope + tid0) * s.vec;
      const long long gr = r0 + e0 / s.cols, gc = c0 + e0 % s.cols;
      inside = gr >= 0 && gr < nrows && gc >= 0 && gc + KBD_WARP_SIZE * s.vec <= ncols;
    }
    if (inside) {
      const size_t vbytes = (size_t)s.vec * es, lane_stride = (size_t)s.npt * es;
      for (int j = 0; j < runs; ++j) {
        const long long e0 = ((long long)j * s.scope + tid0) * s.vec;
        char *m = mem + ((r0 + e0 / s.cols) * ld + c0 + e0 % s.cols) * es;
        char *f = (char *)frag + (size_t)j * vbytes;
        kbd_tile_access(m, KBD_WARP_SIZE * vbytes, es, store, is_smem, what, e0 / s.cols, e0 % s.cols, file, line);
        if (store) {
          for (int l = 0; l < KBD_WARP_SIZE; ++l)
            memcpy(m + l * vbytes, f + l * lane_stride, vbytes);
        } else {
          for (int l = 0; l < KBD_WARP_SIZE; ++l)
            memcpy(f + l * lane_stride, m + l * vbytes, vbytes);
        }
      }
      return;
    }
  }
#endif
  /* Vector path: ROW (vec > 1) or TMEM_ACC, and every chunk start 16/8/4-byte aligned in memory. Warp-uniform. */
  const int run = kbd_tile_run_(s), vb = run * es;
  const int vec_ok = run > 1 &&
                     ((unsigned long long)(size_t)(mem + (r0 * ld + c0) * es) % (unsigned long long)vb) == 0 &&
                     (s.rows == 1 || ((unsigned long long)(ld * es) % (unsigned long long)vb) == 0);
  for (int l = 0; l < KBD_LANES_HELD; ++l) {
    const int tid = KBD_SCOPE_TID(s.scope, l);
    char *f = (char *)frag + (size_t)l * s.npt * es;
    const int step = run;
    KBD_UNROLL for (int i = 0; i < s.npt; i += step) {
      const kbd_coord c = kbd_tile_coord(s, tid, i);
      const long long gr = r0 + c.row, gc = c0 + c.col;
      const int row_in = gr >= 0 && gr < nrows;
      char *m = mem + (gr * ld + gc) * es;
      if (vec_ok && row_in && gc >= 0 && gc + run <= ncols) {
        kbd_tile_access(m, (size_t)vb, es, store, is_smem, what, c.row, c.col, file, line);
        if (store)
          kbd_chunk_copy_out(m, f + (size_t)i * es, vb);
        else
          kbd_chunk_copy_in(f + (size_t)i * es, m, vb);
        continue;
      }
      for (int k = 0; k < step; ++k) {
        const kbd_coord ck = k ? kbd_tile_coord(s, tid, i + k) : c;
        const long long er = r0 + ck.row, ec = c0 + ck.col;
        char *me = mem + (er * ld + ec) * es;
        const int in = er >= 0 && er < nrows && ec >= 0 && ec < ncols;
        char *fe = f + (size_t)(i + k) * es;
        if (in) kbd_tile_access(me, (size_t)es, es, store, is_smem, what, ck.row, ck.col, file, line);
        if (store) {
          if (in) kbd_chunk_copy_out(me, fe, es);
        } else if (in) {
          kbd_chunk_copy_in(fe, me, es);
        } else {
          memset(fe, 0, (size_t)es);
        }
      }
    }
  }
}

/* The pointer must point to the tile's element type (const allowed), or be void *: a compile-time error
 * naming the rule in C (a plain C compiler would only warn about the mismatch) and in C++. */
#ifdef __cplusplus
#include <type_traits>
template <class P, class E> struct kbd_ptr_ok {
  typedef typename std::remove_cv<typename std::remove_pointer<typename std::decay<P>::type>::type>::type pointee;
  static const bool value = std::is_void<pointee>::value || std::is_same<pointee, E>::value;
};
#define KBD__PTR_MATCHES(t, p, sig)                                                                                    \
  static_assert(kbd_ptr_ok<decltype(p), typename std::remove_reference<decltype((t).v[0][0])>::type>::value,           \
                "kbd: " sig ": the pointer's element type must be the tile's dtype (e.g. const kbd_bf16 * for a "      \
                "bf16 tile)")
#else
#define KBD__PTR_MATCHES(t, p, sig)                                                                                    \
  KBD_STATIC_ASSERT(__builtin_types_compatible_p(__typeof__(*(p)), __typeof__((t).v[0][0])) ||                         \
                        __builtin_types_compatible_p(__typeof__(*(p)), void),                                          \
                    "kbd: " sig ": the pointer's element type must be the tile's dtype (e.g. const kbd_bf16 * for a "  \
                    "bf16 tile)")
#endif
#define KBD__1D_ONLY(t)                                                                                                \
  KBD_STATIC_ASSERT(KBD_ROWS(t) == 1, "kbd: kbd_load/kbd_store are for 1 x N tiles; use kbd_load2d/kbd_store2d")

#define KBD__MOVE(t, p, nrows, ncols, ld, r0, c0, store, smem)                                                         \
  kbd_tile_move(KBD__SHAPE(t), (t).v, (char *)(p), (long long)(nrows), (long long)(ncols), (long long)(ld),            \
                (long long)(r0), (long long)(c0), store, smem, __FILE__, __LINE__)

/* Every move names its destination first (memcpy's order): kbd_store(p, t, ...) writes p. A call in the source-first
 * order of kbd before 2026-11 passes the pointer where the tile goes: the register tile is then the FIRST argument,
 * which is caught before anything reads either argument, and the rest of the call works on the two arguments
 * swapped back, so that this message is the call's only error. */
#define KBD__DST_SWAPPED(dst, t) (KBD__KIND_OF(dst) == KBD_KIND_REG && KBD__KIND_OF(t) != KBD_KIND_REG)
#define KBD__DST_FIRST(swapped, sig)                                                                                   \
  KBD_STATIC_ASSERT(!(swapped),                                                                                        \
                    "kbd: the destination comes first: " sig "; the second argument must be the register tile")
/* The front end of every move between a register tile t0 and memory p0 (sig: the call's signature): one check per
 * argument, the first failing one the only message; then kbd_mt_ is the tile (or a stand-in) and KBD__MPTR the
 * pointer (or a stand-in of the tile's element type, also when the tile was wrong). */
#define KBD__MOVE_ARGS(t0, p0, sig, pname)                                                                             \
  enum { kbd_mk_ = KBD__KIND_OF(t0) };                                                                                 \
  KBD__NEED_REG_K(kbd_mk_, sig ", operand t", "not a scalar or a pointer");                                            \
  enum { kbd_mok_ = kbd_mk_ == KBD_KIND_REG && KBD__IS_PTR(p0) };                                                      \
  KBD_STATIC_ASSERT(kbd_mk_ != KBD_KIND_REG || KBD__IS_PTR(p0),                                                        \
                    "kbd: " sig ", operand " pname ": must be a pointer to the tile's elements (e.g. float * for an "  \
                    "f32 tile)");                                                                                      \
  KBD__BIND(kbd_mt_, KBD__OR(kbd_mk_ == KBD_KIND_REG, t0, kbd__reg_standin))
#define KBD__MPTR(p0) KBD__OR(kbd_mok_, p0, KBD__TYPE(KBD__AT(kbd_mt_).v[0][0]) *)
#define kbd_load(t, p, n, start)                                                                                       \
  do {                                                                                                                 \
    KBD__MOVE_ARGS(t, p, "kbd_load(t, p, n, start)", "p");                                                             \
    KBD__1D_ONLY(KBD__AT(kbd_mt_));                                                                                    \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(p), "kbd_load(t, p, n, start)");                                      \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(p), 1, n, n, 0, start, 0, 0);                                                \
  } while (0)
#define kbd_store(p, t, n, start)                                                                                      \
  do {                                                                                                                 \
    enum { kbd_msw_ = KBD__DST_SWAPPED(p, t) };                                                                        \
    KBD__DST_FIRST(kbd_msw_, "kbd_store(p, t, n, start)");                                                             \
    KBD__MOVE_ARGS(KBD__PICK(kbd_msw_, p, t), KBD__PICK(kbd_msw_, t, p), "kbd_store(p, t, n, start)", "p");            \
    KBD__1D_ONLY(KBD__AT(kbd_mt_));                                                                                    \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, p)), "kbd_store(p, t, n, start)");             \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, p)), 1, n, n, 0, start, 1, 0);                        \
  } while (0)
#define kbd_load2d(t, p, nrows, ncols, ld, r0, c0)                                                                     \
  do {                                                                                                                 \
    KBD__MOVE_ARGS(t, p, "kbd_load2d(t, p, nrows, ncols, ld, r0, c0)", "p");                                           \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(p), "kbd_load2d(t, p, nrows, ncols, ld, r0, c0)");                    \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(p), nrows, ncols, ld, r0, c0, 0, 0);                                         \
  } while (0)
#define kbd_store2d(p, t, nrows, ncols, ld, r0, c0)                                                                    \
  do {                                                                                                                 \
    enum { kbd_msw_ = KBD__DST_SWAPPED(p, t) };                                                                        \
    KBD__DST_FIRST(kbd_msw_, "kbd_store2d(p, t, nrows, ncols, ld, r0, c0)");                                           \
    KBD__MOVE_ARGS(KBD__PICK(kbd_msw_, p, t), KBD__PICK(kbd_msw_, t, p),                                               \
                   "kbd_store2d(p, t, nrows, ncols, ld, r0, c0)", "p");                                                \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, p)),                                           \
                     "kbd_store2d(p, t, nrows, ncols, ld, r0, c0)");                                                   \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, p)), nrows, ncols, ld, r0, c0, 1, 0);                 \
  } while (0)
#define kbd_load_smem(t, s, ld)                                                                                        \
  do {                                                                                                                 \
    KBD__MOVE_ARGS(t, s, "kbd_load_smem(t, s, ld)", "s");                                                              \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(s), "kbd_load_smem(t, s, ld)");                                       \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(s), KBD_ROWS(KBD__AT(kbd_mt_)), KBD_COLS(KBD__AT(kbd_mt_)), ld, 0, 0, 0, 1); \
  } while (0)
#define kbd_store_smem(s, t, ld)                                                                                       \
  do {                                                                                                                 \
    enum { kbd_msw_ = KBD__DST_SWAPPED(s, t) };                                                                        \
    KBD__DST_FIRST(kbd_msw_, "kbd_store_smem(s, t, ld)");                                                              \
    KBD__MOVE_ARGS(KBD__PICK(kbd_msw_, s, t), KBD__PICK(kbd_msw_, t, s), "kbd_store_smem(s, t, ld)", "s");             \
    KBD__PTR_MATCHES(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, s)), "kbd_store_smem(s, t, ld)");              \
    KBD__MOVE(KBD__AT(kbd_mt_), KBD__MPTR(KBD__PICK(kbd_msw_, t, s)), KBD_ROWS(KBD__AT(kbd_mt_)),                      \
              KBD_COLS(KBD__AT(kbd_mt_)), ld, 0, 0, 1, 1);                                                             \
  } while (0)

#endif /* KBD_TILE_IO_H */
