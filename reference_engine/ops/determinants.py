"""Determinants: linalg.det (det), linalg.slogdet (slogdet) and logdet, as ATen computes them
from an LU factorisation (LinearAlgebra.cpp _linalg_det / _linalg_slogdet): the LU and its
pivots are outputs torch's node saves, so they are computed here as LAPACK's getrf gives
them. Backward and jvp formulas are FunctionsManual.cpp's (linalg_det_backward,
linalg_det_jvp, slogdet_backward, slogdet_jvp)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages, views
from ..autograd_meta import OpSpec, differentiable, record, record_multi_output
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common, comparisons, reductions, triangular
from . import elementwise as ops
from .decompositions import _column_major, _mH
from .decompositions_lu import _getrf  # one matrix's getrf (m x n)
from .inverses import linalg_inv
from .linalg import matmul

# ---- the LU factorisation, as getrf ---------------------------------------------------------


def _lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A batch's LU (each matrix column-major, as LAPACK writes it) and int32 pivots."""
    n = a.shape[-1]
    lu, piv = np.empty_like(a), np.zeros((*a.shape[:-2], n), np.int32)
    for index in np.ndindex(*a.shape[:-2]):
        lu[index], piv[index] = _getrf(a[index])
    return _column_major(lu), piv


def _det_p(pivots: np.ndarray) -> np.ndarray:
    """lu_det_P: the permutation's sign, -1 to the number of rows actually swapped."""
    swaps = (pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32)).sum(-1)
    return np.where(swaps % 2 == 0, 1.0, -1.0)


def _unpacked(lu: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """P L U from an LU and its pivots: the matrix the factorisation is of."""
    n = lu.shape[-1]
    low = np.tril(lu, -1) + np.eye(n, dtype=lu.dtype)
    product = low @ np.triu(lu)
    for index in np.ndindex(*lu.shape[:-2]):
        rows = product[index]
        for k in range(n - 1, -1, -1):   # undo the swaps, the last first
            p = int(pivots[index][k]) - 1
            if p != k:
                rows[[k, p]] = rows[[p, k]]
    return product


def _factorised(A: Tensor) -> tuple[bool, np.ndarray, np.ndarray]:
    """ATen factors A^T for a contiguous real A (det(A^T) = det(A), and A^T is already
    F-contiguous): whether it did, the LU and the pivots."""
    use_a_t = A.is_contiguous()
    a = np.swapaxes(A._data, -1, -2) if use_a_t else A._data
    lu, piv = _lu_factor(np.asarray(a))
    return use_a_t, lu, piv


def _inverse_from_lu(lu: np.ndarray, pivots: np.ndarray, use_a_t: bool,
                     perturb: bool) -> np.ndarray:
    """A^{-1} through the saved factorisation (linalg_lu_solve's), the LU's zero pivots
    first replaced by eps where `perturb` (det is C^1: ATen differentiates a singular
    matrix so, at a non-singular neighbour)."""
    if perturb:
        eps = np.finfo(lu.dtype).eps
        diag = np.diagonal(lu, axis1=-2, axis2=-1)
        lu = lu + np.where(diag == 0, eps, 0)[..., None] * np.eye(lu.shape[-1], dtype=lu.dtype)
    factored = _unpacked(lu, pivots)
    a = np.swapaxes(factored, -1, -2) if use_a_t else factored
    if a.shape[-1] == 0:
        return a.copy()
    return np.linalg.inv(a)


def _check_square(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name))
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(messages.linalg_not_square(name, A.shape[-2], A.shape[-1]))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))


def _trace(t: Tensor) -> Tensor:
    return reductions.sum(views.diagonal(t, 0, -2, -1), -1)


def _scaled_eye(scale: Tensor, n: int) -> Tensor:
    """diag_embed(scale.unsqueeze(-1).expand(..., n)): the batch of scale * I."""
    return triangular.diag_embed(views.expand(views.unsqueeze(scale, -1), (*scale.shape, n)))


# ---- linalg.det, det --------------------------------------------------------------------------

def _det_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """linalg_det_backward: grad * det * A^{-H}. For a further derivative ATen recomputes it
    from A: linalg_solve(A.mH(), d), as here, or through an SVD where |det| < 100 eps (here
    through the inverse of A, which differentiates to the same values; another graph).
    An empty A's grad is zeros, a 1 x 1 A's the grad itself (ATen's shortcuts: neither
    reads A, so neither requires grad through it)."""
    n = c.A.shape[-1]
    if c.A.numel() == 0:
        return [common.zeros_like(c.A)]
    if n == 1:
        return [views.expand(views.unsqueeze(views.unsqueeze(g, -1), -1), tuple(c.A.shape))]
    d = _scaled_eye(ops.mul(g, c.result), n)
    if is_grad_enabled():
        eps = np.finfo(c.LU._data.dtype).eps
        if not (np.abs(c.result._data) < 100 * eps).any():
            # ATen's non_singular: linalg_solve(A.mH(), d), its d diag_embed(...).mT()
            from .solve import linalg_solve  # (solve.py imports this module)
            return [linalg_solve(_mH(c.A), views.transpose(d, -2, -1))]
        # (ATen's singular branch, through linalg_svd, is not modelled: the inverse's)
        return [matmul(_mH(linalg_inv(c.A)), d)]
    inverse = _inverse_from_lu(c.LU._data, c.pivots._data, c.use_a_t, perturb=True)
    return [matmul(common.new(np.swapaxes(inverse, -1, -2), g.dtype, g.device), d)]


