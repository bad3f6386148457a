"""The arithmetic of an N-d convolution in NumPy, over explicit windows (im2col), with the
two adjoints its backward and the transposed convolution are made of.

A convolution of x (N, C_in, *S) by w (C_out, C_in / g, *K), g groups, reads for each output
position o and kernel offset k the padded input at o * stride + k * dilation (per spatial
axis). `_windows` gathers those reads as an array (N, C, *K, *O); the convolution is then one
contraction with w per group, and its two adjoints are the same contraction transposed:
with respect to x (scatter-adding the windows back into the padded input, then cropping)
and with respect to w (contracting the grad with the windows). The transposed convolution
is the adjoint with respect to x, taken as a forward op (ops/convolution.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class Geometry:
    """stride, padding, dilation (one int per spatial axis) and groups."""

    def __init__(self, stride: Sequence[int], padding: Sequence[int],
                 dilation: Sequence[int], groups: int) -> None:
        self.stride, self.padding = list(stride), list(padding)
        self.dilation, self.groups = list(dilation), groups

    def out_size(self, size: Sequence[int], kernel: Sequence[int]) -> list[int]:
        """The number of windows per axis (ConvUtils.h conv_output_size)."""
        return [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, s, p, d in
                zip(size, kernel, self.stride, self.padding, self.dilation, strict=True)]

    def transposed_size(self, size: Sequence[int], kernel: Sequence[int],
                        output_padding: Sequence[int]) -> list[int]:
        """conv_input_size: the size a transposed convolution gives (its input the windows)."""
        return [(n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, k, s, p, d, op in
                zip(size, kernel, self.stride, self.padding, self.dilation, output_padding,
                    strict=True)]


def _index(geo: Geometry, kernel: Sequence[int], out: Sequence[int]) -> tuple[Any, ...]:
    """Per spatial axis, the padded position o * s + k * d, shaped to broadcast to (*K, *O)."""
    n = len(kernel)
    index = []
    for i, (k, o, s, d) in enumerate(zip(kernel, out, geo.stride, geo.dilation, strict=True)):
        ks = np.arange(k).reshape([k if j == i else 1 for j in range(n)] + [1] * n)
        os_ = np.arange(o).reshape([1] * n + [o if j == i else 1 for j in range(n)])
        index.append(ks * d + os_ * s)
    return (slice(None), slice(None), *index)


def _windows(x: np.ndarray, geo: Geometry, kernel: Sequence[int],
             out: Sequence[int]) -> np.ndarray:
    """x (N, C, *S) zero-padded, read at every window: (N, C, *K, *O)."""
    pads = [(0, 0), (0, 0)] + [(p, p) for p in geo.padding]
    return np.pad(x, pads)[_index(geo, kernel, out)]


def _grouped(a: np.ndarray, groups: int, spatial: int) -> np.ndarray:
    """(N, C, *K, *O) -> (N, g, C / g * prod K, prod O)."""
    n, c = a.shape[:2]
    return a.reshape(n, groups, c // groups * int(np.prod(a.shape[2:2 + spatial])), -1)


def conv(x: np.ndarray, w: np.ndarray, geo: Geometry,
         out: Sequence[int] | None = None) -> np.ndarray:
    """y[n, o, *Y] = sum over c, *K of w[o, c, *K] x_pad[n, g(o) c, Y * s + K * d]; `out`
    the number of windows per axis where it is not all that fit (a transposed
    convolution's backward, whose output_padding may leave room for one more)."""
    kernel, g = w.shape[2:], geo.groups
    out = geo.out_size(x.shape[2:], kernel) if out is None else list(out)
    cols = _grouped(_windows(x, geo, kernel, out), g, len(kernel))
    weights = w.reshape(g, w.shape[0] // g, -1)
    y = np.einsum("ngkl,gok->ngol", cols, weights)
    return y.reshape(x.shape[0], w.shape[0], *out)


def conv_input_grad(gy: np.ndarray, w: np.ndarray, size: Sequence[int],
                    geo: Geometry) -> np.ndarray:
    """The adjoint of `conv` in x, for an x of spatial size `size`: each window's share of
    gy, through w, added back where the window read it (the padding then cropped)."""
    kernel, g = w.shape[2:], geo.groups
    n, out = gy.shape[0], gy.shape[2:]
    per_group = w.shape[1]
    grads = gy.reshape(n, g, gy.shape[1] // g, -1)
    cols = np.einsum("ngol,gok->ngkl", grads, w.reshape(g, w.shape[0] // g, -1))
    cols = cols.reshape(n, g * per_group, *kernel, *out)
    padded = np.zeros((n, g * per_group, *(s + 2 * p for s, p in zip(size, geo.padding,
                                                                      strict=True))),
                      gy.dtype)
    np.add.at(padded, _index(geo, kernel, out), cols)
    crop = tuple(slice(p, p + s) for s, p in zip(size, geo.padding, strict=True))
    where = (slice(None), slice(None), *crop)
    return padded[where]


def conv_weight_grad(gy: np.ndarray, x: np.ndarray, kernel: Sequence[int],
                     geo: Geometry) -> np.ndarray:
    """The adjoint of `conv` in w: gy contracted with the windows of x it came from."""
    g, out = geo.groups, gy.shape[2:]
    cols = _grouped(_windows(x, geo, kernel, out), g, len(kernel))
    grads = gy.reshape(gy.shape[0], g, gy.shape[1] // g, -1)
    gw = np.einsum("ngol,ngkl->gok", grads, cols)
    return gw.reshape(gy.shape[1], x.shape[1] // g, *kernel)
