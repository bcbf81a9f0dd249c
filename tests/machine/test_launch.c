/* test_launch.c - launch limits of the CPU machine (the GPU's: grid, threads per block, 227 KiB of
 * shared memory), kbd_trap, a full 1024-thread block, KBD_CPU_QUIET and the fiber stack size/guard. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "machine_test.h"

/* Buffers live in host memory, mapped for the kernels (kt_host.h). */
#include "kt_host.h"
#define malloc(n) kt_host_alloc(n)
#define free(p) kt_host_free(p)


#define SMEM_LIMIT (227u * 1024u)

/* ---- grid and thread-count limits -------------------------------------------------------------------------- */

typedef struct {
  int *count; /* warps that ran */
} cnt_params;

KBD_KERNEL(count_k, 64, cnt_params) { __atomic_fetch_add(p.count, 1, __ATOMIC_RELAXED); }

static kbd_status run_count(kbd_dim3 grid, size_t dyn, int *count) {
  *count = 0;
  cnt_params p = {count};
  return count_k(kbd_cfg(grid, dyn, NULL), p);
}

static void test_empty_grid_is_invalid(void **state) {
  (void)state;
  int count = 0;
  const kbd_dim3 empty[] = {kbd_dim(0, 1, 1), kbd_dim(1, 0, 1), kbd_dim(1, 1, 0), kbd_dim(0, 0, 0)};
  for (int i = 0; i < 4; ++i) {
    kbd_status s = run_count(empty[i], 0, &count);
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    MT_ASSERT_HAS(s, "launch of count_k: empty grid");
    assert_int_equal(count, 0); /* nothing ran */
  }
  MT_ASSERT_OK(run_count(kbd_dim(1, 1, 1), 0, &count));
  assert_int_equal(count, 2);
}

static void test_grid_dimension_limits(void **state) {
  (void)state;
  int count = 0;
  kbd_status s = run_count(kbd_dim(1, 65536, 1), 0, &count);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "grid (1, 65536, 1) exceeds (2^31-1, 65535, 65535)");
  assert_int_equal(count, 0);
  MT_ASSERT_CODE(run_count(kbd_dim(1, 1, 65536), 0, &count), KBD_ERR_INVALID);
  MT_ASSERT_CODE(run_count(kbd_dim(0x80000000u, 1, 1), 0, &count), KBD_ERR_INVALID);
  assert_int_equal(count, 0);
  /* The largest legal y runs every block. */
  mt_env(2, 0);
  MT_ASSERT_OK(run_count(kbd_dim(1, 65535, 1), 0, &count));
  assert_int_equal(count, 2 * 65535);
}

static void test_direct_launch_thread_counts(void **state) {
  (void)state;
  int count = 0;
  cnt_params p = {&count};
  const kbd_launch_cfg cfg = kbd_cfg(kbd_dim(3, 1, 1), 0, NULL);
  const int bad[] = {2048, 48, 0, -32, 1056, 16};
  for (int i = 0; i < 6; ++i) {
    count = 0;
    kbd_status s = kbd_cpu_launch_kernel(&cfg, bad[i], count_k_kbd_entry, &p, "direct");
    MT_ASSERT_CODE(s, KBD_ERR_INVALID);
    char b[128];
    MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "launch of direct: %d threads per block", bad[i]));
    assert_int_equal(count, 0);
  }
  const int good[] = {32, 96, 1024};
  for (int i = 0; i < 3; ++i) {
    count = 0;
    MT_ASSERT_OK(kbd_cpu_launch_kernel(&cfg, good[i], count_k_kbd_entry, &p, "direct"));
    assert_int_equal(count, 3 * good[i] / 32); /* one body run per warp */
  }
  MT_ASSERT_CODE(kbd_cpu_launch_kernel(NULL, 64, count_k_kbd_entry, &p, "direct"), KBD_ERR_INVALID);
}

/* ---- KBD_CPU_THREADS ---------------------------------------------------------------------------------------- */

#define HT_BLOCKS 4

typedef struct {
  pthread_t *who;   /* [block]: the host thread that ran it */
  int *arrived;     /* blocks that have started */
  int *all_met;     /* [block]: saw every block started at once */
  int wait_for_all; /* spin (bounded) until HT_BLOCKS blocks run concurrently */
} ht_params;

