#!/usr/bin/env python3
"""torch_bench.py - PyTorch's time for the shapes of kbd's GPU benchmarks, one BENCH line per shape and backend.

    torch_bench.py attention [--dtype bf16,f16] [--seqs LIST] [--hdims LIST] [--tokens T] [--causal both|0|1]
                             [--backends flash,cudnn,efficient] [--reps R] [--smoke]
    torch_bench.py decode    [--dec-seqq LIST] [--dec-seqk LIST] [--dec-batch LIST] [--backends ...]
                             [--gqa native|expand] [--reps R] [--smoke]
    torch_bench.py gemm      [--shapes MxNxK,...] [--types bf16,fp8] [--reps R] [--smoke]
    torch_bench.py --selftest [--bench-dir DIR]

The shapes, their order and the FLOP / byte counts are those of kbd's own benchmarks, so that a torch_bench line
and a kbd line with the same keys describe the same problem (read from the sources; --selftest checks that they
still say so):

  attention (bench/attention_gpu.c, forward): seq_q = seq_k in --seqs (512..16k) x head_dim in --hdims (64, 128,
    256) x causal 0 and 1, bf16, and f16 at head_dim 128 only. batch = tokens / seq (at least 1), tokens = --tokens
    (16k), heads = 2048 / head_dim (hidden size 2048), heads_kv = heads. FLOPs = 4 * batch * heads * seq^2 *
    head_dim, halved when causal. torch's inputs: q, k, v of shape [batch][seq][heads][head_dim] (contiguous),
    handed to scaled_dot_product_attention as the [batch][heads][seq][head_dim] view (FlashAttention's layout, no
    copy), scale 1 / sqrt(head_dim), is_causal = causal (for seq_q = seq_k top-left and bottom-right agree).
  decode (bench/attention_gpu.c, flash-decoding): head_dim 128, bf16, heads_q 32, heads_kv 4 (GQA 8:1), causal 0,
    seq_q in --dec-seqq (1, 16) x seq_k in --dec-seqk (4k..128k) x batch in --dec-batch (1, 4, 16, 64).
    gbs = K and V bytes (2 * batch * heads_kv * seq_k * head_dim * 2) / time; tflops = 4 * batch * heads_q * seq_q
    * seq_k * head_dim / time. --gqa native passes enable_gqa=True (PyTorch 2.5+); --gqa expand repeats K and V to
    32 heads before timing (for an older PyTorch: the kernel then reads 8x the bytes; gbs still counts kv_bytes so
    that the rows line up with kbd's).
  gemm (bench/gemm_gpu.c): bf16 A (M x K, row-major) times B given as N x K row-major (K contiguous: kbd's
    GEMM_BF16_RC, cuBLAS's "TN"), D bf16, via torch.matmul(a, b.t()); e4m3 the same through torch._scaled_mm with
    unit scales. Default shapes: gemm_gpu's list; e4m3 at 4096^3 and 8192^3 by default, at every shape of --shapes.
    FLOPs = 2 M N K.

Timing as kbd's benchmarks: 3 warm-up calls, one timed call picks iters = 20 ms / its time (1..1000), then --reps
(default 7) samples of iters back-to-back calls between two CUDA events; ms is the median time per call (best_ms
the fastest sample; host_bound=1: enqueueing a call took the host >= 90% of that, so the row measures PyTorch's
dispatch - attention_gpu's H rows). For attention every backend in --backends (flash = FLASH_ATTENTION, cudnn =
CUDNN_ATTENTION, efficient = EFFICIENT_ATTENTION of SDPBackend) is forced alone with torch.nn.attention.sdpa_kernel;
a backend that refuses a shape (or is missing from this PyTorch) gives a line with available=0 and its reason,
never a stop.

Output: '#' lines (PyTorch version, device, what the rows mean) and one line per measurement:
  BENCH bench=torch_attention kind=fwd backend=flash dtype=bf16 head_dim=128 causal=1 seq=4096 batch=4 heads=16
        ms=... tflops=... best_ms=... best_tflops=... iters=... reps=... host_bound=0|1 available=1 finite=1
  BENCH bench=torch_attention kind=decode backend=flash dtype=bf16 head_dim=128 heads_q=32 heads_kv=4 seq_q=1
        seq_k=4096 batch=1 ms=... gbs=... tflops=... best_ms=... best_gbs=... kv_bytes=... in_l2=0|1 gqa=native
        iters=... reps=... host_bound=0|1 available=1 finite=1
  BENCH bench=torch_gemm type=bf16|e4m3 shape=MxNxK m=.. n=.. k=.. impl=torch.matmul|torch._scaled_mm ms=...
        tflops=... best_ms=... best_tflops=... iters=... reps=... host_bound=0|1 available=1 finite=1
(one line each; an unavailable row has ms=nan tflops=nan ... available=0 reason="..."; finite=0: the output held a
NaN or Inf). Exit 0; 77 with one line when PyTorch or a CUDA device is missing; 2 on bad arguments; 1 when an
output was not finite. --selftest needs no PyTorch: it checks the shape and FLOP tables against numbers worked out
by hand, against bench/attention_gpu.c and bench/gemm_gpu.c (when found), and the BENCH line writer.
"""

