#!/usr/bin/env bash
# host_stub.sh <kernel.cu> <arch> [nvcc flags...] - the host object nvcc builds launches exactly the kernel
# entries its device code defines: the stubs (the host functions named like the entries, which cicc writes in
# the device pass) against the `.text.<entry>` sections of the embedded cubin, and no entry the launchers call
# (the host pass's own spelling of the entry) left undefined. A kernel text that skips its body in nvcc's host
# pass (KBD_KERNEL_CODE) must leave the two passes agreeing on every entry's mangled name.
# Environment: NVCC, KBD_CUOBJDUMP (exit 77 without it), KBD_PTX_OUT (work directory).
set -euo pipefail
src=$1 arch=$2
shift 2
NVCC=${NVCC:-nvcc}
[[ -n "${KBD_CUOBJDUMP:-}" && -x "${KBD_CUOBJDUMP}" ]] || { echo "host_stub: no cuobjdump: skipped"; exit 77; }
out=${KBD_PTX_OUT:-$(mktemp -d)}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
obj="$out/$(basename "$src" .cu)_sm$arch.o"
"$NVCC" -std=c++17 -O3 -gencode "arch=compute_$arch,code=sm_$arch" -Werror all-warnings -I"$here/../../include" "$@" \
  -c "$src" -o "$obj"
# the stub of entry E is the host function named E (nvcc also emits __device_stub__E and gcc's .cold parts)
host=$(nm --defined-only "$obj" | awk '$2 ~ /^[Tt]$/ && $3 ~ /_kbd_dev/ && $3 !~ /__device_stub__|\./ { print $3 }' |
  sort -u)
dev=$("$KBD_CUOBJDUMP" -elf "$obj" | grep -o '\.text\.[A-Za-z0-9_]*_kbd_dev[A-Za-z0-9_]*' | sed 's/^\.text\.//' | sort -u)
echo "host stubs:"; printf '  %s\n' $host
echo "device entries:"; printf '  %s\n' $dev
if [[ -z "$dev" ]]; then echo "host_stub: FAIL: no device entry found"; exit 1; fi
# the launcher calls the entry by its host-pass name: it must be one the stubs define (else: a link error)
undef=$(nm --undefined-only "$obj" | awk '$2 ~ /_kbd_dev/ { print $2 }' | sort -u)
if [[ -n "$undef" ]]; then
  echo "host_stub: FAIL: the host pass calls entries no stub defines (its signature differs from the device pass's):"
  printf '  %s\n' $undef
  exit 1
fi
if [[ "$host" != "$dev" ]]; then
  echo "host_stub: FAIL: the host object registers other kernels than the device code defines:"
  diff <(printf '%s\n' $host) <(printf '%s\n' $dev) || true
  exit 1
fi
echo "host_stub: ok: $(printf '%s\n' $dev | wc -l) entries match"
