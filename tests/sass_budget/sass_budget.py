#!/usr/bin/env python3
"""sass_budget.py - instruction budgets of the GEMM and attention main loops (issue 27, part 2; label ptx).

  sass_budget.py measure  --arch 90a|100a --out DIR          compile, disassemble, measure -> DIR/measured.json
  sass_budget.py check    --arch A --out DIR [--table FILE]  the measured loops against budgets.txt
  sass_budget.py selftest --arch A --out DIR [--table FILE]  the check must fail on a budget one below the count
  sass_budget.py table    --arch A --out DIR [--table FILE]  print today's rows (to start or re-measure budgets)

measure compiles each unit below once per arch with the flags a Release build of the examples uses
(cmake/KbdKernel.cmake: -O3 -DNDEBUG -std=c++14 -gencode ... -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
-Xptxas -split-compile=0) to a cubin, disassembles it once (cuobjdump -sass) and runs tools/kbd-inspect --loops --json
--sass-file on the listing. Of every kernel with an MMA in a loop it keeps these loops (docs/inspect.md, "Loops"):
  main     the innermost loop with the most MMA instructions
  mma<k>   every other innermost loop with MMAs, k its place among them in address order (sm_100a's GEMM has one
           MMA loop per operand variant)
  mufu     the innermost loop with the most MUFU instructions, when it is none of those (sm_100a attention's
           softmax, the GEMM epilogue)
and of each: mma and tc (MMA instructions and tensor-core cycles of one iteration: they identify the loop and must
equal the table), iter and short (non-MMA instructions of the longest and the shortest iteration), span (static
instructions of the loop), the longest iteration's classes (int, move, sync, ...) and the forbidden patterns of the
whole loop (jump_table, gpu_fence, unpacked_f2f, int_divide).

budgets.txt: one row per loop, `<kernel> <arch> <loop> key=max ...`: a count above its budget fails, a class
missing from the row has budget 0, a count below its budget passes with a NOTE (lower the budget). A forbidden
pattern fails unless an `allow <kernel> <arch> <loop> <pattern>=<max> <reason>` line admits it: issue 27's known
ones, whose count may only go down. A loop without a row and a row without a loop fail too. The table records the
nvcc it was measured with; another nvcc skips the check (exit 77) unless KBD_SASS_BUDGET_ANY_NVCC=1.

Exit status: 0 pass, 1 fail, 2 usage, 77 skipped (no cuobjdump: measure writes DIR/skipped.txt and check and
selftest skip with its reason; with KBD_PTX_REQUIRE_SASS=1 a missing cuobjdump fails instead).
Environment: NVCC, KBD_CUOBJDUMP (cuobjdump; nvdisasm beside it or on PATH), KBD_INSPECT (tools/kbd-inspect).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TABLE = os.path.join(HERE, "budgets.txt")
UNITS = [("examples/gemm/gemm.cu", "examples/gemm"),
         ("examples/attention/attention.cu", "examples/attention"),
         ("examples/attention/attention_f16.cu", "examples/attention"),
         ("examples/gemm_simple/gemm_simple.cu", "examples/gemm_simple")]
CLASSES = ["mufu", "fp32", "fp32x2", "fp16x2", "convert", "int", "uniform", "move", "sync", "memory", "control",
           "warp", "other"]
EXACT = ["mma", "tc"]
COUNTS = ["iter", "short", "span"] + CLASSES
FORBIDDEN = ["jump_table", "gpu_fence", "unpacked_f2f", "int_divide"]
ME = "sass_budget"


def say(*a):
    print(*a)
    sys.stdout.flush()


def fail_usage(msg):
    print("%s: %s" % (ME, msg), file=sys.stderr)
    sys.exit(2)


def nvcc_path():
    n = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    return n if os.path.isfile(n) else None


def nvcc_version(nvcc):
    r = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    m = re.search(r"(V\d+\.\d+\.\d+)", r.stdout)
    return m.group(1) if m else "unknown"


def find_cuobjdump():
    c = os.environ.get("KBD_CUOBJDUMP") or shutil.which("cuobjdump")
    if not c:
        n = nvcc_path()
        c = os.path.join(os.path.dirname(n), "cuobjdump") if n else None
    return c if c and os.path.isfile(c) and os.access(c, os.X_OK) else None


def nvcc_flags(arch, unit_dir):
    """The flags of a Release build of an example kernel (cmake/KbdKernel.cmake, kbd_gpu_flags)."""
    return ["-O3", "-DNDEBUG", "-std=c++14", "-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch),
            "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror", "-Xptxas", "-split-compile=0",
            "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, unit_dir)]


def select_rows(rec):
    """The loops of one kernel's --loops record that get budgets: {selector: loop id}."""
    if rec["main_loop"] is None:
        return {}
    sel = {"main": rec["main_loop"]}
    for k, lid in enumerate(rec["mma_loops"], 1):
        if lid != rec["main_loop"]:
            sel["mma%d" % k] = lid
    if rec["mufu_loop"] is not None and rec["mufu_loop"] not in rec["mma_loops"]:
        sel["mufu"] = rec["mufu_loop"]
    return sel


