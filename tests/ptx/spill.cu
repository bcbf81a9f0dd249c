/* spill.cu - checker self-test: 64 values live at once. Clean as is (about 70 registers); with
 * -maxrregcount=24 ptxas must spill, and tools/kbd-ptx-check.sh must fail with exit 3. */
#define SPILL_N 64

__global__ void spill_kernel(const float *in, float *out) {
  float v[SPILL_N];
  const int t = (int)threadIdx.x;
#pragma unroll
  for (int i = 0; i < SPILL_N; ++i) v[i] = in[t + i * 128];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < SPILL_N; ++i)
#pragma unroll
    for (int j = 0; j < SPILL_N; j += 8) s += v[i] * v[(i + j) % SPILL_N];
  out[t] = s;
}
