"""linalg.inv_ex and linalg.cholesky_ex: the result and LAPACK's info, on the inverse
(inverses.py) and the Cholesky factor (decompositions.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..tensor import Tensor
from . import inverses
from .common import new
from .decompositions import first_failing_minor, linalg_cholesky


class _WithInfo(tuple[Tensor, Tensor]):
    """torch.return_types.linalg_*_ex: (result, info), info an int32 tensor of the batch
    shape (0: success, k > 0: LAPACK's failing index)."""

    @property
    def info(self) -> Tensor:
        return self[1]


class linalg_inv_ex_type(_WithInfo):
    @property
    def inverse(self) -> Tensor:
        return self[0]


class linalg_cholesky_ex_type(_WithInfo):
    @property
    def L(self) -> Tensor:
        return self[0]


# type(...).__name__ is torch's (torch.return_types.linalg_inv_ex, ...)
linalg_inv_ex_type.__name__ = linalg_inv_ex_type.__qualname__ = "linalg_inv_ex"
linalg_cholesky_ex_type.__name__ = linalg_cholesky_ex_type.__qualname__ = "linalg_cholesky_ex"


def _info(A: Tensor, failing: Any) -> Tensor:
    """info per matrix of the batch: `failing(matrix)` (0 when it succeeds)."""
    batch = A.shape[:-2]
    values = np.zeros(batch, np.int32)
    for index in np.ndindex(*batch):
        values[index] = failing(A._data[index])
    return new(values, dtypes.int32, A.device)


def _zero_pivot(a: np.ndarray) -> int:
    if a.size == 0:
        return 0
    zero = np.flatnonzero(inverses.lu_pivots_diagonal(a) == 0)
    return int(zero[0]) + 1 if zero.size else 0


def _not_positive_definite(a: np.ndarray) -> int:
    try:
        np.linalg.cholesky(a)
        return 0
    except np.linalg.LinAlgError:
        return first_failing_minor(a)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> linalg_inv_ex_type:
    info = _info(A, _zero_pivot)
    if check_errors or not info._data.any():
        return linalg_inv_ex_type((inverses.linalg_inv(A), info))
    # a singular matrix without check_errors: LAPACK's output is not modelled
    raise NotImplementedError(messages.not_modelled("linalg.inv_ex of a singular matrix"))


def cholesky_ex(A: Tensor, *, upper: bool = False,
                check_errors: bool = False) -> linalg_cholesky_ex_type:
    info = _info(A, _not_positive_definite)
    if check_errors or not info._data.any():
        return linalg_cholesky_ex_type((linalg_cholesky(A, upper=upper), info))
    raise NotImplementedError(messages.not_modelled(
        "linalg.cholesky_ex of a non-positive-definite matrix"))

