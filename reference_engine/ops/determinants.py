"""Determinants: linalg.det (det), linalg.slogdet (slogdet) and logdet, as ATen computes them
from an LU factorisation (LinearAlgebra.cpp _linalg_det / _linalg_slogdet): the LU and its
pivots are outputs torch's node saves, so they are computed here as LAPACK's getrf gives
them. Backward and jvp formulas are FunctionsManual.cpp's (linalg_det_backward,
linalg_det_jvp, slogdet_backward, slogdet_jvp)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, views_indexing
from ..autograd_meta import OpSpec, differentiable, record, record_multi_output
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from . import common, triangular
from .basic import comparisons, reductions, views
from .basic import elementwise as ops
from .basic.inplace import apply_inplace
from .decompositions import mH_of
from .linalg import matmul
from .lu_kernels import check_square, det_p, factorised
from .lu_solve import solve_with_lu
from .prod_cumprod import prod_backward_safe_zeros
from .solve import linalg_solve
from .spectral import linalg_svd


def _trace(t: Tensor) -> Tensor:
    return reductions.sum(views.diagonal(t, 0, -2, -1), -1)


def _scaled_eye(scale: Tensor, n: int) -> Tensor:
    """diag_embed(scale.unsqueeze(-1).expand(..., n)): the batch of scale * I."""
    return triangular.diag_embed(reductions.expand(views.unsqueeze(scale, -1), (*scale.shape, n)))


# ---- linalg.det, det --------------------------------------------------------------------------

def _det_singular(A: Tensor, d: Tensor, g: Tensor) -> Tensor:
    """linalg_det_backward's singular branch (under grad mode): the adjugate through the SVD
    (Higham), U diag(D) Vh with D prod_safe_zeros_backward(alpha, S), alpha = det(U) det(Vh)
    grad, so no division by a zero pivot (the columns' signs cancel in it)."""
    U, S, Vh = linalg_svd(A)
    alpha = ops.mul(ops.mul(linalg_det(U), linalg_det(Vh)), g)
    D = prod_backward_safe_zeros(views.unsqueeze(alpha, -1), S, S.ndim - 1)
    return matmul(ops.mul(U, views.unsqueeze(D, -2)), Vh)


def _det_non_singular(A: Tensor, d: Tensor, g: Tensor) -> Tensor:
    return linalg_solve(mH_of(A), d)


def _masked_fmap(mask: np.ndarray, A: Tensor, d: Tensor, g: Tensor) -> Tensor:
    """FunctionsManual's masked_fmap: the singular formula where the batch's mask holds, the
    non-singular one elsewhere; a mixed batch is empty_like(A) with both results index_put_
    into it, each computed on its part (A[mask], d[mask], grad[mask])."""
    chosen = int(np.count_nonzero(mask))
    if chosen == mask.size:
        return _det_singular(A, d, g)
    if chosen == 0:
        return _det_non_singular(A, d, g)
    out = common.new(np.zeros(tuple(A.shape), A.dtype.np), A.dtype, A.device)
    for part, formula in ((mask, _det_singular), (~mask, _det_non_singular)):
        index = common.new(part, dtypes.bool_, A.device)
        values = formula(*(views_indexing.getitem(t, index) for t in (A, d, g)))
        positions = views_indexing.advanced_positions(out, index)
        with no_grad():
            result = common.index_put(out, positions, values)
        apply_inplace(out, common.INDEX_PUT, result, [values], index=positions)
    return out


def _det_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """linalg_det_backward: grad * det * A^{-H}. Outside grad mode, linalg_lu_solve with the
    saved LU, its zero pivots perturbed to eps; under it (a further derivative), recomputed
    from A: linalg_solve(A.mH(), d), or through the SVD where |det| < 100 eps (masked_fmap).
    An empty A's grad is zeros, a 1 x 1 A's the grad itself (ATen's shortcuts: neither
    reads A, so neither requires grad through it)."""
    n = c.A.shape[-1]
    if c.A.numel() == 0:
        return [common.zeros_like(c.A)]
    if n == 1:
        return [reductions.expand(views.unsqueeze(views.unsqueeze(g, -1), -1), tuple(c.A.shape))]
    # d = diag_embed(grad * det), F-transposed (.mT()) as lu_solve takes it
    d = views.transpose(_scaled_eye(ops.mul(g, c.result), n), -2, -1)
    if is_grad_enabled():
        eps = np.finfo(c.LU._data.dtype).eps
        return [_masked_fmap(np.abs(c.result._data) < 100 * eps, c.A, d, g)]
    return [solve_with_lu(c, d, adjoint=not c.use_a_t, perturb=True)]


def _det_jvp(c: Any) -> Tensor:
    """linalg_det_jvp: tr(A^{-1} dA) * det, A^{-1} dA from the (perturbed) LU."""
    a_inv_da = solve_with_lu(c, c.A_t, adjoint=c.use_a_t, perturb=True)
    return ops.mul(_trace(a_inv_da), c.result)


LINALG_DET = OpSpec("LinalgDetBackward0", ("A",), {"A": ("A", "LU", "pivots", "result")},
                    _det_backward, saved_outputs=("LU", "pivots", "result"), jvp=_det_jvp)


def det(self: Tensor) -> Tensor:
    """torch.det (Tensor.det): linalg.det."""
    return linalg_det(self)


def linalg_det(A: Tensor) -> Tensor:
    check_square(A, "linalg.det")
    use_a_t, lu, piv = factorised(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    value = np.prod(diag, axis=-1) * det_p(piv).astype(lu.dtype)
    result = common.new(value, A.dtype, A.device)
    attrs = {"LU": common.new(lu, A.dtype, A.device, order="K"),
             "pivots": common.new(piv, dtypes.int32, A.device), "use_a_t": use_a_t}
    return record(LINALG_DET, result, [A], **attrs)


# ---- linalg.slogdet, slogdet, logdet ----------------------------------------------------------

def _slogdet_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """slogdet_backward: the real sign's grad is zero, so grad_logabsdet * A^{-H}: outside
    grad mode linalg_lu_solve with the saved LU (a singular A's zero pivot divides: inf and
    NaN), under it linalg_solve(A.mH(), d) (a singular A raises the solver's error)."""
    g = gs[1]
    if g is None:
        return [None]
    d = views.transpose(_scaled_eye(g, c.A.shape[-1]), -2, -1)
    if is_grad_enabled():
        return [_det_non_singular(c.A, d, g)]
    return [solve_with_lu(c, d, adjoint=not c.use_a_t, perturb=False)]


LINALG_SLOGDET = OpSpec("LinalgSlogdetBackward0", ("A",),
                        {"A": ("A", "LU", "pivots", "result")}, _slogdet_backward,  # type: ignore[arg-type]
                        saved_outputs=("LU", "pivots", "result"))


def _slogdet_jvp(c: Any) -> Tensor:
    """slogdet_jvp's logabsdet tangent: tr(A^{-1} dA) (sign's is zeros)."""
    return _trace(solve_with_lu(c, c.A_t, adjoint=c.use_a_t, perturb=False))


SLOGDET_SIGN_JVP = OpSpec("LinalgSlogdetBackward0", ("A",),
                          jvp=lambda c: common.zeros_like(c.result))
SLOGDET_LOGABSDET_JVP = OpSpec("LinalgSlogdetBackward0", ("A",), jvp=_slogdet_jvp)

linalg_slogdet_return_type = type("linalg_slogdet", (tuple,), {
    "sign": property(lambda self: self[0]), "logabsdet": property(lambda self: self[1])})
slogdet_return_type = type("slogdet", (tuple,), {
    "sign": property(lambda self: self[0]), "logabsdet": property(lambda self: self[1])})


def _slogdet(A: Tensor, name: str) -> tuple[Tensor, Tensor]:
    check_square(A, name)
    use_a_t, lu, piv = factorised(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    # the sign of each pivot as torch's sgn gives it: 0 for a NaN (np.sign's is NaN)
    signs = np.where(np.isnan(diag), 0, np.sign(diag))
    sign_value = np.prod(signs, axis=-1) * det_p(piv).astype(lu.dtype)
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
    check_square(self, "logdet")
    sign, logabsdet = _slogdet(self, "linalg.slogdet")
    return comparisons.where(comparisons.compare(sign, -1.0, np.equal), float("nan"), logabsdet)
