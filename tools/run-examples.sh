#!/usr/bin/env bash
# run-examples.sh - build every example and run it: the CPU-emulation program always, and the
# sm_90a / sm_100a program matching the GPU when one is present (they are built whenever nvcc is).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tools/kbd-deps.sh"
kbd_need_build_tools
build="${KBD_BUILD_DIR:-$root/build/examples}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKBD_BUILD_TESTS=OFF -DKBD_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(kbd_jobs)"

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
