/* prof_tr_noswz.c - the same kernel on unswizzled tiles (examples/transpose/transpose_noswz.cu), renamed so that
 * both builds link into one test program. */
#define tr_transpose tr_transpose_noswz
#include "transpose_noswz.cu"
#define PROF_TR_KERNEL tr_transpose_noswz
#define PROF_TR_RUN prof_tr_run_noswz
#include "prof_transpose_run.h"
