/* kbd/print.h - print a tile by (row, col) from kernel code: a debugging aid.
 *
 *   kbd_print(t)              register tile t, to stdout          kbd_fprint(f, t)        to FILE *f
 *   kbd_stile_print(s)        shared tile s, to stdout            kbd_stile_fprint(f, s)  to FILE *f
 *
 * Output: a header naming the tile expression, the call site, the block and the tile type, then one line
 * per row; floats with %g (f16, bf16, e4m3, e5m2 converted to float), i32, s8 and u8 with %d:
 *
 *   kbd_print acc at gemm.cu:88, block (0,0,0): f32 2 x 4, layout ROW, scope CTA (64 threads)
 *     row 0: 0 1 2 3
 *     row 1: 4 5 6 7
 *
 * CPU mode (the use it is made for): a register tile's elements live in the lanes of every warp of its
 * scope, and each warp is its own fiber. kbd_print is therefore a collective over the scope, like every
 * other tile operation: each warp of the scope instance copies the elements its 32 lanes hold into a
 * host-side gather buffer (no shared memory, no barrier: printing changes neither the kernel's shared
 * memory nor its schedule), and the warp that completes the tile prints it, once, as a whole grid. A warp
 * tile is printed by its warp (header "scope warp w"), a warpgroup tile once per warpgroup. If some warps
 * of the scope never reach the kbd_print (a divergent print), the partial tile is printed at exit(), marked
 * INCOMPLETE, with '?' for the missing elements (a later launch's kbd_print at the same site of the same
 * block can join such a leftover: fix the divergence first). A shared tile is in memory every warp can
 * read: kbd_stile_print prints it whole from the calling warp, with plain loads (the race checker and the
 * profile do not see it; never-written bytes show the CPU machine's poison pattern); call it from one warp
 * (`if (kbd_warp_id() == 0)`) to get one copy. Prints are whole under a lock: blocks running on different
 * host threads interleave whole tiles, never lines.
 *
 * GPU (sm_90a, sm_100a): device printf, one line per element, "name[r][c] = value", from the thread that
 * holds it, after a header from the scope's thread 0 - in no particular order (the CUDA printf buffer
 * interleaves warps). The FILE argument is ignored (not evaluated: stdout is a host object). A kernel that
 * prints uses a stack frame for printf's arguments, so it fails tools/kbd-ptx-check.sh: debug builds only.
 */
#ifndef KBD_PRINT_H
#define KBD_PRINT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stile.h"
#include "tile_core.h"

KBD_HD const char *kbd__print_dtype_name(int dt) {
  return dt == KBD_DT_f32    ? "f32"
         : dt == KBD_DT_f16  ? "f16"
         : dt == KBD_DT_bf16 ? "bf16"
         : dt == KBD_DT_e4m3 ? "e4m3"
         : dt == KBD_DT_e5m2 ? "e5m2"
         : dt == KBD_DT_i32  ? "i32"
         : dt == KBD_DT_s8   ? "s8"
         : dt == KBD_DT_u8   ? "u8"
                             : "?";
}
KBD_HD const char *kbd__print_layout_name(int l) {
  return l == KBD_LAYOUT_ROW         ? "ROW"
         : l == KBD_LAYOUT_WGMMA_ACC ? "WGMMA_ACC"
         : l == KBD_LAYOUT_MMA_A     ? "MMA_A"
         : l == KBD_LAYOUT_MMA_B     ? "MMA_B"
         : l == KBD_LAYOUT_MMA_C     ? "MMA_C"
         : l == KBD_LAYOUT_TMEM_ACC  ? "TMEM_ACC"
                                     : "?";
}
KBD_HD const char *kbd__print_swizzle_name(int m) {
  return m == KBD_SWIZZLE_NONE          ? "NONE"
         : m == KBD_SWIZZLE_32B         ? "32B"
         : m == KBD_SWIZZLE_64B         ? "64B"
         : m == KBD_SWIZZLE_128B        ? "128B"
         : m == KBD_SWIZZLE_128B_ATOM32 ? "128B_ATOM32"
                                        : "?";
}
/* The printed path: the file name without its directories (CMake passes absolute paths). */
KBD_HD const char *kbd__print_base(const char *file) {
  const char *b = file;
  for (const char *p = file; *p; ++p)
    if (*p == '/') b = p + 1;
  return b;
}

