#!/usr/bin/env bash
# check_errors.sh <kbd-layout> - bad input: each case is ONE line on stderr naming the rule, exit status 1,
# nothing on stdout.
set -u
tool=$1
fail=0
expect() { # expect <regex> <args...>
  local want=$1
  shift
  local out err rc
  out=$("$tool" "$@" 2>/tmp/kl_err.$$)
  rc=$?
  err=$(cat /tmp/kl_err.$$)
  rm -f /tmp/kl_err.$$
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || [ -n "$out" ] || ! printf '%s' "$err" | grep -Eq "^kbd-layout: .*$want"; then
    echo "FAIL: kbd-layout $* -> exit $rc, stderr [$err] ($lines lines), stdout ${#out} bytes; want one line matching '$want'"
    fail=1
  else
    echo "ok: kbd-layout $*: $err"
  fi
}
expect "first argument: frag or smem"
expect "unknown layout 'WGMMA'" frag --layout WGMMA --dtype f32 --rows 64 --cols 8
expect "unknown dtype 'f64'" frag --layout ROW --dtype f64 --rows 1 --cols 32 --scope warp
expect "unknown swizzle '16B'" smem --dtype bf16 --rows 8 --cols 64 --swizzle 16B
expect "WGMMA_ACC tiles are .* \(here rows = 64, cols = 12\)" frag --layout WGMMA_ACC --dtype f32 --rows 64 --cols 12
expect "MMA_A tiles are .* \(here --scope 128\)" frag --layout MMA_A --dtype bf16 --rows 16 --cols 16 --scope 128
expect "multiple of the owning scope" frag --layout ROW --dtype f32 --rows 1 --cols 48 --scope warp
expect "scope must be whole warps" frag --layout ROW --dtype f32 --rows 1 --cols 96 --scope 48
expect "multiple of the swizzle span" smem --dtype bf16 --rows 8 --cols 8 --swizzle 128B
expect "multiple of 8" smem --dtype bf16 --rows 4 --cols 64 --swizzle 128B
expect "shared tile rows and cols must be positive" smem --dtype f32 --rows 0 --cols 4 --swizzle NONE
expect "--rows takes an integer" smem --dtype f32 --rows x --cols 4 --swizzle NONE
expect "--scope is required" frag --layout ROW --dtype f32 --rows 1 --cols 32
expect "--window 0,0,17,8 is not inside" frag --layout MMA_C --dtype f32 --rows 16 --cols 8 --window 0,0,17,8 --text
expect "unknown option '--swizzle' for frag" frag --layout ROW --dtype f32 --rows 1 --cols 32 --swizzle 128B
expect "cannot write /nonexistent-dir/x.svg" frag --layout MMA_C --dtype f32 --rows 16 --cols 8 -o /nonexistent-dir/x.svg
expect "tile rows and cols must be positive" frag --layout ROW --dtype f32 --rows 0 --cols 32 --scope warp
exit $fail
