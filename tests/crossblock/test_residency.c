/* Residency as on the GPU: the CPU machine never runs more blocks side by side than the emulated GPU holds
 * (its SM count, KBD_CPU_SMS, times the blocks per SM that shared memory, threads, registers and the 32-block
 * limit allow), whatever KBD_CPU_THREADS is. A wait on a block that cannot become resident is a deadlock report
 * that names the waiting block, its wait, the block that would have to start and why it cannot. */
#include <kbd/tile.h>
#define KBD_DEVICE_IMPLEMENTATION
#include <kbd/device.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct last_params {
  uint32_t *go;   /* set by the last block */
  uint32_t *seen; /* seen[b] = 1 + what block b read from go */
} last_params;

static int g_spin_line;

/* Every block but the last spins on a flag the last block sets: on a GPU this completes only if the last block
 * becomes resident while all the others wait, i.e. only if the whole grid is resident at once. */
#define KBD__WAIT_FOR_LAST_BODY                                                                                        \
  const unsigned b = kbd_block_x(), nb = kbd_grid_x();                                                                 \
  if (kbd_warp_id() != 0) return;                                                                                      \
  if (b + 1 == nb) {                                                                                                   \
    kbd_st_release_u32(p.go, 7);                                                                                       \
    p.seen[b] = 8;                                                                                                     \
    return;                                                                                                            \
  }                                                                                                                    \
  g_spin_line = __LINE__; /* the macro's line, as KBD_SPIN_UNTIL's site */                                             \
  KBD_SPIN_UNTIL(kbd_ld_acquire_u32(p.go) != 0);                                                                       \
  p.seen[b] = kbd_ld_acquire_u32(p.go) + 1

KBD_KERNEL(wait_last32, 32, last_params) { KBD__WAIT_FOR_LAST_BODY; }
KBD_KERNEL(wait_last256, 256, last_params) { KBD__WAIT_FOR_LAST_BODY; }
KBD_KERNEL(wait_last512, 512, last_params) { KBD__WAIT_FOR_LAST_BODY; }
KBD_KERNEL(wait_last1024, 1024, last_params) { KBD__WAIT_FOR_LAST_BODY; }

/* The same with 40 KiB of static shared memory: the machine learns it when the first block declares it. */
KBD_KERNEL(wait_last_static, 32, last_params) {
  KBD_SHARED(uint32_t, buf, 10240);
  (void)buf;
  KBD__WAIT_FOR_LAST_BODY;
}

/* The same in a kernel that uses setmaxnreg: ptxas then gives it the whole budget, 65536 / 256 = 256 registers per
 * thread, so one block fills an SM's register file. Learned when a warp has moved registers. */
KBD_KERNEL(wait_last_regs, 256, last_params) {
  kbd_setmaxnreg_dec(40);
  KBD__WAIT_FOR_LAST_BODY;
}

typedef kbd_status (*last_kernel)(kbd_launch_cfg, last_params);

/* Runs `k` over `nblocks` blocks with `smem` dynamic bytes on the emulated GPU of `sms` SMs (0: the arch's).
 * Returns the status; on success checks that every waiting block saw the flag. */
