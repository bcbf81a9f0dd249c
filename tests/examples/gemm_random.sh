#!/bin/sh
# gemm_random.sh PROGRAM COUNT SEED - runs the GEMM example COUNT times on shapes and options drawn from SEED
# (awk's srand: the same draws on every run of the test), each under a scheduling seed and host-thread count
# drawn too. M, N in 1..700, K in 1..600; layouts, D type, alpha/beta, bias, activation, fp8, a persistent grid
# of 1..4 blocks (several tiles per block) and clusters of 1 or 2 CTAs along M and along N at random. Fails on the first run that does not print "-> OK", naming
# its command line.
#   gemm_random.sh PROGRAM COUNT SEED --simple   the same for examples/gemm_simple, which takes M N K [grid] only:
# the shapes drawn as above, a persistent grid of 1..4 blocks in half of the runs.
prog=$1 count=$2 seed=$3 simple=${4:-}
case "$simple" in "" | --simple) ;; *) echo "gemm_random.sh: 4th argument '$simple': only --simple" >&2; exit 2 ;; esac
awk -v n="$count" -v seed="$seed" -v simple="$simple" 'BEGIN {
  if (simple != "") {
    srand(seed)
    for (i = 0; i < n; ++i) {
      m = 1 + int(rand() * 700); nn = 1 + int(rand() * 700); k = 1 + int(rand() * 600)
      o = rand() < 0.5 ? " " (1 + int(rand() * 4)) : ""
      printf "%d %d %d %d %d%s\n", int(rand() * 8), 1 + int(rand() * 2), m, nn, k, o
    }
    exit
  }
  srand(seed)
  for (i = 0; i < n; ++i) {
    m = 1 + int(rand() * 700); nn = 1 + int(rand() * 700); k = 1 + int(rand() * 600)
    o = ""
    if (rand() < 0.25) o = o " --fp8"
    else { if (rand() < 0.5) o = o " --a-col"; if (rand() < 0.5) o = o " --b-col" }
    if (rand() < 0.5) o = o " --f32"
    if (rand() < 0.5) o = o " --beta 0.5"
    if (rand() < 0.3) o = o " --alpha 0.75"
    if (rand() < 0.5) o = o " --bias"
    r = rand(); if (r < 0.25) o = o " --act relu"; else if (r < 0.5) o = o " --act gelu"
    if (rand() < 0.5) o = o " --grid " (1 + int(rand() * 4))
    r = rand(); if (r < 0.3) o = o " --cluster 1"; else if (r < 0.6) o = o " --cluster 2"
    if (rand() < 0.4) o = o " --cluster-n 2"
    printf "%d %d %d %d %d%s\n", int(rand() * 8), 1 + int(rand() * 2), m, nn, k, o
  }
}' | while read -r s t args; do
  # shellcheck disable=SC2086
  out=$(KBD_CPU_SEED=$s KBD_CPU_THREADS=$t "$prog" $args 2>&1)
  case "$out" in
    *"-> OK"*) echo "ok: KBD_CPU_SEED=$s KBD_CPU_THREADS=$t $prog $args" ;;
    *) echo "failed: KBD_CPU_SEED=$s KBD_CPU_THREADS=$t $prog $args"; echo "$out" | tail -5; exit 1 ;;
  esac
done
