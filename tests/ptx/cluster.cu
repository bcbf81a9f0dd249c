/* PTX probe: kbd/cluster.h's calls are their instructions on sm_90a and sm_100a (tests/ptx/cluster.check): the
 * cluster special registers, the cluster barrier (release/relaxed arrive, acquire wait), mapa of a generic
 * address and DSMEM through it, a remote mbarrier arrive (releasing, and handing back reads), and a multicast TMA
 * load of a two-box tile. */
#include <kbd/tile.h>

typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) ptx_cl_tile;

typedef struct {
  kbd_tensor_map a;
  unsigned *out;
  int x, y;
} ptx_cl_params;

KBD_KERNEL(ptx_cluster, 128, ptx_cl_params) {
  KBD_SHARED_STILE(ptx_cl_tile, t);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  KBD_SHARED(unsigned, slot, 4);
  const unsigned rank = kbd_cluster_ctarank(), n = kbd_cluster_size();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&bar[0], n + 1); /* this CTA's arrive.expect_tx and the peer's two remote arrives */
      kbd_fence_mbarrier_init();
      kbd_st_shared(&slot[0], rank);
    }
  }
  kbd_cluster_sync();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(t));
      if (rank == 0) kbd_tma_load_multicast2d(t, &p.a, &bar[0], (1u << n) - 1u, p.y, p.x);
      unsigned *peer = kbd_cluster_map(slot, (rank + 1) % n);
      kbd_st_shared(&peer[1], rank);
      kbd_mbarrier_arrive_cluster(&bar[0], (rank + 1) % n);
      kbd_mbarrier_arrive_cluster_reads(&bar[0], (rank + 1) % n);
    }
  }
  kbd_mbarrier_wait(&bar[0], 0);
  kbd_cluster_arrive_relaxed();
  kbd_cluster_wait();
  if (kbd_warp_id() == 0) {
    KBD_FOR_LANES(lane) {
      if (lane == 0)
        p.out[kbd_cluster_id_x() + kbd_cluster_id_y() + kbd_cluster_id_z()] =
            kbd_ld_shared(&slot[1]) + kbd_cluster_dim_x() * kbd_cluster_dim_y() * kbd_cluster_dim_z() +
            (unsigned)kbd_ld_shared((const unsigned short *)kbd_stile_ptr(t, 3, 5));
    }
  }
  kbd_cluster_sync();
}
