/* test_plan.c - the dynamic shared-memory planner (kbd/smem_plan.h): offsets and alignment of each kind of
 * piece, strides of tile rings, totals, the exact 227 KiB boundary, the messages naming the piece, bad
 * alignments, saturation instead of wrap-around; and a CPU-machine kernel that lays out a 4-stage ring of
 * 128B-swizzled bf16 tiles with full/empty mbarriers through ONE layout function shared with the host,
 * runs a producer/consumer pipeline through the tiles, and fails (naming both sizes) when the launch gives
 * less dynamic shared memory than the plan. Expected offsets are worked out by hand in the comments. */
#include <kbd/tile.h>
#include <kbd/smem_plan.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../machine/machine_test.h"

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) t128;     /* 8192 bytes, 1024-aligned */
typedef KBD_STILE(bf16, 64, 128, KBD_SWIZZLE_128B) t128w;   /* 16384 bytes, 1024-aligned */
typedef KBD_STILE(f32, 8, 16, KBD_SWIZZLE_64B) t64;         /* 512 bytes, 512-aligned */
typedef KBD_STILE(bf16, 8, 16, KBD_SWIZZLE_32B) t32;        /* 256 bytes, 256-aligned */
typedef KBD_STILE_MN(f32, 32, 8, KBD_SWIZZLE_128B_ATOM32) ta32; /* 1024 bytes, 512-aligned */
typedef KBD_STILE(f32, 3, 4, KBD_SWIZZLE_NONE) tnone;       /* 48 bytes, 128-aligned: stride 128 */

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* ---- host: offsets, alignment, strides, totals --------------------------------------------------------- */

static void test_each_kind(void **state) {
  (void)state;
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  assert_int_equal(p.bytes, 0);
  assert_int_equal(p.pieces, 0);
  /* 5 floats at 0: bytes [0, 20) */
  const size_t s = kbd_smem_plan_array(&p, "scratch", float, 5);
  assert_int_equal(s, 0);
  assert_int_equal(p.bytes, 20);
  /* 4 tiles of 8 KiB at the next multiple of 1024 */
  const size_t a = kbd_smem_plan_stile(&p, "A ring", t128, 4);
  assert_int_equal(a, 1024);
  assert_int_equal(p.bytes, 1024 + 4 * 8192);
  /* mbarriers: 8-aligned, 8 bytes each, right after the ring (33792 is a multiple of 8) */
  const size_t full = kbd_smem_plan_mbarriers(&p, "full", 4);
  assert_int_equal(full, 33792);
  const size_t empty = kbd_smem_plan_mbarriers(&p, "empty", 3);
  assert_int_equal(empty, 33792 + 32);
  assert_int_equal(p.bytes, 33792 + 32 + 24); /* 33848: a multiple of 8, not of 16 */
  /* an array is 16-aligned even for 1-byte elements: 33848 -> 33856 */
  const size_t c = kbd_smem_plan_array(&p, "flags", char, 3);
  assert_int_equal(c, 33856);
  assert_int_equal(c % 16, 0);
  /* the other swizzle modes at their repeat (and NONE at 128) */
  const size_t o64 = kbd_smem_plan_stile(&p, "t64", t64, 1);
  assert_int_equal(o64, round_up(33856 + 3, 512));
  const size_t o32 = kbd_smem_plan_stile(&p, "t32", t32, 1);
  assert_int_equal(o32, o64 + 512); /* already 256-aligned */
  const size_t oa = kbd_smem_plan_stile(&p, "atom32", ta32, 1);
  assert_int_equal(oa, round_up(o32 + 256, 512));
  const size_t on = kbd_smem_plan_stile(&p, "none", tnone, 1);
  assert_int_equal(on, oa + 1024);
  assert_int_equal(on % 128, 0);
  /* a generic piece at 64 */
  const size_t g = kbd_smem_plan_add(&p, "generic", 10, 2, 64);
  assert_int_equal(g, round_up(on + 128, 64)); /* the NONE tile takes one whole stride: 48 -> 128 bytes */
  assert_int_equal(p.bytes, g + 2 * 64); /* two strides of round_up(10, 64) = 64 */
  assert_int_equal(p.pieces, 10);
  assert_int_equal(p.err, KBD_SMEM_PLAN_OK);
  MT_ASSERT_OK(kbd_smem_plan_status(&p));
}