#if KBD_MODE_CPU
#include <pthread.h>

#include "hw.h"

/* One element value as double (exact for every dtype, i32 included). */
static inline double kbd__print_elem(const void *p, int dt) {
  return KBD_DT_IS_INT(dt) ? (double)kbd_dt_load_i32(p, dt) : (double)kbd_dt_load_f32(p, dt);
}

static inline void kbd__print_rows(FILE *f, int rows, int cols, int dt, const double *val, const unsigned char *have) {
  for (int r = 0; r < rows; ++r) {
    fprintf(f, "  row %d:", r);
    for (int c = 0; c < cols; ++c) {
      const double x = val[(size_t)r * cols + c];
      if (have && !have[(size_t)r * cols + c])
        fputs(" ?", f);
      else if (KBD_DT_IS_INT(dt))
        fprintf(f, " %d", (int)x);
      else
        fprintf(f, " %g", x);
    }
    fputc('\n', f);
  }
}

static inline void kbd__print_header(FILE *f, const char *name, const char *file, int line, unsigned bx, unsigned by,
                                     unsigned bz) {
  fprintf(f, "kbd_print %s at %s:%d, block (%u,%u,%u): ", name, kbd__print_base(file), line, bx, by, bz);
}

/* A register tile being gathered: one per (CTA, call site, scope instance) until its last warp arrives. */
typedef struct kbd__print_gather {
  struct kbd__print_gather *next;
  const void *cta; /* the CTA's shared memory: unique among the CTAs running */
  const char *name, *file;
  int line, inst, rows, cols, dtype, layout, scope, block_threads;
  unsigned bx, by, bz;
  unsigned long long warps; /* bit per warp of the instance that has arrived */
  int need;                 /* warps in the instance */
  FILE *f;
  double *val;
  unsigned char *have;
} kbd__print_gather;

/* Gathers in flight, process-wide (blocks run on several host threads; printing is no hot path). Weak: one
 * list per program, however many translation units include kbd. */
KBD_WEAK kbd__print_gather *kbd__print_pending = NULL;
KBD_WEAK pthread_mutex_t kbd__print_mu = PTHREAD_MUTEX_INITIALIZER;
KBD_WEAK int kbd__print_atexit_set = 0;

static inline void kbd__print_emit(kbd__print_gather *g, int complete) {
  kbd__print_header(g->f, g->name, g->file, g->line, g->bx, g->by, g->bz);
  fprintf(g->f, "%s %d x %d, layout %s, scope ", kbd__print_dtype_name(g->dtype), g->rows, g->cols,
          kbd__print_layout_name(g->layout));
  const int first = g->inst * g->scope;
  if (g->scope == KBD_WARP_SIZE)
    fprintf(g->f, "warp %d", g->inst);
  else if (g->scope == g->block_threads)
    fprintf(g->f, "CTA (%d threads)", g->scope);
  else if (g->scope == 4 * KBD_WARP_SIZE)
    fprintf(g->f, "warpgroup %d (threads %d-%d)", g->inst, first, first + g->scope - 1);
  else
    fprintf(g->f, "threads %d-%d", first, first + g->scope - 1);
  fputs(complete ? "\n" : " - INCOMPLETE: not every warp of the scope reached this kbd_print\n", g->f);
  kbd__print_rows(g->f, g->rows, g->cols, g->dtype, g->val, complete ? NULL : g->have);
  fflush(g->f);
}

static inline void kbd__print_unlink(kbd__print_gather **pp) {
  kbd__print_gather *g = *pp;
  *pp = g->next;
  free(g->val);
  free(g->have);
  free(g);
}

/* At exit: a gather still open can no longer complete (some warps of its scope skipped the print). */
static inline void kbd__print_flush(void) {
  pthread_mutex_lock(&kbd__print_mu);
  while (kbd__print_pending) {
    kbd__print_emit(kbd__print_pending, 0);
    kbd__print_unlink(&kbd__print_pending);
  }
  pthread_mutex_unlock(&kbd__print_mu);
}

/* The running warp's part of a register tile: v is the fragment array v[32][npt] of shape s; block_threads
 * is the kernel's (KBD__CTA_THREADS: larger than any block outside a kernel body). */
