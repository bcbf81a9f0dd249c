/* kbd/cpu/tma.h - asynchronous bulk copies into shared memory on the CPU machine (twin of ptx/tma.h).
 *
 * A copy is checked and recorded when it is issued; its destination bytes are marked pending (written by
 * the async proxy, not yet landed), so any read of them before the copy's mbarrier phase completes - by a
 * warp that did not wait, or after a phase that completed early because no expect-tx announced the bytes -
 * is reported whatever the schedule. The data lands when a warp waits on the copy's mbarrier (the GPU may
 * deliver it any time before the phase completes; a correct kernel cannot tell), with complete-tx of the
 * copy's bytes (kbd/cpu/mbar.h, kbd_cpu_copies_deliver).
 *
 * The issue is a write of the destination by the issuing warp for the race checker: a refill of a buffer
 * some warp still reads, with no barrier wait ordering the read first, is a write-after-read race.
 *
 * Every deferred write checks its own destination where it writes (kbd_cpu_async_smem_dest, the global checks
 * in kbd_cpu_store_finish), not only the issue: the landing code computes addresses of its own (swizzle, the
 * tensor's edges, a peer CTA's shared memory for multicast and pairs), and a mistake there would otherwise write
 * past the host buffer that emulates the memory - heap corruption far from its cause - instead of a KBD_ERR_BOUNDS
 * report naming the issuing call.
 */
#ifndef KBD_CPU_TMA_H
#define KBD_CPU_TMA_H

#include "../convert_sw.h"
#include "../numerics.h"
#include "../tensormap.h"
#include "cvt.h"
#include "global.h"
#include "mbar.h"
#include "minmax.h"

#if KBD_MODE_CPU

/* The size and address rules of a non-tensor bulk copy (cp.async.bulk): multiples of 16, size non-zero. */
static inline void kbd_cpu_bulk_rules(uint32_t bytes, const void *smem, const void *gmem, const char *what,
                                      KBD_SITE_PARAMS) {
  if (bytes == 0 || bytes % 16 || (uintptr_t)smem % 16 || (uintptr_t)gmem % 16)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: size (%u bytes), shared address (%p) and global address (%p) must all be multiples of 16 "
                  "(cp.async.bulk), the size non-zero",
                  what, bytes, smem, gmem);
}

/* The destination check of an asynchronous write into shared memory, made where the bytes land: [off, off + bytes)
 * of CTA `to` lies in one of its shared allocations (the dynamic region or one static array), else KBD_ERR_BOUNDS
 * at the issuing call (file:line: the copy's issue site; the write itself runs later, in a waiting warp). */
static inline void kbd_cpu_async_smem_dest(kbd_cpu_cta *to, size_t off, size_t bytes, const char *what,
                                           const char *file, int line) {
  if (KBD_UNLIKELY(off > KBD_MAX_SMEM_BYTES || bytes > KBD_MAX_SMEM_BYTES - off))
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                  "%s lands on shared-memory bytes [%zu, %zu), past the %u bytes a CTA's shared memory can hold", what,
                  off, off + bytes, (unsigned)KBD_MAX_SMEM_BYTES);
  (void)kbd_cpu_check_smem_in(to, to->smem + off, bytes, file, line, what);
}

/* A plain bulk copy lands (cp.async.bulk global -> shared): the destination checked, then the bytes. */
static inline void kbd_cpu_bulk_land(kbd_cpu_cta *cta, const kbd_cpu_copy *c) {
  kbd_cpu_async_smem_dest(cta, c->off, c->bytes, "kbd_bulk_load destination", c->file, c->line);
  memcpy(cta->smem + c->off, c->src, c->bytes);
}

/* Records a copy into shared [off, off + bytes) of CTA `to` that completes on m, a barrier of CTA `cta`: the bytes
 * become pending writes of the issuing warp's async proxy now, and land (memcpy from src, or `land`) when a warp
 * waits on m. */
