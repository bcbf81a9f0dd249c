#!/bin/sh
# check_gdb.sh DEMO - run gdb on tools/gdb/gdb_demo.c's program DEMO with tools/gdb/kbd.py and check what the
# helpers print (CTest gdb_helpers). Exit 77 (skipped) when gdb or its Python is missing.
demo=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v gdb >/dev/null 2>&1 || { echo "gdb not found: skipped"; exit 77; }
gdb -batch -ex 'python print("py-ok")' 2>/dev/null | grep -q py-ok || { echo "gdb has no Python: skipped"; exit 77; }
line=$(grep -n 'gdb: warp 0 waits here' "$here/gdb_demo.c" | cut -d: -f1)
out=$(KBD_CPU_THREADS=1 gdb -batch -nx -ex 'set pagination off' -ex "source $here/kbd.py" \
  -ex 'break demo_stop if kbd_cpu_cur->cta->bx == 2' -ex run -ex kbd-warp -ex kbd-warps -ex kbd-frame \
  -ex 'p t' -ex 'kbd-lane t 3' -ex 'kbd-lane e 3' -ex 'p kbd_cpu_cur->id' -ex kill "$demo" 2>&1)
echo "$out"
fail=0
want() {
  if ! printf '%s\n' "$out" | grep -Eq "$1"; then
    echo "MISSING: $1"
    fail=1
  fi
}
want '^warp 1 of block \(2,0,0\) of kernel demo_k, 2 warps per block$'
want "^  warp 0: blocked, in bar\.sync 1 at .*gdb_demo\.c:$line\$"
want '^\* warp 1: running$'
want 'in demo_k_kbd_body '
want '= kbd tile bf16 1 x 64, scope 32, layout ROW, 2 per lane \(32 lanes held\)'
want '^\$[0-9]+ = 1$'
# lane 3's elements of the bf16 tile, decoded, are those of the f32 tile with the same values: 64 <= x < 128
lt=$(printf '%s\n' "$out" | grep '^lane 3: ' | sed -n 1p)
le=$(printf '%s\n' "$out" | grep '^lane 3: ' | sed -n 2p)
[ -n "$lt" ] && [ "$lt" = "$le" ] || { echo "MISMATCH: bf16 '$lt' vs f32 '$le'"; fail=1; }
printf '%s\n' "$lt" | grep -Eq '^lane 3: \[(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.0, (6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.0\]$' ||
  { echo "UNEXPECTED lane 3 values: $lt"; fail=1; }
exit $fail
