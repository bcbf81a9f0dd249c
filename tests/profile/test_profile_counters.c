/* tests/profile/test_profile_counters.c - the per-launch counters and the global-memory sites of a kernel whose
 * traffic and MMA work are known, built for sm_90a (wgmma) and sm_100a (tcgen05.mma): one warpgroup loads
 * A and B (64 x 64 bf16 each) with kbd_load2d, stores them to 128B-swizzled shared tiles, runs
 * kbd_mma(acc, a, b) twice (the second accumulates) and stores the 64 x 64 f32 accumulator with kbd_store2d.
 *
 * Derived by hand:
 *   MMA FLOPs, bf16: 2 calls x 2 M N K = 2 x 2 x 64 x 64 x 64 = 1048576 (whatever the instruction count: each
 *     instruction adds 2 M N K_instr, and the K_instr add up to K).
 *   Global bytes by the tile moves: read 2 x 8192 (A, B), written 64 x 64 x 4 = 16384; no TMA.
 *   A/B loads: ROW tiles of a warpgroup, 4 bf16 per lane (8 aligned bytes: ld.global.v2): a warp instruction
 *     is 32 x 8 = 256 contiguous bytes = 8 sectors in 2 lines = its ideal; 8192 / 256 = 32 instructions, 256
 *     sectors and 64 lines per operand, ratio 1.
 *   The accumulator store is twice its ideal: KBD_ACC_TILE(f32, 64, 64) is the WGMMA_ACC layout on both archs
 *     (kbd/mma.h, KBD_ACC_LAYOUT: M = 64), one 4-byte element per lane per instruction (64 x 64 / 128 threads =
 *     32 elements, 4 warps: 128 instructions); lane 4g + q writes row g (of 8), column 2q (+1) (+ 8j): the 4
 *     lanes of a row cover bytes 8q (+4) of one 32-byte sector: 8 sectors in 8 lines for 128 bytes asked, ideal
 *     4. So 1024 sectors for an ideal of 512, the worst site of the launch: listed first.
 *   kbd_ld_global of one float in warp-uniform code: per warp one instruction, 32 lanes on one word: 1 sector, 1
 *     line, ideal 1, 4 bytes asked; kbd_st_global in warp 0's KBD_ELECT_ONE: one 1-lane instruction, 4 bytes.
 *     So global bytes: read 16384 + 4 x 4, written 16384 + 4.
 *   Barrier waits: kbd_sync twice x 4 warps = 8. sm_100a adds, per kbd_mma, the warpgroup's named barrier before
 *     the leader issues (kbd__umma_issue: 2 x 4) and the accumulator's mbarrier wait in kbd_mma_wait (4): 20.
 */
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct pc_params {
  const kbd_bf16 *a, *b;
  float *d;
  const float *scale; /* one float, read by every warp with kbd_ld_global */
  unsigned *flag;     /* written once by warp 0's elected lane with kbd_st_global */
} pc_params;

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) pc_tile;
static int pc_line_load, pc_line_store, pc_line_ld, pc_line_st;
#define PC_MARK(v) v = __LINE__

KBD_KERNEL(pc_mma, 128, pc_params) {
  KBD_SHARED_STILE(pc_tile, a);
  KBD_SHARED_STILE(pc_tile, b);
  KBD_SHARED(kbd_mbarrier, bar, 1);
  KBD_SHARED(kbd_tmem, tm, 1);
  KBD_TILE(bf16, 64, 64, KBD_WARPGROUP) ra;
  KBD_TILE(bf16, 64, 64, KBD_WARPGROUP) rb;
  PC_MARK(pc_line_load); kbd_load2d(ra, p.a, 64, 64, 64, 0, 0);
  kbd_load2d(rb, p.b, 64, 64, 64, 0, 0);
  PC_MARK(pc_line_ld); const float scale = kbd_ld_global(p.scale);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { PC_MARK(pc_line_st); kbd_st_global(p.flag, scale == 1.0f ? 1u : 2u); }
  }
  kbd_stile_store(a, ra);
  kbd_stile_store(b, rb);
  kbd_fence_proxy_async();
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE { kbd_mbarrier_init(bar, 1); }
    kbd_tmem_alloc(tm, 256);
  }
  kbd_sync();
  KBD_ACC(f32, 64, 64) acc;
  kbd_acc_bind(acc, tm, 0, bar);
  kbd_mma(acc, a, b, 0);
  kbd_mma(acc, a, b, 1);
  kbd_mma_wait(acc);
  KBD_ACC_TILE(f32, 64, 64) r;
  kbd_acc_load(r, acc, 0);
  PC_MARK(pc_line_store); kbd_store2d(p.d, r, 64, 64, 64, 0, 0);
  kbd_sync();
  if (kbd_warp_id() == 0) kbd_tmem_free(tm, 256);
}

