"""torch.linalg's functions, by their names there (the registry's `linalg.<name>` rows read
their forward from this module). Each is one of the engine's ops, some of them under
another name in torch's own namespace (torch.cross is linalg.cross with a deprecated
default dim)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import messages
from ..tensor import Tensor
from . import common, decompositions, determinants, inverses, linalg_ex, products
from . import linalg as _linalg_ops
from . import solve as _solve_ops
from .basic import copying, inplace, reductions, views
from .basic import elementwise as ops

cross = products.linalg_cross
inv = inverses.linalg_inv
solve_triangular = decompositions.solve_triangular
cholesky = decompositions.linalg_cholesky
pinv = inverses.linalg_pinv
inv_ex = linalg_ex.inv_ex
cholesky_ex = linalg_ex.cholesky_ex
det = determinants.linalg_det
slogdet = determinants.linalg_slogdet
solve = _solve_ops.linalg_solve
solve_ex = _solve_ops.linalg_solve_ex


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return views.diagonal(A, offset, dim1, dim2)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """ATen: vdot for two vectors, else (x.conj() * y).sum(dim) (conj is x for real x)."""
    # LinearAlgebra.cpp linalg_vecdot: x floating or complex, then y of x's dtype (no
    # promotion)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(messages.vecdot_not_floating(x.dtype.scalar_name))
    if y.dtype != x.dtype:
        raise RuntimeError(messages.vecdot_dtypes(x.dtype.scalar_name, y.dtype.scalar_name))
    if x.ndim == 1 and y.ndim == 1:
        return products.vdot(x, y)
    return reductions.sum(ops.mul(x, y), dim)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """ATen's linalg_matrix_power: n == 0 the identity written into a clone of input, n < 0 the
    power of linalg.inv(input), then clone (1), matmul (2, 3) or binary powering from the least
    significant bit, so the graph names torch's matmuls in torch's order."""
    if n == 0:
        eye = np.broadcast_to(np.eye(input.shape[-1], dtype=input.dtype.np), input.shape)
        return inplace.copy_(copying.clone(input), common.new(eye, input.dtype, input.device))
    a = inverses.linalg_inv(input) if n < 0 else input
    n = abs(n)
    if n == 1:   # torch clones input itself, but returns input's inverse as it is
        return copying.clone(a) if a is input else a
    if n == 2:
        return _linalg_ops.matmul(a, a)
    if n == 3:
        return _linalg_ops.matmul(_linalg_ops.matmul(a, a), a)
    z: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else _linalg_ops.matmul(z, z)
        if bit:
            result = z if result is None else _linalg_ops.matmul(result, z)
    assert result is not None
    return result


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """ATen's multi_dot: a 1-D first (last) operand as a row (column), the product in the
    cheapest order (two: mm; three: the cheaper bracketing, left on a tie; more: the
    matrix-chain order), viewed to the result's shape."""
    if len(tensors) < 2:
        raise RuntimeError(messages.multi_dot_too_few(len(tensors)))
    ts = list(tensors)
    out_shape: list[int] = []
    if ts[0].ndim == 1:
        ts[0] = views.unsqueeze(ts[0], 0)
    else:
        out_shape.append(ts[0].shape[0])
    if ts[-1].ndim == 1:
        ts[-1] = views.unsqueeze(ts[-1], -1)
    else:
        out_shape.append(ts[-1].shape[1])
    mm = _linalg_ops.mm
    if len(ts) == 2:
        product = mm(ts[0], ts[1])
    elif len(ts) == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        left_first = (a * c) * (b + d) <= (b * d) * (a + c)
        product = mm(mm(ts[0], ts[1]), ts[2]) if left_first else mm(ts[0], mm(ts[1], ts[2]))
    else:
        product = _chain(ts, _chain_order(ts), 0, len(ts) - 1)
    return views.view(product, tuple(out_shape))


def _chain_order(ts: list[Tensor]) -> list[list[int]]:
    """The matrix-chain order (Cormen et al. 15.2), as ATen's multi_dot_chain_order: the
    split of i..j at the first cheapest k."""
    n = len(ts)
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] == -1 or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(ts: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return ts[i]
    k = split[i][j]
    # the right operand first: the order GCC evaluates ATen's mm(chain(..), chain(..))
    # arguments in, which is the order the products' saved tensors are packed in
    right = _chain(ts, split, k + 1, j)
    return _linalg_ops.mm(_chain(ts, split, i, k), right)