import argparse
import os
import re
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ next to the script in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchline  # noqa: E402  (tools/gpu-check/benchline.py)

SKIP = 77

# ---- the tables: bench/attention_gpu.c and bench/gemm_gpu.c ----------------------------------------------------
FWD_SEQS = (512, 1024, 2048, 4096, 8192, 16384)
FWD_HDIMS = (64, 128, 256)
FWD_TOKENS = 16384
FWD_HIDDEN = 2048  # heads = FWD_HIDDEN / head_dim
DEC_HEAD_DIM, DEC_HEADS_Q, DEC_HEADS_KV = 128, 32, 4
DEC_SEQQ = (1, 16)
DEC_SEQK = (4096, 8192, 16384, 32768, 65536, 131072)
DEC_BATCH = (1, 4, 16, 64)
GEMM_SHAPES = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 16384),
               (16, 4096, 4096), (32, 4096, 4096), (64, 8192, 8192), (128, 16384, 16384), (8192, 4096, 14336))
GEMM_FP8_SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192))
BACKENDS = ("flash", "cudnn", "efficient")
SDPA_BACKEND_ENUM = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION"}


def fwd_cases(seqs, hdims, tokens, causals, dtypes, fixed_heads=0):
    """The forward rows in attention_gpu's order: dtype (bf16, then f16 at head_dim 128), head_dim, causal, seq."""
    cases = []
    for dtype in ("bf16", "f16"):
        if dtype not in dtypes:
            continue
        for d in hdims:
            if dtype == "f16" and d != 128:
                continue  # attention_gpu: f16 at head_dim 128 only (the dtype changes no tile shape)
            for causal in causals:
                for seq in seqs:
                    batch = tokens // seq if tokens // seq > 0 else 1
                    heads = fixed_heads if fixed_heads else FWD_HIDDEN // d
                    flops = 4 * batch * heads * seq * seq * d // (2 if causal else 1)
                    cases.append({"dtype": dtype, "head_dim": d, "causal": causal, "seq": seq, "batch": batch,
                                  "heads": heads, "flops": flops})
    return cases


def decode_cases(seqqs, seqks, batches):
    """The decode rows in attention_gpu's order: seq_q, seq_k, batch."""
    d, hq, hkv = DEC_HEAD_DIM, DEC_HEADS_Q, DEC_HEADS_KV
    cases = []
    for sq in seqqs:
        for sk in seqks:
            for b in batches:
                cases.append({"dtype": "bf16", "head_dim": d, "heads_q": hq, "heads_kv": hkv, "seq_q": sq,
                              "seq_k": sk, "batch": b, "kv_bytes": 2 * b * hkv * sk * d * 2,
                              "flops": 4 * b * hq * sq * sk * d})
    return cases


def gemm_cases(shapes, types, fp8_shapes):
    """gemm_gpu's rows: bf16 at every shape, then e4m3 at fp8_shapes."""
    cases = []
    if "bf16" in types:
        cases += [{"type": "bf16", "m": m, "n": n, "k": k, "flops": 2 * m * n * k} for m, n, k in shapes]
    if "fp8" in types:
        cases += [{"type": "e4m3", "m": m, "n": n, "k": k, "flops": 2 * m * n * k} for m, n, k in fp8_shapes]
    return cases


# ---- BENCH lines (the same code for the measurement and the self-test) -----------------------------------------
def _timing_fields(t, work_key, work, scale):
    """ms, <work_key>, best_ms, best_<work_key> from a timing (median_s, best_s, iters, reps); work / s * scale."""
    if t is None:
        return [("ms", "nan"), (work_key, "nan")]
    med, best = t["median_s"], t["best_s"]
    spec = ".1f" if work_key == "gbs" else ".2f"
    return [("ms", benchline.num(med * 1e3)), (work_key, benchline.num(work / med * scale, spec)),
            ("best_ms", benchline.num(best * 1e3)), ("best_" + work_key, benchline.num(work / best * scale, spec))]


