#!/usr/bin/env python3
"""gpt2_bench_table.py - the GPT-2 table for docs/benchmarks.md from the JSON of kbd's gpt2_bench and of
tools/gpt2_torch_ref.py (the GPU check's gpt2 stage writes them as $OUT/gpt2/kbd-MODEL.json and torch-MODEL.json).

  gpt2_bench_table.py KBD.json TORCH.json [KBD.json TORCH.json ...] [--ops]

One row per configuration found in either file: kbd tokens/s, PyTorch tokens/s, their ratio (kbd / torch); a
configuration the other side skipped or lacks shows "-". --ops adds each side's time per op (op -> ms, share) of
its profiled prefill and decode step. The torch file's correctness check, when it has one, is quoted under the table.
Exit 2 when a pair disagrees on the model (a kbd 124M beside a torch 1558M is no comparison) or a file is unreadable.
"""
import json
import sys


def die(msg):
    print(f"gpt2_bench_table: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path, impl):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")
    if not isinstance(d, dict) or d.get("impl") != impl:
        die(f"{path}: \"impl\" is not {impl!r} (give the kbd file first, then the torch file)")
    for k in ("model", "config", "prefill", "decode", "device"):
        if k not in d:
            die(f"{path}: no \"{k}\"")
    return d


def figures(d):
    out = {}
    for phase, key in (("prefill", "t"), ("decode", "context")):
        for f in d[phase]:
            out[(phase, f["batch"], f[key])] = None if f.get("skipped") else f["tokens_per_s"]
    return out


def fmt(v):
    return "-" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.1f}")


def table(pairs, ops):
    lines = []
    devices = sorted({d["device"] for k, t in pairs for d in (k, t)})
    method = pairs[0][0].get("timing", {}).get("method", "?")
    torch_v = pairs[0][1].get("versions", {}).get("torch", "?")
    lines.append(f"GPT-2, random weights, bf16, on {', '.join(devices)}: kbd (examples/gpt2) beside PyTorch {torch_v} "
                 f"(eager, F.scaled_dot_product_attention, KV cache), both timed by {method}, median. Prefill: B rows "
                 "of T prompt tokens to the last token's logits; decode: one token per row (forward + greedy "
                 "sampling) after a prompt of the given context.")
    lines.append("")
    lines.append("| model | phase | batch | T / context | kbd tokens/s | PyTorch tokens/s | kbd / PyTorch |")
    lines.append("|---|---|---:|---:|---:|---:|---:|")
    for k, t in pairs:
        fk, ft = figures(k), figures(t)
        for key in sorted(set(fk) | set(ft), key=lambda x: (x[0] != "prefill", x[2], x[1])):
            a, b = fk.get(key), ft.get(key)
            ratio = f"{a / b:.2f}" if a and b else "-"
            lines.append(f"| {k['model']} | {key[0]} | {key[1]} | {key[2]} | {fmt(a)} | {fmt(b)} | {ratio} |")
    for k, t in pairs:
        c = t.get("check")
        if c:
            lines.append("")
            lines.append(f"Check ({k['model']}): kbd's greedy tokens against PyTorch in float32 on the same weights, "
                         f"{c['rows']} rows x {c['steps']} steps: {'PASS' if c['pass'] else 'FAIL'}; tokens equal: "
                         f"{'yes' if c['tokens_equal'] else 'no'}; largest top-logit difference "
                         f"{c['max_logit_diff']:.4f} (tolerance {c['tol']}).")
    if ops:
        for k, t in pairs:
            for d in (k, t):
                prof = d.get("profile")
                if not prof:
                    continue
                for phase, key in (("prefill", "t"), ("decode", "context")):
                    p = prof[phase]
                    lines.append("")
                    lines.append(f"{d['impl']} {d['model']}, one {phase}{' step' if phase == 'decode' else ''} "
                                 f"(batch {p['batch']}, {'T' if key == 't' else 'context'} {p[key]}), time per op "
                                 f"with a device sync after each ({p['total_ms']:.3f} ms; "
                                 f"{p['unprofiled_ms']:.3f} ms unprofiled):")
                    lines.append("")
                    lines.append("| op | launches | ms | share |")
                    lines.append("|---|---:|---:|---:|")
                    for o in sorted(p["ops"], key=lambda o: -o["ms"]):
                        lines.append(f"| {o['op']} | {o['launches']} | {o['ms']:.4f} | {100 * o['share']:.1f} % |")
    return "\n".join(lines) + "\n"


def main(argv):
    ops = "--ops" in argv
    files = [a for a in argv if a != "--ops"]
    if not files or len(files) % 2 or any(a.startswith("-") for a in files):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    pairs = []
    for i in range(0, len(files), 2):
        k, t = load(files[i], "kbd"), load(files[i + 1], "torch")
        if k["model"] != t["model"] or k["config"] != t["config"]:
            print(f"gpt2_bench_table: {files[i]} is model {k['model']} {k['config']}, {files[i + 1]} is "
                  f"{t['model']} {t['config']}: not the same model", file=sys.stderr)
            return 2
        pairs.append((k, t))
    sys.stdout.write(table(pairs, ops))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
