/* gdb_demo.c - the program tools/gdb/check_gdb.sh debugs (CTest gdb_helpers): 4 blocks of 2 warps. In every
 * block warp 0 reaches the named barrier first and blocks there; warp 1 then calls demo_stop, where the
 * test's breakpoint stops it, holding a bf16 tile t and the same values as an f32 tile e. */
#include <kbd/tile.h>

#include <stdio.h>

typedef struct {
  float *out;
} demo_params;

/* A breakpoint target: not inlined, so `break demo_stop` stops in the warp's fiber. */
__attribute__((noinline)) void demo_stop(int warp) { __asm__ volatile("" ::"r"(warp) : "memory"); }

KBD_KERNEL(demo_k, 64, demo_params) {
  KBD_TILE(bf16, 1, 64, KBD_WARP) t;
  KBD_TILE(f32, 1, 64, KBD_WARP) e;
  const int w = kbd_warp_id();
  KBD_MAP(e, e, x, r, c, (float)(64 * w + c)); /* integers < 128: exact in bf16 */
  KBD_MAP(t, e, x, r, c, x);
  if (w == 1) demo_stop(w);
  kbd_bar_sync(1, 64); /* gdb: warp 0 waits here */
  kbd_store(p.out, e, 4 * 2 * 64, ((long long)kbd_block_x() * 2 + w) * 64);
}

int main(void) {
  float *out = NULL;
  if (!kbd_ok(kbd_malloc((void **)&out, 4 * 2 * 64 * sizeof(float)))) return 1;
  const kbd_status s = demo_k(kbd_cfg(kbd_dim(4, 1, 1), 0, NULL), (demo_params){out});
  printf("demo_k: %s\n", kbd_code_name(s.code));
  kbd_free(out);
  return s.code != KBD_OK;
}
