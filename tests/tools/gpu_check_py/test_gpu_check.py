#!/usr/bin/env python3
"""Tests of tools/gpu-check/torch_bench.py and tools/gpu-check/profile_compare.py on a machine without a GPU,
PyTorch or Nsight Compute (tests/tools/gpu_check_py/CMakeLists.txt runs them; label cpu).

    test_gpu_check.py profile   --tool profile_compare.py --data DIR --transpose EXE --noswz EXE
    test_gpu_check.py bad-input --tool profile_compare.py --data DIR [--transpose EXE]
    test_gpu_check.py metrics   --tool profile_compare.py --data DIR
    test_gpu_check.py torch     --tool torch_bench.py --data DIR

The data (DIR = this directory):
  ncu_transpose_64.csv          hand-written ncu raw page (--page raw) of `transpose 64 64 1` as the counters would
                                read with swizzled loads and UNswizzled stores; its preamble lines derive each number
                                (docs/profiling.md's model: 16 ldmatrix.x4 + 16 stmatrix.x4 = 64 8x8 matrices each
                                way, 1 wavefront per matrix swizzled and 8 unswizzled; TMA-only global traffic, so 0
                                LSU sectors; 8192 DRAM bytes read, 4096 written where kbd counts 8192).
  ncu_transpose_64_details.csv  the same numbers as ncu's details page (one row per metric), with a grouped number
                                ("8,192") and a scaled unit ("4.096 Kbyte").
  ncu_missing_metric.csv        ncu_transpose_64.csv without the op_st wavefronts column.
  kbd_transpose_64.json         KBD_CPU_PROFILE_JSON of `transpose_cpu 64 64 1` (paths made relative), for the
                                input checks that do not need the live program.
  kbd_truncated.json            its first 400 characters.
  fake_torch/                   a stand-in for PyTorch (tensors without data) so that torch_bench's measuring code
                                runs here.
So against the live transpose_cpu profile the loads match (ratio 1.000) and the stores differ (8.000, conflicts
0 vs 448: inf, DRAM writes 0.500); against transpose_noswz_cpu (8 wavefronts per matrix both ways) it is the other
way round (loads 0.125, stores 1.000).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run(cmd, env_extra=None, timeout=60):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.update(env_extra or {})
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def bench_lines(text):
    """{metric or row key: {key: value}} of the BENCH lines, read with a parser of this test's own."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("BENCH "):
            continue
        toks = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|[^ ]*)', line[6:])
        check(" ".join("%s=%s" % t for t in toks) == line[6:], "BENCH line is key=value tokens only: " + line)
        rows.append(dict((k, v[1:-1] if v.startswith('"') else v) for k, v in toks))
    return rows


def profile_of(exe, args, tmp, name):
    path = os.path.join(tmp, name)
    rc, out, err = run([exe] + args, {"KBD_CPU_PROFILE_JSON": path})
    check(rc == 0, "%s %s exits 0 (got %d: %s)" % (exe, " ".join(args), rc, err.strip()[-300:]))
    check(os.path.isfile(path), "%s wrote %s" % (exe, path))
    return path


def compare(tool, kbd, ncu, *extra):
    return run([sys.executable, tool, "compare", "--kbd", kbd, "--ncu", ncu] + list(extra))


