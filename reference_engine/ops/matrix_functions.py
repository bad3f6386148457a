"""matrix_exp (torch.matrix_exp, torch.linalg.matrix_exp): the exponential of a batch of square
matrices. Its derivatives are derivatives.yaml's linalg_matrix_exp_differential: the
differential of an analytic matrix function f at A in direction E is the top-right block of
f([[A, E], [0, A]]) (FunctionsManual.cpp differential_analytic_matrix_function), the
adjoint (backward) the same with A^H. Written with the engine's own matrix_exp, so a
create_graph backward differentiates it again."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import views
from .basic.inplace import copy_
from .decompositions import mH_of

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the [13/13] Pade approximant's coefficients and the 1-norm bound up to which it is exact to
# double precision without scaling.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0,
           1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(a: np.ndarray) -> np.ndarray:
    """One matrix's exponential (scaling and squaring with Pade 13), in float64. torch's
    kernel (LinearAlgebra.cpp mexp) uses Bader et al.'s optimised Taylor polynomials of
    degree 1 to 18 instead: both are exact to double precision's rounding, so the two agree
    up to it (float32 inputs: torch computes in float32, within its tolerance)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    norm = np.abs(a).sum(axis=0).max()
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / (2.0 ** s)
    b = _PADE13
    eye = np.eye(n)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _differential(a: Tensor, e: Tensor) -> Tensor:
    """The top-right block of matrix_exp([[a, e], [0, a]]), the block matrix built as ATen
    builds it for plain tensors: zeros of e's dtype, then a, a and e copied into narrowed
    views of it, in that order (three CopySlices under a create_graph gradient; the cat
    ATen uses for tensor subclasses only made CatBackward0 nodes)."""
    n = a.shape[-1]
    meta = common.new(np.zeros((*a.shape[:-2], 2 * n, 2 * n), e.dtype.np), e.dtype, e.device)
    for rows, cols, block in ((0, 0, a), (n, n, a), (0, n, e)):
        copy_(views.narrow(views.narrow(meta, -2, rows, n), -1, cols, n), block)
    return views.narrow(views.narrow(matrix_exp(meta), -2, 0, n), -1, n, n)


MATRIX_EXP = OpSpec("LinalgMatrixExpBackward0", ("self",), {"self": ("self",)},
                    lambda c, g: [_differential(mH_of(c.self), g)],
                    jvp=lambda c: _differential(c.self, c.self_t))


def matrix_exp(self: Tensor) -> Tensor:
    """torch.matrix_exp (Tensor.matrix_exp, torch.linalg.matrix_exp)."""
    _check(self)
    a = np.asarray(self._data)
    out = np.empty(a.shape, np.float64 if not np.iscomplexobj(a) else np.complex128)
    for index in np.ndindex(*a.shape[:-2]):
        out[index] = _expm(a[index].astype(out.dtype))
    return record(MATRIX_EXP, common.new(out.astype(a.dtype), self.dtype, self.device), [self])


def _check(t: Any) -> None:
    """LinearAlgebraUtils.h squareCheckInputs and checkFloatingOrComplex, as linalg_matrix_exp
    calls them."""
    if t.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d("linalg.matrix_exp"))
    if t.shape[-1] != t.shape[-2]:
        raise RuntimeError(messages.linalg_not_square("linalg.matrix_exp", t.shape[-2],
                                                      t.shape[-1]))
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating("linalg.matrix_exp",
                                                        t.dtype.scalar_name))
