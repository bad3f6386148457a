"""linalg.solve and linalg.solve_ex: ATen's _linalg_solve_ex (the LU of A, as
determinants.py computes it; the LU, pivots and result saved as torch saves them). Backward
and jvp are FunctionsManual.cpp's linalg_solve_backward and linalg_solve_jvp: under
create_graph the grad of B is linalg.solve(A^H, grad) itself, so the double-backward graph
is torch's."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import views
from .decompositions import _LinAlgError, column_major, mH_of
from .linalg import matmul
from .lu_kernels import check_square, lu_factor_arrays
from .lu_solve import solve_arrays as lu_solve_arrays
from .lu_solve import solve_with_lu


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """linalg_solve_is_vector_rhs: B is a vector, or a batch of vectors of A's batch."""
    return B.ndim == 1 or (A.ndim - 1 == B.ndim and tuple(B.shape) == tuple(A.shape[:-1]))


def _as_matrix(t: Tensor, vector: bool) -> Tensor:
    return views.unsqueeze(t, -1) if vector else t


def _as_vector(t: Tensor, vector: bool) -> Tensor:
    return views.squeeze(t, -1) if vector else t


def _solve_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """gB = A^{-H} gX, gA = -gB X^H (left); gB = gX A^{-H}, gA = -X^H gB (right)."""
    vector = _is_vector_rhs(c.LU, c.result)
    g_ = _as_matrix(g, vector)
    cache: list[Tensor] = []

    def grad_b_matrix() -> Tensor:
        if not cache:
            if is_grad_enabled():
                cache.append(linalg_solve(mH_of(c.A), g_, left=c.left))
            else:   # linalg_lu_solve with the saved factorisation
                cache.append(solve_with_lu(c, g_, adjoint=not c.use_a_t, perturb=False,
                                           left=c.left))
        return cache[0]

    def grad_a() -> Tensor:
        x_h = mH_of(_as_matrix(c.result, vector))
        gb = grad_b_matrix()
        return ops.neg(matmul(gb, x_h) if c.left else matmul(x_h, gb))

    return c.grads(grad_a, lambda: _as_vector(grad_b_matrix(), vector))


def _solve_jvp(c: Any) -> Tensor:
    """dX = A^{-1} (dB - dA X) (left), (dB - X dA) A^{-1} (right)."""
    vector = _is_vector_rhs(c.LU, c.result)
    x = _as_matrix(c.result, vector)
    db = _as_matrix(c.B_t, vector)
    rhs = ops.sub(db, matmul(c.A_t, x) if c.left else matmul(x, c.A_t))
    return _as_vector(solve_with_lu(c, rhs, adjoint=c.use_a_t, perturb=False, left=c.left),
                      vector)


LINALG_SOLVE = OpSpec("LinalgSolveExBackward0", ("A", "B"),
                      dict.fromkeys(("A", "B"), ("A", "LU", "pivots", "result")),
                      _solve_backward, saved_outputs=("LU", "pivots", "result"),
                      jvp=_solve_jvp)


def _solve(A: Tensor, B: Tensor, left: bool, check_errors: bool) -> tuple[Tensor, Tensor]:
    name = "linalg.solve"   # solve_ex's texts name linalg.solve too
    # _linalg_solve_ex's meta function: A floating, the dtypes, then checkInputsSolver (A a
    # batch of square matrices, B, a vector made a column first, at least a matrix)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))
    if A.dtype != B.dtype:
        raise RuntimeError(messages.solve_dtypes(name, A.dtype.scalar_name, B.dtype.scalar_name))
    check_square(A, name)
    vector = _is_vector_rhs(A, B)
    b = B._data[..., None] if vector else B._data
    if b.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name, "B"))
    n = A.shape[-1]
    rows = b.shape[-2] if left else b.shape[-1]
    if rows != n:
        raise RuntimeError(messages.solve_shapes(name, "AX = B" if left else "XA = B",
                                                 f"{n}x{n}", f"{b.shape[-2]}x{b.shape[-1]}"))
    # torch 2.13 factors A itself here (det and slogdet factor a contiguous A's transpose)
    use_a_t = False
    a = A._data
    lu, piv = lu_factor_arrays(np.asarray(a))
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    singular = diag == 0
    first = singular.argmax(-1) + 1 if n else np.zeros(singular.shape[:-1], np.int64)
    info = np.where(singular.any(-1), first, 0).astype(np.int32)
    if info.any():
        if check_errors:
            raise _LinAlgError(messages.SOLVE_SINGULAR)
        raise NotImplementedError(messages.SOLVE_EX_SINGULAR_NOT_MODELLED)
    batch = common.broadcast_shapes(b.shape[:-2], a.shape[:-2])  # torch names B's batch first
    a_b = np.broadcast_to(a, (*batch, n, n))
    b_b = np.broadcast_to(b, (*batch, *b.shape[-2:]))
    if a_b.size == 0 or b_b.size == 0:
        x = np.zeros(b_b.shape, a.dtype)
    else:
        # getrs with A's own factors, as torch's linalg_lu_solve (a solve of other factors,
        # NumPy's gesv, could find singular a matrix these factors are not: its LU rounds
        # its update otherwise)
        x = lu_solve_arrays(np.asarray(lu), piv, np.asarray(b_b), left, False)
    # torch's left solve is linalg_lu_solve's result, which LAPACK's getrs writes in place:
    # each matrix column-major (a later .contiguous() clones it); a right solve is that of
    # the transposes, transposed back: row-major
    x = x[..., 0] if vector else (column_major(x) if left else np.ascontiguousarray(x))
    result = common.new(x, A.dtype, A.device, order="K")
    attrs = {"LU": common.new(lu, A.dtype, A.device, order="K"),
             "pivots": common.new(piv, dtypes.int32, A.device), "use_a_t": use_a_t,
             "left": left}
    record(LINALG_SOLVE, result, [A, B], **attrs)
    return result, common.new(info, dtypes.int32, A.device)


linalg_solve_ex_return_type = type("linalg_solve_ex", (tuple,), {
    "result": property(lambda self: self[0]), "info": property(lambda self: self[1])})


def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    return _solve(A, B, left, True)[0]


def linalg_solve_ex(A: Tensor, B: Tensor, *, left: bool = True,
                    check_errors: bool = False) -> Any:
    """(result, info); a singular A's partial result (LAPACK's getrs on a zero pivot) is not
    modelled: NotImplementedError."""
    return linalg_solve_ex_return_type(_solve(A, B, left, check_errors))
