/* PTX probe for kbd_mma_ts_issue / kbd_tmem_a_store (kbd/mma_ts.h, twin ptx/mma_ts.h) on sm_100a: tcgen05.mma
 * with A from Tensor Memory (tests/ptx/mma_ts.check), in the shape FlashAttention-4 gives it. Warp 1 is the MMA
 * warp: S = Q K^T (bf16, 128 x 64 keys, d = 64) into Tensor Memory; warpgroup 1 reads S (tcgen05.ld), converts
 * it to bf16 P and stores P over the first 32 of S's own columns (tcgen05.st), then signals; the MMA warp issues
 * O += P V with P from Tensor Memory (V a row-major kv x d tile: an MN-major B). Each of the 4 K-steps of P V
 * must be ONE tcgen05.mma [d], [a] whose A address steps by 8 columns; no wgmma, no spill, no local memory. */
#include <kbd/tile.h>

typedef struct {
  float *out;
  int n;
} ptx_ts_params;

typedef KBD_STILE(bf16, 128, 64, KBD_SWIZZLE_128B) ts_q;
typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) ts_k;
typedef KBD_STILE_MN(bf16, 64, 64, KBD_SWIZZLE_128B) ts_v;

KBD_KERNEL(ptx_ts_bf16, 256, ptx_ts_params) {
  KBD_SHARED_STILE(ts_q, q);
  KBD_SHARED_STILE(ts_k, k);
  KBD_SHARED_STILE(ts_v, v);
  KBD_SHARED(kbd_mbarrier, sfull, 1);
  KBD_SHARED(kbd_mbarrier, pready, 1);
  KBD_SHARED(kbd_mbarrier, ofull, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(sfull, 1);
      kbd_mbarrier_init(pready, KBD_ACC_RELEASES(128));
      kbd_mbarrier_init(ofull, 1);
    }
    kbd_tmem_alloc(tm, 128);
  }
  kbd_sync();
  KBD_ACC(f32, 128, 64) s;
  KBD_ACC(f32, 128, 64) o;
  KBD_TMEM_A(bf16, 128, 64) pt; /* P over the first 32 columns of S */
  kbd_acc_bind(s, tm, 0, sfull);
  kbd_acc_bind(o, tm, 64, ofull);
  kbd_tmem_a_bind(pt, tm, 0);
  if (kbd_warp_id() == 1) {
    for (int it = 0; it < p.n; ++it) {
      kbd_mma_issue(s, q, k, 0);
      kbd_mma_commit(s, sfull);
      kbd_acc_wait(s, pready, (unsigned)it & 1u);
      kbd_mma_ts_issue(o, pt, v, it > 0);
    }
    kbd_mma_commit(o, ofull);
  } else if (kbd_warpgroup_id() == 1) {
    for (int it = 0; it < p.n; ++it) {
      kbd_acc_wait(s, sfull, (unsigned)it & 1u);
      KBD_ACC_TILE(f32, 128, 64) sv;
      kbd_acc_load(sv, s, 0);
      KBD_ACC_TILE(bf16, 128, 64) pv;
      kbd_convert(pv, sv);
      kbd_tmem_a_store(pt, pv, 0);
      kbd_tmem_a_ready(pt, pready);
    }
    kbd_acc_wait(o, ofull, 0);
    KBD_ACC_TILE(f32, 128, 64) ov;
    kbd_acc_load(ov, o, 0);
    kbd_store2d(p.out, ov, 128, 64, 64, 0, 0);
  }
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 128);
}