static inline void kbd_cpu_copy_issue_to(kbd_cpu_cta *to, kbd_cpu_cta *cta, kbd_cpu_warp *w, kbd_cpu_mbar *m,
                                         size_t off, uint32_t bytes, const void *src, kbd_cpu_land_fn land,
                                         const int32_t *coord, const char *what, KBD_SITE_PARAMS) {
  if (cta->ncopies == KBD_CPU_MAX_COPIES)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "more than %d asynchronous copies in flight in one block (CPU machine limit): wait on their "
                  "mbarriers",
                  KBD_CPU_MAX_COPIES);
  kbd_cpu_shadow_write_at(to, w, off, bytes, KBD_CPU_SH_ASYNC | KBD_CPU_SH_PENDING, what, kbd_cpu_no_elem(),
                          KBD_SITE_ARGS);
  kbd_cpu_copy *c = &cta->copies[cta->ncopies++];
  c->dst = to == cta ? NULL : to;
  c->off = off;
  c->src = src;
  c->land = land;
  if (land && land != kbd_cpu_bulk_land) c->desc = ((const kbd_tensor_map *)src)->desc; /* a tensor box */
  for (int i = 0; i < 5; ++i)
    c->coord[i] = coord ? coord[i] : 0;
  c->bytes = bytes;
  c->mbar = (int)(m - cta->mbars);
  c->issuer = w->gid;
  c->clk = w->clk[w->gid];
  c->file = kbd_file_;
  c->line = kbd_line_;
  c->what = what;
  kbd_cpu_tick(w);
  if (m->waiters) kbd_cpu_copies_deliver(cta, m); /* someone already waits for it */
}
/* A copy into the shared memory of the barrier's CTA. */
static inline void kbd_cpu_copy_issue_at(kbd_cpu_cta *cta, kbd_cpu_warp *w, kbd_cpu_mbar *m, size_t off, uint32_t bytes,
                                         const void *src, kbd_cpu_land_fn land, const int32_t *coord, const char *what,
                                         KBD_SITE_PARAMS) {
  kbd_cpu_copy_issue_to(cta, cta, w, m, off, bytes, src, land, coord, what, KBD_SITE_ARGS);
}
/* A copy into the issuing warp's own CTA. */
static inline void kbd_cpu_copy_issue(kbd_cpu_warp *w, kbd_cpu_mbar *m, size_t off, uint32_t bytes, const void *src,
                                      kbd_cpu_land_fn land, const int32_t *coord, const char *what, KBD_SITE_PARAMS) {
  kbd_cpu_copy_issue_at(w->cta, w, m, off, bytes, src, land, coord, what, KBD_SITE_ARGS);
}

/* cp.async.bulk global -> shared, completing `bytes` on bar. */
static inline void kbd_hw_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_bulk_load", KBD_SITE_ARGS);
  kbd_cpu_bulk_rules(bytes, dst, src, "kbd_bulk_load", KBD_SITE_ARGS);
  const size_t off = kbd_cpu_check_smem(dst, bytes, KBD_SITE_ARGS, "kbd_bulk_load destination");
  kbd_cpu_global_access(src, bytes, KBD_CPU_G_READ, KBD_SITE_ARGS, "kbd_bulk_load source");
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, "kbd_bulk_load", KBD_SITE_ARGS);
  kbd_cpu_copy_issue(w, m, off, bytes, src, kbd_cpu_bulk_land, NULL, "kbd_bulk_load", KBD_SITE_ARGS);
  kbd_cpu_prof_tma(0, bytes);
}

/* ---- tensor copies (cp.async.bulk.tensor): the box image ------------------------------------------------
 * A box of a tiled, non-interleaved tensor map lands as ptx-reference §2.5 derives it: box element
 * (i0, i1, .., i4) goes to linear byte L = line * P + i0 * E of the destination, where line flattens
 * (i1..i4) with i1 fastest, P = box_dims[0] * E (the row pitch: the shared tile's line), and the physical
 * byte is the mode's swizzle of the ABSOLUTE shared address dst + L (the hardware swizzles addresses, not
 * offsets; kbd tiles are aligned so that this equals kbd_smem_tile_offset, which tests/tma checks). Along
 * dimension i >= 1 the box takes ceil(box_dims[i] / element_strides[i]) elements, element j at coordinate
 * c_i + j * element_strides[i]; element_strides[0] is ignored without interleave (DRV). An element outside
 * [0, global_dims[i]) in any dimension is filled (loads: zero or the OOB NaN) or skipped (stores). The
 * mbarrier is credited the whole box, OOB elements included (ptx-reference §2.5, §9.6: CUTLASS's practice;
 * PTX says only "the amount of data copied"). */

