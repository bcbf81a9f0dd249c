#!/usr/bin/env bash
# compile_time.sh - what does `#include <kbd/tile.h>` cost at compile time? (docs/benchmarks.md)
#
#   bench/compile_time.sh [--runs N] [--arch "90a 100a"] [--why] [--smoke] [--workdir DIR]
#
# Times (wall clock from date +%s%N, and with /usr/bin/time the user+sys CPU time of the compiler
# processes; median / min / max of N runs, default 5), for each GPU arch:
#   nvcc -gencode arch=compute_<a>,code=sm_<a> -c   trivial.cu       (a 3-line kernel, no kbd)
#                                                   trivial_kbd.cu   (the same with #include <kbd/tile.h>)
#                                                   examples/vector_add/vector_add.cu
# and on the host compiler ($CC, default cc), the CPU-mode builds:
#   $CC -std=c11 -O3 -c                             trivial.c / trivial_kbd.c (-DKBD_CPU + kbd/tile.h)
#   $CC -std=c11 -O3 -DKBD_CPU -x c -c              vector_add.cu (the kernel TU as C)
#   $CC -std=c11 -O3 -DKBD_CPU main.c vector_add.cu -pthread -lm   (the whole vector_add_cpu program)
# Runs are interleaved (run 1 of every case, then run 2, ...) so that load from other jobs on a shared
# machine hits all cases alike. Prints the ratio with/without kbd (target for nvcc: at most 1.2x).
# --why adds the evidence: nvcc's per-phase times (--time, medians), the size of the preprocessed device
# (.cpp1.ii) and host (.cpp4.ii) translation units with and without kbd, the headers tile.h adds under
# nvcc, and the same preprocessed-size comparison for the host compiler in KBD_CPU mode.
# --smoke: one run, no warm-up, sm_90a only, vector_add not compiled by nvcc (the CTest entry; no timing
# assertions; ~10 s).
#
# Output: one `COMPILE ...` line per case and one `RATIO ...` line per comparison (machine-readable),
# then a table. Environment: NVCC (default: nvcc on PATH), CC (default: cc), KBD_INCLUDE_DIR (default: the
# include/ next to this script). Nothing is written outside --workdir (default: a fresh temp dir).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
KBD_INCLUDE_DIR="${KBD_INCLUDE_DIR:-$root/include}"
EXAMPLE_DIR="${EXAMPLE_DIR:-$root/examples/vector_add}"
CC="${CC:-cc}"
NVCC="${NVCC:-$(command -v nvcc || true)}"
runs=5
archs="90a 100a"
why=0
smoke=0
workdir=""
target=1.2

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --arch) archs="$2"; shift 2 ;;
    --why) why=1; shift ;;
    --smoke) smoke=1; shift ;;
    --workdir) workdir="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "compile_time.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ $smoke -eq 1 ]]; then runs=1; archs="90a"; fi
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "compile_time.sh: --runs needs a positive integer" >&2; exit 2; }

cleanup=0
if [[ -z "$workdir" ]]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/kbd_compile_time.XXXXXX")"
  cleanup=1
fi
mkdir -p "$workdir"
[[ $cleanup -eq 1 ]] && trap 'rm -rf "$workdir"' EXIT
cd "$workdir"

# ---- the sources ---------------------------------------------------------------------------------
cat > trivial.cu <<'EOF'
__global__ void trivial(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}
EOF
{ echo '#include <kbd/tile.h>'; cat trivial.cu; } > trivial_kbd.cu
cat > trivial.c <<'EOF'
void trivial(float *p, int n) {
  for (int i = 0; i < n; ++i) p[i] += 1.0f;
}
EOF
{ echo '#include <kbd/tile.h>'; cat trivial.c; } > trivial_kbd.c

have_nvcc=0
if [[ -n "$NVCC" ]] && "$NVCC" --version > /dev/null 2>&1; then have_nvcc=1; fi
cflags=(-std=c11 -O3 -DNDEBUG -Wall -Wextra -Werror)

