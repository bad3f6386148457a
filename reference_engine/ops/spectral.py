"""Spectral decompositions (h28ops, issue 24): linalg.svd, torch.svd, linalg.svdvals,
linalg.eigh, linalg.eigvalsh and linalg.cond's 2-norm. The forwards are numpy's LAPACK
(gesdd, syevd: the routines torch calls). Their singular vectors and eigenvectors are
defined up to the sign of each column, and numpy's LAPACK (OpenBLAS) picks other signs than
torch's (MKL) for about half of random eigh inputs and some float32 SVDs: no cheap rule
reproduces MKL's choice (measured: its columns follow neither a positive largest entry nor
a positive first row), so the OpInfo check compares these vectors up to that gauge
(conformance/opinfo/gauge.py). The derivatives are derivatives.yaml's _linalg_svd
(svd_backward, linalg_svd_jvp) and _linalg_eigh (linalg_eig_backward, linalg_eig_jvp with
is_hermitian), FunctionsManual.cpp's formulas in engine ops, so create_graph differentiates
them again; real inputs (mH is the transpose)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record_multi_output
from ..tensor import Tensor
from . import common, joining, triangular
from .basic import elementwise as ops
from .basic import views
from .decompositions import column_major, mH_of
from .linalg import matmul


def _eye_like(s: Tensor) -> Tensor:
    """The identity of S's matrices (S: a batch of vectors), S's dtype, no grad."""
    k = s.shape[-1]
    return common.new(np.broadcast_to(np.eye(k), (*s.shape[:-1], k, k)), s.dtype, s.device)


def _gaps(s2: Tensor) -> Tensor:
    """E_{jk} = s2_k - s2_j off the diagonal, 1 on it (torch fills the diagonal with 1: its
    entries are exactly 0 before, so adding the identity gives the same values)."""
    diff = ops.sub(views.unsqueeze(s2, -2), views.unsqueeze(s2, -1))
    return ops.add(diff, _eye_like(s2))


def _skew(x: Tensor) -> Tensor:
    return ops.sub(x, mH_of(x))


def svd_backward(gU: Tensor | None, gS: Tensor | None, gVh: Tensor | None, U: Tensor,
                 S: Tensor, Vh: Tensor) -> Tensor | None:
    """FunctionsManual.cpp svd_backward, real case, its operations in its order."""
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:   # svdvals: U diag(gS) Vh
        assert gS is not None
        if m >= n:
            return matmul(U, ops.mul(views.unsqueeze(gS, -1), Vh))
        return matmul(ops.mul(U, views.unsqueeze(gS, -2)), Vh)
    UhgU = None if gU is None else _skew(matmul(mH_of(U), gU))
    VhgV = None if gVh is None else _skew(matmul(Vh, mH_of(gVh)))
    E = _gaps(ops.mul(S, S))
    if UhgU is not None and VhgV is not None:
        ret = ops.div(ops.add(ops.mul(UhgU, views.unsqueeze(S, -2)),
                              ops.mul(views.unsqueeze(S, -1), VhgV)), E)
    elif UhgU is not None:
        ret = ops.mul(ops.div(UhgU, E), views.unsqueeze(S, -2))
    else:
        assert VhgV is not None
        ret = ops.mul(views.unsqueeze(S, -1), ops.div(VhgV, E))
    if gS is not None:
        ret = ops.add(ret, triangular.diag_embed(gS))
    if m > n and gU is not None:
        gA = matmul(U, ret)
        gUSinv = ops.div(gU, views.unsqueeze(S, -2))
        gA = ops.sub(ops.add(gA, gUSinv), matmul(U, matmul(mH_of(U), gUSinv)))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(ret, Vh)
        SinvgVh = ops.div(gVh, views.unsqueeze(S, -1))
        gA = ops.sub(ops.add(gA, SinvgVh), matmul(matmul(SinvgVh, mH_of(Vh)), Vh))
        return matmul(U, gA)
    return matmul(U, matmul(ret, Vh)) if m >= n else matmul(matmul(U, ret), Vh)


def _narrowed(c: Any) -> tuple[Tensor, Tensor]:
    """U and Vh to S's k columns / rows where full_matrices made them square."""
    k = c.S.shape[-1]
    if not c.full_matrices:
        return c.U, c.Vh
    return views.narrow(c.U, -1, 0, k), views.narrow(c.Vh, -2, 0, k)


