/* kbd/smem_plan.h - planning a kernel's dynamic shared memory: offsets and alignment of each piece,
 * computed by ONE function on the host (the launch's smem_bytes) and in the kernel (where the pieces are).
 *
 *   typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) a_tile;
 *   typedef struct { size_t a, full, empty, rowmax; } gemm_smem;     // the layout: one offset per piece
 *
 *   KBD_HD kbd_smem_plan gemm_layout(gemm_smem *l) {                  // shared header: host .c and .cu
 *     kbd_smem_plan p;
 *     kbd_smem_plan_init(&p);
 *     l->a = kbd_smem_plan_stile(&p, "A ring", a_tile, 4);            // 4 tiles, 1024-aligned, 8 KiB apart
 *     l->full = kbd_smem_plan_mbarriers(&p, "full", 4);               // 4 mbarriers, 8-aligned
 *     l->empty = kbd_smem_plan_mbarriers(&p, "empty", 4);
 *     l->rowmax = kbd_smem_plan_array(&p, "row max", float, 128);     // scratch, 16-aligned
 *     return p;
 *   }
 *   // host:   gemm_smem l; kbd_smem_plan p = gemm_layout(&l);
 *   //         KBD_TRY(kbd_smem_plan_status(&p));                     // over 227 KiB: names the piece
 *   //         gemm(kbd_cfg(grid, p.bytes, NULL), params);
 *   // kernel: gemm_smem l; const kbd_smem_plan p = gemm_layout(&l);   // constants: folds away
 *   //         kbd_smem_plan_check_launch(&p);                        // the launch gave p.bytes?
 *   //         unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
 *   //         a_tile a = KBD_SMEM_PLAN_STILE(a_tile, smem, l.a, stage);
 *   //         kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);   // &full[stage]
 *
 * Offsets are from the dynamic shared memory base, which kbd aligns to 1024 bytes on both paths
 * (kbd/smem.h), so an offset's alignment is the address's: a 128B-swizzled tile at a multiple of 1024 has
 * swizzle phase 0 (kbd/swizzle.h). Items of a tile or mbarrier piece are `stride` = round_up(bytes, align)
 * apart, so every item of a ring is aligned (an array's elements are sizeof(type) apart, as in C). All
 * functions are KBD_HD integer math with no loops: with constant arguments nvcc folds the whole plan to
 * constants (tests/ptx/smem_plan.check), leaving only `stage * stride`.
 *
 * Errors (the first one is kept, later pieces are still placed so every offset stays defined):
 *   - a piece ending past KBD_MAX_SMEM_BYTES (232448, 227 KiB: the per-block opt-in limit of sm_90/sm_100;
 *     static __shared__ memory counts against the same limit on the GPU, the plan only knows dynamic);
 *   - an alignment that is not a power of two or exceeds 1024 (more than the base guarantees; the piece is
 *     placed at 1024 instead).
 * kbd_smem_plan_status() reports it as KBD_ERR_INVALID naming the piece: name, count x bytes, alignment,
 * offset, where it ends, and the plan's total.
 */
#ifndef KBD_SMEM_PLAN_H
#define KBD_SMEM_PLAN_H

#include "config.h"
#include "status.h"
#include "stile.h"

/* The largest alignment a plan can give: that of the dynamic shared memory base (kbd_dynamic_smem()). */
#define KBD_SMEM_PLAN_MAX_ALIGN 1024u

/* The plan's first error (kbd_smem_plan.err). */
#define KBD_SMEM_PLAN_OK 0
#define KBD_SMEM_PLAN_OVER_LIMIT 1 /* a piece ends past KBD_MAX_SMEM_BYTES */
#define KBD_SMEM_PLAN_BAD_ALIGN 2  /* a piece asked for an alignment that is no power of two or above 1024 */

