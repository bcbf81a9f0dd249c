/* prof_tr_swz.c - examples/transpose's kernel as the example builds it (128B-swizzled shared tiles). */
#include "transpose.cu"
#define PROF_TR_KERNEL tr_transpose
#define PROF_TR_RUN prof_tr_run_swz
#include "prof_transpose_run.h"
