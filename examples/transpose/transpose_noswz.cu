/* transpose_noswz.cu - transpose.cu on UNSWIZZLED shared tiles (TR_SWIZZLE = KBD_SWIZZLE_NONE, transpose.h): the
 * same kernel, correct, but every 8x8 matrix that ldmatrix .trans reads (and stmatrix writes) is 8 lines at one
 * 16-byte chunk, i.e. one group of 4 banks: 8 wavefronts instead of 1. The control of docs/profiling.md and
 * tests/profile; examples/CMakeLists.txt builds it, with -DTR_SWIZZLE=KBD_SWIZZLE_NONE for main.c, as
 * transpose_noswz_*. */
#define TR_SWIZZLE KBD_SWIZZLE_NONE
#include "transpose.cu"
