/* transpose_f32.cu - the f32 build of transpose.cu: the same kernel source, with the element type f32
 * (transpose.h). examples/CMakeLists.txt builds it, with -DTR_DT=f32 for main.c, as transpose_f32_*. */
#define TR_DT f32
#include "transpose.cu"
