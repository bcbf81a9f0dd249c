/* PTX probe for operand ORDER (tests/ptx/order_async.check, issue 31): every multi-operand TMA, mbarrier and cluster
 * twin of kbd/ptx/{tma,mbar,cluster}.h is called with operands that are each a different kernel parameter or a
 * different __shared__ variable, so the check can bind each operand register where its value is produced (the
 * ld.param of parameter k, the mov of a shared symbol) and demand it in its place in the instruction. A twin that
 * passes its operands in another order (coordinates {c1, c0}, the barrier where the destination belongs, the count
 * where the address belongs) then fails the check: tests/ptx/order_mutant.sh applies such swaps to a copy of the
 * headers and expects exactly that (ptx_order_mutant_*). One entry per twin: each check block is self-contained.
 * The twins are called directly (not through kbd/tma.h's API): their argument lists are shared with the CPU twins,
 * which the CPU machine tests exercise; only the asm operand order is GPU-only. The order_api_* entries go through
 * the API instead, for the one reversal kbd/tma.h does: kbd_tma_load2d/3d take (.., row, col), outermost first, and
 * the instruction wants the column first (docs/api.md "Conventions"). */
#include <kbd/tile.h>
#include <kbd/tma.h>

#define OS __FILE__, __LINE__
#define OK extern "C" __global__ void
/* distinct shared variables: each is its own PTX symbol (..dst_buf, ..bar_word), moved into its own register */
#define SDST __shared__ __align__(1024) char dst_buf[4096]
#define SBAR __shared__ uint64_t bar_word

/* ---- TMA ---- */
OK order_tma_load2d(const __grid_constant__ kbd_tensor_map map, int c0, int c1) {
  SDST;
  SBAR;
  kbd_hw_tma_load(dst_buf, 128, 8, 0, &map, &bar_word, 2, c0, c1, 0, 0, 0, OS);
}
OK order_tma_load3d(const __grid_constant__ kbd_tensor_map map, int c0, int c1, int c2) {
  SDST;
  SBAR;
  kbd_hw_tma_load(dst_buf, 128, 8, 0, &map, &bar_word, 3, c0, c1, c2, 0, 0, OS);
}
OK order_tma_load5d(const __grid_constant__ kbd_tensor_map map, int c0, int c1, int c2, int c3, int c4) {
  SDST;
  SBAR;
  kbd_hw_tma_load(dst_buf, 128, 8, 0, &map, &bar_word, 5, c0, c1, c2, c3, c4, OS);
}
OK order_tma_store2d(const __grid_constant__ kbd_tensor_map map, int c0, int c1) {
  SDST;
  kbd_hw_tma_store(dst_buf, 128, 8, 0, &map, 0, 2, c0, c1, 0, 0, 0, OS);
}
OK order_tma_reduce2d(const __grid_constant__ kbd_tensor_map map, int c0, int c1) {
  SDST;
  kbd_hw_tma_store(dst_buf, 128, 8, 0, &map, 1, 2, c0, c1, 0, 0, 0, OS);
}
OK order_tma_prefetch2d(const __grid_constant__ kbd_tensor_map map, int c0, int c1) {
  kbd_hw_tma_prefetch(128, 8, 0, &map, 2, c0, c1, 0, 0, 0, OS);
}
OK order_bulk_load(const char *src, unsigned bytes) {
  SDST;
  SBAR;
  kbd_hw_bulk_load(dst_buf, src, bytes, &bar_word, OS);
}
OK order_bulk_store(char *dst, unsigned bytes) {
  SDST;
  kbd_hw_bulk_store(dst, dst_buf, bytes, OS);
}
OK order_tma_multicast2d(const __grid_constant__ kbd_tensor_map map, unsigned short mask, int c0, int c1) {
  SDST;
  SBAR;
  kbd_hw_tma_load_multicast(dst_buf, 128, 8, 0, &map, &bar_word, 2, mask, c0, c1, 0, 0, 0, OS);
}

/* ---- the API's coordinate order (outermost first in the call, innermost first in the instruction) ---- */
typedef KBD_STILE(bf16, 8, 64, KBD_SWIZZLE_128B) order_api_tile; /* one box: one instruction */
OK order_api_tma_load2d(const __grid_constant__ kbd_tensor_map map, int row, int col) {
  KBD_SHARED_STILE(order_api_tile, t);
  SBAR;
  kbd_tma_load2d(t, &map, &bar_word, row, col);
}
OK order_api_tma_load3d(const __grid_constant__ kbd_tensor_map map, int d2, int row, int col) {
  KBD_SHARED_STILE(order_api_tile, t);
  SBAR;
  kbd_tma_load3d(t, &map, &bar_word, d2, row, col);
}
OK order_api_tma_store2d(const __grid_constant__ kbd_tensor_map map, int row, int col) {
  KBD_SHARED_STILE(order_api_tile, t);
  kbd_tma_store2d(&map, t, row, col);
}

/* ---- mbarrier ---- */
OK order_mbar_init(unsigned count) {
  SBAR;
  kbd_hw_mbar_init(&bar_word, count, OS);
}
OK order_mbar_arrive(unsigned count) {
  SBAR;
  kbd_hw_mbar_arrive(&bar_word, count, OS);
}
OK order_mbar_arrive_expect_tx(unsigned bytes) {
  SBAR;
  kbd_hw_mbar_arrive_expect_tx(&bar_word, bytes, OS);
}
OK order_mbar_expect_tx(unsigned bytes) {
  SBAR;
  kbd_hw_mbar_expect_tx(&bar_word, bytes, OS);
}
OK order_mbar_complete_tx(unsigned bytes) {
  SBAR;
  kbd_hw_mbar_complete_tx(&bar_word, bytes, OS);
}
OK order_mbar_try_wait(unsigned parity, int *out) {
  SBAR;
  *out = kbd_hw_mbar_try_wait(&bar_word, parity, OS);
}
OK order_mbar_test_wait(unsigned parity, int *out) {
  SBAR;
  *out = kbd_hw_mbar_test_wait(&bar_word, parity, OS);
}

/* ---- cluster ---- */
OK order_cluster_map(const char *p, unsigned rank, char **out) { *out = (char *)kbd_hw_cluster_map(p, rank, OS); }
OK order_mbar_arrive_cluster(unsigned rank, unsigned count) {
  SBAR;
  kbd_hw_mbar_arrive_cluster(&bar_word, rank, count, OS);
}
OK order_mbar_arrive_cluster_reads(unsigned rank, unsigned count) {
  SBAR;
  kbd_hw_mbar_arrive_cluster_reads(&bar_word, rank, count, OS);
}