KBD_KERNEL(host_thread_k, 32, ht_params) {
  const unsigned b = kbd_block_x();
  p.who[b] = pthread_self();
  __atomic_fetch_add(p.arrived, 1, __ATOMIC_ACQ_REL);
  if (p.wait_for_all) {
    struct timespec t0, t;
    timespec_get(&t0, TIME_UTC);
    for (;;) {
      if (__atomic_load_n(p.arrived, __ATOMIC_ACQUIRE) == HT_BLOCKS) {
        p.all_met[b] = 1;
        break;
      }
      timespec_get(&t, TIME_UTC);
      if (t.tv_sec - t0.tv_sec > 3) break; /* not concurrent: give up, the test fails */
      sched_yield();
    }
  }
}

static void test_host_thread_count(void **state) {
  (void)state;
  pthread_t who[HT_BLOCKS];
  int arrived = 0, all_met[HT_BLOCKS] = {0};
  ht_params p = {who, &arrived, all_met, 0};
  /* One host thread: every block runs on the same thread. */
  mt_env(1, 0);
  MT_ASSERT_OK(host_thread_k(kbd_cfg(kbd_dim(HT_BLOCKS, 1, 1), 0, NULL), p));
  for (int b = 1; b < HT_BLOCKS; ++b) assert_true(pthread_equal(who[b], who[0]));
  /* Four host threads: all four blocks are in flight at once, each on its own thread. */
  mt_env(HT_BLOCKS, 0);
  arrived = 0;
  p.wait_for_all = 1;
  MT_ASSERT_OK(host_thread_k(kbd_cfg(kbd_dim(HT_BLOCKS, 1, 1), 0, NULL), p));
  for (int b = 0; b < HT_BLOCKS; ++b) {
    if (!all_met[b]) fail_msg("KBD_CPU_THREADS=%d: block %d never saw all blocks running together", HT_BLOCKS, b);
    for (int c = 0; c < b; ++c) assert_false(pthread_equal(who[b], who[c]));
  }
}

/* ---- shared-memory limit ----------------------------------------------------------------------------------- */

enum { SM_DYN_ENDS, SM_STATIC_32F, SM_STATIC_ALIGNED };

typedef struct {
  int mode;
  float *out;
} sm_params;

static int sm_static_line;

/* SM_DYN_ENDS: store and load a 32-float tile at the first and the last 128 bytes of the dynamic area.
 * SM_STATIC_32F: declare 128 bytes of static shared memory after it, store and load them.
 * SM_STATIC_ALIGNED: the same with 1024-byte alignment. */
KBD_KERNEL(smem_limit_k, 32, sm_params) {
  KBD_TILE(f32, 1, 32, KBD_WARP) t;
  kbd_zero(t);
  KBD_MAP(t, t, x, r, c, (float)(c + 1));
  if (p.mode == SM_DYN_ENDS) {
    float *d = (float *)kbd_dynamic_smem();
    const size_t nf = kbd_dynamic_smem_bytes() / sizeof(float);
    kbd_store_smem(d, t, 32);
    kbd_store_smem(d + nf - 32, t, 32);
    kbd_zero(t);
    kbd_load_smem(t, d + nf - 32, 32);
    if (kbd_block_x() == 0) kbd_store(p.out, t, 32, 0); /* one block: two storing the same bytes race */
  } else if (p.mode == SM_STATIC_32F) {
    MT_MARK(sm_static_line); KBD_SHARED(float, s, 32);
    kbd_store_smem(s, t, 32);
    kbd_zero(t);
    kbd_load_smem(t, s, 32);
    kbd_store(p.out, t, 32, 0);
  } else {
    MT_MARK(sm_static_line); KBD_SHARED_ALIGNED(float, s, 32, 1024);
    kbd_store_smem(s, t, 32);
    kbd_zero(t);
    kbd_load_smem(t, s, 32);
    kbd_store(p.out, t, 32, 0);
  }
}

