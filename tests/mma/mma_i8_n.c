/* tests/mma/mma_i8_n.c - kbd_mma's N rule for 8-bit integer operands is exactly PTX ISA 9.2 Table 39's
 * tcgen05.mma kind::i8 cta_group::1 list, N = {8, 16, 24, 32, 48, ... 256} (steps of 16 after N > 32): issue 31,
 * item 12, and ptx-reference §9 item 13 (CuTe's SM100_MMA_S8 leaves out 24; the PTX table lists it).
 *
 * Compiled (never linked) by the mma_i8_n_* tests on the CPU machine emulating sm_100a: with -DI8N_LISTED every N the
 * table lists is one kbd_mma call and the file must compile cleanly with -Werror; with -DI8N=<n> for an N that is a
 * multiple of 8 in 8..256 but not listed (40, 56, ... 248) the one call must stop the compiler with the rule's
 * message. N outside 8..256 or not a multiple of 8 is KBD_ACC's general rule (mma_api_reject). */
#include <kbd/tile.h>

typedef struct i8n_params {
  int k;
} i8n_params;

typedef KBD_STILE(s8, 128, 64, KBD_SWIZZLE_64B) i8n_a;

/* one kbd_mma of a 128 x 64 s8 A with an N x 64 u8 B into an i32 accumulator of N columns */
#define I8N_CALL(N)                                                                                                    \
  {                                                                                                                    \
    typedef KBD_STILE(u8, N, 64, KBD_SWIZZLE_64B) i8n_b##N;                                                            \
    KBD_SHARED_STILE(i8n_b##N, b);                                                                                     \
    KBD_ACC(i32, 128, N) acc;                                                                                          \
    kbd_acc_bind(acc, tm, 0, bar);                                                                                     \
    kbd_mma(acc, a, b, p.k > 0);                                                                                       \
  }

KBD_KERNEL(i8n_kernel, 128, i8n_params) {
  KBD_SHARED_STILE(i8n_a, a);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) kbd_tmem_alloc(tm, 256);
  kbd_sync();
#if defined(I8N_LISTED)
  I8N_CALL(8)
  I8N_CALL(16)
  I8N_CALL(24)
  I8N_CALL(32)
  I8N_CALL(48)
  I8N_CALL(64)
  I8N_CALL(80)
  I8N_CALL(96)
  I8N_CALL(112)
  I8N_CALL(128)
  I8N_CALL(144)
  I8N_CALL(160)
  I8N_CALL(176)
  I8N_CALL(192)
  I8N_CALL(208)
  I8N_CALL(224)
  I8N_CALL(240)
  I8N_CALL(256)
#elif defined(I8N)
  I8N_CALL(I8N)
#else
#error "define I8N_LISTED or I8N=<n>"
#endif
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 256);
}
