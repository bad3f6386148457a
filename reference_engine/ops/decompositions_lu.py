"""The LU factorisation: linalg.lu_factor, linalg.lu_factor_ex, torch.lu (its deprecated
form), linalg.lu and lu_unpack, of square and rectangular (batches of) matrices.

The forward is partial-pivoting LU as LAPACK's getrf computes it (the first largest pivot),
written column-major as LAPACK writes it, with int32 1-based pivots. The derivatives are
derivatives.yaml's: lu_factor_ex_backward and linalg_lu_backward, lu_factor_ex_jvp and
linalg_lu_jvp, lu_unpack_backward (FunctionsManual.cpp), in engine ops (the factors read
back through lu_unpack, as ATen does), so create_graph differentiates them again. Real
inputs: mH is the transpose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages, warn
from ..autograd_meta import OpSpec, differentiable, record_multi_output
from ..tensor import Tensor
from . import common, joining, triangular
from .basic import elementwise as ops
from .basic import views
from .decompositions import column_major, mH_of, solve_triangular
from .fma import fma
from .linalg import matmul

# ---- the factorisation --------------------------------------------------------------------


def _idamax(x: np.ndarray) -> int:
    """BLAS idamax: the first index whose |x| is greater than every earlier one's. No |x| is
    greater than a NaN's nor a NaN's than any: a NaN is the pivot only in first place
    (np.argmax picks the first NaN anywhere)."""
    best, arg = abs(x[0]), 0
    for i in range(1, len(x)):
        if abs(x[i]) > best:
            best, arg = abs(x[i]), i
    return arg


def getrf_array(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One m x n matrix's LU, packed as getrf packs it, and its min(m, n) pivots (1-based)."""
    lu = a.copy()
    m, n = lu.shape
    k = min(m, n)
    pivots = np.zeros(k, np.int32)
    for j in range(k):
        p = j + _idamax(lu[j:, j])
        pivots[j] = p + 1
        if p != j:
            lu[[j, p]] = lu[[p, j]]
        if lu[j, j] != 0:
            # getrf2's column: scaled by the pivot's reciprocal unless that overflows
            if abs(lu[j, j]) >= np.finfo(lu.dtype).tiny:
                lu[j + 1:, j] *= 1 / lu[j, j]
            else:
                lu[j + 1:, j] /= lu[j, j]
            # the trailing update's multiply-add fused, as torch's BLAS (MKL) computes it: an
            # element that cancels keeps the product's rounding error (1 - 0.666..6 x 1.5 is
            # 5.55e-17, not 0), which decides a pivot and a singular matrix's error
            # (tests/reference_engine/test_lu_rounding.py)
            lu[j + 1:, j + 1:] = fma(-lu[j + 1:, j, None], lu[None, j, j + 1:],
                                     lu[j + 1:, j + 1:])
    return lu, pivots


def _factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch's LU (in double precision, rounded once), pivots and info (the first zero
    pivot's 1-based index, 0 if none: getrf's)."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    wide = np.promote_types(a.dtype, np.float64)
    lu = np.empty(a.shape, wide)
    piv = np.zeros((*a.shape[:-2], k), np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    for index in np.ndindex(*a.shape[:-2]):
        lu[index], piv[index] = getrf_array(a[index].astype(wide))
        zeros = np.flatnonzero(np.diagonal(lu[index])[:k] == 0)
        info[index] = zeros[0] + 1 if zeros.size else 0
    return lu.astype(a.dtype), piv, info


def _permutation(pivots: np.ndarray, m: int, dt: Any) -> np.ndarray:
    """P with A = P L U: the identity's rows swapped as the pivots say, the last swap first."""
    eye = np.broadcast_to(np.eye(m, dtype=dt), (*pivots.shape[:-1], m, m)).copy()
    for index in np.ndindex(*pivots.shape[:-1]):
        rows = eye[index]
        for j in range(pivots.shape[-1] - 1, -1, -1):
            p = int(pivots[index][j]) - 1
            if p != j:
                rows[[j, p]] = rows[[p, j]]
    return eye


def _check(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))


# ---- the derivatives ----------------------------------------------------------------------

def _narrow2(t: Tensor, rows: tuple[int, int], cols: tuple[int, int]) -> Tensor:
    return views.narrow(views.narrow(t, -2, *rows), -1, *cols)


