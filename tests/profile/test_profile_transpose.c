/* tests/profile/test_profile_transpose.c - KBD_CPU_PROFILE on examples/transpose (the "done when"): the
 * swizzled kernel is conflict-free by the profiler's own count, its unswizzled build (transpose_noswz.cu) is not.
 *
 * One 64 x 64 bf16 tile (grid 1), derived by hand from transpose.h / transpose.cu:
 *   - each of the 4 warps moves 1 strip (TR_STRIPS = 4): a 64 x 16 MMA_C tile = 16 pairs per lane = four
 *     ldmatrix.x4.trans at transpose.cu's kbd_stile_load_t_at line and four stmatrix.x4 at its kbd_stile_store_at
 *     line: 16 instructions per site, 4 matrices = 4 phases each: ideal 64 wavefronts per site, and 16 x 32 rows x
 *     16 bytes = 8192 bytes = the whole tile read once and written once;
 *   - 128B swizzle: the 8 rows of a matrix are 8 consecutive 128-byte lines at one 16-byte chunk, XORed with
 *     line % 8: 8 distinct chunks = all 32 banks: 1 wavefront per matrix, 64 per site = ideal;
 *   - no swizzle: the same 8 lines at the same chunk = the same 4 banks, 8 distinct words each: 8 wavefronts
 *     per matrix, 512 per site = 8 x ideal;
 *   - the TMA loads one 8192-byte box and stores one: tma_load_bytes = tma_store_bytes = 8192, which are also
 *     all of global_read_bytes / global_write_bytes (the threads touch no global memory).
 *   - barrier waits: kbd_sync twice (after the mbarrier init, and per tile) x 4 warps + 1 mbarrier wait x 4
 *     warps = 12; at each kbd_sync the first 3 warps to arrive block (6), the 4th completes it.
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

long long prof_tr_run_swz(long long rows, long long cols, unsigned grid);
long long prof_tr_run_noswz(long long rows, long long cols, unsigned grid);

static const kbd_profile_site *pt_site(const kbd_profile *p, const char *what, int op) {
  const kbd_profile_site *found = NULL;
  for (int i = 0; i < p->nsites; ++i)
    if (strcmp(p->sites[i].what, what) == 0 && p->sites[i].op == op) {
      assert_null(found); /* one site per (primitive, op) in this kernel */
      found = &p->sites[i];
    }
  assert_non_null(found);
  const size_t n = strlen(found->file);
  assert_true(n >= 12 && strcmp(found->file + n - 12, "transpose.cu") == 0); /* the user's line, not the library's */
  return found;
}

static void pt_one_tile(const kbd_profile *p, int ratio) {
  assert_non_null(p);
  assert_string_equal(p->kernel, ratio == 1 ? "tr_transpose" : "tr_transpose_noswz");
  assert_string_equal(p->arch, KBD_CPU_ARCH == 90 ? "sm_90a" : "sm_100a");
  assert_int_equal(p->grid[0], 1);
  assert_int_equal(p->block, 128);
  assert_int_equal(p->cluster, 1);
  assert_int_equal(p->nsites, 2);
  const kbd_profile_site *ld = pt_site(p, "kbd_stile_load_t_at", KBD_PROFILE_LDMATRIX);
  const kbd_profile_site *st = pt_site(p, "kbd_stile_store_at", KBD_PROFILE_STMATRIX);
  assert_int_equal(st->line, ld->line + 1);
  for (int i = 0; i < 2; ++i) {
    const kbd_profile_site *s = i ? st : ld;
    assert_int_equal(s->space, KBD_PROFILE_SHARED);
    assert_int_equal(s->bytes_per_lane, 16);
    assert_int_equal(s->instructions, 16);
    assert_int_equal(s->ideal, 64);
    assert_int_equal(s->wavefronts, 64 * ratio);
    assert_ptr_equal(kbd_profile_site_find(p, "transpose.cu", s->line), s);
    assert_ptr_equal(kbd_profile_site_find(p, "examples/transpose/transpose.cu", s->line), s);
    assert_null(kbd_profile_site_find(p, "ranspose.cu", s->line)); /* a suffix counts only after a '/' */
  }
  assert_null(kbd_profile_site_find(p, "transpose.cu", ld->line + 2));
  assert_int_equal(p->shared_read_bytes, 8192);
  assert_int_equal(p->shared_write_bytes, 8192);
  assert_int_equal(p->shared_ideal_wavefronts, 128);
  assert_int_equal(p->shared_wavefronts, 128 * ratio);
  assert_int_equal(p->tma_load_bytes, 8192);
  assert_int_equal(p->tma_store_bytes, 8192);
  assert_int_equal(p->global_read_bytes, 8192);
  assert_int_equal(p->global_write_bytes, 8192);
  assert_int_equal(p->global_sectors, 0);
  assert_int_equal(p->barrier_waits, 12);
  assert_true(p->barrier_blocked >= 6 && p->barrier_blocked <= 10); /* the mbarrier waits may or may not block */
  for (int t = 0; t < KBD_PROFILE_NTYPES; ++t)
    assert_int_equal(p->mma_flops[t], 0);
}