static void test_dynamic_smem_limit(void **state) {
  (void)state;
  float out[32];
  KT_HOST_SCOPE(out);
  sm_params p = {SM_DYN_ENDS, out};
  kbd_status s = smem_limit_k(kbd_cfg(kbd_dim(1, 1, 1), SMEM_LIMIT + 1, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "232449 bytes of dynamic shared memory exceeds the 232448-byte (227 KiB)");
  memset(out, 0, sizeof out);
  MT_ASSERT_OK(smem_limit_k(kbd_cfg(kbd_dim(2, 1, 1), SMEM_LIMIT, NULL), p));
  for (int c = 0; c < 32; ++c) assert_true(out[c] == (float)(c + 1));
}

static void test_static_plus_dynamic_smem_limit(void **state) {
  (void)state;
  float out[32];
  KT_HOST_SCOPE(out);
  sm_params p = {SM_STATIC_32F, out};
  /* 128 static bytes at the 16-aligned end of the dynamic area: SMEM_LIMIT - 64 leaves 64 bytes. */
  kbd_status s = smem_limit_k(kbd_cfg(kbd_dim(1, 1, 1), SMEM_LIMIT - 64, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(sm_static_line));
  MT_ASSERT_HAS(s, "static shared memory of 128 bytes brings the block to 232512 bytes (dynamic 232384)");
  /* Exactly at the limit; a dynamic size that is not a multiple of 16 is padded up to the static. */
  const size_t fits[] = {SMEM_LIMIT - 128, SMEM_LIMIT - 135};
  for (int i = 0; i < 2; ++i) {
    memset(out, 0, sizeof out);
    MT_ASSERT_OK(smem_limit_k(kbd_cfg(kbd_dim(1, 1, 1), fits[i], NULL), p));
    for (int c = 0; c < 32; ++c) assert_true(out[c] == (float)(c + 1));
  }
  /* The alignment padding counts: 1000 bytes would be free, but a 1024-aligned 128-byte array must start
   * at 227 KiB itself. */
  p.mode = SM_STATIC_ALIGNED;
  s = smem_limit_k(kbd_cfg(kbd_dim(1, 1, 1), SMEM_LIMIT - 1000, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, MT_LINE(sm_static_line));
  MT_ASSERT_HAS(s, "static shared memory of 128 bytes brings the block to 232576 bytes (dynamic 231448)");
  memset(out, 0, sizeof out);
  MT_ASSERT_OK(smem_limit_k(kbd_cfg(kbd_dim(1, 1, 1), SMEM_LIMIT - 1024, NULL), p));
  for (int c = 0; c < 32; ++c) assert_true(out[c] == (float)(c + 1));
}

/* ---- kbd_trap ---------------------------------------------------------------------------------------------- */

typedef struct {
  int *after; /* warps that got past the trap point */
} trap_params;

static int trap_line;

KBD_KERNEL(trap_k, 128, trap_params) {
  if (kbd_block_x() == 1 && kbd_warp_id() == 2) {
    MT_MARK(trap_line); kbd_trap("boom: value out of range");
  }
  __atomic_fetch_add(p.after, 1, __ATOMIC_RELAXED);
}

static void test_trap_reports_kernel_fault(void **state) {
  (void)state;
  int after = 0;
  trap_params p = {&after};
  kbd_status s = trap_k(kbd_cfg(kbd_dim(3, 1, 1), 0, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_KERNEL);
  MT_ASSERT_AT(s, MT_LINE(trap_line));
  MT_ASSERT_HAS(s, "kbd_trap: boom: value out of range (warp 2)");
  MT_ASSERT_HAS(s, "[kernel trap_k, block (1,0,0)]");
  /* block 0 (4 warps) and warps 0, 1 of block 1 ran before the trap; nothing ran after it */
  assert_int_equal(after, 4 + 2);
}

/* ---- 1024 threads --------------------------------------------------------------------------------------- */

typedef struct {
  float *out;
  long long n;
} big_params;

KBD_KERNEL(big_block, 1024, big_params) {
  KBD_SHARED(float, s, 1024);
  KBD_TILE(f32, 1, 32, KBD_WARP) t;
  KBD_TILE(f32, 1, 1024, KBD_CTA) all; /* one element per thread of the block */
  const int w = kbd_warp_id();
  kbd_zero(t);
  KBD_MAP(t, t, x, r, c, (float)(kbd_block_x() * 10000 + w * 32 + c));
  kbd_store_smem(s + w * 32, t, 32);
  kbd_sync();
  kbd_load_smem(t, s + (31 - w) * 32, 32); /* another warp's slot */
  kbd_bar_sync(9, 1024);                   /* all 32 warps have read: s may be overwritten */
  kbd_mul_s(t, t, 2.0f);
  kbd_store_smem(s + w * 32, t, 32);
  kbd_bar_sync(9, 0);
  kbd_load_smem(all, s, 1024);
  kbd_store(p.out, all, p.n, (long long)kbd_block_x() * 1024);
}

static void test_1024_thread_block(void **state) {
  (void)state;
  const int blocks = 2;
  const long long n = blocks * 1024;
  float *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&out, (size_t)n * sizeof *out));
  for (long seed = 0; seed < 3; ++seed) {
    mt_env(2, seed);
    memset(out, 0, (size_t)n * sizeof *out);
    big_params p = {out, n};
    MT_ASSERT_OK(big_block(kbd_cfg(kbd_dim((unsigned)blocks, 1, 1), 0, NULL), p));
    for (int b = 0; b < blocks; ++b)
      for (int w = 0; w < 32; ++w)
        for (int c = 0; c < 32; ++c) {
          const float want = 2.0f * (float)(b * 10000 + (31 - w) * 32 + c);
          if (out[b * 1024 + w * 32 + c] != want)
            fail_msg("seed %ld block %d warp %d col %d: got %g want %g", seed, b, w, c, out[b * 1024 + w * 32 + c],
                     want);
        }
  }
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- KBD_CPU_QUIET ----------------------------------------------------------------------------------------- */

/* Run a trapping launch with stderr redirected to a temporary file; return what was written. */
static void stderr_of_trap(char *buf, size_t n) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  const int saved = dup(2);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), 2) >= 0);
  int after = 0;
  trap_params p = {&after};
  kbd_status s = trap_k(kbd_cfg(kbd_dim(2, 1, 1), 0, NULL), p);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  MT_ASSERT_CODE(s, KBD_ERR_KERNEL);
  rewind(tmp);
  const size_t got = fread(buf, 1, n - 1, tmp);
  buf[got] = '\0';
  fclose(tmp);
}

