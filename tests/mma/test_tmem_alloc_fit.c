/* test_tmem_alloc_fit.c - Tensor Memory allocation on the CPU machine emulating sm_100a (kbd/cpu/mma.h and
 * kbd/cpu/mma_pair.h; tcgen05.alloc / tcgen05.dealloc called through their twins, kbd_hw_tmem_alloc[_pair] /
 * kbd_hw_tmem_dealloc[_pair]): several allocations of different sizes in ONE CTA, some freed and allocated again
 * (issue 31: a mutant whose first fit stepped by 32 columns instead of the allocation's size survived, because every
 * other test allocates once per CTA, and the first allocation is at column 0 either way).
 *
 * kbd_tmem_alloc gives the allocation permit back after its one allocation (tcgen05.relinquish_alloc_permit), so
 * these sequences call the twins, which keep it. Each op runs in one warp, warp-uniform (tcgen05.alloc is
 * .sync.aligned), with a kbd_sync (pairs: kbd_cluster_sync) between ops, so the order is the program's in every
 * schedule. For every allocation the test checks: lane 0; a column that is a multiple of the allocation's column
 * count (the machine's rule: "first fit at a multiple of ncols"); inside the 512 columns; no overlap with the CTA's
 * live allocations; and the exact first-fit column. The pair collective (a 2-CTA cluster) gives both CTAs the same
 * columns, the first multiple of the count that is free in BOTH: a case frees a range in one CTA only. Default
 * schedule and seeds 0-3.
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/mma.h>
#include <kbd/mma_pair.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "machine_test.h"

#define MAX_OPS 12

/* One op: warp `warp` allocates `ncols` columns (ncols > 0) or frees the allocation made by op `free_op`; in the
 * pair kernel, in the CTAs of mask `ctas` (bit r: cluster rank r; an allocation is always both). */
typedef struct {
  int warp, ncols, free_op, ctas;
} fit_op;

typedef struct {
  fit_op ops[MAX_OPS];
  int nops;
  uint32_t *out; /* per CTA (MAX_OPS each) and op: the address tcgen05.alloc wrote (allocations only) */
} fit_params;

KBD_KERNEL(tmem_fit_k, 128, fit_params) {
  KBD_SHARED_ALIGNED(uint32_t, slot, MAX_OPS, 4);
  const int w = kbd_warp_id();
  int live[MAX_OPS] = {0};
  for (int i = 0; i < p.nops; ++i) {
    const fit_op op = p.ops[i];
    if (w == op.warp) {
      if (op.ncols > 0) {
        kbd_hw_tmem_alloc(&slot[i], (uint32_t)op.ncols, KBD_SITE);
        const uint32_t a = kbd_ld_shared(&slot[i]);
        KBD_ELECT_ONE { kbd_st_global(&p.out[i], a); }
        live[i] = 1;
      } else {
        kbd_hw_tcgen05_fence_after(KBD_SITE);
        kbd_hw_tmem_dealloc(kbd_ld_shared(&slot[op.free_op]), (uint32_t)p.ops[op.free_op].ncols, KBD_SITE);
        live[op.free_op] = 0;
      }
    }
    kbd_sync(); /* one op at a time, in program order */
  }
  for (int i = 0; i < p.nops; ++i) /* each warp frees what it still holds */
    if (live[i]) {
      kbd_hw_tcgen05_fence_after(KBD_SITE);
      kbd_hw_tmem_dealloc(kbd_ld_shared(&slot[i]), (uint32_t)p.ops[i].ncols, KBD_SITE);
    }
}

/* The same with the pair's collective (tcgen05.alloc.cta_group::2: the same columns in both CTAs of a 2-CTA
 * cluster, free in both); each CTA frees its own half, so a free may be in one CTA only. */