/* The kbd swizzle of a tensor-map swizzle; -1 for the modes kbd does not emulate (ptx-reference §9.5). */
static inline int kbd_cpu_tmap_kbd_swizzle(int s) {
  switch (s) {
  case KBD_TMAP_SWIZZLE_NONE: return KBD_SWIZZLE_NONE;
  case KBD_TMAP_SWIZZLE_32B: return KBD_SWIZZLE_32B;
  case KBD_TMAP_SWIZZLE_64B: return KBD_SWIZZLE_64B;
  case KBD_TMAP_SWIZZLE_128B: return KBD_SWIZZLE_128B;
  case KBD_TMAP_SWIZZLE_128B_ATOM_32B: return KBD_SWIZZLE_128B_ATOM32;
  default: return -1;
  }
}

/* Elements of the box along dimension i. */
static inline uint32_t kbd_cpu_box_n(const kbd_tensor_map_desc *d, unsigned i) {
  return i == 0 ? d->box_dims[0] : (d->box_dims[i] + d->element_strides[i] - 1) / d->element_strides[i];
}

/* Lines of the box: the product of its extents along dimensions 1..rank-1. */
static inline uint32_t kbd_cpu_box_lines(const kbd_tensor_map_desc *d) {
  uint32_t n = 1;
  for (unsigned i = 1; i < d->rank; ++i)
    n *= kbd_cpu_box_n(d, i);
  return n;
}

/* Walks the lines of a box: for line `line`, the global offset of its element i0 = 0 relative to the
 * tensor base (counting coordinates, possibly outside), and whether dimensions 1.. are all in bounds. */
static inline int kbd_cpu_box_line(const kbd_tensor_map_desc *d, const int32_t *c, uint32_t line, long long *goff) {
  long long off = 0;
  int inb = 1;
  for (unsigned i = 1; i < d->rank; ++i) {
    const uint32_t n = kbd_cpu_box_n(d, i);
    const long long g = (long long)c[i] + (long long)(line % n) * d->element_strides[i];
    line /= n;
    inb &= g >= 0 && g < (long long)d->global_dims[i];
    off += g * (long long)d->global_strides[i - 1];
  }
  *goff = off;
  return inb;
}

/* The validated map of a TMA call, or a fault naming what is wrong with it for this shared tile. */
static inline const kbd_tensor_map_desc *kbd_cpu_tma_map(const kbd_tensor_map *map, uint32_t line_bytes, uint32_t lines,
                                                         int swizzle, int rank, const char *what, KBD_SITE_PARAMS) {
  if (!map || map->encoded != KBD_TENSOR_MAP_ENCODED)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the tensor map was not encoded (kbd_tensor_map_encode on the host, passed in the kernel's "
                  "params)",
                  what);
  const kbd_tensor_map_desc *d = &map->desc;
  const uint32_t bits = kbd_tmap_dtype_bits((int)d->dtype), E = bits / 8;
  if ((int)d->rank != rank)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "%s with %d coordinate(s), but the tensor map has rank %u", what,
                  rank, d->rank);
  if (d->interleave != KBD_TMAP_INTERLEAVE_NONE || bits % 8 || bits > 64)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the CPU machine emulates non-interleaved maps of whole-byte types (this one: interleave %s, "
                  "type %s)",
                  what, kbd_tmap_interleave_name((int)d->interleave), kbd_tmap_dtype_name((int)d->dtype));
  if (kbd_cpu_tmap_kbd_swizzle((int)d->swizzle) != swizzle)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the tensor map's swizzle is %s but the shared tile's is %s (they must match: the map decides "
                  "where the TMA puts each byte, the tile type where kbd reads it)",
                  what, kbd_tmap_swizzle_name((int)d->swizzle),
                  kbd_tmap_swizzle_name((int)kbd_tmap_swizzle_of((kbd_swizzle)swizzle)));
  if (d->box_dims[0] * E != line_bytes || kbd_cpu_box_lines(d) != lines)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the tensor map's box is %u x %u bytes (%u %s elements of %u bytes per line x %u lines), but "
                  "the shared tile takes boxes of %u-byte lines x %u lines (box_dims[0] = %u elements, and the "
                  "outer box dims (over their element strides) multiplying to %u)",
                  what, d->box_dims[0] * E, kbd_cpu_box_lines(d), d->box_dims[0], kbd_tmap_dtype_name((int)d->dtype), E,
                  kbd_cpu_box_lines(d), line_bytes, lines, line_bytes / (E ? E : 1), lines);
  return d;
}

