#!/usr/bin/env python3
"""torch_check.py - a second opinion from PyTorch on kbd's GEMM and attention examples.

    torch_check.py gemm DIR [--device D]    recompute a saved GEMM with torch.matmul on the GPU and compare
    torch_check.py attention DIR [--device D]
                                            recompute a saved attention with scaled_dot_product_attention
                                            (--device: a torch device, default cuda; cpu runs the same path on
                                            the CPU, which tests this script where there is no GPU)
    torch_check.py selftest DIR gemm|attention
                                            the same loader, tolerance and comparison against a pure-Python
                                            double reference (no torch, no GPU: small shapes only)

DIR is what an example program wrote with --save DIR (examples/gemm/main.c, examples/attention/main.c; both the
_cpu and the GPU programs), e.g.

    mkdir -p /tmp/g && build/examples/gemm_sm90a 512 384 256 --b-col --bias --act gelu --save /tmp/g
    python3 tools/gpu-check/torch_check.py gemm /tmp/g

Output: one line
    torch_check <kind> <shape summary>: max_abs_err=E max_rel_err=R worst_index=[i,...] tol=T OK|FAIL
max_abs_err is max |kbd - reference| over the output, max_rel_err that divided by max |reference|, worst_index the
element whose error is the largest fraction of its own tolerance and tol that tolerance. Attention adds lse_*
fields for the log-sum-exp output. Exit status: 0 OK, 1 FAIL, 2 bad arguments or a DIR that does not hold what its
manifest says, 77 torch or a CUDA device unavailable (the line says why).

The save format (written by the examples' save_tensor / save_end; read by load() below, the one reader for both
paths). DIR/manifest.txt: "key=value" lines, "#" comments. Parameters:
  gemm:       program=gemm m n k alpha beta scale_a scale_b bias=0|1 act=none|relu|gelu
              D = act(alpha * scale_a * scale_b * (A B) + beta * C + bias[column]); C is saved when beta != 0,
              bias when bias=1; the kernel folds alpha * scale_a * scale_b into one f32 (fp8 scales)
  attention:  program=attention dtype=bf16|f16 batch heads_q heads_kv seq_q seq_k head_dim causal=0|1
              causal_align=bottom_right scale (the one the kernel used) splits decode
              O = softmax(scale * Q K^T + mask) V; q head h reads kv head h / (heads_q / heads_kv) (GQA); causal:
              query i sees keys j <= i + seq_k - seq_q; a row that sees no key has O = 0 and lse = -inf;
              lse = ln sum_j exp(scale * q.k_j) over the visible keys (f32). splits and decode (flash-decoding)
              change the schedule, not the math.
Per tensor KEY (gemm: a b c bias d; attention: q k v o lse): KEY.file (in DIR), KEY.dtype (bf16 f16 f32 e4m3),
KEY.layout (row, col, contiguous: informative), KEY.dims (names of the logical indices), KEY.shape, KEY.strides
(elements per step of each logical index: a column-major M x K A has strides 1,lda) and KEY.elems (elements in
the file, padding included). The file is raw little-endian elements; e4m3 is OCP E4M3 (no inf, S.1111.111 NaN).

Tolerances. Each output element passes when |kbd - ref| <= tol. tol is kbd's own error bound, the one its example
checks against (examples/*/main.c, docs/gemm.md "Tolerance"), plus the reference's own: zero for the double
reference of the selftest, the same kind of bound for PyTorch, which rounds like kbd does. Nothing is tuned.
  GEMM:  tol = L * ((K + 8) 2^-24 bound (1 + r_acc) + u_mm |alpha' dot|) + u_D |ref| (1 + r_out) + 1e-6
     bound = |alpha'| sum_q |a_iq b_qj| + |beta c_ij| + |bias_j|, alpha' = alpha scale_a scale_b.
     kbd: the MMA sums exact products (bf16 x bf16 and e4m3 x e4m3 are exact in f32) in f32 in any order:
     <= (K + 2) 2^-24 sum|a b|, plus a few f32 epilogue roundings (the + 8), plus D's rounding u_D |ref|
     (u_D = 2^-8 bf16, 2^-22 f32): examples/gemm/main.c's tolerance. L = 1 (none, relu: 1-Lipschitz), 1.13 for
     gelu (max |gelu'| = 1.129 at x = sqrt 2), which carries an error before the activation through it.
     PyTorch: cuBLAS sums in f32 too (r_acc = 1; reduced-precision split-K reductions are switched off), and
     torch.matmul returns the product rounded to the input type before the epilogue: u_mm = 2^-8 bf16, 2^-11 f16;
     fp8 operands are decoded to f32 on the device and multiplied in f32 with TF32 off, u_mm = 2^-24. torch's f32
     epilogue ends with the same rounding to D's type (r_out = 1). Double reference: r_acc = r_out = u_mm = 0.
  Attention O: tol = (1 + r_fused) (2 u max|V| + 1e-4), u = 2^-8 bf16, 2^-11 f16.
     kbd: P is rounded to the input type for the P V MMA while the row sum uses the unrounded values (<= u max|V|),
     O is rounded once (<= u |O| <= u max|V|), plus 1e-4 for f32 sums and the exp2 approximation:
     examples/attention/main.c's 6u + 1e-4, which is this with its inputs' max|V| = 3. PyTorch's fused SDPA kernels
     (flash, memory-efficient, cuDNN) round P and O the same way (r_fused = 1); its math path computes in f32 and
     rounds O once, inside that. Double reference: r_fused = 0.
  Attention lse: tol = 1e-4 + 1e-5 |lse| (examples/attention/main.c's); both references compute it in double
     (PyTorch: float64 matmul and logsumexp on the GPU), so only kbd's error counts. -inf must match -inf.

The PyTorch path: inputs are decoded on the device from the saved bytes (torch.frombuffer, torch.as_strided with
the manifest's strides), so the GPU recomputes from exactly what the kernel read. GEMM: torch.matmul (bf16), alpha,
beta, bias and act (relu, erf gelu) applied in f32 as the kbd epilogue does. Attention:
torch.nn.functional.scaled_dot_product_attention in the input type with the saved scale; GQA by repeat_interleave of
the kv heads (no enable_gqa, which only recent torch has); causal with seq_q == seq_k as is_causal=True (top-left
and bottom-right alignment agree), otherwise an explicit boolean mask j <= i + seq_k - seq_q, since is_causal is
top-left aligned; rows that see no key are given every key (so torch computes no NaN) and zeroed after, kbd's
convention.
"""