/* Every item of a piece is aligned: the stride is the item size rounded up to the alignment, and the piece
 * occupies count strides (the padding after the last item included, so the next piece's offset does not
 * depend on whether the last item was padded). */
static void test_strides(void **state) {
  (void)state;
  assert_int_equal(KBD_SMEM_PLAN_STILE_STRIDE(t128), 8192);
  assert_int_equal(KBD_SMEM_PLAN_STILE_STRIDE(t64), 512);
  assert_int_equal(KBD_SMEM_PLAN_STILE_STRIDE(tnone), 128); /* 48 bytes padded to the 128-byte alignment */
  assert_int_equal(KBD_SMEM_PLAN_STRIDE(10, 64), 64);
  assert_int_equal(KBD_SMEM_PLAN_STRIDE(64, 64), 64);
  assert_int_equal(KBD_SMEM_PLAN_STRIDE(65, 64), 128);
  KBD_STATIC_ASSERT(KBD_SMEM_PLAN_STILE_STRIDE(t128w) == 16384, "a constant expression");
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  const size_t n = kbd_smem_plan_stile(&p, "none ring", tnone, 3);
  assert_int_equal(n, 0);
  assert_int_equal(p.bytes, 3 * 128);
  for (int i = 0; i < 3; ++i) assert_int_equal((n + (size_t)i * KBD_SMEM_PLAN_STILE_STRIDE(tnone)) % 128, 0);
  const size_t after = kbd_smem_plan_mbarriers(&p, "bar", 1);
  assert_int_equal(after, 384);
  /* zero items: placed (aligned), no bytes */
  const size_t z = kbd_smem_plan_stile(&p, "empty ring", t128, 0);
  assert_int_equal(z, 1024);
  assert_int_equal(p.bytes, 1024);
  MT_ASSERT_OK(kbd_smem_plan_status(&p));
}

/* ---- the 227 KiB limit ----------------------------------------------------------------------------------- */

static void test_exact_limit(void **state) {
  (void)state;
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  kbd_smem_plan_array(&p, "all of it", unsigned char, 232448);
  assert_int_equal(p.bytes, 232448);
  assert_int_equal(p.bytes, KBD_MAX_SMEM_BYTES);
  MT_ASSERT_OK(kbd_smem_plan_status(&p));

  kbd_smem_plan_init(&p);
  kbd_smem_plan_array(&p, "one too many", unsigned char, 232449);
  assert_int_equal(p.err, KBD_SMEM_PLAN_OVER_LIMIT);
  MT_ASSERT_CODE(kbd_smem_plan_status(&p), KBD_ERR_INVALID);

  /* 27 tiles of 8 KiB at 1024 end at 1024 + 221184 = 222208; 10240 bytes more end at 232448 exactly */
  kbd_smem_plan_init(&p);
  kbd_smem_plan_mbarriers(&p, "bar", 1);
  kbd_smem_plan_stile(&p, "ring", t128, 27);
  kbd_smem_plan_add(&p, "tail", 10240, 1, 1024);
  assert_int_equal(p.bytes, 232448);
  MT_ASSERT_OK(kbd_smem_plan_status(&p));
  kbd_smem_plan_add(&p, "one byte", 1, 1, 1);
  MT_ASSERT_CODE(kbd_smem_plan_status(&p), KBD_ERR_INVALID);
  MT_ASSERT_HAS(kbd_smem_plan_status(&p), "piece 3 'one byte' (1 x 1 bytes, 1-byte aligned) at offset 232448 ends "
                                          "at byte 232449");
}

