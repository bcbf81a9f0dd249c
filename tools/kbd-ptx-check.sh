#!/usr/bin/env bash
# kbd-ptx-check.sh - rungs 1 and 2 of the evidence ladder for one kernel source, without a GPU.
#
#   tools/kbd-ptx-check.sh [--cuobjdump PATH] <kernel.cu> <arch, e.g. 90a> <checkfile> [extra nvcc flags...]
#   <prefix>/bin/kbd-ptx-check ...      (the same script, installed with the CMake package)
#
# 1. ONE nvcc -cubin -Xptxas -v -keep with the project's flags (-gencode arch=compute_<arch>,code=sm_<arch>
#    -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I<kbd headers>, then the extra flags): the cubin, the
#    ptxas log and, kept from the same run, the PTX that ptxas assembled (front end, cicc and ptxas run once).
# 2. ptxas must report 0 bytes stack frame, 0 bytes spill stores and 0 bytes spill loads for every function,
#    and print no warning and no (Cnnnn) advisory. nvcc 13.0 prints the wgmma serialization advisories
#    (C7510 ..., C7514 accumulator read, C7520 divergent WG.AR: a printf in the region gives C7520) as
#    "ptxas info", which -Werror does not catch - so they are matched here by their code.
# 3. FileCheck on the PTX with --check-prefixes=CHECK,SM<arch> (SM90a: / SM100a: lines are arch-specific).
# 4. If the check file has SASS lines: cuobjdump -sass on the cubin and FileCheck with
#    --check-prefixes=SASS,SASS-SM<arch>. Without cuobjdump (or its nvdisasm) this step is skipped with a
#    NOTE, or fails when KBD_PTX_REQUIRE_SASS=1. Both are on PyPI: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm.
#
# Headers: $KBD_INCLUDE_DIR, else <this script's directory>/../include - the repository's include/ for
# tools/kbd-ptx-check.sh, the installed headers for <prefix>/bin/kbd-ptx-check.
#
# cuobjdump, searched in kbd-inspect's order: --cuobjdump PATH, $KBD_CUOBJDUMP, next to $NVCC, PATH, next to the
# nvcc in use, /usr/local/cuda/bin, then the PyPI copy tools/run-tests.sh installs under build/*/sass-tools (or
# build/sass-tools) of the repository; from PATH on, a cuobjdump counts only with nvdisasm beside it (or on PATH,
# or $NVDISASM_PATH).
#
# Environment: NVCC (default: PATH, then /usr/local/cuda/bin/nvcc), KBD_FILECHECK (default: FileCheck or
# FileCheck-NN on PATH), KBD_CUOBJDUMP, KBD_INCLUDE_DIR, KBD_PTX_OUT (keep the .ptx, .cubin, .sass and
# nvcc/ptxas log there; default: a temporary directory).
#
# Exit status, first failure found (every failure is reported): 0 pass; 2 usage, missing tool or compile
# error; 3 register spills; 4 stack frame without spills (local arrays, calls); 5 compiler/ptxas warning or
# advisory; 6 PTX FileCheck; 7 SASS FileCheck (or SASS required but unavailable); 77 FileCheck not found
# (CTest SKIP_RETURN_CODE).
set -u

me=kbd-ptx-check
usage="usage: $(basename "$0") [--cuobjdump PATH] <kernel.cu> <arch e.g. 90a> <checkfile> [extra nvcc flags...]"
die() { echo "$me: ERROR: $*" >&2; exit 2; }
cuobjdump_arg=
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help)
    echo "$usage"
    echo "Compiles the kernel to PTX and a cubin (all warnings errors), fails on register spills, stack frames,"
    echo "warnings and wgmma serialization, then FileChecks the PTX (CHECK:, SM<arch>:) and the SASS (SASS:)."
    echo "Exit: 0 pass, 2 usage/compile error, 3 spills, 4 stack frame, 5 warning, 6 PTX, 7 SASS, 77 no FileCheck."
    exit 0
    ;;
  --cuobjdump) [ $# -ge 2 ] || die "--cuobjdump needs a path"; cuobjdump_arg=$2; shift 2 ;;
  --cuobjdump=*) cuobjdump_arg=${1#--cuobjdump=}; shift ;;
  *) break ;;
  esac
