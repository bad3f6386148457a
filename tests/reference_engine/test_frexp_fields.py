"""frexp's named fields (not in the case language's API, so no case reads them). Found by
mutation testing (benchmarks/README.md, seed 28: `mantissa` returning `self[-1]`, the
exponent)."""

from __future__ import annotations

import torch

import reference_engine as engine


def test_frexp_names_its_mantissa_and_exponent() -> None:
    values = [8.0, -0.375, 1.0, 0.0]
    theirs = torch.frexp(torch.tensor(values))
    ours = engine.frexp(engine.tensor(values))
    assert ours.mantissa.tolist() == theirs.mantissa.tolist() == ours[0].tolist()
    assert ours.exponent.tolist() == theirs.exponent.tolist() == ours[1].tolist()
