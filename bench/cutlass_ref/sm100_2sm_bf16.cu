// kbd's reference kernel for docs/benchmarks.md ("Machine code against the references"): CUTLASS's sm100a
// 2-SM GEMM (tcgen05.mma cta_group::2), built from the nvidia-cutlass package's headers by
// bench/cutlass_reference.sh. Only the device code is wanted: the script compiles this file to a cubin and
// reads its SASS with tools/kbd-inspect --loops; nothing here is ever launched.
//
// D (bf16, row-major) = A (bf16, M x K row-major) * B (bf16, K x N column-major), f32 accumulate in Tensor
// Memory: the "TN" GEMM (both operands K-major), as kbd's gemm_pair_bf16_rc. No C operand (ElementC = void).
// Schedule: KernelTmaWarpSpecialized2SmSm100 with the TmaWarpSpecialized2Sm epilogue; MMA tile 256 x 256 x 64
// per CTA pair (each CTA holds 128 rows of A and 128 columns of B per stage), cluster 2 x 1 x 1 (one pair),
// stage count from the builder: the even CTA's MMA warp issues 4 tcgen05.mma 256x256x16 per k-block.

#include <cutlass/cutlass.h>
#include <cutlass/numeric_types.h>
#include <cutlass/device_kernel.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cute/tensor.hpp>

namespace kbd_ref_sm100 {

using namespace cute;

using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementD = cutlass::bfloat16_t;
using ElementAcc = float;
using LayoutA = cutlass::layout::RowMajor;      // M x K, K contiguous
using LayoutB = cutlass::layout::ColumnMajor;   // K x N, K contiguous
using LayoutD = cutlass::layout::RowMajor;
constexpr int kAlignA = 16 / sizeof(ElementA);  // 16-byte TMA granules, in elements
constexpr int kAlignB = 16 / sizeof(ElementB);
constexpr int kAlignD = 16 / sizeof(ElementD);

using MmaTileShape = Shape<_256, _256, _64>;    // per CTA pair
using ClusterShape = Shape<_2, _1, _1>;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp, MmaTileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc,
    void, LayoutD, kAlignD,                 // no C
    ElementD, LayoutD, kAlignD,
    cutlass::epilogue::TmaWarpSpecialized2Sm>::CollectiveOp;

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, kAlignA, ElementB, LayoutB, kAlignB, ElementAcc, MmaTileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecialized2SmSm100>::CollectiveOp;

using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;

}  // namespace kbd_ref_sm100

// Naming the kernel's entry in host code makes nvcc emit it; the cubin is all the script keeps.
void const* kbd_ref_sm100_entry() {
    return reinterpret_cast<void const*>(&cutlass::device_kernel<kbd_ref_sm100::Kernel>);
}