def lu_backward(gl: Tensor | None, gu: Tensor | None, P: Tensor, L: Tensor, U: Tensor,
                pivot: bool) -> Tensor | None:
    """FunctionsManual's linalg_lu_backward, op for op (its create_graph graph is torch's:
    the generator's ci profile met the square case, its default probe the wide one), for
    A = P L U (L m x k unit lower, U k x n upper):
    m = n: P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H};
    m < n (U = [U1 | U2]): P L^{-H} [tril(L^H gL - triu(gU) U^H, -1) U1^{-H} + triu(gU1) | gU2];
    m > n (L = [L1; L2]): P [L1^{-H} triu(gU U^H - L^H tril(gL, -1)) + tril(gL1, -1); gL2]
    U^{-H}. An undefined gradient's terms are left out, as torch's."""
    if gl is None and gu is None:
        return None
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        ga = triangular.tril(matmul(mH_of(L), gl), -1) if gl is not None else None
        if gu is not None:
            upper = triangular.triu(matmul(gu, mH_of(U)))
            ga = upper if ga is None else ops.add(ga, upper)
        assert ga is not None
        ga = solve_triangular(mH_of(U), ga, upper=False, left=False)
        ga = solve_triangular(mH_of(L), ga, upper=True, left=True, unitriangular=True)
    elif m < n:
        def u1(t: Tensor) -> Tensor:
            return views.narrow(t, -1, 0, k)

        def u2(t: Tensor) -> Tensor:
            return views.narrow(t, -1, k, n - k)
        ga = matmul(mH_of(L), gl) if gl is not None else None
        if gu is not None:
            term = matmul(triangular.triu(gu), mH_of(U))
            ga = ops.neg(term) if ga is None else ops.sub(ga, term)
        assert ga is not None
        ga = solve_triangular(mH_of(u1(U)), triangular.tril(ga, -1), upper=False, left=False)
        if gu is not None:
            ga = joining.cat([ops.add(ga, triangular.triu(u1(gu))), u2(gu)], -1)
        ga = solve_triangular(mH_of(L), ga, upper=True, left=True, unitriangular=True)
        if gu is None:
            ga = joining.cat([ga, common.zeros_like(u2(U))], -1)
    else:
        def l1(t: Tensor) -> Tensor:
            return views.narrow(t, -2, 0, k)

        def l2(t: Tensor) -> Tensor:
            return views.narrow(t, -2, k, m - k)
        ga = matmul(gu, mH_of(U)) if gu is not None else None
        if gl is not None:
            term = matmul(mH_of(L), triangular.tril(gl, -1))
            ga = ops.neg(term) if ga is None else ops.sub(ga, term)
        assert ga is not None
        ga = solve_triangular(mH_of(l1(L)), triangular.triu(ga), upper=True, left=True,
                              unitriangular=True)
        if gl is not None:
            ga = joining.cat([ops.add(ga, triangular.tril(l1(gl), -1)), l2(gl)], -2)
        ga = solve_triangular(mH_of(U), ga, upper=False, left=False)
        if gl is None:
            ga = joining.cat([ga, common.zeros_like(l2(L))], -2)
    return matmul(P, ga) if pivot else ga


def lu_jvp(da: Tensor, P: Tensor, L: Tensor, U: Tensor, pivot: bool) -> tuple[Tensor, Tensor]:
    """linalg_lu_jvp's (dL, dU): dK = L1^{-1} P^T dA1 U1^{-1}, dL1 = L1 tril(dK, -1),
    dU1 = triu(dK) U1; the wide case's dU2 = L1^{-1} P^T dA2 - tril(dK, -1) U2, the tall
    case's dL2 = P^T dA2 U1^{-1} - L2 triu(dK)."""
    m, n = da.shape[-2], da.shape[-1]
    k = min(m, n)
    pda = matmul(mH_of(P), da) if pivot else da
    l1, u1 = _narrow2(L, (0, k), (0, k)), _narrow2(U, (0, k), (0, k))
    dk = solve_triangular(l1, _narrow2(pda, (0, k), (0, k)), upper=False, left=True,
                          unitriangular=True)
    dk = solve_triangular(u1, dk, upper=True, left=False)
    dl1 = matmul(l1, triangular.tril(dk, -1))
    du1 = matmul(triangular.triu(dk), u1)
    if m == n:
        return dl1, du1
    if m < n:
        pda2, u2 = views.narrow(pda, -1, k, n - k), views.narrow(U, -1, k, n - k)
        du2 = ops.sub(solve_triangular(l1, pda2, upper=False, left=True, unitriangular=True),
                      matmul(triangular.tril(dk, -1), u2))
        return dl1, joining.cat([du1, du2], -1)
    pda2, l2 = views.narrow(pda, -2, k, m - k), views.narrow(L, -2, k, m - k)
    dl2 = ops.sub(solve_triangular(u1, pda2, upper=True, left=False),
                  matmul(l2, triangular.triu(dk)))
    return joining.cat([dl1, dl2], -2), du1