import argparse
import math
import operator
import os
import re
import struct
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77

# bytes per element of the saved dtypes
ITEMSIZE = {"bf16": 2, "f16": 2, "f32": 4, "e4m3": 1}
# unit roundoff of a type: half the distance from 1 to the next value
UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24}
# the selftest's pure-Python reference is O(work); past this it would take minutes
SELFTEST_MAX_WORK = 5e7


class SaveError(Exception):
    """A save directory that does not hold what its manifest says, or a wrong argument."""


# ---- the save format: one reader for both paths ----------------------------------------------------------------


def e4m3_value(code):
    """The value of one OCP E4M3 byte: bias 7, no infinities, S.1111.111 the NaN, max 448."""
    sign = -1.0 if code & 0x80 else 1.0
    exp, man = (code >> 3) & 0xF, code & 0x7
    if exp == 0xF and man == 0x7:
        return math.nan
    if exp == 0:
        return sign * man * 2.0**-9  # subnormal: (man / 8) 2^(1 - 7)
    return sign * (8 + man) * 2.0 ** (exp - 10)  # (1 + man / 8) 2^(exp - 7)


E4M3_TABLE = [e4m3_value(c) for c in range(256)]


def decode(raw, dtype):
    """The saved bytes as a list of Python floats (little-endian, whatever the host)."""
    n = len(raw) // ITEMSIZE[dtype]
    if dtype == "f32":
        return list(struct.unpack("<%df" % n, raw))
    if dtype == "f16":
        return list(struct.unpack("<%de" % n, raw))
    if dtype == "bf16":  # the top half of an f32
        wide = bytearray(4 * n)
        wide[2::4] = raw[0::2]
        wide[3::4] = raw[1::2]
        return list(struct.unpack("<%df" % n, bytes(wide)))
    return [E4M3_TABLE[c] for c in raw]


