"""Factorisation-based ops: cholesky_inverse, cholesky_solve, linalg.solve_triangular,
cholesky and linalg.cholesky. Forwards in numpy (the
factor read from its triangle only, as LAPACK's potri/potrs read it); backward and jvp
formulas are FunctionsManual.cpp's (cholesky_inverse_backward/_jvp,
cholesky_solve_backward/_jvp), written in engine ops so that they differentiate again."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from ..warn import warn_once
from .basic import comparisons, views
from .basic import elementwise as ops
from .common import broadcast_shapes, common_device, compute_on, new, result_dtype
from .linalg import matmul


def mH_of(t: Tensor) -> Tensor:
    """t.mH() of a real tensor: the transpose of its last two dims."""
    return views.transpose(t, -2, -1)


def column_major(a: np.ndarray) -> np.ndarray:
    """`a` laid out as LAPACK writes a batch of matrices: each matrix column-major."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


def _factor(a: np.ndarray, upper: bool) -> np.ndarray:
    """The Cholesky factor as lower-triangular L (A = L L^T), from the triangle LAPACK reads."""
    return np.swapaxes(np.triu(a), -1, -2) if upper else np.tril(a)


# ---- cholesky_inverse ---------------------------------------------------------------------

def _cholesky_inverse_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    def grad_l() -> Tensor:
        common = matmul(c.result, matmul(ops.add(g, mH_of(g)), c.result))
        return ops.neg(matmul(c.self, common) if c.upper else matmul(common, c.self))
    return c.grads(grad_l)


def _cholesky_inverse_jvp(c: Any) -> Tensor:
    # FunctionsManual's cholesky_inverse_jvp as written in torch 2.13: -X dCF X CF (CF = F^H
    # for a lower factor). The derivative is -X dL L^H X (+ its ^H): torch's factors are in
    # the wrong order, a wrong tangent for any non-diagonal factor (pytorch/pytorch#196682,
    # open; fix in PR #197010). The engine models torch's, as the specification is torch's;
    # tests/reference_engine/test_forward_ad.py's central-difference check xfails on it.
    cf, dcf = (c.self, mH_of(c.self_t)) if c.upper else (mH_of(c.self), c.self_t)
    partial = ops.neg(matmul(matmul(matmul(c.result, dcf), c.result), cf))
    return ops.add(partial, mH_of(partial))


CHOLESKY_INVERSE = OpSpec("CholeskyInverseBackward0", ("self",), {"self": ("self", "result")},
                          _cholesky_inverse_backward, jvp=_cholesky_inverse_jvp)


def _inverse_from_factor(a: np.ndarray, upper: bool) -> np.ndarray:
    if a.shape[-1] == 0:
        return a.copy()
    linv = np.linalg.inv(_factor(a, upper))
    return np.swapaxes(linv, -1, -2) @ linv


def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:
    out = column_major(compute_on(lambda a: _inverse_from_factor(a, upper), self._data))
    return record(CHOLESKY_INVERSE, new(out, self.dtype, self.device, order="K"), [self],
                  upper=upper)


# ---- cholesky_solve -----------------------------------------------------------------------

def _cholesky_solve_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    grad_self = cholesky_solve(g, c.input2, c.upper)

    def grad_input2() -> Tensor:
        common = matmul(grad_self, mH_of(c.result))
        common = ops.add(common, mH_of(common))
        return ops.neg(matmul(c.input2, common) if c.upper else matmul(common, c.input2))
    return c.grads(lambda: grad_self, grad_input2)


def _cholesky_solve_jvp(c: Any) -> Tensor:
    u, du = c.input2, c.input2_t
    dk = matmul(mH_of(du), u) if c.upper else matmul(du, mH_of(u))
    da = ops.add(dk, mH_of(dk))
    return cholesky_solve(ops.sub(c.self_t, matmul(da, c.result)), u, c.upper)


CHOLESKY_SOLVE = OpSpec("CholeskySolveBackward0", ("self", "input2"),
                        {"self": ("self", "input2", "result"),
                         "input2": ("self", "input2", "result")},
                        _cholesky_solve_backward, jvp=_cholesky_solve_jvp)


def _solve_with_factor(b: np.ndarray, a: np.ndarray, upper: bool) -> np.ndarray:
    shape = broadcast_shapes(b.shape[:-2], a.shape[:-2])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    if b.size == 0 or a.shape[-1] == 0:
        return np.zeros(b.shape, b.dtype)
    low = np.broadcast_to(_factor(a, upper), shape + a.shape[-2:])
    y = np.linalg.solve(low, b)
    return np.linalg.solve(np.swapaxes(low, -1, -2), y)


def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    dt = result_dtype([self, input2])
    out = column_major(compute_on(lambda b, a: _solve_with_factor(b, a, upper),
                                  self._data.astype(dt.np), input2._data.astype(dt.np)))
    return record(CHOLESKY_SOLVE, new(out, dt, common_device([self, input2]), order="K"),
                  [self, input2], upper=upper)


# ---- linalg.solve_triangular ----------------------------------------------------------------

def _triangle(t: Tensor, upper: bool, strict: bool) -> Tensor:
    """t.triu(strict) / t.tril(-strict) (triu(1): above the diagonal): +0.0 outside the
    triangle, as torch's kernels write it. Written with where and a constant mask: the engine
    has no tril/triu op yet, so a second-order graph names WhereBackward0 where torch's names
    TriuBackward0/TrilBackward0 (values and signs of zero agree)."""
    n, m = t.shape[-2], t.shape[-1]
    keep = np.triu(np.ones((n, m), bool), int(strict)) if upper else \
        np.tril(np.ones((n, m), bool), -int(strict))
    return comparisons.where(new(keep, dtypes.bool_, t.device), t, 0.0)


