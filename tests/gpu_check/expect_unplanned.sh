#!/usr/bin/env bash
# expect_unplanned.sh GPU_CHECK WORK OUT - the plan must fail, naming a GPU benchmark and an example GPU program that
# have no place in it (tests/gpu_check/CMakeLists.txt).
set -uo pipefail
gc=$1 work=$2 out=$3
extra=$(printf '90a\tnew_bench_sm90a\tnew_bench\tbench\t/nowhere/new_gpu_sm90a\n90a\tnew_example_sm90a\tnew_example\texamples\t/nowhere/new_example_sm90a')
log=$(KBD_GPU_CHECK_EXTRA=$extra bash "$gc" --rehearse --plan-only --work "$work" --out "$out" 2>&1)
rc=$?
echo "$log"
[ $rc = 77 ] && exit 77
[ $rc = 1 ] || { echo "FAIL: expected exit 1 from an unplaced program, got $rc"; exit 1; }
for want in "UNPLANNED benchmark new_bench_sm90a" "UNPLANNED GPU program new_example_sm90a"; do
  grep -qF "$want" "$out/plan.txt" || { echo "FAIL: plan.txt lacks \"$want\""; exit 1; }
  grep -qF "$want" "$out/summary.md" || { echo "FAIL: summary.md lacks \"$want\""; exit 1; }
done
# and nothing else is unplaced: the two added lines are the only ones
n=$(grep -c UNPLANNED "$out/plan.txt")
[ "$n" = 2 ] || { echo "FAIL: $n UNPLANNED lines, expected 2"; exit 1; }
echo "unplanned programs reported: OK"
