"""The QR decomposition: linalg.qr and torch.qr (its deprecated `some` form). The forward is
Householder QR (numpy's geqrf/orgqr, the LAPACK routines torch calls, so Q's signs are
LAPACK's), written column-major as LAPACK writes it. The derivatives are derivatives.yaml's
linalg_qr_backward and linalg_qr_jvp (FunctionsManual.cpp), in engine ops so create_graph
differentiates them again; real inputs (mH is the transpose)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages, warn
from ..autograd_meta import OpSpec, differentiable, record_multi_output
from ..tensor import Tensor
from . import common, joining, triangular
from .basic import elementwise as ops
from .basic import views
from .decompositions import column_major, mH_of, solve_triangular
from .linalg import matmul


def _parse_mode(mode: str) -> tuple[bool, bool]:
    """ATen's _parse_qr_mode: (compute_q, reduced)."""
    if mode == "reduced":
        return True, True
    if mode == "complete":
        return True, False
    if mode == "r":
        return False, True
    raise RuntimeError(messages.qr_mode(mode))


def _copyltu(m: Tensor) -> Tensor:
    """The symmetric matrix whose lower triangle is m's: tril(m) + tril(m, -1)^H (ATen's
    syminvadj of triu(m^H), the same matrix)."""
    return ops.add(triangular.tril(m), mH_of(triangular.tril(m, -1)))


def _square_backward(gq: Tensor | None, gr: Tensor | None, q: Tensor, r: Tensor) -> Tensor:
    """gA of A = QR with R square and invertible: (gQ + Q copyltu(M)) R^{-H},
    M = R gR^H - gQ^H Q (Walter and Lehmann; the m >= n case of linalg_qr_backward)."""
    terms = []
    if gr is not None:
        terms.append(matmul(r, mH_of(gr)))
    if gq is not None:
        terms.append(ops.neg(matmul(mH_of(gq), q)))
    m = terms[0] if len(terms) == 1 else ops.add(terms[0], terms[1])
    ga = matmul(q, _copyltu(m))
    if gq is not None:
        ga = ops.add(ga, gq)
    return solve_triangular(mH_of(r), ga, upper=False, left=False)


def _qr_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """linalg_qr_backward. m >= n: the square case with Q's n columns. m < n: A = [X | Y]
    with R = [R1 | R2] (Y = Q R2): Y's grad is Q gR2, and X's the square case's with
    gQ + Y gR2^H."""
    gq, gr = gs[0], gs[1]
    q, r = c.Q, c.R
    m, n = q.shape[-2], r.shape[-1]
    compute_q, reduced = _parse_mode(c.mode)
    if not compute_q:
        raise RuntimeError(messages.qr_backward_mode_r())
    if not (reduced or m <= n):
        raise RuntimeError(messages.qr_backward_complete())
    if m >= n:
        return [_square_backward(gq, gr, q, r)]
    r1, r2 = views.narrow(r, -1, 0, m), views.narrow(r, -1, m, n - m)
    gr1 = None if gr is None else views.narrow(gr, -1, 0, m)
    if gr is not None:
        gr2 = views.narrow(gr, -1, m, n - m)
        shifted = matmul(matmul(q, r2), mH_of(gr2))   # Y = Q R2 (A is not saved)
        gq = shifted if gq is None else ops.add(gq, shifted)
        gy = matmul(q, gr2)
    else:
        gy = common.zeros_like(matmul(q, r2))
    return [joining.cat([_square_backward(gq, gr1, q, r1), gy], -1)]


def _omega(b: Tensor) -> Tensor:
    """The skew-symmetric part Q^H dQ: tril(b, -1) - tril(b, -1)^H."""
    low = triangular.tril(b, -1)
    return ops.sub(low, mH_of(low))


def _qr_jvp(c: Any) -> tuple[Tensor, Tensor]:
    """linalg_qr_jvp. m >= n: dX = dA R^{-1}, B = Q^H dX, Omega its skew part,
    dR = (B - Omega) R, dQ = dX - Q (B - Omega). m < n: B = Q^H dA_1 R_1^{-1},
    dQ = Q Omega, dR = Q^H dA - Omega R."""
    q, r, da = c.Q, c.R, c.A_t
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        dx = solve_triangular(r, da, upper=True, left=False)
        b = matmul(mH_of(q), dx)
        upper = ops.sub(b, _omega(b))
        return ops.sub(dx, matmul(q, upper)), matmul(upper, r)
    r1 = views.narrow(r, -1, 0, m)
    da1 = views.narrow(da, -1, 0, m)
    b = matmul(mH_of(q), solve_triangular(r1, da1, upper=True, left=False))
    omega = _omega(b)
    return matmul(q, omega), ops.sub(matmul(mH_of(q), da), matmul(omega, r))


LINALG_QR = OpSpec("LinalgQrBackward0", ("A",), {"A": ("Q", "R")}, _qr_backward,  # type: ignore[arg-type]
                   saved_outputs=("Q", "R"))
# the jvp formula gives both tangents; each output's spec reads its own
_Q_JVP = OpSpec("LinalgQrBackward0", ("A",), jvp=lambda c: _qr_jvp(c)[0])
_R_JVP = OpSpec("LinalgQrBackward0", ("A",), jvp=lambda c: _qr_jvp(c)[1])

linalg_qr_return_type = type("linalg_qr", (tuple,), {
    "Q": property(lambda self: self[0]), "R": property(lambda self: self[1])})
qr_return_type = type("qr", (tuple,), {
    "Q": property(lambda self: self[0]), "R": property(lambda self: self[1])})


def _factor(a: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """numpy's QR of a batch (empty matrices included, which numpy refuses)."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    q_cols = m if mode == "complete" else k
    r_rows = m if mode == "complete" else k
    if a.size == 0:
        q = np.zeros((*a.shape[:-2], m, q_cols), a.dtype)
        if q_cols:
            q[...] = np.eye(m, q_cols, dtype=a.dtype)
        return q, np.zeros((*a.shape[:-2], r_rows, n), a.dtype)
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    return q.astype(a.dtype), r.astype(a.dtype)


def _qr(A: Tensor, mode: str, name: str) -> tuple[Tensor, Tensor]:
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))
    compute_q, _ = _parse_mode(mode)
    q_np, r_np = _factor(np.asarray(A._data), mode)
    r = common.new(column_major(r_np), A.dtype, A.device, order="K")
    if compute_q:
        q = common.new(column_major(q_np), A.dtype, A.device, order="K")
    else:
        q = common.new(np.zeros((0,), q_np.dtype), A.dtype, A.device)
    attrs: dict[str, Any] = {"Q": q, "R": r, "mode": mode}
    if differentiable([A]):
        record_multi_output(LINALG_QR, A, (q, r), attrs)
    if compute_q:
        forward_ad.record_tangent(_Q_JVP, [A], q, attrs)
    forward_ad.record_tangent(_R_JVP, [A], r, attrs)
    return q, r


def linalg_qr(A: Tensor, mode: str = "reduced") -> Any:
    """torch.linalg.qr."""
    return linalg_qr_return_type(_qr(A, mode, "linalg.qr"))


def qr(self: Tensor, some: bool = True) -> Any:
    """torch.qr (Tensor.qr): linalg.qr with mode 'reduced' (some) or 'complete', after
    torch's deprecation warning."""
    warn.warn_once(messages.qr_deprecated())
    return qr_return_type(_qr(self, "reduced" if some else "complete", "linalg.qr"))
