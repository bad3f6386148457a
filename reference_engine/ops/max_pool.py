"""Max pooling: F.max_pool{1,2,3}d (ATen's max_pool2d/3d_with_indices, the 1-d form and the
no-indices forms composites over them) and F.adaptive_max_pool{1,2,3}d (ATen's
adaptive_max_pool2d/3d, the 1-d form unsqueezing to 2-d), values and indices, with their
backward ops (MaxPool2DWithIndicesBackwardBackward0, AdaptiveMaxPool2DBackwardBackward0 ...)
and derivatives.yaml's jvps. Max unpooling (ops/max_unpool.py) reads indices as these write
them.

Both take each window's first largest element, a NaN winning (MaxPoolKernel.cpp and
AdaptiveMaxPoolKernel.cpp: `val > maxval || isnan(val)`), and its index into the flattened
spatial dims; they differ in the windows. A fixed window is o * stride - padding + k *
dilation per axis, its positions outside the input skipped (the last NaN wins); the adaptive
windows are average pooling's (ops/pooling.py). The backward of both adds each output's grad
at its index, and its backward gathers at the indices (max_pool_double_backward)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, shape_views
from .basic import indexing, views
from .pooling import adaptive_axis, int_list, one_int, with_default_size

Backward = Callable[[Tensor, Tensor, Tensor, int], Tensor]


def gather_flat(t: Tensor, indices: Tensor, k: int) -> Tensor:
    """max_pool_double_backward (FunctionsManual.cpp): t's spatial dims flattened, gathered
    at the indices, viewed as them; also the values' jvp."""
    size = [*indices.shape[:indices.ndim - k], -1]
    flat = views.view(shape_views.contiguous(t), size)
    out = indexing.gather(flat, -1, views.view(indices, size))
    return views.view(out, list(indices.shape))


def _specs(name: str, k: int, backward: Backward) -> tuple[OpSpec, OpSpec]:
    """The op of a pooling that returns indices (`name`Backward0) and of its backward
    (`name`BackwardBackward0), `backward` the backward op."""
    forward = OpSpec(f"{name}Backward0", ("self",), {"self": ("self", "result1")},
                     lambda c, g: [backward(g, c.self, c.result1, k)],
                     saved_outputs=("result1",),
                     jvp=lambda c: gather_flat(c.self_t, c.result1, k))
    double = OpSpec(f"{name}BackwardBackward0", ("grad_output", "self"),
                    {"grad_output": ("indices",)},
                    lambda c, g: c.grads(lambda: gather_flat(g, c.indices, k),
                                         lambda: common.new(np.zeros(c.self_shape),
                                                            g.dtype, g.device)),
                    jvp=lambda c: backward(c.grad_output_t, c.self, c.indices, k),
                    jvp_reads=("grad_output",))
    return forward, double


def _add_at_indices(spec: OpSpec, grad_output: Tensor, self: Tensor, indices: Tensor,
                    k: int) -> Tensor:
    """A backward op of `spec`: each output's grad added at its index (windows may share
    their largest element)."""
    lead = int(np.prod(self.shape[:self.ndim - k]))
    out = np.zeros((lead, int(np.prod(self.shape[self.ndim - k:]))), grad_output.dtype.np)
    idx = indices._data.reshape(lead, -1)
    np.add.at(out, (np.arange(lead)[:, None], idx), grad_output._data.reshape(lead, -1))
    return record(spec, common.new(out.reshape(self.shape), grad_output.dtype,
                                   grad_output.device),
                  [grad_output, self], indices=indices, self_shape=tuple(self.shape))


def max_pool_backward(grad_output: Tensor, self: Tensor, indices: Tensor, k: int) -> Tensor:
    """max_pool{2,3}d_with_indices_backward."""
    return _add_at_indices(SPECS[k][1], grad_output, self, indices, k)


def adaptive_max_pool_backward(grad_output: Tensor, self: Tensor, indices: Tensor,
                               k: int) -> Tensor:
    """adaptive_max_pool{2,3}d_backward."""
    return _add_at_indices(ADAPTIVE_SPECS[k][1], grad_output, self, indices, k)


SPECS = {k: _specs(f"MaxPool{k}DWithIndices", k, max_pool_backward) for k in (2, 3)}
ADAPTIVE_SPECS = {k: _specs(f"AdaptiveMaxPool{k}D", k, adaptive_max_pool_backward)
                  for k in (2, 3)}