/* Checks the tensor's elements a box touches against the kbd_malloc registry (bounds; reads: written). */
static inline void kbd_cpu_box_global(const kbd_tensor_map_desc *d, const int32_t *c, int mode, const char *what,
                                      KBD_SITE_PARAMS) {
  const uint32_t E = kbd_tmap_dtype_bits((int)d->dtype) / 8, lines = kbd_cpu_box_lines(d);
  const long long lo = c[0] > 0 ? c[0] : 0;
  const long long hi = (long long)c[0] + d->box_dims[0] < (long long)d->global_dims[0]
                           ? (long long)c[0] + d->box_dims[0]
                           : (long long)d->global_dims[0];
  if (hi <= lo) return;
  for (uint32_t line = 0; line < lines; ++line) {
    long long goff;
    if (!kbd_cpu_box_line(d, c, line, &goff)) continue;
    const char *p = (const char *)d->global_address + goff + lo * E;
    kbd_cpu_global_access(p, (size_t)(hi - lo) * E, mode, KBD_SITE_ARGS, what);
  }
}

/* The OOB-NaN fill of a floating-point type: the canonical NaN of its width (which NaN the hardware writes
 * is not documented; a kernel can only test it with isnan). */
static inline void kbd_cpu_oob_fill(unsigned char *dst, const kbd_tensor_map_desc *d, uint32_t E) {
  memset(dst, 0, E);
  if (d->oob_fill != KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA) return;
  const uint64_t nan = E == 2 ? 0x7fffull : E == 4 ? 0x7fffffffull : 0x7fffffffffffffffull;
  memcpy(dst, &nan, E); /* little-endian host */
}

/* A tensor box lands in shared memory (the copy's `land`). */
static inline void kbd_cpu_tma_land(kbd_cpu_cta *cta, const kbd_cpu_copy *c) {
  const kbd_tensor_map_desc *d = &c->desc;
  const uint32_t E = kbd_tmap_dtype_bits((int)d->dtype) / 8, n0 = d->box_dims[0], lines = kbd_cpu_box_lines(d);
  const int swz = kbd_cpu_tmap_kbd_swizzle((int)d->swizzle);
  const uint32_t per = 16 / E; /* elements per 16-byte unit: every swizzle moves whole units */
  const size_t box = (size_t)lines * n0 * E;
  const char *dwhat = c->what ? kbd_cpu_tma_role(c->what, 1) : kbd_cpu_tma_name(KBD_CPU_TN_LOAD, (int)d->rank, 1);
  kbd_cpu_async_smem_dest(cta, c->off, box, dwhat, c->file, c->line);
  for (uint32_t line = 0; line < lines; ++line) {
    long long goff;
    const int inb = kbd_cpu_box_line(d, c->coord, line, &goff);
    for (uint32_t i0 = 0; i0 < n0; i0 += per) {
      const long long g0 = (long long)c->coord[0] + i0;
      const size_t at = kbd_swizzle_apply(swz, (uint32_t)(c->off + (size_t)line * n0 * E + i0 * E));
      /* A swizzle permutes 16-byte units inside its span (32..128 bytes), and the box starts 128-byte aligned, so
       * every unit stays inside the box the check above passed: a unit outside is a broken address computation. */
      if (KBD_UNLIKELY(at < c->off || at + 16 > c->off + box))
        kbd_cpu_fault(KBD_ERR_BOUNDS, c->file, c->line,
                      "%s: line %u, element %u of the box lands at shared byte %zu, outside the box's bytes "
                      "[%zu, %zu) (swizzle %s)",
                      dwhat, line, i0, at, c->off, c->off + box, kbd_tmap_swizzle_name((int)d->swizzle));
      unsigned char *dst = cta->smem + at;
      if (inb && g0 >= 0 && g0 + per <= (long long)d->global_dims[0]) { /* the whole unit is inside */
        memcpy(dst, (const char *)d->global_address + goff + g0 * E, 16);
        continue;
      }
      for (uint32_t k = 0; k < per; ++k)
        if (inb && g0 + k >= 0 && g0 + k < (long long)d->global_dims[0])
          memcpy(dst + k * E, (const char *)d->global_address + goff + (g0 + k) * E, E);
        else
          kbd_cpu_oob_fill(dst + k * E, d, E);
    }
  }
}