static inline void kbd__print_frag(FILE *f, const char *name, const char *file, int line, kbd_tile_shape s,
                                   int block_threads, const void *v) {
  const void *cta = kbd_hw_dynamic_smem();
  const int wid = kbd_hw_warp_id(), inst = wid * KBD_WARP_SIZE / s.scope;
  const int bit = wid - inst * (s.scope / KBD_WARP_SIZE);
  const unsigned bx = kbd_hw_block_x(), by = kbd_hw_block_y(), bz = kbd_hw_block_z();
  pthread_mutex_lock(&kbd__print_mu);
  if (!kbd__print_atexit_set) {
    kbd__print_atexit_set = 1;
    atexit(kbd__print_flush);
  }
  /* The oldest gather of this site and instance that this warp has not yet contributed to: warps reach a
   * print in a loop equally often, not necessarily in step. */
  kbd__print_gather *g = NULL, **tail = &kbd__print_pending;
  for (kbd__print_gather **pp = &kbd__print_pending; *pp; pp = &(*pp)->next) {
    kbd__print_gather *e = *pp;
    tail = &e->next;
    if (!g && e->cta == cta && e->bx == bx && e->by == by && e->bz == bz && e->line == line && e->inst == inst &&
        (e->file == file || !strcmp(e->file, file)) && !(e->warps >> bit & 1ull))
      g = e;
  }
  if (!g) {
    const size_t n = (size_t)s.rows * s.cols;
    g = (kbd__print_gather *)calloc(1, sizeof *g);
    if (!g || !(g->val = (double *)calloc(n, sizeof(double))) || !(g->have = (unsigned char *)calloc(n, 1))) {
      fprintf(stderr, "kbd_print: out of memory\n");
      abort();
    }
    g->cta = cta, g->name = name, g->file = file, g->line = line, g->inst = inst;
    g->rows = s.rows, g->cols = s.cols, g->dtype = s.dtype, g->layout = s.layout, g->scope = s.scope;
    g->block_threads = block_threads, g->need = s.scope / KBD_WARP_SIZE, g->f = f;
    g->bx = bx, g->by = by, g->bz = bz;
    *tail = g;
  }
  for (int l = 0; l < KBD_WARP_SIZE; ++l) {
    const int tid = KBD_SCOPE_TID(s.scope, l);
    for (int i = 0; i < s.npt; ++i) {
      const kbd_coord c = kbd_tile_coord(s, tid, i);
      const size_t k = (size_t)c.row * s.cols + c.col;
      g->val[k] = kbd__print_elem((const char *)v + ((size_t)l * s.npt + i) * s.esize, s.dtype);
      g->have[k] = 1;
    }
  }
  g->warps |= 1ull << bit;
  if (__builtin_popcountll(g->warps) == g->need) {
    kbd__print_emit(g, 1);
    for (kbd__print_gather **pp = &kbd__print_pending; *pp; pp = &(*pp)->next)
      if (*pp == g) {
        kbd__print_unlink(pp);
        break;
      }
  }
  pthread_mutex_unlock(&kbd__print_mu);
}

/* A shared tile, whole, from the calling warp. Plain loads: the race checker and the profile do not see a
 * debugging print. */
