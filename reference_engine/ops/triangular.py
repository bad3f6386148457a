"""Triangular and diagonal ops that copy: tril, triu, diag, diag_embed, diagflat, the fill
family (fill), and trace (the diagonal's sum). (The diagonal *view* is views.diagonal;
diagonal_scatter is in ops/scatter.py.) All are linear: their backward is the op's adjoint,
their jvp the op itself (derivatives.yaml's `result: auto_linear`)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import dtypes, messages, tensor_metadata
from ..autograd_meta import OpSpec, linear_forward, record
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import common, shape_views
from .basic import indexing, reductions, views
from .basic.inplace import apply_inplace

# ---- tril / triu ---------------------------------------------------------------------------

TRIL = OpSpec("TrilBackward0", ("self",), backward=lambda c, g: [tril(g, c.diagonal)],
              jvp="auto_linear")
TRIU = OpSpec("TriuBackward0", ("self",), backward=lambda c, g: [triu(g, c.diagonal)],
              jvp="auto_linear")


def _triangle(self: Tensor, diagonal: int, name: str, keep: Any) -> np.ndarray:
    if self.ndim < 2:
        raise RuntimeError(messages.triangle_needs_2d(name))
    rows, cols = self.shape[-2], self.shape[-1]
    mask = keep(np.ones((rows, cols), dtype=bool), diagonal)
    return np.where(mask, self._data, np.zeros((), self.dtype.np))


@linear_forward(TRIL)
def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    out = common.new(_triangle(self, diagonal, "tril", np.tril), self.dtype, self.device)
    return record(TRIL, out, [self], diagonal=diagonal)


@linear_forward(TRIU)
def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    out = common.new(_triangle(self, diagonal, "triu", np.triu), self.dtype, self.device)
    return record(TRIU, out, [self], diagonal=diagonal)


def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    with _no_grad():
        r = tril(self, diagonal)
    return apply_inplace(self, TRIL, r, [], diagonal=diagonal)


def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    with _no_grad():
        r = triu(self, diagonal)
    return apply_inplace(self, TRIU, r, [], diagonal=diagonal)


def _no_grad() -> Any:
    return no_grad()


# ---- diag_embed / diagflat / diag ------------------------------------------------------------

DIAG_EMBED = OpSpec(
    "DiagEmbedBackward0", ("self",),
    backward=lambda c, g: [views.diagonal(g, c.offset, c.dim1, c.dim2)], jvp="auto_linear")
# torch.diag of a matrix is diagonal_copy: its node is named for the copy variant
def _embedded(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """a's last dim put on the diagonal `offset` of two new dims d1, d2 (of the result)."""
    n = a.shape[-1] + abs(offset)
    out = np.zeros((*a.shape[:-1], n, n), dtype=a.dtype)
    k = np.arange(a.shape[-1])
    out[..., k + max(-offset, 0), k + max(offset, 0)] = a
    return np.moveaxis(out, (-2, -1), (d1, d2))


@linear_forward(DIAG_EMBED)
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    n = self.ndim + 1
    d1, d2 = common.wrap_dim(dim1, n), common.wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(messages.diagonal_dims_identical(d1, d2))
    src = self._data if self.ndim else self._data.reshape(1)
    out = common.new(_embedded(src, offset, d1, d2), self.dtype, self.device)
    return record(DIAG_EMBED, out, [self], offset=offset, dim1=d1, dim2=d2)


def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    """ATen's diagflat: self.contiguous().view(-1), then diag_embed (its graph: a
    DiagEmbedBackward0 over a ViewBackward0, whatever self's shape)."""
    return diag_embed(views.view(shape_views.contiguous(self), (-1,)), offset)


def diag_embed_into(g: Tensor, sizes: tuple[int, ...], offset: int, d1: int, d2: int
                    ) -> Tensor:
    """diagonal_backward: zeros(sizes) with g on the diagonal (a DiagonalBackwardBackward0
    node, whose own backward is the diagonal view again)."""
    arr = np.zeros(sizes, dtype=g.dtype.np)
    pos = np.arange(arr.size).reshape(sizes)
    idx = np.diagonal(pos, offset, d1, d2)
    arr.reshape(-1)[idx.reshape(-1)] = g._data.reshape(-1)
    out = common.new(arr, g.dtype, g.device)
    return record(DIAG_BACKWARD, out, [g], offset=offset, dim1=d1, dim2=d2)