static void pt_env(const char *threads) {
  unsetenv("KBD_CPU_PROFILE");
  unsetenv("KBD_CPU_PROFILE_JSON");
  setenv("KBD_CPU_THREADS", threads, 1);
  setenv("KBD_CPU_SEED", "0", 1);
}

/* The example as built: every shared site costs its ideal. */
static void pt_conflict_free(void **state) {
  (void)state;
  pt_env("1");
  kbd_profile_enable(1);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  pt_one_tile(kbd_profile_last(), 1);
  kbd_profile_enable(-1);
}

/* The unswizzled build: 8 wavefronts per matrix, both ways (derived above). */
static void pt_noswz_conflicts(void **state) {
  (void)state;
  pt_env("1");
  kbd_profile_enable(1);
  assert_int_equal(prof_tr_run_noswz(64, 64, 1), 0);
  pt_one_tile(kbd_profile_last(), 8);
  kbd_profile_enable(-1);
}

/* 129 x 200 on 5 blocks: 3 x 4 = 12 tiles, 128 ideal wavefronts each, conflict-free; the same counts with 1 and 2
 * host threads and another seed (per-worker tables merged at the launch's end). */
static void pt_many_tiles(void **state) {
  (void)state;
  kbd_profile ref;
  memset(&ref, 0, sizeof ref);
  kbd_profile_enable(1);
  for (int run = 0; run < 3; ++run) {
    pt_env(run == 1 ? "2" : "1");
    if (run == 2) setenv("KBD_CPU_SEED", "5", 1);
    assert_int_equal(prof_tr_run_swz(129, 200, 5), 0);
    const kbd_profile *p = kbd_profile_last();
    assert_non_null(p);
    assert_int_equal(p->shared_ideal_wavefronts, 12 * 128);
    assert_int_equal(p->shared_wavefronts, 12 * 128);
    for (int i = 0; i < p->nsites; ++i)
      assert_int_equal(p->sites[i].wavefronts, p->sites[i].ideal);
    assert_int_equal(p->tma_load_bytes, 12 * 8192);
    assert_int_equal(p->tma_store_bytes, 12 * 8192);
    if (run == 0) {
      ref = *p;
    } else {
      assert_int_equal(p->nsites, ref.nsites);
      assert_int_equal(p->shared_read_bytes, ref.shared_read_bytes);
      assert_int_equal(p->barrier_waits, ref.barrier_waits);
    }
  }
  kbd_profile_enable(-1);
}

/* Off unless asked: no profile after a launch without KBD_CPU_PROFILE / _JSON / kbd_profile_enable(1), and
 * kbd_profile_enable(0) wins over the environment. */
static void pt_off_by_default(void **state) {
  (void)state;
  pt_env("1");
  kbd_profile_enable(1);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  assert_non_null(kbd_profile_last());
  kbd_profile_enable(-1);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  assert_null(kbd_profile_last());
  setenv("KBD_CPU_PROFILE", "0", 1);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  assert_null(kbd_profile_last());
  setenv("KBD_CPU_PROFILE", "1", 1);
  kbd_profile_enable(0);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  assert_null(kbd_profile_last());
  kbd_profile_enable(-1);
  unsetenv("KBD_CPU_PROFILE");
}

