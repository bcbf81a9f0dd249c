/* wgmma_call.cu - checker self-test (sm_90a): a printf between wgmma.mma_async and its wait makes ptxas
 * serialize the warpgroup MMAs. nvcc 13.0 reports that only as "ptxas info : (C75xx) Potential Performance
 * Loss", which -Werror does not catch: tools/kbd-ptx-check.sh must fail with exit 5. */
#include <cstdio>

__global__ void wgmma_call_kernel(unsigned long long desc_a, unsigned long long desc_b, float *out) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "l"(desc_a), "l"(desc_b));
  printf("a call inside the wgmma region\n");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}
