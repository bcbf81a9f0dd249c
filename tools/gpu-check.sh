#!/usr/bin/env bash
# gpu-check.sh - one command that proves kbd on a real GPU (docs/gpu-check.md): builds what it needs, checks
# correctness, runs the sanitizers and measures every benchmark beside its baseline, within a time budget, writing
# results as it goes.
#
#   tools/gpu-check.sh [--out DIR] [--quick] [--budget SECONDS] [--only STAGE[,STAGE...]] [--jobs N]
#   tools/gpu-check.sh --rehearse [--plan-only] [--out DIR]     on a machine without a GPU: configure (and build)
#                                                              for sm_90a and sm_100a, print the plan
#   tools/gpu-check.sh --prepare DIR                           on a connected machine: fetch what the check needs
#                                                              beyond the toolkit (cudnn_frontend headers) into DIR
#
#   --out DIR        results: DIR/summary.md, DIR/results.jsonl, DIR/logs.tar.gz, DIR/plan.txt
#                    (default <repo>/build/gpu-check/out)
#   --budget S       wall-clock budget in seconds (default 480; --quick: 240). Stages run in order of value; one
#                    whose estimate does not fit in what is left is skipped and listed as skipped
#   --quick          correctness and the two headline benchmarks (GEMM 8192^3 bf16 vs cuBLAS, on sm_90a both
#                    consumer schedules, attention vs cuDNN)
#   --only LIST      run only these stages (detect and build always run): correctness, headline, torch,
#                    sanitizers, bench, gpt2, tune, profile
#   --work DIR       build trees and raw logs (default <repo>/build/gpu-check)
#   --deps DIR       what --prepare fetched (default <repo>/build/gpu-check-deps, found there when present)
#   --jobs N         build jobs (default: every core)
#   --rehearse       no device needed: detect is replaced by "both archs", every step up to the first one that
#                    needs a device runs; CMocka and FileCheck are hidden from the configure (the GPU machine has
#                    neither). --plan-only: configure and plan, no build (the CI test runs this).
# Test hook: KBD_GPU_CHECK_EXTRA="arch<TAB>target<TAB>name<TAB>dir<TAB>file" adds a line to each build's list of GPU
# programs (tests/gpu_check: a program the plan does not place must fail the plan).
# Exit: 0 everything that ran passed; 1 something failed (summary.md says what); 77 nothing to check here (no GPU,
# a GPU older than sm_90, a toolkit older than 12.8, a driver that cannot run it): one line says why; 2 bad usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "gpu-check: $*" >&2; exit 2; }

out="" budget="" quick=0 rehearse=0 plan_only=0 only="" prepare="" deps="" jobs="" work=""
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --quick) quick=1 ;;
  --rehearse) rehearse=1 ;;
  --plan-only) plan_only=1 ;;
  --out | --budget | --only | --prepare | --deps | --jobs | --work)
    [ $# -ge 2 ] || die "$1 needs a value"
    case "$1" in
    --out) out=$2 ;; --budget) budget=$2 ;; --only) only=$2 ;; --prepare) prepare=$2 ;; --deps) deps=$2 ;;
    --jobs) jobs=$2 ;; --work) work=$2 ;;
    esac
    shift ;;
  *) die "unknown argument '$1' (--help lists the options)" ;;
  esac
  shift