def row_values(loop):
    lg = loop["iteration"]["longest"]
    sh = loop["iteration"]["shortest"]
    tc = lg["tensor_cycles"]
    v = {"mma": lg["mma"], "tc": ("%g" % tc) if tc is not None else "-", "iter": lg["non_mma"],
         "short": sh["non_mma"], "span": loop["span"]["instructions"]}
    for c in CLASSES:
        if lg["classes"].get(c):
            v[c] = lg["classes"][c]
    return v


# ---- measure ---------------------------------------------------------------------------------------------------
def measure(arch, out):
    os.makedirs(out, exist_ok=True)
    for f in ("measured.json", "skipped.txt"):
        if os.path.exists(os.path.join(out, f)):
            os.unlink(os.path.join(out, f))
    nvcc = nvcc_path()
    cuobjdump = find_cuobjdump()
    why = None
    if not nvcc:
        why = "nvcc not found (set NVCC)"
    elif not cuobjdump:
        why = ("cuobjdump not found (set KBD_CUOBJDUMP; pip: nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm; "
               "tools/run-tests.sh installs them)")
    if why:
        if os.environ.get("KBD_PTX_REQUIRE_SASS") == "1":
            say("%s: FAIL: SASS required (KBD_PTX_REQUIRE_SASS=1) but %s" % (ME, why))
            return 1
        with open(os.path.join(out, "skipped.txt"), "w") as f:
            f.write(why + "\n")
        say("%s: SKIP: %s" % (ME, why))
        return 77
    env = dict(os.environ)
    if not shutil.which("nvdisasm") and os.path.exists(os.path.join(os.path.dirname(cuobjdump), "nvdisasm")):
        env["NVDISASM_PATH"] = os.path.dirname(cuobjdump)
    inspect = os.environ.get("KBD_INSPECT") or os.path.join(ROOT, "tools", "kbd-inspect")
    res = dict(arch="sm_" + arch, nvcc=nvcc_version(nvcc), cuobjdump=cuobjdump, units=[], rows=[], kernels=[])
    t_all = time.time()
    for src, inc in UNITS:
        stem = os.path.join(out, "%s.sm%s" % (os.path.splitext(os.path.basename(src))[0], arch))
        cmd = [nvcc] + nvcc_flags(arch, inc) + ["-cubin", os.path.join(ROOT, src), "-o", stem + ".cubin"]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        t1 = time.time()
        if r.returncode != 0:
            say("%s: FAIL: %s does not compile for sm_%s (nvcc exit %d):\n%s"
                % (ME, src, arch, r.returncode, (r.stderr + r.stdout)[-3000:]))
            return 1
        r = subprocess.run([cuobjdump, "-sass", stem + ".cubin"], capture_output=True, text=True, env=env)
        if r.returncode != 0 or "Function :" not in r.stdout:
            say("%s: FAIL: cuobjdump -sass %s.cubin: %s" % (ME, stem, (r.stderr or "no functions").strip()[:300]))
            return 1
        with open(stem + ".sass", "w") as f:
            f.write(r.stdout)
        r = subprocess.run([sys.executable, inspect, "--loops", "--json", "--sass-file", stem + ".sass", "--arch",
                            arch], capture_output=True, text=True)
        if r.returncode != 0:
            say("%s: FAIL: kbd-inspect --loops on %s.sass: %s" % (ME, stem, r.stderr.strip()))
            return 1
        t2 = time.time()
        res["units"].append(dict(source=src, compile_s=round(t1 - t0, 2), analyse_s=round(t2 - t1, 2)))
        say("%s: %s for sm_%s: compiled in %.1f s, disassembled and analysed in %.1f s"
            % (ME, src, arch, t1 - t0, t2 - t1))
        for rec in json.loads(r.stdout):
            sel = select_rows(rec)
            res["kernels"].append(dict(kernel=rec["name"], source=src, loops=len(rec["loops"]),
                                       budgeted=sorted(sel)))
            if not sel:
                say("%s:   %s: no MMA in a loop, no budget" % (ME, rec["name"]))
            for name, lid in sorted(sel.items()):
                L = rec["loops"][lid]
                if L["iteration"] is None:
                    say("%s: FAIL: %s loop #%d (%s) is not reducible: cannot count an iteration"
                        % (ME, rec["name"], lid, name))
                    return 1
                res["rows"].append(dict(kernel=rec["name"], arch="sm_" + arch, loop=name, id=lid, start=L["start"],
                                        end=L["end"], source=src, values=row_values(L),
                                        forbidden=dict((k, L["forbidden"][k]) for k in FORBIDDEN)))
    res["seconds"] = round(time.time() - t_all, 2)
    with open(os.path.join(out, "measured.json"), "w") as f:
        json.dump(res, f, indent=1)
    say("%s: measured %d loops of %d kernels for sm_%s in %.1f s (nvcc %s) -> %s"
        % (ME, len(res["rows"]), len(res["kernels"]), arch, res["seconds"], res["nvcc"],
           os.path.join(out, "measured.json")))
    return 0