typedef struct kbd_smem_plan {
  size_t bytes;         /* end of the last piece: the launch's smem_bytes (saturates far above the limit) */
  int pieces;           /* pieces added */
  int err;              /* KBD_SMEM_PLAN_OK or the first error; the fields below describe its piece */
  int err_piece;        /* its index (0-based, in the order added) */
  const char *err_name; /* its name */
  size_t err_bytes;     /* bytes of one item */
  size_t err_count;     /* items */
  size_t err_align;     /* the alignment asked for */
  size_t err_offset;    /* where it was placed */
  size_t err_end;       /* where it ends (saturated) */
} kbd_smem_plan;

KBD_HD void kbd_smem_plan_init(kbd_smem_plan *p) {
  p->bytes = 0;
  p->pieces = 0;
  p->err = KBD_SMEM_PLAN_OK;
  p->err_piece = -1;
  p->err_name = (const char *)0;
  p->err_bytes = p->err_count = p->err_align = p->err_offset = p->err_end = 0;
}

/* Distance between items of `bytes` at alignment `align` (a valid one): round_up(bytes, align). A
 * constant expression for constant arguments. */
#define KBD_SMEM_PLAN_STRIDE(bytes, align) (((size_t)(bytes) + (size_t)(align)-1u) & ~((size_t)(align)-1u))
#define KBD__SMEM_PLAN_ALIGN_OK(a) ((a) != 0u && ((a) & ((a)-1u)) == 0u && (a) <= KBD_SMEM_PLAN_MAX_ALIGN)
/* Sizes saturate here, far above any limit and far below overflow: no division is needed to detect a
 * wrapped product (a runtime count would otherwise cost a 64-bit division in device code). */
#define KBD__SMEM_PLAN_CAP ((unsigned long long)1 << 48)

/* Place `count` items of `bytes` each: the first at a multiple of `align` (a power of two <= 1024), the
 * next ones `stride` = KBD_SMEM_PLAN_STRIDE(bytes, item_align) apart. Returns the first's offset. */
KBD_HD size_t kbd_smem_plan_place_(kbd_smem_plan *p, const char *name, size_t bytes, size_t count, size_t align,
                                   size_t item_align) {
  const int align_ok = KBD__SMEM_PLAN_ALIGN_OK(align);
  const unsigned long long a = align_ok ? (unsigned long long)align : KBD_SMEM_PLAN_MAX_ALIGN;
  const unsigned long long ia = align_ok ? (unsigned long long)item_align : a;
  const unsigned long long off = ((unsigned long long)p->bytes + a - 1u) & ~(a - 1u);
  /* Both factors below the cap's square root: the product cannot wrap. */
  const unsigned long long lim = (unsigned long long)1 << 24, b = bytes, n = count;
  unsigned long long size;
  if (b == 0u || n == 0u)
    size = 0u;
  else if (b >= lim || n >= lim)
    size = KBD__SMEM_PLAN_CAP;
  else
    size = ((b + ia - 1u) & ~(ia - 1u)) * n;
  unsigned long long end = off + size;
  if (end > KBD__SMEM_PLAN_CAP) end = KBD__SMEM_PLAN_CAP;
  const int err = !align_ok ? KBD_SMEM_PLAN_BAD_ALIGN : end > KBD_MAX_SMEM_BYTES ? KBD_SMEM_PLAN_OVER_LIMIT : 0;
  if (err != 0 && p->err == KBD_SMEM_PLAN_OK) {
    p->err = err;
    p->err_piece = p->pieces;
    p->err_name = name;
    p->err_bytes = bytes;
    p->err_count = count;
    p->err_align = align;
    p->err_offset = (size_t)off;
    p->err_end = (size_t)end;
  }
  p->bytes = (size_t)end;
  p->pieces += 1;
  return (size_t)off;
}

/* Place `count` items of `bytes` each, EACH aligned to `align` (a power of two <= 1024); returns the offset
 * of the first, from the dynamic shared memory base. Item i is at offset + i * stride, stride =
 * KBD_SMEM_PLAN_STRIDE(bytes, align), and the piece takes count strides. The name must outlive the plan (a
 * string literal). */