static kbd_status run_last(last_kernel k, unsigned nblocks, size_t smem, const char *sms, const char *threads,
                           const char *seed) {
  if (sms)
    setenv("KBD_CPU_SMS", sms, 1);
  else
    unsetenv("KBD_CPU_SMS");
  setenv("KBD_CPU_THREADS", threads, 1);
  setenv("KBD_CPU_SEED", seed, 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  setenv("KBD_CPU_SPIN_TIMEOUT_MS", "100", 1);
  uint32_t *go, *seen;
  assert_true(kbd_ok(kbd_malloc((void **)&go, sizeof *go)));
  assert_true(kbd_ok(kbd_malloc((void **)&seen, nblocks * sizeof *seen)));
  assert_true(kbd_ok(kbd_memset_device(go, 0, sizeof *go)));
  assert_true(kbd_ok(kbd_memset_device(seen, 0, nblocks * sizeof *seen)));
  last_params p = {go, seen};
  kbd_launch_cfg cfg = kbd_cfg_1d(nblocks);
  cfg.smem_bytes = smem;
  const kbd_status s = k(cfg, p);
  if (s.code == KBD_OK)
    for (unsigned b = 0; b < nblocks; ++b)
      assert_int_equal(seen[b], 8);
  kbd_free(go);
  kbd_free(seen);
  unsetenv("KBD_CPU_SMS");
  unsetenv("KBD_CPU_SEED");
  unsetenv("KBD_CPU_QUIET");
  unsetenv("KBD_CPU_SPIN_TIMEOUT_MS");
  return s;
}

/* The emulated GPU (this file is built for sm_100a and, as test_residency90, for sm_90a). */
#define ARCH_NAME (KBD_CPU_ARCH == 90 ? "sm_90a" : "sm_100a")
#define ARCH_SMS (KBD_CPU_ARCH == 90 ? 132u : 148u)

/* The deadlock report: the residency sentence `why_any` (its "sm_100a" read as this build's arch), the waiting
 * block 0 and its spin's line, the next block. */
static void expect_residency_deadlock(kbd_status s, const char *why_any, unsigned next) {
  assert_int_equal(s.code, KBD_ERR_DEADLOCK);
  char why[512];
  const char *at = strstr(why_any, "sm_100a");
  if (at)
    snprintf(why, sizeof why, "%.*s%s%s", (int)(at - why_any), why_any, ARCH_NAME, at + strlen("sm_100a"));
  else
    snprintf(why, sizeof why, "%s", why_any);
  char site[64], nb[64];
  snprintf(site, sizeof site, "test_residency.c:%d polls memory", g_spin_line);
  snprintf(nb, sizeof nb, "the next to start would be block (%u,0,0)", next);
  if (!strstr(s.msg, why) || !strstr(s.msg, site) || !strstr(s.msg, nb)) fprintf(stderr, "report:\n%s\n", s.msg);
  assert_non_null(strstr(s.msg, "cross-block deadlock"));
  assert_non_null(strstr(s.msg, why));
  assert_non_null(strstr(s.msg, site));
  assert_non_null(strstr(s.msg, nb));
  assert_non_null(strstr(s.msg, "block (0,0,0)")); /* the lowest waiting block is the one reported */
}

static const char *const k_threads[] = {"1", "2", "8"};

/* (a) 2 SMs x 2 blocks of 100 KiB: a grid of 5 cannot be resident at once - the first run reports it, with 1, 2
 * and 8 host threads (before, every block was resident on 8 host threads and the kernel completed). */
static void test_grid_past_residency_is_a_deadlock(void **state) {
  (void)state;
  for (int t = 0; t < 3; ++t) {
    const kbd_status s = run_last(wait_last32, 5, 100 * 1024, "2", k_threads[t], "0");
    expect_residency_deadlock(
        s, "grid 5 blocks x 100 KiB shared: at most 4 resident on sm_100a with KBD_CPU_SMS=2 (2 per SM)", 4);
    assert_non_null(strstr(s.msg, "shared memory allows 2 (100 KiB + 1 KiB reserved per block, of 228 KiB)"));
  }
  expect_residency_deadlock(run_last(wait_last32, 5, 100 * 1024, "2", "2", "5"), "at most 4 resident", 4);
}

/* (b) the same kernel with a grid that fits completes, under seeds and on every thread count. */
static void test_grid_that_fits_completes(void **state) {
  (void)state;
  const char *seeds[] = {"0", "3"};
  for (int t = 0; t < 3; ++t)
    for (int s = 0; s < 2; ++s)
      assert_int_equal(run_last(wait_last32, 4, 100 * 1024, "2", k_threads[t], seeds[s]).code, KBD_OK);
}

/* The issue's case at the arch's own SM count (132 on sm_90a, 148 on sm_100a): 300 blocks of 200 KiB on 8 host
 * threads, one per SM. */
static void test_issue_case_arch_sms(void **state) {
  (void)state;
  char why[128];
  snprintf(why, sizeof why, "grid 300 blocks x 200 KiB shared: at most %u resident on %s (1 per SM)", ARCH_SMS,
           ARCH_NAME);
  expect_residency_deadlock(run_last(wait_last32, 300, 200 * 1024, NULL, "8", "0"), why, ARCH_SMS);
  assert_int_equal(run_last(wait_last32, ARCH_SMS, 200 * 1024, NULL, "8", "0").code, KBD_OK);
}

/* (c) occupancy by shared memory at its edges: 2 blocks of 100 KiB fit in an SM's 228 KiB, 3 do not; 3 of 75 KiB
 * fit exactly (3 x (75 + 1 reserved) = 228 KiB), one byte more and the 128-byte unit leaves room for 2. */
static void test_occupancy_by_shared_memory(void **state) {
  (void)state;
  static const struct {
    size_t smem;
    unsigned per_sm;
  } cases[] = {{100 * 1024, 2}, {75 * 1024, 3}, {75 * 1024 + 1, 2}, {227 * 1024, 1}, {0, 32}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const unsigned n = cases[i].per_sm;
    assert_int_equal(run_last(wait_last32, n, cases[i].smem, "1", "2", "0").code, KBD_OK);
    const kbd_status s = run_last(wait_last32, n + 1, cases[i].smem, "1", "2", "0");
    char why[96];
    snprintf(why, sizeof why, "at most %u resident on sm_100a with KBD_CPU_SMS=1 (%u per SM)", n, n);
    expect_residency_deadlock(s, why, n);
  }
}

/* (c) by threads: 2048 per SM. */
static void test_occupancy_by_threads(void **state) {
  (void)state;
  static const struct {
    last_kernel k;
    unsigned per_sm;
  } cases[] = {{wait_last1024, 2}, {wait_last512, 4}, {wait_last256, 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const unsigned n = cases[i].per_sm;
    assert_int_equal(run_last(cases[i].k, n, 0, "1", "2", "0").code, KBD_OK);
    char why[96];
    snprintf(why, sizeof why, "at most %u resident on sm_100a with KBD_CPU_SMS=1 (%u per SM)", n, n);
    expect_residency_deadlock(run_last(cases[i].k, n + 1, 0, "1", "2", "0"), why, n);
  }
}

/* (c) by registers when ptxas's count is given: 256 threads x 128 registers = 32 K of the SM's 64 K. */
static void test_occupancy_by_registers(void **state) {
  (void)state;
  setenv("KBD_CPU_REGS", "128", 1);
  assert_int_equal(run_last(wait_last256, 2, 0, "1", "1", "0").code, KBD_OK);
  const kbd_status s = run_last(wait_last256, 3, 0, "1", "1", "0");
  unsetenv("KBD_CPU_REGS");
  expect_residency_deadlock(s, "at most 2 resident on sm_100a with KBD_CPU_SMS=1 (2 per SM)", 2);
  assert_non_null(strstr(s.msg, "registers 2 (128 per thread, KBD_CPU_REGS)"));
  /* unset, registers do not limit: the threads' 8 per SM do */
  assert_int_equal(run_last(wait_last256, 8, 0, "1", "1", "0").code, KBD_OK);
  /* a setmaxnreg kernel: its budget is known once a warp moved registers, and kept for the next launch */
  for (int t = 0; t < 2; ++t) {
    const kbd_status r = run_last(wait_last_regs, 3, 0, "2", k_threads[t], "0");
    expect_residency_deadlock(r, "at most 2 resident on sm_100a with KBD_CPU_SMS=2 (1 per SM)", 2);
    assert_non_null(strstr(r.msg, "registers 1 (256 per thread, the setmaxnreg budget)"));
    assert_int_equal(run_last(wait_last_regs, 2, 0, "2", k_threads[t], "0").code, KBD_OK);
  }
}

/* Static shared memory (KBD_SHARED) counts once the first block has declared it: 40 KiB + 1 KiB reserved, 5 per
 * SM. Learned in the first launch and kept for the next ones. */
static void test_occupancy_by_static_shared_memory(void **state) {
  (void)state;
  for (int t = 0; t < 2; ++t) {
    expect_residency_deadlock(
        run_last(wait_last_static, 6, 0, "1", k_threads[t], "0"),
        "grid 6 blocks x 40 KiB shared: at most 5 resident on sm_100a with KBD_CPU_SMS=1 (5 per SM)", 5);
    assert_int_equal(run_last(wait_last_static, 5, 0, "1", k_threads[t], "0").code, KBD_OK);
  }
}

/* Clusters are resident whole: 2 SMs x 2 blocks of 100 KiB hold 2 clusters of 2; a third cannot start. */
static void test_clusters_resident_whole(void **state) {
  (void)state;
  setenv("KBD_CPU_SMS", "2", 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  setenv("KBD_CPU_SPIN_TIMEOUT_MS", "100", 1);
  for (int t = 0; t < 2; ++t) {
    setenv("KBD_CPU_THREADS", k_threads[t], 1);
    for (unsigned nb = 4; nb <= 6; nb += 2) {
      uint32_t *go, *seen;
      assert_true(kbd_ok(kbd_malloc((void **)&go, sizeof *go)));
      assert_true(kbd_ok(kbd_malloc((void **)&seen, nb * sizeof *seen)));
      assert_true(kbd_ok(kbd_memset_device(go, 0, sizeof *go)));
      kbd_launch_cfg cfg = kbd_cfg_cluster(kbd_cfg_1d(nb), 2, 1, 1);
      cfg.smem_bytes = 100 * 1024;
      last_params p = {go, seen};
      const kbd_status s = wait_last32(cfg, p);
      if (nb == 4) {
        assert_int_equal(s.code, KBD_OK);
      } else {
        expect_residency_deadlock(s,
                                  "grid 6 blocks (3 clusters of 2) x 100 KiB shared: at most 2 clusters resident on "
                                  "sm_100a with KBD_CPU_SMS=2 (2 per SM, 2 SMs x 2 / 2 per cluster)",
                                  4);
      }
      kbd_free(go);
      kbd_free(seen);
    }
  }
  unsetenv("KBD_CPU_SMS");
  unsetenv("KBD_CPU_QUIET");
  unsetenv("KBD_CPU_SPIN_TIMEOUT_MS");
}

/* The cluster that does not fit anywhere is refused at the launch, as the GPU refuses it. */
KBD_KERNEL(cluster4, 32, last_params) { (void)p; }
static void test_cluster_too_big(void **state) {
  (void)state;
  setenv("KBD_CPU_SMS", "1", 1);
  setenv("KBD_CPU_QUIET", "1", 1);
  kbd_launch_cfg cfg = kbd_cfg_1d(4);
  cfg = kbd_cfg_cluster(cfg, 4, 1, 1);
  cfg.smem_bytes = 100 * 1024;
  last_params p = {NULL, NULL};
  kbd_status s = cluster4(cfg, p);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "a cluster does not fit"));
  cfg.smem_bytes = 0;
  assert_int_equal(cluster4(cfg, p).code, KBD_OK);
  unsetenv("KBD_CPU_SMS");
  unsetenv("KBD_CPU_QUIET");
}

/* A bad setting is an error naming it, not a silent default. */
static void test_bad_settings(void **state) {
  (void)state;
  last_params p = {NULL, NULL};
  setenv("KBD_CPU_SMS", "two", 1);
  kbd_status s = cluster4(kbd_cfg_1d(1), p);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "KBD_CPU_SMS=two"));
  setenv("KBD_CPU_SMS", "0", 1);
  assert_int_equal(cluster4(kbd_cfg_1d(1), p).code, KBD_ERR_INVALID);
  unsetenv("KBD_CPU_SMS");
  setenv("KBD_CPU_REGS", "300", 1);
  s = cluster4(kbd_cfg_1d(1), p);
  assert_int_equal(s.code, KBD_ERR_INVALID);
  assert_non_null(strstr(s.msg, "KBD_CPU_REGS=300"));
  unsetenv("KBD_CPU_REGS");
}

