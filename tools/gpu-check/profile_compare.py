#!/usr/bin/env python3
"""profile_compare.py - the CPU machine's memory profile of a launch beside Nsight Compute's counters of the same one.

    profile_compare.py metrics [--extended] [--available FILE]
    profile_compare.py compare --kbd P.json --ncu N.csv [--kernel NAME] [--launch I] [--ncu-launch J]
                               [--ncu-kernel NAME] [--tolerance T] [--strict]

metrics   prints the comma-separated list of ncu metrics that `compare` reads, for
              ncu --csv --page raw --print-units base --metrics "$(profile_compare.py metrics)" \
                  --log-file N.csv <GPU program> <args>
          --extended adds the metrics whose names or meaning could not be confirmed from NVIDIA material (ncu stops
          on a metric its GPU does not have, so they are opt-in); --available FILE keeps only the metrics whose
          names appear in FILE (the output of `ncu --query-metrics`), and names the others on stderr.
compare   P.json: what KBD_CPU_PROFILE_JSON=P.json wrote (one JSON object per line, one line per launch:
          include/kbd/cpu/profile.h, kbd_profile_write_json); N.csv: ncu's CSV of the same program on the GPU, either
          the raw page (`--page raw`: one row per launch, a column per metric, a row of units under the header) or
          the default details page (one row per metric). NAME is kbd's kernel name (KBD_KERNEL's first argument,
          e.g. tr_transpose; the JSON's "kernel"): optional when P.json holds one kernel. On the GPU the kernel is
          the C++ function NAME_kbd_dev (include/kbd/ptx/launch.h), which is what ncu's "Kernel Name" shows
          (demangled, with its parameter list); --ncu-kernel names it otherwise. --launch / --ncu-launch pick the
          I-th / J-th launch of that kernel in each file (0-based; needed only when a file holds several).
          Prints a table (metric, kbd predicted, ncu measured, ratio = ncu / kbd, the ncu metric) and one line per
          row:
              BENCH bench=profile_compare kernel=NAME metric=M kbd=K ncu=N ratio=R match=0|1 tier=core|extended
                    ncu_metric=NAME[+NAME]
          ratio is 1 when both are 0 and inf when only kbd's is 0; match: |ratio - 1| <= the row's tolerance
          (0 for the exact counters, 0.10 for DRAM bytes; --tolerance overrides all).
          Exit 0 when it compared (whatever the ratios), 1 with --strict when a row does not match, 2 on malformed
          or mismatched input, with one line naming the file and the problem (never a traceback).

What corresponds to what (kbd's side: docs/profiling.md; the numbers are for ONE launch on both sides: kbd's
counters are the launch's totals over every block of the grid, and ncu's `.sum` sums a counter over the whole GPU
for the one launch it profiled, replaying that launch as many times as its passes need - so the two sides count the
same launch when P.json's line and N.csv's row are of the same program with the same arguments; compare checks the
grid and block sizes, which ncu's CSV carries, and refuses to compare different launches):

  kbd (summed over P.json's sites)          ncu metric                                               source
  shared_ld_wavefronts: wavefronts of       l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum     [1][2]
    op ld + ldmatrix sites
  shared_st_wavefronts: op st + stmatrix    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum     [1][2] (*a)
  shared_ld_bank_conflicts: wavefronts -    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum [1][2] (*b)
    ideal, op ld + ldmatrix
  shared_st_bank_conflicts: op st+stmatrix  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum [1][2] (*a)(*b)
  shared_lds_instructions: op ld            smsp__sass_inst_executed_op_shared_ld.sum                [1]
  shared_sts_instructions: op st            smsp__sass_inst_executed_op_shared_st.sum                [1] (*a)
  shared_ldsm_instructions: op ldmatrix     smsp__inst_executed_op_ldsm.sum                          [1]
  global_ld_sectors: sectors, global ld     l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum           [3][4]
  global_st_sectors: sectors, global st     l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum           [3][4]
  global_ld_requests: instructions, gl. ld  l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum          [3][4]
  global_st_requests: instructions, gl. st  l1tex__t_requests_pipe_lsu_mem_global_op_st.sum          [3][4]
  dram_read_bytes: global_unique_read_bytes dram__bytes_read.sum                                     [4] (*c)
  dram_write_bytes: global_unique_write_b.  dram__bytes_write.sum                                    [4] (*c)
  --extended (names seen only in third-party scripts, not in NVIDIA material: UNCONFIRMED):
  shared_ldsm_wavefronts: op ldmatrix       smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum  [5]
  shared_ldsm_bank_conflicts: op ldmatrix   smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum [5]
  shared_stsm_instructions: op stmatrix     smsp__sass_inst_executed_op_stsm.sum                     [5]
  shared_stsm_bank_conflicts: op stmatrix   smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum [5]

  [1] Nsight Compute's own rule SharedMemoryConflicts.py (the sections/ folder of an ncu install; read in the 2023
      and 2025 versions, as copied into the public repository xingxerx/Qallow, sections/SharedMemoryConflicts.py).
      It requests these op_ld / op_st wavefront and bank-conflict metrics and counts a "Shared Load" request as
      smsp__sass_inst_executed_op_shared_ld + smsp__inst_executed_op_ldsm: so the op_ld wavefronts and conflicts
      include ldmatrix (LDSM), while smsp__sass_inst_executed_op_shared_ld counts the other loads only.
  [2] forums.developer.nvidia.com/t/clarification-bank-conflicts-metric-vs-wavefronts-for-shared-memory-lds-128/
      359822: with LDS.128, l1tex__data_bank_conflicts_..._op_ld = l1tex__data_pipe_lsu_wavefronts_..._op_ld minus 4
      wavefronts per instruction - the ideal, i.e. kbd's wavefronts - ideal (a user's measurement, not NVIDIA's text).
  [3] Nsight Compute's L1TEX model as NVIDIA's Nsight Compute team states it (forums.developer.nvidia.com/t/
      wahts-the-difference-between-wavefronts-and-sectors-req/165293/4, also cited by docs/profiling.md): one request
      per warp-wide global instruction, sectors = the 32-byte sectors it touches - kbd's per-instruction model.
  [4] UNCONFIRMED from NVIDIA text: these names are the ones public ncu scripts use (found by code search, e.g. a
      profiling script that checks its list against `ncu --query-metrics` before use), but no NVIDIA file read here
      names them (ncu's MemoryWorkloadAnalysis_Chart.section, in the same public copy as [1], has dram__bytes for
      CC 7.5-10.0, not its _read / _write split; NVIDIA's nvprof-to-ncu metric table was not retrievable). They are
      in the default list all the same: every ncu script of this kind uses them.
  [5] Only in third-party metric lists (code search); not in any NVIDIA file read: --extended only.
  (*a) Whether STSM (stmatrix, sm_90+) counts in the op_st metrics as LDSM counts in op_ld is NOT confirmed: NVIDIA's
      rule [1] adds no STSM instructions to "Shared Store". kbd adds its stmatrix sites to the op_st rows; a kernel
      that uses stmatrix (the transpose example) shows which is true on the first GPU run.
  (*b) kbd's conflicts are its wavefronts minus its ideal (one wavefront per 128-byte phase, docs/profiling.md).
  (*c) Not an exact counter: kbd's global_unique_*_bytes are the 32-byte sectors the launch touched at least once
      (the DRAM traffic if every re-read hits L2). ncu flushes the caches before each replay pass by default
      (--cache-control all), so reads match when the data is read once; writes reach DRAM only when L2 evicts them,
      so an output that stays in the L2 at the kernel's end shows fewer DRAM write bytes than kbd's count.

Not compared, because the two sides do not count the same thing:
  - TMA traffic (tma_load_bytes / tma_store_bytes; cp.async.bulk) does not go through the LSU pipe: it is in
    neither the l1tex__..._pipe_lsu_... metrics nor kbd's sites (kbd counts it only in the tma_* and global_* byte
    counters). A TMA-only kernel has 0 global sectors and requests on both sides (ratio 1).
  - The TMA's and the tensor cores' own shared-memory reads and writes (wgmma / tcgen05 operands) are not thread
    accesses: kbd does not count them as shared wavefronts (docs/profiling.md) and they are not LSU wavefronts.
  - Shared-memory instructions kbd does not record (docs/profiling.md "Limits": atomics, mbarrier operations,
    kbd_ld_shared / kbd_st_shared, distributed shared memory, the shared side of reductions and scans, raw pointer
    accesses) may appear in ncu's op_ld / op_st counters: a ratio above 1 with otherwise equal instruction counts
    points there.
  - barrier waits and MMA FLOPs (no ncu metric was confirmed for them).
"""

