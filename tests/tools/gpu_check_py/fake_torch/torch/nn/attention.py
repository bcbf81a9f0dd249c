"""torch.nn.attention of the fake torch: SDPBackend and sdpa_kernel (one backend forced at a time)."""
import contextlib


class SDPBackend(object):
    FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH = "flash", "efficient", "cudnn", "math"


forced = [None]


@contextlib.contextmanager
def sdpa_kernel(backend):
    old = forced[0]
    forced[0] = backend
    try:
        yield
    finally:
        forced[0] = old