/* The checks of a tensor load (plain or multicast) at its issue: one issuing thread, the map against the tile, a
 * 128-byte aligned destination in one shared allocation of this CTA, the source box in kbd_malloc memory.
 * Returns the destination's shared offset. `what` is KBD_CPU_TMA_WHAT(kind, rank): the call's name and its two
 * roles (kbd_cpu_tma_name). */
#define KBD_CPU_TMA_WHAT(kind, rank)                                                                                   \
  kbd_cpu_tma_name(kind, rank, 0), kbd_cpu_tma_name(kind, rank, 1), kbd_cpu_tma_name(kind, rank, 2)
static inline size_t kbd_cpu_tma_load_check(kbd_cpu_warp *w, const void *dst, uint32_t line_bytes, uint32_t lines,
                                            int swizzle, const kbd_tensor_map *map, int rank, const int32_t *c,
                                            const char *what, const char *dst_what, const char *src_what,
                                            KBD_SITE_PARAMS) {
  kbd_cpu_mbar_single(w, what, KBD_SITE_ARGS);
  const kbd_tensor_map_desc *d = kbd_cpu_tma_map(map, line_bytes, lines, swizzle, rank, what, KBD_SITE_ARGS);
  const size_t off = kbd_cpu_check_smem(dst, line_bytes * lines, KBD_SITE_ARGS, dst_what);
  if (off % 128)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the shared destination (byte %zu) is not 128-byte aligned (the Programming Guide's TMA rule; "
                  "ptx-reference §2.4)",
                  what, off);
  kbd_cpu_box_global(d, c, KBD_CPU_G_READ, src_what, KBD_SITE_ARGS);
  return off;
}

/* cp.async.bulk.tensor global -> shared: one box into [dst, dst + line_bytes * lines), completing its
 * bytes on bar. */
static inline void kbd_hw_tma_load(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle,
                                   const kbd_tensor_map *map, uint64_t *bar, int rank, int32_t c0, int32_t c1,
                                   int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const int32_t c[5] = {c0, c1, c2, c3, c4};
  const uint32_t bytes = line_bytes * lines;
  const char *what = kbd_cpu_tma_name(KBD_CPU_TN_LOAD, rank, 0);
  const size_t off = kbd_cpu_tma_load_check(w, dst, line_bytes, lines, swizzle, map, rank, c,
                                            KBD_CPU_TMA_WHAT(KBD_CPU_TN_LOAD, rank), KBD_SITE_ARGS);
  kbd_cpu_mbar *m = kbd_cpu_mbar_use(bar, what, KBD_SITE_ARGS);
  kbd_cpu_copy_issue(w, m, off, bytes, map, kbd_cpu_tma_land, c, what, KBD_SITE_ARGS);
  kbd_cpu_prof_tma(0, bytes); /* the whole box, as the mbarrier is credited (docs/profiling.md) */
}

/* ---- stores and reductions out of shared memory (bulk async-groups) ---------------------------------------
 * A store reads its source when the TMA gets to it, at the latest by the wait_group.read of its group. The
 * machine reads it then (so the bytes must stay unchanged until that wait, which every shared write checks
 * while stores are pending: kbd_cpu_store_overlap) and writes global memory at the same point. */
/* One element of a reduction: the PTX type table of cp.reduce.async.bulk.tensor (.add: f16, bf16, f32, s32,
 * u32; .min/.max: f16, bf16, s32, u32). f32 add flushes subnormals like red/atom .add.f32; f16/bf16 round
 * to nearest even (an f32 sum of two 16-bit floats then one rounding is the correctly rounded result). */
