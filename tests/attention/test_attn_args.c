/* test_attn_args.c - attn_run (examples/attention/attention_run.c) rejects every bad argument it checks with
 * KBD_ERR_INVALID and a message naming the argument and its value, and launches nothing: the output, the lse
 * and the workspace keep their sentinel bytes (a launch of the kernels writes every output element and lse, and
 * the controls below show such a write is seen). Each case starts from a valid call and changes one field.
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

/* A valid problem: bf16, batch 2, 4 q heads over 2 kv heads, 33 x 70, head_dim 64. The buffers are 256 bytes
 * longer than needed so a misaligned pointer into them stays inside the allocation. */
#define AT_SLACK 256
static at_problem at_p;
static void *at_o, *at_work;
static float *at_lse;
static size_t at_obytes, at_lbytes, at_wbytes;

static int at_setup(void **state) {
  (void)state;
  mt_env(1, 0);
  mt_quiet(1);
  at_init(&at_p, ATTN_BF16, 2, 4, 2, 33, 70, 64, 0, 0.0f);
  for (long long i = 0; i < at_p.nq; ++i) at_p.q[i] = at_rand((unsigned long long)i, 21);
  for (long long i = 0; i < at_p.nk; ++i)
    at_p.k[i] = at_rand((unsigned long long)i, 22), at_p.v[i] = at_rand((unsigned long long)i, 23);
  at_upload(&at_p);
  at_obytes = 2 * (size_t)at_p.nq + AT_SLACK;
  at_lbytes = sizeof(float) * (size_t)at_p.nrows;
  at_wbytes = (size_t)ATTN_SPLITS_MAX * (size_t)at_p.nrows * 65 * sizeof(float) + AT_SLACK;
  if (!kbd_ok(kbd_malloc(&at_o, at_obytes)) || !kbd_ok(kbd_malloc((void **)&at_lse, at_lbytes)) ||
      !kbd_ok(kbd_malloc(&at_work, at_wbytes)))
    return -1;
  return 0;
}
static int at_teardown(void **state) {
  (void)state;
  kbd_free(at_o), kbd_free(at_lse), kbd_free(at_work);
  at_free(&at_p);
  return 0;
}

static void at_fill(void) {
  assert_int_equal(kbd_memset_device(at_o, AT_SENTINEL, at_obytes).code, KBD_OK);
  assert_int_equal(kbd_memset_device(at_lse, AT_SENTINEL, at_lbytes).code, KBD_OK);
  assert_int_equal(kbd_memset_device(at_work, AT_SENTINEL, at_wbytes).code, KBD_OK);
}
/* Bytes of a device buffer that are not the sentinel. */
static size_t at_touched(const void *dev, size_t bytes) {
  unsigned char *h = (unsigned char *)malloc(bytes);
  assert_non_null(h);
  assert_int_equal(kbd_device_sync().code, KBD_OK);
  assert_int_equal(kbd_copy_to_host(h, dev, bytes).code, KBD_OK);
  size_t n = 0;
  for (size_t i = 0; i < bytes; ++i) n += h[i] != AT_SENTINEL;
  free(h);
  return n;
}

static attn_args at_valid(void) {
  attn_args a;
  memset(&a, 0, sizeof a);
  a.dtype = ATTN_BF16, a.batch = 2, a.heads_q = 4, a.heads_kv = 2, a.seq_q = 33, a.seq_k = 70, a.head_dim = 64;
  a.q = at_p.dq, a.k = at_p.dk, a.v = at_p.dv, a.o = at_o, a.lse = at_lse, a.splits = 1;
  return a;
}

