/* test_tune_attn.c - attn_pick_splits (examples/attention/attention_run.c) through kbd_tune_pick, on the CPU machine
 * for the target's emulated arch:
 *   pick_is_model      on 12 decode shapes the pick is the cheapest valid split count of attn_splits_estimate (a
 *                      scan here), never one with fewer than 2 key blocks per split, and the same when asked again
 *   forced_and_cached  a->tune's force ("s2") is taken when valid; an invalid forced count falls back to 1; a cache
 *                      entry for the shape's key is taken over the model's pick
 *   every_split_runs   attn_run with each valid split count of one shape: O equals the one-split pass to one bf16 ulp
 */
#include <kbd/tile.h> /* first: it sets the feature macros the system headers read */
#include <kbd/tune.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention.h"

static attn_args ta_args(int batch, int hq, int hkv, int sq, int sk, int d) {
  attn_args a;
  memset(&a, 0, sizeof a);
  a.dtype = ATTN_BF16, a.batch = batch, a.heads_q = hq, a.heads_kv = hkv, a.seq_q = sq, a.seq_k = sk, a.head_dim = d;
  a.splits = 1;
  return a;
}

static int ta_valid(const attn_args *a, int s) {
  return s == 1 || (a->seq_k + ATTN_BN(a->head_dim) - 1) / ATTN_BN(a->head_dim) >= 2 * s;
}

static void test_pick_is_model(void **state) {
  (void)state;
  static const int shapes[12][6] = {
      {1, 32, 8, 1, 4096, 128},  {1, 32, 32, 1, 512, 64},  {4, 16, 16, 1, 8192, 128},  {1, 8, 8, 128, 2048, 64},
      {1, 1, 1, 1, 100000, 64},  {8, 32, 8, 1, 1024, 128}, {1, 4, 1, 1, 65536, 256},   {2, 12, 12, 1, 1000, 64},
      {1, 64, 8, 4, 30000, 128}, {16, 8, 8, 1, 256, 64},   {1, 2, 2, 1, 1 << 20, 128}, {3, 6, 3, 7, 777, 256},
  };
  kbd_tune_opts o = kbd_tune_opts_default();
  o.log = 0, o.tune = 0, o.cache_path = "off";
  int non_one = 0;
  for (int i = 0; i < 12; ++i) {
    attn_args a = ta_args(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][4], shapes[i][5]);
    a.tune = &o;
    const int s = attn_pick_splits(&a, 132);
    int best = 1;
    for (int c = 2; c <= ATTN_SPLITS_MAX; c *= 2)
      if (ta_valid(&a, c) &&
          attn_splits_estimate(&a, c, KBD_CPU_ARCH, 132) < attn_splits_estimate(&a, best, KBD_CPU_ARCH, 132))
        best = c;
    if (s != best || !ta_valid(&a, s))
      fail_msg("shape %d: picked %d splits, the model's cheapest valid count is %d", i, s, best);
    assert_int_equal(attn_pick_splits(&a, 132), s);
    non_one += s > 1;
  }
  assert_true(non_one >= 3); /* decode with long keys splits */
}

