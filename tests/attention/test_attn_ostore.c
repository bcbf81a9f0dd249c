/* test_attn_ostore.c - the attention epilogue's TMA store of O (docs/attention.md, "How O is stored") on the CPU
 * machine: rows past the end of the packed rows are never written, and the store's handshakes fail clearly when
 * broken.
 *
 * The UNMODIFIED kernel texts are compiled here again (bf16) under test-only names: built with KBD_CPU_ARCH=90 the
 * sm_90a text (attention_kernel.h) at head_dim 64 (two consumer warpgroups) and 256 (one); with KBD_CPU_ARCH=100 the
 * sm_100a texts (attention_kernel_sm100.h at head_dim 64, attention_kernel_sm100_d256.h at 256). Each as is (the
 * control) and with a bug injected by a macro override defined just before the text is included and dropped right
 * after:
 *   os_no_wait_*   the issuing thread never waits for its store group (kbd_bulk_wait_group_read is a no-op): the warp
 *                  ends while the TMA may still read the staging tile, reported (KBD_ERR_MBARRIER) at the
 *                  kbd_tma_store3d line (sm_90a: the text's; sm_100a: attn_fa4_store_o's in attention_store_o.h, which
 *                  both sm_100a texts call) under every schedule tried
 *   os_other_q_64  each warpgroup stages its O into the OTHER warpgroup's Q tile, bytes that are not dead yet: the
 *                  other warpgroup's S = Q K^T may still read them and its TMA store reads them, so the writes are
 *                  reported as a race (sm_90a text, whose two consumers finish at different turns)
 * The controls run on O buffers whose (batch, kv head) slices are padded (o's map has a row stride past its rows
 * extent, the pad filled with a sentinel): every row within the tolerance of the double reference, and every pad byte
 * untouched - the rows a last, ragged block computes past the end of a head are clipped by the map's extent. A
 * launch with a map whose extent covers the pad must write into the pad (the pad check can fail).
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention.h"
#include "attn_test.h"
#include "machine_test.h"

#define ATTN_DT bf16
#define ATTN_T kbd_bf16

#if KBD_CPU_ARCH == 90
#define OS_TEXT_64 "attention_kernel.h"
#define OS_TEXT_256 "attention_kernel.h"
#define OS_LAYOUT_64 attn_layout_64
#define OS_LAYOUT_256 attn_layout_256
#define OS_BM_64 ATTN_BM(64)
#define OS_BM_256 ATTN_BM(256)
/* the other consumer's Q tile (two consumers at head_dim 64) */
#define OS_OTHER_Q KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, ATTN_NC - 1 - g)
#else
#define OS_TEXT_64 "attention_kernel_sm100.h"
#define OS_TEXT_256 "attention_kernel_sm100_d256.h"
#define OS_LAYOUT_64 attn_layout_fa4_64
#define OS_LAYOUT_256 attn_layout_fa4_256
#define OS_BM_64 ATTN_FA4_BM
#define OS_BM_256 ATTN_FA4_D256_BM
#endif

#define ATTN_D 64
#define ATTN_KERNEL os_control_64
#include OS_TEXT_64
#undef ATTN_KERNEL

#pragma push_macro("kbd_bulk_wait_group_read")
#undef kbd_bulk_wait_group_read
#define kbd_bulk_wait_group_read(n) ((void)(n))
#define ATTN_KERNEL os_no_wait_64
#include OS_TEXT_64
#undef ATTN_KERNEL
#pragma pop_macro("kbd_bulk_wait_group_read")

#if KBD_CPU_ARCH == 90
#pragma push_macro("kbd_stile_store_at")
#undef kbd_stile_store_at
#define kbd_stile_store_at(s, t, r0, c0)                                                                               \
  KBD__STILE_FRONT(t, OS_OTHER_Q, r0, c0, 1, 0, 1, "kbd_stile_store_at", "kbd_stile_store_at(s, t, r0, c0)")
#define ATTN_KERNEL os_other_q_64
#include OS_TEXT_64
#undef ATTN_KERNEL
#pragma pop_macro("kbd_stile_store_at")
#endif
#undef ATTN_D

#define ATTN_D 256
#define ATTN_KERNEL os_control_256
#include OS_TEXT_256
#undef ATTN_KERNEL

#pragma push_macro("kbd_bulk_wait_group_read")
#undef kbd_bulk_wait_group_read
#define kbd_bulk_wait_group_read(n) ((void)(n))
#define ATTN_KERNEL os_no_wait_256
#include OS_TEXT_256
#undef ATTN_KERNEL
#pragma pop_macro("kbd_bulk_wait_group_read")
#undef ATTN_D

