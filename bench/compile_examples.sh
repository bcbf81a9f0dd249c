#!/usr/bin/env bash
# compile_examples.sh - how long does nvcc take to build the GEMM and attention examples? (docs/benchmarks.md)
#
#   bench/compile_examples.sh [--runs N] [--arch "90a 100a"] [--std c++14] [--ptxas-threads N] [--smoke]
#                             [--workdir DIR]
#
# For each GPU arch, times `nvcc -O3 -std=c++14 -gencode arch=compute_<a>,code=sm_<a> -Xptxas -split-compile=0 -c`
# (the flags the CMake build uses, less the warning flags; --std picks another dialect, e.g. c++17, nvcc's default;
# --ptxas-threads the -split-compile count, KBD_PTXAS_THREADS in CMake: 1 compiles the kernels one after another) on:
#   gemm_all    examples/gemm/gemm.cu               the GEMM kernel with its five operand variants (4 bf16
#                                                    layouts, e4m3)
#   gemm_one    gemm.h + the kernel with one variant  GEMM_BF16_RC only (row-major A, column-major B)
#   gemm_none   gemm.h only                          no kernel: the fixed cost of the headers and nvcc's phases
#   attn_all    examples/attention/attention.cu      six attention kernels (bf16, f16 x head_dim 64, 128, 256)
#               and attention_f16.cu                 and the flash-decoding combine kernel, in two files (bf16
#                                                    + combine, f16) compiled side by side, as a 2-job build
#                                                    does: the wall time of the pair, the CPU time of both
#   attn_one    attention.h + the arch's text     one kernel: bf16, head_dim 128 (ATTN_TEXT_128: FA3 / FA4)
#   attn_none   attention.h only
# Wall clock (date +%s%N) and, with /usr/bin/time, the compiler's user+sys CPU time; median / min / max of N
# interleaved runs (default 3) after one untimed warm-up run. The issue's targets: the GEMM example <= 3 s and
# the attention example <= 5 s per arch on this machine kind (2 cores). Prints one `COMPILE ...` line per case,
# `TARGET ...` lines, then a table. --smoke: one run, sm_90a, the *_one and *_none cases only (the CTest entry:
# it checks that every case compiles; it asserts no time).
# Environment: NVCC (default: nvcc on PATH), KBD_INCLUDE_DIR (default: include/ next to this script).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
KBD_INCLUDE_DIR="${KBD_INCLUDE_DIR:-$root/include}"
NVCC="${NVCC:-$(command -v nvcc || true)}"
runs=3
archs="90a 100a"
std=c++14
ptxas_threads=0
smoke=0
workdir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --arch) archs="$2"; shift 2 ;;
    --std) std="$2"; shift 2 ;;
    --ptxas-threads) ptxas_threads="$2"; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --workdir) workdir="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "compile_examples.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "compile_examples.sh: --runs needs a positive integer" >&2; exit 2; }
[[ "$ptxas_threads" =~ ^[0-9]+$ ]] || { echo "compile_examples.sh: --ptxas-threads needs a count (0: one per core)" >&2; exit 2; }
split=()
[[ "$ptxas_threads" != 1 ]] && split=(-Xptxas "-split-compile=$ptxas_threads")
if [[ -z "$NVCC" ]] || ! "$NVCC" --version > /dev/null 2>&1; then
  echo "compile_examples.sh: nvcc not found (set NVCC=...): nothing to time"
  exit 77
fi
if [[ $smoke -eq 1 ]]; then runs=1; archs="90a"; fi

if [[ -z "$workdir" ]]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/kbd_compile_examples.XXXXXX")"
  trap 'rm -rf "$workdir"' EXIT
fi
mkdir -p "$workdir"
cd "$workdir"

gemm="$root/examples/gemm" attn="$root/examples/attention"
# one kernel / no kernel: the same definitions gemm.cu and attention.cu make for that kernel
printf '#include "gemm.h"\n' > gemm_none.cu
{
  printf '#define GEMM_VARIANTS(X) X(GEMM_BF16_RC, gemm_bf16_rc)\n#include "gemm.h"\n#include "gemm_epilogue.h"\n'
  printf '#define GEMM_VARIANT gemm_bf16_rc\n'
  printf '#define GEMM_A_TILE gemm_a_k\n#define GEMM_B_TILE gemm_b_k\n#define GEMM_BH_TILE gemm_bh_k\n'
  printf '#include "gemm_variant.h"\n#include GEMM_KERNEL_TEXT\n'
} > gemm_one.cu
printf '#include <math.h>\n#include "attention.h"\n' > attn_none.cu
{
  printf '#include <math.h>\n#include "attention.h"\n#define ATTN_DT bf16\n#define ATTN_T kbd_bf16\n'
  printf '#define ATTN_KERNEL attn_bf16_128\n#define ATTN_D 128\n#include ATTN_TEXT_128\n'
} > attn_one.cu