static const kbd_profile *pc_run(void) {
  static kbd_bf16 ha[64 * 64], hb[64 * 64];
  static float hd[64 * 64];
  const float one = 1.0f;
  unsigned flag = 0;
  for (int i = 0; i < 64 * 64; ++i) {
    ha[i] = kbd_f32_to_bf16((float)(i % 7) - 3.0f);
    hb[i] = kbd_f32_to_bf16((float)(i % 5) - 2.0f);
  }
  kbd_bf16 *da, *db;
  float *dd;
  assert_true(kbd_ok(kbd_malloc((void **)&da, sizeof ha)));
  assert_true(kbd_ok(kbd_malloc((void **)&db, sizeof hb)));
  assert_true(kbd_ok(kbd_malloc((void **)&dd, sizeof hd)));
  float *dscale;
  unsigned *dflag;
  assert_true(kbd_ok(kbd_malloc((void **)&dscale, sizeof one)));
  assert_true(kbd_ok(kbd_malloc((void **)&dflag, sizeof flag)));
  assert_true(kbd_ok(kbd_copy_to_device(dscale, &one, sizeof one)));
  assert_true(kbd_ok(kbd_copy_to_device(da, ha, sizeof ha)));
  assert_true(kbd_ok(kbd_copy_to_device(db, hb, sizeof hb)));
  pc_params p = {da, db, dd, dscale, dflag};
  const kbd_status st = pc_mma(kbd_cfg_1d(1), p);
  if (!kbd_ok(st)) fail_msg("pc_mma: %s", st.msg);
  assert_true(kbd_ok(kbd_copy_to_host(hd, dd, sizeof hd)));
  assert_true(kbd_ok(kbd_copy_to_host(&flag, dflag, sizeof flag)));
  assert_int_equal(flag, 1);
  /* the MMA ran: d = 2 a b^T, checked on a few elements */
  for (int i = 0; i < 64; i += 21)
    for (int j = 0; j < 64; j += 13) {
      double ref = 0;
      for (int k = 0; k < 64; ++k)
        ref += (double)kbd_bf16_to_f32(ha[i * 64 + k]) * (double)kbd_bf16_to_f32(hb[j * 64 + k]);
      assert_float_equal(hd[i * 64 + j], 2 * ref, 0);
    }
  kbd_free(da);
  kbd_free(db);
  kbd_free(dd);
  kbd_free(dscale);
  kbd_free(dflag);
  return kbd_profile_last();
}