# ---- the cases: key -> command (in the array CMD) ---------------------------------------------------
# nvcc keys end in _sm<arch>.
case_cmd() {
  local key="$1" a="${1##*_sm}"
  case "$key" in
    nvcc_trivial_kbd_sm*) CMD=("$NVCC" -gencode "arch=compute_$a,code=sm_$a" -I"$KBD_INCLUDE_DIR" -c trivial_kbd.cu -o "$key.o") ;;
    nvcc_trivial_sm*) CMD=("$NVCC" -gencode "arch=compute_$a,code=sm_$a" -c trivial.cu -o "$key.o") ;;
    nvcc_vector_add_sm*) CMD=("$NVCC" -gencode "arch=compute_$a,code=sm_$a" -I"$KBD_INCLUDE_DIR" -I"$EXAMPLE_DIR" -c "$EXAMPLE_DIR/vector_add.cu" -o "$key.o") ;;
    cc_trivial) CMD=("$CC" "${cflags[@]}" -c trivial.c -o "$key.o") ;;
    cc_trivial_kbd) CMD=("$CC" "${cflags[@]}" -DKBD_CPU -I"$KBD_INCLUDE_DIR" -c trivial_kbd.c -o "$key.o") ;;
    cc_vector_add_kernel) CMD=("$CC" "${cflags[@]}" -DKBD_CPU -I"$KBD_INCLUDE_DIR" -I"$EXAMPLE_DIR" -x c -c "$EXAMPLE_DIR/vector_add.cu" -o "$key.o") ;;
    cc_vector_add_program) CMD=("$CC" "${cflags[@]}" -DKBD_CPU -I"$KBD_INCLUDE_DIR" -I"$EXAMPLE_DIR" "$EXAMPLE_DIR/main.c" -x c "$EXAMPLE_DIR/vector_add.cu" -pthread -lm -o "$key.bin") ;;
    *) echo "compile_time.sh: unknown case $key" >&2; exit 2 ;;
  esac
}

keys=()
if [[ $have_nvcc -eq 1 ]]; then
  for a in $archs; do
    keys+=("nvcc_trivial_sm$a" "nvcc_trivial_kbd_sm$a")
    [[ $smoke -eq 0 ]] && keys+=("nvcc_vector_add_sm$a")
  done
fi
keys+=(cc_trivial cc_trivial_kbd cc_vector_add_kernel cc_vector_add_program)