def _tail(t, reason, finite):
    if t is None:
        return [("available", 0), ("reason", reason or "unknown")]
    # host_bound as attention_gpu's: the host took >= 90% of the GPU time per call to enqueue it, so the row
    # measures PyTorch's dispatch, not the kernel
    hb = 1 if t.get("host_s", 0.0) >= 0.9 * t["median_s"] else 0
    return [("iters", t["iters"]), ("reps", t["reps"]), ("host_bound", hb), ("available", 1),
            ("finite", 1 if finite else 0)]


def fwd_line(c, backend, t, reason=None, finite=True):
    f = [("kind", "fwd"), ("backend", backend), ("dtype", c["dtype"]), ("head_dim", c["head_dim"]),
         ("causal", c["causal"]), ("seq", c["seq"]), ("batch", c["batch"]), ("heads", c["heads"])]
    f += _timing_fields(t, "tflops", c["flops"], 1e-12)
    return benchline.make("torch_attention", f + _tail(t, reason, finite))


def decode_line(c, backend, t, gqa, l2_bytes, reason=None, finite=True):
    f = [("kind", "decode"), ("backend", backend), ("dtype", c["dtype"]), ("head_dim", c["head_dim"]),
         ("heads_q", c["heads_q"]), ("heads_kv", c["heads_kv"]), ("seq_q", c["seq_q"]), ("seq_k", c["seq_k"]),
         ("batch", c["batch"])]
    f += _timing_fields(t, "gbs", c["kv_bytes"], 1e-9)
    if t is not None:  # tflops after gbs, as in the usage above
        f.insert(len(f) - 2, ("tflops", benchline.num(c["flops"] / t["median_s"] * 1e-12, ".2f")))
    f += [("kv_bytes", c["kv_bytes"]), ("in_l2", 1 if 0 < c["kv_bytes"] < l2_bytes else 0), ("gqa", gqa)]
    return benchline.make("torch_attention", f + _tail(t, reason, finite))


def gemm_line(c, t, reason=None, finite=True):
    f = [("type", c["type"]), ("shape", "%dx%dx%d" % (c["m"], c["n"], c["k"])), ("m", c["m"]), ("n", c["n"]),
         ("k", c["k"]), ("impl", "torch.matmul" if c["type"] == "bf16" else "torch._scaled_mm")]
    f += _timing_fields(t, "tflops", c["flops"], 1e-12)
    return benchline.make("torch_gemm", f + _tail(t, reason, finite))


# ---- arguments -------------------------------------------------------------------------------------------------
def parse_list(text):
    """'a,b,c' of positive integers with k/m/g suffixes (powers of two) and 2^k, as bench_parse_list in bench_util.h."""
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        m = re.fullmatch(r"2\^(\d+)", tok)
        if m:
            v = 1 << int(m.group(1))
        else:
            m = re.fullmatch(r"(\d+)([kKmMgG]?)", tok)
            if not m:
                raise argparse.ArgumentTypeError("'%s' is not a positive integer (k/m/g suffixes, 2^k)" % tok)
            v = int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2).lower()]
        if v <= 0:
            raise argparse.ArgumentTypeError("'%s' is not positive" % tok)
        out.append(v)
    return tuple(out)


def parse_shapes(text):
    shapes = []
    for tok in text.split(","):
        m = re.fullmatch(r"\s*(\d+)x(\d+)x(\d+)\s*", tok)
        if not m or min(int(g) for g in m.groups()) < 1:
            raise argparse.ArgumentTypeError("shape '%s' is not MxNxK" % tok)
        shapes.append(tuple(int(g) for g in m.groups()))
    return tuple(shapes)


def parse_names(allowed):
    def parse(text):
        names = tuple(t.strip() for t in text.split(",") if t.strip())
        bad = [n for n in names if n not in allowed]
        if bad or not names:
            raise argparse.ArgumentTypeError("'%s': choose from %s" % (text, ",".join(allowed)))
        return names
    return parse


