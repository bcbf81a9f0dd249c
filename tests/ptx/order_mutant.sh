#!/usr/bin/env bash
# order_mutant.sh <mutants.txt> <name> <kernel.cu> <arch> <checkfile> [nvcc flags...]
#
# Proves that one operand-order check of tests/ptx/order_*.check catches the swap it is for (issue 31): the mutant
# <name> of the table (fields separated by tabs: name, header under include/, entry, expected exit, sed script)
# is applied to a copy of the headers, and only that entry's block of the check file (from its
# "CHECK-LABEL: .entry <entry>(" to the next CHECK-LABEL) is run by kbd-ptx-check.sh against the kernel compiled
# with the copy (KBD_INCLUDE_DIR). First the same block must PASS with the real headers (so a block that cannot
# match anything, or an empty one, cannot count as a kill; FileCheck on $ORDER_CONTROL_PTX when given, the PTX the
# family's own ptx_order_* test kept), and the sed must change the header. Exit: the mutant
# run's exit code (6: the PTX FileCheck failed, as expected - also when ptxas complained first; 2: the swap does
# not even assemble), 1 when the control fails or the mutant does not apply, 77 when kbd-ptx-check skips (no
# FileCheck).
set -u
[ $# -ge 5 ] || { echo "usage: $0 <mutants.txt> <name> <kernel.cu> <arch> <checkfile> [nvcc flags...]" >&2; exit 2; }
table=$1 name=$2 src=$3 arch=$4 check=$5
shift 5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
line=$(awk -F'\t' -v n="$name" '$1 == n { print; exit }' "$table")
[ -n "$line" ] || { echo "order_mutant: no mutant '$name' in $table" >&2; exit 1; }
header=$(printf '%s\n' "$line" | cut -f2)
entry=$(printf '%s\n' "$line" | cut -f3)
script=$(printf '%s\n' "$line" | cut -f5-)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# the entry's block of the check file (the file's trailing CHECK-NOT is the whole file's, left out)
awk -v e="CHECK-LABEL: .entry $entry(" '
  index($0, "CHECK-LABEL:") { on = index($0, e) > 0 }
  on { print }' "$check" > "$work/entry.check"
grep -q "CHECK:" "$work/entry.check" || { echo "order_mutant: no check block for entry $entry in $check" >&2; exit 1; }
echo "order_mutant: $name: entry $entry, $(grep -c 'CHECK' "$work/entry.check") check lines"
# control: the block passes with the real headers - FileCheck on the PTX that the family's own test kept
# ($ORDER_CONTROL_PTX, a CTest fixture: no second compile), else a compile of its own
if [ -n "${ORDER_CONTROL_PTX:-}" ] && [ -f "$ORDER_CONTROL_PTX" ] && [ -n "${KBD_FILECHECK:-}" ]; then
  "$KBD_FILECHECK" --check-prefixes=CHECK,SM$arch --allow-unused-prefixes --input-file="$ORDER_CONTROL_PTX" "$work/entry.check" \
    > "$work/control.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || rc=6
else
  bash "$repo/tools/kbd-ptx-check.sh" "$src" "$arch" "$work/entry.check" "$@" > "$work/control.log" 2>&1
  rc=$?
fi
[ $rc -eq 77 ] && { cat "$work/control.log"; exit 77; }
if [ $rc -ne 0 ]; then
  cat "$work/control.log"
  echo "order_mutant: FAIL: the control (real headers) exits $rc, not 0" >&2
  exit 1
fi
# the mutant: one sed on one header of a copy of include/
cp -r "$repo/include" "$work/include"
sed -i -e "$script" "$work/include/$header" || { echo "order_mutant: sed failed: $script" >&2; exit 1; }
if cmp -s "$repo/include/$header" "$work/include/$header"; then
  echo "order_mutant: FAIL: the mutation '$script' does not change $header" >&2
  exit 1
fi
diff "$repo/include/$header" "$work/include/$header" | sed 's/^/order_mutant: /'
KBD_INCLUDE_DIR="$work/include" bash "$repo/tools/kbd-ptx-check.sh" "$src" "$arch" "$work/entry.check" "$@" \
  > "$work/mutant.log" 2>&1
rc=$?
grep -E "FAIL|ERROR|error:" "$work/mutant.log" | head -5 | sed 's/^/order_mutant: mutant: /'
# kbd-ptx-check exits with its FIRST failure; a swap can also upset ptxas (a wgmma serialization advisory, exit 5)
# before the FileCheck runs. What is proven here is the FileCheck's verdict, so its failure counts whatever came first.
grep -q "FAIL: PTX does not match" "$work/mutant.log" && exit 6
exit $rc