static void test_message_names_first_piece(void **state) {
  (void)state;
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  kbd_smem_plan_mbarriers(&p, "full", 4);                 /* [0, 32) */
  kbd_smem_plan_stile(&p, "A ring", t128w, 4);            /* 1024 + 65536 = 66560 */
  kbd_smem_plan_stile(&p, "B ring", t128w, 4);            /* 66560 + 65536 = 132096 */
  kbd_smem_plan_stile(&p, "C ring", t128w, 7);            /* 132096 + 114688 = 246784: over */
  kbd_smem_plan_array(&p, "scratch", float, 100000);      /* over too, but not the first */
  const kbd_status s = kbd_smem_plan_status(&p);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "shared-memory plan: piece 3 'C ring'");
  MT_ASSERT_HAS(s, "(7 x 16384 bytes, 1024-byte aligned)");
  MT_ASSERT_HAS(s, "at offset 132096 ends at byte 246784");
  MT_ASSERT_HAS(s, "over the 232448-byte (227 KiB) per-block limit");
  char want[128];
  MT_ASSERT_HAS(s, mt_fmt(want, sizeof want, "the plan totals %zu bytes in 5 pieces", (size_t)(246784 + 400000)));
  MT_ASSERT_LACKS(s, "scratch");
  assert_int_equal(p.err_piece, 3);
  assert_string_equal(p.err_name, "C ring");
  /* the offset of every piece is still defined after the error */
  assert_int_equal(p.bytes, 246784 + 400000);
}

/* Sizes that would wrap a 64-bit size_t saturate: each plan stays over the limit instead of coming back
 * under it (SIZE_MAX rounded up to 16 wraps to 0; 2^63 x 2 wraps to 0). */
static void test_saturates(void **state) {
  (void)state;
  static const size_t cases[][2] = {{SIZE_MAX, 1}, {(size_t)1 << 63, 2}, {16, ((size_t)1 << 60) + 1}, {16, SIZE_MAX}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    kbd_smem_plan p;
    kbd_smem_plan_init(&p);
    kbd_smem_plan_add(&p, "huge", cases[k][0], cases[k][1], 16);
    assert_int_equal(p.err, KBD_SMEM_PLAN_OVER_LIMIT);
    assert_true(p.bytes > KBD_MAX_SMEM_BYTES);
    kbd_smem_plan_array(&p, "after", float, 4);
    assert_true(p.bytes > KBD_MAX_SMEM_BYTES);
    MT_ASSERT_HAS(kbd_smem_plan_status(&p), "piece 0 'huge'");
  }
  /* zero-byte items take no room, however many */
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  kbd_smem_plan_add(&p, "nothing", 0, SIZE_MAX, 16);
  assert_int_equal(p.bytes, 0);
  MT_ASSERT_OK(kbd_smem_plan_status(&p));
}

/* ---- alignment rules -------------------------------------------------------------------------------------- */

static void test_bad_alignment(void **state) {
  (void)state;
  static const size_t bad[] = {0, 3, 24, 1000, 2048, 4096};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    kbd_smem_plan p;
    kbd_smem_plan_init(&p);
    kbd_smem_plan_array(&p, "x", float, 3);
    const size_t off = kbd_smem_plan_add(&p, "odd piece", 40, 2, bad[k]);
    assert_int_equal(p.err, KBD_SMEM_PLAN_BAD_ALIGN);
    assert_int_equal(off % 1024, 0); /* placed at the largest alignment instead */
    const kbd_status s = kbd_smem_plan_status(&p);
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    char want[160];
    MT_ASSERT_HAS(s, mt_fmt(want, sizeof want, "piece 1 'odd piece' (2 x 40 bytes) asks for %zu-byte alignment", bad[k]));
    MT_ASSERT_HAS(s, "must be a power of two and at most 1024");
  }
  /* every power of two up to 1024 is fine */
  for (size_t a = 1; a <= 1024; a *= 2) {
    kbd_smem_plan p;
    kbd_smem_plan_init(&p);
    kbd_smem_plan_add(&p, "one", 1, 1, 1);
    const size_t off = kbd_smem_plan_add(&p, "aligned", 1, 1, a);
    assert_int_equal(off, a == 1 ? 1 : a);
    MT_ASSERT_OK(kbd_smem_plan_status(&p));
  }
  /* the first error wins: a bad alignment before an overflow is what the status names */
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  kbd_smem_plan_add(&p, "first", 8, 1, 48);
  kbd_smem_plan_array(&p, "second", float, 100000);
  MT_ASSERT_HAS(kbd_smem_plan_status(&p), "piece 0 'first'");
  assert_int_equal(p.err, KBD_SMEM_PLAN_BAD_ALIGN);
}

