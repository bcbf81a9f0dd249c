#!/usr/bin/env python3
"""gpt2_torch_ref.py - GPT-2 in PyTorch beside kbd's bench/gpt2/gpt2_gpu_bench.c: the same shapes, the same timing
method, the same JSON fields (docs/gpt2.md "Benchmarks"; tools/gpu-check.sh's gpt2 stage runs both).

  gpt2_torch_ref.py [--model tiny|124M|355M|774M|1558M | --tiny] [--layers L] [--device cuda|cpu] [--seed S]
                    [--prefill BxT,...] [--decode B,...] [--context C] [--steps N] [--warmup W] [--reps R]
                    [--cap S] [--budget S] [--profile] [--profile-prefill BxT] [--profile-decode B]
                    [--weights DIR [--check KBD_JSON] [--tol T]] [--json FILE]

The model: plain nn modules written here (no transformers package), eager, bf16 weights and activations, attention
by F.scaled_dot_product_attention (causal for the prompt), a preallocated KV cache for decode, the LM head on each
row's last token only (as kbd computes it). Weights: --weights DIR reads the bench's DIR/model.safetensors and
config.json (the Hugging Face layout; read here with the standard library, no safetensors package); otherwise seeded
random weights made on the device (the timings do not depend on the values).

Timing, as the kbd bench: CUDA events around each call on the current stream (--device cpu: the wall clock),
--warmup untimed calls, then --reps timed calls (prefill) or --steps timed decode steps (decode + greedy argmax on
the device); the median. --cap S ends a configuration's timed calls after S seconds of them; --budget S skips the
configurations that start after S seconds. --profile: one prefill and one decode step with a device sync around each
op (op -> ms, share).

--check KBD_JSON (with --weights): the bench's "greedy" record (two seeded prompts, kbd's greedy tokens and its top
logits per step) against this model in float32 on the same bf16 weights, teacher-forced on kbd's tokens: each kbd token
must be torch's argmax or within --tol of its logit, and each of kbd's top logits within --tol (+1 % of the value)
of torch's; torch's own greedy continuation is reported beside it (tokens_equal). A check failure is exit 1.

Exit: 0; 1 a failed check or run; 2 bad arguments; 77 PyTorch (or its CUDA device) is not importable here.
"""
import argparse
import json
import os
import statistics
import struct
import sys
import time

MODELS = {  # GPT-2's released sizes (Hugging Face config.json) and the CPU test's tiny one
    "tiny": dict(n_layer=2, n_head=4, n_embd=64, vocab_size=300, n_ctx=64),
    "124M": dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_ctx=1024),
    "355M": dict(n_layer=24, n_head=16, n_embd=1024, vocab_size=50257, n_ctx=1024),
    "774M": dict(n_layer=36, n_head=20, n_embd=1280, vocab_size=50257, n_ctx=1024),
    "1558M": dict(n_layer=48, n_head=25, n_embd=1600, vocab_size=50257, n_ctx=1024),
}
GREEDY_ROWS, GREEDY_PROMPT = 2, 8
M64 = (1 << 64) - 1


def mix(x):
    """splitmix64, as gb_mix in bench/gpt2/gpt2_gpu_bench.c"""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def prompt_id(seed, row, i, vocab):
    """the bench's seeded prompt token (gb_prompt_id): row, position"""
    return mix((seed * 1000003 + row * 65537 + i) & M64) % vocab


def prompt_ids(seed, batch, t, vocab):
    return [[prompt_id(seed, r, i, vocab) for i in range(t)] for r in range(batch)]


