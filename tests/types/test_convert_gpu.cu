/* types_convert_gpu - on the GPU, every PTX conversion of kbd/convert.h against kbd's software path
 * (kbd_cvt_sw_*, the code the CPU build runs, here compiled for the device), over ALL inputs:
 * every f32 bit pattern -> f16, bf16, e4m3, e5m2, i32; every i32 -> f32; every f16/bf16 and fp8
 * pattern -> f32; and the packed pair forms f32 x 2 -> bf16x2 / f16x2 with every pattern in the upper half (and a
 * scrambled one in the lower); and ex2.approx.ftz.f32 (kbd_hw_ex2_ftz_f32) within 2 ulp of 2^x, with its flushes, over
 * every pattern. Together with types_convert_ref (software path == CUDA toolkit host code) this
 * proves device == host bit for bit for the conversions, NaN patterns included (the exponential is an approximation
 * on both sides: its bound, not its bits, is checked).
 * Exit codes: 0 all equal, 1 mismatch or CUDA error, 77 no usable GPU (ctest SKIP_RETURN_CODE). */
#include <kbd/convert.h>

#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

enum {
  K_F16,
  K_BF16,
  K_E4M3,
  K_E5M2,
  K_I32,
  K_I32F,
  K_F16F,
  K_BF16F,
  K_E4M3F,
  K_E5M2F,
  K_BF16X2,
  K_F16X2,
  K_EX2,
  K_COUNT
};
static const char *const k_names[K_COUNT] = {"f32->f16",    "f32->bf16",  "f32->e4m3", "f32->e5m2", "f32->i32",
                                             "i32->f32",    "f16->f32",   "bf16->f32", "e4m3->f32", "e5m2->f32",
                                             "f32->bf16x2", "f32->f16x2", "ex2.ftz"};
#define K_SAMPLES 8

struct report {
  unsigned long long count[K_COUNT];
  unsigned int nan_in[K_COUNT]; /* mismatches whose input or reference output is a NaN */
  unsigned int sample_n[K_COUNT];
  unsigned int sample_in[K_COUNT][K_SAMPLES];
  unsigned int sample_ptx[K_COUNT][K_SAMPLES];
  unsigned int sample_sw[K_COUNT][K_SAMPLES];
};

static __device__ void note(struct report *r, int k, unsigned int in, unsigned int ptx, unsigned int sw, int nan) {
  atomicAdd(&r->count[k], 1ull);
  if (nan) {
    atomicAdd(&r->nan_in[k], 1u);
  }
  unsigned int s = atomicAdd(&r->sample_n[k], 1u);
  if (s < K_SAMPLES) {
    r->sample_in[k][s] = in;
    r->sample_ptx[k][s] = ptx;
    r->sample_sw[k][s] = sw;
  }
}

static __device__ void check(struct report *r, int k, unsigned int in, unsigned int ptx, unsigned int sw, int nan) {
  if (ptx != sw) {
    note(r, k, in, ptx, sw, nan);
  }
}

static __device__ int is_nan32(unsigned int u) { return (u & 0x7fffffffu) > 0x7f800000u; }

