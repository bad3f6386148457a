"""torch.linalg's functions, by their names there (the registry's `linalg.<name>` rows read
their forward from this module). Each is one of the engine's ops, some of them under
another name in torch's own namespace (torch.cross is linalg.cross with a deprecated
default dim)."""

from __future__ import annotations

from .. import views
from ..tensor import Tensor
from . import decompositions, products, reductions
from . import elementwise as ops

cross = products.linalg_cross
inv = decompositions.linalg_inv
solve_triangular = decompositions.solve_triangular
cholesky = decompositions.linalg_cholesky
pinv = decompositions.linalg_pinv
inv_ex = decompositions.inv_ex
cholesky_ex = decompositions.cholesky_ex


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return views.diagonal(A, offset, dim1, dim2)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """ATen: vdot for two vectors, else (x.conj() * y).sum(dim) (conj is x for real x)."""
    if x.ndim == 1 and y.ndim == 1:
        return products.vdot(x, y)
    return reductions.sum(ops.mul(x, y), dim)
