#!/usr/bin/env bash
# expect_gemm_schedules.sh PLAN - the plan gpu_check_plan wrote (tests/gpu_check/CMakeLists.txt) measures both sm_90a
# GEMM schedules: sm_90a's headline and bench runs of gemm_gpu ask for the cooperative rows (type bf16) and the
# pingpong rows (type pp), and sm_100a's ask for no pp (gemm_gpu_sm100a exits 2 on it: no consumer warpgroups there).
set -uo pipefail
plan=$1
# gpu_check_plan removes its plan first and skips (77) without nvcc: then there is nothing to read
[ -s "$plan" ] || { echo "skipped: no $plan (gpu_check_plan writes it; it needs nvcc)"; exit 77; }
fail=0
types_of() { # ARCH KIND: the --types list of gemm_bench's KIND (bench / headline) line of ARCH's part of the plan
  awk -v a="# arch sm_$1" -v k="$2" '$0 == a { on = 1; next } /^# arch / { on = 0 }
    on && $1 == k && $2 == "gemm_bench" { for (i = 3; i < NF; ++i) if ($i == "--types") print $(i + 1) }' "$plan"
}
for kind in bench headline; do
  t90=$(types_of 90a $kind) t100=$(types_of 100a $kind)
  if [ -z "$t90" ] || [ -z "$t100" ]; then
    echo "FAIL: no $kind gemm_bench line with --types for both archs"; fail=1; continue
  fi
  case ",$t90," in *,bf16,*) ;; *) echo "FAIL: sm_90a $kind types '$t90' lack bf16 (cooperative)"; fail=1 ;; esac
  case ",$t90," in *,pp,*) ;; *) echo "FAIL: sm_90a $kind types '$t90' lack pp (pingpong)"; fail=1 ;; esac
  case ",$t100," in *,pp,*) echo "FAIL: sm_100a $kind types '$t100' ask for pp (sm_90a only)"; fail=1 ;; esac
  echo "$kind: sm_90a --types $t90, sm_100a --types $t100"
done
[ $fail = 0 ] && echo "both sm_90a GEMM schedules planned: OK"
exit $fail
