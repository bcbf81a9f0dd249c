#!/usr/bin/env bash
# kbd-deps.sh - install what building and testing kbd needs, only where it is missing.
# Sourced by run-examples.sh and run-tests.sh. Debian/Ubuntu: apt-get (as root, or through sudo).
# Logs (apt-get, pip) go to $KBD_LOG_DIR: the callers set it with `kbd_log_dir <build dir>` to <build dir>/logs,
# so that concurrent builds never share a log file; unset, it is <repo>/build/logs.
set -euo pipefail

kbd_log_dir() {
  KBD_LOG_DIR="$1/logs"
  mkdir -p "$KBD_LOG_DIR"
  export KBD_LOG_DIR
}

kbd__logs() {
  if [ -z "${KBD_LOG_DIR:-}" ]; then
    kbd_log_dir "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build"
  fi
  mkdir -p "$KBD_LOG_DIR"
  echo "$KBD_LOG_DIR"
}

kbd_apt() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "kbd: need root (or sudo) to apt-get install $*" >&2; return 1
    fi
  fi
  local logs; logs=$(kbd__logs)
  if ! $sudo apt-get install -y --no-install-recommends "$@" >"$logs/apt.log" 2>&1; then
    $sudo apt-get update >"$logs/apt-update.log" 2>&1 || true
    $sudo apt-get install -y --no-install-recommends "$@" >>"$logs/apt.log" 2>&1 || {
      echo "kbd: apt-get install $* failed; see $logs/apt.log" >&2; tail -5 "$logs/apt.log" >&2; return 1; }
  fi
}

kbd_need_build_tools() {
  local pkgs=()
  command -v cmake >/dev/null 2>&1 || pkgs+=(cmake)
  command -v cc >/dev/null 2>&1 || pkgs+=(build-essential)
  [ ${#pkgs[@]} -eq 0 ] || { echo "kbd: installing ${pkgs[*]}"; kbd_apt "${pkgs[@]}"; }
  # nvcc lives in /usr/local/cuda/bin on the CUDA images; GPU programs are built only when it is found.
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
}

kbd_need_test_tools() {
  kbd_need_build_tools
  local pkgs=()
  [ -f /usr/include/cmocka.h ] || pkgs+=(libcmocka-dev)
  if ! command -v FileCheck >/dev/null 2>&1 && ! ls /usr/bin/FileCheck-* /usr/lib/llvm-*/bin/FileCheck >/dev/null 2>&1; then
    # Debian ships LLVM's FileCheck in llvm-<ver>-tools; take the default version's package.
    local ver; ver=$(apt-cache depends llvm 2>/dev/null | sed -n 's/.*Depends: llvm-\([0-9]*\)$/\1/p' | head -1)
    pkgs+=("llvm-${ver:-14}-tools")
  fi
  # gdb (with its Python) runs the gdb-helper test (tests/sanitize gdb_helpers, docs/debugging.md).
  command -v gdb >/dev/null 2>&1 || pkgs+=(gdb)
  [ ${#pkgs[@]} -eq 0 ] || { echo "kbd: installing ${pkgs[*]}"; kbd_apt "${pkgs[@]}"; }
}

# Parallel jobs: the machine's cores.
kbd_jobs() { nproc 2>/dev/null || echo 2; }

# SASS checks (tests/ptx) need cuobjdump + nvdisasm, which this toolkit image lacks; both are on PyPI.
# Installed into the build tree (nothing system-wide); prints the cuobjdump path, or nothing on failure.
kbd_sass_tools() {
  local dir="$1/sass-tools"
  command -v nvcc >/dev/null 2>&1 || return 0
  if command -v cuobjdump >/dev/null 2>&1 && command -v nvdisasm >/dev/null 2>&1; then command -v cuobjdump; return 0; fi
  local found; found=$( (find "$dir" -name cuobjdump -type f 2>/dev/null || true) | head -1)
  if [ -z "$found" ] && command -v python3 >/dev/null 2>&1; then
    local logs; logs=$(kbd__logs)
    python3 -m pip install --quiet --disable-pip-version-check --target "$dir" nvidia-cuda-cuobjdump \
      nvidia-cuda-nvdisasm >"$logs/pip.log" 2>&1 ||
      echo "kbd: SASS tools not installed (see $logs/pip.log); SASS checks skipped" >&2
    found=$( (find "$dir" -name cuobjdump -type f 2>/dev/null || true) | head -1)
  fi
  [ -n "$found" ] && chmod +x "$found" "$(dirname "$found")/nvdisasm" 2>/dev/null && echo "$found"
  return 0
}

# cuDNN's attention baseline (bench/attention_cudnn.cpp) needs the cudnn_frontend C++ headers; NVIDIA ships them in
# the PyPI wheel nvidia-cudnn-frontend (its include/ directory). Fetched into the build tree only when nvcc and
# libcudnn are present (nothing system-wide, no Python package installed); prints the include directory, or
# nothing when it is not needed or the download fails (the baseline is then not built).
KBD_CUDNN_FRONTEND_VERSION=1.32.0
kbd_cudnn_frontend() {
  local dir="$1/cudnn-frontend"
  command -v nvcc >/dev/null 2>&1 || return 0
  local cuda; cuda=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
  local f have=0
  for f in "$cuda"/lib64/libcudnn.so* "$cuda"/targets/*/lib/libcudnn.so* /usr/lib/*/libcudnn.so*; do
    [ -e "$f" ] && have=1
  done
  # KBD_CUDNN_FRONTEND_FORCE=1 (tools/gpu-check.sh --prepare): fetch them for another machine, which has cuDNN
  [ "$have" = 1 ] || [ "${KBD_CUDNN_FRONTEND_FORCE:-0}" = 1 ] || return 0
  if [ ! -f "$dir/include/cudnn_frontend.h" ] && command -v python3 >/dev/null 2>&1; then
    local logs; logs=$(kbd__logs)
    mkdir -p "$dir/wheel"
    if python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$dir/wheel" \
      "nvidia-cudnn-frontend==$KBD_CUDNN_FRONTEND_VERSION" >"$logs/pip-cudnn-frontend.log" 2>&1; then
      python3 - "$dir" >>"$logs/pip-cudnn-frontend.log" 2>&1 <<'PY' || true
import glob, sys, zipfile
d = sys.argv[1]
for whl in glob.glob(d + "/wheel/*.whl"):
    with zipfile.ZipFile(whl) as z:
        z.extractall(d, [n for n in z.namelist() if n.startswith("include/")])
PY
    fi
    [ -f "$dir/include/cudnn_frontend.h" ] ||
      echo "kbd: cudnn_frontend headers not fetched (see $logs/pip-cudnn-frontend.log); cuDNN baseline not built" >&2
  fi
  [ -f "$dir/include/cudnn_frontend.h" ] && echo "$dir/include"
  return 0
}