__global__ void all_patterns(struct report *r, unsigned long long base) {
  unsigned long long i = base + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  unsigned int u = (unsigned int)i;
  float x = __uint_as_float(u);
  int n = is_nan32(u);
  check(r, K_F16, u, kbd_f32_to_f16(x).bits, kbd_cvt_sw_f32_to_f16(x).bits, n);
  check(r, K_BF16, u, kbd_f32_to_bf16(x).bits, kbd_cvt_sw_f32_to_bf16(x).bits, n);
  check(r, K_E4M3, u, kbd_f32_to_e4m3(x).bits, kbd_cvt_sw_f32_to_e4m3(x).bits, n);
  check(r, K_E5M2, u, kbd_f32_to_e5m2(x).bits, kbd_cvt_sw_f32_to_e5m2(x).bits, n);
  check(r, K_I32, u, (unsigned int)kbd_f32_to_i32(x), (unsigned int)kbd_cvt_sw_f32_to_i32(x), n);
  check(r, K_I32F, u, __float_as_uint(kbd_i32_to_f32((int)u)), __float_as_uint(kbd_cvt_sw_i32_to_f32((int)u)), 0);
  /* the packed forms (kbd_tmem_a_store packs P with them): x in the upper half, a scrambled pattern in the lower */
  const unsigned int v = u * 2654435761u ^ (u >> 13);
  const float y = __uint_as_float(v);
  const int nn = n || is_nan32(v);
  check(r, K_BF16X2, u, kbd_hw_cvt_rn_bf16x2_f32(x, y),
        (unsigned int)kbd_cvt_sw_f32_to_bf16(x).bits << 16 | kbd_cvt_sw_f32_to_bf16(y).bits, nn);
  check(r, K_F16X2, u, kbd_hw_cvt_rn_f16x2_f32(x, y),
        (unsigned int)kbd_cvt_sw_f32_to_f16(x).bits << 16 | kbd_cvt_sw_f32_to_f16(y).bits, nn);
  /* kbd_hw_ex2_ftz_f32 (ex2.approx.ftz.f32, the softmax's exponential) against 2^x in double, with the CPU twin's
   * rules: a subnormal argument counts as 0, a result below FLT_MIN is +0, within 2 ulp otherwise (exp2f's bound) */
  {
    const float e = kbd_hw_ex2_ftz_f32(x);
    const float a = fabsf(x) < FLT_MIN ? 0.0f : x;
    const double w = exp2((double)a);
    int ok;
    if (n)
      ok = e != e;
    else if (w < (double)FLT_MIN)
      ok = __float_as_uint(e) == 0u;
    else if (w > (double)FLT_MAX)
      ok = isinf(e) && e > 0.0f;
    else /* within 2 ulp; next to FLT_MIN / FLT_MAX a result 2 ulp off may flush to +0 / overflow to +inf */
      ok = fabs((double)e - w) <= 2.0 * ldexp(1.0, ilogb(w) - 23) ||
           (__float_as_uint(e) == 0u && w <= (double)FLT_MIN * (1.0 + 0x1p-22)) ||
           (isinf(e) && e > 0.0f && w >= (double)FLT_MAX * (1.0 - 0x1p-22));
    if (!ok) note(r, K_EX2, u, __float_as_uint(e), __float_as_uint((float)w), n);
  }
  if (u <= 0xffffu) {
    kbd_f16 h;
    kbd_bf16 b;
    h.bits = (uint16_t)u;
    b.bits = (uint16_t)u;
    unsigned int hs = __float_as_uint(kbd_cvt_sw_f16_to_f32(h)), bs = __float_as_uint(kbd_cvt_sw_bf16_to_f32(b));
    check(r, K_F16F, u, __float_as_uint(kbd_f16_to_f32(h)), hs, is_nan32(hs));
    check(r, K_BF16F, u, __float_as_uint(kbd_bf16_to_f32(b)), bs, is_nan32(bs));
  }
  if (u <= 0xffu) {
    kbd_e4m3 a;
    kbd_e5m2 c;
    a.bits = (uint8_t)u;
    c.bits = (uint8_t)u;
    unsigned int as = __float_as_uint(kbd_cvt_sw_e4m3_to_f32(a)), cs = __float_as_uint(kbd_cvt_sw_e5m2_to_f32(c));
    check(r, K_E4M3F, u, __float_as_uint(kbd_e4m3_to_f32(a)), as, is_nan32(as));
    check(r, K_E5M2F, u, __float_as_uint(kbd_e5m2_to_f32(c)), cs, is_nan32(cs));
  }
}

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "types_convert_gpu: %s: %s\n", #call, cudaGetErrorString(e_));                                   \
      return 1;                                                                                                        \
    }                                                                                                                  \
  } while (0)

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "types_convert_gpu: SKIPPED - no CUDA device\n");
    return 77;
  }
  struct cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, all_patterns) != cudaSuccess) {
    fprintf(stderr, "types_convert_gpu: SKIPPED - this binary has no code for the GPU present (built for "
                    "KBD_GPU_ARCHS)\n");
    return 77;
  }
  struct report *d = NULL;
  struct report h;
  CK(cudaMalloc((void **)&d, sizeof h));
  CK(cudaMemset(d, 0, sizeof h));
  /* 2^32 threads in launches of 2^30 (grid x of 2^22 blocks stays far below the limit). */
  const unsigned int block = 256, chunk = 1u << 30;
  for (unsigned long long base = 0; base < (1ull << 32); base += chunk) {
    all_patterns<<<chunk / block, block>>>(d, base);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  unsigned long long total = 0;
  for (int k = 0; k < K_COUNT; ++k) {
    total += h.count[k];
    printf("%-10s %s: %llu mismatches (%u with NaN)\n", k_names[k], h.count[k] ? "FAIL" : "ok", h.count[k],
           h.nan_in[k]);
    for (unsigned int s = 0; s < h.sample_n[k] && s < K_SAMPLES; ++s) {
      printf("    input 0x%08x: ptx 0x%08x, software 0x%08x\n", h.sample_in[k][s], h.sample_ptx[k][s],
             h.sample_sw[k][s]);
    }
  }
  return total ? 1 : 0;
}