static void pc_counters(void **state) {
  (void)state;
  setenv("KBD_CPU_THREADS", "1", 1);
  kbd_profile_enable(1);
  const kbd_profile *p = pc_run();
  assert_non_null(p);
  kbd_profile_print(p, stdout);
  assert_string_equal(p->kernel, "pc_mma");
  assert_string_equal(p->arch, KBD_CPU_ARCH == 90 ? "sm_90a" : "sm_100a");
  assert_int_equal(p->mma_flops[KBD_PROFILE_BF16], 1048576);
  for (int t = 0; t < KBD_PROFILE_NTYPES; ++t)
    if (t != KBD_PROFILE_BF16) assert_int_equal(p->mma_flops[t], 0);
  assert_int_equal(p->global_read_bytes, 16384 + 16);
  assert_int_equal(p->global_write_bytes, 16384 + 4);
  /* distinct sectors: A and B once each, the 4-byte scale and flag one (whole) sector each; D once */
  assert_int_equal(p->global_unique_read_bytes, 16384 + 32);
  assert_int_equal(p->global_unique_write_bytes, 16384 + 32);
  assert_int_equal(p->tma_load_bytes, 0);
  assert_int_equal(p->tma_store_bytes, 0);
  assert_int_equal(p->barrier_waits, KBD_CPU_ARCH == 90 ? 8 : 20);
  /* global sites: the two loads at their ideal, the store at twice it, first */
  const kbd_profile_site *la = kbd_profile_site_find(p, "test_profile_counters.c", pc_line_load);
  const kbd_profile_site *lb = kbd_profile_site_find(p, "test_profile_counters.c", pc_line_load + 1);
  const kbd_profile_site *sd = kbd_profile_site_find(p, "test_profile_counters.c", pc_line_store);
  assert_non_null(la), assert_non_null(lb), assert_non_null(sd);
  for (int i = 0; i < 2; ++i) {
    const kbd_profile_site *s = i ? lb : la;
    assert_int_equal(s->space, KBD_PROFILE_GLOBAL);
    assert_int_equal(s->op, KBD_PROFILE_LD);
    assert_string_equal(s->what, "kbd_load");
    assert_int_equal(s->bytes_per_lane, 8);
    assert_int_equal(s->instructions, 32); /* 8192 bytes / 256 per instruction */
    assert_int_equal(s->sectors, 256);
    assert_int_equal(s->ideal, 256);
    assert_int_equal(s->lines, 64);
  }
  assert_int_equal(sd->space, KBD_PROFILE_GLOBAL);
  assert_int_equal(sd->op, KBD_PROFILE_ST);
  assert_string_equal(sd->what, "kbd_store");
  assert_int_equal(sd->bytes_per_lane, 4);
  assert_int_equal(sd->instructions, 128);
  assert_int_equal(sd->ideal, 512);
  assert_int_equal(sd->sectors, 1024);
  assert_int_equal(sd->lines, 1024);
  assert_ptr_equal(&p->sites[0], sd);
  const kbd_profile_site *ld = kbd_profile_site_find(p, "test_profile_counters.c", pc_line_ld);
  const kbd_profile_site *st = kbd_profile_site_find(p, "test_profile_counters.c", pc_line_st);
  assert_non_null(ld), assert_non_null(st);
  assert_string_equal(ld->what, "kbd_ld_global");
  assert_int_equal(ld->instructions, 4);
  assert_int_equal(ld->sectors, 4);
  assert_int_equal(ld->lines, 4);
  assert_int_equal(ld->ideal, 4);
  assert_string_equal(st->what, "kbd_st_global");
  assert_int_equal(st->op, KBD_PROFILE_ST);
  assert_int_equal(st->instructions, 1);
  assert_int_equal(st->sectors, 1);
  assert_int_equal(p->global_sectors, 256 + 256 + 1024 + 4 + 1);
  assert_int_equal(p->global_ideal_sectors, 256 + 256 + 512 + 4 + 1);
  /* the operand stores into shared memory: 16384 bytes written by threads */
  assert_int_equal(p->shared_write_bytes, 16384);
  kbd_profile_enable(-1);
}

/* Compulsory traffic (global_unique_*_bytes): distinct 32-byte sectors, each counted once per launch.
 * pc_reread: 8 blocks each load the same 32 x 64 f32 tile of x (8192 bytes) and store it into their own slice of
 * y. Asked: read 8 x 8192 = 65536, written 65536. Distinct: x's 8192 bytes once (256 sectors); y's 8 slices are
 * distinct (65536). Two host threads run the blocks, so two workers set bits of the same words of x's bitmap:
 * the count must still be 8192, not up to 2 x 8192. */
typedef struct pc_rr_params {
  const float *x;
  float *y;
} pc_rr_params;
KBD_KERNEL(pc_reread, 128, pc_rr_params) {
  KBD_TILE(f32, 32, 64, KBD_WARPGROUP) t;
  kbd_load2d(t, p.x, 32, 64, 64, 0, 0);
  kbd_store2d(p.y + (long long)kbd_block_x() * 32 * 64, t, 32, 64, 64, 0, 0);
}

static void pc_compulsory(void **state) {
  (void)state;
  static float hx[32 * 64];
  for (int i = 0; i < 32 * 64; ++i)
    hx[i] = (float)i;
  float *dx, *dy;
  assert_true(kbd_ok(kbd_malloc((void **)&dx, sizeof hx)));
  assert_true(kbd_ok(kbd_malloc((void **)&dy, 8 * sizeof hx)));
  assert_true(kbd_ok(kbd_copy_to_device(dx, hx, sizeof hx)));
  setenv("KBD_CPU_THREADS", "2", 1);
  kbd_profile_enable(1);
  for (int run = 0; run < 2; ++run) { /* a second launch starts from cleared bitmaps: the same counts */
    pc_rr_params p = {dx, dy};
    const kbd_status st = pc_reread(kbd_cfg_1d(8), p);
    if (!kbd_ok(st)) fail_msg("pc_reread: %s", st.msg);
    const kbd_profile *pr = kbd_profile_last();
    assert_non_null(pr);
    assert_int_equal(pr->global_read_bytes, 8 * 8192);
    assert_int_equal(pr->global_write_bytes, 8 * 8192);
    assert_int_equal(pr->global_unique_read_bytes, 8192);
    assert_int_equal(pr->global_unique_write_bytes, 8 * 8192);
  }
  kbd_profile_enable(-1);
  setenv("KBD_CPU_THREADS", "1", 1);
  kbd_free(dx);
  kbd_free(dy);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(pc_counters), cmocka_unit_test(pc_compulsory)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
