#!/usr/bin/env bash
# deep_path_test.sh - the deep_checkout_path test (issue 30).
#
# Proves that kbd builds with warnings as errors, and that its reports still name whole file:line sites, when
# the checkout lives under a long absolute path (>= 200 characters, with a space in it): the library puts
# __FILE__ (absolute under CMake) into messages, and a fixed-size buffer there breaks the -Werror build
# (-Wformat-truncation, e.g. kbd/ptx/tmap.h in examples/tma_pipeline's sm_90a host file) or cuts a report short
# (the lapped-phase hint of the deadlock report checked by mma_warp_sm100).
#
# It copies the source tree to <work>/deep path/<padding>/kbd, configures it with its build tree inside that
# copy (<copy>/build/deep), builds a subset by target name and runs its tests there. Nothing of the outer build
# tree is reused.
#
#   deep_path_test.sh --src DIR --work DIR [--outer-build DIR] [--generator NAME] [--cc PATH] [--cxx PATH]
#                     [--nvcc PATH [--cuda-host PATH]]
#
#   --nvcc given: CUDA is on in the copy, and the sm_90a and sm_100a programs of the subset must build;
#   without it CUDA is off. Environment: KBD_DEEP_PATH_JOBS (build and ctest jobs; default nproc),
#   KBD_DEEP_PATH_LEN (length of the copy's absolute path; default 232, at least 200).
# Exit status: 0 when everything built and passed, 1 otherwise (each failure named on stdout), 2 on bad usage.
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "deep_path_test: $*" >&2; exit 2; }

src="" work="" outer="" generator="" cc="" cxx="" nvcc="" cuda_host=""
while [ $# -gt 0 ]; do
  case "$1" in -h | --help) usage; exit 0 ;; esac
  [ $# -ge 2 ] || die "$1 needs a value"
  case "$1" in
  --src) src=$2 ;;
  --work) work=$2 ;;
  --outer-build) outer=$2 ;;
  --generator) generator=$2 ;;
  --cc) cc=$2 ;;
  --cxx) cxx=$2 ;;
  --nvcc) nvcc=$2 ;;
  --cuda-host) cuda_host=$2 ;;
  *) die "unknown option '$1' (--help)" ;;
  esac
  shift 2
done
if [ -z "$src" ] || [ ! -f "$src/CMakeLists.txt" ]; then die "--src must be the kbd source tree (got '$src')"; fi
[ -n "$work" ] || die "--work is required"
src=$(cd "$src" && pwd -P)
jobs=${KBD_DEEP_PATH_JOBS:-$(nproc 2>/dev/null || echo 2)}
target_len=${KBD_DEEP_PATH_LEN:-232}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "KBD_DEEP_PATH_JOBS must be a positive number, not '$jobs'"
if ! [[ $target_len =~ ^[0-9]+$ ]] || [ "$target_len" -lt 200 ]; then die "KBD_DEEP_PATH_LEN must be >= 200"; fi

t0=$SECONDS
phase() { echo "== $1 ($((SECONDS - t0)) s)"; }

