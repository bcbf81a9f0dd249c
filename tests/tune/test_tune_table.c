/* test_tune_table.c - the cost model's table (include/kbd/tune_table.h, written by tests/tune/gen_tune_table.py) is
 * today's tests/sass_budget/budgets.txt: every MMA loop row there (mma > 0) is in the table with the same mma, tc,
 * iter and short, and the table has no other row. A budget re-measured without regenerating the table fails here.
 */
#include <kbd/tune.h> /* first: kbd/config.h sets the feature macros the system headers read */
#include <kbd/tune_table.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* The value of key=<int> among the row's words, or -1 ("-" or absent). */
static int tt_field(const char *row, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, " %s=", key);
  const char *p = strstr(row, pat);
  if (!p || p[strlen(pat)] == '-') return -1;
  return atoi(p + strlen(pat));
}

static void test_table_matches_budgets(void **state) {
  (void)state;
  FILE *f = fopen(KBD_TUNE_BUDGETS, "r");
  if (!f) fail_msg("cannot open %s", KBD_TUNE_BUDGETS);
  char line[2048];
  int rows = 0, seen[KBD_TUNE_LOOPS];
  memset(seen, 0, sizeof seen);
  while (fgets(line, sizeof line, f)) {
    char kernel[64], arch[16], loop[16];
    if (line[0] == '#' || sscanf(line, "%63s %15s %15s", kernel, arch, loop) != 3) continue;
    if (!strcmp(kernel, "allow") || !strcmp(kernel, "nvcc") || strncmp(arch, "sm_", 3) != 0) continue;
    const int mma = tt_field(line, "mma"), tc = tt_field(line, "tc");
    if (mma <= 0 || tc < 0) continue; /* the model times MMA loops only */
    const int a = atoi(arch + 3);
    const kbd_tune_loop *l = kbd_tune_loop_find(kernel, a, loop);
    if (!l)
      fail_msg("%s %s %s is in budgets.txt but not in kbd/tune_table.h: run tests/tune/gen_tune_table.py", kernel, arch,
               loop);
    seen[l - kbd_tune_loops] = 1;
    if (l->mma != mma || l->tc != tc || l->iter != tt_field(line, "iter") || l->shortest != tt_field(line, "short"))
      fail_msg("%s %s %s: the table has mma %d tc %d iter %d short %d, budgets.txt mma %d tc %d iter %d short %d: run "
               "tests/tune/gen_tune_table.py",
               kernel, arch, loop, l->mma, l->tc, l->iter, l->shortest, mma, tc, tt_field(line, "iter"),
               tt_field(line, "short"));
    ++rows;
  }
  fclose(f);
  for (int i = 0; i < KBD_TUNE_LOOPS; ++i)
    if (!seen[i])
      fail_msg("kbd/tune_table.h has %s sm_%d %s, which budgets.txt no longer lists", kbd_tune_loops[i].kernel,
               kbd_tune_loops[i].arch, kbd_tune_loops[i].loop);
  assert_int_equal(rows, KBD_TUNE_LOOPS);
  /* the rows the GEMM's model reads */
  assert_non_null(kbd_tune_loop_find("gemm_kernel", 90, "main"));
  assert_non_null(kbd_tune_loop_find("gemm_kernel", 100, "main"));
  assert_non_null(kbd_tune_loop_find("gemm_pair_bf16_rc", 100, "main"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_table_matches_budgets)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
