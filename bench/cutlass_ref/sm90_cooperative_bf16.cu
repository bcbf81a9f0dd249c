// kbd's reference kernel for docs/benchmarks.md ("Machine code against the references"): CUTLASS's sm90a
// warp-specialized GEMM, built from the nvidia-cutlass package's headers by bench/cutlass_reference.sh.
// Only the device code is wanted: the script compiles this file to a cubin and reads its SASS with
// tools/kbd-inspect --loops; nothing here is ever launched.
//
// D (bf16, row-major) = A (bf16, M x K row-major) * B (bf16, K x N column-major), f32 accumulate: the "TN"
// GEMM (both operands K-major), kbd's bf16 A row / B col variant. No C operand (ElementC = void).
// Schedule: KernelTmaWarpSpecializedCooperative, the one issue 27's comparison names ("4 x 64x256x16 per
// k-block"): one producer warp group (TMA) and two consumer warp groups that split the 128 x 256 tile's rows and
// work on the same tile, so each consumer warp issues 4 wgmma m64n256k16 per 64-deep k-block. (Pingpong would
// give each consumer warp group its own 64 x 256 tile and alternate their epilogues; its k-loop issues the same
// MMAs per warp, but the quoted count is the cooperative one.) Tile 128 x 256 x 64, cluster 2 x 1 x 1 (the two
// CTAs of a cluster share B's tile, multicast by TMA), stage count from the builder.

#include <cutlass/cutlass.h>
#include <cutlass/numeric_types.h>
#include <cutlass/device_kernel.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cute/tensor.hpp>

namespace kbd_ref_sm90 {

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

using TileShape = Shape<_128, _256, _64>;
using ClusterShape = Shape<_2, _1, _1>;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc,
    void, LayoutD, kAlignD,                 // no C
    ElementD, LayoutD, kAlignD,
    cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, kAlignA, ElementB, LayoutB, kAlignB, ElementAcc, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;

}  // namespace kbd_ref_sm90

// Naming the kernel's entry in host code makes nvcc emit it; the cubin is all the script keeps.
void const* kbd_ref_sm90_entry() {
    return reinterpret_cast<void const*>(&cutlass::device_kernel<kbd_ref_sm90::Kernel>);
}
