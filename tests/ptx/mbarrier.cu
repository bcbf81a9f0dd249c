/* PTX probe: every kbd_mbarrier call is its one PTX instruction with the spelled-out semantics and scope
 * (tests/ptx/mbarrier.check), on sm_90a and sm_100a: an elected thread initialises and expects bytes,
 * warp-uniform arrivals, a bulk copy (TMA) completing on a barrier, a wait loop on try_wait.parity. */
#include <kbd/tile.h>

typedef struct {
  float *out;
  const float *src;
  unsigned tx;
} ptx_mbar_params;

KBD_KERNEL(ptx_mbar, 128, ptx_mbar_params) {
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 2, 8);
  KBD_SHARED(float, buf, 64);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&bar[0], 4);
      kbd_mbarrier_init(&bar[1], 128);
      kbd_fence_mbarrier_init();
    }
  }
  kbd_sync();
  KBD_ELECT_ONE {
    kbd_mbarrier_arrive_expect_tx(&bar[0], p.tx);
    kbd_bulk_load(buf, p.src, 256, &bar[0]);
  }
  KBD_ELECT_ONE {
    kbd_mbarrier_expect_tx(&bar[0], 16);
    kbd_mbarrier_complete_tx(&bar[0], p.tx + 16);
  }
  kbd_mbarrier_arrive(&bar[1]);
  kbd_mbarrier_wait(&bar[0], 0);
  kbd_mbarrier_wait(&bar[1], 0);
  const int done = kbd_mbarrier_try_wait(&bar[1], 0);
  kbd_sync();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_inval(&bar[0]);
      kbd_mbarrier_inval(&bar[1]);
    }
  }
  KBD_FOR_LANES(l) { p.out[kbd_thread_idx(l)] = (float)done + buf[l]; }
}
