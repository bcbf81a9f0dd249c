#!/usr/bin/env bash
# bench/cutlass_reference.sh - kbd's GEMM main loops beside CUTLASS's, in machine code, without a GPU (issue 27,
# part 3; not in the default CI path). docs/benchmarks.md ("Machine code against the references") has the result.
#
#   bench/cutlass_reference.sh [--workdir DIR] [--keep] [--cutlass-version V]
#
# 1. Installs the PyPI package nvidia-cutlass into DIR/pkgs (pip --target, --no-deps: only its C++ headers,
#    cutlass_library/source/include, are used), or reuses the copy already there. Nothing system-wide.
# 2. Compiles two reference kernels, written here against CUTLASS's collective-builder API
#    (bench/cutlass_ref/*.cu), to cubins with nvcc: -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr
#      sm90_cooperative_bf16.cu  -gencode arch=compute_90a,code=sm_90a    KernelTmaWarpSpecializedCooperative,
#                                tile 128x256x64, cluster 2x1x1, bf16 x bf16 -> f32, bf16 out, A row / B col
#      sm100_2sm_bf16.cu         -gencode arch=compute_100a,code=sm_100a  KernelTmaWarpSpecialized2SmSm100,
#                                tile 256x256x64 per CTA pair, cluster 2x1x1, the same types and layouts
#    and kbd's examples/gemm/gemm.cu for both archs with the Release flags tests/sass_budget uses (-O3 -DNDEBUG
#    -std=c++14 -Xptxas -split-compile=0), so its rows equal tests/sass_budget/budgets.txt.
# 3. Disassembles each cubin (cuobjdump -sass) and reads it with tools/kbd-inspect --loops --json --sass-file;
#    prints, for the main loop (the innermost loop with the most MMAs) of each kernel: MMA shape per k-block,
#    tensor-core cycles per k-block, non-MMA instructions per k-block of the MMA-issuing warp (shortest ..
#    longest path), issue share, and the instructions by class of both paths; then the versions (CUTLASS from
#    the package metadata and cutlass/version.h, nvcc, cuobjdump) and the compile times.
#
# --workdir DIR  where the package, cubins, listings and JSON go (default: a new directory under ${TMPDIR:-/tmp},
#                removed at the end unless --keep). A DIR that already holds pkgs/ reuses its CUTLASS.
# --keep         keep the default work directory (a --workdir is always kept)
# --cutlass-version V   install nvidia-cutlass==V (default: the newest pip finds); ignored when reusing
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc); KBD_CUOBJDUMP (default: cuobjdump on
# PATH, the toolkit's, a pip copy under build/*/sass-tools or build/sass-tools of this tree, else pip-installed
# into DIR/pkgs: nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm); PYTHON (default python3).
# Writes nothing into the repository. Exit status 0, 1 with the failing step on stderr, 2 on a usage error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
PYTHON="${PYTHON:-python3}"
workdir=""
keep=0
cutlass_version=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --workdir) workdir="${2:?--workdir needs a directory}"; shift 2 ;;
    --workdir=*) workdir="${1#*=}"; shift ;;
    --keep) keep=1; shift ;;
    --cutlass-version) cutlass_version="${2:?--cutlass-version needs a version}"; shift 2 ;;
    --cutlass-version=*) cutlass_version="${1#*=}"; shift ;;
    -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cutlass_reference.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "cutlass_reference.sh: $*" >&2; exit 1; }
say() { echo "# $*"; }

if [[ -z "$workdir" ]]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/kbd-cutlass-ref.XXXXXX")"
  [[ $keep -eq 1 ]] || trap 'rm -rf "$workdir"' EXIT
fi
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"
pkgs="$workdir/pkgs"

NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[[ -x "$NVCC" ]] || die "nvcc not found (set NVCC)"
nvcc_version="$("$NVCC" --version | sed -n 's/.*\(V[0-9][0-9.]*\).*/\1/p' | tail -1)"

# ---- CUTLASS headers from PyPI ----------------------------------------------------------------------------------
find_cutlass_include() {
  local v
  v="$(find "$pkgs" -path '*/include/cutlass/version.h' 2>/dev/null | grep -v '/tools/' | head -1 || true)"
  [[ -n "$v" ]] && dirname "$(dirname "$v")"
  return 0
}
inc="$(find_cutlass_include)"
if [[ -z "$inc" ]]; then
  spec="nvidia-cutlass${cutlass_version:+==$cutlass_version}"
  say "installing $spec into $pkgs (pip --target --no-deps)"
  PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$pkgs" "$spec" || die "pip install $spec failed"
  inc="$(find_cutlass_include)"
  [[ -n "$inc" ]] || die "no include/cutlass/version.h in the installed nvidia-cutlass (under $pkgs)"
else
  say "reusing CUTLASS headers at $inc"
fi
pkg_version="$(sed -n 's/^Version: //p' "$pkgs"/nvidia_cutlass-*.dist-info/METADATA 2>/dev/null | head -1)"
hdr_version="$(awk '/#define CUTLASS_(MAJOR|MINOR|PATCH) /{v[$2]=$3} END {
  printf "%s.%s.%s", v["CUTLASS_MAJOR"], v["CUTLASS_MINOR"], v["CUTLASS_PATCH"] }' "$inc/cutlass/version.h")"

