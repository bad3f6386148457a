"""nn.functional.scaled_dot_product_attention on CPU: the fused kernel and the math composite.

ATen's scaled_dot_product_attention picks a backend per call (sdp_utils_cpp.cpp): for 4-d
query, key and value without dropout it runs _scaled_dot_product_flash_attention_for_cpu,
one ScaledDotProductFlashAttentionForCpuBackward0 node over (query, key, value) that saves
them, the output and the rows' logsumexp (laid out (batch, query position, head)); its
backward is a fused kernel, _scaled_dot_product_flash_attention_for_cpu_backward, which has
no derivatives.yaml entry: a create_graph grad is a NotImplemented node whose backward
raises, and the op has no forward-mode formula. Otherwise (3-d inputs, broadcast batches,
dropout, an attention mask, grouped-query attention) torch runs the math composite,
_scaled_dot_product_attention_math (attention.cpp), which the engine builds from the same
ops: query and the transposed key each times sqrt(scale), matmul, the mask added in place
(a causal one made from ones(L, S).tril() as convert_boolean_attn_mask does: 0 kept, -inf
masked), _safe_softmax (a row all -inf gives zeros; one SafeSoftmaxBackward0 node) and
matmul by value; dropout (a Bernoulli mask from torch's generator) and grouped-query
attention are refused.

The forward and the backward compute in float64 and round once (the kernel's float32 blocks
accumulate in float32; the comparator's tolerance covers the difference on OpInfo's samples).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..tensor import Tensor
from . import inplace_ops, linalg, nn
from .backward import softmax_backward_data
from .basic import elementwise as ops
from .basic import reductions, views
from .common import new, no_jvp, wrap_dim

_BACKWARD_OP = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"


def _not_implemented(c: Any, g: Tensor, outs: list[Tensor]) -> None:
    """The fused backward's results under torch's fallback node: an edge for each tensor
    argument that requires grad (grad_out, query, key, value, out; logsumexp never does),
    in argument order (autograd_not_implemented_fallback.cpp)."""
    arguments = {"grad_out": g, "query": c.query, "key": c.key, "value": c.value,
                 "out": c.result}
    present = {k: t for k, t in arguments.items() if t.requires_grad}
    if not differentiable(list(present.values())):   # no create_graph, or nothing to track
        return

    def backward(ctx: Any, gs: Any) -> list[Tensor | None]:
        raise RuntimeError(messages.no_derivative_for(_BACKWARD_OP))
    spec = OpSpec("NotImplemented", tuple(present), {}, backward, jvp=no_jvp(_BACKWARD_OP))
    record_multi_input(spec, list(present.values()), outs, {})


def _scores(q: np.ndarray, k: np.ndarray, scale: float, causal: bool) -> np.ndarray:
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if causal:   # top-left aligned: query i attends keys 0..i
        keep = np.tril(np.ones(s.shape[-2:], dtype=bool))
        s = np.where(keep, s, -np.inf)
    return s


def _flash_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """The attention's gradients from the saved logsumexp: P = exp(S - lse),
    dV = P^T dO, dS = P (dO V^T - rowsum(dO O)), dQ = scale dS K, dK = scale dS^T Q."""
    q, k, v = (np.asarray(t._data, np.float64) for t in (c.query, c.key, c.value))
    out, lse = np.asarray(c.result._data, np.float64), np.asarray(c.logsumexp._data, np.float64)
    do = np.asarray(g._data, np.float64)
    p = np.exp(_scores(q, k, c.scale_value, c.is_causal) - lse[..., None])
    dv = np.swapaxes(p, -1, -2) @ do
    ds = p * (do @ np.swapaxes(v, -1, -2) - (do * out).sum(-1, keepdims=True))
    dq = (ds @ k) * c.scale_value
    dk = (np.swapaxes(ds, -1, -2) @ q) * c.scale_value
    dt, dev = c.query.dtype, c.query.device
    outs = [new(a.astype(dt.np), dt, dev) for a in (dq, dk, dv)]
    _not_implemented(c, g, outs)
    return c.grads(lambda: outs[0], lambda: outs[1], lambda: outs[2])


FLASH_ATTENTION_CPU = OpSpec(
    "ScaledDotProductFlashAttentionForCpuBackward0", ("query", "key", "value"),
    dict.fromkeys(("query", "key", "value"), ("key", "logsumexp", "query", "result", "value")),
    _flash_backward, saved_outputs=("logsumexp",), save_order=("query", "key", "value"),
    jvp=no_jvp("_scaled_dot_product_flash_attention_for_cpu"))


def _uses_fused_kernel(query: Tensor, key: Tensor, value: Tensor, attn_mask: Any,
                       dropout_p: float, enable_gqa: bool) -> bool:
    """The calls the engine knows take the fused kernel: 4-d inputs of one batch and head
    count and one head dimension (the kernel's check_head_dim_size_cpp: value's too),
    nonempty sequences, last dims of stride 1, no mask, no dropout."""
    return (query.ndim == key.ndim == value.ndim == 4 and attn_mask is None
            and dropout_p == 0.0 and not enable_gqa
            and query.shape[:2] == key.shape[:2] == value.shape[:2]
            and query.shape[-1] == key.shape[-1] == value.shape[-1]
            and key.shape[-2] == value.shape[-2] and query.shape[-2] > 0
            and key.shape[-2] > 0
            # check_last_dim_stride_equals_1: a strided last dim takes the math composite
            and all(t.stride()[-1] == 1 for t in (query, key, value)))


# ---- the math composite --------------------------------------------------------------------

SAFE_SOFTMAX = OpSpec(
    "SafeSoftmaxBackward0", ("self",), {"self": ("result",)},
    lambda c, g: [softmax_backward_data(g, c.result, c.dim)],
    # result * (self_t - logsumexp_jvp(self_p, self_t, {dim}, true))
    jvp=lambda c: ops.mul(c.result, ops.sub(c.self_t, reductions.sum(
        ops.mul(c.self_t, new(nn._stable_softmax(c.self._data, c.dim), c.self.dtype,
                              c.self.device)), c.dim, keepdim=True))))


def safe_softmax(self: Tensor, dim: int) -> Tensor:
    """ATen's _safe_softmax: softmax, but 0 along a row whose every element is -inf (a fully
    masked attention row), where softmax gives NaN."""
    d = wrap_dim(dim, self.ndim)
    a = self._data
    with np.errstate(all="ignore"):
        out = np.where(np.all(a == -np.inf, axis=d, keepdims=True), a.dtype.type(0),
                       nn._stable_softmax(a, d))
    return record(SAFE_SOFTMAX, new(out.astype(a.dtype), self.dtype, self.device), [self],
                  dim=d)


def _math(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
          is_causal: bool, scale: float | None) -> Tensor:
    """_scaled_dot_product_attention_math's output, op for op (no dropout, no GQA)."""
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    q = ops.mul_scalar(query, 0.0 - factor if negative else factor)
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        keep = np.tril(np.ones((length, source), dtype=bool))
        attn_mask = new(np.where(keep, 0.0, -np.inf), query.dtype, query.device)
    attn = linalg.matmul(q, ops.mul_scalar(views.transpose(key, -2, -1), factor))
    if attn_mask is not None:
        inplace_ops.add_(attn, attn_mask)
    return linalg.matmul(safe_softmax(attn, -1), value)


