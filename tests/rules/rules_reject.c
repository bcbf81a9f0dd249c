/* tests/rules/rules_reject.c - what the GPU toolchain rejects, the CPU build rejects (never linked).
 *
 * Compiled with -DKBD_REJECT_CASE=<n> by the rules_reject_* tests (tests/rules/CMakeLists.txt) through
 * cmake/KbdExpectCompileFail.cmake: as C11 by gcc and clang and as C++17 by g++, all with -DKBD_CPU, and
 * as CUDA by nvcc for sm_90a. Case n must stop the compiler with an error naming the rule it breaks.
 * Every bad construct sits in a branch the CPU run would never take (p.n < 0 for a length): a rule that
 * only fired when the line ran would let such a kernel build on the CPU and fail in nvcc/ptxas later.
 * Case 0 is the positive control: each construct used correctly must compile cleanly with -Werror.
 */
#include <kbd/tile.h>

typedef struct rules_params {
  float *f;
  kbd_i32 *i;
  long long n;
  int op;
} rules_params;

enum { RULES_N = 64 };
#define RULES_BIG (232448 / 4) /* f32 elements in exactly 227 KiB */

#if KBD_REJECT_CASE == 0
/* --- positive control ------------------------------------------------------------------------------ */
KBD_KERNEL(rules_ok_128, 128, rules_params) {
  KBD_SHARED(float, a, 32);                          /* literal */
  KBD_SHARED(float, b, RULES_N);                     /* enum constant */
  KBD_SHARED(kbd_i32, c, 2 * RULES_N + 1);           /* constant expression */
  KBD_SHARED(float, d, sizeof(rules_params) / 4);    /* sizeof */
  KBD_SHARED_ALIGNED(float, e, RULES_N, 1024);       /* power-of-two alignment */
  KBD_SHARED_ALIGNED(kbd_mbarrier, bars, 2, 8);
  KBD_TILE(f32, 1, 32, KBD_WARP) wf;
  KBD_TILE(i32, 1, 32, KBD_WARP) wi;
  kbd_load(wf, p.f, p.n, 0);
  kbd_load(wi, p.i, p.n, 0);
  if (kbd_warp_id() == 0) {
    kbd_store_smem(a, wf, 32);
    kbd_store_smem(b, wf, 32);
    kbd_store_smem(c, wi, 32);
    kbd_store_smem(e, wf, 32);
  }
  kbd_sync();

  kbd_lanes_f32 x, y;
  KBD_FOR_LANES(q) KBD_LANE(x, q) = p.f[q];
  float r0, r1, r2, t0;
  kbd_warp_reduce(r0, x, KBD_RED_SUM);
  kbd_warpgroup_reduce(r1, x, KBD_RED_MAX); /* 128 threads: one whole warpgroup */
  kbd_cta_reduce(r2, x, KBD_RED_MIN);
  kbd_warp_scan(y, x, KBD_RED_SUM, 0);
  kbd_warpgroup_scan(y, t0, x, KBD_RED_MAX, 1);
  kbd_cta_scan(y, t0, x, KBD_RED_MIN, 0);
  kbd_lanes_i32 xi;
  KBD_FOR_LANES(q) KBD_LANE(xi, q) = p.i[q];
  int32_t ri;
  kbd_warp_reduce(ri, xi, KBD_RED_XOR);

  KBD_TILE(f32, 1, 512, KBD_WARPGROUP) wg; /* warpgroup tile: the block has 128 threads */
  KBD_TILE(f32, 1, 256, KBD_CTA) ct;
  KBD_TILE(f32, 1, 128, 128) sc; /* an explicit scope as large as the block */
  kbd_load(wg, p.f, p.n, 0);
  kbd_load(ct, p.f, p.n, 0);
  kbd_load(sc, p.f, p.n, 0);
  float s0, s1;
  kbd_reduce(s0, wg, KBD_RED_SUM);
  kbd_scan(ct, s1, ct, KBD_RED_SUM, 0);

  KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
  KBD_ROWVEC(f32, acc) m;
  kbd_fill(acc, 1.0f);
  kbd_reduce_rows(m, acc, KBD_RED_MAX);
  kbd_bcast_rows(acc, acc, m, KBD_OP_SUB);
  kbd_store2d(p.f, acc, 64, 16, 16, 0, 0);
  kbd_store(p.f, sc, p.n, 0);
  p.f[1] = (float)(d != NULL) + (float)(bars != NULL);
  p.f[0] = r0 + r1 + r2 + t0 + s0 + s1 + KBD_LANE(y, 0) + (float)ri + kbd_ld_shared(&a[0]) + kbd_ld_shared(&b[1]) +
           (float)kbd_ld_shared(&c[2]) + kbd_ld_shared(&e[3]);
}
/* One declaration of exactly the limit, alone in its kernel (ptxas adds up a kernel's static arrays). */
KBD_KERNEL(rules_ok_max, 32, rules_params) {
  KBD_SHARED(float, big, RULES_BIG);
  KBD_TILE(f32, 1, 32, KBD_WARP) t;
  kbd_load(t, p.f, p.n, 0);
  kbd_store_smem(big + RULES_BIG - 32, t, 32);
  kbd_load_smem(t, big + RULES_BIG - 32, 32);
  kbd_store(p.f, t, p.n, 0);
}