def _picked(input: Tensor, idx: np.ndarray, k: int) -> tuple[np.ndarray, Tensor]:
    """The values at the flat spatial indices `idx`, and the indices as a tensor."""
    values = np.take_along_axis(input._data.reshape(*input.shape[:-k], -1),
                                idx.reshape(*idx.shape[:-k], -1), -1).reshape(idx.shape)
    return values, common.new(idx, dtypes.int64, input.device)


# ---- fixed windows: F.max_pool1d-3d ----


def output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """pooling_output_shape (Pool.h)."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _window_argmax(a: np.ndarray, dims: Sequence[tuple[int, int, int, int]],
                   sizes: Sequence[int]) -> np.ndarray:
    """The flat spatial index of each window's first largest (or last NaN) element; dims
    per axis (kernel, stride, padding, dilation), sizes the output's."""
    k = len(dims)
    spatial = a.shape[-k:]
    positions, valid = [], np.ones((), bool)
    for i, ((kk, s, p, d), n, o) in enumerate(zip(dims, spatial, sizes, strict=True)):
        pos = (np.arange(o)[:, None] * s - p + np.arange(kk)[None, :] * d)   # (o, kk)
        axes = [1] * (2 * k)
        axes[i], axes[k + i] = o, kk
        pos = pos.reshape(axes)
        valid = valid & (pos >= 0) & (pos < n)
        positions.append(np.clip(pos, 0, n - 1))
    shape = np.broadcast_shapes(*(q.shape for q in positions))
    flat_pos = np.ravel_multi_index([np.broadcast_to(q, shape) for q in positions], spatial)
    windows = flat_pos.reshape(*sizes, -1)
    ok = np.broadcast_to(valid, shape).reshape(*sizes, -1)
    vals = a.reshape(*a.shape[:-k], -1)[..., windows]        # (*lead, *sizes, window)
    nan = np.isnan(vals) & ok
    best = np.where(ok, vals, -np.inf).max(-1, keepdims=True)
    first = np.argmax(ok & (vals == best), -1)
    last_nan = nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], -1)
    pick = np.where(nan.any(-1), last_nan, first)
    return np.take_along_axis(np.broadcast_to(windows, vals.shape), pick[..., None], -1)[..., 0]