/* The controls: valid calls run and write O and the lse (splits 1), and the workspace too (splits 4). */
static void test_valid_calls_write(void **state) {
  (void)state;
  attn_args a = at_valid();
  at_fill();
  MT_ASSERT_OK(attn_run(&a));
  assert_int_not_equal(at_touched(at_o, at_obytes), 0);
  assert_int_not_equal(at_touched(at_lse, at_lbytes), 0);
  at_out r = {at_o, at_lse, (uint16_t *)malloc(2 * (size_t)at_p.nq), (float *)malloc(at_lbytes)};
  assert_non_null(r.ho), assert_non_null(r.hlse);
  at_download(&r, &at_p);
  double worst;
  assert_int_equal(at_check(&at_p, &r, at_tolerance(ATTN_BF16, 1.0), &worst, 1), 0);
  a.splits = 4, a.workspace = at_work;
  assert_true(attn_workspace_bytes(&a) <= at_wbytes);
  at_fill();
  MT_ASSERT_OK(attn_run(&a));
  assert_int_not_equal(at_touched(at_work, at_wbytes), 0);
  at_download(&r, &at_p);
  assert_int_equal(at_check(&at_p, &r, at_tolerance(ATTN_BF16, 1.0), &worst, 1), 0);
  a = at_valid(), a.lse = NULL; /* the lse is optional */
  at_fill();
  MT_ASSERT_OK(attn_run(&a));
  assert_int_not_equal(at_touched(at_o, at_obytes), 0);
  assert_int_equal(at_touched(at_lse, at_lbytes), 0);
  free(r.ho), free(r.hlse);
}

/* One bad call: KBD_ERR_INVALID, the message has every needle, nothing written. */
static void at_reject(const attn_args *a, const char *what, const char *n1, const char *n2) {
  at_fill();
  const kbd_status s = attn_run(a);
  if (s.code != KBD_ERR_INVALID)
    fail_msg("%s: want %s, got %s: %s", what, kbd_code_name(KBD_ERR_INVALID), kbd_code_name(s.code), s.msg);
  if (!strstr(s.msg, n1) || (n2 && !strstr(s.msg, n2)))
    fail_msg("%s: message \"%s\" lacks \"%s\"%s%s", what, s.msg, n1, n2 ? " or " : "", n2 ? n2 : "");
  const size_t o = at_touched(at_o, at_obytes), l = at_touched(at_lse, at_lbytes), w = at_touched(at_work, at_wbytes);
  if (o || l || w) fail_msg("%s: rejected, yet %zu output, %zu lse, %zu workspace bytes were written", what, o, l, w);
}