#elif KBD_REJECT_CASE == 1
/* a shared array sized at run time */
KBD_KERNEL(rules_1, 32, rules_params) {
  if (p.n < 0) {
    const int n = (int)p.n;
    KBD_SHARED(float, buf, n);
    kbd_st_shared(&buf[0], 1.0f);
  }
}

#elif KBD_REJECT_CASE == 2
/* one byte over the limit */
KBD_KERNEL(rules_2, 32, rules_params) {
  if (p.n < 0) {
    KBD_SHARED(char, big, 232449);
    kbd_st_shared(&big[0], (char)1);
  }
}

#elif KBD_REJECT_CASE == 3
/* over the limit in bytes, not in elements: 58113 floats = 232452 bytes */
KBD_KERNEL(rules_3, 32, rules_params) {
  if (p.n < 0) {
    KBD_SHARED_ALIGNED(float, big, RULES_BIG + 1, 128);
    kbd_st_shared(&big[0], 1.0f);
  }
}

#elif KBD_REJECT_CASE == 4
/* a count whose byte size wraps around 2^64 (8 * 2^61 == 0) */
KBD_KERNEL(rules_4, 32, rules_params) {
  if (p.n < 0) {
    KBD_SHARED(double, big, 1ull << 61);
    kbd_st_shared(&big[0], 1.0);
  }
}

#elif KBD_REJECT_CASE == 5
/* an empty shared array */
KBD_KERNEL(rules_5, 32, rules_params) {
  if (p.n < 0) {
    KBD_SHARED(float, none, 0);
    (void)none;
  }
}

#elif KBD_REJECT_CASE == 6
/* an alignment that is not a power of two */
KBD_KERNEL(rules_6, 32, rules_params) {
  if (p.n < 0) {
    KBD_SHARED_ALIGNED(float, odd, 32, 24);
    kbd_st_shared(&odd[0], 1.0f);
  }
}

#elif KBD_REJECT_CASE == 7
/* a warpgroup tile in a 64-thread block */
KBD_KERNEL(rules_7, 64, rules_params) {
  if (p.n < 0) {
    KBD_TILE(f32, 1, 128, KBD_WARPGROUP) t;
    kbd_load(t, p.f, p.n, 0);
    kbd_store(p.f, t, p.n, 0);
  }
}

#elif KBD_REJECT_CASE == 8
/* a 256-thread scope in a 128-thread block */
KBD_KERNEL(rules_8, 128, rules_params) {
  if (p.n < 0) {
    KBD_TILE(f32, 1, 256, 256) t;
    kbd_load(t, p.f, p.n, 0);
    kbd_store(p.f, t, p.n, 0);
  }
}