import argparse
import csv
import json
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the script in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchline  # noqa: E402  (tools/gpu-check/benchline.py)

EXACT, DRAM_TOL = 0.0, 0.10


def _k(agg, *keys):
    return sum(agg.get(k, 0) for k in keys)


# (row name, kbd value from the aggregated profile, ncu metrics summed, tier, default tolerance)
# agg keys: "<space>_<op>_<quantity>" summed over the launch's sites, plus the launch's own counters.
ROWS = [
    ("shared_ld_wavefronts", lambda a: _k(a, "shared_ld_wavefronts", "shared_ldmatrix_wavefronts"),
     ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"], "core", EXACT),
    ("shared_st_wavefronts", lambda a: _k(a, "shared_st_wavefronts", "shared_stmatrix_wavefronts"),
     ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"], "core", EXACT),
    ("shared_ld_bank_conflicts", lambda a: _k(a, "shared_ld_wavefronts", "shared_ldmatrix_wavefronts")
     - _k(a, "shared_ld_ideal", "shared_ldmatrix_ideal"),
     ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], "core", EXACT),
    ("shared_st_bank_conflicts", lambda a: _k(a, "shared_st_wavefronts", "shared_stmatrix_wavefronts")
     - _k(a, "shared_st_ideal", "shared_stmatrix_ideal"),
     ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], "core", EXACT),
    ("shared_lds_instructions", lambda a: _k(a, "shared_ld_instructions"),
     ["smsp__sass_inst_executed_op_shared_ld.sum"], "core", EXACT),
    ("shared_sts_instructions", lambda a: _k(a, "shared_st_instructions"),
     ["smsp__sass_inst_executed_op_shared_st.sum"], "core", EXACT),
    ("shared_ldsm_instructions", lambda a: _k(a, "shared_ldmatrix_instructions"),
     ["smsp__inst_executed_op_ldsm.sum"], "core", EXACT),
    ("global_ld_sectors", lambda a: _k(a, "global_ld_sectors"),
     ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], "core", EXACT),
    ("global_st_sectors", lambda a: _k(a, "global_st_sectors"),
     ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], "core", EXACT),
    ("global_ld_requests", lambda a: _k(a, "global_ld_instructions"),
     ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], "core", EXACT),
    ("global_st_requests", lambda a: _k(a, "global_st_instructions"),
     ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"], "core", EXACT),
    ("dram_read_bytes", lambda a: a["global_unique_read_bytes"], ["dram__bytes_read.sum"], "core", DRAM_TOL),
    ("dram_write_bytes", lambda a: a["global_unique_write_bytes"], ["dram__bytes_write.sum"], "core", DRAM_TOL),
    ("shared_ldsm_wavefronts", lambda a: _k(a, "shared_ldmatrix_wavefronts"),
     ["smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"], "extended", EXACT),
    ("shared_ldsm_bank_conflicts", lambda a: _k(a, "shared_ldmatrix_wavefronts") - _k(a, "shared_ldmatrix_ideal"),
     ["smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"], "extended", EXACT),
    ("shared_stsm_instructions", lambda a: _k(a, "shared_stmatrix_instructions"),
     ["smsp__sass_inst_executed_op_stsm.sum"], "extended", EXACT),
    ("shared_stsm_bank_conflicts", lambda a: _k(a, "shared_stmatrix_wavefronts") - _k(a, "shared_stmatrix_ideal"),
     ["smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum"], "extended", EXACT),
]