done
[ -z "$budget" ] || [[ $budget =~ ^[1-9][0-9]*$ ]] || die "--budget takes seconds, not '$budget'"
[ -z "$jobs" ] || [[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a positive number, not '$jobs'"
[ "$plan_only" = 0 ] || [ "$rehearse" = 1 ] || die "--plan-only goes with --rehearse"
all_stages="correctness headline torch sanitizers bench gpt2 tune profile"
for s in ${only//,/ }; do
  [[ " $all_stages " == *" $s "* ]] || die "--only: unknown stage '$s' (one of: $all_stages)"
done
budget=${budget:-$([ "$quick" = 1 ] && echo 240 || echo 480)}
jobs=${jobs:-$(nproc 2>/dev/null || echo 4)}
deps=${deps:-$root/build/gpu-check-deps}
out=${out:-$root/build/gpu-check/out}
[ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1 && export PATH="/usr/local/cuda/bin:$PATH"

# ---- --prepare: on a connected machine ---------------------------------------------------------------------------
if [ -n "$prepare" ]; then
  . "$root/tools/kbd-deps.sh"
  mkdir -p "$prepare"
  kbd_log_dir "$prepare"
  inc=$(KBD_CUDNN_FRONTEND_FORCE=1 kbd_cudnn_frontend "$prepare")
  if [ -z "$inc" ]; then echo "gpu-check --prepare: the cudnn_frontend headers could not be fetched" >&2; exit 1; fi
  rm -rf "$prepare/cudnn-frontend/wheel"
  echo "gpu-check --prepare: $(du -sh "$prepare" | cut -f1) in $prepare (cudnn_frontend headers: $inc)."
  echo "Copy $prepare along with the checkout (device tool: carry it); tools/gpu-check.sh --deps $prepare finds it."
  exit 0
fi

# ---- bookkeeping -------------------------------------------------------------------------------------------------
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
left() { echo $((budget - $(elapsed))); }
work=${work:-$root/build/gpu-check}
logs="$work/logs"
rm -rf "$logs"
mkdir -p "$out" "$logs"
rm -f "$out/summary.md" "$out/results.jsonl" "$out/logs.tar.gz" "$out/plan.txt"
summary="$out/summary.md" jsonl="$out/results.jsonl"
failures=0

json_str() { # a JSON string literal
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/ }
  s=${s//$'\r'/}
  s=${s//$'\n'/\\n}
  printf '"%s"' "$s"
}
# record STAGE NAME STATUS SECONDS [DETAIL]: one line of results.jsonl and a row of the stage's table.
record() {
  local stage=$1 name=$2 status=$3 secs=$4 detail=${5:-}
  printf '{"stage": %s, "name": %s, "status": %s, "seconds": %s, "detail": %s}\n' "$(json_str "$stage")" \
    "$(json_str "$name")" "$(json_str "$status")" "$secs" "$(json_str "$detail")" >>"$jsonl"
  detail=${detail//|/\\|}
  printf '| %s | %s | %s | %s |\n' "$name" "$status" "$secs" "${detail//$'\n'/<br>}" >>"$summary"
  case "$status" in FAIL | HANG | BUILD-FAIL) failures=$((failures + 1)) ;; esac
}
# A benchmark's figures: every "BENCH k=v ..." line (and device_bench's "device_*_gpu k=v" lines) of LOG, one
# jsonl record each with its key/value pairs, quoted values kept whole.
record_figures() {
  local stage=$1 prog=$2 log=$3
  awk -v stage="$stage" -v prog="$prog" '
    function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
    /^BENCH / || /^device_(reduce|scan)_gpu / {
      line = $0; rec = "{\"stage\": " esc(stage) ", \"name\": " esc(prog) ", \"status\": \"figure\""
      sub(/^BENCH /, "", line)
      if (line !~ /=/) next
      while (length(line)) {
        sub(/^ +/, "", line); if (!length(line)) break
        if (match(line, /^[A-Za-z0-9_\/.:-]+="[^"]*"/)) { tok = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1) }
        else if (match(line, /^[^ ]+/)) { tok = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1) }
        eq = index(tok, "=")
        if (!eq) { rec = rec ", " esc("tag_" tok) ": true"; continue }
        k = substr(tok, 1, eq - 1); v = substr(tok, eq + 1); gsub(/^"|"$/, "", v)
        rec = rec ", " esc(k) ": " (v ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ ? v : esc(v))
      }
      print rec "}"
    }' "$log" >>"$jsonl"
  # the figures in the summary, as the program printed them
  if grep -qE '^(BENCH |device_(reduce|scan)_gpu )' "$log"; then
    { echo; echo "<details><summary>$prog figures</summary>"; echo; echo '```'
      grep -E '^(BENCH |device_(reduce|scan)_gpu |# )' "$log" | cut -c1-400
      echo '```'; echo "</details>"; echo; } >>"$summary"
  fi
}
pack_logs() { tar -C "$work" -czf "$out/logs.tar.gz.part" logs 2>/dev/null && mv "$out/logs.tar.gz.part" "$out/logs.tar.gz"; }
# run_prog STAGE NAME TIMEOUT LOG CMD... : run with a timeout (a hang is reported as HANG with its name, never
# waited out); returns the program's status (124 for a hang). The first lines of a failure go to the summary.
last_rc=0
run_prog() {
  local stage=$1 name=$2 limit=$3 log=$4
  shift 4
  local l; l=$(left)
  [ "$l" -lt "$limit" ] && limit=$((l > 10 ? l : 10))
  local s0; s0=$(date +%s)
  { echo "\$ $*"; echo; } >"$log"
  timeout -k 10 "$limit" "$@" >>"$log" 2>&1
  last_rc=$?
  local secs=$(($(date +%s) - s0)) status detail=""
  case $last_rc in
  0) status=OK ;;
  77) status=SKIP; detail=$(grep -v '^\$ \|^$' "$log" | tail -2 | cut -c1-300) ;;
  124 | 137) status=HANG; detail="no exit within ${limit} s (a lost arrival or a wrong parity hangs on the GPU); log: logs/${log#"$logs/"}" ;;
  *) status=FAIL; detail="exit $last_rc: $(grep -v '^\$ \|^$' "$log" | grep -iE 'error|fail|mismatch|wrong|differ|illegal|abort' | head -3 | cut -c1-300)"
     [ -n "${detail#exit $last_rc: }" ] || detail="exit $last_rc: $(tail -3 "$log" | cut -c1-300)" ;;
  esac
  record "$stage" "$name" "$status" "$secs" "$detail"
  return $last_rc
}
stage_begin() { # STAGE ESTIMATE TITLE: 0 when the stage runs; otherwise it is listed as skipped and 1 returned
  local stage=$1 est=$2 title=$3
  { echo; echo "## $title"; echo; } >>"$summary"
  if [ "$quick" = 1 ] && [ -z "$only" ] && [ "$stage" != correctness ] && [ "$stage" != headline ]; then
    echo "Not run (--quick)." >>"$summary"; record "$stage" "$stage" SKIPPED 0 "--quick"; return 1
  fi
  if [ -n "$only" ] && [[ ",$only," != *",$stage,"* ]]; then
    echo "Not run (--only $only)." >>"$summary"; record "$stage" "$stage" SKIPPED 0 "--only"; return 1
  fi
  if [ "$(left)" -lt "$est" ]; then
    echo "Skipped: about ${est} s needed, $(left) s of the ${budget} s budget left." >>"$summary"
    record "$stage" "$stage" SKIPPED 0 "over budget: needs about ${est} s, $(left) s left"
    echo "gpu-check: stage $stage skipped (needs ~${est} s, $(left) s left)"
    return 1
  fi
  echo "gpu-check: stage $stage (~${est} s; $(elapsed) s used of ${budget} s)"
  printf '| program | status | s | detail |\n|---|---|---|---|\n' >>"$summary"
  stage_t0=$(date +%s)
  return 0
}
stage_end() { echo "_Stage time: $(($(date +%s) - stage_t0)) s._" >>"$summary"; pack_logs; }

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -cv '^??' || true)
{ echo "# kbd GPU check"
  echo
  echo "commit \`$commit\`$([ "${dirty:-0}" != 0 ] && echo " + $dirty changed files"), $(date -u '+%Y-%m-%d %H:%M UTC'), budget ${budget} s$([ "$quick" = 1 ] && echo ", --quick")$([ "$rehearse" = 1 ] && echo ", --rehearse (no device)")"; } >"$summary"

