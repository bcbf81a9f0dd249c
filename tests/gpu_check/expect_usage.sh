#!/usr/bin/env bash
# expect_usage.sh GPU_CHECK - each bad argument is one line naming it, exit 2, before anything is configured.
set -uo pipefail
gc=$1
fail=0
check() { # EXPECTED-TEXT ARGS...
  local want=$1; shift
  local msg; msg=$(bash "$gc" "$@" 2>&1); local rc=$?
  if [ $rc != 2 ] || ! grep -qF -- "$want" <<<"$msg"; then
    echo "FAIL: gpu-check.sh $* -> exit $rc, message: $msg (wanted exit 2 and \"$want\")"; fail=1
  fi
}
check "unknown argument '--bogus'" --bogus
check "--budget takes seconds, not 'abc'" --budget abc
check "--jobs takes a positive number, not '0'" --jobs 0
check "--only: unknown stage 'warp'" --only correctness,warp
check "--plan-only goes with --rehearse" --plan-only
check "--out needs a value" --out
bash "$gc" --help | grep -q -- '--rehearse' || { echo "FAIL: --help does not list --rehearse"; fail=1; }
[ $fail = 0 ] && echo "usage errors: OK"
exit $fail
