/* PTX probe for the operand ORDER of the wgmma twins of kbd/ptx/mma.h on sm_90a (tests/ptx/order_wgmma.check,
 * issue 31): the accumulator registers, a-desc, b-desc and scale-d each come from their own kernel parameter, so the
 * check binds each register at its ld.param and demands it in its place in wgmma.mma_async - {d0, d1, d2, d3},
 * a-desc, b-desc, then the predicate set from the accumulate flag. Two entries: kbd_hw_wgmma (every variant of the
 * family in one asm statement, predicated on a selector) and the single-variant function kbd_mma issues
 * (kbd_hw_wgmma_fn). tests/ptx/order_mutant.sh swaps operands in a copy of the headers and expects the check to
 * fail (ptx_order_mutant_*). bf16 m64n8k16: 4 f32 accumulator registers per thread. */
#include <kbd/mma_desc.h>
#include <kbd/tile.h>

#define OS __FILE__, __LINE__
#define OIDESC                                                                                                         \
  kbd_umma_instr_desc(KBD_MMA_BF16, KBD_MMA_BF16, KBD_MMA_F32, 64, 8, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR, 0u)

/* the four accumulator registers in, the MMA, the four out: d[i] goes to out[i] */
#define ORDER_WGMMA_BODY(call)                                                                                         \
  float d[4] = {d0, d1, d2, d3};                                                                                       \
  kbd_hw_wgmma_acc_touch(d, 4, 4, OS);                                                                                 \
  kbd_hw_wgmma_fence(OS);                                                                                              \
  call;                                                                                                                \
  kbd_hw_wgmma_commit(OS);                                                                                             \
  kbd_hw_wgmma_wait(0, OS);                                                                                            \
  kbd_hw_wgmma_acc_touch(d, 4, 4, OS);                                                                                 \
  out[0] = d[0], out[1] = d[1], out[2] = d[2], out[3] = d[3]

extern "C" __global__ void order_wgmma_hw(float d0, float d1, float d2, float d3, unsigned long long adesc,
                                          unsigned long long bdesc, int acc, float *out) {
  ORDER_WGMMA_BODY(kbd_hw_wgmma(d, 0, KBD_MMA_KIND_F16, OIDESC, adesc, bdesc, acc, OS));
}

extern "C" __global__ void order_wgmma_leaf(float d0, float d1, float d2, float d3, unsigned long long adesc,
                                            unsigned long long bdesc, int acc, float *out) {
  ORDER_WGMMA_BODY(kbd_hw_wgmma_fn(KBD_MMA_BF16, KBD_MMA_BF16, KBD_SMEM_K_MAJOR, KBD_SMEM_K_MAJOR,
                                   8)(d, 0, KBD_MMA_KIND_F16, OIDESC, adesc, bdesc, acc, OS));
}
