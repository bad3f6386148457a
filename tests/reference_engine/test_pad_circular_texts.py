"""F.pad's circular mode: its refusals have no kind of their own (conformance/case/kinds.py
classifies them `unknown`, which a case's `raises` does not take), so the engine's texts are
compared with torch's here (PadNd.cpp _pad_circular_symint and _pad_enum_symint, in their
order)."""

from __future__ import annotations

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("shape, pad, value", [
    ((2, 3), (4, 0), None),            # wraps around more than once, left
    ((2, 3, 3), (0, 1, 0, 4), None),   # ... right, of the second-last dim
    ((2, 3), (-4, 0), None),           # a negative padding leaving a negative size
    ((2, 3), (-2, -2), None),
    ((1, 2, 2, 2), (1, 1, 1, 1, 1, 1, 1, 1), None),   # longer than the rank allows
    ((2, 3), (1, 1), 1.0),             # a value for a mode that takes none
    ((3,), (1, 1), None),              # no kernel for a 1-d input
])
def test_circular_pad_refuses_as_torch(shape: tuple[int, ...], pad: tuple[int, ...],
                                       value: float | None) -> None:
    with pytest.raises((RuntimeError, NotImplementedError)) as theirs:
        torch.nn.functional.pad(torch.ones(shape), pad, mode="circular", value=value)
    with pytest.raises((RuntimeError, NotImplementedError)) as ours:
        engine.nn.functional.pad(engine.ones(shape), pad, mode="circular", value=value)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def test_circular_pad_of_a_zero_size_is_allowed() -> None:
    """An output size of exactly 0 passes ATen's check (only a negative one is refused)."""
    theirs = torch.nn.functional.pad(torch.ones(2, 3), (-2, -1), mode="circular")
    ours = engine.nn.functional.pad(engine.ones(2, 3), (-2, -1), mode="circular")
    assert tuple(ours.shape) == tuple(theirs.shape) == (2, 0)
