/* gpu_query.c - print the compute capability of CUDA device 0 as <major><minor> ("90" for H100/H200,
 * "100" for B200) so tests/gpu can run the matching <example>_sm<cc>a program (an sm_XXa cubin runs only
 * on exactly that compute capability). Exit 77 (CTest SKIP_RETURN_CODE) when there is no device or no
 * driver; any other CUDA error fails (exit 1): a broken driver must not look like a skip.
 */
#include <cuda_runtime.h>
#include <stdio.h>

int main(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) {
    fprintf(stderr, "gpu_query: no CUDA device (%s)\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    return 77;
  }
  int major = 0, minor = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (e != cudaSuccess) {
    fprintf(stderr, "gpu_query: CUDA error: %s (%s)\n", cudaGetErrorString(e), cudaGetErrorName(e));
    return 1;
  }
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    fprintf(stderr, "gpu_query: device 0: %s, compute capability %d.%d\n", prop.name, major, minor);
  printf("%d%d\n", major, minor);
  return 0;
}
