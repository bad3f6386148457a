"""torch.gradient: ATen's composite (ReduceOps.cpp gradient_helper_float for numbers as
spacing, gradient_helper for coordinate tensors), in the engine's ops, so its graph is
torch's: slices of the input, differences divided by the spacing (DivBackward1 for a number,
DivBackward0 for a coordinate), second-order edges from MulBackward1 terms, and the edges cat'ed
onto the centre (CatBackward0)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from .. import messages
from ..tensor import Tensor
from . import common, composites, joining
from .basic import elementwise as ops
from .basic import views


def _s(self: Tensor, d: int, start: int, end: int | None = None) -> Tensor:
    return views.slice(self, d, start, end)


def _along_number(self: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """gradient_helper_float: central differences / 2h, one-sided ones at the edges."""
    center = ops.div_scalar(ops.sub(_s(self, d, 2), _s(self, d, 0, -2)), h)
    if edge_order == 1:
        prepend = ops.div_scalar(ops.sub(_s(self, d, 1, 2), _s(self, d, 0, 1)), h)
        append = ops.div_scalar(ops.sub(_s(self, d, -1), _s(self, d, -2, -1)), h)
    else:
        m = ops.mul_scalar
        prepend = ops.div_scalar(ops.sub(ops.add(m(_s(self, d, 0, 1), -1.5),
                                                 m(_s(self, d, 1, 2), 2)),
                                         m(_s(self, d, 2, 3), 0.5)), h)
        append = ops.div_scalar(ops.add(ops.sub(m(_s(self, d, -3, -2), 0.5),
                                                m(_s(self, d, -2, -1), 2)),
                                        m(_s(self, d, -1), 1.5)), h)
    return joining.cat([prepend, ops.div_scalar(center, 2), append], d)


def _weighted(self: Tensor, d: int, terms: Sequence[tuple[Tensor, int, int | None]]
              ) -> Tensor:
    """w0 * slice0 + w1 * slice1 + w2 * slice2 as ATen's compiled C++ evaluates it: the
    operands of each `+` right to left, so the products are made (and their weights saved)
    last term first."""
    products = [ops.mul(w, _s(self, d, start, end)) for w, start, end in reversed(terms)]
    p2, p1, p0 = products
    return ops.add(ops.add(p0, p1), p2)


def _along_coordinates(self: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """gradient_helper: the second-order formula for uneven spacing (weights a, b, c of
    the neighbours), one-sided differences or second-order ones at the edges."""
    if x.ndim != 1:
        raise RuntimeError(messages.gradient_coordinate_dims(x.ndim))
    shape = [1] * self.ndim
    shape[d] = -1
    dx = composites.diff(x, 1, 0)
    dx1, dx2 = views.slice(dx, 0, 0, -1), views.slice(dx, 0, 1, None)
    mul, div, add, sub = ops.mul, ops.div, ops.add, ops.sub
    a = views.reshape(div(ops.neg(dx2), mul(dx1, add(dx1, dx2))), shape)
    b = views.reshape(div(sub(dx2, dx1), mul(dx1, dx2)), shape)
    c = views.reshape(div(dx1, mul(dx2, add(dx1, dx2))), shape)
    center = _weighted(self, d, ((a, 0, -2), (b, 1, -1), (c, 2, None)))
    first, second = views.select(dx, 0, 0), views.select(dx, 0, 1)
    last, before = views.select(dx, 0, -1), views.select(dx, 0, -2)
    if edge_order == 1:
        prepend = div(sub(_s(self, d, 1, 2), _s(self, d, 0, 1)), first)
        append = div(sub(_s(self, d, -1), _s(self, d, -2, -1)), last)
    else:
        m = ops.mul_scalar
        pa = div(ops.neg(add(m(first, 2.0), second)), mul(first, add(first, second)))
        pb = div(add(first, second), mul(first, second))
        pc = div(ops.neg(first), mul(second, add(first, second)))
        prepend = _weighted(self, d, ((pa, 0, 1), (pb, 1, 2), (pc, 2, 3)))
        aa = div(last, mul(before, add(last, before)))
        ab = div(ops.neg(add(last, before)), mul(last, before))
        ac = div(add(m(last, 2), before), mul(last, add(last, before)))
        append = _weighted(self, d, ((aa, -3, -2), (ab, -2, -1), (ac, -1, None)))
    return joining.cat([prepend, center, append], d)


def _check(self: Tensor, spacing_size: int | None, dims: Sequence[int] | None,
           edge_order: int) -> None:
    """pre_check_gradient."""
    if spacing_size is not None and dims is None and spacing_size != self.ndim:
        raise RuntimeError(messages.gradient_spacing_no_dim(self.ndim, spacing_size))
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError(messages.gradient_spacing_dim(spacing_size, len(dims)))
    if edge_order not in (1, 2):
        raise RuntimeError(messages.GRADIENT_EDGE_ORDER)
    if dims is not None:
        seen: set[int] = set()
        for dim in dims:   # dim_list_to_bitset
            d = common.wrap_dim(dim, self.ndim)
            if d in seen:
                raise RuntimeError(messages.dim_repeated(d))
            seen.add(d)
    for d in (range(self.ndim) if dims is None else dims):
        if self.shape[d] < edge_order + 1:
            raise RuntimeError(messages.GRADIENT_DIM_SIZE)


def gradient(input: Tensor, *, spacing: Any = None, dim: int | Sequence[int] | None = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """torch.gradient's overloads: spacing None, a number, numbers or coordinate tensors;
    dim None (every dimension), an int or a list."""
    dims = (list(range(input.ndim)) if dim is None else
            [dim] if isinstance(dim, int) else list(dim))
    given = None if dim is None else dims
    if spacing is None:
        # (a dim list takes the int[] overload, which checks its spacing of ones)
        _check(input, None if dim is None or isinstance(dim, int) else len(dims), given,
               edge_order)
        steps: list[Any] = [1.0] * len(dims)
    elif isinstance(spacing, numbers.Number):
        steps = [spacing] * len(dims)
        _check(input, len(steps), given, edge_order)
    else:
        steps = list(spacing)
        _check(input, len(steps), given, edge_order)
    out = []
    for dim_, h in zip(dims, steps, strict=True):
        d = common.wrap_dim(dim_, input.ndim)
        out.append(_along_coordinates(input, d, h, edge_order) if isinstance(h, Tensor)
                   else _along_number(input, d, h, edge_order))
    return tuple(out)
