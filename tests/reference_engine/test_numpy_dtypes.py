"""torch.tensor of a NumPy array takes its dtype from the array's: the engine's five dtypes
as they are, another float as float32 (narrower) or float64, another integer as int64. Case
programs cannot make NumPy arrays, so this is pinned here (a mutation survivor)."""

import numpy as np
import pytest

import reference_engine as torch


@pytest.mark.parametrize(("np_dtype", "expected"), [
    (np.float32, torch.float32), (np.float64, torch.float64), (np.int64, torch.int64),
    (np.bool_, torch.bool), (np.float16, torch.float32), (np.int16, torch.int64),
    (np.uint8, torch.int64)])
def test_tensor_of_an_array_takes_its_dtype(np_dtype: type, expected: object) -> None:
    assert torch.tensor(np.array([1, 0], dtype=np_dtype)).dtype is expected


def test_an_array_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError):
        torch.tensor(np.array(["a"]))
