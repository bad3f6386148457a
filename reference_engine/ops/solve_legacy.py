"""torch.triangular_solve (deprecated for linalg.solve_triangular) and linalg.vander.

triangular_solve returns the solution and a clone of the coefficient; its derivatives are
derivatives.yaml's triangular_solve_backward and triangular_solve_jvp (FunctionsManual.cpp),
written with triangular_solve itself so create_graph differentiates them again. vander is
ATen's composite (LinearAlgebra.cpp linalg_vander): a row of ones and the cumprod of x
expanded, so its graph is torch's CatBackward0 over CumprodBackward0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages, warn
from ..autograd_meta import OpSpec, differentiable, record_multi_input
from ..tensor import Tensor
from . import common, joining, prod_cumprod, triangular
from .basic import elementwise as ops
from .basic import reductions, views
from .common import broadcast_shapes, common_device, result_dtype
from .decompositions import column_major, mH_of, substitute
from .linalg import matmul

# ---- triangular_solve ---------------------------------------------------------------------


def _triangle_of(t: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    return (triangular.triu(t, int(unitriangular)) if upper
            else triangular.tril(t, -int(unitriangular)))


def _backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """triangular_solve_backward: grad_b = A^{-H} grad_x (a triangular solve with A,
    transposed the other way), grad_a = -grad_b X^H (-X grad_b^T transposed) on A's
    triangle, plus the cloned coefficient's grad."""
    gx, gm = gs[0], gs[1]
    grad_b: Tensor | None = None
    grad_a: Tensor | None = None
    if gx is not None:
        grad_b = triangular_solve(gx, c.A, c.upper, not c.transpose, c.unitriangular)[0]
        if c._node.should_compute(1):
            x = c.solution
            product = matmul(x, mH_of(grad_b)) if c.transpose else matmul(grad_b, mH_of(x))
            grad_a = _triangle_of(ops.neg(product), c.upper, c.unitriangular)
    if gm is not None:
        grad_a = gm if grad_a is None else ops.add(grad_a, gm)
    if grad_b is None and c._node.should_compute(0):
        grad_b = common.zeros_like(c.self)
    if grad_a is None and c._node.should_compute(1):
        grad_a = common.zeros_like(c.A)
    return [grad_b, grad_a]


def _solution_jvp(c: Any) -> Tensor:
    """triangular_solve_jvp: op(A) dX = dB - op(dA) X, solved with A as the forward."""
    da = mH_of(c.A_t) if c.transpose else c.A_t
    rhs = ops.sub(c.self_t, matmul(da, c.solution))
    return _solve(rhs, c.A, c.upper, c.transpose, c.unitriangular)


TRIANGULAR_SOLVE = OpSpec("TriangularSolveBackward0", ("self", "A"),
                          {"self": ("A", "self", "solution"), "A": ("A", "self", "solution")},
                          _backward, saved_outputs=("solution",))  # type: ignore[arg-type]
_SOLUTION_JVP = OpSpec("TriangularSolveBackward0", ("self", "A"), jvp=_solution_jvp)
_COEFFICIENT_JVP = OpSpec("TriangularSolveBackward0", ("self", "A"), jvp=lambda c: c.A_t)

triangular_solve_return_type = type("triangular_solve", (tuple,), {
    "solution": property(lambda self: self[0]),
    "cloned_coefficient": property(lambda self: self[1])})


def _solve(b: Tensor, A: Tensor, upper: bool, transpose: bool, unitriangular: bool) -> Tensor:
    """The solution alone, as an engine value with no history (the jvp's)."""
    x = triangular_solve(b, A, upper, transpose, unitriangular)[0]
    return x


def triangular_solve(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """torch.triangular_solve (Tensor.triangular_solve): op(A) X = self, op(A) = A or A^T."""
    warn.warn_once(messages.triangular_solve_deprecated())
    if self.ndim < 2 or A.ndim < 2:
        raise RuntimeError(messages.triangular_solve_dims(self.ndim, A.ndim))
    dt = result_dtype([self, A])
    a = A._data.astype(dt.np)
    if transpose:
        a = np.swapaxes(a, -1, -2)
    shape = broadcast_shapes(self.shape[:-2], a.shape[:-2])  # torch names B's batch first
    a = np.broadcast_to(a, shape + a.shape[-2:])
    b = np.broadcast_to(self._data.astype(dt.np), shape + self.shape[-2:])
    # in double precision, rounded once: nearer torch's float32 trsm on ill-conditioned
    # samples than float32 substitution
    wide = np.promote_types(dt.np, np.float64)
    x = (substitute(a.astype(wide), b.astype(wide), upper != transpose, unitriangular)
         .astype(dt.np) if b.size else np.array(b))
    device = common_device([self, A])
    solution = common.new(column_major(x), dt, device, order="K")
    coefficient_value = np.broadcast_to(A._data.astype(dt.np), shape + A.shape[-2:])
    cloned = common.new(column_major(coefficient_value), dt, device, order="K")
    attrs: dict[str, Any] = {"solution": solution, "upper": upper, "transpose": transpose,
                             "unitriangular": unitriangular}
    outs = (solution, cloned)
    if differentiable([self, A]):
        record_multi_input(TRIANGULAR_SOLVE, [self, A], outs, attrs)
    forward_ad.record_tangent(_SOLUTION_JVP, [self, A], solution, attrs)
    forward_ad.record_tangent(_COEFFICIENT_JVP, [self, A], cloned, attrs)
    return triangular_solve_return_type(outs)


# ---- linalg.vander ------------------------------------------------------------------------

def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """torch.linalg.vander: cat([ones, cumprod(x.unsqueeze(-1).expand(..., N - 1), -1)])."""
    if x.dtype == dtypes.bool_:   # floating, complex and integer tensors are taken
        raise RuntimeError(messages.vander_dtype(x.dtype.scalar_name))
    x_ = views.unsqueeze(x, -1) if x.ndim == 0 else x
    n = x_.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(messages.VANDER_N)
    shape = (*x_.shape, n - 1)
    result = prod_cumprod.cumprod(reductions.expand(views.unsqueeze(x_, -1), shape), -1)
    ones = common.new(np.ones((*x_.shape, 1), result.dtype.np), result.dtype, result.device)
    return joining.cat([ones, result], -1)
