/* stream_order_main.c - device reduce and scan on a cudaStreamNonBlocking stream (issue 6, item 9).
 *
 * A non-blocking stream does not synchronise with the legacy default stream, so a workspace reset that
 * went to the default stream (a plain cudaMemset) could run while the previous reduce or scan on the
 * caller's stream still uses the workspace: a lost ticket hangs the last-block reduction, a stale flag
 * corrupts the look-back. Here every step of four rounds - refill the input, reduce (sum, max), scan
 * (exclusive sum) into per-round outputs - is queued on one non-blocking stream with ONE shared workspace
 * and no synchronisation in between; only then the stream is synchronised and every result is checked
 * against a host reference (i32: exact). The CPU program runs the same sequence (its launches are
 * synchronous); the GPU programs skip with 77 when no device is present.
 */
#include <stdio.h>
#include <stdlib.h>

#include "stream_order.h"

#ifndef KBD_CPU
#include <cuda_runtime.h>
#endif

#define ROUNDS 4

static int check(long long n) {
  void *stream = NULL;
#ifndef KBD_CPU
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 1;
  stream = s;
#endif
  const size_t wsb = kbd_device_scan_workspace_bytes(n) > kbd_device_reduce_workspace_bytes(n)
                         ? kbd_device_scan_workspace_bytes(n)
                         : kbd_device_reduce_workspace_bytes(n);
  int32_t *x, *sums, *maxs, *scans, *ws;
  KBD_CHECK(kbd_malloc((void **)&x, sizeof(int32_t) * (size_t)n));
  KBD_CHECK(kbd_malloc((void **)&sums, sizeof(int32_t) * ROUNDS));
  KBD_CHECK(kbd_malloc((void **)&maxs, sizeof(int32_t) * ROUNDS));
  KBD_CHECK(kbd_malloc((void **)&scans, sizeof(int32_t) * (size_t)n * ROUNDS));
  KBD_CHECK(kbd_malloc((void **)&ws, wsb));
  const unsigned blocks = (unsigned)((n + 255) / 256);
  for (int32_t r = 0; r < ROUNDS; ++r) {
    so_fill_params fp = {x, n, r};
    KBD_CHECK(so_fill(kbd_cfg(kbd_dim(blocks, 1, 1), 0, stream), fp));
    KBD_CHECK(kbd_device_reduce_i32(x, n, sums + r, KBD_RED_SUM, ws, stream));
    KBD_CHECK(kbd_device_reduce_i32(x, n, maxs + r, KBD_RED_MAX, ws, stream));
    KBD_CHECK(kbd_device_scan_i32(x, scans + (size_t)r * (size_t)n, n, KBD_RED_SUM, 1, ws, stream));
  }
#ifndef KBD_CPU
  if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
#endif
  int32_t hs[ROUNDS], hm[ROUNDS];
  int32_t *hscan = (int32_t *)malloc(sizeof(int32_t) * (size_t)n * ROUNDS);
  if (!hscan) return 1;
  KBD_CHECK(kbd_copy_to_host(hs, sums, sizeof hs));
  KBD_CHECK(kbd_copy_to_host(hm, maxs, sizeof hm));
  KBD_CHECK(kbd_copy_to_host(hscan, scans, sizeof(int32_t) * (size_t)n * ROUNDS));
  long long bad = 0;
  for (int32_t r = 0; r < ROUNDS; ++r) {
    uint32_t run = 0; /* i32 sums wrap, as documented */
    int32_t mx = INT32_MIN;
    for (long long i = 0; i < n; ++i) {
      bad += hscan[(size_t)r * (size_t)n + (size_t)i] != (int32_t)run;
      run += (uint32_t)so_value(i, r);
      mx = so_value(i, r) > mx ? so_value(i, r) : mx;
    }
    bad += hs[r] != (int32_t)run;
    bad += hm[r] != mx;
  }
  printf("stream_order: n = %lld, %d rounds on one %s stream sharing one workspace: %lld mismatches -> %s\n", n,
         ROUNDS,
#ifdef KBD_CPU
         "(CPU, synchronous)",
#else
         "non-blocking",
#endif
         bad, bad ? "FAILED" : "OK");
  free(hscan);
  KBD_CHECK(kbd_free(x));
  KBD_CHECK(kbd_free(sums));
  KBD_CHECK(kbd_free(maxs));
  KBD_CHECK(kbd_free(scans));
  KBD_CHECK(kbd_free(ws));
#ifndef KBD_CPU
  cudaStreamDestroy(s);
#endif
  return bad ? 1 : 0;
}

int main(void) {
  if (!kbd_device_available()) {
    printf("stream_order: no CUDA device present; nothing to run\n");
    return 77;
  }
  int rc = 0;
  const long long sizes[] = {1, 4097, 300000};
  for (int k = 0; k < 3; ++k)
    rc |= check(sizes[k]);
  return rc;
}