def _output(jvp: Callable[[Any], tuple[Tensor, ...]], i: int) -> Callable[[Any], Tensor]:
    """The jvp of one output of a formula that gives every output's tangent."""
    return lambda c: jvp(c)[i]


def _svd_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """derivatives.yaml _linalg_svd: svd_backward of the grads and factors narrowed to k."""
    gU, gS, gVh = gs[0], gs[1], gs[2]
    k = c.S.shape[-1]
    if c.full_matrices:
        gU = None if gU is None else views.narrow(gU, -1, 0, k)
        gVh = None if gVh is None else views.narrow(gVh, -2, 0, k)
    U, Vh = _narrowed(c)
    return [svd_backward(gU, gS, gVh, U, c.S, Vh)]


def _svd_jvp(c: Any) -> tuple[Tensor, Tensor, Tensor]:
    """FunctionsManual.cpp linalg_svd_jvp, real case."""
    dA, S = c.A_t, c.S
    m, n = dA.shape[-2], dA.shape[-1]
    U, Vh = _narrowed(c)
    V = mH_of(Vh)
    dP = matmul(mH_of(U), matmul(dA, V)) if m < n else matmul(matmul(mH_of(U), dA), V)
    dS = views.diagonal(dP, 0, -2, -1)
    dP = ops.sub(dP, triangular.diag_embed(dS))
    E = _gaps(ops.mul(S, S))

    def sym(x: Tensor) -> Tensor:
        return ops.add(x, mH_of(x))

    dU = matmul(U, ops.div(sym(ops.mul(dP, views.unsqueeze(S, -2))), E))
    if m > n:
        dAVSinv = matmul(dA, ops.div(V, views.unsqueeze(S, -2)))
        dU = ops.sub(ops.add(dU, dAVSinv), matmul(U, matmul(mH_of(U), dAVSinv)))
        if c.full_matrices:
            dU = joining.cat([dU, common.new(np.zeros((*dU.shape[:-1], m - n)), dU.dtype,
                                             dU.device)], -1)
    dVh = matmul(ops.div(sym(ops.mul(dP, views.unsqueeze(ops.neg(S), -1))), E), Vh)
    if m < n:
        UHdASinv = matmul(ops.div(mH_of(U), views.unsqueeze(S, -1)), dA)
        dVh = ops.sub(ops.add(dVh, UHdASinv), matmul(matmul(UHdASinv, V), Vh))
        if c.full_matrices:
            dVh = joining.cat([dVh, common.new(np.zeros((*dVh.shape[:-2], n - m, n)),
                                               dVh.dtype, dVh.device)], -2)
    return dU, dS, dVh


LINALG_SVD = OpSpec("LinalgSvdBackward0", ("A",), {"A": ("S", "U", "Vh")},
                    _svd_backward,  # type: ignore[arg-type]
                    saved_outputs=("S", "U", "Vh"))
# the jvp formula gives the three tangents; each output's spec reads its own
_SVD_JVPS = [OpSpec("LinalgSvdBackward0", ("A",), jvp=_output(_svd_jvp, i)) for i in range(3)]


def _factor(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's SVD of a batch; empty matrices (which numpy refuses) as torch gives them:
    no singular values and identity factors."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if a.size == 0:
        batch = a.shape[:-2]
        u_cols, vh_rows = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, u_cols, dtype=a.dtype), (*batch, m, u_cols))
        vh = np.broadcast_to(np.eye(vh_rows, n, dtype=a.dtype), (*batch, vh_rows, n))
        return u, np.zeros((*batch, k), a.dtype), vh
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u.astype(a.dtype), s.astype(a.dtype), vh.astype(a.dtype)


def _check_matrix(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))


