#!/usr/bin/env bash
# gen-doc-pictures.sh - the layout and swizzle pictures of docs/, drawn by tools/kbd-layout.
#
#   tools/gen-doc-pictures.sh <build dir with tools/kbd-layout> [output dir, default docs/pictures]
#
# Every picture comes from the library's own layout and offset functions (kbd-layout calls kbd_tile_coord and
# kbd_smem_tile_offset); tests/tools/layout layout_doc_pictures regenerates them and fails when the committed
# files differ, so the docs always show what the code does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 <build dir> [output dir]" >&2; exit 2; }
tool="$1/tools/kbd-layout"
[ -x "$tool" ] || { echo "gen-doc-pictures.sh: $tool not built (cmake --build $1 --target kbd-layout)" >&2; exit 2; }
out=${2:-$root/docs/pictures}
mkdir -p "$out"
# fragment layouts: the warpgroup accumulator, one mma.sync's A, B and C, a ROW tile of a warp, Tensor Memory
"$tool" frag --layout WGMMA_ACC --dtype f32 --rows 64 --cols 8 -o "$out/frag-wgmma-acc-f32-64x8.svg"
"$tool" frag --layout MMA_A --dtype bf16 --rows 16 --cols 16 -o "$out/frag-mma-a-bf16-16x16.svg"
"$tool" frag --layout MMA_B --dtype bf16 --rows 16 --cols 8 -o "$out/frag-mma-b-bf16-16x8.svg"
"$tool" frag --layout MMA_C --dtype f32 --rows 16 --cols 8 -o "$out/frag-mma-c-f32-16x8.svg"
"$tool" frag --layout ROW --dtype f32 --rows 4 --cols 32 --scope warp -o "$out/frag-row-f32-4x32-warp.svg"
"$tool" frag --layout TMEM_ACC --dtype f32 --rows 128 --cols 8 --window 0,0,40,8 -o "$out/frag-tmem-acc-f32-128x8.svg"
# shared tiles: one 8 x 64 bf16 tile (128-byte rows) under each swizzle mode, K-major
for s in NONE 32B 64B 128B; do
  "$tool" smem --dtype bf16 --rows 8 --cols 64 --swizzle $s -o "$out/smem-bf16-8x64-$(echo $s | tr A-Z a-z).svg"
done
echo "gen-doc-pictures.sh: wrote the layout pictures to $out"