/* ---- the host side ------------------------------------------------------------------------------------------- */

#define OS_PAD 70 /* rows of sentinel after each (batch, kv head)'s rows: more than a block's overshoot past them */

typedef struct os_text {
  at_kernel control, no_wait;
  int d, block_rows;
  kbd_smem_plan (*layout)(attn_smem *);
  const char *file; /* the text, for the reported lines */
} os_text;

/* The file and the text of the TMA store of O: the sm_100a texts call attn_fa4_store_o (attention_store_o.h). */
#if KBD_CPU_ARCH == 90
#define OS_STORE_FILE "attention_kernel.h"
#define OS_STORE_CALL "kbd_tma_store3d(&p.om"
#else
#define OS_STORE_FILE "attention_store_o.h"
#define OS_STORE_CALL "kbd_tma_store3d(&p->om"
#endif

static os_text os_texts(int d) {
  os_text t;
  memset(&t, 0, sizeof t);
  t.d = d;
  if (d == 64) {
    t.control = os_control_64, t.no_wait = os_no_wait_64, t.block_rows = OS_BM_64, t.layout = OS_LAYOUT_64;
    t.file = OS_TEXT_64;
  } else {
    t.control = os_control_256, t.no_wait = os_no_wait_256, t.block_rows = OS_BM_256, t.layout = OS_LAYOUT_256;
    t.file = OS_TEXT_256;
  }
  return t;
}

/* The problem: 2 batches x 2 kv heads x 2 q heads per kv head (GQA), seq_q 75: 150 packed rows per (batch, kv head),
 * so every text's last block is ragged (sm_90a head_dim 64: a consumer with 22 rows and one with none; the sm_100a
 * 256-row block: tile 1 with 22 rows, whose second 64-row box starts past the end). 200 keys, causal. */
static void os_problem(at_problem *p, int d) {
  at_init(p, ATTN_BF16, 2, 4, 2, 75, 200, d, 1, 0.0f);
  for (long long i = 0; i < p->nq; ++i)
    p->q[i] = at_rand((unsigned long long)i, 31);
  for (long long i = 0; i < p->nk; ++i) {
    p->k[i] = at_rand((unsigned long long)i, 32);
    p->v[i] = at_rand((unsigned long long)i, 33);
  }
  at_upload(p);
}

/* The packed rows of one (batch, kv head): the q heads of its group, each seq_q rows. */
static long long os_rows(const at_problem *p) { return (long long)(p->heads_q / p->heads_kv) * p->seq_q; }

/* Runs kernel on p with O in a padded device buffer opad ([heads][rows + OS_PAD][d]); o's map has `extent` rows per
 * head (rows: right; rows + OS_PAD: a map that does not clip). */
static kbd_status os_launch(const os_text *tx, at_kernel kernel, const at_problem *p, void *opad, float *lse,
                            long long extent) {
  attn_smem l;
  return at_launch_text_into(kernel, p, opad, lse, extent, os_rows(p) + OS_PAD, tx->layout(&l), tx->block_rows);
}

/* One run into a fresh padded buffer: r gets the rows (r->ho, r->hlse, for at_check); returns the number of pad
 * elements that are not the sentinel. */
static long long os_run(const os_text *tx, at_kernel kernel, const at_problem *p, at_out *r, long long extent,
                        kbd_status *st) {
  const long long heads = (long long)p->batch * p->heads_kv, rows = os_rows(p);
  const size_t n = (size_t)(heads * (rows + OS_PAD) * p->d);
  void *opad = NULL;
  MT_ASSERT_OK(kbd_malloc(&opad, 2 * n));
  MT_ASSERT_OK(kbd_memset_device(opad, AT_SENTINEL, 2 * n));
  *st = os_launch(tx, kernel, p, opad, r->lse, extent);
  long long touched = -1;
  if (kbd_ok(*st)) {
    uint16_t *h = (uint16_t *)malloc(2 * n);
    assert_non_null(h);
    MT_ASSERT_OK(kbd_device_sync());
    MT_ASSERT_OK(kbd_copy_to_host(h, opad, 2 * n));
    MT_ASSERT_OK(kbd_copy_to_host(r->hlse, r->lse, sizeof(float) * (size_t)p->nrows));
    touched = 0;
    for (long long hd = 0; hd < heads; ++hd) {
      const uint16_t *base = h + hd * (rows + OS_PAD) * p->d;
      memcpy(r->ho + hd * rows * p->d, base, 2 * (size_t)(rows * p->d));
      for (long long i = rows * p->d; i < (rows + OS_PAD) * p->d; ++i)
        touched += base[i] != 0xFFFFu;
    }
    free(h);
  }
  kbd_free(opad);
  return touched;
}

