"""F.nll_loss, which the case language does not offer (only cross_entropy, which passes
ignore_index itself): its default ignore_index is torch's, -100 (a mutation survivor)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("module", [torch, engine], ids=["torch", "engine"])
def test_nll_loss_ignores_target_minus_100_by_default(module: Any) -> None:
    logp = module.tensor([[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]])
    loss = module.nn.functional.nll_loss(logp, module.tensor([-100, 1]))
    assert loss.item() == 5.0  # the mean over the one row not ignored
