/* device_cub.cu - CUB DeviceReduce::Sum / DeviceScan::InclusiveSum on the same data, timed with CUDA
 * events: the reference the issue asks kbd's device-wide reduce and scan to reach 90% of. GPU programs
 * only (C++, CUB from the toolkit's CCCL). */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

extern "C" int bench_cub_f32(int scan, const float *in, float *out, long long n, int iters, float *ms_per_call) {
  void *tmp = nullptr;
  size_t tmp_bytes = 0;
  if (scan)
    cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, (int)n);
  else
    cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int)n);
  if (cudaMalloc(&tmp, tmp_bytes) != cudaSuccess) return 1;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int warm = 0; warm < 2; ++warm) {
    if (scan)
      cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, (int)n);
    else
      cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int)n);
  }
  cudaEventRecord(a);
  for (int i = 0; i < iters; ++i) {
    if (scan)
      cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, (int)n);
    else
      cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int)n);
  }
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  *ms_per_call = ms / (float)iters;
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(tmp);
  return cudaGetLastError() != cudaSuccess;
}
