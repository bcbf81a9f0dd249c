/* tests/tma/gpu_tensormap_agree.cu - kbd_tensor_map_validate against the real driver (label gpu).
 *
 * Every descriptor of tmap_cases.h and a baseline for every rank x swizzle goes through both
 * kbd_tensor_map_validate and the driver's cuTensorMapEncodeTiled (fetched here directly through the runtime's
 * entry point, with the descriptor exactly as built, so kbd's encode path is not in the way). They must accept
 * and reject the same cases. Report-only (printed, never a failure): cases tagged TMAP_KBD_ONLY (a rule kbd
 * adds on purpose) and, on a device before sm_100, cases tagged TMAP_SM100 (Blackwell-only types and swizzles).
 * For every case both accept, kbd_tensor_map_encode must succeed and produce the driver's 128 bytes, and the
 * map must reach a kernel intact and aligned as a member of a __grid_constant__ parameter.
 * Without a device or driver: exit 77 (CTest skip).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "kbd/tensormap.h"
#include "tmap_cases.h"

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct map_params {
  int n;
  kbd_tensor_map map;
};

/* The map as the kernel sees it in the parameter space, and where: its generic address modulo 128. */
__global__ void read_map(const __grid_constant__ map_params p, unsigned long long *out) {
  const unsigned i = threadIdx.x;
  if (i < 16) out[i] = p.map.opaque[i];
  if (i == 16) out[16] = (unsigned long long)(uintptr_t)&p.map % 128u;
  if (i == 17) out[17] = (unsigned long long)p.n;
}

static encode_fn g_encode;
static int g_cc_major;
static int g_fail, g_checked, g_reported;

static CUresult driver_encode(const kbd_tensor_map_desc *d, CUtensorMap *m) {
  /* 8 entries, zero past the descriptor's 5: a rank-6 case must not make the driver read past an array. */
  cuuint64_t dims[8], strides[8];
  cuuint32_t box[8], es[8];
  memset(dims, 0, sizeof dims);
  memset(strides, 0, sizeof strides);
  memset(box, 0, sizeof box);
  memset(es, 0, sizeof es);
  for (unsigned i = 0; i < 5; i++) {
    dims[i] = d->global_dims[i];
    box[i] = d->box_dims[i];
    es[i] = d->element_strides[i];
    if (i < 4) strides[i] = d->global_strides[i];
  }
  return g_encode(m, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->global_address, dims, strides, box,
                  es, (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                  (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
}

static void check_one(const char *name, const kbd_tensor_map_desc *d, unsigned tags, unsigned long long *dev_out) {
  kbd_status v = kbd_tensor_map_validate(d);
  CUtensorMap m;
  memset(&m, 0, sizeof m);
  const CUresult r = driver_encode(d, &m);
  const int kbd_ok_ = kbd_ok(v), drv_ok = r == CUDA_SUCCESS;
  const int report_only = (tags & TMAP_KBD_ONLY) || ((tags & TMAP_SM100) && g_cc_major < 10);
  if (kbd_ok_ != drv_ok) {
    if (report_only) {
      g_reported++;
      printf("note  %-40s kbd %s, driver %s (%d) [report only: %s]\n", name, kbd_ok_ ? "accepts" : "rejects",
             drv_ok ? "accepts" : "rejects", (int)r, (tags & TMAP_KBD_ONLY) ? "kbd-only rule" : "sm_100 feature");
    } else {
      g_fail++;
      printf("FAIL  %-40s kbd %s, driver %s (CUresult %d)%s%s\n", name, kbd_ok_ ? "accepts" : "rejects",
             drv_ok ? "accepts" : "rejects", (int)r, kbd_ok_ ? "" : "; kbd: ", kbd_ok_ ? "" : v.msg);
    }
    return;
  }
  g_checked++;
  if (!kbd_ok_) return;
  /* Both accept: kbd's encode yields the driver's bytes, and the map rides a kernel parameter intact. */
  kbd_tensor_map km;
  kbd_status e = kbd_tensor_map_encode(&km, d);
  if (!kbd_ok(e)) {
    g_fail++;
    printf("FAIL  %-40s kbd_tensor_map_encode: %s\n", name, e.msg);
    return;
  }
  if (memcmp(&km, &m, sizeof m)) {
    g_fail++;
    printf("FAIL  %-40s kbd_tensor_map_encode's 128 bytes differ from the driver's\n", name);
    return;
  }
  map_params p;
  memset(&p, 0, sizeof p);
  p.n = 12345;
  p.map = km;
  unsigned long long host[18];
  read_map<<<1, 32>>>(p, dev_out);
  cudaError_t ce = cudaMemcpy(host, dev_out, sizeof host, cudaMemcpyDeviceToHost);
  if (ce != cudaSuccess) {
    g_fail++;
    printf("FAIL  %-40s kernel: %s\n", name, cudaGetErrorString(ce));
    return;
  }
  if (memcmp(host, &km, 128) || host[16] % 64 || host[17] != 12345) {
    g_fail++;
    printf("FAIL  %-40s the __grid_constant__ member arrived changed or misaligned (address %% 128 = %llu)\n", name,
           host[16]);
  }
}

int main(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) {
    printf("SKIP: no CUDA device (%s)\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    return 77;
  }
  if (e != cudaSuccess || cudaFree(0) != cudaSuccess ||
      cudaDeviceGetAttribute(&g_cc_major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess) {
    printf("FAIL: CUDA runtime: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  void *fn = NULL;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
  e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
    printf("FAIL: cannot get cuTensorMapEncodeTiled from the driver (%s, query result %d)\n", cudaGetErrorString(e),
           (int)q);
    return 1;
  }
  memcpy(&g_encode, &fn, sizeof g_encode);
  void *base = NULL;
  unsigned long long *dev_out = NULL;
  if (cudaMalloc(&base, 1 << 20) != cudaSuccess || cudaMalloc((void **)&dev_out, 18 * sizeof *dev_out) != cudaSuccess) {
    printf("FAIL: cudaMalloc\n");
    return 1;
  }
  printf("device compute capability %d.x; %zu table cases over %zu rules, 35 baselines\n", g_cc_major,
         (size_t)TMAP_NCASES, (size_t)TMAP_NRULES);
  for (unsigned rank = 1; rank <= 5; rank++)
    for (int sw = KBD_TMAP_SWIZZLE_NONE; sw <= KBD_TMAP_SWIZZLE_128B_ATOM_64B; sw++) {
      kbd_tensor_map_desc d;
      tmap_baseline(&d, rank, sw, base);
      char name[64];
      snprintf(name, sizeof name, "baseline rank %u swizzle %s", rank, kbd_tmap_swizzle_name(sw));
      check_one(name, &d, sw >= KBD_TMAP_SWIZZLE_128B_ATOM_32B ? (unsigned)TMAP_SM100 : 0u, dev_out);
    }
  for (size_t i = 0; i < TMAP_NCASES; i++) {
    kbd_tensor_map_desc d;
    tmap_build(&d, &tmap_cases[i], base);
    check_one(tmap_cases[i].name, &d, tmap_cases[i].tags, dev_out);
  }
  cudaFree(dev_out);
  cudaFree(base);
  printf("%d cases agree, %d disagree, %d reported only\n", g_checked, g_fail, g_reported);
  return g_fail ? 1 : 0;
}
