/* attention_f16.cu - the f16 attention kernels (one text per head_dim: attention_kernels.h); attention.cu holds the
 * bf16 ones and the combine step of flash-decoding. */
#include <math.h>

#include "attention.h"

#define ATTN_DT f16
#define ATTN_T kbd_f16
#include "attention_kernels.h"
#undef ATTN_DT
#undef ATTN_T
