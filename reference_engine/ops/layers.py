"""The layers of torch.nn.functional (registry rows `nn.functional.<name>`): linear, pad
(its other modes: ops/padding.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, inplace_ops, linalg, padding
from .basic import views


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """As ATen: addmm for a 2-D input with bias; other contiguous inputs with bias are
    flattened to 2-D, addmm'd and viewed back; without bias, matmul."""
    if input.ndim == 2 and bias is not None:
        return linalg.addmm(bias, input, views.t(weight))
    if bias is not None and input.is_contiguous():
        # (ATen's _flatten_nd_linear: the rows' product, not -1, which a 0 in_features
        # would make ambiguous)
        rows = int(np.prod(input.shape[:-1]))
        flat = views.reshape(input, (rows, input.shape[-1]))
        out = linalg.addmm(bias, flat, views.t(weight))
        return views.view(out, (*input.shape[:-1], weight.shape[0]))
    out = linalg.matmul(input, views.t(weight))
    return out if bias is None else inplace_ops.add_(out, bias)


# ---- pad (mode 'constant': constant_pad_nd) -------------------------------------------

def _constant_pad_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """constant_pad_nd_backward: the grad cropped back, constant_pad_nd(grad, -pad)."""
    return [constant_pad_nd(g, [-p for p in c.pad], 0)]


CONSTANT_PAD_ND = OpSpec("ConstantPadNdBackward0", ("self",), backward=_constant_pad_backward,
                         jvp=lambda c: constant_pad_nd(c.self_t, c.pad, 0))


def constant_pad_nd(self: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """pad[2k], pad[2k+1] widen (or, negative, crop) dimension -k-1 at its start and end."""
    if len(pad) % 2:
        raise RuntimeError(messages.PAD_ODD)
    if len(pad) > 2 * self.ndim:
        raise RuntimeError(messages.pad_too_long(len(pad), self.ndim))
    a = self._data
    crop: list[slice] = [slice(None)] * a.ndim
    widths = [(0, 0)] * a.ndim
    for k in range(len(pad) // 2):
        d = a.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        crop[d] = slice(max(-before, 0), a.shape[d] - max(-after, 0))
        widths[d] = (max(before, 0), max(after, 0))
    out = np.pad(a[tuple(crop)], widths, constant_values=value)
    return record(CONSTANT_PAD_ND, common.new(out, self.dtype, self.device), [self],
                  pad=list(pad))


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    if mode != "constant":   # reflect, replicate (ops/padding.py)
        return padding.pad(input, pad, mode, value)
    return constant_pad_nd(input, pad, 0.0 if value is None else value)


# ---- pixel_shuffle, pixel_unshuffle, channel_shuffle: each one's backward the inverse -----

def _rearranged(spec: OpSpec, self: Tensor, shape: tuple[int, ...], axes: tuple[int, ...],
                out_shape: tuple[int, ...], **attrs: Any) -> Tensor:
    """self reshaped to `shape`, its axes permuted, reshaped to `out_shape` (contiguous)."""
    out = np.ascontiguousarray(self._data.reshape(shape).transpose(axes)).reshape(out_shape)
    return record(spec, common.new(out, self.dtype, self.device), [self], **attrs)


PIXEL_SHUFFLE = OpSpec("PixelShuffleBackward0", ("self",),
                       backward=lambda c, g: [pixel_unshuffle(g, c.upscale_factor)],
                       jvp=lambda c: pixel_shuffle(c.self_t, c.upscale_factor))
PIXEL_UNSHUFFLE = OpSpec("PixelUnshuffleBackward0", ("self",),
                         backward=lambda c, g: [pixel_shuffle(g, c.downscale_factor)],
                         jvp=lambda c: pixel_unshuffle(c.self_t, c.downscale_factor))
CHANNEL_SHUFFLE = OpSpec("ChannelShuffleBackward0", ("self",),
                         backward=lambda c, g: [channel_shuffle(g, g.shape[1] // c.groups)],
                         jvp=lambda c: channel_shuffle(c.self_t, c.groups))


def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *batch, c, h, w = self.shape
    n = len(batch)
    return _rearranged(PIXEL_SHUFFLE, self, (*batch, c // (r * r), r, r, h, w),
                       (*range(n), n, n + 3, n + 1, n + 4, n + 2),
                       (*batch, c // (r * r), h * r, w * r), upscale_factor=r)


def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *batch, c, h, w = self.shape
    n = len(batch)
    return _rearranged(PIXEL_UNSHUFFLE, self, (*batch, c, h // r, r, w // r, r),
                       (*range(n), n, n + 2, n + 4, n + 1, n + 3),
                       (*batch, c * r * r, h // r, w // r), downscale_factor=r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) -> the channels of each group interleaved: (N, g, C/g, *) transposed."""
    n, c, *rest = input.shape
    return _rearranged(CHANNEL_SHUFFLE, input, (n, groups, c // groups, *rest),
                       (0, 2, 1, *range(3, 3 + len(rest))), tuple(input.shape), groups=groups)