DIAG_BACKWARD = OpSpec(
    "DiagonalBackwardBackward0", ("self",),
    backward=lambda c, g: [views.diagonal(g, c.offset, c.dim1, c.dim2)],
    jvp=lambda c: diag_embed_into(c.self_t, tuple(c.result.shape), c.offset, c.dim1, c.dim2))


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's diagonal matrix (diag_embed) or a matrix's diagonal (ATen's diag calls
    diagonal_copy: the registry's, whose tangent is the diagonal of the input's tangent,
    copied by set_fw_grad into the result's layout: version 1)."""
    if self.ndim == 1:
        return diag_embed(self, diagonal)
    if self.ndim == 2:
        return shape_views.diagonal_copy(self, diagonal)
    raise RuntimeError(messages.diag_needs_1d_or_2d(self.ndim))


# ---- fill -----------------------------------------------------------------------------------

FILL = OpSpec("FillBackward0", ("self",), backward=lambda c, g: [common.zeros_like(g)],
              jvp=lambda c: fill(c.self_t, 0))
FILL_TENSOR = OpSpec(
    "FillBackward1", ("self", "value"),
    backward=lambda c, g: c.grads(lambda: common.zeros_like(g), lambda: _sum(g)),
    jvp=lambda c: fill(c.self_t, c.value_t))


def _sum(g: Tensor) -> Tensor:
    return reductions.sum(g)


def fill(self: Tensor, value: Any) -> Tensor:
    """torch.fill: a tensor of self's shape holding value (a number, or a 0-dim tensor,
    which is then differentiable)."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(messages.fill_value_dims(value.ndim))
        arr = _empty_like(self)
        arr[...] = dtypes.cast(value._data, self.dtype.np, warn=True)   # a copy_
        out = Tensor(arr, self.dtype, common.common_device([self, value]))
        return record(FILL_TENSOR, out, [self, value])
    arr = _empty_like(self)
    arr[...] = value
    return record(FILL, Tensor(arr, self.dtype, self.device), [self])


def _empty_like(self: Tensor) -> np.ndarray:
    """ATen's fill is `empty_like(self).fill_(value)`: preserve_format keeps the strides of a
    non-overlapping and dense self (a transposed result stays transposed, so a later
    reshape copies), as clone does (copying.layout_copy)."""
    return np.empty_like(self._data, order="K" if tensor_metadata.dense(self._data) else "C")


# ---- trace ----------------------------------------------------------------------------------

def _trace_backward(g: Tensor, sizes: tuple[int, int]) -> Tensor:
    """FunctionsManual trace_backward_symint: zeros(m * n).index_fill_(0, positions of the
    diagonal, grad).view(m, n). The diagonal has min(m, n) elements, every n + 1 apart in
    the flat layout, also for a non-square matrix."""
    m, n = sizes
    zeros = common.new(np.zeros(m * n), g.dtype, g.device)
    positions = common.new(np.arange(builtins.min(m, n)) * (n + 1), dtypes.int64, g.device)
    # zeros() and index_fill_ each write in place: torch's grad is at _version 2
    filled = common.written_in_place(indexing.index_fill(zeros, 0, positions, g), 2)
    return views.view(filled, sizes)
TRACE = OpSpec("TraceBackward0", ("self",),
               backward=lambda c, g: [_trace_backward(g, c.self_sym_sizes)], jvp="auto_linear")


@linear_forward(TRACE)
def trace(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(messages.trace_not_matrix(self.ndim))
    dt = self.dtype if self.dtype.is_differentiable else dtypes.int64
    out = common.new(np.trace(self._data).astype(dt.np), dt, self.device)
    return record(TRACE, out, [self], self_sym_sizes=tuple(self.shape))