# ---- detect ------------------------------------------------------------------------------------------------------
skip_all() { echo "gpu-check: $*"; { echo; echo "**Skipped:** $*"; } >>"$summary"; record detect detect SKIP 0 "$*"; exit 77; }
command -v cmake >/dev/null 2>&1 || skip_all "cmake is not installed"
command -v nvcc >/dev/null 2>&1 || skip_all "the CUDA toolkit (nvcc) is not installed"
nvcc_ver=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
[ -n "$nvcc_ver" ] || skip_all "cannot read nvcc's version"
if [ "${nvcc_ver%.*}" -lt 12 ] || { [ "${nvcc_ver%.*}" = 12 ] && [ "${nvcc_ver#*.}" -lt 8 ]; }; then
  skip_all "nvcc $nvcc_ver is older than 12.8 (sm_100a needs 12.8; kbd is checked with 13.0)"
fi
cuda_home=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
declare -A gpu
if [ "$rehearse" = 1 ]; then
  archs="90a 100a"
  gpu[name]="(rehearsal: no device)"
else
  mkdir -p "$work"
  if ! nvcc -o "$work/gpu_info" "$root/tools/gpu-check/gpu_info.c" >"$logs/gpu_info.build.log" 2>&1; then
    skip_all "nvcc cannot build a host program here: $(head -2 "$logs/gpu_info.build.log" | tr '\n' ' ')"
  fi
  info=$(timeout 60 "$work/gpu_info")
  rc=$?
  while IFS='=' read -r k v; do [ -n "$k" ] && gpu[$k]=$v; done <<<"$info"
  [ $rc = 77 ] && skip_all "${gpu[reason]:-no usable CUDA device}"
  [ $rc = 0 ] || { record detect gpu_info FAIL 0 "${gpu[reason]:-gpu_info exit $rc}"; exit 1; }
  case "${gpu[cc]}" in
  90) archs=90a ;;
  100) archs=100a ;;
  *) [ "${gpu[cc]}" -lt 90 ] 2>/dev/null && skip_all "${gpu[name]} is sm_${gpu[cc]}: kbd needs sm_90a (Hopper) or sm_100a (B200/GB200)"
     skip_all "${gpu[name]} is sm_${gpu[cc]}: kbd's kernels are built for sm_90a and sm_100a only" ;;
  esac
fi
{ echo
  echo "## Device"
  echo
  if [ "$rehearse" = 1 ]; then echo "Rehearsal on $(hostname): no device; archs $archs; nvcc $nvcc_ver."; else
    echo "| | |"; echo "|---|---|"
    for k in name cc sms sm_clock_mhz mem_clock_mhz mem_peak_gbs mem_gib l2_mib smem_optin_kib driver runtime devices; do
      echo "| $k | ${gpu[$k]:-?} |"; done
    echo "| nvcc | $nvcc_ver |"
  fi; } >>"$summary"
printf '{"stage": "detect", "name": "device", "status": "OK", "seconds": %s, "archs": %s, "nvcc": %s' "$(elapsed)" \
  "$(json_str "$archs")" "$(json_str "$nvcc_ver")" >>"$jsonl"
for k in "${!gpu[@]}"; do printf ', %s: %s' "$(json_str "$k")" "$(json_str "${gpu[$k]}")" >>"$jsonl"; done
echo "}" >>"$jsonl"
echo "gpu-check: ${gpu[name]}, archs $archs, nvcc $nvcc_ver, budget ${budget} s"

