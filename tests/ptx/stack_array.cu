/* stack_array.cu - checker self-test: a dynamically indexed 1 KiB array cannot live in registers, so
 * ptxas gives it a stack frame in local memory (no register spill): tools/kbd-ptx-check.sh must fail
 * with exit 4. (A small one, 32 floats, ptxas still promotes to registers.) */
#define STACK_N 256

__global__ void stack_array_kernel(const float *in, float *out, int k) {
  float v[STACK_N];
  const int t = (int)threadIdx.x;
  float s = 0.f;
  for (int i = 0; i < STACK_N; ++i) v[i] = s += in[t + i * 128]; /* running sums: no load to forward */
  out[t] = v[(k + t) & (STACK_N - 1)];
}
