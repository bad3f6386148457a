"""F.pad's modes 'reflect' and 'replicate' (ATen's reflection_pad{1,2,3}d and
replication_pad{1,2,3}d), each with its backward op, so a create_graph grad's node is torch's
ReflectionPad2DBackwardBackward0 and the like; and 'circular' (ATen's composite _pad_circular:
slices copied in place, so its graph is CopySlices over SliceBackward0 nodes).

Each padded dimension maps every output position to one input position (the kernels' index
arithmetic, ReflectionPad.cpp / ReplicationPadding.cpp, negative padding cropping first): the
forward gathers along those maps, the backward scatter-adds the grad back along them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import inplace, views


def _index_map(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """The input position of each output position along one dimension."""
    j = np.arange(size + before + after)
    shift = max(0, -before) - max(0, before)   # i_start - o_start
    if mode == "reflect":
        ip = np.where(j < before, 2 * before - j,
                      np.where(j < size + before, j, 2 * (size + before - 1) - j))
    else:   # replicate
        ip = np.minimum(np.maximum(before, j), size + before - 1)
    return ip + shift


def _maps(mode: str, shape: Sequence[int], padding: Sequence[int]) -> tuple[np.ndarray, ...]:
    """One index map per padded dimension, outermost first (padding names the last first)."""
    k = len(padding) // 2
    return tuple(_index_map(mode, shape[len(shape) - k + i], padding[2 * (k - 1 - i)],
                            padding[2 * (k - 1 - i) + 1]) for i in range(k))


def _where(maps: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    """The index of the padded (trailing) dimensions' positions, every leading one whole."""
    return (Ellipsis, *np.ix_(*maps))


def _gather(a: np.ndarray, maps: tuple[np.ndarray, ...]) -> np.ndarray:
    return a[_where(maps)]


def _scatter_add(g: np.ndarray, shape: Sequence[int], maps: tuple[np.ndarray, ...]
                 ) -> np.ndarray:
    out = np.zeros(tuple(shape), dtype=g.dtype)
    np.add.at(out, _where(maps), g)
    return out


def _names(mode: str, k: int) -> tuple[str, str]:
    stem = f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}D"
    return f"{stem}Backward0", f"{stem}BackwardBackward0"


def _spec(mode: str, k: int) -> OpSpec:
    name, _ = _names(mode, k)
    return OpSpec(name, ("self",), {"self": ("self",)},
                  lambda c, g: [pad_backward(g, c.self, c.padding, c.mode)],
                  jvp=lambda c: mode_pad(c.self_t, c.padding, c.mode))


def _backward_spec(mode: str, k: int) -> OpSpec:
    # derivatives.yaml: grad_output: <mode>_pad(grad, padding); self: zeros_like(self);
    # result: <mode>_pad_backward(grad_output_t, self_p, padding). No tensor is saved.
    _, name = _names(mode, k)
    return OpSpec(name, ("grad_output", "self"), {},
                  lambda c, g: c.grads(lambda: mode_pad(g, c.padding, c.mode),
                                       lambda: common.new(np.zeros(c.self_shape), g.dtype,
                                                          g.device)),
                  jvp=lambda c: pad_backward(c.grad_output_t, c.self, c.padding, c.mode),
                  jvp_reads=("grad_output",))


SPECS = {(m, k): (_spec(m, k), _backward_spec(m, k))
         for m in ("reflect", "replicate") for k in (1, 2, 3)}


def _check(self: Tensor, padding: Sequence[int], mode: str) -> None:
    """padding::check_valid_input and the kernels' checks (ReflectionPad.cpp)."""
    k = len(padding) // 2
    shape = list(self.shape)
    batch = self.ndim == k + 2
    if any(n == 0 for n in shape[int(batch):]):
        raise RuntimeError(messages.pad_input_dims(k, shape))
    if mode == "reflect":
        for i in range(k):   # W (argument #4), H (#6), D (#8)
            dim = self.ndim - 1 - i
            before, after = padding[2 * i], padding[2 * i + 1]
            if not (before < shape[dim] and after < shape[dim]):
                raise RuntimeError(messages.reflect_pad_too_large(4 + 2 * i, before, after,
                                                                  dim, shape))
    for i in range(k):
        dim = self.ndim - 1 - i
        if shape[dim] + padding[2 * i] + padding[2 * i + 1] < 1:
            if k != 1:
                raise NotImplementedError(messages.pad_output_empty_not_modelled(mode))
            raise RuntimeError(messages.pad_output_too_small(
                shape[dim], shape[dim] + padding[0] + padding[1]))


