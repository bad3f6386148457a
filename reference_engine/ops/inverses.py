"""Inverses: linalg.inv, linalg.pinv and pinverse. Forwards in numpy; backward and jvp formulas
are FunctionsManual.cpp's, written in engine ops so that they differentiate again.
(linalg.inv_ex: linalg_ex.py, with cholesky_ex.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from .basic import elementwise as ops
from .common import compute_on, new
from .decompositions import _LinAlgError, column_major, mH_of
from .linalg import matmul

# ---- linalg.inv -------------------------------------------------------------------------------

LINALG_INV = OpSpec(
    "LinalgInvExBackward0", ("self",), {"self": ("result",)},   # torch's `inverse`
    lambda c, g: [ops.neg(matmul(mH_of(c.result), matmul(g, mH_of(c.result))))],
    jvp=lambda c: ops.neg(matmul(matmul(c.result, c.self_t), c.result)))


def _inverse(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return a.copy()
    for index in np.ndindex(*a.shape[:-2]):
        # LAPACK's getrf reports the first zero pivot (1-based); torch names it
        lu_diag = lu_pivots_diagonal(a[index])
        zero = np.flatnonzero(lu_diag == 0)
        if zero.size:
            raise _LinAlgError(messages.singular_inverse(int(zero[0]) + 1))
    return np.linalg.inv(a)


def lu_pivots_diagonal(a: np.ndarray) -> np.ndarray:
    """U's diagonal of a partial-pivoting LU of `a` (getrf's order)."""
    u = a.astype(np.float64).copy()
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        u[[k, p]] = u[[p, k]]
        if u[k, k] != 0:
            u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return np.diagonal(u)


def linalg_inv(A: Tensor) -> Tensor:
    out = column_major(compute_on(_inverse, A._data))
    return record(LINALG_INV, new(out, A.dtype, A.device, order="K"), [A])


# ---- linalg.pinv, pinverse --------------------------------------------------------------------

def pinv_grads(c: Any, g: Tensor) -> list[Tensor | None]:
    a, p = c.self, c.result
    m, n = a.shape[-2], a.shape[-1]
    ph, gh = mH_of(p), mH_of(g)
    if m <= n:
        k = matmul(gh, p)
        kph = matmul(k, ph)
        out = ops.add(ops.sub(ops.add(ops.neg(mH_of(matmul(p, k))), kph),
                              matmul(matmul(a, p), kph)),
                      matmul(matmul(ph, p), ops.sub(gh, matmul(k, a))))
    else:
        k = matmul(p, gh)
        phk = matmul(ph, k)
        out = ops.sub(ops.add(ops.add(ops.neg(mH_of(matmul(k, p))),
                                      matmul(matmul(ops.sub(gh, matmul(a, k)), p), ph)), phk),
                      matmul(matmul(phk, p), a))
    return [out]


def pinv_tangent(c: Any) -> Tensor:
    a, p, da = c.self, c.result, c.self_t
    m, n = a.shape[-2], a.shape[-1]
    dah, ph = mH_of(da), mH_of(p)
    if m <= n:
        k = matmul(ph, dah)
        return ops.add(matmul(p, ops.sub(ops.sub(k, mH_of(k)), matmul(k, matmul(a, p)))),
                       matmul(ops.sub(dah, matmul(p, matmul(a, dah))), matmul(ph, p)))
    k = matmul(p, da)
    kh = mH_of(k)
    return ops.add(matmul(ops.sub(ops.sub(kh, k), matmul(matmul(p, a), kh)), p),
                   matmul(matmul(p, ph), ops.sub(dah, matmul(matmul(dah, a), p))))


LINALG_PINV = OpSpec("LinalgPinvBackward0", ("self",), {"self": ("self", "result")},
                     pinv_grads, jvp=pinv_tangent)


def _tolerance(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(
        value._data if isinstance(value, Tensor) else value, dtype=np.float64)


def _pseudo_inverse(a: np.ndarray, atol: np.ndarray | None, rtol: np.ndarray | None,
                    hermitian: bool) -> np.ndarray:
    """ATen's linalg_pinv: singular values (or |eigenvalues|) above
    max(atol, rtol * largest) inverted, the others zeroed; rtol defaults to eps * max(m, n)
    when neither tolerance is given, to 0 when only atol is."""
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        return np.zeros((*a.shape[:-2], n, m), a.dtype)
    if rtol is None:
        rtol = np.asarray(np.finfo(a.dtype).eps * max(m, n) if atol is None else 0.0)
    atol = np.asarray(0.0) if atol is None else atol
    if hermitian:
        s, u = np.linalg.eigh(a)
        size = np.abs(s)
        largest = size.max(-1, keepdims=True)
        vh_t, u_h = u, np.swapaxes(u, -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        size, largest = s, s[..., :1]
        vh_t, u_h = np.swapaxes(vh, -1, -2), np.swapaxes(u, -1, -2)
    tol = np.maximum(atol[..., None], rtol[..., None] * largest).astype(a.dtype)
    with np.errstate(divide="ignore"):
        s_inv = np.where(size > tol, 1 / s, a.dtype.type(0)).astype(a.dtype)
    return (vh_t * s_inv[..., None, :]) @ u_h


def linalg_pinv(A: Tensor, *, atol: Any = None, rtol: Any = None,
                hermitian: bool = False) -> Tensor:
    out = compute_on(lambda a: _pseudo_inverse(a, _tolerance(atol), _tolerance(rtol), hermitian),
                     A._data)
    return record(LINALG_PINV, new(out, A.dtype, A.device), [A])


def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with rcond as the relative tolerance, atol 0."""
    return linalg_pinv(self, atol=0.0, rtol=rcond)