#elif KBD_REJECT_CASE == 9
/* a warpgroup reduction in a 64-thread block */
KBD_KERNEL(rules_9, 64, rules_params) {
  if (p.n < 0) {
    kbd_lanes_f32 x;
    KBD_FOR_LANES(q) KBD_LANE(x, q) = p.f[q];
    float r;
    kbd_warpgroup_reduce(r, x, KBD_RED_SUM);
    p.f[0] = r;
  }
}

#elif KBD_REJECT_CASE == 10
/* a warpgroup scan in a 64-thread block */
KBD_KERNEL(rules_10, 64, rules_params) {
  if (p.n < 0) {
    kbd_lanes_f32 x, y;
    KBD_FOR_LANES(q) KBD_LANE(x, q) = p.f[q];
    float tot;
    kbd_warpgroup_scan(y, tot, x, KBD_RED_SUM, 0);
    p.f[0] = tot + KBD_LANE(y, 0);
  }
}

#elif KBD_REJECT_CASE == 11
/* a reduction op chosen at run time */
KBD_KERNEL(rules_11, 32, rules_params) {
  if (p.n < 0) {
    kbd_lanes_f32 x;
    KBD_FOR_LANES(q) KBD_LANE(x, q) = p.f[q];
    float r;
    const int op = p.op;
    kbd_warp_reduce(r, x, op);
    p.f[0] = r;
  }
}

#elif KBD_REJECT_CASE == 12
/* a tile reduction op chosen at run time */
KBD_KERNEL(rules_12, 32, rules_params) {
  if (p.n < 0) {
    KBD_TILE(f32, 1, 64, KBD_WARP) t;
    kbd_load(t, p.f, p.n, 0);
    float r;
    kbd_reduce(r, t, p.op);
    p.f[0] = r;
  }
}

#elif KBD_REJECT_CASE == 13
/* a scan op chosen at run time */
KBD_KERNEL(rules_13, 32, rules_params) {
  if (p.n < 0) {
    kbd_lanes_f32 x, y;
    KBD_FOR_LANES(q) KBD_LANE(x, q) = p.f[q];
    kbd_warp_scan(y, x, p.op, 0);
    p.f[0] = KBD_LANE(y, 0);
  }
}

#elif KBD_REJECT_CASE == 14
/* a row-reduction op chosen at run time */
KBD_KERNEL(rules_14, 128, rules_params) {
  if (p.n < 0) {
    KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
    KBD_ROWVEC(f32, acc) m;
    kbd_fill(acc, 1.0f);
    kbd_reduce_rows(m, acc, p.op);
    kbd_store2d(p.f, acc, 64, 16, 16, 0, 0);
  }
}

#elif KBD_REJECT_CASE == 15
/* a broadcast op chosen at run time */
KBD_KERNEL(rules_15, 128, rules_params) {
  if (p.n < 0) {
    KBD_TILE_L(f32, 64, 16, KBD_WARPGROUP, KBD_LAYOUT_WGMMA_ACC) acc;
    KBD_ROWVEC(f32, acc) m;
    kbd_fill(acc, 1.0f);
    kbd_reduce_rows(m, acc, KBD_RED_MAX);
    kbd_bcast_rows(acc, acc, m, p.op);
    kbd_store2d(p.f, acc, 64, 16, 16, 0, 0);
  }
}

#elif KBD_REJECT_CASE == 16
/* a const int count: no constant expression in C (rejected by gcc and clang C11), a constant in C++ (g++
 * and nvcc accept it: tests/rules/CMakeLists.txt expects success there) */
KBD_KERNEL(rules_16, 32, rules_params) {
  const int n = 64;
  KBD_SHARED(float, buf, n);
  KBD_TILE(f32, 1, 64, KBD_WARP) t;
  kbd_load(t, p.f, p.n, 0);
  kbd_store_smem(buf, t, 64);
  kbd_load_smem(t, buf, 64);
  kbd_store(p.f, t, p.n, 0);
}
#endif
