/* kbd/cpu/smem.h - a CTA's shared memory on the CPU machine: static declarations, bounds, accesses.
 *
 * One page-aligned byte array per CTA (227 KiB, the H100/B200 opt-in limit). Dynamic shared memory sits
 * at offset 0; each static declaration (KBD_SHARED) is placed when first reached, at its alignment,
 * after it - and after the guard page that follows the dynamic bytes (kbd/cpu/shadow.h), where there is one. Every kbd
 * access must lie inside ONE allocation, and goes through the shadow (kbd/cpu/shadow.h): never-written reads, pending
 * asynchronous writes and races are reported there.
 */
#ifndef KBD_CPU_SMEM_H
#define KBD_CPU_SMEM_H

#include "sched.h"

#if KBD_MODE_CPU

/* Static arrays go after the dynamic region's guard page (kbd/cpu/shadow.h) when there is one, so that a raw
 * overrun of the dynamic region faults instead of landing in them. The 227 KiB limit counts the bytes as the GPU
 * would lay them out, without the guard's gap: where the gap is what pushes a declaration over the end of the
 * array, the guard is lifted and the declaration goes into the gap. */
static inline void *kbd_cpu_smem_static(const void *key, size_t bytes, size_t align, const char *file, int line) {
  kbd_cpu_cta *cta = kbd_cpu_self()->cta;
  for (int i = 0; i < cta->nstatics; ++i)
    if (cta->statics[i].key == key) return cta->smem + cta->statics[i].off;
  if (cta->nstatics == KBD_CPU_MAX_STATICS)
    kbd_cpu_fault(KBD_ERR_INVALID, file, line, "more than %d static shared-memory declarations", KBD_CPU_MAX_STATICS);
  const uintptr_t ga = kbd_cpu_guard_of(cta);
  const size_t g = ga ? (size_t)(ga - (uintptr_t)cta->smem) : 0, gend = ga ? g + kbd_cpu_guard_t.page : 0;
  size_t packed = cta->smem_top, first = (size_t)-1, before = cta->dyn_bytes; /* the end of the arrays, less the gap */
  for (int i = 0; ga && i < cta->nstatics; ++i) {
    const kbd_cpu_static *t = &cta->statics[i];
    if (t->off >= gend && t->off < first) first = t->off;
    if (t->off < gend && t->off + t->bytes > before) before = t->off + t->bytes;
  }
  if (first != (size_t)-1) packed -= first - (before + 15) / 16 * 16;
  if ((packed + align - 1) / align * align + bytes > KBD_MAX_SMEM_BYTES)
    kbd_cpu_fault(KBD_ERR_INVALID, file, line,
                  "static shared memory of %zu bytes brings the block to %zu bytes (dynamic %zu), over the %u-byte "
                  "(227 KiB) limit",
                  bytes, (packed + align - 1) / align * align + bytes, cta->dyn_bytes, KBD_MAX_SMEM_BYTES);
  size_t from = cta->smem_top > gend ? cta->smem_top : gend;
  size_t off = (from + align - 1) / align * align;
  if (off + bytes > KBD_MAX_SMEM_BYTES) { /* the gap in the way: give up the guard, fill the gap first */
    kbd_cpu_guard_lift(cta->smem, 0);
    from = cta->dyn_bytes;
    for (int i = 0; i < cta->nstatics; ++i)
      if (cta->statics[i].off < gend && cta->statics[i].off + cta->statics[i].bytes > from)
        from = cta->statics[i].off + cta->statics[i].bytes;
    off = (from + align - 1) / align * align;
    if (off + bytes > gend) off = (cta->smem_top + align - 1) / align * align;
    if (off + bytes > KBD_MAX_SMEM_BYTES)
      kbd_cpu_fault(KBD_ERR_INVALID, file, line,
                    "static shared memory of %zu bytes: no room left between the block's arrays (CPU machine "
                    "placement; dynamic %zu bytes)",
                    bytes, cta->dyn_bytes);
  }
  /* what the GPU would lay out: the arrays packed, without the guard's gap (pool.h's residency reads it) */
  if ((packed + align - 1) / align * align + bytes > cta->smem_need)
    cta->smem_need = (packed + align - 1) / align * align + bytes;
  kbd_cpu_static *s = &cta->statics[cta->nstatics++];
  s->key = key;
  s->off = off;
  s->bytes = bytes;
  s->file = file;
  s->line = line;
  /* the fill: the array, and the padding before it, but never the armed guard page (an array is never on it) */
  if (off > cta->smem_top) {
    const size_t lo = cta->smem_top;
    if (ga && lo < gend && off > g && kbd_cpu_guard_of(cta)) {
      if (lo < g) kbd_cpu_poison(cta->smem, lo, g - lo);
      if (off > gend) kbd_cpu_poison(cta->smem, gend, off - gend);
    } else {
      kbd_cpu_poison(cta->smem, lo, off - lo);
    }
  }
  kbd_cpu_poison(cta->smem, off, bytes);
  if (off + bytes > cta->smem_top) cta->smem_top = off + bytes;
  return cta->smem + off;
}