def _max_pool(op: str, k: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool) -> tuple[Tensor, Tensor]:
    """max_pool{2,3}d_with_indices: the meta function's checks in ATen's order (argument
    lengths, rank, pooling_output_shape per axis, then pool2d/3d_shape_check), then the
    pooling."""
    kernel = int_list(op, "kernel_size", kernel_size, k)
    steps = int_list(op, "stride", [] if stride is None else stride, k, omittable=True) or kernel
    pads = int_list(op, "padding", padding, k)
    dils = int_list(op, "dilation", dilation, k)
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(messages.POOL2D_RANK if k == 2 else messages.POOL3D_INPUT)
    sizes = []
    for n, kk, ss, pp, dd in zip(input.shape[-k:], kernel, steps, pads, dils, strict=True):
        if ss == 0:
            raise RuntimeError(messages.POOL_STRIDE_ZERO)
        if pp < 0:
            raise RuntimeError(messages.pool_pad_negative(pp))
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(messages.max_pool_pad_half(pp, kk, dd))
        sizes.append(output_size(n, kk, ss, pp, dd, ceil_mode))
    for what, values in (("kernel size", kernel), ("stride", steps), ("dilation", dils)):
        if min(values) <= 0:
            raise RuntimeError(messages.max_pool_positive(what, values))
    if k == 2 and (0 in input.shape[1:] or (input.ndim == 3 and input.shape[0] == 0)):
        raise RuntimeError(messages.pool2d_input(list(input.shape)))
    if k == 3 and 0 in input.shape[input.ndim - 4:]:
        raise RuntimeError(messages.max_pool3d_empty(list(input.shape)))
    if any(kk // 2 < pp for kk, pp in zip(kernel, pads, strict=True)):
        raise RuntimeError(messages.max_pool_pad_kernel_half(kernel, pads))
    if any(o < 1 for o in sizes):
        raise RuntimeError(messages.pool_output_small(input.shape[-k - 1],
                                                      list(input.shape[-k:]), sizes))
    dims = list(zip(kernel, steps, pads, dils, strict=True))
    idx = _window_argmax(input._data, dims, sizes)
    picked, indices = _picked(input, idx, k)
    out = record(SPECS[k][0], common.new(picked, input.dtype, input.device), [input],
                 result1=indices, kernel_size=kernel, stride=steps, padding=pads,
                 dilation=dils, ceil_mode=ceil_mode)
    return out, indices


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    out = _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    out = _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def _check_max_pool1d(input: Tensor, kernel: int, step: int, pad: int, dil: int,
                      ceil_mode: bool) -> None:
    """torch.max_pool1d's own checks (MaxPooling.cpp: the rank, then check_max_pool1d)."""
    shape = input.shape
    if not ((input.ndim == 2 and shape[0] and shape[1])
            or (input.ndim == 3 and shape[1] and shape[2])):
        raise RuntimeError(messages.max_pool1d_input(list(shape)))
    for ok, text in ((kernel > 0, f"kernel_size must be greater than zero, but got {kernel}"),
                     (step > 0, f"stride must be greater than zero, but got {step}"),
                     (pad >= 0, f"padding must be non-negative, but got {pad}"),
                     (pad <= kernel // 2, "padding should be at most half of kernel size, "
                                          f"but got padding={pad} and kernel_size={kernel}"),
                     (dil > 0, f"dilation must be greater than zero, but got {dil}")):
        if not ok:
            raise RuntimeError(messages.max_pool1d_argument(text))
    if pad > ((kernel - 1) * dil + 1) // 2:
        raise RuntimeError(messages.max_pool_pad_half(pad, kernel, dil))
    out = output_size(shape[-1], kernel, step, pad, dil, ceil_mode)
    if out <= 0:
        raise RuntimeError(messages.max_pool1d_argument(f"Invalid computed output size: {out}"))


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """torch.max_pool1d (its checks first) or max_pool1d_with_indices (checkDimRange): both
    max_pool2d_with_indices of input.unsqueeze(-2) with a 1-high window, squeezed back."""
    op = "max_pool1d_with_indices" if return_indices else "max_pool1d"
    kernel = one_int(op, "kernel_size", kernel_size)
    step = kernel if stride is None or (not isinstance(stride, int) and not list(stride)) \
        else one_int(op, "stride", stride)
    pad, dil = one_int(op, "padding", padding), one_int(op, "dilation", dilation)
    if return_indices:
        if input.ndim not in (2, 3):
            raise RuntimeError(messages.pool1d_dims("max_pool1d", input.ndim))
    else:
        _check_max_pool1d(input, kernel, step, pad, dil, ceil_mode)
    out, idx = _max_pool("max_pool2d", 2, views.unsqueeze(input, -2), [1, kernel], [1, step],
                         [0, pad], [1, dil], ceil_mode)
    out, idx = views.squeeze(out, -2), views.squeeze(idx, -2)
    return (out, idx) if return_indices else out


# ---- adaptive windows: F.adaptive_max_pool1d-3d ----


def _adaptive_argmax(a: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """The flat spatial index of each output window's first largest (or last NaN) element."""
    k = len(sizes)
    spatial = a.shape[-k:]
    windows = []
    for n, o in zip(spatial, sizes, strict=True):
        mat, _ = adaptive_axis(n, o)
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


def _adaptive_max(op: str, k: int, input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    sizes = [output_size] * k if isinstance(output_size, int) else list(output_size)
    if len(sizes) != k:
        raise RuntimeError(messages.adaptive_max_output_size(op, k))
    if any(o < 0 for o in sizes):
        raise RuntimeError(messages.negative_dimension(
            next(o for o in sizes if o < 0), [*input.shape[:input.ndim - k], *sizes]))
    if input.ndim not in (k + 1, k + 2) or 0 in input.shape[-k:] or 0 in sizes:
        raise NotImplementedError(messages.pool_input_not_modelled(op))
    idx = _adaptive_argmax(input._data, sizes)
    values, indices = _picked(input, idx, k)
    out = record(ADAPTIVE_SPECS[k][0], common.new(values, input.dtype, input.device),
                 [input], result1=indices)
    return out, indices


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Any:
    out = _adaptive_max("adaptive_max_pool2d", 2, input, with_default_size(output_size, input, 2))
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Any:
    out = _adaptive_max("adaptive_max_pool3d", 3, input, with_default_size(output_size, input, 3))
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