def mode_pad(self: Tensor, padding: Sequence[int], mode: str) -> Tensor:
    """reflection_pad{k}d / replication_pad{k}d, k = len(padding) / 2."""
    padding = list(padding)
    k = len(padding) // 2
    _check(self, padding, mode)
    out = _gather(self._data, _maps(mode, self.shape, padding))
    return record(SPECS[mode, k][0], common.new(out, self.dtype, self.device), [self],
                  padding=padding, mode=mode)


def pad_backward(grad_output: Tensor, self: Tensor, padding: Sequence[int],
                 mode: str) -> Tensor:
    """reflection_pad{k}d_backward / replication_pad{k}d_backward: the grad summed back
    onto the input positions each output position copied."""
    k = len(padding) // 2
    arr = _scatter_add(grad_output._data, self.shape, _maps(mode, self.shape, padding))
    out = common.new(arr, grad_output.dtype, grad_output.device)
    return record(SPECS[mode, k][1], out, [grad_output, self], padding=list(padding),
                  mode=mode, self_shape=tuple(self.shape))


def pad_circular(self: Tensor, padding: Sequence[int]) -> Tensor:
    """PadNd.cpp _pad_circular: the input (cropped where a padding is negative) copied into
    the middle of an empty result, then, dimension by dimension from the last, the result's
    own slices copied into its margins (the left margin from the right end of what is
    written, the right margin from its left end), each a copy_ into a slice: CopySlices."""
    shape = list(self.shape)
    k = len(padding) // 2
    lead = len(shape) - k   # 1 unbatched or 2 (pad() dispatches nothing else here)
    out_shape = list(shape)
    for i in range(k):
        left, right = padding[2 * (k - i - 1)], padding[2 * (k - i - 1) + 1]
        size = shape[lead + i]
        out_shape[lead + i] = size + left + right
        if not (left <= size and right <= size):
            raise RuntimeError(messages.PAD_CIRCULAR_WRAPS)
        if out_shape[lead + i] < 0:
            raise RuntimeError(messages.PAD_CIRCULAR_EMPTY)
    # self.new_empty: memory nothing reads before the copies below write all of it
    out = common.new(np.zeros(out_shape), self.dtype, self.device)
    out_slice, in_slice = out, self
    for i in range(k):   # padding[2i:2i+2] is dimension -i-1's
        dim = k - i + lead - 1
        left, right = padding[2 * i], padding[2 * i + 1]
        out_slice = views.slice(out_slice, dim, max(left, 0), out_shape[dim] - max(right, 0))
        in_slice = views.slice(in_slice, dim, max(-left, 0), shape[dim] - max(-right, 0))
    inplace.copy_(out_slice, in_slice)
    for i in range(k):   # corners are written more than once when k > 1, as in ATen
        dim = k - i + lead - 1
        left, right = padding[2 * i], padding[2 * i + 1]
        n = out_shape[dim]
        if left > 0:
            inplace.copy_(views.slice(out, dim, 0, left),
                          views.slice(out, dim, n - left - max(right, 0), n - max(right, 0)))
        if right > 0:
            inplace.copy_(views.slice(out, dim, n - right, n),
                          views.slice(out, dim, max(left, 0), max(left, 0) + right))
    return out


def pad(input: Tensor, pad: Sequence[int], mode: str, value: float | None) -> Tensor:
    """at::_pad_enum past its constant case: the mode, the padding's length, the value,
    then the op of the padding's length and the input's rank."""
    k = len(pad) // 2
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(messages.pad_mode_unrecognised(mode))
    if len(pad) % 2:
        raise RuntimeError(messages.PAD_ODD)
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(messages.pad_too_long(len(pad), input.ndim))
    if value is not None and value != 0:
        raise RuntimeError(messages.pad_mode_value(mode))
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(messages.pad_not_supported(len(pad), input.ndim))
    if mode == "circular":
        return pad_circular(input, list(pad))
    return mode_pad(input, pad, mode)
