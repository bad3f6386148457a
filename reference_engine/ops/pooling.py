"""Average pooling: F.avg_pool{1,2,3}d and F.adaptive_avg_pool{1,2,3}d (ATen's
avg_pool2d/3d, _adaptive_avg_pool2d/3d, and the composites around them: the 1-d forms
unsqueeze to 2-d and squeeze back, an adaptive pool to one element is a mean), each with its
backward op, so a create_graph grad's node is torch's AvgPool2DBackwardBackward0 and the like.

Every window is a box, and its divisor (the window's size, its size inside the input, or
divisor_override) is a product over the spatial axes, so a pooling is separable: per axis a
0/1 matrix of which input positions each output window sums (AvgPoolKernel.cpp's and
AdaptiveAvgPoolKernel.cpp's start and end indices), then a division by the divisors. The
backward divides the grad by the divisors and sums it back through the same matrices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, layers, moments
from .basic import elementwise as ops
from .basic import powers, views

Axis = tuple[np.ndarray, np.ndarray]   # an axis's (out, in) 0/1 window matrix, its counts


def _apply(a: np.ndarray, mats: Sequence[np.ndarray]) -> np.ndarray:
    """a's last len(mats) axes mapped through the 0/1 matrices (out, in): each output the
    sum of its row's elements only, as torch's kernels sum a window (a product with the
    matrix, 0 * nan, would spread a NaN or an infinity to every window of its line)."""
    k = len(mats)
    for i, m in enumerate(mats):
        axis = a.ndim - k + i
        moved = np.moveaxis(a, axis, -1)
        sums = [moved[..., row.astype(bool)].sum(-1) for row in m]
        a = np.moveaxis(np.stack(sums, -1) if sums else moved[..., :0], -1, axis)
    return a


def _pool(a: np.ndarray, axes: Sequence[Axis], override: int | None) -> np.ndarray:
    sums = _apply(a, [m for m, _ in axes])
    return sums / _divisors(axes, override).astype(a.dtype)


def _unpool(g: np.ndarray, axes: Sequence[Axis], override: int | None) -> np.ndarray:
    return _apply(g / _divisors(axes, override).astype(g.dtype), [m.T for m, _ in axes])


def _divisors(axes: Sequence[Axis], override: int | None) -> np.ndarray:
    if override is not None:
        return np.array(float(override))
    out = np.ones(())
    for _, counts in axes:
        out = np.multiply.outer(out, counts)
    return out


def _window_matrix(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    i = np.arange(size)
    return ((i >= starts[:, None]) & (i < ends[:, None])).astype(np.float64)


def adaptive_axis(size: int, out: int) -> Axis:
    """start_index / end_index of AdaptiveAvgPoolKernel: floor(o I / O), ceil((o+1) I / O)."""
    o = np.arange(out)
    starts, ends = (o * size) // out, -((-(o + 1) * size) // out)
    return _window_matrix(starts, ends, size), (ends - starts).astype(np.float64)


def _avg_axis(size: int, k: int, s: int, p: int, ceil_mode: bool,
              count_include_pad: bool) -> Axis:
    """AvgPoolKernel: the window o*s - p .. +k, its pool size clipped to the padded input,
    its divisor counting the padding or not."""
    o = np.arange(output_size(size, k, s, p, ceil_mode))
    starts = o * s - p
    ends = np.minimum(starts + k, size + p)
    pool = ends - starts
    starts, ends = np.maximum(starts, 0), np.minimum(ends, size)
    counts = pool if count_include_pad else ends - starts
    return _window_matrix(starts, ends, size), counts.astype(np.float64)


def output_size(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    """pooling_output_shape (Pool.h), dilation 1."""
    out = (size + 2 * p - (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


# ---- the ops and their backward ops ------------------------------------------------------

def _axes(c: Any, shape: Sequence[int]) -> list[Axis]:
    k = len(c.dims)
    spatial = shape[len(shape) - k:]
    if c.kind == "adaptive":
        return [adaptive_axis(n, o) for n, o in zip(spatial, c.dims, strict=True)]
    return [_avg_axis(n, kk, ss, pp, c.ceil_mode, c.count_include_pad)
            for n, (kk, ss, pp) in zip(spatial, c.dims, strict=True)]


def _spec(name: str) -> tuple[OpSpec, OpSpec]:
    forward = OpSpec(f"{name}Backward0", ("self",), {"self": ("self",)},
                     lambda c, g: [pool_backward(g, c.self, c.attrs)],
                     jvp=lambda c: pool(c.self_t, c.attrs))
    backward = OpSpec(f"{name}BackwardBackward0", ("grad_output", "self"), {},
                      lambda c, g: c.grads(lambda: pool(g, c.attrs),
                                           lambda: common.new(np.zeros(c.self_shape),
                                                              g.dtype, g.device)),
                      jvp=lambda c: pool_backward(c.grad_output_t, c.self, c.attrs),
                      jvp_reads=("grad_output",))
    return forward, backward


SPECS = {(kind, k): _spec(f"{'AdaptiveAvgPool' if kind == 'adaptive' else 'AvgPool'}{k}D")
         for kind in ("adaptive", "avg") for k in (2, 3)}


class _Attrs:
    """A pooling's parameters: per spatial axis (kernel, stride, padding), or the adaptive
    output sizes, and the flags."""

    def __init__(self, kind: str, dims: list[Any], ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        self.kind, self.dims, self.ceil_mode = kind, dims, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override


def pool(self: Tensor, attrs: _Attrs) -> Tensor:
    axes = _axes(attrs, self.shape)
    out = _pool(self._data, axes, attrs.divisor_override)
    spec = SPECS[attrs.kind, len(attrs.dims)][0]
    return record(spec, common.new(out, self.dtype, self.device), [self], attrs=attrs)


def pool_backward(grad_output: Tensor, self: Tensor, attrs: _Attrs) -> Tensor:
    axes = _axes(attrs, self.shape)
    arr = _unpool(grad_output._data, axes, attrs.divisor_override)
    spec = SPECS[attrs.kind, len(attrs.dims)][1]
    return record(spec, common.new(arr, grad_output.dtype, grad_output.device),
                  [grad_output, self], attrs=attrs, self_shape=tuple(self.shape))


# ---- the functions ------------------------------------------------------------------------

def int_list(op: str, name: str, value: Any, k: int, omittable: bool = False) -> list[int]:
    """An int or a list of 1 or k ints, as k ints (an omitted stride: empty)."""
    values = [value] if isinstance(value, int) else list(value)
    if not (len(values) in (1, k) or (omittable and not values)):
        raise RuntimeError(messages.pool_tuple(op, name, k))
    return values * k if len(values) == 1 else values


def _avg_pool(op: str, k: int, input: Tensor, kernel_size: Any, stride: Any,
              padding: Any, ceil_mode: bool, count_include_pad: bool,
              divisor_override: int | None) -> Tensor:
    """avg_pool{2,3}d's checks in ATen's order, then the pooling."""
    kernel = int_list(op, "kernel_size", kernel_size, k)
    steps = int_list(op, "stride", [] if stride is None else stride, k, omittable=True) or kernel
    pads = int_list(op, "padding", padding, k)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(messages.POOL_DIVISOR_ZERO)
    if k == 3 and input.ndim not in (4, 5):
        raise RuntimeError(messages.POOL3D_INPUT)
    sizes = []
    for n, kk, ss, pp in zip(input.shape[-k:], kernel, steps, pads, strict=True):
        if pp < 0:
            raise RuntimeError(messages.pool_pad_negative(pp))
        if pp > kk // 2:
            raise RuntimeError(messages.pool_pad_half(pp, kk))
        sizes.append(output_size(n, kk, ss, pp, ceil_mode))
    batch = input.ndim == k + 2
    if input.ndim not in (k + 1, k + 2) or 0 in input.shape[int(batch):]:
        if k == 3:
            raise RuntimeError(messages.POOL3D_INPUT)
        raise RuntimeError(messages.pool2d_input(list(input.shape)))
    if any(o < 1 for o in sizes):
        raise RuntimeError(messages.pool_output_small(input.shape[-k - 1],
                                                      list(input.shape[-k:]), sizes))
    return pool(input, _Attrs("avg", list(zip(kernel, steps, pads, strict=True)), ceil_mode,
                              count_include_pad, divisor_override))


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def one_int(op: str, name: str, value: Any) -> int:
    """An int[1] argument (an int, or a list of one)."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) != 1:
        raise RuntimeError(messages.pool1d_argument(op, name, len(values)))
    return int(values[0])


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """ATen's composite: avg_pool2d of input.unsqueeze(-2) with a 1-high window."""
    kernel = one_int("avg_pool1d", "kernel_size", kernel_size)
    step = kernel if stride is None or (not isinstance(stride, int) and not list(stride)) \
        else one_int("avg_pool1d", "stride", stride)
    pad = one_int("avg_pool1d", "padding", padding)
    if input.ndim not in (2, 3):
        raise RuntimeError(messages.pool1d_dims("avg_pool1d", input.ndim))
    out = avg_pool2d(views.unsqueeze(input, -2), [1, kernel], [1, step], [0, pad], ceil_mode,
                     count_include_pad)
    return views.squeeze(out, -2)


