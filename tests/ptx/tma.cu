/* PTX probe: kbd/tma.h's calls are their cp.async.bulk(.tensor) instructions on sm_90a and sm_100a
 * (tests/ptx/tma.check): a 2-box load of a 128B-swizzled bf16 tile (two instructions, x advanced by 64),
 * a 3D load, store, add/min/max reductions, a bulk store, commit and both waits, the prefetches; the map
 * operand is the generic address of the __grid_constant__ parameter (cvta.param). */
#include <kbd/tile.h>
#include <kbd/tma.h>

typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) ptx_tma_tile;
typedef KBD_STILE(f32, 8, 32, KBD_SWIZZLE_NONE) ptx_tma_tile3;

typedef struct {
  kbd_tensor_map a;
  kbd_tensor_map c;
  kbd_tensor_map v;
  float *out;
  int x, y, z;
} ptx_tma_params;

KBD_KERNEL(ptx_tma, 128, ptx_tma_params) {
  KBD_SHARED_STILE(ptx_tma_tile, t);
  KBD_SHARED_STILE(ptx_tma_tile3, t3);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_tma_prefetch_map(&p.a);
      kbd_mbarrier_init(&bar[0], 1);
      kbd_fence_mbarrier_init();
    }
  }
  kbd_sync();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(t) + KBD_STILE_BYTES(t3));
      kbd_tma_load2d(t, &p.a, &bar[0], p.y, p.x);
      kbd_tma_load3d(t3, &p.v, &bar[0], p.z, p.y, p.x);
      kbd_tma_prefetch2d(&p.a, t, p.y, p.x + 128);
    }
  }
  kbd_mbarrier_wait(&bar[0], 0);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_tma_store2d(&p.c, t, p.y, p.x);
      kbd_tma_reduce_add2d(&p.c, t, p.y, p.x);
      kbd_tma_reduce_min2d(&p.c, t, p.y, p.x);
      kbd_tma_reduce_max2d(&p.c, t, p.y, p.x);
      kbd_bulk_store(p.out, t3.p, 1024);
      kbd_bulk_commit_group();
      kbd_bulk_wait_group_read(1);
      kbd_bulk_wait_group(0);
    }
  }
}
