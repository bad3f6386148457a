"""The engine's getrf rounds as torch's LAPACK (MKL) does: the pivot column scaled by the
pivot's reciprocal, the trailing update's multiply-add fused. On matrices singular up to
rounding the fused update leaves the product's rounding error where an unfused one cancels
to an exact 0, which decides a pivot, and whether linalg.lu_factor and linalg.solve raise
(the 311-row generator probes met both, h37ops)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference_engine as re

SINGULAR_UP_TO_ROUNDING = [
    [[0.5, 0.5, 0.75], [1.5, 1.5, 0.75], [1.0, 1.0, 0.75]],
    [[0.5, 1.0, -0.5], [1.0, -1.0, 0.5], [-0.0, -1.0, 0.5]],
]


@pytest.mark.parametrize("rows", SINGULAR_UP_TO_ROUNDING)
def test_lu_factor_is_torchs_bit_for_bit(rows: list[list[float]]) -> None:
    expected = torch.linalg.lu_factor_ex(torch.tensor(rows, dtype=torch.float64))
    actual = re.linalg.lu_factor_ex(re.tensor(rows, dtype=re.float64))
    assert int(expected.info) == int(actual.info.item()) == 0
    np.testing.assert_array_equal(actual.pivots.numpy(), expected.pivots.numpy())
    np.testing.assert_array_equal(actual.LU.numpy(), expected.LU.numpy())


def test_a_matrix_singular_up_to_rounding_factors_and_solves_as_in_torch() -> None:
    first, second = SINGULAR_UP_TO_ROUNDING
    re.linalg.lu_factor(re.tensor(first, dtype=re.float64))  # torch does not raise
    b = [[1.0, 0.5], [-1.0, 2.0], [0.25, 3.0]]
    expected = torch.linalg.solve(torch.tensor(second, dtype=torch.float64),
                                  torch.tensor(b, dtype=torch.float64))
    # the engine raised 'The solver failed because the input matrix is singular.' here
    actual = re.linalg.solve(re.tensor(second, dtype=re.float64), re.tensor(b, dtype=re.float64))
    # a condition number of about 1e16: the solutions are equal in size, not in their digits
    assert np.isfinite(actual.numpy()).all() and np.isfinite(expected.numpy()).all()
    np.testing.assert_allclose(np.abs(actual.numpy()).max(), np.abs(expected.numpy()).max(),
                               rtol=1e-6)