def _solve_triangular_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    grad_b = solve_triangular(mH_of(c.self), g, upper=not c.upper, left=c.left,
                              unitriangular=c.unitriangular)

    def grad_a() -> Tensor:
        ga = ops.neg(matmul(grad_b, mH_of(c.result)) if c.left else
                     matmul(mH_of(c.result), grad_b))
        return _triangle(ga, c.upper, c.unitriangular)
    return c.grads(grad_a, lambda: grad_b)


def _solve_triangular_jvp(c: Any) -> Tensor:
    proj = _triangle(c.self_t, c.upper, c.unitriangular)
    x_t = ops.sub(c.B_t, matmul(proj, c.result) if c.left else matmul(c.result, proj))
    return solve_triangular(c.self, x_t, upper=c.upper, left=c.left,
                            unitriangular=c.unitriangular)


SOLVE_TRIANGULAR = OpSpec("LinalgSolveTriangularBackward0", ("self", "B"),
                          {"self": ("self", "result"), "B": ("self",)},
                          _solve_triangular_backward, jvp=_solve_triangular_jvp)


@np.errstate(all="ignore")  # a zero pivot divides, inf or NaN, silently as in trsm/getrs
def substitute(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """a x = b for a triangular `a` (its other triangle unread), by substitution as trsm
    solves it, row by row; batches broadcast. Its callers outside `compute_on` (lu_solve's,
    the determinants' backward and jvp through it, solve_legacy's) rely on the errstate
    here: NumPy's RuntimeWarning would be a Python warning torch never gives."""
    n = a.shape[-1]
    shape = broadcast_shapes(b.shape[:-2], a.shape[:-2])  # torch names B's batch first
    a = np.broadcast_to(a, shape + a.shape[-2:])
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        done = slice(i + 1, n) if upper else slice(0, i)
        row = x[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
        x[..., i, :] = row if unit else row / a[..., i, i, None]
    return x


def solve_triangular(self: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    dt = result_dtype([self, B])

    def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if left:
            return substitute(a, b, upper, unitriangular)
        # X A = B is A^T X^T = B^T, A^T triangular the other way
        xt = substitute(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper,
                        unitriangular)
        return np.swapaxes(xt, -1, -2)
    out = column_major(compute_on(solve, self._data.astype(dt.np), B._data.astype(dt.np)))
    return record(SOLVE_TRIANGULAR, new(out, dt, common_device([self, B]), order="K"), [self, B],
                  upper=upper, left=left, unitriangular=unitriangular)


# ---- cholesky, linalg.cholesky ---------------------------------------------------------------

def cholesky_backward(g: Tensor, upper: bool, factor: Tensor) -> Tensor:
    """FunctionsManual's cholesky_backward (Iain Murray, arXiv 1602.07527)."""
    low, gl = (mH_of(factor), mH_of(g)) if upper else (factor, g)
    ga = _triangle(matmul(mH_of(low), gl), upper=False, strict=False)
    ga = ops.mul_scalar(ops.add(ga, mH_of(_triangle(ga, upper=False, strict=True))), 0.5)
    ga = solve_triangular(mH_of(low), ga, upper=True, left=True)
    return solve_triangular(low, ga, upper=False, left=False)


def _diagonal_part(t: Tensor) -> Tensor:
    """diag_embed(t.diagonal(0, -2, -1)), as the triangle of both kinds."""
    return _triangle(_triangle(t, upper=False, strict=False), upper=True, strict=False)


def cholesky_jvp(a_t: Tensor, factor: Tensor, upper: bool) -> Tensor:
    """FunctionsManual's cholesky_jvp: with Φ = L^{-1} dA L^{-H},
    dL = L (Φ.tril() - 0.5 diag(Φ))."""
    low = mH_of(factor) if upper else factor
    phi = solve_triangular(low, a_t, upper=False, left=True)
    phi = solve_triangular(mH_of(low), phi, upper=True, left=False)
    phi = ops.sub(_triangle(phi, upper=False, strict=False),
                  ops.mul_scalar(_diagonal_part(phi), 0.5))
    dl = matmul(low, phi)
    return mH_of(dl) if upper else dl


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError), a RuntimeError."""


CHOLESKY = OpSpec("CholeskyBackward0", ("self",), {"self": ("result",)},
                  lambda c, g: [cholesky_backward(g, c.upper, c.result)])
LINALG_CHOLESKY = OpSpec("LinalgCholeskyExBackward0", ("self",), {"self": ("result",)},
                         lambda c, g: [cholesky_backward(g, c.upper, c.result)],
                         jvp=lambda c: cholesky_jvp(c.self_t, c.result, c.upper))


def _factorise(a: np.ndarray, upper: bool, name: str) -> np.ndarray:
    for index in np.ndindex(*a.shape[:-2]):
        try:
            np.linalg.cholesky(a[index])
        except np.linalg.LinAlgError:
            order = first_failing_minor(a[index])
            raise _LinAlgError(messages.not_positive_definite(name, order)) from None
    low = np.linalg.cholesky(a) if a.size else a.copy()
    return np.swapaxes(low, -1, -2) if upper else low


def first_failing_minor(a: np.ndarray) -> int:
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return a.shape[-1]


def cholesky(self: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky (deprecated in favour of linalg.cholesky, with torch's warning)."""
    warn_once(messages.CHOLESKY_DEPRECATED)
    out = column_major(compute_on(lambda a: _factorise(a, upper, "cholesky"), self._data))
    return record(CHOLESKY, new(out, self.dtype, self.device, order="K"), [self], upper=upper)


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    out = column_major(compute_on(lambda a: _factorise(a, upper, "linalg.cholesky"), A._data))
    return record(LINALG_CHOLESKY, new(out, A.dtype, A.device, order="K"), [A], upper=upper)