# ---- the table -------------------------------------------------------------------------------------------------
def parse_table(path):
    """budgets.txt -> (nvcc version or None, {(kernel, arch, loop): {key: value}}, {(kernel, arch, loop): {pattern:
    (max, reason)}}). Raises ValueError naming the line on a malformed one."""
    rows, allows, nvcc = {}, {}, None
    with open(path) as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        w = s.split()
        if w[0] == "nvcc":
            nvcc = w[1] if len(w) > 1 else None
            continue
        if w[0] == "allow":
            if len(w) < 6 or "=" not in w[4]:
                raise ValueError("%s:%d: an allow line is `allow <kernel> <arch> <loop> <pattern>=<max> <reason>`"
                                 % (path, n))
            pat, val = w[4].split("=", 1)
            if pat not in FORBIDDEN or not val.isdigit():
                raise ValueError("%s:%d: unknown pattern or count '%s' (patterns: %s)" % (path, n, w[4],
                                                                                      ", ".join(FORBIDDEN)))
            allows.setdefault((w[1], w[2], w[3]), {})[pat] = (int(val), " ".join(w[5:]))
            continue
        if len(w) < 4:
            raise ValueError("%s:%d: a row is `<kernel> <arch> <loop> key=value ...`" % (path, n))
        key = (w[0], w[1], w[2])
        if key in rows:
            raise ValueError("%s:%d: a second row for %s" % (path, n, " ".join(key)))
        vals = {}
        for kv in w[3:]:
            if "=" not in kv:
                raise ValueError("%s:%d: '%s' is not key=value" % (path, n, kv))
            k, v = kv.split("=", 1)
            if k not in EXACT + COUNTS:
                raise ValueError("%s:%d: unknown key '%s' (keys: %s)" % (path, n, k, " ".join(EXACT + COUNTS)))
            if k != "tc" and not v.isdigit():
                raise ValueError("%s:%d: %s=%s is not a count" % (path, n, k, v))
            vals[k] = v if k == "tc" else int(v)
        for k in EXACT + ["iter", "short", "span"]:
            if k not in vals:
                raise ValueError("%s:%d: the row lacks %s=" % (path, n, k))
        rows[key] = vals
    return nvcc, rows, allows


