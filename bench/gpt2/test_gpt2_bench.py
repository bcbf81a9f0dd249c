#!/usr/bin/env python3
"""test_gpt2_bench.py - the GPT-2 GPU benchmark's program logic on the CPU machine (ctest bench_gpt2_gpu_bench_cpu,
label cpu; bench/gpt2/gpt2_bench.cmake):

  test_gpt2_bench.py GPT2_BENCH_CPU TOOLS_DIR WORK_DIR

- gpt2_bench_cpu on the tiny model end to end (--profile --greedy --weights --json): every JSON field checked against
  what the run asked for (configurations, tokens/s = tokens / median, launches per op for 2 layers, shares summing to
  1, greedy tokens equal to the argmax of the logits it reports, the prompt from the torch script's formula), the
  checkpoint it wrote readable by the torch script's safetensors reader, its c_proj weights at the GPU bench's scale
  (0.08, through the writer shared with gpt2_cpu_bench: bench/gpt2/gpt2_random_model.c) and c_attn at 0.05;
- --budget: configurations past it are listed as skipped and the JSON stays whole;
- bad arguments: exit 2 and a message naming the problem;
- tools/gpt2_torch_ref.py: bad arguments exit 2; without PyTorch exit 77 and a message; with PyTorch (not installed
  on this machine) the tiny model on the CPU, its --check of the bench's tokens and its JSON fields against the
  bench's;
- tools/gpt2_bench_table.py: the ratio column from a pair, and a pair of different models refused.
"""
import copy
import json
import os
import shutil
import struct
import subprocess
import sys

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL: " + what)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)
    return p.returncode, p.stdout + p.stderr