# ---- profile: a real kbd profile against the hand-written ncu CSVs ----------------------------------------------
def test_profile(a):
    with tempfile.TemporaryDirectory() as tmp:
        swz = profile_of(a.transpose, ["64", "64", "1"], tmp, "swz.json")
        noswz = profile_of(a.noswz, ["64", "64", "1"], tmp, "noswz.json")
        check(len(open(swz).read().splitlines()) == 1, "one launch, one JSON line")
        raw = os.path.join(a.data, "ncu_transpose_64.csv")
        details = os.path.join(a.data, "ncu_transpose_64_details.csv")
        rc, out, err = compare(a.tool, swz, raw, "--kernel", "tr_transpose")
        check(rc == 0, "compare exits 0 when it compared (got %d: %s)" % (rc, err.strip()))
        check("Traceback" not in out + err, "no traceback")
        rows = dict((r["metric"], r) for r in bench_lines(out))
        want = {  # metric: (kbd, ncu, ratio, match)
            "shared_ld_wavefronts": ("64", "64", "1.000", "1"),  # 16 ldmatrix.x4, 1 wavefront per matrix
            "shared_st_wavefronts": ("64", "512", "8.000", "0"),  # the CSV's unswizzled stores: 8 per matrix
            "shared_ld_bank_conflicts": ("0", "0", "1.000", "1"),
            "shared_st_bank_conflicts": ("0", "448", "inf", "0"),
            "shared_lds_instructions": ("0", "0", "1.000", "1"),
            "shared_ldsm_instructions": ("16", "16", "1.000", "1"),
            "global_ld_sectors": ("0", "0", "1.000", "1"),  # TMA is not LSU traffic
            "global_st_requests": ("0", "0", "1.000", "1"),
            "dram_read_bytes": ("8192", "8192", "1.000", "1"),  # 64 rows x 128 bytes
            "dram_write_bytes": ("8192", "4096", "0.500", "0"),  # outside the DRAM rows' 10%
            "shared_ldsm_wavefronts": ("64", "64", "1.000", "1"),  # an --extended row the CSV has
        }
        for m, (k, n, r, ok) in want.items():
            got = rows.get(m)
            check(got is not None and (got["kbd"], got["ncu"], got["ratio"], got["match"]) == (k, n, r, ok),
                  "transpose_cpu vs %s: %s = %s, want kbd=%s ncu=%s ratio=%s match=%s"
                  % (os.path.basename(raw), m, got, k, n, r, ok))
        check(all(r["kernel"] == "tr_transpose" and r["bench"] == "profile_compare" for r in rows.values()),
              "kernel=tr_transpose on every line")
        check(len(rows) == 14, "13 core rows + 1 extended row (got %d)" % len(rows))
        check(rows.get("shared_st_wavefronts", {}).get("ncu_metric") ==
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "the row names its ncu metric")
        check(re.search(r"^shared_st_wavefronts +64 +512 +8\.000 .*differs", out, re.M) is not None,
              "the table shows the differing row:\n" + out)
        check("# skipped shared_stsm_instructions" in out, "an --extended metric missing from the CSV is skipped")
        # the same numbers through ncu's details page: the same lines
        rc2, out2, err2 = compare(a.tool, swz, details)
        check(rc2 == 0 and bench_lines(out2) == bench_lines(out),
              "the details-page CSV gives the same BENCH lines (rc %d: %s)" % (rc2, err2.strip()))
        # the unswizzled control: the other way round
        rc, out, err = compare(a.tool, noswz, raw, "--kernel", "tr_transpose")
        rows = dict((r["metric"], r) for r in bench_lines(out))
        for m, (k, n, r) in {"shared_ld_wavefronts": ("512", "64", "0.125"),
                             "shared_st_wavefronts": ("512", "512", "1.000"),
                             "shared_ld_bank_conflicts": ("448", "0", "0.000"),
                             "shared_st_bank_conflicts": ("448", "448", "1.000")}.items():
            got = rows.get(m)
            check(rc == 0 and got is not None and (got["kbd"], got["ncu"], got["ratio"]) == (k, n, r),
                  "transpose_noswz_cpu: %s = %s, want kbd=%s ncu=%s ratio=%s" % (m, got, k, n, r))
        rc, out, err = compare(a.tool, swz, raw, "--strict")
        check(rc == 1, "--strict exits 1 when a row differs (got %d)" % rc)
        rc, out, err = compare(a.tool, swz, raw, "--tolerance", "10")
        check(rc == 0 and all(r["match"] == "1" for r in bench_lines(out) if r["ratio"] != "inf"),
              "--tolerance 10 accepts every finite ratio")


# ---- malformed and mismatched inputs ------------------------------------------------------------------------------
def expect_input_error(a, kbd, ncu, needles, what, *extra):
    rc, out, err = compare(a.tool, kbd, ncu, *extra)
    lines = err.strip().splitlines()
    check(rc == 2, "%s: exit 2 (got %d; stderr %s)" % (what, rc, err.strip()))
    check("Traceback" not in out + err, "%s: no traceback" % what)
    check(len(lines) == 1 and lines[0].startswith("profile_compare: "), "%s: one line on stderr: %r" % (what, err))
    for n in needles:
        check(n in err, "%s: the message names %r: %r" % (what, n, err.strip()))
    check("BENCH" not in out, "%s: no BENCH line" % what)