/* KBD_CPU_PROFILE_JSON appends one line per launch; kbd_profile_print writes the table with the ratio. */
static void pt_json_and_table(void **state) {
  (void)state;
  char path[] = "/tmp/kbd_profile_test_XXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  pt_env("1");
  setenv("KBD_CPU_PROFILE_JSON", path, 1);
  assert_int_equal(prof_tr_run_swz(64, 64, 1), 0);
  assert_int_equal(prof_tr_run_noswz(64, 64, 1), 0);
  unsetenv("KBD_CPU_PROFILE_JSON");
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  static char line[2][8192];
  assert_non_null(fgets(line[0], sizeof line[0], f));
  assert_non_null(fgets(line[1], sizeof line[1], f));
  char extra[16];
  assert_null(fgets(extra, sizeof extra, f)); /* exactly two lines */
  fclose(f);
  remove(path);
  assert_non_null(strstr(line[0], "{\"kernel\": \"tr_transpose\", \"arch\": \"sm_"));
  assert_non_null(strstr(line[1], "{\"kernel\": \"tr_transpose_noswz\""));
  for (int i = 0; i < 2; ++i) {
    assert_non_null(strstr(line[i], "\"grid\": [1, 1, 1], \"block\": 128, \"cluster\": 1"));
    assert_non_null(strstr(line[i], "\"tma_load_bytes\": 8192, \"tma_store_bytes\": 8192"));
    assert_non_null(strstr(line[i], "\"shared_ideal_wavefronts\": 128"));
    assert_non_null(strstr(line[i], "\"mma_flops\": {\"bf16\": 0, \"f16\": 0, \"tf32\": 0, \"e4m3\": 0, \"e5m2\": 0, \"s8\": 0}"));
    assert_non_null(strstr(line[i], "\"op\": \"ldmatrix\", \"bytes_per_lane\": 16, \"instructions\": 16"));
    assert_non_null(strstr(line[i], "\"space\": \"shared\""));
    assert_null(strstr(line[i], "\"sectors\"")); /* shared sites carry no global fields */
    assert_int_equal(line[i][strlen(line[i]) - 1], '\n');
  }
  assert_non_null(strstr(line[0], "\"wavefronts\": 64, \"ideal\": 64}"));
  assert_non_null(strstr(line[1], "\"wavefronts\": 512, \"ideal\": 64}"));

  char buf[4096] = {0};
  FILE *t = tmpfile();
  assert_non_null(t);
  kbd_profile_print(kbd_profile_last(), t);
  rewind(t);
  assert_true(fread(buf, 1, sizeof buf - 1, t) > 0);
  fclose(t);
  assert_non_null(strstr(buf, "kbd profile: kernel tr_transpose_noswz"));
  assert_non_null(strstr(buf, "transpose.cu:"));
  assert_non_null(strstr(buf, "ldmatrix"));
  assert_non_null(strstr(buf, "8.00"));
}

/* The table lists the 20 worst sites and counts the rest (a profile built by hand: 25 sites). */
static void pt_table_top20(void **state) {
  (void)state;
  kbd_profile p;
  kbd_profile_site s[25];
  memset(&p, 0, sizeof p);
  memset(s, 0, sizeof s);
  p.kernel = "k";
  p.arch = "sm_100a";
  p.nsites = 25;
  p.sites = s;
  for (int i = 0; i < 25; ++i) {
    s[i].file = "dir/k.cu";
    s[i].line = 100 + i;
    s[i].what = "kbd_load";
    s[i].space = KBD_PROFILE_GLOBAL;
    s[i].bytes_per_lane = 4;
    s[i].instructions = 1;
    s[i].sectors = 4;
    s[i].ideal = 4;
    s[i].lines = 1;
  }
  char buf[8192] = {0};
  FILE *t = tmpfile();
  assert_non_null(t);
  kbd_profile_print(&p, t);
  rewind(t);
  assert_true(fread(buf, 1, sizeof buf - 1, t) > 0);
  fclose(t);
  assert_non_null(strstr(buf, "k.cu:119 kbd_load"));
  assert_null(strstr(buf, "k.cu:120 kbd_load"));
  assert_non_null(strstr(buf, "... and 5 more sites"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pt_conflict_free),  cmocka_unit_test(pt_noswz_conflicts), cmocka_unit_test(pt_many_tiles),
      cmocka_unit_test(pt_off_by_default), cmocka_unit_test(pt_json_and_table),  cmocka_unit_test(pt_table_top20),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
