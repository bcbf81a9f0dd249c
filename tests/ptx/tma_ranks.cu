/* PTX probe: kbd_tma_load with 1, 4 and 5 coordinates is cp.async.bulk.tensor.1d / .4d / .5d with that many
 * coordinate operands, on sm_90a and sm_100a (tests/ptx/tma_ranks.check); tests/ptx/tma.cu has the 2-D and
 * 3-D forms. The tiles are those of tests/tma/test_tma_ranks.c: a 1-line unswizzled f32 row (1-D box), a
 * 16 x 64 bf16 128B tile (4-D box) and a 16 x 32 f32 64B tile of two boxes (5-D, two copies). */
#include <kbd/tile.h>
#include <kbd/tma.h>

typedef KBD_STILE(f32, 1, 64, KBD_SWIZZLE_NONE) ptx_rk_row;
typedef KBD_STILE(bf16, 16, 64, KBD_SWIZZLE_128B) ptx_rk_t4;
typedef KBD_STILE(f32, 16, 32, KBD_SWIZZLE_64B) ptx_rk_t5;

typedef struct {
  kbd_tensor_map m1;
  kbd_tensor_map m4;
  kbd_tensor_map m5;
  float *out;
  int c[5];
} ptx_rk_params;

KBD_KERNEL(ptx_tma_ranks, 128, ptx_rk_params) {
  KBD_SHARED_STILE(ptx_rk_row, r);
  KBD_SHARED_STILE(ptx_rk_t4, t4);
  KBD_SHARED_STILE(ptx_rk_t5, t5);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&bar[0], 1);
      kbd_fence_mbarrier_init();
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(r) + KBD_STILE_BYTES(t4) + KBD_STILE_BYTES(t5));
      kbd_tma_load1d(r, &p.m1, &bar[0], p.c[0]);
      kbd_tma_load4d(t4, &p.m4, &bar[0], p.c[3], p.c[2], p.c[1], p.c[0]);
      kbd_tma_load5d(t5, &p.m5, &bar[0], p.c[4], p.c[3], p.c[2], p.c[1], p.c[0]);
    }
  }
  kbd_mbarrier_wait(&bar[0], 0);
  /* the loaded data is used, so nothing can be dropped */
  const int w = kbd_warp_id();
  p.out[w] = kbd_ld_shared(r.p + w) + kbd_bf16_to_f32(kbd_ld_shared(t4.p + w)) + kbd_ld_shared(t5.p + w);
}