# ---- configure: the GPU machine has no CMocka and no FileCheck; the rehearsal hides both -----------------------
hidden_paths="" clean_path=$PATH hide_args=()
if [ "$rehearse" = 1 ]; then
  # CMocka's header and library directories and LLVM's bin directories are ignored by every find_*; FileCheck's
  # versioned names can sit in /usr/bin, which cannot be ignored, so its lookup is answered (empty) up front and the
  # directories holding a plain `FileCheck` leave PATH.
  for f in /usr/include/cmocka.h /usr/local/include/cmocka.h /usr/lib/*/libcmocka.so* /usr/lib/libcmocka.so* \
    /usr/local/lib/libcmocka.so* /usr/lib/llvm-*/bin/FileCheck; do
    [ -e "$f" ] && hidden_paths="$hidden_paths;$(dirname "$f")"
  done
  hidden_paths=$(tr ';' '\n' <<<"${hidden_paths#;}" | sort -u | paste -sd';')
  hide_args=(-DKBD_FILECHECK=)
  clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r p; do [ -x "$p/FileCheck" ] || printf '%s:' "$p"; done)
  clean_path=${clean_path%:}
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cudnn_args=()
[ -f "$deps/cudnn-frontend/include/cudnn_frontend.h" ] && cudnn_args+=(-DKBD_CUDNN_FRONTEND_INCLUDE="$deps/cudnn-frontend/include")
if [ ${#cudnn_args[@]} -gt 0 ] && command -v python3 >/dev/null 2>&1; then
  # PyTorch's wheels carry cuDNN (nvidia-cudnn-cu*): its header and versioned library, which find_library misses
  cudnn_dir=$(python3 -c 'import os, nvidia.cudnn as c; print(os.path.dirname(c.__file__) if c.__file__ else list(c.__path__)[0])' 2>/dev/null || true)
  if [ -n "$cudnn_dir" ] && [ -f "$cudnn_dir/include/cudnn.h" ]; then
    lib=$(ls "$cudnn_dir"/lib/libcudnn.so* 2>/dev/null | head -1)
    [ -n "$lib" ] && cudnn_args+=(-DKBD_CUDNN_INCLUDE_DIR="$cudnn_dir/include" -DKBD_CUDNN_LIBRARY="$lib")
  fi
fi
configure_cmd() { # ARCH: the configure command line of that arch's build tree
  local arch=$1
  cfg=(cmake -S "$root" -B "$work/sm$arch" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DKBD_GPU_ARCHS="$arch"
       -DKBD_BUILD_TESTS=ON -DKBD_BUILD_EXAMPLES=ON -DKBD_BUILD_BENCH=ON -DKBD_BUILD_TOOLS=OFF
       -DKBD_REQUIRE_CMOCKA=OFF "${cudnn_args[@]}" "${hide_args[@]}")
  [ -n "$hidden_paths" ] && cfg+=(-DCMAKE_IGNORE_PATH="$hidden_paths")
}

# ---- the plan: every GPU program of the build, each placed in a stage ------------------------------------------
# Benchmarks: program name (kbd_add_program / bench target) -> arguments of the full run, and the baseline it is
# measured against (the program measures both in the same run). The headline runs are the first two.
# bench_arch["NAME ARCH"], when set, replaces bench_args[NAME] on that arch (bench_args_of).
declare -A bench_args bench_base bench_arch
gemm_bench_shapes="8192x8192x8192,4096x4096x4096,4095x4097x4096,1000x3000x2000,1x8192x8192,16x8192x8192,64x8192x8192,128x8192x8192"
bench_args[gemm_bench]="--shapes $gemm_bench_shapes --types bf16,fp8"
# sm_90a has two consumer schedules picked at launch (docs/gemm.md "Pingpong consumers"): the bf16 rows are the
# cooperative one, the pp rows ("bf16pp") the pingpong one, so the device measures both on every shape
bench_arch["gemm_bench 90a"]="--shapes $gemm_bench_shapes --types bf16,fp8,pp"
bench_base[gemm_bench]="cuBLAS (cublasLt), same shapes and types"
bench_args[attention_bench]=""
bench_base[attention_bench]="cuDNN SDPA (when built with the cudnn_frontend headers) and FA3/FA4's published figures; decode vs its bandwidth bound"
bench_args[vector_add_bench]=""
bench_base[vector_add_bench]="cudaMemcpy device-to-device and the memory's peak"
bench_args[tma_copy_bench]=""
bench_base[tma_copy_bench]="cudaMemcpy device-to-device"
bench_args[tma_copy_f32_bench]=""
bench_base[tma_copy_f32_bench]="cudaMemcpy device-to-device"
bench_args[device_bench]=""
bench_base[device_bench]="CUB DeviceReduce::Sum / DeviceScan::InclusiveSum"
bench_args[gpt2_bench]="(the gpt2 stage's runs)"
bench_base[gpt2_bench]="PyTorch eager bf16 + SDPA + KV cache (tools/gpt2_torch_ref.py), same device, shapes and timing"
# The gpt2 stage (docs/gpt2.md "Benchmarks"): the 124M shape always, the 1558M shape only with gpt2_big_s seconds
# left; each configuration's timed calls stop after gpt2_cap seconds.
gpt2_cap=5 gpt2_big_s=150
headline_gemm="--shapes 8192x8192x8192 --types bf16"
headline_gemm_90a="--shapes 8192x8192x8192 --types bf16,pp" # both sm_90a schedules, cooperative and pingpong
bench_args_of() { # NAME ARCH: the benchmark's arguments on ARCH
  if [ -n "${bench_arch["$1 $2"]+x}" ]; then echo "${bench_arch["$1 $2"]}"; else echo "${bench_args[$1]:-}"; fi
}
headline_gemm_of() { # ARCH: the headline GEMM's arguments on ARCH
  if [ "$1" = 90a ]; then echo "$headline_gemm_90a"; else echo "$headline_gemm"; fi
}
# The tuning stage (kbd/tune.h, docs/tuning.md): gemm_run measures every valid configuration of each of the GEMM
# benchmark's bf16 shapes (B column-major: the CTA-pair kernel's layout, so sm_100a has its pair candidates too) and the
# cost model's pick is compared with the measured best.
tune_gemm_shapes="8192x8192x8192 4096x4096x4096 4095x4097x4096 1000x3000x2000 1x8192x8192 16x8192x8192 64x8192x8192 128x8192x8192"
headline_attention="--only fwd --seqs 4096 --hdims 128"
# Sanitizer runs: small problems (compute-sanitizer is 10-100x slower); examples not listed run with their defaults.
declare -A san_args
san_args[vector_add]="100000" san_args[sum_reduce]="100000" san_args[prefix_sum]="100000"
san_args[softmax]="64 1000" san_args[layernorm]="64 1000" san_args[row_stats]="64 1000"
san_args[warp_specialized]="64 1000" san_args[gemm]="256 256 256" san_args[attention]="1 2 1 256 256 64"

plan="$out/plan.txt"
make_plan() { # ARCH BUILD_DIR: the plan lines; fails when a GPU program has no place in it
  local arch=$1 b=$2 missing=0
  local reg="$b/kbd-gpu-programs.txt"
  [ -f "$reg" ] || { echo "gpu-check: $reg is missing (configure failed?)" >&2; return 1; }
  if [ -n "${KBD_GPU_CHECK_EXTRA:-}" ]; then
    cat "$reg" - <<<"$KBD_GPU_CHECK_EXTRA" >"$reg.plan"
    reg="$reg.plan"
  fi
  local tests; tests=$(ctest --test-dir "$b" -N -L gpu 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: *//p')
  local cmds; cmds=$(ctest --test-dir "$b" -N -V -L gpu 2>/dev/null | grep -E 'Test command:' || true)
  echo "# arch sm_$arch"
  local t; for t in $tests; do echo "correctness test $t"; done
  local a tgt name dir file
  while IFS=$'\t' read -r a tgt name dir file; do
    [ "$a" = "$arch" ] || [ "$a" = all ] || continue
    if [[ $dir == bench ]]; then
      if [ -n "${bench_args[$name]+x}" ]; then
        local ba; ba=$(bench_args_of "$name" "$arch")
        echo "bench $name $tgt ${ba:-(defaults)} | baseline: ${bench_base[$name]}"
        [ "$name" = gemm_bench ] && echo "headline $name $tgt $(headline_gemm_of "$arch") | baseline: ${bench_base[$name]}"
      else
        echo "UNPLANNED benchmark $tgt ($dir): add it to bench_args in tools/gpu-check.sh"; missing=1
      fi
    elif [ "$a" = all ]; then
      grep -qx "$tgt" <<<"$tests" && echo "program $tgt (test $tgt)" ||
        { echo "UNPLANNED GPU program $tgt ($dir): no gpu-labelled test runs it"; missing=1; }
    else
      if grep -qF "$(basename "$file")" <<<"$cmds"; then
        echo "program $tgt (gpu tests)"
      else
        echo "UNPLANNED GPU program $tgt ($dir): no gpu-labelled test runs it (tests/gpu: kbd_gpu_example)"; missing=1
      fi
      [[ $dir == examples ]] && echo "sanitize $tgt ${san_args[$name]:-(defaults)}"
    fi
  done <"$reg"
  echo "torch gemm_sm$arch --save, attention_sm$arch --save vs torch.matmul / scaled_dot_product_attention"
  echo "torch_bench attention, decode, gemm (PyTorch on the same device)"
  echo "gpt2 gpt2_bench_sm$arch --model 124M --profile --greedy 8, then 1558M with ${gpt2_big_s} s left | baseline: tools/gpt2_torch_ref.py (PyTorch, same shapes), greedy check on the same weights"
  echo "tune gemm_sm$arch --b-col --tune --no-check on ${tune_gemm_shapes// /,}: cost-model pick vs measured best"
  echo "profile transpose_sm$arch transpose_noswz_sm$arch gemm_sm$arch: ncu vs KBD_CPU_PROFILE"
  return $missing
}

build_ok=1
for arch in $archs; do
  b="$work/sm$arch"
  configure_cmd "$arch"
  { echo; echo "## Build sm_$arch"; echo; echo '```'; printf '%q ' "${cfg[@]}"; echo; echo '```'; echo
    printf '| step | status | s | detail |\n|---|---|---|---|\n'; } >>"$summary"
  s0=$(date +%s)
  if ! PATH=$clean_path "${cfg[@]}" >"$logs/configure-sm$arch.log" 2>&1; then
    echo "configure FAILED: $(grep -m3 -A2 'CMake Error' "$logs/configure-sm$arch.log" | tr '\n' ' ' | cut -c1-400)" >>"$summary"
    record build "configure sm_$arch" FAIL $(($(date +%s) - s0)) "$(grep -m1 -A2 'CMake Error' "$logs/configure-sm$arch.log" | tr '\n' ' ')"
    build_ok=0; pack_logs; continue
  fi
  if [ "$rehearse" = 1 ]; then # prove that neither was used
    grep -q 'CMocka not found' "$logs/configure-sm$arch.log" ||
      { record build "hide CMocka sm_$arch" FAIL 0 "the configure still found CMocka"; build_ok=0; }
    grep -qE '^KBD_FILECHECK:[A-Z]*=(.*NOTFOUND)?$' "$b/CMakeCache.txt" ||
      { record build "hide FileCheck sm_$arch" FAIL 0 "the configure still found FileCheck"; build_ok=0; }
  fi
  if make_plan "$arch" "$b" >"$logs/plan-sm$arch.txt"; then planned=OK; else planned=FAIL; build_ok=0; fi
  cat "$logs/plan-sm$arch.txt" >>"$plan"
  pf="$logs/plan-sm$arch.txt"
  echo "gpu-check: plan sm_$arch: $(grep -c '^correctness' "$pf") gpu tests, $(grep -c '^program' "$pf") GPU programs," \
    "$(grep -c '^sanitize' "$pf") sanitizer runs x 3 tools, $(grep -c '^bench' "$pf") benchmarks + PyTorch's, 3 profiles" \
    "$(grep -q UNPLANNED "$pf" && echo "- UNPLANNED: $(grep -c UNPLANNED "$pf")")"
  record build "plan sm_$arch" $planned 0 "$(grep -c . "$logs/plan-sm$arch.txt") items$([ $planned = FAIL ] && echo "; $(grep UNPLANNED "$logs/plan-sm$arch.txt" | head -3 | tr '\n' ' ')")"
  [ "$plan_only" = 1 ] && continue
  # What to build: every GPU program of this arch, the CPU twins the GPU tests compare against, the test tools.
  targets=(kbd_gpu_query kbd_compare_dump)
  known=$(cmake --build "$b" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p; s/^\([A-Za-z0-9_.-]*\): phony$/\1/p')
  while IFS=$'\t' read -r a tgt name dir file; do
    [ "$a" = "$arch" ] || [ "$a" = all ] || continue
    targets+=("$tgt")
    grep -qx "${name}_cpu" <<<"$known" && targets+=("${name}_cpu")
  done <"$b/kbd-gpu-programs.txt"
  # the profile stage's sm_90a twin of the GEMM (gemm_cpu emulates sm_100a)
  grep -qx gemm90_cpu <<<"$known" && targets+=(gemm90_cpu)
  keep=(-k 0)
  [ ${#generator[@]} -eq 0 ] && keep=(-k)
  echo "gpu-check: building ${#targets[@]} targets for sm_$arch with $jobs jobs"
  cmake --build "$b" -j"$jobs" --target "${targets[@]}" -- "${keep[@]}" >"$logs/build-sm$arch.log" 2>&1
  brc=$?
  secs=$(($(date +%s) - s0))
  if [ $brc = 0 ]; then
    record build "build sm_$arch" OK $secs "${#targets[@]} targets"
  else
    build_ok=0
    record build "build sm_$arch" BUILD-FAIL $secs "$(grep -m5 -E 'error|Error' "$logs/build-sm$arch.log" | cut -c1-300 | tr '\n' ' ')"
  fi
  pack_logs
done
{ echo; echo "Plan: plan.txt ($(grep -c . "$plan" 2>/dev/null || echo 0) items)."; } >>"$summary"
if [ "$plan_only" = 1 ] || [ "$build_ok" = 0 ] && [ "$rehearse" = 1 ]; then
  pack_logs
  [ "$build_ok" = 1 ] && { echo "gpu-check: rehearsal plan OK ($(elapsed) s)"; exit 0; }
  echo "gpu-check: rehearsal FAILED: see $summary"; exit 1
fi

arch=${archs%% *}
b="$work/sm$arch"
prog() { # NAME: the built executable of program NAME for this arch
  awk -F'\t' -v a="$arch" -v n="$1" '($1 == a || $1 == "all") && $3 == n { print $5; exit }' "$b/kbd-gpu-programs.txt"
}

# ---- correctness: every gpu-labelled test (examples with their full checks, odd shapes, device tests) ----------
if stage_begin correctness 120 "Correctness (ctest -L gpu)"; then
  # the rehearsal starts every arch's tests (each SKIPs without a device); a GPU run has one arch
  for carch in $([ "$rehearse" = 1 ] && echo "$archs" || echo "$arch"); do
  ctest --test-dir "$work/sm$carch" -L gpu -j4 --timeout 240 --output-on-failure >"$logs/correctness-sm$carch.log" 2>&1
  while read -r name res secs; do
    case "$res" in
    Passed) st=OK ;; Skipped) st=SKIP ;; Timeout) st=HANG ;; *) st=FAIL ;;
    esac
    detail=""
    [ "$st" = OK ] || detail=$(awk -v n="$name" '$0 ~ "Test *#[0-9]+: " n " " {on = 1; next} on && /Test *#[0-9]+: / {exit} on' \
      "$logs/correctness-sm$carch.log" | grep -v '^$' | grep -iE 'error|fail|mismatch|skip|wrong|no ' | head -3 | cut -c1-300)
    [ "$st" = HANG ] && detail="no exit within 240 s (hang); $detail"
    [ "$st" = SKIP ] && detail="exit 77${detail:+: $detail}"
    record correctness "$name$([ "$rehearse" = 1 ] && echo " (sm_$carch)")" "$st" "${secs%.*}" "$detail"
  done < <(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) \.*[ *]*\([A-Za-z]*\)[^0-9]*\([0-9.]*\) sec.*/\1 \2 \3/p' "$logs/correctness-sm$carch.log")
  done
  [ "$rehearse" = 1 ] && echo "(rehearsal: without a device every test reports SKIP)" >>"$summary"
  stage_end
fi
if [ "$rehearse" = 1 ]; then
  { echo; echo "Rehearsal ends here: every later stage needs a device."; } >>"$summary"
  pack_logs
  if [ "$failures" = 0 ] && [ "$build_ok" = 1 ]; then echo "gpu-check: rehearsal OK ($(elapsed) s)"; exit 0; fi
  echo "gpu-check: rehearsal FAILED ($failures failures): see $summary"; exit 1
fi

# ---- headline benchmarks -----------------------------------------------------------------------------------------
if stage_begin headline 90 "Headline benchmarks (kbd beside its baseline, same run)"; then
  p=$(prog gemm_bench)
  hg=$(headline_gemm_of "$arch")
  # shellcheck disable=SC2086
  run_prog headline "gemm_gpu $hg" 120 "$logs/headline-gemm.log" "$p" $hg
  record_figures headline gemm_gpu "$logs/headline-gemm.log"
  p=$(prog attention_bench)
  run_prog headline "attention_gpu $headline_attention" 120 "$logs/headline-attention.log" "$p" $headline_attention
  record_figures headline attention_gpu "$logs/headline-attention.log"
  stage_end
fi

# ---- a second opinion from PyTorch --------------------------------------------------------------------------------
if stage_begin torch 60 "Second opinion: PyTorch (same inputs)"; then
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >"$logs/torch-import.log" 2>&1; then
    record torch torch SKIP 0 "PyTorch with CUDA is not importable: $(tail -1 "$logs/torch-import.log")"
  else
    for kind in gemm attention; do
      case $kind in gemm) args="1000 3000 2000" ;; attention) args="2 8 2 1000 1000 128 --causal" ;; esac
      d="$work/torch-$kind"; rm -rf "$d"; mkdir -p "$d"
      # shellcheck disable=SC2086
      if run_prog torch "$kind $args --save" 120 "$logs/torch-$kind-run.log" "$(prog $kind)" $args --save "$d"; then
        run_prog torch "torch_check $kind" 120 "$logs/torch-$kind-check.log" python3 "$root/tools/gpu-check/torch_check.py" "$kind" "$d"
      fi
    done
  fi
  stage_end
