/* race_cpu.c - cost of the CPU machine's shadow state and race checker on shared-memory traffic.
 *
 *   race_cpu [--blocks B] [--reps R] [--only 0|1] [--smoke]     (--only: one mode, for callgrind counts)
 *
 * The kernel is a shared-memory ring (the exchange pattern of reductions and of the upcoming TMA
 * pipelines): each of 8 warps stores a 32 x 32 f32 tile (4 KiB) to its slot, all warps meet at a barrier,
 * each loads its neighbour's slot, adds it, and meets the trailing barrier; 8 rounds per block. It runs
 * with KBD_CPU_RACECHECK=1 (the default: bounds, never-written bytes, races) and =0 (bounds and
 * never-written bytes only) and prints BENCH lines and RATIO = on / off. The target is <= 2.
 */
#define _DEFAULT_SOURCE 1 /* clock_gettime, setenv under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kbd/tile.h>

#define RB_WARPS 8
#define RB_ROUNDS 8

typedef struct {
  float *out;
  long long n;
} rb_params;

KBD_KERNEL(race_ring, RB_WARPS * 32, rb_params) {
  const int w = kbd_warp_id();
  KBD_SHARED(float, ring, RB_WARPS * 32 * 32);
  KBD_TILE(f32, 32, 32, KBD_WARP) a, b;
  kbd_fill(a, (float)w);
  for (int r = 0; r < RB_ROUNDS; ++r) {
    kbd_store_smem(ring + w * 1024, a, 32);
    kbd_sync();
    kbd_load_smem(b, ring + ((w + 1) % RB_WARPS) * 1024, 32);
    kbd_add(a, a, b);
    kbd_sync();
  }
  kbd_store2d(p.out, a, p.n, 32, 32, (long long)(kbd_block_x() * RB_WARPS + (unsigned)w) * 32, 0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double run(const char *check, unsigned blocks, int reps, float *out, long long n) {
  setenv("KBD_CPU_RACECHECK", check, 1);
  rb_params p = {out, n};
  KBD_CHECK(race_ring(kbd_cfg_1d(blocks), p)); /* warm the cached block state */
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_s();
    KBD_CHECK(race_ring(kbd_cfg_1d(blocks), p));
    const double t = now_s() - t0;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  unsigned blocks = 256;
  int reps = 5, only = -1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--smoke"))
      blocks = 2, reps = 1;
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
      blocks = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = atoi(argv[++i]);
  }
  const long long n = (long long)blocks * RB_WARPS * 32;
  float *out = NULL;
  KBD_CHECK(kbd_malloc((void **)&out, (size_t)n * 32 * sizeof(float)));
  const double on = only == 0 ? 0 : run("1", blocks, reps, out, n);
  const double off = only == 1 ? 0 : run("0", blocks, reps, out, n);
  /* Shared-memory bytes moved per launch: per warp and round one 4 KiB store and one 4 KiB load. */
  const double bytes = (double)blocks * RB_WARPS * RB_ROUNDS * 2 * 4096;
  printf("BENCH race_ring racecheck=1 blocks=%u time_ms=%.3f smem_GBps=%.3f\n", blocks, on * 1e3, bytes / on * 1e-9);
  printf("BENCH race_ring racecheck=0 blocks=%u time_ms=%.3f smem_GBps=%.3f\n", blocks, off * 1e3, bytes / off * 1e-9);
  if (only < 0) printf("RATIO race_ring on/off = %.2f\n", on / off);
  KBD_CHECK(kbd_free(out));
  return 0;
}
