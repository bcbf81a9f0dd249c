/* PTX probe for the operand ORDER of the tcgen05 twins of kbd/ptx/{mma,mma_ts,mma_pair}.h on sm_100a
 * (tests/ptx/order_tcgen05.check, issue 31): every operand is its own kernel parameter or __shared__ variable, so the
 * check binds each register where it is produced and demands it in its place: tcgen05.mma [d], a-desc, b-desc, idesc
 * and the enable-input-d predicate set from the accumulate flag (descriptor A and A in Tensor Memory, one CTA and the
 * pair), tcgen05.alloc / dealloc, the multicast commit, tcgen05.ld / st with two registers (each to / from its own
 * place), and the pair's TMA load coordinates. tests/ptx/order_mutant.sh swaps operands in a copy of the headers and
 * expects the check to fail (ptx_order_mutant_*). tcgen05.cp has no kbd twin (nothing to check). */
#include <kbd/mma_desc.h>
#include <kbd/tile.h>

#define OS __FILE__, __LINE__
#define OK extern "C" __global__ void

OK order_umma(unsigned dtmem, unsigned long long adesc, unsigned long long bdesc, unsigned idesc, int acc) {
  kbd_hw_umma(dtmem, KBD_MMA_KIND_F16, idesc, adesc, bdesc, acc, OS);
}
OK order_umma_ts(unsigned dtmem, unsigned atmem, unsigned long long bdesc, unsigned idesc, int acc) {
  kbd_hw_umma_ts(dtmem, KBD_MMA_KIND_F16, idesc, atmem, bdesc, acc, OS);
}
OK order_umma_pair(unsigned dtmem, unsigned long long adesc, unsigned long long bdesc, unsigned idesc, int acc) {
  kbd_hw_umma_pair(dtmem, KBD_MMA_KIND_F16, idesc, adesc, bdesc, acc, OS);
}
OK order_tmem_alloc(unsigned ncols) {
  __shared__ uint32_t slot_word;
  kbd_hw_tmem_alloc(&slot_word, ncols, OS);
}
OK order_tmem_dealloc(unsigned taddr, unsigned ncols) { kbd_hw_tmem_dealloc(taddr, ncols, OS); }
OK order_umma_commit_mc(unsigned short mask) {
  __shared__ uint64_t bar_word;
  kbd_hw_umma_commit_mc(&bar_word, mask, OS);
}
OK order_tmem_ld2(unsigned taddr, unsigned *out) {
  uint32_t v[2];
  kbd_hw_tmem_ld(v, 1, taddr, KBD_TMEM_32X32B, 2, OS);
  kbd_hw_tmem_wait_ld(OS);
  out[0] = v[0];
  out[1] = v[1];
}
OK order_tmem_st2(unsigned taddr, unsigned v0, unsigned v1) {
  const uint32_t v[2] = {v0, v1};
  kbd_hw_tmem_st(taddr, v, 1, KBD_TMEM_32X32B, 2, OS);
  kbd_hw_tmem_wait_st(OS);
}
OK order_tma_load_pair2d(const __grid_constant__ kbd_tensor_map map, int c0, int c1) {
  __shared__ __align__(1024) char dst_buf[4096];
  __shared__ uint64_t bar_word;
  kbd_hw_tma_load_pair(dst_buf, 128, 8, 0, &map, &bar_word, 2, c0, c1, 0, 0, 0, OS);
}
