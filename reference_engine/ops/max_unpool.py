"""Max unpooling: F.max_unpool{1,2,3}d (F's Python functions over ATen's max_unpool2d/3d,
the 1-d form unsqueezing to 2-d): each input element written at its index into the flattened
spatial dims of a zero output. derivatives.yaml: `self: max_pool_double_backward(grad,
indices, k)` (a gather, MaxUnpool2DBackward0 saving the indices), `result: auto_linear`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import views
from .max_pool import gather_flat


def _spec(k: int) -> OpSpec:
    return OpSpec(f"MaxUnpool{k}DBackward0", ("self",), {"self": ("indices",)},
                  lambda c, g: [gather_flat(g, c.indices, k)],
                  jvp=lambda c: _unpool(c.self_t, c.indices, c.output_size))


SPECS = {k: _spec(k) for k in (2, 3)}


def _unpool(input: Tensor, indices: Tensor, output_size: Sequence[int]) -> Tensor:
    """ATen's max_unpool2d/3d: zeros of (*lead, *output_size), input scattered at indices."""
    k = len(output_size)
    lead = input.shape[:input.ndim - k]
    plane = int(np.prod(output_size))
    idx = indices._data.reshape(int(np.prod(lead)), -1)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = idx[(idx < 0) | (idx >= plane)][0]
        raise RuntimeError(messages.max_unpool_index(int(bad), plane))
    out = np.zeros((idx.shape[0], plane), input.dtype.np)
    rows = np.arange(idx.shape[0])[:, None]
    out[rows, idx] = input._data.reshape(idx.shape)
    arr = out.reshape(*lead, *output_size)
    return record(SPECS[k], common.new(arr, input.dtype, input.device), [input],
                  indices=indices, output_size=tuple(output_size))


def _tuple(value: Any, k: int) -> list[int]:
    return [int(value)] * k if isinstance(value, int) else [int(v) for v in value]


def _output_size(input: Tensor, kernel: list[int], stride: list[int], padding: list[int],
                 output_size: Any) -> list[int]:
    """F's _unpool_output_size: the default (n - 1) s + k - 2 p, or a given size within a
    stride of it (ValueError otherwise)."""
    k = len(kernel)
    default = [(input.shape[input.ndim - k + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(k)]
    if output_size is None:
        return default
    sizes = list(output_size)
    if len(sizes) == k + 2:
        sizes = sizes[2:]
    if len(sizes) != k:
        raise ValueError(messages.max_unpool_output_length(k, len(sizes)))
    for d in range(k):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < sizes[d] < high:
            raise ValueError(messages.max_unpool_output_size(output_size, d, low, high))
    return sizes


def _args(k: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
          output_size: Any) -> list[int]:
    kernel = _tuple(kernel_size, k)
    steps = kernel if stride is None else _tuple(stride, k)
    return _output_size(input, kernel, steps, _tuple(padding, k), output_size)


def _check(k: int, input: Tensor, indices: Tensor, size: list[int]) -> None:
    """max_unpooling{2,3}d_shape_check's first checks (the engine models those its samples
    and error inputs meet)."""
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(messages.max_unpool_indices_dtype(indices.dtype.scalar_name))
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(messages.max_unpool_shapes(list(input.shape), list(indices.shape)))
    if input.ndim not in (k + 1, k + 2) or 0 in input.shape[input.ndim - k - 1:]:
        raise RuntimeError(messages.max_unpool_input(k, list(input.shape)))


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    size = _args(2, input, kernel_size, stride, padding, output_size)
    _check(2, input, indices, size)
    return _unpool(input, indices, size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    size = _args(3, input, kernel_size, stride, padding, output_size)
    _check(3, input, indices, size)
    return _unpool(input, indices, size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """F's: max_unpool2d of input.unsqueeze(-1) to (size, 1), squeezed back."""
    size = _args(1, input, kernel_size, stride, padding, output_size)
    x, i = views.unsqueeze(input, -1), views.unsqueeze(indices, -1)
    _check(2, x, i, [*size, 1])
    return views.squeeze(_unpool(x, i, [*size, 1]), -1)
