/* attn_kernels.c - the example's attention kernels (examples/attention/attention.cu and attention_f16.cu), compiled in CPU mode
 * into a test (the emulated arch is the test target's KBD_CPU_ARCH). */
#include "attention.cu"
#include "attention_f16.cu"
