"""complex64 results bit for bit as torch's CPU kernels give them: products with each part's
two products rounded apart (numpy's complex multiply fuses them), abs as hypot of the parts,
sgn as each part divided by it. Float32 formulas that cancel (polar's gradgrad through
sgn_backward, divided by |abs|) amplify any last-bit difference past the comparator's
tolerance, so these are pinned exactly, not within a tolerance."""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import reference_engine as engine


def _draws(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(4096) + 1j * rng.standard_normal(4096)).astype(np.complex64)


OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul": lambda m, x, y: m.tensor(x) * m.tensor(y),
    "mul_python_complex": lambda m, x, y: m.tensor(x) * (0.3 - 1.7j),
    "abs": lambda m, x, y: m.tensor(x).abs(),
    "sgn": lambda m, x, y: m.tensor(x).sgn(),
}


@pytest.mark.parametrize("name", OPS)
def test_complex64_results_are_torchs_bit_for_bit(name: str) -> None:
    x, y = _draws(1), _draws(2)
    expected = OPS[name](torch, x, y).numpy()
    actual = OPS[name](engine, x, y).numpy()
    assert actual.dtype == expected.dtype
    assert np.array_equal(actual, expected), f"{np.sum(actual != expected)} of {x.size} differ"