/* ---- a CPU-machine kernel placing a pipeline through the plan -------------------------------------------- */

enum { RING = 4, ROUNDS = 9, BLOCKS = 2 };

/* The ONE layout function, called by the host (smem_bytes) and by the kernel (where the pieces are). */
typedef struct {
  size_t ring, full, empty, sums;
} pipe_smem;

static int pipe_bad_align; /* the test of a broken layout sets it before the launch */

KBD_HD kbd_smem_plan pipe_layout(pipe_smem *l) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->full = kbd_smem_plan_mbarriers(&p, "full", RING);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", RING);
  l->ring = kbd_smem_plan_stile(&p, "tile ring", t128, RING);
  l->sums = pipe_bad_align ? kbd_smem_plan_add(&p, "sums", sizeof(float), 32, 4096)
                           : kbd_smem_plan_array(&p, "sums", float, 32);
  return p;
}

typedef struct {
  float *out; /* per block: 32 lane sums, then the checks below */
} pipe_params;

enum { CHK_MISMATCH = 32, CHK_ADDR, CHK_N };

static int pipe_line;

static float pipe_value(int round, int r, int c) { return (float)((round * 5 + r * 3 + c) % 97); }

KBD_KERNEL(pipe_k, 64, pipe_params) {
  pipe_smem l;
  const kbd_smem_plan plan = pipe_layout(&l);
  MT_MARK(pipe_line); kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  const int w = kbd_warp_id();
  if (w == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < RING; ++s) {
        kbd_mbarrier_init(&full[s], 1);
        kbd_mbarrier_init(&empty[s], 1);
      }
    }
  }
  kbd_sync();
  float sum[32] = {0};
  int bad = 0, addr_ok = 1;
  for (int it = 0; it < ROUNDS; ++it) {
    const int s = it % RING;
    const uint32_t phase = (uint32_t)(it / RING) & 1u;
    t128 t = KBD_SMEM_PLAN_STILE(t128, smem, l.ring, s);
    addr_ok &= (unsigned char *)t.p == smem + l.ring + (size_t)s * 8192;
    addr_ok &= ((uintptr_t)t.p - (uintptr_t)smem) % 1024 == 0;
    if (w == 0) { /* producer: lane l writes rows l and l + 32 */
      kbd_mbarrier_wait(&empty[s], phase ^ 1u);
      KBD_FOR_LANES(lane) {
        for (int r = lane; r < 64; r += 32)
          for (int c = 0; c < 64; ++c) kbd_st_shared(kbd_stile_ptr(t, r, c), kbd_f32_to_bf16(pipe_value(it, r, c)));
      }
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&full[s]); }
    } else { /* consumer: lane l sums rows l and l + 32 */
      kbd_mbarrier_wait(&full[s], phase);
      KBD_FOR_LANES(lane) {
        for (int r = lane; r < 64; r += 32)
          for (int c = 0; c < 64; ++c) {
            const float v = kbd_bf16_to_f32(kbd_ld_shared(kbd_stile_ptr(t, r, c)));
            bad += v != pipe_value(it, r, c);
            sum[lane] += v;
          }
      }
      KBD_ELECT_ONE { kbd_mbarrier_arrive(&empty[s]); }
    }
  }
  if (w == 1) {
    float *sums = KBD_SMEM_PLAN_ARRAY(float, smem, l.sums);
    KBD_FOR_LANES(lane) { kbd_st_shared(&sums[lane], sum[lane]); }
    float *o = p.out + kbd_block_x() * CHK_N;
    KBD_FOR_LANES(lane) { o[lane] = kbd_ld_shared(&sums[lane]); }
    KBD_ELECT_ONE {
      o[CHK_MISMATCH] = (float)bad;
      o[CHK_ADDR] = (float)addr_ok;
    }
  }
}