def _det_jvp(c: Any) -> Tensor:
    """linalg_det_jvp: tr(A^{-1} dA) * det, A^{-1} from the (perturbed) LU."""
    inverse = _inverse_from_lu(c.LU._data, c.pivots._data, c.use_a_t, perturb=True)
    a_inv = common.new(inverse, c.A_t.dtype, c.A_t.device)
    return ops.mul(_trace(matmul(a_inv, c.A_t)), c.result)


LINALG_DET = OpSpec("LinalgDetBackward0", ("A",), {"A": ("A", "LU", "pivots", "result")},
                    _det_backward, saved_outputs=("LU", "pivots", "result"), jvp=_det_jvp)


def det(self: Tensor) -> Tensor:
    """torch.det (Tensor.det): linalg.det."""
    return linalg_det(self)


def linalg_det(A: Tensor) -> Tensor:
    _check_square(A, "linalg.det")
    use_a_t, lu, piv = _factorised(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    value = np.prod(diag, axis=-1) * _det_p(piv).astype(lu.dtype)
    result = common.new(value, A.dtype, A.device)
    attrs = {"LU": common.new(lu, A.dtype, A.device, order="K"),
             "pivots": common.new(piv, dtypes.int32, A.device), "use_a_t": use_a_t}
    return record(LINALG_DET, result, [A], **attrs)


# ---- linalg.slogdet, slogdet, logdet ----------------------------------------------------------

def _slogdet_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """slogdet_backward: the real sign's grad is zero, so grad_logabsdet * A^{-H}; for a
    further derivative ATen solves with A (linalg_solve(A.mH(), d)), here A's inverse."""
    g = gs[1]
    if g is None:
        return [None]
    d = _scaled_eye(g, c.A.shape[-1])
    if is_grad_enabled():
        return [matmul(_mH(linalg_inv(c.A)), d)]
    inverse = _inverse_from_lu(c.LU._data, c.pivots._data, c.use_a_t, perturb=False)
    return [matmul(common.new(np.swapaxes(inverse, -1, -2), g.dtype, g.device), d)]


LINALG_SLOGDET = OpSpec("LinalgSlogdetBackward0", ("A",),
                        {"A": ("A", "LU", "pivots", "result")}, _slogdet_backward,  # type: ignore[arg-type]
                        saved_outputs=("LU", "pivots", "result"))


def _slogdet_jvp(c: Any) -> Tensor:
    """slogdet_jvp's logabsdet tangent: tr(A^{-1} dA) (sign's is zeros)."""
    inverse = _inverse_from_lu(c.LU._data, c.pivots._data, c.use_a_t, perturb=False)
    return _trace(matmul(common.new(inverse, c.A_t.dtype, c.A_t.device), c.A_t))


SLOGDET_SIGN_JVP = OpSpec("LinalgSlogdetBackward0", ("A",),
                          jvp=lambda c: common.zeros_like(c.result))
SLOGDET_LOGABSDET_JVP = OpSpec("LinalgSlogdetBackward0", ("A",), jvp=_slogdet_jvp)

linalg_slogdet_return_type = type("linalg_slogdet", (tuple,), {
    "sign": property(lambda self: self[0]), "logabsdet": property(lambda self: self[1])})
slogdet_return_type = type("slogdet", (tuple,), {
    "sign": property(lambda self: self[0]), "logabsdet": property(lambda self: self[1])})


def _slogdet(A: Tensor, name: str) -> tuple[Tensor, Tensor]:
    _check_square(A, name)
    use_a_t, lu, piv = _factorised(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    # the sign of each pivot as torch's sgn gives it: 0 for a NaN (np.sign's is NaN)
    signs = np.where(np.isnan(diag), 0, np.sign(diag))
    sign_value = np.prod(signs, axis=-1) * _det_p(piv).astype(lu.dtype)
    with np.errstate(divide="ignore"):
        log_value = np.sum(np.log(np.abs(diag)), axis=-1)
    sign = common.new(sign_value, A.dtype, A.device)
    logabsdet = common.new(log_value, A.dtype, A.device)
    attrs = {"LU": common.new(lu, A.dtype, A.device, order="K"),
             "pivots": common.new(piv, dtypes.int32, A.device), "use_a_t": use_a_t}
    if differentiable([A]):
        record_multi_output(LINALG_SLOGDET, A, (sign, logabsdet), attrs)
    forward_ad.record_tangent(SLOGDET_SIGN_JVP, [A], sign, attrs)
    forward_ad.record_tangent(SLOGDET_LOGABSDET_JVP, [A], logabsdet, attrs)
    return sign, logabsdet


def linalg_slogdet(A: Tensor) -> Any:
    return linalg_slogdet_return_type(_slogdet(A, "linalg.slogdet"))


def slogdet(self: Tensor) -> Any:
    return slogdet_return_type(_slogdet(self, "linalg.slogdet"))


def logdet(self: Tensor) -> Tensor:
    """ATen's logdet: where(sign == -1, nan, logabsdet) of linalg_slogdet (real input)."""
    _check_square(self, "logdet")
    sign, logabsdet = _slogdet(self, "linalg.slogdet")
    return comparisons.where(comparisons.compare(sign, -1.0, np.equal), float("nan"), logabsdet)