def _adaptive(op: str, k: int, input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool{2,3}d: to one element a mean over the spatial dims (ATen's
    shortcut), else _adaptive_avg_pool{2,3}d."""
    sizes = [output_size] * k if isinstance(output_size, int) else list(output_size)
    if len(sizes) != k:
        raise RuntimeError(messages.adaptive_output_size(op, k))
    if any(o < 0 for o in sizes):
        raise RuntimeError(messages.adaptive_negative(op, sizes))
    if all(o == 1 for o in sizes):
        return moments.mean(input, list(range(-1, -k - 1, -1)), True)
    if input.ndim not in (k + 1, k + 2) or 0 in input.shape[-k:]:
        raise NotImplementedError(messages.pool_input_not_modelled(op))
    return pool(input, _Attrs("adaptive", sizes))


def with_default_size(output_size: Any, input: Tensor, k: int) -> Any:
    """F.adaptive_avg_pool{2,3}d's _list_with_default: None keeps the input's size."""
    if isinstance(output_size, int):
        return output_size
    if input.ndim <= len(output_size):
        raise ValueError(messages.adaptive_input_dims(len(output_size) + 1))
    return [n if o is None else o for o, n in
            zip(output_size, input.shape[input.ndim - len(output_size):], strict=True)]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive("adaptive_avg_pool2d", 2, input, with_default_size(output_size, input, 2))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive("adaptive_avg_pool3d", 3, input, with_default_size(output_size, input, 3))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """ATen's composite: adaptive_avg_pool2d of input.unsqueeze(-2) to (1, output_size)."""
    size = one_int("adaptive_avg_pool1d", "output_size", output_size)
    if input.ndim not in (2, 3):
        raise RuntimeError(messages.pool1d_dims("adaptive_avg_pool1d", input.ndim))
    out = _adaptive("adaptive_avg_pool2d", 2, views.unsqueeze(input, -2), [1, size])
    return views.squeeze(out, -2)


# ---- local_response_norm: F's Python composite over avg_pool2d/3d -------------------------

def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """torch/nn/functional.py's code, line for line, in the engine's ops (the functions its
    Tensor methods are), so its graph is torch's: MulBackward0, ConstantPadNdBackward0,
    AvgPool2D/3DBackward0, ..."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(messages.local_response_norm_dims(dim))
    if input.numel() == 0:
        return input
    div = ops.mul(input, input)
    if dim == 3:
        div = views.unsqueeze(div, 1)
        div = layers.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = views.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = list(input.shape)
        div = views.view(div, [sizes[0], 1, sizes[1], sizes[2], -1])
        div = layers.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = views.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = views.view(div, sizes)
    div = powers.pow(ops.add(ops.mul(div, alpha), k), beta)   # div.mul(alpha).add(k).pow(beta)
    return ops.div(input, div)