def _svd(A: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
    """ATen's _linalg_svd: U, S, Vh, one LinalgSvdBackward0 node over the three."""
    _check_matrix(A, "linalg.svd")
    u, s, vh = _factor(np.asarray(A._data), full_matrices)
    U = common.new(column_major(u), A.dtype, A.device, order="K")
    S = common.new(s, A.dtype, A.device)
    Vh = common.new(column_major(vh), A.dtype, A.device, order="K")
    attrs: dict[str, Any] = {"U": U, "S": S, "Vh": Vh, "full_matrices": full_matrices}
    if differentiable([A]):
        record_multi_output(LINALG_SVD, A, (U, S, Vh), attrs)
    for spec, out in zip(_SVD_JVPS, (U, S, Vh), strict=True):
        forward_ad.record_tangent(spec, [A], out, attrs)
    return U, S, Vh


linalg_svd_return_type = type("linalg_svd", (tuple,), {
    "U": property(lambda self: self[0]), "S": property(lambda self: self[1]),
    "Vh": property(lambda self: self[2])})
svd_return_type = type("svd", (tuple,), {
    "U": property(lambda self: self[0]), "S": property(lambda self: self[1]),
    "V": property(lambda self: self[2])})


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    """torch.linalg.svd."""
    if driver is not None:
        raise RuntimeError(messages.SVD_DRIVER_CUDA_ONLY)
    return linalg_svd_return_type(_svd(A, full_matrices))


def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """torch.svd (Tensor.svd): linalg.svd with full_matrices = not some, and V = Vh.mH; with
    compute_uv False, U and V are zeros of the full shapes."""
    if self.ndim < 2:
        raise RuntimeError(messages.svd_at_least_2d(self.ndim))
    if compute_uv:
        U, S, Vh = _svd(self, not some)
        return svd_return_type((U, S, mH_of(Vh)))
    S = linalg_svdvals(self)
    m, n = self.shape[-2], self.shape[-1]
    batch = self.shape[:-2]
    U = common.new(np.zeros((*batch, m, m)), self.dtype, self.device)
    V = common.new(np.zeros((*batch, n, n)), self.dtype, self.device)
    return svd_return_type((U, S, V))


def linalg_svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """torch.linalg.svdvals: _linalg_svd's S (its node saves U and Vh all the same, as
    torch computes them whenever A needs a grad or has a tangent)."""
    if driver is not None:
        raise RuntimeError(messages.SVD_DRIVER_CUDA_ONLY)
    return _svd(A, False)[1]


# ---- eigh -----------------------------------------------------------------------------------

def _eigh_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """FunctionsManual.cpp linalg_eig_backward with is_hermitian, real case."""
    gL, gV = gs[0], gs[1]
    L, V = c.eigenvalues, c.eigenvectors
    if gL is None and gV is None:
        return [None]
    if gV is None:   # eigvalsh: V diag(gL) V^H
        assert gL is not None
        return [matmul(ops.mul(V, views.unsqueeze(gL, -2)), mH_of(V))]
    VhgV = matmul(mH_of(V), gV)
    VhgV = ops.mul(0.5, ops.sub(VhgV, mH_of(VhgV)))   # its diagonal is exactly 0
    ret = ops.div(VhgV, _gaps(L))
    if gL is not None:   # torch copies gL into the diagonal, which is 0 here
        ret = ops.add(ret, triangular.diag_embed(gL))
    return [matmul(V, matmul(ret, mH_of(V)))]


def _eigh_jvp(c: Any) -> tuple[Tensor, Tensor]:
    """FunctionsManual.cpp linalg_eig_jvp with is_hermitian, real case: dP = V^H dA V,
    dL its diagonal, dV = V (dP / (L_j - L_i) off the diagonal, 0 on it)."""
    dA, L, V = c.A_t, c.eigenvalues, c.eigenvectors
    dP = matmul(matmul(mH_of(V), dA), V)
    dL = views.diagonal(dP, 0, -2, -1)
    ret = ops.div(dP, _gaps(L))   # the diagonal is zeroed next, whatever it divides by
    ret = ops.sub(ret, triangular.diag_embed(views.diagonal(ret, 0, -2, -1)))
    return dL, matmul(V, ret)


LINALG_EIGH = OpSpec("LinalgEighBackward0", ("A",), {"A": ("eigenvalues", "eigenvectors")},
                     _eigh_backward,  # type: ignore[arg-type]
                     saved_outputs=("eigenvalues", "eigenvectors"))
_EIGH_JVPS = [OpSpec("LinalgEighBackward0", ("A",), jvp=_output(_eigh_jvp, i)) for i in range(2)]

linalg_eigh_return_type = type("linalg_eigh", (tuple,), {
    "eigenvalues": property(lambda self: self[0]),
    "eigenvectors": property(lambda self: self[1])})


def _eigh(A: Tensor, UPLO: str) -> tuple[Tensor, Tensor]:
    """ATen's _linalg_eigh: eigenvalues ascending, eigenvectors from A's UPLO triangle only
    (syevd reads no other entry), one LinalgEighBackward0 node over both."""
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d("linalg.eigh"))
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(messages.linalg_not_square("linalg.eigh", A.shape[-2], A.shape[-1]))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating("linalg.eigh", A.dtype.scalar_name))
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(messages.eigh_uplo(UPLO))
    a = np.asarray(A._data)
    if a.size == 0:
        lam, vec = np.zeros(a.shape[:-1], a.dtype), np.zeros(a.shape, a.dtype)
    else:
        lam, vec = np.linalg.eigh(a, UPLO="U") if UPLO in ("U", "u") else \
            np.linalg.eigh(a, UPLO="L")
    L = common.new(lam.astype(a.dtype), A.dtype, A.device)
    V = common.new(column_major(vec.astype(a.dtype)), A.dtype, A.device, order="K")
    attrs: dict[str, Any] = {"eigenvalues": L, "eigenvectors": V}
    if differentiable([A]):
        record_multi_output(LINALG_EIGH, A, (L, V), attrs)
    for spec, out in zip(_EIGH_JVPS, (L, V), strict=True):
        forward_ad.record_tangent(spec, [A], out, attrs)
    return L, V


