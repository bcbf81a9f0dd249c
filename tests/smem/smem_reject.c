/* tests/smem/smem_reject.c - compile-time shape rules of kbd/swizzle.h (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the smem_reject_* tests (tests/smem/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake: as C11 and C++17 with -DKBD_CPU, and as CUDA by nvcc. Case n breaks
 * exactly one rule and must stop the compiler with that rule's message. Case 0 is the positive control:
 * legal shapes at file scope, block scope and inside a struct, and (under nvcc) the functions called from
 * device code, must compile cleanly with -Werror.
 */
#include <kbd/swizzle.h>

#if KBD_REJECT_CASE == 0
KBD_SMEM_STATIC_CHECK(2, 128, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
KBD_SMEM_STATIC_CHECK(4, 64, 16, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
KBD_SMEM_STATIC_CHECK(1, 5, 32, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
typedef struct probe {
  KBD_SMEM_STATIC_CHECK(2, 32, 16, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR);
  int x;
} probe;
#if KBD_MODE_CUDA
__global__ void probe_kernel(int *out) {
  KBD_SMEM_STATIC_CHECK(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape s = kbd_smem_shape_make(2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
  const int t = (int)threadIdx.x;
  out[t] = kbd_smem_tile_offset(&s, t % 64, t / 64) + (int)kbd_swizzle_apply(KBD_SWIZZLE_32B, (uint32_t)t) +
           kbd_swizzle_phase(KBD_SWIZZLE_64B, (uint32_t)t) + kbd_smem_desc_sbo(&s) + kbd_smem_desc_lbo(&s) +
           (kbd_smem_shape_check(&s) == 0);
}
#endif
int probe_fn(int r, int c);
int probe_fn(int r, int c) {
  KBD_SMEM_STATIC_CHECK(1, 8, 128, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR);
  const kbd_smem_shape s = kbd_smem_shape_make(1, 8, 128, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR);
  return kbd_smem_tile_offset(&s, r, c) + kbd_smem_block_stride(&s) + kbd_smem_align_bytes(&s);
}

#elif KBD_REJECT_CASE == 1
KBD_SMEM_STATIC_CHECK(3, 64, 64, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR); /* 3-byte elements */
#elif KBD_REJECT_CASE == 2
KBD_SMEM_STATIC_CHECK(2, 64, 64, 7, KBD_SMEM_K_MAJOR); /* no such mode */
#elif KBD_REJECT_CASE == 3
KBD_SMEM_STATIC_CHECK(2, 64, 64, KBD_SWIZZLE_128B, 2); /* no such major-ness */
#elif KBD_REJECT_CASE == 4
KBD_SMEM_STATIC_CHECK(2, 0, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR); /* no rows */
#elif KBD_REJECT_CASE == 5
KBD_SMEM_STATIC_CHECK(4, 512, 128, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR); /* 256 KiB */
#elif KBD_REJECT_CASE == 6
KBD_SMEM_STATIC_CHECK(2, 8, 4, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR); /* 8-byte rows */
#elif KBD_REJECT_CASE == 7
KBD_SMEM_STATIC_CHECK(2, 64, 48, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR); /* 96-byte rows under a 128-byte span */
#elif KBD_REJECT_CASE == 8
KBD_SMEM_STATIC_CHECK(2, 12, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR); /* 12 rows: one and a half atoms */
#elif KBD_REJECT_CASE == 9
KBD_SMEM_STATIC_CHECK(4, 64, 32, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_K_MAJOR); /* 32-byte atoms, K-major */
#endif