# ---- 1. the deep path: <work>/deep path/<a...>/<b...>/kbd, a fresh folder each run -------------------------
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
deep="$work/deep path"
pad=$((target_len - ${#deep} - 4)) # 4: "/kbd"
letters=abcdefghijklmnopqrstuvwxyz
i=0
while [ "$pad" -gt 0 ]; do
  n=$((pad - 1 > 60 ? 60 : pad - 1)) # each directory name <= 60 characters (NAME_MAX is 255)
  [ "$n" -ge 1 ] || n=1
  name=$(printf "%${n}s" "" | tr ' ' "${letters:i % 26:1}")
  deep="$deep/$name"
  pad=$((pad - n - 1))
  i=$((i + 1))
done
root="$deep/kbd"
build="$root/build/deep"
logs="$work/logs"
[ "${#root}" -ge 200 ] || { echo "FAIL: the copy's path is ${#root} characters, not >= 200: $root"; exit 1; }
[[ $root == *" "* ]] || { echo "FAIL: the copy's path has no space: $root"; exit 1; }
echo "deep checkout (${#root} characters): $root"
echo "deep build tree (${#build} characters): $build"
mkdir -p "$root" "$logs"

# ---- copy the source tree: tracked + untracked-not-ignored files, never a build folder ---------------------
phase "copying $src"
outer_rel=""
if [ -n "$outer" ] && [ -d "$outer" ]; then
  outer=$(cd "$outer" && pwd -P)
  case "$outer/" in "$src"/*) outer_rel=${outer#"$src"/} ;; esac
fi
list="$logs/files.lst"
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)" = "$src" ]; then
  : >"$list"
  while IFS= read -r -d '' f; do
    [ -e "$src/$f" ] || [ -L "$src/$f" ] || continue # tracked but deleted in the work tree
    [[ /$f == */build/* ]] && continue
    [ -n "$outer_rel" ] && [[ $f == "$outer_rel"/* ]] && continue
    printf '%s\0' "$f" >>"$list"
  done < <(git -C "$src" ls-files -z -co --exclude-standard)
  tar -C "$src" --null -T "$list" -cf - | tar -C "$root" -xf -
else
  parts=()
  for p in include cmake examples tests tools bench docs CMakeLists.txt CMakePresets.json README.md; do
    [ -e "$src/$p" ] && parts+=("$p")
  done
  excl=(--exclude=build --exclude=.git)
  [ -n "$outer_rel" ] && excl+=(--exclude="$outer_rel")
  tar -C "$src" "${excl[@]}" -cf - "${parts[@]}" | tar -C "$root" -xf -
fi
echo "copied $(find "$root" -type f | wc -l) files"

# ---- 2. configure the copy, build tree inside the deep path ---------------------------------------------------
phase "configuring"
cfg=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKBD_BUILD_TESTS=ON -DKBD_BUILD_EXAMPLES=ON
     -DKBD_BUILD_BENCH=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
[ -n "$generator" ] && cfg+=(-G "$generator")
[ -n "$cc" ] && cfg+=(-DCMAKE_C_COMPILER="$cc")
[ -n "$cxx" ] && cfg+=(-DCMAKE_CXX_COMPILER="$cxx")
if [ -n "$nvcc" ]; then
  cfg+=(-DKBD_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
  [ -n "$cuda_host" ] && cfg+=(-DCMAKE_CUDA_HOST_COMPILER="$cuda_host")
else
  cfg+=(-DKBD_ENABLE_CUDA=OFF)
fi
if ! "${cfg[@]}" >"$logs/configure.log" 2>&1; then
  tail -30 "$logs/configure.log"
  echo "FAIL: configuring the deep copy failed (full log: $logs/configure.log)"
  exit 1
fi

# ---- 3. build the subset, warnings as errors -------------------------------------------------------------
# The deadlock-report tests, the MMA-warp test (its lapped-phase hint names FILE:LINE) and the tools' tests:
# each test's program is the target of its name, but layout_bad_input, which runs kbd-layout.
test_programs=(machine_deadlock machine_waits machine_mbarrier machine_messages test_crossblock tma_pipeline_rings
               mma_warp_sm100 layout_pictures)
# and tests that build nothing: a compile-fail test and its positive control (cmake/KbdExpectCompileFail.cmake
# splits its flags like a shell: the space in the path must stay inside one argument)
tests=("${test_programs[@]}" layout_bad_input scope_reject_control_c11 scope_reject_1_c11)
programs=(tma_pipeline_cpu)
[ -n "$nvcc" ] && programs+=(tma_pipeline_sm90a tma_pipeline_sm100a)
targets=("${programs[@]}" kbd-layout "${test_programs[@]}")
fail=()

# Warnings must be errors in every compile of the subset's sources, or a truncation warning would pass unseen
# (compile_commands.json: Makefile and Ninja generators).
sources=("$root/examples/tma_pipeline/main.c" "$build/examples/kbd_cpu_sources/tma_pipeline/tma_pipeline.c"
         "$root/tests/mma/test_mma_warp.c" "$root/tests/machine/test_deadlock.c" "$root/tools/kbd-layout/kbd_layout.c")
[ -n "$nvcc" ] && sources+=("$root/examples/tma_pipeline/tma_pipeline.cu")
if [ -f "$build/compile_commands.json" ]; then
  for f in "${sources[@]}"; do
    n=$(awk -v f="$f" '/"command":/ { c = $0 } /"file":/ && index($0, "\"" f "\"") { n++; if (c !~ /-Werror/) bad++ }
        END { print (n > 0 && bad == 0) ? "ok" : n + 0 " compiles, " bad + 0 " without -Werror" }' \
        "$build/compile_commands.json")
    [ "$n" = ok ] || fail+=("${f#"$root"/} is not compiled with -Werror ($n)")
  done
else
  echo "note: no compile_commands.json (generator '$generator'): -Werror not checked"
fi

phase "building ${targets[*]} (-j$jobs)"
case "$generator" in
*Ninja*) keep=(-- -k 0) ;;
*Makefiles* | "") keep=(-- -k) ;;
*) keep=() ;;
esac
if ! cmake --build "$build" --target "${targets[@]}" -j"$jobs" "${keep[@]}" >"$logs/build.log" 2>&1; then
  echo "---- build errors (full log: $logs/build.log)"
  grep -E -A3 'error|\*\*\*' "$logs/build.log" | head -60 || true
  fail+=("the build of the subset failed")
fi

# ---- 4. run them from the deep tree ----------------------------------------------------------------------
phase "running tma_pipeline_cpu"
prog="$build/examples/tma_pipeline_cpu"
if [ -x "$prog" ]; then
  if out=$("$prog" 2>&1); then
    echo "$out"
    [[ $out == *": OK"* ]] || fail+=("tma_pipeline_cpu did not print OK")
  else
    echo "$out"
    fail+=("tma_pipeline_cpu exited with an error")
  fi
else
  fail+=("tma_pipeline_cpu was not built")
fi

phase "ctest: ${tests[*]}"
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
set +e
ctest --test-dir "$build" -R "$regex" --output-on-failure --no-tests=error -j"$jobs" 2>&1 | tee "$logs/ctest.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || fail+=("ctest failed (exit $rc)")
# A renamed or dropped test must not make this pass: every expected test ran, and nothing else.
ran=$(sed -n 's/.*tests failed out of \([0-9][0-9]*\).*/\1/p' "$logs/ctest.log" | tail -1)
[ "${ran:-0}" = "${#tests[@]}" ] || fail+=("ctest ran ${ran:-0} tests, expected ${#tests[@]}")
for t in "${tests[@]}"; do
  grep -Eq "Test +#[0-9]+: $t \.+ +Passed" "$logs/ctest.log" || fail+=("$t did not pass")
done

phase "done"
echo "deep checkout path (${#root} characters): $root"
if [ ${#fail[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${fail[@]}"
  exit 1
fi
echo "PASS: built and ran ${#targets[@]} targets from the deep path in $((SECONDS - t0)) s"