static inline void kbd_cpu_reduce_elem(int op, int dt, unsigned char *g, const unsigned char *s) {
  if (dt == KBD_TMAP_DT_F32 && op == KBD_CPU_ST_ADD) {
    float a, b;
    memcpy(&a, g, 4);
    memcpy(&b, s, 4);
    const float r = kbd_f32_add_ftz(a, b);
    memcpy(g, &r, 4);
  } else if (dt == KBD_TMAP_DT_F16 || dt == KBD_TMAP_DT_BF16) {
    uint16_t ua, ub, ur;
    memcpy(&ua, g, 2);
    memcpy(&ub, s, 2);
    const int h = dt == KBD_TMAP_DT_F16;
    const float a = h ? kbd_hw_cvt_f32_f16(ua) : kbd_hw_cvt_f32_bf16(ua);
    const float b = h ? kbd_hw_cvt_f32_f16(ub) : kbd_hw_cvt_f32_bf16(ub);
    const float r = op == KBD_CPU_ST_ADD ? a + b : op == KBD_CPU_ST_MIN ? kbd_hw_min_f32(a, b) : kbd_hw_max_f32(a, b);
    ur = h ? kbd_hw_cvt_rn_f16_f32(r) : kbd_hw_cvt_rn_bf16_f32(r);
    memcpy(g, &ur, 2);
  } else if (dt == KBD_TMAP_DT_I32) {
    int32_t a, b, r;
    memcpy(&a, g, 4);
    memcpy(&b, s, 4);
    r = op == KBD_CPU_ST_ADD   ? (int32_t)((uint32_t)a + (uint32_t)b)
        : op == KBD_CPU_ST_MIN ? (a < b ? a : b)
                               : (a > b ? a : b);
    memcpy(g, &r, 4);
  } else { /* U32 */
    uint32_t a, b, r;
    memcpy(&a, g, 4);
    memcpy(&b, s, 4);
    r = op == KBD_CPU_ST_ADD ? a + b : op == KBD_CPU_ST_MIN ? (a < b ? a : b) : (a > b ? a : b);
    memcpy(g, &r, 4);
  }
}

static inline int kbd_cpu_reduce_ok(int op, int dt) {
  if (op == KBD_CPU_ST_ADD)
    return dt == KBD_TMAP_DT_F32 || dt == KBD_TMAP_DT_F16 || dt == KBD_TMAP_DT_BF16 || dt == KBD_TMAP_DT_I32 ||
           dt == KBD_TMAP_DT_U32;
  return dt == KBD_TMAP_DT_F16 || dt == KBD_TMAP_DT_BF16 || dt == KBD_TMAP_DT_I32 || dt == KBD_TMAP_DT_U32;
}

/* The store's source has been read: global memory gets the data. */
static inline void kbd_cpu_store_finish(kbd_cpu_cta *cta, const kbd_cpu_store *st) {
  if (st->op == KBD_CPU_ST_BULK) {
    kbd_cpu_check_global(st->dst, (const char *)st->dst + st->bytes, st->file, st->line, "kbd_bulk_store destination");
    memcpy((void *)st->dst, cta->smem + st->off, st->bytes);
    return;
  }
  const kbd_tensor_map_desc *d = &((const kbd_tensor_map *)st->dst)->desc;
  const char *dest = kbd_cpu_tma_name(st->op & 3, (int)d->rank, 1); /* the issue checked the map's rank */
  const uint32_t E = kbd_tmap_dtype_bits((int)d->dtype) / 8, n0 = d->box_dims[0], lines = kbd_cpu_box_lines(d);
  const int swz = kbd_cpu_tmap_kbd_swizzle((int)d->swizzle);
  for (uint32_t line = 0; line < lines; ++line) {
    long long goff;
    if (!kbd_cpu_box_line(d, st->coord, line, &goff)) continue;
    const uint32_t per = 16 / E;
    for (uint32_t i0 = 0; i0 < n0; i0 += per) {
      const long long g0 = (long long)st->coord[0] + i0;
      if (g0 >= (long long)d->global_dims[0]) break;
      unsigned char *g = (unsigned char *)d->global_address + goff + g0 * E;
      const unsigned char *s = cta->smem + kbd_swizzle_apply(swz, (uint32_t)(st->off + (size_t)line * n0 * E + i0 * E));
      const long long left = (long long)d->global_dims[0] - g0;
      const uint32_t n = left < (long long)per ? (uint32_t)left : per; /* a unit cut by the tensor's edge */
      /* each unit's global bytes against the kbd_malloc registry where they are written (a few compares on the
       * registry's per-thread cache): the edge clipping above is the only thing between the box and the memory
       * past the tensor, and the issue checked the box through a clip of its own */
      kbd_cpu_check_global(g, g + (size_t)n * E, st->file, st->line, dest);
      if (st->op == KBD_CPU_ST_STORE)
        memcpy(g, s, (size_t)n * E);
      else
        for (uint32_t k = 0; k < n; ++k)
          kbd_cpu_reduce_elem(st->op, (int)d->dtype, g + k * E, s + k * E);
    }
  }
}