class Saved:
    """One saved tensor: the file's bytes, the dtype, the logical shape and each logical index's element stride."""

    def __init__(self, key, dtype, layout, shape, strides, raw):
        self.key, self.dtype, self.layout, self.raw = key, dtype, layout, raw
        self.shape, self.strides = tuple(shape), tuple(strides)

    def offsets(self):
        """Element offsets in the file of every logical element, in row-major order of the logical indices."""
        offs = [0]
        for size, stride in zip(self.shape, self.strides):
            offs = [o + i * stride for o in offs for i in range(size)]
        return offs


class Problem:
    """A loaded save: the kind, the typed parameters and the tensors."""

    def __init__(self, kind, params, tensors):
        self.kind, self.p, self.t = kind, params, tensors


def read_manifest(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SaveError("cannot read %s: %s" % (path, e.strerror or e))
    kv = {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, eq, value = line.partition("=")
        if not eq or not key:
            raise SaveError("%s:%d: not a key=value line: %r" % (path, n, line))
        if key in kv:
            raise SaveError("%s:%d: %s given twice" % (path, n, key))
        kv[key] = value
    return kv


def _get(kv, key, conv, path):
    if key not in kv:
        raise SaveError("%s: no %s=" % (path, key))
    try:
        return conv(kv[key])
    except ValueError:
        raise SaveError("%s: %s=%s is not a valid %s" % (path, key, kv[key], conv.__name__))


def _ints(text):
    return tuple(int(x) for x in text.split(","))


def _load_tensor(kv, key, dirpath, mpath):
    dtype = _get(kv, key + ".dtype", str, mpath)
    if dtype not in ITEMSIZE:
        raise SaveError("%s: %s.dtype=%s: one of %s" % (mpath, key, dtype, ", ".join(ITEMSIZE)))
    shape, strides = _get(kv, key + ".shape", _ints, mpath), _get(kv, key + ".strides", _ints, mpath)
    elems = _get(kv, key + ".elems", int, mpath)
    if len(shape) != len(strides) or min(shape) < 1 or min(strides) < 0:
        raise SaveError("%s: %s.shape=%s, %s.strides=%s: one positive size and one stride >= 0 per index"
                        % (mpath, key, kv[key + ".shape"], key, kv[key + ".strides"]))
    last = sum((s - 1) * st for s, st in zip(shape, strides))
    if last >= elems:
        raise SaveError("%s: %s: the element at offset %d is past the file's %d elements" % (mpath, key, last, elems))
    name = _get(kv, key + ".file", str, mpath)
    if os.path.basename(name) != name:
        raise SaveError("%s: %s.file=%s: a file name in DIR, not a path" % (mpath, key, name))
    path = os.path.join(dirpath, name)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SaveError("cannot read %s: %s" % (path, e.strerror or e))
    if len(raw) != elems * ITEMSIZE[dtype]:
        raise SaveError("%s: %d bytes, the manifest says %d %s elements (%d bytes)"
                        % (path, len(raw), elems, dtype, elems * ITEMSIZE[dtype]))
    return Saved(key, dtype, kv.get(key + ".layout", "?"), shape, strides, raw)


def load(dirpath, kind):
    """Reads DIR/manifest.txt and the tensors it names, checking every shape against the parameters."""
    mpath = os.path.join(dirpath, "manifest.txt")
    kv = read_manifest(mpath)
    program = _get(kv, "program", str, mpath)
    if program != kind:
        raise SaveError("%s: program=%s, not %s" % (mpath, program, kind))
    p, t = {}, {}

    def want(key, shape, dtypes):
        t[key] = _load_tensor(kv, key, dirpath, mpath)
        if t[key].shape != tuple(shape):
            raise SaveError("%s: %s.shape=%s, the parameters say %s"
                            % (mpath, key, kv[key + ".shape"], ",".join(map(str, shape))))
        if t[key].dtype not in dtypes:
            raise SaveError("%s: %s.dtype=%s: want %s" % (mpath, key, t[key].dtype, " or ".join(dtypes)))

    if kind == "gemm":
        for key in ("m", "n", "k", "bias"):
            p[key] = _get(kv, key, int, mpath)
        for key in ("alpha", "beta", "scale_a", "scale_b"):
            p[key] = _get(kv, key, float, mpath)
        p["act"] = _get(kv, "act", str, mpath)
        if p["act"] not in ("none", "relu", "gelu"):
            raise SaveError("%s: act=%s: none, relu or gelu" % (mpath, p["act"]))
        m, n, k = p["m"], p["n"], p["k"]
        want("a", (m, k), ("bf16", "f16", "e4m3"))
        want("b", (k, n), (t["a"].dtype,))
        want("d", (m, n), ("bf16", "f32"))
        if p["beta"] != 0.0:
            want("c", (m, n), (t["d"].dtype,))
        if p["bias"]:
            want("bias", (n,), ("f32",))
    else:
        for key in ("batch", "heads_q", "heads_kv", "seq_q", "seq_k", "head_dim", "causal", "splits", "decode"):
            p[key] = _get(kv, key, int, mpath)
        p["scale"] = _get(kv, "scale", float, mpath)
        p["dtype"] = _get(kv, "dtype", str, mpath)
        if p["dtype"] not in ("bf16", "f16"):
            raise SaveError("%s: dtype=%s: bf16 or f16" % (mpath, p["dtype"]))
        if p["causal"] and kv.get("causal_align") != "bottom_right":
            raise SaveError("%s: causal_align=%s: only bottom_right (query i sees keys j <= i + seq_k - seq_q) is "
                            "known" % (mpath, kv.get("causal_align")))
        b, hq, hkv, sq, sk, d = (p[x] for x in ("batch", "heads_q", "heads_kv", "seq_q", "seq_k", "head_dim"))
        if min(b, hq, hkv, sq, sk, d) < 1 or hq % hkv:
            raise SaveError("%s: heads_q=%d is not a multiple of heads_kv=%d, or a size is < 1" % (mpath, hq, hkv))
        for key, shape in (("q", (b, hq, sq, d)), ("k", (b, hkv, sk, d)), ("v", (b, hkv, sk, d)),
                           ("o", (b, hq, sq, d))):
            want(key, shape, (p["dtype"],))
        if "lse.file" in kv:
            want("lse", (b, hq, sq), ("f32",))
    return Problem(kind, p, t)


def f32(x):
    """x rounded to the nearest f32 (the kernel's own float arithmetic on the host)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def gemm_alpha(p):
    """alpha * scale_a * scale_b as gemm_run computes it in float (left to right; exact for the example's scales)."""
    return f32(f32(p["alpha"] * p["scale_a"]) * p["scale_b"])


# ---- the tolerances and the comparison: one implementation for both paths ----------------------------------------
# They use only arithmetic operators and a few torch.Tensor methods (abs, max, argmax, reshape, nan_to_num), which
# the selftest's Vec provides for lists of Python floats.


class RefPrecision:
    """The reference's own roundings, the r_* and u_mm of the tolerances (module docstring)."""

    def __init__(self, gemm_acc, gemm_u_mm, gemm_out, attn_fused):
        self.gemm_acc, self.gemm_u_mm, self.gemm_out, self.attn_fused = gemm_acc, gemm_u_mm, gemm_out, attn_fused


def gemm_tolerance(p, d_dtype, ref, absdot, bound, refp):
    lip = 1.13 if p["act"] == "gelu" else 1.0
    u_d = 2.0**-8 if d_dtype == "bf16" else 2.0**-22
    return (lip * ((p["k"] + 8) * 2.0**-24 * (1 + refp.gemm_acc) * bound + refp.gemm_u_mm * absdot)
            + u_d * (1 + refp.gemm_out) * ref.abs() + 1e-6)


def attention_tolerance(p, vmax, refp):
    return (1 + refp.attn_fused) * (2.0 * UNIT_ROUNDOFF[p["dtype"]] * vmax + 1e-4)


def lse_tolerance(ref):
    return 1e-4 + 1e-5 * ref.abs().nan_to_num(posinf=0.0)  # a row that sees no key: -inf, compared exactly


class Result:
    def __init__(self, name, max_abs, max_rel, index, tol, got, ref, ok):
        self.name, self.max_abs, self.max_rel, self.index, self.tol = name, max_abs, max_rel, index, tol
        self.got, self.ref, self.ok = got, ref, ok


def compare(name, got, ref, tol):
    """got and ref (same logical shape; tol the same or a scalar): the worst element relative to its tolerance.
    Equal infinities compare equal; NaN in got fails."""
    big = 1e300
    g = got.nan_to_num(nan=math.nan, posinf=big, neginf=-big)
    r = ref.nan_to_num(nan=math.nan, posinf=big, neginf=-big)
    err = (g - r).abs()
    ratio = (err / tol).reshape(-1).nan_to_num(nan=math.inf, posinf=math.inf)
    err = err.reshape(-1)
    i = int(ratio.argmax())
    worst = float(ratio[i])
    max_abs = float(err.nan_to_num(nan=math.inf).max())
    refmax = float(ref.abs().nan_to_num(posinf=0.0).max())
    max_rel = max_abs / refmax if refmax > 0 else (0.0 if max_abs == 0 else math.inf)
    index, rest = [], i
    for size in reversed(tuple(ref.shape)):
        index.append(rest % size)
        rest //= size
    tol_i = float(tol.reshape(-1)[i]) if hasattr(tol, "reshape") else float(tol)
    return Result(name, max_abs, max_rel, index[::-1], tol_i, float(got.reshape(-1)[i]), float(ref.reshape(-1)[i]),
                  worst <= 1.0)


# ---- the double reference in pure Python (selftest) -------------------------------------------------------------


class Vec:
    """A flat list of floats with a logical shape: the few torch.Tensor operations compare() and the tolerances use."""

    __slots__ = ("data", "shape")

    def __init__(self, data, shape):
        self.data, self.shape = data, tuple(shape)

    def _map2(self, other, op):
        if isinstance(other, Vec):
            if len(other.data) != len(self.data):
                raise ValueError("Vec shapes %s and %s differ" % (self.shape, other.shape))
            return Vec(list(map(op, self.data, other.data)), self.shape)
        return Vec([op(x, other) for x in self.data], self.shape)

    def __add__(self, o):
        return self._map2(o, operator.add)

    def __sub__(self, o):
        return self._map2(o, operator.sub)

    def __mul__(self, o):
        return self._map2(o, operator.mul)

    def __truediv__(self, o):  # only by a tolerance, which is > 0
        return self._map2(o, operator.truediv)

    def __rsub__(self, o):
        return self._map2(o, lambda a, b: b - a)

    __radd__, __rmul__ = __add__, __mul__

    def abs(self):
        return Vec([abs(x) for x in self.data], self.shape)

    def max(self):
        return max(self.data, key=lambda x: -math.inf if x != x else x)

    def argmax(self):
        return max(range(len(self.data)), key=lambda i: (self.data[i], -i))

    def reshape(self, *shape):
        if shape not in ((-1,), (len(self.data),)):
            raise ValueError("Vec.reshape: only flattening")
        return Vec(self.data, (len(self.data),))

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        pos = sys.float_info.max if posinf is None else posinf
        neg = -sys.float_info.max if neginf is None else neginf
        return Vec([nan if x != x else pos if x == math.inf else neg if x == -math.inf else x for x in self.data],
                   self.shape)

    def __getitem__(self, i):
        return self.data[i]


class PythonBackend:
    """The reference in double, element by element (math.fsum: correctly rounded sums)."""

    name = "python-double"
    exact = RefPrecision(gemm_acc=0, gemm_u_mm=0.0, gemm_out=0, attn_fused=0)  # no rounding of its own

    def array(self, saved):
        values = decode(saved.raw, saved.dtype)
        return Vec([values[o] for o in saved.offsets()], saved.shape)

    def output(self, saved):
        return self.array(saved)

    def gemm(self, prob):
        p, t = prob.p, prob.t
        m, n, k = p["m"], p["n"], p["k"]
        if m * n * k > SELFTEST_MAX_WORK:
            raise SaveError("%dx%dx%d is too large for the pure-Python selftest" % (m, n, k))
        a, b = self.array(t["a"]).data, self.array(t["b"]).data
        c = self.array(t["c"]).data if "c" in t else None
        bias = self.array(t["bias"]).data if "bias" in t else None
        al, beta = gemm_alpha(p), p["beta"]
        cols = [b[j::n] for j in range(n)]
        ref, absdot, bound = [], [], []
        for i in range(m):
            row = a[i * k:(i + 1) * k]
            for j in range(n):
                prods = list(map(operator.mul, row, cols[j]))
                dot = math.fsum(prods)
                y, mag = al * dot, abs(al) * math.fsum(map(abs, prods))
                if c is not None:
                    y, mag = y + beta * c[i * n + j], mag + abs(beta * c[i * n + j])
                if bias is not None:
                    y, mag = y + bias[j], mag + abs(bias[j])
                if p["act"] == "relu":
                    y = max(y, 0.0)
                elif p["act"] == "gelu":
                    y = 0.5 * y * (1.0 + math.erf(y / math.sqrt(2.0)))
                ref.append(y)
                absdot.append(abs(al * dot))
                bound.append(mag)
        return Vec(ref, (m, n)), Vec(absdot, (m, n)), Vec(bound, (m, n)), self.exact

    def attention(self, prob):
        p, t = prob.p, prob.t
        bsz, hq, hkv, sq, sk, d = (p[x] for x in ("batch", "heads_q", "heads_kv", "seq_q", "seq_k", "head_dim"))
        if bsz * hq * sq * sk * d > SELFTEST_MAX_WORK:
            raise SaveError("this attention is too large for the pure-Python selftest")
        q, k, v = self.array(t["q"]).data, self.array(t["k"]).data, self.array(t["v"]).data
        group, scale = hq // hkv, p["scale"]
        o, lse = [], []
        for bi in range(bsz):
            for h in range(hq):
                kv0 = (bi * hkv + h // group) * sk
                keys = [k[(kv0 + j) * d:(kv0 + j + 1) * d] for j in range(sk)]
                vals = [v[(kv0 + j) * d:(kv0 + j + 1) * d] for j in range(sk)]
                for i in range(sq):
                    qrow = q[((bi * hq + h) * sq + i) * d:((bi * hq + h) * sq + i + 1) * d]
                    seen = sk if not p["causal"] else max(0, min(sk, i + sk - sq + 1))  # keys j < seen visible
                    if seen == 0:
                        o.extend([0.0] * d)
                        lse.append(-math.inf)
                        continue
                    s = [scale * math.fsum(map(operator.mul, qrow, keys[j])) for j in range(seen)]
                    mx = max(s)
                    e = [math.exp(x - mx) for x in s]
                    total = math.fsum(e)
                    o.extend(math.fsum(e[j] * vals[j][c] for j in range(seen)) / total for c in range(d))
                    lse.append(mx + math.log(total))
        vmax = max(abs(x) for x in v)
        return Vec(o, (bsz, hq, sq, d)), Vec(lse, (bsz, hq, sq)), vmax, self.exact


# ---- PyTorch on the GPU ------------------------------------------------------------------------------------------

TORCH_DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


def torch_backend(device):
    """The PyTorch backend on `device`, or exit 77 saying why there is none."""
    try:
        import warnings

        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch without numpy: harmless
        import torch
        import torch.nn.functional as F
    except Exception as e:  # not installed, or broken (a missing CUDA library)
        print("torch_check: SKIP: cannot import torch (%s: %s)" % (type(e).__name__, e))
        sys.exit(EXIT_SKIP)
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_check: SKIP: torch %s sees no CUDA device (torch.cuda.is_available() is False)"
              % torch.__version__)
        sys.exit(EXIT_SKIP)
    version = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
    if version < (2, 1) or not hasattr(F, "scaled_dot_product_attention"):  # SDPA's scale= came with 2.1
        print("torch_check: SKIP: torch %s is too old: scaled_dot_product_attention(scale=) needs 2.1 or newer"
              % torch.__version__)
        sys.exit(EXIT_SKIP)
    if sys.byteorder != "little":
        print("torch_check: SKIP: torch.frombuffer reads host byte order, and this host is big-endian")
        sys.exit(EXIT_SKIP)
    return TorchBackend(torch, F, device)


class TorchBackend:
    """The reference from PyTorch on the GPU: torch.matmul and scaled_dot_product_attention in the input type."""

    def __init__(self, torch, F, device):
        self.torch, self.F, self.dev = torch, F, torch.device(device)
        where = torch.cuda.get_device_name(self.dev) if self.dev.type == "cuda" else self.dev.type
        self.name = "torch-%s(%s)" % (torch.__version__, where)
        # f32 matmuls in full f32 (no TF32: the default, made sure of with the API every torch since 1.12 has), and
        # cuBLAS's split-K partial sums of bf16/f16 products reduced in f32, not in the output type
        torch.set_float32_matmul_precision("highest")
        for flag in ("allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction"):
            if hasattr(torch.backends.cuda.matmul, flag):
                setattr(torch.backends.cuda.matmul, flag, False)
        self.e4m3 = torch.tensor(E4M3_TABLE, dtype=torch.float32, device=self.dev)

    def array(self, saved):
        """The saved tensor on the GPU, in its own type (e4m3: decoded to f32 there), viewed with its strides."""
        torch = self.torch
        buf = bytearray(saved.raw)
        if saved.dtype == "e4m3":
            flat = self.e4m3[torch.frombuffer(buf, dtype=torch.uint8).to(self.dev).long()]
        else:
            flat = torch.frombuffer(buf, dtype=getattr(torch, TORCH_DTYPES[saved.dtype])).to(self.dev)
        return flat.as_strided(saved.shape, saved.strides)

    def output(self, saved):
        return self.array(saved).double()

    def gemm(self, prob):
        torch, F, p, t = self.torch, self.F, prob.p, prob.t
        a, b = self.array(t["a"]), self.array(t["b"])
        al, beta = gemm_alpha(p), p["beta"]
        if t["a"].dtype == "e4m3":  # decoded exactly to f32 (torch has no plain fp8 matmul): an f32 matmul
            dot, u_mm = torch.matmul(a, b), UNIT_ROUNDOFF["f32"]
        else:  # cuBLAS: f32 sums, the result rounded to the input type
            dot, u_mm = torch.matmul(a, b).float(), UNIT_ROUNDOFF[t["a"].dtype]
        y = dot * al  # the epilogue in f32, in the kernel's order
        bound = abs(al) * torch.matmul(a.double().abs(), b.double().abs())
        if "c" in t:
            c = self.array(t["c"]).float()
            y = y + c * beta
            bound = bound + (c.double() * beta).abs()
        if "bias" in t:
            bias = self.array(t["bias"])
            y = y + bias
            bound = bound + bias.double().abs()
        if p["act"] == "relu":
            y = torch.relu(y)
        elif p["act"] == "gelu":
            y = F.gelu(y)  # erf form, as kbd_gelu
        if t["d"].dtype == "bf16":
            y = y.to(torch.bfloat16)
        return y.double(), (dot.double() * al).abs(), bound, RefPrecision(gemm_acc=1, gemm_u_mm=u_mm, gemm_out=1,
                                                                            attn_fused=0)

    def attention(self, prob):
        torch, F, p, t = self.torch, self.F, prob.p, prob.t
        bsz, hq, hkv, sq, sk = (p[x] for x in ("batch", "heads_q", "heads_kv", "seq_q", "seq_k"))
        scale, group = p["scale"], hq // hkv
        q = self.array(t["q"]).contiguous()
        k = self.array(t["k"]).repeat_interleave(group, dim=1)  # q head h reads kv head h // group
        v = self.array(t["v"]).repeat_interleave(group, dim=1)
        i = torch.arange(sq, device=self.dev).unsqueeze(1)
        j = torch.arange(sk, device=self.dev).unsqueeze(0)
        visible = j <= i + (sk - sq)  # kbd's bottom-right causal mask
        seen = visible.any(dim=1)  # rows that see at least one key
        outs = []
        for bi in range(bsz):  # one batch at a time: a masked SDPA may materialise heads x seq_q x seq_k
            qb, kb, vb = q[bi:bi + 1], k[bi:bi + 1], v[bi:bi + 1]
            if not p["causal"]:
                o = F.scaled_dot_product_attention(qb, kb, vb, scale=scale)
            elif sq == sk:  # is_causal's top-left mask is the bottom-right one when square
                o = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True, scale=scale)
            else:  # rows that see no key get every key, then O = 0 below
                o = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=visible | ~seen.unsqueeze(1), scale=scale)
            outs.append(o)
        o = torch.cat(outs)
        if p["causal"]:
            o = o.masked_fill(~seen.unsqueeze(1), 0)
        # lse in float64: scale * Q K^T and logsumexp, in chunks of query rows (at most 2^27 scores at a time)
        lse = torch.empty((bsz, hq, sq), dtype=torch.float64, device=self.dev)
        rows = max(1, (1 << 27) // (hq * sk))
        for bi in range(bsz):
            kt = k[bi].double().transpose(-1, -2)
            for r0 in range(0, sq, rows):
                s = torch.matmul(q[bi, :, r0:r0 + rows].double(), kt) * scale
                if p["causal"]:
                    s = s.masked_fill(~visible[r0:r0 + rows], -math.inf)
                lse[bi, :, r0:r0 + rows] = torch.logsumexp(s, dim=-1)
        if p["causal"]:
            lse = lse.masked_fill(~seen, -math.inf)
        vmax = float(self.array(t["v"]).abs().max())
        return o.double(), lse, vmax, RefPrecision(gemm_acc=0, gemm_u_mm=0.0, gemm_out=0, attn_fused=1)


# ---- the check ----------------------------------------------------------------------------------------------------


def summary(prob):
    p, t = prob.p, prob.t
    if prob.kind == "gemm":
        s = "%dx%dx%d a=%s:%s b=%s:%s d=%s alpha=%g beta=%g" % (
            p["m"], p["n"], p["k"], t["a"].layout, t["a"].dtype, t["b"].layout, t["b"].dtype, t["d"].dtype,
            p["alpha"], p["beta"])
        if t["a"].dtype == "e4m3":
            s += " scales=%g,%g" % (p["scale_a"], p["scale_b"])
        return s + "%s act=%s" % (" bias" if p["bias"] else "", p["act"])
    return "b=%d hq=%d hkv=%d sq=%d sk=%d d=%d %s%s scale=%g splits=%d" % (
        p["batch"], p["heads_q"], p["heads_kv"], p["seq_q"], p["seq_k"], p["head_dim"], p["dtype"],
        " causal" if p["causal"] else "", p["scale"], p["splits"])


def check(backend, dirpath, kind):
    """Loads the save, recomputes it with the backend, compares; prints the line and returns the exit status."""
    prob = load(dirpath, kind)
    results = []
    if kind == "gemm":
        ref, absdot, bound, refp = backend.gemm(prob)
        tol = gemm_tolerance(prob.p, prob.t["d"].dtype, ref, absdot, bound, refp)
        results.append(compare("d", backend.output(prob.t["d"]), ref, tol))
    else:
        ref, ref_lse, vmax, refp = backend.attention(prob)
        results.append(compare("o", backend.output(prob.t["o"]), ref, attention_tolerance(prob.p, vmax, refp)))
        if "lse" in prob.t:
            results.append(compare("lse", backend.output(prob.t["lse"]), ref_lse, lse_tolerance(ref_lse)))
    ok = all(r.ok for r in results)
    fields = []
    for r in results:
        pre = "" if r is results[0] else r.name + "_"
        fields.append("%smax_abs_err=%.3e %smax_rel_err=%.3e %sworst_index=[%s] %stol=%.3e" % (
            pre, r.max_abs, pre, r.max_rel, pre, ",".join(map(str, r.index)), pre, r.tol))
        if not r.ok:
            print("torch_check: %s[%s] = %.9g, reference %.9g, |err| %.3e > tol %.3e" % (
                r.name, ",".join(map(str, r.index)), r.got, r.ref, abs(r.got - r.ref), r.tol), file=sys.stderr)
    print("torch_check %s %s ref=%s: %s %s" % (kind, summary(prob), backend.name, " ".join(fields),
                                             "OK" if ok else "FAIL"))
    sys.stdout.flush()
    return EXIT_OK if ok else EXIT_FAIL


def main(argv=None):
    ap = argparse.ArgumentParser(description="A second opinion from PyTorch on a kbd example's saved run "
                                 "(--save DIR); the module docstring documents the format and the tolerances.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for kind in ("gemm", "attention"):
        sp = sub.add_parser(kind, help="recompute DIR's %s with PyTorch on the GPU and compare" % kind)
        sp.add_argument("dir", help="the directory an example's --save wrote")
        sp.add_argument("--device", default="cuda", help="torch device (default cuda; cpu tries the torch path "
                        "without a GPU)")
    sp = sub.add_parser("selftest", help="the same loader and comparison with a pure-Python double reference")
    sp.add_argument("dir", help="the directory an example's --save wrote")
    sp.add_argument("kind", choices=("gemm", "attention"))
    args = ap.parse_args(argv)
    try:
        if args.cmd == "selftest":
            return check(PythonBackend(), args.dir, args.kind)
        return check(torch_backend(args.device), args.dir, args.cmd)
    except SaveError as e:
        print("torch_check: %s" % e, file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
