#!/usr/bin/env bash
# gen-roofline.sh - the roofline pictures of docs/roofline.md, from the examples' CPU-machine counters.
#
#   tools/gen-roofline.sh <build dir with the examples> [output dir, default docs/pictures]
#
# Runs the examples' CPU programs under KBD_CPU_PROFILE_JSON (GEMM and attention at sizes where tiles are
# reused, the memory-bound examples at their default sizes) and draws one roofline per GPU with
# tools/kbd-roofline: roofline-h100-sxm.svg from the sm_90a emulation of the MMA examples, roofline-b200.svg
# from the sm_100a one; the examples without MMA are the same on both and are listed under each plot. It also
# writes roofline-<gpu>.txt, the tool's text report. The counters do not depend on the schedule or the host
# thread count, so the output is the same on every run (tests/tools/inspect roofline_doc_pictures checks it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 <build dir> [output dir]" >&2; exit 2; }
ex="$1/examples"
out=${2:-$root/docs/pictures}
[ -d "$ex" ] || { echo "gen-roofline.sh: $ex: no such directory (build the examples first)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # run <jsonl> <program> [args...]: one example program, its records appended to <jsonl>
  local j=$1 prog=$2
  shift 2
  [ -x "$ex/$prog" ] || { echo "gen-roofline.sh: $ex/$prog not built" >&2; exit 1; }
  KBD_CPU_PROFILE_JSON="$j" KBD_CPU_PROFILE= "$ex/$prog" "$@" >/dev/null
}

mem="$tmp/mem.jsonl"
for p in vector_add sum_reduce softmax layernorm row_stats transpose tma_copy; do
  run "$mem" "${p}_cpu"
done
run "$tmp/h100.jsonl" gemm90_cpu 1024 1024 1024
run "$tmp/h100.jsonl" attention90_cpu 1 8 8 1024 1024 128
run "$tmp/b200.jsonl" gemm_cpu 1024 1024 1024
run "$tmp/b200.jsonl" attention_cpu 1 8 8 1024 1024 128
for g in h100-sxm b200; do
  src=$tmp/${g%-sxm}.jsonl
  python3 "$root/tools/kbd-roofline" --gpu "$g" --svg "$out/roofline-$g.svg" "$src" "$mem" >"$out/roofline-$g.txt"
done
echo "gen-roofline.sh: wrote $out/roofline-h100-sxm.svg, roofline-b200.svg (+ .txt)"