# ---- timing ----------------------------------------------------------------------------------------
now_ns() { date +%s%N; }
# stats <values...> -> "median min max" (integers, ms)
stats() {
  printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    printf "%d %d %d\n", m, v[1], v[NR] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.3f", a / b }'; }
met() { awk -v r="$1" -v t="$target" 'BEGIN { print (r != "-" && r <= t) ? "yes" : "no" }'; }
fail() { echo "compile_time.sh: $1 failed:" >&2; cat "$workdir/$1.err" >&2; exit 1; }

TIME_BIN=""
[[ -x /usr/bin/time ]] && TIME_BIN=/usr/bin/time
declare -A WALL CPUT MED MIN MAX CPU

echo "# compile_time.sh: $(uname -m), $(nproc) cores ($(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)); loadavg $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?); runs=$runs, interleaved"
echo "# cc: $("$CC" --version | head -1)"
if [[ $have_nvcc -eq 1 ]]; then
  echo "# nvcc: $("$NVCC" --version | tail -2 | head -1)"
else
  echo "# nvcc not found (set NVCC=...): GPU compile times skipped"
fi

# Warm-up (page cache, first-run effects): one untimed run of each case.
if [[ $smoke -eq 0 ]]; then
  for k in "${keys[@]}"; do case_cmd "$k"; "${CMD[@]}" > /dev/null 2> "$workdir/$k.err" || fail "$k"; done
fi
for ((i = 0; i < runs; ++i)); do
  for k in "${keys[@]}"; do
    case_cmd "$k"
    s=$(now_ns)
    if [[ -n "$TIME_BIN" ]]; then
      "$TIME_BIN" -f "%U %S" -o "$workdir/time.txt" "${CMD[@]}" > /dev/null 2> "$workdir/$k.err" || fail "$k"
    else
      "${CMD[@]}" > /dev/null 2> "$workdir/$k.err" || fail "$k"
    fi
    e=$(now_ns)
    WALL[$k]+=" $(((e - s) / 1000000))"
    if [[ -n "$TIME_BIN" ]]; then
      read -r u y < "$workdir/time.txt"
      CPUT[$k]+=" $(awk -v u="$u" -v y="$y" 'BEGIN { printf "%d", 1000 * (u + y) + 0.5 }')"
    fi
  done
done
for k in "${keys[@]}"; do
  # shellcheck disable=SC2086
  read -r MED[$k] MIN[$k] MAX[$k] < <(stats ${WALL[$k]})
  CPU[$k]=-
  # shellcheck disable=SC2086
  [[ -n "$TIME_BIN" ]] && read -r CPU[$k] _ _ < <(stats ${CPUT[$k]})
  echo "COMPILE case=$k runs=$runs median_ms=${MED[$k]} min_ms=${MIN[$k]} max_ms=${MAX[$k]} cpu_median_ms=${CPU[$k]}"
done

rows=()
if [[ $have_nvcc -eq 1 ]]; then
  for a in $archs; do
    t="nvcc_trivial_sm$a" tk="nvcc_trivial_kbd_sm$a" va="nvcc_vector_add_sm$a"
    [[ $smoke -eq 1 ]] && MED[$va]=-
    r=$(ratio "${MED[$tk]}" "${MED[$t]}")
    rc=$(ratio "${CPU[$tk]}" "${CPU[$t]}")
    rv=$(ratio "${MED[$va]}" "${MED[$t]}")
    echo "RATIO compile tool=nvcc arch=sm_$a trivial_kbd_over_trivial=$r cpu_time_ratio=$rc target=$target met=$(met "$r") vector_add_over_trivial=$rv"
    rows+=("nvcc sm_$a|${MED[$t]}|${MED[$tk]}|$r|$rc|${MED[$va]}|$rv")
  done
fi
r=$(ratio "${MED[cc_trivial_kbd]}" "${MED[cc_trivial]}")
rc=$(ratio "${CPU[cc_trivial_kbd]}" "${CPU[cc_trivial]}")
rv=$(ratio "${MED[cc_vector_add_kernel]}" "${MED[cc_trivial]}")
echo "RATIO compile tool=cc mode=KBD_CPU trivial_kbd_over_trivial=$r cpu_time_ratio=$rc vector_add_kernel_over_trivial=$rv vector_add_program_ms=${MED[cc_vector_add_program]}"
rows+=("cc -DKBD_CPU|${MED[cc_trivial]}|${MED[cc_trivial_kbd]}|$r|$rc|${MED[cc_vector_add_kernel]}|$rv")

# ---- why: phases, preprocessed sizes, added headers ------------------------------------------------
if [[ $why -eq 1 && $have_nvcc -eq 1 ]]; then
  a="${archs%% *}"
  g=(-gencode "arch=compute_$a,code=sm_$a")
  echo
  echo "# why (sm_$a): nvcc --time per phase, median of $runs interleaved runs, ms"
  rm -f phases_*.csv
  for ((i = 0; i < runs; ++i)); do
    "$NVCC" "${g[@]}" -c trivial.cu -o w.o --time "phases_trivial.$i.csv" > /dev/null
    "$NVCC" "${g[@]}" -I"$KBD_INCLUDE_DIR" -c trivial_kbd.cu -o w.o --time "phases_trivial_kbd.$i.csv" > /dev/null
    "$NVCC" "${g[@]}" -I"$KBD_INCLUDE_DIR" -I"$EXAMPLE_DIR" -c "$EXAMPLE_DIR/vector_add.cu" -o w.o \
      --time "phases_vector_add.$i.csv" > /dev/null
  done
  for src in trivial trivial_kbd vector_add; do
    # columns: source, phase, inputs, output, arch, tool, metric, unit
    cat "phases_$src".*.csv | awk -F' , ' 'NF >= 7 && $2 != "phase name" { print $2 "\t" $7 }' |
      sort -t$'\t' -k1,1 -k2,2n | awk -F'\t' -v src="$src" '
        { k[$1] = k[$1] " " $2; n[$1]++ }
        END { for (p in k) { split(substr(k[p], 2), v, " "); m = (n[p] % 2) ? v[(n[p]+1)/2] : (v[n[p]/2] + v[n[p]/2+1]) / 2;
                             printf "PHASE src=%s phase=\"%s\" median_ms=%.1f\n", src, p, m } }' | sort
  done
  echo
  echo "# why: preprocessed translation units under nvcc: device pass .cpp1.ii, host pass .cpp4.ii"
  for src in trivial trivial_kbd; do
    rm -rf "keep_$src"; mkdir -p "keep_$src"
    "$NVCC" "${g[@]}" -I"$KBD_INCLUDE_DIR" -c "$src.cu" -o w.o --keep --keep-dir "keep_$src" > /dev/null
    for ii in "keep_$src"/*.cpp1.ii "keep_$src"/*.cpp4.ii; do
      pass="${ii%.ii}"; pass="${pass##*.}"
      echo "PREPROCESSED tool=nvcc src=$src pass=$pass lines=$(wc -l < "$ii") bytes=$(wc -c < "$ii")"
    done
  done
  echo
  echo "# why: headers that #include <kbd/tile.h> adds under nvcc (nvcc -M, beyond what cuda_runtime.h brings)"
  "$NVCC" "${g[@]}" -M trivial.cu | tr ' \\' '\n\n' | grep -v -e '^$' -e ':$' -e '\.cu$' -e '\.o$' | xargs realpath | sort -u > deps_trivial.txt
  "$NVCC" "${g[@]}" -I"$KBD_INCLUDE_DIR" -M trivial_kbd.cu | tr ' \\' '\n\n' | grep -v -e '^$' -e ':$' -e '\.cu$' -e '\.o$' | xargs realpath | sort -u > deps_kbd.txt
  comm -13 deps_trivial.txt deps_kbd.txt | while read -r h; do
    echo "ADDED_HEADER tool=nvcc $h lines=$(wc -l < "$h")"
  done
fi
if [[ $why -eq 1 ]]; then
  echo
  echo "# why: the host compiler in KBD_CPU mode (cc -E): preprocessed lines and headers"
  for src in trivial trivial_kbd; do
    d=(); [[ $src == trivial_kbd ]] && d=(-DKBD_CPU -I"$KBD_INCLUDE_DIR")
    echo "PREPROCESSED tool=cc src=$src lines=$("$CC" -std=c11 "${d[@]}" -E "$src.c" | wc -l) headers=$("$CC" -std=c11 "${d[@]}" -M "$src.c" | tr ' \\' '\n\n' | grep -c '\.h$' || true)"
  done
fi

# ---- table -----------------------------------------------------------------------------------------
echo
printf '%-14s | %12s %12s %8s %9s | %14s %10s\n' "compiler" "trivial ms" "+tile.h ms" "ratio" "cpu ratio" "vector_add ms" "va/triv"
for r in "${rows[@]}"; do
  IFS='|' read -r c t k q qc v w <<< "$r"
  printf '%-14s | %12s %12s %8s %9s | %14s %10s\n' "$c" "$t" "$k" "$q" "$qc" "$v" "$w"
done
echo "(wall-clock medians of $runs interleaved runs; cpu ratio = the same from user+sys CPU time; cc -DKBD_CPU vector_add program (compile+link): ${MED[cc_vector_add_program]} ms; nvcc target: +tile.h / trivial <= $target)"