static void test_quiet_env(void **state) {
  (void)state;
  char buf[2048];
  mt_quiet(0);
  stderr_of_trap(buf, sizeof buf);
  if (!strstr(buf, "kbd: kernel fault: ") || !strstr(buf, "kbd_trap: boom: value out of range"))
    fail_msg("stderr without KBD_CPU_QUIET: \"%s\"", buf);
  mt_quiet(1);
  stderr_of_trap(buf, sizeof buf);
  assert_string_equal(buf, "");
}

/* ---- KBD_CPU_STACK_KB and the stack guard page ----------------------------------------------------------- */

typedef struct {
  int kib;          /* bytes of stack the kernel touches, in KiB */
  volatile int *ok; /* set when the kernel finished */
} st_params;

KBD_KERNEL(stack_k, 32, st_params) {
  volatile char big[192 * 1024];
  const int n = p.kib * 1024;
  /* Touch from the top down, as a growing stack does: an overflow hits the guard page first. */
  for (int i = n - 1; i >= 0; i -= 512) big[i] = (char)i;
  big[0] = 1;
  *p.ok = big[0];
}

static int run_stack_in_child(const char *stack_kb, int kib) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL); /* die of the fault, whatever handler the test framework installed */
    setenv("KBD_CPU_STACK_KB", stack_kb, 1);
    setenv("KBD_CPU_THREADS", "1", 1);
    volatile int ok = 0;
    st_params p = {kib, &ok};
    kbd_status s = stack_k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
    _exit(kbd_ok(s) && ok == 1 ? 0 : 3);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

static void test_stack_size_env_and_guard(void **state) {
  (void)state;
  /* 192 KiB of locals fit in a 512 KiB fiber stack ... */
  int st = run_stack_in_child("512", 192);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  /* ... and overflow a 64 KiB one into its guard page: the warp faults at once (SIGSEGV), it does not
   * scribble over its neighbour. */
  st = run_stack_in_child("64", 192);
  if (!WIFSIGNALED(st)) fail_msg("64 KiB stack: child exited normally with %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  assert_int_equal(WTERMSIG(st), SIGSEGV);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      MT_TEST(test_empty_grid_is_invalid),
      MT_TEST(test_grid_dimension_limits),
      MT_TEST(test_direct_launch_thread_counts),
      MT_TEST(test_host_thread_count),
      MT_TEST(test_dynamic_smem_limit),
      MT_TEST(test_static_plus_dynamic_smem_limit),
      MT_TEST(test_trap_reports_kernel_fault),
      MT_TEST(test_1024_thread_block),
      MT_TEST(test_quiet_env),
      MT_TEST(test_stack_size_env_and_guard),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
