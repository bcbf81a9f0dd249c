/* tma_copy_f32.cu - the f32 build of tma_copy.cu: the same kernel source, with the element type f32
 * (tma_copy.h). examples/CMakeLists.txt builds it, with -DTC_DT=f32 for main.c, as tma_copy_f32_*. */
#define TC_DT f32
#include "tma_copy.cu"