/* Is p a shared-memory address of the running CTA? */
static inline int kbd_cpu_is_smem(const void *p) {
  const kbd_cpu_warp *w = kbd_cpu_cur;
  if (!w) return 0;
  const uintptr_t a = (uintptr_t)p, base = (uintptr_t)w->cta->smem;
  return a >= base && a < base + KBD_MAX_SMEM_BYTES;
}

/* A shared-memory access of [p, p+bytes) by a kbd primitive: it must lie inside ONE allocation (the
 * dynamic region or one KBD_SHARED array). On the GPU the arrays sit in another order, so running off
 * one into its neighbour is a different bug there - report it here. Returns the byte offset. */
static inline size_t kbd_cpu_check_smem_in(const kbd_cpu_cta *cta, const void *p, size_t bytes, const char *file,
                                           int line, const char *what) {
  const uintptr_t lo = (uintptr_t)p, base = (uintptr_t)cta->smem;
  const long long off = (long long)(lo - base), end = off + (long long)bytes;
  if (lo >= base && end <= (long long)cta->dyn_bytes) return (size_t)off;
  for (int i = 0; i < cta->nstatics; ++i) {
    const kbd_cpu_static *s = &cta->statics[i];
    if (off >= (long long)s->off && end <= (long long)(s->off + s->bytes)) return (size_t)off;
  }
  if (lo < base || lo >= base + KBD_MAX_SMEM_BYTES)
    kbd_cpu_fault(KBD_ERR_BOUNDS, file, line, "%s: %p is not a shared-memory address of %s", what, p,
                  cta == kbd_cpu_self()->cta ? "this block" : "the cluster CTA it was mapped to");
  kbd_cpu_fault(KBD_ERR_BOUNDS, file, line,
                "%s touches shared-memory bytes [%lld, %lld), which is not inside one allocation (dynamic: [0, %zu)"
                "; %d static arrays; %zu bytes in use)",
                what, off, end, cta->dyn_bytes, cta->nstatics, cta->smem_top);
}
static inline size_t kbd_cpu_check_smem(const void *p, size_t bytes, const char *file, int line, const char *what) {
  return kbd_cpu_check_smem_in(kbd_cpu_self()->cta, p, bytes, file, line, what);
}

/* A read / write of shared bytes [p, p+bytes) by the running warp: bounds, then the shadow. `el` names the
 * tile element for reports (kbd_cpu_no_elem() when none). */
static inline void kbd_cpu_smem_read(const void *p, size_t bytes, const char *what, kbd_cpu_elem el, const char *file,
                                     int line) {
  const size_t off = kbd_cpu_check_smem(p, bytes, file, line, what);
  kbd_cpu_shadow_read(kbd_cpu_cur, off, bytes, what, el, file, line);
}
static inline void kbd_cpu_smem_write(const void *p, size_t bytes, const char *what, kbd_cpu_elem el, const char *file,
                                      int line) {
  const size_t off = kbd_cpu_check_smem(p, bytes, file, line, what);
  kbd_cpu_shadow_write(kbd_cpu_cur, off, bytes, 0, what, el, file, line);
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SMEM_H */