def read_safetensors_index(path):
    """(tensors, data_start): the header of a safetensors file - {name: (dtype, shape, begin, end)} - checked"""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError(f"{path}: shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise ValueError(f"{path}: header length {n} runs past the end ({size} bytes)")
        try:
            hdr = json.loads(f.read(n))
        except ValueError as e:
            raise ValueError(f"{path}: the header is not JSON: {e}") from None
    tensors = {}
    for name, v in hdr.items():
        if name == "__metadata__":
            continue
        b, e = v["data_offsets"]
        if not 0 <= b <= e <= size - 8 - n:
            raise ValueError(f"{path}: tensor {name}: data_offsets {b}..{e} outside the file")
        tensors[name] = (v["dtype"], tuple(v["shape"]), b, e)
    return tensors, 8 + n


def parse_bxt(text):
    b, sep, t = text.partition("x")
    if not sep:
        raise ValueError
    return positive(b), positive(t)


def positive(text):
    v = int(text)
    if v < 1 or v > 1000000:
        raise ValueError
    return v


def parse_args(argv):
    def lst(kind):
        def f(text):
            try:
                return [parse_bxt(x) if kind == "bxt" else positive(x) for x in text.split(",")]
            except ValueError:
                raise argparse.ArgumentTypeError(f"'{text}': a comma list of {'BxT' if kind == 'bxt' else 'B'}"
                                                 " with positive sizes") from None
        return f

    def pos_int(text):
        try:
            return positive(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer") from None

    def pos_float(text):
        try:
            v = float(text)
        except ValueError:
            v = -1.0
        if not 0 < v < 1e7:
            raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
        return v

    def bxt(text):
        try:
            return parse_bxt(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not BxT (e.g. 1x1024)") from None

    p = argparse.ArgumentParser(description="GPT-2 in PyTorch beside kbd's gpt2_bench (same shapes, timing, JSON)")
    p.add_argument("--model", choices=sorted(MODELS), default=None)
    p.add_argument("--tiny", action="store_true", help="--model tiny (the CPU test's shape)")
    p.add_argument("--layers", type=pos_int)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--prefill", type=lst("bxt"))
    p.add_argument("--decode", type=lst("b"))
    p.add_argument("--context", type=pos_int)
    p.add_argument("--steps", type=pos_int)
    p.add_argument("--warmup", type=pos_int)
    p.add_argument("--reps", type=pos_int)
    p.add_argument("--cap", type=pos_float, default=10.0)
    p.add_argument("--budget", type=pos_float, default=1e6)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--profile-prefill", type=bxt)
    p.add_argument("--profile-decode", type=pos_int, default=1)
    p.add_argument("--weights", help="the bench's --weights folder: model.safetensors + config.json")
    p.add_argument("--check", help="the bench's JSON with its greedy record (needs --weights)")
    p.add_argument("--tol", type=pos_float, default=0.25, help="logit tolerance of --check (default 0.25)")
    p.add_argument("--json")
    a = p.parse_args(argv)
    if a.tiny and a.model not in (None, "tiny"):
        p.error("--tiny and --model %s disagree" % a.model)
    a.model = "tiny" if a.tiny else (a.model or "124M")
    if a.check and not a.weights:
        p.error("--check needs --weights (the same weights the bench wrote)")
    if a.seed < 0:
        p.error("--seed must be >= 0")
    tiny = a.model == "tiny"
    a.prefill = a.prefill or ([(1, 8), (2, 16)] if tiny else [(b, t) for t in (128, 1024) for b in (1, 4, 8)])
    a.decode = a.decode or ([1, 2] if tiny else [1, 8, 32])
    a.context = a.context or (8 if tiny else 128)
    a.steps = a.steps or (4 if tiny else 32)
    a.warmup = a.warmup or (1 if tiny else 3)
    a.reps = a.reps or (3 if tiny else 10)
    a.profile_prefill = a.profile_prefill or (1, 16 if tiny else 1024)
    cfg = dict(MODELS[a.model])
    if a.layers:
        cfg["n_layer"] = a.layers
    need = max([t for _, t in a.prefill] + [a.context + a.warmup + a.steps + 1] +
               ([a.profile_prefill[1], a.context + 3] if a.profile else []))
    if need > cfg["n_ctx"]:
        p.error(f"a run needs {need} tokens of context: model {a.model} has {cfg['n_ctx']}")
    a.cfg = cfg
    return a


def build(torch, cfg, device):
    """the model's nn modules (defined here so that this file imports without PyTorch)"""
    nn, F = torch.nn, torch.nn.functional
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]

    class Prof:
        """per-op time with a device sync around each op (--profile); off: a plain call"""
        def __init__(self):
            self.on, self.ms, self.n = False, {}, {}

        def __call__(self, name, fn, *args):
            if not self.on:
                return fn(*args)
            sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
            sync()
            t = time.perf_counter()
            r = fn(*args)
            sync()
            self.ms[name] = self.ms.get(name, 0.0) + 1e3 * (time.perf_counter() - t)
            self.n[name] = self.n.get(name, 0) + 1
            return r

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C, eps=1e-5), nn.LayerNorm(C, eps=1e-5)
            self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(self, x, kc, vc, pos, prof):
            B, T, _ = x.shape
            hd = C // H
            h = prof("layernorm", self.ln_1, x)
            qkv = prof("QKV GEMM (+bias)", self.c_attn, h)

            def split():
                q, k, v = qkv.view(B, T, 3, H, hd).permute(2, 0, 3, 1, 4).unbind(0)
                kc[:B, :, pos:pos + T] = k
                vc[:B, :, pos:pos + T] = v
                return q

            q = prof("KV-cache write", split)
            y = prof("attention (SDPA)", lambda: F.scaled_dot_product_attention(
                q, kc[:B, :, :pos + T], vc[:B, :, :pos + T], is_causal=T > 1))
            y = prof("head merge", lambda: y.transpose(1, 2).reshape(B, T, C))
            x = prof("attn c_proj GEMM (+bias+res)", lambda: x + self.c_proj(y))
            h = prof("layernorm", self.ln_2, x)
            h = prof("MLP c_fc GEMM (+bias+GELU)", lambda: F.gelu(self.c_fc(h), approximate="tanh"))
            return prof("MLP c_proj GEMM (+bias+res)", lambda: x + self.mlp_proj(h))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(cfg["vocab_size"], C), nn.Embedding(cfg["n_ctx"], C)
            self.h = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(C, eps=1e-5)
            self.prof = Prof()
            self.kc = self.vc = None
            self.pos = 0

        def plan(self, batch, ctx):
            """the KV cache, once, for the largest batch and context (as gpt2_load plans kbd's)"""
            shape = (L, batch, H, ctx, C // H)
            self.kc = torch.zeros(shape, dtype=self.wte.weight.dtype, device=device)
            self.vc = torch.zeros(shape, dtype=self.wte.weight.dtype, device=device)

        def forward(self, ids, pos, all_logits=False):
            """ids [B, T] at positions pos..pos+T-1: f32 logits of each row's last token ([B, T, V] if all_logits)"""
            T = ids.shape[1]
            prof = self.prof
            x = prof("embedding", lambda: self.wte(ids) + self.wpe(torch.arange(pos, pos + T, device=device)))
            for i, blk in enumerate(self.h):
                x = blk(x, self.kc[i], self.vc[i], pos, prof)
            if not all_logits:
                x = x[:, -1:]
            x = prof("layernorm", self.ln_f, x)
            logits = prof("LM head GEMM (f32 logits)", lambda: (x @ self.wte.weight.t()).float())
            self.pos = pos + T
            return logits if all_logits else logits[:, 0]

        def prefill(self, ids):
            return self.forward(ids, 0)

        def decode(self, ids):
            return self.forward(ids[:, None], self.pos)

        def sample(self, logits):
            return self.prof("sampling (argmax)", lambda: logits.argmax(-1))

    return GPT2


def load_weights(torch, model, path_dir, cfg):
    """the bench's safetensors (Hugging Face names, Conv1D [in][out] weights) into the nn.Linear [out][in] layout"""
    with open(os.path.join(path_dir, "config.json")) as f:
        hf = json.load(f)
    for k in ("n_layer", "n_head", "n_embd", "vocab_size"):
        if hf.get(k) != cfg[k]:
            raise ValueError(f"{path_dir}/config.json: {k} = {hf.get(k)}, the model asked for has {cfg[k]}")
    path = os.path.join(path_dir, "model.safetensors")
    tensors, start = read_safetensors_index(path)
    dtypes = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}
    with open(path, "rb") as f:
        blob = f.read()

    def get(name, shape):
        if name not in tensors:
            raise ValueError(f"{path}: no tensor '{name}'")
        dt, shp, b, e = tensors[name]
        if shp != tuple(shape) or dt not in dtypes:
            raise ValueError(f"{path}: {name}: {dt} {list(shp)}, expected one of {sorted(dtypes)} {list(shape)}")
        return torch.frombuffer(bytearray(blob[start + b:start + e]), dtype=dtypes[dt]).view(shape)

    C = cfg["n_embd"]
    sd = {"wte.weight": get("wte.weight", (cfg["vocab_size"], C)), "wpe.weight": get("wpe.weight", (cfg["n_ctx"], C)),
          "ln_f.weight": get("ln_f.weight", (C,)), "ln_f.bias": get("ln_f.bias", (C,))}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            sd[p + ln + ".weight"], sd[p + ln + ".bias"] = get(p + ln + ".weight", (C,)), get(p + ln + ".bias", (C,))
        for src, dst, din, dout in (("attn.c_attn", "c_attn", C, 3 * C), ("attn.c_proj", "c_proj", C, C),
                                    ("mlp.c_fc", "c_fc", C, 4 * C), ("mlp.c_proj", "mlp_proj", 4 * C, C)):
            sd[p + dst + ".weight"] = get(p + src + ".weight", (din, dout)).t().contiguous()
            sd[p + dst + ".bias"] = get(p + src + ".bias", (dout,))
    model.load_state_dict(sd)


def random_weights(torch, model, seed):
    """seeded random weights at the bench's scales, made on the device"""
    g = torch.Generator(device=model.wte.weight.device).manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            center = 1.0 if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")) else 0.0
            scale = {"wte.weight": 0.1, "c_proj.weight": 0.08, "mlp_proj.weight": 0.08, "c_attn.weight": 0.05,
                     "c_fc.weight": 0.05}.get(".".join(name.split(".")[-2:]), 0.02)
            if "ln_" in name:
                scale = 0.1
            u = torch.rand(p.shape, generator=g, device=p.device, dtype=torch.float32)
            p.copy_(center + scale * (2 * u - 1))


class Timer:
    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.type == "cuda"
        if self.cuda:
            self.e0 = torch.cuda.Event(enable_timing=True)
            self.e1 = torch.cuda.Event(enable_timing=True)

    def start(self):
        if self.cuda:
            self.e0.record()
        else:
            self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.e1.record()
            self.e1.synchronize()
            return self.e0.elapsed_time(self.e1)
        return 1e3 * (time.perf_counter() - self.t0)


def fig(batch, key, length, samples, tokens):
    ms = statistics.median(samples)
    return {"batch": batch, key: length, "ms": round(ms, 6), "ms_min": round(min(samples), 6),
            "tokens_per_s": round(tokens / (ms * 1e-3), 3), "reps": len(samples)}


def run_prefill(torch, m, a, timer, b, t, dev):
    ids = torch.tensor(prompt_ids(a.seed, b, t, a.cfg["vocab_size"]), device=dev)
    for _ in range(a.warmup):
        m.prefill(ids)
    samples, spent = [], 0.0
    while len(samples) < a.reps and (not samples or spent < 1e3 * a.cap):
        timer.start()
        m.prefill(ids)
        samples.append(timer.stop())
        spent += samples[-1]
    return fig(b, "t", t, samples, b * t)


def run_decode(torch, m, a, timer, b, dev):
    ids = torch.tensor(prompt_ids(a.seed, b, a.context, a.cfg["vocab_size"]), device=dev)
    nxt = m.sample(m.prefill(ids))
    for _ in range(a.warmup):
        nxt = m.sample(m.decode(nxt))
    samples, spent = [], 0.0
    while len(samples) < a.steps and (not samples or spent < 1e3 * a.cap):
        timer.start()
        nxt = m.sample(m.decode(nxt))
        samples.append(timer.stop())
        spent += samples[-1]
    return fig(b, "context", a.context, samples, b)


def run_profile(torch, m, a, timer, dev):
    out = {"method": "a device sync around each op (wall clock)"}
    b, t = a.profile_prefill
    ids = torch.tensor(prompt_ids(a.seed, b, t, a.cfg["vocab_size"]), device=dev)
    m.prefill(ids)
    timer.start()
    m.prefill(ids)
    unprof = timer.stop()

    def take(key, length_key, length, batch, unprofiled):
        total = sum(m.prof.ms.values())
        out[key] = {"batch": batch, length_key: length, "total_ms": round(total, 6),
                    "unprofiled_ms": round(unprofiled, 6),
                    "ops": [{"op": k, "launches": m.prof.n[k], "ms": round(v, 6), "share": round(v / total, 4)}
                            for k, v in m.prof.ms.items()]}
        m.prof.on, m.prof.ms, m.prof.n = False, {}, {}

    m.prof.on = True
    m.prefill(ids)
    take("prefill", "t", t, b, unprof)
    db = a.profile_decode
    ids = torch.tensor(prompt_ids(a.seed, db, a.context, a.cfg["vocab_size"]), device=dev)
    nxt = m.sample(m.decode(m.sample(m.prefill(ids))))
    timer.start()
    nxt = m.sample(m.decode(nxt))
    unprof = timer.stop()
    m.prof.on = True
    m.sample(m.decode(nxt))
    take("decode", "context", a.context, db, unprof)
    return out


def check(torch, m, a, kbd_path, dev):
    """kbd's greedy record against this model in float32, teacher-forced on kbd's tokens"""
    with open(kbd_path) as f:
        kbd = json.load(f)
    g = kbd.get("greedy")
    if not g:
        raise ValueError(f"{kbd_path}: no \"greedy\" record (run the bench with --greedy N)")
    if kbd.get("seed") != a.seed or kbd.get("config", {}).get("n_layer") != a.cfg["n_layer"]:
        raise ValueError(f"{kbd_path}: seed {kbd.get('seed')}, {kbd.get('config', {}).get('n_layer')} layers: this run "
                         f"has seed {a.seed}, {a.cfg['n_layer']} layers")
    prompt, toks, top = g["prompt"], g["tokens"], g["top"]
    if prompt != prompt_ids(a.seed, len(prompt), len(prompt[0]), a.cfg["vocab_size"]):
        raise ValueError(f"{kbd_path}: the prompt is not this script's prompt_ids(seed {a.seed}): the formulas differ")
    m.float()
    n = len(toks[0])
    seq = torch.tensor([p + t[:-1] for p, t in zip(prompt, toks)], device=dev)
    P = len(prompt[0])
    with torch.no_grad():
        m.plan(len(prompt), P + n + 1)
        logits = m.forward(seq, 0, all_logits=True)[:, P - 1:]  # step s: the logits after prompt + s kbd tokens
        ids = torch.tensor(prompt, device=dev)  # torch's own greedy continuation
        own = [m.sample(m.prefill(ids))]
        for _ in range(n - 1):
            own.append(m.sample(m.decode(own[-1])))
    own = torch.stack(own, 1).tolist()
    worst_tok, worst_logit, bad = 0.0, 0.0, []
    for r in range(len(prompt)):
        for s in range(n):
            lg = logits[r, s]
            gap = (lg.max() - lg[toks[r][s]]).item()
            worst_tok = max(worst_tok, gap)
            if gap > a.tol:
                bad.append(f"row {r} step {s}: kbd token {toks[r][s]} is {gap:.3f} below torch's argmax "
                           f"{int(lg.argmax())}")
            for tid, val in top[r][s]:
                d = abs(val - lg[tid].item())
                worst_logit = max(worst_logit, d)
                if d > a.tol + 0.01 * abs(val):
                    bad.append(f"row {r} step {s}: logit of {tid}: kbd {val:.4f}, torch {lg[tid].item():.4f}")
    return {"rows": len(prompt), "steps": n, "tol": a.tol, "tokens_equal": own == toks, "torch_tokens": own,
            "kbd_tokens": toks, "max_token_gap": round(worst_tok, 5), "max_logit_diff": round(worst_logit, 5),
            "pass": not bad, "failures": bad[:10]}


def main(argv):
    a = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"gpt2_torch_ref: PyTorch is not importable here ({e}): skipped")
        return 77
    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpt2_torch_ref: torch.cuda is not available: skipped (--device cpu runs on the CPU)")
        return 77
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    cfg = a.cfg
    t0 = time.perf_counter()
    with torch.device(dev):
        m = build(torch, cfg, dev)()
    if a.weights:
        load_weights(torch, m, a.weights, cfg)
    else:
        random_weights(torch, m, a.seed)
    m = m.to(device=dev, dtype=torch.bfloat16).eval()
    load_s = time.perf_counter() - t0
    max_b = max([b for b, _ in a.prefill] + a.decode + [a.profile_decode, a.profile_prefill[0]])
    max_t = max([t for _, t in a.prefill] + [a.context + a.warmup + a.steps + 1, a.profile_prefill[1], a.context + 3])
    res = {"impl": "torch", "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU",
           "arch": ("sm_%d%d" % torch.cuda.get_device_capability(dev)) if dev.type == "cuda" else "cpu",
           "model": a.model, "config": {k: cfg[k] for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_ctx")},
           "seed": a.seed, "dtype": "bf16",
           "timing": {"method": "CUDA events" if dev.type == "cuda" else "wall clock", "statistic": "median",
                      "warmup": a.warmup, "reps": a.reps, "steps": a.steps, "cap_s": a.cap},
           "setup_s": {"weights": 0.0, "load": round(load_s, 3)},
           "versions": {"torch": torch.__version__}}
    if a.check:
        res["check"] = check(torch, m, a, a.check, dev)
        m = m.to(torch.bfloat16)
    m.plan(max_b, max_t)
    timer = Timer(torch, dev)
    run0 = time.perf_counter()
    res["prefill"], res["decode"] = [], []
    with torch.no_grad():
        for b, t in a.prefill:
            if time.perf_counter() - run0 > a.budget:
                res["prefill"].append({"batch": b, "t": t, "skipped": True})
                continue
            res["prefill"].append(run_prefill(torch, m, a, timer, b, t, dev))
        for b in a.decode:
            if time.perf_counter() - run0 > a.budget:
                res["decode"].append({"batch": b, "context": a.context, "skipped": True})
                continue
            res["decode"].append(run_decode(torch, m, a, timer, b, dev))
        if a.profile and time.perf_counter() - run0 <= a.budget:
            res["profile"] = run_profile(torch, m, a, timer, dev)
    print(f"gpt2_torch_ref torch {torch.__version__} {res['device']} ({res['arch']}): model {a.model}, "
          f"{cfg['n_layer']} layers x {cfg['n_embd']} channels, {cfg['n_head']} heads, vocab {cfg['vocab_size']}")
    print("| phase | batch | T / context | ms (median) | ms (min) | tokens/s | reps |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for phase, key in (("prefill", "t"), ("decode", "context")):
        for f in res[phase]:
            if f.get("skipped"):
                print(f"| {phase} | {f['batch']} | {f[key]} | skipped (--budget) | | | |")
            else:
                print(f"| {phase} | {f['batch']} | {f[key]} | {f['ms']:.3f} | {f['ms_min']:.3f} | "
                      f"{f['tokens_per_s']:.1f} | {f['reps']} |")
    for phase, key in (("prefill", "t"), ("decode", "context")):
        for f in res[phase]:
            if not f.get("skipped"):
                print(f"BENCH gpt2 impl=torch model={a.model} phase={phase} batch={f['batch']} {key}={f[key]} "
                      f"ms={f['ms']:.4f} tokens_per_s={f['tokens_per_s']:.1f}")
    if "profile" in res:
        for phase in ("prefill", "decode"):
            p = res["profile"][phase]
            print(f"\n{phase}, time per op (a sync around each op; {p['total_ms']:.3f} ms profiled, "
                  f"{p['unprofiled_ms']:.3f} ms unprofiled):\n| op | calls | ms | share |\n|---|---:|---:|---:|")
            for o in p["ops"]:
                print(f"| {o['op']} | {o['launches']} | {o['ms']:.4f} | {100 * o['share']:.1f} % |")
    rc = 0
    if "check" in res:
        c = res["check"]
        print(f"\nCHECK gpt2 greedy kbd vs torch (float32, same weights): {'PASS' if c['pass'] else 'FAIL'}: "
              f"{c['rows']} rows x {c['steps']} steps, tokens equal: {'yes' if c['tokens_equal'] else 'no'}, "
              f"largest gap of a kbd token below torch's argmax {c['max_token_gap']:.4f}, largest top-logit "
              f"difference {c['max_logit_diff']:.4f} (tolerance {c['tol']})")
        for line in c["failures"]:
            print("  " + line)
        rc = 0 if c["pass"] else 1
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
