"""nn.functional.scaled_dot_product_attention on CPU, its fused kernel only.

ATen's scaled_dot_product_attention picks a backend per call (sdp_utils_cpp.cpp): for 4-d
query, key and value without dropout it runs _scaled_dot_product_flash_attention_for_cpu,
one ScaledDotProductFlashAttentionForCpuBackward0 node over (query, key, value) that saves
them, the output and the rows' logsumexp (laid out (batch, query position, head)); its
backward is a fused kernel, _scaled_dot_product_flash_attention_for_cpu_backward, which has
no derivatives.yaml entry: a create_graph grad is a NotImplemented node whose backward
raises, and the op has no forward-mode formula. Otherwise (3-d inputs, broadcast batches,
dropout, an attention mask, grouped-query attention) torch runs the math composite
(_scaled_dot_product_attention_math: scaled matmuls, _safe_softmax, dropout), which the
engine does not model yet: it refuses those calls rather than give another graph.

The forward and the backward compute in float64 and round once (the kernel's float32 blocks
accumulate in float32; the comparator's tolerance covers the difference on OpInfo's samples).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..tensor import Tensor
from .common import new, no_jvp

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


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """F.scaled_dot_product_attention, where torch takes the fused CPU kernel."""
    if not (_uses_fused_kernel(query, key, value, attn_mask, dropout_p, enable_gqa)
            and query.dtype == key.dtype == value.dtype
            and query.dtype.is_floating_point):
        raise NotImplementedError(messages.SDPA_MATH_NOT_MODELLED)
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
