/* The CPU emulation of shfl.sync (kbd_cpu_shfl_sync, kbd/ptx/shfl.h) against the PTX ISA pseudo-code written
 * out here (ptx-reference 6.1): every mode, every lane operand b (with junk in the high bits), whole-warp c
 * (the fast path kbd itself issues) and segmented c (CUDA's width 2..32), in place and out of place. */
#include <kbd/tile.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* PTX: bval = b & 31; cval = c & 31; segmask = (c >> 8) & 31; maxLane = (lane & segmask) | (cval & ~segmask);
 * minLane = lane & segmask; up: j = lane - bval, pval = j >= maxLane; down: j = lane + bval, pval = j <= maxLane;
 * bfly: j = lane ^ bval, pval = j <= maxLane; idx: j = minLane | (bval & ~segmask), pval = j <= maxLane;
 * if (!pval) j = lane; d = a[j]. */
static void ref_shfl(int mode, uint32_t *d, const uint32_t *a, uint32_t b, uint32_t c) {
  const int bval = (int)(b & 31u), cval = (int)(c & 31u), seg = (int)((c >> 8) & 31u);
  for (int lane = 0; lane < 32; ++lane) {
    const int maxl = (lane & seg) | (cval & ~seg), minl = lane & seg;
    int j, pval;
    if (mode == KBD_SHFL_UP)
      j = lane - bval, pval = j >= maxl;
    else if (mode == KBD_SHFL_DOWN)
      j = lane + bval, pval = j <= maxl;
    else if (mode == KBD_SHFL_BFLY)
      j = lane ^ bval, pval = j <= maxl;
    else
      j = minl | (bval & ~seg), pval = j <= maxl;
    d[lane] = a[pval ? j : lane];
  }
}

static void check(int mode, uint32_t b, uint32_t c) {
  uint32_t a[32], want[32], out[32], inplace[32];
  for (int l = 0; l < 32; ++l)
    a[l] = 0x1000u * (uint32_t)l + 7u * b + (uint32_t)mode;
  ref_shfl(mode, want, a, b, c);
  memset(out, 0xEE, sizeof out);
  kbd_cpu_shfl_sync(mode, out, a, NULL, b, c, KBD_SHFL_FULL, __FILE__, __LINE__);
  memcpy(inplace, a, sizeof a);
  kbd_cpu_shfl_sync(mode, inplace, inplace, NULL, b, c, KBD_SHFL_FULL, __FILE__, __LINE__);
  for (int l = 0; l < 32; ++l) {
    if (out[l] != want[l]) fail_msg("mode %d b %u c 0x%x lane %d: %08x vs %08x", mode, b, c, l, out[l], want[l]);
    if (inplace[l] != want[l]) fail_msg("in place: mode %d b %u c 0x%x lane %d", mode, b, c, l);
  }
}

static void test_whole_warp(void **st) {
  (void)st;
  for (int mode = KBD_SHFL_UP; mode <= KBD_SHFL_IDX; ++mode)
    for (uint32_t b = 0; b < 64; ++b)
      check(mode, b | (b & 32u ? 0xffffffe0u : 0u), mode == KBD_SHFL_UP ? 0u : 0x1fu);
}

/* The other clamp for each mode (c = 0x1f for up, 0 for the rest): not CUDA's encoding, but legal PTX with
 * its own meaning (up: only lanes whose source is >= 31 move; down/bfly/idx: clamped at lane 0). */
static void test_other_clamp(void **st) {
  (void)st;
  for (int mode = KBD_SHFL_UP; mode <= KBD_SHFL_IDX; ++mode)
    for (uint32_t b = 0; b < 32; ++b)
      check(mode, b, mode == KBD_SHFL_UP ? 0x1fu : 0u);
}

static void test_segmented(void **st) {
  (void)st;
  for (int w = 2; w <= 32; w *= 2)
    for (int mode = KBD_SHFL_UP; mode <= KBD_SHFL_IDX; ++mode)
      for (uint32_t b = 0; b < 32; ++b) {
        const uint32_t c = ((uint32_t)(32 - w) << 8) | (mode == KBD_SHFL_UP ? 0u : 0x1fu);
        check(mode, b, c);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_whole_warp), cmocka_unit_test(test_other_clamp),
                                     cmocka_unit_test(test_segmented)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
