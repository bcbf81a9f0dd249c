/* attention_kernels.h - the forward kernels of one input type: attention.cu (bf16) and attention_f16.cu (f16)
 * define ATTN_DT (bf16 or f16) and ATTN_T (its C type), then include this file, which builds the arch's kernel
 * text (attention.h: ATTN_TEXT_*) once per head_dim as attn_<type>_<head_dim>.
 *
 * One file per type so that a parallel build compiles the two types at once: the six forward kernels are most of
 * the example's compile time (nvcc's optimizer and ptxas work kernel by kernel), and with two files a 2-job
 * build takes about half the wall time of one file (docs/benchmarks.md, "Compile time").
 */
#define ATTN__KNAME_(dt, d) attn_##dt##_##d
#define ATTN__KNAME(dt, d) ATTN__KNAME_(dt, d)

#define ATTN_KERNEL ATTN__KNAME(ATTN_DT, 64)
#define ATTN_D 64
#include ATTN_TEXT_64
#undef ATTN_KERNEL
#undef ATTN_D

#define ATTN_KERNEL ATTN__KNAME(ATTN_DT, 128)
#define ATTN_D 128
#include ATTN_TEXT_128
#undef ATTN_KERNEL
#undef ATTN_D

#define ATTN_KERNEL ATTN__KNAME(ATTN_DT, 256)
#define ATTN_D 256
#include ATTN_TEXT_256
#undef ATTN_KERNEL
#undef ATTN_D

#undef ATTN__KNAME
#undef ATTN__KNAME_