KBD_HD size_t kbd_smem_plan_add(kbd_smem_plan *p, const char *name, size_t bytes, size_t count, size_t align) {
  return kbd_smem_plan_place_(p, name, bytes, count, align, align);
}

/* `count` shared tiles of the KBD_STILE type `type`, at its swizzle's alignment (1024 for 128B). */
#define kbd_smem_plan_stile(p, name, type, count)                                                                      \
  kbd_smem_plan_add((p), (name), (size_t)KBD_STILE_TYPE_BYTES(type), (size_t)(count),                                  \
                    (size_t)KBD_STILE_TYPE_ALIGN(type))
/* Distance between consecutive tiles of a kbd_smem_plan_stile piece (a constant expression). */
#define KBD_SMEM_PLAN_STILE_STRIDE(type) KBD_SMEM_PLAN_STRIDE(KBD_STILE_TYPE_BYTES(type), KBD_STILE_TYPE_ALIGN(type))
/* `count` mbarrier objects: 8 bytes, 8-aligned (the object kbd/mbarrier.h's kbd_mbarrier is; spelled as
 * numbers so that the host C file of a GPU program, which has no kbd_mbarrier, can plan too). */
#define kbd_smem_plan_mbarriers(p, name, count) kbd_smem_plan_add((p), (name), 8u, (size_t)(count), 8u)
/* `count` elements of the C type `type`: a C array (elements sizeof(type) apart) whose base is 16-aligned
 * (a 128-bit vector access is legal at any 16-byte boundary; more if the type asks for more). */
#define kbd_smem_plan_array(p, name, type, count)                                                                      \
  kbd_smem_plan_place_((p), (name), sizeof(type), (size_t)(count), KBD_ALIGNOF(type) > 16 ? KBD_ALIGNOF(type) : 16u, 1u)

/* The messages (tests match them); their arguments are plain fields, so the CPU fault below formats them
 * without a buffer and the GPU build never sees them. */
#define KBD__SMEM_PLAN_MSG_OVER                                                                                        \
  "shared-memory plan: piece %d '%s' (%zu x %zu bytes, %zu-byte aligned) at offset %zu ends at byte %zu, over the "    \
  "%u-byte (227 KiB) per-block limit of dynamic shared memory; the plan totals %zu bytes in %d pieces"
#define KBD__SMEM_PLAN_ARGS_OVER(p)                                                                                    \
  (p)->err_piece, (p)->err_name ? (p)->err_name : "(null)", (p)->err_count, (p)->err_bytes, (p)->err_align,            \
      (p)->err_offset, (p)->err_end, KBD_MAX_SMEM_BYTES, (p)->bytes, (p)->pieces
#define KBD__SMEM_PLAN_MSG_ALIGN                                                                                       \
  "shared-memory plan: piece %d '%s' (%zu x %zu bytes) asks for %zu-byte alignment; it must be a power of two "        \
  "and at most %u (the alignment of the dynamic shared memory base); placed at offset %zu, the plan totals %zu "       \
  "bytes in %d pieces"
#define KBD__SMEM_PLAN_ARGS_ALIGN(p)                                                                                   \
  (p)->err_piece, (p)->err_name ? (p)->err_name : "(null)", (p)->err_count, (p)->err_bytes, (p)->err_align,            \
      KBD_SMEM_PLAN_MAX_ALIGN, (p)->err_offset, (p)->bytes, (p)->pieces

/* Host: ok, or KBD_ERR_INVALID naming the first piece that broke a rule (see the top of this file). */
static inline kbd_status kbd_smem_plan_status(const kbd_smem_plan *p) {
  if (!p) return kbd_status_make(KBD_ERR_INVALID, "shared-memory plan: NULL plan");
  if (p->err == KBD_SMEM_PLAN_OVER_LIMIT)
    return kbd_status_make(KBD_ERR_INVALID, KBD__SMEM_PLAN_MSG_OVER, KBD__SMEM_PLAN_ARGS_OVER(p));
  if (p->err == KBD_SMEM_PLAN_BAD_ALIGN)
    return kbd_status_make(KBD_ERR_INVALID, KBD__SMEM_PLAN_MSG_ALIGN, KBD__SMEM_PLAN_ARGS_ALIGN(p));
  return kbd_status_ok();
}

