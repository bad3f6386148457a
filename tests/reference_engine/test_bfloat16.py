"""bfloat16, held as float32 storage rounded to 8 bits of mantissa (dtypes.bfloat16_round).

The expected values are bfloat16's by construction (bit patterns), never torch's answers."""

import numpy as np
import pytest

import reference_engine as torch
from reference_engine import dtypes


def _f32(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


@pytest.mark.parametrize(("bits", "expected"), [
    (0x3F800000, 0x3F800000),   # 1.0: already a bfloat16
    (0x3F808000, 0x3F800000),   # halfway, kept bit even: down
    (0x3F818000, 0x3F820000),   # halfway, kept bit odd: up to even
    (0x3F808001, 0x3F810000),   # above halfway: up
    (0x3F807FFF, 0x3F800000),   # below halfway: down
    (0xBF818000, 0xBF820000),   # the sign does not change the rule
    (0x7F7FFFFF, 0x7F800000),   # float32's largest rounds to inf
    (0x7F800000, 0x7F800000),   # inf stays inf
])
def test_round_to_nearest_even(bits: int, expected: int) -> None:
    out = dtypes.bfloat16_round(np.array([_f32(bits)], dtype=np.float32))
    assert out.view(np.uint32)[0] == expected


def test_nan_stays_nan() -> None:
    out = dtypes.bfloat16_round(np.array([np.nan, 1.0], dtype=np.float32))
    assert np.isnan(out[0]) and out[1] == 1.0


def test_rounded_values_keep_their_memory() -> None:
    """A view of a bfloat16 tensor shares its base's memory: rounding what is already
    bfloat16 returns the array itself."""
    a = np.array([1.0, 2.0, 0.5], dtype=np.float32)
    assert dtypes.bfloat16_round(a) is a


def test_tensors_results_and_inplace_writes_are_rounded() -> None:
    x = torch.tensor([1.0 + 2.0 ** -9, 1.0], dtype=torch.bfloat16)
    assert x.tolist() == [1.0, 1.0]
    # each result is rounded: 1 + 2^-8 is a tie that goes down to 1 (even), so adding
    # 2^-9 after it stays 1, while adding 2^-8 + 2^-9 at once goes up to 1 + 2^-7
    y = torch.tensor([1.0, 1.0], dtype=torch.bfloat16) + 2.0 ** -8 + 2.0 ** -9
    assert y.tolist() == [1.0, 1.0]
    y = torch.tensor([1.0, 1.0], dtype=torch.bfloat16) + (2.0 ** -8 + 2.0 ** -9)
    assert y.tolist() == [1.0078125, 1.0078125]
    z = torch.zeros(2, dtype=torch.bfloat16)
    z.copy_(torch.tensor([1.0 / 3.0, 3.0]))
    assert z.tolist() == [0.333984375, 3.0]
    assert z.dtype is torch.bfloat16


def test_promotion() -> None:
    b = torch.ones(1, dtype=torch.bfloat16)
    assert (b + torch.ones(1, dtype=torch.float16)).dtype is torch.float32
    assert (b + torch.ones(1, dtype=torch.float32)).dtype is torch.float32
    assert (torch.ones(1, dtype=torch.float32) + b).dtype is torch.float32
    assert (b + torch.ones(1, dtype=torch.float64)).dtype is torch.float64
    assert (b * 2.5).dtype is torch.bfloat16
    assert (b + torch.ones(1, dtype=torch.int64)).dtype is torch.bfloat16
