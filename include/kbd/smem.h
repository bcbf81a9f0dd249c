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
 *
 * Compile-time rules (docs/memory-and-sync.md), checked in every build so that a declaration the CPU run
 * never reaches still fails to compile where nvcc/ptxas would reject it:
 *   count   an integer constant expression (a literal, enum constant or macro; in C a const int variable
 *           is not one), at least 1
 *   bytes   sizeof(type) * count at most 227 KiB (232448), what ptxas accepts for sm_90a/sm_100a
 *   align   a power of two
 */
#ifndef KBD_SMEM_H
#define KBD_SMEM_H

#include "config.h"

/* KBD__IS_CONST(x): 1 when the integer x is a compile-time constant, itself a constant expression usable in
 * KBD_STATIC_ASSERT. KBD__IF_CONST(x, alt): x when it is a constant, else alt; a check written over it
 * stays a constant expression whatever x is, so a non-constant x gets only the rule's own message instead
 * of the compiler's bare "not constant" as well.
 * C: exactly "integer constant expression", what a C array bound needs: (void *)(x * 0) is a null pointer
 * constant only when x is one, and only a null pointer constant lets `1 ? (int *)0 : it` keep type int *.
 * (__builtin_constant_p would not do: clang folds a const int variable, no constant in C, to 1.) Then
 * __builtin_choose_expr, because a ?: with a non-constant operand is no integer constant expression even
 * where that operand is not taken.
 * C++ (g++, clang++, nvcc): gcc, clang and nvcc fold __builtin_constant_p of a non-constant to 0 in a
 * static assertion. The `+ 0`: nvcc's front end gives 0 for a bare named constexpr (or const) variable, a
 * valid array bound in C++, but 1 for an expression of it. */
#if defined(__cplusplus)
#define KBD__IS_CONST(x) __builtin_constant_p((x) + 0)
#define KBD__IF_CONST(x, alt) (KBD__IS_CONST(x) ? (x) : (alt))
#else
#define KBD__IS_CONST(x) _Generic((1 ? (int *)0 : (void *)((x)*0ll)), int * : 1, default : 0)
#define KBD__IF_CONST(x, alt) __builtin_choose_expr(KBD__IS_CONST(x), (x), (alt))
#endif

/* The rules' messages (tests/rules match them). */
#define KBD__SHARED_RULE_CONST                                                                                         \
  "kbd: KBD_SHARED size must be a compile-time constant (a __shared__ array cannot be sized at run time; "             \
  "use dynamic shared memory: kbd_dynamic_smem() with the launch's smem_bytes)"
#define KBD__SHARED_RULE_POSITIVE "kbd: KBD_SHARED count must be at least 1"
#define KBD__SHARED_RULE_LIMIT                                                                                         \
  "kbd: a KBD_SHARED array is over the 227 KiB (232448-byte) static shared memory limit of one block (ptxas "          \
  "rejects it for sm_90a/sm_100a); use dynamic shared memory: kbd_dynamic_smem() with the launch's smem_bytes"
#define KBD__SHARED_RULE_ALIGN "kbd: KBD_SHARED_ALIGNED alignment must be a constant power of two"

/* The rules of one declaration, as block-scope declarations (placed before it). The byte limit is
 * compared as count <= limit / sizeof(type) so that a huge count cannot wrap the product around. */
#define KBD__SHARED_RULES(type, count, align)                                                                          \
  KBD_STATIC_ASSERT(KBD__IS_CONST(count), KBD__SHARED_RULE_CONST);                                                     \
  KBD_STATIC_ASSERT(KBD__IF_CONST(count, 1) >= 1, KBD__SHARED_RULE_POSITIVE);                                          \
  KBD_STATIC_ASSERT(KBD__IF_CONST(count, 1) < 1 ||                                                                     \
                        (unsigned long long)KBD__IF_CONST(count, 1) <= KBD_MAX_SMEM_BYTES / sizeof(type),              \
                    KBD__SHARED_RULE_LIMIT);                                                                           \
  KBD_STATIC_ASSERT(KBD__IS_CONST(align) && KBD__IF_CONST(align, 16) > 0 &&                                            \
                        (KBD__IF_CONST(align, 16) & (KBD__IF_CONST(align, 16) - 1)) == 0,                              \
                    KBD__SHARED_RULE_ALIGN)

#if KBD_MODE_CPU || KBD_MODE_CUDA
#include "hw.h"
#define KBD_SHARED_ALIGNED(type, name, count, align)                                                                   \
  KBD__SHARED_RULES(type, count, align);                                                                               \
  KBD_HW_SHARED_ALIGNED(type, name, count, align)
KBD_DEV void *kbd_dynamic_smem(void) { return kbd_hw_dynamic_smem(); }
/* Plain scalar shared accesses the CPU machine checks (bounds of one allocation, never-written bytes,
 * races between warps): *p = v / *p. Raw pointer accesses work the same on the GPU but are invisible to
 * the checks. */
/* p may also be a peer CTA's shared memory (kbd_cluster_map, kbd/cluster.h): generic ld/st reach it. */
#define kbd_st_shared(p, v)                                                                                            \
  (kbd_hw_dsmem_write((p), sizeof *(p), (int)sizeof *(p), "kbd_st_shared", KBD_SITE), (void)(*(p) = (v)))
#define kbd_ld_shared(p) (kbd_hw_dsmem_read((p), sizeof *(p), (int)sizeof *(p), "kbd_ld_shared", KBD_SITE), *(p))
#endif

#define KBD_SHARED(type, name, count) KBD_SHARED_ALIGNED(type, name, count, 16)

#endif /* KBD_SMEM_H */
