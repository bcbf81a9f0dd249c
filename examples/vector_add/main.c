/* main.c - host side of vector_add: plain C, the same for the CPU-emulation and the GPU programs.
 * Usage: vector_add_<mode> [n] [--dump file]
 *   n       default 1,000,003: not a multiple of the tile, so the tail is masked
 *   --dump  write c as raw f32 to file (tests/gpu compares the GPU and CPU dumps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vector_add.h"

int main(int argc, char **argv) {
  long long n = 1000003;
  const char *dump = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
      dump = argv[++i];
    else
      n = atoll(argv[i]);
  }
  if (n <= 0) {
    fprintf(stderr, "usage: %s [n > 0] [--dump file]\n", argv[0]);
    return 2;
  }
  if (!kbd_device_available()) {
    printf("vector_add: no CUDA device present; nothing to run\n");
    return 77; /* the conventional "skipped" exit code (CTest SKIP_RETURN_CODE) */
  }
  const size_t bytes = (size_t)n * sizeof(float);
  float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
  if (!ha || !hb || !hc) return 1;
  for (long long i = 0; i < n; ++i) {
    ha[i] = (float)(i % 1000) * 0.5f;
    hb[i] = 1.0f / (float)(1 + i % 7);
  }

  float *da, *db, *dc;
  KBD_CHECK(kbd_malloc((void **)&da, bytes));
  KBD_CHECK(kbd_malloc((void **)&db, bytes));
  KBD_CHECK(kbd_malloc((void **)&dc, bytes));
  KBD_CHECK(kbd_copy_to_device(da, ha, bytes));
  KBD_CHECK(kbd_copy_to_device(db, hb, bytes));

  vector_add_params p = {da, db, dc, n};
  KBD_CHECK(vector_add(kbd_cfg_1d(kbd_blocks_for((size_t)n, VECTOR_ADD_TILE)), p));
  KBD_CHECK(kbd_device_sync());
  KBD_CHECK(kbd_copy_to_host(hc, dc, bytes));

  /* f32 addition is correctly rounded on both paths, so the check is exact. */
  long long bad = 0;
  for (long long i = 0; i < n; ++i)
    if (hc[i] != ha[i] + hb[i]) ++bad;
#ifdef KBD_CPU
  const char *mode = "CPU emulation";
#else
  const char *mode = "GPU";
#endif
  printf("vector_add (%s): n = %lld, %u blocks of %d, mismatches = %lld -> %s\n", mode, n,
         kbd_blocks_for((size_t)n, VECTOR_ADD_TILE), VECTOR_ADD_TILE, bad, bad ? "FAILED" : "OK");
  if (dump) {
    FILE *f = fopen(dump, "wb");
    int written = f && fwrite(hc, sizeof(float), (size_t)n, f) == (size_t)n;
    if (f && fclose(f) != 0) written = 0;
    if (!written) {
      fprintf(stderr, "vector_add: cannot write %s\n", dump);
      bad = 1;
    }
  }
  KBD_CHECK(kbd_free(da));
  KBD_CHECK(kbd_free(db));
  KBD_CHECK(kbd_free(dc));
  free(ha);
  free(hb);
  free(hc);
  return bad ? 1 : 0;
}