def linalg_eigh(A: Tensor, UPLO: str = "L") -> Any:
    """torch.linalg.eigh."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex) and A.ndim >= 2:
        # as eigvalsh's: the kernel's dispatch refuses an integer or bool A first
        raise NotImplementedError(messages.kernel_not_implemented("linalg_eigh_cpu",
                                                                  A.dtype.scalar_name))
    return linalg_eigh_return_type(_eigh(A, UPLO))


def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """torch.linalg.eigvalsh: _linalg_eigh's eigenvalues (its node saves the eigenvectors,
    computed whenever A needs a grad or has a tangent)."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex) and A.ndim >= 2:
        # the kernel's dispatch refuses an integer A before any check of linalg.eigh's
        raise NotImplementedError(messages.kernel_not_implemented("linalg_eigh_cpu",
                                                                  A.dtype.scalar_name))
    return _eigh(A, UPLO)[0]


# ---- cond -----------------------------------------------------------------------------------

def linalg_cond(self: Tensor, p: Any = None) -> Tensor:
    """torch.linalg.cond for p None, 2 or -2 (ATen's linalg_cond, whose `self` its parser's
    texts call `input`: the ratio of the largest and smallest singular values, narrowed from
    svdvals, then squeezed); the other orders (matrix norms of A and its inverse) are not
    modelled."""
    A = self
    if A.ndim < 2:
        raise RuntimeError(messages.COND_AT_LEAST_2D)
    if p is not None and (isinstance(p, str) or abs(float(p)) != 2.0):
        raise NotImplementedError(messages.COND_ORDER_NOT_MODELLED)
    if A.numel() == 0:   # NumPy defines no condition number there; torch gives 0
        return common.new(np.zeros(A.shape[:-2]), A.dtype, A.device)
    s = linalg_svdvals(A)
    s_max, s_min = views.narrow(s, -1, 0, 1), views.narrow(s, -1, -1, 1)
    ratio = ops.div(s_min, s_max) if p is not None and float(p) == -2.0 else \
        ops.div(s_max, s_min)
    return views.squeeze(ratio, -1)