def _factor_ex_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """lu_factor_ex_backward: the factors unpacked from LU (lu_unpack), the grad's lower
    part L's, its upper part U's."""
    P, L, U = lu_unpack(c.LU, c.pivots, True, c.pivot)
    g = gs[0]
    assert g is not None
    k = min(c.LU.shape[-2], c.LU.shape[-1])
    return [lu_backward(views.narrow(g, -1, 0, k), views.narrow(g, -2, 0, k), P, L, U,
                        c.pivot)]


def _factor_ex_jvp(c: Any) -> Tensor:
    """lu_factor_ex_jvp: dL + dU, packed as LU is."""
    P, L, U = lu_unpack(c.LU, c.pivots, True, c.pivot)
    dl, du = lu_jvp(c.A_t, P, L, U, c.pivot)
    m, n = dl.shape[-2], du.shape[-1]
    if m == n:
        return ops.add(triangular.tril(dl, -1), du)
    if m < n:   # dL m x m beside dU's first m columns
        return ops.add(_pad(triangular.tril(dl, -1), -1, n), du)
    return ops.add(triangular.tril(dl, -1), _pad(du, -2, m))


def _pad(t: Tensor, dim: int, size: int) -> Tensor:
    """t with zeros appended along dim (-1 or -2) up to size."""
    shape = list(t.shape)
    shape[dim] = size - t.shape[dim]
    zeros = common.new(np.zeros(shape, t.dtype.np), t.dtype, t.device)
    return joining.cat([t, zeros], dim)


LU_FACTOR_EX = OpSpec("LinalgLuFactorExBackward0", ("A",), {"A": ("LU", "pivots")},
                      _factor_ex_backward, saved_outputs=("LU", "pivots"))  # type: ignore[arg-type]
_LU_FACTOR_EX_JVP = OpSpec("LinalgLuFactorExBackward0", ("A",), jvp=_factor_ex_jvp)

linalg_lu_factor_ex_type = type("linalg_lu_factor_ex", (tuple,), {
    "LU": property(lambda self: self[0]), "pivots": property(lambda self: self[1]),
    "info": property(lambda self: self[2])})
linalg_lu_factor_type = type("linalg_lu_factor", (tuple,), {
    "LU": property(lambda self: self[0]), "pivots": property(lambda self: self[1])})


def _lu_factor_ex(A: Tensor, pivot: bool, name: str) -> tuple[Tensor, Tensor, Tensor]:
    _check(A, name)
    if not pivot:
        raise NotImplementedError(messages.LU_NO_PIVOT_NOT_MODELLED)
    lu, piv, info = _factor(np.asarray(A._data))
    LU = common.new(column_major(lu), A.dtype, A.device, order="K")
    pivots = common.new(piv, dtypes.int32, A.device)
    infos = common.new(info, dtypes.int32, A.device)
    attrs: dict[str, Any] = {"LU": LU, "pivots": pivots, "pivot": pivot}
    if differentiable([A]):
        record_multi_output(LU_FACTOR_EX, A, (LU,), attrs)
    forward_ad.record_tangent(_LU_FACTOR_EX_JVP, [A], LU, attrs)
    return LU, pivots, infos


def linalg_lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """torch.linalg.lu_factor_ex."""
    out = _lu_factor_ex(A, pivot, "torch.linalg.lu_factor_ex")
    if check_errors:
        _raise_singular(out[2], "torch.linalg.lu_factor_ex")
    return linalg_lu_factor_ex_type(out)


def _raise_singular(info: Tensor, name: str) -> None:
    """ATen's _linalg_check_errors for getrf: the first matrix with a zero pivot."""
    for batch, value in enumerate(np.asarray(info._data).reshape(-1).tolist()):
        if value > 0:
            raise RuntimeError(messages.lu_singular(name, value, batch if info.ndim else None))


def linalg_lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """torch.linalg.lu_factor: lu_factor_ex, then its info checked."""
    LU, pivots, info = _lu_factor_ex(A, pivot, "torch.linalg.lu_factor")
    _raise_singular(info, "torch.linalg.lu_factor")
    return linalg_lu_factor_type((LU, pivots))


