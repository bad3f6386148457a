"""linalg.lu_solve and torch.lu_solve (its deprecated form, arguments reversed): a system
solved with an LU factorisation (linalg.lu_factor's LU and pivots), on the left or right,
with A or A^H. The forward substitutes with P, L and U as getrs does (in double precision,
rounded once). The derivatives are derivatives.yaml's: B's grad is lu_solve with the adjoint
flipped, LU's linalg_lu_solve_LU (the grad of A = P L U carried to L's strict lower triangle
and U's upper one), the jvp linalg_lu_solve_jvp, in engine ops so create_graph
differentiates them again. Real inputs: the adjoint is the transpose."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages, warn
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, triangular
from .basic import elementwise as ops
from .decompositions import column_major, mH_of, substitute
from .decompositions_lu import lu_unpack
from .linalg import matmul


def solve_arrays(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, left: bool,
           adjoint: bool) -> np.ndarray:
    """X for A X = B (left) or X A = B, A or A^H, A = P L U, batches broadcast."""
    shape = common.broadcast_shapes(b.shape[:-2], lu.shape[:-2])  # torch names B's batch first
    lu = np.broadcast_to(lu, shape + lu.shape[-2:])
    piv = np.broadcast_to(piv, shape + piv.shape[-1:])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    if not left:   # X A = B is A^T X^T = B^T
        return np.swapaxes(solve_arrays(lu, piv, np.swapaxes(b, -1, -2), True, not adjoint), -1, -2)
    if not adjoint:   # L U X = P^T B
        y = substitute(lu, _swap_rows(b, piv, last_first=False), upper=False, unit=True)
        return substitute(lu, y, upper=True, unit=False)
    # U^T L^T P^T X = B
    lu_t = np.swapaxes(lu, -1, -2)
    y = substitute(lu_t, b, upper=False, unit=False)
    return _swap_rows(substitute(lu_t, y, upper=True, unit=True), piv, last_first=True)


def _swap_rows(b: np.ndarray, piv: np.ndarray, last_first: bool) -> np.ndarray:
    """P^T B (the pivots' swaps in order) or P B (the last swap first), as getrs applies P
    with laswp: rows swapped, not multiplied by a permutation matrix, so an infinite entry
    stays in its row (0 * inf would put NaN in every other) and a zero keeps its sign."""
    out = np.array(b)
    k = piv.shape[-1]
    for index in np.ndindex(*piv.shape[:-1]):
        rows = out[index]
        for j in (range(k - 1, -1, -1) if last_first else range(k)):
            p = int(piv[index][j]) - 1
            if p != j:
                rows[[j, p]] = rows[[p, j]]
    return out


def _a_grad(c: Any, gb: Tensor, x: Tensor) -> Tensor:
    """The grad A = P L U would get, from B's grad: -gB X^H (A X = B), -X gB^H (A^H X = B),
    -X^H gB (X A = B), -gB^H X (X A^H = B)."""
    if c.left:
        return ops.neg(matmul(x, mH_of(gb)) if c.adjoint else matmul(gb, mH_of(x)))
    return ops.neg(matmul(mH_of(gb), x) if c.adjoint else matmul(mH_of(x), gb))


def _backward(c: Any, g: Tensor) -> list[Tensor | None]:
    def grad_lu() -> Tensor:
        """linalg_lu_solve_LU: gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA)."""
        P, L, U = lu_unpack(c.LU, c.pivots)
        gb = linalg_lu_solve(c.LU, c.pivots, g, left=c.left, adjoint=not c.adjoint)
        pga = matmul(mH_of(P), _a_grad(c, gb, c.result))
        return ops.add(triangular.tril(matmul(pga, mH_of(U)), -1),
                       triangular.triu(matmul(mH_of(L), pga)))
    return c.grads(grad_lu,
                   lambda: linalg_lu_solve(c.LU, c.pivots, g, left=c.left,
                                           adjoint=not c.adjoint))


def _jvp(c: Any) -> Tensor:
    """linalg_lu_solve_jvp: lu_solve of dB - op(dA) X (left) or dB - X op(dA) (right),
    dA = P (dL U + L dU) with dL, dU LU's tangent's strict lower and upper parts."""
    P, L, U = lu_unpack(c.LU, c.pivots)
    dlu = c.LU_t
    da = matmul(P, ops.add(matmul(triangular.tril(dlu, -1), U),
                           matmul(L, triangular.triu(dlu))))
    op_da = mH_of(da) if c.adjoint else da
    x = c.result
    rhs = ops.sub(c.B_t, matmul(op_da, x) if c.left else matmul(x, op_da))
    return linalg_lu_solve(c.LU, c.pivots, rhs, left=c.left, adjoint=c.adjoint)


LU_SOLVE = OpSpec("LinalgLuSolveBackward0", ("LU", "B"),
                  {"LU": ("LU", "pivots", "result"), "B": ("LU", "pivots")}, _backward,
                  jvp=_jvp)


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """torch.linalg.lu_solve."""
    if LU.dtype != B.dtype:
        raise RuntimeError(messages.lu_solve_dtypes(LU.dtype.scalar_name, B.dtype.scalar_name))
    if B.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d("linalg.lu_solve", "B"))
    wide = np.promote_types(LU.dtype.np, np.float64)
    lu = np.asarray(LU._data).astype(wide)
    b = np.asarray(B._data).astype(wide)
    if b.size == 0 or lu.size == 0:
        shape = common.broadcast_shapes(b.shape[:-2], lu.shape[:-2]) + b.shape[-2:]
        x = np.zeros(shape, wide)
    else:
        x = solve_arrays(lu, np.asarray(pivots._data), b, left, adjoint)
    x = x.astype(LU.dtype.np)
    out = common.new(column_major(x) if left else np.ascontiguousarray(x), LU.dtype,
                     LU.device, order="K")
    return record(LU_SOLVE, out, [LU, B], pivots=pivots, left=left, adjoint=adjoint)


def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """torch.lu_solve (Tensor.lu_solve): linalg.lu_solve(LU_data, LU_pivots, self)."""
    warn.warn_once(messages.lu_solve_deprecated())
    return linalg_lu_solve(LU_data, LU_pivots, self)


def solve_with_lu(c: Any, b: Tensor, adjoint: bool, perturb: bool,
                  left: bool = True) -> Tensor:
    """at::linalg_lu_solve(LU, pivots, b, left, adjoint) with the node's saved LU:
    getrs's substitutions, which divide by a zero pivot (inf or NaN, never an error, where
    an inverse of the matrix raises); `perturb` first adds eps to the LU's zero pivots
    (linalg_det_backward and linalg_det_jvp: det is C^1, so ATen differentiates a singular
    matrix at a non-singular neighbour)."""
    lu = c.LU
    if perturb:
        data = lu._data
        diag = np.diagonal(data, axis1=-2, axis2=-1)
        shift = np.where(diag == 0, np.finfo(data.dtype).eps, 0)
        lu = common.new((data + shift[..., None] * np.eye(data.shape[-1])).astype(data.dtype),
                        lu.dtype, lu.device)
    return linalg_lu_solve(lu, c.pivots, b, left=left, adjoint=adjoint)
