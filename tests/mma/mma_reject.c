/* tests/mma/mma_reject.c - compile-time MMA operand rules of kbd/mma_desc.h (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the mma_reject_* tests (tests/mma/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake, as C11 and C++17 with -DKBD_CPU. Case n breaks one rule and must stop the
 * compiler with that rule's message; case 0 (the positive control) asserts every supported kind of operand
 * tile and calls every descriptor function, and must compile cleanly with -Werror (also under nvcc, in device
 * code, for sm_90a and sm_100a).
 */
#include <kbd/mma_desc.h>
#include <kbd/stile.h>

#if KBD_REJECT_CASE == 0
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 2, 256, 64, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR);
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 4, 64, 8, KBD_SWIZZLE_32B, KBD_SMEM_K_MAJOR);
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 1, 128, 128, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM100, 1, 128, 64, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR);
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM100, 4, 64, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) rj_a;
typedef KBD_STILE_MN(bf16, 128, 64, KBD_SWIZZLE_128B) rj_b;

#ifdef __CUDACC__
__global__ void rj_use(unsigned long long *o, unsigned addr, int k)
#else
void rj_use(unsigned long long *o, unsigned addr, int k);
void rj_use(unsigned long long *o, unsigned addr, int k)
#endif
{
  rj_a a;
  rj_b b;
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM90, a);
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM100, b);
  const kbd_smem_shape s = KBD_STILE_SHAPE(a);
  o[0] = kbd_wgmma_smem_desc(&s, addr, 0, k) + kbd_umma_smem_desc(&s, addr, 64, k);
  o[1] = kbd_wgmma_desc_addr(o[0], KBD_SMEM_K_MAJOR, 2, k, 3) + kbd_umma_desc_addr(o[0], KBD_SMEM_MN_MAJOR, 2, 5, k);
  o[2] = kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 128, 256, 0, 0, 0) +
         kbd_mma_desc_add_bytes(o[0], 32) + kbd_mma_operand_offset(&s, 8, k);
  o[3] = (kbd_mma_operand_check(KBD_MMA_SM90, &s, addr) != 0) + (kbd_mma_slice_check(&s, 0, 64, k) != 0) +
         (kbd_wgmma_desc_check(o[0], 0, 2) != 0) + (kbd_umma_desc_check(o[0], 0, 2) != 0) +
         (kbd_umma_idesc_check((uint32_t)o[2], KBD_MMA_KIND_F16, 1) != 0) +
         (kbd_wgmma_shape_check(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 64, 64, 0, 0) != 0);
  o[4] = (unsigned long long)(kbd_umma_idesc_m((uint32_t)o[2]) + kbd_umma_idesc_n((uint32_t)o[2]) +
                              kbd_umma_idesc_type(KBD_MMA_KIND_F16, kbd_umma_idesc_a_code((uint32_t)o[2])));
}
#elif KBD_REJECT_CASE == 1
KBD_MMA_OPERAND_STATIC_CHECK(80, 2, 64, 64, KBD_SWIZZLE_128B, KBD_SMEM_K_MAJOR);
#elif KBD_REJECT_CASE == 2
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM100, 2, 64, 8, KBD_SWIZZLE_NONE, KBD_SMEM_K_MAJOR);
#elif KBD_REJECT_CASE == 3
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 4, 64, 8, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
#elif KBD_REJECT_CASE == 4
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 1, 128, 64, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR);
#elif KBD_REJECT_CASE == 5
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM100, 2, 64, 16, KBD_SWIZZLE_128B_ATOM32, KBD_SMEM_MN_MAJOR);
#elif KBD_REJECT_CASE == 6
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM100, 4, 64, 8, KBD_SWIZZLE_128B, KBD_SMEM_MN_MAJOR);
#elif KBD_REJECT_CASE == 7
KBD_MMA_OPERAND_STATIC_CHECK(KBD_MMA_SM90, 2, 64, 24, KBD_SWIZZLE_64B, KBD_SMEM_MN_MAJOR);
#elif KBD_REJECT_CASE == 8
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_NONE) rj_none;
void rj_bad(void);
void rj_bad(void) {
  rj_none t;
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM100, t);
}
#elif KBD_REJECT_CASE == 9
typedef KBD_STILE_MN(f32, 64, 64, KBD_SWIZZLE_128B) rj_tf32;
void rj_bad(void);
void rj_bad(void) {
  rj_tf32 t;
  KBD_MMA_STILE_STATIC_CHECK(KBD_MMA_SM90, t);
}
#endif