static void test_forced_and_cached(void **state) {
  (void)state;
  attn_args a = ta_args(1, 32, 8, 1, 4096, 128);
  kbd_tune_opts o = kbd_tune_opts_default();
  o.log = 0, o.tune = 0, o.cache_path = "off";
  a.tune = &o;
  const int model = attn_pick_splits(&a, 132);
  assert_int_not_equal(model, 2);
  assert_int_not_equal(model, 4);
  o.force = "s2";
  assert_int_equal(attn_pick_splits(&a, 132), 2);
  o.force = "s64"; /* 32 key blocks: fewer than 2 per split */
  assert_int_equal(attn_pick_splits(&a, 132), 1);
  o.force = NULL;
  /* a cache entry for this shape's key */
  char dir[64] = "/tmp/kbd_tune_attn_XXXXXX", cache[128], key[KBD_TUNE_KEY_MAX];
  assert_non_null(mkdtemp(dir));
  snprintf(cache, sizeof cache, "%s/tune.txt", dir);
  const long long dims[3] = {8, 4, 4096};
  assert_int_equal(
      kbd_tune_key_make(key, sizeof key, "attn_splits", KBD_CPU_ARCH, "kbd-cpu-machine", "bf16.d128.sms132", dims, 3)
          .code,
      KBD_OK);
  assert_int_equal(kbd_tune_cache_store(cache, key, "s4", 0.01).code, KBD_OK);
  o.cache_path = cache;
  assert_int_equal(attn_pick_splits(&a, 132), 4);
  o.cache_path = "off";
  assert_int_equal(attn_pick_splits(&a, 132), model);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_every_split_runs(void **state) {
  (void)state;
  const int d = 64, sk = 1100, hq = 4, hkv = 2; /* 9 key blocks of 128: 1, 2 and 4 splits are valid */
  attn_args a = ta_args(1, hq, hkv, 1, sk, d);
  const size_t qn = (size_t)hq * d, kn = (size_t)hkv * sk * d;
  kbd_bf16 *hq_ = (kbd_bf16 *)malloc(qn * 2), *hk = (kbd_bf16 *)malloc(kn * 2), *hv = (kbd_bf16 *)malloc(kn * 2);
  kbd_bf16 *o1 = (kbd_bf16 *)malloc(qn * 2), *os = (kbd_bf16 *)malloc(qn * 2);
  assert_true(hq_ && hk && hv && o1 && os);
  for (size_t i = 0; i < qn; ++i)
    hq_[i] = kbd_f32_to_bf16((float)((int)(i * 7 % 13) - 6) / 8.0f);
  for (size_t i = 0; i < kn; ++i)
    hk[i] = kbd_f32_to_bf16((float)((int)(i * 5 % 11) - 5) / 8.0f),
    hv[i] = kbd_f32_to_bf16((float)((int)(i * 3 % 17) - 8) / 8.0f);
  void *dq, *dk, *dv, *dout, *work;
  assert_int_equal(kbd_malloc(&dq, qn * 2).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dk, kn * 2).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dv, kn * 2).code, KBD_OK);
  assert_int_equal(kbd_malloc(&dout, qn * 2).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dq, hq_, qn * 2).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dk, hk, kn * 2).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(dv, hv, kn * 2).code, KBD_OK);
  a.q = dq, a.k = dk, a.v = dv, a.o = dout;
  a.splits = ATTN_SPLITS_MAX;
  assert_int_equal(kbd_malloc(&work, attn_workspace_bytes(&a)).code, KBD_OK);
  int ran = 0;
  for (int s = 1; s <= ATTN_SPLITS_MAX; s *= 2) {
    if (!ta_valid(&a, s)) continue;
    a.splits = s, a.workspace = s > 1 ? work : NULL;
    const kbd_status st = attn_run(&a);
    if (!kbd_ok(st)) fail_msg("splits %d: %s", s, st.msg);
    assert_int_equal(kbd_copy_to_host(s == 1 ? o1 : os, dout, qn * 2).code, KBD_OK);
    for (size_t i = 0; s > 1 && i < qn; ++i) {
      const float x = kbd_bf16_to_f32(os[i]), y = kbd_bf16_to_f32(o1[i]);
      if (!(fabsf(x - y) <= 0x1p-7f * fmaxf(fabsf(y), 0x1p-6f)))
        fail_msg("splits %d: O[%zu] = %g, one split gives %g", s, i, (double)x, (double)y);
    }
    ++ran;
  }
  assert_int_equal(ran, 3);
  kbd_free(dq), kbd_free(dk), kbd_free(dv), kbd_free(dout), kbd_free(work);
  free(hq_), free(hk), free(hv), free(o1), free(os);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pick_is_model),
      cmocka_unit_test(test_forced_and_cached),
      cmocka_unit_test(test_every_split_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