def metric_names(extended):
    names = []
    for _, _, ms, tier, _ in ROWS:
        if tier == "core" or extended:
            names += [m for m in ms if m not in names]
    return names


class InputError(Exception):
    """A problem with an input file: printed as 'profile_compare: FILE: problem', exit 2."""

    def __init__(self, path, msg):
        Exception.__init__(self, "%s: %s" % (path, msg))


# ---- kbd's JSON lines --------------------------------------------------------------------------------------------
COUNTERS = ("global_read_bytes", "global_write_bytes", "global_unique_read_bytes", "global_unique_write_bytes",
            "tma_load_bytes", "tma_store_bytes", "shared_read_bytes", "shared_write_bytes", "shared_wavefronts",
            "shared_ideal_wavefronts", "global_sectors", "global_ideal_sectors", "barrier_waits", "barrier_blocked")
OPS = ("ld", "st", "ldmatrix", "stmatrix")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def read_kbd(path):
    """The launches of P.json, each checked against kbd_profile_write_json's schema."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, "cannot read the kbd profile (%s)" % (getattr(e, "strerror", None) or e))
    launches = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise InputError(path, "line %d is not valid JSON (%s): a truncated or interleaved profile?" % (no, e))
        where = "line %d" % no
        if not isinstance(obj, dict):
            raise InputError(path, "%s is not a JSON object" % where)
        for key, ok, what in (("kernel", lambda v: isinstance(v, str), "a string"),
                              ("arch", lambda v: isinstance(v, str), "a string"),
                              ("grid", lambda v: isinstance(v, list) and len(v) == 3 and all(map(_is_int, v)),
                               "3 integers"),
                              ("block", _is_int, "an integer"), ("cluster", _is_int, "an integer"),
                              ("mma_flops", lambda v: isinstance(v, dict), "an object"),
                              ("sites", lambda v: isinstance(v, list), "a list")) + tuple(
                                  (c, _is_int, "an integer") for c in COUNTERS):
            if key not in obj:
                raise InputError(path, "%s has no \"%s\" (not a KBD_CPU_PROFILE_JSON line?)" % (where, key))
            if not ok(obj[key]):
                raise InputError(path, "%s: \"%s\" is not %s" % (where, key, what))
        for i, s in enumerate(obj["sites"]):
            sw = "%s site %d" % (where, i)
            if not isinstance(s, dict):
                raise InputError(path, "%s is not an object" % sw)
            if s.get("space") not in ("shared", "global"):
                raise InputError(path, "%s: \"space\" is %r, not shared or global" % (sw, s.get("space")))
            if s.get("op") not in OPS:
                raise InputError(path, "%s: \"op\" is %r, not one of %s" % (sw, s.get("op"), ", ".join(OPS)))
            need = ("instructions", "ideal") + (("wavefronts",) if s["space"] == "shared" else ("sectors", "lines"))
            for key in need:
                if not _is_int(s.get(key)):
                    raise InputError(path, "%s: \"%s\" is missing or not an integer" % (sw, key))
        obj["_line"] = no
        launches.append(obj)
    if not launches:
        raise InputError(path, "holds no launch (empty file: was KBD_CPU_PROFILE_JSON set for the run?)")
    return launches


def aggregate(launch):
    """The launch's counters plus '<space>_<op>_<quantity>' summed over its sites."""
    agg = dict((c, launch[c]) for c in COUNTERS)
    for s in launch["sites"]:
        pre = "%s_%s_" % (s["space"], s["op"])
        for q in ("instructions", "wavefronts", "ideal", "sectors", "lines"):
            if q in s:
                agg[pre + q] = agg.get(pre + q, 0) + s[q]
    return agg


