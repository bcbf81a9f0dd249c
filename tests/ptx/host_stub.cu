/* host_stub.cu - kernels whose bodies nvcc's host pass skips (KBD_KERNEL_CODE), checked by host_stub.sh: the
 * host object must register exactly the entries the device code defines. The first kernel's warp ranges take
 * __COUNTER__ values in the device pass only, so the second kernel's registry base differs between the passes;
 * kbd's __global__ entry must not carry it in its signature (the mangled name the stub registers). */
#include <kbd/tile.h>

typedef struct {
  float *out;
} host_stub_params;

KBD_KERNEL(host_stub_ranges, 256, host_stub_params) {
#if KBD_KERNEL_CODE
  KBD_WARP_RANGE(lo, 0, 4);
  KBD_WARP_RANGE(hi, 4, 4);
  kbd_scope_sync(kbd_warp_id() < 4 ? lo : hi);
  KBD_ELECT_ONE { kbd_st_global(&p.out[kbd_warp_id()], 1.0f); }
#endif
}

KBD_KERNEL(host_stub_after, 128, host_stub_params) {
#if KBD_KERNEL_CODE
  KBD_WARP_RANGE(all, 0, 4);
  kbd_scope_sync(all);
  KBD_ELECT_ONE { kbd_st_global(&p.out[kbd_warp_id()], 2.0f); }
#endif
}