def test_bad_input(a):
    good_json = os.path.join(a.data, "kbd_transpose_64.json")
    raw = os.path.join(a.data, "ncu_transpose_64.csv")
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, text):
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                f.write(text)
            return p

        expect_input_error(a, os.path.join(a.data, "kbd_truncated.json"), raw,
                           ["kbd_truncated.json", "not valid JSON"], "truncated JSON (fixture)")
        if a.transpose:  # and a live profile cut in half
            live = profile_of(a.transpose, ["64", "64", "1"], tmp, "live.json")
            text = open(live).read()
            expect_input_error(a, write("cut.json", text[:len(text) // 2]), raw, ["cut.json", "line 1",
                               "not valid JSON"], "truncated JSON (live)")
            # a different launch of the same kernel: 128 x 128 is 4 tiles on 4 blocks, the CSV's grid is 1
            other = profile_of(a.transpose, ["128", "128"], tmp, "grid4.json")
            expect_input_error(a, other, raw, ["ncu_transpose_64.csv", "(4, 1, 1)", "not the same launch"],
                               "another launch")
        expect_input_error(a, good_json, os.path.join(a.data, "ncu_missing_metric.csv"),
                           ["ncu_missing_metric.csv", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
                           "CSV missing a metric")
        csv_text = open(raw).read()
        expect_input_error(a, good_json, write("nan.csv", csv_text.replace('"448"', '"4x8"')),
                           ["nan.csv", "'4x8' is not a number"], "a value that is not a number")
        cut = csv_text[:csv_text.rindex('"9.0"') + 6]  # the launch row ends right after its CC
        expect_input_error(a, good_json, write("cutrow.csv", cut), ["cutrow.csv", "fields"], "CSV cut in a row")
        expect_input_error(a, good_json, write("empty.csv", ""), ["empty.csv", "no ncu CSV header"], "empty CSV")
        expect_input_error(a, write("empty.json", ""), raw, ["empty.json", "no launch"], "empty JSON")
        js = open(good_json).read()
        expect_input_error(a, write("nosites.json", js.replace('"sites"', '"sitez"')), raw,
                           ["nosites.json", '"sites"'], "JSON without sites")
        expect_input_error(a, write("badop.json", js.replace('"op": "stmatrix"', '"op": "stm"')), raw,
                           ["badop.json", "'stm'"], "JSON with an unknown op")
        expect_input_error(a, good_json, raw, ["kbd_transpose_64.json", "'transpose'", "tr_transpose"],
                           "a kernel name that is not kbd's", "--kernel", "transpose")
        expect_input_error(a, good_json, os.path.join(tmp, "absent.csv"), ["absent.csv"], "a missing file")
        expect_input_error(a, write("two.json", js + js), raw, ["two.json", "2 launches", "--launch"],
                           "two launches, none picked")
        rc, out, err = compare(a.tool, os.path.join(tmp, "two.json"), raw, "--launch", "1")
        check(rc == 0 and "line 2" in out, "--launch 1 takes the second line (rc %d: %s)" % (rc, err.strip()))


# ---- metrics: the list for ncu, and the list the fixture was written against ----------------------------------------
def test_metrics(a):
    rc, out, err = run([sys.executable, a.tool, "metrics"])
    names = out.strip().split(",")
    check(rc == 0 and len(out.strip().splitlines()) == 1 and " " not in out.strip(), "metrics: one comma list")
    check(all("__" in n and n.endswith(".sum") for n in names), "metrics: ncu names ending .sum: %s" % names)
    check(len(names) == len(set(names)) == 13, "metrics: 13 core names (got %d)" % len(names))
    header = next(l for l in open(os.path.join(a.data, "ncu_transpose_64.csv")) if l.startswith('"ID"'))
    check(all('"%s"' % n in header for n in names), "the test CSV has a column for every core metric")
    rc, ext, err = run([sys.executable, a.tool, "metrics", "--extended"])
    check(rc == 0 and set(names) < set(ext.strip().split(",")), "--extended adds to the core list")
    with tempfile.TemporaryDirectory() as tmp:
        q = os.path.join(tmp, "query.txt")
        with open(q, "w") as f:  # what `ncu --query-metrics` lists: base names without the .sum
            f.write("Device TEST\nMetric Name   Metric Description\n")
            for n in names[:5]:
                f.write("%s   Counter\n" % n.split(".")[0])
        rc, out, err = run([sys.executable, a.tool, "metrics", "--available", q])
        check(rc == 0 and out.strip().split(",") == names[:5], "--available keeps the listed metrics: %s" % out)
        check(all(n in err for n in names[5:]), "--available names what it left out")


# ---- torch_bench's measuring code on the stand-in PyTorch -------------------------------------------------------
def test_torch(a):
    fake = {"PYTHONPATH": os.path.join(a.data, "fake_torch")}
    rc, out, err = run([sys.executable, a.tool, "attention", "--smoke", "--dtype", "bf16"], fake)
    check(rc == 0, "attention --smoke exits 0 (got %d: %s)" % (rc, err.strip()[-500:]))
    rows = bench_lines(out)
    check(len(rows) == 6 * 3, "attention --smoke: 3 head_dims x 2 causal x 3 backends = 18 lines (got %d)" % len(rows))
    check(any(l.startswith("# torch_bench attention: PyTorch 0.0+fake") for l in out.splitlines()), "# header")
    for r in rows:
        head = [r.get(k) for k in ("bench", "kind", "dtype", "seq", "batch", "heads")]
        check(head == ["torch_attention", "fwd", "bf16", "256", "1", "2"], "smoke row: %s" % r)
        if r["backend"] == "cudnn":
            check(r["available"] == "0" and "fake: cuDNN refuses" in r.get("reason", "") and r["ms"] == "nan",
                  "a refusing backend is a line with available=0 and its reason: %s" % r)
            continue
        check(r["available"] == "1" and r["finite"] == "1" and r["reps"] == "1" and int(r["iters"]) >= 1,
              "measured row: %s" % r)
        d, causal = int(r["head_dim"]), int(r["causal"])
        flops = 4 * 1 * 2 * 256 * 256 * d / (2 if causal else 1)
        want = flops / (float(r["ms"]) * 1e-3) * 1e-12
        check(abs(float(r["tflops"]) - want) <= 0.006 + 0.001 * want, "tflops = FLOPs / ms: %s vs %.3f" % (r, want))
    rc, out, err = run([sys.executable, a.tool, "decode", "--smoke", "--backends", "flash"], fake)
    rows = bench_lines(out)
    check(rc == 0 and [(r["seq_q"], r["seq_k"], r["batch"], r["kv_bytes"], r["gqa"]) for r in rows]
          == [("1", "4096", "2", "16777216", "native"), ("16", "4096", "2", "16777216", "native")],
          "decode --smoke rows (rc %d): %s %s" % (rc, rows, err.strip()[-300:]))
    for r in rows:
        want = 16777216 / (float(r["ms"]) * 1e-3) * 1e-9
        check(abs(float(r["gbs"]) - want) <= 0.06 + 0.001 * want, "gbs = K+V bytes / ms: %s" % r)
    rc, out, err = run([sys.executable, a.tool, "gemm", "--smoke"], fake)
    rows = bench_lines(out)
    check(rc == 0 and [(r["bench"], r["type"], r["shape"], r["impl"], r["available"]) for r in rows]
          == [("torch_gemm", "bf16", "512x512x512", "torch.matmul", "1"),
              ("torch_gemm", "e4m3", "512x512x512", "torch._scaled_mm", "1")], "gemm --smoke rows: %s" % rows)
    rc, out, err = run([sys.executable, a.tool, "attention", "--smoke", "--dtype", "bf16", "--backends", "flash"],
                       dict(fake, FAKE_TORCH_NAN="sdpa"))
    check(rc == 1 and all(r["finite"] == "0" for r in bench_lines(out)), "non-finite output: finite=0, exit 1")
    rc, out, err = run([sys.executable, a.tool, "gemm"], dict(fake, FAKE_TORCH_NO_CUDA="1"))
    check(rc == 77 and len(out.strip().splitlines()) == 1 and "no CUDA device" in out,
          "no CUDA device: exit 77 with one line (rc %d: %r)" % (rc, out))
    rc, out, err = run([sys.executable, "-c", "import torch"])
    if rc != 0:  # no PyTorch in this python: the real import path says so
        rc, out, err = run([sys.executable, a.tool, "gemm"])
        check(rc == 77 and "PyTorch is not importable" in out, "no PyTorch: exit 77 (rc %d: %r)" % (rc, out))
    rc, out, err = run([sys.executable, a.tool, "attention", "--seqs", "12q"], fake)
    check(rc == 2 and "12q" in err, "a bad list: exit 2 naming it (rc %d)" % rc)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=("profile", "bad-input", "metrics", "torch"))
    p.add_argument("--tool", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--transpose")
    p.add_argument("--noswz")
    a = p.parse_args()
    {"profile": test_profile, "bad-input": test_bad_input, "metrics": test_metrics, "torch": test_torch}[a.what](a)
    print("%s: %s" % (a.what, "FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
