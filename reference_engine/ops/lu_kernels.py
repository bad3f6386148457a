"""The LU factorisation of arrays as LAPACK's getrf gives it, and the permutation's sign:
NumPy kernels below both ops that use it (determinants.py, solve.py), whose nodes save the
LU and pivots torch saves (their backward solves with them: lu_solve.solve_with_lu)."""

from __future__ import annotations

import numpy as np

from .. import messages
from ..tensor import Tensor
from .decompositions import column_major
from .decompositions_lu import getrf_array  # one matrix's getrf (m x n)

# ---- the LU factorisation, as getrf ---------------------------------------------------------


def lu_factor_arrays(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A batch's LU (each matrix column-major, as LAPACK writes it) and int32 pivots."""
    n = a.shape[-1]
    lu, piv = np.empty_like(a), np.zeros((*a.shape[:-2], n), np.int32)
    for index in np.ndindex(*a.shape[:-2]):
        lu[index], piv[index] = getrf_array(a[index])
    return column_major(lu), piv


def det_p(pivots: np.ndarray) -> np.ndarray:
    """lu_det_P: the permutation's sign, -1 to the number of rows actually swapped."""
    swaps = (pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32)).sum(-1)
    return np.where(swaps % 2 == 0, 1.0, -1.0)


def factorised(A: Tensor) -> tuple[bool, np.ndarray, np.ndarray]:
    """ATen factors A^T for a contiguous real A (det(A^T) = det(A), and A^T is already
    F-contiguous): whether it did, the LU and the pivots."""
    use_a_t = A.is_contiguous()
    a = np.swapaxes(A._data, -1, -2) if use_a_t else A._data
    lu, piv = lu_factor_arrays(np.asarray(a))
    return use_a_t, lu, piv


def check_square(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d(name))
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(messages.linalg_not_square(name, A.shape[-2], A.shape[-1]))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating(name, A.dtype.scalar_name))