/* ---- in the kernel ------------------------------------------------------------------------------------ */

/* The address `off` bytes into shared memory at `base` (kbd_dynamic_smem()). */
KBD_HD void *kbd_smem_plan_at(void *base, size_t off) { return (unsigned char *)base + off; }
/* `type *`: the first element of a kbd_smem_plan_array / kbd_smem_plan_mbarriers piece. */
#define KBD_SMEM_PLAN_ARRAY(type, base, off) ((type *)kbd_smem_plan_at((base), (off)))
/* Tile i of a kbd_smem_plan_stile piece of `type` tiles (KBD_STILE_AT: the CPU machine checks that it lies
 * inside the launch's dynamic shared memory and is aligned). The offset is computed in 32 bits: a valid
 * plan ends below 227 KiB, and a 32-bit multiply is one IMAD where a 64-bit one is several. */
#define KBD_SMEM_PLAN_STILE(type, base, off, i)                                                                        \
  KBD_STILE_AT(type,                                                                                                   \
               (unsigned char *)kbd_smem_plan_at(                                                                      \
                   (base), (size_t)((unsigned)(off) + (unsigned)(i) * (unsigned)KBD_SMEM_PLAN_STILE_STRIDE(type))))

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#include "launch.h"
#include "smem.h"

#define KBD__SMEM_PLAN_MSG_LAUNCH                                                                                      \
  "kbd_smem_plan_check_launch: the plan needs %zu bytes of dynamic shared memory (%d pieces) but the launch gave "     \
  "%zu (pass the plan's bytes as kbd_launch_cfg.smem_bytes)"

/* Does the running launch's dynamic shared memory hold the plan, and is the plan valid? Call it once at
 * the top of the kernel, from every warp (or only the ones that touch the plan's memory).
 *   CPU: a failure is KBD_ERR_INVALID at the call site naming the plan's total and the launch's smem_bytes
 *        (or the plan's own error, as kbd_smem_plan_status words it).
 *   GPU: `trap` (the host sees a launch failure, no message). Cheap: with a constant plan it is one read of
 *        %dynamic_smem_size (a constant-bank load), one compare and a never-taken branch per thread, once
 *        per kernel: 4 SASS instructions on sm_90a, 9 on sm_100a (its constant bank is indexed by the CTA's
 *        cluster slot); the plan's own validity folds away (tests/ptx/smem_plan.check). */
KBD_DEV void kbd_smem_plan_check_launch_at(const kbd_smem_plan *p, KBD_SITE_PARAMS) {
  const size_t have = kbd_dynamic_smem_bytes();
  if (KBD_UNLIKELY(p->err != KBD_SMEM_PLAN_OK || have < p->bytes)) {
    if (p->err == KBD_SMEM_PLAN_OVER_LIMIT)
      KBD_HW_FAULT(KBD_ERR_INVALID, kbd_file_, kbd_line_, KBD__SMEM_PLAN_MSG_OVER, KBD__SMEM_PLAN_ARGS_OVER(p));
    else if (p->err == KBD_SMEM_PLAN_BAD_ALIGN)
      KBD_HW_FAULT(KBD_ERR_INVALID, kbd_file_, kbd_line_, KBD__SMEM_PLAN_MSG_ALIGN, KBD__SMEM_PLAN_ARGS_ALIGN(p));
    else
      KBD_HW_FAULT(KBD_ERR_INVALID, kbd_file_, kbd_line_, KBD__SMEM_PLAN_MSG_LAUNCH, p->bytes, p->pieces, have);
    kbd_hw_trap("kbd_smem_plan_check_launch: the launch's dynamic shared memory does not hold the plan", KBD_SITE_ARGS);
  }
}
#define kbd_smem_plan_check_launch(p) kbd_smem_plan_check_launch_at((p), KBD_SITE)
#endif

#endif /* KBD_SMEM_PLAN_H */