/* os_run under schedule `seed` (-1: the default, with 2 host threads; else that seed on 1) into a fresh r. */
static long long os_run_seed(const os_text *tx, at_kernel kernel, const at_problem *p, long seed, at_out *r,
                             long long extent, kbd_status *st) {
  mt_env(seed < 0 ? 2 : 1, seed);
  at_out_alloc(r, p);
  return os_run(tx, kernel, p, r, extent, st);
}

/* The control under the default schedule and seeds 0-2: every row right, no pad element written; the same text with
 * a map that does not clip writes into the pad (the rows past the end exist in the staging tile and would go out). */
static void os_control(int d) {
  const os_text tx = os_texts(d);
  at_problem p;
  os_problem(&p, d);
  const long long rows = os_rows(&p);
  for (long seed = -1; seed < 3; ++seed) {
    at_out r;
    kbd_status s;
    const long long touched = os_run_seed(&tx, tx.control, &p, seed, &r, rows, &s);
    MT_ASSERT_OK(s);
    double worst;
    const long long bad = at_check(&p, &r, at_tolerance(p.dtype, 1.0), &worst, 1);
    if (bad) fail_msg("%s d%d (seed %ld): %lld rows out of tolerance (worst %.3g)", tx.file, d, seed, bad, worst);
    if (touched) fail_msg("%s d%d (seed %ld): %lld elements written past the packed rows", tx.file, d, seed, touched);
    at_out_free(&r);
  }
  mt_env(1, 0);
  at_out r;
  at_out_alloc(&r, &p);
  kbd_status s;
  const long long touched = os_run(&tx, tx.control, &p, &r, rows + OS_PAD, &s);
  MT_ASSERT_OK(s);
  if (touched <= 0)
    fail_msg("%s d%d: a map without the clip wrote no pad element: the pad check cannot fail", tx.file, d);
  at_out_free(&r);
  at_free(&p);
}

/* A broken variant under the default schedule and seeds 0-3: each run stops with `code`, `what` in the message, at a
 * line of `file` (in the texts' folder) with one of the needles. */
static void os_expect(const os_text *tx, at_kernel kernel, const char *name, kbd_code code, const char *what,
                      const char *file, const char *const *needles) {
  static const char *const site[] = {":", NULL};
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", OS_TEXT_DIR, file);
  at_problem p;
  os_problem(&p, tx->d);
  for (long seed = -1; seed < 4; ++seed) {
    at_out r;
    kbd_status s;
    (void)os_run_seed(tx, kernel, &p, seed, &r, os_rows(&p), &s);
    if (s.code != code || !strstr(s.msg, what) || !at_names_line(s.msg, path, needles, site))
      fail_msg("%s, %s d%d (seed %ld): want %s naming \"%s\" at a line of %s with \"%s\"; got %s: %s", name, tx->file,
               tx->d, seed, kbd_code_name(code), what, file, needles[0], kbd_code_name(s.code), s.msg);
    if (seed < 0) printf("  %s, %s d%d: %.300s\n", name, tx->file, tx->d, s.msg); /* the report, for the log */
    at_out_free(&r);
  }
  at_free(&p);
}

static void test_control_64(void **state) {
  (void)state;
  os_control(64);
}

static void test_control_256(void **state) {
  (void)state;
  os_control(256);
}

/* No wait for the store group: the issuing warp ends with the store pending, reported at the store. */
static void test_no_wait(void **state) {
  (void)state;
  static const char *const at[] = {OS_STORE_CALL, NULL};
  for (int d = 64; d <= 256; d += 192) {
    const os_text tx = os_texts(d);
    os_expect(&tx, tx.no_wait, "no store wait", KBD_ERR_MBARRIER, "not waited for", OS_STORE_FILE, at);
  }
}

#if KBD_CPU_ARCH == 90
/* Staging into the other consumer's Q tile: bytes its S = Q K^T may still read and its own TMA store reads. */
static void test_other_q(void **state) {
  (void)state;
  /* the S issue is kbd_mma_ring (Q by its descriptor) in the key loop */
  static const char *const at[] = {"kbd_stile_store_at(q, ob, 0, c)", "kbd_mma_ring(sacc, ATTN_Q, ATTN_K,",
                                   "kbd_tma_store3d(&p.om", NULL};
  const os_text tx = os_texts(64);
  os_expect(&tx, os_other_q_64, "other Q", KBD_ERR_RACE, "", tx.file, at);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
    MT_TEST(test_control_64),
    MT_TEST(test_control_256),
    MT_TEST(test_no_wait),
#if KBD_CPU_ARCH == 90
    MT_TEST(test_other_q),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
