"""torch.nn.functional.scaled_dot_product_attention of the fake torch: shape checks and the backend's refusals."""
import warnings

from .. import _out
from . import attention


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if attention.forced[0] == attention.SDPBackend.CUDNN_ATTENTION:
        warnings.warn("fake: cuDNN refuses this shape")
        raise RuntimeError("No available kernel. Aborting execution.")
    if len(q.shape) != 4 or q.shape[-1] != k.shape[-1] or k.shape != v.shape or k.shape[2] != v.shape[2]:
        raise RuntimeError("fake torch: sdpa shapes q %s k %s v %s" % (q.shape, k.shape, v.shape))
    if q.shape[1] != k.shape[1] and not (enable_gqa and q.shape[1] % k.shape[1] == 0):
        raise RuntimeError("fake torch: %d query heads, %d key heads, enable_gqa=%s"
                           % (q.shape[1], k.shape[1], enable_gqa))
    return _out("sdpa", q.shape, q.dtype)
