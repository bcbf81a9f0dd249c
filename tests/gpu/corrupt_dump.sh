#!/usr/bin/env bash
# corrupt_dump.sh <args...> --dump <file> - a harness self-test stand-in for a GPU program: runs
# $KBD_STANDIN_PROGRAM with the same arguments, then flips the lowest bit of the dump's first byte, so an
# exact comparison must report exactly one mismatching element.
set -u
"$KBD_STANDIN_PROGRAM" "$@" || exit $?
f=${!#}
b=$(od -An -tu1 -N1 "$f") || exit 2
# shellcheck disable=SC2059 # the format is the octal escape of the flipped byte
printf "\\$(printf '%03o' $((b ^ 1)))" | dd of="$f" bs=1 conv=notrunc status=none
