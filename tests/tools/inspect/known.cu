/* A kernel whose resources are known by construction, for tests/tools/inspect (kbd-inspect on it):
 *   static shared memory  4096 bytes (buf: 1024 floats)
 *   threads per block     256 (__launch_bounds__ -> .maxntid 256), .minnctapersm 2
 *   SASS                  1 STS, 2 LDS (volatile: ptxas keeps each access), 1 STG, 1 BAR (__syncthreads) */
extern "C" __global__ void __launch_bounds__(256, 2) inspect_known(float *out) {
  __shared__ float buf[1024];
  volatile float *v = buf;
  v[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = v[(threadIdx.x + 1) & 1023] + v[(threadIdx.x + 2) & 1023];
}