# ---- cuobjdump ----------------------------------------------------------------------------------------------------
cuobjdump="${KBD_CUOBJDUMP:-}"
if [[ -z "$cuobjdump" ]]; then
  shopt -s nullglob
  cands=("$(command -v cuobjdump || true)" "$(dirname "$NVCC")/cuobjdump"
         "$root"/build/*/sass-tools/nvidia/*/bin/cuobjdump "$root"/build/sass-tools/nvidia/*/bin/cuobjdump
         "$pkgs"/nvidia/*/bin/cuobjdump)
  shopt -u nullglob
  for c in "${cands[@]}"; do
    if [[ -n "$c" && -x "$c" ]]; then cuobjdump="$c"; break; fi
  done
fi
if [[ -z "$cuobjdump" ]]; then
  say "installing cuobjdump and nvdisasm into $pkgs (pip --target --no-deps)"
  PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$pkgs" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm || die "pip install nvidia-cuda-cuobjdump failed"
  cuobjdump="$(find "$pkgs/nvidia" -path '*/bin/cuobjdump' -type f 2>/dev/null | head -1 || true)"
  [[ -n "$cuobjdump" ]] || die "no cuobjdump (set KBD_CUOBJDUMP)"
fi
if ! command -v nvdisasm >/dev/null && [[ -x "$(dirname "$cuobjdump")/nvdisasm" ]]; then
  export NVDISASM_PATH="$(dirname "$cuobjdump")"
fi
cuobjdump_version="$("$cuobjdump" --version | sed -n 's/.*\(V[0-9][0-9.]*\).*/\1/p' | tail -1)"

# ---- compile, disassemble, measure ---------------------------------------------------------------------------------
# unit <name> <arch> <source> <flags...>: one nvcc at a time; writes <name>.cubin, .sass, .json, .seconds
unit() {
  local name="$1" arch="$2" src="$3" t0 t1
  shift 3
  t0="$(date +%s.%N)"
  "$NVCC" -gencode "arch=compute_$arch,code=sm_$arch" "$@" -cubin "$src" -o "$workdir/$name.cubin" \
    > "$workdir/$name.nvcc.log" 2>&1 || { cat "$workdir/$name.nvcc.log" >&2; die "nvcc failed on $src for sm_$arch"; }
  t1="$(date +%s.%N)"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$workdir/$name.seconds"
  "$cuobjdump" -sass "$workdir/$name.cubin" > "$workdir/$name.sass" || die "cuobjdump -sass $name.cubin failed"
  "$PYTHON" "$root/tools/kbd-inspect" --loops --json --sass-file "$workdir/$name.sass" --arch "$arch" \
    > "$workdir/$name.json" || die "tools/kbd-inspect --loops failed on $name.sass"
  say "$name: sm_$arch compiled in $(cat "$workdir/$name.seconds") s"
}
cutlass_flags=(-O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr -I"$inc")
kbd_flags=(-O3 -DNDEBUG -std=c++14 -Xptxas -split-compile=0 -I"$root/include" -I"$root/examples/gemm")
say "nvcc $nvcc_version ($NVCC), cuobjdump $cuobjdump_version, CUTLASS $hdr_version (nvidia-cutlass $pkg_version);" \
    "$(nproc) cores, loadavg $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)"
unit cutlass_sm90a 90a "$here/cutlass_ref/sm90_cooperative_bf16.cu" "${cutlass_flags[@]}"
unit cutlass_sm100a 100a "$here/cutlass_ref/sm100_2sm_bf16.cu" "${cutlass_flags[@]}"
unit kbd_gemm_sm90a 90a "$root/examples/gemm/gemm.cu" "${kbd_flags[@]}"
unit kbd_gemm_sm100a 100a "$root/examples/gemm/gemm.cu" "${kbd_flags[@]}"

# ---- the table ------------------------------------------------------------------------------------------------------
"$PYTHON" - "$workdir" "$hdr_version" "$pkg_version" "$nvcc_version" "$cuobjdump_version" <<'PY'
import datetime, json, os, re, sys

wd, hdr, pkg, nvcc, cuobj = sys.argv[1:6]
# (label, unit, kernel name in kbd-inspect's record or None for the unit's only MMA kernel, arch)
ROWS = [
    ("CUTLASS sm90 cooperative (128x256x64, 2x1x1)", "cutlass_sm90a", None, "sm_90a"),
    ("kbd gemm_kernel (128x128x64, 5 variants)", "kbd_gemm_sm90a", "gemm_kernel", "sm_90a"),
    ("CUTLASS sm100 2SM (256x256x64 per pair, 2x1x1)", "cutlass_sm100a", None, "sm_100a"),
    ("kbd gemm_pair_bf16_rc (256x256x64 per pair)", "kbd_gemm_sm100a", "gemm_pair_bf16_rc", "sm_100a"),
    ("kbd gemm_kernel (1 SM, 256x128x64)", "kbd_gemm_sm100a", "gemm_kernel", "sm_100a"),
]
CLASSES = ["mufu", "fp32", "fp32x2", "fp16x2", "convert", "int", "uniform", "move", "sync", "memory", "control",
           "warp", "other"]