def load_measured(out):
    sk = os.path.join(out, "skipped.txt")
    if os.path.exists(sk):
        with open(sk) as f:
            say("%s: SKIP: %s" % (ME, f.read().strip()))
        sys.exit(77)
    p = os.path.join(out, "measured.json")
    if not os.path.exists(p):
        say("%s: FAIL: %s is missing: run `sass_budget.py measure` (the ctest fixture sass_budget_measure_*) first"
            % (ME, p))
        sys.exit(1)
    with open(p) as f:
        return json.load(f)


def check(arch, m, table):
    """0 when every measured loop is within its budgets, 1 otherwise; prints one line per loop and per problem."""
    try:
        nvcc, rows, allows = parse_table(table)
    except (ValueError, IOError, OSError) as e:
        say("%s: FAIL: %s" % (ME, e))
        return 1
    a = "sm_" + arch
    if nvcc and nvcc != m["nvcc"] and os.environ.get("KBD_SASS_BUDGET_ANY_NVCC") != "1":
        say("%s: SKIP: the budgets were measured with nvcc %s, this is nvcc %s: the instruction counts differ with "
            "the compiler alone (re-measure with `sass_budget.py table`, or KBD_SASS_BUDGET_ANY_NVCC=1 to check "
            "anyway)" % (ME, nvcc, m["nvcc"]))
        return 77
    bad, notes = [], []
    seen = set()
    for r in m["rows"]:
        key = (r["kernel"], a, r["loop"])
        seen.add(key)
        where = "%s %s %s (loop #%d, %s..%s)" % (r["kernel"], a, r["loop"], r["id"], r["start"], r["end"])
        if key not in rows:
            bad.append("%s: no budget row (a new loop with MMAs or MUFU?): add `%s` to %s"
                       % (where, format_row(r), os.path.basename(table)))
            continue
        want, got = rows[key], r["values"]
        problems = []
        for k in EXACT:
            if str(want[k]) != str(got[k]):
                problems.append("%s is %s, the row says %s: not the loop the budget was measured on (re-measure)"
                                % (k, got[k], want[k]))
        for k in COUNTS:
            g, w = got.get(k, 0), want.get(k, 0)
            if g > w:
                problems.append("%s %d > budget %d (+%d)" % (k, g, w, g - w))
            elif g < w:
                notes.append("%s: %s %d is below its budget %d: lower the budget in %s" % (where, k, g, w,
                                                                                          os.path.basename(table)))
        al = allows.get(key, {})
        for pat in FORBIDDEN:
            at = r["forbidden"].get(pat, [])
            mx = al.get(pat, (0, ""))[0]
            if len(at) > mx:
                problems.append("forbidden %s x%d%s at %s" % (
                    pat, len(at), " > known allowance %d" % mx if pat in al else "", " ".join(at[:8])
                    + (" ..." if len(at) > 8 else "")))
            elif len(at) < mx:
                notes.append("%s: %s x%d is below its allowance %d: lower it in %s" % (
                    where, pat, len(at), mx, os.path.basename(table)))
        v = got
        summary = "%d MMA, %s tensor cycles; non-MMA per iteration %d (budget %d), shortest %d (%d), span %d (%d)" % (
            v["mma"], v["tc"], v["iter"], want["iter"], v["short"], want["short"], v["span"], want["span"])
        if problems:
            bad.append("%s: %s  [%s]" % (where, "; ".join(problems), summary))
        else:
            say("%s: PASS %s: %s" % (ME, where, summary))
    for key in sorted(rows):
        if key[1] == a and key not in seen:
            bad.append("%s: a budget row without a loop in the compiled kernels (renamed or removed? update %s)"
                       % (" ".join(key), os.path.basename(table)))
    for key in sorted(allows):
        if key[1] == a and key not in seen:
            bad.append("allow %s: no such loop was measured" % " ".join(key))
    for n in notes:
        say("%s: NOTE %s" % (ME, n))
    for b in bad:
        say("%s: FAIL %s" % (ME, b))
    say("%s: %s: %d loops checked against %s, %d failure(s)" % (ME, a, len(m["rows"]), table, len(bad)))
    return 1 if bad else 0


