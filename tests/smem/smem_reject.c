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

/* ---- kbd/stile_move.h: moves between register tiles and shared tiles (cases 69-76) ------------------------
 * 69 is the positive control: every move macro on legal operands, compiled with -Werror (device code under
 * nvcc, where the ldmatrix/stmatrix paths are instantiated). 70-76 each break one rule of the moves. */
#if KBD_REJECT_CASE >= 69 && KBD_REJECT_CASE <= 76
#include <kbd/stile_move.h>
#include <kbd/tile.h>
#if KBD_MODE_CUDA
#define SR_FN __device__ void
#else
#define SR_FN void
#endif
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) sr_k_tile;
typedef KBD_STILE_MN(bf16, 32, 16, KBD_SWIZZLE_32B) sr_mn_tile;
SR_FN sr_probe(sr_k_tile s, sr_mn_tile m, int k);
SR_FN sr_probe(sr_k_tile s, sr_mn_tile m, int k) {
  KBD_TILE_L(bf16, 16, 16, KBD_WARP, KBD_LAYOUT_MMA_A) a;
  KBD_TILE_L(bf16, 16, 32, KBD_WARP, KBD_LAYOUT_MMA_B) b;
  KBD_TILE_L(bf16, 64, 64, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  KBD_TILE(f32, 64, 64, KBD_WARPGROUP) f;
  (void)f;
  (void)b;
#if KBD_REJECT_CASE == 69
  kbd_zero(acc);
  kbd_stile_store(s, acc);
  kbd_stile_load(acc, s);
  kbd_stile_load_t(acc, s);
  kbd_stile_store_t(s, acc);
  kbd_stile_load_at(a, s, 16, 16 * k);
  kbd_stile_store_at(s, a, 16 * k, 8);
  kbd_stile_load_t_at(b, s, 8, 16 * k);
  kbd_stile_store_t_at(s, b, 0, 0);
  kbd_stile_load_t(b, m);
  kbd_stile_store_t(m, b);
  kbd_add(acc, acc, acc);
  kbd_add(a, a, a);
#elif KBD_REJECT_CASE == 70
  kbd_stile_load(acc, acc); /* the source is a register tile */
#elif KBD_REJECT_CASE == 71
  kbd_stile_load(s, s); /* the destination is a shared tile */
#elif KBD_REJECT_CASE == 72
  kbd_stile_load(f, s); /* f32 register tile, bf16 shared tile */
#elif KBD_REJECT_CASE == 73
  kbd_stile_load(a, s); /* 16 x 16 from 64 x 64: a window needs kbd_stile_load_at */
#elif KBD_REJECT_CASE == 74
  kbd_stile_load_at(acc, m, 0, 0); /* 64 x 64 window of a 32 x 16 tile */
#elif KBD_REJECT_CASE == 75
  kbd_stile_store_t(m, a); /* 16 x 16 transposed is 16 x 16, not 32 x 16 */
#elif KBD_REJECT_CASE == 76
  kbd_stile_load_t_at(b, m, 0, 0); /* 16 x 32 transposed is 32 x 16: fits; the WGMMA 64 x 64 does not */
  kbd_stile_load_t_at(acc, m, 0, 0);
#endif
  (void)k, (void)a, (void)acc, (void)m;
}
#endif
