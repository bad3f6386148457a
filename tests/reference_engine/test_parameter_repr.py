"""A Parameter's repr and str, which case programs cannot reach (the case language has no
`repr`, `str` or f-strings): torch's "Parameter containing:" line above the tensor's own
repr (a mutation survivor)."""

from __future__ import annotations

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameter_repr_and_str_are_torchs(requires_grad: bool) -> None:
    # values whose tensor repr is the same on both (torch pads 0.5 to 0.5000)
    mine = engine.nn.Parameter(engine.tensor([1.0, 2.0]), requires_grad=requires_grad)
    theirs = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=requires_grad)
    assert repr(mine) == repr(theirs)
    assert str(mine) == str(theirs)
