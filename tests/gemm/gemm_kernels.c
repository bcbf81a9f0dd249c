/* gemm_kernels.c - the example's GEMM kernels (examples/gemm/gemm.cu), compiled in CPU mode into a test (the
 * emulated arch is the test target's KBD_CPU_ARCH). */
#include "gemm.cu"
