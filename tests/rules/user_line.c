/* tests/rules/user_line.c - a kbd rule broken inside a macro is reported at THIS file's line under gcc when the
 * program is built through kbd::kbd (KBD_GCC_USER_LINE_ERRORS): the tile below is 1 x 96 over 128 threads. */
#include <kbd/tile.h>

typedef struct { float *x; } ul_params;
KBD_KERNEL(ul_kernel, 128, ul_params) {
  KBD_TILE(f32, 1, 96, KBD_CTA) t; /* line 7: 96 elements are not a multiple of the 128 threads */
  kbd_load(t, p.x, 96, 0);
}
