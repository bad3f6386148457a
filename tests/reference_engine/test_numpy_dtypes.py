"""torch.tensor of a NumPy array takes its dtype from the array's: the engine's dtypes
(float16, int8, uint8, int16, complex64 and complex128 among them) as they are, as torch
does; another integer (uint16, which the engine lacks) as int64. Case programs cannot make NumPy
arrays, so this is pinned here (a mutation survivor). Also: type promotion with complex dtypes."""

from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine import dtypes


@pytest.mark.parametrize(("np_dtype", "expected"), [
    (np.float32, torch.float32), (np.float64, torch.float64), (np.int64, torch.int64),
    (np.bool_, torch.bool), (np.float16, torch.float16), (np.int16, torch.int16),
    (np.int8, torch.int8),
    (np.uint8, torch.uint8), (np.uint16, torch.int64)])
def test_tensor_of_an_array_takes_its_dtype(np_dtype: type, expected: object) -> None:
    assert torch.tensor(np.array([1, 0], dtype=np_dtype)).dtype is expected


def test_an_array_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError):
        torch.tensor(np.array(["a"]))


@pytest.mark.parametrize(("dims", "zero_dims", "scalars", "expected"), [
    (["float32"], [], ["complex128"], "complex64"),      # a Python complex: default complex
    (["float64"], [], ["complex128"], "complex128"),
    (["int64"], [], ["complex128"], "complex64"),
    (["float64", "complex64"], [], [], "complex128"),    # promoteTypes keeps the precision
    (["float32"], ["complex128"], [], "complex64"),      # combine_categories
    (["int64"], ["complex128"], [], "complex128"),
])
def test_complex_promotion_is_atens(dims: list[str], zero_dims: list[str], scalars: list[str],
                                    expected: str) -> None:
    """dtypes.result_type with complex dtypes, as torch.result_type gives them (checked on
    torch 2.13 when written: float32 tensor * 1j is complex64, float64 + 1j complex128)."""
    def d(names: list[str]) -> list[Any]:
        return [getattr(dtypes, n) for n in names]
    assert dtypes.result_type(d(dims), d(zero_dims), d(scalars)) is getattr(dtypes, expected)


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("uint8", "int8", "int16"), ("int8", "uint8", "int16"), ("uint8", "int16", "int16"),
    ("uint8", "bool_", "uint8"), ("uint8", "int64", "int64"), ("uint8", "float32", "float32"),
    ("uint8", "uint8", "uint8")])
def test_uint8_promotion_is_atens(a: str, b: str, expected: str) -> None:
    """promoteTypes with uint8: with int8 neither holds the other's range, so int16
    (torch.promote_types(torch.uint8, torch.int8) is torch.int16 on torch 2.13)."""
    assert dtypes.result_type([getattr(dtypes, a), getattr(dtypes, b)], [], []) \
        is getattr(dtypes, expected)
