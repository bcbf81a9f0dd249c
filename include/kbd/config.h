/* kbd/config.h - build-mode detection and the qualifiers every kbd header uses.
 *
 * Three ways a kbd header is compiled:
 *   KBD_CPU defined           CPU emulation: kernels are scalar C run by the CPU machine (kbd/cpu/).
 *   __CUDACC__ (no KBD_CPU)   nvcc: host pass + device pass (__CUDA_ARCH__) of a kernel source.
 *   neither                   plain host C/C++ of a GPU program: host API only (memory, status, launch
 *                             declarations); talks to the CUDA runtime.
 * Config macros a user may set before including kbd/tile.h:
 *   KBD_CPU               select CPU emulation.
 *   KBD_CPU_ARCH          90 or 100: which GPU the emulator mirrors (default 100, i.e. sm_100a).
 */
#ifndef KBD_CONFIG_H
#define KBD_CONFIG_H

/* The CPU machine needs POSIX/BSD declarations (mmap, pthreads, sysconf) even under -std=c11. This only
 * takes effect if no system header was included before kbd's; otherwise fallbacks are used. */
#if defined(KBD_CPU) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#include <stddef.h>
#include <stdint.h>

#if defined(KBD_CPU)
#define KBD_MODE_CPU 1
#define KBD_MODE_CUDA 0
#elif defined(__CUDACC__)
#define KBD_MODE_CPU 0
#define KBD_MODE_CUDA 1
#else
#define KBD_MODE_CPU 0
#define KBD_MODE_CUDA 0
#endif

/* Device pass of nvcc: the only place inline PTX is emitted. */
#if KBD_MODE_CUDA && defined(__CUDA_ARCH__)
#define KBD_DEVICE_PASS 1
#else
#define KBD_DEVICE_PASS 0
#endif

/* Kernel code is compiled in this pass: CPU mode and nvcc's device pass. nvcc's host pass only needs a kernel's
 * launcher and its empty __global__ stub, yet it preprocesses and parses the whole body (cudafe++), to throw
 * it away; a kernel text may skip its body and its device helpers there with `#if KBD_KERNEL_CODE`
 * (docs/kernels.md, "Compile time"). 0 in plain host C, which never sees kernel bodies. */
#if KBD_MODE_CPU || KBD_DEVICE_PASS
#define KBD_KERNEL_CODE 1
#else
#define KBD_KERNEL_CODE 0
#endif

#if KBD_MODE_CPU && !defined(KBD_CPU_ARCH)
#define KBD_CPU_ARCH 100
#endif

/* Arch-feature guards. The `a` targets define __CUDA_ARCH_FEAT_SM90_ALL / __CUDA_ARCH_FEAT_SM100_ALL;
 * plain -arch=sm_90 (compute_90) does not, and wgmma/tcgen05 asm must not be seen there. */
#if KBD_DEVICE_PASS && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KBD_SM90A 1
#else
#define KBD_SM90A 0
#endif
#if KBD_DEVICE_PASS && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define KBD_SM100A 1
#else
#define KBD_SM100A 0
#endif

#ifdef __cplusplus
#define KBD_EXTERN_C extern "C"
#define KBD_EXTERN_C_BEGIN extern "C" {
#define KBD_EXTERN_C_END }
#define KBD_STATIC_ASSERT(c, msg) static_assert(c, msg)
#define KBD_ALIGNOF(t) alignof(t)
#else
#define KBD_EXTERN_C
#define KBD_EXTERN_C_BEGIN
#define KBD_EXTERN_C_END
#define KBD_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#define KBD_ALIGNOF(t) _Alignof(t)
#endif

/* A renamed macro keeps its old name only to stop the compiler with a message naming the new one: a statement
 * (KBD__RENAMED_STMT) or an expression (KBD__RENAMED_EXPR; 0u after the error). The old arguments go to a
 * never-defined variadic function inside an unevaluated sizeof, so that variables used only there raise no
 * unused-variable warning after the one error. C++ cannot define a type inside sizeof, hence the immediately
 * called lambda there (C++17 allows it in constant expressions); C11 takes the static assertion as a member of
 * an unnamed struct. */
KBD_EXTERN_C int kbd__renamed_args_(int kbd_n_, ...);
#define KBD__RENAMED_STMT(msg, ...)                                                                                    \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(0, msg);                                                                                         \
    (void)sizeof(kbd__renamed_args_(0, __VA_ARGS__));                                                                  \
  } while (0)
#ifdef __cplusplus
#define KBD__RENAMED_EXPR(msg)                                                                                         \
  ([]() -> unsigned {                                                                                                  \
    static_assert(0, msg);                                                                                             \
    return 0u;                                                                                                         \
  }())
#else
#define KBD__RENAMED_EXPR(msg)                                                                                         \
  (0u * sizeof(struct {                                                                                                \
     int kbd_renamed_;                                                                                                 \
     _Static_assert(0, msg);                                                                                           \
   }))
#endif

/* KBD_DEV: code that runs inside a kernel (device function on the GPU, plain C in CPU mode).
 * KBD_HD:  pure functions used on both sides (layout, swizzle, conversion math) - ONE definition
 *          for the PTX path and for the emulator. */
#if KBD_MODE_CUDA
#define KBD_DEV static __device__ __forceinline__
#define KBD_HD static __host__ __device__ __forceinline__
#else
#define KBD_DEV static inline
#define KBD_HD static inline
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KBD_UNUSED __attribute__((unused))
#define KBD_WEAK __attribute__((weak))
#define KBD_NORETURN __attribute__((noreturn))
#define KBD_LIKELY(x) __builtin_expect(!!(x), 1)
#define KBD_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KBD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#error "kbd needs a GNU-compatible compiler (gcc, clang, nvcc's host compiler)"
#endif

/* The call site every kbd primitive takes last, so the CPU twin can report the user's file:line; the GPU
 * twin ignores it and, being inlined, costs nothing. Public macros pass KBD_SITE. */
#define KBD_SITE __FILE__, __LINE__
#define KBD_SITE_PARAMS const char *kbd_file_, int kbd_line_
#define KBD_SITE_ARGS kbd_file_, kbd_line_
#define KBD_SITE_UNUSED ((void)kbd_file_, (void)kbd_line_)

#define KBD_STR_(x) #x
#define KBD_STR(x) KBD_STR_(x)
#define KBD_CAT_(a, b) a##b
#define KBD_CAT(a, b) KBD_CAT_(a, b)

/* Hardware constants shared by H100 (sm_90) and B200 (sm_100). */
#define KBD_WARP_SIZE 32
#define KBD_WARPGROUP_SIZE 128
#define KBD_MAX_BLOCK_THREADS 1024
/* Opt-in shared memory per block: 227 KiB on both H100 and B200. */
#define KBD_MAX_SMEM_BYTES (227u * 1024u)
/* Without cudaFuncSetAttribute a kernel may only use 48 KiB of dynamic shared memory. */
#define KBD_DEFAULT_SMEM_BYTES (48u * 1024u)
#define KBD_NUM_NAMED_BARRIERS 16
/* CTAs per thread-block cluster: 8 portably, 16 with the non-portable attribute (H100, B200). */
#define KBD_MAX_CLUSTER_CTAS 8
#define KBD_MAX_CLUSTER_CTAS_NONPORTABLE 16

#endif /* KBD_CONFIG_H */