def build_parser():
    p = argparse.ArgumentParser(prog="torch_bench.py", description="PyTorch on kbd's benchmark shapes",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--selftest", action="store_true", help="check the tables and the line writer (no PyTorch needed)")
    p.add_argument("--bench-dir", help="kbd's bench/ directory for --selftest (default: ../../bench from here)")
    sub = p.add_subparsers(dest="what")
    reps = {"type": int, "default": 7, "help": "timed samples per row (default 7)"}
    a = sub.add_parser("attention", help="forward attention, as attention_gpu's forward rows")
    a.add_argument("--dtype", type=parse_names(("bf16", "f16")), default=("bf16", "f16"),
                   help="bf16,f16 (default both; f16 at head_dim 128 only, as attention_gpu)")
    a.add_argument("--seqs", type=parse_list, default=FWD_SEQS)
    a.add_argument("--hdims", type=parse_list, default=FWD_HDIMS)
    a.add_argument("--tokens", type=parse_list, default=(FWD_TOKENS,), help="total tokens (default 16k)")
    a.add_argument("--causal", choices=("both", "0", "1"), default="both")
    a.add_argument("--backends", type=parse_names(BACKENDS), default=BACKENDS)
    a.add_argument("--reps", **reps)
    a.add_argument("--smoke", action="store_true", help="attention_gpu --smoke's shapes (seq 256, 2 heads), 1 rep")
    d = sub.add_parser("decode", help="flash-decoding, as attention_gpu's decode rows")
    d.add_argument("--dec-seqq", type=parse_list, default=DEC_SEQQ)
    d.add_argument("--dec-seqk", type=parse_list, default=DEC_SEQK)
    d.add_argument("--dec-batch", type=parse_list, default=DEC_BATCH)
    d.add_argument("--backends", type=parse_names(BACKENDS), default=BACKENDS)
    d.add_argument("--gqa", choices=("native", "expand"), default="native")
    d.add_argument("--reps", **reps)
    d.add_argument("--smoke", action="store_true", help="attention_gpu --smoke's decode shapes, 1 rep")
    g = sub.add_parser("gemm", help="GEMM, as gemm_gpu's rows")
    g.add_argument("--shapes", type=parse_shapes, default=None, help="MxNxK,... (default gemm_gpu's list)")
    g.add_argument("--types", type=parse_names(("bf16", "fp8")), default=("bf16", "fp8"))
    g.add_argument("--reps", **reps)
    g.add_argument("--smoke", action="store_true", help="one 512^3 product per type, 1 rep")
    return p


def cases_for(args):
    """The rows a measurement command runs (the self-test calls this too)."""
    if args.what == "attention":
        seqs, tokens, heads = args.seqs, args.tokens[0], 0
        if args.smoke:
            seqs, tokens, heads = (256,), 256, 2  # attention_gpu --smoke: seq 256, batch 1, heads 2
        causals = (0, 1) if args.causal == "both" else (int(args.causal),)
        return fwd_cases(seqs, args.hdims, tokens, causals, args.dtype, heads)
    if args.what == "decode":
        if args.smoke:  # attention_gpu --smoke: seq_q 1 and 16, seq_k 4096, batch 2
            return decode_cases((1, 16), (4096,), (2,))
        return decode_cases(args.dec_seqq, args.dec_seqk, args.dec_batch)
    shapes, fp8 = GEMM_SHAPES, GEMM_FP8_SHAPES
    if args.shapes:
        shapes = fp8 = args.shapes  # gemm_gpu: with --shapes, fp8 runs every given shape too
    if args.smoke:
        shapes = fp8 = ((512, 512, 512),)
    return gemm_cases(shapes, args.types, fp8)


# ---- the self-test -----------------------------------------------------------------------------------------------
def _c_ints(text):
    return tuple(int(x) for x in re.findall(r"\d+", text))


def check_sources(bench_dir, fails):
    """Are the tables still those of bench/attention_gpu.c and bench/gemm_gpu.c? (whitespace-insensitive)"""
    att, gem = os.path.join(bench_dir, "attention_gpu.c"), os.path.join(bench_dir, "gemm_gpu.c")
    if not (os.path.isfile(att) and os.path.isfile(gem)):
        print("selftest: %s has no attention_gpu.c / gemm_gpu.c: source cross-check skipped" % bench_dir)
        return
    src = re.sub(r"\s+", " ", open(att, encoding="utf-8", errors="replace").read())

    def want(cond, what):
        if not cond:
            fails.append("bench source changed, re-derive torch_bench.py's table: " + what)

    arrays = dict((m.group(1), _c_ints(m.group(2)))
                  for m in re.finditer(r"\b(seqs|hdims|dseqq|dseqk|dbatch)\[MAX_LIST\] = \{([^}]*)\}", src))
    want(arrays.get("seqs") == FWD_SEQS, "attention_gpu.c seqs %s" % (arrays.get("seqs"),))
    want(arrays.get("hdims") == FWD_HDIMS, "attention_gpu.c hdims %s" % (arrays.get("hdims"),))
    want(arrays.get("dseqq") == DEC_SEQQ, "attention_gpu.c dseqq %s" % (arrays.get("dseqq"),))
    want(arrays.get("dseqk") == DEC_SEQK, "attention_gpu.c dseqk %s" % (arrays.get("dseqk"),))
    want(arrays.get("dbatch") == DEC_BATCH, "attention_gpu.c dbatch %s" % (arrays.get("dbatch"),))
    m = re.search(r"\btokens = (\d+);", src)
    want(m and int(m.group(1)) == FWD_TOKENS, "attention_gpu.c tokens")
    for snippet in ("batch = tokens / seq > 0 ? tokens / seq : 1",
                    "heads = fixed_heads ? fixed_heads : %d / d" % FWD_HIDDEN,
                    "fl = 4.0 * batch * heads * (double)seq * (double)seq * d / (causal ? 2.0 : 1.0)",
                    "if (f16 && d != 128) continue",
                    "for (int causal = 0; causal <= 1; ++causal) for (int si = 0; si < nseqs; ++si)",
                    "const int d = %d, hq = %d, hkv = %d;" % (DEC_HEAD_DIM, DEC_HEADS_Q, DEC_HEADS_KV),
                    "kv = 2.0 * (double)a.batch * hkv * (double)a.seq_k * d * 2.0",
                    "a.heads_q = a.heads_kv = heads"):
        want(snippet in src, "attention_gpu.c no longer says '%s'" % snippet)
    src = re.sub(r"\s+", " ", open(gem, encoding="utf-8", errors="replace").read())
    m = re.search(r"long long shapes\[MAX_SHAPES\]\[3\] = \{(.*?)\};", src)
    got = _c_ints(m.group(1)) if m else ()
    want(got == tuple(x for s in GEMM_SHAPES for x in s), "gemm_gpu.c shapes %s" % (got,))
    m = re.search(r"long long fp8_shapes\[MAX_SHAPES\]\[3\] = \{(.*?)\};", src)
    got = _c_ints(m.group(1)) if m else ()
    want(got == tuple(x for s in GEMM_FP8_SHAPES for x in s), "gemm_gpu.c fp8_shapes %s" % (got,))
    want("fl = 2.0 * (double)m * (double)n * (double)k" in src, "gemm_gpu.c's FLOPs 2 M N K")
    print("selftest: tables match %s and %s" % (att, gem))


def selftest(bench_dir):
    fails = []

    def eq(got, want, what):
        if got != want:
            fails.append("%s: got %r, want %r" % (what, got, want))

    parser = build_parser()
    # forward, by hand: tokens 16384. seq 4096, d 128: batch 16384/4096 = 4, heads 2048/128 = 16,
    # 4 * 4 * 16 * 4096^2 * 128 = 2^2 * 2^2 * 2^4 * 2^24 * 2^7 = 2^39 = 549755813888; causal 2^38.
    # seq 512, d 64: batch 32, heads 32, 4 * 32 * 32 * 512^2 * 64 = 2^(2+5+5+18+6) = 2^36 = 68719476736.
    # seq 16384, d 256: batch 1, heads 8, 4 * 1 * 8 * 16384^2 * 256 = 2^(2+3+28+8) = 2^41 = 2199023255552.
    fwd = cases_for(parser.parse_args(["attention"]))
    byk = dict(((c["dtype"], c["head_dim"], c["causal"], c["seq"]), c) for c in fwd)
    eq(len(fwd), 6 * 3 * 2 + 6 * 2, "forward rows (bf16 6 seqs x 3 head_dims x 2, f16 at 128: 6 x 2)")
    eq(len(byk), len(fwd), "forward rows are distinct")
    eq(fwd[0], {"dtype": "bf16", "head_dim": 64, "causal": 0, "seq": 512, "batch": 32, "heads": 32,
                "flops": 68719476736}, "first forward row")
    c = byk[("bf16", 128, 0, 4096)]
    eq((c["batch"], c["heads"], c["flops"]), (4, 16, 549755813888), "bf16 d128 seq4096")
    eq(byk[("bf16", 128, 1, 4096)]["flops"], 274877906944, "causal halves the FLOPs")
    c = byk[("bf16", 256, 1, 16384)]
    eq((c["batch"], c["heads"], c["flops"]), (1, 8, 1099511627776), "bf16 d256 causal seq16k")
    eq(sorted(set(c["head_dim"] for c in fwd if c["dtype"] == "f16")), [128], "f16 rows at head_dim 128 only")
    eq([c["flops"] for c in fwd_cases((32768,), (128,), 16384, (0,), ("bf16",))],
       [4 * 1 * 16 * 32768 * 32768 * 128], "seq > tokens: batch 1")
    sm = cases_for(parser.parse_args(["attention", "--smoke", "--dtype", "bf16"]))
    eq([(c["seq"], c["batch"], c["heads"]) for c in sm], [(256, 1, 2)] * 6, "attention --smoke rows")
    eq(len(cases_for(parser.parse_args(["attention", "--causal", "1", "--dtype", "bf16", "--seqs", "1k,2^11"]))),
       6, "--causal 1 --seqs 1k,2^11: 2 seqs x 3 head_dims")
    # decode, by hand: seq_k 4096, batch 1: K + V = 2 * 1 * 4 * 4096 * 128 * 2 = 8388608 bytes (8 MiB);
    # seq_k 128k, batch 64: 2 * 64 * 4 * 131072 * 128 * 2 = 2^(1+6+2+17+7+1) = 2^34 (attention_gpu's "16 GiB").
    # FLOPs of seq_q 16, seq_k 4096, batch 1: 4 * 1 * 32 * 16 * 4096 * 128 = 2^(2+5+4+12+7) = 2^30.
    dec = cases_for(parser.parse_args(["decode"]))
    eq(len(dec), 2 * 6 * 4, "decode rows")
    eq((dec[0]["seq_q"], dec[0]["seq_k"], dec[0]["batch"], dec[0]["kv_bytes"]), (1, 4096, 1, 8388608), "first decode")
    eq((dec[-1]["seq_q"], dec[-1]["seq_k"], dec[-1]["batch"], dec[-1]["kv_bytes"]), (16, 131072, 64, 2 ** 34),
       "last decode")
    eq(dec[2 * 6 * 4 // 2]["flops"], 2 ** 30, "decode FLOPs seq_q 16 seq_k 4k batch 1")
    eq([(c["seq_q"], c["seq_k"], c["batch"]) for c in dec[:5]],
       [(1, 4096, 1), (1, 4096, 4), (1, 4096, 16), (1, 4096, 64), (1, 8192, 1)], "decode order: seq_q, seq_k, batch")
    # gemm, by hand: 8192^3: 2 * 2^39 = 2^40 = 1099511627776; 16 x 4096 x 4096: 2 * 2^4 * 2^24 = 2^29.
    gem = cases_for(parser.parse_args(["gemm"]))
    eq([c["type"] for c in gem], ["bf16"] * 10 + ["e4m3"] * 2, "gemm rows")
    eq(dict(((c["type"], c["m"], c["n"], c["k"]), c["flops"]) for c in gem)[("bf16", 8192, 8192, 8192)],
       1099511627776, "gemm 8192^3 FLOPs")
    eq(gem[5]["flops"], 536870912, "gemm 16x4096x4096 FLOPs")
    g2 = cases_for(parser.parse_args(["gemm", "--shapes", "8192x8192x8192,16x4096x4096"]))
    eq([(c["type"], c["m"]) for c in g2], [("bf16", 8192), ("bf16", 16), ("e4m3", 8192), ("e4m3", 16)],
       "--shapes: fp8 at every given shape")
    eq(parse_list("1k,2^11,4096,1m"), (1024, 2048, 4096, 1 << 20), "list parser")
    # the lines the measurements print, from the same functions: 0.5 ms for 2^38 FLOPs = 549.76 TFLOP/s
    t = {"median_s": 5e-4, "best_s": 4e-4, "iters": 40, "reps": 7}
    eq(fwd_line(byk[("bf16", 128, 1, 4096)], "flash", t),
       "BENCH bench=torch_attention kind=fwd backend=flash dtype=bf16 head_dim=128 causal=1 seq=4096 batch=4 "
       "heads=16 ms=0.5 tflops=549.76 best_ms=0.4 best_tflops=687.19 iters=40 reps=7 host_bound=0 available=1 finite=1",
       "forward line")
    eq(fwd_line(byk[("bf16", 64, 0, 512)], "cudnn", None, 'No available kernel.\n "Aborting"'),
       "BENCH bench=torch_attention kind=fwd backend=cudnn dtype=bf16 head_dim=64 causal=0 seq=512 batch=32 "
       "heads=32 ms=nan tflops=nan available=0 reason=\"No available kernel.  'Aborting'\"", "unavailable line")
    # decode: 8 MiB in 10 us = 838.9 GB/s; 4 * 32 * 1 * 4096 * 128 = 2^26 FLOPs (seq_q 1) in 10 us = 6.71 TFLOP/s
    t = {"median_s": 1e-5, "best_s": 8e-6, "iters": 1000, "reps": 7}
    eq(decode_line(dec[0], "flash", t, "native", 50 << 20),
       "BENCH bench=torch_attention kind=decode backend=flash dtype=bf16 head_dim=128 heads_q=32 heads_kv=4 "
       "seq_q=1 seq_k=4096 batch=1 ms=0.01 gbs=838.9 tflops=6.71 best_ms=0.008 best_gbs=1048.6 kv_bytes=8388608 "
       "in_l2=1 gqa=native iters=1000 reps=7 host_bound=0 available=1 finite=1", "decode line")
    t = {"median_s": 2e-3, "best_s": 1.5e-3, "iters": 10, "reps": 7, "host_s": 1.9e-3}
    eq(gemm_line(gem[3], t),
       "BENCH bench=torch_gemm type=bf16 shape=8192x8192x8192 m=8192 n=8192 k=8192 impl=torch.matmul ms=2 "
       "tflops=549.76 best_ms=1.5 best_tflops=733.01 iters=10 reps=7 host_bound=1 available=1 finite=1", "gemm line")
    # the writer: quoting and the round trip through the reader
    line = benchline.make("torch_attention", [("kind", "fwd"), ("device", "NVIDIA H100 80GB HBM3"), ("empty", ""),
                                              ("x", 1.5), ("flag", True), ("q", 'a "b"')])
    eq(line, 'BENCH bench=torch_attention kind=fwd device="NVIDIA H100 80GB HBM3" empty="" x=1.5 flag=1 '
       "q=\"a 'b'\"", "quoting")
    eq(benchline.parse(line), ("torch_attention", [("kind", "fwd"), ("device", "NVIDIA H100 80GB HBM3"),
                                                   ("empty", ""), ("x", "1.5"), ("flag", "1"), ("q", "a 'b'")]),
       "round trip")
    for bad in ("BENCH kind=fwd", "BENCH bench=x k=\"open", "BENCH bench=x =1"):
        try:
            benchline.parse(bad)
            fails.append("parse accepted %r" % bad)
        except ValueError:
            pass
    try:
        benchline.make("x", [("a b", 1)])
        fails.append("make accepted the key 'a b'")
    except ValueError:
        pass
    check_sources(bench_dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"), fails)
    for f in fails:
        print("selftest FAIL: " + f)
    print("selftest: %s (%d failure%s)" % ("FAIL" if fails else "ok", len(fails), "" if len(fails) == 1 else "s"))
    return 1 if fails else 0


# ---- measuring (PyTorch) -----------------------------------------------------------------------------------------
def time_calls(torch, fn, reps):
    """attention_gpu's time_calls: 3 warm-ups, iters = 20 ms / one call (1..1000), reps samples between events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    ms = e0.elapsed_time(e1)
    iters = int(20.0 / ms) if ms > 0 else 1000
    iters = max(1, min(1000, iters))
    samples, host = [], []
    for _ in range(max(1, min(64, reps))):
        e0.record()
        h0 = time.perf_counter()
        for _ in range(iters):
            fn()
        host.append((time.perf_counter() - h0) / iters)
        e1.record()
        e1.synchronize()
        samples.append(1e-3 * e0.elapsed_time(e1) / iters)
    return {"median_s": statistics.median(samples), "best_s": min(samples), "iters": iters, "reps": len(samples),
            "host_s": statistics.median(host)}


def _reason(exc, caught):
    """One line: the warnings PyTorch gave for refusing a kernel (they carry the why), then the exception."""
    parts = [str(w.message) for w in caught if str(w.message).strip()]
    parts.append("%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else ""))
    text = " | ".join(p.strip().replace("\n", " ") for p in parts)
    return text[:240]


def measure(torch, fn, reps, ctx_factory=None):
    """(timing, reason, finite): timing None and a reason when a call raises (a backend that refuses the shape, a
    feature this PyTorch lacks, out of memory) - reported as unavailable, never a stop."""
    import contextlib
    import warnings
    ctx = ctx_factory() if ctx_factory else contextlib.nullcontext()
    with ctx:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = fn()
                torch.cuda.synchronize()
                finite = bool(torch.isfinite(out).all().item())
                del out
                return time_calls(torch, fn, reps), None, finite
            except Exception as e:
                torch.cuda.empty_cache()
                return None, _reason(e, caught), True


def sdpa_context(torch, backend):
    """A factory of the context that forces one SDPA backend, or a string saying why there is none."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        return "torch.nn.attention.sdpa_kernel is missing from this PyTorch (%s)" % e
    enum = getattr(SDPBackend, SDPA_BACKEND_ENUM[backend], None)
    if enum is None:
        return "SDPBackend.%s is missing from this PyTorch" % SDPA_BACKEND_ENUM[backend]
    return lambda: sdpa_kernel(enum)


def run(args, torch):
    fails = 0
    dev = torch.cuda.current_device()
    prop = torch.cuda.get_device_properties(dev)
    l2 = int(getattr(prop, "L2_cache_size", 0) or 0)
    print("# torch_bench %s: PyTorch %s (CUDA %s, cuDNN %s) on %s (sm_%d%d, %d SMs, L2 %d MiB)"
          % (args.what, torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), prop.name, prop.major,
             prop.minor, prop.multi_processor_count, l2 >> 20))
    cases = cases_for(args)
    reps = 1 if args.smoke else args.reps
    F = torch.nn.functional
    if args.what == "attention":
        print("# forward: batch = tokens / seq, heads = 2048 / head_dim, FLOPs = 4 b h s^2 d (/2 causal), as "
              "bench/attention_gpu.c; scaled_dot_product_attention on [b][s][h][d] tensors seen as [b][h][s][d]")
        ctxs = dict((b, sdpa_context(torch, b)) for b in args.backends)
        for c in cases:
            dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
            shape = (c["batch"], c["seq"], c["heads"], c["head_dim"])
            q, k, v = [torch.empty(shape, device="cuda", dtype=dt).uniform_(-1, 1).transpose(1, 2) for _ in range(3)]
            causal = bool(c["causal"])
            for b in args.backends:
                if isinstance(ctxs[b], str):
                    print(fwd_line(c, b, None, ctxs[b]))
                    continue
                t, why, finite = measure(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                         reps, ctxs[b])
                fails += not finite
                print(fwd_line(c, b, t, why, finite), flush=True)
            del q, k, v
            torch.cuda.empty_cache()
    elif args.what == "decode":
        print("# decode: bf16, head_dim 128, heads 32/4 (GQA 8:1), as bench/attention_gpu.c; gbs = K+V bytes / time; "
              "in_l2 = K+V fit in the L2 (back-to-back calls may be served from it); gqa=%s" % args.gqa)
        ctxs = dict((b, sdpa_context(torch, b)) for b in args.backends)
        for c in cases:
            bq, hq, hkv, d = c["batch"], c["heads_q"], c["heads_kv"], c["head_dim"]
            try:
                q = torch.empty((bq, c["seq_q"], hq, d), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
                k, v = [torch.empty((bq, c["seq_k"], hkv, d), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
                        for _ in range(2)]
                q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
                if args.gqa == "expand":
                    k, v = k.repeat_interleave(hq // hkv, dim=1), v.repeat_interleave(hq // hkv, dim=1)
            except Exception as e:  # out of memory for the largest shapes (expand: 8x K and V)
                q = k = v = None
                torch.cuda.empty_cache()
                for b in args.backends:
                    print(decode_line(c, b, None, args.gqa, l2, "inputs: %s: %s" % (type(e).__name__, e)))
                continue
            kw = {"enable_gqa": True} if args.gqa == "native" else {}
            for b in args.backends:
                if isinstance(ctxs[b], str):
                    print(decode_line(c, b, None, args.gqa, l2, ctxs[b]))
                    continue
                t, why, finite = measure(torch, lambda: F.scaled_dot_product_attention(q, k, v, **kw), reps, ctxs[b])
                fails += not finite
                print(decode_line(c, b, t, args.gqa, l2, why, finite), flush=True)
            del q, k, v
            torch.cuda.empty_cache()
    else:
        print("# gemm: A M x K row-major, B N x K row-major (kbd's GEMM_BF16_RC / cuBLAS TN), D bf16; FLOPs = 2 M N K, "
              "as bench/gemm_gpu.c; allow_bf16_reduced_precision_reduction=%s"
              % torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
        for c in cases:
            m, n, k = c["m"], c["n"], c["k"]
            try:
                a = torch.empty((m, k), device="cuda", dtype=torch.bfloat16).uniform_(-0.5, 0.5)
                bm = torch.empty((n, k), device="cuda", dtype=torch.bfloat16).uniform_(-0.5, 0.5)
                if c["type"] == "bf16":
                    def fn():
                        return torch.matmul(a, bm.t())
                else:
                    a8, b8 = a.to(torch.float8_e4m3fn), bm.to(torch.float8_e4m3fn)
                    one = torch.ones((), device="cuda", dtype=torch.float32)

                    def fn():
                        r = torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                        return r[0] if isinstance(r, tuple) else r  # PyTorch < 2.5 returned (out, amax)
            except Exception as e:
                print(gemm_line(c, None, "inputs: %s: %s" % (type(e).__name__, e)))
                torch.cuda.empty_cache()
                continue
            t, why, finite = measure(torch, fn, reps)
            fails += not finite
            print(gemm_line(c, t, why, finite), flush=True)
            del a, bm
            torch.cuda.empty_cache()
    return 1 if fails else 0


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.selftest:
        return selftest(args.bench_dir)
    if not args.what:
        parser.print_usage(sys.stderr)
        print("torch_bench.py: give attention, decode, gemm or --selftest", file=sys.stderr)
        return 2
    if getattr(args, "reps", 1) < 1:
        print("torch_bench.py: --reps must be at least 1", file=sys.stderr)
        return 2
    try:
        import torch
    except Exception as e:
        print("torch_bench: PyTorch is not importable (%s: %s); skipping" % (type(e).__name__, e))
        return SKIP
    if not torch.cuda.is_available():
        print("torch_bench: PyTorch %s sees no CUDA device; skipping" % torch.__version__)
        return SKIP
    return run(args, torch)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
