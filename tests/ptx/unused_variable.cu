/* unused_variable.cu - checker self-test: a front-end warning (#177-D, promoted to an error by
 * -Werror all-warnings) must make tools/kbd-ptx-check.sh fail with exit 5. */
__global__ void unused_variable_kernel(float *out) {
  int unused = 3;
  out[threadIdx.x] = 1.0f;
}