# ---- ncu's CSV -------------------------------------------------------------------------------------------------
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30,
           "Ti": 2.0 ** 40}
_BASES = ("byte", "sector", "request", "wavefront", "inst", "warp", "thread", "cycle", "conflict")


def unit_scale(unit):
    """The factor of an ncu unit to its base unit ('Kbyte' -> 1000), or None when the unit is not understood.
    ncu scales units itself unless run with --print-units base; decimal prefixes are assumed (UNCONFIRMED)."""
    u = unit.strip()
    if u in ("", "none", "(!) n/a"):
        return 1.0
    for base in _BASES:
        for b in (base, base + "s"):
            if u.endswith(b) and u[:-len(b)] in _PREFIX:
                return _PREFIX[u[:-len(b)]]
    return None


def parse_value(text):
    """A metric value: '1234', '1,234' (grouped digits), '12.5', 'n/a' (None). ValueError if not a number."""
    t = text.strip()
    if t.lower() in ("", "n/a", "nan"):
        return None
    if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?", t):
        t = t.replace(",", "")
    return float(t)


def _dims(text):
    nums = re.findall(r"\d+", text or "")
    return tuple(int(x) for x in nums) if nums else None


def read_ncu(path):
    """The launches of N.csv: [{'id', 'kernel', 'grid', 'block', 'cc', 'metrics': {name: value or None}}]."""
    try:
        with open(path, "r", encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, "cannot read the ncu CSV (%s)" % (getattr(e, "strerror", None) or e))
    # ncu writes '==PROF==' / '==WARNING==' lines and the program's own output before the table: start at "ID",...
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID",')), None)
    if start is None:
        raise InputError(path, "no ncu CSV header (a line starting \"ID\",): not the output of ncu --csv?")
    try:
        rows = list(csv.reader(lines[start:]))
    except csv.Error as e:
        raise InputError(path, "malformed CSV (%s)" % e)
    head = rows[0]
    col = dict((name, i) for i, name in enumerate(head))
    if "Kernel Name" not in col and "Function Name" in col:
        col["Kernel Name"] = col["Function Name"]
    for need in ("ID", "Kernel Name"):
        if need not in col:
            raise InputError(path, "the header has no \"%s\" column" % need)

    def cell(row, name):
        i = col.get(name)
        return row[i] if i is not None and i < len(row) else ""

    launches, by_id = [], {}

    def launch_of(row, no):
        lid = cell(row, "ID")
        if lid not in by_id:
            by_id[lid] = {"id": lid, "kernel": cell(row, "Kernel Name"), "grid": _dims(cell(row, "Grid Size")),
                          "block": _dims(cell(row, "Block Size")), "cc": cell(row, "CC"), "metrics": {},
                          "row": no}
            launches.append(by_id[lid])
        return by_id[lid]

    long_form = "Metric Name" in col and "Metric Value" in col
    if long_form:  # the details page: one row per (launch, metric)
        for no, row in enumerate(rows[1:], start + 2):
            if not row or not any(x.strip() for x in row):
                continue
            if len(row) != len(head):
                raise InputError(path, "line %d has %d fields, the header %d" % (no, len(row), len(head)))
            name, unit, text = cell(row, "Metric Name"), cell(row, "Metric Unit"), cell(row, "Metric Value")
            launch_of(row, no)["metrics"][name] = _metric(path, no, name, unit, text)
    else:  # the raw page: one row per launch, a column per metric (their names hold "__"), a row of units first
        mcols = [(i, name) for i, name in enumerate(head) if "__" in name]
        if not mcols:
            raise InputError(path, "the header names no metric (no column with '__' in its name)")
        units = {}
        for no, row in enumerate(rows[1:], start + 2):
            if not row or not any(x.strip() for x in row):
                continue
            if len(row) != len(head):
                raise InputError(path, "line %d has %d fields, the header %d (a truncated CSV?)"
                                 % (no, len(row), len(head)))
            if not cell(row, "ID").strip():  # the units row
                units = dict((name, row[i]) for i, name in mcols)
                continue
            L = launch_of(row, no)
            for i, name in mcols:
                L["metrics"][name] = _metric(path, no, name, units.get(name, ""), row[i])
    if not launches:
        raise InputError(path, "the CSV has a header but no launch row (cut short, or ncu profiled no kernel?)")
    return launches


