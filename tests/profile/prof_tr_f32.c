/* prof_tr_f32.c - examples/transpose's f32 build (transpose_f32.cu: TR_DT = f32), renamed so that it links into
 * one test program with the bf16 build. */
#define tr_transpose tr_transpose_f32
#include "transpose_f32.cu"
#define PROF_TR_KERNEL tr_transpose_f32
#define PROF_TR_RUN prof_tr_run_f32
#include "prof_transpose_run.h"
