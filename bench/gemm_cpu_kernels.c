/* gemm_cpu_kernels.c - the GEMM example's kernels (examples/gemm/gemm.cu) in CPU mode, for bench/gemm_cpu.c. */
#include "gemm.cu"
