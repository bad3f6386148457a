"""Factorisation-based ops: cholesky_inverse and cholesky_solve. Forwards in numpy (the
factor read from its triangle only, as LAPACK's potri/potrs read it); backward and jvp
formulas are FunctionsManual.cpp's (cholesky_inverse_backward/_jvp,
cholesky_solve_backward/_jvp), written in engine ops so that they differentiate again."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import views
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import elementwise as ops
from .common import _compute, _promotes, common_device, new
from .linalg import matmul


def _mH(t: Tensor) -> Tensor:
    """t.mH() of a real tensor: the transpose of its last two dims."""
    return views.transpose(t, -2, -1)


def _factor(a: np.ndarray, upper: bool) -> np.ndarray:
    """The Cholesky factor as lower-triangular L (A = L L^T), from the triangle LAPACK reads."""
    return np.swapaxes(np.triu(a), -1, -2) if upper else np.tril(a)


# ---- cholesky_inverse ---------------------------------------------------------------------

def _cholesky_inverse_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    def grad_l() -> Tensor:
        common = matmul(c.result, matmul(ops.add(g, _mH(g)), c.result))
        return ops.neg(matmul(c.self, common) if c.upper else matmul(common, c.self))
    return c.grads(grad_l)


def _cholesky_inverse_jvp(c: Any) -> Tensor:
    f, df = (_mH(c.self), _mH(c.self_t)) if c.upper else (c.self, c.self_t)
    partial = ops.neg(matmul(matmul(matmul(c.result, df), _mH(f)), c.result))
    return ops.add(partial, _mH(partial))


CHOLESKY_INVERSE = OpSpec("CholeskyInverseBackward0", ("self",), {"self": ("self", "result")},
                          _cholesky_inverse_backward, jvp=_cholesky_inverse_jvp)


def _inverse_from_factor(a: np.ndarray, upper: bool) -> np.ndarray:
    if a.shape[-1] == 0:
        return a.copy()
    linv = np.linalg.inv(_factor(a, upper))
    return np.swapaxes(linv, -1, -2) @ linv


def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:
    out = _compute(lambda a: _inverse_from_factor(a, upper), self._data)
    return record(CHOLESKY_INVERSE, new(out, self.dtype, self.device), [self], upper=upper)


# ---- cholesky_solve -----------------------------------------------------------------------

def _cholesky_solve_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    grad_self = cholesky_solve(g, c.input2, c.upper)

    def grad_input2() -> Tensor:
        common = matmul(grad_self, _mH(c.result))
        common = ops.add(common, _mH(common))
        return ops.neg(matmul(c.input2, common) if c.upper else matmul(common, c.input2))
    return c.grads(lambda: grad_self, grad_input2)


def _cholesky_solve_jvp(c: Any) -> Tensor:
    u, du = c.input2, c.input2_t
    dk = matmul(_mH(du), u) if c.upper else matmul(du, _mH(u))
    da = ops.add(dk, _mH(dk))
    return cholesky_solve(ops.sub(c.self_t, matmul(da, c.result)), u, c.upper)


CHOLESKY_SOLVE = OpSpec("CholeskySolveBackward0", ("self", "input2"),
                        {"self": ("self", "input2", "result"),
                         "input2": ("self", "input2", "result")},
                        _cholesky_solve_backward, jvp=_cholesky_solve_jvp)


def _solve_with_factor(b: np.ndarray, a: np.ndarray, upper: bool) -> np.ndarray:
    shape = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    if b.size == 0 or a.shape[-1] == 0:
        return np.zeros(b.shape, b.dtype)
    low = np.broadcast_to(_factor(a, upper), shape + a.shape[-2:])
    y = np.linalg.solve(low, b)
    return np.linalg.solve(np.swapaxes(low, -1, -2), y)


def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    dt = _promotes([self, input2])
    out = _compute(lambda b, a: _solve_with_factor(b, a, upper), self._data.astype(dt.np),
                   input2._data.astype(dt.np))
    return record(CHOLESKY_SOLVE, new(out, dt, common_device([self, input2])),
                  [self, input2], upper=upper)