fi

# ---- sanitizers -----------------------------------------------------------------------------------------------
if stage_begin sanitizers 150 "compute-sanitizer (memcheck, racecheck, synccheck) on small runs"; then
  san=$(command -v compute-sanitizer || ls "$cuda_home"/bin/compute-sanitizer "$cuda_home"/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
  if [ -z "$san" ]; then
    record sanitizers compute-sanitizer SKIP 0 "compute-sanitizer is not installed with this toolkit"
  else
    while IFS=$'\t' read -r a tgt name dir file; do
      [ "$a" = "$arch" ] && [ "$dir" = examples ] || continue
      for tool in memcheck racecheck synccheck; do
        # shellcheck disable=SC2086
        run_prog sanitizers "$tool $tgt ${san_args[$name]:-}" 120 "$logs/san-$tool-$tgt.log" \
          "$san" --tool "$tool" --error-exitcode 99 "$file" ${san_args[$name]:-}
      done
    done <"$b/kbd-gpu-programs.txt"
  fi
  stage_end
fi

# ---- every benchmark --------------------------------------------------------------------------------------------
if stage_begin bench 150 "Benchmarks (each beside its baseline in the same run)"; then
  while IFS=$'\t' read -r a tgt name dir file; do
    [ "$a" = "$arch" ] && [ "$dir" = bench ] || continue
    [ "$name" = gpt2_bench ] && continue # the gpt2 stage runs it beside PyTorch
    short=$(basename "$file")
    ba=$(bench_args_of "$name" "$arch")
    # shellcheck disable=SC2086
    run_prog bench "$short $ba" 240 "$logs/bench-$short.log" "$file" $ba
    record_figures bench "$short" "$logs/bench-$short.log"
    echo "baseline of $short: ${bench_base[$name]:-?}" >>"$summary"
  done <"$b/kbd-gpu-programs.txt"
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    for what in attention decode gemm; do
      run_prog bench "torch_bench $what" 240 "$logs/bench-torch-$what.log" python3 "$root/tools/gpu-check/torch_bench.py" "$what"
      record_figures bench "torch_bench $what" "$logs/bench-torch-$what.log"
    done
  else
    record bench torch_bench SKIP 0 "PyTorch with CUDA is not importable"
  fi
  stage_end
fi

# ---- GPT-2 beside PyTorch -----------------------------------------------------------------------------------------
# bench/gpt2/gpt2_gpu_bench.c and tools/gpt2_torch_ref.py on this device: prefill (B 1, 4, 8; T 128, 1024) and decode
# (B 1, 8, 32 after 128 prompt tokens) tokens/s, the time per op of one prefill and one decode step, for 124M and, time
# permitting, 1558M. Correctness: kbd's greedy tokens and top logits on the 124M random weights against PyTorch in
# float32 on the same weights (the bench writes them, the script reads them). Results: $out/gpt2/{kbd,torch}-MODEL.json
# and the docs/benchmarks.md table (tools/gpt2_bench_table.py) in summary.md.
if stage_begin gpt2 60 "GPT-2 beside PyTorch (prefill and decode tokens/s, time per op, greedy check)"; then
  mkdir -p "$out/gpt2"
  rm -f "$out"/gpt2/*.json
  p=$(prog gpt2_bench)
  have_torch=0
  python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 && have_torch=1
  [ $have_torch = 1 ] || record gpt2 gpt2_torch_ref SKIP 0 "PyTorch with CUDA is not importable: kbd's figures alone"
  wdir="$work/gpt2-weights"
  pairs=()
  for model in 124M 1558M; do
    if [ "$model" = 1558M ] && [ "$(left)" -lt "$gpt2_big_s" ]; then
      record gpt2 "gpt2 1558M" SKIPPED 0 "over budget: needs about ${gpt2_big_s} s, $(left) s left"
      continue
    fi
    kj="$out/gpt2/kbd-$model.json" tj="$out/gpt2/torch-$model.json"
    kx=() tx=()
    [ "$model" = 124M ] && kx=(--greedy 8 --weights "$wdir")
    # each program stops starting configurations at its share of what is left (the rest are listed as skipped): a
    # quarter each for 124M, half each for 1558M, whose setup (writing and loading 1.56e9 random weights, about
    # 60 s) comes out of the kbd run's half
    if [ "$model" = 124M ]; then share=$(($(left) / 4)) lim=$(($(left) / 4 + 60)); else
      share=$(($(left) / 2 - 70)) lim=$(($(left) / 2)); fi
    [ "$share" -ge 20 ] || share=20
    run_prog gpt2 "gpt2_bench $model" "$lim" "$logs/gpt2-kbd-$model.log" "$p" --model "$model" --profile \
      --cap "$gpt2_cap" --budget "$share" --json "$kj" "${kx[@]}"
    record_figures gpt2 "gpt2_bench $model" "$logs/gpt2-kbd-$model.log"
    [ $have_torch = 1 ] || continue
    [ "$model" = 124M ] && [ -f "$kj" ] && tx=(--weights "$wdir" --check "$kj")
    run_prog gpt2 "gpt2_torch_ref $model$([ ${#tx[@]} -gt 0 ] && echo " --check")" "$lim" \
      "$logs/gpt2-torch-$model.log" python3 "$root/tools/gpt2_torch_ref.py" --model "$model" --profile \
      --cap "$gpt2_cap" --budget "$share" --json "$tj" "${tx[@]}"
    record_figures gpt2 "gpt2_torch_ref $model" "$logs/gpt2-torch-$model.log"
    grep '^CHECK' "$logs/gpt2-torch-$model.log" >>"$summary"
    [ -f "$kj" ] && [ -f "$tj" ] && pairs+=("$kj" "$tj")
  done
  rm -rf "$wdir"
  if [ ${#pairs[@]} -gt 0 ]; then
    { echo; python3 "$root/tools/gpt2_bench_table.py" "${pairs[@]}" --ops; } >>"$summary" 2>"$logs/gpt2-table.log" ||
      record gpt2 gpt2_bench_table FAIL 0 "$(head -2 "$logs/gpt2-table.log")"
  fi
  stage_end
fi

# ---- tuning: the cost model's pick against the measured best ---------------------------------------------------------
if stage_begin tune 60 "Tuning: gemm_run's cost-model pick vs the measured best (KBD_TUNE=1)"; then
  tcache="$work/tune-cache.txt"
  rm -f "$tcache" "$tcache.lock"
  p=$(prog gemm)
  for shape in $tune_gemm_shapes; do
    # shellcheck disable=SC2086
    run_prog tune "gemm $shape" 60 "$logs/tune-gemm-$shape.log" env KBD_TUNE=1 KBD_TUNE_LOG=1 KBD_TUNE_CACHE="$tcache" \
      "$p" ${shape//x/ } --b-col --tune --no-check
    # kbd_tune's log: "<op>: <name> median <ms> ms of <n>" per candidate, then the decision naming the model's pick
    awk -v shape="$shape" '
      / median / && /^kbd_tune: gemm: / { ms[$3] = $5 }
      /^kbd_tune: gemm \[/ && /measured: / {
        best = $0; sub(/.*measured: /, "", best); sub(/ .*/, "", best)
        model = $0; sub(/.*model.s pick /, "", model); sub(/\).*/, "", model)
      }
      END {
        if (best == "" || !(best in ms)) exit
        loss = (model in ms) && ms[best] > 0 ? 100 * (ms[model] / ms[best] - 1) : -1
        printf "BENCH tune gemm shape=%s best=%s best_ms=%s model=%s model_ms=%s model_right=%d loss_pct=%.1f\n", \
          shape, best, ms[best], model, (model in ms) ? ms[model] : "-", model == best, loss
      }' "$logs/tune-gemm-$shape.log" >>"$logs/tune-gemm.log"
  done
  record_figures tune "gemm_run picks" "$logs/tune-gemm.log"
  if [ -s "$logs/tune-gemm.log" ]; then
    awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
           n++; right += f["model_right"]; if (f["loss_pct"] > worst) worst = f["loss_pct"]; if (f["loss_pct"] > 0) sum += f["loss_pct"] }
         END { printf "Model right on %d of %d shapes; loss when wrong: mean %.1f%%, worst %.1f%%.\n", right, n,
               (n > right ? sum / (n - right) : 0), worst }' "$logs/tune-gemm.log" >>"$summary"
  fi
  stage_end
