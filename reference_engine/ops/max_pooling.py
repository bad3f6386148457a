"""Adaptive max pooling: F.adaptive_max_pool{1,2,3}d (ATen's adaptive_max_pool2d/3d, the 1-d
form unsqueezing to 2-d), values and indices, with the backward op
(AdaptiveMaxPool2DBackwardBackward0 ...) and derivatives.yaml's jvps.

The windows are average pooling's adaptive ones (ops/pooling.py); each output takes its
window's first largest element, a NaN winning (AdaptiveMaxPoolKernel.cpp: `val > maxval ||
isnan(val)`), and its index into the flattened spatial dims."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages, views
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, indexing, shape_views
from .pooling import _adaptive_axis, _with_default


def _gather_flat(t: Tensor, indices: Tensor, k: int) -> Tensor:
    """max_pool_double_backward (FunctionsManual.cpp): t's spatial dims flattened, gathered
    at the indices, viewed as them; also the values' jvp."""
    size = [*indices.shape[:indices.ndim - k], -1]
    flat = views.view(shape_views.contiguous(t), size)
    out = indexing.gather(flat, -1, views.view(indices, size))
    return views.view(out, list(indices.shape))


def _spec(k: int) -> tuple[OpSpec, OpSpec]:
    name = f"AdaptiveMaxPool{k}D"
    forward = OpSpec(f"{name}Backward0", ("self",), {"self": ("self", "result1")},
                     lambda c, g: [adaptive_max_pool_backward(g, c.self, c.result1, k)],
                     saved_outputs=("result1",),
                     jvp=lambda c: _gather_flat(c.self_t, c.result1, k))
    backward = OpSpec(f"{name}BackwardBackward0", ("grad_output", "self"),
                      {"grad_output": ("indices",)},
                      lambda c, g: c.grads(lambda: _gather_flat(g, c.indices, k),
                                           lambda: common.new(np.zeros(c.self_shape),
                                                              g.dtype, g.device)),
                      jvp=lambda c: adaptive_max_pool_backward(c.grad_output_t, c.self,
                                                               c.indices, k),
                      jvp_reads=("grad_output",))
    return forward, backward


SPECS = {k: _spec(k) for k in (2, 3)}


def _argmax(a: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """The flat spatial index of each output window's first largest (or last NaN) element."""
    k = len(sizes)
    spatial = a.shape[-k:]
    windows = []
    for n, o in zip(spatial, sizes, strict=True):
        mat, _ = _adaptive_axis(n, o)
        windows.append([np.flatnonzero(row) for row in mat])
    flat = a.reshape(*a.shape[:-k], -1)
    out = np.empty((*a.shape[:-k], *sizes), np.int64)
    for cell in itertools.product(*(range(o) for o in sizes)):
        grid = np.ix_(*(windows[i][cell[i]] for i in range(k)))
        positions = np.ravel_multi_index(grid, spatial).reshape(-1)
        vals = flat[..., positions]
        nan = np.isnan(vals)
        # the first largest; the last NaN where there is one
        first = np.argmax(np.where(nan, -np.inf, vals), -1)
        last_nan = nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], -1)
        where: tuple[Any, ...] = (Ellipsis, *cell)
        out[where] = positions[np.where(nan.any(-1), last_nan, first)]
    return out


def adaptive_max_pool_backward(grad_output: Tensor, self: Tensor, indices: Tensor,
                               k: int) -> Tensor:
    """adaptive_max_pool{2,3}d_backward: each output's grad added at its index (windows
    may share their largest element)."""
    lead = int(np.prod(self.shape[:self.ndim - k]))
    out = np.zeros((lead, int(np.prod(self.shape[self.ndim - k:]))), grad_output.dtype.np)
    idx = indices._data.reshape(lead, -1)
    np.add.at(out, (np.arange(lead)[:, None], idx), grad_output._data.reshape(lead, -1))
    return record(SPECS[k][1], common.new(out.reshape(self.shape), grad_output.dtype,
                                          grad_output.device),
                  [grad_output, self], indices=indices, self_shape=tuple(self.shape))


def _adaptive_max(op: str, k: int, input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    sizes = [output_size] * k if isinstance(output_size, int) else list(output_size)
    if len(sizes) != k:
        raise RuntimeError(messages.adaptive_max_output_size(op, k))
    if any(o < 0 for o in sizes):
        raise RuntimeError(messages.negative_dimension(
            next(o for o in sizes if o < 0), [*input.shape[:input.ndim - k], *sizes]))
    if input.ndim not in (k + 1, k + 2) or 0 in input.shape[-k:] or 0 in sizes:
        raise NotImplementedError(messages.pool_input_not_modelled(op))
    idx = _argmax(input._data, sizes)
    values = np.take_along_axis(input._data.reshape(*input.shape[:-k], -1),
                                idx.reshape(*idx.shape[:-k], -1), -1).reshape(idx.shape)
    indices = common.new(idx, dtypes.int64, input.device)
    out = record(SPECS[k][0], common.new(values, input.dtype, input.device), [input],
                 result1=indices)
    return out, indices


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Any:
    out = _adaptive_max("adaptive_max_pool2d", 2, input, _with_default(output_size, input, 2))
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Any:
    out = _adaptive_max("adaptive_max_pool3d", 3, input, _with_default(output_size, input, 3))
    return out if return_indices else out[0]


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Any:
    """ATen's composite: adaptive_max_pool2d of input.unsqueeze(-2) to (1, output_size)."""
    sizes = [output_size] if isinstance(output_size, int) else list(output_size)
    if len(sizes) != 1:
        raise RuntimeError(messages.pool1d_argument("adaptive_max_pool1d", "output_size",
                                                    len(sizes)))
    if input.ndim not in (2, 3):
        raise RuntimeError(messages.pool1d_dims("adaptive_max_pool1d", input.ndim))
    out, idx = _adaptive_max("adaptive_max_pool2d", 2, views.unsqueeze(input, -2),
                             [1, sizes[0]])
    out, idx = views.squeeze(out, -2), views.squeeze(idx, -2)
    return (out, idx) if return_indices else out