static kbd_status run_pipe(size_t smem_bytes, float *out) {
  pipe_params prm = {out};
  return pipe_k(kbd_cfg(kbd_dim(BLOCKS, 1, 1), smem_bytes, NULL), prm);
}

static void test_pipeline_through_plan(void **state) {
  (void)state;
  pipe_bad_align = 0;
  pipe_smem l;
  const kbd_smem_plan plan = pipe_layout(&l);
  MT_ASSERT_OK(kbd_smem_plan_status(&plan));
  assert_int_equal(l.full, 0);
  assert_int_equal(l.empty, 32);
  assert_int_equal(l.ring, 1024);
  assert_int_equal(l.sums, 1024 + RING * 8192);
  assert_int_equal(plan.bytes, 1024 + RING * 8192 + 128);
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, BLOCKS * CHK_N * sizeof(float)));
  MT_ASSERT_OK(run_pipe(plan.bytes, out));
  float host[BLOCKS * CHK_N];
  MT_ASSERT_OK(kbd_copy_to_host(host, out, sizeof host));
  for (int b = 0; b < BLOCKS; ++b) {
    const float *h = host + b * CHK_N;
    assert_int_equal((int)h[CHK_MISMATCH], 0);
    assert_int_equal((int)h[CHK_ADDR], 1);
    for (int lane = 0; lane < 32; ++lane) {
      float want = 0;
      for (int it = 0; it < ROUNDS; ++it)
        for (int r = lane; r < 64; r += 32)
          for (int c = 0; c < 64; ++c) want += pipe_value(it, r, c);
      assert_float_equal(h[lane], want, 0.0f);
    }
  }
  MT_ASSERT_OK(kbd_free(out));
}

static void test_launch_with_too_little_smem(void **state) {
  (void)state;
  pipe_bad_align = 0;
  pipe_smem l;
  const kbd_smem_plan plan = pipe_layout(&l);
  const size_t gave[] = {plan.bytes - 1, 1024, 0};
  for (size_t k = 0; k < sizeof gave / sizeof gave[0]; ++k) {
    const kbd_status s = run_pipe(gave[k], NULL);
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    MT_ASSERT_AT(s, MT_LINE(pipe_line));
    char want[256];
    MT_ASSERT_HAS(s, mt_fmt(want, sizeof want,
                            "kbd_smem_plan_check_launch: the plan needs %zu bytes of dynamic shared memory (4 pieces) "
                            "but the launch gave %zu",
                            plan.bytes, gave[k]));
  }
  /* more than the plan is fine */
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, BLOCKS * CHK_N * sizeof(float)));
  MT_ASSERT_OK(run_pipe(plan.bytes + 4096, out));
  MT_ASSERT_OK(kbd_free(out));
}

static void test_kernel_sees_plan_error(void **state) {
  (void)state;
  pipe_bad_align = 1;
  pipe_smem l;
  const kbd_smem_plan plan = pipe_layout(&l);
  MT_ASSERT_CODE(kbd_smem_plan_status(&plan), KBD_ERR_INVALID);
  const kbd_status s = run_pipe(plan.bytes, NULL); /* enough bytes, but a layout the GPU cannot honour */
  pipe_bad_align = 0;
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(pipe_line));
  MT_ASSERT_HAS(s, "piece 3 'sums' (32 x 4 bytes) asks for 4096-byte alignment");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_each_kind),          MT_TEST(test_strides),
      MT_TEST(test_exact_limit),        MT_TEST(test_message_names_first_piece),
      MT_TEST(test_saturates),          MT_TEST(test_bad_alignment),
      MT_TEST(test_pipeline_through_plan), MT_TEST(test_launch_with_too_little_smem),
      MT_TEST(test_kernel_sees_plan_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
