#!/usr/bin/env bash
# expect_exit.sh <code> <command...> - pass only when the command exits with exactly <code>.
# Negative tests use it instead of WILL_FAIL, which would also pass when the command fails for an unrelated
# reason (a compile error in the self-test kernel, a missing tool). Exit 77 (skip) is passed through.
set -u
want=$1
shift
"$@"
rc=$?
[ $rc -eq 77 ] && [ "$want" != 77 ] && exit 77
if [ $rc -ne "$want" ]; then
  echo "expect_exit: FAIL: expected exit $want, got $rc from: $*" >&2
  exit 1
fi
echo "expect_exit: ok: exit $rc as expected"