def close(a, b, rel=2e-3):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def main():
    exe, tools, work = sys.argv[1:4]
    sys.path.insert(0, tools)
    import gpt2_torch_ref as ref  # imports without PyTorch: the formulas and the file reader

    shutil.rmtree(work, ignore_errors=True)  # the bench must make --weights DIR itself
    os.makedirs(work)
    kj, wdir = os.path.join(work, "kbd.json"), os.path.join(work, "weights")
    rc, out = run([exe, "--model", "tiny", "--profile", "--greedy", "4", "--weights", wdir, "--json", kj])
    check(rc == 0, f"gpt2_bench_cpu --model tiny exit {rc}: {out[-600:]}")
    if rc != 0:
        return
    with open(kj) as f:
        k = json.load(f)
    cfg = ref.MODELS["tiny"]
    check(k["impl"] == "kbd" and k["model"] == "tiny", "impl / model")
    check(k["config"] == cfg, f"config {k['config']} != {cfg}")
    check(k["timing"]["statistic"] == "median" and k["timing"]["reps"] == 3, f"timing {k['timing']}")
    check([(f["batch"], f["t"]) for f in k["prefill"]] == [(1, 8), (2, 16)], f"prefill configs {k['prefill']}")
    check([(f["batch"], f["context"]) for f in k["decode"]] == [(1, 8), (2, 8)], f"decode configs {k['decode']}")
    for f in k["prefill"]:
        check(f["ms"] > 0 and f["ms_min"] <= f["ms"] and 1 <= f["reps"] <= 3, f"prefill figure {f}")
        check(close(f["tokens_per_s"], f["batch"] * f["t"] / (f["ms"] * 1e-3)), f"prefill tokens/s {f}")
    for f in k["decode"]:
        check(f["ms"] > 0 and f["ms_min"] <= f["ms"] and 1 <= f["reps"] <= 4, f"decode figure {f}")
        check(close(f["tokens_per_s"], f["batch"] / (f["ms"] * 1e-3)), f"decode tokens/s {f}")
    # the per-op table: 2 layers -> ln_1 + ln_2 per layer + ln_f, one QKV / attention / MLP GEMM per layer
    for phase in ("prefill", "decode"):
        p = k["profile"][phase]
        ops = {o["op"]: o for o in p["ops"]}
        check(ops.get("layernorm (gpt2_layernorm)", {}).get("launches") == 2 * cfg["n_layer"] + 1,
              f"{phase}: layernorm launches {ops.get('layernorm (gpt2_layernorm)')}")
        for name in ("QKV GEMM (+bias)", "attention (attn_run)", "MLP c_fc GEMM (+bias+GELU)"):
            check(ops.get(name, {}).get("launches") == cfg["n_layer"], f"{phase}: {name} launches {ops.get(name)}")
        check(ops.get("LM head GEMM (f32 logits)", {}).get("launches") == 1, f"{phase}: one LM head")
        check(close(sum(o["share"] for o in p["ops"]), 1.0, 1e-2), f"{phase}: shares sum to 1")
        check(close(sum(o["ms"] for o in p["ops"]), p["total_ms"], 1e-3), f"{phase}: total_ms is the ops' sum")
        check(p["unprofiled_ms"] > 0, f"{phase}: unprofiled_ms")
    check("sampling (gpt2_sample_rows)" in {o["op"] for o in k["profile"]["decode"]["ops"]}, "decode step samples")
    check(k["profile"]["prefill"]["t"] == 16 and k["profile"]["decode"]["context"] == 8, "profiled shapes")
    # greedy: the prompt is the torch script's, each token is the argmax of the logits the bench reports
    g = k["greedy"]
    check(g["prompt"] == ref.prompt_ids(k["seed"], 2, 8, cfg["vocab_size"]), f"greedy prompt {g['prompt']}")
    for r in range(2):
        check(len(g["tokens"][r]) == 4 and all(0 <= t < cfg["vocab_size"] for t in g["tokens"][r]),
              f"greedy tokens row {r}: {g['tokens'][r]}")
        for s in range(4):
            top = g["top"][r][s]
            check(top[0][0] == g["tokens"][r][s], f"row {r} step {s}: token {g['tokens'][r][s]} is not the top "
                                                  f"logit's id {top[0][0]}")
            check(all(top[i][1] >= top[i + 1][1] for i in range(len(top) - 1)), f"row {r} step {s}: top sorted")
    # the checkpoint, as the torch script reads it
    tensors, start = ref.read_safetensors_index(os.path.join(wdir, "model.safetensors"))
    check(len(tensors) == 4 + 12 * cfg["n_layer"], f"{len(tensors)} tensors")
    check(tensors.get("h.1.attn.c_attn.weight", ("",))[:2] == ("BF16", (64, 192)), "h.1.attn.c_attn.weight")
    # the shared writer's scales (bench/gpt2/gpt2_random_model.c): the GPU bench passes 0.08 for both c_proj
    # weights, as tools/gpt2_torch_ref.py's random_weights; c_attn stays at 0.05
    def max_abs(name):
        _, shape, b, e = tensors[name]
        with open(os.path.join(wdir, "model.safetensors"), "rb") as f:
            f.seek(start + b)
            raw = f.read(e - b)
        vals = struct.unpack(f"<{len(raw) // 2}H", raw)
        return max(abs(struct.unpack("<f", struct.pack("<I", v << 16))[0]) for v in vals)
    for name, lo, hi in (("h.0.attn.c_proj.weight", 0.07, 0.0801), ("h.1.mlp.c_proj.weight", 0.07, 0.0801),
                         ("h.0.attn.c_attn.weight", 0.04, 0.0501)):
        if name in tensors:
            m = max_abs(name)
            check(lo < m < hi, f"{name}: largest |value| {m}, expected in ({lo}, {hi})")
        else:
            check(False, f"{name} missing")
    with open(os.path.join(wdir, "config.json")) as f:
        hf = json.load(f)
    check(all(hf.get(key) == cfg[key] for key in ("n_layer", "n_head", "n_embd", "vocab_size")), f"config.json {hf}")

    # --budget: what starts after it is skipped, the JSON is still whole
    bj = os.path.join(work, "budget.json")
    rc, out = run([exe, "--model", "tiny", "--greedy", "2", "--budget", "0.000001", "--json", bj])
    check(rc == 0, f"--budget run exit {rc}: {out[-300:]}")
    if rc == 0:
        with open(bj) as f:
            b = json.load(f)
        check(all(f.get("skipped") for f in b["decode"]) and "skipped" in out, f"--budget: decode not skipped {b}")

    # bad arguments
    for args, msg in ((["--model", "huge"], "one of tiny"), (["--prefill", "0x8"], "not a valid value"),
                      (["--prefill", "1x100"], "tokens of context"),
                      (["--greedy", "65"], "at most 64"), (["--bogus"], "unknown"), (["--decode"], "needs a value"),
                      (["--prefill", "1x8,,2x8"], "not a valid value"), (["--decode", ",1"], "not a valid value"),
                      (["--prefill", "1x8,"], "not a valid value"), (["--cap", "-1"], "not a valid value")):
        # tiny: an argument wrongly accepted runs seconds, not a 124M model on the CPU machine
        rc, out = run([exe] + (["--model", "tiny"] if "--model" not in args else []) + args)
        check(rc == 2 and msg in out, f"gpt2_bench_cpu {' '.join(args)}: exit {rc} (want 2), '{msg}' in: {out[-300:]}")

    # the torch script
    script = os.path.join(tools, "gpt2_torch_ref.py")
    for args, msg in ((["--prefill", "1x"], "BxT"), (["--check", kj], "needs --weights"),
                      (["--prefill", "1x2000"], "tokens of context"), (["--tiny", "--model", "124M"], "disagree")):
        rc, out = run([sys.executable, script] + args)
        check(rc == 2 and msg in out, f"gpt2_torch_ref {' '.join(args)}: exit {rc} (want 2), '{msg}' in: {out[-300:]}")
    tj = os.path.join(work, "torch.json")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    rc, out = run([sys.executable, script, "--tiny", "--device", "cpu", "--profile", "--weights", wdir, "--check", kj,
                   "--json", tj])
    if not have_torch:
        check(rc == 77 and "PyTorch is not importable" in out, f"gpt2_torch_ref without torch: exit {rc}: {out}")
        print("note: PyTorch is not installed here: the torch model itself was not run")
        t = copy.deepcopy(k)  # a stand-in with the bench's own fields, for the table below
        t["impl"], t["versions"] = "torch", {"torch": "stand-in"}
        for phase in ("prefill", "decode"):
            for f in t[phase]:
                f["tokens_per_s"] /= 2
    else:
        check(rc == 0, f"gpt2_torch_ref --tiny --device cpu --check: exit {rc}: {out[-800:]}")
        with open(tj) as f:
            t = json.load(f)
        check(t.get("check", {}).get("pass") is True, f"torch check {t.get('check')}")
        common = set(k) - {"greedy"}
        check(common <= set(t), f"torch JSON lacks {common - set(t)}")
        for phase in ("prefill", "decode"):
            check([set(f) for f in t[phase]] == [set(f) for f in k[phase]], f"{phase} fields differ")
            check(set(t["profile"][phase]) == set(k["profile"][phase]), f"profile {phase} fields differ")

    # the table
    table = os.path.join(tools, "gpt2_bench_table.py")
    rc, out = run([sys.executable, table, kj, tj if have_torch else _write(work, "stand-in.json", t), "--ops"])
    check(rc == 0, f"gpt2_bench_table exit {rc}: {out[-300:]}")
    check("| tiny | prefill | 1 | 8 |" in out and "| tiny | decode | 2 | 8 |" in out, f"table rows: {out[:600]}")
    if not have_torch:
        check(out.count("| 2.00 |") == 4, f"ratio column (kbd / stand-in at half the speed = 2.00): {out[:900]}")
    check("| LM head GEMM (f32 logits) | 1 |" in out, "--ops tables")
    other = copy.deepcopy(t)
    other["model"], other["config"] = "124M", ref.MODELS["124M"]
    rc, out = run([sys.executable, table, kj, _write(work, "other.json", other)])
    check(rc == 2 and "not the same model" in out, f"table of two models: exit {rc}: {out[-300:]}")
    rc, out = run([sys.executable, table, tj if have_torch else os.path.join(work, "stand-in.json"), kj])
    check(rc == 2 and "kbd file first" in out, f"table with the files swapped: exit {rc}: {out[-300:]}")


def _write(work, name, obj):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


if __name__ == "__main__":
    main()
    print(f"{len(fails)} failure(s)" if fails else "all checks passed")
    sys.exit(1 if fails else 0)