def lu(self: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    """torch.lu (torch/functional.py): _lu_with_info, deprecated for linalg.lu_factor. ATen's
    _lu_with_info calls linalg_lu_factor_ex with check_errors false whatever it is passed, so
    a singular matrix is factored without an error (measured on torch 2.13; the generator
    met it: the engine raised where torch returned)."""
    warn.warn_once(messages.lu_deprecated())
    LU, pivots, info = _lu_factor_ex(self, pivot, "torch.linalg.lu_factor_ex")
    return (LU, pivots, info) if get_infos else (LU, pivots)


# ---- lu_unpack ----------------------------------------------------------------------------

def _unpack_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """lu_unpack_backward: L's grad below the diagonal, U's on and above, in LU's shape."""
    gl, gu = gs
    m, n = c.m, c.n
    k = min(m, n)
    parts: list[Tensor] = []
    if gl is not None:
        low = triangular.tril(gl, -1)
        parts.append(_pad(low, -1, n) if m < n else low)
    if gu is not None:
        up = triangular.triu(gu)
        parts.append(_pad(up, -2, m) if m > n else up)
    del k
    return [parts[0] if len(parts) == 1 else ops.add(parts[0], parts[1])]


def _unpack_l_jvp(c: Any) -> Tensor:
    t = c.LU_data_t
    m, n = t.shape[-2], t.shape[-1]
    return triangular.tril(t if m >= n else views.narrow(t, -1, 0, m), -1)


def _unpack_u_jvp(c: Any) -> Tensor:
    t = c.LU_data_t
    m, n = t.shape[-2], t.shape[-1]
    return triangular.triu(t if n >= m else views.narrow(t, -2, 0, n))


LU_UNPACK = OpSpec("LuUnpackBackward0", ("LU_data",), {}, _unpack_backward)  # type: ignore[arg-type]
_UNPACK_L_JVP = OpSpec("LuUnpackBackward0", ("LU_data",), jvp=_unpack_l_jvp)
_UNPACK_U_JVP = OpSpec("LuUnpackBackward0", ("LU_data",), jvp=_unpack_u_jvp)

lu_unpack_type = type("lu_unpack", (tuple,), {
    "P": property(lambda self: self[0]), "L": property(lambda self: self[1]),
    "U": property(lambda self: self[2])})


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """torch.lu_unpack: P (from the pivots), L (unit lower, m x k) and U (upper, k x n)."""
    if not (unpack_data and unpack_pivots):
        raise NotImplementedError(messages.LU_UNPACK_PARTS_NOT_MODELLED)
    a = np.asarray(LU_data._data)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    low = np.tril(a[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    up = np.triu(a[..., :k, :])
    P = common.new(_permutation(np.asarray(LU_pivots._data), m, a.dtype), LU_data.dtype,
                   LU_data.device)
    L = common.new(low, LU_data.dtype, LU_data.device)
    U = common.new(up, LU_data.dtype, LU_data.device)
    attrs: dict[str, Any] = {"m": m, "n": n}
    if differentiable([LU_data]):
        record_multi_output(LU_UNPACK, LU_data, (L, U), attrs)
    forward_ad.record_tangent(_UNPACK_L_JVP, [LU_data], L, attrs)
    forward_ad.record_tangent(_UNPACK_U_JVP, [LU_data], U, attrs)
    return lu_unpack_type((P, L, U))


# ---- linalg.lu ----------------------------------------------------------------------------

def _lu_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    return [lu_backward(gs[0], gs[1], c.P, c.L, c.U, c.pivot)]


LINALG_LU = OpSpec("LinalgLuBackward0", ("A",), {"A": ("L", "P", "U")}, _lu_backward,  # type: ignore[arg-type]
                   saved_outputs=("L", "P", "U"))
_LU_L_JVP = OpSpec("LinalgLuBackward0", ("A",),
                   jvp=lambda c: lu_jvp(c.A_t, c.P, c.L, c.U, c.pivot)[0])
_LU_U_JVP = OpSpec("LinalgLuBackward0", ("A",),
                   jvp=lambda c: lu_jvp(c.A_t, c.P, c.L, c.U, c.pivot)[1])

linalg_lu_type = type("linalg_lu", (tuple,), {
    "P": property(lambda self: self[0]), "L": property(lambda self: self[1]),
    "U": property(lambda self: self[2])})


def linalg_lu(A: Tensor, *, pivot: bool = True) -> Any:
    """torch.linalg.lu: P, L, U with A = P L U."""
    _check(A, "linalg.lu")
    if not pivot:
        raise NotImplementedError(messages.LU_NO_PIVOT_NOT_MODELLED)
    a = np.asarray(A._data)
    lu_np, piv, _ = _factor(a)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    P = common.new(_permutation(piv, m, a.dtype), A.dtype, A.device)
    L = common.new(np.tril(lu_np[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype), A.dtype,
                   A.device)
    U = common.new(np.triu(lu_np[..., :k, :]), A.dtype, A.device)
    attrs: dict[str, Any] = {"P": P, "L": L, "U": U, "pivot": pivot}
    if differentiable([A]):
        record_multi_output(LINALG_LU, A, (L, U), attrs)
    forward_ad.record_tangent(_LU_L_JVP, [A], L, attrs)
    forward_ad.record_tangent(_LU_U_JVP, [A], U, attrs)
    return linalg_lu_type((P, L, U))
