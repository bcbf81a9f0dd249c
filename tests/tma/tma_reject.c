/* tests/tma/tma_reject.c - compile-time rules of kbd/tma.h and of the tile storage kinds (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the tma_reject_* tests (tests/tma/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake, as C11 and C++17 with -DKBD_CPU and as CUDA by nvcc. Case n breaks one
 * rule and must stop the compiler with that rule's message; case 0 (the positive control) uses every TMA
 * call and must compile cleanly with -Werror.
 *
 * Cases 8.. are the spellings before the one coordinate convention (issue 31 item 8; docs/api.md
 * "Conventions"): each old name must stop the compiler with a message naming the new call. They keep the old
 * spelling on purpose (the marker below keeps coords_rewrite.py off those lines).
 */
#include <kbd/tile.h>

typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) rj_tile;
typedef struct {
  kbd_tensor_map m;
  float *out;
  unsigned *ticket;
  int n;
} rj_params;

/* host: the box of the map a tile type is loaded with */
KBD_UNUSED static inline kbd_tensor_map_desc rj_desc(void *ptr) {
#if KBD_REJECT_CASE == 12
  const uint32_t cols = kbd_tma_box_inner_for(rj_tile); /* kbd-coords: keep */
  return kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, ptr, 256, 256, 512, 64, cols, KBD_TMAP_SWIZZLE_128B);
#elif KBD_REJECT_CASE == 13
  const uint32_t rows = kbd_tma_box_lines_for(rj_tile); /* kbd-coords: keep */
  return kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, ptr, 256, 256, 512, rows, 64, KBD_TMAP_SWIZZLE_128B);
#else
  return kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, ptr, 256, 256, 512, kbd_tma_box_rows_for(rj_tile),
                                kbd_tma_box_cols_for(rj_tile), KBD_TMAP_SWIZZLE_128B);
#endif
}

KBD_KERNEL(rj_k, 128, rj_params) {
  KBD_SHARED_STILE(rj_tile, s);
  KBD_SHARED_ALIGNED(kbd_mbarrier, bar, 1, 8);
  KBD_TILE(bf16, 64, 128, KBD_WARPGROUP) r;
#if KBD_REJECT_CASE == 0
  kbd_pipe ps = kbd_pipe_start(1);
  KBD_ELECT_ONE_VALUE(unsigned, ticket, kbd_atomic_add_u32(p.ticket, 1u));
  KBD_ELECT_ONE {
    kbd_mbarrier_init(&bar[0], 1);
    kbd_mbarrier_arrive_expect_tx(&bar[0], KBD_STILE_BYTES(s));
    kbd_tma_load2d(s, &p.m, &bar[0], p.n, 0);
    kbd_tma_prefetch2d(&p.m, s, p.n, 64);
    kbd_tma_prefetch_map(&p.m);
  }
  kbd_mbarrier_wait(&bar[0], ps.parity);
  kbd_pipe_advance(&ps);
  if (ticket == 0u) kbd_mbarrier_wait(&bar[0], ps.parity ^ 1u);
  kbd_stile_load(r, s);
  kbd_add(r, r, r);
  kbd_stile_store(s, r);
  kbd_fence_proxy_async();
  kbd_sync();
  KBD_ELECT_ONE {
    kbd_tma_store2d(&p.m, s, p.n, 0);
    kbd_tma_reduce_add2d(&p.m, s, p.n, 0);
    kbd_tma_reduce_min2d(&p.m, s, p.n, 0);
    kbd_tma_reduce_max2d(&p.m, s, p.n, 0);
    kbd_bulk_store(p.out, s.p, 256);
    kbd_bulk_commit_group();
    kbd_bulk_wait_group_read(0);
    kbd_bulk_wait_group(0);
  }
#elif KBD_REJECT_CASE == 1
  kbd_add(s, s, s); /* elementwise ops take register tiles */
#elif KBD_REJECT_CASE == 2
  KBD_ELECT_ONE { kbd_tma_load2d(r, &p.m, &bar[0], 0, 0); } /* the TMA moves shared tiles */
#elif KBD_REJECT_CASE == 3
  KBD_ELECT_ONE { kbd_bulk_wait_group(p.n); } /* PTX takes an immediate */
#elif KBD_REJECT_CASE == 4
  KBD_ELECT_ONE { kbd_bulk_wait_group_read(8); }
#elif KBD_REJECT_CASE == 5
  KBD_ELECT_ONE { kbd_tma_store2d(&p.m, r, 0, 0); }
#elif KBD_REJECT_CASE == 6
  kbd_zero(s);
#elif KBD_REJECT_CASE == 7
  typedef KBD_STILE(bf16, 64, 100, KBD_SWIZZLE_128B) bad_tile; /* 200-byte rows: not whole 128-byte spans */
  bad_tile b;
  (void)b;
#elif KBD_REJECT_CASE == 8
  KBD_ELECT_ONE { kbd_tma_load(s, &p.m, &bar[0], 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 9
  KBD_ELECT_ONE { kbd_tma_store(&p.m, s, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 10
  KBD_ELECT_ONE { kbd_tma_reduce_add(&p.m, s, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 11
  KBD_ELECT_ONE { kbd_tma_prefetch(&p.m, s, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 14
  KBD_ONE_LANE(unsigned, ticket, kbd_atomic_add_u32(p.ticket, 1u)); /* kbd-coords: keep */
  if (ticket == 0u) kbd_sync();
#elif KBD_REJECT_CASE == 15
  kbd_pipe ps = kbd_pipe_start(2);
  kbd_mbarrier_wait(&bar[0], ps.phase); /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 16
  KBD_ELECT_ONE { kbd_tma_load_multicast(s, &p.m, &bar[0], 3u, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 17
  KBD_ELECT_ONE { kbd_tma_reduce_min(&p.m, s, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 18
  KBD_ELECT_ONE { kbd_tma_reduce_max(&p.m, s, 0, p.n); } /* kbd-coords: keep */
#elif KBD_REJECT_CASE == 19
  KBD_ELECT_ONE { kbd_tma_load2d(s, &p.m, &bar[0], 0, p.n, 0); } /* a 3-D list under the 2-D name */
#endif
  (void)r;
}
