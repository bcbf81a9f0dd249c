"""A stand-in for PyTorch, only as much as tools/gpu-check/torch_bench.py touches, so that its measuring code runs
(on the CPU, in microseconds) in tests/tools/gpu_check_py/test_torch_bench.py where no PyTorch and no GPU exist.

Nothing is computed: tensors carry a shape and a dtype. Switches (environment):
  FAKE_TORCH_NO_CUDA=1   torch.cuda.is_available() is False
  FAKE_TORCH_NAN=<kind>  the outputs of <kind> (sdpa or matmul) are not finite
The cuDNN SDPA backend always refuses (a warning with the why, then RuntimeError), as a real one may for a shape.
"""
import os
import time
import types


__version__ = "0.0+fake"
version = types.SimpleNamespace(cuda="0.0-fake")


class dtype(object):
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __repr__(self):
        return "torch." + self.name


bfloat16, float16, float32, float8_e4m3fn = dtype("bfloat16", 2), dtype("float16", 2), dtype("float32", 4), \
    dtype("float8_e4m3fn", 1)


class Tensor(object):
    def __init__(self, shape, dt, finite=True):
        self.shape, self.dtype, self._finite = tuple(shape), dt, finite

    def uniform_(self, a=0.0, b=1.0):
        return self

    def transpose(self, i, j):
        s = list(self.shape)
        s[i], s[j] = s[j], s[i]
        return Tensor(s, self.dtype, self._finite)

    def t(self):
        return self.transpose(0, 1)

    def to(self, dt):
        return Tensor(self.shape, dt, self._finite)

    def repeat_interleave(self, r, dim):
        s = list(self.shape)
        s[dim] *= r
        return Tensor(s, self.dtype, self._finite)

    def all(self):
        return self

    def item(self):
        return self._finite


def empty(shape, device=None, dtype=None):
    if device != "cuda":
        raise RuntimeError("fake torch: everything lives on 'cuda' here")
    return Tensor(shape, dtype)


def ones(shape, device=None, dtype=None):
    return empty(shape, device, dtype)


def isfinite(t):
    return Tensor(t.shape, bfloat16, t._finite)


def _out(kind, shape, dt):
    time.sleep(0)  # a "kernel"
    return Tensor(shape, dt, os.environ.get("FAKE_TORCH_NAN") != kind)


def matmul(a, b):
    if a.shape[1] != b.shape[0]:
        raise RuntimeError("fake torch: matmul shapes %s x %s" % (a.shape, b.shape))
    return _out("matmul", (a.shape[0], b.shape[1]), a.dtype)


def _scaled_mm(a, b, scale_a=None, scale_b=None, out_dtype=None):
    if a.dtype is not float8_e4m3fn or b.dtype is not float8_e4m3fn:
        raise RuntimeError("fake torch: _scaled_mm takes float8 operands")
    return _out("matmul", (a.shape[0], b.shape[1]), out_dtype)


class _Event(object):
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return max(1e-6, (end.t - self.t) * 1e3)


class _Props(object):
    name, major, minor, multi_processor_count, L2_cache_size = "Fake GPU", 9, 0, 132, 50 << 20


cuda = types.SimpleNamespace(
    is_available=lambda: os.environ.get("FAKE_TORCH_NO_CUDA") != "1",
    current_device=lambda: 0,
    get_device_properties=lambda i: _Props(),
    synchronize=lambda: None,
    empty_cache=lambda: None,
    Event=_Event)
backends = types.SimpleNamespace(
    cudnn=types.SimpleNamespace(version=lambda: 0),
    cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_bf16_reduced_precision_reduction=True)))

from . import nn  # noqa: E402,F401  (last: torch.nn.functional imports _out from here)