fi

# ---- the CPU profiler against the hardware --------------------------------------------------------------------------
if stage_begin profile 90 "KBD_CPU_PROFILE's prediction beside Nsight Compute's counters"; then
  ncu=$(command -v ncu || ls "$cuda_home"/bin/ncu "$cuda_home"/nsight-compute*/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -z "$ncu" ]; then
    record profile ncu SKIP 0 "Nsight Compute (ncu) is not installed"
  elif ! command -v python3 >/dev/null 2>&1; then
    record profile ncu SKIP 0 "python3 is needed to compare the profiles"
  else
    metrics=$(python3 "$root/tools/gpu-check/profile_compare.py" metrics)
    # program, its kernel's name in the profile, the CPU twin (gemm: the emulation of this arch's kernel text)
    for row in "transpose tr_transpose transpose" "transpose_noswz tr_transpose transpose_noswz" \
      "gemm gemm_kernel $([ "$arch" = 90a ] && echo gemm90 || echo gemm)"; do
      read -r name kernel twin <<<"$row"
      cpu="$b/examples/${twin}_cpu"
      [ -x "$cpu" ] || { record profile "$name" SKIP 0 "${twin}_cpu was not built"; continue; }
      args=""; [ $name = gemm ] && args="512 512 512"
      # shellcheck disable=SC2086
      rm -f "$work/prof-$name.json"
      # shellcheck disable=SC2086
      run_prog profile "$name (CPU profile)" 120 "$logs/prof-$name-cpu.log" env KBD_CPU_PROFILE_JSON="$work/prof-$name.json" "$cpu" $args
      rm -f "$work/prof-$name.csv"
      # shellcheck disable=SC2086
      run_prog profile "$name (ncu)" 180 "$logs/prof-$name-ncu.log" "$ncu" --csv --page raw --print-units base --metrics "$metrics" \
        --log-file "$work/prof-$name.csv" "$(prog $name)" $args &&
        run_prog profile "$name (compare)" 60 "$logs/prof-$name-compare.log" python3 "$root/tools/gpu-check/profile_compare.py" \
          compare --kbd "$work/prof-$name.json" --ncu "$work/prof-$name.csv" --kernel "$kernel" &&
        record_figures profile "$name" "$logs/prof-$name-compare.log"
    done
  fi
  stage_end
fi

{ echo; echo "---"; echo "Total $(elapsed) s of ${budget} s; $failures failure(s). Logs: logs.tar.gz; every figure: results.jsonl."; } >>"$summary"
pack_logs
echo "gpu-check: done in $(elapsed) s, $failures failure(s); $summary"
[ "$failures" = 0 ]