def _bool_mask(attn_mask: Tensor | None, dt: Any) -> Tensor | None:
    """convert_boolean_attn_mask: a bool mask becomes 0 where kept and -inf where not."""
    if attn_mask is None or attn_mask.dtype != dtypes.bool_:
        return attn_mask
    return new(np.where(attn_mask._data, 0.0, -np.inf), dt, attn_mask.device)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """F.scaled_dot_product_attention: the fused CPU kernel where torch takes it, else
    the math composite."""
    if not (query.dtype == key.dtype == value.dtype and query.dtype.is_floating_point):
        raise NotImplementedError(messages.SDPA_NOT_MODELLED)
    if not _uses_fused_kernel(query, key, value, attn_mask, dropout_p, enable_gqa):
        if dropout_p > 0.0 or enable_gqa:
            raise NotImplementedError(messages.SDPA_NOT_MODELLED)
        return _math(query, key, value, _bool_mask(attn_mask, query.dtype), is_causal, scale)
    scale_value = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    q, k, v = (np.asarray(t._data, np.float64) for t in (query, key, value))
    s = _scores(q, k, scale_value, is_causal)
    top = s.max(-1, keepdims=True)
    lse = (top + np.log(np.exp(s - top).sum(-1, keepdims=True)))[..., 0]
    out = np.exp(s - lse[..., None]) @ v
    dt, dev = query.dtype, query.device
    result = new(out.astype(dt.np), dt, dev)
    # the kernel writes logsumexp as (batch, query position, head), viewed (b, h, L)
    logsumexp = new(np.swapaxes(np.ascontiguousarray(np.swapaxes(lse, 1, 2)), 1, 2)
                    .astype(dt.np), dt, dev, order="K")
    return record(FLASH_ATTENTION_CPU, result, [query, key, value], logsumexp=logsumexp,
                  scale_value=scale_value, is_causal=is_causal, dropout_p=dropout_p,
                  scale=scale, attn_mask=None)
