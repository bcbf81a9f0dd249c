/* tests/tma/tma_reject.c - compile-time rules of kbd/tma.h and of the tile storage kinds (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the tma_reject_* tests (tests/tma/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake, as C11 and C++17 with -DKBD_CPU and as CUDA by nvcc. Case n breaks one
 * rule and must stop the compiler with that rule's message; case 0 (the positive control) uses every TMA
 * call and must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) rj_tile;
typedef struct {
  kbd_tensor_map m;
  float *out;
  int n;
} rj_params;

KBD_KERNEL(rj_k, 128, rj_params) {
  KBD_SHARED_STILE(rj_tile, s);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  KBD_TILE(bf16, 64, 128, KBD_WARPGROUP) r;
#if KBD_REJECT_CASE == 0
  KBD_ELECT_ONE {
    kbd_mbarrier_init(&bar[0], 1);
    kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(s));
    kbd_tma_load(s, &p.m, &bar[0], 0, p.n);
    kbd_tma_prefetch(&p.m, s, 64, p.n);
    kbd_tma_prefetch_map(&p.m);
  }
  kbd_mbarrier_wait(&bar[0], 0);
  kbd_stile_load(r, s);
  kbd_add(r, r, r);
  kbd_stile_store(s, r);
  kbd_fence_proxy_async();
  kbd_sync();
  KBD_ELECT_ONE {
    kbd_tma_store(&p.m, s, 0, p.n);
    kbd_tma_reduce_add(&p.m, s, 0, p.n);
    kbd_bulk_store(p.out, s.p, 256);
    kbd_bulk_commit_group();
    kbd_bulk_wait_group_read(0);
    kbd_bulk_wait_group(0);
  }
#elif KBD_REJECT_CASE == 1
  kbd_add(s, s, s); /* elementwise ops take register tiles */
#elif KBD_REJECT_CASE == 2
  KBD_ELECT_ONE { kbd_tma_load(r, &p.m, &bar[0], 0, 0); } /* the TMA moves shared tiles */
#elif KBD_REJECT_CASE == 3
  KBD_ELECT_ONE { kbd_bulk_wait_group(p.n); } /* PTX takes an immediate */
#elif KBD_REJECT_CASE == 4
  KBD_ELECT_ONE { kbd_bulk_wait_group_read(8); }
#elif KBD_REJECT_CASE == 5
  KBD_ELECT_ONE { kbd_tma_store(&p.m, r, 0, 0); }
#elif KBD_REJECT_CASE == 6
  kbd_zero(s);
#elif KBD_REJECT_CASE == 7
  typedef KBD_STILE(bf16, 64, 100, KBD_SWIZZLE_128B) bad_tile; /* 200-byte rows: not whole 128-byte spans */
  bad_tile b;
  (void)b;
#endif
  (void)r;
}
