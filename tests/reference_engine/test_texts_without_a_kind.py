"""Engine error texts that no case can pin: their errors have no kind of their own
(conformance/case/kinds.py classifies them `unknown`, which `raises` does not take), so they
are compared with torch's text here. Found by mutation testing (benchmarks/README.md, seed 26:
constant_pad_nd's length check at `len(pad) // 3` let a pad of two pairs through for a 1-d
tensor)."""

from __future__ import annotations

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("shape, pad", [((2,), (1, 1, 1, 1)), ((2, 3), (0, 1, 2, 3, 4, 5)),
                                        ((2, 3), (1, 1, 1, 1, 1, 1, 1, 1))])
def test_constant_pad_nd_refuses_a_pad_longer_than_twice_the_dims(shape: tuple[int, ...],
                                                                   pad: tuple[int, ...]) -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.constant_pad_nd(torch.ones(shape), pad)
    with pytest.raises(RuntimeError) as ours:
        engine.constant_pad_nd(engine.ones(shape), pad)
    assert str(ours.value) == str(theirs.value)