def format_row(r):
    v = r["values"]
    keys = ["mma", "tc", "iter", "short", "span"] + [c for c in CLASSES if c in v]
    return "%s %s %s %s" % (r["kernel"], r["arch"], r["loop"], " ".join("%s=%s" % (k, v[k]) for k in keys))


def table(arch, m, old):
    """Today's rows, and allow lines for the forbidden patterns present today (the reasons kept from the old
    table where it has them)."""
    allows = {}
    if old and os.path.exists(old):
        try:
            allows = parse_table(old)[2]
        except ValueError:
            allows = {}
    say("nvcc %s" % m["nvcc"])
    for r in m["rows"]:
        say(format_row(r))
    for r in m["rows"]:
        key = (r["kernel"], r["arch"], r["loop"])
        for pat in FORBIDDEN:
            n = len(r["forbidden"].get(pat, []))
            if n:
                reason = allows.get(key, {}).get(pat, (0, "known, issue 27: (say what it is)"))[1]
                say("allow %s %s=%d %s" % (" ".join(key), pat, n, reason))
    return 0


# ---- selftest --------------------------------------------------------------------------------------------------
def selftest(arch, out, table_path):
    """The check must fail, for the reason named, on a table with one budget lowered by one and the other mutations
    below, and pass on the table itself (the control)."""
    m = load_measured(out)
    a = "sm_" + arch
    try:
        nvcc, rows, allows = parse_table(table_path)
    except ValueError as e:
        say("%s: FAIL: %s" % (ME, e))
        return 1
    if nvcc and nvcc != m["nvcc"] and os.environ.get("KBD_SASS_BUDGET_ANY_NVCC") != "1":
        say("%s: SKIP: the budgets were measured with nvcc %s, this is nvcc %s (the check skips too)"
            % (ME, nvcc, m["nvcc"]))
        return 77
    with open(table_path) as f:
        lines = f.read().splitlines()
    mine = [r for r in m["rows"] if (r["kernel"], a, r["loop"]) in rows]
    if not mine:
        say("%s: FAIL: the table has no row for %s that was measured; nothing to test" % (ME, a))
        return 1
    first = mine[0]
    key = (first["kernel"], a, first["loop"])
    biggest = max((c for c in CLASSES if rows[key].get(c)), key=lambda c: rows[key][c])
    results = []
    tmp = tempfile.mkdtemp(prefix="sass_budget_selftest_")

    def row_line(k):
        for i, l in enumerate(lines):
            w = l.split()
            if len(w) >= 3 and tuple(w[:3]) == k:
                return i
        raise KeyError(k)

    def run(name, table_lines, want_rc, needle, measured=None):
        tp = os.path.join(tmp, name + ".txt")
        with open(tp, "w") as f:
            f.write("\n".join(table_lines) + "\n")
        md = out
        if measured is not None:
            md = os.path.join(tmp, name)
            os.makedirs(md)
            with open(os.path.join(md, "measured.json"), "w") as f:
                json.dump(measured, f)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "check", "--arch", arch, "--out", md,
                            "--table", tp], capture_output=True, text=True)
        ok = r.returncode == want_rc and (needle is None or needle in r.stdout)
        results.append(ok)
        say("%s: selftest %-28s exit %d (want %d)%s: %s" % (ME, name, r.returncode, want_rc,
                                                            ", '%s'" % needle if needle else "",
                                                            "ok" if ok else "WRONG"))
        if not ok:
            say("    " + "\n    ".join(r.stdout.splitlines()[-8:]))

    def lowered(k, field, by=1):
        new = list(lines)
        i = row_line(k)
        new[i] = re.sub(r"\b%s=(\d+)" % field, lambda mm: "%s=%d" % (field, int(mm.group(1)) - by), new[i])
        return new

    where = "FAIL %s %s %s" % key
    run("control", lines, 0, None)
    run("iter_one_below", lowered(key, "iter"), 1, where)
    run("iter_one_below_names_it", lowered(key, "iter"), 1, "iter %d > budget %d (+1)" % (
        first["values"]["iter"], rows[key]["iter"] - 1))
    run("class_%s_one_below" % biggest, lowered(key, biggest), 1, "%s %d > budget %d (+1)" % (
        biggest, first["values"][biggest], rows[key][biggest] - 1))
    run("span_one_below", lowered(key, "span"), 1, "span %d > budget" % first["values"]["span"])
    new = list(lines)
    i = row_line(key)
    new[i] = re.sub(r"\bmma=(\d+)", lambda mm: "mma=%d" % (int(mm.group(1)) + 1), new[i])
    run("mma_changed", new, 1, "not the loop the budget was measured on")
    new = [l for j, l in enumerate(lines) if j != row_line(key)]
    run("row_missing", new, 1, "no budget row")
    # a forbidden pattern that appears: one more jump table in the first loop's measurement than the table allows
    mm = json.loads(json.dumps(m))
    for r in mm["rows"]:
        if (r["kernel"], a, r["loop"]) == key:
            r["forbidden"]["jump_table"] = r["forbidden"]["jump_table"] + ["0xdead"]
    run("new_jump_table", lines, 1, "forbidden jump_table", measured=mm)
    mine_allowed = [k for k in sorted(allows) if k[1] == a and k in rows]
    if mine_allowed:
        ak = mine_allowed[0]
        pat = sorted(allows[ak])[0]
        n = allows[ak][pat][0]
        new = list(lines)
        for j, l in enumerate(new):
            w = l.split()
            if len(w) >= 5 and w[0] == "allow" and tuple(w[1:4]) == ak and w[4] == "%s=%d" % (pat, n):
                new[j] = l.replace("%s=%d" % (pat, n), "%s=%d" % (pat, n - 1), 1)
                dropped = [x for x in lines if x != l]
        run("allowance_one_below", new, 1, "forbidden %s x%d > known allowance %d" % (pat, n, n - 1))
        run("allowance_removed", dropped, 1, "forbidden %s x%d at" % (pat, n))
    else:
        say("%s: selftest: no known allowance for %s (nothing forbidden today): those two cases are not run"
            % (ME, a))
    shutil.rmtree(tmp, ignore_errors=True)
    say("%s: selftest %s: %d of %d cases as expected" % (ME, a, sum(results), len(results)))
    return 0 if all(results) else 1


def main(argv):
    ap = argparse.ArgumentParser(prog=ME, description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["measure", "check", "selftest", "table"])
    ap.add_argument("--arch", required=True, choices=["90a", "100a"])
    ap.add_argument("--out", required=True, help="the measurement directory (measured.json, cubins, listings)")
    ap.add_argument("--table", default=TABLE, help="the budget table (default: budgets.txt beside this script)")
    a = ap.parse_args(argv)
    if a.command == "measure":
        return measure(a.arch, a.out)
    if a.command == "selftest":
        return selftest(a.arch, a.out, a.table)
    m = load_measured(a.out)
    if a.command == "table":
        return table(a.arch, m, a.table)
    return check(a.arch, m, a.table)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