case_cmd() { # key = <case>_sm<arch>: CMD, and CMD2 for a second file compiled beside it
  local key="$1" a="${1##*_sm}" c="${1%_sm*}" src inc src2=""
  case "$c" in
    gemm_all) src="$gemm/gemm.cu" inc="$gemm" ;;
    gemm_*) src="$c.cu" inc="$gemm" ;;
    attn_all) src="$attn/attention.cu" inc="$attn" src2="$attn/attention_f16.cu" ;;
    attn_*) src="$c.cu" inc="$attn" ;;
    *) echo "compile_examples.sh: unknown case $key" >&2; exit 2 ;;
  esac
  local base=("$NVCC" -O3 -DNDEBUG -std="$std" -gencode "arch=compute_$a,code=sm_$a" ${split[@]+"${split[@]}"}
              -I"$KBD_INCLUDE_DIR" -I"$inc" -c)
  CMD=("${base[@]}" "$src" -o "$key.o")
  CMD2=()
  [[ -n "$src2" ]] && CMD2=("${base[@]}" "$src2" -o "$key.2.o")
  return 0
}
# Runs CMD, and CMD2 at the same time when the case has one; CPUMS = both compilers' user+sys ms (- without time).
run_case() { # key
  local k="$1" pid="" u y u2=0 y2=0
  if [[ ${#CMD2[@]} -gt 0 ]]; then
    if [[ -n "$TIME_BIN" ]]; then
      "$TIME_BIN" -f "%U %S" -o time2.txt "${CMD2[@]}" > /dev/null 2> "$k.err2" &
    else
      "${CMD2[@]}" > /dev/null 2> "$k.err2" &
    fi
    pid=$!
  fi
  if [[ -n "$TIME_BIN" ]]; then
    "$TIME_BIN" -f "%U %S" -o time.txt "${CMD[@]}" > /dev/null 2> "$k.err" || fail "$k"
  else
    "${CMD[@]}" > /dev/null 2> "$k.err" || fail "$k"
  fi
  if [[ -n "$pid" ]]; then wait "$pid" || { cat "$k.err2" >> "$k.err"; fail "$k"; }; fi
  CPUMS=-
  if [[ -n "$TIME_BIN" ]]; then
    read -r u y < time.txt
    [[ -n "$pid" ]] && read -r u2 y2 < time2.txt
    CPUMS=$(awk -v u="$u" -v y="$y" -v u2="$u2" -v y2="$y2" 'BEGIN { printf "%d", 1000 * (u + y + u2 + y2) + 0.5 }')
  fi
}
cases=(gemm_none gemm_one attn_none attn_one)
[[ $smoke -eq 0 ]] && cases+=(gemm_all attn_all)
keys=()
for a in $archs; do for c in "${cases[@]}"; do keys+=("${c}_sm$a"); done; done

now_ns() { date +%s%N; }
stats() { # values... -> "median min max"
  printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%d %d %d\n", m, v[1], v[NR] }'
}
fail() { echo "compile_examples.sh: $1 failed:" >&2; cat "$workdir/$1.err" >&2; exit 1; }
TIME_BIN=""
[[ -x /usr/bin/time ]] && TIME_BIN=/usr/bin/time
declare -A WALL CPUT MED MIN MAX CPU

echo "# compile_examples.sh: $(nproc) cores ($(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1));" \
  "loadavg $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?); runs=$runs, interleaved, -std=$std," \
  "ptxas threads $ptxas_threads"
echo "# nvcc: $("$NVCC" --version | tail -2 | head -1)"
if [[ $smoke -eq 0 ]]; then
  for k in "${keys[@]}"; do case_cmd "$k"; run_case "$k"; done
fi
for ((i = 0; i < runs; ++i)); do
  for k in "${keys[@]}"; do
    case_cmd "$k"
    s=$(now_ns)
    run_case "$k"
    e=$(now_ns)
    [[ -n "$TIME_BIN" ]] && CPUT[$k]+=" $CPUMS"
    WALL[$k]+=" $(((e - s) / 1000000))"
  done
done
for k in "${keys[@]}"; do
  # shellcheck disable=SC2086
  read -r MED[$k] MIN[$k] MAX[$k] < <(stats ${WALL[$k]})
  CPU[$k]=-
  # shellcheck disable=SC2086
  [[ -n "$TIME_BIN" ]] && read -r CPU[$k] _ _ < <(stats ${CPUT[$k]})
  echo "COMPILE case=$k runs=$runs median_ms=${MED[$k]} min_ms=${MIN[$k]} max_ms=${MAX[$k]} cpu_median_ms=${CPU[$k]}"
done
if [[ $smoke -eq 0 ]]; then
  for a in $archs; do
    for t in "gemm_all 3000" "attn_all 5000"; do
      read -r c ms <<< "$t"
      k="${c}_sm$a"
      echo "TARGET case=$k median_ms=${MED[$k]} target_ms=$ms met=$([[ ${MED[$k]} -le $ms ]] && echo yes || echo no)"
    done
  done
fi

echo
printf '| %-14s | %10s | %8s | %8s | %12s |\n' case "median ms" "min ms" "max ms" "CPU ms (med)"
printf '|%s|%s|%s|%s|%s|\n' "----------------" "-----------:" "---------:" "---------:" "-------------:"
for k in "${keys[@]}"; do
  printf '| %-14s | %10s | %8s | %8s | %12s |\n' "$k" "${MED[$k]}" "${MIN[$k]}" "${MAX[$k]}" "${CPU[$k]}"
done
