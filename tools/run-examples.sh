#!/usr/bin/env bash
# run-examples.sh - build every example and run it: the CPU-emulation program always, and the
# sm_90a / sm_100a program matching the GPU when one is present (they are built whenever nvcc is).
#
#   tools/run-examples.sh [-j N] [--dry-run]
#
#   -j N, -jN, --jobs N, --jobs=N   parallel build jobs (default: the machine's cores, kbd_jobs in
#                                   tools/kbd-deps.sh)
#   --dry-run                       print the configure and build commands and exit (installs nothing)
#   -h, --help                      this text
#
# Environment: KBD_BUILD_DIR (default <repo>/build/examples). Logs go under the build tree:
# <build>/logs/configure.log, <build>/logs/build.log and the apt-get log of tools/kbd-deps.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tools/kbd-deps.sh"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

jobs="" dry=0
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --dry-run) dry=1 ;;
  -j | --jobs)
    [ $# -ge 2 ] || { echo "run-examples.sh: $1 needs a number" >&2; exit 2; }
    jobs=$2
    shift ;;
  -j*) jobs=${1#-j} ;;
  --jobs=*) jobs=${1#--jobs=} ;;
  *) echo "run-examples.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$jobs" ] && ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run-examples.sh: -j takes a positive number, not '$jobs'" >&2
  exit 2
fi
jobs=${jobs:-$(kbd_jobs)}

build="${KBD_BUILD_DIR:-$root/build/examples}"
configure=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKBD_BUILD_TESTS=OFF -DKBD_BUILD_BENCH=OFF)
build_cmd=(cmake --build "$build" -j"$jobs")
if [ "$dry" = 1 ]; then
  printf '%q ' "${configure[@]}"; echo ">$build/logs/configure.log"
  printf '%q ' "${build_cmd[@]}"; echo "| tee $build/logs/build.log"
  exit 0
fi

mkdir -p "$build"
kbd_log_dir "$build"
kbd_need_build_tools
"${configure[@]}" >"$KBD_LOG_DIR/configure.log" 2>&1 || {
  tail -20 "$KBD_LOG_DIR/configure.log" >&2
  echo "run-examples.sh: configure failed; full log: $KBD_LOG_DIR/configure.log" >&2
  exit 1
}
"${build_cmd[@]}" 2>&1 | tee "$KBD_LOG_DIR/build.log"

gpu_arch=""
if command -v nvidia-smi >/dev/null 2>&1; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .') || cc=""
  case "$cc" in 90) gpu_arch=sm90a ;; 100) gpu_arch=sm100a ;; esac
fi

fail=0
for prog in $(cd "$build/examples" && find . -maxdepth 1 -type f -name "*_cpu" -perm -u+x -printf "%f\n" | sort); do
  name=${prog%_cpu}
  echo "== $name (CPU emulation)"
  "$build/examples/$prog" || fail=1
  if [ -n "$gpu_arch" ] && [ -x "$build/examples/${name}_$gpu_arch" ]; then
    echo "== $name (GPU, $gpu_arch)"
    "$build/examples/${name}_$gpu_arch" || fail=1
  fi
done
if [ -z "$gpu_arch" ]; then
  echo "(no sm_90/sm_100 GPU found: GPU programs were built but not run)"
fi
exit $fail
