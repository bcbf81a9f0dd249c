/* gpu_info.c - what tools/gpu-check.sh needs to know about CUDA device 0, as key=value lines on stdout.
 *
 * Host code only (no kernel), so it runs on any driver new enough for the toolkit's runtime: built with plain
 * `nvcc gpu_info.c`, before anything arch-specific. Exit 0 with the lines; 77 when there is no device or the driver
 * cannot run this toolkit's runtime (the check then skips: nothing to prove here); 1 on any other CUDA error, which
 * must not look like a skip.
 */
#include <cuda_runtime.h>
#include <stdio.h>

static int attr(enum cudaDeviceAttr a, int *v) { return cudaDeviceGetAttribute(v, a, 0) == cudaSuccess; }

int main(void) {
  int count = 0, driver = 0, runtime = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (e == cudaErrorInsufficientDriver && driver == 0) {
    printf("reason=no CUDA driver on this machine\n");
    return 77;
  }
  if (e == cudaErrorInsufficientDriver) {
    printf("reason=the driver (CUDA %d.%d) is older than this toolkit's runtime (CUDA %d.%d)\n", driver / 1000,
           driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    return 77;
  }
  if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
    printf("reason=no CUDA device (%s)\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    return 77;
  }
  if (e != cudaSuccess) {
    printf("reason=CUDA error %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
  }
  struct cudaDeviceProp p;
  e = cudaGetDeviceProperties(&p, 0);
  if (e != cudaSuccess) {
    printf("reason=cudaGetDeviceProperties: %s\n", cudaGetErrorString(e));
    return 1;
  }
  int sm_khz = 0, mem_khz = 0, bus = 0, l2 = 0, smem_optin = 0;
  attr(cudaDevAttrClockRate, &sm_khz);
  attr(cudaDevAttrMemoryClockRate, &mem_khz);
  attr(cudaDevAttrGlobalMemoryBusWidth, &bus);
  attr(cudaDevAttrL2CacheSize, &l2);
  attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, &smem_optin);
  printf("name=%s\n", p.name);
  printf("cc=%d%d\n", p.major, p.minor);
  printf("devices=%d\n", count);
  printf("sms=%d\n", p.multiProcessorCount);
  printf("sm_clock_mhz=%d\n", sm_khz / 1000);
  printf("mem_clock_mhz=%d\n", mem_khz / 1000);
  printf("mem_bus_bits=%d\n", bus);
  /* DDR: two transfers per memory clock */
  printf("mem_peak_gbs=%.0f\n", 2.0 * mem_khz * 1e3 * (bus / 8) * 1e-9);
  printf("mem_gib=%.1f\n", (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  printf("l2_mib=%.1f\n", l2 / (1024.0 * 1024.0));
  printf("smem_optin_kib=%d\n", smem_optin / 1024);
  printf("driver=%d.%d\n", driver / 1000, driver % 1000 / 10);
  printf("runtime=%d.%d\n", runtime / 1000, runtime % 1000 / 10);
  return 0;
}