def _metric(path, no, name, unit, text):
    try:
        v = parse_value(text)
    except ValueError:
        raise InputError(path, "line %d: %s = %r is not a number" % (no, name, text))
    if v is None:
        return None
    scale = unit_scale(unit)
    if scale is None:
        raise InputError(path, "line %d: %s has the unit %r, not understood (run ncu with --print-units base)"
                         % (no, name, unit))
    return v * scale


def kernel_base(name):
    """'void tr_transpose_kbd_dev(tr_params)' -> 'tr_transpose_kbd_dev' (namespace, template and parameters off);
    a mangled '_Z20tr_transpose_kbd_dev9tr_params' (ncu --print-kernel-base mangled) gives the same."""
    m = re.match(r"_Z(\d+)", name.strip())
    if m:
        return name.strip()[m.end():m.end() + int(m.group(1))]
    n = re.sub(r"^\s*(void\s+)?", "", name)
    n = n.split("(")[0].split("<")[0].strip()
    return n.split("::")[-1].strip()


# ---- comparing ---------------------------------------------------------------------------------------------------
def ratio_of(kbd, ncu):
    if kbd == 0:
        return 1.0 if ncu == 0 else math.inf
    return ncu / kbd


def show(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e18:
        return str(int(x))
    return benchline.num(x) if isinstance(x, float) else str(x)


def pick(items, index, kernel, path, opt):
    if index is not None:
        if not 0 <= index < len(items):
            raise InputError(path, "%s %d: the file holds %d launch(es) of %s (counted from 0)"
                             % (opt, index, len(items), kernel))
        return items[index]
    if len(items) > 1:
        raise InputError(path, "holds %d launches of %s: pick one with %s" % (len(items), kernel, opt))
    return items[0]


def compare(args):
    kl = read_kbd(args.kbd)
    nl = read_ncu(args.ncu)
    names = sorted(set(l["kernel"] for l in kl))
    kernel = args.kernel
    if kernel is None:
        if len(names) > 1:
            raise InputError(args.kbd, "holds the kernels %s: name one with --kernel" % ", ".join(names))
        kernel = names[0]
    mine = [l for l in kl if l["kernel"] == kernel]
    if not mine:
        raise InputError(args.kbd, "no launch of the kernel '%s' (its kernels: %s; --kernel takes kbd's kernel "
                         "name, KBD_KERNEL's first argument)" % (kernel, ", ".join(names)))
    k = pick(mine, args.launch, kernel, args.kbd, "--launch")
    want = [args.ncu_kernel] if args.ncu_kernel else [kernel + "_kbd_dev", kernel]
    theirs = [l for l in nl if kernel_base(l["kernel"]) in want]
    if not theirs:
        seen = sorted(set(kernel_base(l["kernel"]) for l in nl))
        raise InputError(args.ncu, "no launch of %s (its kernels: %s; --ncu-kernel names another)"
                         % (" or ".join(want), ", ".join(seen)))
    n = pick(theirs, args.ncu_launch, " or ".join(want), args.ncu, "--ncu-launch")
    # the same launch? ncu's "Grid Size" is in blocks, "Block Size" in threads per dimension
    kgrid = tuple(k["grid"])
    if n["grid"] is not None and n["grid"] != kgrid:
        raise InputError(args.ncu, "launch %s has the grid %s, the kbd profile's (%s line %d) %s: not the same "
                         "launch (same program and arguments on both sides?)"
                         % (n["id"], n["grid"], args.kbd, k["_line"], kgrid))
    if n["block"] is not None and math.prod(n["block"]) != k["block"]:
        raise InputError(args.ncu, "launch %s has blocks of %d threads, the kbd profile's %d: not the same kernel"
                         % (n["id"], math.prod(n["block"]), k["block"]))
    agg = aggregate(k)
    print("# profile_compare: kernel %s; kbd: %s line %d (%s, grid %s, block %d); ncu: %s launch ID %s (%s, CC %s)"
          % (kernel, args.kbd, k["_line"], k["arch"], "x".join(map(str, kgrid)), k["block"], args.ncu, n["id"],
             n["kernel"], n["cc"] or "?"))
    kcc, ncc = re.findall(r"\d+", k["arch"]), re.findall(r"\d+", n["cc"] or "")
    if kcc and len(ncc) >= 2 and kcc[0] != ncc[0] + ncc[1]:
        print("# warning: kbd emulated %s, the GPU is CC %s: both sides run the same kernel only when its code does "
              "not depend on the arch (take the %s-emulating CPU program where the example has one, e.g. gemm90_cpu)"
              % (k["arch"], n["cc"], "sm_%s%sa" % (ncc[0], ncc[1])))
    if n["grid"] is None or n["block"] is None:
        print("# note: the CSV has no Grid Size / Block Size columns: the launch could not be checked")
    for total, parts in (("shared_wavefronts", [p + "_wavefronts" for p in ("shared_ld", "shared_st", "shared_ldmatrix",
                                                                               "shared_stmatrix")]),
                         ("global_sectors", ["global_ld_sectors", "global_st_sectors"])):
        if _k(agg, *parts) != agg[total]:
            print("# warning: the sites add up to %d %s, the launch counted %d (sites past the profile's table?)"
                  % (_k(agg, *parts), total, agg[total]))
    print("%-28s %16s %16s %9s  %s" % ("metric", "kbd predicted", "ncu measured", "ratio", "ncu metric"))
    bench, mismatches = [], 0
    for row, kfn, metrics, tier, tol in ROWS:
        missing = [m for m in metrics if m not in n["metrics"]]
        if missing:
            if tier == "core":
                raise InputError(args.ncu, "no metric %s (launch ID %s): run ncu with --metrics \"$(%s metrics)\""
                                 % (missing[0], n["id"], os.path.basename(sys.argv[0]) or "profile_compare.py"))
            print("# skipped %s: %s not in the CSV (profile_compare.py metrics --extended)" % (row, missing[0]))
            continue
        vals = [n["metrics"][m] for m in metrics]
        if any(v is None for v in vals):
            print("# skipped %s: ncu reported n/a for %s" % (row, metrics[vals.index(None)]))
            continue
        kv, nv = kfn(agg), sum(vals)
        r = ratio_of(kv, nv)
        t = args.tolerance if args.tolerance is not None else tol
        ok = abs(r - 1.0) <= t + 1e-12
        mismatches += not ok
        rs = "inf" if math.isinf(r) else "%.3f" % r
        print("%-28s %16s %16s %9s  %s%s" % (row, show(kv), show(float(nv)), rs, "+".join(metrics),
                                             "" if ok else "   <- differs"))
        bench.append(benchline.make("profile_compare", [
            ("kernel", kernel), ("metric", row), ("kbd", show(kv)), ("ncu", show(float(nv))), ("ratio", rs),
            ("match", 1 if ok else 0), ("tier", tier), ("ncu_metric", "+".join(metrics))]))
    for line in bench:
        print(line)
    return 1 if (args.strict and mismatches) else 0


def metrics_cmd(args):
    names = metric_names(args.extended)
    if args.available:
        try:
            with open(args.available, "r", encoding="utf-8", errors="replace") as f:
                known = set(re.findall(r"[A-Za-z0-9_]+__[A-Za-z0-9_]+", f.read()))
        except OSError as e:
            raise InputError(args.available, "cannot read (%s)" % (getattr(e, "strerror", None) or e))
        drop = [m for m in names if m.split(".")[0] not in known]
        for m in drop:
            print("profile_compare: %s is not in %s: left out" % (m, args.available), file=sys.stderr)
        names = [m for m in names if m not in drop]
        if not names:
            raise InputError(args.available, "names none of the metrics (not the output of ncu --query-metrics?)")
    print(",".join(names))
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="profile_compare.py", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    m = sub.add_parser("metrics", help="the ncu metrics compare reads, comma-separated")
    m.add_argument("--extended", action="store_true", help="add the unconfirmed ldsm/stsm metrics")
    m.add_argument("--available", metavar="FILE", help="keep only metrics named in FILE (ncu --query-metrics)")
    c = sub.add_parser("compare", help="kbd's profile of a launch beside ncu's")
    c.add_argument("--kbd", required=True, metavar="P.json", help="KBD_CPU_PROFILE_JSON's file")
    c.add_argument("--ncu", required=True, metavar="N.csv", help="ncu --csv (--page raw or details) of the same run")
    c.add_argument("--kernel", help="kbd's kernel name (default: the only one in P.json)")
    c.add_argument("--launch", type=int, help="which launch of the kernel in P.json (0-based)")
    c.add_argument("--ncu-kernel", help="the kernel's function name in the CSV (default NAME_kbd_dev or NAME)")
    c.add_argument("--ncu-launch", type=int, help="which launch of the kernel in N.csv (0-based)")
    c.add_argument("--tolerance", type=float, help="|ratio - 1| allowed for match=1 (default: per row)")
    c.add_argument("--strict", action="store_true", help="exit 1 when a row does not match")
    return p


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.cmd:
        parser.print_usage(sys.stderr)
        print("profile_compare.py: give metrics or compare", file=sys.stderr)
        return 2
    try:
        return metrics_cmd(args) if args.cmd == "metrics" else compare(args)
    except InputError as e:
        print("profile_compare: %s" % e, file=sys.stderr)
        return 2
    except Exception as e:  # whatever else a malformed input can provoke: one line, no traceback
        files = " / ".join(x for x in (getattr(args, "kbd", None), getattr(args, "ncu", None),
                                       getattr(args, "available", None)) if x)
        print("profile_compare: %s: unexpected %s: %s" % (files or "input", type(e).__name__, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
