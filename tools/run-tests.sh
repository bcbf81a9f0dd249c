#!/usr/bin/env bash
# run-tests.sh - build kbd and run the whole test suite (labels: cpu, ptx when nvcc is present, gpu
# tests skip with a message when no device is present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tools/kbd-deps.sh"
kbd_need_test_tools
build="${KBD_BUILD_DIR:-$root/build/tests}"
mkdir -p "$build"
sass=$(kbd_sass_tools "$build")
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKBD_BUILD_TESTS=ON -DKBD_BUILD_EXAMPLES=ON \
  -DKBD_BUILD_BENCH=ON ${sass:+-DKBD_CUOBJDUMP="$sass"} >/dev/null
cmake --build "$build" -j"$(kbd_jobs)"
ctest --test-dir "$build" --output-on-failure -j"$(kbd_jobs)" "$@"