/* (d) the device scan's decoupled look-back (each block waits only for blocks that took an earlier ticket) stays
 * exact on a 1-SM GPU (8 blocks of 256 threads resident) with 1, 2 and 8 host threads and under seeds. */
static void test_device_scan_on_one_sm(void **state) {
  (void)state;
  const long long n = 150 * 4096 + 77; /* 151 tiles */
  int32_t *in, *out, *host = (int32_t *)malloc((size_t)n * sizeof *host);
  assert_non_null(host);
  void *ws;
  assert_true(kbd_ok(kbd_malloc((void **)&in, (size_t)n * sizeof *in)));
  assert_true(kbd_ok(kbd_malloc((void **)&out, (size_t)n * sizeof *out)));
  assert_true(kbd_ok(kbd_malloc(&ws, kbd_device_scan_workspace_bytes(n))));
  for (long long i = 0; i < n; ++i)
    host[i] = (int32_t)((i * 7919) % 13) - 6;
  assert_true(kbd_ok(kbd_copy_to_device(in, host, (size_t)n * sizeof *in)));
  setenv("KBD_CPU_SMS", "1", 1);
  const char *seeds[] = {"0", "11"};
  for (int t = 0; t < 3; ++t)
    for (int sd = 0; sd < 2; ++sd) {
      setenv("KBD_CPU_THREADS", k_threads[t], 1);
      setenv("KBD_CPU_SEED", seeds[sd], 1);
      assert_int_equal(kbd_device_scan_i32(in, out, n, KBD_RED_SUM, 0, ws, NULL).code, KBD_OK);
      int32_t acc = 0;
      for (long long i = 0; i < n; ++i) {
        acc += host[i];
        if (out[i] != acc) fail_msg("scan element %lld: %d, expected %d", i, out[i], acc);
      }
    }
  unsetenv("KBD_CPU_SMS");
  unsetenv("KBD_CPU_SEED");
  kbd_free(in);
  kbd_free(out);
  kbd_free(ws);
  free(host);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grid_past_residency_is_a_deadlock),
      cmocka_unit_test(test_grid_that_fits_completes),
      cmocka_unit_test(test_issue_case_arch_sms),
      cmocka_unit_test(test_occupancy_by_shared_memory),
      cmocka_unit_test(test_occupancy_by_threads),
      cmocka_unit_test(test_occupancy_by_registers),
      cmocka_unit_test(test_occupancy_by_static_shared_memory),
      cmocka_unit_test(test_clusters_resident_whole),
      cmocka_unit_test(test_cluster_too_big),
      cmocka_unit_test(test_bad_settings),
      cmocka_unit_test(test_device_scan_on_one_sm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
