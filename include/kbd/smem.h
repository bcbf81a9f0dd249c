/* kbd/smem.h - shared memory in kernels.
 *
 * KBD_SHARED(type, name, count)              `type *name`: a block-wide array of count elements,
 *                                            16-byte aligned (so 128-bit vector accesses are legal).
 * KBD_SHARED_ALIGNED(type, name, count, a)   the same with alignment a (e.g. 1024 for 128B swizzles).
 * kbd_dynamic_smem()                         base of the launch's dynamic shared memory (1024-aligned).
 *
 * Every warp that executes a KBD_SHARED declaration gets the same block-wide memory, as with
 * __shared__ on the GPU. In CPU mode the memory is a per-block byte array filled with a poison pattern,
 * so kbd loads of never-written shared memory fail with file:line; the 227 KiB limit (dynamic + static)
 * is enforced when a declaration is first reached. Layout difference: the GPU places static shared
 * memory first and dynamic after it; the CPU machine places dynamic first (its size is known at launch,
 * the static total is not). Alignments, and so swizzle phases, are the same on both.
 */
#ifndef KBD_SMEM_H
#define KBD_SMEM_H

#include "config.h"

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#define KBD_SHARED_ALIGNED(type, name, count, align) KBD_HW_SHARED_ALIGNED(type, name, count, align)
KBD_DEV void *kbd_dynamic_smem(void) { return kbd_hw_dynamic_smem(); }
/* Plain scalar shared accesses the CPU machine checks (bounds of one allocation, never-written bytes,
 * races between warps): *p = v / *p. Raw pointer accesses work the same on the GPU but are invisible to
 * the checks. */
#define kbd_st_shared(p, v)                                                                                            \
  (kbd_hw_smem_write((p), sizeof *(p), (int)sizeof *(p), "kbd_st_shared", -1, -1, KBD_SITE), (void)(*(p) = (v)))
#define kbd_ld_shared(p) (kbd_hw_smem_read((p), sizeof *(p), (int)sizeof *(p), "kbd_ld_shared", -1, -1, KBD_SITE), *(p))
#endif

#define KBD_SHARED(type, name, count) KBD_SHARED_ALIGNED(type, name, count, 16)

#endif /* KBD_SMEM_H */
