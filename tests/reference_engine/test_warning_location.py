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


@pytest.mark.parametrize("module", [torch, engine], ids=["torch", "engine"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_the_gradcheck_undefined_grad_warning_points_into_gradcheck(module: Any,
                                                                    fast_mode: bool) -> None:
    # torch's _check_undefined_grad_support warns without a stacklevel, so the warning points
    # at its own gradcheck module; the engine's must point at its own likewise (mutation
    # testing seed 36: the engine's stacklevel=4 pointed at the caller, and 4 made 5 survived)
    def boom(g: Any) -> None:
        if g is None:
            raise RuntimeError("x is undefined")

    def fn(x: Any) -> Any:
        y = x.clone()
        y.register_hook(boom)
        return y

    x = module.ones(1, dtype=module.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        passed = module.autograd.gradcheck(fn, (x,), raise_exception=False,
                                           fast_mode=fast_mode)
    assert passed is False
    gradcheck_file = module.autograd.gradcheck.__code__.co_filename
    assert [w.filename for w in caught] == [gradcheck_file]