KBD_KERNEL(tmem_fit_pair_k, 128, fit_params) {
  KBD_SHARED_ALIGNED(uint32_t, slot, MAX_OPS, 4);
  const int w = kbd_warp_id();
  const unsigned rank = kbd_cluster_ctarank();
  int live[MAX_OPS] = {0};
  for (int i = 0; i < p.nops; ++i) {
    const fit_op op = p.ops[i];
    if (w == op.warp) {
      if (op.ncols > 0) {
        kbd_hw_tmem_alloc_pair(&slot[i], (uint32_t)op.ncols, KBD_SITE);
        const uint32_t a = kbd_ld_shared(&slot[i]);
        KBD_ELECT_ONE { kbd_st_global(&p.out[rank * MAX_OPS + (unsigned)i], a); }
        live[i] = 1;
      } else if (op.ctas >> rank & 1) {
        kbd_hw_tcgen05_fence_after(KBD_SITE);
        kbd_hw_tmem_dealloc_pair(kbd_ld_shared(&slot[op.free_op]), (uint32_t)p.ops[op.free_op].ncols, KBD_SITE);
        live[op.free_op] = 0;
      }
    }
    kbd_cluster_sync(); /* one op at a time in both CTAs, in program order */
  }
  for (int i = 0; i < p.nops; ++i)
    if (live[i]) {
      kbd_hw_tcgen05_fence_after(KBD_SITE);
      kbd_hw_tmem_dealloc_pair(kbd_ld_shared(&slot[i]), (uint32_t)p.ops[i].ncols, KBD_SITE);
    }
}

#define A(w, n) {(w), (n), -1, 3}
#define F(w, i) {(w), 0, (i), 3}
#define F1(w, i, ctas) {(w), 0, (i), (ctas)} /* pair kernel: a free in the CTAs of `ctas` only */
#define NONE 0xFFFFFFFFu

typedef struct {
  const char *name;
  int nops;
  fit_op ops[MAX_OPS];
  uint32_t col[MAX_OPS]; /* the first-fit column of each allocation (NONE for frees) */
} fit_case;