/* One field of a valid call changed: `field = value` (v), then the call must fail naming the field. */
#define AT_BAD(field, value, n1, n2)                                                                                   \
  do {                                                                                                                 \
    attn_args a_ = at_valid();                                                                                         \
    a_.field = value;                                                                                                  \
    at_reject(&a_, #field " = " #value, n1, n2);                                                                       \
  } while (0)
/* The same with splits > 1 and a workspace (the decode path's checks). */
#define AT_BAD_SPLIT(field, value, n1, n2)                                                                             \
  do {                                                                                                                 \
    attn_args a_ = at_valid();                                                                                         \
    a_.splits = 4, a_.workspace = at_work;                                                                             \
    a_.field = value;                                                                                                  \
    at_reject(&a_, #field " = " #value " (splits 4)", n1, n2);                                                         \
  } while (0)

static void test_shape_arguments(void **state) {
  (void)state;
  at_reject(NULL, "args NULL", "attn_run: args is NULL", NULL);
  AT_BAD(dtype, (attn_dtype)2, "attn_run: dtype = 2", NULL);
  AT_BAD(dtype, (attn_dtype)-1, "attn_run: dtype = -1", NULL);
  AT_BAD(head_dim, 96, "attn_run: head_dim = 96", NULL);
  AT_BAD(head_dim, 32, "attn_run: head_dim = 32", NULL);
  AT_BAD(head_dim, 0, "attn_run: head_dim = 0", NULL);
  AT_BAD(head_dim, 512, "attn_run: head_dim = 512", NULL);
  AT_BAD(batch, 0, "attn_run: batch = 0", NULL);
  AT_BAD(batch, -3, "attn_run: batch = -3", NULL);
  AT_BAD(heads_q, 0, "attn_run: heads_q = 0", NULL);
  AT_BAD(heads_kv, 0, "heads_kv = 0", NULL);
  AT_BAD(heads_kv, -1, "heads_kv = -1", NULL);
  AT_BAD(heads_q, 3, "attn_run: heads_q = 3 is not a multiple of heads_kv = 2", NULL);
  AT_BAD(heads_kv, 3, "attn_run: heads_q = 4 is not a multiple of heads_kv = 3", NULL);
  AT_BAD(seq_q, 0, "attn_run: seq_q = 0", NULL);
  AT_BAD(seq_k, 0, "seq_k = 0", NULL);
  AT_BAD(seq_k, -7, "seq_k = -7", NULL);
  AT_BAD(seq_k, (1 << 30) + 1, "seq_k = 1073741825", "2^30");
  AT_BAD(seq_q, 1 << 29, "heads_q x seq_q = 2147483648", "2^30");
  AT_BAD(batch, 40000, "attn_run: batch x heads_kv = 80000", "65535");
}

static void test_pointer_arguments(void **state) {
  (void)state;
  AT_BAD(q, NULL, "attn_run: q is NULL", NULL);
  AT_BAD(k, NULL, "attn_run: k is NULL", NULL);
  AT_BAD(v, NULL, "attn_run: v is NULL", NULL);
  AT_BAD(o, NULL, "attn_run: o is NULL", NULL);
  AT_BAD(q, (const char *)at_p.dq + 2, "attn_run: q = ", "is not 128-byte aligned");
  AT_BAD(k, (const char *)at_p.dk + 64, "attn_run: k = ", "is not 128-byte aligned");
  AT_BAD(v, (const char *)at_p.dv + 16, "attn_run: v = ", "is not 128-byte aligned");
  AT_BAD(o, (char *)at_o + 2, "attn_run: o = ", "is not 128-byte aligned");
  AT_BAD(o, (char *)at_o + 64, "attn_run: o = ", "is not 128-byte aligned");
  AT_BAD_SPLIT(workspace, (char *)at_work + 32, "attn_run: workspace = ", "is not 128-byte aligned");
  AT_BAD_SPLIT(workspace, NULL, "attn_run: splits = 4 needs a workspace", "attn_workspace_bytes");
  AT_BAD_SPLIT(q, NULL, "attn_run: q is NULL", NULL);
  AT_BAD_SPLIT(o, (char *)at_o + 2, "attn_run: o = ", "is not 128-byte aligned");
}

static void test_scalar_arguments(void **state) {
  (void)state;
  AT_BAD(scale, -1.0f, "attn_run: scale = -1", NULL);
  AT_BAD(scale, -1e-30f, "attn_run: scale = -1e-30", NULL);
  AT_BAD(scale, INFINITY, "attn_run: scale = inf", NULL);
  AT_BAD(scale, -INFINITY, "attn_run: scale = -inf", NULL);
  AT_BAD(scale, NAN, "attn_run: scale = nan", NULL);
  AT_BAD(splits, 0, "attn_run: splits = 0", "1..64");
  AT_BAD(splits, -2, "attn_run: splits = -2", "1..64");
  AT_BAD(splits, ATTN_SPLITS_MAX + 1, "attn_run: splits = 65", "1..64");
  AT_BAD(splits, 2, "attn_run: splits = 2 needs a workspace", NULL);
  AT_BAD_SPLIT(splits, ATTN_SPLITS_MAX + 1, "attn_run: splits = 65", NULL);
  AT_BAD_SPLIT(head_dim, 96, "attn_run: head_dim = 96", NULL);
  AT_BAD_SPLIT(scale, -2.0f, "attn_run: scale = -2", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_calls_write),
      cmocka_unit_test(test_shape_arguments),
      cmocka_unit_test(test_pointer_arguments),
      cmocka_unit_test(test_scalar_arguments),
  };
  return cmocka_run_group_tests(tests, at_setup, at_teardown);
}
