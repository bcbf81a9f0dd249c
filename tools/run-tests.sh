#!/usr/bin/env bash
# run-tests.sh - build kbd and run its test suite (labels: cpu, ptx when nvcc is present, gpu tests skip with
# a message when no device is present).
#
#   tools/run-tests.sh [-j N] [--dry-run] [ctest arguments...]
#
#   -j N, -jN, --jobs N, --jobs=N   parallel jobs for both the build and ctest (default: the machine's cores,
#                                   kbd_jobs in tools/kbd-deps.sh)
#   --dry-run                       print the configure, build and ctest commands and exit (installs nothing)
#   -h, --help                      this text
#   every other argument            forwarded to ctest unchanged (everything after `--` too), e.g.
#                                     tools/run-tests.sh -L cpu -R softmax
#                                     tools/run-tests.sh -j 4 -L ptx --repeat until-fail:3
#
# Environment: KBD_BUILD_DIR (default <repo>/build/tests). The whole tree is built whatever the ctest filter.
# Logs go under the build tree: <build>/logs/configure.log, <build>/logs/build.log, and the apt-get / pip
# logs of tools/kbd-deps.sh; ctest's own are in <build>/Testing/Temporary. With no arguments (.ci/run) it
# builds everything and runs every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tools/kbd-deps.sh"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

jobs="" dry=0
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --dry-run) dry=1 ;;
  -j | --jobs)
    [ $# -ge 2 ] || { echo "run-tests.sh: $1 needs a number" >&2; exit 2; }
    jobs=$2
    shift ;;
  -j* ) jobs=${1#-j} ;;
  --jobs=*) jobs=${1#--jobs=} ;;
  --) shift; ctest_args+=("$@"); break ;;
  *) ctest_args+=("$1") ;;
  esac
  shift
done
if [ -n "$jobs" ] && ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run-tests.sh: -j takes a positive number, not '$jobs'" >&2
  exit 2
fi
jobs=${jobs:-$(kbd_jobs)}

build="${KBD_BUILD_DIR:-$root/build/tests}"
configure=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKBD_BUILD_TESTS=ON -DKBD_BUILD_EXAMPLES=ON
           -DKBD_BUILD_BENCH=ON)
build_cmd=(cmake --build "$build" -j"$jobs")
test_cmd=(ctest --test-dir "$build" --output-on-failure -j"$jobs" ${ctest_args[@]+"${ctest_args[@]}"})
if [ "$dry" = 1 ]; then
  printf '%q ' "${configure[@]}"
  echo "[-DKBD_CUOBJDUMP=<SASS tools, when found>] [-DKBD_CUDNN_FRONTEND_INCLUDE=<cudnn_frontend headers, when" \
    "cuDNN is installed>] >$build/logs/configure.log"
  printf '%q ' "${build_cmd[@]}"; echo "| tee $build/logs/build.log"
  printf '%q ' "${test_cmd[@]}"; echo
  exit 0
fi

mkdir -p "$build"
kbd_log_dir "$build"
kbd_need_test_tools
sass=$(kbd_sass_tools "$build")
cudnn_fe=$(kbd_cudnn_frontend "$build")
"${configure[@]}" ${sass:+-DKBD_CUOBJDUMP="$sass"} ${cudnn_fe:+-DKBD_CUDNN_FRONTEND_INCLUDE="$cudnn_fe"} \
  >"$KBD_LOG_DIR/configure.log" 2>&1 || {
  tail -20 "$KBD_LOG_DIR/configure.log" >&2
  echo "run-tests.sh: configure failed; full log: $KBD_LOG_DIR/configure.log" >&2
  exit 1
}
"${build_cmd[@]}" 2>&1 | tee "$KBD_LOG_DIR/build.log"
"${test_cmd[@]}"