static inline void kbd_cpu_store_issue(kbd_cpu_warp *w, size_t off, uint32_t bytes, const void *dst, const int32_t *c,
                                       int op, int rank, KBD_SITE_PARAMS) {
  kbd_cpu_cta *cta = w->cta;
  /* The async proxy reads the source: generic writes to it must be fenced by their writer (and ordered
   * before this point by a barrier, which the race half of the check sees). */
  kbd_cpu_shadow_async_read(w, off, bytes, kbd_cpu_store_name(op, rank), KBD_SITE_ARGS);
  if (cta->nstores == KBD_CPU_MAX_STORES)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "more than %d bulk stores not yet waited for in one block (CPU machine limit): commit and wait "
                  "(kbd_bulk_commit_group, kbd_bulk_wait_group_read)",
                  KBD_CPU_MAX_STORES);
  kbd_cpu_store *st = &cta->stores[cta->nstores++];
  st->off = off;
  st->bytes = bytes;
  st->dst = dst;
  for (int i = 0; i < 5; ++i)
    st->coord[i] = c ? c[i] : 0;
  st->op = op;
  st->rank = rank;
  st->issuer = w->id;
  st->group = 0;
  st->file = kbd_file_;
  st->line = kbd_line_;
  kbd_cpu_tick(w);
}

/* cp.async.bulk.tensor shared -> global (op STORE) or cp.reduce.async.bulk.tensor (ADD/MIN/MAX), bulk_group
 * completion: one box out of [src, src + line_bytes * lines). */
static inline void kbd_hw_tma_store(const void *src, uint32_t line_bytes, uint32_t lines, int swizzle,
                                    const kbd_tensor_map *map, int op, int rank, int32_t c0, int32_t c1, int32_t c2,
                                    int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const char *what = kbd_cpu_store_name(op, rank);
  kbd_cpu_mbar_single(w, what, KBD_SITE_ARGS);
  const kbd_tensor_map_desc *d = kbd_cpu_tma_map(map, line_bytes, lines, swizzle, rank, what, KBD_SITE_ARGS);
  const int32_t c[5] = {c0, c1, c2, c3, c4};
  /* c[0] is the innermost coordinate, the call's last argument (col), c[1] the one before it (row), then d2.. */
  static const char *const cname[5] = {"col", "row", "d2", "d3", "d4"};
  for (int i = 0; i < rank; ++i)
    if (c[i] < 0)
      kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                    "%s: %s is %d; a TMA store's box must start at non-negative coordinates (PTX "
                    "cp.async.bulk.tensor restrictions; only its far end may hang over the tensor)",
                    what, rank == 1 ? "col" : cname[i], (int)c[i]);
  if (op != KBD_CPU_ST_STORE && !kbd_cpu_reduce_ok(op, (int)d->dtype))
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the tensor map's type %s has no such reduction (PTX cp.reduce.async.bulk.tensor: .add for "
                  "f16, bf16, f32, s32, u32; .min/.max for f16, bf16, s32, u32)",
                  what, kbd_tmap_dtype_name((int)d->dtype));
  const uint32_t bytes = line_bytes * lines;
  const size_t off = kbd_cpu_check_smem(src, bytes, KBD_SITE_ARGS, what);
  if (off % 128)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS,
                  "%s: the shared source (byte %zu) is not 128-byte aligned (ptx-reference §2.4)", what, off);
  kbd_cpu_box_global(d, c, op == KBD_CPU_ST_STORE ? KBD_CPU_G_WRITE : KBD_CPU_G_RMW, what, KBD_SITE_ARGS);
  kbd_cpu_store_issue(w, off, bytes, map, c, op, rank, KBD_SITE_ARGS);
  kbd_cpu_prof_tma(1, bytes);
}

