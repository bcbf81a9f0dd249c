/* pair_mma.cu - one M = 256 (pm_kernel) or M = 128 (pm128_kernel) x N = 128 tile per CTA pair with tcgen05
 * .cta_group::2 (kbd/mma_pair.h), through a 2-stage TMA ring: the device test of the pair calls
 * (gpu_pair_mma_sm100a), the same kernels on the CPU machine (pair_mma_cpu), and the PTX/SASS probe
 * (tests/ptx/mma_pair.check). One kernel text, pair_mma_kernel.h, for both: with M = 128 each CTA holds 64 rows of
 * A, its accumulator is KBD_ACC(f32, 128, PM_N / 2), Tensor Memory's fold of the CTA's 64 x PM_N half (Layout B),
 * and the epilogue stores each view with kbd_store2d_folded (or as it is, for the host's check of the fold).
 * Only sm_100a has CTA pairs: the program is built for sm_100a (and the CPU) only.
 */
#include "pair_mma.h"

typedef KBD_STILE(bf16, PM_N / 2, PM_K, KBD_SWIZZLE_128B) pm_b;

#define PM_KERNEL pm_kernel
#define PM_M 256
#include "pair_mma_kernel.h"
#undef PM_KERNEL
#undef PM_M

#define PM_KERNEL pm128_kernel
#define PM_M 128
#include "pair_mma_kernel.h"
#undef PM_KERNEL
#undef PM_M