done
[ $# -ge 3 ] || die "$usage"
src=$1 arch=$2 check=$3
shift 3
[ -f "$src" ] || die "kernel source '$src' not found"
[ -f "$check" ] || die "check file '$check' not found"
[[ $arch =~ ^[0-9]+[a-z]?$ ]] || die "arch '$arch' is not like 90a or 100a"
[ -z "$cuobjdump_arg" ] || [ -f "$cuobjdump_arg" ] || die "--cuobjdump $cuobjdump_arg: no such file"
# The repository (tools/..) or the install prefix (bin/..): the headers are in its include/.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
if [ -n "${KBD_INCLUDE_DIR:-}" ]; then
  [ -f "$KBD_INCLUDE_DIR/kbd/tile.h" ] || die "KBD_INCLUDE_DIR=$KBD_INCLUDE_DIR has no kbd/tile.h"
  include=$KBD_INCLUDE_DIR
elif [ -f "$repo/include/kbd/tile.h" ]; then
  include=$repo/include
else
  die "kbd headers not found: no $repo/include/kbd/tile.h (set KBD_INCLUDE_DIR to the directory holding kbd/)"
fi

nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || die "nvcc not found (set NVCC or put it on PATH)"
filecheck=${KBD_FILECHECK:-}
if [ -z "$filecheck" ]; then
  for f in FileCheck FileCheck-18 FileCheck-17 FileCheck-16 FileCheck-15 FileCheck-14; do
    filecheck=$(command -v "$f") && break
  done
fi
if [ -z "$filecheck" ] || [ ! -x "$filecheck" ]; then
  echo "$me: SKIP: LLVM FileCheck not found (set KBD_FILECHECK; Debian: llvm-14-tools or newer)" >&2
  exit 77
fi

if [ -n "${KBD_PTX_OUT:-}" ]; then
  out=$KBD_PTX_OUT
  mkdir -p "$out" || die "cannot create $out"
else
  out=$(mktemp -d) || die "mktemp failed"
  trap 'rm -rf "$out"' EXIT
fi
stem="$out/$(basename "${src%.*}").sm$arch"
flags=(-gencode "arch=compute_$arch,code=sm_$arch" -Werror all-warnings -Xcompiler "-Wall,-Wextra,-Werror"
       -I"$include" "$@")
echo "$me: $(basename "$src") for sm_$arch (outputs in $out)"

status=0
fail() { # fail <exit code> <message...>: report, remember the first code
  local code=$1
  shift
  echo "$me: FAIL: $*" >&2
  [ "$status" -ne 0 ] || status=$code
}

# cuobjdump in kbd-inspect's order (see the top); prints its path, or nothing.
find_cuobjdump() {
  if [ -n "$cuobjdump_arg" ]; then echo "$cuobjdump_arg"; return; fi
  if [ -n "${KBD_CUOBJDUMP:-}" ] && [ -f "$KBD_CUOBJDUMP" ]; then echo "$KBD_CUOBJDUMP"; return; fi
  local c cands=()
  [ -z "${NVCC:-}" ] || cands+=("$(dirname "$NVCC")/cuobjdump")
  c=$(command -v cuobjdump) && cands+=("$c")
  cands+=("$(dirname "$nvcc")/cuobjdump" /usr/local/cuda/bin/cuobjdump)
  # tools/kbd-deps.sh's kbd_sass_tools installs the PyPI copies under <build dir>/sass-tools.
  local pip
  mapfile -t pip < <(shopt -s globstar nullglob; for c in "$repo"/build/*/sass-tools/**/bin/cuobjdump \
    "$repo"/build/sass-tools/**/bin/cuobjdump; do
    echo "$c"
  done | LC_ALL=C sort)
  cands+=("${pip[@]}")
  for c in "${cands[@]}"; do
    if [ -f "$c" ] && [ -x "$c" ] && { [ -e "$(dirname "$c")/nvdisasm" ] || [ -n "${NVDISASM_PATH:-}" ] ||
      command -v nvdisasm >/dev/null; }; then
      echo "$c"
      return
    fi
  done
}

# ---- 1. compile, once -----------------------------------------------------------------------------------
# The PTX to check is the one this cubin was assembled from: -keep leaves cicc's output (<name>.ptx, beside the
# front end's intermediates) in a directory of this run's own, so the source goes through the front end and cicc
# once, not a second time for a separate -ptx compile (a third of the checks' time). The intermediates (a
# preprocessed source of a few MB) are deleted; the PTX is kept as <stem>.ptx. A stale PTX or cubin of an earlier
# run in KBD_PTX_OUT must not outlive a failed compile (the PTX order mutants read a control's kept PTX).
keep="$stem.keep"
rm -rf "$keep" "$stem.ptx" "$stem.cubin" && mkdir -p "$keep" || die "cannot create $keep"
"$nvcc" "${flags[@]}" -cubin -Xptxas -v -keep -keep-dir "$keep" "$src" -o "$stem.cubin" >"$stem.ptxas.log" 2>&1
cubin_rc=$?
mapfile -t kept < <(shopt -s nullglob; for f in "$keep"/*.ptx; do echo "$f"; done)
if [ $cubin_rc -eq 0 ] && [ ${#kept[@]} -ne 1 ]; then
  echo "$me: nvcc -keep left ${#kept[@]} PTX files in $keep (one -gencode target expected): ${kept[*]}" >&2
  cubin_rc=2
elif [ ${#kept[@]} -eq 1 ]; then
  mv -f "${kept[0]}" "$stem.ptx"
fi
rm -rf "$keep"

# ---- 2. warnings and advisories (checked first: with -Werror a warning is also a compile error) --------
# -Werror all-warnings turns front-end warnings into "error #177-D:" and host ones into "[-Werror=...]".
warn=$(grep -iE 'warning|\(C[0-9]{4}\)|#[0-9]+-D:|\[-Werror' "$stem.ptxas.log" | sort -u)
if [ -n "$warn" ]; then
  if grep -qE 'C75[0-9][0-9]|wgmma[^ ]* instructions are serialized' <<<"$warn"; then
    fail 5 "ptxas serializes wgmma (C75xx): the warpgroup MMA pipeline is broken (a call, an accumulator" \
      "read or a divergent path inside the wgmma region):"
  else
    fail 5 "compiler/ptxas warnings or advisories (the project builds warning-free):"
  fi
  while IFS= read -r l; do echo "    $l"; done <<<"$warn" >&2
fi
if [ $cubin_rc -ne 0 ]; then
  echo "$me: compile failed (nvcc -cubin: $cubin_rc); nvcc output:" >&2
  sed 's/^/    /' "$stem.ptxas.log" >&2
  [ "$status" -ne 0 ] || status=2
  exit "$status"
fi

# ---- 3. spills and stack frames, for every function ptxas reports ------------------------------------
# ptxas -v prints "Function properties for <name>" and on the next line
# "    <S> bytes stack frame, <T> bytes spill stores, <L> bytes spill loads".
props=$(awk '/Function properties for /{fn=$NF; next}
             /bytes stack frame/ {print fn, $1, $5, $9}' "$stem.ptxas.log")
[ -n "$props" ] || fail 2 "ptxas -v reported no function properties (output format changed?): $stem.ptxas.log"
nfn=0
while read -r fn stack stores loads; do
  [ -n "$fn" ] || continue
  nfn=$((nfn + 1))
  if [ "$stores" != 0 ] || [ "$loads" != 0 ]; then
    fail 3 "$fn spills registers: $stores bytes spill stores, $loads bytes spill loads (stack frame $stack" \
      "bytes) - cut live values or raise the register budget (__launch_bounds__, setmaxnreg)"
  elif [ "$stack" != 0 ]; then
    fail 4 "$fn has a $stack-byte stack frame (local memory: a dynamically indexed array, an address-taken" \
      "local, or a non-inlined call)"
  fi
done <<<"$props"
awk -v me="$me" '/Function properties for /{fn=$NF}
                 /^ptxas info *: Used/{sub(/^ptxas info *: /, ""); print me ":   " fn ": " $0}' "$stem.ptxas.log"
echo "$me: ptxas: $nfn function(s) checked for spills and stack frames"

# ---- 4. FileCheck on the PTX ---------------------------------------------------------------------------
if ! "$filecheck" --check-prefixes="CHECK,SM$arch" --allow-unused-prefixes --dump-input=fail \
  --input-file="$stem.ptx" "$check"; then
  fail 6 "PTX does not match $check (prefixes CHECK,SM$arch); PTX kept as $stem.ptx when KBD_PTX_OUT is set"
else
  echo "$me: PTX matches $(basename "$check") (CHECK,SM$arch)"
fi

# ---- 5. FileCheck on the SASS, when the check file asks for it -----------------------------------------
if grep -qE 'SASS[A-Za-z0-9_-]*:' "$check"; then
  cuobjdump=$(find_cuobjdump)
  if [ -x "$cuobjdump" ] && ! command -v nvdisasm >/dev/null && [ -z "${NVDISASM_PATH:-}" ] &&
    [ -x "$(dirname "$cuobjdump")/nvdisasm" ]; then
    NVDISASM_PATH=$(dirname "$cuobjdump")
    export NVDISASM_PATH
  fi
  if [ -x "$cuobjdump" ] && "$cuobjdump" -sass "$stem.cubin" >"$stem.sass" 2>"$stem.sass.log" &&
    grep -q 'Function :' "$stem.sass"; then
    if ! "$filecheck" --check-prefixes="SASS,SASS-SM$arch" --allow-unused-prefixes --dump-input=fail \
      --input-file="$stem.sass" "$check"; then
      fail 7 "SASS does not match $check (prefixes SASS,SASS-SM$arch)"
    else
      echo "$me: SASS matches $(basename "$check") (SASS,SASS-SM$arch)"
    fi
  else
    why="cuobjdump (with nvdisasm) not found (--cuobjdump or KBD_CUOBJDUMP; pip: nvidia-cuda-cuobjdump,"
    why+=" nvidia-cuda-nvdisasm)"
    [ -x "$cuobjdump" ] && why="$cuobjdump -sass failed: $(head -c 300 "$stem.sass.log" 2>/dev/null)"
    if [ "${KBD_PTX_REQUIRE_SASS:-0}" = 1 ]; then
      fail 7 "SASS checks required (KBD_PTX_REQUIRE_SASS=1) but $why"
    else
      echo "$me: NOTE: SASS checks skipped: $why"
    fi
  fi
fi

[ "$status" -eq 0 ] && echo "$me: PASS $(basename "$src") sm_$arch"
exit "$status"
