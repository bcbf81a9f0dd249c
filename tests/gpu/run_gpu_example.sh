#!/usr/bin/env bash
# run_gpu_example.sh - run an example's GPU program on this machine's device, optionally against its CPU
# emulation (tests/gpu/CMakeLists.txt registers the calls; `ctest -L gpu`).
#
#   run_gpu_example.sh --query <gpu_query> --program <arch>=<path> [--program ...]
#                      [--cpu <cpu program> --compare <kbd_compare_dump> --dir <dir> [--tolerance "<args>"]]
#                      [--standin <program>] [-- <program args>]
#
# The device's compute capability (gpu_query prints 90, 100, ...) picks --program <cc>a: an sm_XXa cubin
# runs only on exactly that compute capability. With --cpu, both programs run with the same arguments plus
# --dump, and kbd_compare_dump compares CPU (reference) and GPU dumps with the tolerance arguments.
# --standin: run this program in the GPU program's place without asking for a device (a self-test of this
# harness on machines without a GPU; it proves the plumbing, not the GPU).
# Exit: 0 pass; 77 skip (no device or driver, or no program built for the device's architecture);
# anything else fails.
set -u
me=run_gpu_example
query='' cpu='' compare='' dir='' tolerance='' standin=''
declare -A program=()
while [ $# -gt 0 ]; do
  case $1 in
  --query) query=$2; shift 2 ;;
  --program) program[${2%%=*}]=${2#*=}; shift 2 ;;
  --cpu) cpu=$2; shift 2 ;;
  --compare) compare=$2; shift 2 ;;
  --dir) dir=$2; shift 2 ;;
  --tolerance) tolerance=$2; shift 2 ;;
  --standin) standin=$2; shift 2 ;;
  --) shift; break ;;
  *) echo "$me: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if [ -n "$standin" ]; then
  gpu=$standin
  echo "$me: harness self-test: $(basename "$standin") stands in for the GPU program (no device used)"
else
  [ -x "$query" ] || { echo "$me: gpu_query '$query' not found" >&2; exit 2; }
  cc=$("$query")
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "$me: SKIP: no CUDA device or driver on this machine; GPU results are not checked here"
    exit 77
  fi
  [ $rc -eq 0 ] || { echo "$me: FAIL: gpu_query failed (exit $rc)" >&2; exit 1; }
  gpu=${program[${cc}a]:-}
  if [ -z "$gpu" ]; then
    echo "$me: SKIP: the device is sm_$cc; this build has programs for: ${!program[*]}" \
      "(KBD_GPU_ARCHS; kbd targets sm_90a and sm_100a)"
    exit 77
  fi
  echo "$me: device is sm_$cc: running $(basename "$gpu")"
fi
[ -x "$gpu" ] || { echo "$me: GPU program '$gpu' not found" >&2; exit 2; }

if [ -z "$cpu" ]; then
  "$gpu" "$@"
  rc=$?
  # The query saw a device, so a "no device" skip from the program itself would hide a failure.
  [ $rc -ne 77 ] || { echo "$me: FAIL: $(basename "$gpu") found no device although gpu_query did" >&2; exit 1; }
  exit $rc
fi

if [ ! -x "$cpu" ] || [ ! -x "$compare" ] || [ -z "$dir" ]; then
  echo "$me: --cpu needs an executable CPU program, --compare and --dir" >&2
  exit 2
fi
mkdir -p "$dir" && rm -f "$dir/gpu.bin" "$dir/cpu.bin" || exit 2
"$gpu" "$@" --dump "$dir/gpu.bin"
rc=$?
[ $rc -ne 77 ] || { echo "$me: FAIL: $(basename "$gpu") found no device although gpu_query did" >&2; exit 1; }
[ $rc -eq 0 ] || { echo "$me: FAIL: $(basename "$gpu") exited $rc" >&2; exit 1; }
"$cpu" "$@" --dump "$dir/cpu.bin" || { echo "$me: FAIL: $(basename "$cpu") exited $?" >&2; exit 1; }
# shellcheck disable=SC2086 # the tolerance is a list of arguments
"$compare" $tolerance "$dir/cpu.bin" "$dir/gpu.bin"
