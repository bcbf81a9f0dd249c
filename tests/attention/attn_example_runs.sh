#!/bin/sh
# attn_example_runs.sh PROG RUN... - runs an examples/attention CPU program (attention_cpu, attention90_cpu) once
# per RUN and fails at the first run that does not exit 0 with "<MASKED> fully masked rows, mismatches = 0 -> OK"
# (main.c checks every output element and lse against a double reference and counts the rows that see no key).
#   RUN = "THREADS SEED MASKED ARG...": KBD_CPU_THREADS, KBD_CPU_SEED, the expected fully masked row count and
#         the program's arguments (see examples/attention/main.c)
prog=$1
shift
n=0
for run in "$@"; do
  set -- $run
  t=$1 s=$2 m=$3
  shift 3
  out=$(KBD_CPU_THREADS=$t KBD_CPU_SEED=$s "$prog" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q ", $m fully masked rows, mismatches = 0 -> OK"; then
    echo "FAILED (exit $rc, want $m fully masked rows): KBD_CPU_THREADS=$t KBD_CPU_SEED=$s $prog $*"
    printf '%s\n' "$out" | head -n 20
    exit 1
  fi
  n=$((n + 1))
done
echo "$n runs OK"
