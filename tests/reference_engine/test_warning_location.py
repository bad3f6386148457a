"""Where a warning points: case traces compare a warning's kind, category and text, not its
location, so the stack level torch gives it is pinned here (mutation survivors: warn_once's
stacklevel, detect_anomaly's)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("module", [torch, engine], ids=["torch", "engine"])
def test_the_tensor_T_warning_points_at_the_callers_line(module: Any) -> None:
    module.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            transposed = module.ones(3).T
    finally:
        module.set_warn_always(False)
    assert transposed.shape == (3,)
    assert [w.filename for w in caught] == [__file__]


@pytest.mark.parametrize("module", [torch, engine], ids=["torch", "engine"])
def test_the_detect_anomaly_warning_points_at_the_callers_line(module: Any) -> None:
    # torch warns with stacklevel=2 from detect_anomaly.__init__ (a mutation survivor: the
    # engine's stacklevel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with module.autograd.detect_anomaly():
            pass
    assert [w.filename for w in caught] == [__file__]