/* cp.async.bulk.global.shared::cta.bulk_group: bytes from shared to global memory. */
static inline void kbd_hw_bulk_store(void *dst, const void *src, uint32_t bytes, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_bulk_store", KBD_SITE_ARGS);
  kbd_cpu_bulk_rules(bytes, src, dst, "kbd_bulk_store", KBD_SITE_ARGS);
  const size_t off = kbd_cpu_check_smem(src, bytes, KBD_SITE_ARGS, "kbd_bulk_store source");
  kbd_cpu_global_access(dst, bytes, KBD_CPU_G_WRITE, KBD_SITE_ARGS, "kbd_bulk_store destination");
  kbd_cpu_store_issue(w, off, bytes, dst, NULL, KBD_CPU_ST_BULK, 0, KBD_SITE_ARGS);
  kbd_cpu_prof_tma(1, bytes);
}

/* cp.async.bulk.commit_group: the issuing thread's uncommitted bulk stores become one group. */
static inline void kbd_hw_bulk_commit(KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_mbar_single(w, "kbd_bulk_commit_group", KBD_SITE_ARGS);
  const int g = ++w->bulk_groups;
  for (int i = 0; i < w->cta->nstores; ++i)
    if (w->cta->stores[i].issuer == w->id && w->cta->stores[i].group == 0) w->cta->stores[i].group = g;
}

/* cp.async.bulk.wait_group[.read] n: all but the n newest committed groups of this thread are done. The
 * machine finishes them here (reads the sources, writes global memory), so the source bytes may be
 * written again afterwards. Waiting is for the issuing thread: another warp's wait does not cover them. */
static inline void kbd_hw_bulk_wait(int n, int read, KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  kbd_cpu_cta *cta = w->cta;
  (void)read; /* .read also lets the global writes be in flight; the machine has them done either way */
  if (n < 0 || n > 63)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "kbd_bulk_wait_group: %d groups pending is outside 0..63", n);
  const int upto = w->bulk_groups - n;
  int k = 0;
  for (int i = 0; i < cta->nstores; ++i) {
    const kbd_cpu_store st = cta->stores[i];
    if (st.issuer == w->id && st.group != 0 && st.group <= upto) {
      kbd_cpu_store_finish(cta, &st);
      /* The source is free from here on: recorded as a read by this warp NOW, so a write by another warp
       * that is not ordered after this wait is a write-after-read race whichever ran first. */
      kbd_cpu_shadow_read(w, st.off, st.bytes, "kbd_bulk_wait_group", kbd_cpu_no_elem(), KBD_SITE_ARGS);
    } else
      cta->stores[k++] = st;
  }
  cta->nstores = k;
  kbd_cpu_tick(w);
}

/* prefetch.tensormap / cp.async.bulk.prefetch.tensor: hints to the L2; checked like the copy they prepare. */
static inline void kbd_hw_tma_prefetch_map(const kbd_tensor_map *map, KBD_SITE_PARAMS) {
  if (!map || map->encoded != KBD_TENSOR_MAP_ENCODED)
    kbd_cpu_fault(KBD_ERR_INVALID, KBD_SITE_ARGS, "kbd_tma_prefetch_map: the tensor map was not encoded");
}
static inline void kbd_hw_tma_prefetch(uint32_t line_bytes, uint32_t lines, int swizzle, const kbd_tensor_map *map,
                                       int rank, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4,
                                       KBD_SITE_PARAMS) {
  kbd_cpu_warp *w = kbd_cpu_self();
  const char *what = kbd_cpu_tma_name(KBD_CPU_TN_PREFETCH, rank, 0);
  kbd_cpu_mbar_single(w, what, KBD_SITE_ARGS);
  const kbd_tensor_map_desc *d = kbd_cpu_tma_map(map, line_bytes, lines, swizzle, rank, what, KBD_SITE_ARGS);
  const int32_t c[5] = {c0, c1, c2, c3, c4};
  kbd_cpu_box_global(d, c, KBD_CPU_G_BOUNDS, what, KBD_SITE_ARGS);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMA_H */