MMA_OP = re.compile(r"^(HGMMA|QGMMA|IGMMA|BGMMA|HMMA|IMMA|DMMA|QMMA|OMMA|UTC\w*MMA)$")


def shapes(it):
    out = []
    for e in it["mma_shapes"]:
        op = e["insn"].split()[0].split(".")[0] + (".2CTA" if e["pair"] else "")
        shp = "%sx%sx%s" % (e["m"], e["n"], e["k"]) if e["m"] else "?"
        out.append("%d x %s %s %s" % (e["count"], op, shp, e["dtype"]))
    return ", ".join(out)


res = []
for label, unit, kernel, arch in ROWS:
    with open(os.path.join(wd, unit + ".json")) as f:
        recs = json.load(f)
    if kernel:
        recs = [r for r in recs if r["name"] == kernel]
    else:
        recs = [r for r in recs if r["main_loop"] is not None]
    if len(recs) != 1:
        sys.exit("cutlass_reference.sh: %s: expected one kernel%s with an MMA loop in %s.sass, found %d"
                 % (label, " named " + kernel if kernel else "", unit, len(recs)))
    r = recs[0]
    L = r["loops"][r["main_loop"]]
    if L["iteration"] is None:
        sys.exit("cutlass_reference.sh: %s: main loop #%d is irreducible, no iteration to count" % (label, L["id"]))
    lg, sh = L["iteration"]["longest"], L["iteration"]["shortest"]
    with open(os.path.join(wd, unit + ".seconds")) as f:
        secs = f.read().strip()
    name = r["name"] if not r["name"].startswith("_Z") else "cutlass::device_kernel<GemmUniversal<...>>"
    mma = shapes(sh) if shapes(sh) == shapes(lg) else "%s (shortest) .. %s (longest)" % (shapes(sh), shapes(lg))
    res.append(dict(label=label, unit=unit, arch=arch, kernel=name, loop=L["id"],
                    addresses="%s..%s" % (L["start"], L["end"]), mma=mma, tc=lg["tensor_cycles"],
                    short=sh["non_mma"], long=lg["non_mma"], share_short=sh["issue_share"],
                    share_long=lg["issue_share"], classes_short=sh["classes"], classes_long=lg["classes"],
                    opcodes_short=sh["opcodes"], opcodes_long=lg["opcodes"], compile_s=secs))


def pct(x):
    return "%d%%" % round(100 * x) if x is not None else "-"


def rng(a, b):
    return str(a) if a == b else "%s .. %s" % (a, b)


print()
print("| kernel | arch | MMA per k-block | tensor-core cycles per k-block | non-MMA per k-block, shortest .. longest"
      " | issue share |")
print("|---|---|---|---:|---:|---:|")
for x in res:
    print("| %s | %s | %s | %g | %s | %s |" % (x["label"], x["arch"], x["mma"], x["tc"], rng(x["short"], x["long"]),
                                             rng(pct(x["share_short"]), pct(x["share_long"]))))
print()
used = [c for c in CLASSES if any(x["classes_short"].get(c) or x["classes_long"].get(c) for x in res)]
print("Non-MMA instructions per k-block by class (kbd-inspect's classes), shortest / longest path:")
print()
print("| kernel | arch | " + " | ".join(used) + " |")
print("|---|---|" + "---:|" * len(used))
for x in res:
    print("| %s | %s | " % (x["label"], x["arch"]) + " | ".join(
        rng(x["classes_short"].get(c, 0), x["classes_long"].get(c, 0)).replace(" .. ", " / ") for c in used) + " |")
print()
print("Opcodes of the longest path:")
for x in res:
    ops = [(k, v) for k, v in x["opcodes_long"].items() if not MMA_OP.match(k)]
    print("  %s, %s: %s" % (x["label"], x["arch"], ", ".join("%s %d" % kv for kv in ops)))
print()
print("Main loops: " + "; ".join("%s %s loop #%d %s" % (x["unit"], x["kernel"], x["loop"], x["addresses"])
                                 for x in res))
print("Compile times (s, one nvcc at a time): " + ", ".join(
    "%s %s" % (u, s) for u, s in dict((x["unit"], x["compile_s"]) for x in res).items()))
print("Versions: CUTLASS %s (cutlass/version.h), PyPI nvidia-cutlass %s; nvcc %s; cuobjdump %s; measured %s"
      % (hdr, pkg or "?", nvcc, cuobj, datetime.date.today().isoformat()))
with open(os.path.join(wd, "summary.json"), "w") as f:
    json.dump(dict(cutlass=hdr, nvidia_cutlass=pkg, nvcc=nvcc, cuobjdump=cuobj,
                   date=datetime.date.today().isoformat(), rows=res), f, indent=1)
PY
[[ -n "${workdir:-}" && ( $keep -eq 1 || -z "$(trap -p EXIT)" ) ]] && say "kept: $workdir"
exit 0
