"""F.unfold: ATen's im2col, the sliding blocks of a batch of images as columns, and its
backward col2im (F.fold's op), each the other's backward: Im2ColBackward0 and
Col2ImBackward0, as torch's.

Both are one index map: for each column entry (channel, kernel row, kernel column, block) the
position in the zero-padded image it reads (im2col gathers, col2im scatter-adds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common

Pair = tuple[int, int]


def _pair(name: str, value: Any) -> Pair:
    values = [value] * 2 if isinstance(value, int) else list(value)
    if len(values) != 2:
        raise RuntimeError(messages.im2col_pair(name, len(values)))
    return values[0], values[1]


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _index(size: Pair, kernel: Pair, dilation: Pair, padding: Pair, stride: Pair
           ) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns in the padded image of every (kernel row, kernel column, block)."""
    axes = []
    for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=True):
        blocks = np.arange(_blocks(n, k, d, p, s))
        axes.append(np.arange(k)[:, None] * d + blocks[None, :] * s)   # (k, blocks)
    (rows, cols) = axes
    h = rows[:, None, :, None]   # (kh, 1, bh, 1)
    w = cols[None, :, None, :]   # (1, kw, 1, bw)
    h, w = np.broadcast_arrays(h, w)
    kh, kw, bh, bw = h.shape
    return h.reshape(kh * kw, bh * bw), w.reshape(kh * kw, bh * bw)


def _attrs(kernel: Pair, dilation: Pair, padding: Pair, stride: Pair) -> dict[str, Pair]:
    return {"kernel_size": kernel, "dilation": dilation, "padding": padding, "stride": stride}


IM2COL = OpSpec("Im2ColBackward0", ("self",),
                backward=lambda c, g: [col2im(g, c.image_size, c.kernel_size, c.dilation,
                                              c.padding, c.stride)],
                jvp=lambda c: im2col(c.self_t, c.kernel_size, c.dilation, c.padding,
                                     c.stride))
COL2IM = OpSpec("Col2ImBackward0", ("self",),
                backward=lambda c, g: [im2col(g, c.kernel_size, c.dilation, c.padding,
                                              c.stride)],
                jvp=lambda c: col2im(c.self_t, c.output_size, c.kernel_size, c.dilation,
                                     c.padding, c.stride))


def im2col(self: Tensor, kernel_size: Any, dilation: Any, padding: Any, stride: Any
           ) -> Tensor:
    """(N, C, H, W) or (C, H, W) -> (N, C kh kw, L), L the number of blocks."""
    kernel, dil, pad, st = (_pair(n, v) for n, v in (("kernel_size", kernel_size),
                                                      ("dilation", dilation),
                                                      ("padding", padding),
                                                      ("stride", stride)))
    _check(self, kernel, dil, pad, st)
    a = self._data
    size = (a.shape[-2], a.shape[-1])
    widths = [(0, 0)] * (a.ndim - 2) + [(pad[0], pad[0]), (pad[1], pad[1])]
    h, w = _index(size, kernel, dil, pad, st)
    cols = np.pad(a, widths)[..., h, w]   # (*, C, kh kw, L)
    out = cols.reshape(*a.shape[:-3], a.shape[-3] * h.shape[0], h.shape[1])
    return record(IM2COL, common.new(out, self.dtype, self.device), [self],
                  image_size=size, **_attrs(kernel, dil, pad, st))


def col2im(self: Tensor, output_size: Sequence[int], kernel_size: Any, dilation: Any,
           padding: Any, stride: Any) -> Tensor:
    """im2col's adjoint: each column entry added back at the image position it came from."""
    size, kernel, dil, pad, st = (_pair(n, v) for n, v in (
        ("output_size", output_size), ("kernel_size", kernel_size), ("dilation", dilation),
        ("padding", padding), ("stride", stride)))
    h, w = _index(size, kernel, dil, pad, st)
    a = self._data
    channels = a.shape[-2] // h.shape[0]
    lead = a.shape[:-2]
    cols = a.reshape(*lead, channels, h.shape[0], h.shape[1])
    image = np.zeros((*lead, channels, size[0] + 2 * pad[0], size[1] + 2 * pad[1]), a.dtype)
    where: tuple[Any, ...] = (Ellipsis, h, w)
    np.add.at(image, where, cols)
    out = image[..., pad[0]:pad[0] + size[0], pad[1]:pad[1] + size[1]]
    return record(COL2IM, common.new(out, self.dtype, self.device), [self],
                  output_size=size, **_attrs(kernel, dil, pad, st))


def _check(self: Tensor, kernel: Pair, dil: Pair, pad: Pair, st: Pair) -> None:
    """im2col_shape_check (Im2Col.h), in its order."""
    for check, what, pair, ok in (("greater than zero", "kernel size", kernel, min(kernel) > 0),
                                  ("greater than zero", "dilation", dil, min(dil) > 0),
                                  ("non-negative", "padding", pad, min(pad) >= 0),
                                  ("greater than zero", "stride", st, min(st) > 0)):
        if not ok:
            raise RuntimeError(messages.im2col_argument(check, what, pair))
    if self.ndim == 2:   # its batch dim read at -3
        raise IndexError(messages.dim_out_of_range(-2, 1, 2))
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(messages.im2col_input(list(self.shape)))
    blocks = [_blocks(n, k, d, p, s) for n, k, d, p, s in
              zip(self.shape[-2:], kernel, dil, pad, st, strict=True)]
    if min(blocks) < 1:
        raise RuntimeError(messages.im2col_too_small(list(self.shape[-2:]), kernel, dil, pad,
                                                     blocks))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """F.unfold: im2col with each argument a pair."""
    return im2col(input, kernel_size, dilation, padding, stride)
