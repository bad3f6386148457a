"""torch.linalg.lstsq (h28ops, issue 24). The forward is numpy's lstsq (LAPACK's gelsd: for
the full-rank systems the drivers solve alike, the least-squares solution, the minimum-norm
one when A is wide); what each driver returns besides follows BatchLinearAlgebra.cpp's
linalg_lstsq: the rank for gelsy, gelsd and gelss, the singular values for gelsd and gelss,
the squared residuals when A is tall, the driver is not gelsy and (for gelsd and gelss) A
has full rank. The derivatives are derivatives.yaml's linalg_lstsq: linalg_lstsq_backward
(through linalg.pinv and its pinv_backward), linalg_lstsq_solution_jvp and
linalg_lstsq_residuals_jvp, in engine ops; real inputs (mH is the transpose)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record_multi_input
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import reductions, views
from .decompositions import column_major, mH_of
from .inverses import linalg_pinv, pinv_grads, pinv_tangent
from .linalg import matmul

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _vector_case(A: Tensor | np.ndarray, B: Tensor | np.ndarray) -> bool:
    """ATen's linalg_solve_is_vector_rhs: B is a vector, or a batch of them (A's shape
    without its last dim)."""
    return B.ndim == 1 or (A.ndim - 1 == B.ndim and tuple(B.shape) == tuple(A.shape[:-1]))


def _as_matrix(t: Tensor | None, vector: bool) -> Tensor | None:
    return None if t is None or not vector else views.unsqueeze(t, -1)


def _as_vector(t: Tensor, vector: bool) -> Tensor:
    return views.squeeze(t, -1) if vector else t


def _backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """FunctionsManual.cpp linalg_lstsq_backward: the solution's grad through
    pinv_backward (pinv(A) X's grad gX B^H) and pinv(A)^H gX; the residuals' (|AX - B|^2
    summed over the rows) 2 (gL r) X^H and -2 gL r, r = AX - B."""
    gX, gL = gs[0], gs[1]
    A, B, X = c.self, c.b, c.solution
    vector = _vector_case(A, B)
    B2 = views.unsqueeze(B, -1) if vector else B
    grad_a: Tensor | None = None
    grad_b: Tensor | None = None
    if gX is not None:
        gX2 = views.unsqueeze(gX, -1) if vector else gX
        pinv = linalg_pinv(A)
        if c._node.should_compute(0):
            ctx = SimpleNamespace(self=A, result=pinv)
            grad_a = pinv_grads(ctx, matmul(gX2, mH_of(B2)))[0]
        if c._node.should_compute(1):
            grad_b = _as_vector(matmul(mH_of(pinv), gX2), vector)
    if gL is not None and gL.numel():
        X2 = views.unsqueeze(X, -1) if vector else X
        r = ops.sub(matmul(A, X2), B2)
        gL2 = views.unsqueeze(gL, -2)
        if c._node.should_compute(0):
            from_l = matmul(ops.mul(2, ops.mul(gL2, r)), mH_of(X2))
            grad_a = from_l if grad_a is None else ops.add(grad_a, from_l)
        if c._node.should_compute(1):
            from_l = _as_vector(ops.mul(ops.mul(-2, gL2), r), vector)
            grad_b = from_l if grad_b is None else ops.add(grad_b, from_l)
    return [grad_a, grad_b]


def _solution_jvp(c: Any) -> Tensor:
    """linalg_lstsq_solution_jvp: pinv_jvp(A, pinv(A), dA) B + pinv(A) dB."""
    A, B = c.self, c.b
    vector = _vector_case(A, B)
    B2 = views.unsqueeze(B, -1) if vector else B
    dB2 = views.unsqueeze(c.b_t, -1) if vector else c.b_t
    pinv = linalg_pinv(A)
    dpinv = pinv_tangent(SimpleNamespace(self=A, result=pinv, self_t=c.self_t))
    return _as_vector(ops.add(matmul(dpinv, B2), matmul(pinv, dB2)), vector)


def _residuals_jvp(c: Any) -> Tensor:
    """linalg_lstsq_residuals_jvp: 2 sum(r dr) over the rows, r = AX - B, dr = dA X - dB
    (Danskin's theorem: X as if it did not move); an empty residuals' is empty."""
    if c.residuals.numel() == 0:
        return common.new(np.zeros(c.residuals.shape), c.residuals.dtype, c.residuals.device)
    A, B = c.self, c.b
    vector = _vector_case(A, B)
    B2 = views.unsqueeze(B, -1) if vector else B
    dB2 = views.unsqueeze(c.b_t, -1) if vector else c.b_t
    X2 = views.unsqueeze(c.solution, -1) if vector else c.solution
    r = ops.sub(matmul(A, X2), B2)
    dr = ops.sub(matmul(c.self_t, X2), dB2)
    return ops.mul(2, reductions.sum(ops.mul(r, dr), -2))


LINALG_LSTSQ = OpSpec("LinalgLstsqBackward0", ("self", "b"),
                      {"self": ("self", "b", "solution"), "b": ("self", "b", "solution")},
                      _backward,  # type: ignore[arg-type]
                      saved_outputs=("solution",), save_order=("b", "self"))
_SOLUTION_JVP = OpSpec("LinalgLstsqBackward0", ("self", "b"), jvp=_solution_jvp)
_RESIDUALS_JVP = OpSpec("LinalgLstsqBackward0", ("self", "b"), jvp=_residuals_jvp)

lstsq_return_type = type("linalg_lstsq", (tuple,), {
    "solution": property(lambda self: self[0]), "residuals": property(lambda self: self[1]),
    "rank": property(lambda self: self[2]),
    "singular_values": property(lambda self: self[3])})


def _checks(A: Tensor, B: Tensor, driver: str) -> None:
    """linalg_lstsq's checks, in its order."""
    if A.ndim < 2:
        raise RuntimeError(messages.LSTSQ_INPUT_2D)
    if B.ndim < 1:
        raise RuntimeError(messages.LSTSQ_OTHER_1D)
    if A.dtype != B.dtype:
        raise RuntimeError(messages.lstsq_dtypes(A.dtype.scalar_name, B.dtype.scalar_name))
    if not 0 <= A.ndim - B.ndim <= 1:
        raise RuntimeError(messages.LSTSQ_DIMS)
    vector = _vector_case(A, B)
    if A.shape[-2] != (B.shape[-1] if vector else B.shape[-2]):
        raise RuntimeError(messages.lstsq_rows(vector))
    if driver not in DRIVERS:
        raise RuntimeError(messages.LSTSQ_DRIVER)
    if A.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(messages.LSTSQ_FLOAT_DOUBLE)


def _solve(a: np.ndarray, b: np.ndarray, rcond: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each system's solution, rank and singular values (numpy's lstsq does not batch)."""
    batch = common.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    m, n, k = a.shape[-2], a.shape[-1], b.shape[-1]
    x = np.zeros((*batch, n, k), a.dtype)
    rank = np.zeros(batch, np.int64)
    s = np.zeros((*batch, min(m, n)), a.dtype)
    for index in np.ndindex(*batch):
        if a[index].size == 0:
            continue
        x[index], _, rank[index], s[index] = np.linalg.lstsq(a[index], b[index], rcond=rcond)
    return x, rank, s


def lstsq(self: Tensor, b: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> Any:
    """torch.linalg.lstsq (CPU: driver gelsy by default)."""
    A, B = self, b
    chosen = "gelsy" if driver is None else driver
    _checks(A, B, chosen)
    vector = _vector_case(A, B)
    a = np.asarray(A._data)
    b2 = np.asarray(B._data)[..., None] if vector else np.asarray(B._data)
    m, n = a.shape[-2], a.shape[-1]
    tolerance = np.finfo(a.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    x, rank, s = _solve(a, b2, tolerance)
    residuals = np.zeros((0,), a.dtype)
    full_rank = chosen == "gels" or bool(np.all(rank == n))
    if m > n and chosen != "gelsy" and full_rank:
        residuals = ((np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]) @ x - b2) ** 2).sum(-2)
    solution = common.new(column_major(x[..., 0] if vector else x), A.dtype, A.device,
                          order="K")
    resid = common.new(residuals.astype(a.dtype), A.dtype, A.device)
    rank_out = common.new(rank if chosen != "gels" else np.zeros((0,), np.int64),
                          dtypes.int64, A.device)
    values = common.new(s if chosen in ("gelsd", "gelss") else np.zeros((0,), a.dtype),
                        A.dtype, A.device)
    attrs: dict[str, Any] = {"solution": solution, "residuals": resid}
    if differentiable([A, B]):
        record_multi_input(LINALG_LSTSQ, [A, B], (solution, resid), attrs)
    forward_ad.record_tangent(_SOLUTION_JVP, [A, B], solution, attrs)
    forward_ad.record_tangent(_RESIDUALS_JVP, [A, B], resid, attrs)
    return lstsq_return_type((solution, resid, rank_out, values))
