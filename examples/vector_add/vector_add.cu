/* vector_add.cu - c = a + b, one 1 x 1024 f32 tile per block.
 *
 * Copy this as the template for an elementwise kernel. The same file is built by nvcc for sm_90a and
 * sm_100a and, with -DKBD_CPU, as C for the CPU machine (see CMakeLists.txt: kbd_add_program).
 */
#include "vector_add.h"

KBD_KERNEL(vector_add, VECTOR_ADD_THREADS, vector_add_params) {
  /* Owned by the whole block (KBD_CTA): thread t holds elements 4t..4t+3, so the block's 256 threads
   * read 4 KiB as 32 fully used 128-byte lines per operand. */
  KBD_TILE(f32, 1, VECTOR_ADD_TILE, KBD_CTA) a, b, c;
  const long long start = (long long)kbd_block_x() * VECTOR_ADD_TILE;

  /* Masked: the last block's tile may hang over n; those elements load as 0 and are not stored. */
  kbd_load(a, p.a, p.n, start);
  kbd_load(b, p.b, p.n, start);
  kbd_add(c, a, b);
  kbd_store(p.c, c, p.n, start);
}