static inline void kbd__print_smem(FILE *f, const char *name, const char *file, int line, kbd_smem_shape s, int dt,
                                   const void *base) {
  const int rows = s.rows, cols = s.cols;
  double *val = (double *)malloc((size_t)rows * cols * sizeof(double));
  if (!val) {
    fprintf(stderr, "kbd_stile_print: out of memory\n");
    abort();
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      val[(size_t)r * cols + c] = kbd__print_elem((const char *)base + kbd_stile_off_(s, r, c), dt);
  pthread_mutex_lock(&kbd__print_mu);
  kbd__print_header(f, name, file, line, kbd_hw_block_x(), kbd_hw_block_y(), kbd_hw_block_z());
  fprintf(f, "shared %s %d x %d, swizzle %s, %s-major, by warp %d\n", kbd__print_dtype_name(dt), rows, cols,
          kbd__print_swizzle_name(s.swizzle), s.major == KBD_SMEM_MN_MAJOR ? "MN" : "K", kbd_hw_warp_id());
  kbd__print_rows(f, rows, cols, dt, val, NULL);
  fflush(f);
  pthread_mutex_unlock(&kbd__print_mu);
  free(val);
}

#define kbd_fprint(f, t)                                                                                               \
  do {                                                                                                                 \
    KBD__IS_REG(t);                                                                                                    \
    kbd__print_frag((f), #t, __FILE__, __LINE__, KBD__SHAPE(t), KBD__CTA_THREADS, (t).v);                              \
  } while (0)
#define kbd_stile_fprint(f, s)                                                                                         \
  do {                                                                                                                 \
    KBD__IS_STILE(s);                                                                                                  \
    kbd__print_smem((f), #s, __FILE__, __LINE__, KBD_STILE_SHAPE(s), KBD_DTYPE(s), (s).p);                             \
  } while (0)

#elif KBD_MODE_CUDA
#include "hw.h"

KBD_TILE_FN void kbd__print_frag_dev(const char *name, const char *file, int line, kbd_tile_shape s, const void *v) {
  const int tid = KBD_SCOPE_TID(s.scope, 0);
  if (tid == 0)
    printf("kbd_print %s at %s:%d, block (%u,%u,%u): %s %d x %d, layout %s, scope of %d threads from thread %d "
           "(elements follow, in no particular order)\n",
           name, kbd__print_base(file), line, kbd_hw_block_x(), kbd_hw_block_y(), kbd_hw_block_z(),
           kbd__print_dtype_name(s.dtype), s.rows, s.cols, kbd__print_layout_name(s.layout), s.scope,
           kbd_hw_warp_id() * KBD_WARP_SIZE);
  for (int i = 0; i < s.npt; ++i) {
    const kbd_coord c = kbd_tile_coord(s, tid, i);
    const void *p = (const char *)v + (size_t)i * s.esize;
    if (KBD_DT_IS_INT(s.dtype))
      printf("%s[%d][%d] = %d\n", name, c.row, c.col, (int)kbd_dt_load_i32(p, s.dtype));
    else
      printf("%s[%d][%d] = %g\n", name, c.row, c.col, (double)kbd_dt_load_f32(p, s.dtype));
  }
}
KBD_TILE_FN void kbd__print_smem_dev(const char *name, const char *file, int line, kbd_smem_shape s, int dt,
                                     const void *base) {
  if (KBD_SCOPE_TID(KBD_WARP_SIZE, 0) != 0) return; /* lane 0 of each calling warp prints the whole tile, in order */
  printf("kbd_print %s at %s:%d, block (%u,%u,%u): shared %s %d x %d, swizzle %s, %s-major, by warp %d\n", name,
         kbd__print_base(file), line, kbd_hw_block_x(), kbd_hw_block_y(), kbd_hw_block_z(), kbd__print_dtype_name(dt),
         s.rows, s.cols, kbd__print_swizzle_name(s.swizzle), s.major == KBD_SMEM_MN_MAJOR ? "MN" : "K",
         kbd_hw_warp_id());
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c) {
      const void *p = (const char *)base + kbd_stile_off_(s, r, c);
      if (KBD_DT_IS_INT(dt))
        printf("%s[%d][%d] = %d\n", name, r, c, (int)kbd_dt_load_i32(p, dt));
      else
        printf("%s[%d][%d] = %g\n", name, r, c, (double)kbd_dt_load_f32(p, dt));
    }
}

#define kbd_fprint(f, t)                                                                                               \
  do {                                                                                                                 \
    KBD__IS_REG(t);                                                                                                    \
    kbd__print_frag_dev(#t, __FILE__, __LINE__, KBD__SHAPE(t), (t).v);                                                 \
  } while (0)
#define kbd_stile_fprint(f, s)                                                                                         \
  do {                                                                                                                 \
    KBD__IS_STILE(s);                                                                                                  \
    kbd__print_smem_dev(#s, __FILE__, __LINE__, KBD_STILE_SHAPE(s), KBD_DTYPE(s), (s).p);                              \
  } while (0)
#endif

#define kbd_print(t) kbd_fprint(stdout, t)
#define kbd_stile_print(s) kbd_stile_fprint(stdout, s)

#endif /* KBD_PRINT_H */