static const fit_case cases[] = {
    {"32 then 64 (one warp)", 2, {A(0, 32), A(0, 64)}, {0, 64}},
    {"32 then 64 (two warps)", 2, {A(0, 32), A(1, 64)}, {0, 64}},
    {"32, 64, 128, 256", 4, {A(0, 32), A(0, 64), A(0, 128), A(0, 256)}, {0, 64, 128, 256}},
    {"32 then 256", 2, {A(0, 32), A(1, 256)}, {0, 256}},
    {"three 32s, then 64 and 128", 5, {A(0, 32), A(0, 32), A(0, 32), A(1, 64), A(2, 128)}, {0, 32, 64, 128, 256}},
    {"32, 64, 128; free 64; 128, 64, 32",
     7,
     {A(0, 32), A(0, 64), A(0, 128), F(0, 1), A(1, 128), A(2, 64), A(3, 32)},
     {0, 64, 128, NONE, 256, 64, 32}},
    {"32, 32; free the first; 64, 32, 256",
     6,
     {A(0, 32), A(0, 32), F(0, 0), A(1, 64), A(1, 32), A(2, 256)},
     {0, 32, NONE, 64, 0, 256}},
    {"64 at 0, 32 at 64, then 64 after freeing the first",
     4,
     {A(0, 64), A(0, 32), F(0, 0), A(1, 64)},
     {0, 64, NONE, 0}},
    {"all 512 in 32 + 32 + 64 + 128 + 256",
     5,
     {A(0, 32), A(1, 32), A(2, 64), A(3, 128), A(0, 256)},
     {0, 32, 64, 128, 256}},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Pair sequences (2-CTA cluster, the same sequence in both CTAs but for F1's one-CTA frees): the column is the
 * first multiple of the count that is free in BOTH CTAs. */
static const fit_case pair_cases[] = {
    {"pair: 32 then 64", 2, {A(0, 32), A(0, 64)}, {0, 64}},
    {"pair: 32, 64, 128, 256 (warps 0-3)", 4, {A(0, 32), A(1, 64), A(2, 128), A(3, 256)}, {0, 64, 128, 256}},
    {"pair: 32, 32; CTA 1 frees the first; 32; CTA 0 frees it too; 32, 64",
     7,
     {A(0, 32), A(0, 32), F1(0, 0, 2), A(1, 32), F1(0, 0, 1), A(1, 32), A(2, 64)},
     {0, 32, NONE, 64, NONE, 0, 128}},
    {"pair: 64, 32; both free the 64; 32, 64",
     5,
     {A(0, 64), A(0, 32), F(0, 0), A(1, 32), A(1, 64)},
     {0, 64, NONE, 0, 128}},
};
#define NPAIR ((int)(sizeof pair_cases / sizeof pair_cases[0]))

static uint32_t host_out[2 * MAX_OPS];

static kbd_status run_case(const fit_case *c, int pair, long seed) {
  mt_env(1, seed);
  uint32_t *out = NULL;
  for (int i = 0; i < 2 * MAX_OPS; ++i)
    host_out[i] = NONE;
  kbd_status s = kbd_malloc((void **)&out, sizeof host_out);
  if (kbd_ok(s)) s = kbd_copy_to_device(out, host_out, sizeof host_out);
  if (kbd_ok(s)) {
    fit_params p;
    memset(&p, 0, sizeof p);
    memcpy(p.ops, c->ops, sizeof p.ops);
    p.nops = c->nops;
    p.out = out;
    s = pair ? tmem_fit_pair_k(kbd_cfg_cluster(kbd_cfg_1d(2), 2, 1, 1), p) : tmem_fit_k(kbd_cfg_1d(1), p);
  }
  if (kbd_ok(s)) s = kbd_copy_to_host(host_out, out, sizeof host_out);
  kbd_free(out);
  return s;
}

/* Every address of CTA `rank` aligned to its allocation's size, inside Tensor Memory, disjoint from that CTA's live
 * allocations; and the first-fit column. */
static void check_case(const fit_case *c, int rank, long seed) {
  const uint32_t *out = host_out + rank * MAX_OPS;
  int live[MAX_OPS] = {0};
  for (int i = 0; i < c->nops; ++i) {
    const fit_op *op = &c->ops[i];
    if (op->ncols == 0) {
      if (op->ctas >> rank & 1) live[op->free_op] = 0;
      if (out[i] != NONE) fail_msg("%s: CTA %d: op %d frees, but an address was recorded", c->name, rank, i);
      continue;
    }
    const uint32_t a = out[i], col = a & 0xFFFFu, n = (uint32_t)op->ncols;
    if (a >> 16 != 0)
      fail_msg("%s: CTA %d: allocation %d (%u columns) at lane %u, not lane 0", c->name, rank, i, n, a >> 16);
    if (col % n != 0)
      fail_msg("%s: CTA %d: allocation %d of %u columns at column %u, which is not a multiple of %u", c->name, rank, i,
               n, col, n);
    if (col + n > KBD_TMEM_COLS)
      fail_msg("%s: CTA %d: allocation %d [%u, %u) ends past column 512", c->name, rank, i, col, col + n);
    for (int j = 0; j < i; ++j)
      if (live[j]) {
        const uint32_t cj = out[j] & 0xFFFFu, nj = (uint32_t)c->ops[j].ncols;
        if (col < cj + nj && cj < col + n)
          fail_msg("%s: CTA %d: allocation %d [%u, %u) overlaps the live allocation %d [%u, %u)", c->name, rank, i, col,
                   col + n, j, cj, cj + nj);
      }
    live[i] = 1;
    if (a != c->col[i])
      fail_msg("%s (seed %ld): CTA %d: allocation %d of %u columns at 0x%x, want 0x%x (first fit at a multiple of "
               "the column count)",
               c->name, seed, rank, i, n, a, c->col[i]);
  }
}

static void test_allocations_aligned_to_their_size(void **state) {
  (void)state;
  for (int k = 0; k < NCASES; ++k)
    for (long seed = -1; seed < 4; ++seed) {
      const kbd_status s = run_case(&cases[k], 0, seed);
      if (s.code != KBD_OK) fail_msg("%s (seed %ld): %s", cases[k].name, seed, s.msg);
      check_case(&cases[k], 0, seed);
    }
}

static void test_pair_allocations_aligned_to_their_size(void **state) {
  (void)state;
  for (int k = 0; k < NPAIR; ++k)
    for (long seed = -1; seed < 4; ++seed) {
      const kbd_status s = run_case(&pair_cases[k], 1, seed);
      if (s.code != KBD_OK) fail_msg("%s (seed %ld): %s", pair_cases[k].name, seed, s.msg);
      for (int rank = 0; rank < 2; ++rank)
        check_case(&pair_cases[k], rank, seed);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_allocations_aligned_to_their_size),
      MT_TEST(test_pair_allocations_aligned_to_their_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
